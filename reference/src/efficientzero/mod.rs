//! LightZero's EfficientZero `DynamicsNetwork` (LightZero 0.2.0, `lzero/model/efficientzero_model.py`) with
//! DI-engine's `ResBlock` and `MLP` (DI-engine 0.5.3), written as derived structs: same keys, same `repr`,
//! same numbers as PyTorch.

mod check;
mod config;
mod dynamics;
mod mlp;
mod res_block;

pub use check::{check_export, check_export_with, folder_weights, load_weights, projected_sum};
pub use config::{ActivationKind, DynamicsConfig, NormType};
pub use dynamics::DynamicsNetwork;
pub use mlp::{MlpOptions, mlp};
pub use res_block::ResBlock;
