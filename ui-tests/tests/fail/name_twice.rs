use nn::prelude::*;

#[derive(Module)]
#[module(name = "A", name = "B")]
struct Net {
    fc: Linear,
}

fn main() {}
