//! The zoo fixture, mirrored with the derive: keys, orders, printout, casts, weights and outputs equal
//! PyTorch's.

use integration_tests::zoo::Zoo;
use integration_tests::{bit_equal, describe_state, fixture, lines, max_abs_diff, tensors};
use nn::prelude::*;

/// `name<TAB>description` of each named item, as the fixtures list them.
fn described<T, D: std::fmt::Display>(items: &[(String, T)], describe: impl Fn(&T) -> D) -> Vec<String> {
    items.iter().map(|(n, t)| format!("{n}\t{}", describe(t))).collect()
}

#[test]
fn state_dict_keys_dtypes_and_shapes_match_pytorch() {
    let zoo = Zoo::default();
    assert_eq!(describe_state(&zoo.state_dict()), lines("zoo/state_dict_keys.txt"));
}

#[test]
fn named_parameters_match_pytorch_with_and_without_duplicates() {
    let zoo = Zoo::default();
    assert_eq!(
        described(&zoo.named_parameters(), Param::shape),
        lines("zoo/named_parameters.txt")
    );
    let all = zoo.named_parameters_with("", true, false);
    assert_eq!(described(&all, Param::shape), lines("zoo/named_parameters_all.txt"));
}

#[test]
fn named_buffers_include_non_persistent_ones() {
    let zoo = Zoo::default();
    assert_eq!(
        described(&zoo.named_buffers(), |t: &Tensor| t.shape().clone()),
        lines("zoo/named_buffers.txt")
    );
}

#[test]
fn named_children_and_modules_match_pytorch() {
    let zoo = Zoo::default();
    let children = described(&zoo.named_children(), |m| m.type_name().to_string());
    assert_eq!(children, lines("zoo/named_children.txt"));
    let modules = described(&zoo.named_modules(), |m| m.type_name().to_string());
    assert_eq!(modules, lines("zoo/named_modules.txt"));
    let all = described(&zoo.named_modules_with("", false), |m| m.type_name().to_string());
    assert_eq!(all, lines("zoo/named_modules_all.txt"));
}

#[test]
fn display_is_pytorch_repr_byte_for_byte() {
    let zoo = Zoo::default();
    let expected = std::fs::read_to_string(fixture("zoo/repr.txt")).unwrap();
    assert_eq!(format!("{zoo}\n"), expected);
}

#[test]
fn half_casts_floats_and_keeps_int64() {
    let mut zoo = Zoo::default();
    zoo.half().unwrap();
    let dtypes: Vec<String> = zoo
        .state_dict()
        .iter()
        .map(|(k, t)| format!("{k}\t{}", t.dtype()))
        .collect();
    assert_eq!(dtypes, lines("zoo/state_dict_after_half.txt"));
    // The non-persistent buffer is cast too, as PyTorch's `_apply` casts every buffer.
    assert_eq!(zoo.get_buffer("blocks.0.cache").unwrap().dtype(), DType::F16);
}

#[test]
fn pytorch_weights_give_pytorch_outputs() {
    let mut zoo = Zoo::default();
    let keys = zoo.load_safetensors(fixture("zoo/weights.safetensors"), true).unwrap();
    assert!(keys.is_empty(), "{keys:?}");
    let io = tensors("zoo/io.safetensors");
    let y = zoo.forward(io["input"].clone()).unwrap();
    let err = max_abs_diff(&y, &io["output"]);
    assert!(err <= 1e-6, "max abs error {err}");
    // The shared PReLU holds one weight, loaded under both of its keys.
    let w = tensors("zoo/weights.safetensors");
    assert!(bit_equal(
        &zoo.get_parameter("heads.value.1.weight").unwrap().data(),
        &w["heads.policy.1.weight"]
    ));
}

#[test]
fn save_then_load_round_trips_bit_for_bit() {
    let mut zoo = Zoo::default();
    zoo.load_safetensors(fixture("zoo/weights.safetensors"), true).unwrap();
    zoo.get_buffer("steps").unwrap().fill_(7.0).unwrap();
    let dir = std::env::temp_dir().join(format!("nn-zoo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("zoo.safetensors");
    zoo.save_safetensors(&path).unwrap();

    let mut back = Zoo::default();
    back.load_safetensors(&path, true).unwrap();
    let (a, b) = (zoo.state_dict(), back.state_dict());
    assert_eq!(a.len(), b.len());
    for (key, t) in &a {
        assert!(bit_equal(t, &b[key]), "{key} differs after the round trip");
    }
    // The file holds exactly the state dict, with its dtypes.
    let file = nn::io::load_safetensors(&path).unwrap();
    assert_eq!(describe_state(&file).len(), a.len());
    assert_eq!(file["steps"].dtype(), DType::I64);
    std::fs::remove_dir_all(dir).ok();
}
