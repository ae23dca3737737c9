use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(skip, skip)]
    width: Vec<u8>,
}

fn main() {}
