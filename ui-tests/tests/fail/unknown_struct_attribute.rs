use nn::prelude::*;

#[derive(Module)]
#[module(nme = "Network")]
struct Net {
    fc: Linear,
}

fn main() {}
