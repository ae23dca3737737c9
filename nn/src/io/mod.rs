//! Named tensors and the files that hold them: [`StateDict`], and the safetensors format ([`safetensors`]).
//!
//! Each format reads into and writes from a [`StateDict`]; the module layer's `state_dict()`,
//! `save_safetensors` and `load_safetensors` build on these.

pub mod safetensors;
mod state_dict;

pub use state_dict::StateDict;

pub use safetensors::{load_safetensors, save_safetensors, state_dict_from_bytes};
