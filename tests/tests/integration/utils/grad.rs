//! `nn::utils`: clip_grad_norm_ (norm types 2, 1, 3, inf; a max norm that scales and one that does not) and
//! clip_grad_value_ against PyTorch 2.5.1 (`fixtures/utils/clip_grad.safetensors`, made by
//! `fixtures/generate/clip_grad.py`), on the CPU and on wgpu; error_if_nonfinite; parameters to and from one
//! vector.

use integration_tests::{assert_close, tensors};
use nn::utils::{clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters};
use nn::{DType, Device, Param, Tensor};

/// Three parameters on `device` holding the fixture's gradients.
fn params(file: &nn::StateDict, device: Device) -> Vec<Param> {
    (0..3)
        .map(|i| {
            let g = &file[&format!("grad.{i}")];
            let p = Param::new(Tensor::zeros(g.shape().clone(), DType::F32).to_device(device).unwrap());
            p.set_grad(Some(g.deep_copy().unwrap().to_device(device).unwrap()))
                .unwrap();
            p
        })
        .collect()
}

fn check(device: Device) {
    let file = tensors("utils/clip_grad.safetensors");
    for (name, norm_type) in [("2", 2.0), ("1", 1.0), ("3", 3.0), ("inf", f64::INFINITY)] {
        for max in [0.5, 100.0] {
            let case = format!("norm{name}_max{max:?}");
            let ps = params(&file, device);
            let total = clip_grad_norm_(&ps, max, norm_type, false).unwrap();
            assert_close(
                &format!("{case} on {device}: total"),
                &total.reshape([1]).unwrap(),
                &file[&format!("{case}.total")],
            );
            for (i, p) in ps.iter().enumerate() {
                assert_close(
                    &format!("{case} on {device}: grad {i}"),
                    &p.grad().unwrap(),
                    &file[&format!("{case}.grad.{i}")],
                );
            }
        }
    }
    let ps = params(&file, device);
    clip_grad_value_(&ps, 0.7).unwrap();
    for (i, p) in ps.iter().enumerate() {
        assert_close(
            &format!("value on {device}: grad {i}"),
            &p.grad().unwrap(),
            &file[&format!("value0.7.grad.{i}")],
        );
    }
}

integration_tests::on_cpu_and_gpu!(
    clipping_matches_pytorch_on_the_cpu,
    clipping_matches_pytorch_on_wgpu,
    check
);

#[test]
fn a_non_finite_norm_is_an_error_only_when_asked_and_changes_nothing() {
    let p = Param::new(Tensor::zeros([2], DType::F32));
    p.set_grad(Some(Tensor::from_vec(vec![f32::INFINITY, 1.0], [2]).unwrap()))
        .unwrap();
    let err = clip_grad_norm_(std::slice::from_ref(&p), 1.0, 2.0, true).unwrap_err();
    assert!(err.to_string().contains("non-finite"), "{err}");
    assert_eq!(p.grad().unwrap().to_vec::<f32>().unwrap(), vec![f32::INFINITY, 1.0]);
    let total = clip_grad_norm_(std::slice::from_ref(&p), 1.0, 2.0, false).unwrap();
    assert_eq!(total.item().unwrap(), f64::INFINITY);
    // No gradient at all: a total of 0.
    let q = Param::new(Tensor::zeros([2], DType::F32));
    assert_eq!(clip_grad_norm_(&[q], 1.0, 2.0, true).unwrap().item().unwrap(), 0.0);
}

#[test]
fn parameters_flatten_to_one_vector_and_back() {
    let a = Param::new(Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]).unwrap());
    let b = Param::new(Tensor::from_vec(vec![5.0f32], [1]).unwrap());
    let v = parameters_to_vector(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(v.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 5.0]);
    let new = Tensor::from_vec(vec![9.0f32, 8.0, 7.0, 6.0, 5.5], [5]).unwrap();
    vector_to_parameters(&new, &[a.clone(), b.clone()]).unwrap();
    assert_eq!(a.data().to_vec::<f32>().unwrap(), vec![9.0, 8.0, 7.0, 6.0]);
    assert_eq!(a.shape().dims(), [2, 2]);
    assert_eq!(b.data().to_vec::<f32>().unwrap(), vec![5.5]);
    let short = Tensor::from_vec(vec![0.0f32; 4], [4]).unwrap();
    assert!(vector_to_parameters(&short, &[a.clone(), b]).is_err());
    assert_eq!(a.data().to_vec::<f32>().unwrap(), vec![9.0, 8.0, 7.0, 6.0]);
}
