//! A user crate that imports nothing but the prelude (which brings the derive).
use nn::prelude::*;

#[derive(Module)]
struct Mlp {
    layers: Sequential,
    #[buffer]
    steps: Tensor,
    hooks: Hooks,
}

impl Forward for Mlp {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> nn::Result<Tensor> {
        self.layers.call(x)
    }
}

pub fn main() {
    let mut mlp = Mlp {
        layers: Sequential::new()
            .append(Linear::new(3, 4, true))
            .append(ReLU::new(false))
            .append(Linear::new(4, 1, true)),
        steps: Tensor::scalar(0i64),
        hooks: Hooks::new(),
    };
    let _handle = mlp.register_forward_pre_hook(|_, x| *x = x.mul_scalar(2.0).unwrap(), false);
    let y = mlp.call(Tensor::ones([2, 3], DType::F32)).unwrap();
    assert_eq!(y.shape(), &[2, 1]);
    println!("{mlp}");
}
