//! Without a device feature, no tensor can be on a device: these entry points only say so.

use crate::functional::Activation;
use crate::functional::conv::Geometry;
use crate::functional::derivative::PreluLayout;
use crate::functional::norm::BatchNormArgs;
use crate::layers::lstm::{CellTensors, LstmSizes};
use crate::tensor::Arith;
use crate::{Error, Result, Shape, Tensor};

fn unavailable(x: &Tensor) -> Error {
    Error::DeviceUnavailable {
        device: x.device(),
        reason: "nn was built without the `wgpu` and `cuda` features".into(),
    }
}

pub(crate) fn activation_forward(_: &Activation, x: &Tensor) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn activation_forward_(_: &Activation, x: &Tensor) -> Result<()> {
    Err(unavailable(x))
}

pub(crate) fn activation_forward_into(_: &Activation, x: &Tensor, _: &Tensor) -> Result<()> {
    Err(unavailable(x))
}

pub(crate) fn activation_backward(_: Activation, x: &Tensor, _: &Tensor) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn prelu_forward(x: &Tensor, _: &Tensor, _: PreluLayout) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn prelu_forward_into(x: &Tensor, _: &Tensor, _: &Tensor, _: PreluLayout) -> Result<()> {
    Err(unavailable(x))
}

pub(crate) fn prelu_backward(x: &Tensor, _: &Tensor, _: &Tensor, _: PreluLayout) -> Result<(Tensor, Tensor)> {
    Err(unavailable(x))
}

pub(crate) fn softmax(x: &Tensor, _: [usize; 3], _: bool) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn softmax_backward(y: &Tensor, _: &Tensor, _: [usize; 3], _: bool) -> Result<Tensor> {
    Err(unavailable(y))
}

pub(crate) fn gather(_: &'static str, x: &Tensor, _: Shape, _: &[usize], _: usize) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn cat(tensors: &[&Tensor], _: usize, _: Shape) -> Result<Tensor> {
    Err(unavailable(tensors[0]))
}

pub(crate) fn arith(_: Arith, _: &'static str, a: &Tensor, _: &Tensor, _: Shape) -> Result<Tensor> {
    Err(unavailable(a))
}

pub(crate) fn arith_(_: Arith, _: &'static str, a: &Tensor, _: &Tensor) -> Result<()> {
    Err(unavailable(a))
}

pub(crate) fn affine(x: &Tensor, _: f64, _: f64) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn affine_(x: &Tensor, _: f64, _: f64) -> Result<()> {
    Err(unavailable(x))
}

pub(crate) fn add_scalar_(x: &Tensor, _: f64) -> Result<()> {
    Err(unavailable(x))
}

pub(crate) fn linear(x: &Tensor, _: &Tensor, _: Option<&Tensor>, _: Shape) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn conv2d(x: &Tensor, _: &Tensor, _: Option<&Tensor>, _: &Geometry) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn batch_norm(x: &Tensor, _: BatchNormArgs<'_>) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn layer_norm(x: &Tensor, _: usize, _: Option<&Tensor>, _: Option<&Tensor>, _: f64) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn lstm(
    x: &Tensor,
    _: &Tensor,
    _: &Tensor,
    _: &[CellTensors],
    _: LstmSizes,
) -> Result<(Tensor, Tensor, Tensor)> {
    Err(unavailable(x))
}
