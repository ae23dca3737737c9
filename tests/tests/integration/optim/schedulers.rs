//! The learning-rate schedulers against PyTorch 2.5.1 (`fixtures/optim/schedulers.json`, made by
//! `fixtures/generate/schedulers.py`): two groups (lr 0.1 and 0.05), the rates after the constructor and after
//! each of 40 steps, and OneCycleLR's momentum (SGD's momentum, Adam's beta1), within 1e-12 relative; state
//! dicts that resume a schedule exactly; typed errors.

use integration_tests::fixture;
use nn::optim::lr_scheduler::{
    Anneal, CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR, LrScheduler, MultiStepLR, OneCycleLR,
    OneCycleOptions, SequentialLR, StepLR,
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
        other => panic!("no case {other}"),
    }
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
    let text = std::fs::read_to_string(fixture("optim/schedulers.json")).unwrap();
    let cases: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(cases.len(), 11);
    for (name, want) in &cases {
        let mut opt = optimizer(name == "onecycle_adam");
        let mut sched = scheduler(name, opt.as_mut());
        let lrs = want["lrs"].as_array().unwrap();
        let moms = want["momentum"].as_array().unwrap();
        for (step, (lr, mom)) in lrs.iter().zip(moms).enumerate() {
            if step > 0 {
                opt.step().unwrap();
                sched.step(opt.as_mut()).unwrap();
            }
            for (g, (got, want)) in opt.lrs().iter().zip(floats(lr)).enumerate() {
                close(&format!("{name}: step {step}, group {g} lr"), *got, want);
            }
            if name.starts_with("onecycle") {
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
}

#[test]
fn a_schedule_resumed_from_its_state_dict_continues_exactly() {
    for name in ["step", "cosine", "linear", "lambda", "onecycle", "sequential3"] {
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
}
