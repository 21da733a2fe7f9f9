//! The 1F1B schedule of one iteration, written stage by stage (see the module above).

use std::collections::HashMap;

use super::model::VALUE_BYTES;
use super::{Recompute, Trainer, DP, EP, TP};
use crate::workload::collective::Op;

/// A forward (`true`) or backward pass of a micro-batch.
type Pass = (bool, usize);

/// The passes of stage `p` of `pp` over `m` micro-batches, in 1F1B order.
pub fn one_f_one_b(p: usize, pp: usize, m: usize) -> Vec<Pass> {
    let warmup = (pp - p - 1).min(m);
    let mut order: Vec<Pass> = (0..warmup).map(|i| (true, i)).collect();
    for i in 0..m - warmup {
        order.push((true, warmup + i));
        order.push((false, i));
    }
    order.extend((m - warmup..m).map(|i| (false, i)));
    order
}

/// Gradients ready to be reduced: per rank, (what they wait for, bytes), dense ones over the
/// data-parallel group and experts' over the replicas holding the same experts.
#[derive(Default)]
pub(super) struct Buckets {
    dense: HashMap<usize, Vec<(Vec<u32>, u64)>>,
    experts: HashMap<usize, Vec<(Vec<u32>, u64)>>,
}

impl Buckets {
    pub(super) fn merge(&mut self, o: Buckets) {
        self.dense.extend(o.dense);
        self.experts.extend(o.experts);
    }
}

impl Trainer<'_> {
    /// The layers of stage `p` (the first `layers mod pp` stages take one more).
    fn layers_of(&self, p: usize) -> usize {
        let (l, pp) = (self.shape.layers as usize, self.layout.pp);
        l / pp + usize::from(p < l % pp)
    }

    /// Every pass of every stage of the replicas `group` (one expert-parallel group), in an
    /// order where each pass comes after the passes it waits for; then their gradient buckets.
    pub(super) fn replicas(&mut self, group: &[usize], entry: &[Vec<u32>], done: &mut [Vec<u32>]) -> Buckets {
        let l = self.layout;
        let orders: Vec<Vec<Pass>> = (0..l.pp).map(|p| one_f_one_b(p, l.pp, l.micro_batches)).collect();
        let mut next = vec![0usize; l.pp];
        // per (pass kind, stage, micro-batch, replica index, tp rank): the send it made
        let mut sent: HashMap<(bool, usize, usize, usize, usize), u32> = HashMap::new();
        // per rank: what its next compute waits for
        let mut chain: Vec<Vec<u32>> = entry.to_vec();
        let mut buckets = Buckets::default();
        while (0..l.pp).any(|p| next[p] < orders[p].len()) {
            for p in 0..l.pp {
                while let Some(&(fwd, i)) = orders[p].get(next[p]) {
                    let from = if fwd { p.checked_sub(1) } else { Some(p + 1).filter(|&q| q < l.pp) };
                    if from.is_some_and(|q| !sent.contains_key(&(fwd, q, i, 0, 0))) {
                        break;
                    }
                    self.pass(group, p, fwd, i, from, &mut sent, &mut chain, done, &mut buckets);
                    next[p] += 1;
                }
            }
        }
        for (r, c) in chain.into_iter().enumerate() {
            if group.contains(&(r / l.tp % l.dp)) {
                done[r].extend(c);
            }
        }
        buckets
    }

    /// One pass of micro-batch `i` on stage `p` of every replica of `group`, waiting for the
    /// activations or gradients stage `from` sent.
    #[allow(clippy::too_many_arguments)]
    fn pass(
        &mut self,
        group: &[usize],
        p: usize,
        fwd: bool,
        i: usize,
        from: Option<usize>,
        sent: &mut HashMap<(bool, usize, usize, usize, usize), u32>,
        chain: &mut [Vec<u32>],
        done: &mut [Vec<u32>],
        buckets: &mut Buckets,
    ) {
        let (l, shape) = (self.layout, self.shape);
        let (tp, b) = (l.tp as f64, l.micro_batch_size);
        let cost = if fwd { 1.0 } else { 2.0 };
        let (attention, mlp) = shape.layer_flops(b);
        let (fwd_attention, fwd_mlp) = (attention / tp, mlp / tp);
        let (mut attention, mlp) = (cost * attention / tp, cost * mlp / tp);
        if !fwd && l.recompute == Recompute::Selective {
            // the attention's score products again (Korthikanti et al. sec. 5)
            attention += 4.0 * (b * shape.seq * shape.seq * shape.hidden) as f64 / tp;
        }
        let act = shape.activation_bytes(b);
        let a2a = shape.routed(b, l.tp as u64);
        let last = p + 1 == l.pp;
        // per (replica index in group, tp rank): what the pass's next step waits for
        let mut at: Vec<Vec<Vec<u32>>> = group
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                (0..l.tp)
                    .map(|t| {
                        let mut w = std::mem::take(&mut chain[self.rank(t, d, p)]);
                        w.extend(from.map(|q| sent[&(fwd, q, i, k, t)]));
                        w
                    })
                    .collect()
            })
            .collect();
        let logits = cost * shape.logits_flops(b) / tp;
        if last && !fwd {
            self.computes(group, p, &mut at, logits);
        }
        let layers = self.layers_of(p);
        let (dense, expert) = shape.layer_params();
        let experts_here = shape.experts / l.ep as u64;
        let (mut dense_acc, mut expert_acc) = (0u64, 0u64);
        for _ in 0..layers {
            if fwd {
                self.block(group, p, &mut at, attention, None, act);
                self.block(group, p, &mut at, mlp, shape.moe().then_some(a2a), act);
            } else {
                if l.recompute == Recompute::Full {
                    // the layer's forward again, its communication included
                    self.block(group, p, &mut at, fwd_attention, None, act);
                    self.block(group, p, &mut at, fwd_mlp, shape.moe().then_some(a2a), act);
                }
                self.block(group, p, &mut at, mlp, shape.moe().then_some(a2a), act);
                self.block(group, p, &mut at, attention, None, act);
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
            let ends = u64::from(p == 0) + u64::from(last);
            dense_acc += ends * shape.embedding_params() / l.tp as u64 * l.grad_bytes;
            self.fill(group, p, &at, &mut dense_acc, &mut buckets.dense, true);
            self.fill(group, p, &at, &mut expert_acc, &mut buckets.experts, true);
        }
        let to = if fwd { Some(p + 1).filter(|&q| q < l.pp) } else { p.checked_sub(1) };
        for (k, (&d, ranks)) in group.iter().zip(at.iter_mut()).enumerate() {
            for (t, waits) in ranks.iter_mut().enumerate() {
                let r = self.rank(t, d, p);
                let w = std::mem::take(waits);
                if let Some(q) = to {
                    let id = self.send(r, self.rank(t, d, q), act / l.tp as u64, &w);
                    sent.insert((fwd, p, i, k, t), id);
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

    /// One of a layer's two blocks (attention, or the MLP: with `a2a`, an MoE layer's experts
    /// between the all-to-alls of `a2a` bytes each) on every rank of stage `p` of `group`:
    /// its compute of `flops`, then the tensor-parallel allreduce of the activations (`act`
    /// bytes); with sequence parallelism an all-gather before and a reduce-scatter after.
    fn block(&mut self, group: &[usize], p: usize, at: &mut [Vec<Vec<u32>>], flops: f64, a2a: Option<u64>, act: u64) {
        let sp = self.layout.sequence_parallel;
        if sp {
            self.tp_collective(Op::Allgather, group, p, at, act);
        }
        if let Some(bytes) = a2a {
            self.all_to_all(group, p, at, bytes);
            self.computes(group, p, at, flops);
            self.all_to_all(group, p, at, bytes);
        } else {
            self.computes(group, p, at, flops);
        }
        self.tp_collective(if sp { Op::ReduceScatter } else { Op::Allreduce }, group, p, at, act);
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
                let all: Vec<usize> = (0..l.dp).map(|d| self.rank(t, d, p)).collect();
                self.buckets(&all, &dense, done);
                for e in 0..l.ep {
                    let same: Vec<usize> = (0..l.dp).filter(|d| d % l.ep == e).map(|d| self.rank(t, d, p)).collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_f_one_b_warms_up_then_alternates() {
        let f = |v: &[Pass]| v.iter().map(|&(f, i)| format!("{}{i}", if f { "F" } else { "B" })).collect::<Vec<_>>().join(" ");
        assert_eq!(f(&one_f_one_b(0, 4, 6)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
        assert_eq!(f(&one_f_one_b(3, 4, 6)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
        assert_eq!(f(&one_f_one_b(0, 4, 2)), "F0 F1 B0 B1");
    }
}
