//! The optimizers against PyTorch 2.5.1: 20 training steps of LightZero's DynamicsNetwork (`dynamics_small`,
//! batch 8, fresh batches each step) from the same weights, for SGD (Nesterov, weight decay; dampening), Adam,
//! AdamW with amsgrad, centred RMSprop with momentum, Adagrad, and SGD under StepLR
//! (`fixtures/optim/trajectories.safetensors`, made by
//! `fixtures/generate/trajectories.py`): the 20 losses and the final state dict within 1e-4 relative (f32; the
//! losses against the run's largest |loss|, each tensor against its largest |value|, as the shared notes
//! advise for losses that cross zero). SGD and Adam also on wgpu. A run saved after step 10 (model and
//! optimizer to safetensors files, the scheduler's state dict) and resumed in a fresh model, optimizer and
//! scheduler ends bit for bit where the uninterrupted run does.

use integration_tests::{fixture, gpu_or_skip, tensors};
use nn::optim::lr_scheduler::{LrScheduler, StepLR};
use nn::optim::{
    Adagrad, AdagradOptions, Adam, AdamOptions, AdamW, GroupOptions, Hyper, Optimizer, OptimizerState, RMSprop,
    RMSpropOptions, SGD, SgdOptions,
};
use nn::prelude::*;
use reference::efficientzero::{DynamicsConfig, DynamicsNetwork, projected_sum};

const STEPS: usize = 20;
const TOLERANCE: f64 = 1e-4;

fn network(device: Device) -> DynamicsNetwork {
    let dir = fixture("dynamics_small");
    let mut net = DynamicsNetwork::new(DynamicsConfig::from_file(&dir.join("config.json")).unwrap()).unwrap();
    net.load_safetensors(dir.join("weights.safetensors"), true).unwrap();
    net.to_device(device).unwrap();
    net.train(true);
    net
}

/// The optimizer of a run of the fixture over `net`'s parameters, and its loss scale.
fn optimizer(run: &str, net: &DynamicsNetwork) -> (Box<dyn Optimizer>, f64) {
    let p = net.parameters();
    let small = 2f64.powi(-16);
    match run {
        "sgd_nesterov" => (
            Box::new(
                SGD::new(
                    p,
                    SgdOptions {
                        lr: 0.05,
                        momentum: 0.9,
                        nesterov: true,
                        weight_decay: 1e-3,
                        ..Default::default()
                    },
                )
                .unwrap(),
            ),
            1.0,
        ),
        "sgd_steplr" => (
            Box::new(
                SGD::new(
                    p,
                    SgdOptions {
                        lr: 0.05,
                        momentum: 0.9,
                        ..Default::default()
                    },
                )
                .unwrap(),
            ),
            1.0,
        ),
        "sgd_dampening" => (
            Box::new(
                SGD::new(
                    p,
                    SgdOptions {
                        lr: 0.05,
                        momentum: 0.5,
                        dampening: 0.3,
                        ..Default::default()
                    },
                )
                .unwrap(),
            ),
            1.0,
        ),
        "adam" => (
            Box::new(
                Adam::new(
                    p,
                    AdamOptions {
                        lr: 1e-3,
                        weight_decay: 1e-4,
                        ..Default::default()
                    },
                )
                .unwrap(),
            ),
            small,
        ),
        "adamw_amsgrad" => (
            Box::new(
                AdamW::new(
                    p,
                    AdamOptions {
                        lr: 1e-3,
                        amsgrad: true,
                        ..AdamOptions::adamw()
                    },
                )
                .unwrap(),
            ),
            small,
        ),
        "rmsprop" => (
            Box::new(
                RMSprop::new(
                    p,
                    RMSpropOptions {
                        lr: 1e-3,
                        momentum: 0.5,
                        centered: true,
                        weight_decay: 1e-4,
                        ..Default::default()
                    },
                )
                .unwrap(),
            ),
            small,
        ),
        "adagrad" => (
            Box::new(
                Adagrad::new(
                    p,
                    AdagradOptions {
                        lr: 0.01,
                        lr_decay: 0.01,
                        initial_accumulator_value: 0.1,
                        ..Default::default()
                    },
                )
                .unwrap(),
            ),
            small,
        ),
        other => panic!("no run {other}"),
    }
}

/// The run's scheduler: `sgd_steplr` has StepLR(5, 0.5).
fn scheduler(run: &str, opt: &mut dyn Optimizer) -> Option<Box<dyn LrScheduler + Send>> {
    (run == "sgd_steplr").then(|| Box::new(StepLR::new(opt, 5, 0.5).unwrap()) as Box<dyn LrScheduler + Send>)
}

/// Steps `steps` of the fixture's schedule: forward, scaled loss, backward, step, zero_grad(set_to_none); the
/// losses before each step.
fn train(
    net: &DynamicsNetwork,
    opt: &mut dyn Optimizer,
    sched: &mut Option<Box<dyn LrScheduler + Send>>,
    scale: f64,
    steps: std::ops::Range<usize>,
    file: &StateDict,
    device: Device,
) -> Vec<f64> {
    let get = |k: &str| file[k].to_device(device).unwrap();
    let mut losses = vec![];
    for i in steps {
        let outputs = net
            .forward((
                get(&format!("batch.{i}.state_action_encoding")),
                (get(&format!("batch.{i}.h0")), get(&format!("batch.{i}.c0"))),
            ))
            .unwrap();
        let loss = projected_sum(outputs, |name| Ok(get(&format!("proj.{name}"))))
            .unwrap()
            .mul_scalar(scale)
            .unwrap();
        losses.push(loss.item().unwrap());
        loss.backward().unwrap();
        opt.step().unwrap();
        if let Some(s) = sched {
            s.step(opt).unwrap();
        }
        opt.zero_grad(true).unwrap();
    }
    losses
}

fn check_run(run: &str, device: Device) {
    let file = tensors("optim/trajectories.safetensors");
    let net = network(device);
    let (mut opt, scale) = optimizer(run, &net);
    let mut sched = scheduler(run, opt.as_mut());
    let losses = train(&net, opt.as_mut(), &mut sched, scale, 0..STEPS, &file, device);
    let want = file[&format!("{run}.losses")].to_vec_f64().unwrap();
    let largest = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let loss_err = losses
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs() / largest)
        .fold(0.0, f64::max);
    let mut worst = (0.0f64, String::new());
    for (key, t) in net.state_dict().iter() {
        let expected = &file[&format!("{run}.final.{key}")];
        let (a, e) = (t.cpu().unwrap().to_vec_f64().unwrap(), expected.to_vec_f64().unwrap());
        let scale = e.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-12);
        let err = a.iter().zip(&e).map(|(x, y)| (x - y).abs() / scale).fold(0.0, f64::max);
        if err > worst.0 {
            worst = (err, key.to_owned());
        }
    }
    println!(
        "{run} on {device}: losses within {loss_err:.2e} of the largest, weights within {:.2e} ({})",
        worst.0, worst.1
    );
    assert!(
        loss_err <= TOLERANCE,
        "{run} on {device}: losses differ by {loss_err:e}"
    );
    assert!(
        worst.0 <= TOLERANCE,
        "{run} on {device}: {} differs by {:e}",
        worst.1,
        worst.0
    );
}

const RUNS: [&str; 7] = [
    "sgd_nesterov",
    "sgd_dampening",
    "sgd_steplr",
    "adam",
    "adamw_amsgrad",
    "rmsprop",
    "adagrad",
];

#[test]
fn every_optimizer_follows_pytorchs_trajectory_on_the_cpu() {
    for run in RUNS {
        check_run(run, Device::Cpu);
    }
}

#[test]
fn every_optimizer_follows_pytorchs_trajectory_on_wgpu() {
    let Some(device) = gpu_or_skip("optim") else { return };
    for run in RUNS {
        check_run(run, device);
    }
}

#[test]
fn a_run_saved_at_step_10_resumes_bit_for_bit() {
    let file = tensors("optim/trajectories.safetensors");
    for run in ["sgd_nesterov", "sgd_steplr", "adamw_amsgrad", "rmsprop", "adagrad"] {
        let whole = network(Device::Cpu);
        let (mut opt, scale) = optimizer(run, &whole);
        let mut sched = scheduler(run, opt.as_mut());
        let all_losses = train(&whole, opt.as_mut(), &mut sched, scale, 0..STEPS, &file, Device::Cpu);

        // Train 10 steps; save the model and the optimizer to files, and the scheduler's state.
        let first = network(Device::Cpu);
        let (mut opt, scale) = optimizer(run, &first);
        let mut sched = scheduler(run, opt.as_mut());
        train(&first, opt.as_mut(), &mut sched, scale, 0..10, &file, Device::Cpu);
        let dir = std::env::temp_dir().join(format!("nn-optim-resume-{run}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        first.save_safetensors(dir.join("model.safetensors")).unwrap();
        opt.state_dict()
            .unwrap()
            .save_safetensors(dir.join("optimizer.safetensors"))
            .unwrap();
        let sched_state = sched.as_ref().map(|s| s.state_dict());

        // A fresh model, optimizer and scheduler load them and run steps 11 to 20.
        let mut resumed = network(Device::Cpu);
        resumed.load_safetensors(dir.join("model.safetensors"), true).unwrap();
        let (mut opt, scale) = optimizer(run, &resumed);
        let mut sched = scheduler(run, opt.as_mut());
        opt.load_state_dict(&OptimizerState::load_safetensors(dir.join("optimizer.safetensors")).unwrap())
            .unwrap();
        if let (Some(s), Some(state)) = (&mut sched, &sched_state) {
            s.load_state_dict(state).unwrap();
        }
        let losses = train(&resumed, opt.as_mut(), &mut sched, scale, 10..STEPS, &file, Device::Cpu);
        std::fs::remove_dir_all(&dir).unwrap();

        assert_eq!(losses, all_losses[10..], "{run}: losses after resuming");
        for ((k, a), (_, b)) in resumed.state_dict().iter().zip(whole.state_dict().iter()) {
            assert!(integration_tests::bit_equal(a, b), "{run}: {k} after resuming");
        }
    }
}

/// One step of `opt` on the loss `Σ fc(x)` over `rows` rows of ones.
fn step_on_ones(fc: &Linear, opt: &mut dyn Optimizer, rows: usize) {
    let x = Tensor::ones([rows, fc.in_features], DType::F32);
    fc.forward(x).unwrap().sum_all().unwrap().backward().unwrap();
    opt.step().unwrap();
}

#[test]
fn the_state_dict_has_pytorchs_layout_and_a_bad_one_changes_nothing() {
    let fc = Linear::new(3, 2, true);
    let extra = Linear::new(2, 2, false);
    let mut opt = Adam::new(fc.parameters(), AdamOptions::default()).unwrap();
    opt.add_param_group(
        extra.parameters(),
        AdamOptions {
            lr: 0.5,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        opt.add_param_group(fc.parameters(), AdamOptions::default()).is_err(),
        "a parameter in two groups"
    );
    step_on_ones(&fc, &mut opt, 4);
    let state = opt.state_dict().unwrap();
    // Only fc's two parameters had gradients: state for indices 0 and 1, groups [0, 1] and [2].
    assert_eq!(state.state.keys().copied().collect::<Vec<_>>(), [0, 1]);
    let names: Vec<&str> = state.state[&0].iter().map(|(k, _)| k).collect();
    assert_eq!(names, ["step", "exp_avg", "exp_avg_sq"]);
    assert_eq!(state.state[&0].step().unwrap(), 1.0);
    assert_eq!(state.param_groups[0].params, [0, 1]);
    assert_eq!(state.param_groups[1].params, [2]);
    assert_eq!(state.param_groups[1].options["lr"], Hyper::Float(0.5));
    assert_eq!(state.param_groups[0].options["betas"], Hyper::Pair(0.9, 0.999));
    assert_eq!(opt.lrs(), [1e-3, 0.5]);

    // A state of the wrong shape, or groups that do not match: an error, and the optimizer keeps its state.
    let mut bad = state.clone();
    bad.state
        .get_mut(&0)
        .unwrap()
        .insert("exp_avg", Tensor::zeros([5], DType::F32));
    bad.param_groups[0].options.insert("lr".into(), Hyper::Float(9.0));
    assert!(opt.load_state_dict(&bad).is_err());
    assert_eq!(opt.lrs(), [1e-3, 0.5]);
    let mut fewer = state.clone();
    fewer.param_groups.pop();
    assert!(opt.load_state_dict(&fewer).is_err());
    let mut wrong_kind = state.clone();
    wrong_kind.param_groups[0]
        .options
        .insert("amsgrad".into(), Hyper::Float(1.0));
    assert!(opt.load_state_dict(&wrong_kind).is_err());
    assert_eq!(opt.state_dict().unwrap().state[&0].step().unwrap(), 1.0);

    // zero_grad: in place, or to None.
    opt.zero_grad(false).unwrap();
    assert_eq!(fc.weight.grad().unwrap().to_vec::<f32>().unwrap(), vec![0.0; 6]);
    opt.zero_grad(true).unwrap();
    assert!(fc.weight.grad().is_none());

    // PyTorch's constructor checks.
    assert!(
        SGD::new(
            fc.parameters(),
            SgdOptions {
                lr: -1.0,
                ..Default::default()
            }
        )
        .is_err()
    );
    assert!(
        Adam::new(
            fc.parameters(),
            AdamOptions {
                betas: (1.0, 0.9),
                ..Default::default()
            }
        )
        .is_err()
    );
    let mut o = SgdOptions::default();
    o.set_lr(0.25);
    assert_eq!(o.lr(), 0.25);
}

#[test]
fn maximize_and_plain_sgd_take_the_textbook_step() {
    // p ← p − lr·g, and with maximize p ← p + lr·g, for a loss whose gradient is known: Σ w·x with x = 1.
    for maximize in [false, true] {
        let fc = Linear::new(2, 1, false);
        let before = fc.weight.data().to_vec::<f32>().unwrap();
        let mut opt = SGD::new(
            fc.parameters(),
            SgdOptions {
                lr: 0.5,
                maximize,
                ..Default::default()
            },
        )
        .unwrap();
        step_on_ones(&fc, &mut opt, 3);
        let after = fc.weight.data().to_vec::<f32>().unwrap();
        let sign = if maximize { 1.0 } else { -1.0 };
        for (b, a) in before.iter().zip(&after) {
            assert_eq!(*a, b + sign * 0.5 * 3.0);
        }
    }
}
