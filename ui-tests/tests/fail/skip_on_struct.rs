use nn::prelude::*;

#[derive(Module)]
#[module(skip)]
struct Net {
    fc: Linear,
}

fn main() {}
