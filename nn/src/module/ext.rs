//! [`ModuleExt`]: PyTorch's `nn.Module` API on every module, built on `visit` and `visit_mut`.

use std::path::Path;
use std::sync::Arc;

use super::access;
use super::load::{IncompatibleKeys, LoadOptions, load_state_dict};
use super::module_ref::{self, ModuleMut, ModuleRef};
use super::state::{self, StateDictOptions};
use super::transform;
use super::walk::{self, WalkOptions, Walker, WalkerMut};
use super::{Layer, Module, ModuleField, Replacement};
use crate::hooks::state as hook_state;
use crate::hooks::{HookHandle, HookKind};
use crate::io::StateDict;
use crate::{DType, Device, Error, Param, Result, Tensor};

/// Gives any module, sized or not, as `&dyn Module`.
pub trait AsDynModule {
    /// The module as a trait object.
    fn as_dyn(&self) -> &dyn Module;
    /// The module as a mutable trait object.
    fn as_dyn_mut(&mut self) -> &mut dyn Module;
    /// [`ModuleExt::walk`]: with static dispatch down a sized module's tree, through `visit` on a trait object.
    fn walk_typed<W: Walker + ?Sized>(&self, walker: &mut W, options: WalkOptions<'_>);
    /// [`ModuleExt::walk_mut`], likewise.
    fn walk_mut_typed<W: WalkerMut + ?Sized>(&mut self, walker: &mut W, remove_duplicate: bool);
}

/// `AsDynModule` for each `[generics] type => walk, walk_mut;`: a sized module walks through its static visitor,
/// `dyn Module` through the object; nothing else differs.
macro_rules! as_dyn_module {
    ($([$($generics:tt)*] $ty:ty => $walk:path, $walk_mut:path;)*) => {$(
        impl<$($generics)*> AsDynModule for $ty {
            fn as_dyn(&self) -> &dyn Module {
                self
            }
            fn as_dyn_mut(&mut self) -> &mut dyn Module {
                self
            }
            fn walk_typed<W: Walker + ?Sized>(&self, walker: &mut W, options: WalkOptions<'_>) {
                $walk(self, walker, options)
            }
            fn walk_mut_typed<W: WalkerMut + ?Sized>(&mut self, walker: &mut W, remove_duplicate: bool) {
                $walk_mut(self, walker, "", remove_duplicate)
            }
        }
    )*};
}

as_dyn_module! {
    [M: Module] M => walk::walk_static, walk::walk_mut_static;
    [] dyn Module => walk::walk_with, walk::walk_mut_with;
}

/// The parameters and buffers a walk reaches, with their paths.
#[derive(Default)]
struct Named {
    params: Vec<(String, Param)>,
    buffers: Vec<(String, Tensor)>,
}

impl Named {
    /// What a walk of `module` with `options` reaches.
    fn of<M: ModuleExt + ?Sized>(module: &M, options: WalkOptions<'_>) -> Named {
        let mut named = Named::default();
        module.walk(&mut named, options);
        named
    }
}

impl Walker for Named {
    fn param(&mut self, path: &str, param: &Param) {
        self.params.push((path.to_owned(), param.clone()));
    }
    fn buffer(&mut self, path: &str, buffer: &Tensor, _: bool) {
        self.buffers.push((path.to_owned(), buffer.clone()));
    }
}

/// A `register_*_hook` method of the state-dict and load hooks: `hook` (a function of these arguments) is
/// boxed as its hook type and registered under its kind on this module.
macro_rules! state_hook {
    ($(#[$doc:meta])* $method:ident($($arg:ty),*) as $hook:ident in $kind:ident) => {
        $(#[$doc])*
        fn $method(&mut self, hook: impl Fn($($arg),*) + Send + Sync + 'static) -> Result<HookHandle> {
            let hook: hook_state::$hook = Box::new(hook);
            hook_state::register(self.as_dyn_mut(), stringify!($method), HookKind::$kind, Arc::new(hook))
        }
    };
}

/// PyTorch's `nn.Module` API, for every [`Module`] (and `dyn Module`).
///
/// Orders, keys and de-duplication follow PyTorch: a module's own parameters, then its own buffers, then its
/// children in declaration order; a shared module or tied parameter is listed once by the `named_*` methods
/// unless `remove_duplicate` is false, and appears under every path in `state_dict`.
///
/// ```
/// use nn::prelude::*;
///
/// #[derive(Module)]
/// struct Block {
///     fc: Linear,
///     #[buffer]
///     scale: Tensor,
/// }
///
/// #[derive(Module)]
/// struct Net {
///     blocks: Vec<Block>,
/// }
///
/// let block = || Block { fc: Linear::new(4, 4, true), scale: Tensor::ones([4], DType::F32) };
/// let mut net = Net { blocks: vec![block(), block()] };
/// let names: Vec<String> = net.named_parameters().into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["blocks.0.fc.weight", "blocks.0.fc.bias", "blocks.1.fc.weight", "blocks.1.fc.bias"]);
/// assert_eq!(net.state_dict().keys().next().unwrap(), "blocks.0.scale");
/// net.half().unwrap();
/// assert_eq!(net.get_parameter("blocks.1.fc.weight").unwrap().dtype(), DType::F16);
/// ```
pub trait ModuleExt: AsDynModule {
    /// Walks the tree, reporting every module, parameter and buffer with its dotted path, allocating nothing
    /// unless a member can repeat.
    fn walk<W: Walker + ?Sized>(&self, walker: &mut W, options: WalkOptions<'_>) {
        self.walk_typed(walker, options)
    }

    /// Walks the tree for change; with `remove_duplicate`, shared modules and tied parameters are met once.
    fn walk_mut<W: WalkerMut + ?Sized>(&mut self, walker: &mut W, remove_duplicate: bool) {
        self.walk_mut_typed(walker, remove_duplicate)
    }

    /// Calls `f` with the path of every parameter (each once), without allocating.
    fn visit_parameters(&self, f: impl FnMut(&str, &Param)) {
        struct F<G>(G);
        impl<G: FnMut(&str, &Param)> Walker for F<G> {
            #[inline]
            fn param(&mut self, path: &str, param: &Param) {
                (self.0)(path, param)
            }
        }
        self.walk_typed(&mut F(f), WalkOptions::default())
    }

    /// Calls `f` with the path of every parameter (each once), for change.
    fn visit_parameters_mut(&mut self, f: impl FnMut(&str, &mut Param)) {
        struct F<G>(G);
        impl<G: FnMut(&str, &mut Param)> WalkerMut for F<G> {
            #[inline]
            fn param(&mut self, path: &str, param: &mut Param) {
                (self.0)(path, param)
            }
        }
        self.walk_mut_typed(&mut F(f), true)
    }

    /// Calls `f` with the path of every buffer (each once) and whether it is persistent.
    fn visit_buffers(&self, f: impl FnMut(&str, &Tensor, bool)) {
        struct F<G>(G);
        impl<G: FnMut(&str, &Tensor, bool)> Walker for F<G> {
            #[inline]
            fn buffer(&mut self, path: &str, buffer: &Tensor, persistent: bool) {
                (self.0)(path, buffer, persistent)
            }
        }
        self.walk_typed(&mut F(f), WalkOptions::default())
    }

    /// Calls `f` with the path of every buffer (each once), for change.
    fn visit_buffers_mut(&mut self, f: impl FnMut(&str, &mut Tensor, bool)) {
        struct F<G>(G);
        impl<G: FnMut(&str, &mut Tensor, bool)> WalkerMut for F<G> {
            #[inline]
            fn buffer(&mut self, path: &str, buffer: &mut Tensor, persistent: bool) {
                (self.0)(path, buffer, persistent)
            }
        }
        self.walk_mut_typed(&mut F(f), true)
    }

    /// `named_parameters()`: every parameter with its path, each once.
    fn named_parameters(&self) -> Vec<(String, Param)> {
        self.named_parameters_with("", true, true)
    }

    /// `named_parameters(prefix, recurse, remove_duplicate)`.
    fn named_parameters_with(&self, prefix: &str, recurse: bool, remove_duplicate: bool) -> Vec<(String, Param)> {
        Named::of(self, WalkOptions::new(prefix, recurse, remove_duplicate)).params
    }

    /// `parameters()`: every parameter, each once.
    fn parameters(&self) -> Vec<Param> {
        let mut out = Vec::new();
        self.visit_parameters(|_, p| out.push(p.clone()));
        out
    }

    /// Number of parameter elements (each parameter once).
    fn num_parameters(&self) -> usize {
        let mut n = 0;
        self.visit_parameters(|_, p| n += p.numel());
        n
    }

    /// `named_buffers()`: every buffer (persistent or not) with its path, each once.
    fn named_buffers(&self) -> Vec<(String, Tensor)> {
        self.named_buffers_with("", true, true)
    }

    /// `named_buffers(prefix, recurse, remove_duplicate)`.
    fn named_buffers_with(&self, prefix: &str, recurse: bool, remove_duplicate: bool) -> Vec<(String, Tensor)> {
        Named::of(self, WalkOptions::new(prefix, recurse, remove_duplicate)).buffers
    }

    /// `buffers()`: every buffer, each once.
    fn buffers(&self) -> Vec<Tensor> {
        self.named_buffers().into_iter().map(|(_, b)| b).collect()
    }

    /// `named_children()`: the direct children, each module once.
    fn named_children(&self) -> Vec<(String, ModuleRef<'_>)> {
        module_ref::named_children(self.as_dyn())
    }

    /// `children()`: the direct children, each module once.
    fn children(&self) -> Vec<ModuleRef<'_>> {
        self.named_children().into_iter().map(|(_, m)| m).collect()
    }

    /// `named_modules()`: the whole tree in pre-order, the root first (path `""`), each module once.
    fn named_modules(&self) -> Vec<(String, ModuleRef<'_>)> {
        module_ref::named_modules(self.as_dyn(), "", true)
    }

    /// `named_modules(prefix=..., remove_duplicate=...)`.
    fn named_modules_with(&self, prefix: &str, remove_duplicate: bool) -> Vec<(String, ModuleRef<'_>)> {
        module_ref::named_modules(self.as_dyn(), prefix, remove_duplicate)
    }

    /// `modules()`: the whole tree in pre-order, each module once.
    fn modules(&self) -> Vec<ModuleRef<'_>> {
        self.named_modules().into_iter().map(|(_, m)| m).collect()
    }

    /// `state_dict()`: parameters and persistent buffers (and extra states) under every path, sharing storage
    /// with the module.
    fn state_dict(&self) -> StateDict {
        state::state_dict(self.as_dyn(), "")
    }

    /// `state_dict(prefix=...)`: keys are `prefix + path` (PyTorch's prefix ends with its own `.`).
    fn state_dict_with_prefix(&self, prefix: &str) -> StateDict {
        state::state_dict(self.as_dyn(), prefix)
    }

    /// `state_dict(keep_vars=True)`: each parameter's entry is the parameter's own tensor (it requires grad,
    /// and what is computed from it reaches the parameter's gradient), where `state_dict()` gives a detached
    /// handle on the same storage.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let fc = Linear::new(2, 2, true);
    /// assert!(fc.state_dict_keep_vars()["weight"].requires_grad());
    /// assert!(!fc.state_dict()["weight"].requires_grad());
    /// ```
    fn state_dict_keep_vars(&self) -> StateDict {
        state::state_dict_with(self.as_dyn(), "", true)
    }

    /// `state_dict(prefix=..., keep_vars=...)` with PyTorch's keyword arguments by name, in any combination.
    ///
    /// ```
    /// use nn::prelude::*;
    /// use nn::module::StateDictOptions;
    /// let fc = Linear::new(2, 2, true);
    /// let sd = fc.state_dict_opts(StateDictOptions { prefix: "fc.", keep_vars: true });
    /// assert!(sd["fc.weight"].requires_grad());
    /// ```
    fn state_dict_opts(&self, options: StateDictOptions<'_>) -> StateDict {
        state::state_dict_with(self.as_dyn(), options.prefix, options.keep_vars)
    }

    /// `load_state_dict(state_dict, strict, assign)`.
    ///
    /// Without `assign`, each tensor is copied into the module's storage, cast to the module's dtype and
    /// moved to its device; with `assign`, the module takes the state dict's tensors as they are (their dtype
    /// and device), keeping its parameters' `requires_grad`. A shape mismatch is always an error; missing and
    /// unexpected keys are errors when `strict`. Every problem is reported at once, and a refused load changes
    /// nothing (PyTorch would leave the module half loaded).
    fn load_state_dict(&mut self, state_dict: &StateDict, strict: bool, assign: bool) -> Result<IncompatibleKeys> {
        load_state_dict(self.as_dyn_mut(), state_dict.clone(), strict, assign)
    }

    /// `load_state_dict(state_dict, strict=..., assign=...)` with PyTorch's keyword arguments by name (their
    /// defaults: strict, not assigned); as [`load_state_dict`](Self::load_state_dict).
    ///
    /// ```
    /// use nn::prelude::*;
    /// use nn::module::LoadOptions;
    /// let mut fc = Linear::new(2, 2, true);
    /// let sd = Linear::new(2, 2, false).state_dict();
    /// let keys = fc.load_state_dict_opts(&sd, LoadOptions { strict: false, ..Default::default() })?;
    /// assert_eq!(keys.missing_keys, ["bias"]);
    /// assert!(fc.load_state_dict_opts(&sd, LoadOptions::default()).is_err());
    /// # Ok::<(), nn::Error>(())
    /// ```
    fn load_state_dict_opts(&mut self, state_dict: &StateDict, options: LoadOptions) -> Result<IncompatibleKeys> {
        load_state_dict(self.as_dyn_mut(), state_dict.clone(), options.strict, options.assign)
    }

    /// Writes `state_dict()` to a safetensors file.
    fn save_safetensors(&self, path: impl AsRef<Path>) -> Result<()>
    where
        Self: Sized,
    {
        crate::io::save_safetensors(&self.state_dict(), path.as_ref())
    }

    /// Loads a safetensors file with `load_state_dict(_, strict, assign = false)`.
    fn load_safetensors(&mut self, path: impl AsRef<Path>, strict: bool) -> Result<IncompatibleKeys>
    where
        Self: Sized,
    {
        let sd = crate::io::load_safetensors(path.as_ref())?;
        load_state_dict(self.as_dyn_mut(), sd, strict, false)
    }

    /// [`load_safetensors`](Self::load_safetensors) through a mapping of the file
    /// ([`io::load_safetensors_mmap`](crate::io::load_safetensors_mmap)): each tensor is copied once, from the
    /// page cache straight into the module's parameters and buffers, instead of being read into new memory
    /// first. The same casts, key checks and all-or-nothing contract; a refused load changes nothing.
    ///
    /// # Safety
    ///
    /// The file must not be modified or truncated (by this process or another) during the call, nor while a
    /// load hook keeps a tensor of the state dict it was given: the tensors are read from the file's pages.
    ///
    /// ```
    /// use nn::prelude::*;
    /// let path = std::env::temp_dir().join(format!("nn-doc-load-mmap-{}.safetensors", std::process::id()));
    /// Linear::new(3, 2, true).save_safetensors(&path)?;
    /// let mut fc = Linear::new(3, 2, true);
    /// // SAFETY: nothing writes the file during the call, and the module has no load hooks.
    /// unsafe { fc.load_safetensors_mmap(&path, true) }?;
    /// # std::fs::remove_file(path).ok();
    /// # Ok::<(), nn::Error>(())
    /// ```
    unsafe fn load_safetensors_mmap(&mut self, path: impl AsRef<Path>, strict: bool) -> Result<IncompatibleKeys>
    where
        Self: Sized,
    {
        // SAFETY: this method's contract is the mapped loader's for as long as its tensors live: they live until
        // the load returns (the module copies their elements; none becomes a parameter's storage, since the
        // load does not assign), or as long as a load hook keeps one, which the contract covers too.
        let sd = unsafe { crate::io::load_safetensors_mmap(path.as_ref()) }?;
        load_state_dict(self.as_dyn_mut(), sd, strict, false)
    }

    /// Loads a PyTorch checkpoint (`torch.save(model.state_dict(), path)`, zip or legacy format) with
    /// `load_state_dict(_, strict, assign = false)`: the same casts, key checks and all-or-nothing contract
    /// as [`load_safetensors`](Self::load_safetensors). A checkpoint that nests its weights
    /// (`{"state_dict": …}`) or prefixes them (`DataParallel`'s `module.`) is read with
    /// [`load_pt_with`](Self::load_pt_with).
    ///
    /// ```no_run
    /// use nn::prelude::*;
    /// let mut fc = Linear::new(4, 2, true);
    /// fc.load_pt("linear.pt", true)?;
    /// # Ok::<(), nn::Error>(())
    /// ```
    fn load_pt(&mut self, path: impl AsRef<Path>, strict: bool) -> Result<IncompatibleKeys>
    where
        Self: Sized,
    {
        self.load_pt_with(path, strict, &crate::io::PtOptions::new())
    }

    /// [`load_pt`](Self::load_pt) with where the weights are in the checkpoint and what prefix to strip.
    ///
    /// ```no_run
    /// use nn::{prelude::*, io::PtOptions};
    /// let mut fc = Linear::new(4, 2, true);
    /// fc.load_pt_with("checkpoint.pth", true, &PtOptions::new().key("model").strip_prefix("module."))?;
    /// # Ok::<(), nn::Error>(())
    /// ```
    fn load_pt_with(
        &mut self,
        path: impl AsRef<Path>,
        strict: bool,
        options: &crate::io::PtOptions,
    ) -> Result<IncompatibleKeys>
    where
        Self: Sized,
    {
        let sd = crate::io::pytorch::load_pt_raw(path.as_ref(), options)?;
        load_state_dict(self.as_dyn_mut(), sd, strict, false)
    }

    /// [`load_pt_with`](Self::load_pt_with) through a mapping of the file
    /// ([`io::load_pt_mmap`](crate::io::load_pt_mmap), as `torch.load(path, mmap=True)`): each tensor that is
    /// one range of a zip checkpoint's storage is copied once, from the page cache straight into the module's
    /// parameters and buffers; the others are read as `load_pt_with` reads them. The same casts, key checks and
    /// all-or-nothing contract; a refused load changes nothing. Storages' CRC-32 is not checked, as PyTorch's
    /// loader does not check it.
    ///
    /// # Safety
    ///
    /// The file must not be modified or truncated (by this process or another) during the call, nor while a
    /// load hook keeps a tensor of the state dict it was given: the tensors are read from the file's pages.
    ///
    /// ```no_run
    /// use nn::{prelude::*, io::PtOptions};
    /// let mut fc = Linear::new(4, 2, true);
    /// // SAFETY: nothing writes the file during the call, and the module has no load hooks.
    /// unsafe { fc.load_pt_mmap("linear.pt", true, &PtOptions::new()) }?;
    /// # Ok::<(), nn::Error>(())
    /// ```
    unsafe fn load_pt_mmap(
        &mut self,
        path: impl AsRef<Path>,
        strict: bool,
        options: &crate::io::PtOptions,
    ) -> Result<IncompatibleKeys>
    where
        Self: Sized,
    {
        // SAFETY: this method's contract is the mapped loader's for as long as its tensors live: they live until
        // the load returns (the module copies their elements; none becomes a parameter's storage, since the
        // load does not assign), or as long as a load hook keeps one, which the contract covers too.
        let sd = unsafe { crate::io::load_pt_mmap(path.as_ref(), options) }?;
        load_state_dict(self.as_dyn_mut(), sd, strict, false)
    }

    /// `get_submodule("a.b")`: the module at a dotted path (`""` is this module).
    fn get_submodule(&self, path: &str) -> Result<ModuleRef<'_>> {
        access::get_submodule("get_submodule", self.as_dyn(), path, path)
    }

    /// The module at a dotted path, for change (to register hooks on it, or replace its members).
    fn get_submodule_mut(&mut self, path: &str) -> Result<ModuleMut<'_>> {
        access::get_submodule_mut("get_submodule_mut", self.as_dyn_mut(), path, path)
    }

    /// `get_parameter("a.b.weight")`.
    fn get_parameter(&self, path: &str) -> Result<Param> {
        access::get_parameter(self.as_dyn(), path)
    }

    /// `get_buffer("a.b.running_mean")`.
    fn get_buffer(&self, path: &str) -> Result<Tensor> {
        access::get_buffer(self.as_dyn(), path)
    }

    /// `set_submodule("a.b", module)`: replaces the child at a dotted path. A typed slot takes a value of its
    /// type (a `Shared<M>` slot also an `M`); a `Sequential` item needs [`set_layer`](Self::set_layer).
    fn set_submodule<M: ModuleField>(&mut self, path: &str, module: M) -> Result<()> {
        access::set_submodule(self.as_dyn_mut(), path, Replacement::module(module))
    }

    /// [`set_submodule`](Self::set_submodule) with a layer, which also fits a `Sequential` item.
    fn set_layer<M: ModuleField + Into<Layer>>(&mut self, path: &str, layer: M) -> Result<()> {
        access::set_submodule(self.as_dyn_mut(), path, Replacement::layer(layer))
    }

    state_hook!(
        /// PyTorch's `register_state_dict_pre_hook(hook)`: `hook(module, prefix)` runs before this module's
        /// entries are written by `state_dict`.
        register_state_dict_pre_hook(&dyn Module, &str) as StateDictPreHook in StateDictPre
    );

    state_hook!(
        /// PyTorch's `register_state_dict_post_hook(hook)`: `hook(module, state_dict, prefix)` runs after this
        /// module's entries and its children's are written, and may edit the state dict.
        register_state_dict_post_hook(&dyn Module, &mut StateDict, &str) as StateDictPostHook in StateDictPost
    );

    state_hook!(
        /// PyTorch's `register_load_state_dict_pre_hook(hook)`: `hook(module, state_dict, prefix)` runs before
        /// this module's entries are read by `load_state_dict`, and may edit the incoming state dict (rename
        /// legacy keys).
        register_load_state_dict_pre_hook(&dyn Module, &mut StateDict, &str) as LoadPreHook in LoadStateDictPre
    );

    state_hook!(
        /// PyTorch's `register_load_state_dict_post_hook(hook)`: `hook(module, incompatible_keys)` runs after
        /// this module's entries and its children's are loaded, and may edit the missing and unexpected keys,
        /// which `strict` then judges.
        register_load_state_dict_post_hook(&dyn Module, &mut IncompatibleKeys) as LoadPostHook in LoadStateDictPost
    );

    /// `train(mode)`: sets the mode of every module.
    fn train(&mut self, mode: bool) -> &mut Self {
        transform::set_training(self.as_dyn_mut(), mode);
        self
    }

    /// `eval()`: `train(false)`.
    fn eval(&mut self) -> &mut Self {
        self.train(false)
    }

    /// `apply(fn)`: `fn` on every child recursively (children first), then on this module.
    fn apply(&mut self, f: &mut dyn FnMut(&mut dyn Module)) -> &mut Self {
        transform::apply_fn(self.as_dyn_mut(), f);
        self
    }

    /// `to(dtype)`: casts every floating-point parameter, gradient and buffer; integer and bool tensors (such
    /// as `num_batches_tracked`) keep their dtype. `dtype` must be a floating-point type.
    fn to_dtype(&mut self, dtype: DType) -> Result<&mut Self> {
        if !dtype.is_floating_point() {
            return Err(Error::UnsupportedDType {
                op: "Module::to_dtype",
                dtype,
                hint: "; a module casts to floating-point dtypes only (its integer buffers keep theirs)",
            });
        }
        transform::apply_to_tensors(self.as_dyn_mut(), &|t| {
            if t.is_floating_point() {
                t.to_dtype(dtype).map(Some)
            } else {
                Ok(None)
            }
        })?;
        Ok(self)
    }

    /// `half()`: `to_dtype(F16)`.
    fn half(&mut self) -> Result<&mut Self> {
        self.to_dtype(DType::F16)
    }

    /// `bfloat16()`: `to_dtype(BF16)`.
    fn bfloat16(&mut self) -> Result<&mut Self> {
        self.to_dtype(DType::BF16)
    }

    /// `float()`: `to_dtype(F32)`.
    fn float(&mut self) -> Result<&mut Self> {
        self.to_dtype(DType::F32)
    }

    /// `double()`: `to_dtype(F64)`.
    fn double(&mut self) -> Result<&mut Self> {
        self.to_dtype(DType::F64)
    }

    /// `to(device)`: moves every parameter, gradient and buffer; all or nothing.
    fn to_device(&mut self, device: Device) -> Result<&mut Self> {
        transform::apply_to_tensors(self.as_dyn_mut(), &|t| t.to_device(device).map(Some))?;
        Ok(self)
    }

    /// `cpu()`.
    fn cpu(&mut self) -> Result<&mut Self> {
        self.to_device(Device::Cpu)
    }

    /// `cuda(index)`.
    fn cuda(&mut self, index: usize) -> Result<&mut Self> {
        self.to_device(Device::Cuda(index))
    }

    /// `wgpu(index)`: the module on cubecl's wgpu runtime.
    fn wgpu(&mut self, index: usize) -> Result<&mut Self> {
        self.to_device(Device::Wgpu(index))
    }

    /// `to_empty(device)`: new tensors of the same shapes and dtypes on `device`, without copying the data
    /// (they are zero-filled rather than left uninitialised).
    fn to_empty(&mut self, device: Device) -> Result<&mut Self> {
        transform::apply_to_tensors(self.as_dyn_mut(), &|t| {
            Tensor::zeros(t.shape().clone(), t.dtype()).to_device(device).map(Some)
        })?;
        Ok(self)
    }

    /// `requires_grad_(on)`: sets whether every parameter requires gradients.
    fn requires_grad_(&mut self, on: bool) -> Result<&mut Self> {
        let mut refused = None;
        if on {
            self.visit_parameters(|path, p| {
                if refused.is_none() && !p.dtype().is_floating_point() {
                    refused = Some(Error::invalid(
                        "requires_grad_",
                        format!(
                            "parameter {path} is {}; only floating-point parameters can require gradients",
                            p.dtype()
                        ),
                    ));
                }
            });
        }
        if let Some(e) = refused {
            return Err(e);
        }
        self.visit_parameters(|_, p| {
            let _ = p.set_requires_grad(on);
        });
        Ok(self)
    }

    /// `zero_grad(set_to_none)`: drops every gradient, or fills it with zeros.
    fn zero_grad(&mut self, set_to_none: bool) {
        self.visit_parameters(|_, p| {
            if set_to_none {
                let _ = p.set_grad(None);
            } else if let Some(g) = p.grad() {
                let _ = g.zero_();
            }
        });
    }
}

impl<T: AsDynModule + ?Sized> ModuleExt for T {}
