"""PyTorch 2.5.1's figures for the rows of BENCHMARKS.md, measured in the same session as `cargo bench`.

    python3 reference/benches/pytorch.py            # everything it can measure here
    python3 reference/benches/pytorch.py activations

Two threads (`torch.set_num_threads(2)`), medians. Sections: `activations` (16M float32 elements, out of place,
and `relu_` in place on a fresh copy per call, GB/s with the read and the write counted, as
`nn/benches/activations.rs`; then `relu_` timed in turns with the copy, as a fraction of the copy's speed, as
`nn/benches/activation_ratios.rs`), `module_api` (1,000 blocks of two
`Linear(8, 8)`, as `nn/benches/module_api.rs`), `hooks` (`Identity` and `Flatten` on a [1, 4] input, as
`nn/benches/hooks.rs`), `activations_into` (ten activations into a preallocated output, each timed in turns
with a copy, as `nn/benches/activation_ratios.rs`' "into preallocated" rows; `ATEN_CPU_CAPABILITY=avx2` times
PyTorch's AVX2 kernels), `dynamics` (LightZero's DynamicsNetwork in `dynamics_small`'s config, as
`reference/benches/dynamics.rs`: the forward under `no_grad` in eval and train mode at batch 256 on 2 threads
and on 1, in eval at batch 1, a training step's forward + backward of the sum of the outputs at batch 256
(train) and 1 (eval), the model's convolution with two larger ones, on 1 and 2 threads, and the model's
conv -> batch norm -> relu in eval unfused and folded by `torch.nn.utils.fusion.fuse_conv_bn_eval`, and the
network in eval folded by `torch.ao.quantization.fuse_modules` at batch 256 and 1), `lstm` (an LSTM's forward +
backward over 16 steps at batch 64, one layer and two with dropout, as `reference/benches/dynamics.rs`' LSTM
rows on the CPU), `recurrent` (`RNN` and `GRU`'s forward + backward at batch 64, one layer over 16 steps and
two over 256, as `reference/benches/dynamics.rs`' recurrent rows on the CPU), `pooling` (a ResNet-18's pooling layers at batch 8,
as `nn/benches/pooling.rs`), `random` (`rand` and `randn` of 16M elements from a generator, as
`nn/benches/random.rs`), `attention` (`F.scaled_dot_product_attention` at batch 16, 8 heads, 128 by 64, and
`TransformerEncoderLayer(512, 8)` over 128 steps at batch 16: eval forward, Adam training step). `dynamics` runs
LightZero 0.2.0's class where it is installed (see tests/fixtures/generate/dynamics.py), else the plain
PyTorch copy in `dynamics_torch.py`, which `python3 reference/benches/dynamics_torch.py check` shows to compute
the same as LightZero's (it equals the fixture LightZero wrote).
"""
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def median_seconds(f, calls, repeats=7):
    """The median over `repeats` runs of the time per call of `calls` calls of `f`."""
    f()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def activations():
    x = torch.randn(16 * 1024 * 1024)
    rows = x.view(-1, 1024)
    weight = torch.tensor([0.25])
    cases = {
        "relu": lambda: F.relu(x),
        "gelu": lambda: F.gelu(x),
        "gelu_tanh": lambda: F.gelu(x, approximate="tanh"),
        "sigmoid": lambda: torch.sigmoid(x),
        "tanh": lambda: torch.tanh(x),
        "softmax": lambda: F.softmax(rows, dim=-1),
        "prelu": lambda: F.prelu(x, weight),
        "rrelu (eval)": lambda: F.rrelu(x, training=False),
    }
    moved = 2 * x.numel() * x.element_size()
    for name, f in cases.items():
        t = median_seconds(f, 5, repeats=4)
        print(f"activations/{name}: {moved / t / 1e9:.2f} GB/s")
    # In place as nn's bench times it: each call on a fresh copy, the copy not timed.
    times = []
    for _ in range(4):
        total = 0.0
        for _ in range(5):
            t = x.clone()
            start = time.perf_counter()
            t.relu_()
            total += time.perf_counter() - start
        times.append(total / 5)
    print(f"activations/relu_ (in place, a fresh copy per call): {moved / statistics.median(times) / 1e9:.2f} GB/s")
    # As nn/benches/activation_ratios.rs times it: a copy into `t`, then `relu_` on `t`, in turns; each
    # pair's figure is copy time / relu_ time (a memory bandwidth that moves between pairs cancels out).
    t = torch.empty_like(x)
    fractions, copies = [], []
    for _ in range(60):
        start = time.perf_counter()
        t.copy_(x)
        copy = time.perf_counter() - start
        start = time.perf_counter()
        t.relu_()
        fractions.append(copy / (time.perf_counter() - start))
        copies.append(copy)
    print(f"activations/relu_ in turns with copy_: {100 * statistics.mean(fractions[10:]):.1f} % of the copy's "
          f"speed (copy_ {moved / statistics.median(copies[10:]) / 1e9:.2f} GB/s)")


def activations_into():
    """Into a preallocated output (the `out=` forms), each call timed in turns with a `copy_` of the same size, as
    nn/benches/activation_ratios.rs times its "into preallocated" rows; the median of 35 pairs. Run it with
    ATEN_CPU_CAPABILITY=avx2 (or default) to time PyTorch's narrower kernels, as nn's with NN_CPU_CAPABILITY."""
    print(f"activations_into: PyTorch's CPU capability {torch.backends.cpu.get_cpu_capability()}")
    x = torch.randn(16 * 1024 * 1024)
    y = torch.empty_like(x)
    aten = torch.ops.aten
    ops = {
        "relu": lambda: torch.clamp_min(x, 0, out=y),
        "gelu": lambda: aten.gelu.out(x, out=y),
        "gelu_tanh": lambda: aten.gelu.out(x, approximate="tanh", out=y),
        "sigmoid": lambda: torch.sigmoid(x, out=y),
        "tanh": lambda: torch.tanh(x, out=y),
        "silu": lambda: aten.silu.out(x, out=y),
        "mish": lambda: aten.mish.out(x, out=y),
        "softplus": lambda: aten.softplus.out(x, 1, 20, out=y),
        "elu": lambda: aten.elu.out(x, 1.0, 1, 1, out=y),
        "selu": lambda: aten.elu.out(x, 1.6732632423543772, 1.0507009873554805, 1, out=y),
    }
    for name, f in ops.items():
        fractions = []
        for _ in range(40):
            start = time.perf_counter()
            y.copy_(x)
            copy = time.perf_counter() - start
            start = time.perf_counter()
            f()
            fractions.append(copy / (time.perf_counter() - start))
        print(f"activations_into/{name} into preallocated: {100 * statistics.median(fractions[5:]):.1f} % of copy_")


def module_api():
    model = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8)) for _ in range(1000)])
    t = median_seconds(lambda: list(model.named_parameters()), 20)
    print(f"module_api/named_parameters: {t * 1e6:.0f} µs")
    t = median_seconds(lambda: model.state_dict(), 10)
    print(f"module_api/state_dict: {t * 1e6:.0f} µs")
    sd = model.state_dict()
    t = median_seconds(lambda: model.load_state_dict(sd), 10)
    print(f"module_api/load_state_dict: {t * 1e6:.0f} µs")


def hooks():
    x = torch.randn(1, 4)
    for name, make in [("Identity", nn.Identity), ("Flatten", lambda: nn.Flatten(0, -1))]:
        m = make()
        direct = median_seconds(lambda: m.forward(x), 100_000)
        call = median_seconds(lambda: m(x), 100_000)
        m.register_forward_hook(lambda mod, i, o: None)
        hooked = median_seconds(lambda: m(x), 100_000)
        print(f"hooks/{name}: forward {direct * 1e9:.0f} ns, call {call * 1e9:.0f} ns, "
              f"one forward hook {hooked * 1e9:.0f} ns")


def dynamics_network():
    """dynamics_small's DynamicsNetwork: LightZero's class where it is installed, else dynamics_torch's copy."""
    try:
        from lzero.model.efficientzero_model import DynamicsNetwork
    except ImportError:
        import os
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import dynamics_torch
        return dynamics_torch.small(), "dynamics_torch.py's copy of LightZero's DynamicsNetwork"
    net = DynamicsNetwork(
        observation_shape=(16, 3, 3), action_encoding_dim=2, num_res_blocks=1, num_channels=16,
        reward_head_channels=4, reward_head_hidden_channels=[16], output_support_size=21,
        flatten_input_size_for_reward_head=36, lstm_hidden_size=32, activation=nn.ReLU(inplace=True))
    return net, "LightZero's DynamicsNetwork"


def dynamics():
    torch.manual_seed(0)
    net, which = dynamics_network()
    print(f"dynamics: {which}")

    def inputs(batch):
        return torch.randn(batch, 16, 3, 3), torch.randn(1, batch, 32), torch.randn(1, batch, 32)

    threads = torch.get_num_threads()
    for name, xs, ws, stride, pad in [
        ("model (256, 18, 3, 3) * (16, 18, 3, 3), padding 1", (256, 18, 3, 3), (16, 18, 3, 3), 1, 1),
        ("ResNet stage (8, 64, 16, 16) * (64, 64, 3, 3), padding 1", (8, 64, 16, 16), (64, 64, 3, 3), 1, 1),
        ("ResNet downsampling (8, 64, 16, 16) * (128, 64, 3, 3), stride 2, padding 1", (8, 64, 16, 16), (128, 64, 3, 3), 2, 1),
        ("ResNet stem (2, 3, 64, 64) * (32, 3, 7, 7), stride 2, padding 3", (2, 3, 64, 64), (32, 3, 7, 7), 2, 3),
    ]:
        x, w, b = torch.randn(xs), torch.randn(ws), torch.randn(ws[0])
        for n in [1, threads]:
            torch.set_num_threads(n)
            with torch.no_grad():
                t = median_seconds(lambda: F.conv2d(x, w, b, stride, pad), 200)
            print(f"conv2d {name}, {n} thread(s): {t * 1e6:.1f} us")
        torch.set_num_threads(threads)
        # The backward of sum(dy * conv2d(x, w, b)) with only the weight (and bias), or only the input,
        # requiring its gradient: nn's rows "forward + weight gradient" / "forward + input gradient".
        dy = torch.randn(F.conv2d(x, w, None, stride, pad).shape)
        for of, x_grad in [("weight", False), ("input", True)]:
            xg, wg, bg = (t.detach().clone().requires_grad_(r) for t, r in [(x, x_grad), (w, not x_grad), (b, not x_grad)])
            t = median_seconds(lambda: F.conv2d(xg, wg, bg, stride, pad).backward(dy), 200)
            print(f"conv2d {name}, forward + {of} gradient, {threads} thread(s): {t * 1e6:.1f} us")
    torch.set_num_threads(threads)
    # DCGAN's generator layers next to the convolution of the same multiply-adds (nn's "conv_transpose2d
    # DCGAN ..." rows), forward and forward + every gradient.
    for c_in, c_out, size in [(512, 256, 4), (256, 128, 8), (64, 3, 32)]:
        name = f"DCGAN ({c_in} -> {c_out}, {size}x{size} -> {2 * size})"
        x, y, w = torch.randn(16, c_in, size, size), torch.randn(16, c_out, 2 * size, 2 * size), torch.randn(c_in, c_out, 4, 4)
        with torch.no_grad():
            t = median_seconds(lambda: F.conv_transpose2d(x, w, None, 2, 1), 50)
            print(f"conv_transpose2d {name}, forward: {t * 1e6:.1f} us")
            t = median_seconds(lambda: F.conv2d(y, w, None, 2, 1), 50)
            print(f"conv2d of the same multiply-adds {name}, forward: {t * 1e6:.1f} us")
        xg, yg, wg = (t.clone().requires_grad_(True) for t in (x, y, w))
        dy, dx = torch.randn(y.shape), torch.randn(x.shape)
        t = median_seconds(lambda: F.conv_transpose2d(xg, wg, None, 2, 1).backward(dy), 50)
        print(f"conv_transpose2d {name}, forward + gradients: {t * 1e6:.1f} us")
        t = median_seconds(lambda: F.conv2d(yg, wg, None, 2, 1).backward(dx), 50)
        print(f"conv2d of the same multiply-adds {name}, forward + gradients: {t * 1e6:.1f} us")
    # The model's conv -> batch norm -> relu in eval, as three modules and with torch.nn.utils.fusion's fold.
    conv, bn = nn.Conv2d(18, 16, 3, padding=1, bias=False).eval(), nn.BatchNorm2d(16).eval()
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(16))
        bn.running_var.uniform_(0.5, 2.0)
    fused, relu, x = torch.nn.utils.fusion.fuse_conv_bn_eval(conv, bn), nn.ReLU(inplace=True), torch.randn(256, 18, 3, 3)
    for label, f in [("unfused", lambda: relu(bn(conv(x)))), ("fused", lambda: relu(fused(x)))]:
        with torch.no_grad():
            t = median_seconds(f, 200)
        print(f"conv2d -> batch norm -> relu, eval, model shape, {threads} thread(s), {label}: {t * 1e6:.1f} us")
    x, h, c = inputs(256)
    for n in [threads, 1]:
        torch.set_num_threads(n)
        for mode in ["eval", "train"]:
            net.train(mode == "train")
            with torch.no_grad():
                t = median_seconds(lambda: net(x.clone(), (h, c)), 200)
            print(f"dynamics/forward {mode} batch 256 (no_grad), {n} thread(s): {t * 1e3:.3f} ms")
    torch.set_num_threads(threads)
    net.eval()
    x1, h1, c1 = inputs(1)
    with torch.no_grad():
        t = median_seconds(lambda: net(x1.clone(), (h1, c1)), 1000)
    print(f"dynamics/forward eval batch 1 (no_grad): {t * 1e3:.4f} ms")
    # Eval with the batch norms folded by torch.ao.quantization.fuse_modules (DynamicsNetwork.fusion_groups).
    groups = [["conv", "norm_common"], ["conv1x1_reward", "norm_reward"],
              ["resblocks.0.conv1.0", "resblocks.0.conv1.1", "resblocks.0.conv1.2"],
              ["resblocks.0.conv2.0", "resblocks.0.conv2.1"], ["fc_reward_head.0", "fc_reward_head.1"]]
    folded = torch.ao.quantization.fuse_modules(net.eval(), groups)
    for batch in [256, 1]:
        x, h, c = inputs(batch)
        with torch.no_grad():
            t = median_seconds(lambda: folded(x.clone(), (h, c)), 200 if batch > 1 else 1000)
        print(f"dynamics/forward eval batch {batch} folded (no_grad): {t * 1e3:.4f} ms")
    # Batch 1 runs in eval mode: train-mode batch norm refuses one value per channel (in nn too).
    for batch, mode in [(256, "train"), (1, "eval")]:
        net.train(mode == "train")
        x, h, c = inputs(batch)

        def step():
            net.zero_grad(set_to_none=True)
            latent, (h1, c1), value = net(x.clone(), (h, c))
            (latent.sum() + h1.sum() + c1.sum() + value.sum()).backward()

        t = median_seconds(step, 200 if batch > 1 else 1000)
        print(f"dynamics/forward + backward {mode} batch {batch}: {t * 1e3:.3f} ms")
    net.train()
    x, h, c = inputs(256)
    opt = torch.optim.Adam(net.parameters())

    def train_step():
        opt.zero_grad(set_to_none=True)
        latent, (h1, c1), value = net(x.clone(), (h, c))
        (latent.sum() + h1.sum() + c1.sum() + value.sum()).backward()
        opt.step()

    t = median_seconds(train_step, 200)
    print(f"dynamics/training step (forward, backward, Adam) train batch 256: {t * 1e3:.3f} ms")


def lstm():
    """nn's rows "LSTM(32, 32) ... forward + backward, 16 steps, batch 64, cpu": the backward of the output's sum."""
    torch.manual_seed(0)
    x = torch.randn(16, 64, 32)
    for name, m in [("LSTM(32, 32)", nn.LSTM(32, 32)),
                    ("LSTM(32, 32), 2 layers, dropout 0.2,", nn.LSTM(32, 32, num_layers=2, dropout=0.2))]:
        def step():
            m.zero_grad(set_to_none=True)
            m(x)[0].sum().backward()

        t = median_seconds(step, 100)
        print(f"{name} forward + backward, 16 steps, batch 64: {t * 1e3:.3f} ms")


def recurrent():
    """nn's rows "RNN(32, 32) ... / GRU(32, 32) ... forward + backward, N steps, batch 64, cpu": one layer over
    16 steps, two layers over 256, the backward of the output's sum."""
    torch.manual_seed(0)
    short, long = torch.randn(16, 64, 32), torch.randn(256, 64, 32)
    rows = [("RNN(32, 32)", nn.RNN(32, 32), short), ("GRU(32, 32)", nn.GRU(32, 32), short),
            ("RNN(32, 32), 2 layers,", nn.RNN(32, 32, num_layers=2), long),
            ("GRU(32, 32), 2 layers,", nn.GRU(32, 32, num_layers=2), long)]
    for name, m, x in rows:
        def step():
            m.zero_grad(set_to_none=True)
            m(x)[0].sum().backward()

        t = median_seconds(step, 100 if len(x) < 100 else 20)
        print(f"{name} forward + backward, {len(x)} steps, batch 64: {t * 1e3:.3f} ms")


def pooling():
    """nn's rows "pooling/...": `nn/benches/pooling.rs`, a ResNet-18's pooling at batch 8."""
    torch.manual_seed(0)
    stem, head = torch.randn(8, 64, 56, 56), torch.randn(8, 512, 7, 7)
    mx, avg, ad = nn.MaxPool2d(3, 2, 1), nn.AvgPool2d(2), nn.AdaptiveAvgPool2d(1)
    with torch.no_grad():
        for name, m, x in [("MaxPool2d(3, 2, 1) (8, 64, 56, 56)", mx, stem), ("AvgPool2d(2) (8, 64, 56, 56)", avg, stem),
                           ("AdaptiveAvgPool2d(1) (8, 512, 7, 7)", ad, head)]:
            t = median_seconds(lambda: m(x), 200)
            print(f"pooling/{name} forward: {t * 1e3:.3f} ms")

    def step():
        x = stem.detach().requires_grad_(True)
        mx(x).sum().backward()

    t = median_seconds(step, 100)
    print(f"pooling/MaxPool2d(3, 2, 1) (8, 64, 56, 56) forward + backward: {t * 1e3:.3f} ms")


def reductions():
    """nn's rows "reductions/...": `nn/benches/reductions.rs`, sums and means at the shapes training meets."""
    torch.manual_seed(0)
    batch, maps = torch.randn(256, 512), torch.randn(8, 64, 56, 56)
    head, rows = torch.randn(8, 512, 7, 7), torch.randn(4096, 1024)
    maps_copy, rows_copy = torch.zeros_like(maps), torch.zeros_like(rows)
    with torch.no_grad():
        for name, f in [("sum (256, 512) over 0", lambda: batch.sum(0)),
                        ("sum (8, 64, 56, 56) over 0, 2, 3", lambda: maps.sum((0, 2, 3))),
                        ("mean (8, 512, 7, 7) over 2, 3", lambda: head.mean((2, 3), keepdim=True)),
                        ("mean (4096, 1024) over 1", lambda: rows.mean(1, keepdim=True)),
                        ("sum (8, 64, 56, 56) of all", lambda: maps.sum()),
                        ("memcpy (8, 64, 56, 56)", lambda: maps_copy.copy_(maps)),
                        ("memcpy (4096, 1024)", lambda: rows_copy.copy_(rows))]:
            t = median_seconds(f, 200)
            print(f"reductions/{name}: {t * 1e6:.1f} µs")
        logits, grad = torch.randn(512, 1000), torch.randn(512, 1000)
        probs, log_probs = logits.softmax(1), logits.log_softmax(1)
        planes, plane_grad = torch.randn(32, 64, 32, 32).softmax(1), torch.randn(32, 64, 32, 32)
        for name, f in [("softmax backward (512, 1000) along 1",
                         lambda: torch._softmax_backward_data(grad, probs, 1, torch.float32)),
                        ("log_softmax backward (512, 1000) along 1",
                         lambda: torch._log_softmax_backward_data(grad, log_probs, 1, torch.float32)),
                        ("softmax backward (32, 64, 32, 32) along 1",
                         lambda: torch._softmax_backward_data(plane_grad, planes, 1, torch.float32))]:
            t = median_seconds(f, 200)
            print(f"reductions/{name}: {t * 1e6:.1f} µs")


def norms():
    """nn's rows "norms/...": `nn/benches/norms.rs`, layer and group norms forward and forward + backward."""
    torch.manual_seed(0)
    for name, layer, x in [("LayerNorm(1024) over (4096, 1024)", torch.nn.LayerNorm(1024), torch.randn(4096, 1024)),
                           ("GroupNorm(32, 128) over (8, 128, 32, 32)", torch.nn.GroupNorm(32, 128),
                            torch.randn(8, 128, 32, 32))]:
        dy, copy = torch.randn_like(x), torch.zeros_like(x)
        with torch.no_grad():
            t = median_seconds(lambda: layer(x), 100)
        print(f"norms/{name}, forward: {t * 1e6:.1f} µs")
        leaf = x.clone().requires_grad_()
        t = median_seconds(lambda: layer(leaf).backward(dy), 50)
        print(f"norms/{name}, forward + backward: {t * 1e6:.1f} µs")
        with torch.no_grad():
            t = median_seconds(lambda: copy.copy_(x), 100)
        print(f"norms/{name}, memcpy of the input: {t * 1e6:.1f} µs")


def training():
    """nn's rows "training/...": `nn/benches/training.rs`, an MLP 784-512-512-10 at batch 128 with cross-entropy:
    forward + backward, one step of Adam, AdamW and SGD(momentum 0.9) alone (PyTorch's default on the CPU, the
    single-tensor loop, and `fused=True` where it exists), a whole Adam training step, and a copy of the
    parameters."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    x, labels = torch.randn(128, 784), torch.arange(128) % 10
    name = "training/MLP 784-512-512-10"

    def forward_backward():
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), labels).backward()

    t = median_seconds(forward_backward, 50)
    print(f"{name}, batch 128, forward + backward: {t * 1e6:.1f} µs")
    forward_backward()
    for label, make in [("Adam", lambda **k: torch.optim.Adam(model.parameters(), **k)),
                        ("AdamW", lambda **k: torch.optim.AdamW(model.parameters(), **k)),
                        ("SGD(momentum 0.9)", lambda **k: torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, **k))]:
        for kind, kwargs in [("", {}), (", fused=True", {"fused": True})]:
            opt = make(**kwargs)
            t = median_seconds(opt.step, 50)
            print(f"{name}, {label}{kind} step alone: {t * 1e6:.1f} µs")
    opt = torch.optim.Adam(model.parameters())

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), labels).backward()
        opt.step()

    t = median_seconds(step, 50)
    print(f"{name}, batch 128, Adam training step: {t * 1e6:.1f} µs")
    params = [p.detach() for p in model.parameters()]
    copies = [torch.zeros_like(p) for p in params]

    def copy():
        for c, p in zip(copies, params):
            c.copy_(p)

    t = median_seconds(copy, 200)
    print(f"{name}, memcpy of the parameters: {t * 1e6:.1f} µs")


def attention():
    """nn's rows "scaled_dot_product_attention ..." and "TransformerEncoderLayer(512, 8) ...":
    `reference/benches/dynamics.rs`' attention rows."""
    q, k, v = (torch.randn(16, 8, 128, 64) for _ in range(3))
    with torch.no_grad():
        t = median_seconds(lambda: F.scaled_dot_product_attention(q, k, v), 20)
    print(f"scaled_dot_product_attention (16, 8, 128, 64), forward: {t * 1e3:.2f} ms")
    qg, kg, vg = (t_.clone().requires_grad_(True) for t_ in (q, k, v))
    dy = torch.randn(16, 8, 128, 64)
    t = median_seconds(lambda: F.scaled_dot_product_attention(qg, kg, vg).backward(dy), 10)
    print(f"scaled_dot_product_attention (16, 8, 128, 64), forward + gradients: {t * 1e3:.2f} ms")
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(512, 8)
    x = torch.randn(128, 16, 512)
    layer.eval()
    with torch.no_grad():
        t = median_seconds(lambda: layer(x), 10)
    print(f"TransformerEncoderLayer(512, 8), sequence 128, batch 16, forward: {t * 1e3:.2f} ms")
    layer.train()
    adam = torch.optim.Adam(layer.parameters())

    def step():
        adam.zero_grad(set_to_none=True)
        layer(x).sum().backward()
        adam.step()

    t = median_seconds(step, 5)
    print(f"TransformerEncoderLayer(512, 8), sequence 128, batch 16, training step: {t * 1e3:.2f} ms")


def random():
    """nn's rows "random/...": `nn/benches/random.rs`, 16M elements drawn from a generator."""
    g = torch.Generator().manual_seed(0)
    n = 1 << 24
    for name, f in [("rand 16M f32", lambda: torch.rand(n, generator=g)),
                    ("randn 16M f32", lambda: torch.randn(n, generator=g)),
                    ("randn 16M f64", lambda: torch.randn(n, generator=g, dtype=torch.float64))]:
        t = median_seconds(f, 3)
        print(f"random/{name}: {t * 1e3:.1f} ms")


def views():
    """nn's rows "views/...": `nn/benches/views.rs`, views of a 16M-element tensor and one copy."""
    x, column = torch.zeros(4096, 4096), torch.zeros(4096, 1)
    t = x.t()
    for name, f, calls in [("t 16M", lambda: x.t(), 100000),
                           ("transpose 16M", lambda: x.transpose(0, 1), 100000),
                           ("narrow 16M", lambda: x.narrow(1, 1000, 2048), 100000),
                           ("select 16M", lambda: x.select(0, 7), 100000),
                           ("permute 16M", lambda: x.permute(1, 0), 100000),
                           ("expand to 16M", lambda: column.expand(4096, 4096), 100000),
                           ("contiguous of the transpose (a copy)", lambda: t.contiguous(), 5)]:
        s = median_seconds(f, calls)
        print(f"views/{name}: {s * 1e9:.0f} ns" if s < 1e-4 else f"views/{name}: {s * 1e3:.2f} ms")


SECTIONS = {"views": views, "random": random, "activations": activations, "activations_into": activations_into, "module_api": module_api, "hooks": hooks, "dynamics": dynamics, "lstm": lstm, "recurrent": recurrent, "pooling": pooling, "reductions": reductions, "norms": norms, "training": training, "attention": attention}

if __name__ == "__main__":
    torch.set_num_threads(2)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for name in sys.argv[1:] or SECTIONS:
        SECTIONS[name]()
