//! Printing a tensor: `Display` is PyTorch 2.5.1's `repr` / `print` (`torch/_tensor_str.py` with its default
//! options: precision 4, summarised past 1,000 elements with 3 items at each edge, lines of 80 characters);
//! `Debug` is a short line of shape, dtype, device and the first values.

use std::fmt;

use super::Tensor;
use crate::{DType, Device, Result};

/// PyTorch's default print options.
const PRECISION: usize = 4;
const THRESHOLD: usize = 1000;
const EDGE_ITEMS: usize = 3;
const LINE_WIDTH: usize = 80;

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor(shape={}, dtype={}, device={}",
            self.shape,
            self.dtype(),
            self.device()
        )?;
        if let Ok(values) = self.read_cpu("fmt", |_| ()).and_then(|_| self.to_vec_f64()) {
            const SHOWN: usize = 8;
            let head: Vec<String> = values.iter().take(SHOWN).map(|v| format!("{v}")).collect();
            let more = if values.len() > SHOWN { ", …" } else { "" };
            write!(f, ", data=[{}{more}]", head.join(", "))?;
        }
        f.write_str(")")
    }
}

/// PyTorch's `repr(tensor)`: the elements as `print` shows them, then the `device=`, `dtype=`, `grad_fn=` or
/// `requires_grad=True` suffixes PyTorch adds. A tensor whose elements cannot be read (a device that failed)
/// prints the error in place of them.
///
/// ```
/// use nn::{DType, Tensor};
/// let x = Tensor::from_vec(vec![1.0f32, 2.5, -3.0], [3])?;
/// assert_eq!(x.to_string(), "tensor([ 1.0000,  2.5000, -3.0000])");
/// let steps = Tensor::from_vec(vec![1i32, 20], [2])?;
/// assert_eq!(steps.to_string(), "tensor([ 1, 20], dtype=torch.int32)");
/// let w = x.requires_grad_(true)?;
/// assert_eq!(w.to_string(), "tensor([ 1.0000,  2.5000, -3.0000], requires_grad=True)");
/// # Ok::<(), nn::Error>(())
/// ```
impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&repr(self, "tensor("))
    }
}

/// `prefix` (`tensor(`), the elements and the suffixes, closed by `)`.
pub(crate) fn repr(t: &Tensor, prefix: &str) -> String {
    let indent = prefix.chars().count();
    let mut suffixes = Vec::new();
    if t.device() != Device::Cpu {
        suffixes.push(format!("device='{}'", t.device()));
    }
    let dtype_suffix = format!("dtype=torch.{}", t.dtype().name());
    let body = if t.numel() == 0 {
        if t.rank() != 1 {
            suffixes.push(format!("size={}", python_tuple(t.shape().dims())));
        }
        if t.dtype() != DType::F32 {
            suffixes.push(dtype_suffix);
        }
        "[]".to_string()
    } else {
        if !matches!(t.dtype(), DType::F32 | DType::I64 | DType::Bool) {
            suffixes.push(dtype_suffix);
        }
        match Elements::read(t) {
            Ok(elements) => tensor_str(&elements, t.shape().dims(), indent),
            Err(e) => format!("<elements not readable: {e}>"),
        }
    };
    if let Some(name) = t.grad_fn_name() {
        suffixes.push(format!("grad_fn=<{}>", backward_node_name(name)));
    } else if t.requires_grad() {
        suffixes.push("requires_grad=True".to_string());
    }
    add_suffixes(format!("{prefix}{body}"), &suffixes, indent)
}

/// `torch.typename` of a tensor: `torch.FloatTensor`, `torch.cuda.HalfTensor`, …
pub(crate) fn torch_typename(dtype: DType, device: Device) -> String {
    let cuda = if matches!(device, Device::Cuda(_)) { "cuda." } else { "" };
    format!("torch.{cuda}{}Tensor", dtype.scalar_type_name())
}

/// PyTorch's name of the backward node of the op nn records as `op` (`MulBackward0` for `mul`); an op PyTorch
/// has no node of its own for is named after nn's op the same way (`affine` → `AffineBackward0`).
pub(crate) fn backward_node_name(op: &str) -> String {
    let known = match op {
        "add" | "add_scalar" => "AddBackward0",
        "sub" | "sub_scalar" => "SubBackward0",
        "mul" | "mul_scalar" => "MulBackward0",
        "div" | "div_scalar" => "DivBackward0",
        "div_floor" | "div_trunc" => "DivBackward2",
        "floor_divide" => "NotImplemented",
        "remainder" => "RemainderBackward1",
        "remainder_scalar" => "RemainderBackward0",
        "fmod" => "FmodBackward1",
        "fmod_scalar" => "FmodBackward0",
        "rsub" => "RsubBackward1",
        "neg" => "NegBackward0",
        "recip" => "ReciprocalBackward0",
        "log1p" => "Log1PBackward0",
        "to_dtype" | "to_device" => "ToCopyBackward0",
        "pow_scalar" => "PowBackward0",
        "clamp" => "ClampBackward1",
        "reshape" | "view" | "flatten" | "unflatten" => "ViewBackward0",
        "narrow" | "slice" => "SliceBackward0",
        "squeeze" => "SqueezeBackward1",
        "t" => "TBackward0",
        "clone" => "CloneBackward0",
        "CopySlices" => "CopySlices",
        "sum_all" => "SumBackward0",
        "sum_dims" => "SumBackward1",
        "mean_all" => "MeanBackward0",
        "mean_dims" => "MeanBackward1",
        "prod_all" => "ProdBackward0",
        "prod_dim" => "ProdBackward1",
        "matmul" => "MmBackward0",
        "linear" => "AddmmBackward0",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    let mut name = String::new();
    for word in op.trim_end_matches('_').split('_') {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            name.extend(first.to_uppercase());
            name.push_str(chars.as_str());
        }
    }
    name + "Backward0"
}

/// `(2, 0)`, `(0,)` and `()`, as Python writes a tuple of sizes.
fn python_tuple(dims: &[usize]) -> String {
    match dims {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The elements, read to the host, in the kind PyTorch's formatter tells apart.
enum Elements {
    /// Floating-point values (half precision exactly widened, as PyTorch prints it through `float()`).
    Float(Vec<f64>),
    Int(Vec<i64>),
    Bool(Vec<bool>),
}

impl Elements {
    fn read(t: &Tensor) -> Result<Elements> {
        let _no_grad = crate::no_grad();
        let host = t.cpu()?;
        Ok(match t.dtype() {
            DType::Bool => Elements::Bool(host.to_vec::<bool>()?),
            DType::I64 => Elements::Int(host.to_vec::<i64>()?),
            DType::I32 => Elements::Int(host.to_vec::<i32>()?.into_iter().map(i64::from).collect()),
            DType::U8 => Elements::Int(host.to_vec::<u8>()?.into_iter().map(i64::from).collect()),
            _ => Elements::Float(host.to_vec_f64()?),
        })
    }

    fn len(&self) -> usize {
        match self {
            Elements::Float(v) => v.len(),
            Elements::Int(v) => v.len(),
            Elements::Bool(v) => v.len(),
        }
    }
}

/// PyTorch's `_Formatter`: one width and one notation for every element of a tensor.
struct Formatter {
    floating: bool,
    int_mode: bool,
    sci_mode: bool,
    max_width: usize,
}

impl Formatter {
    /// Chosen from the elements at `shown` (all of them, or the summary's).
    fn new(elements: &Elements, shown: &[usize]) -> Formatter {
        let mut f = Formatter {
            floating: matches!(elements, Elements::Float(_)),
            int_mode: true,
            sci_mode: false,
            max_width: 1,
        };
        let values = match elements {
            Elements::Float(values) => values,
            other => {
                for &i in shown {
                    f.max_width = f.max_width.max(element_str(other, i).len());
                }
                return f;
            }
        };
        let finite: Vec<f64> = shown
            .iter()
            .map(|&i| values[i])
            .filter(|v| v.is_finite() && *v != 0.0)
            .collect();
        if finite.is_empty() {
            return f;
        }
        let max = finite.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let min = finite.iter().fold(f64::INFINITY, |m, v| m.min(v.abs()));
        f.int_mode = finite.iter().all(|v| *v == v.ceil());
        let wide = max / min > 1000.0 || max > 1.0e8;
        f.sci_mode = if f.int_mode { wide } else { wide || min < 1.0e-4 };
        for &v in &finite {
            let width = if f.sci_mode {
                scientific(v).len()
            } else if f.int_mode {
                format!("{v:.0}").len() + 1
            } else {
                format!("{v:.PRECISION$}").len()
            };
            f.max_width = f.max_width.max(width);
        }
        f
    }

    /// Element `i`, right-aligned to the common width.
    fn format(&self, elements: &Elements, i: usize) -> String {
        let text = match elements {
            Elements::Float(values) if self.floating => {
                let v = values[i];
                if !v.is_finite() {
                    non_finite(v)
                } else if self.sci_mode {
                    scientific(v)
                } else if self.int_mode {
                    format!("{v:.0}.")
                } else {
                    format!("{v:.PRECISION$}")
                }
            }
            other => element_str(other, i),
        };
        format!("{text:>width$}", width = self.max_width)
    }
}

/// An integer or bool element as Python's `str` writes it.
fn element_str(elements: &Elements, i: usize) -> String {
    match elements {
        Elements::Int(v) => v[i].to_string(),
        Elements::Bool(v) => if v[i] { "True" } else { "False" }.to_string(),
        Elements::Float(v) => v[i].to_string(),
    }
}

/// `nan`, `inf` and `-inf`, as Python formats them.
fn non_finite(v: f64) -> String {
    match v {
        v if v.is_nan() => "nan".to_string(),
        v if v > 0.0 => "inf".to_string(),
        _ => "-inf".to_string(),
    }
}

/// Python's `f"{v:.4e}"`: a signed exponent of at least two digits (`1.0000e+08`).
fn scientific(v: f64) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    let rust = format!("{v:.PRECISION$e}");
    let (mantissa, exponent) = rust.split_once('e').expect("an exponent");
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(digits) => ('-', digits),
        None => ('+', exponent),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// PyTorch's `_tensor_str`: the elements of a tensor of shape `dims` (not empty), nested brackets indented
/// from column `indent`.
fn tensor_str(elements: &Elements, dims: &[usize], indent: usize) -> String {
    let summarize = elements.len() > THRESHOLD;
    let shown = if summarize {
        summarized(dims)
    } else {
        (0..elements.len()).collect()
    };
    let formatter = Formatter::new(elements, &shown);
    let strides = row_major_strides(dims);
    let block = Block {
        elements,
        formatter: &formatter,
        strides: &strides,
        summarize,
    };
    block.format(dims, 0, indent)
}

/// The element offsets PyTorch's `get_summarized_data` keeps: `EDGE_ITEMS` at each end of every dimension
/// longer than twice that.
fn summarized(dims: &[usize]) -> Vec<usize> {
    let strides = row_major_strides(dims);
    let mut offsets = vec![0usize];
    for (&dim, &stride) in dims.iter().zip(&strides) {
        let kept = edge_indices(dim, true);
        offsets = offsets
            .iter()
            .flat_map(|&o| kept.iter().map(move |&i| o + i * stride))
            .collect();
    }
    offsets
}

/// The indices of a dimension of `len` that a summary shows: all, or the first and last `EDGE_ITEMS`.
fn edge_indices(len: usize, summarize: bool) -> Vec<usize> {
    if summarize && len > 2 * EDGE_ITEMS {
        (0..EDGE_ITEMS).chain(len - EDGE_ITEMS..len).collect()
    } else {
        (0..len).collect()
    }
}

fn row_major_strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * dims[d + 1];
    }
    strides
}

/// What the recursion of `_tensor_str_with_formatter` shares.
struct Block<'a> {
    elements: &'a Elements,
    formatter: &'a Formatter,
    strides: &'a [usize],
    summarize: bool,
}

impl Block<'_> {
    /// The sub-tensor at `offset` of shape `dims` (a suffix of the whole shape), its brackets at column
    /// `indent`.
    fn format(&self, dims: &[usize], offset: usize, indent: usize) -> String {
        let Some((&len, rest)) = dims.split_first() else {
            return self.formatter.format(self.elements, offset);
        };
        let stride = self.strides[self.strides.len() - dims.len()];
        if rest.is_empty() {
            return self.vector(len, offset, indent);
        }
        let mut slices: Vec<String> = Vec::new();
        let kept = edge_indices(len, self.summarize);
        for (n, &i) in kept.iter().enumerate() {
            if n == EDGE_ITEMS && kept.len() < len {
                slices.push("...".to_string());
            }
            slices.push(self.format(rest, offset + i * stride, indent + 1));
        }
        let separator = format!(",{}{}", "\n".repeat(dims.len() - 1), " ".repeat(indent + 1));
        format!("[{}]", slices.join(&separator))
    }

    /// PyTorch's `_vector_str`: a last dimension of `len` elements, wrapped at the line width.
    fn vector(&self, len: usize, offset: usize, indent: usize) -> String {
        let element_length = self.formatter.max_width + 2;
        let per_line = (LINE_WIDTH.saturating_sub(indent) / element_length).max(1);
        let kept = edge_indices(len, self.summarize);
        let mut data: Vec<String> = Vec::new();
        for (n, &i) in kept.iter().enumerate() {
            if n == EDGE_ITEMS && kept.len() < len {
                data.push(" ...".to_string());
            }
            data.push(self.formatter.format(self.elements, offset + i));
        }
        let lines: Vec<String> = data.chunks(per_line).map(|line| line.join(", ")).collect();
        format!("[{}]", lines.join(&format!(",\n{}", " ".repeat(indent + 1))))
    }
}

/// PyTorch's `_add_suffixes`: each suffix after `, `, or on a new line indented by `indent` once the line would
/// pass the line width; then `)`.
fn add_suffixes(mut text: String, suffixes: &[String], indent: usize) -> String {
    // As Python's `len(s) - s.rfind("\n") + 1`, where `rfind` is -1 without a newline.
    let mut last_line_len = match text.rfind('\n') {
        Some(i) => text.len() - i + 1,
        None => text.len() + 2,
    };
    for suffix in suffixes {
        if last_line_len + suffix.len() + 2 > LINE_WIDTH {
            text.push_str(&format!(",\n{}{suffix}", " ".repeat(indent)));
            last_line_len = indent + suffix.len();
        } else {
            text.push_str(&format!(", {suffix}"));
            last_line_len += suffix.len() + 2;
        }
    }
    text.push(')');
    text
}
