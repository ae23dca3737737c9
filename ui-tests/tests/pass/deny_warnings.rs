//! The generated code raises no warning (rustc's lints; clippy's are checked by `tests/lints.rs`).
#![deny(warnings)]
#![forbid(unsafe_code)]

use nn::prelude::*;

/// A documented module.
#[derive(Module)]
pub struct Documented<M: Module> {
    /// Inner.
    pub inner: M,
    /// A parameter.
    pub weight: Option<Param>,
    /// A buffer.
    #[buffer(persistent = false)]
    pub cache: Option<Tensor>,
    hooks: Hooks,
    training: bool,
}

#[derive(Module)]
struct Empty {}

pub fn main() {
    let d = Documented {
        inner: Empty {},
        weight: None,
        cache: None,
        hooks: Hooks::new(),
        training: true,
    };
    assert!(d.state_dict().is_empty());
}
