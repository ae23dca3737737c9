//! The tensor's method set against PyTorch 2.5.1 (`tests/fixtures/generate/tensor_methods.py`): element-wise
//! math in every float dtype and its in-place forms, reductions (`std`, `logsumexp`, `norm`, `amax`, `argmax`,
//! ...), rearrangements (`flip`, `roll`, `repeat`, `tile`), products (`matmul` with broadcasting and vector
//! operands, `bmm`, `outer`), triangles (`tril`, `triu`), running sums (`cumsum`), `gather`, `scatter`,
//! `scatter_add`, `one_hot`, `sort`, `argsort`, `topk` and `prod`: each forward and gradient, on the CPU and a device,
//! with PyTorch's node names and refusals.

use integration_tests::fixture_on as input;
use integration_tests::{assert_close, lacks_dtype, on_cpu_and_gpu, printed_grad_fn, short};
use nn::Result;
use nn::prelude::*;

fn fixture() -> StateDict {
    integration_tests::tensors("tensor/methods.safetensors")
}

type Unary = fn(&Tensor) -> Result<Tensor>;
type InPlace = fn(&Tensor) -> Result<()>;

/// Each element-wise function by PyTorch's name, with its in-place form, the input it takes (`x`: any real,
/// `pos`: positive) and PyTorch's node name.
const MATH: [(&str, Unary, InPlace, &str, &str); 19] = [
    ("exp", Tensor::exp, Tensor::exp_, "x", "ExpBackward0"),
    ("expm1", Tensor::expm1, Tensor::expm1_, "x", "Expm1Backward0"),
    ("abs", Tensor::abs, Tensor::abs_, "x", "AbsBackward0"),
    ("sign", Tensor::sign, Tensor::sign_, "x", "SignBackward0"),
    ("erf", Tensor::erf, Tensor::erf_, "x", "ErfBackward0"),
    ("sin", Tensor::sin, Tensor::sin_, "x", "SinBackward0"),
    ("cos", Tensor::cos, Tensor::cos_, "x", "CosBackward0"),
    ("tan", Tensor::tan, Tensor::tan_, "x", "TanBackward0"),
    ("floor", Tensor::floor, Tensor::floor_, "x", "FloorBackward0"),
    ("ceil", Tensor::ceil, Tensor::ceil_, "x", "CeilBackward0"),
    ("round", Tensor::round, Tensor::round_, "x", "RoundBackward0"),
    ("trunc", Tensor::trunc, Tensor::trunc_, "x", "TruncBackward0"),
    ("reciprocal", Tensor::recip, Tensor::recip_, "x", "ReciprocalBackward0"),
    ("log", Tensor::log, Tensor::log_, "pos", "LogBackward0"),
    ("log1p", Tensor::log1p, Tensor::log1p_, "pos", "Log1PBackward0"),
    ("log2", Tensor::log2, Tensor::log2_, "pos", "Log2Backward0"),
    ("log10", Tensor::log10, Tensor::log10_, "pos", "Log10Backward0"),
    ("sqrt", Tensor::sqrt, Tensor::sqrt_, "pos", "SqrtBackward0"),
    ("rsqrt", Tensor::rsqrt, Tensor::rsqrt_, "pos", "RsqrtBackward0"),
];

/// `Σ y·w` differentiated: the gradients of `inputs` (fresh leaves) for the upstream gradient `w`, and `y`.
fn gradients(inputs: &[&Tensor], f: impl Fn(&[Tensor]) -> Result<Tensor>, w: &Tensor) -> (Tensor, Vec<Tensor>) {
    let leaves: Vec<Tensor> = inputs
        .iter()
        .map(|t| t.deep_copy().unwrap().requires_grad_(true).unwrap())
        .collect();
    let y = f(&leaves).unwrap();
    y.mul(w).unwrap().sum_all().unwrap().backward().unwrap();
    (y, leaves.iter().map(|l| l.grad().unwrap()).collect())
}

/// The dtype the gradient checks run in on `device`: f64, or f32 where the device computes no f64 transcendental
/// functions (wgpu's shading languages), compared then with PyTorch's f64 results rounded to f32 and f32's
/// tolerance; `None` where it has neither.
fn gradient_dtype(device: Device) -> Option<DType> {
    let probe = || Tensor::from_vec(vec![0.5f64; 8], [8])?.to_device(device)?.exp()?.cpu();
    match probe() {
        Ok(_) => Some(DType::F64),
        Err(nn::Error::UnsupportedOnDevice { .. }) if !lacks_dtype(device, DType::F32) => Some(DType::F32),
        Err(_) => None,
    }
}

/// PyTorch's f64 result as the reference for a result computed in `dtype`.
fn expected(f: &StateDict, key: &str, dtype: DType) -> Tensor {
    input(f, key, dtype, Device::Cpu)
}

fn math(device: Device) {
    let f = fixture();
    for dtype in [DType::F64, DType::F32, DType::F16, DType::BF16] {
        if !device.is_cpu() && (dtype == DType::BF16 || lacks_dtype(device, dtype)) {
            continue;
        }
        let d = short(dtype);
        for (name, function, in_place, input, _) in MATH {
            let x = f[&format!("math.{d}.{input}")].to_device(device).unwrap();
            let want = &f[&format!("math.{d}.{name}")];
            let what = format!("{name} in {d} on {device}");
            let got = match function(&x) {
                // wgpu computes no transcendental function in f64: its typed refusal.
                Err(nn::Error::UnsupportedOnDevice { reason, .. })
                    if dtype == DType::F64 && reason.contains("16- and 32-bit floats only") =>
                {
                    continue;
                }
                got => got.unwrap(),
            };
            assert_eq!(got.dtype(), dtype, "{what}");
            assert_close(&what, &got, want);
            let target = x.deep_copy().unwrap();
            in_place(&target).unwrap();
            assert_close(&format!("{what}, in place"), &target, want);
        }
    }
    let Some(dtype) = gradient_dtype(device) else {
        return;
    };
    let w = input(&f, "math.grad.w", dtype, device);
    for (name, function, in_place, which, node_name) in MATH {
        let x = input(&f, &format!("math.f64.{which}"), dtype, device);
        let (y, grads) = gradients(&[&x], |xs| function(&xs[0]), &w);
        assert_eq!(printed_grad_fn(&y), node_name, "{name}");
        let want = expected(&f, &format!("math.grad.{name}"), dtype);
        assert_close(&format!("{name}'s gradient on {device}"), &grads[0], &want);
        // In place on a computed tensor: the same gradient through PyTorch's in-place recording.
        let (_, grads) = gradients(
            &[&x],
            |xs| {
                let y = xs[0].mul_scalar(1.0)?;
                in_place(&y)?;
                Ok(y)
            },
            &w,
        );
        assert_close(&format!("{name}_'s gradient on {device}"), &grads[0], &want);
    }
}

on_cpu_and_gpu!(
    element_wise_math_equals_pytorchs,
    element_wise_math_on_a_device_equals_pytorchs,
    math
);

type Reduction = fn(&Tensor) -> Result<Tensor>;

/// The reductions of `tensor_methods.py` and PyTorch's node names ("" for the integer results).
const REDUCTIONS: [(&str, Reduction, &str); 21] = [
    ("std_d2", |t| t.std_dims(&[2], true, false), "StdBackward0"),
    ("std_d1_biased_keep", |t| t.std_dims(&[1], false, true), "StdBackward0"),
    ("std_d02", |t| t.std_dims(&[0, 2], true, false), "StdBackward0"),
    ("std_all", |t| t.std_dims(&[], true, false), "StdBackward0"),
    ("lse_d1", |t| t.logsumexp(&[1], false), "LogsumexpBackward0"),
    ("lse_d02_keep", |t| t.logsumexp(&[0, 2], true), "LogsumexpBackward0"),
    ("norm2_d2", |t| t.norm(2.0, &[2], false), "LinalgVectorNormBackward0"),
    ("norm2_all", |t| t.norm(2.0, &[], false), "LinalgVectorNormBackward0"),
    ("norm1_d1", |t| t.norm(1.0, &[1], false), "LinalgVectorNormBackward0"),
    (
        "norm3_d2_keep",
        |t| t.norm(3.0, &[2], true),
        "LinalgVectorNormBackward0",
    ),
    ("norm1.5_d2", |t| t.norm(1.5, &[2], false), "LinalgVectorNormBackward0"),
    ("norm0.5_d0", |t| t.norm(0.5, &[0], false), "LinalgVectorNormBackward0"),
    (
        "norminf_d2",
        |t| t.norm(f64::INFINITY, &[2], false),
        "LinalgVectorNormBackward0",
    ),
    (
        "norm-inf_d1",
        |t| t.norm(f64::NEG_INFINITY, &[1], false),
        "LinalgVectorNormBackward0",
    ),
    ("norm0_d2", |t| t.norm(0.0, &[2], false), "LinalgVectorNormBackward0"),
    ("amax_d1", |t| t.amax(&[1], false), "AmaxBackward0"),
    ("amax_d02_keep", |t| t.amax(&[0, 2], true), "AmaxBackward0"),
    ("amin_d1", |t| t.amin(&[1], false), "AminBackward0"),
    ("argmax_d1", |t| t.argmax(Some(1), false), ""),
    ("argmin_d2_keep", |t| t.argmin(Some(2), true), ""),
    ("argmax_all", |t| t.argmax(None, false), ""),
];

/// `f` of `x` against `want`: integers exactly, floats within PyTorch's tolerance.
fn check_value(what: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    if want.is_floating_point() {
        assert_close(what, got, want);
    } else {
        assert_eq!(got.shape(), want.shape(), "{what}: shape");
        assert_eq!(
            got.cpu().unwrap().to_vec::<i64>().unwrap(),
            want.to_vec::<i64>().unwrap(),
            "{what}"
        );
    }
}

fn reductions(device: Device) {
    let f = fixture();
    let x32 = f["red.f32.x"].to_device(device).unwrap();
    for (name, reduce, _) in REDUCTIONS {
        check_value(
            &format!("{name} in f32 on {device}"),
            &reduce(&x32).unwrap(),
            &f[&format!("red.f32.{name}")],
        );
    }
    let Some(dtype) = gradient_dtype(device) else {
        return;
    };
    let x = input(&f, "red.x", dtype, device);
    for (name, reduce, node_name) in REDUCTIONS {
        let what = format!("{name} in {dtype} on {device}");
        let want = expected(&f, &format!("red.{name}"), dtype);
        if node_name.is_empty() {
            check_value(&what, &reduce(&x).unwrap(), &want);
            continue;
        }
        let w = input(&f, &format!("red.{name}.w"), dtype, device);
        let (y, grads) = gradients(&[&x], |xs| reduce(&xs[0]), &w);
        assert_eq!(printed_grad_fn(&y), node_name, "{what}");
        check_value(&what, &y.detach(), &want);
        let grad = expected(&f, &format!("red.{name}.grad"), dtype);
        assert_close(&format!("{what}: gradient"), &grads[0], &grad);
    }
    let infinite = input(&f, "red.lse_inf.x", dtype, device);
    let want = expected(&f, "red.lse_inf", dtype);
    assert_close(
        "logsumexp of infinities",
        &infinite.logsumexp(&[1], false).unwrap(),
        &want,
    );
}

on_cpu_and_gpu!(
    reductions_equal_pytorchs,
    reductions_on_a_device_equal_pytorchs,
    reductions
);

type Binary = fn(&Tensor, &Tensor) -> Result<Tensor>;

fn rearrangements_and_products(device: Device) {
    if lacks_dtype(device, DType::F64) {
        return;
    }
    let f = fixture();
    let x = f["re.x"].to_device(device).unwrap();
    let rearrangements: [(&str, Reduction, &str); 6] = [
        ("flip_02", |t| t.flip(&[0, 2]), "FlipBackward0"),
        ("flip_-1", |t| t.flip(&[-1]), "FlipBackward0"),
        ("roll_0_2", |t| t.roll(&[1, -7], &[0, 2]), "RollBackward0"),
        ("roll_flat", |t| t.roll(&[3], &[]), "ViewBackward0"),
        ("repeat", |t| t.repeat(&[2, 1, 1, 2]), "RepeatBackward0"),
        ("tile", |t| t.tile(&[2]), "RepeatBackward0"),
    ];
    for (name, rearrange, node_name) in rearrangements {
        let what = format!("{name} on {device}");
        let w = f[&format!("re.{name}.w")].to_device(device).unwrap();
        let (y, grads) = gradients(&[&x], |xs| rearrange(&xs[0]), &w);
        assert_eq!(printed_grad_fn(&y), node_name, "{what}");
        check_value(&what, &y.detach(), &f[&format!("re.{name}")]);
        assert_close(&format!("{what}: gradient"), &grads[0], &f[&format!("re.{name}.grad")]);
    }
    let products: [(&str, Binary); 8] = [
        ("broadcast", Tensor::matmul),
        ("batch_by_matrix", Tensor::matmul),
        ("matrix_by_batch", Tensor::matmul),
        ("vector_by_batch", Tensor::matmul),
        ("batch_by_vector", Tensor::matmul),
        ("dot", Tensor::matmul),
        ("bmm", Tensor::bmm),
        ("outer", Tensor::outer),
    ];
    for (name, product) in products {
        let what = format!("{name} on {device}");
        let a = f[&format!("mm.{name}.a")].to_device(device).unwrap();
        let b = f[&format!("mm.{name}.b")].to_device(device).unwrap();
        let w = f[&format!("mm.{name}.w")].to_device(device).unwrap();
        let (y, grads) = gradients(&[&a, &b], |xs| product(&xs[0], &xs[1]), &w);
        check_value(&what, &y.detach(), &f[&format!("mm.{name}")]);
        for (i, grad) in grads.iter().enumerate() {
            assert_close(
                &format!("{what}: gradient {i}"),
                grad,
                &f[&format!("mm.{name}.grad.{i}")],
            );
        }
    }
}

on_cpu_and_gpu!(
    rearrangements_and_products_equal_pytorchs,
    rearrangements_and_products_on_a_device_equal_pytorchs,
    rearrangements_and_products
);

type Triangle = fn(&Tensor) -> Result<Tensor>;

/// `tril` and `triu` at several diagonals, by the fixture's names.
const TRIANGLES: [(&str, Triangle, &str); 8] = [
    ("tril", |t| t.tril(0), "TrilBackward0"),
    ("tril_-1", |t| t.tril(-1), "TrilBackward0"),
    ("tril_2", |t| t.tril(2), "TrilBackward0"),
    ("tril_9", |t| t.tril(9), "TrilBackward0"),
    ("triu", |t| t.triu(0), "TriuBackward0"),
    ("triu_1", |t| t.triu(1), "TriuBackward0"),
    ("triu_-2", |t| t.triu(-2), "TriuBackward0"),
    ("triu_-9", |t| t.triu(-9), "TriuBackward0"),
];

fn triangles_and_running_sums(device: Device) {
    let f = fixture();
    let Some(dtype) = gradient_dtype(device) else {
        return;
    };
    // Triangles of a batch of matrices holding an infinity and a NaN (zeroed where outside), and of int64.
    let x = input(&f, "tri.x", dtype, device);
    let xi = f["tri.i64.x"].to_device(device).unwrap();
    for (name, triangle, node_name) in TRIANGLES {
        let what = format!("{name} in {dtype} on {device}");
        let w = input(&f, &format!("tri.{name}.w"), dtype, device);
        let (y, grads) = gradients(&[&x], |xs| triangle(&xs[0]), &w);
        assert_eq!(printed_grad_fn(&y), node_name, "{what}");
        check_value(&what, &y.detach(), &expected(&f, &format!("tri.{name}"), dtype));
        let grad = expected(&f, &format!("tri.{name}.grad"), dtype);
        assert_close(&format!("{what}: gradient"), &grads[0], &grad);
        check_value(
            &format!("{name} in int64 on {device}"),
            &triangle(&xi).unwrap(),
            &f[&format!("tri.i64.{name}")],
        );
    }
    // Running sums along each dim: floats (f32 forward, gradients), and int32 summing to int64.
    let x = input(&f, "cum.x", dtype, device);
    let x32 = input(&f, "cum.x", DType::F32, device);
    let xi = f["cum.i32.x"].to_device(device).unwrap();
    for dim in [0isize, 1, -1] {
        let what = format!("cumsum({dim}) in {dtype} on {device}");
        let w = input(&f, &format!("cum.{dim}.w"), dtype, device);
        let (y, grads) = gradients(&[&x], |xs| xs[0].cumsum(dim), &w);
        assert_eq!(printed_grad_fn(&y), "CumsumBackward0", "{what}");
        check_value(&what, &y.detach(), &expected(&f, &format!("cum.{dim}"), dtype));
        let grad = expected(&f, &format!("cum.{dim}.grad"), dtype);
        assert_close(&format!("{what}: gradient"), &grads[0], &grad);
        check_value(
            &format!("cumsum({dim}) in f32 on {device}"),
            &x32.cumsum(dim).unwrap(),
            &f[&format!("cum.f32.{dim}")],
        );
        check_value(
            &format!("cumsum({dim}) of int32 on {device}"),
            &xi.cumsum(dim).unwrap(),
            &f[&format!("cum.i64.{dim}")],
        );
    }
}

on_cpu_and_gpu!(
    triangles_and_running_sums_equal_pytorchs,
    triangles_and_running_sums_on_a_device_equal_pytorchs,
    triangles_and_running_sums
);

fn gathers_and_scatters(device: Device) {
    let f = fixture();
    let Some(dtype) = gradient_dtype(device) else {
        return;
    };
    let x = input(&f, "ga.x", dtype, device);
    for (name, dim) in [("d1", 1isize), ("d0", 0), ("d-1", -1)] {
        let what = format!("gather {name} in {dtype} on {device}");
        let index = f[&format!("ga.{name}.index")].to_device(device).unwrap();
        let w = input(&f, &format!("ga.{name}.w"), dtype, device);
        let (y, grads) = gradients(&[&x], |xs| xs[0].gather(dim, &index), &w);
        assert_eq!(printed_grad_fn(&y), "GatherBackward0", "{what}");
        check_value(&what, &y.detach(), &expected(&f, &format!("ga.{name}"), dtype));
        let grad = expected(&f, &format!("ga.{name}.grad"), dtype);
        assert_close(&format!("{what}: gradient"), &grads[0], &grad);
    }
    let src = input(&f, "sc.src", dtype, device);
    let large = input(&f, "sc.large", dtype, device);
    type Scatter = fn(&Tensor, isize, &Tensor, &Tensor) -> Result<Tensor>;
    let scatters: [(&str, Scatter, &str); 2] = [
        ("add", Tensor::scatter_add, "ScatterAddBackward0"),
        ("set", Tensor::scatter, "ScatterBackward0"),
    ];
    for (name, scatter, node_name) in scatters {
        let what = format!("scatter {name} in {dtype} on {device}");
        let index = f[&format!("sc.{name}.index")].to_device(device).unwrap();
        let w = input(&f, &format!("sc.{name}.w"), dtype, device);
        let (y, grads) = gradients(&[&x, &src], |xs| scatter(&xs[0], 1, &index, &xs[1]), &w);
        assert_eq!(printed_grad_fn(&y), node_name, "{what}");
        check_value(&what, &y.detach(), &expected(&f, &format!("sc.{name}"), dtype));
        for (i, grad) in grads.iter().enumerate() {
            let want = expected(&f, &format!("sc.{name}.grad.{i}"), dtype);
            assert_close(&format!("{what}: gradient {i}"), grad, &want);
        }
        // A `src` larger than the index: only the part the index covers is read.
        let got = scatter(&x, 1, &index, &large).unwrap();
        check_value(
            &format!("{what}, larger src"),
            &got,
            &expected(&f, &format!("sc.{name}_large"), dtype),
        );
    }
    let xi = f["ga.i64.x"].to_device(device).unwrap();
    let ii = f["ga.i64.index"].to_device(device).unwrap();
    check_value(
        &format!("gather of int64 on {device}"),
        &xi.gather(0, &ii).unwrap(),
        &f["ga.i64"],
    );
    let labels = f["oh.labels"].to_device(device).unwrap();
    check_value(
        &format!("one_hot on {device}"),
        &nn::functional::one_hot(&labels, None).unwrap(),
        &f["oh.auto"],
    );
    check_value(
        &format!("one_hot(8) on {device}"),
        &nn::functional::one_hot(&labels, Some(8)).unwrap(),
        &f["oh.8"],
    );
}

on_cpu_and_gpu!(
    gathers_and_scatters_equal_pytorchs,
    gathers_and_scatters_on_a_device_equal_pytorchs,
    gathers_and_scatters
);

type Ordering = fn(&Tensor) -> Result<(Tensor, Tensor)>;

/// `sort` (stable) and `topk` by the fixture's names, with the input they read and PyTorch's node name.
const ORDERINGS: [(&str, Ordering, &str, &str); 5] = [
    ("sort_d-1", |t| t.sort(-1, false), "x", "SortBackward0"),
    ("sort_d1_desc", |t| t.sort(1, true), "x", "SortBackward0"),
    ("sort_d0", |t| t.sort(0, false), "x", "SortBackward0"),
    ("topk3_d-1", |t| t.topk(3, -1, true), "y", "TopkBackward0"),
    ("topk2_d1_smallest", |t| t.topk(2, 1, false), "y", "TopkBackward0"),
];

fn orderings(device: Device) {
    let f = fixture();
    let Some(dtype) = gradient_dtype(device) else {
        return;
    };
    for (name, ordering, which, node_name) in ORDERINGS {
        let what = format!("{name} in {dtype} on {device}");
        let x = input(&f, &format!("so.{which}"), dtype, device);
        let (_, indices) = ordering(&x).unwrap();
        check_value(&what, &indices, &f[&format!("so.{name}.indices")]);
        let w = input(&f, &format!("so.{name}.w"), dtype, device);
        let (values, grads) = gradients(&[&x], |xs| Ok(ordering(&xs[0])?.0), &w);
        assert_eq!(printed_grad_fn(&values), node_name, "{what}");
        check_value(&what, &values.detach(), &expected(&f, &format!("so.{name}"), dtype));
        let grad = expected(&f, &format!("so.{name}.grad"), dtype);
        assert_close(&format!("{what}: gradient"), &grads[0], &grad);
    }
    let x = input(&f, "so.x", dtype, device);
    check_value("argsort", &x.argsort(0, true).unwrap(), &f["so.argsort_d0_desc"]);
    let xi = f["so.i64.x"].to_device(device).unwrap();
    let (values, indices) = xi.sort(1, false).unwrap();
    check_value(&format!("sort of int64 on {device}"), &values, &f["so.i64.sort"]);
    check_value(
        &format!("sort of int64 on {device}: indices"),
        &indices,
        &f["so.i64.sort.indices"],
    );
    check_value(
        &format!("argsort of int64 on {device}"),
        &xi.argsort(0, true).unwrap(),
        &f["so.i64.argsort_desc"],
    );
}

on_cpu_and_gpu!(
    sorts_and_top_k_equal_pytorchs,
    sorts_and_top_k_on_a_device_equal_pytorchs,
    orderings
);

/// `prod` by the fixture's names, with the input it reads and PyTorch's node name.
const PRODUCTS: [(&str, Reduction, &str, &str); 5] = [
    ("d1", |t| t.prod(Some(1), false), "x", "ProdBackward1"),
    ("d-1_keep", |t| t.prod(Some(-1), true), "x", "ProdBackward1"),
    ("d0", |t| t.prod(Some(0), false), "x", "ProdBackward1"),
    ("all", |t| t.prod(None, false), "y", "ProdBackward0"),
    ("all_zero", |t| t.prod(None, false), "y0", "ProdBackward0"),
];

fn products_of_elements(device: Device) {
    let f = fixture();
    let Some(dtype) = gradient_dtype(device) else {
        return;
    };
    for (name, prod, which, node_name) in PRODUCTS {
        let what = format!("prod {name} in {dtype} on {device}");
        let x = input(&f, &format!("pr.{which}"), dtype, device);
        let w = input(&f, &format!("pr.{name}.w"), dtype, device);
        let (y, grads) = gradients(&[&x], |xs| prod(&xs[0]), &w);
        assert_eq!(printed_grad_fn(&y), node_name, "{what}");
        check_value(&what, &y.detach(), &expected(&f, &format!("pr.{name}"), dtype));
        let grad = expected(&f, &format!("pr.{name}.grad"), dtype);
        assert_close(&format!("{what}: gradient"), &grads[0], &grad);
        let x32 = input(&f, &format!("pr.{which}"), DType::F32, device);
        check_value(
            &format!("prod {name} in f32 on {device}"),
            &prod(&x32).unwrap(),
            &f[&format!("pr.f32.{name}")],
        );
    }
    let xi = f["pr.i32.x"].to_device(device).unwrap();
    check_value("prod of int32", &xi.prod(Some(1), false).unwrap(), &f["pr.i64.d1"]);
    check_value("prod of all int32", &xi.prod(None, false).unwrap(), &f["pr.i64.all"]);
}

on_cpu_and_gpu!(
    products_of_elements_equal_pytorchs,
    products_of_elements_on_a_device_equal_pytorchs,
    products_of_elements
);

#[test]
fn scatters_of_integers_and_repeated_writes_match_pytorch() {
    let f = fixture();
    let (xi, ii) = (&f["ga.i64.x"], &f["ga.i64.index"]);
    let sevens = Tensor::full([2, 3], 7.0, DType::I64);
    check_value(
        "scatter_add of int64",
        &xi.scatter_add(0, ii, &sevens).unwrap(),
        &f["sc.i64.add"],
    );
    // `torch.zeros(3).scatter(0, torch.tensor([1, 1, 1, 2]), torch.tensor([5., 6., 7., 8.]))`: the last write.
    let index = Tensor::from_vec(vec![1i64, 1, 1, 2], [4]).unwrap();
    let src = Tensor::from_vec(vec![5.0f32, 6.0, 7.0, 8.0], [4]).unwrap();
    let got = Tensor::zeros([3], DType::F32).scatter(0, &index, &src).unwrap();
    assert_eq!(got.to_vec::<f32>().unwrap(), vec![0.0, 7.0, 8.0]);
}

#[test]
fn refusals_carry_pytorchs_sentences() {
    let x = Tensor::zeros([2, 3], DType::F32);
    let said = |r: Result<Tensor>| r.unwrap_err().to_string();
    assert!(said(x.flip(&[0, -2])).contains("dim 0 appears multiple times in the list of dims"));
    assert!(said(x.roll(&[1, 2], &[0])).contains("shifts and dimensions must align. shifts: 2, dims:1"));
    assert!(
        said(x.repeat(&[2]))
            .contains("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    );
    let y = Tensor::zeros([4, 5], DType::F32);
    assert!(said(x.matmul(&y)).contains("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"));
    assert!(said(x.bmm(&y)).contains("batch1 must be a 3D tensor"));
    assert!(said(x.outer(&y)).contains("Expected 1-D argument self, but got 2-D"));
    let v = Tensor::zeros([3], DType::F32);
    assert!(said(v.matmul(&Tensor::zeros([4], DType::F32))).contains("inconsistent tensor size"));
    assert!(said(x.norm(f64::NAN, &[], false)).contains("must not be NaN"));
    assert!(said(v.tril(0)).contains("tril: input tensor must have at least 2 dimensions"));
    assert!(said(x.cumsum(2)).contains("Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
    // gather, scatter and one_hot: `torch.zeros(2, 3)` with PyTorch 2.5.1's refusals.
    let index = |data: Vec<i64>, shape: &[usize]| Tensor::from_vec(data, shape.to_vec()).unwrap();
    let ones = |shape: &[usize]| Tensor::ones(shape.to_vec(), DType::F32);
    let i32_index = Tensor::zeros([2, 2], DType::I32);
    assert!(said(x.gather(1, &i32_index)).contains("gather(): Expected dtype int64 for index"));
    assert!(
        said(x.gather(1, &index(vec![0, 0], &[2])))
            .contains("Index tensor must have the same number of dimensions as input tensor")
    );
    assert!(said(x.gather(1, &index(vec![0; 6], &[3, 2]))).contains(
        "Size does not match at dimension 0 expected index [3, 2] to be smaller than self [2, 3] apart from dimension 1"
    ));
    assert!(
        said(x.gather(1, &index(vec![0, 5, 1, 1], &[2, 2])))
            .contains("index 5 is out of bounds for dimension 1 with size 3")
    );
    assert!(
        said(x.gather(1, &index(vec![0, -1, 1, 1], &[2, 2])))
            .contains("index -1 is out of bounds for dimension 1 with size 3")
    );
    assert!(said(x.scatter(1, &i32_index, &ones(&[2, 2]))).contains("scatter(): Expected dtype int64 for index"));
    assert!(
        said(x.scatter(1, &index(vec![0, 0], &[2]), &ones(&[2, 2])))
            .contains("Index tensor must have the same number of dimensions as self tensor")
    );
    assert!(said(x.scatter_add(1, &index(vec![0; 4], &[2, 2]), &ones(&[2, 1]))).contains(
        "Expected index [2, 2] to be smaller than self [2, 3] apart from dimension 1 and to be smaller size than src [2, 1]"
    ));
    let f64_src = Tensor::ones([2, 2], DType::F64);
    assert!(
        said(x.scatter(1, &index(vec![0, 1, 1, 1], &[2, 2]), &f64_src))
            .contains("scatter(): Expected self.dtype to be equal to src.dtype")
    );
    let one_hot = |labels: Tensor, classes| said(nn::functional::one_hot(&labels, classes));
    assert!(one_hot(index(vec![0, -1], &[2]), None).contains("Class values must be non-negative."));
    assert!(one_hot(index(vec![0, 3], &[2]), Some(3)).contains("Class values must be smaller than num_classes."));
    assert!(one_hot(ones(&[2]), None).contains("one_hot is only applicable to index tensor of type LongTensor."));
    assert!(one_hot(index(vec![], &[0]), None).contains("Can not infer total number of classes from empty tensor."));
    assert!(said(x.topk(4, 1, true).map(|(v, _)| v)).contains("selected index k out of range"));
}
