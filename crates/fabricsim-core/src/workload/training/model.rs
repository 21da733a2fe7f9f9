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
//! pass costs twice the forward; activation recomputation (`parallel.recompute`) adds to it.
//!
//! Grouped-query attention (Ainslie et al., "GQA", EMNLP 2023; Llama 2 70B, Llama 3, Mixtral):
//! `kv_heads` of the `heads` attention heads' keys and values, so the K and V projections are
//! `h x h kv_heads / heads` each instead of `h x h`. A layer's attention then has
//! `2 h^2 (1 + kv_heads / heads)` parameters and takes `4 b s h^2 (1 + kv_heads / heads) +
//! 4 b s^2 h` FLOPs forward, as Megatron-LM counts it (`num_floating_point_operations` in
//! `megatron/training/training.py`, with `num_query_groups`). Weights and activations are
//! 2-byte (bf16) values; gradients as `parallel.grad_dtype` says.
//!
//! An MoE layer's tokens are routed evenly (each expert gets its share, `b s top_k / experts`
//! of a micro-batch's tokens: the load balancing loss's aim, not what a real router reaches).
//! With a `capacity_factor` `c` (Megatron-LM's `moe_expert_capacity_factor`) an expert takes at
//! most `c` times its share: below 1 the rest are dropped, so the dispatch and combine
//! all-to-alls and the experts' FLOPs carry `c` of the tokens; with `pad_to_capacity` each
//! expert's input is padded to its capacity, `c` times its share, above 1 as well (GShard's
//! fixed-size expert buffers). Without it the layer is dropless (Megatron-LM's default).

use serde::{Deserialize, Serialize};

use crate::error::{ensure, ScenarioError};

/// `[[jobs]] model`: a preset and/or the shape's fields (given fields override the preset's);
/// a preset's name alone (`model = "gpt3-13b"`) stands for `{ preset = "gpt3-13b" }`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Attention heads (default: the preset's; 1 without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heads: Option<u32>,
    /// Key/value heads of grouped-query attention (default: the preset's, else `heads`:
    /// multi-head attention).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_heads: Option<u32>,
    /// An MoE layer's expert capacity, as a multiple of its even share of the tokens
    /// (Megatron-LM's `moe_expert_capacity_factor`; absent: dropless, every token routed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_factor: Option<f64>,
    /// Each expert's input padded to its capacity (Megatron-LM's
    /// `moe_pad_expert_input_to_capacity`, GShard's fixed-size expert buffers; default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pad_to_capacity: Option<bool>,
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
    /// Attention heads, and key/value heads (grouped-query attention where fewer).
    pub heads: u64,
    pub kv_heads: u64,
    /// The tokens an expert takes, in millionths of its even share ([`Shape::routed`]).
    pub load_ppm: u64,
}

/// [`Shape::load_ppm`] of a dropless MoE layer (and of a dense model): every token once.
pub const EVEN: u64 = 1_000_000;

/// Bytes of a bf16 value.
pub const VALUE_BYTES: u64 = 2;

/// Public model shapes: name, shape, source. Heads as published (GPT-3: `d_head` 128;
/// Llama 2 70B, Llama 3 and Mixtral: 8 key/value heads).
pub const PRESETS: &[(&str, Shape, &str)] = &[
    ("gpt3-1.3b", shape(24, 2048, 4 * 2048, 2048, 50257, (0, 1), false, (16, 16)), "Brown et al. 2020, Table 2.1"),
    ("gpt3-13b", shape(40, 5120, 4 * 5120, 2048, 50257, (0, 1), false, (40, 40)), "Brown et al. 2020, Table 2.1"),
    ("gpt3-175b", shape(96, 12288, 4 * 12288, 2048, 50257, (0, 1), false, (96, 96)), "Brown et al. 2020, Table 2.1"),
    ("llama2-70b", shape(80, 8192, 28672, 4096, 32000, (0, 1), true, (64, 8)), "Touvron et al. 2023 (Llama 2), Table 1; its config"),
    // Llama 3's context is 8 192 tokens (128 K for 3.1); its vocabulary 128 256
    ("llama3-8b", shape(32, 4096, 14336, 8192, 128256, (0, 1), true, (32, 8)), "Llama 3 herd paper (Dubey et al. 2024), Table 3"),
    ("llama3-70b", shape(80, 8192, 28672, 8192, 128256, (0, 1), true, (64, 8)), "Llama 3 herd paper (Dubey et al. 2024), Table 3"),
    ("llama3-405b", shape(126, 16384, 53248, 8192, 128256, (0, 1), true, (128, 8)), "Llama 3 herd paper (Dubey et al. 2024), Table 3"),
    // Mixtral's context is 32 768 tokens; 4096 here (give `seq` to change it)
    ("mixtral-8x7b", shape(32, 4096, 14336, 4096, 32000, (8, 2), true, (32, 8)), "Jiang et al. 2024 (Mixtral), Table 1"),
];

/// A shape: `(experts, top_k)` (0 experts: dense) and `(heads, kv_heads)`.
#[allow(clippy::too_many_arguments)]
const fn shape(layers: u64, hidden: u64, ffn: u64, seq: u64, vocab: u64, moe: (u64, u64), gated: bool, heads: (u64, u64)) -> Shape {
    Shape { layers, hidden, ffn, seq, vocab, experts: moe.0, top_k: moe.1, gated, heads: heads.0, kv_heads: heads.1, load_ppm: EVEN }
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
        let heads = self.heads.map(u64::from).or(base.map(|b| b.heads)).unwrap_or(1);
        ensure((1..=hidden).contains(&heads), &format!("{at}.heads"), heads, format!("allowed: 1 to hidden ({hidden})"))?;
        // a preset's key/value heads go with its heads: other heads alone mean multi-head
        let kv_default = base.filter(|b| self.heads.is_none_or(|h| u64::from(h) == b.heads)).map_or(heads, |b| b.kv_heads);
        let kv_heads = self.kv_heads.map_or(kv_default, u64::from);
        ensure(
            kv_heads >= 1 && heads.is_multiple_of(kv_heads),
            &format!("{at}.kv_heads"),
            kv_heads,
            format!("allowed: a divisor of heads ({heads}); heads itself for multi-head attention"),
        )?;
        let load_ppm = match self.capacity_factor {
            None => {
                ensure(self.pad_to_capacity != Some(true), &format!("{at}.pad_to_capacity"), "true", "allowed: with a capacity_factor")?;
                EVEN
            }
            Some(c) => {
                ensure(experts > 0, &format!("{at}.capacity_factor"), c, "allowed: only in an MoE model (experts > 0)")?;
                ensure(c.is_finite() && c > 0.0 && c <= 64.0, &format!("{at}.capacity_factor"), c, "allowed: above 0, at most 64")?;
                let ppm = (c * EVEN as f64).round().max(1.0) as u64;
                if self.pad_to_capacity.unwrap_or(false) {
                    ppm
                } else {
                    ppm.min(EVEN)
                }
            }
        };
        Ok(Shape { layers, hidden, ffn, seq, vocab, experts, top_k, gated, heads, kv_heads, load_ppm })
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
        let kv = self.kv_heads as f64 / self.heads as f64;
        let attention = 4.0 * b * s * h * h * (1.0 + kv) + 4.0 * b * s * s * h;
        let mlp = 2.0 * mats * b * s * h * f * self.top_k as f64 * self.load_ppm as f64 / EVEN as f64;
        (attention, mlp)
    }

    /// Forward FLOPs of the logits over `b` sequences (last stage).
    pub fn logits_flops(&self, b: u64) -> f64 {
        2.0 * (b * self.seq) as f64 * (self.hidden * self.vocab) as f64
    }

    /// Bytes one rank of a tensor-parallel group of `tp` sends into an MoE layer's dispatch
    /// (and its combine) all-to-all over `b` sequences: its share of the `b s top_k` routed
    /// tokens, times the experts' load. Under the even routing assumed here an expert gets
    /// its share of the tokens; a capacity factor `c` below 1 drops the rest (`c` of them
    /// routed), and with `pad_to_capacity` every expert's input is padded to `c` times its
    /// share (Megatron-LM's `topk_softmax_with_capacity` in `megatron/core/transformer/moe/
    /// moe_utils.py`; Lepikhin et al., "GShard", ICLR 2021, sec. 2.2; Fedus et al., "Switch
    /// Transformers", sec. 2.2).
    pub fn routed(&self, b: u64, tp: u64) -> u64 {
        let even = b * self.seq * self.top_k * self.hidden * VALUE_BYTES / tp;
        (u128::from(even) * u128::from(self.load_ppm) / u128::from(EVEN)) as u64
    }

    /// Bytes of one micro-batch's activations at a layer's boundary (`b` sequences).
    pub fn activation_bytes(&self, b: u64) -> u64 {
        b * self.seq * self.hidden * VALUE_BYTES
    }

    /// Parameters of one layer: (dense part, one expert's MLP; 0 for a dense model, whose MLP
    /// is in the dense part).
    pub fn layer_params(&self) -> (u64, u64) {
        let mlp = if self.gated { 3 } else { 2 } * self.hidden * self.ffn;
        // Q and the output projection h x h each; K and V h x (h kv_heads / heads) each
        let attention = 2 * self.hidden * self.hidden + 2 * self.hidden * (self.hidden * self.kv_heads / self.heads);
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
    fn a_capacity_factor_scales_the_routed_tokens_only_where_it_drops_or_pads() {
        let moe = |extra: &str| {
            let c: ModelConfig = serde_json::from_str(&format!("{{\"preset\": \"mixtral-8x7b\"{extra}}}")).unwrap();
            c.resolve("m")
        };
        let even = moe("").unwrap();
        assert_eq!(even.load_ppm, EVEN);
        assert_eq!(moe(", \"capacity_factor\": 1.25").unwrap().load_ppm, EVEN, "nothing dropped, nothing padded");
        let padded = moe(", \"capacity_factor\": 1.25, \"pad_to_capacity\": true").unwrap();
        assert_eq!(padded.routed(1, 2), even.routed(1, 2) * 5 / 4);
        assert!((padded.layer_flops(1).1 / even.layer_flops(1).1 - 1.25).abs() < 1e-12);
        let dropping = moe(", \"capacity_factor\": 0.5").unwrap();
        assert_eq!(dropping.routed(1, 2), even.routed(1, 2) / 2);
        for (extra, field) in [
            (", \"pad_to_capacity\": true", "m.pad_to_capacity"),
            (", \"capacity_factor\": 0", "m.capacity_factor"),
            (", \"capacity_factor\": 65", "m.capacity_factor"),
            (", \"experts\": 0, \"top_k\": 1, \"capacity_factor\": 1", "m.capacity_factor"),
        ] {
            assert_eq!(moe(extra).unwrap_err().field, field, "{extra}");
        }
    }

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

    #[test]
    fn grouped_query_attention_gives_the_published_parameter_counts() {
        let params = |name: &str| {
            let s = ModelConfig { preset: Some(name.into()), ..Default::default() }.resolve("m").unwrap();
            let (dense, expert) = s.layer_params();
            (s.layers * (dense + s.experts * expert) + 2 * s.embedding_params()) as f64 / 1e9
        };
        // Llama 2 70B: 69.0 B (untied embeddings); Mixtral 8x7B: 46.7 B; Llama 3: 8.0, 70.6, 405.9 B
        for (name, published) in
            [("llama2-70b", 69.0), ("mixtral-8x7b", 46.7), ("llama3-8b", 8.0), ("llama3-70b", 70.6), ("llama3-405b", 405.9)]
        {
            let got = params(name);
            assert!((got - published).abs() / published < 0.01, "{name}: {got:.2} B against {published} B");
        }
        // multi-head attention would give Llama 2 70B 10.7 B more (80 layers of 2 h^2 x 7/8)
        let mha = ModelConfig { preset: Some("llama2-70b".into()), kv_heads: Some(64), ..Default::default() }.resolve("m").unwrap();
        let gqa = ModelConfig { preset: Some("llama2-70b".into()), ..Default::default() }.resolve("m").unwrap();
        assert_eq!(80 * (mha.layer_params().0 - gqa.layer_params().0), 80 * 2 * 8192 * 8192 * 7 / 8);
        let (a_mha, _) = mha.layer_flops(1);
        let (a_gqa, _) = gqa.layer_flops(1);
        assert_eq!(a_mha - a_gqa, 4.0 * 4096.0 * 8192.0 * 8192.0 * 7.0 / 8.0);
        // other heads alone mean multi-head attention; kv_heads must divide heads
        let other = ModelConfig { preset: Some("llama2-70b".into()), heads: Some(32), ..Default::default() }.resolve("m").unwrap();
        assert_eq!((other.heads, other.kv_heads), (32, 32));
        let bad = ModelConfig { preset: Some("llama2-70b".into()), kv_heads: Some(3), ..Default::default() }.resolve("m").unwrap_err();
        assert_eq!(bad.field, "m.kv_heads");
    }
}
