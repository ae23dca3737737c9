//! Module semantics that PyTorch's own unit tests check, each test citing the PyTorch 2.5.1 test it mirrors
//! (test/nn/test_load_state_dict.py, test/nn/test_module_hooks.py, test/test_nn.py).

use std::sync::{Arc, Mutex};

use integration_tests::assert_close;
use nn::Grads;
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

/// A copy of `sd` without its `num_batches_tracked` entries and versions, as a checkpoint from before them.
fn without_counts(sd: &StateDict) -> StateDict {
    let copy = sd.deep_copy().unwrap().into_iter();
    copy.filter(|(k, _)| !k.ends_with("num_batches_tracked")).collect()
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
    sd.clear_versions();
    assert_eq!(sd.version(""), None);
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
    model
        .load_state_dict(&without_counts(&model.state_dict()), true, false)
        .unwrap();
    assert_eq!(
        model
            .get_buffer("1.num_batches_tracked")
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        [7]
    );

    // Behind a `Box<dyn TensorModule>` the BatchNorm's own load step and version are the same.
    let mut boxed: Box<dyn TensorModule> = Box::new(BatchNorm2d::new(2));
    assert_eq!(boxed.state_dict().version(""), Some(2));
    boxed
        .load_state_dict(&without_counts(&boxed.state_dict()), true, false)
        .unwrap();
}

/// `state_dict()` records every module's version under its path (test_nn.py::TestNN::test_state_dict:
/// `state_dict._metadata['']['version'] >= 0`), the prefix included.
#[test]
fn state_dict_records_each_modules_version() {
    let model = Sequential::new()
        .append(Linear::new(2, 2, true))
        .append(BatchNorm1d::new(2));
    let sd = model.state_dict();
    assert_eq!(
        [sd.version(""), sd.version("0"), sd.version("1")],
        [Some(1), Some(1), Some(2)]
    );
    // Only the versions other than 1 are stored.
    assert_eq!(sd.versions().collect::<Vec<_>>(), [("1", 2)]);
    // A dict collected from entries (as one read from a file) has none.
    let from_entries: StateDict = sd.clone().into_iter().collect();
    assert_eq!(from_entries.version(""), None);
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

/// PyTorch's `FailsInForwardModel` (test_module_hooks.py): its forward fails while `fail` is set.
#[derive(Module)]
struct FailsInForward {
    net: Linear,
    #[module(skip)]
    fail: std::sync::atomic::AtomicBool,
    hooks: Hooks,
}

impl Forward for FailsInForward {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> nn::Result<Tensor> {
        if self.fail.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(nn::Error::invalid("forward", "failing in forward"));
        }
        self.net.forward(x)
    }
}

/// test_module_hooks.py::TestModuleHooks::test_always_called_forward_hooks (its local-hook part): an
/// `always_call` hook runs when the forward fails, once when nothing fails, when a pre-hook fails, and when
/// another `always_call` hook fails (whose error is dropped: the pre-hook's is the one returned).
#[test]
fn always_call_hooks_run_after_any_failure() {
    use std::sync::atomic::Ordering;
    let stack = Arc::new(Mutex::new(Vec::<i32>::new()));
    let mut model = FailsInForward {
        net: Linear::new(10, 10, true),
        fail: true.into(),
        hooks: Hooks::new(),
    };
    let x = || Tensor::ones([10, 10], DType::F32);
    let always = HookOptions {
        always_call: true,
        ..Default::default()
    };
    let (s_enter, s_exit) = (stack.clone(), stack.clone());
    let setup = model.register_forward_pre_hook(move |_, _| s_enter.lock().unwrap().push(2), false);
    let shutdown = model.register_forward_hook(move |_, _, _| s_exit.lock().unwrap().push(-1), always);

    let err = model.call(x()).unwrap_err().to_string();
    assert!(err.contains("failing in forward"), "{err}");
    assert_eq!(*stack.lock().unwrap(), [2, -1]);

    model.fail.store(false, Ordering::Relaxed);
    model.call(x()).unwrap();
    assert_eq!(*stack.lock().unwrap(), [2, -1, 2, -1], "not run twice without an error");

    setup.remove();
    let s = stack.clone();
    model.register_forward_pre_hook(
        move |_, _| {
            s.lock().unwrap().push(2);
            Err(nn::Error::invalid("pre-hook", "failing in ctx setup"))
        },
        false,
    );
    let err = model.call(x()).unwrap_err().to_string();
    assert!(err.contains("failing in ctx setup"), "{err}");
    assert_eq!(*stack.lock().unwrap(), [2, -1, 2, -1, 2, -1]);

    let throw = model.register_forward_hook(
        |_, _, _| Err(nn::Error::invalid("hook", "failing in throw")),
        HookOptions {
            prepend: true,
            always_call: true,
        },
    );
    let err = model.call(x()).unwrap_err().to_string();
    assert!(
        err.contains("failing in ctx setup"),
        "the forced hook's error is not the one raised: {err}"
    );
    assert_eq!(*stack.lock().unwrap(), [2, -1, 2, -1, 2, -1, 2, -1]);

    shutdown.remove();
    throw.remove();
    // An always_call hook that fails while running after a failure is run once.
    let s = stack.clone();
    model.register_forward_hook(
        move |_, _, _| {
            s.lock().unwrap().push(-1);
            Err(nn::Error::invalid("hook", "failing in ctx shutdown"))
        },
        always,
    );
    let err = model.call(x()).unwrap_err().to_string();
    assert!(err.contains("failing in ctx setup"), "{err}");
    assert_eq!(*stack.lock().unwrap(), [2, -1, 2, -1, 2, -1, 2, -1, 2, -1]);
}

/// A forward hook's error fails the call; the `always_call` hooks after it get the output (PyTorch passes
/// `result`, the forward's output, to them in its `except` branch).
#[test]
fn a_failing_forward_hook_fails_the_call_and_later_always_call_hooks_see_the_output() {
    let mut fc = Linear::new(2, 2, true);
    let seen = Arc::new(Mutex::new(Vec::new()));
    fc.register_forward_hook(
        |_, _, _| Err(nn::Error::invalid("hook", "refused")),
        HookOptions::default(),
    );
    let s = seen.clone();
    fc.register_forward_hook(
        move |_, _, out: Option<&mut Tensor>| s.lock().unwrap().push(out.map(|y| y.shape().clone())),
        HookOptions {
            always_call: true,
            ..Default::default()
        },
    );
    let err = fc.call(Tensor::zeros([3, 2], DType::F32)).unwrap_err().to_string();
    assert!(err.contains("refused"), "{err}");
    assert_eq!(*seen.lock().unwrap(), [Some(nn::Shape::from([3usize, 2]))]);

    // Without an always_call hook, the error still fails the call.
    let mut relu = ReLU::new(false);
    relu.register_forward_pre_hook(|_, _| Err(nn::Error::invalid("pre", "no")), false);
    assert!(relu.call(Tensor::zeros([1], DType::F32)).is_err());
}

/// `torch.nn.modules.utils.consume_prefix_in_state_dict_if_present`, as its documentation describes it (a
/// DataParallel dict loads into the bare model): keys and metadata lose `module.`, a key without it stays.
/// Expected keys and versions measured with PyTorch 2.5.1 on the same dict (a `Sequential(Linear(2, 2),
/// BatchNorm1d(2))` saved with prefix `module.`, a root version and an `other.weight` added).
#[test]
fn consume_prefix_strips_data_parallels_module_prefix() {
    let net = Sequential::new()
        .append(Linear::new(2, 2, true))
        .append(BatchNorm1d::new(2));
    let mut sd = net.state_dict_with_prefix("module.");
    sd.set_version("", 1);
    sd.insert("other.weight".to_owned(), Tensor::ones([1], DType::F32));
    nn::utils::consume_prefix_in_state_dict_if_present(&mut sd, "module.");
    assert_eq!(
        keys(&sd),
        [
            "other.weight",
            "0.weight",
            "0.bias",
            "1.weight",
            "1.bias",
            "1.running_mean",
            "1.running_var",
            "1.num_batches_tracked"
        ]
    );
    assert_eq!(
        [sd.version(""), sd.version("0"), sd.version("1")],
        [Some(1), Some(1), Some(2)]
    );
    assert_eq!(sd.versions().collect::<Vec<_>>(), [("1", 2)]);
    sd.shift_remove("other.weight");
    let mut fresh = Sequential::new()
        .append(Linear::new(2, 2, true))
        .append(BatchNorm1d::new(2));
    fresh.load_state_dict(&sd, true, false).unwrap();
}

/// `state_dict(keep_vars=True)` (test_nn.py::TestNN::test_state_dict checks `keep_vars`'s parameters are the
/// `Parameter`s): the entry is the parameter's own tensor, so a loss on it reaches the parameter's gradient;
/// the default entry is detached but shares storage.
#[test]
fn keep_vars_gives_the_parameters_own_tensors() {
    let fc = Linear::new(2, 1, false);
    let kept = fc.state_dict_keep_vars();
    assert!(kept["weight"].requires_grad());
    kept["weight"].sum_all().unwrap().backward().unwrap();
    assert_eq!(fc.weight.grad().unwrap().to_vec::<f32>().unwrap(), [1.0, 1.0]);

    let plain = fc.state_dict();
    assert!(!plain["weight"].requires_grad());
    plain["weight"].fill_(0.5).unwrap();
    assert_eq!(fc.weight.data().to_vec::<f32>().unwrap(), [0.5, 0.5], "shares storage");
}

/// The `repr` of each layer of `seq`, by key.
fn layer_reprs(seq: &Sequential) -> Vec<String> {
    seq.to_string()
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("  ("))
        .map(|l| l.trim().to_owned())
        .collect()
}

fn lin(i: usize, o: usize) -> Linear {
    Linear::new(i, o, true)
}

/// test_nn.py::TestNN::test_Sequential_insert, test_Sequential_insert_fail_case, test_Sequential_pop,
/// test_Sequential_delitem (its integer part), test_Sequential_extend, test_Sequential_add / iadd: the layers
/// after each edit, keyed 0, 1, … again.
#[test]
fn sequential_edits_as_pythons_list() {
    let mut n = Sequential::new().append(lin(1, 2)).append(lin(2, 3)).append(lin(3, 4));
    n.insert(3, lin(4, 5)).unwrap();
    assert_eq!(
        layer_reprs(&n),
        [
            "(0): Linear(in_features=1, out_features=2, bias=True)",
            "(1): Linear(in_features=2, out_features=3, bias=True)",
            "(2): Linear(in_features=3, out_features=4, bias=True)",
            "(3): Linear(in_features=4, out_features=5, bias=True)"
        ]
    );
    let mut n3 = Sequential::new().append(lin(1, 2)).append(lin(2, 3)).append(lin(3, 4));
    n3.insert(-2, lin(5, 6)).unwrap();
    assert_eq!(
        layer_reprs(&n3)[1],
        "(1): Linear(in_features=5, out_features=6, bias=True)"
    );
    assert_eq!(
        layer_reprs(&n3)[2],
        "(2): Linear(in_features=2, out_features=3, bias=True)"
    );
    // Out of -len..=len: PyTorch's IndexError.
    assert!(n3.insert(-6, lin(1, 1)).is_err());
    assert!(n3.insert(6, lin(1, 1)).is_err());
    assert_eq!(n3.len(), 4);

    // pop(3) returns the fourth layer; the rest keep their order.
    let popped = n.pop(3).unwrap();
    let Some(nn::module::Child::Owned(m)) = popped.slot().as_child() else {
        panic!("an owned layer")
    };
    assert_eq!(m.repr(), "Linear(in_features=4, out_features=5, bias=True)");
    assert_eq!(n.len(), 3);
    // del n[-1], then del n[0]: renumbered from 0.
    n.remove(-1).unwrap();
    n.remove(0).unwrap();
    assert_eq!(
        layer_reprs(&n),
        ["(0): Linear(in_features=2, out_features=3, bias=True)"]
    );
    assert!(n.remove(5).is_err());
    assert!(n.at(-2).is_err());
    assert!(n.at(-1).is_ok());

    // extend, + and +=.
    n.extend([lin(3, 4), lin(4, 5)]);
    let n = n + Sequential::new().append(lin(5, 6));
    let mut n = n;
    n += Sequential::new().append(Tanh::new());
    assert_eq!(n.len(), 5);
    assert_eq!(layer_reprs(&n)[4], "(4): Tanh()");
    let y = n.forward(Tensor::ones([1, 2], DType::F32)).unwrap();
    assert_eq!(y.shape(), &[1, 6]);
}

/// test_nn.py::TestNN::test_ModuleList (extend, +=, +, pop, del): keys and order after each edit.
#[test]
fn module_list_edits_as_pythons_list() {
    let mut list = ModuleList::new().append(lin(1, 1)).append(lin(2, 2));
    list += ModuleList::new().append(lin(3, 3));
    let mut list = list + ModuleList::new().append(lin(4, 4));
    assert_eq!(list.len(), 4);
    let popped = list.pop(-1).unwrap();
    let Some(nn::module::Child::Owned(m)) = popped.as_child() else {
        panic!("an owned module")
    };
    assert_eq!(m.repr(), "Linear(in_features=4, out_features=4, bias=True)");
    list.remove(0).unwrap();
    assert_eq!(
        list.state_dict().keys().cloned().collect::<Vec<_>>(),
        ["0.weight", "0.bias", "1.weight", "1.bias"]
    );
    assert_eq!(list.get::<Linear>(1).unwrap().in_features, 3);
    assert!(list.pop(2).is_err());
}

/// test_nn.py::TestNN::test_ModuleDict: update (order, replacement in place), pop, clear, keys, values, items.
#[test]
fn module_dict_has_pythons_dict_api() {
    let mut d = ModuleDict::new();
    d.insert("conv", lin(1, 1)).unwrap();
    d.insert("relu", ReLU::new(false)).unwrap();
    let mut other = ModuleDict::new();
    other.insert("fc", lin(2, 2)).unwrap();
    other.insert("conv", lin(3, 3)).unwrap();
    d.update(other);
    assert_eq!(d.keys().collect::<Vec<_>>(), ["conv", "relu", "fc"]);
    assert_eq!(d.get::<Linear>("conv").unwrap().in_features, 3, "replaced in place");
    assert_eq!(d.values().count(), 3);
    assert_eq!(d.items().map(|(k, _)| k).collect::<Vec<_>>(), ["conv", "relu", "fc"]);
    assert!(d.pop("relu").is_some());
    assert_eq!(d.keys().collect::<Vec<_>>(), ["conv", "fc"]);
    d.clear();
    assert!(d.is_empty());
}

/// test_nn.py::TestNN::test_ParameterList: extend, +=, setitem (negative too), slices sharing parameters.
#[test]
fn parameter_list_has_pythons_list_api() {
    let p = |v: f32| Param::new(Tensor::from_vec(vec![v], [1]).unwrap());
    let mut list = ParameterList::new();
    list.extend([p(0.0), p(1.0)]);
    list += ParameterList::from_params(vec![p(2.0), p(3.0)]);
    assert_eq!(list.len(), 4);
    list.set(-1, p(30.0)).unwrap();
    list.set(0, p(10.0)).unwrap();
    assert!(list.set(4, p(0.0)).is_err());
    let values = |l: &ParameterList| {
        l.iter()
            .map(|q| q.data().to_vec::<f32>().unwrap()[0])
            .collect::<Vec<_>>()
    };
    assert_eq!(values(&list), [10.0, 1.0, 2.0, 30.0]);
    assert_eq!(values(&list.slice(Some(1), Some(3))), [1.0, 2.0]);
    assert_eq!(values(&list.slice(Some(-2), None)), [2.0, 30.0]);
    assert_eq!(values(&list.slice(Some(3), Some(1))), Vec::<f32>::new());
    assert_eq!(values(&list.slice(None, Some(100))), [10.0, 1.0, 2.0, 30.0]);
    // A slice shares the parameters.
    list.slice(Some(1), Some(2)).at(0).unwrap().data().fill_(7.0).unwrap();
    assert_eq!(list.at(1).unwrap().data().to_vec::<f32>().unwrap(), [7.0]);
    assert_eq!(list.at(-4).unwrap().data().to_vec::<f32>().unwrap(), [10.0]);
    assert!(list.at(-5).is_err());
}

/// test_nn.py::TestNN::test_ParameterDict: popitem (last), setdefault, update, copy (shared), fromkeys, |, clear,
/// iteration over keys.
#[test]
fn parameter_dict_has_pythons_dict_api() {
    let p = |v: f32| Param::new(Tensor::from_vec(vec![v], [1]).unwrap());
    let value = |q: &Param| q.data().to_vec::<f32>().unwrap()[0];
    let mut d = ParameterDict::new();
    d.update([("p1", p(1.0)), ("p2", p(2.0)), ("p3", p(3.0))]).unwrap();
    let (k, q) = d.popitem().unwrap();
    assert_eq!((k.as_str(), value(&q)), ("p3", 3.0));
    assert_eq!(value(d.setdefault("p1", p(9.0)).unwrap()), 1.0, "present: kept");
    assert_eq!(value(d.setdefault("p4", p(4.0)).unwrap()), 4.0, "absent: inserted");
    assert_eq!(d.keys().collect::<Vec<_>>(), ["p1", "p2", "p4"]);

    let copy = d.copy();
    copy.get("p1").unwrap().data().fill_(5.0).unwrap();
    assert_eq!(value(d.get("p1").unwrap()), 5.0, "copy shares the parameters");

    let mut other = ParameterDict::new();
    other.update([("p2", p(20.0)), ("p5", p(50.0))]).unwrap();
    let union = &d | &other;
    assert_eq!(union.keys().collect::<Vec<_>>(), ["p1", "p2", "p4", "p5"]);
    assert_eq!(union.values().map(value).collect::<Vec<_>>(), [5.0, 20.0, 4.0, 50.0]);
    assert_eq!(d.keys().count(), 3, "| leaves the operands");

    let f = ParameterDict::fromkeys(["a", "b"], p(0.5)).unwrap();
    assert_eq!(
        f.items().map(|(k, q)| (k, value(q))).collect::<Vec<_>>(),
        [("a", 0.5), ("b", 0.5)]
    );
    d.clear();
    assert!(d.is_empty());
}

/// A global hook that acts only on the thread that registered it: the other tests of this binary run beside
/// it, and a global hook sees their calls too.
fn this_thread() -> impl Fn() -> bool + Send + Sync + 'static {
    let me = std::thread::current().id();
    move || std::thread::current().id() == me
}

fn ones_grad(x: &Tensor) -> Tensor {
    Tensor::full(x.shape().clone(), 2.0, DType::F32)
}

/// test_module_hooks.py::TestModuleGlobalHooks::test_module_global_hooks: a global forward hook runs for every
/// module call (three Sigmoids), a global full backward hook for every backward pass through one (sigmoid(1)
/// = 1 / (1 + 1/e), gradient of the output 2), the counts PyTorch's test asserts, removal of each.
#[test]
fn global_hooks_run_for_every_module_call() {
    let mine = Arc::new(this_thread());
    let forwards = Arc::new(Mutex::new(0));
    let backwards = Arc::new(Mutex::new(0));
    let fw_hook = |inc: i32| {
        let (forwards, mine) = (forwards.clone(), mine.clone());
        move |module: &dyn Module, input: &dyn std::any::Any, output: Option<&mut dyn std::any::Any>| {
            if !mine() {
                return;
            }
            assert_eq!(module.type_name(), "Sigmoid");
            let x = input.downcast_ref::<Tensor>().unwrap();
            assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0; 25]);
            let y = output
                .unwrap()
                .downcast_ref::<Tensor>()
                .unwrap()
                .to_vec::<f32>()
                .unwrap();
            let expected = (1.0 / (1.0 + 1.0 / std::f64::consts::E)) as f32;
            assert!(y.iter().all(|v| (v - expected).abs() < 1e-6), "{y:?}");
            *forwards.lock().unwrap() += inc;
        }
    };
    let bw_hook = |inc: i32| {
        let (backwards, mine) = (backwards.clone(), mine.clone());
        move |name: &'static str, grad_input: &Grads, grad_output: &Grads| {
            if mine() {
                assert_eq!(name, "Sigmoid");
                assert_eq!(grad_input.len(), 1);
                assert_eq!(grad_output[0].as_ref().unwrap().to_vec::<f32>().unwrap(), vec![2.0; 25]);
                *backwards.lock().unwrap() += inc;
            }
            Ok(None)
        }
    };
    let counts = || (*forwards.lock().unwrap(), *backwards.lock().unwrap());
    let modules = [Sigmoid::new(), Sigmoid::new(), Sigmoid::new()];
    let input = Tensor::ones([5, 5], DType::F32).requires_grad_(true).unwrap();
    let call = |i: usize| modules[i].call(input.clone()).unwrap();
    let backward = |y: &Tensor, retain_graph: bool| {
        let gradient = ones_grad(y);
        y.backward_opts(nn::autograd::BackwardOptions {
            gradient: Some(&gradient),
            retain_graph,
            ..Default::default()
        })
        .unwrap()
    };

    let test_fwd = nn::hooks::register_module_forward_hook(fw_hook(1), HookOptions::default());
    (0..3).for_each(|i| drop(call(i)));
    assert_eq!(counts(), (3, 0));

    let test_bwd = nn::hooks::register_module_full_backward_hook(bw_hook(1));
    let outputs: Vec<Tensor> = (0..3).map(call).collect();
    assert_eq!(counts(), (6, 0));
    backward(&outputs[0], true);
    backward(&outputs[1], false);
    backward(&outputs[2], false);
    assert_eq!(counts(), (6, 3));
    backward(&outputs[0], true);
    assert_eq!(counts(), (6, 4));

    let test2_fwd = nn::hooks::register_module_forward_hook(fw_hook(2), HookOptions::default());
    (0..3).for_each(|i| drop(call(i)));
    assert_eq!(counts(), (15, 4));

    let test2_bwd = nn::hooks::register_module_full_backward_hook(bw_hook(2));
    backward(&call(0), false);
    assert_eq!(counts(), (18, 7));
    test2_bwd.remove();
    backward(&call(1), false);
    assert_eq!(counts(), (21, 8));
    test2_fwd.remove();
    backward(&call(2), false);
    assert_eq!(counts(), (22, 9));
    test_fwd.remove();
    test_bwd.remove();
    backward(&call(2), false);
    assert_eq!(counts(), (22, 9), "removed global hooks do not run");
}

/// test_module_hooks.py::TestModuleGlobalHooks::test_module_global_hook_invalid_outputs: a global backward
/// hook returning fewer or more input gradients than the module has fails the backward with a typed error.
#[test]
fn a_global_backward_hooks_wrong_replacement_is_an_error() {
    let mine = Arc::new(this_thread());
    let input = Tensor::randn([5, 5], DType::F32).requires_grad_(true).unwrap();
    for (extra, expected) in [
        (
            false,
            "Backward hook returned an invalid number of grad_input, got 0, but expected 1",
        ),
        (
            true,
            "Backward hook returned an invalid number of grad_input, got 2, but expected 1",
        ),
    ] {
        let m = mine.clone();
        let handle = nn::hooks::register_module_full_backward_hook(move |_, grad_input, _| {
            if !m() {
                return Ok(None);
            }
            let mut new: Vec<Option<Tensor>> = grad_input[..grad_input.len() - 1].to_vec();
            if extra {
                new = grad_input.to_vec();
                new.push(Some(Tensor::randn([2, 2], DType::F32)));
            }
            Ok(Some(new))
        });
        let err = Sigmoid::new()
            .call(input.clone())
            .unwrap()
            .sum_all()
            .unwrap()
            .backward();
        handle.remove();
        let err = err.unwrap_err().to_string();
        assert!(err.contains(expected), "{err}");
    }
}

/// test_module_hooks.py::TestModuleGlobalHooks::test_module_backward_global_hook_writeable and
/// test_module_global_forward_preforward_hook_writeable: global hooks replace the input gradients, the input
/// (relu) and the output (negated); the values and gradients PyTorch's test expects.
#[test]
fn global_hooks_replace_inputs_outputs_and_gradients() {
    let mine = Arc::new(this_thread());
    let values: Vec<f32> = (0..25).map(|i| (i as f32 - 12.0) / 5.0).collect();
    let sig = |v: f32| 1.0 / (1.0 + (-(v as f64)).exp());
    let input = || {
        Tensor::from_vec(values.clone(), [5, 5])
            .unwrap()
            .requires_grad_(true)
            .unwrap()
    };

    let m = mine.clone();
    let doubling = nn::hooks::register_module_full_backward_hook(move |_, grad_input, _| {
        if !m() {
            return Ok(None);
        }
        Ok(Some(
            grad_input
                .iter()
                .map(|g| g.as_ref().map(|g| g.mul_scalar(2.0).unwrap()))
                .collect(),
        ))
    });
    let x = input();
    let y = Sigmoid::new().call(x.clone()).unwrap();
    y.backward_with(&Tensor::ones([5, 5], DType::F32)).unwrap();
    doubling.remove();
    let expected: Vec<f32> = values.iter().map(|&v| (sig(v) * (1.0 - sig(v)) * 2.0) as f32).collect();
    assert_close(
        "doubled input gradient",
        &x.grad().unwrap(),
        &Tensor::from_vec(expected, [5, 5]).unwrap(),
    );

    let (m1, m2) = (mine.clone(), mine.clone());
    let pre = nn::hooks::register_module_forward_pre_hook(move |_, input| {
        if m1()
            && let Some(x) = input.downcast_mut::<Tensor>()
        {
            *x = ReLU::new(false).forward(x.clone())?;
        }
        Ok(())
    });
    let post = nn::hooks::register_module_forward_hook(
        move |_, _, output| {
            if m2()
                && let Some(y) = output.and_then(|y| y.downcast_mut::<Tensor>())
            {
                *y = y.neg()?;
            }
            Ok(())
        },
        HookOptions::default(),
    );
    let x = input();
    let y = Sigmoid::new().call(x.clone()).unwrap();
    pre.remove();
    post.remove();
    let expected: Vec<f32> = values.iter().map(|&v| -sig(v.max(0.0)) as f32).collect();
    assert_close("-sigmoid(relu(x))", &y, &Tensor::from_vec(expected, [5, 5]).unwrap());
    y.backward_with(&ones_grad(&y)).unwrap();
    let expected: Vec<f32> = values
        .iter()
        .map(|&v| {
            if v > 0.0 {
                (-sig(v) * (1.0 - sig(v)) * 2.0) as f32
            } else {
                0.0
            }
        })
        .collect();
    assert_close(
        "its input gradient",
        &x.grad().unwrap(),
        &Tensor::from_vec(expected, [5, 5]).unwrap(),
    );
}

/// test_module_hooks.py::TestModuleGlobalHooks::test_global_and_local_hooks_order (and PyTorch's `_call_impl`,
/// which chains `_global_forward_pre_hooks` before `self._forward_pre_hooks`, likewise for forward and backward
/// hooks): global hooks run before the module's own, and a nested call runs the global hooks of every module
/// (pre-hooks outer first, forward hooks inner first). A global hook may remove itself while it runs
/// (test_module_forward_preforward_hook_removable).
#[test]
fn global_hooks_run_before_local_ones_for_every_module() {
    let mine = Arc::new(this_thread());
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let entry = |what: &'static str| {
        let (log, mine) = (log.clone(), mine.clone());
        move |name: &str| {
            if mine() {
                log.lock().unwrap().push(format!("{what} {name}"));
            }
        }
    };
    let mut sigmoid = Sigmoid::new();
    let (gp, gf, gb) = (entry("global pre"), entry("global forward"), entry("global backward"));
    let (lp, lf, lb) = (entry("local pre"), entry("local forward"), entry("local backward"));
    let handles = [
        nn::hooks::register_module_forward_pre_hook(move |m, _| gp(m.type_name())),
        nn::hooks::register_module_forward_hook(move |m, _, _| gf(m.type_name()), HookOptions::default()),
        nn::hooks::register_module_full_backward_hook(move |name, _, _| {
            gb(name);
            Ok(None)
        }),
    ];
    sigmoid.register_forward_pre_hook(move |m, _| lp(m.type_name()), false);
    sigmoid.register_forward_hook(move |m, _, _| lf(m.type_name()), HookOptions::default());
    sigmoid.register_full_backward_hook(move |_, _| {
        lb("Sigmoid");
        Ok(None)
    });
    let x = Tensor::randn([5, 5], DType::F32).requires_grad_(true).unwrap();
    sigmoid
        .call(x)
        .unwrap()
        .backward_with(&Tensor::ones([5, 5], DType::F32))
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "global pre Sigmoid",
            "local pre Sigmoid",
            "global forward Sigmoid",
            "local forward Sigmoid",
            "global backward Sigmoid",
            "local backward Sigmoid"
        ]
    );

    // A boxed module's call is its module's call: the global hooks run once, with the module.
    log.lock().unwrap().clear();
    let boxed: Box<dyn TensorModule> = Box::new(ReLU::new(false));
    boxed.call(Tensor::ones([2], DType::F32)).unwrap();
    assert_eq!(*log.lock().unwrap(), ["global pre ReLU", "global forward ReLU"]);

    log.lock().unwrap().clear();
    let seq = Sequential::new()
        .append(Linear::new(2, 2, true))
        .append(ReLU::new(false));
    seq.call(Tensor::ones([1, 2], DType::F32)).unwrap();
    handles.iter().for_each(HookHandle::remove);
    seq.call(Tensor::ones([1, 2], DType::F32)).unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "global pre Sequential",
            "global pre Linear",
            "global forward Linear",
            "global pre ReLU",
            "global forward ReLU",
            "global forward Sequential"
        ]
    );

    // A global pre-hook that removes itself runs once.
    let count = Arc::new(Mutex::new(0));
    let handle: Arc<Mutex<Option<HookHandle>>> = Arc::default();
    let (c, h, m) = (count.clone(), handle.clone(), mine.clone());
    *handle.lock().unwrap() = Some(nn::hooks::register_module_forward_pre_hook(move |_, _| {
        if m() {
            *c.lock().unwrap() += 1;
            if let Some(h) = h.lock().unwrap().as_ref() {
                h.remove();
            }
        }
    }));
    let relu = ReLU::new(false);
    relu.call(Tensor::ones([2], DType::F32)).unwrap();
    relu.call(Tensor::ones([2], DType::F32)).unwrap();
    assert_eq!(*count.lock().unwrap(), 1);
}

/// test_module_hooks.py::TestModuleHooks::test_always_called_forward_hooks (its global part): a global
/// forward hook registered with `always_call` runs when the module's forward fails; one without does not.
#[test]
fn a_global_always_call_hook_runs_when_the_forward_fails() {
    let mine = Arc::new(this_thread());
    let stack = Arc::new(Mutex::new(Vec::<i32>::new()));
    let model = FailsInForward {
        net: Linear::new(10, 10, true),
        fail: true.into(),
        hooks: Hooks::new(),
    };
    let (s1, s2, m1, m2) = (stack.clone(), stack.clone(), mine.clone(), mine.clone());
    let always = nn::hooks::register_module_forward_hook(
        move |m, _, output| {
            if m1() && m.type_name() == "FailsInForward" {
                assert!(output.is_none());
                s1.lock().unwrap().push(-1);
            }
        },
        HookOptions {
            always_call: true,
            ..Default::default()
        },
    );
    let plain = nn::hooks::register_module_forward_hook(
        move |_, _, _| {
            if m2() {
                s2.lock().unwrap().push(-2);
            }
        },
        HookOptions::default(),
    );
    let err = model.call(Tensor::ones([10, 10], DType::F32)).unwrap_err().to_string();
    always.remove();
    plain.remove();
    assert!(err.contains("failing in forward"), "{err}");
    assert_eq!(*stack.lock().unwrap(), [-1]);
}

/// `Sequential(Linear(10, 20), Linear(20, 30), Linear(30, 40), Linear(40, 50))`, PyTorch's test modules.
fn four_linears() -> Sequential {
    Sequential::new()
        .append(lin(10, 20))
        .append(lin(20, 30))
        .append(lin(30, 40))
        .append(lin(40, 50))
}

/// The keys of the layers, from the state dict (which lists a shared module at every place, as PyTorch's does;
/// `named_children` lists it once).
fn layer_keys(seq: &Sequential) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for key in seq.state_dict().keys() {
        let layer = key.split('.').next().unwrap().to_owned();
        if keys.last() != Some(&layer) {
            keys.push(layer);
        }
    }
    keys
}

/// test_nn.py::TestNN::test_Sequential_getitem (slices) and test_Sequential_mul / _rmul / _imul: a slice keeps
/// its layers' keys and holds the same modules (PyTorch 2.5.1: `list(n[1:]._modules)` is `['1', '2', '3']`,
/// `n[1:]._modules['1'] is l2`); `n * 2` holds each module twice, keyed 0..8 (8 parameters, 16 state-dict
/// entries); `*= 2` twice gives 16 layers; a factor of 0 is an error.
#[test]
fn sequential_slices_and_repeats_share_the_modules() {
    let mut n = four_linears();
    let tail = n.slice(Some(1), None).unwrap();
    assert_eq!(layer_keys(&tail), ["1", "2", "3"]);
    assert_eq!(
        tail.to_string(),
        "Sequential(\n  (1): Linear(in_features=20, out_features=30, bias=True)\n  (2): Linear(in_features=30, \
         out_features=40, bias=True)\n  (3): Linear(in_features=40, out_features=50, bias=True)\n)"
    );
    tail.get_parameter("1.bias").unwrap().data().fill_(7.0).unwrap();
    assert_eq!(
        n.get_parameter("1.bias").unwrap().data().to_vec::<f32>().unwrap(),
        vec![7.0; 30]
    );
    assert_eq!(layer_keys(&n.slice(Some(3), None).unwrap()), ["3"]);
    assert_eq!(layer_keys(&n.slice(None, Some(-1)).unwrap()), ["0", "1", "2"]);
    assert_eq!(layer_keys(&n.slice(None, Some(-3)).unwrap()), ["0"]);
    assert!(
        n.slice(Some(5), None).unwrap().is_empty(),
        "bounds past the end are clamped"
    );
    // The original still runs, its output unchanged by the sharing.
    let x = Tensor::randn([2, 10], DType::F32);
    let mut before = four_linears();
    before.load_state_dict(&n.state_dict(), true, false).unwrap();
    assert_eq!(
        n.forward(x.clone()).unwrap().to_vec::<f32>().unwrap(),
        before.forward(x).unwrap().to_vec::<f32>().unwrap()
    );

    let n2 = (four_linears() * 2).unwrap();
    assert_eq!(layer_keys(&n2), ["0", "1", "2", "3", "4", "5", "6", "7"]);
    assert_eq!(n2.named_parameters().len(), 8);
    assert_eq!(n2.state_dict().len(), 16);
    n2.get_parameter("4.weight").unwrap().data().fill_(1.0).unwrap();
    assert_eq!(
        n2.get_parameter("0.weight").unwrap().data().to_vec::<f32>().unwrap(),
        vec![1.0; 200]
    );
    assert_eq!((2 * four_linears()).unwrap().len(), 8);
    let mut m = four_linears();
    m.repeat_in_place(2).unwrap();
    assert_eq!(m.len(), 8);
    m.repeat_in_place(2).unwrap();
    assert_eq!(m.len(), 16);
    let err = (four_linears() * 0).err().unwrap().to_string();
    assert!(err.contains("non-positive multiplication factor 0"), "{err}");
}

/// test_nn.py::TestNN::test_ModuleList (slices): `modules[1:3]` is a new list of the same modules, keyed
/// `0`, `1` (PyTorch 2.5.1: `list(ml[1:3]._modules)` is `['0', '1']`, `ml[1:3][0] is l2`).
#[test]
fn module_list_slices_share_the_modules() {
    let mut list = ModuleList::new()
        .append(lin(10, 20))
        .append(lin(20, 30))
        .append(ReLU::new(false))
        .append(lin(30, 40));
    let middle = list.slice(Some(1), Some(3)).unwrap();
    assert_eq!(
        middle.to_string(),
        "ModuleList(\n  (0): Linear(in_features=20, out_features=30, bias=True)\n  (1): ReLU()\n)"
    );
    middle.get_parameter("0.weight").unwrap().data().fill_(3.0).unwrap();
    assert_eq!(
        list.get_parameter("1.weight").unwrap().data().to_vec::<f32>().unwrap(),
        vec![3.0; 600]
    );
    assert_eq!(list.len(), 4);
    assert_eq!(list.slice(Some(-1), None).unwrap().len(), 1);
    assert!(list.slice(Some(3), Some(1)).unwrap().is_empty());
    // An Option slot cannot be held twice: an error, the list unchanged.
    let mut with_option = ModuleList::new().append(lin(1, 1)).append(Some(lin(1, 1)));
    let err = with_option.slice(None, None).err().unwrap().to_string();
    assert!(err.contains("item 1"), "{err}");
    assert!(with_option.get::<Linear>(0).is_some(), "unchanged: item 0 still owned");
}

/// Modules whose forward does not map a tensor to a tensor sit in a Sequential as `Layer::any` (PyTorch's
/// Sequential passes any output on to the next module): an LSTM, then a module taking its (output, state).
/// A value of the wrong type is a typed error naming both types.
#[test]
fn sequential_holds_modules_of_any_input_and_output() {
    #[derive(Module)]
    struct TakeOutput;
    impl Forward for TakeOutput {
        type Input = (Tensor, (Tensor, Tensor));
        type Output = Tensor;
        fn forward(&self, (output, _): Self::Input) -> nn::Result<Tensor> {
            Ok(output)
        }
    }
    let lstm = LSTM::new(3, 4);
    let x = Tensor::randn([5, 2, 3], DType::F32);
    let (expected, _) = lstm.forward((x.clone(), None)).unwrap();
    let expected = ReLU::new(false).forward(expected).unwrap();
    let mut seq = Sequential::new()
        .append(nn::module::Layer::any(lstm))
        .append(nn::module::Layer::any(TakeOutput))
        .append(ReLU::new(false));
    let y: Tensor = seq.forward_as((x.clone(), None::<(Tensor, Tensor)>)).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), expected.to_vec::<f32>().unwrap());
    assert_eq!(seq.state_dict().len(), 4, "the LSTM's weights, keyed 0.*");
    let err = seq.forward(x.clone()).unwrap_err().to_string();
    assert!(
        err.contains("LSTM takes") && err.contains("is given `nn::tensor::Tensor`"),
        "{err}"
    );
    // Slices and repeats share these layers too.
    let mut head = seq.slice(None, Some(2)).unwrap();
    let (y2, _): (Tensor, (Tensor, Tensor)) = head
        .slice(Some(0), Some(1))
        .unwrap()
        .forward_as((x, None::<(Tensor, Tensor)>))
        .unwrap();
    assert_eq!(
        ReLU::new(false).forward(y2).unwrap().to_vec::<f32>().unwrap(),
        expected.to_vec::<f32>().unwrap()
    );
}

/// test_nn.py::TestNN::test_Sequential_delitem (`del n[-1]`, then `del n[1::2]` leaves `l1, l3`) and Python's
/// slice rules for `del list[start:stop:step]` (the dropped positions below are Python 3's
/// `list(range(6))[start:stop:step]`).
#[test]
fn deleting_slices_follows_pythons_slice_rules() {
    let mut n = four_linears();
    n.remove(-1).unwrap();
    n.remove_slice(Some(1), None, 2).unwrap();
    assert_eq!(
        layer_reprs(&n),
        [
            "(0): Linear(in_features=10, out_features=20, bias=True)",
            "(1): Linear(in_features=30, out_features=40, bias=True)"
        ]
    );
    assert_eq!(layer_keys(&n), ["0", "1"]);

    /// `start`, `stop`, `step`, and the positions Python drops.
    type Case = (Option<isize>, Option<isize>, isize, &'static [usize]);
    let cases: [Case; 9] = [
        (None, None, 2, &[0, 2, 4]),
        (Some(1), None, 2, &[1, 3, 5]),
        (None, None, -1, &[5, 4, 3, 2, 1, 0]),
        (Some(-2), None, -2, &[4, 2, 0]),
        (Some(5), Some(-9), -1, &[5, 4, 3, 2, 1, 0]),
        (Some(-9), Some(9), 3, &[0, 3]),
        (Some(3), Some(1), 1, &[]),
        (None, Some(-1), -3, &[]),
        (Some(2), Some(2), 1, &[]),
    ];
    for (start, stop, step, dropped) in cases {
        let mut list = ModuleList::new();
        for i in 0..6 {
            list.push(lin(i + 1, 1));
        }
        list.remove_slice(start, stop, step).unwrap();
        let left: Vec<usize> = (0..list.len())
            .map(|i| list.get::<Linear>(i).unwrap().in_features - 1)
            .collect();
        let expected: Vec<usize> = (0..6).filter(|i| !dropped.contains(i)).collect();
        assert_eq!(left, expected, "del [{start:?}:{stop:?}:{step}]");
    }
    let err = four_linears().remove_slice(None, None, 0).unwrap_err().to_string();
    assert!(err.contains("slice step cannot be zero"), "{err}");
}

/// A leaf with a parameter and no `training` field: issue 18's example.
#[derive(Module, Clone)]
struct Scale {
    weight: Param,
}

/// A leaf with a buffer only (a running mean, as batch norm keeps).
#[derive(Module)]
struct RunningMean {
    mean: Tensor,
}

/// A leaf with hooks and nothing else.
#[derive(Module)]
struct Tap {
    hooks: Hooks,
}

/// A model of those leaves, itself without a `training` field.
#[derive(Module)]
struct Leaves {
    fc: Linear,
    scale: Scale,
    running: RunningMean,
    tap: Tap,
}

fn leaves() -> Leaves {
    Leaves {
        fc: Linear::new(2, 2, true),
        scale: Scale {
            weight: Param::new(Tensor::ones([2], DType::F32)),
        },
        running: RunningMean {
            mean: Tensor::zeros([2], DType::F32),
        },
        tap: Tap { hooks: Hooks::new() },
    }
}

fn modes(m: &Leaves) -> [bool; 5] {
    [
        m.is_training(),
        m.fc.is_training(),
        m.scale.is_training(),
        m.running.is_training(),
        m.tap.is_training(),
    ]
}

/// PyTorch's `Module.train(mode)` sets `self.training = mode` and calls `train(mode)` on every child
/// (torch/nn/modules/module.py, 2.5.1), so every module's `training` follows `model.eval()` / `model.train()`,
/// with or without parameters. Here a derived leaf without a `training` field keeps its mode on the handles it
/// owns (a parameter's, a buffer's, its hooks). The expected modes here and in the next two tests are PyTorch
/// 2.5.1's for the same modules written in Python (`nn.Parameter`, `register_buffer`, an empty module;
/// `copy.deepcopy`, `b.weight = a.weight`, `double()`, `load_state_dict` with and without `assign`:
/// `tests/fixtures/generate/module_modes.py` prints them).
#[test]
fn eval_reaches_derived_leaves_without_a_training_field() {
    let mut model = leaves();
    assert_eq!(modes(&model), [true; 5], "a new module is in training mode");
    model.eval();
    assert_eq!(modes(&model), [false; 5], "eval() reaches every leaf");
    assert!(model.modules().iter().all(|m| !m.is_training()));
    model.train(true);
    assert_eq!(modes(&model), [true; 5]);
    // One subtree alone, as `model.scale.eval()`.
    model.scale.eval();
    assert_eq!(
        modes(&model),
        [true, true, false, true, true],
        "only that subtree; the model stays training"
    );
    model.get_submodule_mut("running").unwrap().set_training(false);
    assert!(!model.running.is_training(), "set_training on a leaf sets its own mode");
    assert!(model.fc.is_training() && model.tap.is_training());
}

/// A model of child modules, owning no handle itself.
#[derive(Module)]
struct Model {
    inner: Leaves,
    head: Linear,
}

fn outer_modes(o: &Model) -> [bool; 4] {
    [
        o.is_training(),
        o.inner.is_training(),
        o.inner.fc.is_training(),
        o.head.is_training(),
    ]
}

/// A model whose members are all child modules has its own mode, as every PyTorch module has its `training`:
/// `model.backbone.eval()` (freezing a backbone's batch norms while training) leaves the model in training
/// mode, and `model.eval()` then `model.head.train()` leaves it in eval mode (`Module.train` sets
/// `self.training` and recurses; torch/nn/modules/module.py, 2.5.1). Expected values: PyTorch 2.5.1's for the
/// same modules (`tests/fixtures/generate/module_modes.py`, its `outer:` lines). `Model` and `Leaves` own no
/// handle; each keeps its mode on a handle of its first child's subtree, one and two levels down.
#[test]
fn a_model_of_children_keeps_its_own_mode() {
    let mut o = Model {
        inner: leaves(),
        head: Linear::new(2, 2, true),
    };
    o.inner.eval();
    assert_eq!(outer_modes(&o), [true, false, false, true], "inner.eval");
    o.train(true);
    o.inner.fc.eval();
    assert_eq!(outer_modes(&o), [true, true, false, true], "inner.fc.eval");
    o.eval();
    o.inner.train(true);
    assert_eq!(outer_modes(&o), [false, true, true, false], "eval, then inner.train");
    o.head.train(true);
    assert_eq!(outer_modes(&o), [false, true, true, true], "head.train");
    let boxed: Box<dyn Module> = Box::new(o);
    assert!(!boxed.is_training(), "moved into a box");
    let mut o = Model {
        inner: leaves(),
        head: Linear::new(2, 2, true),
    };
    o.eval();
    o.inner.train(true);
    let inner = o.inner;
    assert!(inner.is_training(), "a child taken out keeps its own mode");
    let mut o = Model {
        inner,
        head: Linear::new(2, 2, true),
    };
    o.train(true);
    assert_eq!(outer_modes(&o), [true; 4], "train");
}

/// PyTorch's `training` is an attribute of each module, so replacing a child (`o.inner = Leaves()`, a new
/// module in training mode) leaves its parent in the mode set on it; here the parent keeps its mode on the
/// handles of its whole subtree, the new child's unmarked ones among them (`module_modes.py`, its `replaced:`
/// lines).
#[test]
fn a_model_keeps_its_mode_when_its_first_child_is_replaced() {
    let mut o = Model {
        inner: leaves(),
        head: Linear::new(2, 2, true),
    };
    o.eval();
    o.inner = leaves();
    assert_eq!(outer_modes(&o), [false, true, true, false], "eval, then a new inner");
    o.inner.scale.weight = Param::new(Tensor::ones([2], DType::F32));
    assert!(!o.is_training(), "a replaced parameter deep down");
    o.train(true);
    assert_eq!(outer_modes(&o), [true; 4], "train");
}

/// A module nested `levels` deep in wrappers that own no handle, a `Linear` at the bottom.
#[derive(Module)]
struct Wrap {
    inner: Box<dyn Module>,
}

fn nest(levels: usize) -> Box<dyn Module> {
    (0..levels).fold(Box::new(Linear::new(2, 2, true)), |inner, _| Box::new(Wrap { inner }))
}

/// Each wrapper keeps its own mode however deep it sits (PyTorch sets `training` on each module it reaches;
/// `module_modes.py`, its `nested:` lines): `eval()` on the root, then `train()` on the wrapper ten levels
/// down, leaves the ten wrappers above it in eval mode and it and everything below it training.
#[test]
fn every_level_of_a_deep_model_keeps_its_own_mode() {
    let mut root = nest(21);
    root.eval();
    let ten = ["inner"; 10].join(".");
    root.get_submodule_mut(&ten).unwrap().train(true);
    let modes: Vec<bool> = (0..=21)
        .map(|level| {
            let path = ["inner"; 21][..level].join(".");
            root.get_submodule(&path).unwrap().is_training()
        })
        .collect();
    let expected: Vec<bool> = (0..=21).map(|level| level >= 10).collect();
    assert_eq!(modes, expected);
}

/// The mode is the module's, like a field: it moves with the struct, a clone keeps it (as `copy.deepcopy`
/// copies `training`), and two modules tying one parameter keep their own modes (each PyTorch module has its
/// own `training` flag; `m2.weight = m1.weight` ties the tensor only).
#[test]
fn a_derived_leafs_mode_moves_with_it_and_is_its_own() {
    let mut model = leaves();
    model.eval();
    let clone = model.scale.clone();
    assert!(!clone.is_training(), "a clone keeps the mode");
    let boxed: Box<dyn Module> = Box::new(model.scale);
    assert!(!boxed.is_training(), "a moved module keeps its mode");

    let mut a = Scale {
        weight: Param::new(Tensor::ones([2], DType::F32)),
    };
    let b = Scale {
        weight: a.weight.clone(),
    };
    a.eval();
    assert!(a.weight.ptr_eq(&b.weight), "one parameter");
    assert!(!a.is_training() && b.is_training(), "tied modules keep their own modes");
}

/// Casts, device moves and loads with `assign` replace a buffer's handle; the module stays in eval
/// (PyTorch's `_apply` and `load_state_dict` do not touch `training`).
#[test]
fn casts_and_loads_keep_a_derived_leafs_mode() {
    let mut model = leaves();
    model.eval();
    model.to_dtype(DType::F64).unwrap();
    assert_eq!(modes(&model), [false; 5], "after to_dtype");
    model.to_device(Device::Cpu).unwrap();
    assert_eq!(modes(&model), [false; 5], "after to_device");
    let sd = model.state_dict().deep_copy().unwrap();
    model.load_state_dict(&sd, true, true).unwrap();
    assert_eq!(modes(&model), [false; 5], "after a load with assign");
    model.load_state_dict(&sd, true, false).unwrap();
    assert_eq!(modes(&model), [false; 5], "after a load by copy");
    model.train(true);
    model.to_dtype(DType::F32).unwrap();
    assert_eq!(modes(&model), [true; 5], "training mode survives the same steps");
}
