//! RReLU, GLU, Softmin and Softmax2d against PyTorch 2.5.1 (`fixtures/activation/rrelu_glu_softmin.safetensors`, written
//! by `fixtures/generate/rrelu_glu_softmin.py`): forward and backward in every dtype, through the functions and
//! the layers, on the CPU and on wgpu.
//!
//! Tolerances are `torch.testing.assert_close`'s defaults for the dtype. On wgpu a case may instead be refused
//! with `UnsupportedOnDevice` for `bf16` (not stored) or `f64` (where the driver's math fails the parity
//! probe); `f32` and `f16` must run.

use integration_tests::{gpu_or_skip, lacks_dtype, tensors};
use nn::functional::{
    glu, glu_backward, rrelu, rrelu_with_noise, rrelu_with_noise_backward, softmax_backward, softmin, softmin_backward,
};
use nn::prelude::*;
use nn::{Error, Result};

const DTYPES: [&str; 4] = ["f64", "f32", "f16", "bf16"];
const LOWER: f64 = 1.0 / 8.0;
const UPPER: f64 = 1.0 / 3.0;

/// One fixture case: its fields by name (`x`, `y`, `dy`, `dx`, and `noise` for `rrelu_train`).
struct Case {
    name: String,
    fields: nn::StateDict,
}

impl Case {
    fn get(&self, field: &str) -> Tensor {
        self.fields[field].clone()
    }
}

/// The cases of `name` in every dtype the fixture holds (at least one).
fn cases(name: &str) -> Vec<Case> {
    let all = tensors("activation/rrelu_glu_softmin.safetensors");
    let found: Vec<Case> = DTYPES
        .iter()
        .filter_map(|dtype| {
            let prefix = format!("{name}.{dtype}.");
            let fields = integration_tests::under(&all, &prefix);
            (!fields.is_empty()).then(|| Case {
                name: format!("{name}.{dtype}"),
                fields,
            })
        })
        .collect();
    assert!(!found.is_empty(), "no case {name} in the fixture");
    found
}

/// Finite differences in `f64`: the gradient `backward(x, dy)` of `x ↦ Σ f(x)·dy` equals the central
/// difference at every element of `x` (step `1e-6`, tolerance `1e-6` relative to the gradient's size).
fn gradcheck(what: &str, x: &Tensor, f: impl Fn(&Tensor) -> Tensor, backward: impl Fn(&Tensor, &Tensor) -> Tensor) {
    let y = f(x);
    let n = y.numel();
    let dy = Tensor::from_vec(
        (0..n).map(|i| ((i * 7 % 11) as f64 - 5.0) / 3.0).collect(),
        y.shape().clone(),
    )
    .unwrap();
    let analytic = backward(x, &dy).to_vec_f64().unwrap();
    let xs = x.to_vec_f64().unwrap();
    let loss = |v: &[f64]| -> f64 {
        let t = Tensor::from_vec(v.to_vec(), x.shape().clone()).unwrap();
        let out = f(&t).to_vec_f64().unwrap();
        out.iter().zip(dy.to_vec_f64().unwrap()).map(|(a, b)| a * b).sum()
    };
    let h = 1e-6;
    for i in 0..xs.len() {
        let (mut up, mut down) = (xs.clone(), xs.clone());
        up[i] += h;
        down[i] -= h;
        let numeric = (loss(&up) - loss(&down)) / (2.0 * h);
        let scale = analytic[i].abs().max(1.0);
        assert!(
            (numeric - analytic[i]).abs() <= 1e-6 * scale,
            "{what}: d/dx[{i}] is {} analytically, {numeric} numerically",
            analytic[i]
        );
    }
}

/// `f64` inputs away from zero (the kink of the ReLU family), of `shape`.
fn smooth_input(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let values = (0..n).map(|i| {
        let v = ((i * 37 % 29) as f64 - 14.0) / 5.0;
        if v == 0.0 { 0.37 } else { v }
    });
    Tensor::from_vec(values.collect(), shape).unwrap()
}

/// [`integration_tests::assert_close`] with the dtypes equal too.
fn assert_close(what: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    integration_tests::assert_close(what, got, want);
}

/// The devices to run on: the CPU, and wgpu where there is an adapter (always in CI).
fn devices() -> Vec<Device> {
    std::iter::once(Device::Cpu)
        .chain(gpu_or_skip("rrelu_glu_softmin"))
        .collect()
}

/// Whether `device` may refuse `dtype`: a dtype its adapter reports it lacks, or f64 (whose math lavapipe gets
/// wrong: the parity probe refuses it).
fn may_refuse(device: Device, dtype: DType) -> bool {
    !device.is_cpu() && (dtype == DType::F64 || lacks_dtype(device, dtype))
}

/// Runs `check` for the case on `device`, its tensors moved there; on a device, a refusal (`UnsupportedOnDevice`
/// naming the device) of a dtype it [may refuse](may_refuse) passes, anything else must succeed.
fn on(device: Device, case: &Case, check: impl FnOnce(&dyn Fn(&str) -> Tensor) -> Result<()>) {
    let moved = |field: &str| case.get(field).to_device(device).unwrap();
    match check(&moved) {
        Ok(()) => {}
        Err(Error::UnsupportedOnDevice { dtype, device: d, .. }) if d == device && may_refuse(device, dtype) => {}
        Err(e) => panic!("{} on {device}: {e}", case.name),
    }
}

/// Runs `check(what, case, moved)` for every case of `name` on every device, through [`on`].
fn for_each_case(name: &str, check: impl Fn(&str, &Case, &dyn Fn(&str) -> Tensor) -> Result<()>) {
    for device in devices() {
        for case in cases(name) {
            let what = format!("{} on {device}", case.name);
            on(device, &case, |t| check(&what, &case, t));
        }
    }
}

#[test]
fn rrelu_in_evaluation_matches_pytorch_on_every_device() {
    for_each_case("rrelu", |what, case, t| {
        let (x, dy) = (t("x"), t("dy"));
        assert_close(what, &rrelu(&x, LOWER, UPPER, false, false)?, &case.get("y"));
        let mut layer = RReLU::default();
        layer.eval();
        assert_close(what, &layer.forward(x.clone())?, &case.get("y"));
        let dx = rrelu_with_noise_backward(&dy, &x, &x, LOWER, UPPER, false)?;
        assert_close(what, &dx, &case.get("dx"));
        let copy = x.deep_copy()?;
        let same = rrelu(&copy, LOWER, UPPER, false, true)?;
        assert!(same.shares_storage(&copy), "{what}: in place returns the input");
        assert_close(what, &copy, &case.get("y"));
        Ok(())
    });
}

#[test]
fn rrelu_in_training_is_x_times_its_noise_as_pytorch_on_every_device() {
    // PyTorch's noise (its own draws) given: the output is x · noise and the gradient dy · noise.
    for_each_case("rrelu_train", |what, case, t| {
        let (x, noise, dy) = (t("x"), t("noise"), t("dy"));
        assert_close(what, &x.mul(&noise)?, &case.get("y"));
        let dx = rrelu_with_noise_backward(&dy, &x, &noise, LOWER, UPPER, true)?;
        assert_close(what, &dx, &case.get("dx"));
        Ok(())
    });
}

/// Checks our own draws for `x`: `noise` is 1 where `x > 0` and in `[lower, upper]` elsewhere, and `y = x · noise`
/// (exactly in `f32` and `f64`; for half types, PyTorch multiplies by the slope before its rounding to the dtype,
/// so within the dtype's tolerance).
fn assert_drawn(what: &str, x: &Tensor, noise: &Tensor, y: &Tensor) {
    let (xs, ns) = (
        x.to_vec_f64().unwrap(),
        noise.to_device(Device::Cpu).unwrap().to_vec_f64().unwrap(),
    );
    let ys = y.to_device(Device::Cpu).unwrap().to_vec_f64().unwrap();
    let (lo, hi) = (
        Tensor::scalar(LOWER).to_dtype(x.dtype()).unwrap().to_vec_f64().unwrap()[0],
        Tensor::scalar(UPPER).to_dtype(x.dtype()).unwrap().to_vec_f64().unwrap()[0],
    );
    let want = x
        .mul(&noise.to_device(Device::Cpu).unwrap())
        .unwrap()
        .to_vec_f64()
        .unwrap();
    for i in 0..xs.len() {
        if xs[i] > 0.0 {
            assert_eq!(ns[i], 1.0, "{what}: noise at {i} (x = {})", xs[i]);
        } else {
            assert!((lo..=hi).contains(&ns[i]), "{what}: slope {} at {i}", ns[i]);
        }
        let (rtol, atol) = match x.dtype() {
            DType::F16 | DType::BF16 => integration_tests::default_tolerance(x.dtype()),
            _ => (0.0, 0.0),
        };
        assert!(
            (ys[i] - want[i]).abs() <= atol + rtol * want[i].abs() || (ys[i].is_nan() && want[i].is_nan()),
            "{what}: y at {i} is {}, x · noise {}",
            ys[i],
            want[i]
        );
    }
}

#[test]
fn rrelu_in_training_tests_the_sign_as_pytorch_and_draws_the_same_on_every_device() {
    integration_tests::in_own_process(|| {
        // PyTorch draws where `x <= 0` (zeros of both signs and -inf) and keeps 1 elsewhere (NaN, +inf).
        let values = [f64::NAN, 0.0, -0.0, -2.0, 3.0, f64::INFINITY, f64::NEG_INFINITY, -0.5];
        let drawn = [false, true, true, true, false, false, true, true];
        for dtype in [DType::F64, DType::F32, DType::F16, DType::BF16] {
            let x = Tensor::from_vec(values.to_vec(), [values.len()])
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let mut on_cpu = None;
            for device in devices() {
                let what = format!("{dtype} on {device}");
                let moved = x.to_device(device).unwrap();
                let noise = moved.zeros_like().unwrap();
                nn::manual_seed(11);
                let y = match rrelu_with_noise(&moved, &noise, LOWER, UPPER, true) {
                    Err(Error::UnsupportedOnDevice { .. }) if may_refuse(device, dtype) => continue,
                    other => other.unwrap(),
                };
                let (ys, ns) = (
                    y.to_device(Device::Cpu).unwrap().to_vec_f64().unwrap(),
                    noise.to_device(Device::Cpu).unwrap().to_vec_f64().unwrap(),
                );
                for (i, &v) in values.iter().enumerate() {
                    if drawn[i] {
                        assert!((0.12..=0.34).contains(&ns[i]), "{what}: slope {} at {i}", ns[i]);
                        assert!(
                            v.is_infinite() || (ys[i] - v * ns[i]).abs() <= 0.02 * v.abs(),
                            "{what}: y at {i}"
                        );
                        assert_eq!(
                            ys[i].is_sign_negative(),
                            v.is_sign_negative(),
                            "{what}: sign of y at {i}"
                        );
                    } else {
                        assert_eq!(ns[i], 1.0, "{what}: noise at {i} (x = {v})");
                        assert!(ys[i] == v || (v.is_nan() && ys[i].is_nan()), "{what}: y at {i}");
                    }
                }
                // The same seed gives the same slopes and outputs, bit for bit, on every device (a NaN with any
                // payload: NVIDIA's Vulkan driver returns the canonical NaN where the CPU keeps the input's).
                let bits = |v: &[f64]| {
                    v.iter()
                        .map(|f| if f.is_nan() { f64::NAN.to_bits() } else { f.to_bits() })
                        .collect::<Vec<_>>()
                };
                match &on_cpu {
                    None => on_cpu = Some((bits(&ys), bits(&ns))),
                    Some(cpu) => assert_eq!(&(bits(&ys), bits(&ns)), cpu, "{what}: the CPU's draws"),
                }
            }
        }
    });
}

#[test]
fn rrelu_in_training_draws_slopes_in_the_bounds_on_every_device() {
    for_each_case("rrelu", |what, case, t| {
        let x = t("x");
        let noise = x.zeros_like()?;
        let y = rrelu_with_noise(&x, &noise, LOWER, UPPER, true)?;
        assert_drawn(what, &case.get("x"), &noise, &y);
        // The layer in training: `y / x` is a slope in the bounds below zero, `y = x` above.
        let y = RReLU::default().forward(x.clone())?;
        let slopes = y.to_device(Device::Cpu)?.to_vec_f64()?;
        for (s, x) in slopes.iter().zip(case.get("x").to_vec_f64()?) {
            if x > 0.0 {
                assert_eq!(*s, x, "{what}");
            } else if x < -1e-3 {
                let slope = s / x;
                assert!((LOWER - 0.02..=UPPER + 0.02).contains(&slope), "{what}: slope {slope}");
            }
        }
        Ok(())
    });
}

#[test]
fn rrelu_gradients_match_finite_differences() {
    let x = smooth_input(&[3, 7]);
    gradcheck(
        "rrelu (evaluation)",
        &x,
        |x| rrelu(x, LOWER, UPPER, false, false).unwrap(),
        |x, dy| rrelu_with_noise_backward(dy, x, x, LOWER, UPPER, false).unwrap(),
    );
    let noise = x.zeros_like().unwrap();
    rrelu_with_noise(&x, &noise, LOWER, UPPER, true).unwrap();
    gradcheck(
        "rrelu (training, its noise fixed)",
        &x,
        |x| x.mul(&noise).unwrap(),
        |x, dy| rrelu_with_noise_backward(dy, x, &noise, LOWER, UPPER, true).unwrap(),
    );
}

#[test]
fn rrelu_draws_from_the_global_generator_with_the_mean_slope() {
    integration_tests::in_own_process(|| {
        let x = Tensor::full([100_000], -1.0, DType::F64);
        nn::manual_seed(3);
        let a = rrelu(&x, LOWER, UPPER, true, false).unwrap().to_vec_f64().unwrap();
        nn::manual_seed(3);
        let b = rrelu(&x, LOWER, UPPER, true, false).unwrap().to_vec_f64().unwrap();
        assert_eq!(a, b, "a seed repeats the draws");
        let mean = -a.iter().sum::<f64>() / a.len() as f64;
        assert!((mean - (LOWER + UPPER) / 2.0).abs() < 2e-3, "mean slope {mean}");
        let (min, max) = a
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(-v), hi.max(-v)));
        assert!(
            min >= LOWER && max <= UPPER && max - min > 0.2,
            "slopes in [{min}, {max}]"
        );
    });
}

#[test]
fn rrelu_refuses_crossed_bounds_and_integer_inputs_in_both_modes() {
    let x = Tensor::from_vec(vec![-1.0f32, 1.0], [2]).unwrap();
    for training in [false, true] {
        assert!(matches!(
            rrelu(&x, 0.5, 0.1, training, false),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(rrelu(&x, f64::NAN, 0.1, training, false).is_err());
        let mut layer = RReLU::new(0.5, 0.1, false);
        layer.train(training);
        assert!(
            layer.forward(x.clone()).is_err(),
            "PyTorch builds the layer and refuses at the forward"
        );
    }
    let ints = Tensor::from_vec(vec![-1i64, 2], [2]).unwrap();
    assert!(rrelu(&ints, LOWER, UPPER, true, false).is_err());
    assert!(rrelu(&ints, LOWER, UPPER, false, false).is_err());
    let noise = Tensor::zeros([3], DType::F32);
    assert!(matches!(
        rrelu_with_noise(&x, &noise, LOWER, UPPER, true),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(rrelu_with_noise_backward(&x, &x, &noise, LOWER, UPPER, true).is_err());
    let empty = Tensor::zeros([0, 3], DType::F32);
    assert_eq!(rrelu(&empty, LOWER, UPPER, true, false).unwrap().shape(), empty.shape());
}

#[test]
fn glu_matches_pytorch_on_every_device() {
    for_each_case("glu", |what, case, t| {
        let (x, dy) = (t("x"), t("dy"));
        assert_close(what, &glu(&x, 1)?, &case.get("y"));
        assert_close(what, &GLU::new(1).forward(x.clone())?, &case.get("y"));
        assert_close(what, &GLU::new(-2).forward(x.clone())?, &case.get("y"));
        assert_close(what, &glu_backward(&dy, &x, 1)?, &case.get("dx"));
        Ok(())
    });
}

#[test]
fn glu_gradients_match_finite_differences() {
    let x = smooth_input(&[3, 4, 2]);
    for dim in [1, -1] {
        gradcheck(
            &format!("glu along {dim}"),
            &x,
            |x| glu(x, dim).unwrap(),
            |x, dy| glu_backward(dy, x, dim).unwrap(),
        );
    }
}

#[test]
fn glu_refuses_odd_halves_scalars_and_integers() {
    let x = Tensor::zeros([3, 5], DType::F32);
    let err = glu(&x, 1).unwrap_err().to_string();
    assert!(err.contains("dimension 1 is size 5"), "{err}");
    assert!(glu(&x, 2).is_err());
    assert!(glu(&Tensor::scalar(1.0f32), 0).is_err());
    assert!(glu(&Tensor::zeros([4], DType::I64), 0).is_err());
    assert!(GLU::default().forward(x.clone()).is_err());
    let x = Tensor::zeros([4, 2], DType::F32);
    assert!(
        glu_backward(&Tensor::zeros([4, 2], DType::F32), &x, 1).is_err(),
        "dy of the input's shape"
    );
    assert!(
        glu_backward(&Tensor::zeros([4, 1], DType::F64), &x, 1).is_err(),
        "dy of another dtype"
    );
    assert_eq!(
        glu(&Tensor::zeros([0, 2], DType::F32), 1).unwrap().shape(),
        &nn::Shape::from([0, 1])
    );
}

#[test]
fn softmin_matches_pytorch_on_every_device() {
    for_each_case("softmin", |what, case, t| {
        let (x, dy) = (t("x"), t("dy"));
        let y = softmin(&x, 1)?;
        assert_close(what, &y, &case.get("y"));
        assert_close(what, &Softmin::new(1).forward(x.clone())?, &case.get("y"));
        assert_close(what, &Softmin::new(-2).forward(x.clone())?, &case.get("y"));
        // PyTorch's legacy implicit dimension of a 3-d input is 0.
        assert_close(what, &Softmin::new(None).forward(x.clone())?, &softmin(&x, 0)?);
        // The backward from the forward's saved output: PyTorch's.
        assert_close(what, &softmin_backward(&t("y"), &dy, 1)?, &case.get("dx"));
        Ok(())
    });
}

#[test]
fn softmin_gradients_match_finite_differences() {
    let x = smooth_input(&[2, 5, 3]);
    for dim in [0, 1, 2] {
        gradcheck(
            &format!("softmin along {dim}"),
            &x,
            |x| softmin(x, dim).unwrap(),
            |x, dy| softmin_backward(&softmin(x, dim).unwrap(), dy, dim).unwrap(),
        );
    }
}

#[test]
fn softmin_refuses_integers_and_bad_dimensions() {
    assert!(softmin(&Tensor::zeros([3], DType::I64), 0).is_err());
    assert!(softmin(&Tensor::zeros([3], DType::F32), 1).is_err());
    let y = Tensor::zeros([2, 3], DType::F32);
    assert!(softmin_backward(&y, &Tensor::zeros([3, 2], DType::F32), 1).is_err());
}

#[test]
fn softmax2d_matches_pytorch_on_3d_and_4d_inputs_on_every_device() {
    for name in ["softmax2d", "softmax2d_4d"] {
        for_each_case(name, |what, case, t| {
            let (x, dy) = (t("x"), t("dy"));
            assert_close(what, &Softmax2d::new().forward(x.clone())?, &case.get("y"));
            assert_close(what, &softmax_backward(&t("y"), &dy, -3)?, &case.get("dx"));
            Ok(())
        });
    }
}

#[test]
fn softmax2d_gradients_match_finite_differences() {
    let x = smooth_input(&[2, 3, 2, 2]);
    let layer = Softmax2d::default();
    gradcheck(
        "softmax2d",
        &x,
        |x| layer.forward(x.clone()).unwrap(),
        |x, dy| softmax_backward(&layer.forward(x.clone()).unwrap(), dy, -3).unwrap(),
    );
}

#[test]
fn softmax2d_refuses_inputs_that_are_not_images() {
    for shape in [&[4][..], &[3, 4], &[1, 2, 3, 4, 5]] {
        let err = Softmax2d::new().forward(Tensor::zeros(shape, DType::F32)).unwrap_err();
        let want = format!("expected input to be 3D or 4D, got {}D instead", shape.len());
        assert!(err.to_string().contains(&want), "{err}");
    }
    assert!(Softmax2d::new().forward(Tensor::zeros([1, 2, 2], DType::I64)).is_err());
}
