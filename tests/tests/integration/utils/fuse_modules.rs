//! `nn::utils::fuse_modules` against PyTorch 2.5.1's `torch.ao.quantization.fuse_modules`
//! (`fixtures/utils/fuse_modules.safetensors` and `fixtures/utils/fuse_modules_repr.txt`, made by
//! `fixtures/generate/fuse_modules.py`): the fused model's `repr`, state dict and output, with the groups of
//! PyTorch's own test (test/quantization/eager/test_fuse_eager.py, `test_fuse_module_eval`: conv + bn + relu,
//! conv + relu, conv + bn, bn + relu, in named fields and in `Sequential`s) plus linear + bn and linear + relu;
//! and the refusals, each of which leaves the model as it was.

use integration_tests::{assert_close, fixture, tensors};
use nn::functional::{Conv2dOptions, Padding2d};
use nn::layers::ConvReLU2d;
use nn::prelude::*;
use nn::utils::fuse_modules;

const GROUPS: [&[&str]; 6] = [
    &["conv1", "bn1", "relu1"],
    &["sub.0", "sub.1"],
    &["block.0", "block.1"],
    &["block.2", "block.3"],
    &["fc", "bn_fc"],
    &["fc2", "relu2"],
];

/// `fuse_modules.py`'s `FusionModel`: the layers a fusion replaces by another type sit in
/// `Box<dyn TensorModule>` fields or `Sequential`s; `fc`, which fuses into a `Linear`, keeps its type.
#[derive(Module)]
struct FusionModel {
    conv1: Box<dyn TensorModule>,
    bn1: Box<dyn TensorModule>,
    relu1: Box<dyn TensorModule>,
    sub: Sequential,
    block: Sequential,
    flatten: Flatten,
    fc: Linear,
    bn_fc: Box<dyn TensorModule>,
    fc2: Box<dyn TensorModule>,
    relu2: Box<dyn TensorModule>,
    training: bool,
}

impl FusionModel {
    fn new() -> FusionModel {
        let conv = |i, o, k, stride, pad, bias| {
            let options = Conv2dOptions {
                stride: [stride, stride],
                padding: Padding2d::Explicit(pad, pad),
                ..Default::default()
            };
            Conv2d::new(i, o, [k, k], options, bias).unwrap()
        };
        FusionModel {
            conv1: Box::new(conv(3, 4, 3, 1, 1, false)),
            bn1: Box::new(BatchNorm2d::with_options(4, 1e-3, Some(0.1), true, true)),
            relu1: Box::new(ReLU::new(true)),
            sub: Sequential::new()
                .append(conv(4, 4, 1, 1, 0, true))
                .append(ReLU::new(false)),
            block: Sequential::new()
                .append(conv(4, 5, 3, 2, 1, true))
                .append(BatchNorm2d::new(5))
                .append(BatchNorm2d::new(5))
                .append(ReLU::new(false)),
            flatten: Flatten::new(1, -1),
            fc: Linear::new(45, 8, true),
            bn_fc: Box::new(BatchNorm1d::new(8)),
            fc2: Box::new(Linear::new(8, 6, true)),
            relu2: Box::new(ReLU::new(false)),
            training: true,
        }
    }

    /// The model with the fixture's weights, in eval.
    fn loaded() -> FusionModel {
        let file = tensors("utils/fuse_modules.safetensors");
        let weights = integration_tests::under(&file, "weights.");
        let mut model = FusionModel::new();
        model.load_state_dict(&weights, true, false).unwrap();
        model.eval();
        model
    }
}

impl Forward for FusionModel {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> nn::Result<Tensor> {
        let x = self.relu1.call(self.bn1.call(self.conv1.call(x)?)?)?;
        let x = self.block.call(self.sub.call(x)?)?;
        let x = self.bn_fc.call(self.fc.call(self.flatten.call(x)?)?)?;
        self.relu2.call(self.fc2.call(x)?)
    }
}

#[test]
fn fused_model_matches_pytorch_repr_state_dict_and_output() {
    let file = tensors("utils/fuse_modules.safetensors");
    let mut model = FusionModel::loaded();
    assert_close("unfused output", &model.forward(file["x"].clone()).unwrap(), &file["y"]);
    fuse_modules(&mut model, &GROUPS).unwrap();

    let want_repr = std::fs::read_to_string(fixture("utils/fuse_modules_repr.txt")).unwrap();
    assert_eq!(format!("{model}\n"), want_repr);
    let got = model.state_dict();
    let want: Vec<(&str, &Tensor)> = file
        .iter()
        .filter_map(|(k, v)| k.strip_prefix("fused.").map(|k| (k, v)))
        .collect();
    let mut want_keys: Vec<&str> = want.iter().map(|(k, _)| *k).collect();
    let mut got_keys: Vec<&str> = got.keys().map(String::as_str).collect();
    // safetensors stores its keys sorted: compare the sets, then every value.
    want_keys.sort();
    got_keys.sort();
    assert_eq!(got_keys, want_keys);
    for (key, value) in want {
        assert_close(key, &got[key], value);
    }
    let y = model.forward(file["x"].clone()).unwrap();
    assert_close("fused output vs PyTorch's fused output", &y, &file["y_fused"]);
    assert_close("fused output vs the unfused output", &y, &file["y"]);
    // The identities take the mode of the first layer of their group (eval here).
    assert!(!model.bn1.is_training() && !model.relu1.is_training() && !model.is_training());
}

#[test]
fn a_conv_and_relu_fuse_around_the_same_parameters() {
    let mut model = FusionModel::loaded();
    let before = model.get_parameter("sub.0.weight").unwrap();
    fuse_modules(&mut model, &[["sub.0", "sub.1"]]).unwrap();
    let fused = model.get_submodule("sub.0").unwrap();
    let fused = fused.downcast_ref::<ConvReLU2d>().expect("a ConvReLU2d");
    assert!(
        fused.conv.weight.ptr_eq(&before),
        "nothing folded: the convolution keeps its parameters"
    );
    assert!(!fused.relu.inplace);
}

#[test]
fn fusion_works_in_training_mode_only_without_a_batch_norm() {
    // PyTorch's `_sequential_wrapper2` groups (conv + relu, linear + relu, bn + relu) run in either mode; a
    // batch norm folds only in eval.
    let mut model = FusionModel::new();
    fuse_modules(&mut model, &[["sub.0", "sub.1"], ["fc2", "relu2"]]).unwrap();
    assert_eq!(model.fc2.type_name(), "LinearReLU");
    assert!(model.fc2.is_training() && model.relu2.is_training());
}

/// `fuse_modules`' error on `model` with `groups`, after checking that the model did not change.
fn refused(mut model: FusionModel, groups: &[&[&str]]) -> String {
    let (repr, state) = (model.to_string(), model.state_dict());
    let err = match fuse_modules(&mut model, groups) {
        Ok(()) => panic!("{groups:?} was not refused"),
        Err(e) => e.to_string(),
    };
    assert_eq!(model.to_string(), repr, "a refused fusion changed the model ({err})");
    let after = model.state_dict();
    assert_eq!(after.keys().collect::<Vec<_>>(), state.keys().collect::<Vec<_>>());
    for (key, t) in &state {
        assert!(after[key].shares_storage(t), "{key} replaced by a refused fusion");
    }
    err
}

#[test]
fn refusals_name_the_reason_and_change_nothing() {
    // Earlier groups are valid in each case: nothing is placed before every group is checked.
    let ok: &[&str] = &["sub.0", "sub.1"];
    let training = refused(FusionModel::new(), &[ok, &["conv1", "bn1", "relu1"]]);
    assert!(training.contains("Fusion only for eval!"), "{training}");

    let mut mixed = FusionModel::loaded();
    mixed.bn1.train(true);
    let mixed = refused(mixed, &[ok, &["conv1", "bn1"]]);
    assert!(
        mixed.contains("Conv and BN both must be in the same mode (train or eval)."),
        "{mixed}"
    );

    let unknown = refused(FusionModel::loaded(), &[ok, &["block.3", "block.0"]]);
    assert!(
        unknown.contains("did not find fuser method for: (ReLU, Conv2d)"),
        "{unknown}"
    );
    let unknown = refused(FusionModel::loaded(), &[ok, &["flatten", "fc"]]);
    assert!(unknown.contains("(Flatten, Linear)"), "{unknown}");

    // `fc` fuses into a `Linear`, so its typed field takes it; `fc` + ReLU would need a `LinearReLU` there.
    let typed = refused(FusionModel::loaded(), &[ok, &["fc", "relu2"]]);
    assert!(
        typed.contains("`fc`") && typed.contains("Linear") && typed.contains("LinearReLU"),
        "{typed}"
    );

    let twice = refused(FusionModel::loaded(), &[ok, &["sub.0", "sub.1"]]);
    assert!(twice.contains("`sub.0` is named twice"), "{twice}");
    let missing = refused(FusionModel::loaded(), &[ok, &["conv1", "bn9"]]);
    assert!(missing.contains("bn9"), "{missing}");
    let inside = refused(FusionModel::loaded(), &[ok, &["sub", "bn1"]]);
    assert!(inside.contains("`sub` and `sub.0` overlap"), "{inside}");
    let root = refused(FusionModel::loaded(), &[ok, &["", "bn1"]]);
    assert!(root.contains("the model itself"), "{root}");

    let mut hooked = FusionModel::loaded();
    let mut bn = BatchNorm2d::with_options(4, 1e-3, Some(0.1), true, true);
    bn.register_forward_hook(|_, _, _| {}, HookOptions::default());
    bn.eval();
    hooked.bn1 = Box::new(bn);
    let hooked = refused(hooked, &[ok, &["conv1", "bn1", "relu1"]]);
    assert!(hooked.contains("`bn1` has forward or backward hooks"), "{hooked}");
}

#[test]
fn layers_in_a_module_list_and_a_module_dict_fuse() {
    // PyTorch 2.5.1 on the same containers (a ModuleDict holding a ModuleList of Conv2d(2, 3, 1), BatchNorm2d(3),
    // ReLU(), a Linear(3, 2) and a BatchNorm1d(2), in eval), fused with the same groups, prints this.
    let want = "ModuleDict(
  (block): ModuleList(
    (0): ConvReLU2d(
      (0): Conv2d(2, 3, kernel_size=(1, 1), stride=(1, 1))
      (1): ReLU()
    )
    (1-2): 2 x Identity()
  )
  (head): Linear(in_features=3, out_features=2, bias=True)
  (bn): Identity()
)";
    let block = ModuleList::new()
        .append(Conv2d::new(2, 3, [1, 1], Conv2dOptions::default(), true).unwrap())
        .append(BatchNorm2d::new(3))
        .append(ReLU::new(false));
    let mut model = ModuleDict::new();
    model.insert("block", block).unwrap();
    model.insert("head", Linear::new(3, 2, true)).unwrap();
    model.insert("bn", BatchNorm1d::new(2)).unwrap();
    model.eval();
    let x = Tensor::randn([2, 2, 4, 4], DType::F32);
    let unfused = {
        let block = model.get::<ModuleList>("block").unwrap();
        let conv = block.get::<Conv2d>(0).unwrap().forward(x.clone()).unwrap();
        ReLU::new(false)
            .forward(block.get::<BatchNorm2d>(1).unwrap().forward(conv).unwrap())
            .unwrap()
    };
    fuse_modules(&mut model, &[&["block.0", "block.1", "block.2"][..], &["head", "bn"]]).unwrap();
    assert_eq!(model.to_string(), want);
    let fused = model.get::<ModuleList>("block").unwrap().get::<ConvReLU2d>(0).unwrap();
    assert_close("ConvReLU2d", &fused.forward(x).unwrap(), &unfused);
}
