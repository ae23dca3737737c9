//! [`DynamicsNetwork`]: EfficientZero's dynamics network.

use super::config::{ActivationKind, DynamicsConfig, NormType};
use super::mlp::{MlpOptions, mlp};
use super::res_block::ResBlock;
use nn::functional::{Conv2dOptions, Padding2d};
use nn::layers::{BatchNorm1d, BatchNorm2d, Conv2d, GELU, LSTM, LayerNorm, LstmOptions, PReLU, ReLU};
use nn::{Call, Forward, Module, Result, Sequential, Shared, Tensor, TensorModule};

/// LightZero's `DynamicsNetwork`: predicts the next latent state, the LSTM's next state and the value prefix
/// from a latent state with its action encoding.
///
/// Declared in the Python constructor's registration order, so keys and `repr` match PyTorch's. The activation
/// is one module shared by the network, every residual block and the reward MLP, as in Python: a `PReLU` slope
/// is one parameter under several keys.
///
/// ```
/// use nn::prelude::*;
/// use reference::efficientzero::{DynamicsConfig, DynamicsNetwork};
/// let cfg = DynamicsConfig::from_json(r#"{"observation_shape": [16, 3, 3], "action_encoding_dim": 2,
///     "num_res_blocks": 1, "num_channels": 16, "reward_head_channels": 4, "reward_head_hidden_channels": [16],
///     "output_support_size": 21, "flatten_input_size_for_reward_head": 36, "lstm_hidden_size": 32,
///     "activation": "prelu"}"#).unwrap();
/// let net = DynamicsNetwork::new(cfg).unwrap();
/// assert_eq!(net.named_parameters()[0].0, "activation.weight");
/// let state = (Tensor::zeros([1, 2, 32], DType::F32), Tensor::zeros([1, 2, 32], DType::F32));
/// let (latent, (h, _c), value_prefix) = net.call((Tensor::zeros([2, 16, 3, 3], DType::F32), state)).unwrap();
/// assert_eq!((latent.shape(), h.shape(), value_prefix.shape()), (&[2, 14, 3, 3].into(), &[1, 2, 32].into(), &[2, 21].into()));
/// ```
#[derive(Module)]
pub struct DynamicsNetwork {
    /// The shared activation.
    pub activation: Shared<Box<dyn TensorModule>>,
    /// 3x3 convolution from the input to the latent channels.
    pub conv: Conv2d,
    /// `BatchNorm2d`, or `LayerNorm` over `(C, H, W)`.
    pub norm_common: Box<dyn TensorModule>,
    /// The residual blocks.
    pub resblocks: Vec<ResBlock>,
    /// 1x1 convolution to the reward channels.
    pub conv1x1_reward: Conv2d,
    /// `BatchNorm2d`, or `LayerNorm` over `(C, H, W)`.
    pub norm_reward: Box<dyn TensorModule>,
    /// The value-prefix LSTM.
    pub lstm: LSTM,
    /// Batch norm of the LSTM's output.
    pub norm_value_prefix: BatchNorm1d,
    /// The reward MLP.
    pub fc_reward_head: Sequential,
    /// The constructor's arguments.
    #[module(skip)]
    pub config: DynamicsConfig,
    training: bool,
    hooks: nn::Hooks,
}

impl DynamicsNetwork {
    /// The network of `config`, initialised as PyTorch initialises it (from the global generator).
    pub fn new(config: DynamicsConfig) -> Result<DynamicsNetwork> {
        config.validate()?;
        let act: Box<dyn TensorModule> = match config.activation {
            ActivationKind::Relu => Box::new(ReLU::new(true)),
            ActivationKind::GeluTanh => Box::new(GELU::new("tanh")?),
            ActivationKind::Prelu => Box::new(PReLU::new(1, 0.25)),
        };
        let activation = Shared::new(act);
        let c = config.latent_channels();
        let (h, w) = config.latent_hw();
        let norm = |channels: usize| -> Box<dyn TensorModule> {
            match config.norm_type {
                NormType::BN => Box::new(BatchNorm2d::new(channels)),
                NormType::LN => Box::new(LayerNorm::new(vec![channels, h, w])),
            }
        };
        let padded = Conv2dOptions {
            padding: Padding2d::Explicit(1, 1),
            ..Default::default()
        };
        let conv = Conv2d::new(config.num_channels, c, [3, 3], padded, false)?;
        let norm_common = norm(c);
        let resblocks = (0..config.num_res_blocks)
            .map(|_| ResBlock::new(c, activation.clone()))
            .collect::<Result<_>>()?;
        let conv1x1_reward = Conv2d::new(c, config.reward_head_channels, [1, 1], Conv2dOptions::default(), true)?;
        let norm_reward = norm(config.reward_head_channels);
        let lstm = LSTM::with_options(
            config.flatten_input_size_for_reward_head,
            config.lstm_hidden_size,
            LstmOptions::default(),
        )?;
        let norm_value_prefix = BatchNorm1d::new(config.lstm_hidden_size);
        let fc_reward_head = mlp(
            config.lstm_hidden_size,
            config.reward_head_hidden_channels[0],
            config.output_support_size,
            config.reward_head_hidden_channels.len() + 1,
            MlpOptions {
                activation: Some(activation.clone()),
                norm_type: Some(config.norm_type),
                output_activation: false,
                output_norm: false,
                last_linear_layer_init_zero: config.last_linear_layer_init_zero,
            },
        )?;
        Ok(DynamicsNetwork {
            activation,
            conv,
            norm_common,
            resblocks,
            conv1x1_reward,
            norm_reward,
            lstm,
            norm_value_prefix,
            fc_reward_head,
            config,
            training: true,
            hooks: nn::Hooks::new(),
        })
    }
}

impl DynamicsNetwork {
    /// The groups of layers that [`nn::utils::fuse_modules`] folds for eval, as a PyTorch user lists them for
    /// `torch.ao.quantization.fuse_modules`: with batch norm, every convolution with its batch norm (the first
    /// convolution of each residual block with its ReLU too, when the activation is ReLU) and every hidden
    /// linear layer of the reward head with its `BatchNorm1d`; none with layer norm.
    ///
    /// ```
    /// use nn::prelude::*;
    /// use reference::efficientzero::{DynamicsConfig, DynamicsNetwork};
    /// let cfg = DynamicsConfig::from_json(r#"{"observation_shape": [16, 3, 3], "action_encoding_dim": 2,
    ///     "num_res_blocks": 1, "num_channels": 16, "reward_head_channels": 4, "reward_head_hidden_channels": [16],
    ///     "output_support_size": 21, "flatten_input_size_for_reward_head": 36, "lstm_hidden_size": 32,
    ///     "activation": "relu"}"#).unwrap();
    /// let mut net = DynamicsNetwork::new(cfg).unwrap();
    /// net.eval();
    /// let groups = net.fusion_groups();
    /// assert_eq!(groups[2], ["resblocks.0.conv1.0", "resblocks.0.conv1.1", "resblocks.0.conv1.2"]);
    /// nn::utils::fuse_modules(&mut net, &groups).unwrap();
    /// assert_eq!(net.norm_common.type_name(), "Identity");
    /// assert_eq!(net.get_submodule("resblocks.0.conv1.0").unwrap().type_name(), "ConvReLU2d");
    /// ```
    pub fn fusion_groups(&self) -> Vec<Vec<String>> {
        if self.config.norm_type != NormType::BN {
            return Vec::new();
        }
        let owned = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let mut groups = vec![
            owned(&["conv", "norm_common"]),
            owned(&["conv1x1_reward", "norm_reward"]),
        ];
        for i in 0..self.resblocks.len() {
            let conv1 = format!("resblocks.{i}.conv1");
            let mut first = vec![format!("{conv1}.0"), format!("{conv1}.1")];
            if self.config.activation == ActivationKind::Relu {
                first.push(format!("{conv1}.2"));
            }
            groups.push(first);
            groups.push(vec![format!("resblocks.{i}.conv2.0"), format!("resblocks.{i}.conv2.1")]);
        }
        // `Linear → BatchNorm1d → activation` per hidden layer, then the last `Linear`.
        for k in 0..self.config.reward_head_hidden_channels.len() {
            groups.push(vec![
                format!("fc_reward_head.{}", 3 * k),
                format!("fc_reward_head.{}", 3 * k + 1),
            ]);
        }
        groups
    }
}

impl Forward for DynamicsNetwork {
    /// `(state_action_encoding (B, C, H, W), (h0, c0) each (1, B, lstm_hidden_size))`.
    type Input = (Tensor, (Tensor, Tensor));
    /// `(next_latent_state, (h1, c1), value_prefix)`.
    type Output = (Tensor, (Tensor, Tensor), Tensor);

    fn forward(&self, (state_action_encoding, reward_hidden_state): Self::Input) -> Result<Self::Output> {
        let c = self.config.latent_channels();
        let state_encoding = state_action_encoding.narrow(1, 0, c)?;
        let x = self.norm_common.call(self.conv.call(state_action_encoding)?)?;
        x.add_(&state_encoding)?;
        let mut x = self.activation.call(x)?;
        for block in &self.resblocks {
            x = block.call(x)?;
        }
        let next_latent_state = x;
        let x = self
            .norm_reward
            .call(self.conv1x1_reward.call(next_latent_state.clone())?)?;
        let x = self.activation.call(x)?;
        let x = x
            .reshape_infer(&[-1, self.config.flatten_input_size_for_reward_head as isize])?
            .unsqueeze(0)?;
        let (value_prefix, next_reward_hidden_state) = self.lstm.call((x, Some(reward_hidden_state)))?;
        let value_prefix = self.norm_value_prefix.call(value_prefix.squeeze(0)?)?;
        let value_prefix = self.activation.call(value_prefix)?;
        let value_prefix = self.fc_reward_head.call(value_prefix)?;
        Ok((next_latent_state, next_reward_hidden_state, value_prefix))
    }
}
