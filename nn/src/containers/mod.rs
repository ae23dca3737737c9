//! PyTorch's containers, with their dynamic API: [`Sequential`], [`ModuleList`], [`ModuleDict`],
//! [`ParameterList`], [`ParameterDict`].
//!
//! Derived structs are static; these hold members added at run time (`add_module`, `register_parameter`, …).

mod module_dict;
mod module_list;
mod parameter_dict;
mod parameter_list;
mod sequential;

pub use module_dict::ModuleDict;
pub use module_list::ModuleList;
pub use parameter_dict::ParameterDict;
pub use parameter_list::ParameterList;
pub use sequential::Sequential;
