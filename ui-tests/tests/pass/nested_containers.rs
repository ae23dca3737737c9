use nn::prelude::*;

#[derive(Module)]
struct Net {
    maybe_list: Option<Vec<Linear>>,
    grid: [[ReLU; 2]; 2],
    boxed: Box<Linear>,
    boxed_list: Vec<Box<dyn Module>>,
    nested: Vec<Vec<Tanh>>,
    none: Option<Box<Linear>>,
}

pub fn main() {
    let net = Net {
        maybe_list: Some(vec![Linear::new(1, 1, false)]),
        grid: [[ReLU::new(false), ReLU::new(false)], [ReLU::new(true), ReLU::new(true)]],
        boxed: Box::new(Linear::new(1, 2, false)),
        boxed_list: vec![Box::new(Tanh::new())],
        nested: vec![vec![Tanh::new()]],
        none: None,
    };
    assert_eq!(
        net.state_dict().keys().collect::<Vec<_>>(),
        ["maybe_list.0.weight", "boxed.weight"]
    );
    let names: Vec<String> = net.named_modules().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "",
            "maybe_list",
            "maybe_list.0",
            "grid",
            "grid.0",
            "grid.0.0",
            "grid.0.1",
            "grid.1",
            "grid.1.0",
            "grid.1.1",
            "boxed",
            "boxed_list",
            "boxed_list.0",
            "nested",
            "nested.0",
            "nested.0.0"
        ]
    );
}
