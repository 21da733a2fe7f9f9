//! The 1F1B schedule of one iteration, written stage by stage (see the module above), and
//! Megatron-LM's interleaved 1F1B with virtual pipeline stages (`parallel.vpp`).
//!
//! **Interleaved 1F1B** (Narayanan et al., "Efficient Large-Scale Language Model Training on
//! GPU Clusters Using Megatron-LM", SC 2021, sec. 2.2.2; Megatron-LM's
//! `forward_backward_pipelining_with_interleaving`, `get_schedule_table` and
//! `get_pp_rank_microbatches` in `megatron/core/pipeline_parallel/schedules.py`). Each pipeline
//! rank p holds `v` model chunks, chunk c being virtual stage `c pp + p` of `pp v`: a micro-batch
//! goes through rank 0..pp-1 for chunk 0, then again for chunk 1, and so on. A rank runs its
//! `m v` forward passes in the order of the schedule table (micro-batches in groups of `pp`,
//! each group through chunk 0, then chunk 1, ...: Megatron-LM's default
//! `microbatch_group_size_per_vp_stage = pp`), and the backward passes in the same order with
//! the chunks reversed; it first runs `(pp - p - 1) 2 + (v - 1) pp` forward passes (at most all
//! of them), then alternates one forward and one backward, then the backward passes left. The
//! pipeline's bubble shrinks from `(pp - 1)` to `(pp - 1) / v` passes' time (the paper's
//! `(p - 1) / (v m)` of the ideal), for `v` times the point-to-point sends.

use rustc_hash::FxHashMap as HashMap;

use super::model::VALUE_BYTES;
use super::{Recompute, Trainer, CP, DP, EP, TP};
use crate::workload::collective::Op;

/// A forward (`true`) or backward pass of a micro-batch on a model chunk.
type Pass = (bool, usize, usize);

/// Per (pass kind, virtual stage, micro-batch, replica index in its group, tp rank): the send
/// that pass made.
type Sent = HashMap<(bool, usize, usize, usize, usize), u32>;

/// The passes of stage `p` of `pp` over `m` micro-batches, in 1F1B order (one chunk).
pub fn one_f_one_b(p: usize, pp: usize, m: usize) -> Vec<Pass> {
    let warmup = (pp - p - 1).min(m);
    let mut order: Vec<Pass> = (0..warmup).map(|i| (true, i, 0)).collect();
    for i in 0..m - warmup {
        order.push((true, warmup + i, 0));
        order.push((false, i, 0));
    }
    order.extend((m - warmup..m).map(|i| (false, i, 0)));
    order
}

/// The passes of stage `p` of `pp` holding `v` chunks over `m` micro-batches, in Megatron-LM's
/// interleaved 1F1B order (see the module); 1F1B for one chunk.
pub fn interleaved(p: usize, pp: usize, v: usize, m: usize) -> Vec<Pass> {
    if v == 1 {
        return one_f_one_b(p, pp, m);
    }
    // `get_schedule_table`: micro-batches in groups of pp, each group through every chunk
    let mut table = Vec::with_capacity(m * v);
    for start in (0..m).step_by(pp) {
        let end = if start + pp >= m { m } else { start + pp };
        for c in 0..v {
            table.extend((start..end).map(|i| (i, c)));
        }
    }
    let total = m * v;
    let warmup = ((pp - p - 1) * 2 + (v - 1) * pp).min(total);
    let forward = |k: usize| (true, table[k].0, table[k].1);
    let backward = |k: usize| (false, table[k].0, v - 1 - table[k].1);
    let mut order: Vec<Pass> = (0..warmup).map(forward).collect();
    for k in 0..total - warmup {
        order.push(forward(warmup + k));
        order.push(backward(k));
    }
    order.extend((total - warmup..total).map(backward));
    order
}

/// Gradients ready to be reduced: per rank, (what they wait for, bytes), dense ones over the
/// data-parallel group and experts' over the replicas holding the same experts.
#[derive(Default)]
pub(super) struct Buckets {
    dense: HashMap<usize, Vec<(Vec<u32>, u64)>>,
    experts: HashMap<usize, Vec<(Vec<u32>, u64)>>,
}

impl Trainer<'_> {
    /// The layers of virtual stage `s` of `pp x vpp` (the first `layers mod (pp x vpp)` take
    /// one more; with one chunk a rank, stage `s`).
    fn layers_of(&self, s: usize) -> usize {
        let (l, stages) = (self.shape.layers as usize, self.layout.pp * self.layout.vpp);
        l / stages + usize::from(s < l % stages)
    }

    /// Every pass of every stage of every replica, in an order where each pass comes after the
    /// passes it waits for; then their gradient buckets. The replicas an expert-parallel group
    /// couples (`groups[g]`, a replica's context-parallel ranks among them) are written
    /// together, one pass of one group's replicas at a time, and the groups in lockstep: a pass
    /// of every group before the next pass of any, so that every replica's first passes come
    /// first (a run that makes its messages as it goes makes each replica's as it needs them),
    /// or (more than `limit` messages in all) how many there were when it stopped.
    pub(super) fn replicas(
        &mut self,
        groups: &[Vec<usize>],
        entry: &[Vec<u32>],
        done: &mut [Vec<u32>],
        limit: usize,
    ) -> Result<Buckets, usize> {
        let l = self.layout;
        let orders: Vec<Vec<Pass>> = (0..l.pp).map(|p| interleaved(p, l.pp, l.vpp, l.micro_batches)).collect();
        let stages = l.pp * l.vpp;
        let mut next = vec![0usize; l.pp];
        // per group: the sends its passes made that the pass waiting for them has not read yet
        // (it takes them: so a send here is one whose reader has not run, which the test below reads)
        let mut sent: Vec<Sent> = vec![Sent::default(); groups.len()];
        // per rank: what its next compute waits for
        let mut chain: Vec<Vec<u32>> = entry.to_vec();
        let mut buckets = Buckets::default();
        while (0..l.pp).any(|p| next[p] < orders[p].len()) {
            let before = next.clone();
            for p in 0..l.pp {
                while let Some(&(fwd, i, c)) = orders[p].get(next[p]) {
                    let s = c * l.pp + p;
                    let from = if fwd { s.checked_sub(1) } else { Some(s + 1).filter(|&q| q < stages) };
                    // every group's schedule is the same: the first's stands for all
                    if from.is_some_and(|q| !sent[0].contains_key(&(fwd, q, i, 0, 0))) {
                        break;
                    }
                    for (group, sent) in groups.iter().zip(sent.iter_mut()) {
                        self.pass(group, (p, s), fwd, i, from, sent, &mut chain, done, &mut buckets);
                    }
                    next[p] += 1;
                }
                if self.out.len() > limit {
                    return Err(self.out.len());
                }
            }
            assert_ne!(next, before, "a pipeline schedule in which every stage waits: a bug");
        }
        for (r, c) in chain.into_iter().enumerate() {
            done[r].extend(c);
        }
        Ok(buckets)
    }

    /// One pass of micro-batch `i` on virtual stage `s` (of stage `p`) of every replica of
    /// `group`, waiting for the activations or gradients virtual stage `from` sent.
    #[allow(clippy::too_many_arguments)]
    fn pass(
        &mut self,
        group: &[usize],
        (p, s): (usize, usize),
        fwd: bool,
        i: usize,
        from: Option<usize>,
        sent: &mut Sent,
        chain: &mut [Vec<u32>],
        done: &mut [Vec<u32>],
        buckets: &mut Buckets,
    ) {
        let (l, shape) = (self.layout, self.shape);
        // a rank computes its tensor-parallel share of its context-parallel share of the
        // tokens (with a causal mask split in 2 cp chunks, of the score products too)
        let (tp, b) = ((l.tp * l.cp) as f64, l.micro_batch_size);
        let cost = if fwd { 1.0 } else { 2.0 };
        let (attention, mlp) = shape.layer_flops(b);
        let (fwd_attention, fwd_mlp) = (attention / tp, mlp / tp);
        let (mut attention, mlp) = (cost * attention / tp, cost * mlp / tp);
        if !fwd && l.recompute == Recompute::Selective {
            // the attention's score products again (Korthikanti et al. sec. 5)
            attention += 4.0 * (b * shape.seq * shape.seq * shape.hidden) as f64 / tp;
        }
        let cp = l.cp as u64;
        let act = shape.activation_bytes(b) / cp;
        let a2a = shape.routed(b, l.tp as u64) / cp;
        // an MoE layer's all-to-alls over its expert-parallel group (none with one replica a
        // group: then every expert is local)
        let experts = (shape.moe() && l.ep > 1).then_some(a2a);
        // context parallelism: a rank's keys and values (its sequence share, its heads' share)
        let kv = (l.cp > 1).then(|| 2 * b * shape.seq / cp * shape.kv_heads * (shape.hidden / shape.heads) * VALUE_BYTES / l.tp as u64);
        let last = s + 1 == l.pp * l.vpp;
        // per (replica index in group, tp rank): what the pass's next step waits for
        let mut at: Vec<Vec<Vec<u32>>> = group
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                (0..l.tp)
                    .map(|t| {
                        let mut w = std::mem::take(&mut chain[self.rank(t, d, p)]);
                        // (each send is read by this pass alone: it goes, so that a step's
                        // maps hold the sends under way, not every one)
                        w.extend(from.map(|q| sent.remove(&(fwd, q, i, k, t)).expect("the pass it waits for sent")));
                        w
                    })
                    .collect()
            })
            .collect();
        let logits = cost * shape.logits_flops(b) / tp;
        if last && !fwd {
            self.computes(group, p, &mut at, logits);
        }
        let layers = self.layers_of(s);
        let (dense, expert) = shape.layer_params();
        let experts_here = shape.experts / l.ep as u64;
        let (mut dense_acc, mut expert_acc) = (0u64, 0u64);
        for _ in 0..layers {
            if fwd {
                self.block(group, p, &mut at, attention, Inner::Attention(kv, true), act);
                self.block(group, p, &mut at, mlp, Inner::mlp(experts), act);
            } else {
                if l.recompute == Recompute::Full {
                    // the layer's forward again, its communication included
                    self.block(group, p, &mut at, fwd_attention, Inner::Attention(kv, true), act);
                    self.block(group, p, &mut at, fwd_mlp, Inner::mlp(experts), act);
                }
                self.block(group, p, &mut at, mlp, Inner::mlp(experts), act);
                self.block(group, p, &mut at, attention, Inner::Attention(kv, false), act);
                if i + 1 == l.micro_batches {
                    // this layer's gradients are complete: into the buckets
                    dense_acc += dense / l.tp as u64 * l.grad_bytes;
                    expert_acc += experts_here * expert / l.tp as u64 * l.grad_bytes;
                    self.fill(group, p, &at, &mut dense_acc, &mut buckets.dense, false);
                    self.fill(group, p, &at, &mut expert_acc, &mut buckets.experts, false);
                }
            }
        }
        if last && fwd {
            self.computes(group, p, &mut at, logits);
        }
        if !fwd && i + 1 == l.micro_batches {
            // the embedding (first stage) and the output layer (last stage), then what is left
            let ends = u64::from(s == 0) + u64::from(last);
            dense_acc += ends * shape.embedding_params() / l.tp as u64 * l.grad_bytes;
            self.fill(group, p, &at, &mut dense_acc, &mut buckets.dense, true);
            self.fill(group, p, &at, &mut expert_acc, &mut buckets.experts, true);
        }
        // the next virtual stage's rank (with chunks, rank pp - 1 sends chunk c's activations
        // to rank 0's chunk c + 1)
        let to = if fwd { Some(s + 1).filter(|&q| q < l.pp * l.vpp) } else { s.checked_sub(1) };
        for (k, (&d, ranks)) in group.iter().zip(at.iter_mut()).enumerate() {
            for (t, waits) in ranks.iter_mut().enumerate() {
                let r = self.rank(t, d, p);
                let w = std::mem::take(waits);
                if let Some(q) = to {
                    let id = self.send(r, self.rank(t, d, q % l.pp), act / l.tp as u64, &w);
                    sent.insert((fwd, s, i, k, t), id);
                    done[r].push(id);
                }
                chain[r] = w;
            }
        }
    }

    /// Each rank of stage `p` of `group` computes `flops` once `at` are done.
    fn computes(&mut self, group: &[usize], p: usize, at: &mut [Vec<Vec<u32>>], flops: f64) {
        for (&d, ranks) in group.iter().zip(at.iter_mut()) {
            for (t, waits) in ranks.iter_mut().enumerate() {
                let w = std::mem::take(waits);
                *waits = vec![self.compute(self.rank(t, d, p), &w, flops)];
            }
        }
    }

    /// One of a layer's two blocks (`inner`: the attention, or the MLP, an MoE layer's experts
    /// between the all-to-alls) on every rank of stage `p` of `group`: its compute of `flops`,
    /// then the tensor-parallel allreduce of the activations (`act` bytes); with sequence
    /// parallelism an all-gather before and a reduce-scatter after.
    fn block(&mut self, group: &[usize], p: usize, at: &mut [Vec<Vec<u32>>], flops: f64, inner: Inner, act: u64) {
        let sp = self.layout.sequence_parallel;
        if sp {
            self.tp_collective(Op::Allgather, group, p, at, act);
        }
        match inner {
            Inner::Experts(bytes) => {
                self.all_to_all(group, p, at, bytes);
                self.computes(group, p, at, flops);
                self.all_to_all(group, p, at, bytes);
            }
            Inner::Attention(Some(kv), fwd) => self.ring_attention(group, p, at, flops, kv, fwd),
            _ => self.computes(group, p, at, flops),
        }
        self.tp_collective(if sp { Op::ReduceScatter } else { Op::Allreduce }, group, p, at, act);
    }

    /// Ring attention over each context-parallel group (`group`'s replica slots: one replica's
    /// context-parallel ranks), as Transformer Engine's `p2p` runs it
    /// (`AttnFuncWithCPAndKVP2P` in `transformer_engine/pytorch/attention/dot_product_attention/
    /// context_parallel.py`): the attention's compute in cp parts, part j on the keys and values
    /// received in step j - 1 (its own in part 0), while they go on to the next rank. Forward:
    /// cp - 1 sends of `kv` bytes. Backward (`fwd` false): cp sends, the keys and values in the
    /// first, keys and values with their gradients so far in the next cp - 2, and the
    /// gradients alone in the last, which brings each rank the gradients of its own; a send
    /// also waits for the part before it (the gradients it carries). Each send is NCCL's
    /// point-to-point.
    fn ring_attention(&mut self, group: &[usize], p: usize, at: &mut [Vec<Vec<u32>>], flops: f64, kv: u64, fwd: bool) {
        let n = group.len();
        let part = flops / n as f64;
        for t in 0..self.layout.tp {
            let ranks: Vec<usize> = group.iter().map(|&d| self.rank(t, d, p)).collect();
            // per member: what its next part waits for, and what it received last
            let mut last: Vec<Vec<u32>> = at.iter_mut().map(|a| std::mem::take(&mut a[t])).collect();
            let mut got: Vec<Option<u32>> = vec![None; n];
            let steps = if fwd { n - 1 } else { n };
            for j in 0..n {
                let mut sent = vec![None; n];
                if j < steps {
                    let bytes = if fwd || j == 0 || j + 1 == n { kv } else { 2 * kv };
                    for k in 0..n {
                        // what it forwards: its own, or what it received (with the part's gradients)
                        let mut after: Vec<u32> = got[k].into_iter().collect();
                        if j == 0 || !fwd {
                            after.extend(&last[k]);
                        }
                        sent[(k + 1) % n] = Some(self.send_as(CP, ranks[k], ranks[(k + 1) % n], bytes, &after));
                    }
                }
                for k in 0..n {
                    let mut after = std::mem::take(&mut last[k]);
                    after.extend(got[k]);
                    last[k] = vec![self.compute(ranks[k], &after, part)];
                }
                got = sent;
            }
            // backward: a rank is done once the gradients of its own keys and values are back
            for (k, a) in at.iter_mut().enumerate() {
                a[t] = std::mem::take(&mut last[k]);
                a[t].extend(got[k]);
            }
        }
    }

    /// Each replica's tensor-parallel group runs `op` on `bytes`.
    fn tp_collective(&mut self, op: Op, group: &[usize], p: usize, at: &mut [Vec<Vec<u32>>], bytes: u64) {
        for (k, &d) in group.iter().enumerate() {
            let members: Vec<usize> = (0..self.layout.tp).map(|t| self.rank(t, d, p)).collect();
            at[k] = self.collective(TP, op, &members, bytes, std::mem::take(&mut at[k]));
        }
    }

    /// Each tensor-parallel rank's expert-parallel group (the same rank of every replica of
    /// `group`) exchanges its tokens: an all-to-all of `bytes` per rank.
    fn all_to_all(&mut self, group: &[usize], p: usize, at: &mut [Vec<Vec<u32>>], bytes: u64) {
        for t in 0..self.layout.tp {
            let members: Vec<usize> = group.iter().map(|&d| self.rank(t, d, p)).collect();
            let after: Vec<Vec<u32>> = at.iter_mut().map(|a| std::mem::take(&mut a[t])).collect();
            for (k, w) in self.collective(EP, Op::Alltoall, &members, bytes, after).into_iter().enumerate() {
                at[k][t] = w;
            }
        }
    }

    /// Closes a bucket of `acc` bytes (when it reached the bucket size, or `flush`) ready once
    /// `at` are done, for each rank of stage `p` of `group`.
    fn fill(
        &mut self,
        group: &[usize],
        p: usize,
        at: &[Vec<Vec<u32>>],
        acc: &mut u64,
        into: &mut HashMap<usize, Vec<(Vec<u32>, u64)>>,
        flush: bool,
    ) {
        if *acc == 0 || (*acc < self.layout.bucket && !flush) {
            return;
        }
        for (&d, ranks) in group.iter().zip(at) {
            for (t, waits) in ranks.iter().enumerate() {
                into.entry(self.rank(t, d, p)).or_default().push((waits.clone(), *acc));
            }
        }
        *acc = 0;
    }

    /// The gradient buckets' allreduces (every replica's buckets written): dense buckets over
    /// each data-parallel group, experts' over the replicas holding the same experts.
    pub(super) fn reduce(&mut self, buckets: Buckets, done: &mut [Vec<u32>]) {
        let l = self.layout;
        let Buckets { dense, experts } = buckets;
        for p in 0..l.pp {
            for t in 0..l.tp {
                let all: Vec<usize> = (0..l.replicas()).map(|d| self.rank(t, d, p)).collect();
                self.buckets(&all, &dense, done);
                for e in 0..l.ep {
                    let same: Vec<usize> = (0..l.replicas()).filter(|d| d % l.ep == e).map(|d| self.rank(t, d, p)).collect();
                    self.buckets(&same, &experts, done);
                }
            }
        }
    }

    /// Reduces each bucket of `members` (the same buckets at each): an allreduce of its
    /// gradients, or with the distributed optimizer a reduce-scatter of them and then an
    /// all-gather of their bf16 parameters.
    fn buckets(&mut self, members: &[usize], of: &HashMap<usize, Vec<(Vec<u32>, u64)>>, done: &mut [Vec<u32>]) {
        let Some(first) = of.get(&members[0]) else { return };
        let l = self.layout;
        for (k, &(_, bytes)) in first.iter().enumerate() {
            let after: Vec<Vec<u32>> = members.iter().map(|r| of[r][k].0.clone()).collect();
            let ends = if l.distributed_optimizer {
                let reduced = self.collective(DP, Op::ReduceScatter, members, bytes, after);
                self.collective(DP, Op::Allgather, members, bytes / l.grad_bytes * VALUE_BYTES, reduced)
            } else {
                self.collective(DP, Op::Allreduce, members, bytes, after)
            };
            for (&r, w) in members.iter().zip(ends) {
                done[r].extend(w);
            }
        }
    }
}

/// What a block does between its input and its tensor-parallel collective.
#[derive(Clone, Copy)]
enum Inner {
    /// The attention: with context parallelism, a ring of its keys and values (`kv` bytes a
    /// rank), forward or backward.
    Attention(Option<u64>, bool),
    /// The MLP.
    Mlp,
    /// An MoE layer's experts between two all-to-alls of this many bytes a rank.
    Experts(u64),
}

impl Inner {
    fn mlp(a2a: Option<u64>) -> Inner {
        a2a.map_or(Inner::Mlp, Inner::Experts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: &[Pass]) -> String {
        v.iter()
            .map(|&(f, i, c)| format!("{}{i}{}", if f { "F" } else { "B" }, if c > 0 { format!("c{c}") } else { String::new() }))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn one_f_one_b_warms_up_then_alternates() {
        assert_eq!(f(&one_f_one_b(0, 4, 6)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
        assert_eq!(f(&one_f_one_b(3, 4, 6)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
        assert_eq!(f(&one_f_one_b(0, 4, 2)), "F0 F1 B0 B1");
        assert_eq!(interleaved(1, 4, 1, 6), one_f_one_b(1, 4, 6));
    }

    #[test]
    fn interleaved_runs_megatrons_schedule_table() {
        // pp 2, 2 chunks, 4 micro-batches: the table is (0,0) (1,0) (0,1) (1,1) (2,0) (3,0)
        // (2,1) (3,1); rank 0 warms up with (2 - 0 - 1) 2 + (2 - 1) 2 = 4 forwards, rank 1
        // with 2; backwards take the table with the chunks reversed
        assert_eq!(f(&interleaved(0, 2, 2, 4)), "F0 F1 F0c1 F1c1 F2 B0c1 F3 B1c1 F2c1 B0 F3c1 B1 B2c1 B3c1 B2 B3");
        assert_eq!(f(&interleaved(1, 2, 2, 4)), "F0 F1 F0c1 B0c1 F1c1 B1c1 F2 B0 F3 B1 F2c1 B2c1 F3c1 B3c1 B2 B3");
        // every pass once, whatever the layout
        for (pp, v, m) in [(4, 2, 8), (4, 3, 4), (8, 4, 16), (2, 8, 6)] {
            for p in 0..pp {
                let mut o = interleaved(p, pp, v, m);
                assert_eq!(o.len(), 2 * m * v);
                o.sort_unstable();
                o.dedup();
                assert_eq!(o.len(), 2 * m * v, "pp {pp} v {v} m {m} stage {p}");
            }
        }
    }
}
