use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[buffer(persist = false)]
    running: Tensor,
}

fn main() {}
