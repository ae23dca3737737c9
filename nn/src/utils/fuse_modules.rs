//! [`fuse_modules`]: PyTorch's `torch.ao.quantization.fuse_modules`, which replaces groups of layers in a model
//! (a convolution, its batch norm, its ReLU) by one fused module and identities.

use super::fusion::{fuse_conv_bn_eval, fuse_linear_bn_eval};
use crate::layers::{BNReLU2d, BatchNorm1d, BatchNorm2d, Conv2d, ConvReLU2d, Identity, Linear, LinearReLU, ReLU};
use crate::module::access::{get_submodule, set_submodule};
use crate::module::{Child, Replacement, TensorModule};
use crate::{Error, Module, ModuleDict, ModuleList, Result, Sequential};

const OP: &str = "fuse_modules";

/// PyTorch's `fuse_modules(model, modules_to_fuse, inplace=True)`: each group of dotted paths names layers
/// that run one after the other; the first is replaced by their fusion and the others by `Identity` (in the
/// first one's mode). The groups PyTorch's default fuser knows:
///
/// | layers | fused into |
/// |---|---|
/// | `Conv2d`, `BatchNorm2d` | `Conv2d` ([`fuse_conv_bn_eval`]) |
/// | `Conv2d`, `BatchNorm2d`, `ReLU` | [`ConvReLU2d`] of the folded `Conv2d` |
/// | `Conv2d`, `ReLU` | [`ConvReLU2d`] |
/// | `Linear`, `BatchNorm1d` | `Linear` ([`fuse_linear_bn_eval`]) |
/// | `Linear`, `ReLU` | [`LinearReLU`] |
/// | `BatchNorm2d`, `ReLU` | [`BNReLU2d`] |
///
/// A batch norm folds only in eval (`"Fusion only for eval!"`), with the layers of a group in one mode. A
/// layer held in a `Box<dyn TensorModule>` or a [`Shared`](crate::Shared) counts as its own type. The fused
/// modules hold the same parameters as the layers they replace where nothing is folded (a `ConvReLU2d` of a
/// convolution and a ReLU) and new ones where a batch norm is.
///
/// Differences from PyTorch, each for a reason of Rust's types:
/// - The model changes in place (PyTorch's `inplace=True`); every group is checked and computed before any slot
///   changes, so an error leaves the model as it was.
/// - A slot keeps its type: the fused module goes into an item of a `Sequential`, `ModuleList` or `ModuleDict`,
///   a `Box<dyn TensorModule>` (shared or not) or a slot of its own type (a `Conv2d` field takes a folded
///   `Conv2d`); a field typed `BatchNorm2d` cannot hold an `Identity`, and is reported as an error naming its
///   path.
/// - Hooks are typed by their module, so the forward pre-hooks of the first layer and forward hooks of the last
///   cannot move to the fused module as PyTorch moves them: a layer with forward or backward hooks is refused
///   (fuse first, then register the hooks on the fused module).
/// - The ReLU in a fused module is a copy of the model's (it has no parameters); PyTorch holds the same object.
///   The fused module starts in its layer's mode (PyTorch's new `ConvReLU2d` is in training mode even in an
///   eval model; its forward does not read the flag).
///
/// ```
/// use nn::functional::Conv2dOptions;
/// use nn::prelude::*;
/// let mut model = Sequential::new()
///     .append(Conv2d::new(3, 8, [3, 3], Conv2dOptions::default(), false).unwrap())
///     .append(BatchNorm2d::new(8))
///     .append(ReLU::new(false));
/// model.eval();
/// let x = Tensor::randn([2, 3, 6, 6], DType::F32);
/// let before = model.forward(x.clone()).unwrap().to_vec::<f32>().unwrap();
/// nn::utils::fuse_modules(&mut model, &[["0", "1", "2"]]).unwrap();
/// assert!(model.to_string().starts_with("Sequential(\n  (0): ConvReLU2d(\n    (0): Conv2d(3, 8"));
/// assert!(model.to_string().ends_with("  (1): Identity()\n  (2): Identity()\n)"));
/// let after = model.forward(x).unwrap().to_vec::<f32>().unwrap();
/// assert!(before.iter().zip(&after).all(|(b, a)| (b - a).abs() <= 1e-5 + 1.3e-6 * b.abs()));
/// ```
pub fn fuse_modules<G, S>(model: &mut dyn Module, modules_to_fuse: &[G]) -> Result<()>
where
    G: AsRef<[S]>,
    S: AsRef<str>,
{
    let mut plans: Vec<Plan> = Vec::with_capacity(modules_to_fuse.len());
    for group in modules_to_fuse {
        let paths: Vec<String> = group.as_ref().iter().map(|p| p.as_ref().to_owned()).collect();
        for (i, path) in paths.iter().enumerate() {
            if path.is_empty() {
                return Err(Error::invalid(
                    OP,
                    "an empty path names the model itself, which no fusion replaces",
                ));
            }
            let earlier = plans.iter().flat_map(|p| &p.paths).chain(&paths[..i]);
            if let Some(other) = earlier.into_iter().find(|other| overlap(path, other)) {
                let why = if other == path {
                    format!("`{path}` is named twice")
                } else {
                    format!("`{path}` and `{other}` overlap (one holds the other)")
                };
                return Err(Error::invalid(OP, format!("{why}: each layer fuses once")));
            }
        }
        plans.push(plan(&*model, paths)?);
    }
    for plan in plans {
        let mut slots = plan.slots.into_iter();
        let mut paths = plan.paths.iter();
        let (Some(first), Some(slot)) = (paths.next(), slots.next()) else {
            continue;
        };
        match plan.fused {
            Fused::Conv(m) => put(model, first, m, slot)?,
            Fused::Linear(m) => put(model, first, m, slot)?,
            Fused::ConvRelu(m) => put(model, first, m, slot)?,
            Fused::LinearRelu(m) => put(model, first, m, slot)?,
            Fused::BnRelu(m) => put(model, first, m, slot)?,
        }
        for (path, slot) in paths.zip(slots) {
            let mut identity = Identity::new();
            identity.set_training(plan.identity_training);
            put(model, path, identity, slot)?;
        }
    }
    Ok(())
}

/// What a group fuses into: the module for its first path.
enum Fused {
    Conv(Conv2d),
    Linear(Linear),
    ConvRelu(ConvReLU2d),
    LinearRelu(LinearReLU),
    BnRelu(BNReLU2d),
}

/// How a slot takes its new module.
#[derive(Clone, Copy)]
enum Slot {
    /// As it is: an item of a container, or a slot of the module's own type.
    Own,
    /// Boxed as a `Box<dyn TensorModule>`.
    Boxed,
}

/// A group, checked and computed: its paths, the fused module, and how each slot takes its new module.
struct Plan {
    paths: Vec<String>,
    fused: Fused,
    slots: Vec<Slot>,
    identity_training: bool,
}

/// Whether `a` and `b` are one path or one lies inside the other.
fn overlap(a: &str, b: &str) -> bool {
    let inside = |inner: &str, outer: &str| inner.strip_prefix(outer).is_some_and(|rest| rest.starts_with('.'));
    a == b || inside(a, b) || inside(b, a)
}

/// A group's layers read from `model`, fused, and every slot checked for its new module; nothing changes.
fn plan(model: &dyn Module, paths: Vec<String>) -> Result<Plan> {
    let refs = paths
        .iter()
        .map(|path| get_submodule(OP, model, path, path))
        .collect::<Result<Vec<_>>>()?;
    let layers: Vec<&dyn Module> = refs.iter().map(|m| peel(&**m)).collect();
    for (path, layer) in paths.iter().zip(&layers) {
        if layer.hooks().is_some_and(crate::Hooks::has_call_hooks) {
            return Err(Error::invalid(
                OP,
                format!(
                    "`{path}` has forward or backward hooks, which are typed by their module and cannot move to \
                     the fused module: remove them, fuse, and register them on the fused module"
                ),
            ));
        }
    }
    let fused = fuse(&paths, &layers)?;
    let identity_training = layers.first().is_some_and(|m| m.is_training());
    let mut slots = Vec::with_capacity(paths.len());
    for (i, path) in paths.iter().enumerate() {
        slots.push(match (i, &fused) {
            (0, Fused::Conv(_)) => slot_for::<Conv2d>(model, path)?,
            (0, Fused::Linear(_)) => slot_for::<Linear>(model, path)?,
            (0, Fused::ConvRelu(_)) => slot_for::<ConvReLU2d>(model, path)?,
            (0, Fused::LinearRelu(_)) => slot_for::<LinearReLU>(model, path)?,
            (0, Fused::BnRelu(_)) => slot_for::<BNReLU2d>(model, path)?,
            _ => slot_for::<Identity>(model, path)?,
        });
    }
    Ok(Plan {
        paths,
        fused,
        slots,
        identity_training,
    })
}

/// The module in a `Box<dyn TensorModule>` (through any number of boxes), or the module itself.
fn peel(module: &dyn Module) -> &dyn Module {
    match module.downcast_ref::<Box<dyn TensorModule>>() {
        Some(inner) => peel(&**inner),
        None => module,
    }
}

/// A layer of a group, by the type the fuser matches.
enum Kind<'a> {
    Conv(&'a Conv2d),
    Linear(&'a Linear),
    Bn1(&'a BatchNorm1d),
    Bn2(&'a BatchNorm2d),
    Relu(&'a ReLU),
    Other,
}

impl Kind<'_> {
    fn of(module: &dyn Module) -> Kind<'_> {
        if let Some(m) = module.downcast_ref::<Conv2d>() {
            Kind::Conv(m)
        } else if let Some(m) = module.downcast_ref::<Linear>() {
            Kind::Linear(m)
        } else if let Some(m) = module.downcast_ref::<BatchNorm1d>() {
            Kind::Bn1(m)
        } else if let Some(m) = module.downcast_ref::<BatchNorm2d>() {
            Kind::Bn2(m)
        } else if let Some(m) = module.downcast_ref::<ReLU>() {
            Kind::Relu(m)
        } else {
            Kind::Other
        }
    }
}

/// PyTorch's `fuse_known_modules`' fused module for `layers` (at `paths`).
fn fuse(paths: &[String], layers: &[&dyn Module]) -> Result<Fused> {
    let kinds: Vec<Kind<'_>> = layers.iter().map(|m| Kind::of(*m)).collect();
    let in_group = |e: Error| Error::invalid(OP, format!("fusing {paths:?}: {e}"));
    let one_mode = |first: &str| {
        if layers.iter().all(|m| m.is_training() == layers[0].is_training()) {
            Ok(())
        } else {
            Err(Error::invalid(
                OP,
                format!("fusing {paths:?}: {first} and BN both must be in the same mode (train or eval)."),
            ))
        }
    };
    Ok(match kinds.as_slice() {
        [Kind::Conv(conv), Kind::Bn2(bn)] => {
            one_mode("Conv")?;
            Fused::Conv(fuse_conv_bn_eval(conv, *bn).map_err(in_group)?)
        }
        [Kind::Conv(conv), Kind::Bn2(bn), Kind::Relu(relu)] => {
            one_mode("Conv")?;
            let conv = fuse_conv_bn_eval(conv, *bn).map_err(in_group)?;
            Fused::ConvRelu(ConvReLU2d::new(conv, (*relu).clone()))
        }
        [Kind::Conv(conv), Kind::Relu(relu)] => {
            let conv = conv.with_params(conv.weight.clone(), conv.bias.clone());
            Fused::ConvRelu(ConvReLU2d::new(conv, (*relu).clone()))
        }
        [Kind::Linear(linear), Kind::Bn1(bn)] => {
            one_mode("Linear")?;
            Fused::Linear(fuse_linear_bn_eval(linear, *bn).map_err(in_group)?)
        }
        [Kind::Linear(linear), Kind::Relu(relu)] => {
            let linear = linear.with_params(linear.weight.clone(), linear.bias.clone());
            Fused::LinearRelu(LinearReLU::new(linear, (*relu).clone()))
        }
        [Kind::Bn2(bn), Kind::Relu(relu)] => Fused::BnRelu(BNReLU2d::new(bn.share_copy(), (*relu).clone())),
        _ => {
            let types: Vec<&str> = layers.iter().map(|m| m.type_name()).collect();
            return Err(Error::invalid(
                OP,
                format!(
                    "did not find fuser method for: ({}) at {paths:?}; known: (Conv2d, BatchNorm2d[, ReLU]), \
                     (Conv2d, ReLU), (Linear, BatchNorm1d), (Linear, ReLU), (BatchNorm2d, ReLU)",
                    types.join(", ")
                ),
            ));
        }
    })
}

/// How the slot at `path` takes a new `V`, or the error naming the slot's type when it cannot hold one.
fn slot_for<V: Module>(model: &dyn Module, path: &str) -> Result<Slot> {
    let (parent_path, name) = path.rsplit_once('.').unwrap_or(("", path));
    if name.is_empty() {
        return Err(Error::invalid(OP, format!("`{path}` names no layer inside the model")));
    }
    let parent_ref = get_submodule(OP, model, path, parent_path)?;
    let parent = peel(&*parent_ref);
    // A container's items take any module (a `Sequential`'s any layer).
    if parent.is::<Sequential>() || parent.is::<ModuleList>() || parent.is::<ModuleDict>() {
        return Ok(Slot::Own);
    }
    let judge = |m: &dyn Module| {
        if m.is::<Box<dyn TensorModule>>() {
            Ok(Slot::Boxed)
        } else if m.is::<V>() {
            Ok(Slot::Own)
        } else {
            Err(m.type_name())
        }
    };
    let verdict = match parent.child(name) {
        Some(Child::Owned(m)) => judge(m),
        Some(Child::Shared(s)) => {
            let mut verdict = Err("");
            s.with_ref(&mut |m| verdict = judge(m));
            verdict
        }
        None => Err(""),
    };
    let v_name = std::any::type_name::<V>().rsplit("::").next().unwrap_or_default();
    verdict.map_err(|held| {
        Error::invalid(
            OP,
            format!(
                "`{path}` is a slot that holds a `{held}` and cannot hold the `{v_name}` fusing puts there: fuse \
                 layers held in a `Sequential`, `ModuleList` or `ModuleDict`, in `Box<dyn TensorModule>` fields, or \
                 in fields of the new type"
            ),
        )
    })
}

/// Puts `value` in the slot at `path`, as `slot` says it takes it.
fn put<V: TensorModule>(model: &mut dyn Module, path: &str, value: V, slot: Slot) -> Result<()> {
    let replacement = match slot {
        Slot::Own => Replacement::layer(value),
        Slot::Boxed => Replacement::layer(Box::new(value) as Box<dyn TensorModule>),
    };
    set_submodule(model, path, replacement)
}
