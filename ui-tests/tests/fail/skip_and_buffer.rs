use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(skip)]
    #[buffer]
    cache: Tensor,
}

fn main() {}
