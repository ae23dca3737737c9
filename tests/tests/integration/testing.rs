//! `nn::testing::check_close` against PyTorch 2.5.1's `torch.testing.assert_close`
//! (`tests/fixtures/generate/assert_close.py`): the same verdict and, where it fails, PyTorch's message word for
//! word, for every dtype, 0-d scalars, NaN and infinities, the tolerance options and the attribute checks.

use nn::testing::{CloseOptions, check_close};
use nn::{DType, Tensor};
use serde_json::Value;

/// A JSON value (a number, a non-finite float spelled as a string, or a nested list) flattened.
fn flatten(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| flatten(i, out)),
        Value::Bool(b) => out.push(f64::from(u8::from(*b))),
        Value::String(s) => out.push(s.parse().unwrap()),
        number => out.push(number.as_f64().unwrap()),
    }
}

/// The tensor a case's side describes.
fn side(case: &Value, name: &str) -> Tensor {
    let mut values = Vec::new();
    flatten(&case[name], &mut values);
    let shape: Vec<usize> = case[format!("{name}_shape")]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let dtype = DType::parse(case[format!("{name}_dtype")].as_str().unwrap()).unwrap();
    Tensor::from_vec(values, shape).unwrap().to_dtype(dtype).unwrap()
}

#[test]
fn check_close_gives_pytorchs_verdicts_and_messages() {
    let path = integration_tests::fixture("testing/assert_close.json");
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(cases.len(), 39);
    for (i, case) in cases.iter().enumerate() {
        let o = &case["options"];
        let options = CloseOptions {
            rtol: o["rtol"].as_f64(),
            atol: o["atol"].as_f64(),
            equal_nan: o["equal_nan"].as_bool().unwrap_or(false),
            check_dtype: o["check_dtype"].as_bool().unwrap_or(true),
            msg: o["msg"].as_str().map(String::from),
            ..Default::default()
        };
        let got = check_close(&side(case, "actual"), &side(case, "expected"), &options);
        match case["message"].as_str() {
            None => assert!(got.is_ok(), "case {i}: {got:?}"),
            Some(want) => {
                let (kind, sentence) = want.split_once(": ").unwrap();
                let e = got.unwrap_err();
                let ours = match (&e, kind) {
                    (nn::Error::NotClose { message }, "AssertionError") => message.clone(),
                    (nn::Error::InvalidArgument { message, .. }, "ValueError") => message.clone(),
                    _ => panic!("case {i}: {e:?} where PyTorch raised {kind}"),
                };
                assert_eq!(ours, sentence, "case {i}");
            }
        }
    }
}

/// `assert_close` passes equal tensors and panics with PyTorch's message otherwise.
#[test]
fn assert_close_panics_with_pytorchs_message() {
    let a = Tensor::from_vec(vec![1.0f32, 2.0], [2]).unwrap();
    nn::testing::assert_close(&a, &a);
    let b = Tensor::from_vec(vec![1.0f32, 3.0], [2]).unwrap();
    let panic =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| nn::testing::assert_close(&a, &b))).unwrap_err();
    let text = panic.downcast_ref::<String>().unwrap();
    assert!(text.starts_with("assert_close: Tensor-likes are not close!"), "{text}");
    assert!(
        text.contains("Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)"),
        "{text}"
    );
}
