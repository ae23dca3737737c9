use nn::prelude::*;

#[derive(Module)]
struct Bank {
    #[members]
    #[module(rename = "items")]
    slots: Vec<Param>,
}

fn main() {}
