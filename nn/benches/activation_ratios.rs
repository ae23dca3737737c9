//! Each CPU activation's speed as a fraction of a memcpy's, the two timed in turns: every iteration copies
//! 16M f32 elements (64 MB) with `Tensor::copy_` (a memcpy split over nn's thread pool, the pool the
//! activations run on), then runs the activation on 16M elements, and the iteration's figure is
//! `copy time / activation time`. Criterion reports the mean of those fractions, as "% of memcpy".
//!
//! Why not `activations.rs`'s GB/s next to its memcpy row: on a virtual machine the memory bandwidth moves
//! (the memcpy row has read 48 and 97 GiB/s minutes apart), so two rows timed a minute apart do not compare.
//! Timed in turns, a bandwidth change moves both times of an iteration together and their ratio stays.
//!
//! Rows: `<activation> into preallocated` (reads the input, writes a preallocated output: issue 19's goal is
//! at least 90 %); `<activation> in-place` (the copy refreshes the tensor the activation then rewrites in
//! place, as PyTorch's `relu_` is timed by `reference/benches/pytorch.py activations`, which prints the same
//! fraction for it); and `std memcpy, 2 threads` (`copy_from_slice` on two halves on rayon's global pool),
//! which shows that the reference copy is a memcpy's speed.
//!
//! ```text
//! cargo bench -p nn --bench activation_ratios            # every row, about 5 minutes
//! cargo bench -p nn --bench activation_ratios -- 'relu '  # one activation
//! ```

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nn::functional::prelu_into;
use nn::prelude::*;
use std::time::{Duration, Instant};

#[path = "common/activation_list.rs"]
mod activation_list;
use activation_list::activations;

const N: usize = 16 << 20;

/// A measurement whose value is a fraction (a copy's time over an operation's, summed over iterations), set
/// by `iter_custom`; criterion still chooses the iteration counts from the wall time.
struct FractionOfMemcpy;

impl Measurement for FractionOfMemcpy {
    type Intermediate = Instant;
    type Value = f64;

    fn start(&self) -> Instant {
        Instant::now()
    }
    fn end(&self, start: Instant) -> f64 {
        start.elapsed().as_secs_f64()
    }
    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }
    fn zero(&self) -> f64 {
        0.0
    }
    fn to_f64(&self, value: &f64) -> f64 {
        *value
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &Percent
    }
}

/// Prints a fraction as a percentage of the memcpy's speed.
struct Percent;

impl ValueFormatter for Percent {
    fn scale_values(&self, _typical: f64, values: &mut [f64]) -> &'static str {
        values.iter_mut().for_each(|v| *v *= 100.0);
        "% of memcpy"
    }
    fn scale_throughputs(&self, _typical: f64, _throughput: &Throughput, values: &mut [f64]) -> &'static str {
        values.iter_mut().for_each(|v| *v *= 100.0);
        "% of memcpy"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "fraction of memcpy"
    }
}

/// Seconds `f` takes.
fn seconds(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

/// For `iters` iterations, a copy of `src` into `dst` then `op`: the sum of `copy time / op time`.
fn in_turns(iters: u64, src: &Tensor, dst: &Tensor, mut op: impl FnMut()) -> f64 {
    (0..iters)
        .map(|_| {
            let copy = seconds(|| dst.copy_(src).unwrap());
            copy / seconds(&mut op)
        })
        .sum()
}

fn bench(c: &mut Criterion<FractionOfMemcpy>) {
    nn::manual_seed(0);
    let x = Tensor::randn([N], DType::F32).mul_scalar(3.0).unwrap();
    let src = x.deep_copy().unwrap();
    let dst = Tensor::zeros([N], DType::F32);
    let out = Tensor::zeros([N], DType::F32);
    let mut g = c.benchmark_group("cpu f32 16M, in turns with a copy");
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));

    let plain_src = x.to_vec::<f32>().unwrap();
    let mut plain_dst = vec![0.0f32; N];
    g.bench_function("std memcpy, 2 threads", |b| {
        use rayon::prelude::*;
        b.iter_custom(|iters| {
            in_turns(iters, &src, &dst, || {
                plain_dst
                    .par_chunks_mut(N / 2)
                    .zip(plain_src.par_chunks(N / 2))
                    .for_each(|(d, s)| d.copy_from_slice(s));
                std::hint::black_box(&plain_dst);
            })
        })
    });
    drop(plain_dst);

    for act in activations() {
        let name = act.name();
        g.bench_function(format!("{name} into preallocated"), |b| {
            b.iter_custom(|iters| in_turns(iters, &src, &dst, || act.forward_into(&x, &out).unwrap()))
        });
        // The copy refreshes `dst`, which the activation then rewrites in place.
        g.bench_function(format!("{name} in-place"), |b| {
            b.iter_custom(|iters| in_turns(iters, &x, &dst, || act.forward_(&dst).unwrap()))
        });
    }
    let w = Tensor::full([1], 0.25, DType::F32);
    g.bench_function("prelu into preallocated", |b| {
        b.iter_custom(|iters| in_turns(iters, &src, &dst, || prelu_into(&x, &w, &out).unwrap()))
    });
    g.bench_function("prelu in-place", |b| {
        b.iter_custom(|iters| in_turns(iters, &x, &dst, || prelu_into(&dst, &w, &dst).unwrap()))
    });
    g.finish();
}

criterion_group! {
    name = ratios;
    config = Criterion::default().with_measurement(FractionOfMemcpy);
    targets = bench
}
criterion_main!(ratios);
