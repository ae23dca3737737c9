//! [`PathError`]: what a dotted-path lookup (`get_submodule`, `get_parameter`, …) reports when the path does
//! not lead where it was asked to. Plain data: the module layer fills it in.

use std::fmt;

/// A dotted path that does not lead where it was asked to.
///
/// ```
/// use nn::prelude::*;
/// let seq = Sequential::new().append(Linear::new(2, 2, true));
/// let err = seq.get_submodule("0.fc").unwrap_err();
/// assert_eq!(err.to_string(), "get_submodule(\"0.fc\"): `0` (Linear) has no child module `fc`");
/// assert!(matches!(err, nn::Error::Path(p) if p.component == "fc"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{op}(\"{path}\"): {}", self.describe())]
pub struct PathError {
    /// The operation (`get_submodule`, `get_parameter`, …).
    pub op: &'static str,
    /// The whole path asked for.
    pub path: String,
    /// The path up to the module where the walk stopped (empty for the root).
    pub parent: String,
    /// That module's type name.
    pub parent_type: &'static str,
    /// The component that failed.
    pub component: String,
    /// What went wrong.
    pub kind: PathErrorKind,
}

/// What went wrong at a path component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathErrorKind {
    /// The module has no child module of that name.
    NoChild,
    /// The module has no parameter of that name.
    NoParameter,
    /// The module has no buffer of that name.
    NoBuffer,
    /// The name exists but is another kind of member (`"a parameter"`, `"a buffer"`, `"a module"`).
    WrongKind {
        /// What was asked for.
        wanted: &'static str,
        /// What the member is.
        found: &'static str,
    },
    /// The path is empty where a member name is needed.
    Empty,
    /// The slot exists but refused the value (its type does not fit).
    Refused(String),
}

impl PathError {
    fn describe(&self) -> String {
        let at = if self.parent.is_empty() {
            format!("the root ({})", self.parent_type)
        } else {
            format!("`{}` ({})", self.parent, self.parent_type)
        };
        let c = &self.component;
        match &self.kind {
            PathErrorKind::NoChild => format!("{at} has no child module `{c}`"),
            PathErrorKind::NoParameter => format!("{at} has no parameter `{c}`"),
            PathErrorKind::NoBuffer => format!("{at} has no buffer `{c}`"),
            PathErrorKind::WrongKind { wanted, found } => {
                format!("`{c}` in {at} is {found}, not {wanted}")
            }
            PathErrorKind::Empty => "the path is empty; name a member".to_string(),
            PathErrorKind::Refused(why) => format!("`{c}` in {at} cannot take the value: {why}"),
        }
    }
}

impl fmt::Display for PathErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}
