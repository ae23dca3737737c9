//! The normalising activations over one dimension: [`Softmax`], [`LogSoftmax`], [`Softmin`], and
//! [`Softmax2d`] over the channels of an image.

use crate::module::ExtraRepr;
use crate::{Module, Tensor};

/// PyTorch's implicit dimension when `dim=None`: 0 for tensors of rank 0, 1 or 3, else 1.
fn implicit_dim(rank: usize) -> isize {
    if matches!(rank, 0 | 1 | 3) { 0 } else { 1 }
}

/// A layer of one `dim: Option<isize>` (`None`: PyTorch's legacy implicit choice), printed `dim=…`, that runs
/// `$f(x, dim)`.
macro_rules! dim_layer {
    ($(#[$doc:meta])* $layer:ident, |$x:ident, $dim:ident| $f:expr) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(extra_repr)]
        pub struct $layer {
            /// The dimension normalised (`None`: PyTorch's legacy implicit choice).
            pub dim: Option<isize>,
            training: bool,
            hooks: crate::Hooks,
        }

        impl $layer {
            /// The layer along `dim` (`None` for PyTorch's implicit choice).
            pub fn new(dim: impl Into<Option<isize>>) -> $layer {
                $layer {
                    dim: dim.into(),
                    training: true,
                    hooks: crate::Hooks::new(),
                }
            }
        }

        impl ExtraRepr for $layer {
            fn extra_repr(&self) -> String {
                match self.dim {
                    Some(d) => format!("dim={d}"),
                    None => "dim=None".into(),
                }
            }
        }

        reads_input!($layer, |layer, x| {
            let ($x, $dim): (&Tensor, isize) = (x, layer.dim.unwrap_or_else(|| implicit_dim(x.rank())));
            $f
        });
    };
}

dim_layer!(
    /// PyTorch's `nn.Softmax(dim=None)`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let sm = Softmax::new(-1);
    /// assert_eq!(sm.to_string(), "Softmax(dim=-1)");
    /// let y = sm.forward(Tensor::zeros([2, 4], DType::F32)).unwrap();
    /// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.25; 8]);
    /// ```
    Softmax,
    |x, dim| x.softmax(dim)
);

dim_layer!(
    /// PyTorch's `nn.LogSoftmax(dim=None)`.
    LogSoftmax,
    |x, dim| x.log_softmax(dim)
);

dim_layer!(
    /// PyTorch's `nn.Softmin(dim=None)`: the softmax of `-x` ([`softmin`](crate::functional::softmin)).
    ///
    /// ```
    /// use nn::prelude::*;
    /// assert_eq!(Softmin::new(1).to_string(), "Softmin(dim=1)");
    /// assert_eq!(Softmin::new(None).to_string(), "Softmin(dim=None)");
    /// ```
    Softmin,
    |x, dim| crate::functional::softmin(x, dim)
);

/// PyTorch's `nn.Softmax2d()`: softmax over the channels (dimension -3) at every position of a `(C, H, W)` or
/// `(N, C, H, W)` input. Its backward is [`softmax_backward`](crate::functional::softmax_backward) along -3.
///
/// ```
/// use nn::prelude::*;
/// let sm = Softmax2d::new();
/// assert_eq!(sm.to_string(), "Softmax2d()");
/// let y = sm.forward(Tensor::zeros([1, 4, 2, 2], DType::F32)).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.25; 16]);
/// assert!(sm.forward(Tensor::zeros([4, 2], DType::F32)).is_err());
/// ```
#[derive(Module, Clone, Debug)]
pub struct Softmax2d {
    training: bool,
    hooks: crate::Hooks,
}

impl Softmax2d {
    /// The layer (it has no arguments).
    pub fn new() -> Softmax2d {
        Softmax2d {
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

default_is!(Softmax2d => Softmax2d::new());

reads_input!(Softmax2d, |_layer, x| {
    if !matches!(x.rank(), 3 | 4) {
        return Err(crate::Error::invalid(
            "Softmax2d",
            format!("expected input to be 3D or 4D, got {}D instead", x.rank()),
        ));
    }
    x.softmax(-3)
});
