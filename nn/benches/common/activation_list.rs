//! The activations the CPU benches time, each with the arguments PyTorch's defaults or common use give it.

use nn::functional::Activation;

/// The element-wise activations the CPU benches time (PReLU, with its weight, and softmax are timed beside them).
pub fn activations() -> Vec<Activation> {
    vec![
        Activation::Relu,
        Activation::Relu6,
        Activation::LeakyRelu { negative_slope: 0.01 },
        Activation::Threshold {
            threshold: 0.1,
            value: 20.0,
        },
        Activation::Hardtanh {
            min_val: -1.0,
            max_val: 1.0,
        },
        Activation::Elu { alpha: 1.0 },
        Activation::Selu,
        Activation::Celu { alpha: 1.0 },
        Activation::Gelu,
        Activation::GeluTanh,
        Activation::Silu,
        Activation::Mish,
        Activation::Softplus {
            beta: 1.0,
            threshold: 20.0,
        },
        Activation::Softsign,
        Activation::Sigmoid,
        Activation::Tanh,
        Activation::Hardsigmoid,
        Activation::Hardswish,
        Activation::Tanhshrink,
        Activation::Hardshrink { lambd: 0.5 },
        Activation::Softshrink { lambd: 0.5 },
        Activation::LogSigmoid,
    ]
}
