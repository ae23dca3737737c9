//! Element-wise activations: the [`Activation`] enum, generated from the [table](table), and its four
//! operations (forward into a new tensor, in place, into a given tensor, and backward), each with its host path
//! (the formula's [`HostFormula`] in the vectorised loops) and its device path (the formula's cubecl kernel).

mod table;

pub(crate) use table::{activation_table, formula_constants};

use std::marker::PhantomData;

use kernels::{Formula, GpuDevice, HostFormula, Real};

use super::elementwise::{BinaryFn, UnaryFn};
use super::{GRADIENT, OUTPUT, Op, check_like, run};
use crate::tensor::autograd::{Backward as BackwardFn, Saved, is_grad_enabled};
use crate::tensor::device::{float_type, probe};
use crate::{DType, Result, Tensor};

/// A formula type and its constants, once [`Activation::dispatch`] has matched the variant.
pub(crate) trait FormulaVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the formula `A` and its constants `[a, b]`.
    fn visit<A: Formula + HostFormula>(self, constants: [f64; 2]) -> Self::Output;
}

macro_rules! define_activation {
    (
        layers { $(
            $(#[$doc:meta])*
            $layer:ident $({ $($c:ident $(= $d:expr)?),+ })? $inplace:ident $repr:ident
                $(refuse ($refused:expr, $why:literal))? $(via $via:path)?
                => $variant:ident $name:literal $formula:ident $([$($k:expr),+])?;
        )* }
        functions { $(
            $(#[$fdoc:meta])*
            $fvariant:ident $fname:literal $fformula:ident;
        )* }
    ) => {
        /// An element-wise activation with its constants: what a layer runs, on any device.
        ///
        /// Each formula is PyTorch's (`aten/src/ATen/native/cpu/Activation.cpp`, `derivatives.yaml`), including
        /// how it treats signed zeros and NaN (`relu(-0.0)` is `-0.0`, `relu(NaN)` is NaN), written once in
        /// `kernels` for the host and the device.
        ///
        /// ```
        /// use nn::{Tensor, functional::Activation};
        /// let x = Tensor::from_vec(vec![-1.0f32, 0.5], [2]).unwrap();
        /// let y = Activation::LeakyRelu { negative_slope: 0.1 }.forward(&x).unwrap();
        /// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-0.1, 0.5]);
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Activation {
            $(
                #[doc = concat!("The formula of [`", stringify!($layer), "`](crate::layers::", stringify!($layer), ").")]
                $variant $({ $(
                    #[doc = concat!("The layer's `", stringify!($c), "`.")]
                    $c: f64
                ),+ })?,
            )*
            $(
                $(#[$fdoc])*
                $fvariant,
            )*
        }

        impl Activation {
            /// PyTorch's name of the function (`relu`, `gelu`, …).
            pub fn name(&self) -> &'static str {
                match self {
                    $(Activation::$variant { .. } => $name,)*
                    $(Activation::$fvariant => $fname,)*
                }
            }

            /// PyTorch's name of the backward function (`relu_backward`, …).
            pub fn backward_name(&self) -> &'static str {
                match self {
                    $(Activation::$variant { .. } => concat!($name, "_backward"),)*
                    $(Activation::$fvariant => concat!($fname, "_backward"),)*
                }
            }

            /// Runs `visitor` with this activation's formula type and constants.
            pub(crate) fn dispatch<V: FormulaVisitor>(&self, visitor: V) -> V::Output {
                match *self {
                    $(Activation::$variant $({ $($c),+ })? => {
                        let constants = formula_constants!([$($($k),+)?] [$($($c),+)?]);
                        visitor.visit::<kernels::activation::$formula>(constants)
                    })*
                    $(Activation::$fvariant => visitor.visit::<kernels::activation::$fformula>(formula_constants!()),)*
                }
            }
        }
    };
}
activation_table!(define_activation);

impl Activation {
    /// The activation of every element of `x`, in a new tensor of `x`'s dtype, on `x`'s device.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        struct Visit<'a>(&'a Tensor, &'static str);
        impl FormulaVisitor for Visit<'_> {
            type Output = Result<Tensor>;
            fn visit<A: Formula + HostFormula>(self, constants: [f64; 2]) -> Result<Tensor> {
                run(&Forward::<A>::new(self.1, constants), &[self.0])
            }
        }
        self.dispatch(Visit(x, self.name()))
    }

    /// The activation of every element of `x`, in place (seen through every handle to `x`'s storage). On a
    /// tensor that requires a gradient, recorded as PyTorch records an in-place change
    /// (`in_place_recorded`).
    pub fn forward_(&self, x: &Tensor) -> Result<()> {
        if x.requires_grad() && is_grad_enabled() {
            return super::in_place_recorded(self.name(), x, |original| self.forward(original));
        }
        self.forward_into(x, x)
    }

    /// The activation of every element of `x`, written into `out` (same shape, dtype and device), which is not
    /// reallocated.
    pub fn forward_into(&self, x: &Tensor, out: &Tensor) -> Result<()> {
        let op = self.name();
        check_like(op, x, out, OUTPUT)?;
        struct Visit<'a>(&'a Tensor, &'a Tensor, &'static str);
        impl FormulaVisitor for Visit<'_> {
            type Output = Result<()>;
            fn visit<A: Formula + HostFormula>(self, constants: [f64; 2]) -> Result<()> {
                run(&ForwardInto::<A>::new(self.2, constants), &[self.0, self.1])
            }
        }
        self.dispatch(Visit(x, out, op))
    }

    /// The gradient of the input, `dx`, given the input `x` of the forward and the gradient of its output `dy`
    /// (PyTorch's backward of the function, e.g. `gelu_backward`).
    ///
    /// ```
    /// use nn::{Tensor, functional::Activation};
    /// let x = Tensor::from_vec(vec![-1.0f32, 2.0], [2]).unwrap();
    /// let dy = Tensor::from_vec(vec![10.0f32, 10.0], [2]).unwrap();
    /// let dx = Activation::LeakyRelu { negative_slope: 0.1 }.backward(&x, &dy).unwrap();
    /// assert_eq!(dx.to_vec::<f32>().unwrap(), vec![1.0, 10.0]);
    /// ```
    pub fn backward(&self, x: &Tensor, dy: &Tensor) -> Result<Tensor> {
        let op = self.backward_name();
        check_like(op, x, dy, GRADIENT)?;
        struct Visit<'a>(&'a Tensor, &'a Tensor, &'static str);
        impl FormulaVisitor for Visit<'_> {
            type Output = Result<Tensor>;
            fn visit<A: Formula + HostFormula>(self, constants: [f64; 2]) -> Result<Tensor> {
                run(&Backward::<A>::new(self.2, constants), &[self.0, self.1])
            }
        }
        self.dispatch(Visit(x, dy, op))
    }

    /// The value at one `f64` point (for references and tests).
    pub fn at(&self, x: f64) -> f64 {
        struct Visit(f64);
        impl FormulaVisitor for Visit {
            type Output = f64;
            fn visit<A: Formula + HostFormula>(self, [a, b]: [f64; 2]) -> f64 {
                <A as HostFormula>::forward(self.0, a, b)
            }
        }
        self.dispatch(Visit(x))
    }
}

/// A formula `A` with its constants: the identity of one activation op.
struct Of<A> {
    name: &'static str,
    constants: [f64; 2],
    formula: PhantomData<fn() -> A>,
}

impl<A> Clone for Of<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for Of<A> {}

impl<A: HostFormula> UnaryFn for Of<A> {
    const ARITHMETIC_BOUND: bool = A::TRANSCENDENTAL;

    #[inline(always)]
    fn apply<R: Real>(&self, x: R) -> R {
        <A as HostFormula>::forward(x, self.constants[0], self.constants[1])
    }
}

/// The formula's backward as a function of `(saved, dy)`.
struct Grad<A>(Of<A>);

impl<A> Clone for Grad<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for Grad<A> {}

impl<A: HostFormula> BinaryFn for Grad<A> {
    #[inline(always)]
    fn apply<R: Real>(&self, saved: R, dy: R) -> R {
        <A as HostFormula>::backward(saved, dy, self.0.constants[0], self.0.constants[1])
    }
}

macro_rules! activation_op {
    ($(#[$doc:meta])* $op:ident) => {
        $(#[$doc])*
        struct $op<A>(Of<A>);

        impl<A> $op<A> {
            fn new(name: &'static str, constants: [f64; 2]) -> Self {
                $op(Of {
                    name,
                    constants,
                    formula: PhantomData,
                })
            }
        }
    };
}

activation_op!(
    /// `A(x)` in a new tensor; inputs `[x]`.
    Forward
);
activation_op!(
    /// `out = A(x)`; inputs `[x, out]` of one shape and dtype (`out` may be `x`: in place).
    ForwardInto
);
activation_op!(
    /// `dx = A'(saved, dy)`; inputs `[x, dy]`.
    Backward
);

/// `A(x)` for an element-wise formula that is no activation layer (`exp`, `log`, `clamp`…): the activations'
/// op, so it runs on devices, is probed, and records its gradient (the formula's backward).
pub(crate) fn apply<A: Formula + HostFormula + 'static>(
    name: &'static str,
    constants: [f64; 2],
    x: &Tensor,
) -> Result<Tensor> {
    run(&Forward::<A>::new(name, constants), &[x])
}

/// The probe's inputs for an activation: the sweep of [`probe::inputs`], and for a backward gradients beside it.
fn probe_inputs(dtype: DType, backward: bool) -> Result<Vec<Tensor>> {
    let xs = probe::inputs();
    let n = xs.len();
    let mut inputs = vec![Tensor::from_vec(xs, [n])?.to_dtype(dtype)?];
    if backward {
        inputs.push(Tensor::from_vec(probe::gradients(n), [n])?.to_dtype(dtype)?);
    }
    Ok(inputs)
}

impl<A: Formula + HostFormula + 'static> Op for Forward<A> {
    type Output = Tensor;

    fn name(&self) -> &'static str {
        self.0.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        inputs[0].map_float(self.0.name, &self.0)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        inputs[0].map_gpu(self.0.name, |dtype, x| {
            kernels::activation::forward::<A>(self.0.constants, dtype, x)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(Self(self.0), probe_inputs(dtype, false)?)])
    }

    fn gradient(&self, inputs: &[&Tensor], _: &Tensor) -> Option<Box<dyn BackwardFn>> {
        let (of, x) = (self.0, Saved::new(inputs[0]));
        Some(Box::new(move |g: &[Tensor], _: &[bool]| {
            Ok(vec![Some(run(&Backward::<A>(of), &[x.get(of.name)?, &g[0]])?)])
        }))
    }
}

impl<A: Formula + HostFormula> Op for ForwardInto<A> {
    type Output = ();
    const WRITES: usize = 1;

    fn name(&self) -> &'static str {
        self.0.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<()> {
        inputs[0].map_float_into(self.0.name, &self.0, inputs[1])
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<()> {
        let (x, out, name) = (inputs[0], inputs[1], self.0.name);
        let (dtype, constants, input) = (float_type(name, x.dtype())?, self.0.constants, x.gpu_buffer(name)?);
        if out.shares_storage(x) {
            kernels::activation::forward_in_place::<A>(constants, dtype, &input)
        } else {
            kernels::activation::forward_into::<A>(constants, dtype, &input, &out.gpu_buffer(name)?)
        }
        .map_err(|e| x.kernel_error(name, e))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        let mut inputs = probe_inputs(dtype, false)?;
        inputs.push(inputs[0].zeros_like()?);
        Ok(vec![(Self(self.0), inputs)])
    }
}

impl<A: Formula + HostFormula> Op for Backward<A> {
    type Output = Tensor;

    fn name(&self) -> &'static str {
        self.0.name
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, dy) = (inputs[0], inputs[1]);
        let saved = if A::GRAD_FROM_OUTPUT {
            x.map_float(self.0.name, &self.0)?
        } else {
            x.clone()
        };
        saved.zip_float(dy, self.0.name, &Grad(self.0))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (x, dy) = (inputs[0], inputs[1]);
        let dtype = float_type(self.0.name, x.dtype())?;
        let fail = |e| x.kernel_error(self.0.name, e);
        let saved = if A::GRAD_FROM_OUTPUT {
            kernels::activation::forward::<A>(self.0.constants, dtype, &x.gpu_buffer(self.0.name)?).map_err(fail)?
        } else {
            x.gpu_buffer(self.0.name)?
        };
        let dx = kernels::activation::backward::<A>(self.0.constants, dtype, &saved, &dy.gpu_buffer(self.0.name)?)
            .map_err(fail)?;
        Ok(x.like_gpu(dx))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(Self(self.0), probe_inputs(dtype, true)?)])
    }
}
