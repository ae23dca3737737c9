use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(name = "Linear2")]
    fc: Linear,
}

fn main() {}
