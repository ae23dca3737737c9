//! The options of an algorithm's parameter group declared once: [`group_options!`](crate::group_options)
//! writes the struct, its `Default` (PyTorch's defaults) and its conversion to and from PyTorch's
//! `param_groups` entries.

use crate::optim::Hyper;

/// A value a hyperparameter can hold: a number, a flag, a pair, a count or a list.
pub trait HyperValue: Sized {
    /// What the value is, for an error ("a number").
    const KIND: &'static str;
    /// The value as a [`Hyper`].
    fn to_hyper(&self) -> Hyper;
    /// The value a [`Hyper`] holds, `None` when it is of another kind.
    fn from_hyper(hyper: &Hyper) -> Option<Self>;
}

/// `HyperValue` for a type held by one `Hyper` variant of one field.
macro_rules! hyper_value {
    ($($ty:ty => $variant:ident, $kind:literal;)*) => {$(
        impl HyperValue for $ty {
            const KIND: &'static str = $kind;
            fn to_hyper(&self) -> Hyper {
                Hyper::$variant(self.clone())
            }
            fn from_hyper(hyper: &Hyper) -> Option<$ty> {
                if let Hyper::$variant(v) = hyper { Some(v.clone()) } else { None }
            }
        }
    )*};
}

hyper_value! {
    f64 => Float, "a number";
    bool => Bool, "a bool";
    i64 => Int, "an integer";
    Vec<f64> => List, "a list";
}

impl HyperValue for (f64, f64) {
    const KIND: &'static str = "a pair";
    fn to_hyper(&self) -> Hyper {
        Hyper::Pair(self.0, self.1)
    }
    fn from_hyper(hyper: &Hyper) -> Option<(f64, f64)> {
        if let Hyper::Pair(a, b) = hyper {
            Some((*a, *b))
        } else {
            None
        }
    }
}

/// A pair whose first value may be Python's `None` (Adafactor's `eps`), held as NaN in a [`Hyper::Pair`].
impl HyperValue for (Option<f64>, f64) {
    const KIND: &'static str = "a pair";
    fn to_hyper(&self) -> Hyper {
        Hyper::Pair(self.0.unwrap_or(f64::NAN), self.1)
    }
    fn from_hyper(hyper: &Hyper) -> Option<(Option<f64>, f64)> {
        if let Hyper::Pair(a, b) = hyper {
            Some(((!a.is_nan()).then_some(*a), *b))
        } else {
            None
        }
    }
}

impl HyperValue for Vec<i64> {
    const KIND: &'static str = "a list";
    fn to_hyper(&self) -> Hyper {
        Hyper::List(self.iter().map(|v| *v as f64).collect())
    }
    fn from_hyper(hyper: &Hyper) -> Option<Vec<i64>> {
        if let Hyper::List(v) = hyper {
            Some(v.iter().map(|x| *x as i64).collect())
        } else {
            None
        }
    }
}

/// Declares a group's options: each field with its doc, type and PyTorch's default, in PyTorch's order (the
/// order of `param_groups`); `=> "name"` after a default marks a field PyTorch requires to be finite and `>= 0`
/// (checked in field order by the generated `validate`, the error naming the optimizer `for "…"` and the
/// field); `@momentum = [field]` names what a scheduler cycles; `@check = f;` adds a check of its own
/// (`f`: a `fn(&Options) -> Result<()>` or a closure, after the others). The struct needs an `lr` field. The built-in
/// optimizers are declared with it; so is a user's:
///
/// ```
/// use nn::optim::{Algorithm, Optim, Optimizer, ParamState};
/// use nn::prelude::*;
///
/// nn::group_options! {
///     /// signSGD's options.
///     pub struct SignSgdOptions for "SignSGD" {
///         /// Learning rate.
///         lr: f64 = 1e-3 => "learning rate",
///     }
/// }
///
/// /// signSGD: every element steps by `lr` against its gradient's sign.
/// struct SignSgd;
///
/// impl Algorithm for SignSgd {
///     type Options = SignSgdOptions;
///     const NAME: &'static str = "SignSGD";
///     fn update(o: &SignSgdOptions, param: &Tensor, grad: &Tensor, _: &mut ParamState) -> nn::Result<()> {
///         param.sub_(&grad.sign()?.mul_scalar(o.lr)?)
///     }
/// }
///
/// let fc = Linear::new(2, 1, false);
/// let mut opt = Optim::<SignSgd>::new(fc.parameters(), SignSgdOptions { lr: 0.5 })?;
/// let before = fc.weight.data().to_vec::<f32>()?;
/// fc.forward(Tensor::ones([1, 2], DType::F32))?.sum_all()?.backward()?;
/// opt.step()?;
/// assert_eq!(fc.weight.data().to_vec::<f32>()?, [before[0] - 0.5, before[1] - 0.5]);
/// assert!(Optim::<SignSgd>::new(fc.parameters(), SignSgdOptions { lr: -1.0 }).is_err());
/// # Ok::<(), nn::Error>(())
/// ```
#[macro_export]
macro_rules! group_options {
    (
        $(#[$meta:meta])*
        pub struct $name:ident for $op:literal {
            $( $(#[$field_meta:meta])* $field:ident : $ty:ty = $default:expr $(=> $what:literal)? , )*
        }
        $( @momentum = [ $($momentum:tt)+ ]; )?
        $( @check = $check:expr; )?
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> $name {
                $name { $( $field: $default, )* }
            }
        }

        impl $crate::optim::GroupOptions for $name {
            fn lr(&self) -> f64 {
                self.lr
            }

            fn set_lr(&mut self, lr: f64) {
                self.lr = lr;
            }

            $(
                fn momentum(&self) -> Option<f64> {
                    Some(self.$($momentum)+)
                }

                fn set_momentum(&mut self, momentum: f64) -> bool {
                    self.$($momentum)+ = momentum;
                    true
                }
            )?

            fn validate(&self) -> $crate::Result<()> {
                $crate::optim::check_non_negative($op, &[ $( $( ($what, self.$field), )? )* ])?;
                $( ($check)(self)?; )?
                Ok(())
            }

            fn to_hypers(&self) -> Vec<(&'static str, $crate::optim::Hyper)> {
                vec![ $( (stringify!($field), $crate::optim::HyperValue::to_hyper(&self.$field)), )* ]
            }

            fn with_hypers(
                &self,
                hypers: &std::collections::BTreeMap<String, $crate::optim::Hyper>,
            ) -> $crate::Result<$name> {
                let mut options = self.clone();
                for (key, value) in hypers {
                    match key.as_str() {
                        $( stringify!($field) => options.$field = value.get(key)?, )*
                        _ => {}
                    }
                }
                Ok(options)
            }
        }
    };
}
