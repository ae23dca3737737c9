//! Selection by index along one dimension on the device: `index_select` (and the embedding lookup, its
//! `dim = 0` case), `index_add` (their gradient), `max` / `min` over a dimension with their indices, and the
//! placement of a gradient at those indices (their gradient).
//!
//! A tensor is seen as `[outer, size, inner]` around the dimension ([`Layout`], `channels` being `size`).
//! Indices are `int32` or `int64` buffers read as 32-bit words (an `int64` is a little-endian pair: low word,
//! high word). [`check`] tells whether every index is in range; the other kernels read only indices it passed.
//! An `index_add` sums the slices sent to one index in index order, without atomics: each position learns the
//! next position with the same index (a scan that stops at it: quadratic in the number of
//! indices only where they are mostly distinct), and the first of each chain adds them all. Over more than
//! 16,384 positions the scan runs in windows and the walk along a chain in rounds of 16,384 positions, one
//! launch each, so that no unit passes the 65,535 loop iterations Mesa's lavapipe allows; `max` / `min` over
//! a longer dimension take slices merged by a second kernel.

use cubecl::prelude::*;

use crate::activation::Compute;
use crate::dtype::with_float_type;
use crate::gather::{Element, count, with_element};
use crate::launch::{CUBE_SIZE, arg, check_operands, launch};
use crate::math::is_nan;
use crate::{FloatType, GpuBuffer, KernelError, Result, slices};

pub use crate::layout::Layout;

/// How indices are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexType {
    /// 32-bit signed integers.
    I32,
    /// 64-bit signed integers.
    I64,
}

impl IndexType {
    /// 32-bit words per index.
    fn words(self) -> usize {
        match self {
            IndexType::I32 => 1,
            IndexType::I64 => 2,
        }
    }
}

/// Index `k`'s value (its low word; [`check`] has seen that the high word is zero).
#[cube]
fn index_at(index: &[u32], k: usize, #[comptime] wide: bool) -> usize {
    if wide { index[2 * k] as usize } else { index[k] as usize }
}

/// `bad[unit] = 1` when one of the indices this unit looked at (every `CUBE_SIZE`-th of its cube's
/// `per_cube`, from its own) is outside `0..size` (negative ones are outside: a set high word, or a 32-bit value
/// beyond `size`).
#[cube(launch_unchecked)]
fn check_kernel(index: &[u32], bad: &mut [u32], count: usize, size: usize, per_cube: usize, #[comptime] wide: bool) {
    let unit = ABSOLUTE_POS;
    if unit < bad.len() {
        let (begin, end) = slices::range(CUBE_POS, count, per_cube);
        let mut flag = 0u32;
        let mut k = begin + UNIT_POS as usize;
        while k < end {
            let mut high = 0u32;
            if wide {
                high = index[2 * k + 1];
            }
            if high != 0 || index_at(index, k, wide) >= size {
                flag = 1;
            }
            k += CUBE_SIZE as usize;
        }
        bad[unit] = flag;
    }
}

/// `out[o, k, j] = x[o, index[k], j]`, in words of `T` (`inner_words` per slice).
#[cube(launch_unchecked)]
fn select_kernel<T: Numeric>(
    x: &[T],
    index: &[u32],
    out: &mut [T],
    picks: usize,
    size: usize,
    inner_words: usize,
    #[comptime] wide: bool,
) {
    if ABSOLUTE_POS < out.len() {
        let row = ABSOLUTE_POS / inner_words;
        let k = row % picks;
        let o = row / picks;
        let i = index_at(index, k, wide);
        out[ABSOLUTE_POS] = x[(o * size + i) * inner_words + ABSOLUTE_POS % inner_words];
    }
}

/// For each position `k`: `next[k]`, the next position with the same index (`picks` if none), scanning the
/// positions `k + 1 + window · per_window ..` up to `per_window` of them; a later window scans on only where an
/// earlier one found none. The first window (`window` 0) also sets `first[k] = 1` unless its index is `skip`
/// ([`heads_kernel`] then clears the others that follow another position).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn chain_kernel(
    index: &[u32],
    next: &mut [u32],
    first: &mut [u32],
    picks: usize,
    skip: usize,
    window: usize,
    per_window: usize,
    #[comptime] wide: bool,
) {
    let k = ABSOLUTE_POS;
    if k < picks && (window == 0 || next[k] as usize == picks) {
        let i = index_at(index, k, wide);
        let mut after = picks;
        let mut t = k + 1 + window * per_window;
        let mut end = t + per_window;
        if end > picks {
            end = picks;
        }
        while t < end {
            if index_at(index, t, wide) == i {
                after = t;
                break;
            }
            t += 1;
        }
        next[k] = after as u32;
        if window == 0 {
            let mut head = 1u32;
            if i == skip {
                head = 0;
            }
            first[k] = head;
        }
    }
}

/// `first[next[k]] = 0`: a position that follows another in its chain is not a head. A position has at most one
/// predecessor, so no two units write one element.
#[cube(launch_unchecked)]
fn heads_kernel(next: &[u32], first: &mut [u32], picks: usize) {
    let k = ABSOLUTE_POS;
    if k < picks {
        let t = next[k] as usize;
        if t < picks {
            first[t] = 0u32;
        }
    }
}

/// `out[o, index[k], j] += Σ src[o, t, j]` over the chain of positions `t` with `k`'s index, for each head
/// `k`, in index order, accumulated in `C` from `out`'s value: up to `per_round` positions of the chain per
/// launch (`round`), from where the last round stopped (`from[k]`; the head itself in round 0), recording where
/// this one stopped in `to_next[k]` (`picks` at the chain's end).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn add_kernel<F: Float, C: Float>(
    src: &[F],
    index: &[u32],
    next: &[u32],
    first: &[u32],
    from: &[u32],
    to_next: &mut [u32],
    out: &mut [F],
    picks: usize,
    size: usize,
    inner: usize,
    round: usize,
    per_round: usize,
    #[comptime] wide: bool,
) {
    if ABSOLUTE_POS < src.len() {
        let j = ABSOLUTE_POS % inner;
        let row = ABSOLUTE_POS / inner;
        let k = row % picks;
        let o = row / picks;
        if first[k] == 1 {
            let mut t = k;
            if round > 0 {
                t = from[k] as usize;
            }
            if t < picks {
                let to = (o * size + index_at(index, k, wide)) * inner + j;
                let mut acc = C::cast_from(out[to]);
                let mut steps = 0;
                while t < picks && steps < per_round {
                    acc += C::cast_from(src[(o * picks + t) * inner + j]);
                    t = next[t] as usize;
                    steps += 1;
                }
                out[to] = F::cast_from(acc);
            }
            if o == 0 && j == 0 {
                to_next[k] = t as u32;
            }
        }
    }
}

/// Whether `v` replaces `best` (NaN so far: `nan`) as the largest (`largest`) or smallest: NaN wins, and among
/// equal values the one seen first. `N` is one lane.
#[cube]
fn replaces<F: Float, N: Size>(v: F, best: F, nan: bool, #[comptime] largest: bool) -> bool {
    let mut better = v < best;
    if largest {
        better = v > best;
    }
    !nan && (is_nan::<F, N>(v) || better)
}

/// The largest (`largest`) or smallest element of slice `s` of each line `(o, j)` along the dimension (unit
/// `p · slices + s` for line `p`) and its position (as an `int64`: low word, zero high word), at element
/// `p · slices + s` of `values` and `at`. NaN wins; among equal values the first. `N` is one lane.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn extreme_kernel<F: Float, N: Size>(
    x: &[F],
    values: &mut [F],
    at: &mut [u32],
    size: usize,
    inner: usize,
    slices: usize,
    per_slice: usize,
    #[comptime] largest: bool,
) {
    let u = ABSOLUTE_POS;
    if u < values.len() {
        let (p, s) = (u / slices, u % slices);
        let (begin, end) = slices::range(s, size, per_slice);
        let base = (p / inner) * size * inner + p % inner;
        let mut best = x[base + begin * inner];
        let mut best_at = begin;
        let mut nan = is_nan::<F, N>(best);
        for i in begin + 1..end {
            let v = x[base + i * inner];
            if replaces::<F, N>(v, best, nan, largest) {
                best = v;
                best_at = i;
                nan = is_nan::<F, N>(v);
            }
        }
        values[u] = best;
        at[2 * u] = best_at as u32;
        at[2 * u + 1] = 0u32;
    }
}

/// Line `p`'s extreme from its slices' (unit `p`), as [`extreme_kernel`] would pick it walking the line.
#[cube(launch_unchecked)]
fn merge_extreme_kernel<F: Float, N: Size>(
    part_values: &[F],
    part_at: &[u32],
    values: &mut [F],
    at: &mut [u32],
    slices: usize,
    #[comptime] largest: bool,
) {
    let p = ABSOLUTE_POS;
    if p < values.len() {
        let first = p * slices;
        let mut best = part_values[first];
        let mut best_at = part_at[2 * first];
        let mut nan = is_nan::<F, N>(best);
        for s in 1..slices {
            let v = part_values[first + s];
            if replaces::<F, N>(v, best, nan, largest) {
                best = v;
                best_at = part_at[2 * (first + s)];
                nan = is_nan::<F, N>(v);
            }
        }
        values[p] = best;
        at[2 * p] = best_at;
        at[2 * p + 1] = 0u32;
    }
}

/// `dx[o, i, j] = g[o, j]` where `i` is line `(o, j)`'s `int64` position in `at`, zero elsewhere; in words of
/// `T` (`words` per element).
#[cube(launch_unchecked)]
fn spread_kernel<T: Numeric>(g: &[T], at: &[u32], dx: &mut [T], size: usize, inner: usize, words: usize) {
    if ABSOLUTE_POS < dx.len() {
        let e = ABSOLUTE_POS / words;
        let j = e % inner;
        let i = (e / inner) % size;
        let line = (e / (inner * size)) * inner + j;
        let mut word = T::from_int(0);
        if at[2 * line] as usize == i {
            word = g[line * words + ABSOLUTE_POS % words];
        }
        dx[ABSOLUTE_POS] = word;
    }
}

/// Checks that `index` holds `count` indices of `ty` on `on`'s device, each below `u32::MAX`-sized limits.
fn check_index(op: &'static str, on: &GpuBuffer, index: &GpuBuffer, ty: IndexType, count: usize) -> Result<()> {
    let have = index_count(op, index, ty)?;
    if have != count || !index.device().same(on.device()) {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!(
                "the index holds {have} {ty:?} elements on {}, expected {count} on {}",
                index.device(),
                on.device()
            ),
        });
    }
    Ok(())
}

/// Checks that `buffer` (`what`, for the error) holds `want` elements of `element`; returns the count.
fn count_of(op: &'static str, buffer: &GpuBuffer, element: Element, want: usize, what: &str) -> Result<usize> {
    let have = count(op, buffer, element)?;
    if have != want {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("{what} holds {have} elements, expected {want}"),
        });
    }
    Ok(have)
}

/// How many indices of `ty` `index` holds (an error if not a whole number).
fn index_count(op: &'static str, index: &GpuBuffer, ty: IndexType) -> Result<usize> {
    crate::launch::whole_elements(op, index, 4 * ty.words(), format_args!("{ty:?}"))
}

/// Fails unless `value` fits the kernels' 32-bit positions.
fn fits(op: &'static str, value: usize) -> Result<()> {
    if value >= i32::MAX as usize {
        return Err(KernelError::InvalidArgument {
            op,
            message: format!("{value} elements exceed the index kernels' 32-bit positions"),
        });
    }
    Ok(())
}

/// Whether every one of the `count` indices of `ty` in `index` is in `0..size`: one small kernel and a read of
/// its verdict (1 KiB per 4,194,304 indices; the one wait of an indexed operation on a device).
///
/// ```no_run
/// use kernels::index::{IndexType, check};
/// use kernels::{Backend, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let index = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[2i64, -1]));
/// assert!(!check(&index, IndexType::I64, 2, 3)?);
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn check(index: &GpuBuffer, ty: IndexType, count: usize, size: usize) -> Result<bool> {
    let op = "index check";
    check_index(op, index, index, ty, count)?;
    fits(op, size)?;
    if count == 0 {
        return Ok(true);
    }
    // A cube per `per_cube` indices, each unit looping at most `slices::ITERATIONS` times (lavapipe ends a
    // unit's loops after 65,535).
    let per_cube = CUBE_SIZE as usize * slices::ITERATIONS;
    let units = slices::count(count, per_cube) * CUBE_SIZE as usize;
    let bad = GpuBuffer::uninit(index.device(), units * 4);
    // SAFETY: whole cubes of `CUBE_SIZE` units; unit `u` of cube `c` reads indices `k < count` of slice `c`
    // (words `k` or `2k`, `2k + 1` of the `count · words` checked above) and writes `bad[u]`, guarded by
    // `u < units`.
    unsafe {
        launch!(
            check_kernel,
            index,
            units,
            arg(index, count * ty.words()),
            arg(&bad, units),
            count,
            size,
            per_cube,
            ty == IndexType::I64,
        )
    }
    let flags: Vec<u32> = bytemuck::pod_collect_to_vec(&bad.to_bytes()?);
    Ok(flags.iter().all(|&f| f == 0))
}

/// The slices of `x` (`layout` around the dimension, in elements of `element`) at the `picks` indices of
/// `index` along the dimension, in a new `[outer, picks, inner]` buffer. The indices must have passed
/// [`check`] for `layout.channels`.
///
/// ```no_run
/// use kernels::gather::Element;
/// use kernels::index::{IndexType, Layout, select};
/// use kernels::{Backend, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 2.0, 3.0]));
/// let index = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[2i32, 0]));
/// let layout = Layout { outer: 1, channels: 3, inner: 1 };
/// let y = select(&x, Element::Bits32, layout, &index, IndexType::I32, 2)?;
/// assert_eq!(y.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[3.0, 1.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn select(
    x: &GpuBuffer,
    element: Element,
    layout: Layout,
    index: &GpuBuffer,
    ty: IndexType,
    picks: usize,
) -> Result<GpuBuffer> {
    let op = "index_select";
    let have = count_of(op, x, element, layout.len(), "the input")?;
    check_index(op, x, index, ty, picks)?;
    let n = layout.outer * picks * layout.inner;
    // Positions count words: at most two per element.
    fits(op, n.max(have) * 2)?;
    let out = GpuBuffer::uninit(x.device(), n * element.size_in_bytes());
    if n == 0 {
        return Ok(out);
    }
    with_element!(element, T, words => {
        // SAFETY: `x` holds `outer · size · inner · words` words (checked), and an index read is below `size`
        // (the caller ran `check`), so `((o · size + i) · inner + j) · words + w` is inside it; unit
        // `u < n · words` writes `out[u]`; the index has `picks · words` words and `k < picks`.
        unsafe {
            launch!(
                select_kernel::<T>,
                x,
                n * words,
                arg(x, have * words),
                arg(index, picks * ty.words()),
                arg(&out, n * words),
                picks,
                layout.channels,
                layout.inner * words,
                ty == IndexType::I64,
            )
        }
    });
    Ok(out)
}

/// `x` (`layout`) with the slices of `src` (`[outer, picks, inner]`) added at the `picks` indices of `index`
/// along the dimension, in a new buffer; slices sent to one index are summed in index order (in the compute
/// type), and those sent to index `skip` are left out. The indices must have passed [`check`].
///
/// ```no_run
/// use kernels::index::{IndexType, Layout, add};
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[0.0f32; 3]));
/// let src = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 2.0, 4.0]));
/// let index = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[2i32, 0, 2]));
/// let layout = Layout { outer: 1, channels: 3, inner: 1 };
/// let y = add(FloatType::F32, &x, layout, &index, IndexType::I32, &src, None)?;
/// assert_eq!(y.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[2.0, 0.0, 5.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn add(
    dtype: FloatType,
    x: &GpuBuffer,
    layout: Layout,
    index: &GpuBuffer,
    ty: IndexType,
    src: &GpuBuffer,
    skip: Option<usize>,
) -> Result<GpuBuffer> {
    let op = "index_add";
    x.device().check_dtype(op, dtype)?;
    let picks = index_count(op, index, ty)?;
    let n = layout.outer * picks * layout.inner;
    check_operands(op, dtype, x, &[(x, layout.len(), "input"), (src, n, "source")])?;
    check_index(op, x, index, ty, picks)?;
    fits(op, n.max(layout.len()))?;
    let out = x.deep_copy();
    if n == 0 {
        return Ok(out);
    }
    let (next, first) = (
        GpuBuffer::uninit(x.device(), picks * 4),
        GpuBuffer::uninit(x.device(), picks * 4),
    );
    let skip = skip.unwrap_or(layout.channels).min(layout.channels);
    let wide = ty == IndexType::I64;
    // Windows of the scan for the next position, and rounds of the walk along a chain, each at most
    // `slices::ITERATIONS` positions per unit: lavapipe ends a unit's loops after 65,535 iterations.
    let per_window = slices::ITERATIONS;
    let rounds = slices::count(picks, per_window);
    // SAFETY: unit `k < picks` reads indices `t < picks` of the `picks · words` words and writes `next[k]` and
    // `first[k]`, both of `picks` words; a `next` is at most `picks`. Then unit `k < picks` reads `next[k]` and
    // writes `first[t]` only for `t < picks`. The launches run in order.
    unsafe {
        for window in 0..rounds {
            launch!(
                chain_kernel,
                index,
                picks,
                arg(index, picks * ty.words()),
                arg(&next, picks),
                arg(&first, picks),
                picks,
                skip,
                window,
                per_window,
                wide,
            );
        }
        launch!(heads_kernel, index, picks, arg(&next, picks), arg(&first, picks), picks);
    }
    let (mut from, mut to_next) = (
        GpuBuffer::uninit(x.device(), picks * 4),
        GpuBuffer::uninit(x.device(), picks * 4),
    );
    with_float_type!(dtype, F => {
        // SAFETY: `src` holds `n` elements and `out` `outer · size · inner` (checked); unit `u < n` reads
        // `src[(o · picks + t) · inner + j]` for `t < picks` (a chain ends at `picks`), and the head of a chain
        // writes `out[(o · size + i) · inner + j]` with `i < size` (checked indices); no two heads share an
        // index, so no two units write one element. `from` and `to_next` hold `picks` words: a head `k < picks`
        // reads `from[k]` (written by the round before, in order) and one unit per head writes `to_next[k]`.
        unsafe {
            for round in 0..rounds {
                launch!(
                    add_kernel::<F, <F as Compute>::C>,
                    src,
                    n,
                    arg(src, n),
                    arg(index, picks * ty.words()),
                    arg(&next, picks),
                    arg(&first, picks),
                    arg(&from, picks),
                    arg(&to_next, picks),
                    arg(&out, layout.len()),
                    picks,
                    layout.channels,
                    layout.inner,
                    round,
                    per_window,
                    wide,
                );
                std::mem::swap(&mut from, &mut to_next);
            }
        }
    });
    Ok(out)
}

/// The largest (`largest`) or smallest element of each line of `x` (`layout`, `channels > 0`) along the
/// dimension, in a new `[outer, inner]` buffer, and its position as `int64`s: PyTorch's `max(dim)` /
/// `min(dim)`, NaN winning and the first of equal values.
///
/// ```no_run
/// use kernels::index::{Layout, extreme};
/// use kernels::{Backend, FloatType, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let x = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1.0f32, 5.0, 5.0]));
/// let layout = Layout { outer: 1, channels: 3, inner: 1 };
/// let (values, at) = extreme(FloatType::F32, &x, layout, true)?;
/// assert_eq!(values.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[5.0]));
/// assert_eq!(at.to_bytes()?, bytemuck::cast_slice::<i64, u8>(&[1]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn extreme(dtype: FloatType, x: &GpuBuffer, layout: Layout, largest: bool) -> Result<(GpuBuffer, GpuBuffer)> {
    let op = if largest { "max" } else { "min" };
    let len = layout.check(op, dtype, x)?;
    if layout.channels == 0 {
        return Err(KernelError::InvalidArgument {
            op,
            message: "cannot reduce over a dimension of size 0".into(),
        });
    }
    fits(op, len)?;
    let lines = layout.outer * layout.inner;
    let values = GpuBuffer::uninit(x.device(), lines * dtype.size_in_bytes());
    let at = GpuBuffer::uninit(x.device(), lines * 8);
    if lines == 0 {
        return Ok((values, at));
    }
    let size = layout.channels;
    let slices = slices::count(size, slices::ITERATIONS);
    let units = lines * slices;
    with_float_type!(dtype, F => {
        let (part_values, part_at) = if slices == 1 {
            (values.clone(), at.clone())
        } else {
            (
                GpuBuffer::uninit(x.device(), units * dtype.size_in_bytes()),
                GpuBuffer::uninit(x.device(), units * 8),
            )
        };
        // SAFETY: `x` holds `outer · size · inner` elements (checked); unit `p · slices + s < units` reads
        // `x[(p / inner) · size · inner + p % inner + i · inner]` for `i` in slice `s` of `0..size`, inside it,
        // and writes element `p · slices + s` of `part_values` (`units` elements) and words `2 · (p · slices +
        // s)` and the next of `part_at` (`2 · units`): `values` and `at` themselves with one slice. The merge's
        // unit `p < lines` reads its line's `slices` parts and writes `values[p]`, `at[2p]`, `at[2p + 1]`.
        unsafe {
            launch!(
                extreme_kernel::<F>,
                x,
                units,
                1usize,
                arg(x, len),
                arg(&part_values, units),
                arg(&part_at, 2 * units),
                size,
                layout.inner,
                slices,
                slices::ITERATIONS,
                largest,
            );
            if slices > 1 {
                launch!(
                    merge_extreme_kernel::<F>,
                    x,
                    lines,
                    1usize,
                    arg(&part_values, units),
                    arg(&part_at, 2 * units),
                    arg(&values, lines),
                    arg(&at, 2 * lines),
                    slices,
                    largest,
                );
            }
        }
    });
    Ok((values, at))
}

/// The gradient of [`extreme`]: a `layout` buffer holding each line's element of `g` (`[outer, inner]`, in
/// elements of `element`) at its position in `at` (`int64`s, as [`extreme`] gives them), zeros elsewhere.
///
/// ```no_run
/// use kernels::gather::Element;
/// use kernels::index::{Layout, spread};
/// use kernels::{Backend, GpuBuffer, GpuDevice};
/// let device = GpuDevice::open(Backend::Wgpu, 0)?;
/// let g = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[7.0f32]));
/// let at = GpuBuffer::from_bytes(&device, bytemuck::cast_slice(&[1i64]));
/// let layout = Layout { outer: 1, channels: 3, inner: 1 };
/// let dx = spread(&g, Element::Bits32, &at, layout)?;
/// assert_eq!(dx.to_bytes()?, bytemuck::cast_slice::<f32, u8>(&[0.0, 7.0, 0.0]));
/// # Ok::<(), kernels::KernelError>(())
/// ```
pub fn spread(g: &GpuBuffer, element: Element, at: &GpuBuffer, layout: Layout) -> Result<GpuBuffer> {
    let op = "max backward";
    let lines = layout.outer * layout.inner;
    count_of(op, g, element, lines, "the gradient")?;
    check_index(op, g, at, IndexType::I64, lines)?;
    let len = layout.len();
    fits(op, len * 2)?;
    let dx = GpuBuffer::uninit(g.device(), len * element.size_in_bytes());
    if len == 0 {
        return Ok(dx);
    }
    with_element!(element, T, words => {
        // SAFETY: unit `u < len · words` writes `dx[u]` and reads `at[2 · line]` and `g[line · words + w]` for
        // its line `line < outer · inner = lines`; `at` holds `2 · lines` words and `g` `lines · words` (checked).
        unsafe {
            launch!(
                spread_kernel::<T>,
                g,
                len * words,
                arg(g, lines * words),
                arg(at, 2 * lines),
                arg(&dx, len * words),
                layout.channels,
                layout.inner,
                words,
            )
        }
    });
    Ok(dx)
}
