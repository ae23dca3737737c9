use nn::prelude::*;

#[derive(Module)]
#[module(extra_repr)]
struct Scale {
    weight: Param,
}

fn main() {}
