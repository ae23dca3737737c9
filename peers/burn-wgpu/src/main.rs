//! nn's and Burn 0.22.1's wgpu activations on 16M f32, measured in turns in one process, so that both see the
//! same device and the same moment of this machine's (noisy) load.
//!
//! Two ways for each: per call (launch, then wait for the device) and queued (eight calls launched back to
//! back on eight inputs, one wait at the end). Each figure is the median over the rounds, in GB/s with the read
//! and the write counted. `cargo run --release --manifest-path peers/burn-wgpu/Cargo.toml [-- ROUNDS [NAME…]]`

use std::time::Instant;

use burn::tensor::{Device as BurnDevice, DeviceKind, Distribution, Tensor as BurnTensor, activation};
use nn::functional::Activation;
use nn::prelude::*;

const N: usize = 16 * 1024 * 1024;
const QUEUE: usize = 8;

/// GB/s for one call of `seconds`.
fn rate(seconds: f64) -> f64 {
    (2 * N * 4) as f64 / seconds / 1e9
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `(per call, queued)` seconds per call of `call(i)` (on input `i`), then `wait`.
fn time<T>(call: &dyn Fn(usize) -> T, wait: &dyn Fn()) -> (f64, f64) {
    for i in 0..2 {
        drop(call(i));
        wait();
    }
    let per_call = median(
        (0..7)
            .map(|_| {
                let start = Instant::now();
                let y = call(0);
                wait();
                let t = start.elapsed().as_secs_f64();
                drop(y);
                t
            })
            .collect(),
    );
    let start = Instant::now();
    let ys: Vec<T> = (0..QUEUE).map(call).collect();
    wait();
    let queued = start.elapsed().as_secs_f64() / QUEUE as f64;
    drop(ys);
    (per_call, queued)
}

/// Prints one table row: `rounds` turns of nn's `ours(i)` then Burn's `burn(i)`, medians of each way.
fn compare<T, U>(
    name: &str,
    rounds: usize,
    ours: (&dyn Fn(usize) -> T, &dyn Fn()),
    burn: (&dyn Fn(usize) -> U, &dyn Fn()),
) {
    let mut figures = [const { Vec::new() }; 4];
    for _ in 0..rounds {
        let (a, c) = time(ours.0, ours.1);
        let (b, d) = time(burn.0, burn.1);
        for (k, t) in [a, b, c, d].into_iter().enumerate() {
            figures[k].push(rate(t));
        }
    }
    let [a, b, c, d] = figures.map(median);
    println!("| {name} | {a:.2} | {b:.2} | {c:.2} | {d:.2} |");
}

type BurnOp = fn(BurnTensor<1>) -> BurnTensor<1>;

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let device = Device::Wgpu(0);
    nn::manual_seed(0);
    // One input per queued call: a fusing framework given the same input eight times reads it once and may
    // compute it once, which would not be eight calls' work.
    let xs: Vec<Tensor> = (0..QUEUE)
        .map(|_| {
            Tensor::randn([N], DType::F32)
                .mul_scalar(3.0)
                .and_then(|t| t.to_device(device))
                .expect("a wgpu adapter")
        })
        .collect();
    let ours_wait = || device.synchronize().unwrap();
    let burn_device = BurnDevice::wgpu(DeviceKind::DefaultDevice);
    let bxs: Vec<BurnTensor<1>> = (0..QUEUE)
        .map(|_| BurnTensor::random([N], Distribution::Normal(0.0, 3.0), &burn_device))
        .collect();
    let burn_wait = || burn_device.sync().unwrap();
    burn_wait();

    use Activation as A;
    let cases: Vec<(&str, Option<Activation>, BurnOp)> = vec![
        ("copy", None, |x| x + 0.0),
        ("relu", Some(A::Relu), activation::relu),
        ("relu6", Some(A::Relu6), activation::relu6),
        ("leaky_relu", Some(A::LeakyRelu { negative_slope: 0.01 }), |x| {
            activation::leaky_relu(x, 0.01)
        }),
        (
            "threshold",
            Some(A::Threshold {
                threshold: 0.1,
                value: 20.0,
            }),
            |x| activation::threshold(x, 0.1, 20.0),
        ),
        (
            "hardtanh",
            Some(A::Hardtanh {
                min_val: -1.0,
                max_val: 1.0,
            }),
            |x| activation::hardtanh(x, -1.0, 1.0),
        ),
        ("elu", Some(A::Elu { alpha: 1.0 }), |x| activation::elu(x, 1.0)),
        ("selu", Some(A::Selu), activation::selu),
        ("celu", Some(A::Celu { alpha: 1.0 }), |x| activation::celu(x, 1.0)),
        ("gelu", Some(A::Gelu), activation::gelu),
        ("gelu_tanh", Some(A::GeluTanh), activation::gelu_approximate),
        ("silu", Some(A::Silu), activation::silu),
        ("mish", Some(A::Mish), activation::mish),
        (
            "softplus",
            Some(A::Softplus {
                beta: 1.0,
                threshold: 20.0,
            }),
            |x| activation::softplus(x, 1.0),
        ),
        ("softsign", Some(A::Softsign), activation::softsign),
        ("sigmoid", Some(A::Sigmoid), activation::sigmoid),
        ("tanh", Some(A::Tanh), activation::tanh),
        ("hardsigmoid", Some(A::Hardsigmoid), |x| {
            activation::hard_sigmoid(x, 1.0 / 6.0, 0.5)
        }),
        ("hardswish", Some(A::Hardswish), activation::hard_swish),
        ("tanhshrink", Some(A::Tanhshrink), activation::tanhshrink),
        ("hardshrink", Some(A::Hardshrink { lambd: 0.5 }), |x| {
            activation::hard_shrink(x, 0.5)
        }),
        ("softshrink", Some(A::Softshrink { lambd: 0.5 }), |x| {
            activation::soft_shrink(x, 0.5)
        }),
        ("logsigmoid", Some(A::LogSigmoid), activation::log_sigmoid),
    ];
    let filter: Vec<String> = std::env::args().skip(2).collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| f == name);
    println!("{rounds} rounds, medians in GB/s; nn's copy is a device memcpy, Burn's `x + 0`");
    println!("| op | nn per call | Burn per call | nn queued | Burn queued |");
    println!("| --- | --- | --- | --- | --- |");
    for (name, act, burn_op) in cases {
        if !wanted(name) {
            continue;
        }
        let burn = |i: usize| burn_op(bxs[i].clone());
        match act {
            Some(act) => compare(
                name,
                rounds,
                (&|i| act.forward(&xs[i]).unwrap(), &ours_wait),
                (&burn, &burn_wait),
            ),
            None => compare(
                name,
                rounds,
                (&|i| xs[i].deep_copy().unwrap(), &ours_wait),
                (&burn, &burn_wait),
            ),
        }
    }
    // Softmax and log-softmax over rows of 1,024, as in the criterion benchmark.
    let rows: Vec<Tensor> = xs.iter().map(|x| x.reshape([N / 1024, 1024]).unwrap()).collect();
    let burn_rows: Vec<BurnTensor<2>> = bxs.iter().map(|x| x.clone().reshape([N / 1024, 1024])).collect();
    for (name, log) in [("softmax", false), ("log_softmax", true)] {
        if !wanted(name) {
            continue;
        }
        let ours = |i: usize| {
            if log {
                rows[i].log_softmax(-1)
            } else {
                rows[i].softmax(-1)
            }
            .unwrap()
        };
        let burn = |i: usize| {
            let x = burn_rows[i].clone();
            if log {
                activation::log_softmax(x, 1)
            } else {
                activation::softmax(x, 1)
            }
        };
        compare(
            &format!("{name} (rows of 1,024)"),
            rounds,
            (&ours, &ours_wait),
            (&burn, &burn_wait),
        );
    }
}
