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
//! 2. **result**: the sum comes out to the head (a leg *out of* the switch from the head to
//!    itself: the head's port only, no latency) as the n contributions arrive;
//! 3. **store**: the head sends the sum into the switch (a leg into it, to itself) as it comes;
//! 4. **copies**: the switch writes it to every GPU (legs out of it: each GPU's port) as the
//!    store comes in.
//!
//! Steps 2-4 cut through (`Pass::Through`): each leg goes once the first bit of every leg it
//! waits for is through, since the switch reduces and multicasts the bytes as they come and a
//! warp stores what it loaded as it goes (`multimem.ld_reduce` and `multimem.st` move a few
//! bytes a thread, not a chunk at once); all at the ports' one rate, no leg overtakes what it
//! waits for. A head's stores take their turns on its port beside the contributions it sends
//! (`host::nic::scale_up`: a port serves its streams in turn), as the reduce warps' loads and
//! stores share the GPU's link.
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
use crate::time::Time;
use crate::workload::{Pass, Via};

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
                            let id = leg(b, Via::into_switch(Pass::Whole), (j, h), bytes, 0, slot.as_slice(), 0);
                            mine[j].push(id);
                            id
                        })
                        .collect();
                    let result = leg(b, Via::out_of_switch(Pass::Through), (h, h), bytes, 1, &into, 0);
                    results[h].push(result);
                    mine[h].push(result);
                    after.push(result);
                    step = 2;
                }
                if op != Op::ReduceScatter {
                    // the head's part into the switch once, a copy out to every GPU
                    // (after the result, as it comes; allgather's, once its rank's call is)
                    let pass = if after.is_empty() { Pass::Whole } else { Pass::Through };
                    let store = leg(b, Via::into_switch(pass), (h, h), bytes, step, &after, 0);
                    mine[h].push(store);
                    for (k, got) in mine.iter_mut().enumerate() {
                        got.push(leg(b, Via::out_of_switch(Pass::Through), (h, k), bytes, step + 1, &[store], 0));
                    }
                }
            }
        }
        // each rank's part, joined once (the next iteration's first messages wait for it)
        (0..n).map(|r| vec![b.join(r, &mine[r], false, 0).0]).collect()
    }
}

/// NVLS as training jobs run it: each GPU's traffic through the switch as two legs, what it
/// sends into the switch (its share of every head's sum, then its own head's store: an
/// allreduce's `S + S/n`, a reduce_scatter's `S`, an allgather's `S/n`) and what comes out to
/// it (its sum, then every head's copy: `S/n + S`, `S/n`, `S`), the second cutting through
/// the first bits of all the first: `L` from GPU to GPU as [`Nvls::iteration`]'s
/// contributions and copies take, and `L` more for an allreduce's copies (`latency`, the
/// network's `L`); it ends no sooner than `L` after the last of them (`host::nic::scale_up`).
/// It is [`Nvls::iteration`] in pieces fine enough that each port's legs run back to back at
/// the port's rate, as NCCL's 128 KiB chunks pipeline them: 64 MiB on 8 GPUs takes 1.01x its
/// ports' time in those chunks (9 216 legs) and its ports' time plus `2 L` here (16 legs,
/// against the ring's 112 messages). A training job's tensor-parallel collectives are many,
/// so it takes this form (`workload::training`); a job's `algorithm = "nvls"` moves the
/// pieces.
pub fn streamed(op: Op, b: &mut Builder<'_>, latency: Time) -> Vec<Vec<u32>> {
    let n = b.n();
    let (size, part) = (b.size, |b: &Builder<'_>, r: usize| b.chunk(n, r));
    let into: Vec<u32> = (0..n)
        .map(|j| {
            let bytes = match op {
                Op::ReduceScatter => size,
                Op::Allgather => part(b, j),
                _ => size + part(b, j),
            };
            leg(b, Via::into_switch(Pass::Whole), (j, j), bytes, 0, &[], 0)
        })
        .collect();
    let out: Vec<u32> = (0..n)
        .map(|k| {
            let (bytes, copies) = match op {
                Op::ReduceScatter => (part(b, k), 0),
                Op::Allgather => (size, 0),
                _ => (part(b, k) + size, latency),
            };
            leg(b, Via::out_of_switch(Pass::Through), (k, k), bytes, 1, &into, copies)
        })
        .collect();
    (0..n).map(|r| vec![b.join(r, &[into[r], out[r]], false, 0).0]).collect()
}

/// A leg of `via` from rank `from` to rank `to` in `step`: released once `after` are done, or,
/// where `after` is empty, one of `from`'s first messages of the iteration (it waits for its
/// rank's call or part of the iteration before: [`Builder::send`]).
/// (`delay`: after `after`, before its release.)
fn leg(b: &mut Builder<'_>, via: Via, (from, to): (usize, usize), bytes: u64, step: u32, after: &[u32], delay: Time) -> u32 {
    b.out.via = via;
    let id = if after.is_empty() {
        b.send(from, to, bytes, step, &[], true)
    } else {
        let (src, dst) = (b.ranks[from], b.ranks[to]);
        b.out.push(src, dst, bytes.max(1), delay, after, step)
    };
    b.out.via = Via::Lb;
    id
}
