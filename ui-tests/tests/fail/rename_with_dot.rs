use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(rename = "encoder.fc")]
    fc: Linear,
}

fn main() {}
