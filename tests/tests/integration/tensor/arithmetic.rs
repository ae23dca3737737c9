//! Remainders, rounded divisions and integer arithmetic against PyTorch 2.5.1
//! (`tests/fixtures/generate/tensor_arithmetic.py`): `remainder` / `%`, `fmod`, `floor_divide`, `div_rounded`
//! in every float dtype, exactly, on the CPU and a device (operands far apart in exponent included); `+ - *`,
//! the divisions, `maximum` / `minimum` and `-` of int64, int32 and uint8 (wrapping); promotions between
//! integers, bools, floats and numbers; gradients and node names; PyTorch's refusals.

use integration_tests::{
    assert_close, fixture_on, identical, lacks_dtype, on_cpu_and_gpu, printed_grad_fn, widest_float,
};
use nn::prelude::*;
use nn::{Result, Rounding};

fn fixture() -> StateDict {
    integration_tests::tensors("tensor/arithmetic.safetensors")
}

type Binary = fn(&Tensor, &Tensor) -> Result<Tensor>;

const FLOAT_OPS: [(&str, Binary); 5] = [
    ("remainder", Tensor::remainder),
    ("fmod", Tensor::fmod),
    ("floor_divide", Tensor::floor_divide),
    ("div_trunc", |a, b| a.div_rounded(b, Rounding::Trunc)),
    ("div_floor", |a, b| a.div_rounded(b, Rounding::Floor)),
];

fn float_remainders_and_rounded_divisions(device: Device) {
    let f = fixture();
    for (name, dtype) in [
        ("f64", DType::F64),
        ("f32", DType::F32),
        ("f16", DType::F16),
        ("bf16", DType::BF16),
    ] {
        if lacks_dtype(device, dtype) {
            continue;
        }
        let operand = |key: &str| f[&format!("fl.{name}.{key}")].to_device(device).unwrap();
        let (a, b) = (operand("a"), operand("b"));
        for (op, run) in FLOAT_OPS {
            let what = format!("{op} in {name} on {device}");
            identical(&what, &run(&a, &b).unwrap(), &f[&format!("fl.{name}.{op}")]);
        }
        // `%` is `remainder`; in place, through every handle.
        identical(&format!("% in {name}"), &(&a % &b), &f[&format!("fl.{name}.remainder")]);
        let target = a.expand(&[5, 8]).unwrap().contiguous().unwrap();
        let alias = target.clone();
        target.fmod_(&b).unwrap();
        identical(&format!("fmod_ in {name}"), &alias, &f[&format!("fl.{name}.fmod")]);
        let mut target = a.deep_copy().unwrap();
        target %= &b;
        identical(&format!("%= in {name}"), &target, &f[&format!("fl.{name}.remainder")]);
    }
    // Operands far apart in exponent (1e30 by 1e-30, by subnormals), and 1 by 0.1 (where `a - b·trunc(a/b)` is
    // off by 0.1): the exact values, as C's fmod.
    for (name, dtype) in [("f32", DType::F32), ("f64", DType::F64)] {
        if lacks_dtype(device, dtype) {
            continue;
        }
        let operand = |key: &str| f[&format!("sp.{name}.{key}")].to_device(device).unwrap();
        let (a, b) = (operand("a"), operand("b"));
        for (op, run) in &FLOAT_OPS[..3] {
            identical(
                &format!("{op} of far-apart {name} on {device}"),
                &run(&a, &b).unwrap(),
                &f[&format!("sp.{name}.{op}")],
            );
        }
    }
}

on_cpu_and_gpu!(
    float_remainders_and_rounded_divisions_equal_pytorchs,
    float_remainders_and_rounded_divisions_on_a_device_equal_pytorchs,
    float_remainders_and_rounded_divisions
);

fn integer_arithmetic(device: Device) {
    let f = fixture();
    let ops: [(&str, Binary); 10] = [
        ("add", Tensor::add),
        ("sub", Tensor::sub),
        ("mul", Tensor::mul),
        ("remainder", Tensor::remainder),
        ("fmod", Tensor::fmod),
        ("floor_divide", Tensor::floor_divide),
        ("div_trunc", |a, b| a.div_rounded(b, Rounding::Trunc)),
        ("maximum", Tensor::maximum),
        ("minimum", Tensor::minimum),
        ("div", Tensor::div),
    ];
    for name in ["i64", "i32", "u8"] {
        let operand = |key: &str| f[&format!("int.{name}.{key}")].to_device(device).unwrap();
        let (a, b) = (&operand("a"), &operand("b"));
        for (op, run) in ops {
            let what = format!("{op} of {name} on {device}");
            let (got, want) = (run(a, b).unwrap(), &f[&format!("int.{name}.{op}")]);
            if op == "div" && !device.is_cpu() {
                // True division runs as f32 division, which a device may round within its ulps.
                assert_close(&what, &got, want);
            } else {
                identical(&what, &got, want);
            }
        }
        identical(&format!("* of {name}"), &(a * b), &f[&format!("int.{name}.mul")]);
        identical(&format!("% of {name}"), &(a % b), &f[&format!("int.{name}.remainder")]);
        if name != "u8" {
            identical(&format!("- of {name}"), &(-a), &f[&format!("int.{name}.neg")]);
        }
        // In place, through every handle.
        let target = a.deep_copy().unwrap();
        let mut alias = target.clone();
        alias *= b;
        identical(&format!("*= of {name}"), &target, &f[&format!("int.{name}.mul")]);
        let target = a.deep_copy().unwrap();
        target.floor_divide_(b).unwrap();
        identical(
            &format!("floor_divide_ of {name}"),
            &target,
            &f[&format!("int.{name}.floor_divide")],
        );
    }
    // Bools: `+` is or, `*` is and.
    let (m, n) = (
        f["mix.m"].to_device(device).unwrap(),
        f["mix.n"].to_device(device).unwrap(),
    );
    identical("bool + bool", &(&m + &n), &f["mix.m_add_n"]);
    identical("bool * bool", &(&m * &n), &f["mix.m_mul_n"]);
}

on_cpu_and_gpu!(
    integer_arithmetic_wraps_and_divides_as_pytorchs,
    integer_arithmetic_on_a_device_wraps_and_divides_as_pytorchs,
    integer_arithmetic
);

#[test]
fn promotions_between_integers_bools_floats_and_numbers_are_pytorchs() {
    let f = fixture();
    let t = |key: &str| f[&format!("mix.{key}")].clone();
    let (i, fl, i32, z, u8, z64, m, n, h) = (
        t("i"),
        t("f"),
        t("i32"),
        t("z"),
        t("u8"),
        t("z64"),
        t("m"),
        t("n"),
        t("h"),
    );
    let cases: Vec<(&str, Tensor)> = vec![
        ("i_rem_f", &i % &fl),
        ("i32_rem_z", &i32 % &z),
        ("u8_mul_z64", &u8 * &z64),
        ("m_add_n", &m + &n),
        ("m_mul_n", &m * &n),
        ("m_add_i", &m + &i),
        ("i_rem_2", &i % 2),
        ("i_rem_2.5", &i % 2.5),
        ("7_rem_pos", 7 % &t("pos")),
        ("7.5_rem_i", 7.5 % &i),
        ("h_rem_0.1", &h % 0.1),
        ("u8_sub_5", &u8 - 5),
        ("5_sub_u8", 5 - &u8),
        ("u8_mul_200", &u8 * 200),
        ("m_mul_2", &m * 2),
        ("i_mul_3", &i * 3),
        ("i32_floordiv_2", i32.floor_divide(&Tensor::scalar(2i32)).unwrap()),
    ];
    for (key, got) in cases {
        identical(key, &got, &f[&format!("mix.{key}")]);
    }
    // Compound assignments of numbers keep the integer dtype.
    let mut steps = i.deep_copy().unwrap();
    steps *= 3;
    identical("*= 3", &steps, &f["mix.i_mul_3"]);
    let mut steps = i.deep_copy().unwrap();
    steps %= 2;
    identical("%= 2", &steps, &f["mix.i_rem_2"]);
}

fn gradients(device: Device) {
    let f = fixture();
    let dtype = widest_float(device);
    let on = |key: &str| fixture_on(&f, key, dtype, device);
    let expect = |key: &str| f[key].to_dtype(dtype).unwrap();
    let w = on("gr.w");
    for (op, run, node) in [
        ("remainder", Tensor::remainder as Binary, "RemainderBackward1"),
        ("fmod", Tensor::fmod, "FmodBackward1"),
    ] {
        let (x, y) = (
            on("gr.x").requires_grad_(true).unwrap(),
            on("gr.y").requires_grad_(true).unwrap(),
        );
        let out = run(&x, &y).unwrap();
        assert_eq!(printed_grad_fn(&out), node, "{op}");
        assert_close(op, &out.detach(), &expect(&format!("gr.{op}.out")));
        out.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
        assert_close(
            &format!("{op}: gradient of x"),
            &x.grad().unwrap(),
            &expect(&format!("gr.{op}.x")),
        );
        assert_close(
            &format!("{op}: gradient of y"),
            &y.grad().unwrap(),
            &expect(&format!("gr.{op}.y")),
        );
    }
    for (op, node) in [
        ("remainder_scalar", "RemainderBackward0"),
        ("fmod_scalar", "FmodBackward0"),
    ] {
        let x = on("gr.x").requires_grad_(true).unwrap();
        let out = if op == "remainder_scalar" {
            &x % 1.5
        } else {
            x.fmod_scalar(-1.5).unwrap()
        };
        assert_eq!(printed_grad_fn(&out), node, "{op}");
        assert_close(op, &out.detach(), &expect(&format!("gr.{op}.out")));
        out.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
        assert_close(
            &format!("{op}: gradient"),
            &x.grad().unwrap(),
            &expect(&format!("gr.{op}.x")),
        );
    }
    // Rounded divisions: zero gradients (`DivBackward2`); `floor_divide`'s backward is PyTorch's error.
    let (x, y) = (
        on("gr.x").requires_grad_(true).unwrap(),
        on("gr.y").requires_grad_(true).unwrap(),
    );
    let out = x.div_rounded(&y, Rounding::Floor).unwrap();
    assert_eq!(printed_grad_fn(&out), "DivBackward2");
    out.sum_all().unwrap().backward().unwrap();
    assert_eq!(x.grad().unwrap().abs().unwrap().sum_all().unwrap().item().unwrap(), 0.0);
    let out = x.floor_divide(&y).unwrap();
    assert_eq!(printed_grad_fn(&out), "NotImplemented");
    let e = out.sum_all().unwrap().backward().unwrap_err();
    assert!(
        e.to_string()
            .contains("derivative for aten::floor_divide is not implemented"),
        "{e}"
    );
}

on_cpu_and_gpu!(
    remainder_and_fmod_gradients_equal_pytorchs,
    remainder_and_fmod_gradients_on_a_device_equal_pytorchs,
    gradients
);

/// The error's text holds PyTorch's sentence.
fn refused(result: Result<Tensor>, sentence: &str) {
    let e = result.expect_err(sentence);
    assert!(e.to_string().contains(sentence), "{e} lacks {sentence:?}");
}

#[test]
fn refusals_are_pytorchs() {
    let ints = Tensor::from_vec(vec![5i64, -5], [2]).unwrap();
    let zero = Tensor::from_vec(vec![1i64, 0], [2]).unwrap();
    let division: [Binary; 4] = [Tensor::remainder, Tensor::fmod, Tensor::floor_divide, |a, b| {
        a.div_rounded(b, Rounding::Trunc)
    }];
    for run in division {
        refused(run(&ints, &zero), "ZeroDivisionError");
        // An empty result divides nothing.
        let empty = Tensor::zeros([0, 2], DType::I64);
        assert_eq!(run(&empty, &zero).unwrap().shape().dims(), &[0, 2]);
    }
    let m = Tensor::from_vec(vec![true, false], [2]).unwrap();
    let x = Tensor::from_vec(vec![1.0f32, 2.0], [2]).unwrap();
    refused(
        m.sub(&m),
        "with two bool tensors is not supported. Use the `^` or `logical_xor()`",
    );
    refused(
        m.sub(&x),
        "with a bool tensor is not supported. If you are trying to invert a mask",
    );
    refused(
        x.sub(&m),
        "with a bool tensor is not supported. If you are trying to invert a mask",
    );
    refused(
        m.neg(),
        "Negation, the `-` operator, on a bool tensor is not supported.",
    );
    refused(m.remainder(&m), "\"remainder_cpu\" not implemented for 'Bool'");
    refused(m.floor_divide(&m), "\"div_floor_cpu\" not implemented for 'Bool'");
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| &m - 1)).unwrap_err();
    let message = panicked.downcast_ref::<String>().unwrap();
    assert!(message.contains("with a bool tensor is not supported"), "{message}");
    // In place: a result the target's dtype cannot hold.
    let cast = |r: nn::Result<()>, sentence: &str| refused(r.map(|()| Tensor::scalar(0.0f32)), sentence);
    cast(
        ints.add_(&x),
        "result type Float can't be cast to the desired output type Long",
    );
    cast(
        ints.remainder_(&Tensor::from_vec(vec![1.5f32], [1]).unwrap()),
        "result type Float can't be cast to the desired output type Long",
    );
    cast(
        m.add_(&ints),
        "result type Long can't be cast to the desired output type Bool",
    );
    // Where it can, as PyTorch: uint8 += int64 wraps, float %= bool divides by 1 and 0.
    let small = Tensor::from_vec(vec![1u8, 2], [2]).unwrap();
    small.add_(&Tensor::from_vec(vec![300i64], [1]).unwrap()).unwrap();
    assert_eq!(small.to_vec::<u8>().unwrap(), vec![45, 46]);
    let y = Tensor::from_vec(vec![1.0f32, 2.0], [2]).unwrap();
    y.remainder_(&Tensor::from_vec(vec![true], [1]).unwrap()).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
}
