//! `x.i(...)` and `x.index_put_(...)` against PyTorch 2.5.1's `x[...]` and `x[...] = v`
//! (`tests/fixtures/generate/tensor_indexing.py`): integers, slices with steps, negative and clamped bounds, new
//! axes, ellipses, index tensors (adjacent, apart, broadcast), bool masks; values and gradients, on the CPU and a
//! device; views that alias; PyTorch's refusals.

use integration_tests::{assert_close, fixture_on, on_cpu_and_gpu, widest_float};
use nn::Result;
use nn::prelude::*;

fn fixture() -> StateDict {
    integration_tests::tensors("tensor/indexing.safetensors")
}

/// The fixture's index tensors.
struct Indices {
    idx: Tensor,
    i1: Tensor,
    i2: Tensor,
    m: Tensor,
    m4: Tensor,
}

type Read = fn(&Tensor, &Indices) -> Result<Tensor>;

/// Each read, as the generator writes it in Python.
const READS: [(&str, Read); 18] = [
    ("int", |x, _| x.i(1)),                                                 // x[1]
    ("neg", |x, _| x.i((-1, -2))),                                          // x[-1, -2]
    ("slices", |x, _| x.i((.., 1.., (..).step(2)))),                        // x[:, 1:, ::2]
    ("neg_slice", |x, _| x.i((Index::Ellipsis, -3..-1))),                   // x[..., -3:-1]
    ("ellipsis_int", |x, _| x.i((Index::Ellipsis, 0))),                     // x[..., 0]
    ("newaxis", |x, _| x.i((0, Index::NewAxis, .., Index::NewAxis))),       // x[0, None, :, None]
    ("clamped", |x, _| x.i((.., 1..100, -100..2))),                         // x[:, 1:100, -100:2]
    ("inclusive", |x, _| x.i((0, 0, 1..=2, ..))),                           // x[0, 0, 1:3, :]
    ("two_ellipses", |x, _| x.i((0, Index::Ellipsis, 1, Index::Ellipsis))), // x[0, ..., 1, ...]
    ("tensor", |x, ix| x.i((.., &ix.idx))),                                 // x[:, idx]
    ("adjacent", |x, ix| x.i((.., .., &ix.i1, &ix.i2))),                    // x[:, :, i1, i2]
    ("apart", |x, ix| x.i((&ix.i1, .., &ix.i2))),                           // x[i1, :, i2]
    ("tensor_int", |x, ix| x.i((.., &ix.idx, .., 1))),                      // x[:, idx, :, 1]
    ("mask", |x, ix| x.i(&ix.m)),                                           // x[m]
    ("mask_inner", |x, ix| x.i((.., .., &ix.m4))),                          // x[:, :, m4]
    ("mask_and_tensor", |x, ix| x.i((&ix.m, &ix.i2.i(..1)?))),              // x[m, i2[:1]]
    ("true", |x, _| x.i(Tensor::scalar(true))),                             // x[True]
    ("false", |x, _| x.i(Tensor::scalar(false))),                           // x[False]
];

fn reads(device: Device) {
    let f = fixture();
    let dtype = widest_float(device);
    let on = |key: &str| fixture_on(&f, key, dtype, device);
    let ix = Indices {
        idx: on("idx"),
        i1: on("i1"),
        i2: on("i2"),
        m: on("m"),
        m4: on("m4"),
    };
    let expect = |key: &str| f[key].to_dtype(dtype).unwrap();
    for (name, read) in READS {
        let what = format!("x[{name}] in {dtype} on {device}");
        let x = on("x").requires_grad_(true).unwrap();
        let y = read(&x, &ix).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_close(&what, &y.detach(), &expect(&format!("read.{name}")));
        y.mul(&on(&format!("read.{name}.w")))
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        assert_close(
            &format!("{what}: gradient"),
            &x.grad().unwrap(),
            &expect(&format!("read.{name}.grad")),
        );
    }
}

on_cpu_and_gpu!(reads_equal_pytorchs, reads_on_a_device_equal_pytorchs, reads);

fn writes(device: Device) {
    let f = fixture();
    let dtype = widest_float(device);
    let on = |key: &str| fixture_on(&f, key, dtype, device);
    let (idx, m) = (on("idx"), on("m"));
    let pairs = [
        Tensor::from_vec(vec![0i64, 0, 1], [3]).unwrap(),
        Tensor::from_vec(vec![2i64, 2, 0], [3]).unwrap(),
    ];
    let writes: [(&str, Vec<Index>, bool); 5] = [
        ("column", vec![(..).into(), 0.into()], false),      // x[:, 0] = v
        ("tensor", vec![(..).into(), (&idx).into()], false), // x[:, idx] = v
        ("mask", vec![(&m).into()], false),                  // x[m] = v
        ("accumulate", vec![(&pairs[0]).into(), (&pairs[1]).into()], true), // index_put_(.., True)
        ("slices_add", vec![0.into(), (1..).into(), (..).step(2)], true), // x[0, 1:, ::2] += v
    ];
    for (name, index, accumulate) in writes {
        let x = on("x").deep_copy().unwrap();
        let alias = x.clone();
        x.index_put_(index, &on(&format!("write.{name}.v")), accumulate)
            .unwrap();
        let what = format!("write {name} in {dtype} on {device}");
        assert_close(&what, &alias, &f[&format!("write.{name}")].to_dtype(dtype).unwrap());
    }
    // A read of integers and slices is a view: writing into it writes into `x`.
    let x = on("x").deep_copy().unwrap();
    let column = x.i((.., 0, 1..3)).unwrap();
    assert!(column.is_view());
    column.fill_(7.0).unwrap();
    let row = x.i((1, 0, 2)).unwrap().to_vec_f64().unwrap();
    assert_eq!(row, vec![7.0; 5], "{device}");
    assert_ne!(x.i((1, 0, 3, 0)).unwrap().to_vec_f64().unwrap(), vec![7.0], "{device}");
}

on_cpu_and_gpu!(writes_equal_pytorchs, writes_on_a_device_equal_pytorchs, writes);

#[test]
fn a_write_through_an_index_is_recorded() {
    // `h = x * 1; h[:, idx] = v; (h * w).sum().backward()`: x's gradient is w outside the written places, v's
    // the sum of w over them.
    let x = Tensor::ones([2, 3], DType::F64).requires_grad_(true).unwrap();
    let v = Tensor::from_vec(vec![2.0f64, 3.0], [2, 1])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let h = x.mul_scalar(1.0).unwrap();
    let idx = Tensor::from_vec(vec![0i64, 2], [2]).unwrap();
    h.index_put_((.., &idx), &v, false).unwrap();
    assert_eq!(h.to_vec::<f64>().unwrap(), vec![2.0, 1.0, 2.0, 3.0, 1.0, 3.0]);
    let w = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]).unwrap();
    h.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>().unwrap(),
        vec![0.0, 2.0, 0.0, 0.0, 5.0, 0.0]
    );
    assert_eq!(v.grad().unwrap().to_vec::<f64>().unwrap(), vec![4.0, 10.0]);
}

#[test]
fn refusals_carry_pytorchs_sentences() {
    let x = Tensor::zeros([2, 3, 4, 5], DType::F32);
    let said = |r: Result<Tensor>| r.unwrap_err().to_string();
    let five = Tensor::from_vec(vec![5i64], [1]).unwrap();
    assert!(said(x.i((.., &five))).contains("index 5 is out of bounds for dimension 0 with size 3"));
    assert!(said(x.i(5)).contains("index 5 is out of bounds for dimension 0 with size 2"));
    let mask = Tensor::from_vec(vec![true, false], [1, 2]).unwrap();
    assert!(said(x.i(&mask)).contains(
        "The shape of the mask [1, 2] at index 0 does not match the shape of the indexed tensor [2, 3, 4, 5] at index 0"
    ));
    assert!(said(x.i((0, 0, 0, 0, 0))).contains("too many indices for tensor of dimension 4"));
    let float = Tensor::from_vec(vec![1.0f32], [1]).unwrap();
    assert!(said(x.i(&float)).contains("tensors used as indices must be long, int, byte or bool tensors"));
    let (a, b) = (
        Tensor::from_vec(vec![0i64, 1], [2]).unwrap(),
        Tensor::from_vec(vec![0i64, 1, 2], [3]).unwrap(),
    );
    assert!(
        said(x.i((&a, &b)))
            .contains("shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]")
    );
    assert!(said(x.i((..).step(-1))).contains("step must be greater than zero"));
    assert!(said(x.i((..).step(0))).contains("slice step cannot be zero"));
    let idx = Tensor::from_vec(vec![1i64, 0], [2]).unwrap();
    let err = x
        .index_put_((.., &idx), &Tensor::ones([3], DType::F32), false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 2, 4, 5]"
        ),
        "{err}"
    );
}
