use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[buffer(persistent = 0)]
    running: Tensor,
}

fn main() {}
