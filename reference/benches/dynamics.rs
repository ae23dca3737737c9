//! EfficientZero's DynamicsNetwork forward, batch 256, the shared fixture's config
//! (`tests/fixtures/dynamics_small/config.json`), in eval and train mode, on the CPU (under `no_grad`, and
//! recording the graph), a training step's forward + backward (batch 256 in train mode, batch 1 in eval mode), and on
//! the devices `NN_BENCH_DEVICES` names (`wgpu:0` when unset, skipped where the machine lacks it), where each
//! iteration waits for the device (there also forward + backward). An LSTM's forward + backward over 16 steps, on
//! the CPU and on those devices. Before them: the model's convolution and two larger ones, and the model's
//! convolution → batch norm → ReLU in eval, unfused and folded by `nn::utils::fuse_conv_bn_eval`; and the whole
//! network in eval folded by `nn::utils::fuse_modules` (batch 256 and 1). The convolutions also run forward +
//! backward with only the weight, or only the input, requiring its gradient.
//!
//! `cargo bench -p reference --bench dynamics`

use criterion::{Criterion, criterion_group, criterion_main};
use nn::optim::{Adam, AdamOptions, Optimizer};
use nn::prelude::*;
use reference::efficientzero::{DynamicsConfig, DynamicsNetwork};
use std::hint::black_box;

const CONFIG: &str = r#"{"observation_shape": [16, 3, 3], "action_encoding_dim": 2, "num_res_blocks": 1,
    "num_channels": 16, "reward_head_channels": 4, "reward_head_hidden_channels": [16], "output_support_size": 21,
    "flatten_input_size_for_reward_head": 36, "lstm_hidden_size": 32, "activation": "relu"}"#;

/// The loss the backward rows differentiate: the sum of every output of one forward.
fn sum_of_outputs(net: &DynamicsNetwork, x: &Tensor, h: &Tensor, cell: &Tensor) -> Tensor {
    let (latent, (h1, c1), value) = net.forward((x.clone(), (h.clone(), cell.clone()))).unwrap();
    [latent, h1, c1, value]
        .iter()
        .map(|t| t.sum_all().unwrap())
        .reduce(|a, b| a.add(&b).unwrap())
        .unwrap()
}

/// The model's convolution alone, on 1 thread and on every core, and three larger ones (a ResNet stage, the
/// strided convolution that starts the next stage, and a ResNet stem) for the direct kernel's reach.
fn conv_rows(c: &mut Criterion) {
    use nn::functional::{Conv2dOptions, Padding2d, conv2d};
    let cases = [
        (
            "model (256, 18, 3, 3) * (16, 18, 3, 3), padding 1",
            [256, 18, 3, 3],
            [16, 18, 3, 3],
            1,
            1,
        ),
        (
            "ResNet stage (8, 64, 16, 16) * (64, 64, 3, 3), padding 1",
            [8, 64, 16, 16],
            [64, 64, 3, 3],
            1,
            1,
        ),
        (
            "ResNet downsampling (8, 64, 16, 16) * (128, 64, 3, 3), stride 2, padding 1",
            [8, 64, 16, 16],
            [128, 64, 3, 3],
            2,
            1,
        ),
        (
            "ResNet stem (2, 3, 64, 64) * (32, 3, 7, 7), stride 2, padding 3",
            [2, 3, 64, 64],
            [32, 3, 7, 7],
            2,
            3,
        ),
    ];
    // The backward of `Σ dy · conv2d(x, w, b)` with only the weight, or only the input, requiring its gradient:
    // the forward, then the weight's (and bias's) or the input's gradient kernel.
    for (name, xs, ws, stride, pad) in cases {
        let opts = Conv2dOptions {
            stride: [stride; 2],
            padding: Padding2d::Explicit(pad, pad),
            ..Default::default()
        };
        for (of, x_grad) in [("weight", false), ("input", true)] {
            let x = Tensor::randn(xs, DType::F32).requires_grad_(x_grad).unwrap();
            let w = Tensor::randn(ws, DType::F32).requires_grad_(!x_grad).unwrap();
            let b = Tensor::randn([ws[0]], DType::F32).requires_grad_(!x_grad).unwrap();
            let dy = Tensor::randn(
                conv2d(&x.detach(), &w.detach(), None, &opts).unwrap().shape(),
                DType::F32,
            );
            c.bench_function(
                &format!("conv2d {name}, forward + {of} gradient, every core"),
                |bench| bench.iter(|| conv2d(&x, &w, Some(&b), &opts).unwrap().backward_with(&dy).unwrap()),
            );
        }
    }
    let _no_grad = nn::no_grad();
    for (name, xs, ws, stride, pad) in cases {
        let x = Tensor::randn(xs, DType::F32);
        let w = Tensor::randn(ws, DType::F32);
        let b = Tensor::randn([ws[0]], DType::F32);
        let opts = Conv2dOptions {
            stride: [stride; 2],
            padding: Padding2d::Explicit(pad, pad),
            ..Default::default()
        };
        for threads in [1, 0] {
            nn::set_num_threads(threads);
            let label = if threads == 1 { "1 thread" } else { "every core" };
            c.bench_function(&format!("conv2d {name}, {label}"), |bench| {
                bench.iter(|| black_box(conv2d(&x, &w, Some(&b), &opts).unwrap()))
            });
        }
    }
    nn::set_num_threads(0);
}

/// DCGAN's generator layers (`ConvTranspose2d(c_in, c_out, 4, 2, 1)`, batch 16) next to the convolution of the
/// same multiply-adds (the one whose input gradient the transposed convolution is: `(16, c_out, 2h, 2w)` by
/// `(c_in, c_out, 4, 4)`, stride 2, padding 1), forward, and forward + every gradient, on every core.
fn conv_transpose_rows(c: &mut Criterion) {
    use nn::functional::{Conv2dOptions, ConvTranspose2dOptions, Padding2d, conv_transpose2d, conv2d};
    let up = ConvTranspose2dOptions {
        stride: [2, 2],
        padding: [1, 1],
        ..Default::default()
    };
    let down = Conv2dOptions {
        stride: [2, 2],
        padding: Padding2d::Explicit(1, 1),
        ..Default::default()
    };
    for (c_in, c_out, size) in [(512, 256, 4), (256, 128, 8), (64, 3, 32)] {
        let name = format!("DCGAN ({c_in} -> {c_out}, {size}x{size} -> {})", 2 * size);
        let x = Tensor::randn([16, c_in, size, size], DType::F32);
        let y = Tensor::randn([16, c_out, 2 * size, 2 * size], DType::F32);
        let w = Tensor::randn([c_in, c_out, 4, 4], DType::F32);
        {
            let _no_grad = nn::no_grad();
            c.bench_function(&format!("conv_transpose2d {name}, forward"), |bench| {
                bench.iter(|| black_box(conv_transpose2d(&x, &w, None, &up).unwrap()))
            });
            c.bench_function(&format!("conv2d of the same multiply-adds {name}, forward"), |bench| {
                bench.iter(|| black_box(conv2d(&y, &w, None, &down).unwrap()))
            });
        }
        let (xg, wg) = (x.requires_grad_(true).unwrap(), w.requires_grad_(true).unwrap());
        let yg = y.requires_grad_(true).unwrap();
        let dy = Tensor::randn([16, c_out, 2 * size, 2 * size], DType::F32);
        let dx = Tensor::randn([16, c_in, size, size], DType::F32);
        c.bench_function(&format!("conv_transpose2d {name}, forward + gradients"), |bench| {
            bench.iter(|| {
                conv_transpose2d(&xg, &wg, None, &up)
                    .unwrap()
                    .backward_with(&dy)
                    .unwrap()
            })
        });
        c.bench_function(
            &format!("conv2d of the same multiply-adds {name}, forward + gradients"),
            |bench| bench.iter(|| conv2d(&yg, &wg, None, &down).unwrap().backward_with(&dx).unwrap()),
        );
    }
}

/// `scaled_dot_product_attention` at a Transformer's shapes (batch 16, 8 heads, sequence 128, 64 per head) and
/// `TransformerEncoderLayer(512, 8)` over a sequence of 128 at batch 16: the forward in eval under `no_grad`,
/// and a training step (train mode, dropout 0.1: forward, backward, Adam).
fn attention_rows(c: &mut Criterion) {
    use nn::functional::scaled_dot_product_attention;
    use nn::layers::EncoderInput;
    let q = Tensor::randn([16, 8, 128, 64], DType::F32);
    let (k, v) = (
        Tensor::randn([16, 8, 128, 64], DType::F32),
        Tensor::randn([16, 8, 128, 64], DType::F32),
    );
    c.bench_function("scaled_dot_product_attention (16, 8, 128, 64), forward", |b| {
        let _no_grad = nn::no_grad();
        b.iter(|| black_box(scaled_dot_product_attention(&q, &k, &v, None, 0.0, false, None).unwrap()))
    });
    let (qg, kg, vg) = (
        q.requires_grad_(true).unwrap(),
        k.requires_grad_(true).unwrap(),
        v.requires_grad_(true).unwrap(),
    );
    let dy = Tensor::randn([16, 8, 128, 64], DType::F32);
    c.bench_function(
        "scaled_dot_product_attention (16, 8, 128, 64), forward + gradients",
        |b| {
            b.iter(|| {
                scaled_dot_product_attention(&qg, &kg, &vg, None, 0.0, false, None)
                    .unwrap()
                    .backward_with(&dy)
                    .unwrap()
            })
        },
    );
    nn::manual_seed(0);
    let mut layer = TransformerEncoderLayer::new(512, 8).unwrap();
    let x = Tensor::randn([128, 16, 512], DType::F32);
    layer.eval();
    c.bench_function(
        "TransformerEncoderLayer(512, 8), sequence 128, batch 16, forward",
        |b| {
            let _no_grad = nn::no_grad();
            b.iter(|| black_box(layer.forward(EncoderInput::new(x.clone())).unwrap()))
        },
    );
    layer.train(true);
    let mut adam = Adam::new(layer.parameters(), AdamOptions::default()).unwrap();
    c.bench_function(
        "TransformerEncoderLayer(512, 8), sequence 128, batch 16, training step",
        |b| {
            b.iter(|| {
                adam.zero_grad(true).unwrap();
                layer
                    .forward(EncoderInput::new(x.clone()))
                    .unwrap()
                    .sum_all()
                    .unwrap()
                    .backward()
                    .unwrap();
                adam.step().unwrap();
            })
        },
    );
}

/// The model's convolution → batch norm → ReLU in eval, as three layers and with the batch norm folded into
/// the convolution (`nn::utils::fuse_conv_bn_eval`), on every core.
fn fusion_rows(c: &mut Criterion) {
    use nn::functional::{Conv2dOptions, Padding2d};
    use nn::utils::fuse_conv_bn_eval;
    let options = Conv2dOptions {
        padding: Padding2d::Explicit(1, 1),
        ..Default::default()
    };
    let mut conv = Conv2d::new(18, 16, [3, 3], options, false).unwrap();
    let mut bn = BatchNorm2d::new(16);
    bn.running_mean = Some(Tensor::randn([16], DType::F32));
    bn.running_var = Some(Tensor::uniform([16], 0.5, 2.0, DType::F32));
    conv.eval();
    bn.eval();
    let fused = fuse_conv_bn_eval(&conv, &bn).unwrap();
    let relu = ReLU::new(true);
    let x = Tensor::randn([256, 18, 3, 3], DType::F32);
    let _no_grad = nn::no_grad();
    let name = "conv2d -> batch norm -> relu, eval, model (256, 18, 3, 3) * (16, 18, 3, 3), padding 1";
    c.bench_function(&format!("{name}, unfused"), |b| {
        b.iter(|| {
            black_box(
                relu.forward(bn.forward(conv.forward(x.clone()).unwrap()).unwrap())
                    .unwrap(),
            )
        })
    });
    c.bench_function(&format!("{name}, fused"), |b| {
        b.iter(|| black_box(relu.forward(fused.forward(x.clone()).unwrap()).unwrap()))
    });
}

fn bench(c: &mut Criterion) {
    conv_rows(c);
    conv_transpose_rows(c);
    attention_rows(c);
    fusion_rows(c);
    nn::manual_seed(0);
    let mut net = DynamicsNetwork::new(DynamicsConfig::from_json(CONFIG).unwrap()).unwrap();
    let batch = 256;
    let x = Tensor::randn([batch, 16, 3, 3], DType::F32);
    let h = Tensor::randn([1, batch, 32], DType::F32);
    let cell = Tensor::randn([1, batch, 32], DType::F32);
    // Under no_grad, as inference runs (the rows before autograd existed); then recording the graph, as a
    // training step's forward does (the parameters require gradients).
    for (mode, training) in [("eval", false), ("train", true)] {
        net.train(training);
        c.bench_function(&format!("DynamicsNetwork forward, {mode}, batch 256"), |b| {
            let _no_grad = nn::no_grad();
            b.iter(|| black_box(net.forward((x.clone(), (h.clone(), cell.clone()))).unwrap()))
        });
        c.bench_function(&format!("DynamicsNetwork forward, {mode}, batch 256, recording"), |b| {
            b.iter(|| black_box(net.forward((x.clone(), (h.clone(), cell.clone()))).unwrap()))
        });
    }
    // The thread pool's gain: the same forward on one thread (`nn::set_num_threads(1)`), next to the rows
    // above (every core); and batch 1 (MCTS's call, one state at a time), where nothing splits.
    for (mode, training) in [("eval", false), ("train", true)] {
        net.train(training);
        nn::set_num_threads(1);
        c.bench_function(&format!("DynamicsNetwork forward, {mode}, batch 256, 1 thread"), |b| {
            let _no_grad = nn::no_grad();
            b.iter(|| black_box(net.forward((x.clone(), (h.clone(), cell.clone()))).unwrap()))
        });
        nn::set_num_threads(0);
    }
    {
        net.train(false);
        let (x, h, cell) = (
            Tensor::randn([1, 16, 3, 3], DType::F32),
            Tensor::randn([1, 1, 32], DType::F32),
            Tensor::randn([1, 1, 32], DType::F32),
        );
        c.bench_function("DynamicsNetwork forward, eval, batch 1", |b| {
            let _no_grad = nn::no_grad();
            b.iter(|| black_box(net.forward((x.clone(), (h.clone(), cell.clone()))).unwrap()))
        });
    }
    // Eval with every convolution's and linear layer's batch norm folded into it (`nn::utils::fuse_modules` of
    // `DynamicsNetwork::fusion_groups`), next to the eval rows above.
    {
        let mut folded = DynamicsNetwork::new(DynamicsConfig::from_json(CONFIG).unwrap()).unwrap();
        folded.load_state_dict(&net.state_dict(), true, false).unwrap();
        folded.eval();
        let groups = folded.fusion_groups();
        nn::utils::fuse_modules(&mut folded, &groups).unwrap();
        for batch in [256, 1] {
            let (x, h, cell) = (
                Tensor::randn([batch, 16, 3, 3], DType::F32),
                Tensor::randn([1, batch, 32], DType::F32),
                Tensor::randn([1, batch, 32], DType::F32),
            );
            c.bench_function(&format!("DynamicsNetwork forward, eval, batch {batch}, folded"), |b| {
                let _no_grad = nn::no_grad();
                b.iter(|| black_box(folded.forward((x.clone(), (h.clone(), cell.clone()))).unwrap()))
            });
        }
    }

    // Forward + backward of the loss Σ outputs, gradients set to none first, as a training step runs; batch 1
    // in eval mode (train-mode batch norm refuses one value per channel, as PyTorch's does).
    for (batch, mode) in [(256, "train"), (1, "eval")] {
        net.train(mode == "train");
        let x = Tensor::randn([batch, 16, 3, 3], DType::F32);
        let h = Tensor::randn([1, batch, 32], DType::F32);
        let cell = Tensor::randn([1, batch, 32], DType::F32);
        c.bench_function(
            &format!("DynamicsNetwork forward + backward, {mode}, batch {batch}"),
            |b| {
                b.iter(|| {
                    net.zero_grad(true);
                    sum_of_outputs(&net, &x, &h, &cell).backward().unwrap();
                })
            },
        );
    }

    // One training step: forward, backward and Adam's update at batch 256 in train mode.
    {
        net.train(true);
        let mut opt = Adam::new(net.parameters(), AdamOptions::default()).unwrap();
        c.bench_function(
            "DynamicsNetwork training step (forward, backward, Adam), batch 256",
            |b| {
                b.iter(|| {
                    opt.zero_grad(true).unwrap();
                    sum_of_outputs(&net, &x, &h, &cell).backward().unwrap();
                    opt.step().unwrap();
                })
            },
        );
    }

    lstm_rows(c, Device::Cpu);

    // The devices of `NN_BENCH_DEVICES` (comma-separated, `wgpu:0` when unset; `cuda:0` in a build with the
    // `cuda` feature): the device's own copy rate, then the forward rows; each iteration waits for the device.
    let devices = std::env::var("NN_BENCH_DEVICES").unwrap_or_else(|_| "wgpu:0".into());
    for name in devices.split(',') {
        let Some(dev) = Device::parse(name.trim()) else {
            eprintln!("NN_BENCH_DEVICES: {name:?} is not a device such as wgpu:0 or cuda:0");
            continue;
        };
        if let Err(e) = net.to_device(dev) {
            eprintln!("{dev} benchmarks skipped: {e}");
            continue;
        }
        device_rows(c, &mut net, dev);
        net.cpu().unwrap();
    }
}

fn device_rows(c: &mut Criterion, net: &mut DynamicsNetwork, dev: Device) {
    let n = 16 << 20;
    let a = Tensor::randn([n], DType::F32).to_device(dev).unwrap();
    let b = Tensor::zeros([n], DType::F32).to_device(dev).unwrap();
    let mut group = c.benchmark_group(format!("copy 16M f32 on {dev}"));
    group.throughput(criterion::Throughput::Bytes(2 * 4 * n as u64));
    group.bench_function("copy_", |bench| {
        bench.iter(|| {
            b.copy_(&a).unwrap();
            dev.synchronize().unwrap();
        })
    });
    group.finish();
    let on = |t: Tensor| t.to_device(dev).unwrap();
    for (batch, modes) in [(256, &["eval", "train"][..]), (1, &["eval"][..])] {
        let _no_grad = nn::no_grad();
        let x = on(Tensor::randn([batch, 16, 3, 3], DType::F32));
        let h = on(Tensor::randn([1, batch, 32], DType::F32));
        let cell = on(Tensor::randn([1, batch, 32], DType::F32));
        for mode in modes {
            net.train(*mode == "train");
            c.bench_function(&format!("DynamicsNetwork forward, {mode}, batch {batch}, {dev}"), |b| {
                b.iter(|| {
                    let out = net.forward((x.clone(), (h.clone(), cell.clone()))).unwrap();
                    dev.synchronize().unwrap();
                    black_box(out)
                })
            });
        }
    }
    // Forward + backward as on the CPU (batch 256 in train mode), then an LSTM alone over 16 steps, whose
    // backward through time runs as one node: two launches per step, then the weights' products.
    net.train(true);
    let (x, h, cell) = (
        on(Tensor::randn([256, 16, 3, 3], DType::F32)),
        on(Tensor::randn([1, 256, 32], DType::F32)),
        on(Tensor::randn([1, 256, 32], DType::F32)),
    );
    c.bench_function(
        &format!("DynamicsNetwork forward + backward, train, batch 256, {dev}"),
        |b| {
            b.iter(|| {
                net.zero_grad(true);
                sum_of_outputs(net, &x, &h, &cell).backward().unwrap();
                dev.synchronize().unwrap();
            })
        },
    );
    lstm_rows(c, dev);
}

/// An LSTM alone, forward + backward of its output's sum over 16 steps at batch 64 on `dev` (each iteration
/// waits for it): one layer, and two with dropout between them. Its backward through time runs as one node.
fn lstm_rows(c: &mut Criterion, dev: Device) {
    let seq = Tensor::randn([16, 64, 32], DType::F32).to_device(dev).unwrap();
    let options = nn::layers::LstmOptions {
        num_layers: 2,
        dropout: 0.2,
        ..Default::default()
    };
    let rows = [
        ("LSTM(32, 32)", nn::layers::LSTM::new(32, 32)),
        (
            "LSTM(32, 32), 2 layers, dropout 0.2,",
            nn::layers::LSTM::with_options(32, 32, options).unwrap(),
        ),
    ];
    for (name, mut lstm) in rows {
        lstm.to_device(dev).unwrap();
        c.bench_function(&format!("{name} forward + backward, 16 steps, batch 64, {dev}"), |b| {
            b.iter(|| {
                lstm.zero_grad(true);
                let (out, _) = lstm.forward((seq.clone(), None)).unwrap();
                out.sum_all().unwrap().backward().unwrap();
                dev.synchronize().unwrap();
            })
        });
    }
    recurrent_rows(c, dev);
}

/// `RNN` and `GRU`, whose recurrence runs as recorded operations: forward + backward of the output's sum at
/// batch 64, one layer over 16 steps, and two layers over 256 steps (the second layer's input needs a
/// gradient, so a backward whose cost grows with the square of the length would show).
fn recurrent_rows(c: &mut Criterion, dev: Device) {
    let (rnn2, gru2) = (
        nn::layers::RnnOptions {
            num_layers: 2,
            ..Default::default()
        },
        nn::layers::GruOptions {
            num_layers: 2,
            ..Default::default()
        },
    );
    let short = Tensor::randn([16, 64, 32], DType::F32).to_device(dev).unwrap();
    let long = Tensor::randn([256, 64, 32], DType::F32).to_device(dev).unwrap();
    recurrent_row(c, "RNN(32, 32)", nn::layers::RNN::new(32, 32), &short, dev);
    recurrent_row(c, "GRU(32, 32)", nn::layers::GRU::new(32, 32), &short, dev);
    let rnn = nn::layers::RNN::with_options(32, 32, rnn2).unwrap();
    recurrent_row(c, "RNN(32, 32), 2 layers,", rnn, &long, dev);
    let gru = nn::layers::GRU::with_options(32, 32, gru2).unwrap();
    recurrent_row(c, "GRU(32, 32), 2 layers,", gru, &long, dev);
}

/// One row of [`recurrent_rows`]: `layer` over `seq` `(steps, 64, 32)`.
fn recurrent_row<M>(c: &mut Criterion, name: &str, mut layer: M, seq: &Tensor, dev: Device)
where
    M: Module + Forward<Input = (Tensor, Option<Tensor>), Output = (Tensor, Tensor)>,
{
    layer.to_device(dev).unwrap();
    let row = format!("{name} forward + backward, {} steps, batch 64, {dev}", seq.shape()[0]);
    c.bench_function(&row, |b| {
        b.iter(|| {
            layer.zero_grad(true);
            let (out, _) = layer.forward((seq.clone(), None)).unwrap();
            out.sum_all().unwrap().backward().unwrap();
            dev.synchronize().unwrap();
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
