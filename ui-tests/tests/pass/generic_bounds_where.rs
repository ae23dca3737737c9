//! A generic struct with a bound, a where-clause and a lifetime-free config parameter.
use nn::prelude::*;
use std::marker::PhantomData;

#[derive(Module)]
struct Residual<M: Module, N, C>
where
    N: Module + Forward<Input = Tensor, Output = Tensor>,
    C: Send + Sync + 'static,
{
    inner: M,
    norm: Option<N>,
    #[module(skip)]
    config: C,
    marker: PhantomData<C>,
}

pub fn main() {
    let r: Residual<Linear, LayerNorm, (u8, String)> = Residual {
        inner: Linear::new(2, 2, true),
        norm: Some(LayerNorm::new(vec![2])),
        config: (1, "x".into()),
        marker: PhantomData,
    };
    assert_eq!(
        r.state_dict().keys().collect::<Vec<_>>(),
        ["inner.weight", "inner.bias", "norm.weight", "norm.bias"]
    );
    assert_eq!(r.config.0, 1);
}
