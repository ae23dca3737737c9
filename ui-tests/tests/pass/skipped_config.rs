use nn::prelude::*;
use std::collections::HashMap;

#[derive(Clone, Debug)]
struct Config {
    width: usize,
}

#[derive(Module)]
struct Net {
    fc: Linear,
    width: usize,
    scale: f64,
    name: String,
    dims: Vec<usize>,
    pair: (bool, char),
    dtype: DType,
    device: Device,
    #[module(skip)]
    config: Config,
    #[module(skip)]
    vocab: HashMap<String, usize>,
    training: bool,
}

pub fn main() {
    let mut net = Net {
        fc: Linear::new(1, 1, true),
        width: 1,
        scale: 0.5,
        name: "net".into(),
        dims: vec![1],
        pair: (true, 'x'),
        dtype: DType::F32,
        device: Device::Cpu,
        config: Config { width: 1 },
        vocab: HashMap::new(),
        training: true,
    };
    net.eval();
    assert!(!net.training && !net.is_training());
    assert_eq!(<Net as StaticKeys>::KEYS, ["fc"]);
    assert_eq!(
        (
            net.width,
            net.config.width,
            net.scale,
            net.name.as_str(),
            net.dims.len(),
            net.pair.0,
            net.dtype,
            net.device,
            net.vocab.len()
        ),
        (1, 1, 0.5, "net", 1, true, DType::F32, Device::Cpu, 0)
    );
}
