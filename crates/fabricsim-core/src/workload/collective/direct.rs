//! `direct`: all-to-all as direct sends, with at most `max_connections` peers at once per rank
//! (ARCANE sec. 4.2: "all-to-all ... each node communicates with a limited number of peers
//! at a time").
//!
//! Each rank sends size/n to every other rank, to peers r+1, r+2, ... (mod n) in that order,
//! so that at any moment the ranks' targets form a shifted permutation; its j-th message
//! waits for its (j - max_connections)-th to be received. A rank is done with an iteration
//! when its last sends and everything sent to it have been received.

use super::{Algorithm, Builder, Op, Ranks};
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "collective",
    name: "direct",
    summary: "alltoall as direct sends to every peer, max_connections at once per rank",
    reference: "ARCANE sec. 4.2",
};

pub struct Direct;

impl Algorithm for Direct {
    fn supports(op: Op, ranks: &Ranks<'_>) -> Result<(), String> {
        let n = ranks.n();
        match op {
            Op::Alltoall if n >= 2 => Ok(()),
            Op::Alltoall => Err("a collective needs at least 2 ranks".into()),
            _ => Err(format!("{} has no direct algorithm here; allowed: ring or halving_doubling", op.name())),
        }
    }

    fn count(_op: Op, ranks: &Ranks<'_>) -> u64 {
        let n = ranks.n() as u64;
        n * (n - 1)
    }

    fn iteration(_op: Op, b: &mut Builder<'_>) -> Vec<Vec<u32>> {
        let n = b.n();
        let k = b.max_connections.clamp(1, n - 1);
        let mut sends: Vec<Vec<u32>> = vec![Vec::with_capacity(n - 1); n];
        let mut received: Vec<Vec<u32>> = vec![Vec::with_capacity(n - 1); n];
        for j in 0..n - 1 {
            for (r, mine) in sends.iter_mut().enumerate() {
                let to = (r + 1 + j) % n;
                let after = if j >= k { vec![mine[j - k]] } else { Vec::new() };
                let bytes = b.chunk(n, to);
                let id = b.send(r, to, bytes, (j / k) as u32, &after, j < k);
                mine.push(id);
                received[to].push(id);
            }
        }
        (0..n).map(|r| sends[r][n - 1 - k..].iter().chain(&received[r]).copied().collect()).collect()
    }
}
