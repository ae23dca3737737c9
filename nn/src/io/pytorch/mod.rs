//! PyTorch checkpoints (`.pt`, `.pth`): what `torch.save` wrote, read into a [`StateDict`] by `pytorch-reader`,
//! which reads every container PyTorch has written (the zip archive of PyTorch ≥ 1.6, the legacy stream before
//! it) without PyTorch and without running pickle code.
//!
//! A tensor saved as a view (a transpose, a slice, an offset into a larger storage, an expansion) is read as the
//! view's values; two entries that share one storage (tied weights) are read as two tensors with equal values.

mod layout;
mod mapped;

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use pytorch_reader::{PickleValue, PytorchError, PytorchReader};

use super::{StateDict, TensorInfo};
use crate::{DType, Error, Result, Tensor};

/// How a checkpoint is read: where its weights are and what prefix their keys carry.
///
/// ```
/// use nn::io::PtOptions;
/// let options = PtOptions::new().key("model_state_dict").strip_prefix("module.");
/// assert_eq!(options.selected_key(), Some("model_state_dict"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct PtOptions {
    key: Option<String>,
    strip_prefix: Option<String>,
    max_bytes: Option<u64>,
}

/// Room for tensors that materialize more than their storage holds (an expansion), beyond twice the file.
const MATERIALIZE_SLACK: u64 = 64 << 20;

/// How much of a legacy file is searched for the saved order of its keys.
const LEGACY_PICKLE_WINDOW: u64 = 16 << 20;

/// Names under which training scripts commonly nest the weights, in the order they are suggested.
const USUAL_KEYS: [&str; 8] = [
    "state_dict",
    "model_state_dict",
    "model",
    "module",
    "net",
    "network",
    "weights",
    "params",
];

impl PtOptions {
    /// The defaults: the weights at the checkpoint's top level, keys as saved.
    pub fn new() -> PtOptions {
        PtOptions::default()
    }

    /// The weights are the dict under this top-level key (`torch.save({"state_dict": sd, "epoch": 3})`).
    pub fn key(mut self, key: impl Into<String>) -> PtOptions {
        self.key = Some(key.into());
        self
    }

    /// Every key that starts with `prefix` loses it (`"module."` for a `DataParallel` checkpoint), as
    /// [`StateDict::consume_prefix_if_present`].
    pub fn strip_prefix(mut self, prefix: impl Into<String>) -> PtOptions {
        self.strip_prefix = Some(prefix.into());
        self
    }

    /// The most bytes the tensors may take once read, all together; a checkpoint whose tensors claim more is
    /// refused before anything is allocated. The default is twice the file's size plus 64 MiB: room for tied
    /// weights read twice and for small expanded views, which take more memory than the storage saved.
    pub fn max_bytes(mut self, bytes: u64) -> PtOptions {
        self.max_bytes = Some(bytes);
        self
    }

    /// The top-level key the weights are read from, if one was chosen.
    pub fn selected_key(&self) -> Option<&str> {
        self.key.as_deref()
    }
}

/// Reads a PyTorch checkpoint into a state dict, in the order `state_dict()` gave its keys when it was saved.
///
/// See [`PtOptions`] for nested checkpoints and `DataParallel` prefixes. Every dtype nn has is read as it is
/// (float16, bfloat16, float32, float64, int64, int32, uint8, bool); any other is an
/// [`Error::CheckpointDType`] naming the key. A checkpoint with no tensor at its top level (the weights under
/// `"state_dict"` or `"model"` beside other entries) is an [`Error::NestedCheckpoint`] listing its top-level
/// keys, unless [`PtOptions::key`] says where the weights are.
///
/// ```no_run
/// use nn::io::{load_pt, PtOptions};
/// let sd = load_pt("checkpoint.pt".as_ref(), &PtOptions::new().key("state_dict"))?;
/// # Ok::<(), nn::Error>(())
/// ```
pub fn load_pt(path: &Path, options: &PtOptions) -> Result<StateDict> {
    read_pt(path, options, Make::Typed)
}

/// [`load_pt`] for a load into a module: each tensor keeps the bytes the reader returned, which the load
/// copies into the module's own memory (no typed buffer in between).
pub(crate) fn load_pt_raw(path: &Path, options: &PtOptions) -> Result<StateDict> {
    read_pt(path, options, Make::Raw)
}

/// Maps a PyTorch checkpoint and makes its tensors in place where it can, as `torch.load(path, mmap=True)`
/// does: a zip checkpoint (PyTorch ≥ 1.6) stores each storage uncompressed, so a tensor that is one contiguous
/// range of its storage is made of the file's pages, and loading the dict into a module
/// ([`ModuleExt::load_pt_mmap`](crate::ModuleExt::load_pt_mmap)) copies it once, from the page cache into the
/// parameters. The other tensors (transposed or strided views, expansions, empty ones) and every tensor of a
/// legacy checkpoint are read as [`load_pt`] reads them. The same keys, order, dtypes, errors and
/// [`PtOptions`].
///
/// One difference from [`load_pt`]: a mapped storage's CRC-32 is not checked (that would read every byte
/// before the copy does), as PyTorch's `torch.load` does not check it either, mapped or not; a file damaged
/// inside a storage loads the damaged values, where [`load_pt`] refuses it.
///
/// Where each tensor lies in the file is read from the checkpoint's pickle by a small reader of nn's own
/// (pytorch-reader does not say), used only where it agrees with pytorch-reader on every tensor's name, dtype
/// and shape.
///
/// # Safety
///
/// The file must not be modified or truncated (by this process or another) while any tensor of the returned
/// dict, or any handle sharing its storage, is alive: their elements are read from the file's pages, so a
/// change would change them under their readers, and a truncation makes reading them fault (`SIGBUS`).
///
/// ```no_run
/// use nn::io::{load_pt_mmap, PtOptions};
/// // SAFETY: nothing writes the checkpoint while `sd` is alive.
/// let sd = unsafe { load_pt_mmap("checkpoint.pt".as_ref(), &PtOptions::new()) }?;
/// # Ok::<(), nn::Error>(())
/// ```
pub unsafe fn load_pt_mmap(path: &Path, options: &PtOptions) -> Result<StateDict> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    // SAFETY: memmap2 requires that the file not be changed or truncated while the mapping is alive. The
    // mapping lives as long as the tensors made from it (each holds an `Arc` of it), and this function's
    // contract requires of its caller exactly that the file be left unchanged for as long as they are alive.
    let map = Arc::new(unsafe { memmap2::Mmap::map(&file) }.map_err(io)?);
    read_pt(path, options, Make::Mapped(map))
}

/// How [`read_pt`] makes each tensor.
enum Make {
    /// A typed buffer of its own.
    Typed,
    /// The bytes pytorch-reader returned, kept as they are.
    Raw,
    /// The file's pages where the tensor is one range of them, else as [`Make::Raw`].
    Mapped(Arc<memmap2::Mmap>),
}

/// [`load_pt`], each tensor made as `make` says.
fn read_pt(path: &Path, options: &PtOptions, make: Make) -> Result<StateDict> {
    let checkpoint = Checkpoint::open(path, options)?;
    let limit = options
        .max_bytes
        .unwrap_or_else(|| checkpoint.file_len.saturating_mul(2) + MATERIALIZE_SLACK);
    let mut total = 0u64;
    let mut planned = Vec::with_capacity(checkpoint.tensors.len());
    for (info, tensor) in &checkpoint.tensors {
        let dtype = info.nn_dtype.ok_or_else(|| Error::CheckpointDType {
            path: checkpoint.name.clone(),
            key: info.key.clone(),
            dtype: info.dtype.clone(),
        })?;
        total = total.saturating_add(info.bytes);
        if total > limit {
            return Err(checkpoint.error(format!(
                "its tensors take more than {limit} bytes once read (at {}, shape {:?}), from a file of {} bytes; \
                 raise PtOptions::max_bytes if this checkpoint is trusted",
                info.key, info.shape, checkpoint.file_len
            )));
        }
        planned.push((info, tensor, dtype));
    }
    let mapped = match &make {
        Make::Mapped(map) if checkpoint.is_zip => {
            let tensors: Vec<&pytorch_reader::Tensor> = checkpoint.tensors.iter().map(|(_, t)| t).collect();
            mapped::MappedStorages::new(map.clone(), options.key.as_deref(), &tensors)
        }
        Make::Typed | Make::Raw | Make::Mapped(_) => None,
    };
    // The tensors are read on the threads (pytorch-reader's reads run at once), so that the page faults of
    // their new buffers and the kernel's copies use both cores; the first error in saved order is reported.
    let read = |(info, tensor, dtype): &(&TensorInfo, &pytorch_reader::Tensor, DType)| -> Result<Tensor> {
        let in_place = mapped.as_ref().and_then(|m| m.tensor(&tensor.name, *dtype));
        let tensor = match in_place {
            Some(tensor) => tensor,
            None => {
                let bytes = tensor.read().map_err(|e| checkpoint.error(e.to_string()))?;
                match make {
                    Make::Typed => Tensor::from_bytes(&bytes, info.shape.as_slice(), *dtype),
                    Make::Raw | Make::Mapped(_) => Tensor::from_raw_bytes(bytes, info.shape.as_slice(), *dtype),
                }
            }
        };
        tensor.map_err(|e| checkpoint.error(format!("tensor {}: {e}", info.key)))
    };
    // After a tensor fails, the tensors saved after it are not read (a damaged file stops costing reads); those
    // before it still are, so the error reported is always the first in saved order.
    let first_failed = std::sync::atomic::AtomicUsize::new(usize::MAX);
    let mut made: Vec<Option<Result<Tensor>>> = planned.iter().map(|_| None).collect();
    let parts = crate::threads::parts_for(
        usize::try_from(total).unwrap_or(usize::MAX),
        crate::threads::COPY_SPLIT_BYTES,
    );
    crate::threads::for_each_piece(&mut made, 1, parts, |at, piece| {
        for (i, slot) in piece.iter_mut().enumerate() {
            if at + i > first_failed.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
            let tensor = read(&planned[at + i]);
            if tensor.is_err() {
                first_failed.fetch_min(at + i, std::sync::atomic::Ordering::Relaxed);
            }
            *slot = Some(tensor);
        }
    });
    let mut out = StateDict::new();
    for ((info, _, _), tensor) in planned.iter().zip(made) {
        // A slot left empty lies after a failed one, whose error comes first.
        let tensor = tensor.ok_or_else(|| checkpoint.error(format!("tensor {} was not read", info.key)))??;
        out.insert(info.key.clone(), tensor);
    }
    Ok(out)
}

/// The keys, dtypes and shapes of a PyTorch checkpoint's tensors, in saved order, without reading their
/// values.
pub fn inspect_pt(path: &Path, options: &PtOptions) -> Result<Vec<TensorInfo>> {
    Ok(Checkpoint::open(path, options)?
        .tensors
        .into_iter()
        .map(|(info, _)| info)
        .collect())
}

/// An opened checkpoint: its tensors' descriptions and handles that read them, in saved order.
struct Checkpoint {
    name: String,
    file_len: u64,
    /// Whether pytorch-reader read it as a zip archive (PyTorch ≥ 1.6), the one container that can be mapped.
    is_zip: bool,
    tensors: Vec<(TensorInfo, pytorch_reader::Tensor)>,
}

impl Checkpoint {
    fn open(path: &Path, options: &PtOptions) -> Result<Checkpoint> {
        let name = path.display().to_string();
        let file_len = std::fs::metadata(path)
            .map_err(|source| Error::Io {
                path: path.to_owned(),
                source,
            })?
            .len();
        let reader_error = |e: PytorchError| match e {
            PytorchError::Io(source) => Error::Io {
                path: path.to_owned(),
                source,
            },
            other => Error::Checkpoint {
                path: name.clone(),
                message: other.to_string(),
            },
        };
        let reader = match &options.key {
            Some(key) => PytorchReader::with_top_level_key(path, key),
            None => PytorchReader::new(path),
        }
        .map_err(reader_error)?;
        // The pickle's bytes, read once for the two scans below.
        let pickle = pickle_bytes(path);
        if options.key.is_none() {
            check_weights_at_top(path, &name, pickle.as_ref(), reader_error)?;
        }
        let is_zip = reader.metadata().format_type == pytorch_reader::FileFormat::Zip;
        let names: Vec<String> = reader.keys();
        let order = saved_order(pickle.as_ref(), names.iter());
        let mut tensors: Vec<(TensorInfo, pytorch_reader::Tensor)> = reader
            .into_tensors()
            .into_iter()
            .map(|(key, tensor)| {
                let key = match &options.strip_prefix {
                    Some(prefix) => key.strip_prefix(prefix.as_str()).map(str::to_owned).unwrap_or(key),
                    None => key,
                };
                let info = TensorInfo {
                    key,
                    dtype: torch_dtype_name(tensor.dtype()).to_owned(),
                    nn_dtype: nn_dtype(tensor.dtype()),
                    shape: tensor.shape().to_vec(),
                    bytes: (tensor.shape().iter())
                        .fold(tensor.dtype().size() as u64, |n, &d| n.saturating_mul(d as u64)),
                };
                (info, tensor)
            })
            .collect();
        tensors.sort_by(|(a, ta), (b, tb)| {
            let rank = |t: &pytorch_reader::Tensor| order.get(t.name.as_str()).copied().unwrap_or(usize::MAX);
            rank(ta).cmp(&rank(tb)).then_with(|| a.key.cmp(&b.key))
        });
        // Two keys that become one after the prefix is stripped: PyTorch's pop-and-set keeps the later one.
        let mut seen = HashMap::new();
        for (i, (info, _)) in tensors.iter().enumerate() {
            seen.insert(info.key.clone(), i);
        }
        let mut index = 0;
        tensors.retain(|(info, _)| {
            let keep = seen[&info.key] == index;
            index += 1;
            keep
        });
        Ok(Checkpoint {
            name,
            file_len,
            is_zip,
            tensors,
        })
    }

    fn error(&self, message: String) -> Error {
        Error::Checkpoint {
            path: self.name.clone(),
            message,
        }
    }
}

/// Refuses a checkpoint whose top level holds no tensor but holds dicts or lists that do: the weights are
/// nested, and the error lists the top-level keys (suggesting the one that most likely holds them). `pickle` is
/// [`pickle_bytes`]'s.
fn check_weights_at_top(
    path: &Path,
    name: &str,
    pickle: Option<&(Vec<u8>, bool)>,
    reader_error: impl Fn(PytorchError) -> Error,
) -> Result<()> {
    let PickleValue::Dict(top) = PytorchReader::read_pickle_data(path, None).map_err(reader_error)? else {
        return Ok(());
    };
    let counts: Vec<(&String, usize)> = top.iter().map(|(k, v)| (k, count_tensors(v))).collect();
    let at_top = top.values().any(is_tensor);
    if at_top || counts.iter().all(|(_, n)| *n == 0) || pickled_module(pickle) {
        return Ok(());
    }
    let mut keys: Vec<String> = top.keys().cloned().collect();
    keys.sort();
    let holding = |k: &str| counts.iter().any(|(key, n)| key.as_str() == k && *n > 0);
    let suggestion = USUAL_KEYS
        .iter()
        .find(|k| holding(k))
        .map(|k| (*k).to_owned())
        .or_else(|| {
            let most = counts
                .iter()
                .max_by(|(ka, a), (kb, b)| a.cmp(b).then_with(|| kb.cmp(ka)));
            most.map(|(k, _)| (*k).clone())
        });
    Err(Error::NestedCheckpoint {
        path: name.to_owned(),
        top_level_keys: keys,
        suggestion,
    })
}

fn is_tensor(value: &PickleValue) -> bool {
    matches!(value, PickleValue::Unsupported(t) if t == "torch.Tensor")
}

fn count_tensors(value: &PickleValue) -> usize {
    match value {
        PickleValue::Dict(d) => d.values().map(count_tensors).sum(),
        PickleValue::List(l) => l.iter().map(count_tensors).sum(),
        v => usize::from(is_tensor(v)),
    }
}

/// Each name's rank in the order the checkpoint's pickle first names it, which is the order of the dict that
/// was saved (`state_dict()`'s): pytorch-reader gives its tensors in a hash map. A name the pickle does not
/// hold as one string (a path through nested dicts) gets no rank and is sorted after the others by key.
/// `pickle` is [`pickle_bytes`]'s.
fn saved_order<'a>(
    pickle: Option<&(Vec<u8>, bool)>,
    names: impl Iterator<Item = &'a String>,
) -> HashMap<&'a str, usize> {
    let Some((pickle, _)) = pickle else {
        return HashMap::new();
    };
    let mut found: Vec<(usize, &str)> = names
        .filter_map(|name| first_string_position(pickle, name).map(|at| (at, name.as_str())))
        .collect();
    found.sort_unstable();
    found
        .into_iter()
        .enumerate()
        .map(|(rank, (_, name))| (name, rank))
        .collect()
}

/// The bytes of the checkpoint's pickle and whether it is a zip archive's: its `data.pkl` (whose size
/// pytorch-reader has bounded already), or the start of a legacy file, whose pickle precedes its storages
/// (16 MiB of it: a state dict's pickle is far smaller; a name past that is sorted by key).
fn pickle_bytes(path: &Path) -> Option<(Vec<u8>, bool)> {
    let file = File::open(path).ok()?;
    match zip::ZipArchive::new(file) {
        Ok(mut archive) => {
            let index = (0..archive.len()).find(|&i| {
                let name = archive.name_for_index(i).and_then(|n| n.ok());
                name.is_some_and(|n| n == "data.pkl" || n.ends_with("/data.pkl"))
            })?;
            let mut entry = archive.by_index(index).ok()?;
            let mut bytes = Vec::new();
            entry
                .by_ref()
                .take(pytorch_reader::MAX_PICKLE_SIZE)
                .read_to_end(&mut bytes)
                .ok()?;
            Some((bytes, true))
        }
        Err(_) => {
            let mut bytes = Vec::new();
            File::open(path)
                .ok()?
                .take(LEGACY_PICKLE_WINDOW)
                .read_to_end(&mut bytes)
                .ok()?;
            Some((bytes, false))
        }
    }
}

/// Whether the checkpoint is a whole pickled module (`torch.save(model)`), whose top level pytorch-reader reads as
/// the module's children: its keys are the module's `state_dict()` keys, not a nesting to choose from.
/// `pickle` is [`pickle_bytes`]'s.
fn pickled_module(pickle: Option<&(Vec<u8>, bool)>) -> bool {
    // Only a zip archive: pytorch-reader refuses a legacy one (it names the module's classes by persistent ids).
    match pickle {
        Some((pickle, true)) => layout::root_is_module(pickle),
        _ => false,
    }
}

/// Where the pickle first holds `name` as a string (protocol 2's BINUNICODE, or protocol 4's
/// SHORT_BINUNICODE), if it does.
fn first_string_position(pickle: &[u8], name: &str) -> Option<usize> {
    let len = u32::try_from(name.len()).ok()?;
    let mut long = vec![b'X'];
    long.extend_from_slice(&len.to_le_bytes());
    long.extend_from_slice(name.as_bytes());
    let short = u8::try_from(name.len()).ok().map(|n| {
        let mut s = vec![0x8c, n];
        s.extend_from_slice(name.as_bytes());
        s
    });
    let at_long = memchr::memmem::find(pickle, &long);
    let at_short = short.and_then(|s| memchr::memmem::find(pickle, &s));
    at_long.into_iter().chain(at_short).min()
}

/// PyTorch's name of a checkpoint's dtype.
fn torch_dtype_name(dtype: pytorch_reader::DType) -> &'static str {
    use pytorch_reader::DType as P;
    match dtype {
        P::F64 => "torch.float64",
        P::F32 => "torch.float32",
        P::F16 => "torch.float16",
        P::BF16 => "torch.bfloat16",
        P::I64 => "torch.int64",
        P::I32 => "torch.int32",
        P::I16 => "torch.int16",
        P::I8 => "torch.int8",
        P::U64 => "torch.uint64",
        P::U32 => "torch.uint32",
        P::U16 => "torch.uint16",
        P::U8 => "torch.uint8",
        P::Bool => "torch.bool",
    }
}

/// nn's dtype of a checkpoint's dtype, if nn has it.
fn nn_dtype(dtype: pytorch_reader::DType) -> Option<DType> {
    use pytorch_reader::DType as P;
    Some(match dtype {
        P::F64 => DType::F64,
        P::F32 => DType::F32,
        P::F16 => DType::F16,
        P::BF16 => DType::BF16,
        P::I64 => DType::I64,
        P::I32 => DType::I32,
        P::U8 => DType::U8,
        P::Bool => DType::Bool,
        P::I16 | P::I8 | P::U64 | P::U32 | P::U16 => return None,
    })
}
