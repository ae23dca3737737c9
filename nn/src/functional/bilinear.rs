//! PyTorch's `F.bilinear`: `y_o = x1ᵀ W_o x2 + b_o` over matching batch dimensions.

use crate::{Error, Result, Tensor};

/// PyTorch's `F.bilinear(input1, input2, weight, bias=None)`: `input1` `(*, in1)` and `input2` `(*, in2)` with
/// the same batch dimensions `*`, `weight` `(out, in1, in2)`, `bias` `(out)`; the output is `(*, out)`, each
/// `y[.., o] = Σ_ij x1[.., i]·W[o, i, j]·x2[.., j] + b[o]`. An `einsum` of recorded operations, so it runs on
/// the inputs' device and differentiates; PyTorch's checks and sentences.
///
/// ```
/// use nn::Tensor;
/// use nn::functional::bilinear;
/// let x1 = Tensor::from_vec(vec![1.0f32, 2.0], [1, 2])?;
/// let x2 = Tensor::from_vec(vec![3.0f32], [1, 1])?;
/// let w = Tensor::from_vec(vec![1.0f32, 10.0], [1, 2, 1])?;
/// let y = bilinear(&x1, &x2, &w, Some(&Tensor::from_vec(vec![0.5f32], [1])?))?;
/// assert_eq!(y.to_vec::<f32>()?, vec![63.5]);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn bilinear(input1: &Tensor, input2: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let refuse = |message: String| Err(Error::invalid("bilinear", format!("bilinear(): {message}")));
    let (d1, d2) = (input1.shape().dims(), input2.shape().dims());
    if d1.len() != d2.len() {
        return refuse(format!(
            "input dimensions do not match: got {} and {}",
            d1.len(),
            d2.len()
        ));
    }
    if d1.is_empty() {
        return Err(Error::invalid(
            "bilinear",
            "Dimension specified as -1 but tensor has no dimensions",
        ));
    }
    if let Some(i) = (0..d1.len() - 1).find(|&i| d1[i] != d2[i]) {
        return refuse(format!(
            "input batch dimensions do not match at dim {i}: got {} and {}",
            d1[i], d2[i]
        ));
    }
    Error::check_rank(
        "bilinear",
        weight.shape(),
        3,
        "the weight must be (out_features, in1_features, in2_features)",
    )?;
    let w = weight.shape().dims();
    let (in1, in2) = (d1[d1.len() - 1], d2[d2.len() - 1]);
    for (name, got, expected) in [("input1", in1, w[1]), ("input2", in2, w[2])] {
        if got != expected {
            return refuse(format!(
                "{name} size does not match weight size: got {got} but expected {expected}"
            ));
        }
    }
    if let Some(b) = bias
        && b.shape().dims() != [w[0]]
    {
        let got = b.shape().dims().first().copied().unwrap_or(0);
        return refuse(format!(
            "bias size does not match weight size: got {got} but expected {}",
            w[0]
        ));
    }
    let batch: usize = d1[..d1.len() - 1].iter().product();
    let flat1 = input1.reshape([batch, in1])?;
    let flat2 = input2.reshape([batch, in2])?;
    let mut out_shape = d1[..d1.len() - 1].to_vec();
    out_shape.push(w[0]);
    let y = Tensor::einsum("bi,oij,bj->bo", &[&flat1, weight, &flat2])?.reshape(out_shape)?;
    match bias {
        Some(b) => y.add(b),
        None => Ok(y),
    }
}
