//! `Embedding` against PyTorch 2.5.1 over 64 random layers with every constructor option
//! (`tests/fixtures/embedding_sweep.{json,safetensors}`, from `tests/fixtures/generate/embedding_sweep.py`:
//! `padding_idx`, `max_norm` with five norm types, `scale_grad_by_freq`, `sparse`; indices of rank 0 to 3 with
//! repeats, int64 and int32; float32 and float64): the repr, the lookup, the table after it (`max_norm`
//! renormalises the rows looked up in place) and the weight's gradient, within `torch.testing.assert_close`'s
//! defaults, on the CPU and on a device (wgpu, or `NN_TEST_DEVICE`; without one the device test skips, and fails
//! under `CI=true`).

use integration_tests::{assert_close, lacks_dtype};
use nn::functional::EmbeddingOptions;
use nn::prelude::*;
use nn::{Device, StateDict};
use serde_json::Value;

const CASES: usize = 64;

/// The options of a case's JSON.
fn options(spec: &Value) -> EmbeddingOptions {
    EmbeddingOptions {
        padding_idx: spec["padding_idx"].as_u64().map(|p| p as usize),
        max_norm: spec["max_norm"].as_f64(),
        norm_type: match &spec["norm_type"] {
            Value::String(s) if s == "inf" => f64::INFINITY,
            v => v.as_f64().unwrap(),
        },
        scale_grad_by_freq: spec["scale_grad_by_freq"].as_bool().unwrap(),
        sparse: spec["sparse"].as_bool().unwrap(),
    }
}

/// Runs case `i` on `device`; returns whether it ran (false where the device lacks its dtype).
fn run_case(f: &StateDict, spec: &Value, i: usize, device: Device) -> bool {
    let get = |key: &str| &f[&format!("{i}.{key}")];
    let table = get("weight");
    if lacks_dtype(device, table.dtype()) {
        return false;
    }
    let what = format!("case {i} ({}) on {device}", spec["repr"]);
    let (num, dim) = (table.shape()[0], table.shape()[1]);
    let mut emb = Embedding::with_options(num, dim, options(spec)).unwrap();
    assert_eq!(emb.to_string(), spec["repr"].as_str().unwrap(), "{what}");
    emb.to_dtype(table.dtype()).unwrap();
    let mut state = StateDict::new();
    state.insert("weight".into(), table.clone());
    emb.load_state_dict(&state, true, false).unwrap();
    emb.to_device(device).unwrap();
    let y = match emb.forward(get("indices").to_device(device).unwrap()) {
        Ok(y) => y,
        Err(e @ nn::Error::UnsupportedOnDevice { .. }) if !device.is_cpu() => {
            eprintln!("{what}: {e}");
            return false;
        }
        Err(e) => panic!("{what}: {e}"),
    };
    assert_close(&format!("{what}: output"), &y, get("output"));
    assert_close(&format!("{what}: table after"), &emb.weight.data(), get("weight_after"));
    integration_tests::backward_along(&what, &y, get("proj"));
    assert_close(&format!("{what}: grad"), &emb.weight.grad().unwrap(), get("grad"));
    true
}

integration_tests::sweep_on_cpu_and_gpu!(
    embedding_options_match_pytorch_over_random_layers,
    embedding_options_on_a_device_match_pytorch_over_random_layers,
    "ops/embedding",
    CASES,
    "weight",
    run_case
);

/// `Embedding.from_pretrained` as PyTorch 2.5.1's: the table itself (a write through it is seen by the layer),
/// no gradient when frozen, the padding row left as it is (the constructor zeroes it, `from_pretrained` does
/// not), and 2-d tables only ("Embeddings parameter is expected to be 2-dimensional").
#[test]
fn from_pretrained_shares_the_table_and_freezes_it() {
    let table = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]).unwrap();
    let options = EmbeddingOptions {
        padding_idx: Some(0),
        ..EmbeddingOptions::default()
    };
    let frozen = Embedding::from_pretrained(table.clone(), true, options).unwrap();
    assert_eq!(frozen.to_string(), "Embedding(2, 2, padding_idx=0)");
    assert!(!frozen.weight.requires_grad());
    let index = Tensor::from_vec(vec![0i64], [1]).unwrap();
    assert_eq!(
        frozen.forward(index.clone()).unwrap().to_vec::<f32>().unwrap(),
        [1.0, 2.0]
    );
    table.fill_(7.0).unwrap();
    assert_eq!(
        frozen.forward(index.clone()).unwrap().to_vec::<f32>().unwrap(),
        [7.0, 7.0]
    );
    let trained = Embedding::from_pretrained(table, false, EmbeddingOptions::default()).unwrap();
    assert!(trained.weight.requires_grad());
    let err = Embedding::from_pretrained(Tensor::zeros([4], DType::F32), true, EmbeddingOptions::default())
        .err()
        .expect("a 1-d table is refused");
    assert!(err.to_string().contains("expected to be 2-dimensional"), "{err}");
}

/// PyTorch's constructor refusals: a padding row outside the table ("Padding_idx must be within
/// num_embeddings"); and nn's for `max_norm` with a `norm_type` that is no norm (PyTorch computes a
/// meaningless one). An index out of range under `max_norm` is an error before anything is written.
#[test]
fn bad_options_and_indices_are_refused_before_any_write() {
    let padding = EmbeddingOptions {
        padding_idx: Some(3),
        ..EmbeddingOptions::default()
    };
    let err = Embedding::with_options(3, 2, padding).err().expect("refused");
    assert!(
        err.to_string().contains("Padding_idx must be within num_embeddings"),
        "{err}"
    );
    let no_norm = EmbeddingOptions {
        max_norm: Some(1.0),
        norm_type: 0.0,
        ..EmbeddingOptions::default()
    };
    assert!(Embedding::with_options(3, 2, no_norm).is_err());
    let renorm = EmbeddingOptions {
        max_norm: Some(1.0),
        ..EmbeddingOptions::default()
    };
    let emb = Embedding::with_options(3, 2, renorm).unwrap();
    let before = emb.weight.data().to_vec::<f32>().unwrap();
    let err = emb
        .forward(Tensor::from_vec(vec![0i64, 1, 3], [3]).unwrap())
        .unwrap_err();
    assert!(
        err.to_string().contains("index 3 at position 2 is out of range"),
        "{err}"
    );
    assert_eq!(emb.weight.data().to_vec::<f32>().unwrap(), before);
}

/// The renormalisation of a later lookup does not spoil an earlier lookup's backward: PyTorch's embedding
/// backward needs only the indices, so `y1.backward()` after a second `max_norm` lookup gives the gradient of
/// the first (here the sum's: ones at the looked-up row).
#[test]
fn a_renormalising_lookup_leaves_an_earlier_backward_intact() {
    let options = EmbeddingOptions {
        max_norm: Some(0.5),
        ..EmbeddingOptions::default()
    };
    let emb = Embedding::with_options(3, 2, options).unwrap();
    {
        let _guard = nn::no_grad();
        emb.weight.data().fill_(2.0).unwrap();
    }
    let index = Tensor::from_vec(vec![1i64], [1]).unwrap();
    let y1 = emb.forward(index.clone()).unwrap();
    let y2 = emb.forward(Tensor::from_vec(vec![0i64, 1], [2]).unwrap()).unwrap();
    y1.sum_all().unwrap().backward().unwrap();
    assert_eq!(
        emb.weight.grad().unwrap().to_vec::<f32>().unwrap(),
        [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    );
    drop(y2);
}
