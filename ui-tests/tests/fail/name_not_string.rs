use nn::prelude::*;

#[derive(Module)]
#[module(name = GELU)]
struct Gelu {
    approximate: String,
}

fn main() {}
