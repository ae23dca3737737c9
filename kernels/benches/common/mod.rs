//! What the device benches share: opening the devices `NN_BENCH_DEVICES` names, and operands.

use kernels::{Backend, GpuDevice};

/// The device `name` stands for (`wgpu:0`, `cuda:0`), or `None` with a message when the machine lacks it.
pub fn open(name: &str) -> Option<GpuDevice> {
    let (backend, index) = name.trim().split_once(':')?;
    let backend = match backend {
        "wgpu" => Backend::Wgpu,
        "cuda" => Backend::Cuda,
        _ => return None,
    };
    match GpuDevice::open(backend, index.parse().ok()?) {
        Ok(device) => Some(device),
        Err(e) => {
            eprintln!("skipped {name}: {e}");
            None
        }
    }
}

/// `len` pseudo-random f32 in [-1, 1) (xorshift from `seed`).
pub fn values(len: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as f32 / u32::MAX as f32 * 2.0 - 1.0
        })
        .collect()
}
