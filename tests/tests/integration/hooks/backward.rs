//! Backward hooks, with PyTorch's ordering and replacement semantics: tensor and parameter hooks
//! (`register_hook`), post-accumulate hooks, and module full backward hooks and pre-hooks; removal; typed
//! errors for replacements that do not fit. Expected values come from the chain rule written out by hand or
//! from a second pass without hooks, never from the hooked pass itself.

use std::sync::{Arc, Mutex};

use nn::prelude::*;
use nn::{Error, Result};

fn leaf(values: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec())
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

fn vec_of(t: &Tensor) -> Vec<f64> {
    t.to_vec_f64().unwrap()
}

fn autograd_err<T: std::fmt::Debug>(r: Result<T>, op: &str) -> String {
    match r {
        Err(Error::Autograd { op: o, message }) if o == op => message,
        other => panic!("expected an autograd error from {op}, got {other:?}"),
    }
}

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

#[test]
fn a_hook_on_a_computed_tensor_sees_the_summed_gradient_once_and_its_replacement_flows_on() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = x.mul_scalar(3.0).unwrap();
    let seen = log();
    let sink = seen.clone();
    y.register_hook(move |g| {
        sink.lock().unwrap().push(format!("{:?}", g.to_vec_f64()?));
        Ok(Some(g.mul_scalar(10.0)?))
    })
    .unwrap();
    // y is used twice: d(y·y + y)/dy = 2y + 1 = [7, 13], summed before the hook runs once.
    let loss = y.mul(&y).unwrap().add(&y).unwrap().sum_all().unwrap();
    loss.backward().unwrap();
    assert_eq!(entries(&seen), ["[7.0, 13.0]"]);
    assert_eq!(vec_of(&x.grad().unwrap()), [210.0, 390.0]);
}

#[test]
fn leaf_hooks_run_in_order_on_the_summed_gradient_before_accumulation_and_stop_when_removed() {
    let x = leaf(&[1.0, -1.0], &[2]);
    let seen = log();
    let (a, b) = (seen.clone(), seen.clone());
    let first = x
        .register_hook(move |g| {
            a.lock().unwrap().push(format!("first {:?}", g.to_vec_f64()?));
            Ok(Some(g.add_scalar(1.0)?))
        })
        .unwrap();
    x.register_hook(move |g| {
        b.lock().unwrap().push(format!("second {:?}", g.to_vec_f64()?));
        Ok(None)
    })
    .unwrap();
    // x used twice: 2 + 3 = 5 per element, one hook call each.
    let loss = x
        .mul_scalar(2.0)
        .unwrap()
        .add(&x.mul_scalar(3.0).unwrap())
        .unwrap()
        .sum_all()
        .unwrap();
    loss.backward().unwrap();
    assert_eq!(entries(&seen), ["first [5.0, 5.0]", "second [6.0, 6.0]"]);
    assert_eq!(vec_of(&x.grad().unwrap()), [6.0, 6.0]);

    first.remove();
    first.remove();
    x.mul_scalar(2.0).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(entries(&seen).len(), 3, "the removed hook ran");
    assert_eq!(vec_of(&x.grad().unwrap()), [8.0, 8.0]);
}

#[test]
fn retain_grad_keeps_the_hooked_gradient_and_grad_sees_it_too() {
    let x = leaf(&[2.0], &[1]);
    let y = x.mul_scalar(5.0).unwrap();
    y.retain_grad().unwrap();
    y.register_hook(|g| Ok(Some(g.neg()?))).unwrap();
    y.mul_scalar(3.0)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward_opts(nn::autograd::BackwardOptions {
            gradient: None,
            retain_graph: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(vec_of(&y.grad().unwrap()), [-3.0]);
    assert_eq!(vec_of(&x.grad().unwrap()), [-15.0]);

    // torch.autograd.grad runs a leaf's hooks on what it returns, and leaves .grad alone.
    let z = leaf(&[1.0], &[1]);
    z.register_hook(|g| Ok(Some(g.mul_scalar(4.0)?))).unwrap();
    let out = z.mul_scalar(2.0).unwrap().sum_all().unwrap();
    let g = nn::autograd::grad(&[&out], &[&z], None, false).unwrap();
    assert_eq!(vec_of(g[0].as_ref().unwrap()), [8.0]);
    assert!(z.grad().is_none());
}

#[test]
fn a_hook_replacement_that_does_not_fit_is_a_typed_error() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = x.mul_scalar(2.0).unwrap();
    y.register_hook(|_| Ok(Some(Tensor::zeros([3], DType::F64)))).unwrap();
    let message = autograd_err(y.sum_all().unwrap().backward(), "register_hook");
    assert!(message.contains("[3]") && message.contains("[2]"), "{message}");

    let w = leaf(&[1.0], &[1]);
    w.register_hook(|g| Ok(Some(g.to_dtype(DType::F32)?))).unwrap();
    let message = autograd_err(
        w.mul_scalar(2.0).unwrap().sum_all().unwrap().backward(),
        "register_hook",
    );
    assert!(message.contains("float32"), "{message}");

    // A hook's own failure ends the backward with its error.
    let v = leaf(&[1.0], &[1]);
    v.register_hook(|_| Err(Error::autograd("my_hook", "refused"))).unwrap();
    autograd_err(v.mul_scalar(2.0).unwrap().sum_all().unwrap().backward(), "my_hook");

    let plain = Tensor::zeros([1], DType::F32);
    autograd_err(plain.register_hook(|_| Ok(None)), "register_hook");
}

#[test]
fn post_accumulate_hooks_see_the_accumulated_gradient_and_can_step_a_parameter() {
    let fc = Linear::new(2, 1, true);
    let before = vec_of(&fc.weight.data());
    // SGD with lr 0.5 inside the backward, as PyTorch's optimizer-in-backward recipe does.
    for p in fc.parameters() {
        p.register_post_accumulate_grad_hook(|p| {
            let _no_grad = nn::no_grad();
            let step = p.grad().unwrap().mul_scalar(0.5)?;
            p.data().sub_(&step)?;
            Ok(())
        })
        .unwrap();
    }
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]).unwrap();
    fc.forward(x).unwrap().sum_all().unwrap().backward().unwrap();
    // d(sum)/dW = column sums of x = [4, 6].
    assert_eq!(vec_of(&fc.weight.grad().unwrap()), [4.0, 6.0]);
    let after = vec_of(&fc.weight.data());
    let f32_step = |w: f64, d: f32| f64::from(w as f32 - d);
    assert_eq!(after, [f32_step(before[0], 2.0), f32_step(before[1], 3.0)]);

    let t = leaf(&[1.0], &[1]);
    let y = t.mul_scalar(2.0).unwrap();
    autograd_err(
        y.register_post_accumulate_grad_hook(|_| Ok(())),
        "register_post_accumulate_grad_hook",
    );
}

/// Two linear layers around a tanh, each called through `call` so their hooks run.
#[derive(Module)]
struct Net {
    fc1: Linear,
    act: Tanh,
    fc2: Linear,
    hooks: Hooks,
}

impl Forward for Net {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        self.fc2.call(self.act.call(self.fc1.call(x)?)?)
    }
}

fn net() -> Net {
    nn::manual_seed(7);
    Net {
        fc1: Linear::new(3, 4, true),
        act: Tanh::new(),
        fc2: Linear::new(4, 2, true),
        hooks: Hooks::new(),
    }
}

fn input() -> Tensor {
    Tensor::from_vec(vec![0.5f32, -1.0, 2.0, 1.5, 0.25, -0.75], [2, 3])
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

/// The gradients of every parameter and of the input after one backward of `sum(net(x))`.
fn gradients(net: &mut Net) -> (Vec<(String, Vec<f64>)>, Vec<f64>) {
    net.zero_grad(true);
    let x = input();
    net.call(x.clone()).unwrap().sum_all().unwrap().backward().unwrap();
    let params = net
        .named_parameters()
        .into_iter()
        .map(|(name, p)| (name, vec_of(&p.grad().unwrap())))
        .collect();
    (params, vec_of(&x.grad().unwrap()))
}

fn scaled(v: &[f64], by: f64) -> Vec<f64> {
    v.iter().map(|x| x * by).collect()
}

#[test]
fn a_full_backward_hook_that_doubles_grad_input_doubles_the_gradients_upstream_only() {
    integration_tests::in_own_process(|| {
        let mut net = net();
        let (plain, plain_x) = gradients(&mut net);
        let handle = net.fc2.register_full_backward_hook(|grad_input, _| {
            Ok(Some(
                grad_input
                    .iter()
                    .map(|g| g.as_ref().map(|g| g.mul_scalar(2.0).unwrap()))
                    .collect(),
            ))
        });
        let (hooked, hooked_x) = gradients(&mut net);
        for ((name, a), (_, b)) in plain.iter().zip(&hooked) {
            // fc2's own parameters are not upstream of its input: unchanged; fc1's (and the input's) double.
            let expected = if name.starts_with("fc2") {
                a.clone()
            } else {
                scaled(a, 2.0)
            };
            assert_eq!(b, &expected, "{name}");
        }
        assert_eq!(hooked_x, scaled(&plain_x, 2.0));

        handle.remove();
        let (removed, removed_x) = gradients(&mut net);
        assert_eq!(removed, plain);
        assert_eq!(removed_x, plain_x);
    });
}

#[test]
fn a_backward_pre_hook_that_zeroes_grad_output_zeroes_every_gradient_below() {
    integration_tests::in_own_process(|| {
        let mut net = net();
        net.fc2.register_full_backward_pre_hook(
            |grad_output| {
                Ok(Some(
                    grad_output
                        .iter()
                        .map(|g| g.as_ref().map(|g| g.mul_scalar(0.0).unwrap()))
                        .collect(),
                ))
            },
            false,
        );
        let (hooked, hooked_x) = gradients(&mut net);
        for (name, g) in &hooked {
            assert!(g.iter().all(|v| *v == 0.0), "{name}: {g:?}");
        }
        assert!(hooked_x.iter().all(|v| *v == 0.0));
    });
}

#[test]
fn the_hooks_see_the_gradients_of_the_modules_inputs_and_outputs() {
    integration_tests::in_own_process(|| {
        let mut net = net();
        // Expected: the same pass without hooks, through autograd::grad on fc2's input and output.
        let x = input();
        let h = net.act.forward(net.fc1.forward(x.clone()).unwrap()).unwrap();
        let y = net.fc2.forward(h.clone()).unwrap();
        let loss = y.mul(&y).unwrap().sum_all().unwrap();
        let expected = nn::autograd::grad(&[&loss], &[&h, &y], None, false).unwrap();
        let (want_in, want_out) = (
            vec_of(expected[0].as_ref().unwrap()),
            vec_of(expected[1].as_ref().unwrap()),
        );

        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        net.fc2.register_full_backward_hook(move |grad_input, grad_output| {
            assert_eq!((grad_input.len(), grad_output.len()), (1, 1));
            let got = (
                vec_of(grad_input[0].as_ref().unwrap()),
                vec_of(grad_output[0].as_ref().unwrap()),
            );
            sink.lock().unwrap().push(got);
            Ok(None)
        });
        net.zero_grad(true);
        let y = net.call(input()).unwrap();
        y.mul(&y).unwrap().sum_all().unwrap().backward().unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0], (want_in, want_out));
    });
}

#[test]
fn hooks_run_in_pytorchs_order_across_nested_modules() {
    integration_tests::in_own_process(|| {
        let mut net = net();
        let order = log();
        let pre = |who: &'static str, order: &Log| {
            let order = order.clone();
            move |_: &nn::Grads| {
                order.lock().unwrap().push(format!("{who} pre"));
                Ok(None)
            }
        };
        let full = |who: &'static str, order: &Log| {
            let order = order.clone();
            move |_: &nn::Grads, _: &nn::Grads| {
                order.lock().unwrap().push(format!("{who} hook"));
                Ok(None)
            }
        };
        net.register_full_backward_hook(full("net", &order));
        net.register_full_backward_pre_hook(pre("net", &order), false);
        net.fc2.register_full_backward_hook(full("fc2", &order));
        net.fc2
            .register_full_backward_pre_hook(pre("fc2 second", &order), false);
        net.fc2.register_full_backward_pre_hook(pre("fc2 first", &order), true);
        net.fc1.register_full_backward_hook(full("fc1", &order));
        gradients(&mut net);
        assert_eq!(
            entries(&order),
            [
                "net pre",
                "fc2 first pre",
                "fc2 second pre",
                "fc2 hook",
                "fc1 hook",
                "net hook"
            ]
        );
    });
}

#[test]
fn a_module_whose_input_needs_no_gradient_gets_none_for_it_and_may_not_return_one() {
    let mut fc = Linear::new(2, 1, true);
    let seen = log();
    let sink = seen.clone();
    fc.register_full_backward_hook(move |grad_input, grad_output| {
        sink.lock()
            .unwrap()
            .push(format!("{} {}", grad_input[0].is_none(), grad_output[0].is_some()));
        Ok(None)
    });
    let x = Tensor::ones([3, 2], DType::F32);
    fc.call(x.clone()).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(entries(&seen), ["true true"]);
    assert_eq!(vec_of(&fc.weight.grad().unwrap()), [3.0, 3.0]);

    let mut bad = Linear::new(2, 1, true);
    bad.register_full_backward_hook(|_, _| Ok(Some(vec![Some(Tensor::zeros([3, 2], DType::F32))])));
    let err = bad.call(x).unwrap().sum_all().unwrap().backward();
    let message = autograd_err(err, "register_full_backward_hook");
    // PyTorch's sentence (torch/utils/hooks.py, BackwardHook._set_user_hook).
    assert!(
        message.contains(
            "Backward hook for Modules where no input requires gradient should always return None or None for all \
             gradients."
        ),
        "{message}"
    );
}

#[test]
fn a_module_hook_replacement_that_does_not_fit_is_a_typed_error() {
    integration_tests::in_own_process(|| {
        let mut net = net();
        let h = net.fc2.register_full_backward_hook(|_, _| Ok(Some(vec![None, None])));
        let message = autograd_err(
            net.call(input()).unwrap().sum_all().unwrap().backward(),
            "register_full_backward_hook",
        );
        assert!(
            message.contains("Backward hook returned an invalid number of grad_input, got 2, but expected 1"),
            "{message}"
        );
        h.remove();
        net.fc2
            .register_full_backward_pre_hook(|_| Ok(Some(vec![Some(Tensor::zeros([5], DType::F32))])), false);
        let message = autograd_err(
            net.call(input()).unwrap().sum_all().unwrap().backward(),
            "register_full_backward_pre_hook",
        );
        assert!(message.contains("[5]") && message.contains("[2, 2]"), "{message}");
    });
}

#[test]
fn without_backward_hooks_or_under_no_grad_a_call_records_nothing_more() {
    let mut fc = Linear::new(2, 2, true);
    let x = input().narrow(1, 0, 2).unwrap();
    assert_eq!(fc.call(x.clone()).unwrap().grad_fn_name(), Some("linear"));
    fc.register_full_backward_hook(|_, _| Ok(None));
    assert_eq!(fc.call(x.clone()).unwrap().grad_fn_name(), Some("BackwardHookFunction"));
    let _no_grad = nn::no_grad();
    assert!(!fc.call(x).unwrap().requires_grad());
}
