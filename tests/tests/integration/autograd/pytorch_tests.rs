//! The backward pass's semantics that PyTorch's own autograd tests check, each test citing the PyTorch 2.5.1
//! test it mirrors (test/test_autograd.py), and PyTorch's sentences inside nn's autograd errors.

use nn::Error;
use nn::prelude::*;

/// A leaf `[1, 2, 3]` in f64 that requires grad.
fn leaf() -> Tensor {
    Tensor::from_vec(vec![1.0f64, 2.0, 3.0], [3])
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

fn ones() -> Tensor {
    Tensor::ones([3], DType::F64)
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

/// PyTorch's sentence for a second pass through a node whose saved tensors the first freed.
const FREED: &str = "Trying to backward through the graph a second time (or directly access saved tensors after they \
                     have already been freed). Saved intermediate values of the graph are freed when you call \
                     .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the \
                     graph a second time or if you need to access saved tensors after calling backward.";

/// test_autograd.py::TestAutograd::test_backward_twice_without_saved_values: `c = b + 1` saves nothing, so a
/// second backward through it runs without `retain_graph` and the gradients add up.
#[test]
fn a_second_backward_runs_through_nodes_that_saved_nothing() {
    let b = leaf();
    let c = b.add_scalar(1.0).unwrap();
    c.backward_with(&ones()).unwrap();
    c.backward_with(&ones()).unwrap();
    assert_eq!(values(&b.grad().unwrap()), [2.0; 3]);

    // Views, sums, cat, negation and tensor additions save nothing either (their PyTorch nodes have no saved
    // variables): the outputs of one `unbind` each run their own backward.
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let parts = x.unbind(0).unwrap();
    parts[0].sum_all().unwrap().backward().unwrap();
    parts[1].neg().unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(values(&x.grad().unwrap()), [1.0, 1.0, 1.0, -1.0, -1.0, -1.0]);

    let y = leaf();
    let joined = Tensor::cat(&[&y, &y.add(&y).unwrap()], 0).unwrap();
    let total = joined
        .reshape([2, 3])
        .unwrap()
        .transpose(0, 1)
        .unwrap()
        .mean_all()
        .unwrap();
    total.backward().unwrap();
    total.backward().unwrap();
    assert_eq!(values(&y.grad().unwrap()), [1.0; 3], "2 passes × (1 + 2) / 6");
}

/// test_autograd.py::TestAutograd::test_backward_twice_with_saved_values: `c[[1, 2]] = b[[1, 1]]` saves the
/// index, so the second backward fails with PyTorch's sentence; and
/// test_backward_twice_retained_graph_with_saved_values: with `retain_graph` the second runs.
#[test]
fn a_second_backward_through_saved_tensors_fails_unless_the_graph_was_retained() {
    let index_put = |b: &Tensor| {
        let c = Tensor::zeros([3], DType::F64);
        let picked = b.i(Tensor::from_vec(vec![1i64, 1], [2]).unwrap()).unwrap();
        c.index_put_(Tensor::from_vec(vec![1i64, 2], [2]).unwrap(), &picked, false)
            .unwrap();
        c
    };
    let b = leaf();
    let c = index_put(&b);
    assert!(c.requires_grad());
    c.backward_with(&ones()).unwrap();
    assert_eq!(values(&b.grad().unwrap()), [0.0, 2.0, 0.0]);
    let err = c.backward_with(&ones()).unwrap_err();
    assert!(matches!(err, Error::Autograd { .. }), "{err}");
    assert!(err.to_string().contains(FREED), "{err}");

    let b = leaf();
    let c = index_put(&b);
    c.backward_opts(nn::autograd::BackwardOptions {
        gradient: Some(&ones()),
        retain_graph: true,
        ..Default::default()
    })
    .unwrap();
    c.backward_with(&ones()).unwrap();
    assert_eq!(values(&b.grad().unwrap()), [0.0, 4.0, 0.0]);

    // `x * 2` saves its scalar as a tensor in PyTorch (`MulBackward0`): a second pass fails there too.
    let x = leaf();
    let y = x.mul_scalar(2.0).unwrap();
    y.sum_all().unwrap().backward().unwrap();
    let err = y.sum_all().unwrap().backward().unwrap_err();
    assert!(err.to_string().contains(FREED), "{err}");
}

/// test_autograd.py::TestAutograd::test_requires_grad_inplace: `a += b` with `b` requiring grad makes `a`
/// (a leaf, or computed, that required none) require grad, and the gradient reaches `b`.
#[test]
fn an_in_place_change_by_a_tensor_that_requires_grad_makes_the_target_require_it() {
    let b = leaf();
    let mut a = Tensor::from_vec(vec![5.0f64, 6.0, 7.0], [3]).unwrap();
    a += &b;
    assert!(a.requires_grad() && !a.is_leaf());
    assert_eq!(a.grad_fn_name(), Some("add"));
    a.mul(&a).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(values(&b.grad().unwrap()), [12.0, 16.0, 20.0], "2·(a + b)");

    // Non-leaf: `a = torch.randn(5, 5) + 0`.
    let b = leaf();
    let a = Tensor::zeros([3], DType::F64).add_scalar(0.0).unwrap();
    a.mul_(&b).unwrap();
    assert!(a.requires_grad());

    // `copy_` and `index_put_` too (`h[:] = x` into a fresh buffer).
    let b = leaf();
    let h = Tensor::zeros([3], DType::F32);
    h.copy_(&b).unwrap();
    h.mul_scalar(3.0).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(values(&b.grad().unwrap()), [3.0; 3]);

    // A handle no other shares is needed: with another one (which would not see the new history), or for a
    // view of a tensor that requires none, the change is refused rather than losing a gradient.
    let a = Tensor::zeros([3], DType::F64);
    let other = a.clone();
    let err = a.add_(&leaf()).unwrap_err();
    assert!(matches!(err, Error::Autograd { op: "add_", .. }), "{err}");
    assert!(!a.requires_grad() && !other.requires_grad());
    assert_eq!(values(&a), [0.0; 3], "nothing was written");
    let base = Tensor::zeros([2, 3], DType::F64);
    let err = base.narrow(0, 0, 1).unwrap().reshape([3]).unwrap().add_(&leaf());
    assert!(err.is_err());

    // Without recording nothing changes: the target stays a tensor that requires no grad.
    let a = Tensor::zeros([3], DType::F64);
    {
        let _guard = nn::no_grad();
        a.add_(&leaf()).unwrap();
    }
    assert!(!a.requires_grad());
    assert_eq!(values(&a), [1.0, 2.0, 3.0]);
}

/// PyTorch's sentence for an in-place change of a leaf that requires grad (`check_inplace` in
/// torch/csrc/autograd/VariableTypeUtils.h), for every in-place form.
#[test]
fn an_in_place_change_of_a_leaf_that_requires_grad_is_refused_with_pytorchs_sentence() {
    let x = leaf();
    for err in [
        x.add_scalar_(1.0).unwrap_err(),
        x.add_(&leaf()).unwrap_err(),
        x.copy_(&leaf()).unwrap_err(),
    ] {
        assert!(
            err.to_string()
                .contains("a leaf Variable that requires grad is being used in an in-place operation."),
            "{err}"
        );
    }
    assert_eq!(values(&x), [1.0, 2.0, 3.0]);
}

/// A saved tensor changed in place is refused with PyTorch's sentence (`SavedVariable::unpack` in
/// torch/csrc/autograd/saved_variable.cpp), naming its type, shape, the node that computed it and both versions,
/// as PyTorch 2.5.1 prints them for these two programs.
#[test]
fn a_saved_tensor_changed_in_place_is_refused_with_pytorchs_sentence() {
    let x = leaf();
    let y = x.exp().unwrap();
    y.add_scalar_(1.0).unwrap();
    let err = y.sum_all().unwrap().backward().unwrap_err().to_string();
    assert!(
        err.contains(
            "one of the variables needed for gradient computation has been modified by an inplace operation: \
             [torch.DoubleTensor [3]], which is output 0 of ExpBackward0, is at version 1; expected version 0 \
             instead."
        ),
        "{err}"
    );

    let x = leaf().to_dtype(DType::F32).unwrap();
    let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3]).unwrap();
    let y = x.mul(&w).unwrap();
    w.add_scalar_(1.0).unwrap();
    let err = y.sum_all().unwrap().backward().unwrap_err().to_string();
    assert!(
        err.contains(
            "one of the variables needed for gradient computation has been modified by an inplace operation: \
             [torch.FloatTensor [3]] is at version 1; expected version 0 instead."
        ),
        "{err}"
    );
}

/// test_autograd.py::TestAutograd::test_post_accumulate_grad_hook_on_non_leaf: PyTorch's sentence.
#[test]
fn a_post_accumulate_hook_on_a_computed_tensor_is_refused_with_pytorchs_sentence() {
    let y = leaf().mul_scalar(2.0).unwrap();
    let err = y.register_post_accumulate_grad_hook(|_| Ok(())).unwrap_err();
    assert!(
        err.to_string()
            .contains("post accumulate grad hooks cannot be registered on non-leaf tensors"),
        "{err}"
    );
}
