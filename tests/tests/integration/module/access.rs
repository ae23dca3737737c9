//! Paths, modes, `apply`, and the shapes of struct the derive accepts.

use integration_tests::names;
use integration_tests::zoo::{Block, Zoo};
use nn::module::{MemberKind, PathErrorKind};
use nn::prelude::*;
use nn::{Error, Result};

fn path_error<T: std::fmt::Debug>(r: Result<T>) -> nn::module::PathError {
    match r {
        Err(Error::Path(e)) => *e,
        other => panic!("expected a path error, got {other:?}"),
    }
}

#[test]
fn get_submodule_follows_nested_and_indexed_paths() {
    let zoo = Zoo::default();
    assert_eq!(zoo.get_submodule("").unwrap().type_name(), "Zoo");
    assert_eq!(zoo.get_submodule("blocks").unwrap().type_name(), "ModuleList");
    assert_eq!(zoo.get_submodule("blocks.1.act").unwrap().type_name(), "GELU");
    assert_eq!(
        zoo.get_submodule("heads.value.2").unwrap().to_string(),
        "Threshold(threshold=0.1, value=20.0)"
    );
    // Through a shared module.
    let prelu = zoo.get_submodule("heads.value.1").unwrap();
    assert_eq!(prelu.downcast_ref::<PReLU>().unwrap().num_parameters, 3);
}

#[test]
fn bad_paths_name_the_failing_component() {
    let zoo = Zoo::default();
    let e = path_error(zoo.get_submodule("blocks.5.fc"));
    assert_eq!(
        (e.parent.as_str(), e.component.as_str(), e.kind.clone()),
        ("blocks", "5", PathErrorKind::NoChild)
    );
    assert_eq!(
        e.to_string(),
        "get_submodule(\"blocks.5.fc\"): `blocks` (ModuleList) has no child module `5`"
    );

    let e = path_error(zoo.get_submodule("embed.weight"));
    assert_eq!(
        e.kind,
        PathErrorKind::WrongKind {
            wanted: "a module",
            found: "a parameter"
        }
    );
    assert_eq!(
        e.to_string(),
        "get_submodule(\"embed.weight\"): `weight` in `embed` (Linear) is a parameter, not a module"
    );

    let e = path_error(zoo.get_submodule("nope"));
    assert_eq!(
        e.to_string(),
        "get_submodule(\"nope\"): the root (Zoo) has no child module `nope`"
    );

    let e = path_error(zoo.get_submodule("blocks.01"));
    assert_eq!(e.component, "01", "indices are written as PyTorch writes them");
}

#[test]
fn get_parameter_and_get_buffer() {
    let zoo = Zoo::default();
    assert_eq!(zoo.get_parameter("blocks.0.fc.bias").unwrap().shape(), [4]);
    assert_eq!(zoo.get_parameter("alphas.1").unwrap().shape(), [2, 2]);
    assert!(
        zoo.get_parameter("heads.policy.1.weight")
            .unwrap()
            .ptr_eq(&zoo.get_parameter("heads.value.1.weight").unwrap())
    );
    assert_eq!(zoo.get_buffer("steps").unwrap().dtype(), DType::I64);
    assert_eq!(zoo.get_buffer("blocks.1.cache").unwrap().shape(), &[2]);

    let e = path_error(zoo.get_parameter("blocks.0.scale"));
    assert_eq!(
        e.kind,
        PathErrorKind::WrongKind {
            wanted: "a parameter",
            found: "a buffer"
        }
    );
    let e = path_error(zoo.get_parameter("embed.bias"));
    assert_eq!(e.kind, PathErrorKind::NoParameter, "embed has no bias");
    let e = path_error(zoo.get_buffer("blocks.0.fc.weight"));
    assert_eq!(
        e.kind,
        PathErrorKind::WrongKind {
            wanted: "a buffer",
            found: "a parameter"
        }
    );
    let e = path_error(zoo.get_buffer("blocks.9.scale"));
    assert_eq!((e.component.as_str(), e.kind), ("9", PathErrorKind::NoChild));
}

#[test]
fn set_submodule_replaces_typed_slots_and_checks_types() {
    let mut zoo = Zoo::default();
    zoo.set_submodule("embed", Linear::new(2, 4, true)).unwrap();
    assert!(zoo.embed.bias.is_some());
    zoo.set_submodule("blocks.1", Block::default()).unwrap();

    let e = path_error(zoo.set_submodule("embed", ReLU::new(false)));
    assert!(
        matches!(e.kind, PathErrorKind::Refused(ref why) if why.contains("`Linear`") && why.contains("`ReLU`")),
        "{e}"
    );
    let e = path_error(zoo.set_submodule("blocks.7", Block::default()));
    assert_eq!(e.kind, PathErrorKind::NoChild);
    let e = path_error(zoo.set_submodule("steps", Linear::new(1, 1, true)));
    assert_eq!(
        e.kind,
        PathErrorKind::WrongKind {
            wanted: "a module",
            found: "a buffer"
        }
    );

    // A Sequential item takes a layer; a ModuleDict takes any module, also under a new key.
    zoo.set_layer("heads.value.2", ReLU::new(false)).unwrap();
    assert_eq!(zoo.get_submodule("heads.value.2").unwrap().type_name(), "ReLU");
    let e = path_error(zoo.set_submodule("heads.value.2", ReLU::new(false)));
    assert!(matches!(e.kind, PathErrorKind::Refused(_)));
    zoo.set_submodule("heads.aux", Linear::new(4, 1, true)).unwrap();
    assert!(zoo.state_dict().contains_key("heads.aux.weight"));
}

#[test]
fn train_and_eval_reach_every_module() {
    let mut zoo = Zoo::default();
    assert!(zoo.is_training());
    zoo.eval();
    for (path, m) in zoo.named_modules_with("", false) {
        assert!(!m.is_training(), "{path} is still training");
    }
    zoo.get_submodule_mut("blocks.1").unwrap().set_training(true);
    assert!(
        !zoo.get_submodule("blocks.1.fc").unwrap().is_training(),
        "set_training is one module's flag"
    );
    zoo.train(true);
    assert!(zoo.modules().iter().all(|m| m.is_training()));
}

#[test]
fn apply_visits_children_first_then_self() {
    let mut zoo = Zoo::default();
    let mut order = Vec::new();
    zoo.apply(&mut |m| order.push(m.type_name()));
    assert_eq!(
        order,
        [
            "Linear",
            "Linear",
            "GELU",
            "Block",
            "Linear",
            "GELU",
            "Block",
            "ModuleList",
            "Linear",
            "PReLU",
            "Sequential",
            "Linear",
            "PReLU",
            "Threshold",
            "Sequential",
            "ModuleDict",
            "ParameterList",
            "Sigmoid",
            "Tanh",
            "ReLU",
            "Sequential",
            "Zoo",
        ]
    );
    // Re-initialise every Linear through a downcast, as `model.apply(init_weights)` does.
    zoo.apply(&mut |m| {
        if let Some(fc) = m.downcast_mut::<Linear>() {
            fc.weight.data().fill_(0.5).unwrap();
        }
    });
    assert_eq!(
        zoo.get_parameter("blocks.1.fc.weight")
            .unwrap()
            .data()
            .to_vec::<f32>()
            .unwrap(),
        vec![0.5; 16]
    );
}

/// A generic struct with a bound and a where clause.
#[derive(Module)]
struct Residual<M: Module, N>
where
    N: Module,
{
    inner: M,
    skip: Option<N>,
    #[module(skip)]
    scale: f64,
    training: bool,
}

trait Marker: Module {}
impl Marker for Linear {}

#[derive(Module)]
struct Tagged<M: Marker>(M, #[module(rename = "proj")] Linear);

#[test]
fn generic_and_tuple_structs() {
    let mut r: Residual<Linear, Identity> = Residual {
        inner: Linear::new(3, 3, true),
        skip: None,
        scale: 0.5,
        training: true,
    };
    assert_eq!(
        r.state_dict().keys().collect::<Vec<_>>(),
        ["inner.weight", "inner.bias"]
    );
    assert_eq!(
        r.to_string(),
        "Residual(\n  (inner): Linear(in_features=3, out_features=3, bias=True)\n)"
    );
    r.skip = Some(Identity::new());
    assert_eq!(
        r.named_children().iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["inner", "skip"]
    );
    r.eval();
    assert!(!r.is_training() && !r.inner.is_training());
    assert_eq!(r.scale, 0.5);

    let t = Tagged(Linear::new(1, 2, false), Linear::new(2, 1, false));
    assert_eq!(t.state_dict().keys().collect::<Vec<_>>(), ["0.weight", "proj.weight"]);
    assert_eq!(<Tagged<Linear> as nn::module::StaticKeys>::KEYS, ["0", "proj"]);
}

#[derive(Module)]
struct Members {
    weight: Param,
    bias: Option<Param>,
    running: Option<Tensor>,
    layers: Vec<Linear>,
    fixed: [ReLU; 2],
    maybe: Option<Vec<Linear>>,
    boxed: Box<Linear>,
    any: Box<dyn Module>,
}

#[test]
fn option_vec_array_box_members() {
    let m = Members {
        weight: Param::new(Tensor::ones([2], DType::F32)),
        bias: None,
        running: Some(Tensor::zeros([2], DType::F32)),
        layers: vec![Linear::new(2, 2, false), Linear::new(2, 2, false)],
        fixed: [ReLU::new(false), ReLU::new(true)],
        maybe: Some(vec![Linear::new(2, 1, false)]),
        boxed: Box::new(Linear::new(1, 1, false)),
        any: Box::new(Tanh::new()),
    };
    assert_eq!(
        m.state_dict().keys().collect::<Vec<_>>(),
        [
            "weight",
            "running",
            "layers.0.weight",
            "layers.1.weight",
            "maybe.0.weight",
            "boxed.weight"
        ]
    );
    assert_eq!(
        m.to_string(),
        "Members(\n  (layers): ModuleList(\n    (0-1): 2 x Linear(in_features=2, out_features=2, bias=False)\n  )\n  \
         (fixed): ModuleList(\n    (0): ReLU()\n    (1): ReLU(inplace=True)\n  )\n  (maybe): ModuleList(\n    \
         (0): Linear(in_features=2, out_features=1, bias=False)\n  )\n  \
         (boxed): Linear(in_features=1, out_features=1, bias=False)\n  (any): Tanh()\n)"
    );
    assert_eq!(
        <Members as StaticKeys>::MEMBERS,
        [
            ("weight", MemberKind::Param),
            ("bias", MemberKind::Param),
            ("running", MemberKind::Buffer { persistent: true }),
            ("layers", MemberKind::Child),
            ("fixed", MemberKind::Child),
            ("maybe", MemberKind::Child),
            ("boxed", MemberKind::Child),
            ("any", MemberKind::Child),
        ]
    );
}

#[derive(Module)]
struct Twice {
    first: Shared<Linear>,
    list: Vec<Shared<Linear>>,
}

#[test]
fn a_shared_module_is_listed_once_and_changed_everywhere() {
    let fc = Shared::new(Linear::new(2, 2, true));
    let mut m = Twice {
        first: fc.clone(),
        list: vec![fc.clone(), fc],
    };
    assert_eq!(m.named_parameters().len(), 2);
    assert_eq!(m.named_parameters_with("", true, false).len(), 6);
    assert_eq!(m.named_modules().len(), 3, "root, first, list");
    assert_eq!(m.named_modules_with("", false).len(), 5);
    assert_eq!(m.state_dict().len(), 6);
    m.double().unwrap();
    assert_eq!(m.get_parameter("list.1.weight").unwrap().dtype(), DType::F64);
    m.list[0].write().weight.data().fill_(3.0).unwrap();
    assert_eq!(m.first.read().weight.data().to_vec::<f64>().unwrap(), vec![3.0; 4]);
    // Replacing one slot with a plain module unshares that slot only, as a Python setattr.
    m.set_submodule("list.1", Linear::new(2, 2, false)).unwrap();
    assert!(m.list[1].read().bias.is_none() && m.first.read().bias.is_some());
    assert!(m.list[0].ptr_eq(&m.first) && !m.list[1].ptr_eq(&m.first));
}

#[test]
fn casts_move_floats_only_and_all_or_nothing() {
    let mut zoo = Zoo::default();
    zoo.bfloat16().unwrap();
    assert_eq!(zoo.get_parameter("alphas.0").unwrap().dtype(), DType::BF16);
    assert_eq!(zoo.get_buffer("steps").unwrap().dtype(), DType::I64);
    zoo.float().unwrap();
    assert!(
        zoo.to_dtype(DType::I32).is_err(),
        "a module casts to floating-point dtypes only"
    );
    let before = zoo.state_dict().deep_copy().unwrap();
    let Err(err) = zoo.wgpu(7) else {
        panic!("wgpu:7 does not exist here")
    };
    assert!(matches!(err, Error::DeviceUnavailable { .. }), "{err}");
    for (k, t) in &zoo.state_dict() {
        assert!(
            integration_tests::bit_equal(t, &before[k]),
            "{k} changed by a failed move"
        );
    }
    zoo.to_empty(Device::Cpu).unwrap();
    assert_eq!(
        zoo.get_parameter("embed.weight")
            .unwrap()
            .data()
            .to_vec::<f32>()
            .unwrap(),
        vec![0.0; 8]
    );
}

#[test]
fn requires_grad_and_zero_grad() {
    let mut zoo = Zoo::default();
    zoo.requires_grad_(false).unwrap();
    assert!(zoo.parameters().iter().all(|p| !p.requires_grad()));
    zoo.requires_grad_(true).unwrap();
    let p = zoo.get_parameter("embed.weight").unwrap();
    p.set_grad(Some(Tensor::ones([4, 2], DType::F32))).unwrap();
    zoo.zero_grad(false);
    assert_eq!(p.grad().unwrap().to_vec::<f32>().unwrap(), vec![0.0; 8]);
    zoo.zero_grad(true);
    assert!(p.grad().is_none());
}

#[test]
fn prefix_and_recurse_arguments() {
    let zoo = Zoo::default();
    let own = names(zoo.named_parameters_with("model", false, true));
    assert!(own.is_empty(), "Zoo has no parameters of its own: {own:?}");
    let block = Block::default();
    assert_eq!(
        names(block.named_buffers_with("b", false, true)),
        ["b.scale", "b.cache"]
    );
    assert_eq!(
        zoo.state_dict_with_prefix("model.").keys().next().unwrap(),
        "model.steps"
    );
    assert_eq!(zoo.named_modules_with("m", true)[1].0, "m.embed");
}

/// Every event of a walk, as text, to compare two walks.
#[derive(Default, PartialEq, Debug)]
struct Events(Vec<String>);

impl nn::module::Walker for Events {
    fn module(&mut self, path: &str, module: &dyn Module) {
        self.0.push(format!("module {path} {}", module.type_name()));
    }
    fn param(&mut self, path: &str, param: &Param) {
        self.0.push(format!("param {path} {}", param.id()));
    }
    fn buffer(&mut self, path: &str, buffer: &Tensor, persistent: bool) {
        self.0.push(format!("buffer {path} {:?} {persistent}", buffer.shape()));
    }
    fn after_own(&mut self, path: &str, _: &dyn Module) {
        self.0.push(format!("own done {path}"));
    }
    fn module_end(&mut self, path: &str, _: &dyn Module) {
        self.0.push(format!("end {path}"));
    }
}

/// The walk of a sized module (dispatched statically down its derived tree) and the walk of the same module
/// as `&dyn Module` (through `visit`) report the same events, for every combination of options.
fn static_and_dynamic_walks_agree(m: &impl Module) {
    for prefix in ["", "model"] {
        for recurse in [true, false] {
            for remove_duplicate in [true, false] {
                let options = nn::module::WalkOptions {
                    prefix,
                    recurse,
                    remove_duplicate,
                };
                let (mut typed, mut dynamic) = (Events::default(), Events::default());
                m.walk(&mut typed, options);
                let as_dyn: &dyn Module = m;
                as_dyn.walk(&mut dynamic, options);
                assert!(!typed.0.is_empty());
                assert_eq!(typed, dynamic, "{options:?}");
            }
        }
    }
}

/// Every event of a walk for change, as text.
#[derive(Default, PartialEq, Debug)]
struct EventsMut(Vec<String>);

impl nn::module::WalkerMut for EventsMut {
    fn module(&mut self, path: &str, module: &mut dyn Module) {
        self.0.push(format!("module {path} {}", module.type_name()));
    }
    fn param(&mut self, path: &str, param: &mut Param) {
        self.0.push(format!("param {path} {}", param.id()));
    }
    fn buffer(&mut self, path: &str, buffer: &mut Tensor, persistent: bool) {
        self.0.push(format!("buffer {path} {:?} {persistent}", buffer.shape()));
    }
}

/// The same for the walk for change (`walk_mut`, under `visit_parameters_mut`, `zero_grad`, …).
fn static_and_dynamic_walks_for_change_agree(m: &mut impl Module) {
    for remove_duplicate in [true, false] {
        let (mut typed, mut dynamic) = (EventsMut::default(), EventsMut::default());
        m.walk_mut(&mut typed, remove_duplicate);
        let as_dyn: &mut dyn Module = m;
        as_dyn.walk_mut(&mut dynamic, remove_duplicate);
        assert!(!typed.0.is_empty());
        assert_eq!(typed, dynamic, "remove_duplicate: {remove_duplicate}");
    }
}

#[test]
fn typed_walks_equal_walks_through_trait_objects() {
    let shared = Shared::new(Linear::new(2, 2, true));
    let tied = Param::new(Tensor::ones([2], DType::F32));
    let members = Members {
        weight: tied.clone(),
        bias: Some(tied),
        running: Some(Tensor::zeros([2], DType::F32)),
        layers: vec![Linear::new(2, 2, false), Linear::new(2, 2, true)],
        fixed: [ReLU::new(false), ReLU::new(true)],
        maybe: None,
        boxed: Box::new(Linear::new(1, 1, false)),
        any: Box::new(Sequential::new().append(Linear::new(1, 1, true))),
    };
    let mut members = members;
    static_and_dynamic_walks_agree(&members);
    static_and_dynamic_walks_for_change_agree(&mut members);
    let mut twice = Twice {
        first: shared.clone(),
        list: vec![shared.clone(), Shared::new(Linear::new(1, 1, false)), shared],
    };
    static_and_dynamic_walks_agree(&twice);
    static_and_dynamic_walks_for_change_agree(&mut twice);
    let mut zoo = Zoo::default();
    static_and_dynamic_walks_agree(&zoo);
    static_and_dynamic_walks_for_change_agree(&mut zoo);
    assert_eq!(
        names(members.named_parameters()),
        [
            "weight",
            "layers.0.weight",
            "layers.1.weight",
            "layers.1.bias",
            "boxed.weight",
            "any.0.weight",
            "any.0.bias"
        ]
    );
}

#[test]
fn paths_longer_than_the_inline_buffer() {
    #[derive(Module)]
    struct Deep {
        #[module(rename = "a_very_long_member_name_that_takes_up_a_good_part_of_the_inline_path_buffer_on_its_own")]
        inner: Vec<Vec<Vec<Linear>>>,
    }
    let name = "a_very_long_member_name_that_takes_up_a_good_part_of_the_inline_path_buffer_on_its_own";
    let deep = Deep {
        inner: vec![vec![vec![Linear::new(1, 1, true)]]],
    };
    let prefix = "p".repeat(200);
    let mut seen = Vec::new();
    deep.walk(
        &mut {
            struct Collect<'v>(&'v mut Vec<String>);
            impl nn::module::Walker for Collect<'_> {
                fn param(&mut self, path: &str, _: &Param) {
                    self.0.push(path.to_string());
                }
            }
            Collect(&mut seen)
        },
        nn::module::WalkOptions {
            prefix: &prefix,
            recurse: true,
            remove_duplicate: true,
        },
    );
    assert_eq!(
        seen,
        [
            format!("{prefix}.{name}.0.0.0.weight"),
            format!("{prefix}.{name}.0.0.0.bias")
        ]
    );
    let keys: Vec<String> = deep
        .state_dict_with_prefix(&format!("{prefix}."))
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, seen);
}
