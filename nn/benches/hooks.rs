//! The cost of hooks on a call: a small module called directly (`forward`), through `call` with no hook, with
//! one forward pre-hook, and with one forward hook. Three modules: `Flatten` (a real layer whose forward is a
//! few nanoseconds and reads its input: the figures are the hooks' own cost), `Identity` (whose output *is*
//! its input, so a forward hook, which is shown the input after `forward`, costs one more tensor handle) and
//! `Linear(4, 4)` on a (1, 4) input. A last row measures that handle alone: a `Tensor` clone and drop.
//!
//! `cargo bench -p nn --bench hooks`

use criterion::{Criterion, criterion_group, criterion_main};
use nn::prelude::*;
use std::hint::black_box;

fn four<M: Module + Forward<Input = Tensor, Output = Tensor> + RegisterHooks>(
    c: &mut Criterion,
    name: &str,
    make: impl Fn() -> M,
) {
    let x = Tensor::randn([1, 4], DType::F32);
    let m = make();
    c.bench_function(&format!("{name}: forward (direct)"), |b| {
        b.iter(|| black_box(m.forward(black_box(x.clone())).unwrap()))
    });
    c.bench_function(&format!("{name}: call, no hook"), |b| {
        b.iter(|| black_box(m.call(black_box(x.clone())).unwrap()))
    });
    let mut pre = make();
    let _ = pre.register_forward_pre_hook(
        |_, input| {
            black_box(input);
        },
        false,
    );
    c.bench_function(&format!("{name}: call, one pre-hook"), |b| {
        b.iter(|| black_box(pre.call(black_box(x.clone())).unwrap()))
    });
    let mut post = make();
    let _ = post.register_forward_hook(
        |_, _, out| {
            black_box(out);
        },
        HookOptions::default(),
    );
    c.bench_function(&format!("{name}: call, one forward hook"), |b| {
        b.iter(|| black_box(post.call(black_box(x.clone())).unwrap()))
    });
}

fn bench(c: &mut Criterion) {
    four(c, "Flatten", || Flatten::new(0, -1));
    four(c, "Identity", Identity::new);
    four(c, "Linear(4, 4)", || Linear::new(4, 4, true));
    let x = Tensor::randn([1, 4], DType::F32);
    c.bench_function("Tensor: clone + drop", |b| b.iter(|| drop(black_box(x.clone()))));
}

criterion_group!(benches, bench);
criterion_main!(benches);
