use nn::prelude::*;

#[derive(Module)]
struct Pair(Linear, #[module(rename = "second")] Linear, Tensor);

pub fn main() {
    let p = Pair(
        Linear::new(1, 1, false),
        Linear::new(1, 1, false),
        Tensor::zeros([1], DType::F32),
    );
    assert_eq!(
        p.state_dict().keys().collect::<Vec<_>>(),
        ["2", "0.weight", "second.weight"]
    );
    assert_eq!(<Pair as StaticKeys>::KEYS, ["2", "0", "second"]);
}
