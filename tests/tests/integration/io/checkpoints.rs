//! PyTorch checkpoints (`.pt`): every fixture written by `fixtures/generate/checkpoints.py` (PyTorch 2.5.1,
//! zip and legacy formats) reads as its safetensors twin bit for bit, in `state_dict()`'s saved order; nested,
//! prefixed, tied, viewed and half-precision checkpoints; typed errors; a refused load changes nothing; the
//! DynamicsNetwork loaded from `.pt` gives PyTorch's outputs.

use integration_tests::zoo::Zoo;
use integration_tests::{WEIGHT_FOLDERS, bit_equal, fixture, lines, tensors};
use nn::io::{PtOptions, inspect, load_pt};
use nn::prelude::*;
use nn::{Error, StateDict};
use reference::efficientzero::{DynamicsConfig, DynamicsNetwork, check_export_with};

/// Same keys in the same order (when `ordered`), each tensor bit-equal.
fn assert_same(what: &str, got: &StateDict, want: &StateDict) {
    let mut got_keys: Vec<&String> = got.keys().collect();
    let mut want_keys: Vec<&String> = want.keys().collect();
    got_keys.sort();
    want_keys.sort();
    assert_eq!(got_keys, want_keys, "{what}: keys");
    for (key, tensor) in want {
        assert!(
            bit_equal(&got[key], tensor),
            "{what}: {key} differs: {:?} vs {:?}",
            got[key],
            tensor
        );
    }
}

fn saved_order(folder: &str) -> Vec<String> {
    lines(&format!("{folder}/state_dict_keys.txt"))
        .into_iter()
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect()
}

#[test]
fn every_folder_reads_as_its_safetensors_twin_in_saved_order_zip_and_legacy() {
    for folder in WEIGHT_FOLDERS {
        let twin = tensors(&format!("{folder}/weights.safetensors"));
        for file in ["weights.pt", "weights_legacy.pt"] {
            let what = format!("{folder}/{file}");
            let sd = StateDict::from_pt(fixture(&what)).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_same(&what, &sd, &twin);
            assert_eq!(
                sd.keys().cloned().collect::<Vec<_>>(),
                saved_order(folder),
                "{what}: order"
            );
        }
    }
}

#[test]
fn dynamics_network_from_pt_gives_pytorchs_outputs_and_gradients() {
    for folder in WEIGHT_FOLDERS.iter().filter(|f| f.starts_with("dynamics")) {
        for file in ["weights.pt", "weights_legacy.pt"] {
            let report = check_export_with(&fixture(folder), &fixture(&format!("{folder}/{file}")), Device::Cpu);
            assert_eq!(report.failed(), 0, "{folder}/{file}:\n{report}");
            assert_eq!(report.checks.len(), 20, "{folder}/{file}:\n{report}");
        }
    }
}

#[test]
fn zoo_from_pt_gives_pytorchs_output() {
    let io = tensors("zoo/io.safetensors");
    for file in ["zoo/weights.pt", "zoo/weights_legacy.pt"] {
        let mut zoo = Zoo::default();
        let keys = zoo.load_pt(fixture(file), true).unwrap();
        assert!(keys.is_empty(), "{file}: {keys:?}");
        let out = zoo.forward(io["input"].clone()).unwrap();
        integration_tests::assert_close(file, &out, &io["output"]);
    }
}

fn dynamics_small() -> DynamicsNetwork {
    let config = DynamicsConfig::from_file(&fixture("dynamics_small/config.json")).unwrap();
    DynamicsNetwork::new(config).unwrap()
}

#[test]
fn nested_checkpoint_needs_its_key_and_the_error_lists_the_top_level() {
    let twin = tensors("dynamics_small/weights.safetensors");
    for file in ["checkpoints/nested.pt", "checkpoints/nested_legacy.pt"] {
        let err = StateDict::from_pt(fixture(file)).unwrap_err();
        match &err {
            Error::NestedCheckpoint {
                top_level_keys,
                suggestion,
                ..
            } => {
                assert_eq!(
                    top_level_keys,
                    &["config", "epoch", "model_state_dict", "optimizer_state_dict"]
                );
                assert_eq!(suggestion.as_deref(), Some("model_state_dict"));
            }
            other => panic!("{file}: {other}"),
        }
        assert!(
            err.to_string().contains(r#"PtOptions::new().key("model_state_dict")"#),
            "{err}"
        );

        let options = PtOptions::new().key("model_state_dict");
        let sd = load_pt(&fixture(file), &options).unwrap();
        assert_same(file, &sd, &twin);
        assert_eq!(sd.keys().cloned().collect::<Vec<_>>(), saved_order("dynamics_small"));
        let mut net = dynamics_small();
        net.load_pt_with(fixture(file), true, &options).unwrap();
        assert_same(file, &net.state_dict(), &twin);

        let err = load_pt(&fixture(file), &PtOptions::new().key("weights")).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("'weights' not found") && message.contains("model_state_dict"),
            "{message}"
        );

        // The optimizer's state is read as nested dicts: state.{index}.{name}.
        let opt = load_pt(&fixture(file), &PtOptions::new().key("optimizer_state_dict")).unwrap();
        assert_eq!(opt.len(), 37 * 3, "{file}: {:?}", opt.keys().collect::<Vec<_>>());
        assert_eq!(opt["state.0.exp_avg"].to_vec::<f32>().unwrap()[0], 0.1);
    }
}

#[test]
fn data_parallel_prefix_is_stripped_on_request() {
    let twin = tensors("dynamics_small/weights.safetensors");
    let file = fixture("checkpoints/data_parallel.pt");
    let mut net = dynamics_small();
    let before = net.state_dict().deep_copy().unwrap();
    let Err(Error::Load(err)) = net.load_pt(&file, true) else {
        panic!("a prefixed checkpoint loaded strictly")
    };
    assert!(err.unexpected_keys.iter().all(|k| k.starts_with("module.")));
    // As PyTorch's: a dict without versions is an old one, for which BatchNorm fills `num_batches_tracked`.
    let filled = twin.keys().filter(|k| k.ends_with("num_batches_tracked")).count();
    assert!(filled > 0);
    assert_eq!(err.missing_keys.len(), twin.len() - filled, "{:?}", err.missing_keys);
    assert_same("after a refused load", &net.state_dict(), &before);

    net.load_pt_with(&file, true, &PtOptions::new().strip_prefix("module."))
        .unwrap();
    assert_same("data_parallel.pt", &net.state_dict(), &twin);
    let sd = load_pt(&file, &PtOptions::new().strip_prefix("module.")).unwrap();
    assert_eq!(sd.keys().cloned().collect::<Vec<_>>(), saved_order("dynamics_small"));
}

#[derive(Module)]
struct Tied {
    embed: Embedding,
    head: Linear,
}

#[test]
fn tied_weights_views_and_every_dtype_read_as_their_twins() {
    for name in ["tied", "views", "half", "bf16", "dtypes"] {
        let what = format!("checkpoints/{name}.pt");
        let sd = StateDict::from_pt(fixture(&what)).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_same(&what, &sd, &tensors(&format!("checkpoints/{name}.safetensors")));
    }
    let order = |name: &str| {
        let sd = StateDict::from_pt(fixture(&format!("checkpoints/{name}.pt"))).unwrap();
        sd.keys().cloned().collect::<Vec<_>>()
    };
    assert_eq!(order("views"), ["transposed", "sliced", "offset", "expanded", "plain"]);
    assert_eq!(
        order("dtypes"),
        ["f16", "bf16", "f32", "f64", "i64", "i32", "u8", "bool"]
    );
    assert_eq!(order("tied"), ["embed.weight", "head.weight"]);

    let mut tied = Tied {
        embed: Embedding::new(10, 4, None).unwrap(),
        head: Linear::new(4, 10, false),
    };
    tied.load_pt(fixture("checkpoints/tied.pt"), true).unwrap();
    assert!(bit_equal(&tied.embed.weight.data(), &tied.head.weight.data()));
}

#[test]
fn a_whole_pickled_model_loads_as_its_state_dict() {
    // `torch.save(model)` (whole_model.pt: a `Tied` module object): its top level is the module's children, which
    // hold no tensor themselves, yet it is the module's state dict, not a nesting to pick a key from.
    let path = fixture("checkpoints/whole_model.pt");
    let sd = StateDict::from_pt(&path).unwrap();
    assert_same("whole_model", &sd, &tensors("checkpoints/tied.safetensors"));
    let mut tied = Tied {
        embed: Embedding::new(10, 4, None).unwrap(),
        head: Linear::new(4, 10, false),
    };
    tied.load_pt(&path, true).unwrap();
    assert!(bit_equal(&tied.embed.weight.data(), &sd["embed.weight"]));
    assert!(bit_equal(&tied.head.weight.data(), &sd["head.weight"]));
    // A nested checkpoint (a dict of dicts) is still refused without its key.
    assert!(matches!(
        StateDict::from_pt(fixture("checkpoints/nested.pt")),
        Err(Error::NestedCheckpoint { .. })
    ));
}

#[test]
fn half_checkpoints_load_into_a_float32_model_as_pytorchs_copy() {
    for name in ["half", "bf16"] {
        let mut from_pt = Zoo::default();
        from_pt
            .load_pt(fixture(&format!("checkpoints/{name}.pt")), true)
            .unwrap();
        let mut from_twin = Zoo::default();
        from_twin
            .load_safetensors(fixture(&format!("checkpoints/{name}.safetensors")), true)
            .unwrap();
        assert_same(name, &from_pt.state_dict(), &from_twin.state_dict());
        assert_eq!(from_pt.state_dict()["embed.weight"].dtype(), DType::F32);
    }
}

#[test]
fn a_dtype_nn_lacks_is_a_typed_error_naming_the_key() {
    let err = StateDict::from_pt(fixture("checkpoints/int16.pt")).unwrap_err();
    let Error::CheckpointDType { key, dtype, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!((key.as_str(), dtype.as_str()), ("small_int", "torch.int16"));
}

#[test]
fn a_refused_or_damaged_load_leaves_the_module_as_it_was() {
    let mut net = dynamics_small();
    net.load_pt(fixture("dynamics_small/weights.pt"), true).unwrap();
    let before = net.state_dict().deep_copy().unwrap();
    // Another model's weights: missing and unexpected keys, refused whether strict or not for shapes.
    assert!(matches!(
        net.load_pt(fixture("dynamics_wide/weights.pt"), false),
        Err(Error::Load(_))
    ));
    assert_same("after a mismatched load", &net.state_dict(), &before);
    // A file cut short, one with a flipped byte in its pickle, one that is no checkpoint at all.
    let bytes = std::fs::read(fixture("dynamics_small/weights.pt")).unwrap();
    let dir = std::env::temp_dir().join(format!("nn-checkpoints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut flipped = bytes.clone();
    flipped[100] ^= 0xff;
    for (name, damaged) in [
        ("cut.pt", bytes[..bytes.len() / 2].to_vec()),
        ("flipped.pt", flipped),
        ("text.pt", b"not a checkpoint".to_vec()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, damaged).unwrap();
        let err = net.load_pt(&path, true).unwrap_err();
        assert!(err.to_string().contains(name), "{name}: {err}");
        assert_same(name, &net.state_dict(), &before);
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn inspect_lists_keys_dtypes_and_shapes_without_reading_values() {
    let infos = inspect(&fixture("checkpoints/dtypes.pt"), &PtOptions::new()).unwrap();
    let listed: Vec<String> = infos
        .iter()
        .map(|i| format!("{} {} {:?}", i.key, i.dtype, i.shape))
        .collect();
    let twin = tensors("checkpoints/dtypes.safetensors");
    let expected: Vec<String> = ["f16", "bf16", "f32", "f64", "i64", "i32", "u8", "bool"]
        .iter()
        .map(|k| format!("{k} torch.{} {:?}", twin[*k].dtype().name(), twin[*k].shape().dims()))
        .collect();
    assert_eq!(listed, expected);
    let int16 = inspect(&fixture("checkpoints/int16.pt"), &PtOptions::new()).unwrap();
    assert_eq!(int16[1].dtype, "torch.int16");
    assert_eq!(int16[1].nn_dtype, None);
    assert_eq!(int16[1].bytes, 8);

    let safetensors = inspect(&fixture("dynamics_small/weights.safetensors"), &PtOptions::new()).unwrap();
    let pt = inspect(&fixture("dynamics_small/weights.pt"), &PtOptions::new()).unwrap();
    let sorted = |mut v: Vec<nn::io::TensorInfo>| {
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    };
    assert_eq!(sorted(safetensors), sorted(pt));
}

/// safetensors' `__metadata__` (PyTorch's `save_file(..., metadata=...)`, `safe_open(...).metadata()`): read
/// from a file PyTorch wrote, `None` where the writer put none, written and read back by nn.
#[test]
fn safetensors_metadata_is_read_and_written() {
    use std::collections::HashMap;
    let want = HashMap::from([
        ("format".to_owned(), "pt".to_owned()),
        ("epoch".to_owned(), "7".to_owned()),
        ("note".to_owned(), "ünïcode, \"quoted\"".to_owned()),
    ]);
    let written = fixture("checkpoints/metadata.safetensors");
    assert_eq!(nn::io::safetensors_metadata(&written).unwrap(), Some(want.clone()));
    assert_eq!(
        nn::io::safetensors_metadata(&fixture("checkpoints/tied.safetensors")).unwrap(),
        None
    );

    let sd = tensors("checkpoints/metadata.safetensors");
    let dir = std::env::temp_dir().join(format!("nn-metadata-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (with, plain, none) = (
        dir.join("with.safetensors"),
        dir.join("plain.safetensors"),
        dir.join("none.safetensors"),
    );
    nn::io::save_safetensors_with_metadata(&sd, &with, Some(want.clone())).unwrap();
    nn::io::save_safetensors(&sd, &plain).unwrap();
    nn::io::save_safetensors_with_metadata(&sd, &none, None).unwrap();
    assert_eq!(nn::io::safetensors_metadata(&with).unwrap(), Some(want));
    let pt = HashMap::from([("format".to_owned(), "pt".to_owned())]);
    assert_eq!(
        nn::io::safetensors_metadata(&plain).unwrap(),
        Some(pt),
        "PyTorch's save_model writes this"
    );
    assert_eq!(nn::io::safetensors_metadata(&none).unwrap(), None);
    assert!(bit_equal(&nn::io::load_safetensors(&with).unwrap()["w"], &sd["w"]));

    // A damaged header is a typed error naming the file, as for the tensors.
    std::fs::write(&none, b"\x10\0\0\0\0\0\0\0{\"__metadata__\":").unwrap();
    assert!(matches!(
        nn::io::safetensors_metadata(&none),
        Err(Error::SafeTensors { .. })
    ));
    std::fs::remove_dir_all(&dir).ok();
}
