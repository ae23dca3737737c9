//! Parsing and validation, before any code is generated.

pub mod ast;
pub mod attr;
pub mod check;
pub mod ctxt;
pub mod types;

pub use ctxt::Ctxt;
