//! [`DynamicsConfig`]: the Python constructor's arguments, read from a `config.json`.

use std::path::Path;

use serde_json::Value;

use nn::{Error, Result};

/// The activation shared by every block (`activation` in the config).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActivationKind {
    /// `nn.ReLU(inplace=True)` (`"relu"`).
    Relu,
    /// `nn.GELU(approximate='tanh')` (`"gelu_tanh"`).
    GeluTanh,
    /// `nn.PReLU()`: one learned slope, shared (`"prelu"`).
    Prelu,
}

/// The normalisation of the common and reward paths (`norm_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormType {
    /// Batch normalisation (the default).
    BN,
    /// Layer normalisation over `(C, H, W)`; the residual blocks and `norm_value_prefix` stay batch norms.
    LN,
}

/// `DynamicsNetwork.__init__`'s arguments.
///
/// ```
/// use reference::efficientzero::{DynamicsConfig, NormType};
/// let cfg = DynamicsConfig::from_json(r#"{"observation_shape": [16, 3, 3], "action_encoding_dim": 2,
///     "num_res_blocks": 1, "num_channels": 16, "reward_head_channels": 4, "reward_head_hidden_channels": [16],
///     "output_support_size": 21, "flatten_input_size_for_reward_head": 36, "lstm_hidden_size": 32,
///     "activation": "relu"}"#).unwrap();
/// assert_eq!(cfg.norm_type, NormType::BN);
/// assert!(cfg.last_linear_layer_init_zero);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DynamicsConfig {
    /// `(C, H, W)` of an observation; only `H` and `W` matter here.
    pub observation_shape: Vec<usize>,
    /// Channels of the action encoding at the end of the input.
    pub action_encoding_dim: usize,
    /// Residual blocks.
    pub num_res_blocks: usize,
    /// Channels of the input (latent state and action encoding).
    pub num_channels: usize,
    /// Channels of the reward path's 1x1 convolution.
    pub reward_head_channels: usize,
    /// Hidden widths of the reward MLP: its length sets the depth, its first entry every hidden width.
    pub reward_head_hidden_channels: Vec<usize>,
    /// Outputs of the value-prefix head.
    pub output_support_size: usize,
    /// Input size of the LSTM (`reward_head_channels * H * W`).
    pub flatten_input_size_for_reward_head: usize,
    /// Whether observations were downsampled by 16 (changes the layer-norm shapes).
    pub downsample: bool,
    /// Hidden size of the LSTM.
    pub lstm_hidden_size: usize,
    /// Whether the MLP's last linear layer starts at zero.
    pub last_linear_layer_init_zero: bool,
    /// The shared activation.
    pub activation: ActivationKind,
    /// BN or LN.
    pub norm_type: NormType,
}

impl DynamicsConfig {
    /// Reads `config.json` (keys not listed in [`DynamicsConfig`] are ignored).
    pub fn from_file(path: &Path) -> Result<DynamicsConfig> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        DynamicsConfig::from_json(&text)
    }

    /// Parses the JSON text of a config.
    pub fn from_json(text: &str) -> Result<DynamicsConfig> {
        let op = "DynamicsConfig";
        let v: Value = serde_json::from_str(text).map_err(|e| Error::invalid(op, format!("invalid JSON: {e}")))?;
        let field = |key: &str| {
            v.get(key)
                .ok_or_else(|| Error::invalid(op, format!("missing key \"{key}\"")))
        };
        let usize_of = |key: &str, x: &Value| {
            x.as_u64()
                .map(|n| n as usize)
                .ok_or_else(|| Error::invalid(op, format!("\"{key}\" must be a non-negative integer, got {x}")))
        };
        let int = |key: &str| field(key).and_then(|x| usize_of(key, x));
        let list = |key: &str| -> Result<Vec<usize>> {
            let x = field(key)?;
            let items = x
                .as_array()
                .ok_or_else(|| Error::invalid(op, format!("\"{key}\" must be a list of integers, got {x}")))?;
            items.iter().map(|i| usize_of(key, i)).collect()
        };
        let flag = |key: &str, default: bool| -> Result<bool> {
            match v.get(key) {
                None | Some(Value::Null) => Ok(default),
                Some(Value::Bool(b)) => Ok(*b),
                Some(x) => Err(Error::invalid(op, format!("\"{key}\" must be true or false, got {x}"))),
            }
        };
        let activation = match field("activation")?.as_str() {
            Some("relu") => ActivationKind::Relu,
            Some("gelu_tanh") => ActivationKind::GeluTanh,
            Some("prelu") => ActivationKind::Prelu,
            _ => {
                return Err(Error::invalid(
                    op,
                    format!(
                        "\"activation\" must be \"relu\", \"gelu_tanh\" or \"prelu\", got {}",
                        v["activation"]
                    ),
                ));
            }
        };
        let norm_type = match v.get("norm_type") {
            None | Some(Value::Null) => NormType::BN,
            Some(x) if x.as_str() == Some("BN") => NormType::BN,
            Some(x) if x.as_str() == Some("LN") => NormType::LN,
            Some(x) => return Err(Error::invalid(op, format!("norm_type must in ['BN', 'LN'], got {x}"))),
        };
        let cfg = DynamicsConfig {
            observation_shape: list("observation_shape")?,
            action_encoding_dim: int("action_encoding_dim")?,
            num_res_blocks: int("num_res_blocks")?,
            num_channels: int("num_channels")?,
            reward_head_channels: int("reward_head_channels")?,
            reward_head_hidden_channels: list("reward_head_hidden_channels")?,
            output_support_size: int("output_support_size")?,
            flatten_input_size_for_reward_head: int("flatten_input_size_for_reward_head")?,
            downsample: flag("downsample", false)?,
            lstm_hidden_size: int("lstm_hidden_size")?,
            last_linear_layer_init_zero: flag("last_linear_layer_init_zero", true)?,
            activation,
            norm_type,
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// The Python constructor's checks, and what would fail later in it.
    pub fn validate(&self) -> Result<()> {
        let op = "DynamicsConfig";
        if self.num_channels <= self.action_encoding_dim {
            return Err(Error::invalid(
                op,
                format!(
                    "num_channels:{} <= action_encoding_dim:{}",
                    self.num_channels, self.action_encoding_dim
                ),
            ));
        }
        if self.observation_shape.len() < 2 {
            return Err(Error::invalid(
                op,
                format!("observation_shape {:?} needs at least (H, W)", self.observation_shape),
            ));
        }
        if self.reward_head_hidden_channels.is_empty() {
            return Err(Error::invalid(
                op,
                "reward_head_hidden_channels must not be empty (its first entry is every hidden width)",
            ));
        }
        for (key, v) in [
            ("reward_head_channels", self.reward_head_channels),
            ("lstm_hidden_size", self.lstm_hidden_size),
            (
                "flatten_input_size_for_reward_head",
                self.flatten_input_size_for_reward_head,
            ),
            ("output_support_size", self.output_support_size),
        ] {
            if v == 0 {
                return Err(Error::invalid(op, format!("{key} must be positive")));
            }
        }
        Ok(())
    }

    /// Channels of the latent state: `num_channels - action_encoding_dim`.
    pub fn latent_channels(&self) -> usize {
        self.num_channels - self.action_encoding_dim
    }

    /// `(H, W)` of the latent state the layer norms expect (divided by 16, rounded up, with `downsample`).
    pub fn latent_hw(&self) -> (usize, usize) {
        let n = self.observation_shape.len();
        let (h, w) = (self.observation_shape[n - 2], self.observation_shape[n - 1]);
        if self.downsample {
            (h.div_ceil(16), w.div_ceil(16))
        } else {
            (h, w)
        }
    }
}
