//! The cost of hooks on a call: a small module called directly (`forward`), through `call` with no hook, with
//! one forward pre-hook, and with one forward hook. Three modules: `Flatten` (a real layer whose forward is a
//! few nanoseconds and reads its input: the figures are the hooks' own cost), `Identity` (whose output *is*
//! its input, so a forward hook, which is shown the input after `forward`, costs one more tensor handle) and
//! `Linear(4, 4)` on a (1, 4) input. A last row measures that handle alone: a `Tensor` clone and drop.
//!
//! On `Flatten` and `Identity` each hook's cost is also measured as a difference, in turns: chunks of 256 calls without the hook and 256
//! with it alternate, and the row reports (time with − time without) per call. Both halves then see the same
//! state of the machine, which the separate rows, measured seconds apart on a VM whose speed drifts, do not.
//!
//! `cargo bench -p nn --bench hooks`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use nn::prelude::*;

/// Calls in one turn of the difference measurement: long enough that reading the clock costs nothing.
const TURN: u64 = 256;

fn four<M: Module + Forward<Input = Tensor, Output = Tensor> + RegisterHooks>(
    c: &mut Criterion,
    name: &str,
    make: impl Fn() -> M,
    in_turns: bool,
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
    if in_turns {
        difference(c, &format!("{name}: one pre-hook − no hook, in turns"), &m, &pre, &x);
        difference(
            c,
            &format!("{name}: one forward hook − no hook, in turns"),
            &m,
            &post,
            &x,
        );
    }
}

/// The time `with.call` takes more than `without.call`, measured in alternating turns of [`TURN`] calls (a
/// negative difference, which noise alone can give, counts as zero).
fn difference<M: Forward<Input = Tensor, Output = Tensor> + Module>(
    c: &mut Criterion,
    label: &str,
    without: &M,
    with: &M,
    x: &Tensor,
) {
    let turn = |m: &M, n: u64| {
        let start = Instant::now();
        for _ in 0..n {
            black_box(m.call(black_box(x.clone())).unwrap());
        }
        start.elapsed()
    };
    c.bench_function(label, |b| {
        b.iter_custom(|iters| {
            let (mut t_with, mut t_without) = (Duration::ZERO, Duration::ZERO);
            let mut done = 0;
            while done < iters {
                let n = TURN.min(iters - done);
                // Alternate which one goes first, so neither always follows the other.
                if (done / TURN).is_multiple_of(2) {
                    t_without += turn(without, n);
                    t_with += turn(with, n);
                } else {
                    t_with += turn(with, n);
                    t_without += turn(without, n);
                }
                done += n;
            }
            t_with.saturating_sub(t_without)
        })
    });
}

fn bench(c: &mut Criterion) {
    four(c, "Flatten", || Flatten::new(0, -1), true);
    four(c, "Identity", Identity::new, true);
    // Linear's call moves by ±20 ns between turns, more than a hook costs: the difference would be noise.
    four(c, "Linear(4, 4)", || Linear::new(4, 4, true), false);
    let x = Tensor::randn([1, 4], DType::F32);
    c.bench_function("Tensor: clone + drop", |b| b.iter(|| drop(black_box(x.clone()))));
}

criterion_group!(benches, bench);
criterion_main!(benches);
