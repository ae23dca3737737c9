use nn::prelude::*;

#[derive(Module)]
#[module(extra_state)]
struct Tokenizer {
    embed: Linear,
}

fn main() {}
