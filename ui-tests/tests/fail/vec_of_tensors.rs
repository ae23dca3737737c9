use nn::prelude::*;

#[derive(Module)]
struct Net {
    fc: Linear,
    caches: Vec<Tensor>,
}

fn main() {}
