use nn::prelude::*;

#[derive(Module)]
struct Net {
    alphas: Vec<Param>,
}

fn main() {}
