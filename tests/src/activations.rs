//! The activation fixtures' names, mapped to the layers that compute them.

use nn::prelude::*;
use nn::{Result, StateDict};

/// The layer a fixture name stands for, built with the fixture's arguments, as a function of the input.
/// `prelu` and `prelu_c3` read their weight from the fixture (`{name}.{dtype}.weight`).
pub fn layer(name: &str, fixture: &StateDict, dtype: &str) -> Option<Box<dyn Fn(Tensor) -> Result<Tensor>>> {
    fn boxed<L: Forward<Input = Tensor, Output = Tensor> + 'static>(
        l: L,
    ) -> Option<Box<dyn Fn(Tensor) -> Result<Tensor>>> {
        Some(Box::new(move |x| l.forward(x)))
    }
    match name {
        "relu" => boxed(ReLU::new(false)),
        "gelu" => boxed(GELU::new("none").ok()?),
        "gelu_tanh" => boxed(GELU::new("tanh").ok()?),
        "sigmoid" => boxed(Sigmoid::new()),
        "tanh" => boxed(Tanh::new()),
        "threshold" => boxed(Threshold::new(0.1, 20.0, false)),
        "prelu" | "prelu_c3" => {
            let weight = fixture.get(&format!("{name}.{dtype}.weight"))?.clone();
            let mut prelu = PReLU::new(weight.numel(), 0.25);
            prelu.weight = Param::new(weight);
            boxed(prelu)
        }
        "relu6" => boxed(ReLU6::new(false)),
        "leaky_relu" => boxed(LeakyReLU::default()),
        "hardtanh" => boxed(Hardtanh::default()),
        "elu" => boxed(ELU::default()),
        "selu" => boxed(SELU::new(false)),
        "celu" => boxed(CELU::default()),
        "silu" => boxed(SiLU::new(false)),
        "mish" => boxed(Mish::new(false)),
        "softplus" => boxed(Softplus::default()),
        "softsign" => boxed(Softsign::new()),
        "hardsigmoid" => boxed(Hardsigmoid::new(false)),
        "hardswish" => boxed(Hardswish::new(false)),
        "tanhshrink" => boxed(Tanhshrink::new()),
        "hardshrink" => boxed(Hardshrink::default()),
        "softshrink" => boxed(Softshrink::default()),
        "logsigmoid" => boxed(LogSigmoid::new()),
        "softmax" => boxed(Softmax::new(-1)),
        "log_softmax" => boxed(LogSoftmax::new(-1)),
        _ => None,
    }
}

pub use reference::parity::activations::cases;
