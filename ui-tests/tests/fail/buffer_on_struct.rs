use nn::prelude::*;

#[derive(Module)]
#[buffer]
struct Net {
    fc: Linear,
}

fn main() {}
