use nn::prelude::*;

#[derive(Module)]
#[module(custom_state_dict)]
struct Renamed {
    fc: Linear,
}

fn main() {}
