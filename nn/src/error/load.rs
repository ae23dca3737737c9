//! [`LoadError`]: what a refused `load_state_dict` reports, every problem at once. Plain data: the module
//! layer fills it in.

use std::fmt;

use crate::Shape;

/// A tensor whose shape differs between the state dict and the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeMismatch {
    /// The key.
    pub key: String,
    /// The shape in the state dict.
    pub checkpoint: Shape,
    /// The shape in the module.
    pub model: Shape,
}

/// A refused `load_state_dict`, listing every problem at once. The module was left as it was.
///
/// Its message follows PyTorch's:
/// `Error(s) in loading state_dict for Zoo:`, then one line per problem, each after a tab:
/// `Missing key(s) in state_dict: "embed.weight". ` or `size mismatch for fc.weight: copying a param with
/// shape torch.Size([3, 4]) from checkpoint, the shape in current model is torch.Size([4, 4]).`
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct LoadError {
    /// The type name of the module loaded into.
    pub module: String,
    /// Missing keys (an error only in strict mode).
    pub missing_keys: Vec<String>,
    /// Unexpected keys (an error only in strict mode).
    pub unexpected_keys: Vec<String>,
    /// Shape mismatches (always an error).
    pub mismatched: Vec<ShapeMismatch>,
    /// Extra states a module refused, with its reason.
    pub extra_state: Vec<(String, String)>,
    /// Whether the load was strict.
    pub strict: bool,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |keys: &[String]| keys.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ");
        let mut lines = Vec::new();
        if self.strict && !self.missing_keys.is_empty() {
            lines.push(format!(
                "Missing key(s) in state_dict: {}. ",
                quoted(&self.missing_keys)
            ));
        }
        if self.strict && !self.unexpected_keys.is_empty() {
            lines.push(format!(
                "Unexpected key(s) in state_dict: {}. ",
                quoted(&self.unexpected_keys)
            ));
        }
        for m in &self.mismatched {
            lines.push(format!(
                "size mismatch for {}: copying a param with shape torch.Size({}) from checkpoint, the shape in current model is torch.Size({}).",
                m.key, m.checkpoint, m.model
            ));
        }
        for (key, why) in &self.extra_state {
            lines.push(format!("extra state {key}: {why}"));
        }
        write!(
            f,
            "Error(s) in loading state_dict for {}:\n\t{}",
            self.module,
            lines.join("\n\t")
        )
    }
}
