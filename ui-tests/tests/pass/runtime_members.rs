use nn::prelude::*;

/// A list of parameters added at run time, next to a static child: the derive writes the whole module.
#[derive(Module)]
struct Bank {
    head: Linear,
    #[members]
    slots: Vec<Param>,
    training: bool,
    hooks: nn::Hooks,
}

pub fn main() {
    let mut bank = Bank {
        head: Linear::new(2, 2, false),
        slots: Vec::new(),
        training: true,
        hooks: nn::Hooks::new(),
    };
    bank.slots.push(Param::new(Tensor::zeros([3], DType::F32)));
    bank.slots.push(Param::new(Tensor::zeros([2], DType::F32)));
    assert_eq!(bank.state_dict().keys().collect::<Vec<_>>(), ["head.weight", "0", "1"]);
    bank.eval();
    assert!(!bank.is_training());
    assert!(bank.get_parameter("1").is_ok());
}
