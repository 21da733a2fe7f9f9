//! Training iterations of a transformer (`[[jobs]] model = {...}`): tensor, pipeline, data
//! and expert parallelism as dependent messages and compute tasks.
//!
//! **Ranks.** `tp x pp x dp` GPUs, numbered as Megatron-LM does (its
//! `initialize_model_parallel`): rank `t + tp (d + dp p)` is tensor-parallel rank t of
//! data-parallel replica d of pipeline stage p. With `tp` GPUs per server a
//! tensor-parallel group is one server, and its collectives stay on the scale-up network.
//! Expert parallelism groups `ep` replicas (`d / ep` equal); experts' gradients are reduced
//! over the replicas holding the same experts (`d mod ep` equal). Context parallelism
//! (`cp`, Megatron-LM's order tp, cp, dp, pp: rank `t + tp (c + cp (d + dp p))`) splits each
//! micro-batch's sequence over `cp` ranks: each computes its `1/cp` of the tokens (with the
//! causal mask split in `2 cp` chunks, of the score products too), its activations are `1/cp`
//! of the layer's, its attention passes keys and values around the group's ring
//! (`schedule.rs`, ring attention as Transformer Engine's `p2p` runs it), and gradients are
//! reduced over `dp x cp` ranks. Interleaved 1F1B (`vpp`): `schedule.rs`.
//!
//! **An iteration** (one per `iterations`), per stage, under the 1F1B schedule of
//! PipeDream-Flush (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
//! Clusters Using Megatron-LM", SC 2021, sec. 2.2): stage p runs `min(pp - p - 1, m)` forward
//! passes, then one forward and one backward in turn, then the remaining backward passes, of
//! its `m` = `micro_batches`. A forward pass of micro-batch i on stage p waits for its
//! activations from stage p-1; per layer each tensor-parallel rank computes attention, then
//! allreduces the layer's activations over its group (on the ring, or NVLS where NCCL's tuner
//! would run it: below), computes the MLP (in an MoE
//! layer: all-to-all dispatch of its tokens over its expert-parallel group, the experts,
//! all-to-all combine) and allreduces again (Megatron-LM's two allreduces per layer and pass,
//! Shoeybi et al. 2019, sec. 3); the last stage computes the logits; then each rank sends its
//! 1/tp share of the activations to the same rank of stage p+1 (Narayanan et al. sec. 4.1,
//! scatter/gather). A backward pass mirrors it at twice the compute. With
//! `sequence_parallel` (Korthikanti et al., MLSys 2023, sec. 4.2.2) each of a layer's two
//! blocks is an all-gather of the activations, the block's compute and a reduce-scatter,
//! in both passes (the same bytes as the allreduce on a ring). With `recompute = "full"`
//! each layer's backward first runs its forward again, its communication included;
//! `"selective"` adds the attention's score products (`4 b s^2 h`) to the backward. A
//! rank's compute tasks run one after another; its sends do not hold it. Gradients are
//! reduced over the data-parallel group in buckets (`bucket`, PyTorch DDP's 25 MiB by
//! default, Li et al., "PyTorch Distributed", VLDB 2020, sec. 3.2), in fp32 by default
//! (`grad_dtype`: Megatron-LM under `--bf16` sets `accumulate_allreduce_grads_in_fp32`,
//! `megatron/training/arguments.py`): each bucket of layers, in backward order, is
//! allreduced (ring) as soon as the last micro-batch's backward pass has computed it,
//! overlapping what is left of that pass. With `distributed_optimizer` (Megatron-LM's
//! `--use-distributed-optimizer`, ZeRO-1 style) a bucket is reduce-scattered and then its
//! bf16 parameters all-gathered (Megatron gathers them after the optimizer step, before the
//! next forward unless `--overlap-param-gather`: here right after the bucket's
//! reduce-scatter, exposed either way; the optimizer step is `compute`). A rank's iteration
//! ends with its last compute, its sends and its buckets.
//!
//! **Algorithms.** A collective's group whose ranks are the GPUs of one server whose scale-up
//! switch reduces (`topology.scale_up_nvls`) runs NVLS (`collective::nvls`) where NCCL's
//! tuner estimates it faster than the ring under the job's protocols (`tuner::best` of the
//! two: NCCL runs NVLS for large allreduces on an NVSwitch, `NCCL_NVLS_ENABLE`'s default),
//! each GPU's part of it as two legs through the switch (`nvls::streamed`); every other
//! allreduce, reduce_scatter and allgather runs on the ring, an all-to-all as direct sends.
//! `algorithm = "ring"` keeps the ring everywhere; NCCL's tree is not run by training jobs.
//!
//! Compute tasks are messages from a rank to itself with no bytes, released when their
//! dependencies are met plus their duration (FLOPs over `gpu_tflops`), and complete then;
//! they are not rows of the flows table. The steps table of a training job has one row per
//! kind of work: compute, tp, pp, dp, ep, cp.

pub mod model;

use serde::{Deserialize, Serialize};

use super::collective::direct::Direct;
use super::collective::nccl::ProtocolChoice;
use super::collective::nvls;
use super::collective::ring::ring;
use super::collective::{tuner, Algorithm, AlgorithmKind, Builder, Costs, Op, Out};
use crate::error::{ensure, ScenarioError};
use crate::time::Time;
use crate::topology::Topology;
use crate::units::Size;
pub use model::{ModelConfig, Shape};

/// Kinds of work in a training iteration: the `step` of its messages' tags.
pub const KINDS: [&str; 6] = ["compute", "tp", "pp", "dp", "ep", "cp"];
const COMPUTE: u32 = 0;
const TP: u32 = 1;
const PP: u32 = 2;
const DP: u32 = 3;
const EP: u32 = 4;
const CP: u32 = 5;

/// The training fields of a `[[jobs]]` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Parallel {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tp: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pp: Option<u32>,
    /// Default: ranks / (tp x pp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ep: Option<u32>,
    /// Context parallelism (Megatron-LM's `--context-parallel-size`): each micro-batch's sequence split over this many
    /// ranks, whose attention exchanges keys and values around a ring (Transformer Engine's default `p2p`, ring
    /// attention); default 1. Ranks in Megatron-LM's order tp, cp, dp, pp; gradients reduced over dp x cp; above 1: ep
    /// 1 and the sequence a multiple of 2 cp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cp: Option<u32>,
    /// Virtual pipeline stages per rank (Megatron-LM's `--num-virtual-stages-per-pipeline-rank`): each pipeline rank holds
    /// this many model chunks of `layers / (pp x vpp)` layers, chunk c of rank p the (c pp + p)-th, and runs Megatron-LM's
    /// interleaved 1F1B schedule; default 1 (1F1B). Above 1: pp 2 or more, layers a multiple of pp x vpp, micro_batches a
    /// multiple of pp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpp: Option<u32>,
    /// Micro-batches per iteration, per replica (global batch / (dp x micro_batch_size)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_batches: Option<u32>,
    /// Sequences per micro-batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_batch_size: Option<u32>,
    /// What one GPU computes, in TFLOP/s achieved (peak times utilization).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_tflops: Option<f64>,
    /// Gradient bucket size of the data-parallel allreduce.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<Size>,
    /// The gradients' type in the data-parallel reduction: "fp32" (the default: Megatron-LM
    /// with `--bf16` accumulates and reduces gradients in fp32) or "bf16".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grad_dtype: Option<String>,
    /// Megatron-LM's distributed optimizer: a bucket's gradients are reduce-scattered and its
    /// updated bf16 parameters all-gathered, instead of allreduced (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed_optimizer: Option<bool>,
    /// Megatron-LM's sequence parallelism: each tensor-parallel allreduce becomes an
    /// all-gather before the block and a reduce-scatter after it (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_parallel: Option<bool>,
    /// Activation recomputation: "none" (the default), "selective" (the attention's core
    /// again in the backward pass) or "full" (each layer's forward again, communication
    /// included, before its backward).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recompute: Option<String>,
}

/// Activation recomputation (Korthikanti et al., "Reducing Activation Recomputation in Large
/// Transformer Models", MLSys 2023, sec. 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recompute {
    None,
    /// The attention's score products (`4 b s^2 h` FLOPs a layer) recomputed.
    Selective,
    /// The whole layer's forward recomputed before its backward.
    Full,
}

impl Layout {
    /// Replica slots: each data-parallel replica's context-parallel ranks (dp x cp), over
    /// which gradients are reduced.
    pub fn replicas(&self) -> usize {
        self.dp * self.cp
    }

    /// At least the messages and compute tasks one iteration makes on `n` ranks (each rank,
    /// per micro-batch and layer of its stage, computes four times and takes part in four
    /// tensor-parallel allreduces, `2 (tp - 1)` messages each on the ring and 3 on NVLS (two
    /// legs and a join), and, in an MoE layer, four all-to-alls), so that a layout too large
    /// for the memory is refused before any is made.
    pub fn least_messages(&self, shape: &Shape, n: usize) -> u64 {
        let allreduce = (2 * (self.tp as u64 - 1)).min(3);
        let per_layer = 4 + 4 * allreduce + if shape.moe() { 2 + 4 * (self.ep as u64 - 1) } else { 0 };
        let layers = shape.layers / self.pp as u64;
        (n as u64).saturating_mul(self.micro_batches as u64).saturating_mul(layers).saturating_mul(per_layer)
    }
}

/// A checked layout.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub tp: usize,
    /// Ranks a micro-batch's sequence is split over (context parallelism).
    pub cp: usize,
    pub pp: usize,
    /// Model chunks (virtual pipeline stages) per pipeline rank.
    pub vpp: usize,
    pub dp: usize,
    pub ep: usize,
    pub micro_batches: usize,
    pub micro_batch_size: u64,
    /// FLOPs per picosecond of one GPU.
    pub flops_per_ps: f64,
    pub bucket: u64,
    /// Bytes of a gradient value in the data-parallel reduction (4: fp32, 2: bf16).
    pub grad_bytes: u64,
    pub distributed_optimizer: bool,
    pub sequence_parallel: bool,
    pub recompute: Recompute,
}

impl Parallel {
    /// Checks the layout of job `job` (`jobs[i]`) against its `n` ranks and its model.
    pub fn resolve(&self, job: &str, n: usize, shape: &Shape) -> Result<Layout, ScenarioError> {
        let at = |k: &str| format!("{job}.parallel.{k}");
        let one = |v: Option<u32>, k: &str| -> Result<usize, ScenarioError> {
            let v = v.unwrap_or(1);
            ensure(v >= 1 && v as usize <= n, &at(k), v, format!("allowed: 1 to the ranks ({n})"))?;
            Ok(v as usize)
        };
        let (tp, pp, cp) = (one(self.tp, "tp")?, one(self.pp, "pp")?, one(self.cp, "cp")?);
        let dp = match self.dp {
            Some(_) => one(self.dp, "dp")?,
            None => (n / (tp * cp * pp)).max(1),
        };
        let product = if cp == 1 {
            format!("tp x pp x dp ({tp} x {pp} x {dp} = {})", tp * pp * dp)
        } else {
            format!("tp x cp x pp x dp ({tp} x {cp} x {pp} x {dp} = {})", tp * cp * pp * dp)
        };
        ensure(tp * cp * pp * dp == n, &format!("{job}.ranks"), n, format!("allowed: {product}"))?;
        let ep = one(self.ep, "ep")?;
        if cp > 1 {
            ensure(ep == 1, &at("cp"), cp, "allowed: 1 with expert parallelism (ep above 1)")?;
            // Megatron-LM splits the sequence in 2 cp chunks for a causal mask's balance
            ensure(
                shape.seq.is_multiple_of(2 * cp as u64),
                &at("cp"),
                cp,
                format!("allowed: a cp with 2 cp dividing the sequence ({})", shape.seq),
            )?;
        }
        ensure(
            dp.is_multiple_of(ep),
            &at("ep"),
            ep,
            format!("allowed: a divisor of dp ({dp}): experts are spread over data-parallel replicas"),
        )?;
        if shape.moe() {
            let e = shape.experts as usize;
            ensure(e.is_multiple_of(ep), &at("ep"), ep, format!("allowed: a divisor of the experts ({e})"))?;
        } else {
            ensure(ep == 1, &at("ep"), ep, "allowed: 1 for a dense model (model.experts = 0)")?;
        }
        ensure(pp as u64 <= shape.layers, &at("pp"), pp, format!("allowed: at most the layers ({})", shape.layers))?;
        let micro_batches = self.micro_batches.unwrap_or(pp as u32);
        ensure((1..=1 << 16).contains(&micro_batches), &at("micro_batches"), micro_batches, "allowed: 1 to 65536")?;
        let vpp = self.vpp.unwrap_or(1);
        ensure((1..=1024).contains(&vpp), &at("vpp"), vpp, "allowed: 1 to 1024")?;
        let vpp = vpp as usize;
        if vpp > 1 {
            // Megatron-LM's checks (megatron/training/arguments.py; schedules.py,
            // forward_backward_pipelining_with_interleaving, its micro-batch groups of pp)
            ensure(pp >= 2, &at("vpp"), vpp, "allowed: 1 unless pp is 2 or more (the interleaved schedule needs a pipeline)")?;
            let chunks = (pp * vpp) as u64;
            ensure(
                shape.layers.is_multiple_of(chunks),
                &at("vpp"),
                vpp,
                format!("allowed: a vpp with pp x vpp ({chunks}) dividing the layers ({})", shape.layers),
            )?;
            ensure(
                (micro_batches as usize).is_multiple_of(pp),
                &at("micro_batches"),
                micro_batches,
                format!("allowed: a multiple of pp ({pp}) with vpp above 1 (Megatron-LM's interleaved schedule)"),
            )?;
        }
        let micro_batch_size = self.micro_batch_size.unwrap_or(1);
        ensure((1..=1 << 16).contains(&micro_batch_size), &at("micro_batch_size"), micro_batch_size, "allowed: 1 to 65536")?;
        let tflops = self.gpu_tflops.ok_or_else(|| ScenarioError {
            field: at("gpu_tflops"),
            message: "missing; give what one GPU computes, in TFLOP/s achieved (for example 400)".into(),
        })?;
        ensure(tflops.is_finite() && tflops > 0.0 && tflops <= 1e6, &at("gpu_tflops"), tflops, "allowed: more than 0 up to 1000000")?;
        let bucket = self.bucket.unwrap_or(Size(25 << 20)).0;
        ensure(bucket >= 1, &at("bucket"), Size(bucket), "allowed: a positive size")?;
        let grad_bytes = match self.grad_dtype.as_deref().unwrap_or("fp32") {
            "fp32" => 4,
            "bf16" => 2,
            other => return Err(ScenarioError::new(at("grad_dtype"), format!("\"{other}\""), "allowed: fp32, bf16")),
        };
        let recompute = match self.recompute.as_deref().unwrap_or("none") {
            "none" => Recompute::None,
            "selective" => Recompute::Selective,
            "full" => Recompute::Full,
            other => return Err(ScenarioError::new(at("recompute"), format!("\"{other}\""), "allowed: none, selective, full")),
        };
        // what one rank sends at once, and the gradients it holds, in 128 bits: a model too
        // large to count in bytes is refused, not wrapped
        let (b, h) = (u128::from(micro_batch_size), u128::from(shape.hidden));
        let tokens = b * u128::from(shape.seq) * u128::from(shape.top_k);
        let (dense, expert) = shape.layer_params();
        let grads = u128::from(shape.layers) * (u128::from(dense) + u128::from(shape.experts) * u128::from(expert))
            + 2 * u128::from(shape.embedding_params());
        let routed = tokens * h * u128::from(model::VALUE_BYTES) * u128::from(shape.load_ppm.max(model::EVEN)) / u128::from(model::EVEN);
        let most = routed.max(grads * u128::from(grad_bytes));
        ensure(
            most <= 1 << 50,
            &format!("{job}.model"),
            format!("{most} B at once (activations or gradients)"),
            "allowed: at most 1 PiB (a smaller model, seq or micro_batch_size)",
        )?;
        Ok(Layout {
            tp,
            cp,
            pp,
            vpp,
            dp,
            ep,
            micro_batches: micro_batches as usize,
            micro_batch_size: micro_batch_size.into(),
            flops_per_ps: tflops,
            bucket,
            grad_bytes,
            distributed_optimizer: self.distributed_optimizer.unwrap_or(false),
            sequence_parallel: self.sequence_parallel.unwrap_or(false),
            recompute,
        })
    }
}

/// Writes the messages and compute tasks of training iterations.
pub struct Trainer<'a> {
    pub shape: Shape,
    pub layout: Layout,
    /// The host of each rank, and GPUs per server.
    pub hosts: &'a [u32],
    pub per_server: u32,
    /// Before each iteration but the first: a compute task of this long on every rank (the
    /// optimizer step; `[[jobs]] compute`).
    pub gap: Time,
    pub out: Out<'a>,
    /// The job's NCCL protocol and latencies, if it has either.
    pub costs: Option<&'a Costs>,
    /// Where a collective's group is the GPUs of one server whose switch reduces, NCCL's tuner
    /// picks the ring or NVLS for it, among the protocols the job allows (`None`: the ring
    /// always, the job's `algorithm = "ring"`).
    pub tuner: Option<(&'a Topology, ProtocolChoice)>,
}

impl Trainer<'_> {
    /// The rank of tensor-parallel rank `t` of replica slot `d` (a data-parallel replica's
    /// context-parallel rank: `c + cp x replica`, Megatron-LM's order tp, cp, dp, pp) on stage
    /// `p`.
    fn rank(&self, t: usize, d: usize, p: usize) -> usize {
        t + self.layout.tp * (d + self.layout.replicas() * p)
    }

    /// Rank `from` sends `bytes` to rank `to` once `after` are done, a message of kind `kind`
    /// (NCCL's point-to-point).
    fn send_as(&mut self, kind: u32, from: usize, to: usize, bytes: u64, after: &[u32]) -> u32 {
        let (src, dst) = (self.hosts[from], self.hosts[to]);
        self.out.costs = self.costs.map(|c| (c, c.send(src, dst, bytes)));
        self.out.push(src, dst, bytes.max(1), 0, after, kind)
    }

    /// A compute task of rank `r` taking `flops` once `after` are done; its id.
    fn compute(&mut self, r: usize, after: &[u32], flops: f64) -> u32 {
        let h = self.hosts[r];
        self.out.push(h, h, 0, (flops / self.layout.flops_per_ps).round() as Time, after, COMPUTE)
    }

    /// Rank `from` sends `bytes` to rank `to` once `after` are done.
    fn send(&mut self, from: usize, to: usize, bytes: u64, after: &[u32]) -> u32 {
        self.send_as(PP, from, to, bytes, after)
    }

    /// The algorithm of a collective `op` of `size` bytes a rank on `hosts`: direct sends for
    /// an alltoall; NVLS where NCCL's tuner would run it rather than the ring (its group the
    /// GPUs of one server whose switch reduces: [`tuner::best`] of the two, under the job's
    /// protocols); else the ring. (NCCL's tree is not run by training jobs.)
    fn algorithm(&self, op: Op, size: u64, hosts: &[u32]) -> AlgorithmKind {
        if op == Op::Alltoall {
            return AlgorithmKind::Direct;
        }
        let Some((topo, protocol)) = self.tuner else { return AlgorithmKind::Ring };
        let link = tuner::Link::of(topo, hosts);
        if !link.nvls || !matches!(op, Op::Allreduce | Op::ReduceScatter | Op::Allgather) {
            return AlgorithmKind::Ring;
        }
        let candidates = [AlgorithmKind::Ring, AlgorithmKind::Nvls];
        tuner::best(&candidates, protocol.candidates(), op, hosts.len(), size, link, 1).map_or(AlgorithmKind::Ring, |(a, _)| a)
    }

    /// A collective of kind `kind` over `members` (ranks), each starting once its `after` are
    /// done: a ring, NVLS on one server's switch ([`Trainer::algorithm`]) or (alltoall) direct
    /// sends; per member, what its end waits for.
    fn collective(&mut self, kind: u32, op: Op, members: &[usize], size: u64, after: Vec<Vec<u32>>) -> Vec<Vec<u32>> {
        if members.len() < 2 {
            return after;
        }
        let hosts: Vec<u32> = members.iter().map(|&r| self.hosts[r]).collect();
        let n = members.len();
        let algorithm = self.algorithm(op, size, &hosts);
        let mut out = self.out.reborrow();
        out.calls.reserve(n);
        out.step = Some(kind);
        out.costs = self.costs.map(|c| (c, c.collective(algorithm, op, size, &hosts)));
        let mut b =
            Builder { ranks: &hosts, per_server: self.per_server, size, entry: &after, max_connections: n - 1, compute: 0, slice: 0, out };
        match op {
            Op::Alltoall => Direct::iteration(op, &mut b),
            _ if algorithm == AlgorithmKind::Nvls => {
                let latency = self.tuner.and_then(|(topo, _)| topo.scale_up()).map_or(0, |up| up.latency);
                nvls::streamed(op, &mut b, latency)
            }
            _ => {
                let order = rail_order(&hosts, self.per_server);
                let ends = ring(&mut b, &order, op, size, 0, &vec![Vec::new(); n], true);
                let mut by_member = vec![Vec::new(); n];
                for (&m, e) in order.iter().zip(ends) {
                    by_member[m] = e;
                }
                by_member
            }
        }
    }

    /// One iteration; `entry[r]`: what rank r's first compute waits for (its part of the
    /// iteration before). Returns each rank's part of this one, or (more than `limit`
    /// messages in all) how many there were when it stopped.
    pub fn iteration(&mut self, entry: &[Vec<u32>], limit: usize) -> Result<Vec<Vec<u32>>, usize> {
        let l = self.layout;
        let entry: Vec<Vec<u32>> = if self.gap > 0 && entry.iter().any(|e| !e.is_empty()) {
            let gap = self.gap as f64 * l.flops_per_ps;
            (0..entry.len()).map(|r| vec![self.compute(r, &entry[r], gap)]).collect()
        } else {
            entry.to_vec()
        };
        let mut done: Vec<Vec<u32>> = vec![Vec::new(); self.hosts.len()];
        // the replicas an expert-parallel group couples are written together, and so are a
        // replica's context-parallel ranks
        let width = l.ep * l.cp;
        let groups: Vec<Vec<usize>> = (0..l.replicas() / width).map(|g| (g * width..(g + 1) * width).collect()).collect();
        let buckets = self.replicas(&groups, &entry, &mut done, limit)?;
        self.reduce(buckets, &mut done);
        if self.out.len() > limit {
            return Err(self.out.len());
        }
        Ok(done)
    }
}

mod schedule;

/// The ring order of a group whose members are `hosts` (GPUs, `per_server` a server), as NCCL
/// builds its rings on a rail-optimized cluster: each server's members one after another over
/// its scale-up network, in local order on one server and in reverse on the next, so that every
/// hop between servers joins two GPUs of the same local index, one rail (NCCL prefers a ring
/// that leaves a node on the NIC it came in on: `NCCL_CROSS_NIC`'s default, 2). Where the
/// servers hold different local indices of the group (or a server holds one), the members'
/// own order.
fn rail_order(hosts: &[u32], per_server: u32) -> Vec<usize> {
    let own: Vec<usize> = (0..hosts.len()).collect();
    if per_server < 2 {
        return own;
    }
    // each server's members, the servers in the order the group first meets them
    let mut slot: rustc_hash::FxHashMap<u32, usize> = Default::default();
    let mut servers: Vec<(u32, Vec<usize>)> = Vec::new();
    for (m, &h) in hosts.iter().enumerate() {
        let next = servers.len();
        let i = *slot.entry(h / per_server).or_insert(next);
        if i == next {
            servers.push((h / per_server, Vec::new()));
        }
        servers[i].1.push(m);
    }
    let locals = |ms: &[usize]| {
        let mut l: Vec<u32> = ms.iter().map(|&m| hosts[m] % per_server).collect();
        l.sort_unstable();
        l
    };
    let first = locals(&servers[0].1);
    if servers.len() < 2 || first.len() < 2 || servers.iter().any(|s| locals(&s.1) != first) {
        return own;
    }
    let mut order = Vec::with_capacity(hosts.len());
    for (j, (_, ms)) in servers.iter_mut().enumerate() {
        ms.sort_by_key(|&m| hosts[m] % per_server);
        if j % 2 == 1 {
            ms.reverse();
        }
        order.extend_from_slice(ms);
    }
    order
}
