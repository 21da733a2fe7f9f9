//! `ring`: the ring algorithms of NCCL (Patarasuk and Yuan, "Bandwidth optimal all-reduce
//! algorithms for clusters of workstations", JPDC 2009; NCCL's ring; ARCANE sec. 4.2 "ring
//! allreduce").
//!
//! Rank r sends only to rank r+1 (mod n). The buffer is cut into n chunks (as evenly as
//! possible). **reduce_scatter**: n-1 steps; in step s rank r sends chunk (r - s) mod n.
//! **allgather**: n-1 steps; in step s rank r sends chunk (r + 1 - s) mod n. **allreduce**:
//! reduce_scatter then allgather, 2(n-1) steps of size/n. A rank starts step s when its
//! receive of step s-1 is complete: the data it sends (reduced with its own, or forwarded)
//! is there. It does not wait for its own send of step s-1 to be acknowledged: NCCL's ring
//! kernel posts a step's data as soon as its input arrived, and its proxy pipelines the
//! sends on the peer's queue pair (`src/device/prims_simple.h`, `waitPeer`: a send waits
//! for its data and for a free slot of the receiver's buffer, not for the previous send's
//! completion). The steps of one rank to its successor go out one after another on their
//! queue pair (`transport.connections = "per_pair"`, a job's default), so a step released
//! while the one before is still being sent queues behind it. **broadcast** (rank 0 the
//! root): the buffer is pipelined along the ring 0 -> 1 -> ... -> n-1 in 8 chunks (NCCL
//! pipelines its broadcast along a ring in chunks); rank i forwards chunk c once it has
//! received it.
//!
//! Simplified: the receiver's buffer slots (`NCCL_STEPS` = 8 per channel,
//! `src/include/device.h`; 512 KiB each under the Simple protocol) are not modelled. A
//! message is a whole step, while NCCL frees slots slice by slice as the receiver forwards
//! them. In a ring each rank forwards at the rate it receives, so the slots fill only behind
//! a hop slower than the others; there NCCL holds the upstream ranks back, where fabricsim
//! lets them send into the slow rank's queue pair. The slow hop sets the pace either way.
//!
//! **Channels and slices.** A job's `channels` (NCCL's channels) cut its buffer into as many
//! parts, each run as its own ring on its own queue pairs at once; a job's `slice` cuts each
//! step's message into pieces of at most that size, and a rank forwards piece j of a step as
//! soon as it received piece j of the step before (NCCL's slices: its Simple protocol moves a
//! step's chunk through the ring in slices of `SLICESTEPS` buffer slots, `prims_simple.h`), so
//! a step pipelines across the ring instead of waiting for the whole chunk. By default one
//! channel and whole steps (NCCL runs two or more channels per NIC and slices of 256-512 KiB
//! under Simple; set them to match). On GPUs of several NICs (`topology.nics_per_gpu`) channel
//! `c` runs on NIC `c mod k` where the job has a channel a NIC, else each message is cut into
//! a part a NIC (`workload::support::stripe`).

use super::{share, Algorithm, Builder, Op, Ranks};
use crate::registry::AlgorithmInfo;
use crate::time::Time;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "collective",
    name: "ring",
    summary: "allreduce (2(n-1) steps of size/n), reduce_scatter, allgather (n-1 steps), broadcast (pipelined chain)",
    reference: "Patarasuk & Yuan 2009; NCCL; ARCANE sec. 4.2",
};

/// Chunks a broadcast is pipelined in.
pub const BROADCAST_CHUNKS: usize = 8;

pub struct Ring;

impl Algorithm for Ring {
    fn supports(op: Op, ranks: &Ranks<'_>) -> Result<(), String> {
        let n = ranks.n();
        match op {
            Op::Alltoall => Err("alltoall has no ring algorithm here; allowed: direct".into()),
            _ if n < 2 => Err("a collective needs at least 2 ranks".into()),
            _ => Ok(()),
        }
    }

    fn count(op: Op, ranks: &Ranks<'_>) -> u64 {
        let n = ranks.n() as u64;
        match op {
            Op::Allreduce => 2 * (n - 1) * n,
            Op::Broadcast => BROADCAST_CHUNKS as u64 * (n - 1),
            _ => (n - 1) * n,
        }
    }

    fn iteration(op: Op, b: &mut Builder<'_>) -> Vec<Vec<u32>> {
        let n = b.n();
        if op == Op::Broadcast {
            return broadcast(b);
        }
        let all: Vec<usize> = (0..n).collect();
        let size = b.size;
        ring(b, &all, op, size, 0, &vec![Vec::new(); n], true)
    }
}

/// Steps of a ring reduce_scatter or allgather (n - 1) or allreduce (2 (n - 1)) over `n`
/// members; none for fewer than 2.
pub(crate) fn steps(op: Op, n: usize) -> usize {
    match (op, n) {
        (_, 0 | 1) => 0,
        (Op::Allreduce, n) => 2 * (n - 1),
        (_, n) => n - 1,
    }
}

/// One ring reduce_scatter, allgather or allreduce over `members` (rank indices, in ring
/// order) on a buffer of `size` bytes, its steps numbered from `step0`. Member k's first
/// message also waits for `after[k]`; with `first`, its first messages are the rank's first
/// of the iteration. Returns, per member, the messages whose completion means it is done
/// (`after[k]` itself for a ring of one).
pub(crate) fn ring(b: &mut Builder<'_>, members: &[usize], op: Op, size: u64, step0: u32, after: &[Vec<u32>], first: bool) -> Vec<Vec<u32>> {
    let n = members.len();
    if n < 2 {
        return after.to_vec();
    }
    let steps = steps(op, n);
    // the chunk member r sends in step s, and its bytes (the buffer cut as evenly as possible)
    let chunk = |r: usize, s: usize| match op {
        Op::Allgather => (r + 1 + n - s % n) % n,
        _ if s < n - 1 => (r + n - s) % n,
        _ => (r + 1 + n - (s - (n - 1))) % n,
    };
    let bytes = |c: usize| share(size, n as u64, c as u64);
    // with slices, each step's message is cut into `k` near-equal pieces, as many for every
    // step (those of the largest chunk), and piece j of a step waits only for piece j of the
    // step before
    let k = slices(size, n, b.slice) as usize;
    // with slices, what a member's first pieces wait for (`after`, and with `first` its part
    // of the previous iteration: 2k messages of a sliced ring) is joined once, in a compute
    // task of no time on the member that its k pieces wait for: k lists of 2k would make the
    // dependencies quadratic in the slices (issue 61: 10 GB for two iterations of a 256 MiB
    // ring in 4 KiB slices). The pieces are released when they were: when all it waits for is
    // done, plus the compute gap (the task's delay).
    let joins: Vec<Option<(u32, Time)>> = (0..n)
        .map(|r| {
            let waits = after[r].len() + if first { b.entry[members[r]].len() } else { 0 };
            (k > 1 && waits > 1).then(|| b.join(members[r], &after[r], first, step0))
        })
        .collect();
    // sent[r * k + j]: rank r's piece j of a step; step 0 waits for what each member's part
    // waits for ...
    let mut sent: Vec<u32> = Vec::with_capacity(n * k);
    for r in 0..n {
        let total = bytes(chunk(r, 0));
        let (from, to) = (members[r], members[(r + 1) % n]);
        for j in 0..k {
            let piece = share(total, k as u64, j as u64);
            sent.push(match joins[r] {
                Some(join) => b.send_joined(from, to, piece, step0, join),
                None => b.send(from, to, piece, step0, &after[r], first),
            });
        }
    }
    // ... and each later one for the data received in the step before (from the predecessor)
    let reads: Vec<usize> = (0..n * k).map(|i| (i / k + n - 1) % n * k + i % k).collect();
    let sent = b.send_rounds(&sent, steps - 1, &reads, &mut |s, i| {
        let (r, j, s) = (i / k, i % k, s + 1);
        (members[r], members[(r + 1) % n], share(bytes(chunk(r, s)), k as u64, j as u64), step0 + s as u32)
    });
    (0..n).map(|r| sent[r * k..(r + 1) * k].iter().chain(&sent[(r + n - 1) % n * k..((r + n - 1) % n + 1) * k]).copied().collect()).collect()
}

/// The pieces of each step of a ring over `n` members on `size` bytes in slices of at most
/// `slice` bytes (0: whole steps, one piece), as many for every step: those of the largest.
pub(crate) fn slices(size: u64, n: usize, slice: u64) -> u64 {
    if slice == 0 {
        1
    } else {
        size.div_ceil(n as u64).div_ceil(slice).max(1)
    }
}

fn broadcast(b: &mut Builder<'_>) -> Vec<Vec<u32>> {
    let n = b.n();
    let chunks = (BROADCAST_CHUNKS as u64).min(b.size).max(1) as usize;
    // ids[i][c]: rank i sends chunk c to rank i+1
    let mut ids: Vec<Vec<u32>> = vec![Vec::new(); n - 1];
    for c in 0..chunks {
        for i in 0..n - 1 {
            let mut after = Vec::new();
            if i > 0 {
                after.push(ids[i - 1][c]);
            }
            let bytes = b.chunk(chunks, c);
            let id = b.send(i, i + 1, bytes, c as u32, &after, c == 0);
            ids[i].push(id);
        }
    }
    // rank i is done when it has sent its last chunk and received it; the last rank receives
    (0..n)
        .map(|i| {
            let mut t = Vec::new();
            if i < n - 1 {
                t.push(ids[i][chunks - 1]);
            }
            if i > 0 {
                t.push(ids[i - 1][chunks - 1]);
            }
            t
        })
        .collect()
}
