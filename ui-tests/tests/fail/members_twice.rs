use nn::prelude::*;

#[derive(Module)]
struct Bank {
    #[members]
    slots: Vec<Param>,
    #[members]
    more: Vec<Param>,
}

fn main() {}
