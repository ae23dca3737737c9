use nn::prelude::*;

#[derive(Module)]
enum Head {
    Policy(Linear),
    Value(Linear),
}

fn main() {}
