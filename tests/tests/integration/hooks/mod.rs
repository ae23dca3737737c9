//! Module and tensor hooks with PyTorch's ordering and replacement semantics.

mod backward;
mod forward;
