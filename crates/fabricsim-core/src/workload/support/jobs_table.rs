//! The `[[jobs]]` table as a scenario writes it: one entry's fields (each declared once, with
//! its meaning: docs/scenario.md's table is generated from them), its placement, its algorithm
//! choice and its host list. What a job makes of them: [`super::job`].

use serde::{Deserialize, Serialize};

use crate::engine::rng::Rng;
use crate::topology::Topology;
use crate::units::{Duration, Size};
use crate::workload::collective::nccl::{CostsModel, ProtocolChoice};
use crate::workload::collective::{tuner, AlgorithmKind, Op};
use crate::workload::training::{ModelConfig, Parallel};

/// How `ranks = N` are put on hosts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    #[default]
    Packed,
    Spread,
    Rail,
    Random,
}

impl Placement {
    /// Every host, in the order this placement takes them (a job takes the first free ones).
    pub(crate) fn order(self, topo: &Topology, rng: &mut Rng) -> Vec<u32> {
        let hosts = topo.gpus();
        match self {
            // by host id: a server's NICs, then the next server's
            Placement::Packed => (0..hosts).collect(),
            // the first host of each leaf (edge switch), then the second of each, ...
            Placement::Spread => topo.spread_order(),
            // NIC 0 of every server, then NIC 1 of every server, ...
            Placement::Rail => {
                let (n, servers) = (topo.nics(), topo.servers());
                (0..hosts).map(|r| (r % servers) * n + r / servers).collect()
            }
            Placement::Random => {
                let mut all: Vec<u32> = (0..hosts).collect();
                rng.shuffle(&mut all);
                all
            }
        }
    }
}

/// One `[[jobs]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobConfig {
    /// Name in the results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "`\"job<i>\"`"))]
    pub name: Option<String>,
    /// The operation each iteration runs. Give it or `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<Op>,
    /// A model to train instead: each iteration is a training step ([workloads.md](workloads.md#training-iterations)).
    /// `model = "gpt3-13b"` stands for `{ preset = "gpt3-13b" }`. Fields: `preset` (`gpt3-1.3b`, `gpt3-13b`, `gpt3-175b`,
    /// `llama2-70b`, `llama3-8b`, `llama3-70b`, `llama3-405b`, `mixtral-8x7b`) and/or `layers`, `hidden`, `ffn` (default 4
    /// x hidden), `seq`, `vocab`, `experts` (0: dense), `top_k` (default 1), `gated` (SwiGLU MLP, default false), `heads`
    /// (attention heads; default the preset's, else 1), `kv_heads` (key/value heads of grouped-query attention, a divisor
    /// of `heads`; default the preset's: 8 for the Llama 2 70B, Llama 3 and Mixtral presets; `heads` otherwise, multi-head
    /// attention), `capacity_factor` (an MoE layer's expert capacity as a multiple of its even share of the tokens, above 0
    /// and at most 64, Megatron-LM's `moe_expert_capacity_factor`; absent: dropless) and `pad_to_capacity` (each expert's
    /// input padded to its capacity, default false; needs `capacity_factor`): under the even routing modeled, a factor
    /// below 1 carries that fraction of the tokens through the all-to-alls and the experts, and padding carries the factor
    /// itself ([workloads.md](workloads.md#bytes-per-gpu)); given fields override the preset's.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::workload::training::model::preset_or_table")]
    #[schemars(extend("x-type" = "table, or a preset's name"))]
    pub model: Option<ModelConfig>,
    /// With `model`: `tp`, `pp` (default 1 each), `cp` (context parallelism: the sequence split over this many ranks,
    /// ring attention; default 1), `vpp` (virtual pipeline stages per rank, Megatron-LM's interleaved 1F1B; default 1:
    /// [workloads.md](workloads.md#training-iterations)), `dp` (default ranks / (tp x cp x pp); tp x cp x pp x dp must be
    /// the ranks), `ep`
    /// (expert parallelism, a divisor of dp and of the experts; default 1), `micro_batches` (per replica and iteration,
    /// default pp), `micro_batch_size` (sequences, default 1), `gpu_tflops` (required: what one GPU computes, TFLOP/s
    /// achieved), `bucket` (gradient bucket size, default `"25MiB"`), `grad_dtype` (`"fp32"`, the default: Megatron-LM
    /// under `--bf16` reduces fp32 gradients; or `"bf16"`), `distributed_optimizer` (default false: each bucket is
    /// reduce-scattered, then its bf16 parameters all-gathered, instead of allreduced), `sequence_parallel` (default false:
    /// each tensor-parallel allreduce becomes an all-gather before its block and a reduce-scatter after), `recompute`
    /// (`"none"`, the default; `"selective"`: the attention's score products again in the backward pass; `"full"`: each
    /// layer's forward again, its communication included). Bytes per GPU of each kind:
    /// [workloads.md](workloads.md#bytes-per-gpu).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<Parallel>,
    /// How it is done (algorithms.md). `halving_doubling` needs a power-of-two rank count; `tree` (NCCL's double binary
    /// tree) is for allreduce only; `direct` is for alltoall only; `hierarchical` (rings inside each server, then one ring
    /// per rail across servers) is for allreduce, reduce_scatter and allgather, on jobs with as many ranks on every server
    /// they use; `nvls` (NVLink SHARP: the scale-up switch reduces and multicasts) is for allreduce, reduce_scatter and
    /// allgather on the GPUs of one server with a scale-up network that reduces (`topology.scale_up_nvls`), under Simple.
    /// `auto`: what NCCL's tuner picks, ring or tree for an allreduce by its latency and bandwidth model (under the job's
    /// `protocol`, one GPU per node: [workloads.md](workloads.md#collectives-as-nccl-runs-them)), the ring for
    /// reduce_scatter, allgather and broadcast, `direct` for alltoall; on one server's scale-up network it estimates over
    /// NVLink, NVLS among the candidates where the switch reduces. A training job (`model`) takes `auto` (its default: each
    /// collective on one server's switch that reduces runs NVLS or the ring as NCCL's tuner picks, the ring elsewhere) or
    /// `ring` ([workloads.md](workloads.md#collectives-as-nccl-runs-them), "NVLS in training jobs").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "`ring` (`direct` for alltoall; `auto` for a training job)"))]
    pub algorithm: Option<AlgorithmChoice>,
    /// NCCL's channels: the buffer cut into this many parts, each run by the algorithm at once on queue pairs of its own
    /// (`transport.connections = "per_pair"`: a pair's channels are separate connections, so ECMP hashes them apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-type" = "integer 1-64", "x-default" = "`1`"))]
    pub channels: Option<u32>,
    /// Queue pairs a connection (NCCL's `NCCL_IB_QPS_PER_CONNECTION`): with `transport.connections = "per_pair"`, a rank's
    /// successive messages to a peer on a channel take that channel's queue pairs in turn (NCCL's round-robin mode,
    /// `NCCL_IB_SPLIT_DATA_ON_QPS = 0`, its default since 2.20), each queue pair a connection of its own with its own
    /// window and EV, which ECMP hashes apart (`switch.hash_fields`). Collective and training jobs; docs/workloads.md, "Queue pairs and hashing".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-type" = "integer 1-128", "x-default" = "`1` (NCCL's)"))]
    pub qps: Option<u32>,
    /// Ring allreduce, reduce_scatter and allgather (`ring`, or `auto` where it picks the ring): each step's message cut
    /// into pieces of at most this size, each forwarded as soon as it arrives (NCCL's slices), so a step pipelines across
    /// the ring; `nvls`: each head's part cut into pieces of at most this size, pipelined. A slice below a packet's payload
    /// is warned of: each piece is then a message of its own, and the run is bound by per-message work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "- (a step is one message; nvls: 128 KiB, NCCL's NVLS chunk)"))]
    pub slice: Option<Size>,
    /// NCCL's protocol: `simple` (the data as it is), `ll` (16-byte lines of 8 data bytes and two flags: twice the bytes),
    /// `ll128` (128-byte lines of 120 data bytes), or `auto`: what NCCL's tuner picks with the algorithm (with `algorithm =
    /// "auto"`, the pair it estimates fastest; an alltoall, NCCL's grouped point-to-point sends, LL up to 16 KiB a peer and
    /// Simple above). Collective and training jobs; [workloads.md](workloads.md#nccls-protocols-and-latencies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "`\"auto\"` (NCCL's choice, as NCCL runs by default)"))]
    pub protocol: Option<ProtocolChoice>,
    /// What NCCL's stack costs beyond the fabric: `nccl` (the default: a collective costs what NCCL's costs): NCCL's base
    /// latency once per collective call and its latency per step (its tuner's constants, by protocol, algorithm and
    /// whether the step crosses the fabric or NVLink), each step less its pair's idle one-way latency, which the fabric
    /// already takes; or `none`, the fabric alone (a message costs its bytes and hops, as raw flows and traces do).
    /// Collective and training jobs; [workloads.md](workloads.md#nccls-protocols-and-latencies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "`\"nccl\"`"))]
    pub costs: Option<CostsModel>,
    /// Per-rank buffer as nccl-tests counts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "required with `collective`"))]
    pub size: Option<Size>,
    /// Number of ranks, placed by `placement` (2 to the host count). Give `ranks` or `hosts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// Where `ranks` go: the first N hosts no earlier job holds, in this order. `packed`: by host id (a server's NICs, then
    /// the next server's); `spread`: round-robin over the leaves (rank i on leaf i mod L); `rail`: NIC 0 of every server,
    /// then NIC 1, ... (a job of at most `servers` ranks sits on one rail; needs `topology.nics_per_server` ≥ 2); `random`:
    /// a seeded shuffle. Jobs listing `hosts` take exactly those, and later placed jobs avoid them.
    #[serde(default)]
    #[schemars(extend("x-default" = "`packed`"))]
    pub placement: Placement,
    /// The ranks' hosts, in rank order (each once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-type" = "list of host ids, or `\"a-b\"`"))]
    pub hosts: Option<HostList>,
    /// Repetitions of the collective (1 to 1 000 000).
    #[serde(default = "d_iterations")]
    pub iterations: u32,
    /// Gap between a rank's part of an iteration and its first message of the next (training: a compute task of this long
    /// on every rank before each iteration but the first, the optimizer step).
    #[serde(default)]
    #[schemars(extend("x-default" = "`\"0ns\"`"))]
    pub compute: Duration,
    /// When the first iteration may start.
    #[serde(default)]
    #[schemars(extend("x-default" = "`\"0ns\"`"))]
    pub start: Duration,
    /// Alltoall only: peers a rank sends to at once (ARCANE sec. 4.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-default" = "all peers"))]
    pub max_connections: Option<u32>,
    /// Data class of the job's messages.
    #[serde(default)]
    pub class: u8,
}
fn d_iterations() -> u32 {
    1
}

/// `[[jobs]] algorithm`: one of the algorithms, or `"auto"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlgorithmChoice {
    Auto,
    Kind(AlgorithmKind),
}

impl AlgorithmChoice {
    /// The algorithm given (`None`: `auto`, the tuner's choice).
    pub fn given(self) -> Option<AlgorithmKind> {
        match self {
            AlgorithmChoice::Kind(k) => Some(k),
            AlgorithmChoice::Auto => None,
        }
    }
}

impl Serialize for AlgorithmChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AlgorithmChoice::Auto => s.serialize_str("auto"),
            AlgorithmChoice::Kind(k) => k.serialize(s),
        }
    }
}
impl schemars::JsonSchema for AlgorithmChoice {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AlgorithmChoice".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let kinds: Vec<_> = AlgorithmKind::KINDS.iter().copied().chain([tuner::INFO]).collect();
        crate::registry::options::names(&kinds)
    }
}
impl<'de> Deserialize<'de> for AlgorithmChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = crate::registry::name_of(d)?;
        if name == "auto" {
            return Ok(AlgorithmChoice::Auto);
        }
        AlgorithmKind::from_name(&name).map(AlgorithmChoice::Kind).ok_or_else(|| {
            let names: Vec<&str> = AlgorithmKind::KINDS.iter().map(|a| a.name).collect();
            serde::de::Error::custom(format!("unknown {name:?}; allowed: auto, {}", names.join(", ")))
        })
    }
}

/// `hosts`: a list of host ids or a range string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "serde_json::Value", into = "serde_json::Value")]
pub struct HostList(pub Vec<u32>);

impl TryFrom<serde_json::Value> for HostList {
    type Error = String;
    fn try_from(v: serde_json::Value) -> Result<Self, String> {
        let bad = || format!("expected a list of host ids or a range like \"0-15\", got {v}");
        match &v {
            serde_json::Value::Array(items) => {
                items.iter().map(|x| x.as_u64().and_then(|h| u32::try_from(h).ok()).ok_or_else(bad)).collect::<Result<_, _>>().map(HostList)
            }
            serde_json::Value::String(s) => {
                let (a, b) = s.split_once('-').ok_or_else(bad)?;
                let (a, b): (u32, u32) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
                if a > b || b - a >= 1 << 24 {
                    return Err(bad());
                }
                Ok(HostList((a..=b).collect()))
            }
            _ => Err(bad()),
        }
    }
}
impl From<HostList> for serde_json::Value {
    fn from(h: HostList) -> Self {
        serde_json::Value::from(h.0)
    }
}
