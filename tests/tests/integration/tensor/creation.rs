//! Creating tensors as PyTorch 2.5.1 does (`tests/fixtures/generate/tensor_methods.py`, the `new.*` cases):
//! `linspace`, `logspace` and `eye` in several dtypes, `full_like`, the seeded `rand_like` draws, and `tensor!`
//! from nested literals with `torch.tensor`'s dtypes.

use integration_tests::assert_close;
use nn::prelude::*;
use nn::{Result, tensor};

fn fixture() -> StateDict {
    integration_tests::tensors("tensor/methods.safetensors")
}

/// `got` against PyTorch's `want`: the dtype and shape, integers exactly, floats within the dtype's tolerance.
fn check(what: &str, got: Result<Tensor>, want: &Tensor) {
    let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!((got.dtype(), got.shape()), (want.dtype(), want.shape()), "{what}");
    if want.is_floating_point() {
        assert_close(what, &got, want);
    } else {
        assert_eq!(got.to_vec::<i64>().unwrap(), want.to_vec::<i64>().unwrap(), "{what}");
    }
}

#[test]
fn ranges_and_the_identity_equal_pytorchs() {
    let f = fixture();
    let cases: [(&str, Result<Tensor>); 11] = [
        ("linspace_f32", Tensor::linspace(-3.0, 7.5, 23, DType::F32)),
        ("linspace_f64", Tensor::linspace(0.1, -2.3, 17, DType::F64)),
        ("linspace_f16", Tensor::linspace(-1.0, 1.0, 11, DType::F16)),
        ("linspace_i64", Tensor::linspace(-7.0, 12.0, 9, DType::I64)),
        ("linspace_one", Tensor::linspace(2.0, 5.0, 1, DType::F32)),
        ("linspace_none", Tensor::linspace(2.0, 5.0, 0, DType::F32)),
        ("logspace_f32", Tensor::logspace(-2.0, 3.0, 13, 10.0, DType::F32)),
        ("logspace_base2_f64", Tensor::logspace(0.5, -4.0, 10, 2.0, DType::F64)),
        ("eye_3", Tensor::eye(3, 3, DType::F32)),
        ("eye_2x5_i64", Tensor::eye(2, 5, DType::I64)),
        ("eye_4x2_f64", Tensor::eye(4, 2, DType::F64)),
    ];
    for (name, got) in cases {
        check(name, got, &f[&format!("new.{name}")]);
    }
}

type Draw = fn(&Tensor) -> Result<Tensor>;

/// The `_like` draws after PyTorch's seeds give PyTorch's samples, in the model's dtype.
#[test]
fn random_likes_draw_pytorchs_samples() {
    integration_tests::in_own_process(|| {
        let f = fixture();
        let draws: [(&str, u64, Tensor, Draw); 3] = [
            ("rand_like", 11, Tensor::zeros([3, 5], DType::F32), Tensor::rand_like),
            ("randn_like", 12, Tensor::zeros([4, 2], DType::F64), Tensor::randn_like),
            ("randint_like", 13, Tensor::zeros([2, 3], DType::I64), |t| {
                t.randint_like(3, 9)
            }),
        ];
        for (name, seed, like, draw) in draws {
            nn::manual_seed(seed);
            check(name, draw(&like), &f[&format!("new.{name}")]);
        }
    });
}

#[test]
fn the_tensor_macro_reads_nested_literals_as_torch_tensor() {
    let x = tensor!([[1.5, -2.0, 0.25], [3.0, 4.0, -0.5]]).unwrap();
    assert_eq!((x.shape().to_vec(), x.dtype()), (vec![2, 3], DType::F32));
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.5, -2.0, 0.25, 3.0, 4.0, -0.5]);
    // Python ints give int64, bools bool; a dtype after the data overrides.
    let i = tensor!([[[1, 2]], [[3, 4]], [[5, 6]]]).unwrap();
    assert_eq!((i.shape().to_vec(), i.dtype()), (vec![3, 1, 2], DType::I64));
    assert_eq!(tensor!([true, false]).unwrap().dtype(), DType::Bool);
    let d = tensor!([1, 2], DType::F64).unwrap();
    assert_eq!((d.dtype(), d.to_vec::<f64>().unwrap()), (DType::F64, vec![1.0, 2.0]));
    // 0-d, vectors and slices, and an empty level.
    let s = tensor!(7).unwrap();
    assert_eq!((s.rank(), s.item().unwrap()), (0, 7.0));
    let v = tensor!(vec![vec![1.0f32, 2.0], vec![3.0, 4.0]]).unwrap();
    assert_eq!(v.shape().to_vec(), vec![2, 2]);
    let rows: &[[i64; 2]] = &[[1, 2], [3, 4], [5, 6]];
    assert_eq!(tensor!(*rows).unwrap().shape().to_vec(), vec![3, 2]);
    assert_eq!(
        tensor!(vec![Vec::<f64>::new(); 2]).unwrap().shape().to_vec(),
        vec![2, 0]
    );
    // PyTorch's refusal of ragged data: `torch.tensor([[1., 2.], [3.]])`.
    let ragged = tensor!(vec![vec![1.0, 2.0], vec![3.0]]).unwrap_err().to_string();
    assert!(
        ragged.contains("expected sequence of length 2 at dim 1 (got 1)"),
        "{ragged}"
    );
    let deeper = tensor!(vec![vec![vec![1], vec![2, 3]]]).unwrap_err().to_string();
    assert!(
        deeper.contains("expected sequence of length 1 at dim 2 (got 2)"),
        "{deeper}"
    );
}

#[test]
fn full_like_keeps_dtype_and_device() {
    let x = Tensor::zeros([2, 3], DType::F16);
    let y = x.full_like(-0.625).unwrap();
    assert_eq!((y.dtype(), y.shape().to_vec()), (DType::F16, vec![2, 3]));
    assert_eq!(y.to_vec_f64().unwrap(), vec![-0.625; 6]);
    // `torch.full_like(torch.zeros(2, dtype=torch.int64), 7.9)` truncates: 7.
    let i = Tensor::zeros([2], DType::I64).full_like(7.9).unwrap();
    assert_eq!(i.to_vec::<i64>().unwrap(), vec![7, 7]);
}

#[test]
fn range_refusals_carry_pytorchs_sentences() {
    let said = |r: Result<Tensor>| r.unwrap_err().to_string();
    assert!(said(Tensor::arange(0.0, 1.0, 0.0, DType::F32)).contains("step must be nonzero"));
    assert!(
        said(Tensor::arange(5.0, 1.0, 1.0, DType::F32))
            .contains("upper bound and larger bound inconsistent with step sign")
    );
    assert!(said(Tensor::arange(0.0, f64::INFINITY, 1.0, DType::F32)).contains("unsupported range: 0 -> inf"));
    assert!(said(Tensor::linspace(0.0, 1.0, 3, DType::Bool)).contains("\"linspace_cpu\" not implemented for 'Bool'"));
}
