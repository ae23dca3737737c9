//! A zip checkpoint mapped read-only, and the tensors that can be made of its pages in place: `torch.save` stores
//! each storage as an uncompressed zip entry (64-byte aligned since PyTorch 1.13), so a contiguous tensor's
//! elements are a range of the file.

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::Arc;

use memmap2::Mmap;
use zip::{CompressionMethod, ZipArchive, ZipReadOptions};

use super::layout::{Layout, tensor_layouts};
use crate::{DType, Result, Tensor};

/// The checkpoint's mapping, each tensor's layout, and where each storage's bytes lie in the file.
pub(crate) struct MappedStorages {
    map: Arc<Mmap>,
    layouts: HashMap<String, Layout>,
    /// Per storage key, the byte range of its stored entry in the file; [`None`] for an entry that is
    /// compressed or damaged, whose tensors are read through pytorch-reader.
    entries: HashMap<String, Option<(usize, usize)>>,
}

impl MappedStorages {
    /// The mapping of a zip checkpoint whose `data.pkl` names the same tensors, with the same dtypes and shapes,
    /// as pytorch-reader read from it (`tensors`, by their names before any prefix is stripped); [`None`] for a
    /// legacy file, a pickle the layout reader does not follow, or any disagreement: the loader then reads.
    pub fn new(map: Arc<Mmap>, key: Option<&str>, tensors: &[&pytorch_reader::Tensor]) -> Option<MappedStorages> {
        let mut archive = ZipArchive::new(Cursor::new(&map[..])).ok()?;
        let names: Vec<String> = archive
            .file_names()
            .map(|n| n.ok().map(|n| n.into_owned()))
            .collect::<Option<_>>()?;
        // The directory holding data.pkl is the root of the other entries, as pytorch-reader finds it.
        let root = names
            .iter()
            .filter_map(|name| name.strip_suffix("data.pkl"))
            .filter(|root| root.is_empty() || root.ends_with('/'))
            .min_by_key(|root| root.len())?
            .to_owned();
        let (start, len) = stored_entry(&mut archive, &format!("{root}data.pkl"), map.len())?;
        let layouts = tensor_layouts(&map[start..start + len], key)?;
        let agrees = layouts.len() == tensors.len()
            && tensors.iter().all(|t| {
                layouts
                    .get(&t.name)
                    .is_some_and(|l| l.dtype == t.dtype() && l.shape == t.shape())
            });
        if !agrees {
            return None;
        }
        let mut entries = HashMap::new();
        for layout in layouts.values() {
            if !entries.contains_key(&layout.storage) {
                let entry = stored_entry(&mut archive, &format!("{root}data/{}", layout.storage), map.len());
                entries.insert(layout.storage.clone(), entry);
            }
        }
        Some(MappedStorages { map, layouts, entries })
    }

    /// The tensor named `name` made of the file's pages, if its elements are one range of a stored entry
    /// (contiguous, not empty); [`None`] otherwise (a transposed or strided view, an expansion), for the loader to
    /// read it.
    pub fn tensor(&self, name: &str, dtype: DType) -> Option<Result<Tensor>> {
        let layout = self.layouts.get(name)?;
        let (entry_start, entry_len) = (*self.entries.get(&layout.storage)?)?;
        let size = layout.dtype.size();
        let numel = layout.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))?;
        if numel == 0 || !layout.is_contiguous() || dtype.size_in_bytes() != size {
            return None;
        }
        let start = layout.offset.checked_mul(size)?;
        let end = numel.checked_mul(size)?.checked_add(start)?;
        if end > entry_len || end > layout.storage_len.checked_mul(size)? {
            return None;
        }
        Some(Tensor::from_mapped(
            &self.map,
            entry_start + start,
            &layout.shape,
            dtype,
        ))
    }
}

/// The byte range of an entry's data if it is stored uncompressed, whole and within the file, and the zip reader
/// opens it as pytorch-reader does (which refuses, for instance, an encrypted entry).
fn stored_entry(archive: &mut ZipArchive<Cursor<&[u8]>>, name: &str, file_len: usize) -> Option<(usize, usize)> {
    let index = archive.index_for_name(name)?;
    let entry = archive
        .by_index_with_options(index, ZipReadOptions::new().ignore_crc32(true))
        .ok()?;
    if entry.compression() != CompressionMethod::Stored || entry.compressed_size() != entry.size() {
        return None;
    }
    let start = usize::try_from(entry.data_start()?).ok()?;
    let len = usize::try_from(entry.size()).ok()?;
    (start.checked_add(len)? <= file_len).then_some((start, len))
}
