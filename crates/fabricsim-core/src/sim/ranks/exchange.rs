//! What the processes of a run across ranks say to each other: two collective operations,
//! which every rank calls at the same points in the same order (as MPI's collectives are
//! called). An implementation over MPI lives outside this crate (it needs a C library and
//! `unsafe`); [`Local`] runs the ranks as threads of one process, for the tests and for a
//! user who wants to check a launch before spreading it over machines.

use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// The collective operations a run across ranks needs (each one called by every rank).
pub trait Exchange {
    /// This process's rank, from 0.
    fn rank(&self) -> usize;
    /// How many ranks the run has.
    fn ranks(&self) -> usize;
    /// Every rank's `mine`, in rank order (MPI's `Allgatherv`).
    fn all_gather(&self, mine: Vec<u8>) -> Vec<Vec<u8>>;
    /// `out[r]` for rank `r`; returns what each rank sent this one, in rank order (MPI's
    /// `Alltoallv`).
    fn all_to_all(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>>;
}

/// Ranks that are threads of one process: [`Local::group`] makes one handle per rank, each
/// for its own thread. A handle dropped before its rank's last call (its thread panicked)
/// breaks the group: the other ranks panic at their next meeting instead of waiting forever.
pub struct Local {
    rank: usize,
    shared: Arc<Shared>,
}

struct Shared {
    ranks: usize,
    /// `boxes[from][to]`: what `from` left for `to`.
    boxes: Mutex<Vec<Vec<Vec<u8>>>>,
    /// Ranks arrived at the meeting under way, meetings held, and whether a rank left.
    meeting: Mutex<(usize, u64, bool)>,
    met: Condvar,
}

impl Shared {
    /// Waits until every rank arrived (a barrier that a rank's leaving breaks).
    fn wait(&self) {
        let mut m = self.meeting.lock().unwrap_or_else(PoisonError::into_inner);
        let held = m.1;
        m.0 += 1;
        if m.0 == self.ranks {
            (m.0, m.1) = (0, m.1 + 1);
            self.met.notify_all();
            return;
        }
        while m.1 == held && !m.2 {
            m = self.met.wait(m).unwrap_or_else(PoisonError::into_inner);
        }
        assert!(!m.2, "another rank of this group stopped (it panicked)");
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.shared.meeting.lock().unwrap_or_else(PoisonError::into_inner).2 = true;
            self.shared.met.notify_all();
        }
    }
}

impl Local {
    /// `ranks` handles that exchange with each other, rank 0 first.
    pub fn group(ranks: usize) -> Vec<Local> {
        let ranks = ranks.max(1);
        let shared =
            Arc::new(Shared { ranks, boxes: Mutex::new(vec![Vec::new(); ranks]), meeting: Mutex::new((0, 0, false)), met: Condvar::new() });
        (0..ranks).map(|rank| Local { rank, shared: shared.clone() }).collect()
    }

    /// Leaves `out` in this rank's row, waits for every rank, and reads with `read` from each
    /// rank's row; then waits again, so that no rank leaves its next row before all read.
    fn meet(&self, out: Vec<Vec<u8>>, read: impl Fn(&mut Vec<Vec<u8>>) -> Vec<u8>) -> Vec<Vec<u8>> {
        let s = &self.shared;
        s.boxes.lock().unwrap_or_else(PoisonError::into_inner)[self.rank] = out;
        s.wait();
        let got: Vec<Vec<u8>> = {
            let mut boxes = s.boxes.lock().unwrap_or_else(PoisonError::into_inner);
            boxes.iter_mut().map(&read).collect()
        };
        s.wait();
        got
    }
}

impl Exchange for Local {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.shared.ranks
    }

    fn all_gather(&self, mine: Vec<u8>) -> Vec<Vec<u8>> {
        self.meet(vec![mine], |row| row[0].clone())
    }

    fn all_to_all(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        assert_eq!(out.len(), self.shared.ranks, "one buffer for each rank");
        let me = self.rank;
        self.meet(out, |row| std::mem::take(&mut row[me]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_ranks_gather_and_swap_in_rank_order() {
        let ranks = Local::group(3);
        type Told = (Vec<Vec<u8>>, Vec<Vec<u8>>);
        let got: Vec<Told> = std::thread::scope(|s| {
            let handles: Vec<_> = ranks
                .iter()
                .map(|ex| {
                    s.spawn(move || {
                        let r = ex.rank() as u8;
                        let all = ex.all_gather(vec![r; usize::from(r) + 1]);
                        let swapped = ex.all_to_all((0..3u8).map(|to| vec![r * 10 + to]).collect());
                        (all, swapped)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("no panic")).collect()
        });
        for (r, (all, swapped)) in got.iter().enumerate() {
            assert_eq!(all, &vec![vec![0], vec![1, 1], vec![2, 2, 2]]);
            assert_eq!(swapped, &(0..3u8).map(|from| vec![from * 10 + r as u8]).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_rank_that_panics_stops_the_others() {
        let ranks = Local::group(2);
        let joined: Vec<bool> = std::thread::scope(|s| {
            let handles: Vec<_> = ranks
                .into_iter()
                .map(|ex| {
                    s.spawn(move || {
                        assert!(ex.rank() == 0, "rank 1 stops before the meeting");
                        ex.all_gather(vec![1]);
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().is_ok()).collect()
        });
        assert_eq!(joined, [false, false], "rank 0 panics at the meeting rank 1 left, instead of waiting forever");
    }
}
