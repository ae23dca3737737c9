//! DI-engine's basic `ResBlock` (`ding/torch_utils/network/res_block.py`).

use nn::functional::{Conv2dOptions, Padding2d};
use nn::layers::{BatchNorm2d, Conv2d};
use nn::{Call, Forward, Module, Result, Sequential, Shared, Tensor, TensorModule};

/// `ResBlock(in_channels, activation, norm_type='BN', res_type='basic', bias=False)`:
/// `act(conv2(conv1(x)) + x)`, `conv1` = 3x3 conv → BN → act, `conv2` = 3x3 conv → BN.
#[derive(Module)]
pub struct ResBlock {
    /// The activation, shared with the network.
    pub act: Shared<Box<dyn TensorModule>>,
    /// `Conv2d → BatchNorm2d → act`.
    pub conv1: Sequential,
    /// `Conv2d → BatchNorm2d`.
    pub conv2: Sequential,
}

impl ResBlock {
    /// A basic block of `channels` channels, without convolution biases.
    pub fn new(channels: usize, act: Shared<Box<dyn TensorModule>>) -> Result<ResBlock> {
        let conv = || {
            Conv2d::new(
                channels,
                channels,
                [3, 3],
                Conv2dOptions {
                    padding: Padding2d::Explicit(1, 1),
                    ..Default::default()
                },
                false,
            )
        };
        let conv1 = Sequential::new()
            .append(conv()?)
            .append(BatchNorm2d::new(channels))
            .append(act.clone());
        let conv2 = Sequential::new().append(conv()?).append(BatchNorm2d::new(channels));
        Ok(ResBlock { act, conv1, conv2 })
    }
}

impl Forward for ResBlock {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        let out = self.conv2.call(self.conv1.call(x.clone())?)?;
        self.act.call(out.add(&x)?)
    }
}
