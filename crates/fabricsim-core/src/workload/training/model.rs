//! A transformer's shape (`[[jobs]] model`) and what one micro-batch costs it: FLOPs per layer,
//! the bytes of its activations, its parameters.
//!
//! Counts follow Megatron-LM (Narayanan et al., "Efficient Large-Scale Language Model
//! Training on GPU Clusters Using Megatron-LM", SC 2021, sec. 5.1 and appendix): a layer's
//! forward pass over `b` sequences of `s` tokens of width `h` takes `24 b s h^2 + 4 b s^2 h`
//! FLOPs with a 4h-wide MLP, of which `8 b s h^2 + 4 b s^2 h` are attention (Q, K, V and the
//! output projection, and the two score products) and `16 b s h^2` the MLP; here the MLP is
//! `2 m b s h f` for an MLP of width `f` with `m` weight matrices (2, or 3 when `gated`, as
//! in SwiGLU), times `top_k` in a mixture-of-experts layer, whose tokens each go to `top_k` of
//! `experts` experts (Fedus et al., "Switch Transformers", JMLR 2022; Jiang et al.,
//! "Mixtral of Experts", 2024). The logits take `2 b s h V` on the last stage. The backward
//! pass costs twice the forward (no activation recomputation). Weights, activations and
//! gradients are 2-byte (bf16) values.

use serde::{Deserialize, Serialize};

use crate::error::{ensure, ScenarioError};

/// `[[jobs]] model`: a preset and/or the shape's fields (given fields override the preset's);
/// a preset's name alone (`model = "gpt3-13b"`) stands for `{ preset = "gpt3-13b" }`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// A named shape ([`PRESETS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<u32>,
    /// MLP width; default 4 x hidden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ffn: Option<u32>,
    /// Sequence length, tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab: Option<u32>,
    /// Experts per MoE layer (0 or absent: a dense model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experts: Option<u32>,
    /// Experts each token goes to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// A gated MLP (SwiGLU: three weight matrices instead of two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gated: Option<bool>,
}

/// Reads `model`: a preset's name, or the table.
pub fn preset_or_table<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ModelConfig>, D::Error> {
    use serde::de::Error;
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(name) => Ok(Some(ModelConfig { preset: Some(name), ..ModelConfig::default() })),
        v => ModelConfig::deserialize(v).map(Some).map_err(D::Error::custom),
    }
}

/// A checked shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub layers: u64,
    pub hidden: u64,
    pub ffn: u64,
    pub seq: u64,
    pub vocab: u64,
    /// 0: dense.
    pub experts: u64,
    pub top_k: u64,
    pub gated: bool,
}

/// Bytes of a bf16 value.
pub const VALUE_BYTES: u64 = 2;

/// Public model shapes: name, (layers, hidden, ffn, seq, vocab, experts, top_k, gated), source.
pub const PRESETS: &[(&str, Shape, &str)] = &[
    ("gpt3-1.3b", shape(24, 2048, 4 * 2048, 2048, 50257, 0, 1, false), "Brown et al. 2020, Table 2.1"),
    ("gpt3-13b", shape(40, 5120, 4 * 5120, 2048, 50257, 0, 1, false), "Brown et al. 2020, Table 2.1"),
    ("gpt3-175b", shape(96, 12288, 4 * 12288, 2048, 50257, 0, 1, false), "Brown et al. 2020, Table 2.1"),
    ("llama2-70b", shape(80, 8192, 28672, 4096, 32000, 0, 1, true), "Touvron et al. 2023 (Llama 2), Table 1; its config"),
    // Mixtral's context is 32 768 tokens; 4096 here (give `seq` to change it)
    ("mixtral-8x7b", shape(32, 4096, 14336, 4096, 32000, 8, 2, true), "Jiang et al. 2024 (Mixtral), Table 1"),
];

#[allow(clippy::too_many_arguments)]
const fn shape(layers: u64, hidden: u64, ffn: u64, seq: u64, vocab: u64, experts: u64, top_k: u64, gated: bool) -> Shape {
    Shape { layers, hidden, ffn, seq, vocab, experts, top_k, gated }
}

impl ModelConfig {
    /// The shape: the preset's, with the given fields instead of its own.
    pub fn resolve(&self, at: &str) -> Result<Shape, ScenarioError> {
        let base = match &self.preset {
            Some(name) => Some(PRESETS.iter().find(|p| p.0 == name).map(|p| p.1).ok_or_else(|| {
                let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
                ScenarioError::new(format!("{at}.preset"), format!("\"{name}\""), format!("allowed: {}", names.join(", ")))
            })?),
            None => None,
        };
        let need = |v: Option<u32>, from: Option<u64>, k: &str| -> Result<u64, ScenarioError> {
            let v = v
                .map(u64::from)
                .or(from)
                .ok_or_else(|| ScenarioError { field: format!("{at}.{k}"), message: "missing; give it or a preset".into() })?;
            ensure((1..=1 << 24).contains(&v), &format!("{at}.{k}"), v, "allowed: 1 to 16777216")?;
            Ok(v)
        };
        let layers = need(self.layers, base.map(|b| b.layers), "layers")?;
        let hidden = need(self.hidden, base.map(|b| b.hidden), "hidden")?;
        let ffn = need(self.ffn, Some(base.map_or(4 * hidden, |b| b.ffn)), "ffn")?;
        let seq = need(self.seq, base.map(|b| b.seq), "seq")?;
        let vocab = need(self.vocab, base.map(|b| b.vocab), "vocab")?;
        let experts = self.experts.map(u64::from).or(base.map(|b| b.experts)).unwrap_or(0);
        let top_k = self.top_k.map(u64::from).or(base.map(|b| b.top_k)).unwrap_or(1);
        ensure(experts <= 1 << 16, &format!("{at}.experts"), experts, "allowed: 0 (dense) to 65536")?;
        ensure(
            top_k >= 1 && top_k <= experts.max(1),
            &format!("{at}.top_k"),
            top_k,
            format!("allowed: 1 to experts ({})", experts.max(1)),
        )?;
        let gated = self.gated.or(base.map(|b| b.gated)).unwrap_or(false);
        Ok(Shape { layers, hidden, ffn, seq, vocab, experts, top_k, gated })
    }
}

impl Shape {
    pub fn moe(&self) -> bool {
        self.experts > 0
    }

    /// Forward FLOPs of one layer over `b` sequences: (attention, MLP or experts).
    pub fn layer_flops(&self, b: u64) -> (f64, f64) {
        let (b, s, h, f) = (b as f64, self.seq as f64, self.hidden as f64, self.ffn as f64);
        let mats = if self.gated { 3.0 } else { 2.0 };
        let attention = 8.0 * b * s * h * h + 4.0 * b * s * s * h;
        let mlp = 2.0 * mats * b * s * h * f * self.top_k as f64;
        (attention, mlp)
    }

    /// Forward FLOPs of the logits over `b` sequences (last stage).
    pub fn logits_flops(&self, b: u64) -> f64 {
        2.0 * (b * self.seq) as f64 * (self.hidden * self.vocab) as f64
    }

    /// Bytes of one micro-batch's activations at a layer's boundary (`b` sequences).
    pub fn activation_bytes(&self, b: u64) -> u64 {
        b * self.seq * self.hidden * VALUE_BYTES
    }

    /// Parameters of one layer: (dense part, one expert's MLP; 0 for a dense model, whose MLP
    /// is in the dense part).
    pub fn layer_params(&self) -> (u64, u64) {
        let mlp = if self.gated { 3 } else { 2 } * self.hidden * self.ffn;
        let attention = 4 * self.hidden * self.hidden;
        if self.moe() {
            (attention, mlp)
        } else {
            (attention + mlp, 0)
        }
    }

    /// Parameters of the embedding (first stage) and of the output layer (last stage).
    pub fn embedding_params(&self) -> u64 {
        self.vocab * self.hidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn megatrons_counts_and_presets() {
        // a 4h MLP, not gated: 24 b s h^2 + 4 b s^2 h per layer forward
        let s = ModelConfig { preset: Some("gpt3-175b".into()), ..Default::default() }.resolve("jobs[0].model").unwrap();
        let (a, m) = s.layer_flops(1);
        let (h, q) = (12288f64, 2048f64);
        assert_eq!(a + m, 24.0 * q * h * h + 4.0 * q * q * h);
        // 96 layers of 12 h^2 and the embedding: GPT-3's 175 B
        let total = s.layers * s.layer_params().0 + s.embedding_params();
        assert!((174e9..176e9).contains(&(total as f64)), "{total}");
        let over = ModelConfig { preset: Some("mixtral-8x7b".into()), layers: Some(2), ..Default::default() }.resolve("m").unwrap();
        assert_eq!((over.layers, over.experts, over.top_k), (2, 8, 2));
        let e = ModelConfig { preset: Some("gpt5".into()), ..Default::default() }.resolve("jobs[0].model").unwrap_err();
        assert_eq!(e.field, "jobs[0].model.preset");
        assert_eq!(ModelConfig::default().resolve("m").unwrap_err().field, "m.layers");
    }
}
