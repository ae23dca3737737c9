//! PyTorch's `nn.Module` API for Rust, generated at compile time.
//!
//! `#[derive(Module)]` on a plain struct gives it what `torch.nn.Module` does at run time with dictionaries:
//! traversal with dotted paths, `state_dict` / `load_state_dict` with PyTorch's keys, casts and device moves,
//! train/eval modes, and a `Display` that prints PyTorch's `repr`.
//!
//! ```
//! use nn::prelude::*;
//!
//! #[derive(Module)]
//! struct Block {
//!     fc: Linear,
//!     act: GELU,
//! }
//!
//! #[derive(Module)]
//! struct Net {
//!     embed: Linear,
//!     blocks: Vec<Block>,
//! }
//!
//! let net = Net {
//!     embed: Linear::new(2, 4, false),
//!     blocks: (0..2).map(|_| Block { fc: Linear::new(4, 4, true), act: GELU::new("tanh").unwrap() }).collect(),
//! };
//! assert_eq!(net.state_dict().keys().collect::<Vec<_>>(), [
//!     "embed.weight", "blocks.0.fc.weight", "blocks.0.fc.bias", "blocks.1.fc.weight", "blocks.1.fc.bias",
//! ]);
//! println!("{net}");
//! ```

extern crate self as nn;

/// `impl Default` for each `Type => expression` (the type's canonical constructor), as clippy asks of a type with
/// an argument-less `new`.
macro_rules! default_is {
    ($($ty:ty => $value:expr),+ $(,)?) => {
        $(impl Default for $ty {
            fn default() -> Self {
                $value
            }
        })+
    };
}

pub mod autograd;
pub mod containers;
pub mod cpu;
pub mod device;
pub mod dtype;
pub mod error;
pub mod forward;
pub mod functional;
pub mod hooks;
pub mod init;
pub mod io;
pub mod layers;
pub mod module;
mod ops;
pub mod optim;
pub mod param;
pub mod random;
pub mod shape;
pub mod shared;
pub mod tensor;
pub mod testing;
pub mod threads;
pub mod utils;

pub use containers::{ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential};
pub use device::Device;
pub use dtype::{DType, Element};
pub use error::{Error, Result};
pub use forward::Forward;
pub use hooks::{Call, Grads, HasHooks, HookHandle, HookOptions, HookResult, Hooks, RegisterHooks, TensorArgs};
pub use module::{Module, ModuleExt, StateDict, TensorModule};
pub use ops::arith::Rounding;
pub use ops::indexing::{Index, IntoIndices, Stepped};
pub use param::Param;
pub use random::{fork_rng, initial_seed, manual_seed};
pub use shape::Shape;
pub use shared::Shared;
pub use tensor::random::{get_rng_state, set_rng_state};
pub use tensor::{GradHookHandle, GradMode, Tensor, enable_grad, is_grad_enabled, no_grad};
pub use threads::{get_num_threads, set_num_threads};

/// The derive: `#[derive(Module)]`. See the crate's README for its attributes.
pub use nn_derive::Module;

/// Everything a model file needs: `use nn::prelude::*;`.
pub mod prelude {
    pub use crate::containers::{ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential};
    pub use crate::hooks::{Call, HookHandle, HookOptions, Hooks, RegisterHooks};
    pub use crate::layers::*;
    pub use crate::module::{Module, ModuleExt, StaticKeys, TensorModule};
    pub use crate::{DType, Device, Forward, Index, Param, Shared, StateDict, Stepped, Tensor, tensor};
    pub use nn_derive::Module;
}

#[doc(hidden)]
pub mod __private {
    //! Items the derive's generated code names; not part of the API.
    pub use crate::hooks::{HasHooks, Hooks};
    pub use crate::module::{
        BufferField, Child, ChildMut, MemberKind, Members, Module, ModuleField, ParamField, Replacement, StaticKeys,
        Visitor, VisitorMut,
    };
    pub use crate::module::{child_reprs_of, default_repr};
    pub use ::std;
}
