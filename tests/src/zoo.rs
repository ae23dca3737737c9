//! The zoo fixture's model (`tests/fixtures/zoo`), mirrored with `#[derive(Module)]`.
//!
//! ```python
//! class Block(nn.Module):
//!     def __init__(self):
//!         self.fc = nn.Linear(4, 4)
//!         self.act = nn.GELU(approximate="tanh")
//!         self.register_buffer("scale", torch.ones(4))
//!         self.register_buffer("cache", torch.zeros(2), persistent=False)
//! ```

use nn::prelude::*;

/// One block: `act(fc(x)) * scale`.
#[derive(Module)]
pub struct Block {
    pub fc: Linear,
    pub act: GELU,
    pub scale: Tensor,
    #[buffer(persistent = false)]
    pub cache: Tensor,
}

impl Default for Block {
    fn default() -> Block {
        Block {
            fc: Linear::new(4, 4, true),
            act: GELU::new("tanh").expect("a valid approximation"),
            scale: Tensor::ones([4], DType::F32),
            cache: Tensor::zeros([2], DType::F32),
        }
    }
}

impl Forward for Block {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> nn::Result<Tensor> {
        self.act.forward(self.fc.forward(x)?)?.mul(&self.scale)
    }
}

/// Every kind of member the Module API knows.
#[derive(Module)]
pub struct Zoo {
    pub embed: Linear,
    pub blocks: Vec<Block>,
    pub heads: ModuleDict,
    pub alphas: ParameterList,
    pub extra: Option<Param>,
    pub steps: Tensor,
    pub out: Sequential,
}

impl Default for Zoo {
    fn default() -> Zoo {
        let shared = Shared::new(PReLU::new(3, 0.25));
        let mut heads = ModuleDict::new();
        heads
            .insert(
                "policy",
                Sequential::new().append(Linear::new(4, 3, true)).append(shared.clone()),
            )
            .unwrap();
        heads
            .insert(
                "value",
                Sequential::new()
                    .append(Linear::new(4, 3, true))
                    .append(shared)
                    .append(Threshold::new(0.1, 20.0, false)),
            )
            .unwrap();
        Zoo {
            embed: Linear::new(2, 4, false),
            blocks: vec![Block::default(), Block::default()],
            heads,
            alphas: ParameterList::from(vec![Tensor::randn([3], DType::F32), Tensor::randn([2, 2], DType::F32)]),
            extra: None,
            steps: Tensor::scalar(0i64),
            out: Sequential::new()
                .append(Sigmoid::new())
                .append(Tanh::new())
                .append(ReLU::new(true)),
        }
    }
}

impl Forward for Zoo {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> nn::Result<Tensor> {
        let mut h = self.embed.forward(x)?;
        for block in &self.blocks {
            h = block.forward(h)?;
        }
        let policy = self
            .heads
            .get::<Sequential>("policy")
            .expect("policy head")
            .forward(h.clone())?;
        let value = self.heads.get::<Sequential>("value").expect("value head").forward(h)?;
        self.out.forward(policy.add(&value)?.add(&self.alphas[0].data())?)
    }
}
