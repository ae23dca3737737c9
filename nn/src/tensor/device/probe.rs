//! The parity probe: before an operation first runs in a dtype on a device, it runs on fixed inputs there
//! and on the CPU, and the verdict is kept for the process. A device whose results differ beyond the dtype's
//! tolerance refuses that operation in that dtype with an error naming the device, the dtype and the error
//! measured — never a wrong result.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::{DType, Device, Error, Result, Tensor};

/// The largest difference a device may show against the CPU, relative to `max(|reference|, 1)`. Loose
/// enough for a last-bit difference between two correct implementations, tight enough to catch a wrong
/// function (the parity tests against PyTorch hold the kernels to far less).
pub(crate) fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 4e-3,
        DType::BF16 => 3e-2,
        DType::F64 => 1e-9,
        _ => 1e-4,
    }
}

/// Inputs every probe runs on: a sweep of `[-12, 12]`, tiny magnitudes, and large ones where naive
/// formulas overflow.
pub(crate) fn inputs() -> Vec<f64> {
    let mut xs: Vec<f64> = (0..97).map(|i| -12.0 + 0.25 * i as f64).collect();
    xs.extend([
        -40.0, -20.0, -1e-3, -1e-6, 1e-6, 1e-3, 20.0, 40.0, 0.3, -0.7, 2.9, -2.9, 3.1, -3.1,
    ]);
    xs
}

/// Gradients paired with [`inputs`]: smooth values in `[-2, 2]`.
pub(crate) fn gradients(n: usize) -> Vec<f64> {
    (0..n).map(|i| 2.0 * (i as f64 * 0.731).sin()).collect()
}

/// The worst element of a device result against the CPU's, as `(relative error, index)`; a NaN where the
/// other is not counts as infinite.
pub(crate) fn worst(device_result: &Tensor, reference: &Tensor) -> Result<(f64, usize)> {
    let got = device_result.cpu()?.to_vec_f64()?;
    let want = reference.to_vec_f64()?;
    let mut worst = (0.0, 0);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let err = match (g.is_nan(), w.is_nan()) {
            (true, true) => 0.0,
            (false, false) if g == w => 0.0,
            (false, false) => (g - w).abs() / w.abs().max(1.0),
            _ => f64::INFINITY,
        };
        if err.is_nan() || err > worst.0 {
            worst = (if err.is_nan() { f64::INFINITY } else { err }, i);
        }
    }
    Ok(worst)
}

/// What a probe measured: the worst relative error, and where (`x = 3.1`, `element 4 of result 0`).
pub(crate) struct Measured {
    pub(crate) error: f64,
    pub(crate) at: String,
}

/// The worst of several `(device result, CPU result)` pairs.
pub(crate) fn measure(pairs: &[(Tensor, Tensor)]) -> Result<Measured> {
    let mut measured = Measured {
        error: 0.0,
        at: "every element".into(),
    };
    for (k, (device_result, reference)) in pairs.iter().enumerate() {
        Error::check_shapes(
            "probe",
            device_result.shape(),
            reference.shape(),
            "the device's result in the CPU's shape",
        )?;
        let (error, i) = worst(device_result, reference)?;
        if error > measured.error {
            measured = Measured {
                error,
                at: format!("element {i} of result {k}"),
            };
        }
    }
    Ok(measured)
}

type Verdicts = HashMap<(Device, &'static str, DType), std::result::Result<(), String>>;

/// `Ok` when `op` in `dtype` on `device` passed its probe (run now on first use, by `probe`), else the
/// refusal. An error from the probe itself (the dtype refused outright, a lost device) is returned and not
/// kept.
pub(crate) fn ensure(
    device: Device,
    op: &'static str,
    dtype: DType,
    probe: impl FnOnce() -> Result<Measured>,
) -> Result<()> {
    static VERDICTS: OnceLock<Mutex<Verdicts>> = OnceLock::new();
    let verdicts = || {
        VERDICTS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    };
    let known = verdicts().get(&(device, op, dtype)).cloned();
    let verdict = match known {
        Some(v) => v,
        None => {
            // Run without the lock held: a probe may use operations that have probes of their own (two
            // threads may then probe the same operation at once, and agree).
            let measured = probe()?;
            let tol = tolerance(dtype);
            let v = if measured.error <= tol {
                Ok(())
            } else {
                Err(format!(
                    "its result differs from the CPU's by {:.3e} (relative, at {}) where {tol:e} is allowed: \
                     the device's math functions are wrong in this dtype; run it in another dtype or on the CPU",
                    measured.error, measured.at
                ))
            };
            verdicts().insert((device, op, dtype), v.clone());
            v
        }
    };
    verdict.map_err(|reason| Error::UnsupportedOnDevice {
        op,
        dtype,
        device,
        reason,
    })
}

/// `n` deterministic values in `[-1.5, 1.5]` (`phase` makes different operands), for the layers' probes.
pub(crate) fn wave(n: usize, phase: f64) -> Vec<f64> {
    (0..n).map(|i| 1.5 * ((i as f64 + phase) * 0.917).sin()).collect()
}
