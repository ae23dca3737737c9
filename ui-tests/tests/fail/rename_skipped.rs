use nn::prelude::*;

#[derive(Module)]
struct Net {
    fc: Linear,
    #[module(skip, rename = "w")]
    width: Vec<u8>,
}

fn main() {}
