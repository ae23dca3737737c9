//! The memory-mapped safetensors load (`io::load_safetensors_mmap`, `ModuleExt::load_safetensors_mmap`): the same
//! tensors as the reading loader, bit for bit; mapped tensors that work as any other and never write the file; a
//! load that copies into the module's own storage (handles taken before see the new values, as PyTorch's
//! `param.copy_(input)`), and that changes nothing when it is refused, whichever way it is refused. Also the
//! reading loader's positioned reads on the threads, for tensors large enough to be split.
//!
//! Every mapped load here is of a file nothing writes while its tensors are alive (the functions' contract).

use integration_tests::zoo::Zoo;
use integration_tests::{assert_same_ordered, bit_equal, fixture, tensors};
use nn::prelude::*;
use nn::{DType, Error, StateDict, Tensor, io};

/// A scratch file of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("nn-mmap-{}-{name}", std::process::id()))
}

fn mapped(path: &std::path::Path) -> nn::Result<StateDict> {
    // SAFETY: the fixtures and this test's scratch files are not written while the dict is alive.
    unsafe { io::load_safetensors_mmap(path) }
}

#[test]
fn every_fixture_maps_as_it_reads() {
    for file in [
        "zoo/weights.safetensors",
        "dynamics_small/weights.safetensors",
        "dynamics_gelu_ln/weights.safetensors",
        "dynamics_ln_downsample/weights.safetensors",
        "dynamics_prelu_deep/weights.safetensors",
        "dynamics_wide/weights.safetensors",
        "checkpoints/dtypes.safetensors",
        "checkpoints/bf16.safetensors",
        "checkpoints/half.safetensors",
        "checkpoints/tied.safetensors",
        "checkpoints/views.safetensors",
        "activation/extremes.safetensors",
    ] {
        let read = tensors(file);
        let map = mapped(&fixture(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_same_ordered(file, &map, &read);
    }
}

#[test]
fn a_model_loaded_through_the_mapping_equals_one_loaded_by_reading() {
    let file = fixture("zoo/weights.safetensors");
    let mut read = Zoo::default();
    read.load_safetensors(&file, true).unwrap();
    let mut map = Zoo::default();
    // SAFETY: the fixture is not written during the call; the zoo has no load hooks.
    unsafe { map.load_safetensors_mmap(&file, true) }.unwrap();
    assert_same_ordered("zoo", &map.state_dict(), &read.state_dict());

    // Into a bf16 model: cast as PyTorch's copy, from the mapped f32 values.
    let mut half = Zoo::default();
    half.to_dtype(DType::BF16).unwrap();
    let mut want = Zoo::default();
    want.to_dtype(DType::BF16).unwrap();
    want.load_safetensors(&file, true).unwrap();
    // SAFETY: as above.
    unsafe { half.load_safetensors_mmap(&file, true) }.unwrap();
    assert_same_ordered("zoo in bf16", &half.state_dict(), &want.state_dict());
}

#[test]
fn mapped_tensors_compute_and_writes_never_reach_the_file() {
    let path = scratch("writes.safetensors");
    let mut sd = StateDict::new();
    sd.insert(
        "a".into(),
        Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]).unwrap(),
    );
    sd.insert("b".into(), Tensor::from_vec(vec![0.5f64, -0.5], [2]).unwrap());
    sd.insert("flags".into(), Tensor::from_vec(vec![true, false, true], [3]).unwrap());
    io::save_safetensors(&sd, &path).unwrap();
    let bytes = std::fs::read(&path).unwrap();

    let map = mapped(&path).unwrap();
    let a = &map["a"];
    assert_eq!(
        a.matmul(a).unwrap().to_vec::<f32>().unwrap(),
        vec![7.0, 10.0, 15.0, 22.0]
    );
    assert_eq!(
        a.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
        vec![1.0, 2.0, 3.0, 4.0]
    );
    assert_eq!(map["b"].to_bytes().unwrap(), sd["b"].to_bytes().unwrap());
    assert_eq!(map["flags"].to_vec::<bool>().unwrap(), vec![true, false, true]);

    // A handle and a deep copy taken before the writes.
    let handle = a.clone();
    let copy = a.deep_copy().unwrap();
    a.fill_(9.0).unwrap();
    assert_eq!(
        handle.to_vec::<f32>().unwrap(),
        vec![9.0; 4],
        "a write is seen through every handle"
    );
    assert_eq!(copy.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    map["b"]
        .copy_(&Tensor::from_vec(vec![7.0f32, 8.0], [2]).unwrap())
        .unwrap();
    assert_eq!(map["b"].to_vec::<f64>().unwrap(), vec![7.0, 8.0]);
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "the file is never written");

    // A tensor copied from a mapped one owns its memory: it outlives the mapping.
    let target = Tensor::zeros([2], DType::F64);
    let again = mapped(&path).unwrap();
    target.copy_(&again["b"]).unwrap();
    drop(again);
    assert_eq!(target.to_vec::<f64>().unwrap(), vec![0.5, -0.5]);
    drop(map);
    std::fs::remove_file(path).ok();
}

#[test]
fn bool_bytes_other_than_zero_and_one_are_refused() {
    let path = scratch("bool.safetensors");
    let mut sd = StateDict::new();
    sd.insert("flags".into(), Tensor::from_vec(vec![true, false, true], [3]).unwrap());
    io::save_safetensors(&sd, &path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] = 2;
    std::fs::write(&path, &bytes).unwrap();
    let err = mapped(&path).unwrap_err();
    assert!(err.to_string().contains("flags"), "{err}");
    assert!(err.to_string().contains("0 or 1"), "{err}");
    std::fs::remove_file(path).ok();
}

#[test]
fn a_load_writes_into_the_modules_own_storage() {
    // PyTorch's load copies into each parameter (`param.copy_(input)`): a handle taken before sees the values.
    let mut fc = Linear::new(3, 2, true);
    let before = fc.state_dict();
    let weight = before["weight"].clone();
    let id = weight.storage_id();
    let source = Linear::new(3, 2, true).state_dict().deep_copy().unwrap();
    fc.load_state_dict(&source, true, false).unwrap();
    assert!(bit_equal(&weight, &source["weight"]));
    assert_eq!(fc.state_dict()["weight"].storage_id(), id);
    // The load copied: writing the source afterwards leaves the module alone.
    source["weight"].fill_(5.0).unwrap();
    assert!(!bit_equal(&fc.state_dict()["weight"], &source["weight"]));

    // The same through a mapped file.
    let path = scratch("linear.safetensors");
    Linear::new(3, 2, true).save_safetensors(&path).unwrap();
    // SAFETY: the file is not written during the call; the layer has no load hooks.
    unsafe { fc.load_safetensors_mmap(&path, true) }.unwrap();
    assert!(bit_equal(&weight, &tensors_at(&path)["weight"]));
    assert_eq!(fc.state_dict()["weight"].storage_id(), id);
    std::fs::remove_file(path).ok();
}

fn tensors_at(path: &std::path::Path) -> StateDict {
    io::load_safetensors(path).unwrap()
}

/// A module with extra state that refuses every value but its own: a refused extra state undoes the load.
#[derive(Module)]
#[module(extra_state)]
struct Picky {
    fc: Linear,
    #[module(skip)]
    accepted: i64,
}

impl Picky {
    fn new() -> Picky {
        Picky {
            fc: Linear::new(4, 3, true),
            accepted: 1,
        }
    }
}

impl nn::module::ExtraState for Picky {
    fn get_extra_state(&self) -> Tensor {
        Tensor::from_vec(vec![self.accepted], [1]).unwrap()
    }
    fn set_extra_state(&mut self, state: Tensor) -> nn::Result<()> {
        match state.to_vec::<i64>()?.as_slice() {
            [v] if *v == self.accepted => Ok(()),
            other => Err(Error::invalid("set_extra_state", format!("refused {other:?}"))),
        }
    }
}

#[test]
fn a_refused_mapped_load_changes_nothing() {
    let path = scratch("refused.safetensors");
    // A shape mismatch (found before anything changes) and a missing key under strict.
    let mut fc = Linear::new(4, 3, true);
    let before = fc.state_dict().deep_copy().unwrap();
    Linear::new(5, 3, true).save_safetensors(&path).unwrap();
    // SAFETY: the file is not written during the call; no load hooks.
    assert!(matches!(
        unsafe { fc.load_safetensors_mmap(&path, true) },
        Err(Error::Load(_))
    ));
    assert_same_ordered("after a shape mismatch", &fc.state_dict(), &before);
    Linear::new(4, 3, false).save_safetensors(&path).unwrap();
    // SAFETY: as above.
    assert!(matches!(
        unsafe { fc.load_safetensors_mmap(&path, true) },
        Err(Error::Load(_))
    ));
    assert_same_ordered("after a missing bias", &fc.state_dict(), &before);

    // Refused in phase two, after the weights were put in place: they are put back.
    let mut picky = Picky::new();
    let before = picky.state_dict().deep_copy().unwrap();
    let mut other = Picky::new();
    other.accepted = 2;
    other.save_safetensors(&path).unwrap();
    // SAFETY: as above.
    let err = unsafe { picky.load_safetensors_mmap(&path, true) }.unwrap_err();
    assert!(err.to_string().contains("refused"), "{err}");
    assert_same_ordered("after a refused extra state", &picky.state_dict(), &before);
    std::fs::remove_file(path).ok();
}

#[test]
fn large_tensors_read_in_pieces_on_the_threads_equal_their_values() {
    // 24 MiB and 5 MiB + 4 bytes: split into pieces (from 8 MiB), and an odd length; distinct values everywhere.
    let path = scratch("large.safetensors");
    let mut sd = StateDict::new();
    sd.insert(
        "big".into(),
        Tensor::arange(0.0, (6 << 20) as f64, 1.0, DType::F32).unwrap(),
    );
    sd.insert(
        "odd".into(),
        Tensor::arange(0.0, ((5 << 20) / 8 + 1) as f64, 1.0, DType::I64).unwrap(),
    );
    io::save_safetensors(&sd, &path).unwrap();
    for (what, got) in [
        ("read", io::load_safetensors(&path).unwrap()),
        ("mapped", mapped(&path).unwrap()),
    ] {
        assert_eq!(got.len(), 2, "{what}");
        for (key, tensor) in &sd {
            assert!(bit_equal(&got[key], tensor), "{what}: {key} differs");
        }
    }
    // Cut short inside the last tensor: refused, naming it.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 4096]).unwrap();
    let err = io::load_safetensors(&path).unwrap_err();
    assert!(err.to_string().contains("data section"), "{err}");
    std::fs::remove_file(path).ok();
}
