//! Autograd: gradients of the recorded operations against central finite differences in `f64` (as
//! `torch.autograd.gradcheck`: step 1e-6, atol 1e-5, rtol 1e-3), on odd shapes (empty dimensions, size-1
//! broadcasting, permuted inputs); the pass's semantics as PyTorch's (accumulation, `retain_graph`, `detach`,
//! `no_grad`, `grad`, `retain_grad`, in-place changes); and an MLP's gradients against PyTorch 2.5.1
//! (`fixtures/autograd/mlp.safetensors`).

use integration_tests::{assert_gradient, check_param_element, leaf_of, max_abs_diff, tensors};
use nn::functional::Activation;
use nn::prelude::*;
use nn::{Error, Result, Shape};

/// Deterministic `f64` values of `shape` in about `[-2, 2]`, away from zero (`phase` varies them).
pub(super) fn values(shape: &[usize], phase: f64) -> Tensor {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|i| {
            let t = ((i as f64 + phase) * 0.7548776662).fract() * 4.0 - 2.0;
            if t.abs() < 0.1 { t + 0.25 } else { t }
        })
        .collect();
    Tensor::from_vec(v, shape.to_vec()).unwrap()
}

/// Positive `f64` values of `shape` in `[0.5, 2.5]`.
fn positive(shape: &[usize], phase: f64) -> Tensor {
    values(shape, phase).abs().unwrap().add_scalar(0.5).unwrap()
}

/// The weights of the scalar loss `Σ f(x) · w` the checks differentiate.
fn loss_weights(shape: &Shape) -> Tensor {
    let n = shape.numel();
    Tensor::from_vec(
        (0..n).map(|i| ((i * 7 % 11) as f64 - 5.0) / 3.0).collect(),
        shape.clone(),
    )
    .unwrap()
}

/// `(f(x + h·eᵢⱼ) - f(x - h·eᵢⱼ)) / 2h`: the central difference of `f` along element `j` of input `i`.
pub(super) fn central_difference(inputs: &[Tensor], i: usize, j: usize, h: f64, f: &dyn Fn(&[Tensor]) -> f64) -> f64 {
    let base = inputs[i].to_vec_f64().unwrap();
    let at = |d: f64| {
        let mut v = base.clone();
        v[j] += d;
        let mut xs: Vec<Tensor> = inputs.iter().map(Tensor::detach).collect();
        xs[i] = Tensor::from_vec(v, inputs[i].shape().clone()).unwrap();
        f(&xs)
    };
    (at(h) - at(-h)) / (2.0 * h)
}

/// Checks the gradients autograd gives every input of `f` against central differences of `Σ f(x) · w`.
fn gradcheck(what: &str, inputs: Vec<Tensor>, f: impl Fn(&[Tensor]) -> Result<Tensor>) {
    let leaves: Vec<Tensor> = inputs.iter().map(leaf_of).collect();
    let out = f(&leaves).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(out.requires_grad(), "{what}: the output is not recorded");
    let weights = loss_weights(out.shape());
    out.mul(&weights)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let loss = |xs: &[Tensor]| -> f64 {
        let _guard = nn::no_grad();
        f(xs)
            .unwrap()
            .mul(&weights)
            .unwrap()
            .sum_all()
            .unwrap()
            .to_vec_f64()
            .unwrap()[0]
    };
    let h = 1e-6;
    for (i, leaf) in leaves.iter().enumerate() {
        let base = inputs[i].to_vec_f64().unwrap();
        let analytic = match leaf.grad() {
            Some(g) => {
                assert_eq!(g.shape(), leaf.shape(), "{what}: gradient shape of input {i}");
                assert_eq!(g.dtype(), leaf.dtype(), "{what}: gradient dtype of input {i}");
                g.to_vec_f64().unwrap()
            }
            None => vec![0.0; base.len()],
        };
        for (j, &a) in analytic.iter().enumerate() {
            let numeric = central_difference(&inputs, i, j, h, &loss);
            assert_gradient(&format!("{what}: d/d input {i} [{j}]"), a, numeric);
        }
    }
}

#[test]
fn broadcast_arithmetic() {
    let shapes: [(&[usize], &[usize]); 5] = [
        (&[2, 3], &[2, 3]),
        (&[2, 3], &[3]),
        (&[4, 1, 3], &[2, 1]),
        (&[1], &[2, 2]),
        (&[0, 3], &[3]),
    ];
    for (sa, sb) in shapes {
        let (a, b) = (values(sa, 0.0), values(sb, 1.0));
        let what = |op: &str| format!("{op} {sa:?} {sb:?}");
        gradcheck(&what("add"), vec![a.clone(), b.clone()], |x| x[0].add(&x[1]));
        gradcheck(&what("sub"), vec![a.clone(), b.clone()], |x| x[0].sub(&x[1]));
        gradcheck(&what("mul"), vec![a.clone(), b.clone()], |x| x[0].mul(&x[1]));
        gradcheck(&what("div"), vec![a.clone(), positive(sb, 1.0)], |x| x[0].div(&x[1]));
        // Away from the jumps where `a / b` is an integer (the values are a fixed sequence).
        gradcheck(&what("remainder"), vec![a.clone(), positive(sb, 1.0)], |x| {
            x[0].remainder(&x[1])
        });
        gradcheck(&what("fmod"), vec![a.clone(), positive(sb, 1.0).neg().unwrap()], |x| {
            x[0].fmod(&x[1])
        });
    }
    // An input used twice: the gradients of both uses add up.
    gradcheck("x * x + x", vec![values(&[5], 0.0)], |x| x[0].mul(&x[0])?.add(&x[0]));
}

#[test]
fn scalar_operations() {
    let x = values(&[3, 4], 0.0);
    gradcheck("mul_scalar", vec![x.clone()], |x| x[0].mul_scalar(-2.5));
    gradcheck("add_scalar", vec![x.clone()], |x| x[0].add_scalar(3.0));
    gradcheck("affine", vec![x.clone()], |x| x[0].affine(0.5, 1.0));
    gradcheck("remainder_scalar", vec![x.clone()], |x| x[0].remainder_scalar(0.75));
    gradcheck("fmod_scalar", vec![x.clone()], |x| x[0].fmod_scalar(-0.75));
    gradcheck("neg", vec![x], |x| x[0].neg());
}

#[test]
fn element_wise_math() {
    // Odd shapes: a 1-element tensor, an empty one, a permuted (copied) 2-d one.
    let shapes: [&[usize]; 3] = [&[1], &[0, 3], &[3, 5]];
    for shape in shapes {
        let (x, p) = (values(shape, 0.0), positive(shape, 1.0));
        let what = |op: &str| format!("{op} {shape:?}");
        gradcheck(&what("exp"), vec![x.clone()], |x| x[0].exp());
        gradcheck(&what("log"), vec![p.clone()], |x| x[0].log());
        gradcheck(&what("sqrt"), vec![p.clone()], |x| x[0].sqrt());
        gradcheck(&what("abs"), vec![x.clone()], |x| x[0].abs());
        gradcheck(&what("recip"), vec![p.clone()], |x| x[0].recip());
        gradcheck(&what("erf"), vec![x.clone()], |x| x[0].erf());
        gradcheck(&what("pow 3"), vec![x.clone()], |x| x[0].pow_scalar(3.0));
        gradcheck(&what("pow -1.5"), vec![p.clone()], |x| x[0].pow_scalar(-1.5));
        gradcheck(&what("pow 0"), vec![x.clone()], |x| x[0].pow_scalar(0.0));
        // The values stay away from the bounds (the kink), where the difference quotient is undefined.
        gradcheck(&what("clamp"), vec![x.clone()], |x| x[0].clamp(-1.05, 0.95));
    }
    let t = values(&[3, 4], 2.0).permute(&[1, 0]).unwrap();
    gradcheck("exp of a permuted tensor", vec![t], |x| x[0].exp().unwrap().mul(&x[0]));
    // PyTorch's conventions at the kinks: abs' gradient is 0 at 0; clamp's passes at its bounds.
    let edge = Tensor::from_vec(vec![0.0f64, -1.0, 2.0], [3])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    edge.abs().unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(edge.grad().unwrap().to_vec_f64().unwrap(), [0.0, -1.0, 1.0]);
    let bounds = Tensor::from_vec(vec![-1.0f64, 2.0, 3.0], [3])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    bounds.clamp(-1.0, 2.0).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(bounds.grad().unwrap().to_vec_f64().unwrap(), [1.0, 1.0, 0.0]);
}

#[test]
fn a_product_large_enough_to_split_over_the_thread_pool_is_exact() {
    // 257 x 300 x 301 multiply-adds (past the threshold where rows are split into bands): an odd row count,
    // checked against plain sums in f64.
    let (m, k, n) = (257, 300, 301);
    let a = values(&[m, k], 0.0);
    let b = values(&[k, n], 1.0);
    let c = a.matmul(&b).unwrap().to_vec_f64().unwrap();
    let (av, bv) = (a.to_vec_f64().unwrap(), b.to_vec_f64().unwrap());
    for (i, j) in [(0, 0), (128, 150), (129, 7), (256, 300), (200, 0)] {
        let want: f64 = (0..k).map(|p| av[i * k + p] * bv[p * n + j]).sum();
        assert!(
            (c[i * n + j] - want).abs() <= 1e-10 * want.abs().max(1.0),
            "[{i}, {j}]: {} vs {want}",
            c[i * n + j]
        );
    }
}

#[test]
fn matmul_and_linear() {
    gradcheck("matmul 2-d", vec![values(&[3, 4], 0.0), values(&[4, 2], 1.0)], |x| {
        x[0].matmul(&x[1])
    });
    gradcheck(
        "matmul batched",
        vec![values(&[2, 3, 4], 0.0), values(&[2, 4, 5], 1.0)],
        |x| x[0].matmul(&x[1]),
    );
    gradcheck(
        "matmul shared right side",
        vec![values(&[2, 3, 4], 0.0), values(&[4, 2], 1.0)],
        |x| x[0].matmul(&x[1]),
    );
    for shape in [&[5][..], &[3, 5], &[2, 3, 5], &[0, 5]] {
        let (x, w, b) = (values(shape, 0.0), values(&[4, 5], 1.0), values(&[4], 2.0));
        gradcheck(&format!("linear {shape:?}"), vec![x.clone(), w.clone(), b], |t| {
            t[0].linear(&t[1], Some(&t[2]))
        });
        gradcheck(&format!("linear {shape:?} without bias"), vec![x, w], |t| {
            t[0].linear(&t[1], None)
        });
    }
}

#[test]
fn stack_expand_index_select_and_max_min_over_a_dimension() {
    let (a, b) = (values(&[2, 3], 0.0), values(&[2, 3], 1.0));
    for dim in [0, 1, 2, -1] {
        gradcheck(&format!("stack dim {dim}"), vec![a.clone(), b.clone()], |x| {
            Tensor::stack(&[&x[0], &x[1]], dim)
        });
    }
    gradcheck("expand size-1 and new leading dims", vec![values(&[3, 1], 0.0)], |x| {
        x[0].expand(&[2, 3, 4])
    });
    gradcheck("expand with -1 and to zero", vec![values(&[1, 3], 0.0)], |x| {
        x[0].expand(&[0, -1])
    });
    assert!(
        values(&[3, 2], 0.0).expand(&[3, 4]).is_err(),
        "only size-1 dimensions grow"
    );

    let index = Tensor::from_vec(vec![2i64, 0, 2], [3]).unwrap();
    for dim in [0isize, 1, 2] {
        let x = values(&[3, 3, 3], 0.0);
        gradcheck(&format!("index_select dim {dim} (a repeated index)"), vec![x], |x| {
            x[0].index_select(dim, &index)
        });
    }
    gradcheck("index_add", vec![values(&[4, 2], 0.0), values(&[3, 2], 1.0)], |x| {
        x[0].index_add(0, &index, &x[1])
    });
    let bad = Tensor::from_vec(vec![3i64], [1]).unwrap();
    assert!(matches!(
        values(&[3], 0.0).index_select(0, &bad),
        Err(Error::InvalidArgument { .. })
    ));

    // Distinct values: the extreme of each slice is unique, so the difference quotient is defined.
    let x = Tensor::from_vec((0..24).map(|i| ((i * 7 % 24) as f64 - 11.5) / 3.0).collect(), [2, 3, 4]).unwrap();
    for (dim, keepdim) in [(0, false), (1, true), (2, false), (-1, true)] {
        gradcheck(&format!("max dim {dim} keepdim {keepdim}"), vec![x.clone()], |x| {
            Ok(x[0].max_dim(dim, keepdim)?.0)
        });
        gradcheck(&format!("min dim {dim} keepdim {keepdim}"), vec![x.clone()], |x| {
            Ok(x[0].min_dim(dim, keepdim)?.0)
        });
    }
    // PyTorch's picks: NaN wins, the first of equal values, and the gradient goes there only.
    let t = Tensor::from_vec(vec![1.0f64, 3.0, 3.0, f64::NAN, 2.0, 0.5], [2, 3])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let (values_max, at) = t.max_dim(1, false).unwrap();
    assert_eq!(at.to_vec::<i64>().unwrap(), [1, 0]);
    assert!(values_max.to_vec_f64().unwrap()[1].is_nan());
    let (values_min, at) = t.min_dim(1, false).unwrap();
    assert_eq!(at.to_vec::<i64>().unwrap(), [0, 0]);
    values_min.sum_all().unwrap().backward().unwrap();
    assert_eq!(t.grad().unwrap().to_vec_f64().unwrap(), [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn reductions() {
    let x = values(&[2, 3, 4], 0.0);
    gradcheck("sum_all", vec![x.clone()], |x| x[0].sum_all());
    gradcheck("mean_all", vec![x.clone()], |x| x[0].mean_all());
    gradcheck("sum over 1", vec![x.clone()], |x| x[0].sum_dims(&[1], false));
    gradcheck("sum over 0, -1 kept", vec![x.clone()], |x| {
        x[0].sum_dims(&[0, -1], true)
    });
    gradcheck("mean over 2", vec![x.clone()], |x| x[0].mean_dims(&[2], false));
    gradcheck("sum of an empty dimension", vec![values(&[0, 3], 0.0)], |x| {
        x[0].sum_dims(&[0], false)
    });
}

#[test]
fn layout_operations() {
    let x = values(&[2, 3, 4], 0.0);
    gradcheck("reshape", vec![x.clone()], |x| x[0].reshape([6, 4]));
    gradcheck("flatten", vec![x.clone()], |x| x[0].flatten(1, -1));
    gradcheck("unsqueeze", vec![x.clone()], |x| x[0].unsqueeze(1));
    gradcheck("permute", vec![x.clone()], |x| x[0].permute(&[2, 0, 1]));
    gradcheck("transpose", vec![x.clone()], |x| x[0].transpose(0, 2));
    gradcheck("narrow", vec![x.clone()], |x| x[0].narrow(1, 1, 2));
    gradcheck("narrow to nothing", vec![x.clone()], |x| x[0].narrow(2, 4, 0));
    // Split pieces, some unused (their gradient is zero) and some used twice.
    gradcheck("split_with_sizes", vec![x.clone()], |x| {
        let p = x[0].split_with_sizes(&[1, 0, 2, 1], 2)?;
        Tensor::cat(&[&p[2], &p[0].mul(&p[0])?, &p[2].mul_scalar(3.0)?], 2)
    });
    gradcheck("split into pieces of 2", vec![x.clone()], |x| {
        let p = x[0].split(2, 1)?; // sizes 2 and 1
        p[1].mul(&p[0].narrow(1, 1, 1)?)
    });
    gradcheck("chunk", vec![x.clone()], |x| {
        let p = x[0].chunk(3, -1)?; // sizes 2 and 2
        p[1].sub(&p[0].exp()?)
    });
    gradcheck("unbind", vec![x.clone()], |x| {
        let steps = x[0].unbind(0)?;
        steps[1].mul(&steps[0])?.add(&steps[1])
    });
    gradcheck("cat", vec![x.clone(), values(&[2, 1, 4], 1.0)], |x| {
        Tensor::cat(&[&x[0], &x[1]], 1)
    });
    // A permuted (rearranged) input into the other operations.
    gradcheck("mul of permuted", vec![x.clone(), values(&[4, 3, 2], 1.0)], |x| {
        x[0].permute(&[2, 1, 0])?.mul(&x[1])
    });
}

#[test]
fn pooling() {
    use nn::functional::{AvgPool2dOptions, MaxPool2dOptions, adaptive_avg_pool2d, avg_pool2d, max_pool2d};
    let x = values(&[2, 2, 5, 6], 0.0);
    let max = MaxPool2dOptions {
        stride: Some((2, 1).into()),
        padding: Some(1.into()),
        dilation: Some((1, 2).into()),
        ceil_mode: true,
    };
    gradcheck("max_pool2d (stride, padding, dilation, ceil)", vec![x.clone()], |x| {
        max_pool2d(&x[0], 3, max)
    });
    let avg = AvgPool2dOptions {
        stride: Some(2.into()),
        padding: Some((1, 0).into()),
        ceil_mode: true,
        count_include_pad: false,
        divisor_override: None,
    };
    gradcheck("avg_pool2d (padding not counted, ceil)", vec![x.clone()], |x| {
        avg_pool2d(&x[0], (3, 2), avg)
    });
    gradcheck("adaptive_avg_pool2d to (3, 4)", vec![x.clone()], |x| {
        adaptive_avg_pool2d(&x[0], (3, 4))
    });
    gradcheck(
        "adaptive_avg_pool2d to 1, unbatched",
        vec![values(&[2, 5, 6], 1.0)],
        |x| adaptive_avg_pool2d(&x[0], 1),
    );
}

#[test]
fn activations_softmax_and_prelu() {
    let x = values(&[3, 5], 0.0);
    let all = [
        Activation::Relu,
        Activation::LeakyRelu { negative_slope: 0.1 },
        Activation::Elu { alpha: 1.2 },
        Activation::Selu,
        Activation::Gelu,
        Activation::GeluTanh,
        Activation::Silu,
        Activation::Mish,
        Activation::Sigmoid,
        Activation::Tanh,
        Activation::Softplus {
            beta: 1.5,
            threshold: 20.0,
        },
        Activation::Softsign,
        Activation::Hardtanh {
            min_val: -1.0,
            max_val: 1.0,
        },
        Activation::Celu { alpha: 0.7 },
        Activation::LogSigmoid,
        Activation::Tanhshrink,
        Activation::Hardswish,
        Activation::Softshrink { lambd: 0.5 },
    ];
    for act in all {
        gradcheck(act.name(), vec![x.clone()], |x| act.forward(&x[0]));
    }
    gradcheck("softmax", vec![x.clone()], |x| x[0].softmax(1));
    gradcheck("log_softmax", vec![x.clone()], |x| x[0].log_softmax(0));
    let w = Tensor::from_vec(vec![0.25, -0.5, 0.1], [3]).unwrap();
    gradcheck("prelu per channel", vec![values(&[2, 3, 2], 0.0), w], |x| {
        nn::functional::prelu(&x[0], &x[1])
    });
    let one = Tensor::from_vec(vec![0.3], [1]).unwrap();
    gradcheck("prelu one weight", vec![x, one], |x| {
        nn::functional::prelu(&x[0], &x[1])
    });
}

#[test]
fn a_half_precision_forward_gives_parameters_gradients_in_their_own_dtype() {
    // PyTorch without autocast: the cast is recorded, so an f32 leaf used in f16 gets an f32 gradient.
    let mut w = Tensor::from_vec(vec![0.5f32, -1.5, 2.0], [3]).unwrap();
    w.set_requires_grad(true).unwrap();
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3])
        .unwrap()
        .to_dtype(DType::F16)
        .unwrap();
    let y = w.to_dtype(DType::F16).unwrap().mul(&x).unwrap().sum_all().unwrap();
    assert_eq!(y.dtype(), DType::F16);
    y.backward().unwrap();
    let g = w.grad().unwrap();
    assert_eq!(g.dtype(), DType::F32);
    assert_eq!(g.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
    // Mixed dtypes promote, and the promotion is recorded too.
    let mut a = Tensor::from_vec(vec![2.0f32], [1]).unwrap();
    a.set_requires_grad(true).unwrap();
    let b = Tensor::from_vec(vec![3.0f64], [1]).unwrap();
    a.mul(&b).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(a.grad().unwrap().to_vec::<f32>().unwrap(), vec![3.0]);
}

/// A leaf `[1, 2, 3]` in f64 that requires grad.
fn leaf() -> Tensor {
    let mut x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], [3]).unwrap();
    x.set_requires_grad(true).unwrap();
    x
}

#[test]
fn gradients_accumulate_over_backward_calls_and_the_graph_is_freed() {
    let x = leaf();
    let y = x.mul_scalar(2.0).unwrap().sum_all().unwrap();
    y.backward().unwrap();
    let err = y.backward().unwrap_err();
    assert!(matches!(err, Error::Autograd { .. }), "{err}");
    assert!(err.to_string().contains("retain_graph"), "{err}");
    let z = x.mul(&x).unwrap().sum_all().unwrap();
    z.backward_opts(nn::autograd::BackwardOptions {
        gradient: None,
        retain_graph: true,
        ..Default::default()
    })
    .unwrap();
    z.backward().unwrap();
    // 2 + 2·x twice.
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![6.0, 10.0, 14.0]);
}

#[test]
fn detach_no_grad_and_enable_grad() {
    let x = leaf();
    let d = x.detach();
    assert!(!d.requires_grad() && d.is_leaf());
    assert!(!d.mul_scalar(2.0).unwrap().requires_grad());
    {
        let _off = nn::no_grad();
        let y = x.mul_scalar(2.0).unwrap();
        assert!(!y.requires_grad() && y.grad_fn_name().is_none());
        {
            let _on = nn::enable_grad();
            assert!(x.mul_scalar(2.0).unwrap().requires_grad());
        }
        assert!(!nn::is_grad_enabled());
    }
    assert!(nn::is_grad_enabled());
    let y = x.mul_scalar(2.0).unwrap();
    assert!(y.requires_grad() && !y.is_leaf());
    assert_eq!(y.grad_fn_name(), Some("mul_scalar"));
    // A computed tensor's requires_grad cannot be switched off; a leaf's can.
    let mut y = y;
    assert!(y.set_requires_grad(false).is_err());
    // `detach_` makes the handle a leaf in place, on the same storage: later operations on it record nothing,
    // and another handle of the tensor sees its writes.
    let kept = y.clone();
    y.detach_().unwrap();
    assert!(!y.requires_grad() && y.is_leaf() && y.grad_fn_name().is_none());
    assert!(!y.mul_scalar(3.0).unwrap().requires_grad());
    y.add_scalar_(1.0).unwrap();
    assert_eq!(kept.to_vec_f64().unwrap(), y.to_vec_f64().unwrap());
    // A view is refused, as PyTorch refuses it.
    let mut view = x.narrow(0, 0, 1).unwrap();
    let e = view.detach_().unwrap_err().to_string();
    assert!(e.contains("Can't detach views in-place. Use detach() instead."), "{e}");
}

#[test]
fn grad_returns_gradients_without_touching_dot_grad() {
    let x = leaf();
    let other = leaf();
    let h = x.mul_scalar(3.0).unwrap();
    let y = h.mul(&h).unwrap().sum_all().unwrap();
    let g = nn::autograd::grad(&[&y], &[&x, &h, &other], None, false).unwrap();
    assert_eq!(g[0].as_ref().unwrap().to_vec::<f64>().unwrap(), vec![18.0, 36.0, 54.0]);
    assert_eq!(g[1].as_ref().unwrap().to_vec::<f64>().unwrap(), vec![6.0, 12.0, 18.0]);
    assert!(g[2].is_none(), "an input the output does not depend on");
    assert!(x.grad().is_none() && other.grad().is_none());
}

#[test]
fn retain_grad_keeps_a_computed_tensors_gradient() {
    let x = leaf();
    let h = x.mul_scalar(2.0).unwrap();
    h.retain_grad().unwrap();
    let unretained = x.add_scalar(1.0).unwrap();
    h.add(&unretained).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(h.grad().unwrap().to_vec::<f64>().unwrap(), vec![1.0; 3]);
    assert!(unretained.grad().is_none());
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![3.0; 3]);
    // Changed in place afterwards, the tensor's `.grad` is its new version's, as in PyTorch 2.5.1 (`h = x * 2;
    // h.retain_grad(); torch.relu_(h); (h * 3).sum().backward()` gives `h.grad` [3, 3, 3], not relu's mask):
    // on the paths that copy (SiLU) and that do not (ReLU, add_).
    for change in [
        (|h: &Tensor| Activation::Relu.forward_(h)) as fn(&Tensor) -> Result<()>,
        |h| Activation::Silu.forward_(h),
        |h| h.add_(&Tensor::ones([3], DType::F64)),
    ] {
        let x = Tensor::from_vec(vec![1.0f64, -2.0, 3.0], [3]).unwrap();
        let x = integration_tests::leaf_of(&x);
        let h = x.mul_scalar(2.0).unwrap();
        h.retain_grad().unwrap();
        change(&h).unwrap();
        h.mul_scalar(3.0).unwrap().sum_all().unwrap().backward().unwrap();
        assert_eq!(h.grad().unwrap().to_vec::<f64>().unwrap(), vec![3.0; 3]);
    }
}

#[test]
fn mul_and_div_save_only_the_operands_a_needed_gradient_reads() {
    // y = x · c with only x requiring grad: dx = g · c reads c, not x; PyTorch saves the same, so changing x
    // in place afterwards (under no_grad) leaves the backward valid, while changing c makes it fail.
    for op in ["mul", "div"] {
        let x = leaf();
        let c = Tensor::from_vec(vec![2.0f64, 4.0, 8.0], [3]).unwrap();
        let f = |x: &Tensor, c: &Tensor| if op == "mul" { x.mul(c) } else { x.div(c) };
        let y = f(&x, &c).unwrap();
        {
            let _no_grad = nn::no_grad();
            x.add_(&Tensor::ones([3], DType::F64)).unwrap();
        }
        y.sum_all().unwrap().backward().unwrap();
        let want = if op == "mul" {
            [2.0, 4.0, 8.0]
        } else {
            [0.5, 0.25, 0.125]
        };
        assert_eq!(x.grad().unwrap().to_vec_f64().unwrap(), want, "{op}");

        let y = f(&x, &c).unwrap();
        c.add_(&Tensor::ones([3], DType::F64)).unwrap();
        let err = y.sum_all().unwrap().backward().unwrap_err();
        assert!(matches!(err, Error::Autograd { op: o, .. } if o == op), "{op}: {err}");
    }
}

#[test]
fn copy_fill_and_zero_into_a_computed_tensor_are_recorded_as_pytorchs() {
    // PyTorch 2.5.1: `x = torch.tensor([1., 2., 3.], dtype=torch.float64, requires_grad=True); y = x * 2;
    // y.copy_(z)` with `z = torch.tensor([4., 5., 6.], requires_grad=True)` (float32): `y.grad_fn` is
    // CopyBackwards, `y` stays float64, and `(y * torch.tensor([1., 2., 3.], dtype=torch.float64)).sum()
    // .backward()` gives `x.grad` [0, 0, 0] and `z.grad` [1, 2, 3] in float32.
    let x = leaf();
    let mut z = Tensor::from_vec(vec![4.0f32, 5.0, 6.0], [3]).unwrap();
    z.set_requires_grad(true).unwrap();
    let y = x.mul_scalar(2.0).unwrap();
    y.copy_(&z).unwrap();
    assert_eq!((y.dtype(), y.grad_fn_name()), (DType::F64, Some("copy")));
    assert_eq!(y.to_vec_f64().unwrap(), [4.0, 5.0, 6.0]);
    let weights = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], [3]).unwrap();
    y.mul(&weights).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(x.grad().unwrap().to_vec_f64().unwrap(), [0.0; 3]);
    let dz = z.grad().unwrap();
    assert_eq!(
        (dz.dtype(), dz.to_vec_f64().unwrap()),
        (DType::F32, vec![1.0, 2.0, 3.0])
    );
    // `y.fill_(3)` (FillBackward) and `y.zero_()` (ZeroBackward), then `(y * x).sum().backward()`: `x.grad` is
    // `y`'s new value, [3, 3, 3] and [0, 0, 0]; the old history gets zeros.
    for (op, value) in [("fill", 3.0), ("zero", 0.0)] {
        let x = leaf();
        let y = x.mul_scalar(2.0).unwrap();
        if op == "fill" {
            y.fill_(value).unwrap();
        } else {
            y.zero_().unwrap();
        }
        assert_eq!(y.grad_fn_name(), Some(op));
        y.mul(&x).unwrap().sum_all().unwrap().backward().unwrap();
        assert_eq!(x.grad().unwrap().to_vec_f64().unwrap(), [value; 3], "{op}");
    }
    // A copy from a source that requires no grad, and one that fails (shapes), into a computed tensor.
    let x = leaf();
    let y = x.mul_scalar(2.0).unwrap();
    assert!(matches!(
        y.copy_(&Tensor::ones([2], DType::F64)),
        Err(Error::ShapeMismatch { .. })
    ));
    assert_eq!(
        y.grad_fn_name(),
        Some("mul_scalar"),
        "a failed copy leaves the history as it was"
    );
    y.copy_(&Tensor::ones([3], DType::F64)).unwrap();
    y.sum_all().unwrap().backward().unwrap();
    assert_eq!(x.grad().unwrap().to_vec_f64().unwrap(), [0.0; 3]);
    // Against finite differences: a copy of a function of `x` into a computed tensor, then used with `x`.
    gradcheck(
        "copy_ into a computed tensor",
        vec![values(&[5], 0.2), values(&[5], 0.7)],
        |t| {
            let y = t[0].mul_scalar(1.5)?;
            y.copy_(&t[1].mul(&t[0])?)?;
            y.mul(&t[0])
        },
    );
}

#[test]
fn in_place_scalar_arithmetic_on_a_computed_tensor_is_recorded() {
    // PyTorch 2.5.1: `y = x * 2; y.add_(1); y.mul_(3); (y * w).sum().backward()` gives `x.grad = 6 · w`
    // (`y.grad_fn` MulBackward0); `x.mul_(3)` on the leaf is refused ("a leaf Variable that requires grad is
    // being used in an in-place operation").
    let x = leaf();
    let w = Tensor::from_vec(vec![1.0f64, -2.0, 0.5], [3]).unwrap();
    let y = x.mul_scalar(2.0).unwrap();
    y.add_scalar_(1.0).unwrap();
    y.mul_scalar_(3.0).unwrap();
    assert_eq!(y.grad_fn_name(), Some("mul_scalar"));
    assert_eq!(y.to_vec_f64().unwrap(), [9.0, 15.0, 21.0]);
    y.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(x.grad().unwrap().to_vec_f64().unwrap(), [6.0, -12.0, 3.0]);
    for err in [x.mul_scalar_(3.0).unwrap_err(), x.add_scalar_(1.0).unwrap_err()] {
        assert!(
            matches!(&err, Error::Autograd { op, .. } if op.ends_with("_scalar_")),
            "{err}"
        );
        assert!(err.to_string().contains("leaf"), "{err}");
    }
    assert_eq!(
        x.to_vec_f64().unwrap(),
        [1.0, 2.0, 3.0],
        "a refused change writes nothing"
    );
    gradcheck("mul_scalar_ and add_scalar_ in place", vec![values(&[6], 0.4)], |t| {
        let y = t[0].mul(&t[0])?;
        y.mul_scalar_(-1.5)?;
        y.add_scalar_(0.75)?;
        y.mul(&t[0])
    });
}

#[test]
fn copy_and_fill_never_give_a_wrong_gradient() {
    let x = leaf();
    let y = x.mul_scalar(2.0).unwrap();
    let source = Tensor::ones([3], DType::F64);
    // From a tensor that requires grad into one with no history that another handle shares: that handle would
    // not see the copy's history, so it is refused.
    let plain = Tensor::zeros([3], DType::F64);
    let other = plain.clone();
    assert!(matches!(plain.copy_(&y), Err(Error::Autograd { op: "copy_", .. })));
    assert_eq!(plain.to_vec_f64().unwrap(), [0.0; 3], "a refused copy writes nothing");
    drop(other);
    // Into a leaf (a parameter's data), and anything under no_grad: allowed, unrecorded.
    x.copy_(&source).unwrap();
    let _no_grad = nn::no_grad();
    y.fill_(5.0).unwrap();
    plain.copy_(&y).unwrap();
    assert_eq!(plain.to_vec_f64().unwrap(), [5.0; 3]);
}

#[test]
fn refusals_are_typed_errors() {
    let x = leaf();
    let y = x.mul_scalar(2.0).unwrap();
    let err = y.backward().unwrap_err();
    assert!(
        err.to_string().contains("shape [3]"),
        "a non-scalar needs its gradient: {err}"
    );
    let plain = Tensor::ones([1], DType::F32);
    assert!(matches!(plain.backward(), Err(Error::Autograd { .. })));
    assert!(matches!(
        y.backward_with(&Tensor::ones([2], DType::F64)),
        Err(Error::ShapeMismatch { .. })
    ));
    // In place: a leaf that requires grad is refused, as an in-place op autograd does not record.
    assert!(matches!(Activation::Relu.forward_(&x), Err(Error::Autograd { .. })));
    assert!(matches!(x.add_(&y), Err(Error::Autograd { .. })));
    let plain = Tensor::from_vec(vec![1.0f64, 1.0, 1.0], [3]).unwrap();
    let view = plain.narrow(0, 0, 2).unwrap();
    assert!(
        matches!(view.add_(&y.narrow(0, 0, 2).unwrap()), Err(Error::Autograd { .. })),
        "a view of a tensor without grad taking one that has"
    );
    assert_eq!(plain.to_vec::<f64>().unwrap(), vec![1.0; 3]);
    assert_eq!(
        x.to_vec::<f64>().unwrap(),
        vec![1.0, 2.0, 3.0],
        "the refused changes changed nothing"
    );
    // An operation without a gradient fails at the backward, naming it.
    let v = x.var_dims(&[0], true, false).unwrap();
    let err = v.backward().unwrap_err();
    assert!(err.to_string().contains("var"), "{err}");
}

#[test]
fn an_in_place_activation_on_a_computed_tensor_is_recorded() {
    // ReLU(inplace=True) in a training forward: the tensor holds the result and its history.
    let mut x = Tensor::from_vec(vec![-1.0f64, 2.0, -3.0, 4.0], [4]).unwrap();
    x.set_requires_grad(true).unwrap();
    let h = x.mul_scalar(2.0).unwrap();
    let alias = h.clone();
    let out = ReLU::new(true).forward(h.clone()).unwrap();
    assert!(out.shares_storage(&h));
    assert_eq!(alias.to_vec::<f64>().unwrap(), vec![0.0, 4.0, 0.0, 8.0]);
    assert_eq!(alias.grad_fn_name(), Some("relu"));
    out.mul(&Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], [4]).unwrap())
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![0.0, 4.0, 0.0, 8.0]);
    // A product added into in place (EfficientZero's `x += state_encoding`), and dropout in place.
    gradcheck(
        "add_ into a computed tensor",
        vec![values(&[2, 3], 0.0), values(&[3], 1.0)],
        |x| {
            let h = x[0].mul_scalar(2.0)?;
            h.add_(&x[1])?;
            h.mul_(&x[1])?;
            Ok(h)
        },
    );
    gradcheck("sigmoid in place after a product", vec![values(&[6], 0.0)], |x| {
        let h = x[0].mul_scalar(1.5)?;
        Activation::Sigmoid.forward_(&h)?;
        Ok(h)
    });
}

#[test]
fn an_in_place_activation_whose_gradient_reads_its_result_saves_the_result() {
    // PyTorch 2.5.1 saves the result of `relu_`, `leaky_relu_`, `sigmoid_`, `tanh_`, `elu_`, `selu_` and
    // `celu_` (tools/autograd/derivatives.yaml: `threshold_backward(grad, result, 0)`, `elu_backward(…,
    // is_result=true, result)`, …), so changing the tensor again before the backward fails, naming the op ("…
    // modified by an inplace operation: … output 0 of ReluBackward0, is at version 2; expected version 1";
    // checked with `F.relu(h, inplace=True); h.add_(1); h.sum().backward()`, and the same for ELU with alpha 0.7
    // and 0, SELU and CELU with alpha 2: EluBackward1, CeluBackward1).
    for act in [
        Activation::Relu,
        Activation::LeakyRelu { negative_slope: 0.1 },
        Activation::LeakyRelu { negative_slope: 0.0 },
        Activation::Sigmoid,
        Activation::Tanh,
        Activation::Elu { alpha: 1.0 },
        Activation::Elu { alpha: 0.0 },
        Activation::Selu,
        Activation::Celu { alpha: 2.0 },
    ] {
        let h = leaf().mul_scalar(2.0).unwrap();
        act.forward_(&h).unwrap();
        h.add_(&Tensor::ones([3], DType::F64)).unwrap();
        let err = h.sum_all().unwrap().backward().unwrap_err();
        assert!(
            matches!(err, Error::Autograd { op, .. } if op == act.name()),
            "{}: {err}",
            act.name()
        );
        assert!(err.to_string().contains("modified by an inplace operation"), "{err}");
    }
    // PyTorch keeps a copy of the input of `hardtanh_` (so `relu6`), `threshold_`, `silu_`, `mish_`,
    // `hardswish_` and `hardsigmoid_`: the same change then leaves the backward valid, here too. A negative
    // slope or alpha (whose in-place backward PyTorch refuses: "In-place elu backward calculation is triggered
    // with a negative slope which is not supported") runs on a copy here, so it works too.
    for act in [
        Activation::Relu6,
        Activation::Hardtanh {
            min_val: -0.5,
            max_val: 0.7,
        },
        Activation::Threshold {
            threshold: 0.2,
            value: -1.0,
        },
        Activation::Silu,
        Activation::Mish,
        Activation::Hardswish,
        Activation::Elu { alpha: -0.5 },
        Activation::Celu { alpha: -0.5 },
        Activation::LeakyRelu { negative_slope: -0.5 },
    ] {
        let x = leaf();
        let h = x.mul_scalar(-0.9).unwrap();
        act.forward_(&h).unwrap();
        h.add_(&Tensor::ones([3], DType::F64)).unwrap();
        h.sum_all().unwrap().backward().unwrap();
        let want: Vec<f64> = [1.0, 2.0, 3.0]
            .iter()
            .map(|&x: &f64| {
                // d act(-0.9 x) / dx = -0.9 act'(-0.9 x), act' by a central difference (no kink at -0.9,
                // -1.8, -2.7).
                let (u, e) = (-0.9 * x, 1e-6);
                -0.9 * (act.at(u + e) - act.at(u - e)) / (2.0 * e)
            })
            .collect();
        let got = x.grad().unwrap().to_vec::<f64>().unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5, "{}: {got:?} vs {want:?}", act.name());
        }
    }
    // Every one of them, and the fallbacks, against finite differences.
    for act in [
        Activation::Relu,
        Activation::Relu6,
        Activation::Hardtanh {
            min_val: -0.5,
            max_val: 0.7,
        },
        Activation::LeakyRelu { negative_slope: 0.1 },
        Activation::LeakyRelu { negative_slope: 0.0 },
        Activation::LeakyRelu { negative_slope: -0.5 },
        Activation::Threshold {
            threshold: 0.2,
            value: -1.0,
        },
        Activation::Threshold {
            threshold: 0.2,
            value: 3.0,
        },
        Activation::Sigmoid,
        Activation::Tanh,
        Activation::Elu { alpha: 1.0 },
        Activation::Elu { alpha: 0.0 },
        Activation::Elu { alpha: -0.5 },
        Activation::Selu,
        Activation::Celu { alpha: 2.0 },
        Activation::Celu { alpha: -0.5 },
    ] {
        gradcheck(&format!("{} in place", act.name()), vec![values(&[7], 0.3)], |x| {
            let h = x[0].mul_scalar(1.5)?;
            act.forward_(&h)?;
            Ok(h)
        });
    }
}

#[test]
fn elu_selu_and_celu_in_place_give_pytorchs_gradients_from_their_result() {
    // PyTorch 2.5.1: `x = torch.tensor([-2, -0.5, 0, 0.3, 1.2, nan], requires_grad=True); h = x * 1.5;
    // F.elu(h, 0.7, inplace=True)` (and `F.selu(h, inplace=True)`, `F.celu(h, 2.0, inplace=True)`); then
    // `(h * torch.tensor([1, 2, 3, 4, 5, 6])).sum().backward()`; `x.grad`, in float64 and float32. Its backward
    // reads the result: at 0 it takes the branch below zero, at NaN the one above (`s · dy`).
    // The float32 values as PyTorch prints them (`tolist()`: the f32 gradient widened to f64).
    let cases: [(Activation, [f64; 6], [f64; 6]); 3] = [
        (
            Activation::Elu { alpha: 0.7 },
            [
                0.05227642178625713,
                0.9919697607561307,
                3.1499999999999995,
                6.0,
                7.5,
                9.0,
            ],
            [
                0.052276432514190674,
                0.9919697642326355,
                3.1499998569488525,
                6.0,
                7.5,
                9.0,
            ],
        ),
        (
            Activation::Selu,
            [
                0.1312959181203972,
                2.4914019750369762,
                7.911447033813195,
                6.304205924132883,
                7.880257405166103,
                9.456308886199324,
            ],
            [
                0.13129591941833496,
                2.4914021492004395,
                7.911446571350098,
                6.304205894470215,
                7.880257606506348,
                9.456308364868164,
            ],
        ),
        (
            Activation::Celu { alpha: 2.0 },
            [0.3346952402226447, 2.0618678363729166, 4.5, 6.0, 7.5, 9.0],
            [0.3346952497959137, 2.0618679523468018, 4.5, 6.0, 7.5, 9.0],
        ),
    ];
    let xs = [-2.0, -0.5, 0.0, 0.3, 1.2, f64::NAN];
    for (act, want64, want32) in cases {
        for (dtype, want, (rtol, atol)) in [
            (DType::F64, want64.to_vec(), (1e-7, 1e-7)),
            (DType::F32, want32.to_vec(), (1.3e-6, 1e-5)),
        ] {
            let mut x = Tensor::from_vec(xs.to_vec(), [6]).unwrap().to_dtype(dtype).unwrap();
            x.set_requires_grad(true).unwrap();
            let h = x.mul_scalar(1.5).unwrap();
            act.forward_(&h).unwrap();
            let weights = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [6]).unwrap();
            let loss = h.mul(&weights.to_dtype(dtype).unwrap()).unwrap().sum_all().unwrap();
            loss.backward().unwrap();
            let got = x.grad().unwrap().to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= atol + rtol * w.abs(),
                    "{} in place, {dtype:?}: {got:?} vs PyTorch's {want:?}",
                    act.name()
                );
            }
        }
    }
}

#[test]
fn in_place_arithmetic_on_a_computed_tensor_gives_every_gradient() {
    // `add_` / `sub_` run in place with nothing copied, and so do `mul_` / `div_` by an operand that requires no
    // grad (their gradient reads only that operand); by one that does, the input is copied first, as PyTorch's
    // `mul_` saves `self.clone()`. Every combination against finite differences, broadcasting too.
    let constant = Tensor::from_vec(vec![0.5f64, -1.5, 2.0], [3]).unwrap();
    gradcheck(
        "add_, sub_, mul_ and div_ in place",
        vec![values(&[2, 3], 0.0), values(&[3], 1.0)],
        |x| {
            let h = x[0].mul_scalar(2.0)?;
            h.add_(&x[1])?;
            h.sub_(&x[0])?;
            h.mul_(&constant)?;
            h.div_(&constant.add_scalar(4.0)?)?;
            h.mul_(&x[1])?;
            h.div_(&x[1].mul(&x[1])?.add_scalar(1.0)?)?;
            Ok(h)
        },
    );
    // What `mul_` saved is `other` as it was at the change: changing it afterwards makes the backward refuse,
    // naming the op.
    let x = leaf();
    let c = Tensor::from_vec(vec![2.0f64, 3.0, 4.0], [3]).unwrap();
    let h = x.mul_scalar(1.0).unwrap();
    h.mul_(&c).unwrap();
    c.fill_(0.0).unwrap();
    let err = h.sum_all().unwrap().backward().unwrap_err();
    assert!(matches!(err, Error::Autograd { op: "mul", .. }), "{err}");
    // And a tensor that requires no grad takes in place one that does, and then requires grad
    // (`autograd::pytorch_tests`).
    let z = Tensor::zeros([3], DType::F64);
    z.add_(&x).unwrap();
    assert!(z.requires_grad());
    // The change's node is named as PyTorch's `grad_fn` (`AddBackward0` for `add_`).
    let h = x.mul_scalar(1.0).unwrap();
    h.add_(&x).unwrap();
    assert_eq!(h.grad_fn_name(), Some("add"));
    assert!(x.grad().is_none());
}

#[test]
fn sigmoid_tanh_and_exp_save_their_result_as_pytorchs_do() {
    // derivatives.yaml: `sigmoid_backward(grad, result)`, `tanh_backward(grad, result)`, `grad * result` for
    // exp: a change of the result in place before the backward is refused, naming the op.
    for (name, f) in [
        ("sigmoid", Tensor::sigmoid as fn(&Tensor) -> Result<Tensor>),
        ("tanh", Tensor::tanh),
        ("exp", Tensor::exp),
    ] {
        let y = f(&leaf()).unwrap();
        y.add_(&Tensor::ones([3], DType::F64)).unwrap();
        let err = y.sum_all().unwrap().backward().unwrap_err();
        assert!(matches!(err, Error::Autograd { op, .. } if op == name), "{name}: {err}");
    }
    // A function whose gradient reads its input (PyTorch's `silu` saves `self`) keeps working.
    let x = leaf();
    let y = Activation::Silu.forward(&x).unwrap();
    y.add_(&Tensor::ones([3], DType::F64)).unwrap();
    y.sum_all().unwrap().backward().unwrap();
    assert!(x.grad().is_some());
}

#[test]
fn an_mlp_matches_pytorchs_gradients() {
    // nn.Sequential(Linear(4, 16), GELU(), Linear(16, 3), PReLU()) in f64, mse_loss against a target.
    let f = tensors("autograd/mlp.safetensors");
    let mut model = Sequential::new()
        .append(Linear::new(4, 16, true))
        .append(GELU::default())
        .append(Linear::new(16, 3, true))
        .append(PReLU::new(1, 0.25));
    let params = integration_tests::under(&f, "param.");
    model.to_dtype(DType::F64).unwrap();
    model.load_state_dict(&params, true, false).unwrap();
    let y = model.forward(f["input"].clone()).unwrap();
    let diff = y.sub(&f["target"]).unwrap();
    let loss = diff.mul(&diff).unwrap().mean_all().unwrap();
    assert!(max_abs_diff(&loss.reshape([1]).unwrap(), &f["loss"]) <= 1e-12, "loss");
    loss.backward().unwrap();
    for (name, p) in model.named_parameters() {
        let want = &f[&format!("grad.{name}")];
        let got = p.grad().unwrap_or_else(|| panic!("{name} has no gradient"));
        // assert_close's f64 tolerance, relative to the largest element.
        let scale = want
            .abs()
            .unwrap()
            .to_vec_f64()
            .unwrap()
            .into_iter()
            .fold(0.0, f64::max);
        let err = max_abs_diff(&got, want);
        assert!(err <= 1e-7 + 1e-7 * scale, "grad of {name}: off by {err}");
    }
}

#[test]
fn changing_in_place_a_tensor_a_backward_saved_is_an_error_naming_the_op() {
    let x = leaf();
    let w = leaf();
    // mul saves its operands: changing one in place afterwards makes its backward refuse, never mislead.
    let h = x.mul_scalar(2.0).unwrap();
    let y = h.mul(&w).unwrap().sum_all().unwrap();
    let before = h.version();
    Activation::Relu.forward_(&h).unwrap();
    assert!(h.version() > before, "an in-place change bumps the version");
    let err = y.backward().unwrap_err();
    assert!(matches!(err, Error::Autograd { op: "mul", .. }), "{err}");
    assert!(err.to_string().contains("modified by an inplace operation"), "{err}");
    // add saves nothing: the same change after an add leaves its backward valid.
    let h = x.mul_scalar(2.0).unwrap();
    let y = h.add(&w).unwrap().sum_all().unwrap();
    Activation::Relu.forward_(&h).unwrap();
    y.backward().unwrap();
    assert_eq!(w.grad().unwrap().to_vec::<f64>().unwrap(), vec![1.0; 3]);
    // The tensor's own writes count too.
    let t = Tensor::zeros([2], DType::F32);
    let v = t.version();
    t.fill_(1.0).unwrap();
    t.copy_(&Tensor::ones([2], DType::F32)).unwrap();
    t.add_scalar_(1.0).unwrap();
    assert_eq!(t.version(), v + 3, "one each, as PyTorch's _version");
}

#[test]
fn a_frozen_subtree_gets_no_gradient_and_zero_grad_is_pytorchs() {
    let mut model = Sequential::new()
        .append(Linear::new(3, 4, true))
        .append(Tanh::default())
        .append(Linear::new(4, 2, true));
    model.to_dtype(DType::F64).unwrap();
    model.get_submodule_mut("0").unwrap().requires_grad_(false).unwrap();
    let x = values(&[5, 3], 0.0);
    let y = model.forward(x.clone()).unwrap().sum_all().unwrap();
    y.backward().unwrap();
    for (name, p) in model.named_parameters() {
        assert_eq!(p.grad().is_some(), name.starts_with("2."), "{name}");
    }
    // Nothing requires grad: no graph at all.
    model.requires_grad_(false).unwrap();
    assert!(!model.forward(x.clone()).unwrap().requires_grad());
    model.requires_grad_(true).unwrap();
    // zero_grad(false) zeroes in place (a handle to the gradient sees it); zero_grad(true) drops it.
    model.forward(x.clone()).unwrap().sum_all().unwrap().backward().unwrap();
    let (_, p) = model.named_parameters().remove(0);
    let handle = p.grad().unwrap();
    model.zero_grad(false);
    assert!(handle.to_vec_f64().unwrap().iter().all(|&v| v == 0.0));
    model.zero_grad(true);
    assert!(p.grad().is_none());
    // A second backward after zero_grad(true) starts from the new gradient alone.
    model.forward(x).unwrap().sum_all().unwrap().backward().unwrap();
    assert!(p.grad().is_some());
}

#[test]
fn batch_norm_and_layer_norm() {
    use nn::functional::{RunningStats, batch_norm, layer_norm};
    let x = values(&[4, 3, 2], 0.0);
    let (w, b) = (values(&[3], 1.0), values(&[3], 2.0));
    gradcheck("batch_norm train", vec![x.clone(), w.clone(), b.clone()], |t| {
        batch_norm(&t[0], None, Some(&t[1]), Some(&t[2]), true, 0.1, 1e-5)
    });
    gradcheck(
        "batch_norm train without affine, 2-d",
        vec![values(&[5, 3], 0.0)],
        |t| batch_norm(&t[0], None, None, None, true, 0.1, 1e-5),
    );
    let (mean, var) = (values(&[3], 3.0), positive(&[3], 4.0));
    gradcheck("batch_norm eval", vec![x.clone(), w, b], |t| {
        let running = RunningStats { mean: &mean, var: &var };
        batch_norm(&t[0], Some(running), Some(&t[1]), Some(&t[2]), false, 0.1, 1e-5)
    });
    let (w, b) = (values(&[3, 2], 1.0), values(&[3, 2], 2.0));
    gradcheck("layer_norm over 2 dims", vec![x.clone(), w.clone(), b.clone()], |t| {
        layer_norm(&t[0], &[3, 2], Some(&t[1]), Some(&t[2]), 1e-5)
    });
    gradcheck("layer_norm over the last dim, no affine", vec![x.clone()], |t| {
        layer_norm(&t[0], &[2], None, None, 1e-5)
    });
    gradcheck("layer_norm over every dim", vec![values(&[3, 2], 0.0), w, b], |t| {
        layer_norm(&t[0], &[3, 2], Some(&t[1]), Some(&t[2]), 1e-5)
    });
}

#[test]
fn embedding_rows_sum_their_gradients_and_the_padding_row_gets_none() {
    let mut table = Embedding::new(5, 3, Some(1)).unwrap();
    table.to_dtype(DType::F64).unwrap();
    let indices = Tensor::from_vec(vec![1i64, 3, 3, 0, 1, 4], [2, 3]).unwrap();
    let y = table.forward(indices.clone()).unwrap();
    y.mul(&loss_weights(y.shape()))
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    let g = table.weight.grad().unwrap().to_vec_f64().unwrap();
    let w = loss_weights(y.shape()).to_vec_f64().unwrap();
    let idx = indices.to_vec::<i64>().unwrap();
    for row in 0..5 {
        for d in 0..3 {
            let want: f64 = if row == 1 {
                0.0
            } else {
                (0..idx.len())
                    .filter(|&p| idx[p] as usize == row)
                    .map(|p| w[p * 3 + d])
                    .sum()
            };
            assert_eq!(g[row * 3 + d], want, "row {row}, column {d}");
        }
    }
}

#[test]
fn dropout_in_training_passes_the_gradient_through_its_mask() {
    for inplace in [false, true] {
        let drop = Dropout::new(0.25, inplace).unwrap();
        let x = positive(&[64], 0.0);
        let leaf = leaf_of(&x);
        // In place needs a computed tensor (a leaf that requires grad is never changed in place).
        let h = leaf.mul_scalar(1.0).unwrap();
        let y = drop.forward(h).unwrap();
        y.sum_all().unwrap().backward().unwrap();
        let (ys, g) = (y.to_vec_f64().unwrap(), leaf.grad().unwrap().to_vec_f64().unwrap());
        let xs = x.to_vec_f64().unwrap();
        for i in 0..64 {
            let kept = ys[i] != 0.0;
            assert_eq!(
                g[i],
                if kept { 1.0 / 0.75 } else { 0.0 },
                "inplace {inplace}, element {i}"
            );
            assert!((ys[i] - g[i] * xs[i]).abs() < 1e-12);
        }
    }
}

#[test]
fn conv2d_with_stride_padding_dilation_and_groups() {
    use nn::functional::{Conv2dOptions, Padding2d, conv2d};
    // stride, padding, dilation, groups
    let opts = |stride, padding, dilation, groups| Conv2dOptions {
        stride,
        padding,
        dilation,
        groups,
    };
    let cases = [
        (Conv2dOptions::default(), [2, 2, 5, 4], [3, 2, 3, 2]),
        (
            opts([2, 1], Padding2d::Explicit(1, 2), [1, 2], 2),
            [2, 4, 5, 6],
            [6, 2, 2, 3],
        ),
        (opts([1, 1], Padding2d::Same, [1, 1], 1), [1, 3, 4, 4], [2, 3, 3, 3]),
        // Stride 1 (the input's gradient as a direct convolution by the flipped weight) with dilation,
        // groups and unequal padding; `Same` on an even kernel pads more after than before.
        (
            opts([1, 1], Padding2d::Explicit(2, 1), [2, 1], 2),
            [2, 4, 5, 4],
            [6, 2, 3, 2],
        ),
        (opts([1, 1], Padding2d::Same, [1, 1], 1), [2, 2, 3, 5], [3, 2, 2, 4]),
        // More output channels than one block of the host kernels holds (8 in f64), the last block partial.
        (
            opts([1, 1], Padding2d::Explicit(1, 1), [1, 1], 1),
            [2, 3, 4, 3],
            [10, 3, 3, 3],
        ),
        // Padding beyond the kernel's reach: outputs that see only padding.
        (
            opts([1, 1], Padding2d::Explicit(2, 3), [1, 1], 1),
            [1, 2, 3, 3],
            [2, 2, 2, 2],
        ),
    ];
    for (opts, xs, ws) in cases {
        let o = ws[0];
        let inputs = vec![values(&xs, 0.0), values(&ws, 1.0), values(&[o], 2.0)];
        gradcheck(&format!("conv2d {opts:?}"), inputs.clone(), |t| {
            conv2d(&t[0], &t[1], Some(&t[2]), &opts)
        });
        gradcheck(&format!("conv2d {opts:?} without bias"), inputs[..2].to_vec(), |t| {
            conv2d(&t[0], &t[1], None, &opts)
        });
    }
    // An unbatched (3-d) input.
    gradcheck(
        "conv2d unbatched",
        vec![values(&[2, 4, 4], 0.0), values(&[3, 2, 2, 2], 1.0)],
        |t| conv2d(&t[0], &t[1], None, &Conv2dOptions::default()),
    );
}

#[test]
fn transposed_and_one_dimensional_convolutions() {
    use nn::functional::{
        Conv1dOptions, ConvTranspose1dOptions, ConvTranspose2dOptions, Padding1d, conv_transpose1d, conv_transpose2d,
        conv1d,
    };
    let t2 = |stride, padding, output_padding, groups, dilation| ConvTranspose2dOptions {
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    };
    // Stride above the kernel, output padding below the stride and (the second) below the dilation only,
    // padding past the kernel's reach, groups, non-square kernels.
    let cases = [
        (ConvTranspose2dOptions::default(), [2, 2, 3, 3], [2, 3, 2, 2]),
        (t2([3, 2], [1, 0], [2, 1], 2, [1, 1]), [1, 4, 2, 3], [4, 1, 2, 3]),
        (t2([1, 1], [2, 1], [1, 0], 1, [2, 1]), [2, 2, 3, 2], [2, 2, 3, 2]),
        (t2([2, 2], [1, 1], [1, 1], 1, [1, 1]), [1, 3, 2, 2], [3, 2, 4, 4]),
    ];
    for (opts, xs, ws) in cases {
        let o = ws[1] * opts.groups;
        let inputs = vec![values(&xs, 0.0), values(&ws, 1.0), values(&[o], 2.0)];
        gradcheck(&format!("conv_transpose2d {opts:?}"), inputs, |t| {
            conv_transpose2d(&t[0], &t[1], Some(&t[2]), &opts)
        });
    }
    let opts = ConvTranspose1dOptions {
        stride: 2,
        padding: 1,
        output_padding: 1,
        groups: 2,
        dilation: 2,
    };
    gradcheck(
        "conv_transpose1d",
        vec![values(&[2, 4, 3], 0.0), values(&[4, 1, 3], 1.0), values(&[2], 2.0)],
        |t| conv_transpose1d(&t[0], &t[1], Some(&t[2]), &opts),
    );
    for padding in [Padding1d::Explicit(2), Padding1d::Same] {
        let opts = Conv1dOptions {
            stride: 1,
            padding,
            dilation: 2,
            groups: 2,
        };
        gradcheck(
            &format!("conv1d {opts:?}"),
            vec![values(&[2, 4, 5], 0.0), values(&[6, 2, 2], 1.0), values(&[6], 2.0)],
            |t| conv1d(&t[0], &t[1], Some(&t[2]), &opts),
        );
    }
    // Unbatched inputs.
    gradcheck(
        "conv_transpose2d unbatched",
        vec![values(&[2, 3, 2], 0.0), values(&[2, 3, 2, 2], 1.0)],
        |t| conv_transpose2d(&t[0], &t[1], None, &t2([2, 1], [0, 0], [1, 0], 1, [1, 1])),
    );
}

/// `dw[o, ci, ki, kj] = Σ_{n, oh, ow} dy[n, o, oh, ow] · x[n, g·cg + ci, oh·s + ki·d - p, ow·s + kj·d - p]`
/// (zero outside the input), written out term by term, in `f64`.
fn conv2d_weight_grad_by_definition(
    x: &[f64],
    xs: [usize; 4],
    dy: &[f64],
    ws: [usize; 4],
    stride: usize,
    padding: usize,
    groups: usize,
) -> Vec<f64> {
    let ([n, c, h, w], [o, cg, kh, kw]) = (xs, ws);
    let (ho, wo) = ((h + 2 * padding - kh) / stride + 1, (w + 2 * padding - kw) / stride + 1);
    let og = o / groups;
    let mut dw = vec![0.0; o * cg * kh * kw];
    for oc in 0..o {
        for ci in 0..cg {
            let channel = (oc / og) * cg + ci;
            for ki in 0..kh {
                for kj in 0..kw {
                    let mut sum = 0.0;
                    for ni in 0..n {
                        for oh in 0..ho {
                            for ow in 0..wo {
                                let (r, col) = (
                                    (oh * stride + ki) as isize - padding as isize,
                                    (ow * stride + kj) as isize - padding as isize,
                                );
                                if r < 0 || col < 0 || r >= h as isize || col >= w as isize {
                                    continue;
                                }
                                let xv = x[((ni * c + channel) * h + r as usize) * w + col as usize];
                                sum += dy[((ni * o + oc) * ho + oh) * wo + ow] * xv;
                            }
                        }
                    }
                    dw[((oc * cg + ci) * kh + ki) * kw + kj] = sum;
                }
            }
        }
    }
    dw
}

#[test]
fn conv2d_weight_gradient_of_a_batch_spanning_many_chunks_is_the_sum_by_definition() {
    integration_tests::in_own_process(|| {
        use nn::functional::{Conv2dOptions, Padding2d, conv2d};
        // Batches large enough that the host kernel splits them into several units of images, some of more than
        // one chunk (a chunk holds ~16K padded input values), with padding (the input copied into padded planes)
        // and without (read in place), groups, and output channels that leave a block's lanes partly empty.
        // (Mirrors no PyTorch test: the gradient's definition, `dw = Σ dy ⊗ patches`, is the reference.)
        let cases = [
            ([70, 16, 14, 14], [10, 8, 3, 3], 1, 1, 2),
            ([37, 6, 9, 9], [5, 6, 3, 3], 2, 0, 1),
            ([300, 3, 8, 8], [20, 3, 2, 2], 1, 0, 1),
            // Rows longer than 16 values (copied into the padded planes by `copy_from_slice`, not as arrays).
            ([3, 2, 5, 19], [4, 2, 3, 3], 1, 1, 1),
            // A gradient large enough (401K values) that the batch is split into fewer units than its chunks
            // (`PARTIALS_BUDGET`), each unit of several chunks.
            ([12, 128, 8, 8], [64, 128, 7, 7], 1, 1, 1),
        ];
        for (xs, ws, stride, padding, groups) in cases {
            let opts = Conv2dOptions {
                stride: [stride; 2],
                padding: Padding2d::Explicit(padding, padding),
                groups,
                ..Default::default()
            };
            for dtype in [DType::F64, DType::F32] {
                let what = format!("{xs:?} * {ws:?}, stride {stride}, padding {padding}, groups {groups}, {dtype:?}");
                let x = values(&xs, 0.5);
                let w = values(&ws, 1.5).to_dtype(dtype).unwrap().requires_grad_(true).unwrap();
                let y = conv2d(&x.to_dtype(dtype).unwrap(), &w, None, &opts).unwrap();
                let dy = values(y.shape().dims(), 2.5);
                y.backward_with(&dy.to_dtype(dtype).unwrap()).unwrap();
                let got = w.grad().unwrap().to_vec_f64().unwrap();
                // The units' partial sums are added in a fixed order: one thread gives the same bits.
                nn::set_num_threads(1);
                let w1 = w.detach().requires_grad_(true).unwrap();
                conv2d(&x.to_dtype(dtype).unwrap(), &w1, None, &opts)
                    .unwrap()
                    .backward_with(&dy.to_dtype(dtype).unwrap())
                    .unwrap();
                nn::set_num_threads(0);
                assert_eq!(w1.grad().unwrap().to_vec_f64().unwrap(), got, "{what}: one thread");
                let (xv, dyv) = (x.to_vec_f64().unwrap(), dy.to_vec_f64().unwrap());
                let want = conv2d_weight_grad_by_definition(&xv, xs, &dyv, ws, stride, padding, groups);
                // Each sum has up to n·ho·wo terms of magnitude below 4: f64 keeps ~1e-15 of it, f32 ~1e-7
                // (relative to the sum where it is above 1).
                let terms = (xs[0] * y.shape().dims()[2] * y.shape().dims()[3]) as f64;
                let tolerance = if dtype == DType::F64 {
                    terms * 1e-15
                } else {
                    4.0 * terms * 4e-7
                };
                assert_eq!(got.len(), want.len(), "{what}");
                for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (g - e).abs() <= tolerance * e.abs().max(1.0),
                        "{what}: element {i}: {g} vs {e}"
                    );
                }
            }
        }
    });
}

/// `y[n, o, i, j] = Σ w[o, ci, a, b] · x[n, gi·cg + ci, i + a - 1, j + b - 1]`: a 3×3 convolution with padding 1,
/// by its definition, for `x` of `(n, c, h, w)` and `w` of `(o, c / groups, 3, 3)`.
fn conv3x3_by_definition(x: &[f64], [n, c, h, wd]: [usize; 4], w: &[f64], o: usize, groups: usize) -> Vec<f64> {
    let (cg, og) = (c / groups, o / groups);
    let mut y = vec![0.0; n * o * h * wd];
    for ni in 0..n {
        for oc in 0..o {
            let gi = oc / og;
            for i in 0..h {
                for j in 0..wd {
                    let mut acc = 0.0;
                    for ci in 0..cg {
                        for a in 0..3 {
                            for b in 0..3 {
                                let (r, q) = (i + a, j + b);
                                if r >= 1 && r <= h && q >= 1 && q <= wd {
                                    let xv = x[((ni * c + gi * cg + ci) * h + r - 1) * wd + q - 1];
                                    acc += w[((oc * cg + ci) * 3 + a) * 3 + b] * xv;
                                }
                            }
                        }
                    }
                    y[((ni * o + oc) * h + i) * wd + j] = acc;
                }
            }
        }
    }
    y
}

/// The host convolution computes a group's output channels in blocks of 4, 8 or 16 (by dtype and count), the
/// last one as narrow as it can be: every split (counts below, at and past each width, for f32's and f64's
/// widths), as the forward's outputs and as the input gradient's (a convolution whose outputs are the
/// forward's input channels), with groups, equals the definition. (Mirrors no PyTorch test: the definitions
/// `y = Σ w·x` and `dx = Σ dy·w` are the reference.)
#[test]
fn conv2d_and_its_input_gradient_equal_the_definition_for_every_split_into_blocks() {
    use nn::functional::{Conv2dOptions, Padding2d, conv2d};
    let opts = |groups| Conv2dOptions {
        padding: Padding2d::Explicit(1, 1),
        groups,
        ..Default::default()
    };
    for per_group in [1, 3, 4, 5, 8, 9, 12, 13, 16, 17, 20, 24, 28, 32] {
        for groups in [1, 2] {
            for dtype in [DType::F64, DType::F32] {
                // The count as the forward's output channels, then as its input channels.
                for (c, o) in [(3 * groups, per_group * groups), (per_group * groups, 2 * groups)] {
                    let what = format!("{c} → {o} channels, groups {groups}, {dtype:?}");
                    let xs = [3, c, 5, 4];
                    let x = values(&xs, 0.5).to_dtype(dtype).unwrap().requires_grad_(true).unwrap();
                    let w = values(&[o, c / groups, 3, 3], 1.5).to_dtype(dtype).unwrap();
                    let y = conv2d(&x, &w, None, &opts(groups)).unwrap();
                    let dy = values(y.shape().dims(), 2.5).to_dtype(dtype).unwrap();
                    y.backward_with(&dy).unwrap();
                    let (xv, wv, dyv) = (
                        x.to_vec_f64().unwrap(),
                        w.to_vec_f64().unwrap(),
                        dy.to_vec_f64().unwrap(),
                    );
                    let want_y = conv3x3_by_definition(&xv, xs, &wv, o, groups);
                    // dx = Σ dy·w: the definition's adjoint, summed from the same terms.
                    let (cg, og) = (c / groups, o / groups);
                    let mut want_dx = vec![0.0; xv.len()];
                    for ni in 0..3 {
                        for oc in 0..o {
                            let gi = oc / og;
                            for i in 0..5 {
                                for j in 0..4 {
                                    let g = dyv[((ni * o + oc) * 5 + i) * 4 + j];
                                    for ci in 0..cg {
                                        for a in 0..3 {
                                            for b in 0..3 {
                                                let (r, q) = (i + a, j + b);
                                                if (1..=5).contains(&r) && (1..=4).contains(&q) {
                                                    let at = ((ni * c + gi * cg + ci) * 5 + r - 1) * 4 + q - 1;
                                                    want_dx[at] += g * wv[((oc * cg + ci) * 3 + a) * 3 + b];
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    // Sums of at most 9·32 terms below 4 in magnitude.
                    let tolerance = if dtype == DType::F64 { 1e-12 } else { 1e-4 };
                    for (name, got, want) in [
                        ("output", y.to_vec_f64().unwrap(), want_y),
                        ("input gradient", x.grad().unwrap().to_vec_f64().unwrap(), want_dx),
                    ] {
                        assert_eq!(got.len(), want.len(), "{what}: {name}");
                        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                            assert!((g - e).abs() <= tolerance, "{what}: {name} element {i}: {g} vs {e}");
                        }
                    }
                }
            }
        }
    }
}

/// The input gradient of strided convolutions (columns of a matrix product added back where each patch was
/// read) equals the definition `dx[i] = Σ dy[o] · w[t]` over the outputs `o` and taps `t` that read input `i`:
/// strides 2 and 3 (and 2 × 1, 1 × 3), kernels narrower than the stride (inputs no tap reads), every padding up
/// to the kernel's size, dilation, odd and even sizes, groups, f64 and f32. (Mirrors no PyTorch test: the
/// definition is the reference; `ops/conv.rs` compares strided cases with PyTorch.)
#[test]
fn strided_conv2d_input_gradient_equals_the_definition() {
    use nn::functional::{Conv2dOptions, Padding2d, conv2d};
    let mut cases = 0;
    for (stride, kernel) in [
        ([2, 2], [3, 3]),
        ([2, 2], [7, 7]),
        ([2, 2], [1, 1]),
        ([2, 2], [4, 2]),
        ([3, 3], [5, 3]),
        ([3, 3], [2, 2]),
        ([2, 1], [3, 3]),
        ([1, 3], [3, 4]),
        ([3, 2], [6, 1]),
    ] {
        for pad in 0..=kernel[0].max(kernel[1]) {
            let padding = [pad.min(kernel[0]), pad.min(kernel[1])];
            for (dilation, groups, size, dtype) in [
                ([1, 1], 1, [9, 8], DType::F64),
                ([1, 1], 2, [10, 7], DType::F32),
                ([2, 1], 1, [11, 9], DType::F64),
            ] {
                let [h, wd] = size;
                let reach = |a: usize| dilation[a] * (kernel[a] - 1) + 1;
                if h + 2 * padding[0] < reach(0) || wd + 2 * padding[1] < reach(1) {
                    continue;
                }
                let (n, c, o) = (2, 2 * groups, 3 * groups);
                let opts = Conv2dOptions {
                    stride,
                    padding: Padding2d::Explicit(padding[0], padding[1]),
                    dilation,
                    groups,
                };
                let what = format!(
                    "stride {stride:?}, kernel {kernel:?}, padding {padding:?}, dilation {dilation:?}, groups {groups}, {dtype:?}"
                );
                let xs = [n, c, h, wd];
                let x = values(&xs, 0.5).to_dtype(dtype).unwrap().requires_grad_(true).unwrap();
                let w = values(&[o, c / groups, kernel[0], kernel[1]], 1.5)
                    .to_dtype(dtype)
                    .unwrap();
                let y = conv2d(&x, &w, None, &opts).unwrap();
                let [_, _, ho, wo] = y.shape().dims().try_into().unwrap();
                let dy = values(y.shape().dims(), 2.5).to_dtype(dtype).unwrap();
                y.backward_with(&dy).unwrap();
                let (wv, dyv) = (w.to_vec_f64().unwrap(), dy.to_vec_f64().unwrap());
                let (cg, og) = (c / groups, o / groups);
                let mut want = vec![0.0; n * c * h * wd];
                for ni in 0..n {
                    for oc in 0..o {
                        let gi = oc / og;
                        for (oy, ox) in (0..ho).flat_map(|oy| (0..wo).map(move |ox| (oy, ox))) {
                            let g = dyv[((ni * o + oc) * ho + oy) * wo + ox];
                            for ci in 0..cg {
                                for (a, b) in (0..kernel[0]).flat_map(|a| (0..kernel[1]).map(move |b| (a, b))) {
                                    let r = (oy * stride[0] + a * dilation[0]).checked_sub(padding[0]);
                                    let q = (ox * stride[1] + b * dilation[1]).checked_sub(padding[1]);
                                    if let (Some(r), Some(q)) = (r, q)
                                        && r < h
                                        && q < wd
                                    {
                                        let at = ((ni * c + gi * cg + ci) * h + r) * wd + q;
                                        want[at] += g * wv[((oc * cg + ci) * kernel[0] + a) * kernel[1] + b];
                                    }
                                }
                            }
                        }
                    }
                }
                // Sums of at most 3 · 49 terms (three output channels per group, a 7 × 7 kernel) below 4 in magnitude.
                let tolerance = if dtype == DType::F64 { 1e-12 } else { 1e-4 };
                let got = x.grad().unwrap().to_vec_f64().unwrap();
                assert_eq!(got.len(), want.len(), "{what}");
                for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (g - e).abs() <= tolerance,
                        "{what}: input gradient element {i}: {g} vs {e}"
                    );
                }
                cases += 1;
            }
        }
    }
    assert!(cases > 100, "{cases} cases ran");
}

#[test]
fn lstm_layers_directions_and_state() {
    integration_tests::in_own_process(|| {
        let options = LstmOptions {
            num_layers: 2,
            bidirectional: true,
            ..LstmOptions::default()
        };
        nn::manual_seed(5);
        let mut lstm = LSTM::with_options(3, 2, options).unwrap();
        lstm.to_dtype(DType::F64).unwrap();
        let (x, h0, c0) = (
            values(&[4, 2, 3], 0.0),
            values(&[4, 2, 2], 1.0),
            values(&[4, 2, 2], 2.0),
        );
        // Recording runs the recurrence as recorded ops: the same numbers as the fused op.
        let fused = {
            let _no_grad = nn::no_grad();
            lstm.forward((x.clone(), Some((h0.clone(), c0.clone())))).unwrap()
        };
        let recorded = lstm.forward((x.clone(), Some((h0.clone(), c0.clone())))).unwrap();
        assert!(recorded.0.requires_grad());
        for (a, b) in [
            (&fused.0, &recorded.0),
            (&fused.1.0, &recorded.1.0),
            (&fused.1.1, &recorded.1.1),
        ] {
            assert!(
                max_abs_diff(a, b) <= 1e-12,
                "fused and recorded differ by {}",
                max_abs_diff(a, b)
            );
        }
        gradcheck("lstm input and state", vec![x.clone(), h0.clone(), c0.clone()], |t| {
            let (out, (h, c)) = lstm.forward((t[0].clone(), Some((t[1].clone(), t[2].clone()))))?;
            Tensor::cat(&[&out.flatten(0, -1)?, &h.flatten(0, -1)?, &c.flatten(0, -1)?], 0)
        });
        check_parameter_gradients(&mut lstm, |lstm| {
            let (out, (h, _)) = lstm.forward((x.clone(), Some((h0.clone(), c0.clone())))).unwrap();
            sequence_loss(&out, &h)
        });
    });
}

/// `Σ out · w + Σ h`: a recurrent layer's loss whose weight gradients [`check_parameter_gradients`] checks.
fn sequence_loss(out: &Tensor, h: &Tensor) -> Tensor {
    out.mul(&loss_weights(out.shape()))
        .unwrap()
        .sum_all()
        .unwrap()
        .add(&h.sum_all().unwrap())
        .unwrap()
}

/// Every fifth element of every parameter's gradient of `loss` against finite differences. The gradients are
/// zeroed first (a gradcheck's backward through the module reached them too).
fn check_parameter_gradients<M: Module>(module: &mut M, loss: impl Fn(&M) -> Tensor) {
    module.zero_grad(true);
    loss(module).backward().unwrap();
    for (name, p) in module.named_parameters() {
        let analytic = p.grad().unwrap().to_vec_f64().unwrap();
        for j in (0..analytic.len()).step_by(5) {
            check_param_element(&name, &p, j, analytic[j], || loss(module).item().unwrap());
        }
    }
}

/// The GRU's fused cell update (one op per step, forward and backward) against finite differences: a
/// two-layer, bidirectional GRU with a state (the input, the state and a few elements of every weight), and a
/// `GRUCell` on a batch and on one unbatched step, with inputs large enough to saturate the gates.
#[test]
fn gru_layers_directions_state_and_cell() {
    integration_tests::in_own_process(|| {
        let options = GruOptions {
            num_layers: 2,
            bidirectional: true,
            ..GruOptions::default()
        };
        nn::manual_seed(7);
        let mut gru = GRU::with_options(3, 2, options).unwrap();
        gru.to_dtype(DType::F64).unwrap();
        let (x, h0) = (values(&[4, 2, 3], 0.0), values(&[4, 2, 2], 1.0));
        gradcheck("gru input and state", vec![x.clone(), h0.clone()], |t| {
            let (out, h) = gru.forward((t[0].clone(), Some(t[1].clone())))?;
            Tensor::cat(&[&out.flatten(0, -1)?, &h.flatten(0, -1)?], 0)
        });
        check_parameter_gradients(&mut gru, |gru| {
            let (out, h) = gru.forward((x.clone(), Some(h0.clone()))).unwrap();
            sequence_loss(&out, &h)
        });
        let mut cell = GRUCell::new(3, 4);
        cell.to_dtype(DType::F64).unwrap();
        let big = |shape: &[usize], phase: f64| values(shape, phase).mul_scalar(3.0).unwrap();
        gradcheck("gru cell, a batch", vec![big(&[5, 3], 3.0), big(&[5, 4], 4.0)], |t| {
            cell.forward((t[0].clone(), Some(t[1].clone())))
        });
        gradcheck(
            "gru cell, one unbatched step",
            vec![values(&[3], 5.0), values(&[4], 6.0)],
            |t| cell.forward((t[0].clone(), Some(t[1].clone()))),
        );
    });
}

#[test]
fn on_wgpu_the_backward_runs_there_and_gives_the_cpus_gradients() {
    let Some(dev) = integration_tests::gpu_or_skip("autograd on wgpu") else {
        return;
    };
    let x32 = |shape: &[usize], phase: f64| values(shape, phase).to_dtype(DType::F32).unwrap();
    let (x, w, b, g) = (x32(&[4, 3], 0.0), x32(&[5, 3], 1.0), x32(&[5], 2.0), x32(&[4, 5], 3.0));
    let run = |device: Device| -> Vec<Tensor> {
        let leaves: Vec<Tensor> = [&x, &w, &b]
            .iter()
            .map(|t| {
                let mut t = t.to_device(device).unwrap();
                t.set_requires_grad(true).unwrap();
                t
            })
            .collect();
        let h = leaves[0].linear(&leaves[1], Some(&leaves[2])).unwrap();
        let y = Activation::Tanh
            .forward(&h)
            .unwrap()
            .mul_scalar(2.0)
            .unwrap()
            .mul(&h)
            .unwrap()
            .softmax(1)
            .unwrap();
        y.backward_with(&g.to_device(device).unwrap()).unwrap();
        grads_on_the_cpu(&leaves, device)
    };
    let (on_cpu, on_dev) = (run(Device::Cpu), run(dev));
    for (i, (c, d)) in on_cpu.iter().zip(&on_dev).enumerate() {
        let scale = c.abs().unwrap().to_vec_f64().unwrap().into_iter().fold(0.0, f64::max);
        assert!(
            max_abs_diff(c, d) <= 1e-5 * scale.max(1.0),
            "input {i}: off by {}",
            max_abs_diff(c, d)
        );
    }
}

/// `f`'s gradients with respect to `inputs` (as f32 leaves on `device`), for the loss `Σ f(x) · w`, on the CPU.
fn f32_gradients(device: Device, inputs: &[Tensor], f: &dyn Fn(&[Tensor]) -> Result<Tensor>) -> Vec<Tensor> {
    let leaves: Vec<Tensor> = inputs
        .iter()
        .map(|t| {
            t.to_dtype(DType::F32)
                .unwrap()
                .to_device(device)
                .unwrap()
                .requires_grad_(true)
                .unwrap()
        })
        .collect();
    let out = f(&leaves).unwrap_or_else(|e| panic!("forward on {device:?}: {e}"));
    let w = loss_weights(out.shape())
        .to_dtype(DType::F32)
        .unwrap()
        .to_device(device)
        .unwrap();
    out.mul(&w)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap_or_else(|e| panic!("backward on {device:?}: {e}"));
    grads_on_the_cpu(&leaves, device)
}

/// The leaves' gradients, checked to be on `device`, copied to the CPU.
fn grads_on_the_cpu(leaves: &[Tensor], device: Device) -> Vec<Tensor> {
    leaves
        .iter()
        .map(|l| {
            let g = l.grad().unwrap();
            assert_eq!(g.device(), device, "the gradient stays on the leaf's device");
            g.cpu().unwrap()
        })
        .collect()
}

#[test]
fn every_f32_gradient_on_wgpu_equals_the_cpus() {
    use nn::functional::{Conv2dOptions, Padding2d, RunningStats, batch_norm, conv2d, layer_norm, prelu};
    let Some(dev) = integration_tests::gpu_or_skip("every_f32_gradient_on_wgpu_equals_the_cpus") else {
        return;
    };
    type Case = (&'static str, Vec<Tensor>, Box<dyn Fn(&[Tensor]) -> Result<Tensor>>);
    let cases: Vec<Case> = vec![
        (
            "conv2d (stride, padding, dilation, groups, bias)",
            vec![
                values(&[2, 4, 5, 6], 0.0),
                values(&[6, 2, 3, 2], 1.0),
                values(&[6], 2.0),
            ],
            Box::new(|x| {
                let opts = Conv2dOptions {
                    stride: [2, 1],
                    padding: Padding2d::Explicit(1, 1),
                    dilation: [1, 2],
                    groups: 2,
                };
                conv2d(&x[0], &x[1], Some(&x[2]), &opts)
            }),
        ),
        (
            "sum over dims",
            vec![values(&[3, 4, 5], 0.0)],
            Box::new(|x| x[0].sum_dims(&[0, 2], false)),
        ),
        (
            "mean keepdim",
            vec![values(&[3, 1, 5], 0.0)],
            Box::new(|x| x[0].mean_dims(&[2], true)),
        ),
        (
            "broadcast mul (sum_to)",
            vec![values(&[3, 4], 0.0), values(&[1, 4], 1.0)],
            Box::new(|x| x[0].mul(&x[1])),
        ),
        (
            "broadcast div",
            vec![values(&[3, 4], 0.0), positive(&[3, 1], 1.0)],
            Box::new(|x| x[0].div(&x[1])),
        ),
        (
            "matmul (batched)",
            vec![values(&[2, 3, 4], 0.0), values(&[2, 4, 5], 1.0)],
            Box::new(|x| x[0].matmul(&x[1])),
        ),
        (
            "matmul (right side shared by the batches)",
            vec![values(&[2, 3, 4], 0.0), values(&[4, 5], 1.0)],
            Box::new(|x| x[0].matmul(&x[1])),
        ),
        ("exp", vec![values(&[7], 0.0)], Box::new(|x| x[0].exp())),
        (
            "sigmoid and tanh",
            vec![values(&[7], 0.0)],
            Box::new(|x| x[0].sigmoid()?.add(&x[0].tanh()?)),
        ),
        (
            "in place: relu, sigmoid, elu, selu and celu saving their results, hardtanh and silu on a copy",
            vec![values(&[9], 0.0)],
            Box::new(|x| {
                // Each on its own tensor: one's result changed by the next would be refused, as in PyTorch.
                let (e, se, ce) = (x[0].mul_scalar(2.0)?, x[0].mul_scalar(1.2)?, x[0].mul_scalar(-1.0)?);
                Activation::Elu { alpha: 0.7 }.forward_(&e)?;
                Activation::Selu.forward_(&se)?;
                Activation::Celu { alpha: 2.0 }.forward_(&ce)?;
                let h = x[0].mul_scalar(1.5)?.add(&e)?.add(&se)?.add(&ce)?;
                Activation::Relu.forward_(&h)?;
                let g = x[0].mul_scalar(-1.0)?;
                Activation::Hardtanh {
                    min_val: -0.5,
                    max_val: 0.7,
                }
                .forward_(&g)?;
                Activation::Sigmoid.forward_(&g)?;
                let s = x[0].mul_scalar(0.5)?;
                Activation::Silu.forward_(&s)?;
                h.add(&g)?.add(&s)
            }),
        ),
        (
            "copy_, fill_, mul_scalar_ and add_scalar_ into computed tensors",
            vec![values(&[7], 0.0), values(&[7], 0.5)],
            Box::new(|x| {
                let y = x[0].mul_scalar(1.5)?;
                y.copy_(&x[1].mul(&x[0])?)?;
                y.mul_scalar_(-0.5)?;
                y.add_scalar_(0.25)?;
                let f = x[1].mul_scalar(2.0)?;
                f.fill_(0.5)?;
                y.mul(&x[0])?.add(&f.mul(&x[1])?)
            }),
        ),
        ("log", vec![positive(&[7], 0.0)], Box::new(|x| x[0].log())),
        ("sqrt", vec![positive(&[7], 0.0)], Box::new(|x| x[0].sqrt())),
        ("abs", vec![values(&[7], 0.0)], Box::new(|x| x[0].abs())),
        ("recip", vec![positive(&[7], 0.0)], Box::new(|x| x[0].recip())),
        (
            "pow_scalar 3 (negative bases)",
            vec![values(&[7], 0.0)],
            Box::new(|x| x[0].pow_scalar(3.0)),
        ),
        ("clamp", vec![values(&[9], 0.0)], Box::new(|x| x[0].clamp(-1.0, 0.5))),
        (
            "batch_norm (train, affine)",
            vec![values(&[4, 3, 2, 2], 0.0), positive(&[3], 1.0), values(&[3], 2.0)],
            Box::new(|x| batch_norm(&x[0], None, Some(&x[1]), Some(&x[2]), true, 0.1, 1e-5)),
        ),
        (
            "batch_norm (eval, running statistics)",
            vec![values(&[4, 3, 2], 0.0), positive(&[3], 1.0), values(&[3], 2.0)],
            Box::new(|x| {
                let mean = Tensor::from_vec(vec![0.1f32, -0.2, 0.3], [3])?.to_device(x[0].device())?;
                let var = Tensor::from_vec(vec![0.5f32, 1.5, 1.0], [3])?.to_device(x[0].device())?;
                let running = RunningStats { mean: &mean, var: &var };
                batch_norm(&x[0], Some(running), Some(&x[1]), Some(&x[2]), false, 0.1, 1e-5)
            }),
        ),
        (
            "layer_norm",
            vec![values(&[3, 2, 5], 0.0), positive(&[2, 5], 1.0), values(&[2, 5], 2.0)],
            Box::new(|x| layer_norm(&x[0], &[2, 5], Some(&x[1]), Some(&x[2]), 1e-5)),
        ),
        (
            "prelu (per channel)",
            vec![values(&[2, 3, 4], 0.0), values(&[3], 1.0)],
            Box::new(|x| prelu(&x[0], &x[1])),
        ),
        (
            "stack and expand",
            vec![values(&[2, 1], 0.0), values(&[2, 1], 1.0)],
            Box::new(|x| Tensor::stack(&[&x[0], &x[1]], 1)?.expand(&[3, 2, 2, 4])),
        ),
        (
            "index_select (repeated indices) and index_add (into x and from src)",
            vec![values(&[4, 3], 0.0), values(&[2, 3, 2], 1.0)],
            Box::new(|x| {
                let at = Tensor::from_vec(vec![2i64, 0, 2], [3])?.to_device(x[0].device())?;
                let picked = x[0].index_select(0, &at)?; // [3, 3]
                let rows = Tensor::from_vec(vec![1i32, 1], [2])?.to_device(x[0].device())?;
                picked.index_add(
                    0,
                    &rows.to_dtype(DType::I64)?,
                    &x[1].reshape([2, 3, 2])?.sum_dims(&[2], false)?,
                )
            }),
        ),
        (
            "max and min over dims (keepdim, a middle dimension)",
            vec![values(&[3, 4, 2], 0.0)],
            Box::new(|x| {
                let (hi, _) = x[0].max_dim(1, true)?;
                let (lo, _) = x[0].min_dim(-1, false)?;
                hi.sum_dims(&[1, 2], false)?.add(&lo.sum_dims(&[1], false)?)
            }),
        ),
        (
            "embedding with padding_idx",
            vec![values(&[5, 3], 0.0)],
            Box::new(|x| {
                let ids = Tensor::from_vec(vec![4i64, 1, 4, 0, 2, 1], [2, 3])?.to_device(x[0].device())?;
                nn::functional::embedding_padded(&ids, &x[0], Some(1))
            }),
        ),
        (
            "layout: permute, narrow, cat, reshape",
            vec![values(&[2, 3, 4], 0.0), values(&[2, 3, 1], 1.0)],
            Box::new(|x| {
                let joined = Tensor::cat(&[&x[0], &x[1]], 2)?;
                joined.permute(&[2, 0, 1])?.narrow(0, 1, 3)?.reshape([3, 6])
            }),
        ),
        (
            "split, chunk and unbind (a piece unused)",
            vec![values(&[5, 3, 2], 0.0)],
            Box::new(|x| {
                let parts = x[0].split_with_sizes(&[2, 0, 3], 0)?;
                let rows = x[0].unbind(1)?;
                let halves = x[0].chunk(2, -1)?;
                let joined = Tensor::cat(&[&parts[2], &parts[0].mul_scalar(-2.0)?], 0)?;
                joined.add(&rows[2].unsqueeze(1)?)?.add(&halves[1].exp()?)
            }),
        ),
    ];
    for (name, inputs, f) in &cases {
        let (on_cpu, on_dev) = (f32_gradients(Device::Cpu, inputs, f), f32_gradients(dev, inputs, f));
        for (i, (c, d)) in on_cpu.iter().zip(&on_dev).enumerate() {
            let scale = c.abs().unwrap().to_vec_f64().unwrap().into_iter().fold(0.0, f64::max);
            assert!(
                max_abs_diff(c, d) <= 1e-5 * scale.max(1.0),
                "{name}, input {i}: off by {}",
                max_abs_diff(c, d)
            );
        }
    }
}

#[test]
fn views_and_operations_reading_them() {
    let x = values(&[3, 4], 0.0);
    let cube = values(&[2, 3, 4], 1.0);
    gradcheck("t", vec![x.clone()], |x| x[0].t());
    gradcheck("permute", vec![cube.clone()], |x| x[0].permute(&[2, 0, 1]));
    gradcheck("narrow", vec![x.clone()], |x| x[0].narrow(1, 1, 2));
    gradcheck("slice with a step", vec![x.clone()], |x| {
        x[0].slice(1, Some(-4), None, 3)
    });
    gradcheck("select", vec![cube.clone()], |x| x[0].select(1, -1));
    gradcheck("expand", vec![values(&[3, 1], 0.0)], |x| x[0].expand(&[2, 3, 5]));
    gradcheck("diagonal", vec![cube.clone()], |x| x[0].diagonal(-1, 2, 1));
    gradcheck("unflatten of a transpose", vec![x.clone()], |x| {
        x[0].t()?.unflatten(0, &[2, 2])
    });
    gradcheck("reshape of a transpose (a copy)", vec![x.clone()], |x| {
        x[0].t()?.reshape([12])
    });
    gradcheck("as_strided, overlapping windows", vec![values(&[6], 0.0)], |x| {
        x[0].as_strided(&[4, 3], &[1, 1], None)
    });
    gradcheck("as_strided of a view", vec![x.clone()], |x| {
        x[0].select(0, 1)?.as_strided(&[2, 2], &[1, 2], Some(4))
    });
    gradcheck("chunk and unbind pieces", vec![cube.clone()], |x| {
        let c = x[0].chunk(2, 2)?;
        let u = x[0].unbind(1)?;
        c[1].mul(&u[2].narrow(1, 0, 2)?.unsqueeze(1)?)
    });
    // Operations reading views: a product of transposes, a sum over a strided slice.
    gradcheck(
        "matmul of transposed views",
        vec![x.clone(), values(&[4, 3], 2.0)],
        |x| x[0].t()?.matmul(&x[1].t()?),
    );
    gradcheck("reduction of a strided view", vec![cube.clone()], |x| {
        x[0].slice(2, Some(1), None, 2)?.sum_dims(&[0], false)
    });
    // Writes through views of a computed tensor (PyTorch's CopySlices), then reads of the base, the view and a
    // sibling view taken before the write.
    gradcheck("mul_ through a view, the base read", vec![x.clone()], |x| {
        let y = x[0].mul(&x[0])?;
        y.t()?.select(0, 1)?.mul_scalar_(3.0)?;
        Ok(y)
    });
    gradcheck(
        "add_ of another input through a view",
        vec![x.clone(), values(&[3], 3.0)],
        |x| {
            let y = x[0].mul_scalar(2.0)?;
            let column = y.select(1, 2)?;
            column.add_(&x[1])?;
            column.mul(&column)
        },
    );
    gradcheck("a sibling view read after a write", vec![x.clone()], |x| {
        let y = x[0].mul_scalar(1.0)?;
        let row = y.select(0, 1)?;
        let column = y.select(1, 2)?;
        row.mul_(&row)?;
        column.mul_scalar(1.0)
    });
    gradcheck("the base changed in place, a view read", vec![x.clone()], |x| {
        let y = x[0].mul_scalar(1.0)?;
        let v = y.t()?;
        y.mul_(&y)?;
        v.narrow(0, 1, 2)
    });
}
