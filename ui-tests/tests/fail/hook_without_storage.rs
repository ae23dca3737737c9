use nn::prelude::*;

#[derive(Module)]
struct Block {
    fc: Linear,
}

impl Forward for Block {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> nn::Result<Tensor> {
        self.fc.call(x)
    }
}

fn main() {
    let mut block = Block { fc: Linear::new(2, 2, true) };
    block.register_forward_hook(|_, _, _| {}, HookOptions::default());
}
