//! DI-engine's `MLP` builder (`ding/torch_utils/network/nn_module.py`).

use nn::layers::{BatchNorm1d, Identity, LayerNorm, Linear};
use nn::{Result, Sequential, Shared, TensorModule, init};

use super::config::NormType;

/// The optional arguments of DI-engine's `MLP(...)`.
pub struct MlpOptions {
    /// The activation after each hidden layer (one shared instance), if any.
    pub activation: Option<Shared<Box<dyn TensorModule>>>,
    /// The normalisation after each hidden layer, if any.
    pub norm_type: Option<NormType>,
    /// Whether the last layer is followed by the activation too.
    pub output_activation: bool,
    /// Whether the last layer is followed by the normalisation too.
    pub output_norm: bool,
    /// Whether the last linear layer starts at zero.
    pub last_linear_layer_init_zero: bool,
}

/// `MLP(in_channels, hidden_channels, out_channels, layer_num, ...)`: `layer_num - 1` blocks of
/// `Linear → norm → activation` of width `hidden_channels`, then the last `Linear` (and, as asked, its norm and
/// activation), packed in a `Sequential`; `layer_num == 0` gives `Sequential(Identity())`.
pub fn mlp(
    in_channels: usize,
    hidden_channels: usize,
    out_channels: usize,
    layer_num: usize,
    opts: MlpOptions,
) -> Result<Sequential> {
    if layer_num == 0 {
        return Ok(Sequential::new().append(Identity::new()));
    }
    let mut channels = vec![in_channels];
    channels.extend(std::iter::repeat_n(hidden_channels, layer_num - 1));
    channels.push(out_channels);
    let mut seq = Sequential::new();
    let norm = |seq: &mut Sequential, width: usize| match opts.norm_type {
        Some(NormType::BN) => seq.push(BatchNorm1d::new(width)),
        Some(NormType::LN) => seq.push(LayerNorm::new(vec![width])),
        None => {}
    };
    for pair in channels[..channels.len() - 1].windows(2) {
        seq.push(Linear::new(pair[0], pair[1], true));
        norm(&mut seq, pair[1]);
        if let Some(act) = &opts.activation {
            seq.push(act.clone());
        }
    }
    let last = Linear::new(channels[channels.len() - 2], out_channels, true);
    if opts.last_linear_layer_init_zero {
        init::zeros_(&last.weight.data())?;
        if let Some(b) = &last.bias {
            init::zeros_(&b.data())?;
        }
    }
    seq.push(last);
    if opts.output_norm {
        norm(&mut seq, out_channels);
    }
    if opts.output_activation
        && let Some(act) = &opts.activation
    {
        seq.push(act.clone());
    }
    Ok(seq)
}
