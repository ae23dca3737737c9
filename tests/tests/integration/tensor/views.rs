//! Views against PyTorch 2.5.1 (`tests/fixtures/generate/tensor_views.py`): chains of view operations on the CPU
//! and a device, each result's shape, stride, storage offset, contiguity, values, `grad_fn` and gradient as
//! PyTorch's; writes through a view landing in its base; PyTorch's refusals; and writes through views under
//! autograd (`CopySlices`, regenerated histories of sibling views).

use integration_tests::on_cpu_and_gpu;
use nn::prelude::*;
use serde_json::Value;

fn fixture() -> Value {
    let text = std::fs::read_to_string(integration_tests::fixture("tensor/views.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn ints(v: &Value) -> Vec<isize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap() as isize)
        .collect()
}

fn sizes(v: &Value) -> Vec<usize> {
    ints(v).into_iter().map(|x| x as usize).collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

/// `1, 2, 3, ...` in `shape`, as the generator's `base`.
fn base(shape: &[usize], dtype: DType, device: Device) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::arange(1.0, n as f64 + 1.0, 1.0, dtype)
        .unwrap()
        .reshape(shape.to_vec())
        .unwrap()
        .to_device(device)
        .unwrap()
}

/// One view operation of a chain, `[name, *args]`, as the generator's `apply`.
fn apply(x: &Tensor, step: &[Value]) -> nn::Result<Tensor> {
    let i = |k: usize| step[k].as_i64().unwrap() as isize;
    let u = |k: usize| step[k].as_u64().unwrap() as usize;
    let opt = |k: usize| step[k].as_i64().map(|v| v as isize);
    match step[0].as_str().unwrap() {
        "view" => x.view(&ints(&step[1])),
        "reshape" => x.reshape_infer(&ints(&step[1])),
        "transpose" => x.transpose(i(1), i(2)),
        "t" => x.t(),
        "permute" => x.permute(&sizes(&step[1])),
        "narrow" => x.narrow(i(1), u(2), u(3)),
        "slice" => x.slice(i(1), opt(2), opt(3), u(4)),
        "select" => x.select(i(1), i(2)),
        "expand" => x.expand(&ints(&step[1])),
        "squeeze" => x.squeeze(i(1)),
        "unsqueeze" => x.unsqueeze(i(1)),
        "flatten" => x.flatten(i(1), i(2)),
        "unflatten" => x.unflatten(i(1), &ints(&step[2])),
        "diagonal" => x.diagonal(i(1), i(2), i(3)),
        "as_strided" => x.as_strided(&sizes(&step[1]), &sizes(&step[2]), step[3].as_u64().map(|v| v as usize)),
        "contiguous" => x.contiguous(),
        "chunk" => Ok(x.chunk(u(1), i(2))?[u(3)].clone()),
        "split" => Ok(x.split(u(1), i(2))?[u(3)].clone()),
        "unbind" => Ok(x.unbind(i(1))?[u(2)].clone()),
        other => panic!("no view operation {other}"),
    }
}

fn run_chain(x: &Tensor, chain: &Value) -> nn::Result<Tensor> {
    let mut y = x.clone();
    for step in chain.as_array().unwrap() {
        y = apply(&y, step.as_array().unwrap())?;
    }
    Ok(y)
}

/// `1, 2, 3, ...` in `like`'s shape, dtype and device: the loss weights.
fn weights(like: &Tensor) -> Tensor {
    base(like.shape(), like.dtype(), like.device())
}

/// The name PyTorch prints after `grad_fn=` for `t`.
fn grad_fn(t: &Tensor) -> String {
    let shown = t.to_string();
    let start = shown
        .find("grad_fn=<")
        .map(|i| i + 9)
        .unwrap_or_else(|| panic!("no grad_fn in {shown}"));
    shown[start..start + shown[start..].find('>').unwrap()].to_string()
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_vec_f64().unwrap()
}

/// Every case of the fixture's view chains on `device` (float64 on the CPU, float32 on a device: the values are
/// small integers, exact in both).
fn chains(device: Device) {
    let dtype = if device.is_cpu() { DType::F64 } else { DType::F32 };
    let f = fixture();
    let cases = f["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 66, "the fixture's cases");
    for case in cases {
        let (shape, chain) = (sizes(&case["shape"]), &case["chain"]);
        let what = format!("{shape:?} {chain}");
        let x = base(&shape, dtype, device).requires_grad_(true).unwrap();
        let result = run_chain(&x, chain);
        if let Some(want) = case["error"].as_str() {
            let e = result
                .err()
                .unwrap_or_else(|| panic!("{what}: PyTorch refuses it: {want}"));
            // The sentences name float64's type and item size.
            if dtype == DType::F64 {
                assert!(e.to_string().contains(want), "{what}: {e}\nPyTorch: {want}");
            }
            continue;
        }
        let y = result.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(y.shape().to_vec(), sizes(&case["out_shape"]), "{what}: shape");
        assert_eq!(y.stride(), sizes(&case["stride"]), "{what}: stride");
        assert_eq!(
            y.storage_offset() as u64,
            case["offset"].as_u64().unwrap(),
            "{what}: storage offset"
        );
        assert_eq!(
            y.is_contiguous(),
            case["contiguous"].as_bool().unwrap(),
            "{what}: is_contiguous"
        );
        assert_eq!(y.is_view(), case["is_view"].as_bool().unwrap(), "{what}: is_view");
        assert_eq!(values(&y), floats(&case["values"]), "{what}: values");
        assert_eq!(grad_fn(&y), case["grad_fn"].as_str().unwrap(), "{what}: grad_fn");
        (&y * &weights(&y)).sum_all().unwrap().backward().unwrap();
        assert_eq!(values(&x.grad().unwrap()), floats(&case["grad"]), "{what}: gradient");

        for (how, write) in [("fill", 0), ("mul", 1)] {
            let x = base(&shape, dtype, device);
            let y = run_chain(&x, chain).unwrap();
            let written = if write == 0 { y.fill_(-1.0) } else { y.mul_scalar_(-1.0) };
            match (&case[format!("{how}_written")], &case[format!("{how}_error")], written) {
                (want, _, Ok(())) if want.is_array() => {
                    assert_eq!(values(&x), floats(want), "{what}: {how}_ through the view")
                }
                (_, want, Err(e)) if want.is_string() => {
                    assert!(e.to_string().contains(want.as_str().unwrap()), "{what}: {how}_: {e}")
                }
                // PyTorch leaves a write into overlapping windows undefined; nn refuses it with the sentence of
                // the other overlapping writes.
                (want, _, Err(e)) if want.is_array() && chain.to_string().contains("as_strided") => {
                    assert!(
                        e.to_string().contains("more than one element of the written-to tensor"),
                        "{what}: {e}"
                    )
                }
                (_, _, got) => panic!("{what}: {how}_ gave {got:?}, PyTorch {case}"),
            }
        }
    }
}

on_cpu_and_gpu!(view_chains_match_pytorch, view_chains_match_pytorch_on_gpu, chains);

/// The fixture's writes through views under autograd: the base's `CopySlices`, the view's history, the values
/// and the gradient reaching the leaf.
#[test]
fn writes_through_views_are_recorded_as_pytorchs_copy_slices() {
    let f = fixture();
    let cases = f["writes"].as_array().unwrap();
    assert_eq!(cases.len(), 10);
    for case in cases {
        let what = case.to_string();
        let shape = sizes(&case["shape"]);
        let x0 = base(&shape, DType::F64, Device::Cpu).requires_grad_(true).unwrap();
        let x = x0.mul_scalar(1.0).unwrap();
        let sibling = (!case["sibling"].is_null()).then(|| run_chain(&x, &case["sibling"]).unwrap());
        let v = run_chain(&x, &case["chain"]).unwrap();
        let w = weights(&v).div_scalar(4.0).unwrap();
        match case["write"].as_str().unwrap() {
            "mul2" => v.mul_scalar_(2.0),
            "add_w" => v.add_(&w),
            "relu" => v.add_scalar_(-5.0).and_then(|()| v.relu_()),
            "fill" => v.fill_(0.5),
            "copy_w" => v.copy_(&w),
            "mul2_base" => x.mul_scalar_(2.0),
            other => panic!("no write {other}"),
        }
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        let target = match case["read"].as_str().unwrap() {
            "base" => x.clone(),
            "view" => v.clone(),
            _ => sibling.clone().unwrap(),
        };
        assert_eq!(values(&target), floats(&case["values"]), "{what}: values");
        assert_eq!(
            grad_fn(&x),
            case["base_grad_fn"].as_str().unwrap(),
            "{what}: the base's grad_fn"
        );
        assert_eq!(
            grad_fn(&v),
            case["view_grad_fn"].as_str().unwrap(),
            "{what}: the view's grad_fn"
        );
        (&target * &weights(&target)).sum_all().unwrap().backward().unwrap();
        assert_eq!(values(&x0.grad().unwrap()), floats(&case["grad"]), "{what}: gradient");
    }
}

#[test]
fn writes_through_views_of_leaves_and_of_saved_tensors_fail_as_pytorchs() {
    let f = fixture();
    let leaf = base(&[2, 2], DType::F64, Device::Cpu).requires_grad_(true).unwrap();
    let e = leaf.t().unwrap().mul_scalar_(2.0).unwrap_err();
    assert!(e.to_string().contains(f["leaf_error"].as_str().unwrap()), "{e}");
    assert_eq!(
        values(&leaf),
        vec![1.0, 2.0, 3.0, 4.0],
        "the refused write changed nothing"
    );

    // A tensor a backward saved, changed through a view of it: the backward fails (PyTorch: "modified by an
    // inplace operation").
    assert!(
        f["saved_error"]
            .as_str()
            .unwrap()
            .contains("modified by an inplace operation")
    );
    let a = base(&[2, 2], DType::F64, Device::Cpu).requires_grad_(true).unwrap();
    let b = a.mul_scalar(1.0).unwrap();
    let c = &b * &b;
    b.t().unwrap().select(0, 1).unwrap().fill_(0.0).unwrap();
    assert!(c.sum_all().unwrap().backward().is_err());
}

#[test]
fn a_view_and_its_base_see_each_others_writes() {
    let x = Tensor::zeros([2, 3], DType::F32);
    let y = x.t().unwrap();
    // y[0, 1] = 5 is x[1, 0]
    y.select(0, 0).unwrap().select(0, 1).unwrap().fill_(5.0).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![0.0, 0.0, 0.0, 5.0, 0.0, 0.0]);
    // and the reverse: a write into x shows in y
    x.select(1, 2).unwrap().add_scalar_(1.0).unwrap();
    assert_eq!(y.select(0, 2).unwrap().to_vec::<f32>().unwrap(), vec![1.0, 1.0]);
    // one version counter
    let before = x.version();
    y.narrow(1, 0, 1).unwrap().zero_().unwrap();
    assert!(x.version() > before && y.version() == x.version());
    assert!(y.shares_storage(&x) && !y.is_contiguous() && y.contiguous().unwrap().is_contiguous());
    // an operation reads a view's elements where they lie
    let sum = y.sum_dims(&[1], false).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(sum, vec![5.0, 0.0, 1.0]);
}

fn writes_on(device: Device) {
    let x = base(&[3, 4], DType::F32, device);
    let col = x.select(1, 1).unwrap();
    col.mul_scalar_(10.0).unwrap();
    x.t()
        .unwrap()
        .narrow(0, 3, 1)
        .unwrap()
        .copy_(&Tensor::full([1, 3], 0.5, DType::F32))
        .unwrap();
    let want = [1.0, 20.0, 3.0, 0.5, 5.0, 60.0, 7.0, 0.5, 9.0, 100.0, 11.0, 0.5];
    assert_eq!(x.cpu().unwrap().to_vec::<f32>().unwrap(), want);
    // an op of views, on the device: the transpose's elements read where they lie
    let s = (&x.t().unwrap() + &x.t().unwrap()).cpu().unwrap();
    assert_eq!(s.shape(), &[4, 3]);
    assert_eq!(s.to_vec::<f32>().unwrap()[..3], [2.0, 10.0, 18.0]);
}

on_cpu_and_gpu!(
    writes_through_views_land_in_the_base,
    writes_through_views_land_in_the_base_on_gpu,
    writes_on
);
