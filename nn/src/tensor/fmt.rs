//! `Debug` for tensors: shape, dtype, device and the first values.

use std::fmt;

use super::Tensor;

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor(shape={}, dtype={}, device={}",
            self.shape,
            self.dtype(),
            self.device()
        )?;
        if let Ok(values) = self.read_cpu("fmt", |_| ()).and_then(|_| self.to_vec_f64()) {
            const SHOWN: usize = 8;
            let head: Vec<String> = values.iter().take(SHOWN).map(|v| format!("{v}")).collect();
            let more = if values.len() > SHOWN { ", …" } else { "" };
            write!(f, ", data=[{}{more}]", head.join(", "))?;
        }
        f.write_str(")")
    }
}
