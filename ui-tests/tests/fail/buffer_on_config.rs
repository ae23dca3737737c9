use nn::prelude::*;

#[derive(Module)]
struct Net {
    fc: Linear,
    #[buffer]
    steps: usize,
}

fn main() {}
