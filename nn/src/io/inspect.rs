//! [`inspect`]: what a weights file holds (keys, dtypes, shapes), read without its tensors' values.

use std::io::Read;
use std::path::Path;

use super::PtOptions;
use crate::{DType, Error, Result};

/// What a checkpoint says of one tensor, without its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// The key (after [`PtOptions::key`] and [`PtOptions::strip_prefix`] for a `.pt`).
    pub key: String,
    /// PyTorch's name of its dtype (`torch.float32`).
    pub dtype: String,
    /// Its dtype in nn, if nn has it.
    pub nn_dtype: Option<DType>,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its bytes once read (saturating, for a hostile file's shape).
    pub bytes: u64,
}

impl TensorInfo {
    /// Its number of elements (saturating, for a hostile file's shape).
    pub fn numel(&self) -> u64 {
        self.shape.iter().fold(1u64, |n, &d| n.saturating_mul(d as u64))
    }
}

/// The tensors of a weights file, safetensors or PyTorch checkpoint (told apart by their first bytes), without
/// reading their values: a `.pt` in the order its `state_dict()` had when saved, a safetensors file in its data
/// order (the format does not keep the dict's order). `options` applies to a `.pt` only.
///
/// ```
/// use nn::prelude::*;
/// let path = std::env::temp_dir().join(format!("nn-inspect-{}.safetensors", std::process::id()));
/// Linear::new(3, 2, true).save_safetensors(&path).unwrap();
/// let infos = nn::io::inspect(&path, &nn::io::PtOptions::new()).unwrap();
/// assert_eq!(infos.iter().map(|i| i.numel()).sum::<u64>(), 8);
/// # std::fs::remove_file(path).ok();
/// ```
pub fn inspect(path: &Path, options: &PtOptions) -> Result<Vec<TensorInfo>> {
    if is_safetensors(path)? {
        super::safetensors::inspect_safetensors(path)
    } else {
        super::pytorch::inspect_pt(path, options)
    }
}

/// Whether a file starts as safetensors does: a little-endian header length that fits the file, then `{`.
pub fn is_safetensors(path: &Path) -> Result<bool> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut length = [0u8; 8];
    let mut brace = [0u8; 1];
    if file.read_exact(&mut length).is_err() || file.read_exact(&mut brace).is_err() {
        return Ok(false);
    }
    Ok(brace[0] == b'{' && u64::from_le_bytes(length) <= len - 8)
}
