//! `Tensor::einsum` against PyTorch 2.5.1's `torch.einsum` (`tests/fixtures/generate/tensor_einsum.py`): products,
//! batches, transposes, diagonals, traces, outer products, ellipses with broadcasting, implicit outputs, three
//! operands; values and gradients on the CPU and a device; PyTorch's refusals.

use integration_tests::{assert_close, fixture_on, on_cpu_and_gpu, widest_float};
use nn::Result;
use nn::prelude::*;

fn fixture() -> StateDict {
    integration_tests::tensors("tensor/einsum.safetensors")
}

/// Each case's name, equation and operand count, as the generator lists them.
const CASES: [(&str, &str, usize); 17] = [
    ("matmul", "ij,jk->ik", 2),
    ("batched", "bij,bjk->bik", 2),
    ("transpose", "ij->ji", 1),
    ("diagonal", "ii->i", 1),
    ("trace", "ii", 1),
    ("dot", "i,i->", 2),
    ("outer", "i,j->ij", 2),
    ("attention", "bhqd,bhkd->bhqk", 2),
    ("ellipsis", "...ij,...jk", 2),
    ("sum", "ijk->", 1),
    ("chain", "ij,jk,kl->il", 3),
    ("implicit", "Ba,aC", 2),
    ("triple", "i,i,i->i", 3),
    ("batched_dot", "bi,bi->b", 2),
    ("broadcast", "...i,...i->...", 2),
    ("kept_and_summed", "bij,jk->bk", 2),
    ("dropped_ellipsis", "...ij->ij", 1),
];

fn einsums(device: Device) {
    let f = fixture();
    let dtype = widest_float(device);
    let expect = |key: &str| f[key].to_dtype(dtype).unwrap();
    for (name, equation, count) in CASES {
        let what = format!("einsum {equation:?} in {dtype} on {device}");
        let leaves: Vec<Tensor> = (0..count)
            .map(|i| {
                fixture_on(&f, &format!("{name}.{i}"), dtype, device)
                    .requires_grad_(true)
                    .unwrap()
            })
            .collect();
        let refs: Vec<&Tensor> = leaves.iter().collect();
        let y = Tensor::einsum(equation, &refs).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_close(&what, &y.detach(), &expect(name));
        let w = fixture_on(&f, &format!("{name}.w"), dtype, device);
        y.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
        for (i, leaf) in leaves.iter().enumerate() {
            let grad = expect(&format!("{name}.grad.{i}"));
            assert_close(&format!("{what}: gradient {i}"), &leaf.grad().unwrap(), &grad);
        }
    }
}

on_cpu_and_gpu!(einsums_equal_pytorchs, einsums_on_a_device_equal_pytorchs, einsums);

#[test]
fn refusals_carry_pytorchs_sentences() {
    let (a, b) = (Tensor::ones([2, 3], DType::F32), Tensor::ones([3, 4], DType::F32));
    let said = |r: Result<Tensor>| r.unwrap_err().to_string();
    let cases: [(&str, Vec<&Tensor>, &str); 13] = [
        (
            "i.j",
            vec![&a],
            "einsum(): found '.' for operand 0 that is not part of any ellipsis",
        ),
        (
            "ij,j..k",
            vec![&a, &b],
            "einsum(): found '.' for operand 1 that is not part of any ellipsis",
        ),
        (
            "......i",
            vec![&a],
            "einsum(): found '.' for operand 0 for which an ellipsis was already found",
        ),
        (
            "ij->i.",
            vec![&a],
            "einsum(): found '.' for output that is not part of any ellipsis (...)",
        ),
        (
            "ij->......",
            vec![&a],
            "einsum(): found '.' for output but an ellipsis (...) was already found",
        ),
        (
            "ii",
            vec![&a],
            "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2",
        ),
        (
            "ij,jk->ik",
            vec![&a],
            "einsum(): fewer operands were provided than specified in the equation",
        ),
        (
            "ij,ij->i",
            vec![&a, &a, &a],
            "einsum(): more operands were provided than specified in the equation",
        ),
        (
            "ij->ik",
            vec![&a],
            "einsum(): output subscript k does not appear in the equation for any input operand",
        ),
        (
            "ij->ii",
            vec![&a],
            "einsum(): output subscript i appears more than once in the output",
        ),
        (
            "i,i",
            vec![&a, &b],
            "einsum(): the number of subscripts in the equation (1) does not match the number of dimensions (2) for \
             operand 0 and no ellipsis was given",
        ),
        (
            "i1",
            vec![&a],
            "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]",
        ),
        (
            "ij,jk->ik",
            vec![&a, &a],
            "einsum(): subscript j has size 2 for operand 1 which does not broadcast with previously seen size 3",
        ),
    ];
    for (equation, operands, sentence) in cases {
        let err = said(Tensor::einsum(equation, &operands));
        assert!(err.contains(sentence), "{equation}: {err}");
    }
}
