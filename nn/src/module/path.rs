//! [`ModulePath`]: the dotted path of the member a traversal is at, built in place without allocating.

use smallvec::SmallVec;

/// A dotted path (`blocks.3.fc.weight`) grown and shrunk as a traversal goes down and up the tree.
///
/// Paths of up to 256 bytes live on the stack, so a traversal of a model with short paths does not allocate.
///
/// ```
/// use nn::module::ModulePath;
/// let mut p = ModulePath::new("model");
/// let mark = p.push("fc");
/// assert_eq!(p.as_str(), "model.fc");
/// p.truncate(mark);
/// assert_eq!(p.as_str(), "model");
/// ```
#[derive(Clone, Default)]
pub struct ModulePath {
    buf: SmallVec<[u8; 256]>,
}

impl ModulePath {
    /// A path starting at `prefix` (empty for the root).
    pub fn new(prefix: &str) -> ModulePath {
        ModulePath {
            buf: SmallVec::from_slice(prefix.as_bytes()),
        }
    }

    /// Appends `.name` (or `name` when empty) and returns the length to [`truncate`](Self::truncate) back to.
    #[inline]
    pub fn push(&mut self, name: &str) -> usize {
        let mark = self.buf.len();
        if mark > 0 {
            self.buf.push(b'.');
        }
        self.buf.extend_from_slice(name.as_bytes());
        mark
    }

    /// Cuts the path back to a length returned by [`push`](Self::push).
    #[inline]
    pub fn truncate(&mut self, mark: usize) {
        self.buf.truncate(mark);
    }

    /// The path.
    #[inline]
    pub fn as_str(&self) -> &str {
        // SAFETY: `buf` only ever receives the bytes of whole `&str`s (the prefix and pushed names) and the
        // ASCII byte `.`, and is only truncated to lengths it had after such a write (marks from `push`, which
        // are taken before a write). Every such length falls on a character boundary, so `buf` is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(&self.buf) }
    }

    /// Whether the path is empty (the root).
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}
