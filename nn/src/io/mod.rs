//! Named tensors and the files that hold them: [`StateDict`], the safetensors format ([`safetensors`]) and
//! PyTorch's checkpoints ([`pytorch`], read only).
//!
//! Each format reads into and writes from a [`StateDict`]; the module layer's `state_dict()`,
//! `save_safetensors` and `load_safetensors` build on these.

mod inspect;
pub mod pytorch;
pub mod safetensors;
mod state_dict;

pub use state_dict::StateDict;

pub use inspect::{TensorInfo, inspect, is_safetensors};
pub use pytorch::{PtOptions, load_pt, load_pt_mmap};
pub use safetensors::{
    load_safetensors, load_safetensors_mmap, safetensors_metadata, save_safetensors, save_safetensors_with_metadata,
    state_dict_from_bytes,
};
