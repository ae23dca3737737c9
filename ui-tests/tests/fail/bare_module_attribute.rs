use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module]
    fc: Linear,
}

fn main() {}
