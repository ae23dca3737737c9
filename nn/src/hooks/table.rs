//! [`Hooks`]: a module's hook lists.
//!
//! Registering a hook takes the module mutably, so a call reads the lists without any synchronisation: the
//! borrow checker guarantees no registration runs meanwhile. A handle removes its hook from anywhere (even from
//! inside the hook) by setting a flag the call tests; removed entries are dropped at the next registration.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::tensor::ModeMarks;

/// The kinds of hook a module keeps, one list each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookKind {
    /// Before `forward`, may replace the input.
    ForwardPre,
    /// After `forward`, may replace the output.
    Forward,
    /// Before the module's entries are written by `state_dict`.
    StateDictPre,
    /// After the module's entries (and its children's) are written; may edit the state dict.
    StateDictPost,
    /// Before the module's entries are read by `load_state_dict`; may edit the incoming state dict.
    LoadStateDictPre,
    /// After the module's entries (and its children's) are loaded; may edit the missing / unexpected keys.
    LoadStateDictPost,
    /// In the backward pass, with the gradients of the module's inputs and outputs; may replace the inputs'.
    Backward,
    /// In the backward pass, with the gradients of the module's outputs, before the module's own backward; may
    /// replace them.
    BackwardPre,
}

const KINDS: usize = 8;

impl HookKind {
    fn index(self) -> usize {
        self as usize
    }
}

/// How a hook is registered: PyTorch's `prepend` and `always_call`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HookOptions {
    /// Run before the hooks already registered (else after them).
    pub prepend: bool,
    /// For a forward hook: run even when the forward fails (with no output), before the error is returned or
    /// the panic goes on.
    pub always_call: bool,
}

/// One registered hook: the function (typed by its kind, erased here), its options, and the flag its handle
/// sets to remove it.
#[derive(Clone)]
pub(crate) struct Entry {
    pub f: Arc<dyn Any + Send + Sync>,
    pub always_call: bool,
    removed: Arc<AtomicBool>,
}

impl Entry {
    /// Whether the hook is still registered.
    #[inline(always)]
    pub(crate) fn live(&self) -> bool {
        !self.removed.load(Ordering::Acquire)
    }
}

/// A module's hooks. Put a field of this type in a derived struct to give it hooks; it costs a null pointer
/// until the first hook is registered.
///
/// Cloning a module clones its hooks (the same functions, registered anew: removing one through a handle of
/// the original leaves the clone's), as `copy.deepcopy` of a PyTorch module copies its hook dictionaries.
#[derive(Default)]
pub struct Hooks {
    lists: Option<Box<[Vec<Entry>; KINDS]>>,
    /// The modes of the module keeping these hooks, if it has no `training` field, and of handle-less modules
    /// above it (see [`crate::module::mode`]).
    mode_marks: ModeMarks,
}

impl Hooks {
    /// No hooks.
    pub fn new() -> Hooks {
        Hooks {
            lists: None,
            mode_marks: ModeMarks::NONE,
        }
    }

    /// Whether any hook that runs around a call is registered: forward, forward-pre or backward hooks (the
    /// test `call` makes first).
    #[inline(always)]
    pub(crate) fn has_call_hooks(&self) -> bool {
        self.lists.as_ref().is_some_and(|l| {
            [
                HookKind::ForwardPre,
                HookKind::Forward,
                HookKind::Backward,
                HookKind::BackwardPre,
            ]
            .iter()
            .any(|k| !l[k.index()].is_empty())
        })
    }

    /// The hooks of one kind, in running order (removed ones included: test [`Entry::live`]).
    #[inline(always)]
    pub(crate) fn of(&self, kind: HookKind) -> &[Entry] {
        self.lists.as_ref().map_or(&[], |l| &l[kind.index()])
    }

    /// Whether any hook of `kind` is registered.
    pub fn has(&self, kind: HookKind) -> bool {
        self.of(kind).iter().any(Entry::live)
    }

    /// Registers `f` (a hook function of `kind`'s type) and returns the handle that removes it.
    pub(crate) fn add(&mut self, kind: HookKind, f: Arc<dyn Any + Send + Sync>, options: HookOptions) -> HookHandle {
        let lists = self.lists.get_or_insert_with(Default::default);
        for list in lists.iter_mut() {
            list.retain(Entry::live);
        }
        let removed = Arc::new(AtomicBool::new(false));
        let entry = Entry {
            f,
            always_call: options.always_call,
            removed: removed.clone(),
        };
        let list = &mut lists[kind.index()];
        if options.prepend {
            list.insert(0, entry);
        } else {
            list.push(entry);
        }
        HookHandle {
            removed,
            kind,
            global: false,
        }
    }

    /// The same hooks, sharing each entry's removal flag (so that handles reach both): a global table's
    /// next version.
    pub(crate) fn share(&self) -> Hooks {
        let lists = self.lists.as_ref().map(|lists| {
            Box::new(std::array::from_fn(|k| {
                lists[k].iter().filter(|e| e.live()).cloned().collect()
            }))
        });
        Hooks {
            lists,
            mode_marks: ModeMarks::NONE,
        }
    }

    /// Number of hooks of every kind.
    pub fn len(&self) -> usize {
        self.lists
            .as_ref()
            .map_or(0, |l| l.iter().flatten().filter(|e| e.live()).count())
    }

    /// Whether no hook is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The marks of the modes kept here (see [`crate::module::mode`]).
    pub(crate) fn mode_marks(&self) -> ModeMarks {
        self.mode_marks
    }

    /// The marks of the modes kept here, to change (see [`crate::module::mode`]).
    pub(crate) fn mode_marks_mut(&mut self) -> &mut ModeMarks {
        &mut self.mode_marks
    }
}

impl Clone for Hooks {
    fn clone(&self) -> Hooks {
        let lists = self.lists.as_ref().map(|lists| {
            Box::new(std::array::from_fn(|k| {
                lists[k]
                    .iter()
                    .filter(|e| e.live())
                    .map(|e| Entry {
                        f: e.f.clone(),
                        always_call: e.always_call,
                        removed: Arc::default(),
                    })
                    .collect()
            }))
        });
        Hooks {
            lists,
            mode_marks: self.mode_marks,
        }
    }
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Hooks({})", self.len())
    }
}

/// Removes one hook: PyTorch's `RemovableHandle`. Dropping the handle leaves the hook registered.
#[derive(Clone, Debug)]
pub struct HookHandle {
    removed: Arc<AtomicBool>,
    kind: HookKind,
    global: bool,
}

impl HookHandle {
    /// Removes exactly this hook, at once, from anywhere (a hook may remove itself); a no-op the second time.
    pub fn remove(&self) {
        if !self.removed.swap(true, Ordering::AcqRel) && self.global {
            super::global::removed();
        }
    }

    /// The handle of a global hook: removing it also lowers the count of live global hooks.
    pub(crate) fn global(self) -> HookHandle {
        HookHandle { global: true, ..self }
    }

    /// The kind of hook this handle removes.
    pub fn kind(&self) -> HookKind {
        self.kind
    }
}
