use nn::prelude::*;

#[derive(Module)]
#[module(name = 3)]
struct Net {
    #[module(rename = "")]
    a: Linear,
    #[buffer(persistent = "yes")]
    b: Tensor,
    #[module(frobnicate)]
    c: Linear,
}

fn main() {}
