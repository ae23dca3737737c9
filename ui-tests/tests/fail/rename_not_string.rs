use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(rename = fc2)]
    fc: Linear,
}

fn main() {}
