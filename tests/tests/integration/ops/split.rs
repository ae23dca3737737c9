//! `split_with_sizes`, `split`, `chunk` and `unbind` as PyTorch 2.5.1's: the pieces' sizes (including its
//! edge cases: fewer chunks than asked, empty dimensions), their values, the refusals with PyTorch's messages,
//! and the same pieces, bit for bit, on a device. Their gradients are checked against finite differences in
//! `autograd/gradcheck.rs`.

use integration_tests::{bit_equal, on_cpu_and_gpu};
use nn::prelude::*;

/// The sizes along `dim` of `pieces`.
fn sizes(pieces: &[Tensor], dim: usize) -> Vec<usize> {
    pieces.iter().map(|p| p.shape()[dim]).collect()
}

/// `0, 1, 2, …` of `shape` in f32.
fn counting(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::arange(0.0, n as f64, 1.0, DType::F32)
        .unwrap()
        .reshape(shape.to_vec())
        .unwrap()
}

#[test]
fn pieces_have_pytorchs_sizes() {
    // Expected sizes printed by PyTorch 2.5.1, e.g. `[t.shape for t in torch.arange(7.).chunk(4)]`.
    let seven = counting(&[7]);
    assert_eq!(sizes(&seven.chunk(3, 0).unwrap(), 0), [3, 3, 1]);
    assert_eq!(sizes(&seven.chunk(4, 0).unwrap(), 0), [2, 2, 2, 1]);
    assert_eq!(sizes(&counting(&[6]).chunk(4, 0).unwrap(), 0), [2, 2, 2]);
    assert_eq!(sizes(&seven.split(3, 0).unwrap(), 0), [3, 3, 1]);
    assert_eq!(sizes(&seven.split(10, 0).unwrap(), 0), [7]);
    let empty = Tensor::zeros([0], DType::F32);
    assert_eq!(sizes(&empty.chunk(3, 0).unwrap(), 0), [0, 0, 0]);
    assert_eq!(sizes(&empty.split(0, 0).unwrap(), 0), [0]);
    assert_eq!(sizes(&empty.split(2, 0).unwrap(), 0), [0]);
    assert!(empty.split_with_sizes(&[], 0).unwrap().is_empty());
    // unbind drops the dimension; `torch.zeros(0, 3).unbind(0)` is `()`, `torch.zeros(2, 0).unbind(1)` too.
    let rows = counting(&[2, 3]).unbind(1).unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.shape() == &[2]));
    assert!(Tensor::zeros([0, 3], DType::F32).unbind(0).unwrap().is_empty());
    assert!(Tensor::zeros([2, 0], DType::F32).unbind(1).unwrap().is_empty());
}

#[test]
fn pieces_hold_the_entries_in_order() {
    let t = counting(&[2, 5]);
    let parts = t.split_with_sizes(&[2, 0, 3], -1).unwrap();
    assert_eq!(parts[0].to_vec::<f32>().unwrap(), [0.0, 1.0, 5.0, 6.0]);
    assert_eq!(parts[1].shape(), &[2, 0]);
    assert_eq!(parts[2].to_vec::<f32>().unwrap(), [2.0, 3.0, 4.0, 7.0, 8.0, 9.0]);
    let rows = t.unbind(0).unwrap();
    assert_eq!(rows[1].to_vec::<f32>().unwrap(), [5.0, 6.0, 7.0, 8.0, 9.0]);
    // Integer tensors split too.
    let ids = Tensor::from_vec(vec![4i64, 5, 6], [3]).unwrap();
    let p = ids.split(2, 0).unwrap();
    assert_eq!(p[1].to_vec::<i64>().unwrap(), [6]);
}

#[test]
fn refusals_carry_pytorchs_messages() {
    // Each message as PyTorch 2.5.1 raises it for the same call.
    let seven = counting(&[7]);
    let message = |r: nn::Result<Vec<Tensor>>| r.unwrap_err().to_string();
    let cases = [
        (
            message(seven.split(0, 0)),
            "split_size can only be 0 if dimension size is 0, but got dimension size of 7",
        ),
        (
            message(seven.chunk(0, 0)),
            "chunk expects `chunks` to be greater than 0, got: 0",
        ),
        (
            message(seven.split_with_sizes(&[3, 3], 0)),
            "split_with_sizes expects split_sizes to sum exactly to 7 (input tensor's size at dimension 0), but \
             got split_sizes=[3, 3]",
        ),
        (
            message(Tensor::scalar(1.0f32).split(1, 0)),
            "split expects at least a 1-dimensional tensor",
        ),
    ];
    for (got, want) in cases {
        assert!(got.contains(want), "{got:?} does not say {want:?}");
    }
    let scalar = message(Tensor::scalar(1.0f32).unbind(0));
    assert!(
        scalar.contains("Dimension specified as 0 but tensor has no dimensions"),
        "{scalar:?}"
    );
    for dim in [1, -2] {
        assert!(
            seven.split(2, dim).is_err(),
            "dimension {dim} of a 1-dimensional tensor"
        );
        assert!(seven.unbind(dim).is_err(), "dimension {dim} of a 1-dimensional tensor");
        assert!(
            seven.chunk(2, dim).is_err(),
            "dimension {dim} of a 1-dimensional tensor"
        );
    }
}

/// The pieces on `device` equal the CPU's bit for bit (an exact copy), and the gradient of a sum over some of
/// them is one in their slots and zero in the unused piece.
fn pieces_and_gradient_on(device: Device) {
    let t = counting(&[3, 4, 2]);
    let on = t.to_device(device).unwrap();
    for (cpu, dev) in t.chunk(3, 1).unwrap().iter().zip(on.chunk(3, 1).unwrap()) {
        assert!(bit_equal(cpu, &dev.cpu().unwrap()));
    }
    for (cpu, dev) in t.unbind(2).unwrap().iter().zip(on.unbind(2).unwrap()) {
        assert!(bit_equal(cpu, &dev.cpu().unwrap()));
    }
    let leaf = on.requires_grad_(true).unwrap();
    let parts = leaf.split_with_sizes(&[1, 2, 1], 1).unwrap();
    parts[0]
        .sum_all()
        .unwrap()
        .add(&parts[2].sum_all().unwrap())
        .unwrap()
        .backward()
        .unwrap();
    let g = leaf.grad().unwrap();
    assert_eq!(g.device(), device);
    let want: Vec<f32> = (0..24)
        .map(|i| if (i / 2) % 4 == 0 || (i / 2) % 4 == 3 { 1.0 } else { 0.0 })
        .collect();
    assert_eq!(g.cpu().unwrap().to_vec::<f32>().unwrap(), want);
}

on_cpu_and_gpu!(
    pieces_and_gradient_on_the_cpu,
    pieces_and_gradient_on_the_device,
    pieces_and_gradient_on
);
