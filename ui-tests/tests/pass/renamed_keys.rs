use nn::prelude::*;

#[derive(Module)]
struct Net {
    #[module(rename = "0")]
    first: Linear,
    #[module(rename = "weight_ih_l0")]
    w: Param,
    #[buffer(persistent = false)]
    #[module(rename = "scratch")]
    cache: Tensor,
    r#type: Tanh,
}

pub fn main() {
    let net = Net {
        first: Linear::new(1, 1, true),
        w: Param::new(Tensor::zeros([2], DType::F32)),
        cache: Tensor::zeros([1], DType::F32),
        r#type: Tanh::new(),
    };
    assert_eq!(
        net.state_dict().keys().collect::<Vec<_>>(),
        ["weight_ih_l0", "0.weight", "0.bias"]
    );
    assert_eq!(net.named_buffers()[0].0, "scratch");
    assert!(net.get_submodule("type").is_ok());
}
