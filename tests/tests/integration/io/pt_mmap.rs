//! The memory-mapped `.pt` load (`io::load_pt_mmap`, `ModuleExt::load_pt_mmap`, as `torch.load(mmap=True)`): every
//! checkpoint fixture (zip and legacy, nested, prefixed, tied, views, every dtype) gives what the reading loader
//! gives, keys in the same order, bit for bit, and the same errors; the contiguous tensors of a zip checkpoint
//! really come from the file's pages (shown by damaging every storage's last byte without fixing its CRC-32:
//! the reading loader refuses the file, as pytorch-reader checks the CRC; the mapped one loads the damaged
//! values, as PyTorch's `torch.load` does, mapped or not); storages zipped compressed, views and legacy files
//! are read instead; a refused mapped load changes nothing.
//!
//! Every mapped load here is of a file nothing writes while its tensors are alive (the functions' contract).

use std::io::Write;
use std::path::{Path, PathBuf};

use integration_tests::{WEIGHT_FOLDERS, assert_same_ordered, bit_equal, fixture};
use nn::io::{PtOptions, load_pt, load_pt_mmap};
use nn::prelude::*;
use nn::{Error, StateDict};
use reference::efficientzero::{DynamicsConfig, DynamicsNetwork};

/// A scratch file of this test process.
fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nn-pt-mmap-{}-{name}", std::process::id()))
}

fn mapped(path: &Path, options: &PtOptions) -> nn::Result<StateDict> {
    // SAFETY: the fixtures and this test's scratch files are not written while the dict is alive.
    unsafe { load_pt_mmap(path, options) }
}

/// Every `.pt` fixture with the options it is read with.
fn checkpoints() -> Vec<(String, PtOptions)> {
    let mut all = Vec::new();
    for folder in WEIGHT_FOLDERS {
        all.push((format!("{folder}/weights.pt"), PtOptions::new()));
        all.push((format!("{folder}/weights_legacy.pt"), PtOptions::new()));
    }
    for name in ["tied", "views", "half", "bf16", "dtypes", "protocol4"] {
        all.push((format!("checkpoints/{name}.pt"), PtOptions::new()));
    }
    for name in ["nested", "nested_legacy"] {
        all.push((
            format!("checkpoints/{name}.pt"),
            PtOptions::new().key("model_state_dict"),
        ));
        all.push((
            format!("checkpoints/{name}.pt"),
            PtOptions::new().key("optimizer_state_dict"),
        ));
    }
    all.push((
        "checkpoints/data_parallel.pt".into(),
        PtOptions::new().strip_prefix("module."),
    ));
    all
}

#[test]
fn every_checkpoint_maps_as_it_reads() {
    for (file, options) in checkpoints() {
        let read = load_pt(&fixture(&file), &options).unwrap_or_else(|e| panic!("{file}: {e}"));
        let map = mapped(&fixture(&file), &options).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_same_ordered(&format!("{file} {options:?}"), &map, &read);
    }
}

#[test]
fn errors_are_the_reading_loaders() {
    let cases = [
        ("checkpoints/int16.pt", PtOptions::new()),
        ("checkpoints/nested.pt", PtOptions::new()),
        ("checkpoints/nested.pt", PtOptions::new().key("no_such_key")),
        ("checkpoints/nested.pt", PtOptions::new().key("epoch")),
        ("dynamics_small/weights.safetensors", PtOptions::new()),
    ];
    for (file, options) in cases {
        let read = load_pt(&fixture(file), &options).unwrap_err();
        let map = mapped(&fixture(file), &options).unwrap_err();
        assert_eq!(map.to_string(), read.to_string(), "{file} {options:?}");
    }
}

/// The byte range of each storage entry (`…/data/<key>`) of a zip checkpoint.
fn storage_ranges(path: &Path) -> Vec<(String, usize, usize)> {
    let mut archive = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut ranges = Vec::new();
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).unwrap();
        let name = entry.name().unwrap().into_owned();
        if name.contains("/data/") && !name.ends_with('/') {
            assert_eq!(entry.compression(), zip::CompressionMethod::Stored, "{name}");
            ranges.push((name, entry.data_start().unwrap() as usize, entry.size() as usize));
        }
    }
    assert!(!ranges.is_empty(), "{}: no storage entries", path.display());
    ranges
}

/// A scratch copy of a zip checkpoint with the last byte of each storage whose length `pick` accepts flipped in
/// its lowest bit (a bool stays 0 or 1), the entries' CRC-32 left as they were.
fn damaged_copy(original: &Path, name: &str, pick: impl Fn(usize) -> bool) -> PathBuf {
    let mut bytes = std::fs::read(original).unwrap();
    for (_, start, len) in storage_ranges(original) {
        if pick(len) {
            bytes[start + len - 1] ^= 1;
        }
    }
    let damaged = scratch(name);
    std::fs::write(&damaged, &bytes).unwrap();
    damaged
}

#[test]
fn contiguous_tensors_are_the_files_pages() {
    // The last byte of every storage flipped in its lowest bit (a bool stays 0 or 1), the CRC-32 left as it was.
    for (file, options) in [
        ("zoo/weights.pt", PtOptions::new()),
        ("dynamics_small/weights.pt", PtOptions::new()),
        ("dynamics_wide/weights.pt", PtOptions::new()),
        ("checkpoints/dtypes.pt", PtOptions::new()),
        ("checkpoints/bf16.pt", PtOptions::new()),
        ("checkpoints/tied.pt", PtOptions::new()),
        ("checkpoints/protocol4.pt", PtOptions::new()),
        ("checkpoints/nested.pt", PtOptions::new().key("model_state_dict")),
    ] {
        let original = fixture(file);
        let damaged = damaged_copy(&original, &file.replace('/', "-"), |_| true);

        let err = load_pt(&damaged, &options).unwrap_err();
        assert!(err.to_string().to_lowercase().contains("checksum"), "{file}: {err}");
        let want = load_pt(&original, &options).unwrap();
        // Every storage is damaged: the error is the first tensor's in saved order.
        let first = want.keys().next().unwrap();
        assert!(err.to_string().contains(&format!("'{first}'")), "{file}: {err}");
        let got = mapped(&damaged, &options).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{file}"
        );
        for (key, tensor) in &want {
            // Each tensor of these files is the whole of its storage: only its last element differs, in the
            // lowest bit of its last byte.
            let (got_bytes, want_bytes) = (got[key].to_bytes().unwrap(), tensor.to_bytes().unwrap());
            let last = want_bytes.len() - 1;
            assert_eq!(got_bytes[..last], want_bytes[..last], "{file}: {key}");
            assert_eq!(got_bytes[last], want_bytes[last] ^ 1, "{file}: {key} was not mapped");
        }
        std::fs::remove_file(damaged).ok();
    }
}

#[test]
fn views_and_legacy_files_are_read_where_they_cannot_be_mapped() {
    // views.pt: `plain` and `offset` (a contiguous slice) are mapped; `transposed`, `sliced` and `expanded` are read
    // through pytorch-reader, which checks the CRC-32 of a storage it reads whole: damage in `expanded`'s own
    // storage is refused by the mapped loader as by the reading one.
    let original = fixture("checkpoints/views.pt");
    let read = load_pt(&original, &PtOptions::new()).unwrap();
    let map = mapped(&original, &PtOptions::new()).unwrap();
    assert_same_ordered("views", &map, &read);

    // `expanded`'s storage is the only one of 2 float32 elements.
    assert_eq!(
        storage_ranges(&original)
            .iter()
            .filter(|(_, _, len)| *len == 2 * 4)
            .count(),
        1
    );
    let damaged = damaged_copy(&original, "views.pt", |len| len == 2 * 4);
    let err = mapped(&damaged, &PtOptions::new()).unwrap_err();
    assert!(err.to_string().to_lowercase().contains("checksum"), "{err}");
    std::fs::remove_file(damaged).ok();

    // A legacy checkpoint is read as `load_pt` reads it.
    let legacy = fixture("dynamics_small/weights_legacy.pt");
    assert_same_ordered(
        "legacy",
        &mapped(&legacy, &PtOptions::new()).unwrap(),
        &load_pt(&legacy, &PtOptions::new()).unwrap(),
    );
}

#[test]
fn a_whole_model_pickle_is_read() {
    // `torch.save(model)`: pytorch-reader reads the module object as its state dict, nested by child; the layout
    // reader leaves such pickles to it, so the values are read (and their CRC-32 checked) rather than mapped.
    let path = fixture("checkpoints/whole_model.pt");
    let twin = integration_tests::tensors("checkpoints/tied.safetensors");
    let map = mapped(&path, &PtOptions::new()).unwrap();
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    assert_eq!(keys, ["embed.weight", "head.weight"]);
    for (key, tensor) in &twin {
        assert!(bit_equal(&map[key], tensor), "{key}");
    }
    let damaged = damaged_copy(&path, "whole_model.pt", |_| true);
    let err = mapped(&damaged, &PtOptions::new()).unwrap_err();
    assert!(err.to_string().to_lowercase().contains("checksum"), "{err}");
    std::fs::remove_file(damaged).ok();
}

#[test]
fn storages_zipped_compressed_are_read() {
    // The same checkpoint rewritten with every entry deflated: pytorch-reader inflates them; nothing is mapped.
    let original = fixture("dynamics_small/weights.pt");
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&original).unwrap()).unwrap();
    let path = scratch("deflated.pt");
    let mut out = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).unwrap();
        let name = entry.name().unwrap().into_owned();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data).unwrap();
        out.start_file(name, options).unwrap();
        out.write_all(&data).unwrap();
    }
    out.finish().unwrap();
    let mut rezipped = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!(
        rezipped.by_index_raw(1).unwrap().compression(),
        zip::CompressionMethod::Deflated
    );
    assert_same_ordered(
        "deflated",
        &mapped(&path, &PtOptions::new()).unwrap(),
        &load_pt(&original, &PtOptions::new()).unwrap(),
    );
    std::fs::remove_file(path).ok();
}

fn dynamics(config: &str) -> DynamicsNetwork {
    let config = DynamicsConfig::from_file(&fixture(&format!("{config}/config.json"))).unwrap();
    DynamicsNetwork::new(config).unwrap()
}

#[test]
fn a_model_loaded_through_the_mapping_equals_one_loaded_by_reading() {
    for config in WEIGHT_FOLDERS.iter().filter(|f| f.starts_with("dynamics")) {
        let file = fixture(&format!("{config}/weights.pt"));
        let mut read = dynamics(config);
        read.load_pt(&file, true).unwrap();
        let mut map = dynamics(config);
        // SAFETY: the fixture is not written during the call; the model has no load hooks.
        unsafe { map.load_pt_mmap(&file, true, &PtOptions::new()) }.unwrap();
        assert_same_ordered(config, &map.state_dict(), &read.state_dict());
    }
    // Nested and prefixed, into a float16 model (cast as PyTorch's copy).
    let mut half = dynamics("dynamics_small");
    half.to_dtype(nn::DType::F16).unwrap();
    let mut want = dynamics("dynamics_small");
    want.to_dtype(nn::DType::F16).unwrap();
    want.load_pt_with(
        fixture("checkpoints/data_parallel.pt"),
        true,
        &PtOptions::new().strip_prefix("module."),
    )
    .unwrap();
    // SAFETY: as above.
    unsafe {
        half.load_pt_mmap(
            fixture("checkpoints/data_parallel.pt"),
            true,
            &PtOptions::new().strip_prefix("module."),
        )
    }
    .unwrap();
    assert_same_ordered("data_parallel in f16", &half.state_dict(), &want.state_dict());
}

#[test]
fn a_refused_mapped_load_changes_nothing() {
    let mut net = dynamics("dynamics_small");
    net.load_pt(fixture("dynamics_small/weights.pt"), true).unwrap();
    let before = net.state_dict().deep_copy().unwrap();
    for (file, strict) in [("dynamics_wide/weights.pt", false), ("dynamics_wide/weights.pt", true)] {
        // SAFETY: the fixture is not written during the call; no load hooks.
        let err = unsafe { net.load_pt_mmap(fixture(file), strict, &PtOptions::new()) }.unwrap_err();
        assert!(matches!(err, Error::Load(_)), "{file}: {err}");
        assert_same_ordered(file, &net.state_dict(), &before);
    }
    // A file cut inside its last storage: the zip's central directory is gone, refused before anything.
    let bytes = std::fs::read(fixture("dynamics_small/weights.pt")).unwrap();
    let cut = scratch("cut.pt");
    std::fs::write(&cut, &bytes[..bytes.len() - 300]).unwrap();
    // SAFETY: as above.
    let err = unsafe { net.load_pt_mmap(&cut, true, &PtOptions::new()) }.unwrap_err();
    assert!(err.to_string().contains("cut.pt"), "{err}");
    assert_same_ordered("cut", &net.state_dict(), &before);
    std::fs::remove_file(cut).ok();
}
