use nn::prelude::*;

#[derive(Module)]
struct Net {
    act: Shared<PReLU>,
    blocks: Vec<Shared<PReLU>>,
    maybe: Option<Shared<PReLU>>,
}

pub fn main() {
    let act = Shared::new(PReLU::new(1, 0.25));
    let net = Net {
        act: act.clone(),
        blocks: vec![act.clone(), act.clone()],
        maybe: Some(act),
    };
    assert_eq!(net.named_parameters().len(), 1);
    assert_eq!(net.state_dict().len(), 4);
}
