//! Module semantics that PyTorch's own unit tests check, each test citing the PyTorch 2.5.1 test it mirrors
//! (test/nn/test_load_state_dict.py, test/nn/test_module_hooks.py, test/test_nn.py).

use std::sync::{Arc, Mutex};

use nn::module::CustomStateDict;
use nn::prelude::*;

/// `Sequential(Sequential(Linear(1, 1)), Linear(1, 1))`.
fn nested() -> Sequential {
    Sequential::new()
        .append(Sequential::new().append(Linear::new(1, 1, true)))
        .append(Linear::new(1, 1, true))
}

fn keys(sd: &StateDict) -> Vec<String> {
    sd.keys().cloned().collect()
}

/// PyTorch's `load` hands each module only the entries under its prefix (`child_state_dict = {k: v for k, v in
/// local_state_dict.items() if k.startswith(child_prefix)}` in `Module.load_state_dict`); mirrors
/// test_module_hooks.py::TestStateDictHooks::test_load_state_dict_module_pre_hook (a hook on a submodule).
#[test]
fn a_load_pre_hook_sees_only_its_modules_entries() {
    let mut model = nested();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    model
        .get_submodule_mut("0")
        .unwrap()
        .register_load_state_dict_pre_hook(move |_, sd, prefix| {
            s.lock().unwrap().push((prefix.to_owned(), keys(sd)));
        })
        .unwrap();
    let sd = model.state_dict().deep_copy().unwrap();
    model.load_state_dict(&sd, true, false).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [("0.".to_owned(), vec!["0.0.weight".to_owned(), "0.0.bias".to_owned()])]
    );
}

/// A submodule's pre-hook edits its own view: it may rename its entries (they load), and what it removes or
/// adds never reaches its siblings; the root's hook sees the whole dict.
#[test]
fn a_submodules_pre_hook_edits_only_its_view() {
    let mut model = nested();
    let mut sd = model.state_dict().deep_copy().unwrap();
    // An old checkpoint named the inner Linear's weight `w`.
    let w = sd.shift_remove("0.0.weight").unwrap();
    w.fill_(3.0).unwrap();
    sd.insert("0.0.w".to_owned(), w);
    model
        .get_submodule_mut("0")
        .unwrap()
        .register_load_state_dict_pre_hook(|_, sd, prefix| {
            if let Some(t) = sd.shift_remove(&format!("{prefix}0.w")) {
                sd.insert(format!("{prefix}0.weight"), t);
            }
            // Outside its prefix: ignored, as PyTorch's unexpected-key check only looks under the prefix.
            sd.insert("stray".to_owned(), Tensor::ones([1], DType::F32));
            // The sibling's entry is not in this view.
            assert!(!sd.contains_key("1.weight"));
        })
        .unwrap();
    let root_seen = Arc::new(Mutex::new(0));
    let r = root_seen.clone();
    model
        .register_load_state_dict_pre_hook(move |_, sd, prefix| {
            assert_eq!(prefix, "");
            *r.lock().unwrap() = sd.len();
        })
        .unwrap();
    let report = model.load_state_dict(&sd, true, false).unwrap();
    assert!(report.is_empty(), "{report:?}");
    assert_eq!(*root_seen.lock().unwrap(), 4);
    let inner = model.get_parameter("0.0.weight").unwrap();
    assert_eq!(inner.data().to_vec::<f32>().unwrap(), [3.0]);
}

/// Unexpected keys are reported by the deepest module a key reaches, in load order, by PyTorch's rule in
/// `_load_from_state_dict`: a dotted rest whose first name is no child, or an undotted one that is no own
/// entry (so `1.weight.x` and `0`, a child's own name, are unexpected). Expected values from PyTorch 2.5.1 on
/// the same model and dict.
#[test]
fn unexpected_keys_follow_pytorchs_rule() {
    let mut model = nested();
    let mut sd = model.state_dict().deep_copy().unwrap();
    for k in ["zzz", "1.extra", "0.0.extra", "1.weight.x", "0", "0.1.weight"] {
        sd.insert(k.to_owned(), Tensor::ones([1], DType::F32));
    }
    let report = model.load_state_dict(&sd, false, false).unwrap();
    // Load order: root (zzz, 0), 0 (0.1.weight: no child 1 there), 0.0 (0.0.extra), 1 (1.extra, 1.weight.x).
    assert_eq!(
        report.unexpected_keys,
        ["zzz", "0", "0.1.weight", "0.0.extra", "1.extra", "1.weight.x"]
    );
    assert!(report.missing_keys.is_empty());
}

/// test_load_state_dict.py::TestLoadStateDict::test_load_state_dict_BC: BatchNorm's `num_batches_tracked`
/// (added at version 2) is filled when a dict of version 1, or without a version, lacks it.
#[test]
fn batch_norm_loads_dicts_saved_before_num_batches_tracked() {
    let mut bn = BatchNorm2d::new(3);
    let mut sd = bn.state_dict().deep_copy().unwrap();
    assert_eq!(sd.version(""), Some(2), "BatchNorm's _version");
    sd.shift_remove("num_batches_tracked");
    sd.set_version("", 1);
    bn.load_state_dict(&sd, true, false).unwrap();
    let count = bn.num_batches_tracked.as_ref().unwrap();
    assert_eq!(count.dtype(), DType::I64);
    assert_eq!(count.to_vec::<i64>().unwrap(), [0]);
    sd.remove_version("");
    bn.load_state_dict(&sd, true, false).unwrap();
    assert_eq!(bn.num_batches_tracked.as_ref().unwrap().to_vec::<i64>().unwrap(), [0]);

    // A dict of the current version lacking it is a missing key, as in PyTorch.
    sd.set_version("", 2);
    let err = bn.load_state_dict(&sd, true, false).unwrap_err().to_string();
    assert!(err.contains("num_batches_tracked"), "{err}");

    // Nested, from a file (no versions at all): a model of BatchNorms loads a checkpoint without the counts,
    // keeping its own count, as PyTorch keeps `self.num_batches_tracked`.
    let mut model = Sequential::new()
        .append(Linear::new(1, 2, true))
        .append(BatchNorm2d::new(2));
    model.get_buffer("1.num_batches_tracked").unwrap().fill_(7.0).unwrap();
    let old: StateDict = model
        .state_dict()
        .deep_copy()
        .unwrap()
        .into_iter()
        .filter(|(k, _)| !k.ends_with("num_batches_tracked"))
        .collect();
    model.load_state_dict(&old, true, false).unwrap();
    assert_eq!(
        model
            .get_buffer("1.num_batches_tracked")
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        [7]
    );
}

/// `state_dict()` records every module's version under its path (test_nn.py::TestNN::test_state_dict:
/// `state_dict._metadata['']['version'] >= 0`), the prefix included.
#[test]
fn state_dict_records_each_modules_version() {
    let model = Sequential::new()
        .append(Linear::new(2, 2, true))
        .append(BatchNorm1d::new(2));
    let sd = model.state_dict();
    assert_eq!(sd.versions().collect::<Vec<_>>(), [("", 1), ("0", 1), ("1", 2)]);
    let sd = model.state_dict_with_prefix("m.");
    assert_eq!(sd.version("m"), Some(1));
    assert_eq!(sd.version("m.1"), Some(2));
}

/// A module's own save and load steps (PyTorch's `_save_to_state_dict` / `_load_from_state_dict` overrides).
#[derive(Module)]
#[module(custom_state_dict)]
struct Scaled {
    weight: Param,
    #[module(skip)]
    refuse: bool,
}

impl CustomStateDict for Scaled {
    const VERSION: u32 = 3;

    /// Saves the weight doubled, under `w2`.
    fn save_to_state_dict(&self, state: &mut StateDict, prefix: &str) {
        if let Some(w) = state.shift_remove(&format!("{prefix}weight")) {
            state.insert(format!("{prefix}w2"), w.mul_scalar(2.0).unwrap());
        }
    }

    fn load_from_state_dict(&self, state: &mut StateDict, prefix: &str, version: Option<u32>) -> nn::Result<()> {
        if self.refuse {
            return Err(nn::Error::invalid("Scaled", format!("version {version:?} refused")));
        }
        if let Some(w) = state.shift_remove(&format!("{prefix}w2")) {
            state.insert(format!("{prefix}weight"), w.mul_scalar(0.5)?);
        }
        Ok(())
    }
}

#[derive(Module)]
struct Outer {
    fc: Linear,
    scaled: Scaled,
}

fn outer(weight: Vec<f32>, refuse: bool) -> Outer {
    Outer {
        fc: Linear::new(1, 1, true),
        scaled: Scaled {
            weight: Param::new(Tensor::from_vec(weight, [2]).unwrap()),
            refuse,
        },
    }
}

#[test]
fn a_derived_module_customises_how_it_saves_and_loads() {
    let model = outer(vec![1.0, 2.0], false);
    let sd = model.state_dict();
    assert_eq!(keys(&sd), ["fc.weight", "fc.bias", "scaled.w2"]);
    assert_eq!(sd["scaled.w2"].to_vec::<f32>().unwrap(), [2.0, 4.0]);
    assert_eq!(sd.version("scaled"), Some(3));

    let mut other = outer(vec![0.0, 0.0], false);
    other.load_state_dict(&sd, true, false).unwrap();
    assert_eq!(other.scaled.weight.data().to_vec::<f32>().unwrap(), [1.0, 2.0]);

    // An error of the module's load step stops the load, naming it, and changes nothing.
    let mut refusing = outer(vec![0.0, 0.0], true);
    let before = refusing.state_dict().deep_copy().unwrap();
    let sd = before.deep_copy().unwrap();
    sd["fc.weight"].fill_(9.0).unwrap();
    let err = refusing.load_state_dict(&sd, true, false).unwrap_err().to_string();
    assert!(err.contains("Scaled") && err.contains("Some(3)"), "{err}");
    let after = refusing.state_dict();
    for (k, t) in &before {
        assert_eq!(t.to_vec_f64().unwrap(), after[k].to_vec_f64().unwrap(), "{k}");
    }
}
