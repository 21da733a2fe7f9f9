//! One collective expanded on its own, for a trace importer (the Python front end's Chakra
//! reader): the same algorithms and [`Builder`] as a job's iteration, with each rank's
//! entry (what its first messages wait for) left as a placeholder the importer fills in with
//! that rank's dependencies in its trace.

use crate::workload::collective::{AlgorithmKind, Builder, Listed, Op, Out, Ranks};

/// A collective's messages, in the order the algorithm made them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// (source host, destination host, bytes) of each message.
    pub messages: Vec<(u32, u32, u64)>,
    /// What each message waits for: `Dep::Message(j)`, another of these messages, or
    /// `Dep::Entry(r)`, what rank r waits for before its part of the collective.
    pub after: Vec<Vec<Dep>>,
    /// Per rank: the messages whose completion means the rank is done with the collective.
    pub done: Vec<Vec<u32>>,
}

/// One dependency of an expanded message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dep {
    Message(u32),
    Entry(u32),
}

/// `op` of `size` bytes per rank on ranks at `hosts` (servers of `per_server` GPUs) by
/// `algorithm` (default: a job's, `direct` for alltoall and `ring` otherwise), with at most
/// `max_connections` peers at once (alltoall) and at most `max_messages` messages; an error
/// text when the algorithm cannot run it or it makes more.
pub fn expand(
    op: Op,
    algorithm: Option<AlgorithmKind>,
    hosts: &[u32],
    per_server: u32,
    size: u64,
    max_connections: Option<usize>,
    max_messages: u64,
) -> Result<Expanded, String> {
    let n = hosts.len();
    if n < 2 {
        return Err(format!("got {n} rank(s); a collective needs 2 or more"));
    }
    let algorithm = algorithm.unwrap_or_else(|| AlgorithmKind::default_for(op));
    let layout = Ranks { hosts, per_server };
    algorithm.supports(op, &layout).map_err(|m| format!("algorithm {}: {m}", algorithm.name()))?;
    let count = algorithm.count(op, &layout);
    if count > max_messages {
        return Err(format!("{} on {n} ranks makes {count} messages, more than {max_messages}", algorithm.name()));
    }
    // placeholders above any message id: rank r's entry is u32::MAX - r
    let placeholder = |r: usize| u32::MAX - r as u32;
    let entry: Vec<Vec<u32>> = (0..n).map(|r| vec![placeholder(r)]).collect();
    let mut listed = Listed::default();
    let mut b = Builder {
        ranks: hosts,
        per_server,
        size,
        entry: &entry,
        max_connections: max_connections.unwrap_or(n - 1).max(1),
        compute: 0,
        slice: 0,
        out: Out::to(&mut listed),
    };
    let done = algorithm.iteration(op, &mut b);
    let Listed { messages, deps, .. } = listed;
    let made = messages.len() as u32;
    let after = (0..messages.len())
        .map(|i| deps.of(i).iter().map(|&d| if d < made { Dep::Message(d) } else { Dep::Entry(u32::MAX - d) }).collect())
        .collect();
    Ok(Expanded { messages: messages.iter().map(|m| (m.src, m.dst, m.bytes)).collect(), after, done })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_waits_for_each_ranks_entry_in_its_first_step_only() {
        let e = expand(Op::Allreduce, None, &[3, 5, 7, 9], 1, 4096, None, 1000).unwrap();
        assert_eq!(e.messages.len(), 4 * 2 * 3, "2(n-1) steps of n messages");
        assert_eq!(e.messages[0], (3, 5, 1024));
        for (i, after) in e.after.iter().enumerate() {
            let entries: Vec<u32> = after.iter().filter_map(|d| if let Dep::Entry(r) = d { Some(*r) } else { None }).collect();
            let src = e.messages[i].0;
            if i < 4 {
                assert_eq!(entries, vec![(src - 3) / 2], "a first step waits for its sender's entry");
            } else {
                assert!(entries.is_empty() && !after.is_empty(), "a later step waits for messages only");
            }
        }
        assert_eq!(e.done.len(), 4);
        assert!(e.done.iter().flatten().all(|&m| (m as usize) < e.messages.len()));
    }

    #[test]
    fn what_cannot_run_is_an_error_text() {
        assert!(expand(Op::Allreduce, None, &[0], 1, 8, None, 10).unwrap_err().contains("2 or more"));
        assert!(expand(Op::Allreduce, None, &[0, 1, 2, 3], 1, 8, None, 5).unwrap_err().contains("more than 5"));
        let h = expand(Op::Allreduce, Some(AlgorithmKind::HalvingDoubling), &[0, 1, 2], 1, 8, None, 100);
        assert!(h.unwrap_err().starts_with("algorithm halving_doubling"));
    }
}
