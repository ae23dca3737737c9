//! Bool tensors against PyTorch 2.5.1 (`tests/fixtures/generate/tensor_masks.py`): comparisons with
//! broadcasting and `result_type` (0-d tensors, Python numbers), logical operations, `where_cond`,
//! `masked_fill` (and in place), `all` / `any`, the mask operators, on the CPU and a device, with PyTorch's
//! gradients, node names and refusals.

use integration_tests::fixture_on as on;
use integration_tests::{assert_close, identical, lacks_dtype, on_cpu_and_gpu, printed_grad_fn, widest_float};
use nn::Result;
use nn::prelude::*;

fn fixture() -> StateDict {
    integration_tests::tensors("tensor/masks.safetensors")
}

type Comparison = fn(&Tensor, &Tensor) -> Result<Tensor>;

const COMPARISONS: [(&str, Comparison); 6] = [
    ("eq", Tensor::eq),
    ("ne", Tensor::ne),
    ("lt", Tensor::lt),
    ("le", Tensor::le),
    ("gt", Tensor::gt),
    ("ge", Tensor::ge),
];

fn comparisons(device: Device) {
    let f = fixture();
    let dtype = widest_float(device);
    let (a, b) = (on(&f, "cmp.a", dtype, device), on(&f, "cmp.b", dtype, device));
    let (ai, bf) = (on(&f, "cmp.ai", dtype, device), f["cmp.bf"].to_device(device).unwrap());
    for (name, compare) in COMPARISONS {
        let what = format!("{name} in {dtype} on {device}");
        identical(&what, &compare(&a, &b).unwrap(), &f[&format!("cmp.{name}")]);
        identical(
            &format!("{what}: int64 with f32"),
            &compare(&ai, &bf).unwrap(),
            &f[&format!("cmp.mixed.{name}")],
        );
        if !lacks_dtype(device, DType::F16) && !lacks_dtype(device, DType::F64) {
            let (h, z) = (
                f["cmp.h"].to_device(device).unwrap(),
                f["cmp.z"].to_device(device).unwrap(),
            );
            let got = compare(&h, &z).unwrap();
            identical(
                &format!("{name}: f16 with a 0-d f64, in f16"),
                &got,
                &f[&format!("cmp.zero_dim.{name}")],
            );
        }
    }
    identical("int == 2", &ai.eq_scalar(2.0).unwrap(), &f["cmp.scalar.int_eq_2"]);
    identical("int > 1.5", &ai.gt_scalar(1.5).unwrap(), &f["cmp.scalar.int_gt_1.5"]);
    let positive = ai.gt_scalar(0.0).unwrap();
    identical(
        "bool == 1",
        &positive.eq_scalar(1.0).unwrap(),
        &f["cmp.scalar.bool_eq_1"],
    );
    if !lacks_dtype(device, DType::F16) {
        let h = f["cmp.h"].to_device(device).unwrap();
        identical("f16 == 0.1", &h.eq_scalar(0.1).unwrap(), &f["cmp.scalar.f16_eq_0.1"]);
    }
    // Integers and bools compare exactly on the device, including past f32's and f64's integers.
    let big = Tensor::from_vec(vec![i64::MIN, -1, 0, 1 << 53, (1 << 53) + 1, i64::MAX], [6]).unwrap();
    let pivot = Tensor::from_vec(vec![(1i64 << 53) + 1], [1]).unwrap();
    let want = [true, true, true, true, false, false];
    let got = big
        .to_device(device)
        .unwrap()
        .lt(&pivot.to_device(device).unwrap())
        .unwrap();
    assert_eq!(
        got.cpu().unwrap().to_vec::<bool>().unwrap(),
        want,
        "int64 < on {device}"
    );
    let small = Tensor::from_vec(vec![i32::MIN, -1, 0, i32::MAX], [4])
        .unwrap()
        .to_device(device)
        .unwrap();
    let got = small.ge_scalar(0.0).unwrap().cpu().unwrap().to_vec::<bool>().unwrap();
    assert_eq!(got, [false, false, true, true], "int32 >= 0 on {device}");
}

on_cpu_and_gpu!(
    comparisons_equal_pytorchs,
    comparisons_on_a_device_equal_pytorchs,
    comparisons
);

fn logical_operations(device: Device) {
    let f = fixture();
    let (a, b) = (on(&f, "lg.a", DType::F32, device), on(&f, "lg.b", DType::F32, device));
    identical("and", &a.logical_and(&b).unwrap(), &f["lg.and"]);
    identical("or", &a.logical_or(&b).unwrap(), &f["lg.or"]);
    identical("xor", &a.logical_xor(&b).unwrap(), &f["lg.xor"]);
    identical("not a", &a.logical_not().unwrap(), &f["lg.not_a"]);
    identical("not b", &b.logical_not().unwrap(), &f["lg.not_b"]);
    // The operators on masks.
    let truth = b.ne_scalar(0.0).unwrap();
    identical("&", &(&a & &truth), &f["lg.and"]);
    identical("|", &(&a | &truth), &f["lg.or"]);
    identical("^", &(a.clone() ^ truth), &f["lg.xor"]);
    identical("!", &!&a, &f["lg.not_a"]);
}

on_cpu_and_gpu!(
    logical_operations_equal_pytorchs,
    logical_operations_on_a_device_equal_pytorchs,
    logical_operations
);

fn selections(device: Device) {
    let f = fixture();
    let dtype = widest_float(device);
    let c = on(&f, "wh.c", dtype, device);
    let leaf = |key: &str| on(&f, key, dtype, device).requires_grad_(true).unwrap();
    let (x, y) = (leaf("wh.x"), leaf("wh.y"));
    let out = c.where_cond(&x, &y).unwrap();
    assert_eq!(printed_grad_fn(&out), "WhereBackward0");
    let expect = |key: &str| f[key].to_dtype(dtype).unwrap();
    assert_close("where", &out.detach(), &expect("wh.out"));
    out.mul(&on(&f, "wh.w", dtype, device))
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_close("where: gradient of input", &x.grad().unwrap(), &expect("wh.grad.x"));
    assert_close("where: gradient of other", &y.grad().unwrap(), &expect("wh.grad.y"));
    if !lacks_dtype(device, DType::F16) {
        let (xi, yh) = (
            f["wh.xi"].to_device(device).unwrap(),
            f["wh.yh"].to_device(device).unwrap(),
        );
        let c0 = c.select(0, 0).unwrap();
        let got = c0.where_cond(&xi, &yh).unwrap();
        assert_eq!(got.dtype(), DType::F16, "where(int64, f16) is f16");
        assert_close("where of int64 and f16", &got, &f["wh.mixed"]);
    }

    let x = leaf("mf.x");
    let mask = f["mf.mask"].to_device(device).unwrap();
    let out = x.masked_fill(&mask, f64::NEG_INFINITY).unwrap();
    assert_eq!(printed_grad_fn(&out), "MaskedFillBackward0");
    assert_close("masked_fill", &out.detach(), &expect("mf.out"));
    out.mul(&on(&f, "mf.w", dtype, device))
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_close("masked_fill: gradient", &x.grad().unwrap(), &expect("mf.grad"));
    let row = on(&f, "mf.x", dtype, device).select(0, 0).unwrap();
    let col = f["mf.col"].to_device(device).unwrap();
    assert_close(
        "masked_fill broadcast",
        &row.masked_fill(&col, 7.5).unwrap(),
        &expect("mf.wide"),
    );

    // In place: through every handle, recorded as PyTorch's on a computed tensor.
    let plain = on(&f, "mf.x", dtype, device);
    let alias = plain.clone();
    plain.masked_fill_(&mask, f64::NEG_INFINITY).unwrap();
    assert_close("masked_fill_", &alias, &expect("mf.out"));
    let x = leaf("mf.x");
    let h = x.mul_scalar(1.0).unwrap();
    h.masked_fill_(&mask, f64::NEG_INFINITY).unwrap();
    assert_eq!(printed_grad_fn(&h), "MaskedFillBackward0");
    h.mul(&on(&f, "mf.w", dtype, device))
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_close("masked_fill_: gradient", &x.grad().unwrap(), &expect("mf.grad"));
}

on_cpu_and_gpu!(
    selections_equal_pytorchs,
    selections_on_a_device_equal_pytorchs,
    selections
);

fn truths(device: Device) {
    let f = fixture();
    let x = on(&f, "tr.x", DType::F32, device);
    let cases: [(&str, &[isize], bool); 4] = [
        ("d1", &[1], false),
        ("d0", &[0], false),
        ("d-1_keep", &[-1], true),
        ("d02", &[0, 2], false),
    ];
    for (name, dims, keepdim) in cases {
        identical(
            &format!("all {name}"),
            &x.all_dims(dims, keepdim).unwrap(),
            &f[&format!("tr.all.{name}")],
        );
        identical(
            &format!("any {name}"),
            &x.any_dims(dims, keepdim).unwrap(),
            &f[&format!("tr.any.{name}")],
        );
    }
    identical("all", &x.all().unwrap(), &f["tr.all.all"]);
    identical("any", &x.any().unwrap(), &f["tr.any.all"]);
    let u8 = f["tr.u8"].to_device(device).unwrap();
    identical(
        "all of uint8 is uint8",
        &u8.all_dims(&[1], false).unwrap(),
        &f["tr.u8.all"],
    );
    let empty = Tensor::zeros([0, 3], DType::F32).to_device(device).unwrap();
    identical("all of none", &empty.all_dims(&[0], false).unwrap(), &f["tr.empty.all"]);
    identical("any of none", &empty.any_dims(&[0], false).unwrap(), &f["tr.empty.any"]);
    let empty1 = Tensor::zeros([2, 0], DType::F32).to_device(device).unwrap();
    identical(
        "all of none, kept",
        &empty1.all_dims(&[1], true).unwrap(),
        &f["tr.empty1.all"],
    );
    identical(
        "any of none, kept",
        &empty1.any_dims(&[1], true).unwrap(),
        &f["tr.empty1.any"],
    );
    // `equal`: same shape and elements.
    assert!(x.equal(&x.deep_copy().unwrap()).unwrap());
    assert!(!x.equal(&x.add_scalar(1.0).unwrap()).unwrap());
    assert!(!x.equal(&x.reshape([4, 3, 2]).unwrap()).unwrap());
}

on_cpu_and_gpu!(truths_equal_pytorchs, truths_on_a_device_equal_pytorchs, truths);

#[test]
fn bool_casts_on_the_cpu_and_a_device_agree() {
    let x = Tensor::from_vec(vec![0.0f32, -0.0, 2.5, f32::NAN, f32::INFINITY], [5]).unwrap();
    let want = vec![false, false, true, true, true];
    assert_eq!(x.to_dtype(DType::Bool).unwrap().to_vec::<bool>().unwrap(), want);
    let Some(device) = integration_tests::gpu_or_skip("bool_casts_on_the_cpu_and_a_device_agree") else {
        return;
    };
    let on_device = x.to_device(device).unwrap().to_dtype(DType::Bool).unwrap();
    assert_eq!(on_device.device(), device);
    assert_eq!(on_device.cpu().unwrap().to_vec::<bool>().unwrap(), want);
    let back = on_device.to_dtype(DType::F32).unwrap();
    assert_eq!(back.device(), device);
    assert_eq!(
        back.cpu().unwrap().to_vec::<f32>().unwrap(),
        vec![0.0, 0.0, 1.0, 1.0, 1.0]
    );
    let as_int = on_device.to_dtype(DType::I64).unwrap().cpu().unwrap();
    assert_eq!(as_int.to_vec::<i64>().unwrap(), vec![0, 0, 1, 1, 1]);
}

#[test]
fn a_zero_dim_tensor_promotes_as_pytorchs_result_type() {
    // `torch.tensor([1., 2.], dtype=torch.float16) + torch.tensor(1., dtype=torch.float64)` stays float16;
    // `torch.tensor([1, 2]) + torch.tensor(0.5)` is float32.
    let h = Tensor::from_vec(vec![1.0f32, 2.0], [2])
        .unwrap()
        .to_dtype(DType::F16)
        .unwrap();
    let z = Tensor::scalar(1.0f64);
    assert_eq!(h.add(&z).unwrap().dtype(), DType::F16);
    assert_eq!(z.add(&h).unwrap().dtype(), DType::F16);
    let i = Tensor::from_vec(vec![1i64, 2], [2]).unwrap();
    assert_eq!(i.add(&Tensor::scalar(0.5f32)).unwrap().dtype(), DType::F32);
    let s = h.mul(&Tensor::from_vec(vec![2.0f64], [1]).unwrap()).unwrap();
    assert_eq!(s.dtype(), DType::F64, "a 1-d f64 tensor is not 0-d: it widens");
}

#[test]
fn refusals_carry_pytorchs_sentences() {
    let x = Tensor::zeros([2], DType::F32);
    let said = |r: Result<Tensor>| r.unwrap_err().to_string();
    assert!(
        said(x.where_cond(&x, &x))
            .contains("where expected condition to be a boolean tensor, but got a tensor with dtype Float")
    );
    assert!(
        said(x.masked_fill(&x, 0.0))
            .contains("masked_fill_ only supports boolean masks, but got mask with dtype float")
    );
    let mask = Tensor::from_vec(vec![true, false], [2, 1]).unwrap();
    let err = x.masked_fill_(&mask, 0.0).unwrap_err().to_string();
    assert!(
        err.contains("output with shape [2] doesn't match the broadcast shape [2, 2]"),
        "{err}"
    );
    assert!(said(x.eq(&Tensor::zeros([3], DType::F32))).contains("broadcast"));
    let not_a_mask = std::panic::catch_unwind(|| !&Tensor::zeros([2], DType::F32));
    let message = not_a_mask.unwrap_err();
    let message = message.downcast_ref::<String>().unwrap();
    assert!(message.contains("tensor `!`") && message.contains("bool"), "{message}");
}
