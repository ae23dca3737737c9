use nn::prelude::*;

struct Config {
    width: usize,
}

#[derive(Module)]
struct Net {
    fc: Linear,
    config: Config,
}

fn main() {}
