//! The learning-rate schedulers against PyTorch 2.5.1 (`fixtures/optim/schedulers.json`, made by
//! `fixtures/generate/schedulers.py`): two groups (lr 0.1 and 0.05), the rates after the constructor and after
//! each of 40 steps, and OneCycleLR's and CyclicLR's momentum (SGD's momentum, Adam's beta1), within 1e-12
//! relative; ReduceLROnPlateau over a metric's 40 epochs and CosineAnnealingWarmRestarts stepped to
//! fractional epochs likewise; state dicts that resume a schedule exactly; typed errors.

use integration_tests::fixture;
use std::sync::Arc;

use nn::optim::lr_scheduler::{
    Anneal, ChainedScheduler, ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, CyclicMode,
    CyclicOptions, ExponentialLR, LambdaLR, LinearLR, LrScheduler, MultiStepLR, MultiplicativeLR, OneCycleLR,
    OneCycleOptions, PlateauMode, PlateauOptions, PolynomialLR, ReduceLROnPlateau, SequentialLR, StepLR, ThresholdMode,
};
use nn::optim::{Adagrad, AdagradOptions, Adam, AdamOptions, Optimizer, SGD, SgdOptions};
use nn::{DType, Param, Tensor};
use serde_json::Value;

fn params() -> (Vec<Param>, Vec<Param>) {
    (
        vec![Param::new(Tensor::zeros([2], DType::F32))],
        vec![Param::new(Tensor::zeros([3], DType::F32))],
    )
}

/// The fixture's optimizer: two groups, lr 0.1 and 0.05; SGD with momentum 0.9, or Adam.
fn optimizer(adam: bool) -> Box<dyn Optimizer> {
    let (a, b) = params();
    if adam {
        let mut o = Adam::new(
            a,
            AdamOptions {
                lr: 0.1,
                ..Default::default()
            },
        )
        .unwrap();
        o.add_param_group(
            b,
            AdamOptions {
                lr: 0.05,
                ..Default::default()
            },
        )
        .unwrap();
        Box::new(o)
    } else {
        let sgd = |lr| SgdOptions {
            lr,
            momentum: 0.9,
            ..Default::default()
        };
        let mut o = SGD::new(a, sgd(0.1)).unwrap();
        o.add_param_group(b, sgd(0.05)).unwrap();
        Box::new(o)
    }
}

fn scheduler(name: &str, opt: &mut dyn Optimizer) -> Box<dyn LrScheduler + Send> {
    match name {
        "step" => Box::new(StepLR::new(opt, 3, 0.5).unwrap()),
        "multistep" => Box::new(MultiStepLR::new(opt, vec![5, 12, 12, 20], 0.3).unwrap()),
        "exponential" => Box::new(ExponentialLR::new(opt, 0.9).unwrap()),
        "cosine" => Box::new(CosineAnnealingLR::new(opt, 7, 0.001).unwrap()),
        "linear" => Box::new(LinearLR::new(opt, 0.25, 1.0, 6).unwrap()),
        "lambda" => Box::new(LambdaLR::new(opt, |e| 0.95f64.powi(e as i32)).unwrap()),
        "onecycle" => Box::new(
            OneCycleLR::new(
                opt,
                OneCycleOptions {
                    max_lr: vec![0.5, 0.2],
                    ..OneCycleOptions::new(0.0, 40)
                },
            )
            .unwrap(),
        ),
        "onecycle_three_linear" => Box::new(
            OneCycleLR::new(
                opt,
                OneCycleOptions {
                    pct_start: 0.25,
                    anneal_strategy: Anneal::Linear,
                    three_phase: true,
                    ..OneCycleOptions::new(0.3, 41)
                },
            )
            .unwrap(),
        ),
        "onecycle_adam" => Box::new(OneCycleLR::new(opt, OneCycleOptions::new(0.01, 40)).unwrap()),
        "sequential" => {
            let first: Box<dyn LrScheduler + Send> = Box::new(LinearLR::new(opt, 0.1, 1.0, 4).unwrap());
            let second: Box<dyn LrScheduler + Send> = Box::new(ExponentialLR::new(opt, 0.8).unwrap());
            Box::new(SequentialLR::new(opt, vec![first, second], vec![5]).unwrap())
        }
        "sequential3" => {
            let a: Box<dyn LrScheduler + Send> = Box::new(StepLR::new(opt, 2, 0.5).unwrap());
            let b: Box<dyn LrScheduler + Send> = Box::new(CosineAnnealingLR::new(opt, 5, 0.0).unwrap());
            let c: Box<dyn LrScheduler + Send> = Box::new(ExponentialLR::new(opt, 0.9).unwrap());
            Box::new(SequentialLR::new(opt, vec![a, b, c], vec![6, 15]).unwrap())
        }
        "multiplicative" => Box::new(MultiplicativeLR::new(opt, |e| if e % 3 != 0 { 0.9 } else { 1.05 }).unwrap()),
        "constant" => Box::new(ConstantLR::new(opt, 0.25, 7).unwrap()),
        "polynomial" => Box::new(PolynomialLR::new(opt, 25, 2.5).unwrap()),
        "polynomial_linear" => Box::new(PolynomialLR::new(opt, 6, 1.0).unwrap()),
        "warm_restarts" => Box::new(CosineAnnealingWarmRestarts::new(opt, 3, 2, 0.001).unwrap()),
        "warm_restarts_every_5" => Box::new(CosineAnnealingWarmRestarts::new(opt, 5, 1, 0.0).unwrap()),
        "cyclic" => cyclic(
            opt,
            CyclicOptions {
                base_lr: vec![0.01, 0.005],
                max_lr: vec![0.1, 0.05],
                step_size_up: 4.0,
                step_size_down: Some(6.0),
                ..CyclicOptions::new(0.0, 0.0)
            },
        ),
        "cyclic_triangular2" => cyclic(
            opt,
            CyclicOptions {
                step_size_up: 5.0,
                mode: CyclicMode::Triangular2,
                cycle_momentum: false,
                ..CyclicOptions::new(0.001, 0.1)
            },
        ),
        "cyclic_exp_range" => cyclic(
            opt,
            CyclicOptions {
                step_size_up: 3.0,
                mode: CyclicMode::ExpRange,
                gamma: 0.97,
                base_momentum: vec![0.7],
                max_momentum: vec![0.95],
                ..CyclicOptions::new(0.01, 0.2)
            },
        ),
        "cyclic_adam" => cyclic(
            opt,
            CyclicOptions {
                step_size_up: 7.0,
                ..CyclicOptions::new(0.001, 0.01)
            },
        ),
        "cyclic_scale_fn" => cyclic(
            opt,
            CyclicOptions {
                step_size_up: 2.0,
                mode: CyclicMode::Custom {
                    scale_fn: Arc::new(|x| 1.0 / (1.0 + 0.1 * x)),
                    by_iteration: true,
                },
                cycle_momentum: false,
                ..CyclicOptions::new(0.01, 0.1)
            },
        ),
        "chained" => {
            let a: Box<dyn LrScheduler + Send> = Box::new(ConstantLR::new(opt, 0.1, 2).unwrap());
            let b: Box<dyn LrScheduler + Send> = Box::new(ExponentialLR::new(opt, 0.9).unwrap());
            Box::new(ChainedScheduler::new(opt, vec![a, b]).unwrap())
        }
        other => panic!("no case {other}"),
    }
}

fn cyclic(opt: &mut dyn Optimizer, options: CyclicOptions) -> Box<dyn LrScheduler + Send> {
    Box::new(CyclicLR::new(opt, options).unwrap())
}

/// The fixture's ReduceLROnPlateau configurations.
fn plateau(name: &str, opt: &mut dyn Optimizer) -> ReduceLROnPlateau {
    let options = match name {
        "plateau" => PlateauOptions {
            patience: 2,
            ..Default::default()
        },
        "plateau_max_abs" => PlateauOptions {
            mode: PlateauMode::Max,
            factor: 0.5,
            patience: 1,
            threshold: 0.01,
            threshold_mode: ThresholdMode::Abs,
            cooldown: 2,
            min_lr: vec![0.02, 0.001],
            ..Default::default()
        },
        "plateau_min_lr" => PlateauOptions {
            factor: 0.3,
            patience: 0,
            cooldown: 1,
            min_lr: vec![0.004],
            eps: 1e-3,
            ..Default::default()
        },
        other => panic!("no case {other}"),
    };
    ReduceLROnPlateau::new(opt, options).unwrap()
}

/// `opt`'s rates against `want`'s at `step`.
fn rates_match(name: &str, step: usize, opt: &dyn Optimizer, want: &Value) {
    for (g, (got, want)) in opt.lrs().iter().zip(floats(want)).enumerate() {
        close(&format!("{name}: step {step}, group {g} lr"), *got, want);
    }
}

/// The fixture's cases by name.
fn cases() -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(fixture("optim/schedulers.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn close(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-12 * want.abs() + 1e-18,
        "{what}: {got}, PyTorch's {want}"
    );
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

#[test]
fn every_scheduler_gives_pytorchs_rates_step_by_step() {
    let cases = cases();
    assert_eq!(cases.len(), 28);
    let mut ran = 0;
    for (name, want) in &cases {
        if want.get("momentum").is_none() {
            continue;
        }
        ran += 1;
        let mut opt = optimizer(name == "onecycle_adam");
        let mut sched = scheduler(name, opt.as_mut());
        let lrs = want["lrs"].as_array().unwrap();
        let moms = want["momentum"].as_array().unwrap();
        for (step, (lr, mom)) in lrs.iter().zip(moms).enumerate() {
            if step > 0 {
                opt.step().unwrap();
                sched.step(opt.as_mut()).unwrap();
            }
            rates_match(name, step, opt.as_ref(), lr);
            if name.starts_with("onecycle") || name.starts_with("cyclic") {
                for (g, (got, want)) in opt.momentums().iter().zip(floats(mom)).enumerate() {
                    close(&format!("{name}: step {step}, group {g} momentum"), got.unwrap(), want);
                }
            }
        }
        assert_eq!(sched.get_last_lr(), opt.lrs(), "{name}");
        assert_eq!(sched.last_epoch(), want["last_epoch"].as_i64().unwrap(), "{name}");
        let initial: Vec<f64> = opt.initial_lrs().into_iter().map(Option::unwrap).collect();
        for (got, want) in initial.iter().zip(floats(&want["initial_lr"])) {
            close(&format!("{name}: initial_lr"), *got, want);
        }
    }
    assert_eq!(ran, 23);
}

#[test]
fn reduce_lr_on_plateau_follows_pytorchs_over_a_metric() {
    let cases = cases();
    for name in ["plateau", "plateau_max_abs", "plateau_min_lr"] {
        let want = &cases[name];
        let mut opt = optimizer(false);
        let mut sched = plateau(name, opt.as_mut());
        let lrs = want["lrs"].as_array().unwrap();
        rates_match(name, 0, opt.as_ref(), &lrs[0]);
        for (step, metric) in floats(&want["metrics"]).into_iter().enumerate() {
            opt.step().unwrap();
            sched.step(opt.as_mut(), metric).unwrap();
            rates_match(name, step + 1, opt.as_ref(), &lrs[step + 1]);
        }
        assert_eq!(sched.last_epoch(), want["last_epoch"].as_i64().unwrap(), "{name}");
        assert_eq!(sched.best(), want["best"].as_f64().unwrap(), "{name}");
        assert_eq!(
            sched.num_bad_epochs(),
            want["num_bad_epochs"].as_i64().unwrap(),
            "{name}"
        );
        assert_eq!(
            sched.cooldown_counter(),
            want["cooldown_counter"].as_i64().unwrap(),
            "{name}"
        );
        assert_eq!(sched.get_last_lr(), opt.lrs(), "{name}");

        // Resumed from its state dict halfway, it ends where the whole run does.
        let mut half_opt = optimizer(false);
        let mut half = plateau(name, half_opt.as_mut());
        let metrics = floats(&want["metrics"]);
        for metric in &metrics[..17] {
            half.step(half_opt.as_mut(), *metric).unwrap();
        }
        let mut resumed_opt = optimizer(false);
        let mut resumed = plateau(name, resumed_opt.as_mut());
        resumed_opt.load_state_dict(&half_opt.state_dict().unwrap()).unwrap();
        resumed.load_state_dict(&half.state_dict()).unwrap();
        for metric in &metrics[17..] {
            resumed.step(resumed_opt.as_mut(), *metric).unwrap();
        }
        assert_eq!(resumed_opt.lrs(), opt.lrs(), "{name} resumed");
        assert_eq!(resumed.state_dict(), sched.state_dict(), "{name} resumed");
    }
}

#[test]
fn warm_restarts_stepped_to_fractional_epochs_follow_pytorchs() {
    let cases = cases();
    for (name, t_mult) in [("warm_restarts_epochs", 1), ("warm_restarts_epochs_mult", 3)] {
        let want = &cases[name];
        let mut opt = optimizer(false);
        let mut sched = CosineAnnealingWarmRestarts::new(opt.as_mut(), 4, t_mult, 0.002).unwrap();
        let lrs = want["lrs"].as_array().unwrap();
        rates_match(name, 0, opt.as_ref(), &lrs[0]);
        for (step, epoch) in floats(&want["epochs"]).into_iter().enumerate() {
            opt.step().unwrap();
            sched.step_epoch(opt.as_mut(), epoch).unwrap();
            rates_match(name, step + 1, opt.as_ref(), &lrs[step + 1]);
        }
        assert_eq!(sched.last_epoch(), want["last_epoch"].as_i64().unwrap(), "{name}");
        close(
            &format!("{name}: T_cur"),
            sched.t_cur(),
            want["T_cur"].as_f64().unwrap(),
        );
        close(&format!("{name}: T_i"), sched.t_i(), want["T_i"].as_f64().unwrap());
    }
    let mut opt = optimizer(false);
    let mut sched = CosineAnnealingWarmRestarts::new(opt.as_mut(), 4, 1, 0.0).unwrap();
    let err = sched.step_epoch(opt.as_mut(), -1.0).unwrap_err();
    assert!(
        err.to_string().contains("Expected non-negative epoch, but got -1"),
        "{err}"
    );
}

#[test]
fn a_schedule_resumed_from_its_state_dict_continues_exactly() {
    for name in [
        "step",
        "cosine",
        "linear",
        "lambda",
        "onecycle",
        "sequential3",
        "multiplicative",
        "constant",
        "polynomial",
        "warm_restarts",
        "cyclic",
        "cyclic_triangular2",
        "chained",
    ] {
        let mut whole_opt = optimizer(false);
        let mut whole = scheduler(name, whole_opt.as_mut());
        for _ in 0..30 {
            whole.step(whole_opt.as_mut()).unwrap();
        }

        let mut first_opt = optimizer(false);
        let mut first = scheduler(name, first_opt.as_mut());
        for _ in 0..12 {
            first.step(first_opt.as_mut()).unwrap();
        }
        let (opt_state, sched_state) = (first_opt.state_dict().unwrap(), first.state_dict());

        let mut opt = optimizer(false);
        let mut sched = scheduler(name, opt.as_mut());
        opt.load_state_dict(&opt_state).unwrap();
        sched.load_state_dict(&sched_state).unwrap();
        for _ in 12..30 {
            sched.step(opt.as_mut()).unwrap();
        }
        assert_eq!(opt.lrs(), whole_opt.lrs(), "{name}");
        assert_eq!(sched.state_dict(), whole.state_dict(), "{name}");
    }
}

#[test]
fn bad_arguments_are_typed_errors() {
    let mut opt = optimizer(false);
    assert!(StepLR::new(opt.as_mut(), 0, 0.1).is_err());
    assert!(CosineAnnealingLR::new(opt.as_mut(), 0, 0.0).is_err());
    assert!(LinearLR::new(opt.as_mut(), 0.0, 1.0, 5).is_err());
    assert!(LinearLR::new(opt.as_mut(), 0.5, 1.5, 5).is_err());
    assert!(OneCycleLR::new(opt.as_mut(), OneCycleOptions::new(0.1, 0)).is_err());
    let three = OneCycleOptions {
        max_lr: vec![0.1, 0.2, 0.3],
        ..OneCycleOptions::new(0.1, 10)
    };
    assert!(OneCycleLR::new(opt.as_mut(), three).is_err());
    let (a, _) = params();
    let mut adagrad = Adagrad::new(a, AdagradOptions::default()).unwrap();
    let err = OneCycleLR::new(&mut adagrad, OneCycleOptions::new(0.1, 10)).unwrap_err();
    assert!(err.to_string().contains("momentum"), "{err}");
    // A one-cycle schedule stepped past its length.
    let mut opt = optimizer(false);
    let mut sched = OneCycleLR::new(opt.as_mut(), OneCycleOptions::new(0.1, 3)).unwrap();
    for _ in 0..3 {
        sched.step(opt.as_mut()).unwrap();
    }
    assert!(sched.step(opt.as_mut()).is_err());
    let mut opt = optimizer(false);
    let mut step = StepLR::new(opt.as_mut(), 2, 0.5).unwrap();
    let mut broken = step.state_dict();
    broken.remove("gamma");
    assert!(step.load_state_dict(&broken).is_err());
    assert_eq!(step.last_epoch(), 0);
    // PyTorch's refusals, its sentence in ours.
    let message = |r: nn::Result<()>| r.unwrap_err().to_string();
    let mut opt = optimizer(false);
    let o = opt.as_mut();
    assert!(
        message(ConstantLR::new(o, 1.5, 5).map(drop))
            .contains("Constant multiplicative factor expected to be between 0 and 1.")
    );
    assert!(
        message(CosineAnnealingWarmRestarts::new(o, 0, 1, 0.0).map(drop))
            .contains("Expected positive integer T_0, but got 0")
    );
    assert!(
        message(CosineAnnealingWarmRestarts::new(o, 2, 0, 0.0).map(drop))
            .contains("Expected integer T_mult >= 1, but got 0")
    );
    let mut plateau = |options| ReduceLROnPlateau::new(o, options).map(drop);
    assert!(
        message(plateau(PlateauOptions {
            factor: 1.0,
            ..Default::default()
        }))
        .contains("Factor should be < 1.0.")
    );
    assert!(
        message(plateau(PlateauOptions {
            min_lr: vec![0.0; 3],
            ..Default::default()
        }))
        .contains("expected 2 min_lrs, got 3")
    );
    assert!(message(ChainedScheduler::new(o, vec![]).map(drop)).contains("expects at least one scheduler"));
    let mut adagrad = Adagrad::new(params().0, AdagradOptions::default()).unwrap();
    assert!(message(CyclicLR::new(&mut adagrad, CyclicOptions::new(0.1, 1.0)).map(drop)).contains("momentum or beta1"));
    let no_momentum = CyclicOptions {
        cycle_momentum: false,
        ..CyclicOptions::new(0.1, 1.0)
    };
    assert!(CyclicLR::new(&mut adagrad, no_momentum).is_ok());
}
