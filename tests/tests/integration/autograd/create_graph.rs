//! `create_graph`: gradients that differentiate again (second derivatives against finite differences of the
//! first in f64, PyTorch's own `test_grad`), and the refusal where a backward on the path is not differentiable.

use nn::autograd::{BackwardOptions, GradOptions, grad_opts};
use nn::prelude::*;
use nn::{Error, Result};

use super::gradcheck::{central_difference, values};

/// `Σ f(x) · w` for fixed weights `w` of the output's shape.
fn weighted(y: &Tensor) -> Result<Tensor> {
    let n = y.numel();
    let w: Vec<f64> = (0..n).map(|i| ((i * 7 % 11) as f64 - 5.0) / 3.0).collect();
    y.mul(&Tensor::from_vec(w, y.shape().clone())?)?.sum_all()
}

/// The first derivatives of `Σ f(x) · w` with respect to every input, with `create_graph`, flattened into one
/// vector; inputs that require no grad are made leaves that do (the finite differences pass plain tensors).
fn first_derivatives(xs: &[Tensor], f: &dyn Fn(&[Tensor]) -> Result<Tensor>) -> Result<Tensor> {
    let _on = nn::enable_grad();
    let xs: Vec<Tensor> = xs
        .iter()
        .map(|x| {
            if x.requires_grad() {
                Ok(x.clone())
            } else {
                x.detach().requires_grad_(true)
            }
        })
        .collect::<Result<_>>()?;
    let loss = weighted(&f(&xs)?)?;
    let inputs: Vec<&Tensor> = xs.iter().collect();
    let options = GradOptions {
        create_graph: true,
        ..GradOptions::default()
    };
    let grads = grad_opts(&[&loss], &inputs, options)?;
    let flat = grads
        .iter()
        .zip(&xs)
        .map(|(g, x)| match g {
            Some(g) => g.reshape([g.numel()]),
            None => Ok(Tensor::zeros([x.numel()], DType::F64)),
        })
        .collect::<Result<Vec<_>>>()?;
    Tensor::cat(&flat.iter().collect::<Vec<_>>(), 0)
}

/// Checks the second derivatives autograd gives: the gradient of `Σ ∇(Σ f·w) · v` against central differences
/// of the first derivatives (PyTorch's `gradgradcheck`), every input in f64.
fn gradgradcheck(what: &str, inputs: Vec<Tensor>, f: impl Fn(&[Tensor]) -> Result<Tensor>) {
    let leaves: Vec<Tensor> = inputs
        .iter()
        .map(|x| x.detach().requires_grad_(true).unwrap())
        .collect();
    let first = first_derivatives(&leaves, &f).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(first.requires_grad(), "{what}: the first derivatives carry no history");
    weighted(&first)
        .unwrap()
        .backward()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let probe = |xs: &[Tensor]| -> f64 {
        let first = first_derivatives(xs, &f).unwrap();
        let _off = nn::no_grad();
        weighted(&first).unwrap().to_vec::<f64>().unwrap()[0]
    };
    let h = 1e-6;
    for (i, leaf) in leaves.iter().enumerate() {
        let base = inputs[i].to_vec::<f64>().unwrap();
        let analytic = leaf
            .grad()
            .map_or(vec![0.0; base.len()], |g| g.to_vec::<f64>().unwrap());
        for (j, a) in analytic.iter().enumerate() {
            let numeric = central_difference(&inputs, i, j, h, &probe);
            assert!(
                (a - numeric).abs() <= 1e-5 + 1e-4 * numeric.abs(),
                "{what}: input {i}[{j}]: second derivative {a} vs finite differences {numeric}"
            );
        }
    }
}

#[test]
fn second_derivatives_of_arithmetic_equal_finite_differences() {
    gradgradcheck(
        "mul, div, add, sub broadcast",
        vec![values(&[2, 3], 0.0), values(&[3], 1.0)],
        |x| {
            let p = x[0].mul(&x[0])?.mul(&x[1])?;
            let q = x[0].div(&x[1].mul(&x[1])?.add_scalar(1.0)?)?;
            p.sub(&q)?.add(&x[1].neg()?.mul_scalar(3.0)?)
        },
    );
    gradgradcheck("scalar ops and a quotient", vec![values(&[4], 2.0)], |x| {
        let d = x[0].add_scalar(3.0)?;
        Tensor::ones([4], DType::F64)
            .div(&d)?
            .mul_scalar(2.0)?
            .sub(&d.neg()?.mul(&d)?)
    });
}

#[test]
fn second_derivatives_through_views_reductions_and_products() {
    gradgradcheck("reshape, permute, expand, sum, mean", vec![values(&[2, 3], 0.5)], |x| {
        let t = x[0].reshape([3, 2])?.transpose(0, 1)?;
        let s = t.mul(&t)?.sum_dims(&[1], true)?.expand(&[2, 4])?;
        s.mul(&x[0].mean_all()?)
    });
    gradgradcheck("narrow, select, x[:, 1..3]", vec![values(&[3, 4], 1.5)], |x| {
        let a = x[0].narrow(1, 1, 2)?;
        let b = x[0]
            .select(1, 2)?
            .unsqueeze(1)?
            .add(&x[0].select(0, 1)?.narrow(0, 1, 2)?)?;
        let c = x[0].i((.., 1..3))?;
        a.mul(&a)?.mul(&c)?.sub(&b.mul(&c)?)
    });
    gradgradcheck("matmul", vec![values(&[2, 3], 0.0), values(&[3, 2], 3.0)], |x| {
        let y = x[0].matmul(&x[1])?;
        y.mul(&y)
    });
    gradgradcheck(
        "linear with a bias",
        vec![values(&[4, 3], 1.0), values(&[2, 3], 2.0), values(&[2], 4.0)],
        |x| {
            let y = x[0].linear(&x[1], Some(&x[2]))?;
            y.mul(&y)?.mul(&x[0].sum_dims(&[1], true)?)
        },
    );
    gradgradcheck(
        // (A cast's backward, `to_dtype` back, is recorded too; through f32 central differences are too coarse.)
        "cat, unbind",
        vec![values(&[2, 2], 0.0), values(&[2], 5.0)],
        |x| {
            let parts = x[0].unbind(0)?;
            let joined = Tensor::cat(&[&parts[1], &x[1], &parts[0]], 0)?;
            joined.mul(&joined)?.mul(&x[1].sum_all()?)
        },
    );
}

/// A gradient penalty as WGAN-GP computes it, `(‖∇ₓ D(x)‖² - 1)²` for a LeakyReLU MLP `D`, differentiated
/// with respect to the input and every weight; and the other piecewise-linear formulas (ReLU, hardtanh, abs,
/// clamp), whose second derivative is zero between their kinks.
#[test]
fn second_derivatives_through_piecewise_linear_activations_and_a_gradient_penalty() {
    gradgradcheck(
        "a LeakyReLU MLP",
        vec![
            values(&[3, 4], 0.0),
            values(&[5, 4], 1.0),
            values(&[5], 2.0),
            values(&[1, 5], 3.0),
        ],
        |x| {
            let h = nn::functional::leaky_relu(&x[0].linear(&x[1], Some(&x[2]))?, 0.2)?;
            h.linear(&x[3], None)
        },
    );
    gradgradcheck(
        "relu, hardtanh, abs, clamp",
        vec![values(&[6], 0.3), values(&[6], 4.0)],
        |x| {
            let a = x[0].mul(&x[1])?;
            let parts = [a.relu()?, a.hardtanh(-0.5, 0.5)?, a.abs()?, a.clamp(-1.0, 1.0)?];
            parts.iter().try_fold(x[1].clone(), |acc, p| acc.mul(p)?.add(&x[0]))
        },
    );

    // The penalty itself, through nn's layers.
    let critic = Sequential::new()
        .append(Linear::new(4, 8, true))
        .append(LeakyReLU::new(0.2, false))
        .append(Linear::new(8, 1, true));
    let x = values(&[3, 4], 0.5)
        .to_dtype(DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let score = critic.forward(x.clone()).unwrap().sum_all().unwrap();
    let options = GradOptions {
        create_graph: true,
        ..GradOptions::default()
    };
    let dx = grad_opts(&[&score], &[&x], options).unwrap().remove(0).unwrap();
    let norm2 = dx.mul(&dx).unwrap().sum_dims(&[1], false).unwrap();
    let penalty = norm2.add_scalar(-1.0).unwrap();
    penalty.mul(&penalty).unwrap().mean_all().unwrap().backward().unwrap();
    // ∇ₓ D depends on the weights only (the biases move the kinks, where the slope is constant): the weights get
    // a gradient, the biases none (PyTorch gives the first one zeros).
    for (name, p) in critic.named_parameters() {
        match (name.ends_with("weight"), p.grad()) {
            (true, Some(g)) => {
                assert!(!g.requires_grad(), "{name}: a plain backward leaves a plain gradient");
                assert!(
                    g.abs().unwrap().sum_all().unwrap().to_vec::<f32>().unwrap()[0] > 0.0,
                    "{name}"
                );
            }
            (false, g) => assert!(g.is_none_or(|g| g.to_vec::<f32>().unwrap().iter().all(|v| *v == 0.0))),
            (true, None) => panic!("{name}: no gradient"),
        }
    }
}

/// test_autograd.py::TestAutograd::test_grad: `z = x² + y·x + y²`, `backward(create_graph=True)` leaves
/// `x.grad = 2x + y` with its history; the Hessian-vector product of `2·x.grad + y.grad` is 5 for `x` (PyTorch
/// writes `x ** 2`, here `x * x`).
#[test]
fn a_hessian_vector_product_is_pytorchs() {
    let x = values(&[2, 2], 0.0).requires_grad_(true).unwrap();
    let y = values(&[2, 2], 7.0).requires_grad_(true).unwrap();
    let z = x
        .mul(&x)
        .unwrap()
        .add(&y.mul(&x).unwrap())
        .unwrap()
        .add(&y.mul(&y).unwrap())
        .unwrap();
    z.backward_opts(BackwardOptions {
        gradient: Some(&Tensor::ones([2, 2], DType::F64)),
        create_graph: true,
        ..BackwardOptions::default()
    })
    .unwrap();
    let (x_grad, y_grad) = (x.grad().unwrap(), y.grad().unwrap());
    assert!(x_grad.requires_grad() && y_grad.requires_grad());
    let want_x = x.mul_scalar(2.0).unwrap().add(&y).unwrap();
    assert_eq!(x_grad.to_vec::<f64>().unwrap(), want_x.to_vec::<f64>().unwrap());

    let grad_sum = x_grad.mul_scalar(2.0).unwrap().add(&y_grad).unwrap();
    let ones = Tensor::ones([2, 2], DType::F64);
    let hv = grad_opts(
        &[&grad_sum],
        &[&x],
        GradOptions {
            grad_outputs: Some(&[&ones]),
            create_graph: true,
            ..GradOptions::default()
        },
    )
    .unwrap();
    assert_eq!(hv[0].as_ref().unwrap().to_vec::<f64>().unwrap(), vec![5.0; 4]);
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>().unwrap(),
        want_x.to_vec::<f64>().unwrap()
    );
}

/// A backward computed outside the recorded operations (the activations' kernels) cannot give a second
/// derivative: `create_graph` through it fails naming the op, and a pass without it still runs.
#[test]
fn create_graph_through_a_backward_that_is_not_differentiable_fails_naming_it() {
    let x = values(&[3], 0.0).requires_grad_(true).unwrap();
    let y = x.tanh().unwrap().mul(&x).unwrap().sum_all().unwrap();
    let options = GradOptions {
        create_graph: true,
        ..GradOptions::default()
    };
    let err = grad_opts(&[&y], &[&x], options).unwrap_err();
    assert!(matches!(err, Error::Autograd { op: "tanh", .. }), "{err}");
    assert!(err.to_string().contains("create_graph"), "{err}");
    assert!(grad_opts(&[&y], &[&x], GradOptions::default()).is_ok());
}
