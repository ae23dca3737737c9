//! Inputs a user's program may hand over by mistake or from a damaged file: every one gives a typed error (or,
//! for an empty or 0-dimensional tensor, PyTorch's result), never a panic, and a failed load leaves the module
//! as it was. The one panic is documented: creating a tensor whose bytes cannot exist or that the allocator
//! refuses through an infallible constructor (`Tensor::zeros`, `Linear::new`), where the `try_` forms and the
//! constructors returning a `Result` give `Error::Allocation`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use integration_tests::bit_equal;
use nn::io::state_dict_from_bytes;
use nn::prelude::*;

/// A safetensors file of a small model's state dict.
fn saved(model: &Sequential) -> Vec<u8> {
    let path = std::env::temp_dir().join(format!("nn-odd-inputs-{}.safetensors", std::process::id()));
    model.save_safetensors(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).ok();
    bytes
}

fn model() -> Sequential {
    let mut seq = Sequential::new();
    seq.push(Linear::new(3, 4, true));
    seq.push(BatchNorm1d::new(4));
    seq.push(ReLU::new(false));
    seq
}

#[test]
fn every_truncation_of_a_safetensors_file_is_an_error() {
    let bytes = saved(&model());
    for cut in 0..bytes.len() {
        let result = catch_unwind(|| state_dict_from_bytes(&bytes[..cut], "cut.safetensors"));
        match result {
            Ok(Err(e)) => assert!(e.to_string().contains("cut.safetensors"), "{e}"),
            Ok(Ok(_)) => panic!("a file cut to {cut} of {} bytes was read", bytes.len()),
            Err(_) => panic!("reading a file cut to {cut} bytes panicked"),
        }
    }
    assert_eq!(
        state_dict_from_bytes(&bytes, "whole").unwrap().len(),
        model().state_dict().len()
    );
}

#[test]
fn a_damaged_file_never_panics_and_a_failed_load_changes_nothing() {
    let bytes = saved(&model());
    let mut target = model();
    let before = target.state_dict();
    let header_end = 8 + u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    // Every byte of the length and the header set to a few values: each result is an error or a state dict;
    // loading it strictly either succeeds or leaves the model untouched.
    for at in 0..header_end {
        for value in [0u8, b'"', b'9', b'}', 0xff] {
            let mut damaged = bytes.clone();
            damaged[at] = value;
            let read = catch_unwind(|| state_dict_from_bytes(&damaged, "damaged"))
                .unwrap_or_else(|_| panic!("byte {at} set to {value} made the reader panic"));
            let Ok(sd) = read else { continue };
            let loaded = catch_unwind(AssertUnwindSafe(|| target.load_state_dict(&sd, true, false)))
                .unwrap_or_else(|_| panic!("byte {at} set to {value} made load_state_dict panic"));
            if loaded.is_err() {
                for (k, t) in target.state_dict().iter() {
                    assert!(
                        bit_equal(t, &before[k]),
                        "{k} changed by a failed load (byte {at} = {value})"
                    );
                }
            } else {
                target = model();
                target.load_state_dict(&before, true, false).unwrap();
            }
        }
    }
}

#[test]
fn shapes_whose_size_overflows_match_no_tensor() {
    let huge = usize::MAX / 2 + 4; // huge * 2 wraps round to 6 in usize arithmetic
    assert_eq!(nn::Shape::from([huge, 2]).numel(), usize::MAX);
    let t = Tensor::zeros([2, 3], DType::F32);
    assert!(t.reshape([huge, 2]).is_err());
    assert!(t.reshape_infer(&[huge as isize, 2, -1]).is_err());
    let err = Tensor::from_bytes(&[0u8; 24], [huge, 2], DType::F32).unwrap_err();
    assert!(matches!(err, nn::Error::ElementCount { .. }), "{err}");
    let err = Tensor::from_vec(vec![0f32; 6], [huge, 2]).unwrap_err();
    assert!(matches!(err, nn::Error::ElementCount { .. }), "{err}");
    // A zero size anywhere makes the product zero, however large the others.
    assert_eq!(nn::Shape::from([usize::MAX, 2, 0]).numel(), 0);
}

#[test]
fn bytes_that_are_not_whole_elements_are_an_error_naming_the_dtype() {
    let err = Tensor::from_bytes(&[0u8; 7], [2], DType::F32).unwrap_err();
    assert!(
        err.to_string().contains("7 bytes") && err.to_string().contains("float32"),
        "{err}"
    );
}

#[test]
fn creating_a_tensor_too_large_for_memory_panics_naming_shape_and_dtype() {
    let panic = catch_unwind(|| Tensor::zeros([usize::MAX / 2, 4], DType::F32)).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("[9223372036854775807, 4]") && message.contains("float32"),
        "{message}"
    );
}

/// PyTorch raises "not enough memory" where its allocator refuses a tensor: here a typed error from every
/// fallible constructor, and a panic naming the shape (never `vec!`'s abort, which no caller can catch) from
/// the infallible ones. The sizes (1.6 PB and more) pass any machine's memory and x86-64's 128 TiB of address
/// space, so every allocator refuses them, overcommitting or not.
#[test]
fn a_tensor_the_allocator_refuses_is_an_error_or_a_panic_never_an_abort() {
    let refused = [1usize << 17, 1 << 32]; // 2^49 f32 elements: 2 PiB
    for (what, result) in [
        ("try_zeros", Tensor::try_zeros(refused, DType::F32)),
        ("try_full", Tensor::try_full(refused, 2.0, DType::F32)),
        (
            "try_uniform_with",
            Tensor::try_uniform_with(refused, 0.0, 1.0, DType::F32, &mut nn::random::Generator::new(1)),
        ),
        (
            "try_randn_with",
            Tensor::try_randn_with(refused, DType::F32, &mut nn::random::Generator::new(1)),
        ),
    ] {
        let err = result.unwrap_err();
        let nn::Error::Allocation {
            shape, dtype, bytes, ..
        } = &err
        else {
            panic!("{what}: {err}")
        };
        assert_eq!(
            (&shape[..], *dtype, *bytes),
            (&refused[..], DType::F32, 1 << 51),
            "{what}"
        );
    }
    // Layers whose constructors return a Result say so; the others panic with the shape.
    let err = LSTM::with_options(100_000_000, 1_000_000, Default::default())
        .err()
        .expect("LSTM of 3 PB");
    assert!(matches!(err, nn::Error::Allocation { .. }), "{err}");
    let err = Conv2d::new(1 << 24, 1 << 24, [3, 3], Default::default(), true)
        .err()
        .expect("Conv2d of 9 PB");
    assert!(matches!(err, nn::Error::Allocation { .. }), "{err}");
    let panic = catch_unwind(|| Linear::new(1 << 24, 1 << 26, true))
        .err()
        .expect("Linear of 4 PB");
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("[67108864, 16777216]") && message.contains("float32"),
        "{message}"
    );
    // And a size that fits is still a tensor.
    assert_eq!(
        Tensor::try_full([2, 3], 2.0, DType::F32)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        [2.0; 6]
    );
}

/// A layer under test, as a function.
type Layer = Box<dyn Fn(Tensor) -> nn::Result<Tensor>>;

#[test]
fn empty_and_zero_dimensional_tensors_go_through_the_activations_as_in_pytorch() {
    for shape in [vec![0usize], vec![0, 3], vec![3, 0, 2], vec![], vec![1]] {
        let x = Tensor::randn(shape.clone(), DType::F32);
        let layers: Vec<(&str, Layer)> = vec![
            ("relu", Box::new(|x| ReLU::new(false).forward(x))),
            ("gelu", Box::new(|x| GELU::new("tanh").unwrap().forward(x))),
            ("prelu", Box::new(|x| PReLU::new(1, 0.25).forward(x))),
            ("softmax", Box::new(|x| nn::functional::softmax(&x, -1))),
            ("log_softmax", Box::new(|x| nn::functional::log_softmax(&x, 0))),
        ];
        for (name, layer) in layers {
            let y = layer(x.clone()).unwrap_or_else(|e| panic!("{name} on {shape:?}: {e}"));
            assert_eq!(y.shape(), x.shape(), "{name}");
            let (a, b) = (x.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
            if name == "relu" {
                assert_eq!(b, a.iter().map(|v| v.max(0.0)).collect::<Vec<_>>());
            }
            if name == "softmax" && shape.is_empty() {
                assert_eq!(
                    b,
                    [1.0],
                    "softmax of a scalar is 1, as torch.softmax(torch.tensor(x), -1)"
                );
            }
        }
    }
}

fn requiring_grad(shape: &[usize]) -> Tensor {
    let mut t = Tensor::randn(shape.to_vec(), DType::F32);
    t.set_requires_grad(true).unwrap();
    t
}

#[test]
fn empty_dimensions_in_products_norms_and_convolutions_never_panic() {
    use nn::functional::{Conv2dOptions, conv2d};
    // A product over k = 0: zeros, and gradients of the operands' (empty) shapes, as PyTorch 2.5.1.
    let (a, b) = (requiring_grad(&[3, 0]), requiring_grad(&[0, 4]));
    let y = a.matmul(&b).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0; 12]);
    y.sum_all().unwrap().backward().unwrap();
    assert_eq!(a.grad().unwrap().shape(), &[3, 0]);
    assert_eq!(b.grad().unwrap().shape(), &[0, 4]);
    // A batch norm of no channel, in evaluation, forward and backward (PyTorch's own raises an IndexError).
    let mut bn = BatchNorm1d::new(0);
    bn.eval();
    let x = requiring_grad(&[2, 0]);
    let y = bn.forward(x.clone()).unwrap();
    assert_eq!(y.shape(), &[2, 0]);
    y.sum_all().unwrap().backward().unwrap();
    assert_eq!(x.grad().unwrap().shape(), &[2, 0]);
    // A convolution of no input channel sums nothing: the bias at every position.
    let (x, w) = (requiring_grad(&[1, 0, 3, 3]), requiring_grad(&[2, 0, 1, 1]));
    let bias = Tensor::from_vec(vec![0.5f32, -2.0], vec![2]).unwrap();
    let y = conv2d(&x, &w, Some(&bias), &Conv2dOptions::default()).unwrap();
    assert_eq!(y.shape(), &[1, 2, 3, 3]);
    assert_eq!(y.to_vec::<f32>().unwrap(), [[0.5f32; 9], [-2.0; 9]].concat());
    // No output channel: PyTorch's error.
    let w = requiring_grad(&[0, 2, 1, 1]);
    let err = conv2d(&requiring_grad(&[1, 2, 3, 3]), &w, None, &Conv2dOptions::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("expected weight to be at least 1 at dimension 0, but got weight of size [0, 2, 1, 1]"),
        "{err}"
    );
}
