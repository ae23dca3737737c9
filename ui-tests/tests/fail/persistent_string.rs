use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[buffer(persistent = "false")]
    running: Tensor,
}

fn main() {}
