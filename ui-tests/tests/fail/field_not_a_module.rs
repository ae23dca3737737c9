use nn::prelude::*;
use std::collections::HashMap;

#[derive(Module)]
struct Net {
    fc: Linear,
    vocab: HashMap<String, usize>,
}

fn main() {}
