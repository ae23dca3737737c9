use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(rename = "head")]
    policy: Linear,
    #[module(rename = "head")]
    value: Linear,
}

fn main() {}
