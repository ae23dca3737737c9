//! Softplus `log1p(e^{a·x})/a` (linear above `a·x > b`), Mish `x·tanh(softplus(x))` and LogSigmoid
//! `min(x, 0) - log1p(e^{-|x|})`, with PyTorch's gradients.

use cubecl::prelude::*;

use super::sigmoid::sigmoid;
use crate::formula::formula;

/// `ln(1 + x)`, accurate for small `x` (`x` itself below `1e-4`, where the sum rounds).
#[cube]
fn log1p<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let one = Vector::new(C::new(1.0));
    let series = x - x * x * Vector::new(C::new(0.5));
    select_many(x.abs().less_than(&Vector::new(C::new(1e-4))), series, (one + x).ln())
}

formula! {
    /// PyTorch's `softplus(x, beta = a, threshold = b)`.
    Softplus [TRANSCENDENTAL];
    #[cube] device fn forward(x, a, b) {
        let z = x * Vector::new(a);
        select_many(
            z.greater_than(&Vector::new(b)),
            x,
            log1p::<C, N>(z.exp()) / Vector::new(a),
        )
    }
    device fn backward(x, dy, a, b) {
        let z = x * Vector::new(a);
        let e = z.exp();
        select_many(
            z.greater_than(&Vector::new(b)),
            dy,
            dy * e / (e + Vector::new(C::new(1.0))),
        )
    }
    host fn forward(x, a, b) {
        let (beta, threshold) = (R::of(a), R::of(b));
        // log1p(exp(z)) / beta through the overflow-free `max(z, 0) + log1p(e^-|z|)`.
        if x * beta > threshold {
            x
        } else if beta == R::ONE {
            // The same value without the division (by 1, exact): the common case, one division less per element.
            x.log1p_exp()
        } else {
            (x * beta).log1p_exp() / beta
        }
    }
    host fn backward(x, dy, a, b) {
        let bx = x * R::of(a);
        if bx > R::of(b) {
            dy
        } else {
            let z = bx.exp();
            dy * z / (z + R::ONE)
        }
    }
}

/// `tanh(softplus(x))` without computing either: with `e = e^x`, `tanh(ln(1 + e)) = e(e + 2) / (e(e + 2) + 2)`,
/// exact to a few ulps with one `exp`; 1 where `x > 20` (the form would overflow; tanh is 1 there in every
/// float type).
#[cube]
fn tanh_softplus<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let e = x.exp();
    let n = e * (e + Vector::new(C::new(2.0)));
    let one = Vector::new(C::new(1.0));
    select_many(
        x.greater_than(&Vector::new(C::new(20.0))),
        one,
        n / (n + Vector::new(C::new(2.0))),
    )
}

formula! {
    /// PyTorch's `mish`: `x·tanh(softplus(x))`.
    Mish [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) { x * tanh_softplus::<C, N>(x) }
    device fn backward(x, dy, _a, _b) {
        let s = sigmoid::<C, N>(x);
        let t = tanh_softplus::<C, N>(x);
        dy * (t + x * s * sech2_softplus::<C, N>(x))
    }
    host fn forward(x, _a, _b) { x * host_tanh_softplus(x) }
    host fn backward(x, dy, _a, _b) {
        let sigmoid = R::ONE / (R::ONE + (-x).exp());
        let t = host_tanh_softplus(x);
        dy * (t + x * sigmoid * (R::ONE - t * t))
    }
}

/// [`tanh_softplus`] on the host: one exponential and one division, where `tanh(log1p(e^x))` takes two
/// exponentials, a logarithm and a division (Mish into a preallocated output ran at a third of memcpy's speed).
#[inline(always)]
fn host_tanh_softplus<R: crate::Real>(x: R) -> R {
    let e = x.exp();
    let n = e * (e + R::of(2.0));
    if x > R::of(20.0) { R::ONE } else { n / (n + R::of(2.0)) }
}

/// `1 - tanh²(softplus(x))` without the cancellation of `1 - t·t` where `t` nears 1 (an ulp of `t` there is an
/// error of `2x` ulps in Mish's gradient): with `n = e^x(e^x + 2)` as in [`tanh_softplus`], `4(n + 1)/(n + 2)²`;
/// 0 where `x > 20` (below `4e^{-2x}`, nothing beside `tanh = 1` in Mish's gradient).
#[cube]
fn sech2_softplus<C: Float, N: Size>(x: Vector<C, N>) -> Vector<C, N> {
    let e = x.exp();
    let n = e * (e + Vector::new(C::new(2.0)));
    let two = Vector::new(C::new(2.0));
    let d = n + two;
    select_many(
        x.greater_than(&Vector::new(C::new(20.0))),
        Vector::new(C::new(0.0)),
        Vector::new(C::new(4.0)) * (n + Vector::new(C::new(1.0))) / (d * d),
    )
}

formula! {
    /// PyTorch's `logsigmoid`.
    LogSigmoid [TRANSCENDENTAL];
    #[cube] device fn forward(x, _a, _b) {
        let zero = Vector::new(C::new(0.0));
        select_many(x.less_than(&zero), x, zero) - log1p::<C, N>((-x.abs()).exp())
    }
    device fn backward(x, dy, _a, _b) {
        let zero = Vector::new(C::new(0.0));
        let one = Vector::new(C::new(1.0));
        let negative = x.less_than(&zero);
        let z = (-x.abs()).exp();
        let share = z / (one + z);
        dy * select_many(negative, one - share, share)
    }
    host fn forward(x, _a, _b) {
        // min(x, 0) - log1p(e^-|x|), PyTorch's formula, is exactly -softplus(-x).
        -(-x).log1p_exp()
    }
    host fn backward(x, dy, _a, _b) {
        let z = (-x.abs()).exp();
        let (max_deriv, sign) = if x < R::ZERO {
            (R::ONE, R::ONE)
        } else {
            (R::ZERO, -R::ONE)
        };
        (max_deriv - sign * (z / (R::ONE + z))) * dy
    }
}
