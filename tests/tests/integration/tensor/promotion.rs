//! Type promotion against PyTorch 2.5.1's table (`tests/fixtures/generate/tensor_promotion.py`): every pair of
//! dtypes as 1-d and 0-d tensors (`torch.result_type`), and each dtype with a Python integer and float.

use nn::Shape;
use nn::prelude::*;

fn dtype(v: &serde_json::Value) -> DType {
    let name = v.as_str().unwrap();
    DType::parse(name).unwrap_or_else(|| panic!("unknown dtype {name}"))
}

/// A tensor of `dtype`: 1-d of two ones, or 0-d.
fn operand(dtype: DType, rank: u64) -> Tensor {
    let shape: Shape = if rank == 0 { Shape::scalar() } else { [2].into() };
    Tensor::ones(shape, dtype)
}

/// The fixture.
fn table() -> serde_json::Value {
    let text = std::fs::read_to_string(integration_tests::fixture("tensor/promotion.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn result_types_match_pytorchs_table() {
    let table = table();
    for case in table["tensors"].as_array().unwrap() {
        let a = operand(dtype(&case["a"]), case["a_rank"].as_u64().unwrap());
        let b = operand(dtype(&case["b"]), case["b_rank"].as_u64().unwrap());
        let want = dtype(&case["result"]);
        assert_eq!(a.result_type(&b), want, "{case}");
        // Arithmetic computes there wherever its result is a float.
        if want.is_floating_point() {
            assert_eq!(a.add(&b).unwrap().dtype(), want, "add: {case}");
            assert_eq!(a.lt(&b).unwrap().dtype(), DType::Bool, "lt: {case}");
        }
    }
}

#[test]
fn python_numbers_promote_as_pytorchs() {
    let table = table();
    for case in table["numbers"].as_array().unwrap() {
        let x = operand(dtype(&case["a"]), 1);
        assert_eq!((&x + 2).dtype(), dtype(&case["plus_int"]), "x + 2: {case}");
        assert_eq!((&x + 2.5).dtype(), dtype(&case["plus_float"]), "x + 2.5: {case}");
        assert_eq!((&x / 2).dtype(), dtype(&case["divided"]), "x / 2: {case}");
    }
}
