//! safetensors files: a state dict written with its exact dtypes and read back.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use safetensors::tensor::{Dtype, SafeTensors, View};

use super::StateDict;
use crate::tensor::HostBytes;
use crate::{DType, Error, Result, Tensor};

/// The safetensors dtype of a dtype (one for each: the mapping is exact).
pub fn to_safetensors_dtype(dtype: DType) -> Dtype {
    match dtype {
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
        DType::I64 => Dtype::I64,
        DType::I32 => Dtype::I32,
        DType::U8 => Dtype::U8,
        DType::Bool => Dtype::BOOL,
    }
}

/// The dtype of a safetensors dtype, if this crate has it.
pub fn from_safetensors_dtype(dtype: Dtype) -> Option<DType> {
    Some(match dtype {
        Dtype::F16 => DType::F16,
        Dtype::BF16 => DType::BF16,
        Dtype::F32 => DType::F32,
        Dtype::F64 => DType::F64,
        Dtype::I64 => DType::I64,
        Dtype::I32 => DType::I32,
        Dtype::U8 => DType::U8,
        Dtype::BOOL => DType::Bool,
        _ => return None,
    })
}

/// A tensor's bytes, borrowed under its storage's read lock: written without a copy.
struct Borrowed<'a> {
    dtype: DType,
    shape: &'a [usize],
    bytes: HostBytes<'a>,
}

impl View for Borrowed<'_> {
    fn dtype(&self) -> Dtype {
        to_safetensors_dtype(self.dtype)
    }
    fn shape(&self) -> &[usize] {
        self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.bytes)
    }
    fn data_len(&self) -> usize {
        self.bytes.len()
    }
}

/// Writes `state` to `path` as safetensors (with PyTorch's `{"format": "pt"}` metadata), reading each tensor's
/// bytes in place. Tensors on a device are copied to the host first.
///
/// ```
/// use nn::{Tensor, DType, module::StateDict, io};
/// let mut sd = StateDict::new();
/// sd.insert("w".into(), Tensor::ones([2, 2], DType::BF16));
/// let path = std::env::temp_dir().join(format!("nn-doc-{}.safetensors", std::process::id()));
/// io::save_safetensors(&sd, &path).unwrap();
/// let back = io::load_safetensors(&path).unwrap();
/// assert_eq!(back["w"].dtype(), DType::BF16);
/// # std::fs::remove_file(path).ok();
/// ```
pub fn save_safetensors(state: &StateDict, path: &Path) -> Result<()> {
    let metadata = HashMap::from([("format".to_owned(), "pt".to_owned())]);
    save_safetensors_with_metadata(state, path, Some(metadata))
}

/// [`save_safetensors`] with the header's `__metadata__` given (PyTorch's `safetensors.torch.save_file(tensors,
/// path, metadata=...)`; `None` writes none). [`safetensors_metadata`] reads it back.
///
/// ```
/// use std::collections::HashMap;
/// use nn::{Tensor, DType, module::StateDict, io};
/// let mut sd = StateDict::new();
/// sd.insert("w".into(), Tensor::ones([2], DType::F32));
/// let path = std::env::temp_dir().join(format!("nn-doc-meta-{}.safetensors", std::process::id()));
/// let meta = HashMap::from([("format".to_owned(), "pt".to_owned()), ("epoch".to_owned(), "7".to_owned())]);
/// io::save_safetensors_with_metadata(&sd, &path, Some(meta.clone()))?;
/// assert_eq!(io::safetensors_metadata(&path)?, Some(meta));
/// # std::fs::remove_file(path).ok();
/// # Ok::<(), nn::Error>(())
/// ```
pub fn save_safetensors_with_metadata(
    state: &StateDict,
    path: &Path,
    metadata: Option<HashMap<String, String>>,
) -> Result<()> {
    let hosts: Vec<(&String, Tensor)> = state
        .iter()
        .map(|(k, t)| Ok((k, t.cpu()?.dense()?)))
        .collect::<Result<_>>()?;
    let views: Vec<(&str, Borrowed<'_>)> = hosts
        .iter()
        .map(|(k, t)| {
            let view = Borrowed {
                dtype: t.dtype(),
                shape: t.shape(),
                bytes: t.host_bytes("save_safetensors")?,
            };
            Ok((k.as_str(), view))
        })
        .collect::<Result<_>>()?;
    safetensors::serialize_to_file(views, metadata, path).map_err(|e| match e {
        safetensors::SafeTensorError::IoError(source) => Error::Io {
            path: path.to_owned(),
            source,
        },
        other => Error::SafeTensors {
            path: path.display().to_string(),
            message: other.to_string(),
        },
    })
}

/// Reads a safetensors file into a state dict, in the file's order: the header first (checked against the
/// file's length before anything else is allocated), then each tensor straight from the file into its own
/// aligned storage.
pub fn load_safetensors(path: &Path) -> Result<StateDict> {
    let (file, header, mut at) = read_header(path)?;
    header.tensors(|entry, dtype| {
        let tensor = Tensor::read_at(&file, at, entry.shape.as_slice(), dtype);
        at += entry.bytes;
        tensor
    })
}

/// Maps a safetensors file and makes its tensors in place: each tensor's bytes stay the file's pages until it
/// is used, so loading the dict into a module ([`ModuleExt::load_safetensors_mmap`](crate::ModuleExt::load_safetensors_mmap))
/// copies each tensor once, from the page cache into the parameters, as PyTorch's `safetensors.torch.load_file`
/// (which maps) followed by `load_state_dict` does. The header is checked as
/// [`load_safetensors`] checks it; bool tensors are read at once (their bytes must be 0 or 1).
///
/// An operation that needs a mapped tensor's elements copies them into memory of its own once; writing into one
/// (`copy_`, `fill_`) moves it to such memory first, so the file is never written.
///
/// # Safety
///
/// The file must not be modified or truncated (by this process or another) while any tensor of the returned
/// dict, or any handle sharing its storage, is alive: their elements are read from the file's pages, so a
/// change would change them under their readers, and a truncation makes reading them fault (`SIGBUS`).
///
/// ```
/// use nn::{Tensor, DType, module::StateDict, io};
/// let mut sd = StateDict::new();
/// sd.insert("w".into(), Tensor::ones([2, 2], DType::F32));
/// let path = std::env::temp_dir().join(format!("nn-doc-mmap-{}.safetensors", std::process::id()));
/// io::save_safetensors(&sd, &path).unwrap();
/// // SAFETY: nothing writes the file while `back` is alive.
/// let back = unsafe { io::load_safetensors_mmap(&path) }.unwrap();
/// assert_eq!(back["w"].to_vec::<f32>().unwrap(), vec![1.0; 4]);
/// drop(back);
/// # std::fs::remove_file(path).ok();
/// ```
pub unsafe fn load_safetensors_mmap(path: &Path) -> Result<StateDict> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    // SAFETY: memmap2 requires that the file not be changed or truncated while the mapping is alive. The
    // mapping lives as long as the tensors made from it (each holds an `Arc` of it), and this function's
    // contract requires of its caller exactly that the file be left unchanged for as long as they are alive.
    let map = std::sync::Arc::new(unsafe { memmap2::Mmap::map(&file) }.map_err(io)?);
    let mut header = Header {
        name: path.display().to_string(),
        entries: Vec::new(),
        metadata: None,
    };
    let file_len = map.len() as u64;
    let prefix: [u8; 8] = map
        .get(..8)
        .and_then(|p| p.try_into().ok())
        .ok_or_else(|| header.error(format!("a file of {file_len} bytes has no 8-byte header length")))?;
    let header_len = checked_header_len(&header, prefix, file_len)?;
    let data_start = 8 + header_len as usize;
    parse_entries(&mut header, &map[8..data_start], file_len - 8 - header_len)?;
    let mut at = data_start;
    header.tensors(|entry, dtype| {
        let tensor = Tensor::from_mapped(&map, at, entry.shape.as_slice(), dtype);
        at += entry.bytes as usize;
        tensor
    })
}

/// Parses safetensors bytes (`name` labels errors).
pub fn state_dict_from_bytes(bytes: &[u8], name: &str) -> Result<StateDict> {
    let err = |message: String| Error::SafeTensors {
        path: name.to_owned(),
        message,
    };
    let file = SafeTensors::deserialize(bytes).map_err(|e| err(e.to_string()))?;
    let (_, metadata) = SafeTensors::read_metadata(bytes).map_err(|e| err(e.to_string()))?;
    let infos = metadata.tensors();
    let mut names: Vec<&str> = file.names();
    names.sort_by_key(|n| infos.get(*n).map(|i| i.data_offsets.0).unwrap_or(usize::MAX));
    let mut out = StateDict::new();
    for key in names {
        let view = file.tensor(key).map_err(|e| err(e.to_string()))?;
        let dtype = from_safetensors_dtype(view.dtype()).ok_or_else(|| {
            err(format!(
                "tensor {key} has dtype {:?}, which nn does not support",
                view.dtype()
            ))
        })?;
        let tensor =
            Tensor::from_bytes(view.data(), view.shape(), dtype).map_err(|e| err(format!("tensor {key}: {e}")))?;
        out.insert(key.to_owned(), tensor);
    }
    Ok(out)
}

/// The `__metadata__` of a safetensors file's header (PyTorch's `safe_open(path, "pt").metadata()`), reading
/// only the header, checked as [`load_safetensors`] checks it: `None` when the file has none.
pub fn safetensors_metadata(path: &Path) -> Result<Option<HashMap<String, String>>> {
    let (_, header, _) = read_header(path)?;
    Ok(header.metadata)
}

/// The keys, dtypes and shapes of a safetensors file's tensors, in the file's order, reading only its header.
pub fn inspect_safetensors(path: &Path) -> Result<Vec<super::TensorInfo>> {
    let (_, header, _) = read_header(path)?;
    Ok(header
        .entries
        .into_iter()
        .map(|entry| {
            let nn_dtype = from_safetensors_dtype(entry.dtype);
            super::TensorInfo {
                dtype: nn_dtype.map_or_else(|| format!("{:?}", entry.dtype), |d| format!("torch.{}", d.name())),
                key: entry.key,
                nn_dtype,
                shape: entry.shape,
                bytes: entry.bytes,
            }
        })
        .collect())
}

/// One tensor of a safetensors header.
struct Entry {
    key: String,
    dtype: Dtype,
    shape: Vec<usize>,
    bytes: u64,
}

/// A safetensors file's header, checked against the file: its tensors in data order, which cover the data
/// section exactly, each as many bytes as its shape and dtype take.
struct Header {
    name: String,
    entries: Vec<Entry>,
    /// The header's `__metadata__`.
    metadata: Option<HashMap<String, String>>,
}

impl Header {
    fn error(&self, message: String) -> Error {
        Error::SafeTensors {
            path: self.name.clone(),
            message,
        }
    }

    /// The state dict of `make(entry, dtype)` for each entry, in data order; an error names the entry's key
    /// (a dtype nn lacks is one).
    fn tensors<E: std::fmt::Display>(
        self,
        mut make: impl FnMut(&Entry, DType) -> std::result::Result<Tensor, E>,
    ) -> Result<StateDict> {
        let mut out = StateDict::new();
        for entry in &self.entries {
            let dtype = from_safetensors_dtype(entry.dtype).ok_or_else(|| {
                self.error(format!(
                    "tensor {} has dtype {:?}, which nn does not support",
                    entry.key, entry.dtype
                ))
            })?;
            let tensor = make(entry, dtype).map_err(|e| self.error(format!("tensor {}: {e}", entry.key)))?;
            out.insert(entry.key.clone(), tensor);
        }
        Ok(out)
    }
}

/// Opens a safetensors file and reads its header; returns the file and where its data section starts.
fn read_header(path: &Path) -> Result<(std::fs::File, Header, u64)> {
    use std::io::Read;
    let mut header = Header {
        name: path.display().to_string(),
        entries: Vec::new(),
        metadata: None,
    };
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len();
    let mut prefix = [0u8; 8];
    file.read_exact(&mut prefix)
        .map_err(|_| header.error(format!("a file of {file_len} bytes has no 8-byte header length")))?;
    let header_len = checked_header_len(&header, prefix, file_len)?;
    let mut text = vec![0u8; header_len as usize];
    file.read_exact(&mut text).map_err(io)?;
    parse_entries(&mut header, &text, file_len - 8 - header_len)?;
    Ok((file, header, 8 + header_len))
}

/// The header length a file of `file_len` bytes starting with `prefix` claims, if the file holds it (and it is
/// at most [`MAX_HEADER_BYTES`]).
fn checked_header_len(header: &Header, prefix: [u8; 8], file_len: u64) -> Result<u64> {
    let header_len = u64::from_le_bytes(prefix);
    if header_len > MAX_HEADER_BYTES || header_len > file_len - 8 {
        return Err(header.error(format!(
            "its header claims {header_len} bytes, the file holds {} after the length (at most {MAX_HEADER_BYTES})",
            file_len - 8
        )));
    }
    Ok(header_len)
}

/// Parses the header's JSON `text` into `header`'s entries, in data order, checking that they cover the data
/// section of `data_len` bytes exactly, each as many bytes as its shape and dtype take.
fn parse_entries(header: &mut Header, text: &[u8], data_len: u64) -> Result<()> {
    let metadata: safetensors::tensor::Metadata =
        serde_json::from_slice(text).map_err(|e| header.error(format!("its header does not parse: {e}")))?;
    header.metadata = metadata.metadata().clone();
    let mut infos: Vec<(String, &safetensors::tensor::TensorInfo)> = metadata.tensors().into_iter().collect();
    infos.sort_by_key(|(_, info)| info.data_offsets);
    let mut at = 0u64;
    for (key, info) in infos {
        let (begin, end) = (info.data_offsets.0 as u64, info.data_offsets.1 as u64);
        let bits = info
            .shape
            .iter()
            .try_fold(info.dtype.bitsize() as u64, |n, &d| n.checked_mul(d as u64));
        let bytes = bits.filter(|b| b % 8 == 0).map(|b| b / 8);
        if begin != at || end < begin || Some(end - begin) != bytes {
            return Err(header.error(format!(
                "tensor {key} ({:?}, shape {:?}) claims bytes {begin}..{end} of the data section where bytes {at}.. \
                 of {} were expected",
                info.dtype,
                info.shape,
                bytes.map_or_else(|| "an overflowing size".to_owned(), |b| b.to_string())
            )));
        }
        at = end;
        header.entries.push(Entry {
            key,
            dtype: info.dtype,
            shape: info.shape.clone(),
            bytes: end - begin,
        });
    }
    if at != data_len {
        return Err(header.error(format!(
            "its tensors take {at} bytes, its data section holds {data_len}"
        )));
    }
    Ok(())
}

/// The largest safetensors header read (the safetensors crate's own limit).
const MAX_HEADER_BYTES: u64 = 100_000_000;
