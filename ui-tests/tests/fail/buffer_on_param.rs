use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[buffer(persistent = false)]
    scale: Param,
}

fn main() {}
