use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(skp)]
    width: Vec<u8>,
    fc: Linear,
}

fn main() {}
