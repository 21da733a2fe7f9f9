//! `halving_doubling`: recursive halving and doubling (Rabenseifner's algorithm; Thakur,
//! Rabenseifner and Gropp, "Optimization of collective communication operations in MPICH",
//! IJHPCA 2005, sec. 4; ARCANE sec. 4.2 "butterfly allreduce").
//!
//! n must be a power of two. **reduce_scatter** by recursive halving: in step j (of log2 n)
//! rank r exchanges half of what it still holds, size / 2^(j+1), with rank r XOR n/2^(j+1).
//! **allgather** by recursive doubling: in step j rank r exchanges size / n x 2^j with rank
//! r XOR 2^j. **allreduce**: the one, then the other (2 log2 n steps). A rank starts a step
//! when its own send and its receive of the previous step are complete.

use super::{Algorithm, Builder, Op, Ranks};
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "collective",
    name: "halving_doubling",
    summary: "allreduce, reduce_scatter, allgather by recursive halving / doubling (butterfly), log2 n steps each",
    reference: "Thakur, Rabenseifner & Gropp 2005, sec. 4; ARCANE sec. 4.2",
};

pub struct HalvingDoubling;

impl Algorithm for HalvingDoubling {
    fn supports(op: Op, ranks: &Ranks<'_>) -> Result<(), String> {
        let n = ranks.n();
        match op {
            Op::Alltoall | Op::Broadcast => Err(format!("{} has no halving_doubling algorithm here; allowed: ring or direct", op.name())),
            _ if n < 2 || !n.is_power_of_two() => Err(format!("halving_doubling needs a power-of-two number of ranks, got {n}")),
            _ => Ok(()),
        }
    }

    fn count(op: Op, ranks: &Ranks<'_>) -> u64 {
        let n = ranks.n() as u64;
        let k = n.trailing_zeros() as u64;
        if op == Op::Allreduce { 2 * k * n } else { k * n }
    }

    fn iteration(op: Op, b: &mut Builder<'_>) -> Vec<Vec<u32>> {
        let n = b.n();
        let k = n.trailing_zeros() as usize;
        // (partner distance, bytes) of each step
        let mut steps: Vec<(usize, u64)> = Vec::new();
        if op != Op::Allgather {
            steps.extend((0..k).map(|j| (n >> (j + 1), b.size >> (j + 1))));
        }
        if op != Op::ReduceScatter {
            steps.extend((0..k).map(|j| (1 << j, (b.size >> k) << j)));
        }
        let mut sent: Vec<u32> = Vec::new();
        let mut last_partner = 0;
        for (s, &(d, bytes)) in steps.iter().enumerate() {
            let prev = std::mem::take(&mut sent);
            for r in 0..n {
                let after = if s == 0 { Vec::new() } else { vec![prev[r], prev[r ^ last_partner]] };
                sent.push(b.send(r, r ^ d, bytes, s as u32, &after, s == 0));
            }
            last_partner = d;
        }
        (0..n).map(|r| vec![sent[r], sent[r ^ last_partner]]).collect()
    }
}
