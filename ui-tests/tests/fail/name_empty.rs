use nn::prelude::*;

#[derive(Module)]
#[module(name = "")]
struct Gelu {
    approximate: String,
}

fn main() {}
