use nn::prelude::*;

#[derive(Module)]
struct Residual<M> {
    inner: M,
}

fn main() {}
