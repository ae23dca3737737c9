"""PyTorch 2.5.1's side of the loading bench (nn/benches/loading.rs), to run right after it in the same window:
1 GiB of weights (16 x Linear(4096, 4096, bias=False), float32) loaded into a matching model, from safetensors
(`load_file`, which maps the file) and from the `.pt` that loading_checkpoint.py wrote (`torch.load`, and with
`mmap=True`), next to a 1 GiB `dst.copy_(src)`. Two threads, as nn; median of 7 after one warm-up, so the files
sit in the page cache as in nn's bench.

    /work/torch-venv/bin/python nn/benches/loading_pytorch.py /tmp/nn-bench-1g.pt
"""
import os
import statistics
import sys
import tempfile
import time

import torch
from safetensors.torch import load_file, save_file

torch.set_num_threads(2)
pt = sys.argv[1]
model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096, bias=False) for _ in range(16)])
st = os.path.join(tempfile.gettempdir(), "nn-bench-1g-torch.safetensors")
save_file(model.state_dict(), st)


def median_ms(f, runs=7):
    f()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


src = torch.ones(1 << 28)
dst = torch.zeros(1 << 28)
rows = [
    ("memcpy 1 GiB (dst.copy_(src))", lambda: dst.copy_(src)),
    ("safetensors into the model (load_file, strict)", lambda: model.load_state_dict(load_file(st))),
    ("pt into the model (torch.load, strict)", lambda: model.load_state_dict(torch.load(pt, weights_only=True))),
    (
        "pt into the model (torch.load mmap=True, strict)",
        lambda: model.load_state_dict(torch.load(pt, weights_only=True, mmap=True)),
    ),
]
with torch.no_grad():
    for name, f in rows:
        print(f"{name}: {median_ms(f):.1f} ms")
os.remove(st)
