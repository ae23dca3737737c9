//! Every Rust code block of README.md and docs/ is a doctest of this crate: `cargo test --workspace --doc`
//! compiles and runs them, so the docs show only code that builds against today's API.

#[doc = include_str!("../../README.md")]
struct Readme;

#[doc = include_str!("../../docs/derive.md")]
struct Derive;

#[doc = include_str!("../../docs/modules.md")]
struct Modules;

#[doc = include_str!("../../docs/hooks.md")]
struct Hooks;

#[doc = include_str!("../../docs/checkpoints.md")]
struct Checkpoints;

#[doc = include_str!("../../docs/porting.md")]
struct Porting;

#[doc = include_str!("../../docs/tensor.md")]
struct TensorPage;

#[doc = include_str!("../../docs/autograd.md")]
struct Autograd;

#[doc = include_str!("../../docs/training.md")]
struct Training;

#[doc = include_str!("../../docs/devices.md")]
struct Devices;

#[doc = include_str!("../../docs/testing.md")]
struct Testing;
