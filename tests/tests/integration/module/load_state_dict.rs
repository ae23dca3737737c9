//! `load_state_dict` against PyTorch 2.5.1's results on the same cases (recorded in the comments), and the
//! stricter guarantee that a refused load changes nothing.

use integration_tests::bit_equal;
use integration_tests::zoo::Zoo;
use nn::module::{ExtraRepr, ExtraState};
use nn::prelude::*;
use nn::{Error, StateDict};

/// PyTorch: `fc = Linear(2, 2)`, `register_buffer("scale", ones(2))`,
/// `register_buffer("cache", zeros(2), persistent=False)`.
#[derive(Module)]
struct B {
    fc: Linear,
    scale: Tensor,
    #[buffer(persistent = false)]
    cache: Tensor,
}

fn b() -> B {
    B {
        fc: Linear::new(2, 2, true),
        scale: Tensor::ones([2], DType::F32),
        cache: Tensor::zeros([2], DType::F32),
    }
}

fn snapshot(m: &impl Module) -> StateDict {
    m.state_dict().deep_copy().unwrap()
}

/// `m`'s state dict (copied) with every entry filled with `value`, then zero `f32` entries of the given
/// names and lengths added, in that order.
fn filled_with_extras(m: &impl Module, value: f64, extras: &[(&str, usize)]) -> StateDict {
    let mut sd = snapshot(m);
    for t in sd.values() {
        t.fill_(value).unwrap();
    }
    for &(name, len) in extras {
        sd.insert(name.into(), Tensor::zeros([len], DType::F32));
    }
    sd
}

fn assert_unchanged(before: &StateDict, m: &impl Module) {
    let now = m.state_dict();
    assert_eq!(before.keys().collect::<Vec<_>>(), now.keys().collect::<Vec<_>>());
    for (k, t) in before {
        assert!(bit_equal(t, &now[k]), "{k} changed");
    }
}

fn full(shape: &[usize], v: f64, dtype: DType) -> Tensor {
    Tensor::full(shape.to_vec(), v, dtype)
}

/// PyTorch: `['scale', 'fc.weight', 'fc.bias']`.
#[test]
fn keys_follow_pytorch_order() {
    assert_eq!(
        b().state_dict().keys().collect::<Vec<_>>(),
        ["scale", "fc.weight", "fc.bias"]
    );
}

/// PyTorch: `_IncompatibleKeys(missing_keys=['fc.bias'], unexpected_keys=['cache', 'nothing.x', 'fc.extra'])`.
#[test]
fn non_strict_reports_missing_and_unexpected_in_pytorch_order() {
    let mut m = b();
    let mut sd = filled_with_extras(&m, 2.0, &[("cache", 2), ("fc.extra", 1), ("nothing.x", 1)]);
    let old_bias = m.fc.bias.as_ref().unwrap().data().to_vec::<f32>().unwrap();
    sd.shift_remove("fc.bias");
    let keys = m.load_state_dict(&sd, false, false).unwrap();
    assert_eq!(keys.missing_keys, ["fc.bias"]);
    assert_eq!(keys.unexpected_keys, ["cache", "nothing.x", "fc.extra"]);
    assert_eq!(m.fc.weight.data().to_vec::<f32>().unwrap(), vec![2.0; 4]);
    assert_eq!(m.scale.to_vec::<f32>().unwrap(), vec![2.0; 2]);
    assert_eq!(
        m.fc.bias.as_ref().unwrap().data().to_vec::<f32>().unwrap(),
        old_bias,
        "a missing key is left alone"
    );
    assert_eq!(
        m.cache.to_vec::<f32>().unwrap(),
        vec![0.0; 2],
        "a non-persistent buffer is not loaded"
    );
}

/// PyTorch's message, byte for byte; and unlike PyTorch, nothing was loaded.
#[test]
fn strict_lists_every_problem_and_changes_nothing() {
    let mut m = b();
    let before = snapshot(&m);
    let mut sd = filled_with_extras(&m, 5.0, &[("cache", 2), ("nothing.x", 1), ("fc.extra", 1)]);
    sd.shift_remove("fc.bias");
    let err = m.load_state_dict(&sd, true, false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Error(s) in loading state_dict for B:\n\tMissing key(s) in state_dict: \"fc.bias\". \n\
         \tUnexpected key(s) in state_dict: \"cache\", \"nothing.x\", \"fc.extra\". "
    );
    let Error::Load(load) = err else {
        panic!("expected a load error")
    };
    assert_eq!(load.missing_keys, ["fc.bias"]);
    assert!(load.strict);
    assert_unchanged(&before, &m);
}

/// PyTorch raises on a size mismatch even when not strict.
#[test]
fn shape_mismatch_is_an_error_even_when_not_strict_and_changes_nothing() {
    let mut m = b();
    let before = snapshot(&m);
    let mut sd = snapshot(&m);
    for t in sd.values() {
        t.fill_(9.0).unwrap();
    }
    sd.insert("fc.weight".into(), Tensor::zeros([3, 2], DType::F32));
    for strict in [false, true] {
        let err = m.load_state_dict(&sd, strict, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Error(s) in loading state_dict for B:\n\tsize mismatch for fc.weight: copying a param with shape \
             torch.Size([3, 2]) from checkpoint, the shape in current model is torch.Size([2, 2])."
        );
        assert_unchanged(&before, &m);
    }
}

/// PyTorch: loading float64 values keeps the float32 parameter (`copy_` casts); `assign=True` takes the
/// float64 tensor, keeping `requires_grad`.
#[test]
fn another_dtype_is_cast_or_assigned() {
    let mut m = b();
    let sd: StateDict = snapshot(&m)
        .into_iter()
        .map(|(k, t)| (k, full(t.shape(), 2.0, DType::F64)))
        .collect();
    let weight_handle = m.fc.weight.data();
    m.load_state_dict(&sd, true, false).unwrap();
    assert_eq!(m.fc.weight.dtype(), DType::F32);
    assert_eq!(m.scale.dtype(), DType::F32);
    assert_eq!(
        weight_handle.to_vec::<f32>().unwrap(),
        vec![2.0; 4],
        "copied in place, seen through old handles"
    );

    let param = m.fc.weight.clone();
    m.load_state_dict(&sd, true, true).unwrap();
    assert_eq!(m.fc.weight.dtype(), DType::F64);
    assert_eq!(m.scale.dtype(), DType::F64);
    assert!(m.fc.weight.requires_grad());
    assert!(
        m.fc.weight.data().shares_storage(&sd["fc.weight"]),
        "assign takes the state dict's tensor"
    );
    assert!(
        param.ptr_eq(&m.fc.weight),
        "the parameter stays the same object, so ties hold"
    );
}

/// PyTorch: an int64 tensor loads into a float32 parameter as floats.
#[test]
fn integers_load_into_floats() {
    let mut m = b();
    let mut sd = StateDict::new();
    sd.insert("fc.weight".into(), Tensor::ones([2, 2], DType::I64));
    m.load_state_dict(&sd, false, false).unwrap();
    assert_eq!(m.fc.weight.data().to_vec::<f32>().unwrap(), vec![1.0; 4]);
}

#[test]
fn loading_the_modules_own_state_dict_is_a_no_op() {
    let mut zoo = Zoo::default();
    let before = snapshot(&zoo);
    let own = zoo.state_dict();
    assert!(zoo.load_state_dict(&own, true, false).unwrap().is_empty());
    assert_unchanged(&before, &zoo);
}

#[test]
fn zoo_load_mixes_missing_unexpected_and_mismatch_without_changing_anything() {
    let mut zoo = Zoo::default();
    let before = snapshot(&zoo);
    let mut sd = snapshot(&zoo);
    for t in sd.values() {
        t.fill_(1.0).unwrap();
    }
    sd.shift_remove("steps");
    sd.insert("blocks.2.fc.weight".into(), Tensor::zeros([4, 4], DType::F32));
    sd.insert("alphas.1".into(), Tensor::zeros([2], DType::F32));
    let err = m_err(zoo.load_state_dict(&sd, true, false));
    assert_eq!(err.missing_keys, ["steps"]);
    assert_eq!(err.unexpected_keys, ["blocks.2.fc.weight"]);
    assert_eq!(err.mismatched.len(), 1);
    assert_eq!(err.mismatched[0].key, "alphas.1");
    assert_unchanged(&before, &zoo);
}

fn m_err<T: std::fmt::Debug>(r: nn::Result<T>) -> nn::module::LoadError {
    match r {
        Err(Error::Load(e)) => *e,
        other => panic!("expected a load error, got {other:?}"),
    }
}

/// A module with non-tensor state: a vocabulary carried as bytes.
#[derive(Module)]
#[module(extra_state, extra_repr)]
struct Tokens {
    embed: Linear,
    #[module(skip)]
    vocab: Vec<String>,
}

impl ExtraState for Tokens {
    fn get_extra_state(&self) -> Tensor {
        let bytes = self.vocab.join("\n").into_bytes();
        let n = bytes.len();
        Tensor::from_vec(bytes, [n]).unwrap()
    }
    fn set_extra_state(&mut self, state: Tensor) -> nn::Result<()> {
        let bytes = state.to_vec::<u8>()?;
        let text = String::from_utf8(bytes).map_err(|e| Error::InvalidArgument {
            op: "Tokens",
            message: format!("vocabulary is not UTF-8: {e}"),
        })?;
        self.vocab = text.split('\n').map(str::to_owned).collect();
        Ok(())
    }
}

impl ExtraRepr for Tokens {
    fn extra_repr(&self) -> String {
        format!("vocab={}", self.vocab.len())
    }
}

#[test]
fn extra_state_is_saved_after_own_tensors_and_restored() {
    let src = Tokens {
        embed: Linear::new(2, 2, false),
        vocab: vec!["a".into(), "b".into()],
    };
    let sd = src.state_dict();
    assert_eq!(sd.keys().collect::<Vec<_>>(), ["_extra_state", "embed.weight"]);
    let mut dst = Tokens {
        embed: Linear::new(2, 2, false),
        vocab: vec![],
    };
    dst.load_state_dict(&sd, true, false).unwrap();
    assert_eq!(dst.vocab, ["a", "b"]);
    assert!(bit_equal(&dst.embed.weight.data(), &src.embed.weight.data()));

    let mut missing = sd.clone();
    missing.shift_remove("_extra_state");
    let err = m_err(dst.load_state_dict(&missing, true, false));
    assert_eq!(err.missing_keys, ["_extra_state"]);
}

#[test]
fn refused_extra_state_rolls_the_whole_load_back() {
    let mut m = Tokens {
        embed: Linear::new(2, 2, false),
        vocab: vec!["x".into()],
    };
    let before = m.embed.weight.data().deep_copy().unwrap();
    let mut sd = StateDict::new();
    sd.insert("embed.weight".into(), Tensor::ones([2, 2], DType::F32));
    sd.insert(
        "_extra_state".into(),
        Tensor::from_vec(vec![0xffu8, 0xfe], [2]).unwrap(),
    );
    let err = m_err(m.load_state_dict(&sd, true, false));
    assert_eq!(err.extra_state.len(), 1);
    assert!(err.extra_state[0].1.contains("UTF-8"), "{:?}", err.extra_state);
    assert!(
        bit_equal(&m.embed.weight.data(), &before),
        "the weight copied before the refusal was restored"
    );
    assert_eq!(m.vocab, ["x"]);
}

/// `state_dict(prefix=..., keep_vars=...)` and `load_state_dict(strict=..., assign=...)` by PyTorch's names:
/// the options combine, and the defaults are PyTorch's (`keep_vars=False`, `strict=True`, `assign=False`).
#[test]
fn state_dict_and_load_options_by_pytorchs_names_combine() {
    use nn::module::{LoadOptions, StateDictOptions};
    let mut m = b();
    let sd = m.state_dict_opts(StateDictOptions {
        prefix: "net.",
        keep_vars: true,
    });
    // PyTorch's order: the module's own buffer before its child's tensors.
    assert_eq!(
        sd.keys().cloned().collect::<Vec<_>>(),
        ["net.scale", "net.fc.weight", "net.fc.bias"]
    );
    // keep_vars: the entry is the parameter itself, so what is computed from it reaches its gradient.
    sd["net.fc.weight"].sum_all().unwrap().backward().unwrap();
    assert_eq!(m.fc.weight.grad().unwrap().to_vec::<f32>().unwrap(), vec![1.0; 4]);
    let plain = m.state_dict_opts(StateDictOptions::default());
    assert_eq!(
        plain.keys().collect::<Vec<_>>(),
        m.state_dict().keys().collect::<Vec<_>>()
    );
    assert!(!plain["fc.weight"].requires_grad());

    let mut partial = m.state_dict();
    partial.shift_remove("scale");
    let err = m.load_state_dict_opts(&partial, LoadOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("Missing key(s) in state_dict: \"scale\""),
        "{err}"
    );
    let keys = m
        .load_state_dict_opts(
            &partial,
            LoadOptions {
                strict: false,
                ..LoadOptions::default()
            },
        )
        .unwrap();
    assert_eq!(keys.missing_keys, ["scale"]);
    // assign: the module takes the tensors as they are, in their dtype.
    let mut doubles = m.state_dict();
    for t in doubles.values_mut() {
        *t = t.to_dtype(DType::F64).unwrap();
    }
    m.load_state_dict_opts(
        &doubles,
        LoadOptions {
            strict: true,
            assign: true,
        },
    )
    .unwrap();
    assert_eq!(m.fc.weight.dtype(), DType::F64);
    assert!(m.fc.weight.requires_grad());
}
