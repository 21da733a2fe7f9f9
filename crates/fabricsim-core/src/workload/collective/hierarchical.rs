//! `hierarchical`: the two-level collectives of GPU servers with several NICs (Cho et al.,
//! "BlueConnect: Decomposing all-reduce for deep learning on heterogeneous network
//! hierarchy", SysML 2019: an all-reduce as a reduce-scatter and an all-gather at each level
//! of the hierarchy; Horovod's hierarchical allreduce).
//!
//! The job's ranks are grouped by server: `g` ranks on each of `S` servers (every server the
//! job uses must hold as many; rank order picks the order within a server and of the
//! servers). A server's ranks form a ring inside the server, which its scale-up network
//! carries (`topology.scale_up_rate`; without one, the fabric does); the j-th rank of every
//! server forms a ring across servers, one per rail, each carrying a 1/g share of the buffer
//! on its own NIC. Each ring runs the ring algorithm (`ring`), steps numbered on from the
//! phase before:
//! - **allreduce**: reduce_scatter inside each server (g-1 steps of size/g: rank j then holds
//!   the sum of its server's share j), allreduce of that share across servers on rail j
//!   (2(S-1) steps of size/(g S)), allgather inside each server (g-1 steps of size/g);
//! - **reduce_scatter**: inside each server, then across servers on the share (S-1 steps of
//!   size/n): each rank ends with its size/n of the sum;
//! - **allgather**: across servers first (each rank gathers its rail's S pieces of size/n),
//!   then inside each server (g-1 steps of size/g).
//!
//! Alltoall needs no algorithm of its own: under `direct`, the pairs inside a server cross
//! its scale-up network and the others the fabric. A rank moves to its next phase when its
//! last send and receive of the phase before are complete.

use super::ring::{ring, steps};
use super::{Algorithm, Builder, Op, Ranks};
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "collective",
    name: "hierarchical",
    summary: "allreduce, reduce_scatter, allgather: rings inside each server (its scale-up network) and one ring per rail across servers",
    reference: "BlueConnect (Cho et al., SysML 2019); Horovod hierarchical allreduce",
};

pub struct Hierarchical;

/// The phases of `op`: (inside a server, the operation) in order.
fn phases(op: Op) -> &'static [(bool, Op)] {
    match op {
        Op::Allreduce => &[(true, Op::ReduceScatter), (false, Op::Allreduce), (true, Op::Allgather)],
        Op::ReduceScatter => &[(true, Op::ReduceScatter), (false, Op::ReduceScatter)],
        _ => &[(false, Op::Allgather), (true, Op::Allgather)],
    }
}

impl Algorithm for Hierarchical {
    fn supports(op: Op, ranks: &Ranks<'_>) -> Result<(), String> {
        match op {
            Op::Allreduce | Op::ReduceScatter | Op::Allgather if ranks.n() >= 2 => ranks.grid().map(drop),
            Op::Allreduce | Op::ReduceScatter | Op::Allgather => Err("a collective needs at least 2 ranks".into()),
            _ => Err(format!(
                "{} has no hierarchical algorithm here; allowed: direct for alltoall (pairs inside a server cross its scale-up network), ring for broadcast",
                op.name()
            )),
        }
    }

    fn count(op: Op, ranks: &Ranks<'_>) -> u64 {
        let Ok(grid) = ranks.grid() else { return 0 };
        let (servers, g) = (grid.len(), grid[0].len());
        let n = (servers * g) as u64;
        phases(op).iter().map(|&(inside, o)| n * steps(o, if inside { g } else { servers }) as u64).sum()
    }

    fn iteration(op: Op, b: &mut Builder<'_>) -> Vec<Vec<u32>> {
        let grid = Ranks { hosts: b.ranks, per_server: b.per_server }.grid().expect("checked by supports");
        let g = grid[0].len();
        let size = b.size;
        // rank j of a server holds share (j + 1) mod g after a ring reduce_scatter inside it
        // (`ring`'s chunk order), and starts an allgather inside it from that share
        let share = |j: usize| size / g as u64 + u64::from((((j + 1) % g) as u64) < size % g as u64);
        let rails: Vec<Vec<usize>> = (0..g).map(|j| grid.iter().map(|row| row[j]).collect()).collect();
        let mut done: Vec<Vec<u32>> = vec![Vec::new(); b.n()];
        let (mut step, mut first) = (0u32, true);
        for &(inside, o) in phases(op) {
            let rings: Vec<(&Vec<usize>, u64)> =
                if inside { grid.iter().map(|row| (row, size)).collect() } else { rails.iter().enumerate().map(|(j, r)| (r, share(j))).collect() };
            let mut phase_steps = 0;
            for (members, bytes) in rings {
                let after: Vec<Vec<u32>> = members.iter().map(|&r| std::mem::take(&mut done[r])).collect();
                for (&r, d) in members.iter().zip(ring(b, members, o, bytes, step, &after, first)) {
                    done[r] = d;
                }
                phase_steps = steps(o, members.len());
            }
            step += phase_steps as u32;
            first &= phase_steps == 0;
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_layouts() {
        // 4 servers of 8 GPUs: allreduce 2 n (g - 1) + 2 n (S - 1)
        let hosts: Vec<u32> = (0..32).collect();
        let r = Ranks { hosts: &hosts, per_server: 8 };
        assert_eq!(Hierarchical::count(Op::Allreduce, &r), 2 * 32 * 7 + 2 * 32 * 3);
        assert_eq!(Hierarchical::count(Op::ReduceScatter, &r), 32 * 7 + 32 * 3);
        assert!(Hierarchical::supports(Op::Alltoall, &r).unwrap_err().contains("direct"));
        let uneven: Vec<u32> = (0..12).collect();
        let e = Hierarchical::supports(Op::Allreduce, &Ranks { hosts: &uneven, per_server: 8 }).unwrap_err();
        assert!(e.contains("8 on server 0 and 4 on server 1"), "{e}");
    }
}
