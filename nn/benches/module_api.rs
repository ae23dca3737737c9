//! The Module API on a model of 1,000 blocks, each two `Linear(8, 8)` (4,000 parameter tensors): the visitor
//! with paths, `named_parameters`, `state_dict`, `load_state_dict`.
//!
//! `cargo bench -p nn --bench module_api`

use criterion::{Criterion, criterion_group, criterion_main};
use nn::module::{WalkOptions, Walker};
use nn::prelude::*;
use std::hint::black_box;

#[derive(Module)]
struct Block {
    fc1: Linear,
    fc2: Linear,
}

#[derive(Module)]
struct Model {
    blocks: Vec<Block>,
}

fn model() -> Model {
    Model {
        blocks: (0..1000)
            .map(|_| Block {
                fc1: Linear::new(8, 8, true),
                fc2: Linear::new(8, 8, true),
            })
            .collect(),
    }
}

fn bench(c: &mut Criterion) {
    let mut m = model();
    assert_eq!(m.named_parameters().len(), 4000);
    c.bench_function("visitor with paths (4000 params)", |b| {
        b.iter(|| {
            let mut total = 0usize;
            m.visit_parameters(|path, p| total += path.len() + p.id() % 2);
            black_box(total)
        })
    });
    c.bench_function("walk, every occurrence (4000 params)", |b| {
        struct Sum(usize);
        impl Walker for Sum {
            fn param(&mut self, path: &str, p: &Param) {
                self.0 += path.len() + p.id() % 2;
            }
        }
        b.iter(|| {
            let mut sum = Sum(0);
            m.walk(&mut sum, WalkOptions::all());
            black_box(sum.0)
        })
    });
    c.bench_function("named_parameters (4000 params)", |b| {
        b.iter(|| black_box(m.named_parameters()))
    });
    c.bench_function("state_dict (4000 tensors)", |b| b.iter(|| black_box(m.state_dict())));
    c.bench_function("hand-written loop, same paths (floor)", |b| {
        b.iter(|| black_box(floor(&m)))
    });
    let sd = m.state_dict().deep_copy().unwrap();
    c.bench_function("load_state_dict strict (4000 tensors)", |b| {
        b.iter(|| black_box(m.load_state_dict(&sd, true, false).unwrap()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

#[allow(dead_code)]
fn floor(m: &Model) -> usize {
    let mut path = nn::module::ModulePath::new("");
    let mut total = 0;
    let mut idx = itoa::Buffer::new();
    let a = path.push("blocks");
    for (i, b) in m.blocks.iter().enumerate() {
        let k = path.push(idx.format(i));
        for (n, l) in [("fc1", &b.fc1), ("fc2", &b.fc2)] {
            let j = path.push(n);
            let w = path.push("weight");
            total += path.as_str().len() + l.weight.id() % 2;
            path.truncate(w);
            if let Some(bias) = &l.bias {
                let w = path.push("bias");
                total += path.as_str().len() + bias.id() % 2;
                path.truncate(w);
            }
            path.truncate(j);
        }
        path.truncate(k);
    }
    path.truncate(a);
    total
}
