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
    len: usize,
    heap: Option<String>,
}

impl Default for ModulePath {
    fn default() -> Self {
        ModulePath::new("")
    }
}

impl ModulePath {
    /// A path starting at `prefix` (empty for the root).
    pub fn new(prefix: &str) -> ModulePath {
        let mut path = ModulePath {
            inline: [0; INLINE],
            len: 0,
            heap: None,
        };
        path.append(prefix.as_bytes());
        path
    }

    #[inline(always)]
    fn append(&mut self, bytes: &[u8]) {
        if let Some(heap) = &mut self.heap {
            // Only whole `&str`s and `.` are appended, so the bytes are UTF-8.
            heap.push_str(std::str::from_utf8(bytes).unwrap_or_default());
            return;
        }
        let end = self.len + bytes.len();
        if end <= INLINE {
            copy_short(&mut self.inline[self.len..end], bytes);
            self.len = end;
        } else {
            let mut heap = String::with_capacity(end * 2);
            heap.push_str(self.as_str());
            heap.push_str(std::str::from_utf8(bytes).unwrap_or_default());
            self.heap = Some(heap);
        }
    }

    /// Appends `.name` (or `name` when empty) and returns the length to [`truncate`](Self::truncate) back to.
    #[inline(always)]
    pub fn push(&mut self, name: &str) -> usize {
        let mark = self.byte_len();
        if mark > 0 {
            self.append(b".");
        }
        self.append(name.as_bytes());
        mark
    }

    /// Cuts the path back to a length returned by [`push`](Self::push).
    #[inline(always)]
    pub fn truncate(&mut self, mark: usize) {
        match &mut self.heap {
            Some(heap) => heap.truncate(mark),
            None => self.len = self.len.min(mark),
        }
    }

    #[inline(always)]
    fn byte_len(&self) -> usize {
        match &self.heap {
            Some(heap) => heap.len(),
            None => self.len,
        }
    }

    /// The path.
    #[inline(always)]
    pub fn as_str(&self) -> &str {
        if let Some(heap) = &self.heap {
            return heap;
        }
        // SAFETY: `inline[..len]` only ever receives the bytes of whole `&str`s (the prefix and pushed names)
        // and the ASCII byte `.`, and `len` is only lowered to marks returned by `push`, which are lengths the
        // path had after such a write. Every such length falls on a character boundary, so the bytes are UTF-8.
        unsafe { std::str::from_utf8_unchecked(&self.inline[..self.len]) }
    }

    /// Whether the path is empty (the root).
    pub fn is_empty(&self) -> bool {
        self.byte_len() == 0
    }
}

/// `dst.copy_from_slice(src)` for the short names of paths, in word-sized moves instead of a `memcpy` call.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    assert_eq!(dst.len(), n);
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    // SAFETY: `dst` and `src` are distinct slices of length `n` (`dst` borrowed mutably, checked above); every
    // access below reads `src[i..i + w]` and writes `dst[i..i + w]` with `i + w <= n`, as unaligned words.
    unsafe {
        if n >= 8 {
            let mut i = 0;
            while i + 8 <= n {
                (d.add(i) as *mut u64).write_unaligned((s.add(i) as *const u64).read_unaligned());
                i += 8;
            }
            if i < n {
                (d.add(n - 8) as *mut u64).write_unaligned((s.add(n - 8) as *const u64).read_unaligned());
            }
        } else if n >= 4 {
            (d as *mut u32).write_unaligned((s as *const u32).read_unaligned());
            (d.add(n - 4) as *mut u32).write_unaligned((s.add(n - 4) as *const u32).read_unaligned());
        } else {
            for i in 0..n {
                *d.add(i) = *s.add(i);
            }
        }
    }
}
