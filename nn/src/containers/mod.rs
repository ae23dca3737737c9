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

use std::ops::Range;

use crate::{Error, Result};

/// Python's `items[index]` position: a negative index counts from the end; out of range is PyTorch's
/// `IndexError`, as a typed error of `op`.
pub(crate) fn py_index(op: &'static str, index: isize, len: usize) -> Result<usize> {
    let position = if index < 0 {
        len.checked_sub(index.unsigned_abs())
    } else {
        Some(index as usize)
    };
    match position {
        Some(i) if i < len => Ok(i),
        _ => Err(Error::invalid(
            op,
            format!("index {index} is out of range for {len} items"),
        )),
    }
}

/// Python's `items[start:stop]` positions: negative bounds count from the end, and bounds past either end
/// are clamped (an empty range when `start >= stop`).
pub(crate) fn py_slice(start: Option<isize>, stop: Option<isize>, len: usize) -> Range<usize> {
    let clamp = |bound: isize| -> usize {
        if bound < 0 {
            len.saturating_sub(bound.unsigned_abs())
        } else {
            (bound as usize).min(len)
        }
    };
    let start = start.map_or(0, clamp);
    let stop = stop.map_or(len, clamp);
    start..stop.max(start)
}

/// The positions of Python's `items[start:stop:step]` (`slice.indices`): negative bounds count from the end,
/// bounds past either end are clamped, a negative step walks backwards; a step of 0 is Python's `ValueError`,
/// as a typed error of `op`.
pub(crate) fn py_slice_step(
    op: &'static str,
    start: Option<isize>,
    stop: Option<isize>,
    step: isize,
    len: usize,
) -> Result<Vec<usize>> {
    if step == 0 {
        return Err(Error::invalid(op, "slice step cannot be zero"));
    }
    let n = len as isize;
    let (lower, upper) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let bound = |value: Option<isize>, default: isize| match value {
        None => default,
        Some(v) if v < 0 => (v + n).max(lower),
        Some(v) => v.min(upper),
    };
    let (mut i, stop) = if step > 0 {
        (bound(start, lower), bound(stop, upper))
    } else {
        (bound(start, upper), bound(stop, lower))
    };
    let mut positions = Vec::new();
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        positions.push(i as usize);
        i += step;
    }
    Ok(positions)
}
