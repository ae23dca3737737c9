use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(skip = true)]
    width: Vec<u8>,
}

fn main() {}
