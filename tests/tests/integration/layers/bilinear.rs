//! `Bilinear` against PyTorch 2.5.1 (`fixtures/generate/bilinear_cases.py`): its initialisation from the seed
//! bit for bit, its repr and keys, the output and the gradients of both inputs, the weight and the bias
//! (batched, two batch dimensions, unbatched, an empty batch; f32 and f64), on the CPU and a device; and
//! PyTorch's refusals.

use integration_tests::{assert_close, lacks_dtype, on_cpu_and_gpu};
use nn::functional::bilinear;
use nn::prelude::*;

/// `(in1, in2, out, bias, dtype)` of each case, as the generator's `CASES`.
const CASES: [(usize, usize, usize, bool, DType); 5] = [
    (3, 4, 5, true, DType::F32),
    (2, 3, 4, false, DType::F64),
    (4, 2, 3, true, DType::F32),
    (3, 2, 2, true, DType::F64),
    (5, 5, 1, true, DType::F64),
];

fn check(device: Device) {
    // Reseeds the global generator and draws from it: alone in its process.
    integration_tests::in_own_process(|| initialisation_and_passes(device));
}

fn initialisation_and_passes(device: Device) {
    let f = integration_tests::tensors("layers/bilinear.safetensors");
    for (c, (in1, in2, out, bias, dtype)) in CASES.into_iter().enumerate() {
        let what = format!("case {c} on {device}");
        nn::manual_seed(c as u64);
        let mut layer = Bilinear::new(in1, in2, out, bias).unwrap();
        // The initialisation, drawn in PyTorch's order from the same seed.
        assert_eq!(
            layer.weight.data().to_vec::<f32>().unwrap(),
            f[&format!("{c}.weight")].to_vec::<f32>().unwrap(),
            "{what}: weight"
        );
        if bias {
            let b = layer.bias.as_ref().unwrap().data().to_vec::<f32>().unwrap();
            assert_eq!(b, f[&format!("{c}.bias")].to_vec::<f32>().unwrap(), "{what}: bias");
        }
        let keys: Vec<String> = layer.state_dict().keys().cloned().collect();
        assert_eq!(
            keys,
            if bias { vec!["weight", "bias"] } else { vec!["weight"] },
            "{what}"
        );
        let python_bool = if bias { "True" } else { "False" };
        assert_eq!(
            layer.to_string(),
            format!("Bilinear(in1_features={in1}, in2_features={in2}, out_features={out}, bias={python_bool})")
        );
        if lacks_dtype(device, dtype) {
            continue;
        }
        layer.to_dtype(dtype).unwrap();
        layer.to_device(device).unwrap();
        let leaf = |key: &str| {
            f[&format!("{c}.{key}")]
                .to_device(device)
                .unwrap()
                .requires_grad_(true)
                .unwrap()
        };
        let (x1, x2) = (leaf("x1"), leaf("x2"));
        let y = layer.call((x1.clone(), x2.clone())).unwrap();
        assert_close(&format!("{what}: output"), &y, &f[&format!("{c}.y")]);
        y.backward_with(&f[&format!("{c}.proj")].to_device(device).unwrap())
            .unwrap();
        let mut grads = vec![("x1", x1.grad()), ("x2", x2.grad()), ("weight", layer.weight.grad())];
        if bias {
            grads.push(("bias", layer.bias.as_ref().unwrap().grad()));
        }
        for (name, grad) in grads {
            let grad = grad.unwrap_or_else(|| panic!("{what}: no gradient of {name}"));
            assert_close(
                &format!("{what}: gradient of {name}"),
                &grad,
                &f[&format!("{c}.grad.{name}")],
            );
        }
    }
}

on_cpu_and_gpu!(bilinear_equals_pytorchs, bilinear_on_a_device_equals_pytorchs, check);

#[test]
fn bilinear_refuses_as_pytorch() {
    let w = Tensor::zeros([5, 3, 4], DType::F32);
    let x = |shape: &[usize]| Tensor::zeros(shape.to_vec(), DType::F32);
    let cases: [(Tensor, Tensor, &str); 4] = [
        (
            x(&[2, 3]),
            x(&[3, 4]),
            "bilinear(): input batch dimensions do not match at dim 0: got 2 and 3",
        ),
        (
            x(&[2, 3]),
            x(&[2, 5]),
            "bilinear(): input2 size does not match weight size: got 5 but expected 4",
        ),
        (
            x(&[2, 4]),
            x(&[2, 4]),
            "bilinear(): input1 size does not match weight size: got 4 but expected 3",
        ),
        (
            x(&[2, 1, 3]),
            x(&[2, 4]),
            "bilinear(): input dimensions do not match: got 3 and 2",
        ),
    ];
    for (x1, x2, sentence) in cases {
        let e = bilinear(&x1, &x2, &w, None).unwrap_err().to_string();
        assert!(e.contains(sentence), "{e} lacks {sentence:?}");
    }
    let e = bilinear(&x(&[2, 3]), &x(&[2, 4]), &w, Some(&x(&[4])))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bilinear(): bias size does not match weight size: got 4 but expected 5"),
        "{e}"
    );
    let e = Bilinear::new(0, 4, 5, true).err().unwrap().to_string();
    assert!(e.contains("float division by zero"), "{e}");
}
