//! Element-wise activations: the [`Activation`] enum, generated from the [table](table), and its four
//! operations (forward into a new tensor, in place, into a given tensor, and backward), each with its host path
//! (the formula's [`HostFormula`] in the vectorised loops) and its device path (the formula's cubecl kernel).

mod table;

pub(crate) use table::{activation_table, formula_constants};

use std::marker::PhantomData;

use kernels::{Formula, GpuDevice, HostFormula, Real};

use super::elementwise::{BinaryFn, UnaryFn};
use super::{GRADIENT, OUTPUT, Op, check_like, run};
use crate::tensor::autograd::{Backward as BackwardFn, Formula as Recorded, Saved, is_grad_enabled};
use crate::tensor::device::{float_type, probe};
use crate::{DType, Result, Tensor};

/// A formula type and its constants, once [`Activation::dispatch`] has matched the variant.
pub(crate) trait FormulaVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the formula `A` and its constants `[a, b]`.
    fn visit<A: Formula + HostFormula>(self, constants: [f64; 2]) -> Self::Output;
}

/// One entry of the table as PyTorch's `F.<name>(x, …)`: the function, the method `x.<name>(…)` and the
/// in-place method `x.<name>_(…)`, the layer's constants as arguments in the layer's order; nothing for an entry
/// whose layer runs a function of its own (RReLU's takes the mode: `functional::rrelu`).
macro_rules! by_name {
    ([$via:path] $($rest:tt)*) => {};
    ([] $layer:ident $variant:ident $name:ident $name_:ident [$($c:ident),*]) => {
        #[doc = concat!(
            "PyTorch's `F.", stringify!($name), "`: the formula of [`", stringify!($layer), "`](crate::layers::",
            stringify!($layer), ") for every element, in a new tensor (also `x.", stringify!($name), "(…)`)."
        )]
        pub fn $name(x: &Tensor $(, $c: f64)*) -> Result<Tensor> {
            by_name!(@check $variant [$($c),*]);
            by_name!(@formula $variant [$($c),*]).forward(x)
        }

        impl Tensor {
            #[doc = concat!("PyTorch's `", stringify!($name), "`: [`functional::", stringify!($name),
                "`](crate::functional::", stringify!($name), ").")]
            pub fn $name(&self $(, $c: f64)*) -> Result<Tensor> {
                crate::ops::activation::by_name::$name(self $(, $c)*)
            }

            #[doc = concat!("PyTorch's `", stringify!($name_), "`: [`", stringify!($name), "`](Self::",
                stringify!($name), ") in place, seen through every handle to the storage; recorded by autograd as \
                PyTorch records it.")]
            pub fn $name_(&self $(, $c: f64)*) -> Result<()> {
                by_name!(@check $variant [$($c),*]);
                by_name!(@formula $variant [$($c),*]).forward_(self)
            }
        }
    };
    (@formula $variant:ident []) => { Activation::$variant };
    (@formula $variant:ident [$($c:ident),+]) => { Activation::$variant { $($c),+ } };
    // PyTorch's `F.hardtanh` refuses crossed bounds (equal ones clamp to that value).
    (@check Hardtanh [$min_val:ident, $max_val:ident]) => {
        if $min_val > $max_val {
            return Err(Error::invalid("hardtanh", "min_val cannot be greater than max_val"));
        }
    };
    (@check $variant:ident [$($c:ident),*]) => {};
}

macro_rules! define_activation {
    (
        layers { $(
            $(#[$doc:meta])*
            $layer:ident $({ $($c:ident $(= $d:expr)?),+ })? $inplace:ident $repr:ident
                $(refuse ($refused:expr, $why:literal))? $(via $via:path)?
                => $variant:ident $name:ident $name_:ident $formula:ident $([$($k:expr),+])?;
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
                    $(Activation::$variant { .. } => stringify!($name),)*
                    $(Activation::$fvariant => $fname,)*
                }
            }

            /// PyTorch's name of the backward function (`relu_backward`, …).
            pub fn backward_name(&self) -> &'static str {
                match self {
                    $(Activation::$variant { .. } => concat!(stringify!($name), "_backward"),)*
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

        /// Every element-wise activation by PyTorch's function name (`relu(&x)`, `leaky_relu(&x, 0.01)`), each
        /// also a method of [`Tensor`] with its in-place form; [`functional`](crate::functional) re-exports them.
        pub mod by_name {
            use super::Activation;
            use crate::{Error, Result, Tensor};

            $(by_name!([$($via)?] $layer $variant $name $name_ [$($($c),+)?]);)*
        }
    };
}
activation_table!(define_activation);

impl Activation {
    /// The activation of every element of `x`, in a new tensor of `x`'s dtype, on `x`'s device.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        struct Visit<'a>(&'a Tensor, Names);
        impl FormulaVisitor for Visit<'_> {
            type Output = Result<Tensor>;
            fn visit<A: Formula + HostFormula>(self, constants: [f64; 2]) -> Result<Tensor> {
                run(&Forward(Of::<A>::new(self.1, constants)), &[self.0])
            }
        }
        self.dispatch(Visit(x, self.names()))
    }

    /// The activation of every element of `x`, in place (seen through every handle to `x`'s storage). On a
    /// tensor that requires a gradient, recorded as PyTorch records an in-place change: where PyTorch's saves
    /// the result (ReLU, LeakyReLU with a slope ≥ 0, Sigmoid, Tanh, ELU and CELU with `alpha ≥ 0`, SELU), so
    /// does this, copying nothing, and a later change of `x` in place makes the backward fail as PyTorch's does;
    /// the other activations run on a copy of the input that the backward keeps.
    ///
    /// ```
    /// use nn::{Tensor, functional::Activation};
    /// let mut w = Tensor::from_vec(vec![-1.0f32, 2.0], [2]).unwrap();
    /// w.set_requires_grad(true).unwrap();
    /// let h = w.mul_scalar(3.0).unwrap();
    /// Activation::Relu.forward_(&h).unwrap();
    /// h.sum_all().unwrap().backward().unwrap();
    /// assert_eq!(w.grad().unwrap().to_vec::<f32>().unwrap(), vec![0.0, 3.0]);
    /// ```
    pub fn forward_(&self, x: &Tensor) -> Result<()> {
        if !(x.requires_grad() && is_grad_enabled()) {
            return self.forward_into(x, x);
        }
        struct Visit<'a>(&'a Tensor, Names);
        impl FormulaVisitor for Visit<'_> {
            type Output = Result<()>;
            fn visit<A: Formula + HostFormula>(self, constants: [f64; 2]) -> Result<()> {
                apply_recorded_in_place::<A>(self.1, constants, self.0)
            }
        }
        self.dispatch_in_place(|names| Visit(x, names))
    }

    /// Runs the visitor `visit(names)` makes with the formula an in-place change under autograd records, and
    /// the names its ops run under: the activation's own, except for the ELU family, whose in-place forms save
    /// their result in PyTorch (`elu_`, `selu_`, `celu_`: `elu_backward(…, is_result=True, result)`) where
    /// `alpha >= 0` (PyTorch refuses the backward of a negative one; it runs on a copy here). Their forms whose
    /// gradient reads the result run their backward under its own name, so its kernel is probed on its own.
    fn dispatch_in_place<V: FormulaVisitor>(&self, visit: impl FnOnce(Names) -> V) -> V::Output {
        use kernels::activation::{CeluOfResult, EluOfResult, SeluOfResult};
        match *self {
            Activation::Elu { alpha } if alpha >= 0.0 => {
                visit((self.name(), "elu_backward(is_result=True)")).visit::<EluOfResult>([alpha, 0.0])
            }
            Activation::Selu => visit((self.name(), "selu_backward(is_result=True)")).visit::<SeluOfResult>([0.0; 2]),
            Activation::Celu { alpha } if alpha >= 0.0 => {
                visit((self.name(), "celu_backward(is_result=True)")).visit::<CeluOfResult>([alpha, 0.0])
            }
            _ => self.dispatch(visit(self.names())),
        }
    }

    /// The activation of every element of `x`, written into `out` (same shape, dtype and device), which is not
    /// reallocated.
    pub fn forward_into(&self, x: &Tensor, out: &Tensor) -> Result<()> {
        let op = self.name();
        check_like(op, x, out, OUTPUT)?;
        struct Visit<'a>(&'a Tensor, &'a Tensor, Names);
        impl FormulaVisitor for Visit<'_> {
            type Output = Result<()>;
            fn visit<A: Formula + HostFormula>(self, constants: [f64; 2]) -> Result<()> {
                run(&ForwardInto(Of::<A>::new(self.2, constants)), &[self.0, self.1])
            }
        }
        self.dispatch(Visit(x, out, self.names()))
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
        struct Visit<'a>(&'a Tensor, &'a Tensor, Names);
        impl FormulaVisitor for Visit<'_> {
            type Output = Result<Tensor>;
            fn visit<A: Formula + HostFormula>(self, constants: [f64; 2]) -> Result<Tensor> {
                run(&Backward(Of::<A>::new(self.2, constants)), &[self.0, self.1])
            }
        }
        self.dispatch(Visit(x, dy, self.names()))
    }

    /// The names of the function and of its backward.
    fn names(&self) -> Names {
        (self.name(), self.backward_name())
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

/// PyTorch's names of a function and of its backward (`("relu", "relu_backward")`): the backward op runs under
/// its own name, so the parity probe checks its kernel on its own.
type Names = (&'static str, &'static str);

/// A formula `A` with its constants: the identity of one activation op.
struct Of<A> {
    names: Names,
    constants: [f64; 2],
    formula: PhantomData<fn() -> A>,
}

impl<A> Of<A> {
    fn new(names: Names, constants: [f64; 2]) -> Self {
        Of {
            names,
            constants,
            formula: PhantomData,
        }
    }
}

impl<A: Formula + HostFormula> Of<A> {
    /// The backward of a forward whose output `y` was saved: `A'(y, dy)` for a formula whose gradient reads
    /// the output ([`HostFormula::gradient_from_output`]), with no recomputation.
    fn gradient_from_result(self, y: Saved) -> Box<dyn BackwardFn> {
        recorded::<A>(move |g: &[Tensor], _: &[bool]| {
            let y = y.get(self.names.0)?;
            Ok(vec![Some(gradient_of::<A, _>(&BackwardOfResult::<A>(self), y, &g[0])?)])
        })
    }
}

/// `backward` as a node's: differentiable for a piecewise-linear formula, which then, in a recorded pass
/// (`create_graph`), multiplies the gradient by its [`slope`] with a recorded product.
fn recorded<A: HostFormula>(
    backward: impl Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
) -> Box<dyn BackwardFn> {
    let formula = Recorded::new(backward);
    if A::PIECEWISE_LINEAR {
        formula.differentiable().boxed()
    } else {
        formula.boxed()
    }
}

/// The backward op `backward` of formula `A` on `(saved, g)`: one unrecorded launch, or in a recorded pass for a
/// piecewise-linear formula `g` times its [`slope`] with a recorded product (so the result differentiates).
fn gradient_of<A: HostFormula, O: Op<Output = Tensor>>(backward: &O, saved: &Tensor, g: &Tensor) -> Result<Tensor> {
    if A::PIECEWISE_LINEAR && is_grad_enabled() {
        g.mul(&slope(backward, saved)?)
    } else {
        run(backward, &[saved, g])
    }
}

/// The derivative of a piecewise-linear formula at `saved`, unrecorded: a constant between its kinks, so
/// `dy` times it differentiates exactly (zero second derivative almost everywhere, as PyTorch's
/// `threshold_backward`).
fn slope<O: Op<Output = Tensor>>(backward: &O, saved: &Tensor) -> Result<Tensor> {
    let _constant = crate::no_grad();
    let saved = saved.detach();
    let ones = Tensor::ones(saved.shape().clone(), saved.dtype()).to_device(saved.device())?;
    run(backward, &[&saved, &ones])
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
    /// `dx = A'(saved, dy)`, `saved` computed from the input; inputs `[x, dy]`; named after the backward.
    Backward
);
activation_op!(
    /// `dx = A'(y, dy)` from the output `y` of a formula whose gradient reads it, or may
    /// ([`HostFormula::gradient_from_output`]); inputs `[y, dy]`; named after the backward.
    BackwardOfResult
);

/// `A(x)` for an element-wise formula that is no activation layer (`exp`, `log`, `clamp`…): the activations'
/// op, so it runs on devices, is probed, and records its gradient (the formula's backward).
pub(crate) fn apply<A: Formula + HostFormula + 'static>(
    names: Names,
    constants: [f64; 2],
    x: &Tensor,
) -> Result<Tensor> {
    run(&Forward(Of::<A>::new(names, constants)), &[x])
}

/// `x = A(x)` for an element-wise formula (`exp_`, `relu_`…), seen through every handle to `x`'s storage: run in
/// place where nothing records, else recorded as PyTorch records an in-place change (see
/// [`Activation::forward_`]).
pub(crate) fn apply_<A: Formula + HostFormula + 'static>(names: Names, constants: [f64; 2], x: &Tensor) -> Result<()> {
    if !(x.requires_grad() && is_grad_enabled()) {
        return run(&ForwardInto(Of::<A>::new(names, constants)), &[x, x]);
    }
    apply_recorded_in_place::<A>(names, constants, x)
}

/// `x = A(x)` under autograd: a formula whose gradient reads its result saves `x` after the change, copying
/// nothing (a later change of `x` fails the backward as PyTorch's version counter does); any other runs on a
/// copy of the input that the backward keeps.
fn apply_recorded_in_place<A: Formula + HostFormula + 'static>(
    names: Names,
    constants: [f64; 2],
    x: &Tensor,
) -> Result<()> {
    if !A::gradient_from_output(constants[0], constants[1]) {
        let forward = Forward(Of::<A>::new(names, constants));
        return super::in_place_recorded(names.0, x, |original| run(&forward, &[original]));
    }
    let of = Of::<A>::new(names, constants);
    super::in_place_recorded_without_copy(
        names.0,
        &[x],
        || super::dispatch(&ForwardInto(of), &[x, x]),
        // The result, as a result: without `x`'s autograd state, which will point to this node (no cycle).
        || of.gradient_from_result(Saved::result(x, names.0)),
    )
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
        self.0.names.0
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        inputs[0].map_float(self.0.names.0, &self.0)
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        inputs[0].map_gpu(self.0.names.0, |dtype, x| {
            kernels::activation::forward::<A>(self.0.constants, dtype, x)
        })
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(Self(self.0), probe_inputs(dtype, false)?)])
    }

    /// Saves the output for a formula whose gradient reads it (PyTorch saves `sigmoid`'s and `tanh`'s
    /// result), else the input.
    fn gradient(&self, inputs: &[&Tensor], output: &Tensor) -> Option<Box<dyn BackwardFn>> {
        let of = self.0;
        if A::GRAD_FROM_OUTPUT {
            return Some(of.gradient_from_result(Saved::result(output, of.names.0)));
        }
        let x = Saved::new(inputs[0]);
        Some(recorded::<A>(move |g: &[Tensor], _: &[bool]| {
            let x = x.get(of.names.0)?;
            Ok(vec![Some(gradient_of::<A, _>(&Backward::<A>(of), x, &g[0])?)])
        }))
    }
}

impl<A: Formula + HostFormula> Op for ForwardInto<A> {
    type Output = ();
    const WRITES: usize = 1;

    fn name(&self) -> &'static str {
        self.0.names.0
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<()> {
        inputs[0].map_float_into(self.0.names.0, &self.0, inputs[1])
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<()> {
        let (x, out, name) = (inputs[0], inputs[1], self.0.names.0);
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
        self.0.names.1
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (x, dy) = (inputs[0], inputs[1]);
        if A::GRAD_FROM_OUTPUT {
            return BackwardOfResult(self.0).cpu(&[&x.map_float(self.0.names.0, &self.0)?, dy]);
        }
        BackwardOfResult(self.0).cpu(inputs)
    }

    fn device(&self, inputs: &[&Tensor], gpu: &GpuDevice) -> Result<Tensor> {
        let (x, dy) = (inputs[0], inputs[1]);
        if A::GRAD_FROM_OUTPUT {
            let dtype = float_type(self.0.names.0, x.dtype())?;
            let y = kernels::activation::forward::<A>(self.0.constants, dtype, &x.gpu_buffer(self.0.names.0)?)
                .map_err(|e| x.kernel_error(self.0.names.0, e))?;
            return BackwardOfResult(self.0).device(&[&x.like_gpu(y), dy], gpu);
        }
        BackwardOfResult(self.0).device(inputs, gpu)
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(Self(self.0), probe_inputs(dtype, true)?)])
    }
}

impl<A: Formula + HostFormula> Op for BackwardOfResult<A> {
    type Output = Tensor;

    fn name(&self) -> &'static str {
        self.0.names.1
    }

    fn cpu(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        inputs[0].zip_float(inputs[1], self.0.names.1, &Grad(self.0))
    }

    fn device(&self, inputs: &[&Tensor], _: &GpuDevice) -> Result<Tensor> {
        let (saved, dy, name) = (inputs[0], inputs[1], self.0.names.1);
        let dtype = float_type(name, saved.dtype())?;
        let dx = kernels::activation::backward::<A>(
            self.0.constants,
            dtype,
            &saved.gpu_buffer(name)?,
            &dy.gpu_buffer(name)?,
        )
        .map_err(|e| saved.kernel_error(name, e))?;
        Ok(saved.like_gpu(dx))
    }

    fn probe(&self, dtype: DType) -> Result<Vec<(Self, Vec<Tensor>)>> {
        Ok(vec![(Self(self.0), probe_inputs(dtype, true)?)])
    }
}
