"""Writes the 1 GiB PyTorch checkpoint of the loading bench: 16 x Linear(4096, 4096, bias=False) as Sequential's
state dict (keys 0.weight .. 15.weight, float32), with torch.save (zip format).

    /work/torch-venv/bin/python nn/benches/loading_checkpoint.py /tmp/nn-bench-1g.pt
"""
import collections
import sys

import torch

torch.manual_seed(0)
sd = collections.OrderedDict((f"{i}.weight", torch.randn(4096, 4096)) for i in range(16))
torch.save(sd, sys.argv[1])
