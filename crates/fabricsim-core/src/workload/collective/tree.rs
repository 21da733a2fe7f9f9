//! `tree`: NCCL's double binary tree allreduce (Sanders, Speck and Träff, "Two-tree
//! algorithms for full bandwidth broadcast, reduction and scan", Parallel Computing 2009,
//! sec. 2-3; NCCL 2.4's "double binary trees").
//!
//! **The trees.** Tree 0 is the in-order binary tree of the ranks with root 0: for a rank r
//! whose lowest set bit is b, its parent is r with bit b cleared and bit 2b set (only bit b
//! cleared when that is out of range), its children `r - b/2` and the largest `r + b/2^j`
//! in range (none when b = 1: the odd ranks are the leaves); rank 0's one child is the
//! largest power of two below n. Tree 1 is tree 0 mirrored (rank r plays rank n-1-r) when n
//! is even, shifted by one (rank r plays rank r-1 mod n) when n is odd. With n even no rank
//! is interior in both trees: over the two halves each rank sends and receives about 2 x
//! size, as in a ring, but along paths of depth log2 n instead of n.
//!
//! **The allreduce.** Half the buffer goes over each tree, cut into [`CHUNKS`] pieces that
//! are pipelined: a rank sends piece c up to its parent once it has received piece c from
//! each child (and has sent piece c-1); the root, having piece c from its children, sends it
//! back down; each rank forwards piece c to its children once it has it from its parent
//! (and has sent them piece c-1). Steps in the results: `c` for the reduction of piece c,
//! `CHUNKS + c` for its broadcast. A rank's first messages are its piece-0 sends up (each
//! rank but a tree's root has one in that tree); the root of a tree joins an iteration
//! through its children's. A rank is done when it has sent its last pieces and received the
//! last one back in both trees.

use super::{Algorithm, Builder, Op, Ranks};
use crate::registry::AlgorithmInfo;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "collective",
    name: "tree",
    summary: "allreduce over NCCL's double binary tree: half the buffer reduced up and broadcast down each tree, pipelined in 8 pieces",
    reference: "Sanders, Speck & Träff 2009; NCCL 2.4 double binary trees",
};

/// Pieces each tree's half of the buffer is pipelined in.
pub const CHUNKS: usize = 8;

pub struct Tree;

/// Parent of each rank in tree 0 (`None` for the root, rank 0).
fn btree_parent(n: usize, r: usize) -> Option<usize> {
    if r == 0 {
        return None;
    }
    let b = r & r.wrapping_neg();
    let up = (r ^ b) | (b << 1);
    Some(if up < n { up } else { r ^ b })
}

/// Parent of each rank in tree `t` (0 or 1) of n ranks.
pub fn parents(n: usize, t: usize) -> Vec<Option<usize>> {
    (0..n)
        .map(|r| match (t, n % 2) {
            (0, _) => btree_parent(n, r),
            (_, 0) => btree_parent(n, n - 1 - r).map(|p| n - 1 - p),
            _ => btree_parent(n, (r + n - 1) % n).map(|p| (p + 1) % n),
        })
        .collect()
}

impl Algorithm for Tree {
    fn supports(op: Op, ranks: &Ranks<'_>) -> Result<(), String> {
        let n = ranks.n();
        match op {
            Op::Allreduce if n >= 2 => Ok(()),
            Op::Allreduce => Err("a collective needs at least 2 ranks".into()),
            _ => Err(format!("{} has no tree algorithm (NCCL's trees are for allreduce); allowed: ring", op.name())),
        }
    }

    fn count(_op: Op, ranks: &Ranks<'_>) -> u64 {
        let n = ranks.n() as u64;
        // per tree and piece: n-1 sends up, n-1 down
        2 * CHUNKS as u64 * 2 * (n - 1)
    }

    fn iteration(_op: Op, b: &mut Builder<'_>) -> Vec<Vec<u32>> {
        let n = b.n();
        let mut done: Vec<Vec<u32>> = vec![Vec::new(); n];
        for t in 0..2 {
            let parent = parents(n, t);
            let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
            for (r, p) in parent.iter().enumerate() {
                if let Some(p) = *p {
                    children[p].push(r);
                }
            }
            let depth = |mut r: usize| {
                let mut d = 0;
                while let Some(p) = parent[r] {
                    r = p;
                    d += 1;
                }
                d
            };
            // deepest first: a rank's children send up before it does
            let mut by_depth: Vec<usize> = (0..n).collect();
            by_depth.sort_by_key(|&r| (std::cmp::Reverse(depth(r)), r));
            let half = b.size / 2 + u64::from(t == 0 && b.size % 2 == 1);
            let piece = |c: usize| half / CHUNKS as u64 + u64::from((c as u64) < half % CHUNKS as u64);
            // up[r]: r's send of the current piece to its parent; down[r]: r's receipt of it
            let (mut up, mut down) = (vec![u32::MAX; n], vec![u32::MAX; n]);
            for c in 0..CHUNKS {
                let (prev_up, prev_down) = (up.clone(), down.clone());
                for &r in &by_depth {
                    if let Some(p) = parent[r] {
                        let mut after: Vec<u32> = children[r].iter().map(|&x| up[x]).collect();
                        if c > 0 {
                            after.push(prev_up[r]);
                        }
                        up[r] = b.send(r, p, piece(c), c as u32, &after, c == 0);
                    }
                }
                for &r in by_depth.iter().rev() {
                    let have: Vec<u32> = match parent[r] {
                        Some(_) => vec![down[r]],
                        None => children[r].iter().map(|&x| up[x]).collect(),
                    };
                    for &x in &children[r] {
                        let mut after = have.clone();
                        if c > 0 {
                            after.push(prev_down[x]);
                        }
                        down[x] = b.send(r, x, piece(c), (CHUNKS + c) as u32, &after, false);
                    }
                }
            }
            for r in 0..n {
                if parent[r].is_some() {
                    done[r].extend([up[r], down[r]]);
                }
                done[r].extend(children[r].iter().map(|&x| down[x]));
            }
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_trees_span_the_ranks_and_split_the_interior() {
        for n in 2..200 {
            for t in 0..2 {
                let p = parents(n, t);
                assert_eq!(p.iter().filter(|x| x.is_none()).count(), 1, "n {n} tree {t}: one root");
                let mut kids = vec![0; n];
                for r in 0..n {
                    // every rank reaches the root without a cycle
                    let (mut x, mut hops) = (r, 0);
                    while let Some(q) = p[x] {
                        x = q;
                        hops += 1;
                        assert!(hops < n, "n {n} tree {t}: cycle at {r}");
                    }
                    if let Some(q) = p[r] {
                        assert!(q < n);
                        kids[q] += 1;
                    }
                }
                assert!(kids.iter().all(|&k| k <= 2), "n {n} tree {t}: binary");
                // depth at most ceil(log2 n) + 1
                let depth = (0..n)
                    .map(|mut r| {
                        let mut d = 0;
                        while let Some(q) = p[r] {
                            r = q;
                            d += 1;
                        }
                        d
                    })
                    .max()
                    .unwrap();
                assert!(depth <= (usize::BITS - (n - 1).leading_zeros()) as usize + 1, "n {n} tree {t}: depth {depth}");
            }
            if n % 2 == 0 {
                let interior = |t| {
                    let p = parents(n, t);
                    let mut k = vec![false; n];
                    p.iter().flatten().for_each(|&q| k[q] = true);
                    k
                };
                let (a, b) = (interior(0), interior(1));
                assert!((0..n).all(|r| !(a[r] && b[r])), "n {n}: a rank interior in both trees");
            }
        }
        // the 14-rank tree 0 of NCCL's picture: 0 -> 8 -> {4, 12}, 12 -> {10, 13}
        let p = parents(14, 0);
        assert_eq!((p[8], p[4], p[12], p[10], p[13], p[1]), (Some(0), Some(8), Some(8), Some(12), Some(12), Some(2)));
    }
}
