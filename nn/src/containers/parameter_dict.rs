//! [`ParameterDict`]: parameters keyed by name.

use indexmap::IndexMap;

use super::parameter_line;
use super::sequential::check_name;
use crate::module::{Module, Visitor, VisitorMut};
use crate::{DType, Device, Param};

/// PyTorch's `nn.ParameterDict`: parameters keyed by name, in insertion order.
///
/// ```
/// use nn::prelude::*;
/// let mut d = ParameterDict::new();
/// d.insert("a", Param::new(Tensor::zeros([2, 3], DType::F32))).unwrap();
/// assert_eq!(d.to_string(), "ParameterDict(  (a): Parameter containing: [torch.FloatTensor of size 2x3])");
/// ```
pub struct ParameterDict {
    params: IndexMap<String, Param>,
    training: bool,
    hooks: crate::Hooks,
}

impl ParameterDict {
    /// An empty dict, in training mode.
    pub fn new() -> ParameterDict {
        ParameterDict {
            params: IndexMap::new(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }

    /// Adds (or replaces in place) the parameter under `key`.
    pub fn insert(&mut self, key: &str, param: impl Into<Param>) -> crate::Result<()> {
        check_name("ParameterDict::insert", key)?;
        self.params.insert(key.to_owned(), param.into());
        Ok(())
    }

    /// PyTorch's `register_parameter`: [`insert`](Self::insert).
    pub fn register_parameter(&mut self, key: &str, param: impl Into<Param>) -> crate::Result<()> {
        self.insert(key, param)
    }

    /// The parameter under `key`.
    pub fn get(&self, key: &str) -> Option<&Param> {
        self.params.get(key)
    }

    /// Removes the parameter under `key`, keeping the others' order.
    pub fn remove(&mut self, key: &str) -> Option<Param> {
        self.params.shift_remove(key)
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether the dict is empty.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }
}

/// `torch.typename` of a tensor: `torch.FloatTensor`, `torch.cuda.HalfTensor`, …
fn torch_typename(dtype: DType, device: Device) -> String {
    let base = match dtype {
        DType::F16 => "HalfTensor",
        DType::BF16 => "BFloat16Tensor",
        DType::F32 => "FloatTensor",
        DType::F64 => "DoubleTensor",
        DType::I64 => "LongTensor",
        DType::I32 => "IntTensor",
        DType::U8 => "ByteTensor",
        DType::Bool => "BoolTensor",
    };
    match device {
        Device::Cuda(_) => format!("torch.cuda.{base}"),
        _ => format!("torch.{base}"),
    }
}

impl Module for ParameterDict {
    fn type_name(&self) -> &'static str {
        "ParameterDict"
    }
    fn visit<'a>(&'a self, visitor: &mut dyn Visitor<'a>) {
        for (name, p) in &self.params {
            visitor.param(name, p);
        }
    }
    fn visit_mut<'a>(&'a mut self, visitor: &mut dyn VisitorMut<'a>) {
        for (name, p) in self.params.iter_mut() {
            visitor.param(name, p);
        }
    }
    fn extra_repr(&self) -> String {
        let lines: Vec<String> = self
            .params
            .iter()
            .map(|(k, p)| parameter_line(k, p, torch_typename(p.dtype(), p.device())))
            .collect();
        lines.join("\n")
    }
    fn is_training(&self) -> bool {
        self.training
    }
    fn set_training(&mut self, mode: bool) {
        self.training = mode;
    }
    fn hooks(&self) -> Option<&crate::Hooks> {
        Some(&self.hooks)
    }
    fn hooks_mut(&mut self) -> Option<&mut crate::Hooks> {
        Some(&mut self.hooks)
    }
}

impl crate::HasHooks for ParameterDict {
    fn hook_storage(&self) -> &crate::Hooks {
        &self.hooks
    }
    fn hook_storage_mut(&mut self) -> &mut crate::Hooks {
        &mut self.hooks
    }
}

impl std::fmt::Display for ParameterDict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}

impl Default for ParameterDict {
    fn default() -> Self {
        ParameterDict::new()
    }
}
