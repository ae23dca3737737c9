use nn::prelude::*;

#[derive(Module)]
struct Net {
    fc: Linear,
    #[module(rename = "fc")]
    proj: Linear,
}

fn main() {}
