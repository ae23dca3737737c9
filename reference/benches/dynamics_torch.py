"""LightZero 0.2.0's EfficientZero DynamicsNetwork written out in plain PyTorch (the same layers, keys and
forward as `lzero.model.efficientzero_model.DynamicsNetwork` with ding's ResBlock and MLP), for machines where
LightZero cannot be installed, such as a GPU machine without a package registry.

    python3 dynamics_torch.py check            # equals the fixture tests/fixtures/dynamics_small (CPU)
    python3 dynamics_torch.py bench cuda       # the device rows of benches/dynamics.rs, and the copy rate

`check` loads the fixture's weights (written by LightZero's own class) and compares this module's eval and
train outputs with the fixture's, with torch.testing.assert_close's defaults: it fails unless this is the same
computation. `bench` prints medians of CUDA-event-timed calls after warm-up.
"""
import os
import statistics
import sys
import time

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "..", "tests", "fixtures", "dynamics_small")


class ResBlock(nn.Module):
    """ding.torch_utils.network.res_block.ResBlock, res_type='basic', norm_type='BN'."""

    def __init__(self, channels, activation):
        super().__init__()
        self.act = activation
        self.conv1 = nn.Sequential(
            nn.Conv2d(channels, channels, 3, 1, 1, bias=False), nn.BatchNorm2d(channels), activation)
        self.conv2 = nn.Sequential(nn.Conv2d(channels, channels, 3, 1, 1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x):
        residual = x
        x = self.conv2(self.conv1(x))
        return self.act(x + residual)


class DynamicsNetwork(nn.Module):
    """lzero.model.efficientzero_model.DynamicsNetwork (norm_type='BN', downsample=False)."""

    def __init__(self, observation_shape, action_encoding_dim, num_res_blocks, num_channels,
                 reward_head_channels, reward_head_hidden_channels, output_support_size,
                 flatten_input_size_for_reward_head, lstm_hidden_size):
        super().__init__()
        self.action_encoding_dim = action_encoding_dim
        self.flatten_input_size_for_reward_head = flatten_input_size_for_reward_head
        latent = num_channels - action_encoding_dim
        self.activation = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_channels, latent, 3, 1, 1, bias=False)
        self.norm_common = nn.BatchNorm2d(latent)
        self.resblocks = nn.ModuleList([ResBlock(latent, self.activation) for _ in range(num_res_blocks)])
        self.conv1x1_reward = nn.Conv2d(latent, reward_head_channels, 1)
        self.norm_reward = nn.BatchNorm2d(reward_head_channels)
        self.lstm = nn.LSTM(input_size=flatten_input_size_for_reward_head, hidden_size=lstm_hidden_size)
        self.norm_value_prefix = nn.BatchNorm1d(lstm_hidden_size)
        layers, width = [], lstm_hidden_size
        for hidden in reward_head_hidden_channels:
            layers += [nn.Linear(width, hidden), nn.BatchNorm1d(hidden), self.activation]
            width = hidden
        layers.append(nn.Linear(width, output_support_size))
        self.fc_reward_head = nn.Sequential(*layers)

    def forward(self, state_action_encoding, reward_hidden_state):
        state_encoding = state_action_encoding[:, :-self.action_encoding_dim, :, :]
        x = self.norm_common(self.conv(state_action_encoding))
        x += state_encoding
        x = self.activation(x)
        for block in self.resblocks:
            x = block(x)
        next_latent_state = x
        x = self.activation(self.norm_reward(self.conv1x1_reward(next_latent_state)))
        x = x.reshape(-1, self.flatten_input_size_for_reward_head).unsqueeze(0)
        value_prefix, next_reward_hidden_state = self.lstm(x, reward_hidden_state)
        value_prefix = self.activation(self.norm_value_prefix(value_prefix.squeeze(0)))
        value_prefix = self.fc_reward_head(value_prefix)
        return next_latent_state, next_reward_hidden_state, value_prefix


def small():
    """dynamics_small's config, as benches/dynamics.rs builds it."""
    return DynamicsNetwork((16, 3, 3), 2, 1, 16, 4, [16], 21, 36, 32)


def check():
    from safetensors.torch import load_file
    net = small()
    weights = load_file(os.path.join(FIXTURE, "weights.safetensors"))
    net.load_state_dict(weights, strict=True)
    io = load_file(os.path.join(FIXTURE, "io.safetensors"))
    for mode in ["eval", "train"]:
        net.load_state_dict(weights, strict=True)
        net.train(mode == "train")
        with torch.no_grad():
            latent, (h1, c1), value = net(io["input.state_action_encoding"].clone(), (io["input.h0"], io["input.c0"]))
        for name, got in [("next_latent_state", latent), ("h1", h1), ("c1", c1), ("value_prefix", value)]:
            torch.testing.assert_close(got, io[f"{mode}.{name}"], msg=lambda m: f"{mode}.{name}: {m}")
    state = net.state_dict()
    for key, value in state.items():
        torch.testing.assert_close(value, io[f"train.state_after.{key}"], msg=lambda m: f"{key}: {m}")
    print(f"dynamics_torch: equals {os.path.relpath(FIXTURE)} (eval, train, state after train)")


def median_ms(f, device, calls):
    for _ in range(20):
        f()
    times = []
    for _ in range(7):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize(device)
        start.record()
        for _ in range(calls):
            f()
        end.record()
        torch.cuda.synchronize(device)
        times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


def bench(device):
    torch.manual_seed(0)
    dev = torch.device(device)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(dev)}")
    n = 16 << 20
    a = torch.randn(n, device=dev)
    b = torch.empty_like(a)
    ms = median_ms(lambda: b.copy_(a), dev, 50)
    print(f"copy 16M f32 device to device: {ms:.4f} ms, {2 * 4 * n / ms / 1e6:.0f} GB/s (read + write)")
    net = small().to(dev)
    for batch in [256, 1]:
        x = torch.randn(batch, 16, 3, 3, device=dev)
        h = torch.randn(1, batch, 32, device=dev)
        c = torch.randn(1, batch, 32, device=dev)
        modes = ["eval", "train"] if batch > 1 else ["eval"]
        for mode in modes:
            net.train(mode == "train")
            with torch.no_grad():
                ms = median_ms(lambda: net(x.clone(), (h, c)), dev, 200)
            print(f"dynamics/forward {mode} batch {batch} (no_grad) {device}: {ms:.4f} ms")
    # Forward + backward of the outputs' sum, train mode, batch 256 (benches/dynamics.rs's device row).
    net.train(True)
    x, h, c = (torch.randn(*s, device=dev) for s in [(256, 16, 3, 3), (1, 256, 32), (1, 256, 32)])

    def step():
        net.zero_grad(set_to_none=True)
        latent, (h1, c1), value = net(x.clone(), (h, c))
        (latent.sum() + h1.sum() + c1.sum() + value.sum()).backward()

    print(f"dynamics/forward + backward train batch 256 {device}: {median_ms(step, dev, 50):.4f} ms")
    # The recurrent layers alone: forward + backward of the output's sum at batch 64 (the bench's lstm_rows and
    # recurrent_rows), one layer over 16 steps, two over 256.
    short, long = torch.randn(16, 64, 32, device=dev), torch.randn(256, 64, 32, device=dev)
    rows = [
        ("LSTM(32, 32)", nn.LSTM(32, 32), short),
        ("LSTM(32, 32), 2 layers, dropout 0.2,", nn.LSTM(32, 32, num_layers=2, dropout=0.2), short),
        ("RNN(32, 32)", nn.RNN(32, 32), short),
        ("GRU(32, 32)", nn.GRU(32, 32), short),
        ("RNN(32, 32), 2 layers,", nn.RNN(32, 32, num_layers=2), long),
        ("GRU(32, 32), 2 layers,", nn.GRU(32, 32, num_layers=2), long),
    ]
    for name, layer, seq in rows:
        layer = layer.to(dev)

        def recurrent_step(layer=layer, seq=seq):
            layer.zero_grad(set_to_none=True)
            layer(seq)[0].sum().backward()

        ms = median_ms(recurrent_step, dev, 20)
        print(f"{name} forward + backward, {seq.shape[0]} steps, batch 64, {device}: {ms:.4f} ms")


if __name__ == "__main__":
    if sys.argv[1:2] == ["check"]:
        check()
    elif sys.argv[1:2] == ["bench"]:
        bench(sys.argv[2] if len(sys.argv) > 2 else "cuda")
    else:
        sys.exit(__doc__)
