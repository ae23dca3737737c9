//! Selection by index on wgpu (lavapipe in CI) against the CPU: `index_select`, `index_add`, `max` / `min` over a
//! dimension and the embedding lookup, forward and backward, on odd shapes (empty dimensions, a 0-d index,
//! repeated indices, int32 indices, NaN and ties), and the same typed error as the CPU for an index out of
//! range. Without an adapter these skip (and fail under `CI=true`).

use integration_tests::{bit_equal, gpu_or_skip, lacks_dtype, max_abs_diff, sine_values as values};
use nn::functional::{embedding, embedding_padded};
use nn::prelude::*;
use nn::{Error, Result};

/// An index tensor of `dtype` (int64 or int32) holding `at`, of shape `[at.len()]`.
fn index(at: &[i64], dtype: DType) -> Tensor {
    Tensor::from_vec(at.to_vec(), [at.len()])
        .unwrap()
        .to_dtype(dtype)
        .unwrap()
}

/// `f` on the CPU and on `dev` (its inputs moved there) gives bit-equal results, on `dev`; a dtype the device
/// does not store may be refused.
fn same_on(dev: Device, what: &str, inputs: &[&Tensor], f: impl Fn(&[Tensor]) -> Result<Vec<Tensor>>) {
    let want = f(&inputs.iter().map(|t| (*t).clone()).collect::<Vec<_>>()).unwrap();
    let moved: Vec<Tensor> = inputs.iter().map(|t| t.to_device(dev).unwrap()).collect();
    let got = match f(&moved) {
        Ok(got) => got,
        Err(Error::UnsupportedOnDevice { .. }) if lacks_dtype(dev, inputs[0].dtype()) => return,
        Err(e) => panic!("{what}: {e}"),
    };
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.device(), dev, "{what}: result {k} not on the device");
        assert_eq!(g.shape(), w.shape(), "{what}: result {k}");
        assert!(bit_equal(&g.cpu().unwrap(), w), "{what}: result {k} differs");
    }
}

#[test]
fn index_select_moves_every_dtype_with_either_index_type() {
    let Some(dev) = gpu_or_skip("index_select") else {
        return;
    };
    for dtype in [DType::F32, DType::F64, DType::F16, DType::I64, DType::I32] {
        for index_dtype in [DType::I64, DType::I32] {
            for (shape, dim, at) in [
                (vec![5, 3], 0, vec![4, 0, 4, 2]),
                (vec![2, 5, 3], 1, vec![1, 1]),
                (vec![2, 3, 4], 2, vec![3, 0, 1, 2, 3]),
                (vec![2, 3], 1, vec![]),
                (vec![0, 3], 1, vec![2]),
            ] {
                let x = values(&shape, 0.0, dtype);
                let what = format!("{dtype} {shape:?} dim {dim} at {at:?} ({index_dtype})");
                same_on(dev, &what, &[&x, &index(&at, index_dtype)], |t| {
                    Ok(vec![t[0].index_select(dim, &t[1])?])
                });
            }
        }
    }
    // A 0-d index keeps the dimension, of length 1, as PyTorch does.
    let x = values(&[3, 4], 0.0, DType::F32);
    let scalar = Tensor::from_vec(vec![2i64], Vec::<usize>::new()).unwrap();
    same_on(dev, "0-d index", &[&x, &scalar], |t| {
        Ok(vec![t[0].index_select(0, &t[1])?])
    });
}

#[test]
fn an_index_out_of_range_is_the_cpus_error_on_the_device() {
    let Some(dev) = gpu_or_skip("index out of range") else {
        return;
    };
    let x = values(&[3, 2], 0.0, DType::F32);
    for (at, dtype) in [
        (vec![0, 3], DType::I64),
        (vec![-1, 0], DType::I64),
        (vec![1, -2], DType::I32),
    ] {
        let i = index(&at, dtype);
        let want = x.index_select(0, &i).unwrap_err().to_string();
        let on = (x.to_device(dev).unwrap(), i.to_device(dev).unwrap());
        let got = on.0.index_select(0, &on.1).unwrap_err();
        assert!(matches!(got, Error::InvalidArgument { .. }), "{got:?}");
        assert_eq!(got.to_string(), want, "{at:?} ({dtype})");
        let src = values(&[2, 2], 1.0, DType::F32).to_device(dev).unwrap();
        let added = on.0.index_add(0, &on.1, &src).unwrap_err().to_string();
        assert_eq!(added.replace("index_add", "index_select"), want, "index_add {at:?}");
        let table = embedding(&on.1, &on.0).unwrap_err().to_string();
        assert!(table.contains("is out of range for dimension 0 of size 3"), "{table}");
    }
}

#[test]
fn index_add_sums_repeated_indices_in_every_float_dtype() {
    let Some(dev) = gpu_or_skip("index_add") else { return };
    for (dtype, tol) in [(DType::F32, 1e-6), (DType::F64, 1e-12), (DType::F16, 2e-3)] {
        for (shape, dim, at) in [
            (vec![5, 3], 0, vec![4, 0, 4, 2, 4]),
            (vec![2, 4, 3], 1, vec![3, 3, 0]),
            (vec![2, 3, 2], 2, vec![1]),
            (vec![2, 3], 1, vec![]),
            (vec![0, 3], 1, vec![0, 0]),
        ] {
            let x = values(&shape, 0.0, dtype);
            let mut src_shape = shape.clone();
            src_shape[dim] = at.len();
            let src = values(&src_shape, 2.0, dtype);
            let i = index(&at, DType::I64);
            let what = format!("{dtype} {shape:?} dim {dim} at {at:?}");
            let want = x.index_add(dim as isize, &i, &src).unwrap();
            let moved = (
                x.to_device(dev).unwrap(),
                i.to_device(dev).unwrap(),
                src.to_device(dev).unwrap(),
            );
            match moved.0.index_add(dim as isize, &moved.1, &moved.2) {
                Ok(got) => {
                    assert_eq!(got.device(), dev, "{what}");
                    let err = max_abs_diff(&got.cpu().unwrap(), &want);
                    assert!(err <= tol, "{what}: off by {err:e}");
                }
                Err(Error::UnsupportedOnDevice { .. }) if lacks_dtype(dev, dtype) => {}
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }
}

#[test]
fn index_add_with_long_chains_and_mostly_distinct_indices() {
    let Some(dev) = gpu_or_skip("index_add chains") else {
        return;
    };
    // 600 picks of 7 rows (chains of ~86), then 300 picks of 500 rows (mostly distinct), one column each side.
    for (rows, picks, cols) in [(7usize, 600usize, 3usize), (500, 300, 2)] {
        let at: Vec<i64> = (0..picks).map(|k| ((k * k * 31 + 5 * k + 3) % rows) as i64).collect();
        let x = values(&[rows, cols], 0.0, DType::F32);
        let src = values(&[picks, cols], 1.0, DType::F32);
        let i = index(&at, DType::I64);
        let want = x.index_add(0, &i, &src).unwrap();
        let moved = (
            x.to_device(dev).unwrap(),
            i.to_device(dev).unwrap(),
            src.to_device(dev).unwrap(),
        );
        let got = moved.0.index_add(0, &moved.1, &moved.2).unwrap().cpu().unwrap();
        let err = max_abs_diff(&got, &want);
        assert!(err <= 1e-4, "{rows} rows, {picks} picks: off by {err:e}");
    }
}

#[test]
fn max_and_min_over_a_dimension_with_nan_and_ties() {
    let Some(dev) = gpu_or_skip("max_dim") else { return };
    let nan = f64::NAN;
    #[rustfmt::skip]
    let x = Tensor::from_vec(
        vec![
            1.0, 3.0, 3.0, -2.0,
            nan, 0.5, 9.0, nan,
            -4.0, -4.0, 7.0, 7.0,
        ],
        [3, 4],
    )
    .unwrap();
    for dtype in [DType::F32, DType::F64, DType::F16] {
        let x = x.to_dtype(dtype).unwrap();
        for (dim, keepdim) in [(0, false), (1, false), (1, true), (-1, true)] {
            let what = format!("{dtype} dim {dim} keepdim {keepdim}");
            same_on(dev, &format!("max {what}"), &[&x], |t| {
                let (v, i) = t[0].max_dim(dim, keepdim)?;
                Ok(vec![v, i])
            });
            same_on(dev, &format!("min {what}"), &[&x], |t| {
                let (v, i) = t[0].min_dim(dim, keepdim)?;
                Ok(vec![v, i])
            });
        }
    }
    // PyTorch 2.5.1 on the float32 x above: `torch.max(x, 1)` values [3, nan, 7], indices [1, 0, 2];
    // `torch.min(x, 1)` [-2, nan, -4], [3, 0, 0]; `torch.max(x, 0)` [nan, 3, 9, nan], [1, 0, 1, 1].
    let on = x.to_dtype(DType::F32).unwrap().to_device(dev).unwrap();
    let nan = f32::NAN;
    for (largest, dim, values, indices) in [
        (true, 1, vec![3.0, nan, 7.0], vec![1i64, 0, 2]),
        (false, 1, vec![-2.0, nan, -4.0], vec![3, 0, 0]),
        (true, 0, vec![nan, 3.0, 9.0, nan], vec![1, 0, 1, 1]),
    ] {
        let (v, i) = if largest {
            on.max_dim(dim, false)
        } else {
            on.min_dim(dim, false)
        }
        .unwrap();
        let v = v.cpu().unwrap().to_vec::<f32>().unwrap();
        let same = v.iter().zip(&values).all(|(a, b)| a == b || (a.is_nan() && b.is_nan()));
        assert!(same, "largest {largest} dim {dim}: {v:?}, PyTorch {values:?}");
        assert_eq!(
            i.cpu().unwrap().to_vec::<i64>().unwrap(),
            indices,
            "largest {largest} dim {dim}"
        );
    }
    // Odd shapes: a dimension of size 1, an empty outer dimension; an empty reduced dimension is an error.
    for shape in [vec![2, 1, 3], vec![0, 4]] {
        let x = values(&shape, 0.0, DType::F32);
        same_on(dev, &format!("max {shape:?}"), &[&x], |t| {
            let (v, i) = t[0].max_dim(1, false)?;
            Ok(vec![v, i])
        });
    }
    let empty = Tensor::zeros([2, 0], DType::F32).to_device(dev).unwrap();
    assert!(matches!(empty.max_dim(1, false), Err(Error::InvalidArgument { .. })));
}

#[test]
fn the_embedding_layer_on_the_device_looks_up_and_trains_there() {
    let Some(dev) = gpu_or_skip("embedding") else { return };
    let ids = Tensor::from_vec(vec![3i64, 0, 3, 1, 0, 4], [2, 3]).unwrap();
    for padding_idx in [None, Some(0)] {
        let what = format!("padding_idx {padding_idx:?}");
        let run = |device: Device| -> (Tensor, Tensor) {
            let mut w = values(&[5, 4], 0.0, DType::F32).to_device(device).unwrap();
            w.set_requires_grad(true).unwrap();
            let i = ids.to_device(device).unwrap();
            let y = embedding_padded(&i, &w, padding_idx).unwrap();
            let g = values(&[2, 3, 4], 1.0, DType::F32).to_device(device).unwrap();
            y.backward_with(&g).unwrap();
            let grad = w.grad().unwrap();
            assert_eq!(grad.device(), device, "{what}: the gradient stays on the device");
            (y.detach().cpu().unwrap(), grad.cpu().unwrap())
        };
        let (want_y, want_g) = run(Device::Cpu);
        let (got_y, got_g) = run(dev);
        assert!(bit_equal(&got_y, &want_y), "{what}: lookup");
        assert!(max_abs_diff(&got_g, &want_g) <= 1e-6, "{what}: gradient");
        if padding_idx == Some(0) {
            assert!(
                got_g
                    .narrow(0, 0, 1)
                    .unwrap()
                    .to_vec::<f32>()
                    .unwrap()
                    .iter()
                    .all(|&v| v == 0.0)
            );
        }
    }
    // The layer itself, moved to the device.
    let mut layer = Embedding::new(5, 4, None).unwrap();
    let want = layer.forward(ids.clone()).unwrap();
    layer.to_device(dev).unwrap();
    let got = layer.forward(ids.to_device(dev).unwrap()).unwrap();
    assert!(bit_equal(&got.cpu().unwrap(), &want));
}
