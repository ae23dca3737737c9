//! Attention against PyTorch 2.5.1, as data (`fixtures/layers/attention.{json,safetensors}`, from
//! `fixtures/generate/attention_cases.py`, which lists what the cases cover): `scaled_dot_product_attention`,
//! `MultiheadAttention` and the Transformer layers, each built from PyTorch's arguments, loaded with its state
//! dict (strict), run on the case's inputs and masks, outputs and the gradients of the inputs and of every
//! parameter compared within `torch.testing.assert_close`'s defaults (float32: or twice PyTorch's own distance
//! from float64); keys, repr, and PyTorch's refusals. On the CPU and on a device.

use std::collections::BTreeMap;
use std::fmt::Display;

use integration_tests::{assert_close, lacks_dtype, on_cpu_and_gpu, tensors, under};
use nn::functional::scaled_dot_product_attention;
use nn::layers::{
    AttentionInput, DecoderInput, EncoderInput, FeedForwardActivation, MultiheadAttentionOptions, TransformerInput,
    TransformerLayerOptions, TransformerOptions,
};
use nn::prelude::*;
use nn::{DType, Device, Result, StateDict};
use serde_json::Value;

/// The cases of the fixture.
const CASES: usize = 90;

/// A case's inputs (leaves that require gradients, one tensor under several names where the case says) and
/// masks, on the case's device.
struct Inputs {
    tensors: BTreeMap<String, Tensor>,
    masks: BTreeMap<String, Tensor>,
}

impl Inputs {
    fn get(&self, name: &str) -> Tensor {
        self.tensors[name].clone()
    }

    fn mask(&self, name: &str) -> Option<Tensor> {
        self.masks.get(name).cloned()
    }
}

struct Case<'a> {
    what: String,
    spec: &'a Value,
    tensors: StateDict,
    device: Device,
}

impl Case<'_> {
    fn get(&self, key: &str) -> Tensor {
        self.tensors
            .get(key)
            .unwrap_or_else(|| panic!("{}: no tensor {key}", self.what))
            .clone()
    }

    fn inputs(&self, dtype: DType) -> Inputs {
        let same = self.spec["same"].as_str();
        let mut tensors = BTreeMap::new();
        for name in self.spec["inputs"].as_array().unwrap() {
            let name = name.as_str().unwrap();
            let alias = match (same, name) {
                (Some("qkv"), "key" | "value") => Some("query"),
                (Some("kv"), "value") => Some("key"),
                _ => None,
            };
            let t = match alias {
                Some(a) => tensors.get(a).cloned().unwrap(),
                None => self
                    .get(&format!("input.{name}"))
                    .to_dtype(dtype)
                    .unwrap()
                    .to_device(self.device)
                    .unwrap()
                    .requires_grad_(true)
                    .unwrap(),
            };
            tensors.insert(name.to_owned(), t);
        }
        let masks = self.spec["masks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|name| {
                let name = name.as_str().unwrap();
                let m = self.get(&format!("mask.{name}")).to_device(self.device).unwrap();
                (name.to_owned(), m)
            })
            .collect();
        Inputs { tensors, masks }
    }

    /// Checks `built` (a module, or `None` for a function) against the case; whether it ran.
    fn check<M: Module + Display>(
        &self,
        built: Result<Option<M>>,
        run: impl Fn(Option<&M>, &Inputs) -> Result<Vec<Tensor>>,
    ) -> bool {
        let what = &self.what;
        let dtype = super::case_dtype(self.spec);
        if lacks_dtype(self.device, dtype) {
            return false;
        }
        let refusal = self.spec["error"].as_str();
        let refused = |err: nn::Error, at: &str| super::refused_as_pytorch(what, self.spec, err, at);
        let mut m = match built {
            Ok(m) => m,
            Err(err) => return refused(err, "new"),
        };
        if let Some(m) = &mut m {
            m.to_dtype(dtype).unwrap();
            m.load_state_dict(&under(&self.tensors, "param."), true, false)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let keys: Vec<String> = m.state_dict().keys().cloned().collect();
            let want: Vec<String> = serde_json::from_value(self.spec["keys"].clone()).unwrap();
            assert_eq!(keys, want, "{what}: state dict keys");
            assert_eq!(m.to_string(), self.spec["repr"].as_str().unwrap(), "{what}: repr");
            m.to_device(self.device).unwrap();
        }
        let inputs = self.inputs(dtype);
        let outs = match run(m.as_ref(), &inputs) {
            Ok(outs) => outs,
            Err(e @ nn::Error::UnsupportedOnDevice { .. }) if !self.device.is_cpu() && dtype == DType::F64 => {
                // float64 `exp` on wgpu (README): a typed refusal, not a result to check.
                eprintln!("{what}: {e}");
                return false;
            }
            Err(err) => return refused(err, "forward"),
        };
        assert!(
            refusal.is_none(),
            "{what}: accepted; PyTorch refuses: {}",
            refusal.unwrap()
        );
        let compare = |name: &str, got: &Tensor, key: &str| super::compare_to_case(what, &self.tensors, name, got, key);
        assert_eq!(
            outs.len() as u64,
            self.spec["outputs"].as_u64().unwrap(),
            "{what}: outputs"
        );
        let mut loss: Option<Tensor> = None;
        for (k, out) in outs.iter().enumerate() {
            compare(&format!("output {k}"), out, &format!("output.{k}"));
            let proj = self.get(&format!("proj.{k}")).to_device(self.device).unwrap();
            let term = out.mul(&proj).unwrap().sum_all().unwrap();
            loss = Some(match loss {
                None => term,
                Some(l) => l.add(&term).unwrap(),
            });
        }
        loss.unwrap()
            .backward()
            .unwrap_or_else(|e| panic!("{what}: backward: {e}"));
        let params = m.as_ref().map(|m| m.named_parameters()).unwrap_or_default();
        for name in self.spec["grads"].as_array().unwrap() {
            let name = name.as_str().unwrap();
            let grad = match inputs.tensors.get(name) {
                Some(x) => x.grad(),
                None => params.iter().find(|(n, _)| n == name).unwrap().1.grad(),
            };
            let grad = grad.unwrap_or_else(|| panic!("{what}: no gradient of {name}"));
            compare(&format!("gradient of {name}"), &grad, &format!("grad.{name}"));
        }
        true
    }
}

/// The case's Transformer layer arguments (PyTorch's keyword arguments of the layers).
fn layer_options(a: &Value) -> TransformerLayerOptions {
    let activation = match a["activation"].as_str().unwrap() {
        "GELU()" => FeedForwardActivation::module(GELU::new("none").unwrap()),
        name => FeedForwardActivation::by_name(name).unwrap(),
    };
    TransformerLayerOptions {
        dim_feedforward: a["dim_feedforward"].as_u64().unwrap() as usize,
        dropout: a["dropout"].as_f64().unwrap(),
        activation,
        layer_norm_eps: a["layer_norm_eps"].as_f64().unwrap(),
        batch_first: a["batch_first"].as_bool().unwrap(),
        norm_first: a["norm_first"].as_bool().unwrap(),
        bias: a["bias"].as_bool().unwrap(),
    }
}

fn sizes(a: &Value) -> (usize, usize) {
    (
        a["d_model"].as_u64().unwrap() as usize,
        a["nhead"].as_u64().unwrap() as usize,
    )
}

fn encoder_input(i: &Inputs) -> EncoderInput {
    EncoderInput {
        src_mask: i.mask("src_mask").or(i.mask("mask")),
        src_key_padding_mask: i.mask("src_key_padding_mask"),
        ..EncoderInput::new(i.get("src"))
    }
}

fn decoder_input(i: &Inputs) -> DecoderInput {
    DecoderInput {
        tgt_mask: i.mask("tgt_mask"),
        memory_key_padding_mask: i.mask("memory_key_padding_mask"),
        ..DecoderInput::new(i.get("tgt"), i.get("memory"))
    }
}

/// The final norm of an encoder or decoder case, as PyTorch's generator builds it.
fn final_norm(a: &Value) -> Option<LayerNorm> {
    let d = a["layer"]["d_model"].as_u64().unwrap() as usize;
    let bias = a["layer"]["bias"].as_bool().unwrap();
    a["norm"]
        .as_bool()
        .unwrap()
        .then(|| LayerNorm::with_options(vec![d], 1e-5, true, bias))
}

fn build(case: &Case) -> bool {
    let a = &case.spec["args"];
    let f = &case.spec["forward"];
    let one = |t: Result<Tensor>| t.map(|t| vec![t]);
    match case.spec["kind"].as_str().unwrap() {
        "sdpa" => case.check(Ok(None::<Identity>), |_, i| {
            one(scaled_dot_product_attention(
                &i.get("query"),
                &i.get("key"),
                &i.get("value"),
                i.mask("attn_mask").as_ref(),
                0.0,
                f["is_causal"].as_bool().unwrap(),
                f["scale"].as_f64(),
            ))
        }),
        "MultiheadAttention" => {
            let dim = |k: &str| a.get(k).and_then(Value::as_u64).map(|v| v as usize);
            let options = MultiheadAttentionOptions {
                bias: a["bias"].as_bool().unwrap(),
                add_bias_kv: a["add_bias_kv"].as_bool().unwrap(),
                add_zero_attn: a["add_zero_attn"].as_bool().unwrap(),
                kdim: dim("kdim"),
                vdim: dim("vdim"),
                batch_first: a["batch_first"].as_bool().unwrap(),
                ..Default::default()
            };
            let built = MultiheadAttention::with_options(dim("embed_dim").unwrap(), dim("num_heads").unwrap(), options);
            case.check(built.map(Some), |m, i| {
                let input = AttentionInput {
                    key_padding_mask: i.mask("key_padding_mask"),
                    attn_mask: i.mask("attn_mask"),
                    need_weights: f["need_weights"].as_bool().unwrap(),
                    average_attn_weights: f["average_attn_weights"].as_bool().unwrap(),
                    is_causal: f.get("is_causal").and_then(Value::as_bool).unwrap_or(false),
                    ..AttentionInput::new(i.get("query"), i.get("key"), i.get("value"))
                };
                let (out, weights) = m.unwrap().call(input)?;
                Ok([Some(out), weights].into_iter().flatten().collect())
            })
        }
        "TransformerEncoderLayer" => {
            let (d, h) = sizes(a);
            let built = TransformerEncoderLayer::with_options(d, h, layer_options(a));
            case.check(built.map(Some), |m, i| one(m.unwrap().call(encoder_input(i))))
        }
        "TransformerDecoderLayer" => {
            let (d, h) = sizes(a);
            let built = TransformerDecoderLayer::with_options(d, h, layer_options(a));
            case.check(built.map(Some), |m, i| one(m.unwrap().call(decoder_input(i))))
        }
        "TransformerEncoder" => {
            let (d, h) = sizes(&a["layer"]);
            let n = a["num_layers"].as_u64().unwrap() as usize;
            let built = TransformerEncoderLayer::with_options(d, h, layer_options(&a["layer"]))
                .and_then(|layer| TransformerEncoder::new(layer, n, final_norm(a)));
            case.check(built.map(Some), |m, i| one(m.unwrap().call(encoder_input(i))))
        }
        "TransformerDecoder" => {
            let (d, h) = sizes(&a["layer"]);
            let n = a["num_layers"].as_u64().unwrap() as usize;
            let built = TransformerDecoderLayer::with_options(d, h, layer_options(&a["layer"]))
                .and_then(|layer| TransformerDecoder::new(layer, n, final_norm(a)));
            case.check(built.map(Some), |m, i| one(m.unwrap().call(decoder_input(i))))
        }
        "Transformer" => {
            let (d, h) = sizes(a);
            let options = TransformerOptions {
                num_encoder_layers: a["num_encoder_layers"].as_u64().unwrap() as usize,
                num_decoder_layers: a["num_decoder_layers"].as_u64().unwrap() as usize,
                layer: layer_options(a),
            };
            case.check(Transformer::with_options(d, h, options).map(Some), |m, i| {
                let mut input = TransformerInput::new(i.get("src"), i.get("tgt"));
                input.tgt.tgt_mask = i.mask("tgt_mask");
                input.tgt.memory_key_padding_mask = i.mask("memory_key_padding_mask");
                one(m.unwrap().call(input))
            })
        }
        other => panic!("no attention kind {other} in the runner"),
    }
}

fn check(device: Device) {
    super::run_fixture("attention", CASES, 8, device, |i, spec, tensors| {
        let what = format!(
            "case {i} ({} {} {}) on {device}",
            spec["kind"], spec["args"], spec["dtype"]
        );
        build(&Case {
            what,
            spec,
            tensors,
            device,
        })
    });
}

on_cpu_and_gpu!(
    every_attention_case_matches_pytorch,
    every_attention_case_on_a_device_matches_pytorch,
    check
);

/// The modules of the generator's `INIT`, built after `manual_seed(0)`, hold PyTorch's values: the same draws
/// in the same order (the deep copies of a stack equal, the Transformer's Xavier pass over every matrix).
#[test]
fn initialisation_from_a_seed_matches_pytorch() {
    let f = tensors("layers/attention.safetensors");
    let check = |name: &str, m: &dyn Fn() -> StateDict| {
        nn::manual_seed(0);
        let got = m();
        let want = under(&f, &format!("init.{name}."));
        assert_eq!(
            got.len(),
            want.len(),
            "{name}: keys {:?}",
            got.keys().collect::<Vec<_>>()
        );
        for (key, t) in &want {
            assert_close(&format!("{name}: {key}"), &got[key], t);
        }
    };
    let mha = || {
        MultiheadAttention::with_options(
            6,
            2,
            MultiheadAttentionOptions {
                add_bias_kv: true,
                ..Default::default()
            },
        )
    };
    check("mha", &|| mha().unwrap().state_dict());
    let kv = MultiheadAttentionOptions {
        kdim: Some(3),
        vdim: Some(5),
        ..Default::default()
    };
    check("mha_kv", &|| {
        MultiheadAttention::with_options(4, 2, kv).unwrap().state_dict()
    });
    let layer = || TransformerLayerOptions {
        dim_feedforward: 8,
        ..Default::default()
    };
    check("encoder_layer", &|| {
        TransformerEncoderLayer::with_options(4, 2, layer())
            .unwrap()
            .state_dict()
    });
    check("decoder_layer", &|| {
        TransformerDecoderLayer::with_options(4, 2, layer())
            .unwrap()
            .state_dict()
    });
    let options = TransformerOptions {
        num_encoder_layers: 1,
        num_decoder_layers: 2,
        layer: layer(),
    };
    check("transformer", &|| {
        Transformer::with_options(4, 2, options.clone()).unwrap().state_dict()
    });
}
