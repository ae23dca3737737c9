use nn::prelude::*;

#[derive(Module)]
union Bits {
    a: u32,
    b: f32,
}

fn main() {}
