//! The README's example: a layer written by hand with a `Param`, used inside a derived struct, printed, its
//! keys listed, saved to safetensors and loaded back.
//!
//! `cargo run --release -p nn --example demo`

use nn::module::{Visitor, VisitorMut};
use nn::prelude::*;

/// A learned per-feature scale, `y = x * weight`, written without the derive: a module only has to show its
/// members to a visitor.
struct Scale {
    weight: Param,
}

impl Scale {
    fn new(features: usize) -> Scale {
        Scale {
            weight: Param::new(Tensor::ones([features], DType::F32)),
        }
    }
}

impl Module for Scale {
    fn type_name(&self) -> &'static str {
        "Scale"
    }
    fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>) {
        visitor.param("weight", &self.weight);
    }
    fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>) {
        visitor.param("weight", &mut self.weight);
    }
    fn extra_repr(&self) -> String {
        format!("features={}", self.weight.shape()[0])
    }
}

impl Forward for Scale {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> nn::Result<Tensor> {
        x.mul(&self.weight.data())
    }
}

/// A small network: the derive generates its whole Module API.
#[derive(Module)]
struct Net {
    encoder: Sequential,
    scale: Scale,
    head: Linear,
    #[buffer]
    steps: Tensor,
}

impl Forward for Net {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> nn::Result<Tensor> {
        self.steps.add_scalar_(1.0)?;
        self.head.forward(self.scale.forward(self.encoder.forward(x)?)?)
    }
}

fn net() -> Net {
    Net {
        encoder: Sequential::new()
            .append(Linear::new(4, 8, true))
            .append(GELU::new("tanh").expect("valid")),
        scale: Scale::new(8),
        head: Linear::new(8, 2, true),
        steps: Tensor::scalar(0i64),
    }
}

fn main() -> nn::Result<()> {
    nn::manual_seed(0);
    let model = net();
    println!("{model}\n");
    for (key, tensor) in &model.state_dict() {
        println!("{key:<18} {:<8} {}", tensor.dtype().to_string(), tensor.shape());
    }

    let x = Tensor::randn([3, 4], DType::F32);
    let y = model.forward(x.clone())?;

    let path = std::env::temp_dir().join("nn-demo.safetensors");
    model.save_safetensors(&path)?;
    let mut restored = net();
    let keys = restored.load_safetensors(&path, true)?;
    assert!(keys.is_empty());
    let y2 = restored.forward(x)?;
    assert_eq!(y.to_vec::<f32>()?, y2.to_vec::<f32>()?);
    println!(
        "\nsaved to {} and loaded back: same output {:?}",
        path.display(),
        y2.to_vec::<f32>()?
    );
    std::fs::remove_file(path).ok();
    Ok(())
}
