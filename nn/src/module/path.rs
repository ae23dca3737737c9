//! [`ModulePath`]: the dotted path of the member a traversal is at, built in place without allocating.

/// Bytes of path kept on the stack before the path moves to the heap.
const INLINE: usize = 256;

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
#[derive(Clone)]
pub struct ModulePath {
    inline: [u8; INLINE],
    /// The path's length in bytes, in either representation.
    len: usize,
    /// `INLINE` while the path lives in `inline`; 0 once it has moved to `heap`, so that the one bound check of
    /// the fast path sends every later push to [`push_slow`](Self::push_slow).
    limit: usize,
    /// The path once it outgrew `inline` (its bytes past `len` are stale).
    heap: String,
}

default_is!(ModulePath => ModulePath::new(""));

impl ModulePath {
    /// A path starting at `prefix` (empty for the root).
    pub fn new(prefix: &str) -> ModulePath {
        let mut path = ModulePath {
            inline: [0; INLINE],
            len: 0,
            limit: INLINE,
            heap: String::new(),
        };
        path.push(prefix);
        path
    }

    /// Appends `.name` (or `name` when empty) and returns the length to [`truncate`](Self::truncate) back to.
    #[inline(always)]
    pub fn push(&mut self, name: &str) -> usize {
        let mark = self.len;
        let separator = usize::from(mark != 0);
        let end = mark + separator + name.len();
        if end <= self.limit {
            // `mark < end <= INLINE` when a separator is written, and `mark == 0 < INLINE` otherwise (the name
            // then overwrites the dot): the index is in bounds either way.
            self.inline[mark] = b'.';
            copy_short(&mut self.inline[mark + separator..end], name.as_bytes());
            self.len = end;
        } else {
            self.push_slow(name, separator);
        }
        mark
    }

    /// [`push`](Self::push) once the path does not fit (or no longer lives) in `inline`.
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, name: &str, separator: usize) {
        if self.limit != 0 {
            let mut heap = String::with_capacity(2 * (self.len + separator + name.len()));
            heap.push_str(self.inline_str());
            self.heap = heap;
            self.limit = 0;
        }
        self.heap.truncate(self.len);
        if separator == 1 {
            self.heap.push('.');
        }
        self.heap.push_str(name);
        self.len = self.heap.len();
    }

    /// Cuts the path back to a length returned by [`push`](Self::push).
    #[inline(always)]
    pub fn truncate(&mut self, mark: usize) {
        self.len = self.len.min(mark);
    }

    /// Runs `f` with `name` pushed onto the path (the path as it then reads), and pops it again.
    #[inline(always)]
    pub fn at(&mut self, name: &str, f: impl FnOnce(&str)) {
        let mark = self.push(name);
        f(self.as_str());
        self.truncate(mark);
    }

    /// The path.
    #[inline(always)]
    pub fn as_str(&self) -> &str {
        if self.limit == 0 {
            // `heap[..len]` ends where a push ended (a character boundary); `get` keeps that unchecked.
            return self.heap.get(..self.len).unwrap_or_default();
        }
        self.inline_str()
    }

    #[inline(always)]
    fn inline_str(&self) -> &str {
        // SAFETY: while the path lives inline, `inline[..len]` only ever receives the bytes of whole `&str`s
        // (the prefix and pushed names) and the ASCII byte `.`, and `len` is only lowered to marks returned by
        // `push`, which are lengths the path had after such a write. Every such length falls on a character
        // boundary, so the bytes are UTF-8. `len <= INLINE` while `limit == INLINE` (every fast push checks
        // `end <= limit`), so the slice is in bounds; `as_str` only calls this then, and `push_slow` only once
        // before moving to the heap.
        unsafe { std::str::from_utf8_unchecked(self.inline.get_unchecked(..self.len)) }
    }

    /// Whether the path is empty (the root).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// `dst.copy_from_slice(src)` for the short names of paths (up to 16 bytes) in two overlapping moves instead
/// of a `memcpy` call; longer names go to `memcpy`.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if n > 16 || dst.len() != n {
        dst.copy_from_slice(src);
        return;
    }
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    // SAFETY: `dst` and `src` are distinct slices (`dst` is borrowed mutably) of the same length `n <= 16`
    // (checked above). Each branch reads `src[i..i + w]` and writes `dst[i..i + w]` for `i` in `{0, n - w}`
    // with `w <= n`, so every access is in bounds; the accesses are unaligned-tolerant.
    unsafe {
        if n >= 8 {
            (d as *mut u64).write_unaligned((s as *const u64).read_unaligned());
            (d.add(n - 8) as *mut u64).write_unaligned((s.add(n - 8) as *const u64).read_unaligned());
        } else if n >= 4 {
            (d as *mut u32).write_unaligned((s as *const u32).read_unaligned());
            (d.add(n - 4) as *mut u32).write_unaligned((s.add(n - 4) as *const u32).read_unaligned());
        } else if n >= 2 {
            (d as *mut u16).write_unaligned((s as *const u16).read_unaligned());
            (d.add(n - 2) as *mut u16).write_unaligned((s.add(n - 2) as *const u16).read_unaligned());
        } else if n == 1 {
            *d = *s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_and_truncates_inline_and_on_the_heap() {
        let mut p = ModulePath::new("");
        assert!(p.is_empty());
        let a = p.push("blocks");
        let b = p.push("0");
        assert_eq!(p.as_str(), "blocks.0");
        let long = "x".repeat(INLINE);
        let c = p.push(&long);
        assert_eq!(p.as_str(), format!("blocks.0.{long}"));
        let d = p.push("wéight");
        assert_eq!(p.as_str(), format!("blocks.0.{long}.wéight"));
        p.truncate(d);
        p.truncate(c);
        assert_eq!(p.as_str(), "blocks.0");
        p.push("fc_with_a_name_longer_than_sixteen_bytes");
        assert_eq!(p.as_str(), "blocks.0.fc_with_a_name_longer_than_sixteen_bytes");
        p.truncate(b);
        p.push("");
        assert_eq!(p.as_str(), "blocks.");
        p.truncate(a);
        assert!(p.is_empty());
        for name in ["a", "ab", "abc", "abcd", "abcdefg", "abcdefgh", "abcdefghijklmnop"] {
            let m = p.push(name);
            assert_eq!(p.as_str(), name);
            let n = p.push(name);
            assert_eq!(p.as_str(), format!("{name}.{name}"));
            p.truncate(n);
            p.truncate(m);
        }
    }

    #[test]
    fn a_prefix_starts_the_path() {
        let mut p = ModulePath::new("model");
        p.push("fc");
        assert_eq!(p.as_str(), "model.fc");
        let mut q = ModulePath::new(&"p".repeat(300));
        q.push("w");
        assert_eq!(q.as_str().len(), 302);
    }
}
