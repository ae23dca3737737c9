//! Derived code in a crate that denies every rustc and clippy lint: `cargo clippy --workspace --all-targets
//! -- -D warnings` (CI) compiles this file with clippy, so a lint the generated code triggers fails CI.
#![deny(warnings, clippy::all, clippy::pedantic)]
#![forbid(unsafe_code)]

use nn::prelude::*;

/// Every kind of member.
#[derive(Module)]
pub struct Everything<M: Module, N>
where
    N: Module,
{
    /// A parameter.
    pub weight: Param,
    /// An optional parameter.
    pub bias: Option<Param>,
    /// A buffer.
    pub running: Tensor,
    /// A non-persistent buffer.
    #[buffer(persistent = false)]
    pub cache: Option<Tensor>,
    /// A generic child.
    pub inner: M,
    /// An optional generic child.
    pub other: Option<N>,
    /// A list.
    pub list: Vec<Linear>,
    /// An array.
    pub array: [ReLU; 2],
    /// A shared module.
    pub shared: Shared<Tanh>,
    /// A box.
    pub boxed: Box<dyn Module>,
    /// Configuration.
    pub width: usize,
    /// Skipped.
    #[module(skip)]
    pub config: std::collections::HashMap<String, usize>,
    hooks: Hooks,
    training: bool,
}

/// A tuple struct.
#[derive(Module)]
pub struct Tuple(pub Linear, #[module(rename = "b")] pub Linear);

/// A unit struct.
#[derive(Module)]
pub struct Unit;

#[test]
fn derived_code_is_lint_free() {
    let e = Everything::<Linear, Identity> {
        weight: Param::new(Tensor::zeros([1], DType::F32)),
        bias: None,
        running: Tensor::zeros([1], DType::F32),
        cache: None,
        inner: Linear::new(1, 1, true),
        other: None,
        list: vec![],
        array: [ReLU::new(false), ReLU::new(true)],
        shared: Shared::new(Tanh::new()),
        boxed: Box::new(Unit),
        width: 1,
        config: std::collections::HashMap::new(),
        hooks: Hooks::new(),
        training: true,
    };
    assert_eq!(e.state_dict().len(), 4);
    assert_eq!(
        Tuple(Linear::new(1, 1, false), Linear::new(1, 1, false))
            .state_dict()
            .len(),
        2
    );
    assert_eq!(Unit.to_string(), "Unit()");
    assert_eq!(e.width + e.config.len(), 1);
}
