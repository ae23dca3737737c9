use nn::prelude::*;

#[derive(Module)]
struct Net {
    fc: Linear,
    hooks: Hooks,
    more_hooks: Hooks,
}

fn main() {}
