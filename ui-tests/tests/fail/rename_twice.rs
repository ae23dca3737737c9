use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(rename = "a")]
    #[module(rename = "b")]
    fc: Linear,
}

fn main() {}
