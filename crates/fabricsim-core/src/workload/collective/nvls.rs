//! `nvls`: NCCL's NVLink SHARP (NVLS) allreduce, reduce_scatter and allgather on the GPUs of one
//! server, whose scale-up switch reduces and multicasts (NCCL's `src/device/all_reduce.h`,
//! `RunWorkColl<ncclFuncAllReduce, T, RedOp, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE>`, its `oneNode`
//! branch; `src/transport/nvls.cc`).
//!
//! Each of the n GPUs is the *head* of one n-th of the buffer. NCCL's scatter warps copy each
//! rank's data into its own copy of the multicast buffer (no NVLink traffic); each head's reduce
//! warps then load its part through the multicast address with an in-switch reduction
//! (`multimem.ld_reduce`: the switch reads that part from every GPU, the head's own included,
//! and returns the sum to the head) and store the sum back through it (`multimem.st`: the head
//! sends it once, the switch writes it to every GPU, the head included); the gather warps copy
//! the result out locally. On the scale-up network (`host::nic::scale_up`) a head's piece of `b`
//! bytes is then:
//! 1. **contributions**: every GPU `j` sends `b` into the switch for the head (legs *into* the
//!    switch, `Via::IntoSwitch`: `j`'s port only; the head's own with no latency);
//! 2. **result**: once all n are in, the sum comes out to the head (a leg *out of* the switch
//!    from the head to itself: the head's port only, no latency);
//! 3. **store**: the head sends the sum into the switch (a leg into it, to itself);
//! 4. **copies**: the switch writes it to every GPU (legs out of it: each GPU's port).
//!
//! So each GPU's port carries `(n + 1) b` each way for every `n b` of the buffer, against the
//! ring's `2 (n - 1) b`. reduce_scatter is steps 1-2 (each rank's result is its part);
//! allgather is steps 3-4 on each rank's own part. NCCL moves each head's part in chunks of
//! `NCCL_NVLS_CHUNKSIZE` (128 KiB, `nvls.cc`), pipelined: here a job's `slice` (default that
//! chunk) cuts each head's part into pieces, each of which goes through the four steps on its
//! own, so the pieces pipeline through the ports; a GPU sends its part of a head's piece once
//! the head has reduced the piece `NCCL_STEPS` (8) before, whose buffer slot it takes (the
//! head's notice of that reduction reaches another GPU `L` later). A rank is done when everything it sends and
//! everything sent to it is.
//!
//! Simplified: the switch's reduction takes no time and needs no buffer, NCCL's several NVLS
//! channels are one, and a leg's bytes move at the port's rate as any scale-up message's
//! (no NVLink headers). One server only: NCCL's multi-node NVLS (with CollNet) and NVLS tree
//! are not modelled.

use super::{share, Algorithm, Builder, Op, Ranks};
use crate::registry::AlgorithmInfo;
use crate::workload::Via;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "collective",
    name: "nvls",
    summary: "allreduce, reduce_scatter, allgather through one server's scale-up switch, which reduces and multicasts (NVLink SHARP): (n+1)/n of the buffer each way a GPU",
    reference: "NCCL src/device/all_reduce.h (NCCL_ALGO_NVLS, oneNode), src/transport/nvls.cc",
};

/// NCCL's NVLS chunk (`NCCL_NVLS_CHUNKSIZE`'s default, `src/transport/nvls.cc`): a piece of
/// a head's part when a job gives no `slice`.
pub const CHUNK: u64 = 128 * 1024;

/// Buffer slots a head's pieces go through (`NCCL_STEPS`, `src/include/device.h`): a GPU
/// sends its part of a head's piece once the head has reduced the piece this many before.
pub const SLOTS: usize = 8;

pub struct Nvls;

/// Pieces each head's part of a `size`-byte buffer over `n` ranks is cut into, at most
/// `slice` bytes each.
pub fn pieces(size: u64, n: usize, slice: u64) -> u64 {
    share(size, n as u64, 0).div_ceil(slice.max(1)).max(1)
}

/// Messages one piece of every head adds to `op` on `n` ranks.
fn per_piece(op: Op, n: u64) -> u64 {
    match op {
        Op::Allreduce => n * (2 * n + 2),
        _ => n * (n + 1),
    }
}

impl Algorithm for Nvls {
    fn supports(op: Op, ranks: &Ranks<'_>) -> Result<(), String> {
        let n = ranks.n();
        match op {
            Op::Allreduce | Op::ReduceScatter | Op::Allgather if n < 2 => Err("a collective needs at least 2 ranks".into()),
            Op::Allreduce | Op::ReduceScatter | Op::Allgather => match ranks.off_server() {
                Some(h) => Err(format!(
                    "nvls runs on the GPUs of one server (its scale-up switch), got hosts {} and {h} on servers {} and {}",
                    ranks.hosts[0],
                    ranks.server(ranks.hosts[0]),
                    ranks.server(h)
                )),
                None => Ok(()),
            },
            _ => Err(format!("{} has no nvls algorithm; allowed: allreduce, reduce_scatter, allgather", op.name())),
        }
    }

    /// Per piece of each head; the job multiplies by [`pieces`] and adds a join a rank.
    fn count(op: Op, ranks: &Ranks<'_>) -> u64 {
        per_piece(op, ranks.n() as u64)
    }

    fn iteration(op: Op, b: &mut Builder<'_>) -> Vec<Vec<u32>> {
        let n = b.n();
        let p = pieces(b.size, n, if b.slice == 0 { CHUNK } else { b.slice });
        // per rank: what it sent and what was sent to it, which its part waits for; per head,
        // its results, whose buffer slots its next pieces take again
        let mut mine: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut results: Vec<Vec<u32>> = vec![Vec::new(); n];
        for s in 0..p {
            for h in 0..n {
                let bytes = share(b.chunk(n, h), p, s);
                let mut after = Vec::new();
                let mut step = 0;
                if op != Op::Allgather {
                    // every GPU's part into the switch, the sum out to the head; the slot a piece
                    // takes is free once the head reduced the piece SLOTS before
                    let slot = (s as usize).checked_sub(SLOTS).map(|t| results[h][t]);
                    let into: Vec<u32> = (0..n)
                        .map(|j| {
                            let id = leg(b, Via::IntoSwitch, j, h, bytes, 0, slot.as_slice());
                            mine[j].push(id);
                            id
                        })
                        .collect();
                    let result = leg(b, Via::OutOfSwitch, h, h, bytes, 1, &into);
                    results[h].push(result);
                    mine[h].push(result);
                    after.push(result);
                    step = 2;
                }
                if op != Op::ReduceScatter {
                    // the head's part into the switch once, a copy out to every GPU
                    let store = leg(b, Via::IntoSwitch, h, h, bytes, step, &after);
                    mine[h].push(store);
                    for (k, got) in mine.iter_mut().enumerate() {
                        got.push(leg(b, Via::OutOfSwitch, h, k, bytes, step + 1, &[store]));
                    }
                }
            }
        }
        // each rank's part, joined once (the next iteration's first messages wait for it)
        (0..n).map(|r| vec![b.join(r, &mine[r], false, 0).0]).collect()
    }
}

/// A leg of `via` from rank `from` to rank `to` in `step`: released once `after` are done, or,
/// where `after` is empty, one of `from`'s first messages of the iteration (it waits for its
/// rank's call or part of the iteration before: [`Builder::send`]).
fn leg(b: &mut Builder<'_>, via: Via, from: usize, to: usize, bytes: u64, step: u32, after: &[u32]) -> u32 {
    b.out.via = via;
    let id = if after.is_empty() {
        b.send(from, to, bytes, step, &[], true)
    } else {
        let (src, dst) = (b.ranks[from], b.ranks[to]);
        b.out.push(src, dst, bytes.max(1), 0, after, step)
    };
    b.out.via = Via::Lb;
    id
}
