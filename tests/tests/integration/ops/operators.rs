//! The tensor operators (`+ - * /`, unary `-`, `+= -= *= /=`) against PyTorch 2.5.1's
//! (`tests/fixtures/generate/operators.py`): dtypes as PyTorch's type promotion gives them, values bit for bit
//! on the CPU (within PyTorch's tolerances on a device), the gradient of an expression of them, and the panic
//! that carries the `Result` method's error.

use integration_tests::{assert_close, bit_equal, lacks_dtype, on_cpu_and_gpu, short};
use nn::prelude::*;

fn fixture() -> StateDict {
    integration_tests::tensors("ops/operators.safetensors")
}

/// Every float case of `operators.py`, computed with the operators from inputs `a` and `b`.
fn float_cases(a: &Tensor, b: &Tensor) -> Vec<(&'static str, Tensor)> {
    let in_place = |f: &dyn Fn(&mut Tensor)| {
        let mut x = a.deep_copy().unwrap();
        f(&mut x);
        x
    };
    vec![
        ("a+b", a + b),
        ("a-b", a - b),
        ("a*b", a * b),
        ("a/b", a / b),
        ("b/a", b / a),
        ("a+0.1", a + 0.1),
        ("a-0.1", a - 0.1),
        ("a*0.1", a * 0.1),
        ("a/0.1", a / 0.1),
        ("a/3.0", a / 3.0),
        ("0.1+a", 0.1 + a),
        ("0.1-a", 0.1 - a),
        ("0.1*a", 0.1 * a),
        ("3.0/a", 3.0 / a),
        ("a+2", a + 2),
        ("a-2", a - 2),
        ("a*2", a * 2),
        ("a/2", a / 2),
        ("2-a", 2 - a),
        ("2/a", 2 / a),
        ("-a", -a),
        ("a*2.0+b-1.0/a", a * 2.0 + b - 1.0 / a),
        ("a+=b", in_place(&|x| *x += b)),
        ("a-=b", in_place(&|x| *x -= b)),
        ("a*=b", in_place(&|x| *x *= b)),
        ("a/=b", in_place(&|x| *x /= b)),
        ("a+=0.1", in_place(&|x| *x += 0.1)),
        ("a-=0.1", in_place(&|x| *x -= 0.1)),
        ("a*=0.1", in_place(&|x| *x *= 0.1)),
        ("a/=3.0", in_place(&|x| *x /= 3.0)),
    ]
}

fn check(device: Device) {
    let f = fixture();
    for dtype in [DType::F64, DType::F32, DType::F16, DType::BF16] {
        if !device.is_cpu() && (dtype == DType::BF16 || lacks_dtype(device, dtype)) {
            continue;
        }
        let d = short(dtype);
        let a = f[&format!("{d}.a")].to_device(device).unwrap();
        let b = f[&format!("{d}.b")].to_device(device).unwrap();
        for (case, got) in float_cases(&a, &b) {
            let want = &f[&format!("{d}.{case}")];
            let what = format!("{d} {case} on {device}");
            assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
            if device.is_cpu() {
                assert!(bit_equal(&got, want), "{what}: {got:?}, PyTorch {want:?}");
            } else {
                assert_close(&what, &got, want);
            }
        }
    }
}

on_cpu_and_gpu!(
    float_operators_equal_pytorchs,
    float_operators_on_a_device_equal_pytorchs,
    check
);

/// An integer number keeps an integer tensor's dtype (a bool tensor's becomes `i64`); a float number, and `/`,
/// give `f32`, as PyTorch's promotion of a Python number does.
#[test]
fn integer_and_bool_tensors_with_numbers_take_pytorchs_dtypes() {
    let f = fixture();
    for dtype in [DType::I64, DType::I32, DType::U8, DType::Bool] {
        let d = short(dtype);
        let a = &f[&format!("{d}.a")];
        let mut cases = vec![
            ("a+2", a + 2),
            ("a/2", a / 2),
            ("a+0.5", a + 0.5),
            ("a/2.0", a / 2.0),
            ("2+a", 2 + a),
            ("7/a", 7 / a),
        ];
        if dtype != DType::Bool {
            let mut x = a.deep_copy().unwrap();
            x += 3;
            cases.push(("a-2", a - 2));
            cases.push(("a+=3", x));
        }
        for (case, got) in cases {
            let want = &f[&format!("{d}.{case}")];
            assert_eq!(got.dtype(), want.dtype(), "{d} {case}: dtype");
            assert!(bit_equal(&got, want), "{d} {case}: {got:?}, PyTorch {want:?}");
        }
    }
}

/// `((a·2 + b - 1/a) / 3 · a).sum()` through the operators: the gradients PyTorch's autograd gives, in f64 and
/// f32.
#[test]
fn gradients_through_the_operators_equal_pytorchs() {
    let f = fixture();
    for dtype in [DType::F64, DType::F32] {
        let d = short(dtype);
        let a = f[&format!("{d}.a")].deep_copy().unwrap().requires_grad_(true).unwrap();
        let b = f[&format!("{d}.b")].deep_copy().unwrap().requires_grad_(true).unwrap();
        let y = (&a * 2.0 + &b - 1.0 / &a) / 3.0 * &a;
        y.sum_all().unwrap().backward().unwrap();
        assert_close(&format!("{d} grad a"), &a.grad().unwrap(), &f[&format!("{d}.grad.a")]);
        assert_close(&format!("{d} grad b"), &b.grad().unwrap(), &f[&format!("{d}.grad.b")]);
    }
}

/// An operator panics with its method's error: shapes that do not broadcast name both shapes, and an
/// in-place number whose result PyTorch cannot cast back gives PyTorch's sentence.
#[test]
fn an_operator_panics_with_its_methods_error() {
    let a = Tensor::zeros([2, 3], DType::F32);
    let b = Tensor::zeros([4], DType::F32);
    let method = a.add(&b).unwrap_err().to_string();
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| &a + &b)).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(
        message.starts_with("tensor `+`: ") && message.ends_with(&method),
        "{message}"
    );
    assert!(method.contains("[2, 3]") && method.contains("[4]"), "{method}");

    let steps = Tensor::zeros([2], DType::I64);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let mut steps = steps;
        steps += 0.5;
    }))
    .unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("result type Float can't be cast to the desired output type Long"),
        "{message}"
    );
}

/// `a += &b` writes through the handle, as PyTorch's `+=`: every clone of the tensor sees it.
#[test]
fn compound_assignment_writes_through_every_handle() {
    let mut a = Tensor::from_vec(vec![1.0f32, 2.0], [2]).unwrap();
    let alias = a.clone();
    a += &Tensor::from_vec(vec![10.0f32, 20.0], [2]).unwrap();
    a *= 2.0;
    assert_eq!(alias.to_vec::<f32>().unwrap(), vec![22.0, 44.0]);
}
