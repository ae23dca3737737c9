//! A small CNN trained on scikit-learn's 8×8 digits (`data/digits.safetensors`, exported by
//! `tests/fixtures/generate/digits.py`): the model, the data, one epoch of training and the evaluation, used
//! by the `train` example (which adds the progress bar, the checkpoints and the plot) and by its test.

use std::path::Path;

use nn::functional::{ClassLossOptions, Conv2dOptions, Padding2d, cross_entropy};
use nn::optim::Optimizer;
use nn::prelude::*;
use nn::{Error, Result};

/// `Conv2d(1, 16, 3, padding=1) → ReLU → Conv2d(16, 32, 3, stride=2, padding=1) → ReLU → Flatten →
/// Linear(512, 10)`: 8×8 images to 10 logits.
#[derive(Module)]
pub struct DigitsNet {
    /// 1 → 16 channels, 8×8.
    pub conv1: Conv2d,
    /// Its activation.
    pub act1: ReLU,
    /// 16 → 32 channels, 8×8 → 4×4.
    pub conv2: Conv2d,
    /// Its activation.
    pub act2: ReLU,
    /// (N, 32, 4, 4) → (N, 512).
    pub flatten: Flatten,
    /// The classifier.
    pub fc: Linear,
}

impl DigitsNet {
    /// The network with PyTorch's default initialisation (from the global generator).
    pub fn new() -> Result<DigitsNet> {
        let padded = Conv2dOptions {
            padding: Padding2d::Explicit(1, 1),
            ..Default::default()
        };
        Ok(DigitsNet {
            conv1: Conv2d::new(1, 16, [3, 3], padded, true)?,
            act1: ReLU::new(false),
            conv2: Conv2d::new(
                16,
                32,
                [3, 3],
                Conv2dOptions {
                    stride: [2, 2],
                    ..padded
                },
                true,
            )?,
            act2: ReLU::new(false),
            flatten: Flatten::new(1, -1),
            fc: Linear::new(512, 10, true),
        })
    }
}

impl Forward for DigitsNet {
    type Input = Tensor;
    type Output = Tensor;

    fn forward(&self, x: Tensor) -> Result<Tensor> {
        let x = self.act1.forward(self.conv1.forward(x)?)?;
        let x = self.act2.forward(self.conv2.forward(x)?)?;
        self.fc.forward(self.flatten.forward(x)?)
    }
}

/// The images `(N, 1, 8, 8)` in [0, 1] and their labels `(N)` of one split.
#[derive(Clone, Debug)]
pub struct Split {
    /// The images.
    pub images: Tensor,
    /// The digits, int64.
    pub labels: Tensor,
}

impl Split {
    /// How many images.
    pub fn len(&self) -> usize {
        self.labels.numel()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The train and test splits of `path`.
pub fn load(path: &Path) -> Result<(Split, Split)> {
    let sd = nn::io::load_safetensors(path)?;
    let get = |k: &str| {
        sd.get(k)
            .cloned()
            .ok_or_else(|| Error::invalid("digits", format!("{} has no tensor {k}", path.display())))
    };
    Ok((
        Split {
            images: get("train.images")?,
            labels: get("train.labels")?,
        },
        Split {
            images: get("test.images")?,
            labels: get("test.labels")?,
        },
    ))
}

/// What one batch gave: its loss and how many it classified right.
#[derive(Clone, Copy, Debug)]
pub struct BatchResult {
    /// The mean cross-entropy of the batch.
    pub loss: f64,
    /// Correct predictions in the batch.
    pub correct: usize,
    /// Images in the batch.
    pub size: usize,
}

/// How many rows of `logits` have their largest value at `labels`' index.
fn correct(logits: &Tensor, labels: &Tensor) -> Result<usize> {
    let (_, predicted) = logits.cpu()?.max_dim(1, false)?;
    let (p, l) = (predicted.to_vec_f64()?, labels.to_vec_f64()?);
    Ok(p.iter().zip(&l).filter(|(a, b)| a == b).count())
}

/// One epoch over `train` in batches of `batch` (shuffled with the global generator), `on_batch` called after
/// each step.
pub fn train_epoch(
    net: &mut DigitsNet,
    opt: &mut dyn Optimizer,
    train: &Split,
    batch: usize,
    device: Device,
    mut on_batch: impl FnMut(BatchResult),
) -> Result<()> {
    net.train(true);
    let n = train.len();
    let order = nn::random::with_global(|g| {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = g.uniform(0.0, (i + 1) as f64) as usize;
            order.swap(i, j.min(i));
        }
        order
    });
    for chunk in order.chunks(batch) {
        let index = Tensor::from_vec(chunk.iter().map(|i| *i as i64).collect(), [chunk.len()])?;
        let images = train.images.index_select(0, &index)?.to_device(device)?;
        let labels = train.labels.index_select(0, &index)?.to_device(device)?;
        opt.zero_grad(true)?;
        let logits = net.forward(images)?;
        let loss = cross_entropy(&logits, &labels, &ClassLossOptions::default())?;
        loss.backward()?;
        opt.step()?;
        on_batch(BatchResult {
            loss: loss.item()?,
            correct: correct(&logits.detach(), &labels)?,
            size: chunk.len(),
        });
    }
    Ok(())
}

/// The mean loss and the accuracy of `net` on `split`, in evaluation mode without recording.
pub fn evaluate(net: &mut DigitsNet, split: &Split, device: Device) -> Result<(f64, f64)> {
    net.eval();
    let _no_grad = nn::no_grad();
    let logits = net.forward(split.images.to_device(device)?)?;
    let labels = split.labels.to_device(device)?;
    let loss = cross_entropy(&logits, &labels, &ClassLossOptions::default())?.item()?;
    Ok((loss, correct(&logits, &labels)? as f64 / split.len() as f64))
}
