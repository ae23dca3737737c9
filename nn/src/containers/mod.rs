//! PyTorch's containers, with their dynamic API: [`Sequential`], [`ModuleList`], [`ModuleDict`],
//! [`ParameterList`], [`ParameterDict`].
//!
//! Derived structs are static; these hold members added at run time (`add_module`, `register_parameter`, …).

mod layer;
mod module_dict;
mod module_list;
mod parameter_dict;
mod parameter_list;
mod sequential;

pub use layer::{Layer, TensorModule};
pub use module_dict::ModuleDict;
pub use module_list::ModuleList;
pub use parameter_dict::ParameterDict;
pub use parameter_list::ParameterList;
pub use sequential::Sequential;

use crate::{Device, Param};

/// PyTorch's `Parameter containing: [torch.float32 of size 2x2]` line of `ParameterList` / `ParameterDict`.
fn parameter_line(key: &str, p: &Param, type_label: String) -> String {
    let device = match p.device() {
        Device::Cpu => String::new(),
        d => format!(" ({d})"),
    };
    format!(
        "  ({key}): Parameter containing: [{type_label} of size {}{device}]",
        p.shape().x_joined()
    )
}
