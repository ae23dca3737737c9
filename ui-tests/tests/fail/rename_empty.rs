use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(rename = "")]
    fc: Linear,
}

fn main() {}
