//! Forward, state-dict and load hooks, with PyTorch's semantics.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use nn::module::IncompatibleKeys;
use nn::prelude::*;
use nn::{Error, Result};

#[derive(Module)]
struct Block {
    fc: Linear,
    act: Tanh,
    hooks: Hooks,
}

impl Forward for Block {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        self.act.call(self.fc.call(x)?)
    }
}

#[derive(Module)]
struct Net {
    blocks: Vec<Block>,
    head: Linear,
    hooks: Hooks,
}

impl Forward for Net {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, mut x: Tensor) -> Result<Tensor> {
        for b in &self.blocks {
            x = b.call(x)?;
        }
        self.head.call(x)
    }
}

fn net() -> Net {
    let block = || Block {
        fc: Linear::new(4, 4, true),
        act: Tanh::new(),
        hooks: Hooks::new(),
    };
    Net {
        blocks: vec![block(), block(), block()],
        head: Linear::new(4, 2, true),
        hooks: Hooks::new(),
    }
}

fn x() -> Tensor {
    Tensor::randn([5, 4], DType::F32)
}

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

#[test]
fn modules_with_hooks_stay_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Net>();
    assert_send_sync::<Hooks>();
    assert_send_sync::<nn::HookHandle>();
}

#[test]
fn forward_hook_extracts_features_from_a_nested_block() {
    let mut model = net();
    let features: Arc<Mutex<Option<Tensor>>> = Arc::default();
    let sink = features.clone();
    let handle = {
        let mut block = model.get_submodule_mut("blocks.1").unwrap();
        let block = block.downcast_mut::<Block>().expect("blocks.1 is a Block");
        block.register_forward_hook(
            move |_, _, out| *sink.lock().unwrap() = out.map(|y| y.clone()),
            HookOptions::default(),
        )
    };
    let input = x();
    let y = model.call(input.clone()).unwrap();
    let got = features.lock().unwrap().take().expect("the hook ran");
    let want = model.blocks[1]
        .forward(model.blocks[0].forward(input.clone()).unwrap())
        .unwrap();
    assert_eq!(got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
    assert_eq!(y.shape(), &[5, 2]);
    // Calling the block's forward directly skips its hooks, as in PyTorch; the model's forward calls its
    // blocks, so they run there.
    model.blocks[1].forward(input.clone()).unwrap();
    assert!(features.lock().unwrap().is_none());
    model.forward(input.clone()).unwrap();
    assert!(features.lock().unwrap().take().is_some());
    handle.remove();
    model.call(input).unwrap();
    assert!(features.lock().unwrap().is_none(), "removed");
}

#[test]
fn pre_hook_replaces_the_input() {
    let mut fc = Linear::new(3, 2, true);
    fc.register_forward_pre_hook(
        |_, input| *input = Tensor::zeros(input.shape().clone(), DType::F32),
        false,
    );
    let y = fc.call(Tensor::ones([1, 3], DType::F32)).unwrap();
    assert_eq!(
        y.to_vec::<f32>().unwrap(),
        fc.bias.as_ref().unwrap().data().to_vec::<f32>().unwrap()
    );
}

#[test]
fn forward_hook_replaces_the_output_and_sees_the_input() {
    let mut relu = ReLU::new(false);
    relu.register_forward_hook(
        |_, input, out| {
            if let Some(out) = out {
                *out = input.mul_scalar(10.0).unwrap();
            }
        },
        HookOptions::default(),
    );
    let y = relu.call(Tensor::from_vec(vec![-1.0f32, 2.0], [2]).unwrap()).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![-10.0, 20.0]);
}

#[test]
fn prepend_puts_a_hook_first() {
    let mut m = Identity::new();
    let order = log();
    for (name, prepend) in [("a", false), ("b", false), ("c", true)] {
        let order1 = order.clone();
        m.register_forward_hook(
            move |_, _, _| order1.lock().unwrap().push(format!("post {name}")),
            HookOptions {
                prepend,
                always_call: false,
            },
        );
        let order2 = order.clone();
        m.register_forward_pre_hook(move |_, _| order2.lock().unwrap().push(format!("pre {name}")), prepend);
    }
    m.call(x()).unwrap();
    assert_eq!(
        *order.lock().unwrap(),
        ["pre c", "pre a", "pre b", "post c", "post a", "post b"]
    );
}

#[test]
fn always_call_runs_on_a_failing_forward_and_others_do_not() {
    let mut fc = Linear::new(3, 2, true);
    let seen = log();
    let (s1, s2) = (seen.clone(), seen.clone());
    fc.register_forward_hook(
        move |_, _, out| s1.lock().unwrap().push(format!("always, output: {}", out.is_some())),
        HookOptions {
            prepend: false,
            always_call: true,
        },
    );
    fc.register_forward_hook(
        move |_, _, _| s2.lock().unwrap().push("normal".into()),
        HookOptions::default(),
    );
    let err = fc.call(Tensor::zeros([1, 5], DType::F32)).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    assert_eq!(*seen.lock().unwrap(), ["always, output: false"]);
    seen.lock().unwrap().clear();
    fc.call(Tensor::zeros([1, 3], DType::F32)).unwrap();
    assert_eq!(*seen.lock().unwrap(), ["always, output: true", "normal"]);
}

/// A module whose forward panics.
#[derive(Module)]
struct Explodes {
    hooks: Hooks,
}

impl Forward for Explodes {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, _: Tensor) -> Result<Tensor> {
        panic!("boom")
    }
}

#[test]
fn always_call_runs_on_a_panic_then_the_panic_goes_on() {
    let mut m = Explodes { hooks: Hooks::new() };
    let seen = log();
    let s = seen.clone();
    m.register_forward_hook(
        move |_, _, out| s.lock().unwrap().push(format!("{}", out.is_none())),
        HookOptions {
            prepend: false,
            always_call: true,
        },
    );
    let panic = catch_unwind(AssertUnwindSafe(|| m.call(x()))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom"));
    assert_eq!(*seen.lock().unwrap(), ["true"]);
}

#[test]
fn a_panicking_hook_runs_the_always_call_hooks_after_it_and_a_removed_one_does_not_run() {
    let mut fc = Linear::new(3, 2, true);
    let seen = log();
    let (s1, s2, s3) = (seen.clone(), seen.clone(), seen.clone());
    let always = HookOptions {
        prepend: false,
        always_call: true,
    };
    fc.register_forward_hook(
        move |_, _, out| s1.lock().unwrap().push(format!("before, output: {}", out.is_some())),
        always,
    );
    fc.register_forward_hook(|_, _, _| panic!("hook failed"), HookOptions::default());
    fc.register_forward_hook(
        move |_, _, out| s2.lock().unwrap().push(format!("after, output: {}", out.is_some())),
        always,
    );
    let removed = fc.register_forward_hook(move |_, _, _| s3.lock().unwrap().push("removed".into()), always);
    removed.remove();
    let panic = catch_unwind(AssertUnwindSafe(|| fc.call(Tensor::zeros([1, 3], DType::F32)))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"hook failed"));
    // The hook before the panic ran with the output; the always-call hook after it runs with the output too,
    // as PyTorch's `except` branch passes it `result` (measured with PyTorch 2.5.1: both see an output).
    assert_eq!(*seen.lock().unwrap(), ["before, output: true", "after, output: true"]);
}

#[test]
fn a_removed_always_call_hook_leaves_a_failing_forward_to_fail_alone() {
    let mut m = Explodes { hooks: Hooks::new() };
    let seen = log();
    let s = seen.clone();
    let handle = m.register_forward_hook(
        move |_, _, _| s.lock().unwrap().push("always".into()),
        HookOptions {
            prepend: false,
            always_call: true,
        },
    );
    handle.remove();
    m.register_forward_hook(
        |_, _, _| unreachable!("the forward panics first"),
        HookOptions::default(),
    );
    let panic = catch_unwind(AssertUnwindSafe(|| m.call(x()))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom"));
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn remove_by_handle_removes_exactly_that_hook_and_dropping_does_not() {
    let mut m = Identity::new();
    let seen = log();
    let (s1, s2) = (seen.clone(), seen.clone());
    let first = m.register_forward_hook(
        move |_, _, _| s1.lock().unwrap().push("first".into()),
        HookOptions::default(),
    );
    let second = m.register_forward_hook(
        move |_, _, _| s2.lock().unwrap().push("second".into()),
        HookOptions::default(),
    );
    drop(second);
    first.remove();
    first.remove();
    m.call(x()).unwrap();
    assert_eq!(*seen.lock().unwrap(), ["second"]);
    assert_eq!(nn::HasHooks::hook_storage(&m).len(), 1);
    // A hook can remove itself from inside.
    let once: Arc<Mutex<Option<nn::HookHandle>>> = Arc::default();
    let slot = once.clone();
    let runs = log();
    let r = runs.clone();
    let handle = m.register_forward_hook(
        move |_, _, _| {
            r.lock().unwrap().push("once".into());
            if let Some(h) = slot.lock().unwrap().take() {
                h.remove();
            }
        },
        HookOptions::default(),
    );
    *once.lock().unwrap() = Some(handle);
    m.call(x()).unwrap();
    m.call(x()).unwrap();
    assert_eq!(*runs.lock().unwrap(), ["once"]);
}

#[test]
fn load_pre_hook_renames_legacy_keys_so_a_strict_load_succeeds() {
    let src = net();
    let legacy: StateDict = src
        .state_dict()
        .into_iter()
        .map(|(k, t)| (k.replace("head.", "classifier."), t))
        .collect();
    let mut dst = net();
    assert!(dst.load_state_dict(&legacy, true, false).is_err());
    dst.register_load_state_dict_pre_hook(|_, sd, prefix| {
        let old: Vec<String> = sd
            .keys()
            .filter(|k| k.starts_with(&format!("{prefix}classifier.")))
            .cloned()
            .collect();
        for k in old {
            let t = sd.shift_remove(&k).unwrap();
            sd.insert(k.replacen("classifier.", "head.", 1), t);
        }
    })
    .unwrap();
    let keys = dst.load_state_dict(&legacy, true, false).unwrap();
    assert!(keys.is_empty());
    assert_eq!(
        dst.head.weight.data().to_vec::<f32>().unwrap(),
        src.head.weight.data().to_vec::<f32>().unwrap()
    );
}

#[test]
fn load_pre_hook_of_a_nested_module_gets_its_prefix() {
    let mut model = net();
    let prefixes = log();
    let p = prefixes.clone();
    model.blocks[1]
        .register_load_state_dict_pre_hook(move |_, _, prefix| p.lock().unwrap().push(prefix.to_owned()))
        .unwrap();
    let sd = model.state_dict().deep_copy().unwrap();
    model.load_state_dict(&sd, true, false).unwrap();
    assert_eq!(*prefixes.lock().unwrap(), ["blocks.1."]);
}

#[test]
fn load_post_hook_clearing_missing_keys_lets_a_strict_load_pass() {
    let mut model = net();
    let mut sd = model.state_dict().deep_copy().unwrap();
    sd.shift_remove("head.bias");
    assert!(model.load_state_dict(&sd, true, false).is_err());
    let seen = Arc::new(Mutex::new(IncompatibleKeys::default()));
    let s = seen.clone();
    model
        .register_load_state_dict_post_hook(move |_, keys| {
            *s.lock().unwrap() = keys.clone();
            keys.missing_keys.clear();
        })
        .unwrap();
    for t in sd.values() {
        t.fill_(0.25).unwrap();
    }
    assert!(model.load_state_dict(&sd, true, false).unwrap().is_empty());
    assert_eq!(seen.lock().unwrap().missing_keys, ["head.bias"]);
    assert_eq!(model.head.weight.data().to_vec::<f32>().unwrap(), vec![0.25; 8]);
}

#[test]
fn a_strict_failure_after_post_hooks_rolls_the_load_back() {
    let mut model = net();
    let before = model.state_dict().deep_copy().unwrap();
    let mut sd = model.state_dict().deep_copy().unwrap();
    for t in sd.values() {
        t.fill_(3.0).unwrap();
    }
    sd.insert("extra".into(), Tensor::zeros([1], DType::F32));
    model.register_load_state_dict_post_hook(|_, _| {}).unwrap();
    assert!(model.load_state_dict(&sd, true, false).is_err());
    for (k, t) in &model.state_dict() {
        assert_eq!(t.to_vec_f64().unwrap(), before[k].to_vec_f64().unwrap(), "{k}");
    }
}

#[test]
fn state_dict_post_hook_adds_a_key_and_pre_hooks_see_prefixes() {
    let mut model = net();
    model
        .register_state_dict_post_hook(|_, sd, prefix| {
            sd.insert(format!("{prefix}version"), Tensor::scalar(2i64));
        })
        .unwrap();
    let prefixes = log();
    let p = prefixes.clone();
    model.blocks[2]
        .fc
        .register_state_dict_pre_hook(move |m, prefix| p.lock().unwrap().push(format!("{} {prefix}", m.type_name())))
        .unwrap();
    let sd = model.state_dict();
    assert_eq!(sd.keys().last().unwrap(), "version");
    assert_eq!(sd["version"].item().unwrap(), 2.0);
    assert_eq!(*prefixes.lock().unwrap(), ["Linear blocks.2.fc."]);
    let with_prefix = model.state_dict_with_prefix("model.");
    assert!(with_prefix.contains_key("model.version"));
}

#[test]
fn state_hooks_need_hook_storage() {
    #[derive(Module)]
    struct Bare {
        fc: Linear,
    }
    let mut bare = Bare {
        fc: Linear::new(1, 1, true),
    };
    let err = bare.register_state_dict_post_hook(|_, _, _| {}).unwrap_err();
    assert!(
        err.to_string()
            .contains("Bare keeps no hooks: add a field `hooks: nn::Hooks`"),
        "{err}"
    );
    assert!(bare.fc.register_state_dict_post_hook(|_, _, _| {}).is_ok());
}

#[test]
fn sequential_and_shared_modules_call_their_layers_hooks() {
    let act = Shared::new(ReLU::new(false));
    let seq = Sequential::new().append(Linear::new(2, 2, true)).append(act.clone());
    let count = Arc::new(Mutex::new(0));
    let c = count.clone();
    act.write()
        .register_forward_hook(move |_, _, _| *c.lock().unwrap() += 1, HookOptions::default());
    seq.call(Tensor::zeros([1, 2], DType::F32)).unwrap();
    act.call(Tensor::zeros([1, 2], DType::F32)).unwrap();
    assert_eq!(*count.lock().unwrap(), 2);
}
