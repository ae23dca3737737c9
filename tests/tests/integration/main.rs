//! nn's integration tests, one binary organised by subject. Run one subject with
//! `cargo test --workspace --release --test integration -- <path>` (e.g. `-- autograd::`). A test that
//! uses a device has `gpu` or `device` in its path (`gpu_or_skip` asserts it), so `-- gpu device` runs only
//! those; a test that changes or measures what the whole process shares runs in a process of its own
//! (`integration_tests::in_own_process`).

mod autograd;
mod cpu_capability;
mod device;
mod docs;
mod hooks;
mod io;
mod layering;
mod layers;
mod losses;
mod models;
mod module;
mod ops;
mod optim;
mod random;
mod tensor;
mod testing;
mod utils;
