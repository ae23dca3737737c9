//! Without a device feature, no tensor can be on a device: these entry points only say so.

use crate::functional::Activation;
use crate::functional::derivative::PreluLayout;
use crate::{Error, Result, Tensor};

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

pub(crate) fn prelu_backward(x: &Tensor, _: &Tensor, _: &Tensor, _: PreluLayout) -> Result<(Tensor, Tensor)> {
    Err(unavailable(x))
}

pub(crate) fn softmax(x: &Tensor, _: [usize; 3], _: bool) -> Result<Tensor> {
    Err(unavailable(x))
}

pub(crate) fn softmax_backward(y: &Tensor, _: &Tensor, _: [usize; 3], _: bool) -> Result<Tensor> {
    Err(unavailable(y))
}
