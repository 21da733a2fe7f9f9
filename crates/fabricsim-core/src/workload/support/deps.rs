//! Dependencies between messages: the one mechanism behind collectives, jobs and imported
//! traces. A message with dependencies is released when every message it waits for has been
//! fully received (per message, not a global barrier), plus its own `delay` (compute time),
//! and never before its `start`. Stored as compressed lists (one offset per message).

use crate::error::ScenarioError;

/// For each message, the messages it waits for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Deps {
    /// `ids[first[i]..first[i + 1]]` are message i's dependencies; empty when none has any.
    first: Vec<u32>,
    ids: Vec<u32>,
}

impl Deps {
    /// From one list per message.
    pub fn from_lists(lists: &[Vec<u32>]) -> Deps {
        if lists.iter().all(Vec::is_empty) {
            return Deps::default();
        }
        let mut d = Deps { first: Vec::with_capacity(lists.len() + 1), ids: Vec::new() };
        for l in lists {
            d.push(l);
        }
        d
    }

    /// Adds the list of the next message (built one message at a time, without a list per
    /// message; [`Deps::finish`] once all are pushed).
    pub fn push(&mut self, list: &[u32]) {
        if self.first.is_empty() {
            self.first.push(0);
        }
        self.ids.extend_from_slice(list);
        self.first.push(self.ids.len() as u32);
    }

    /// Lists pushed so far.
    pub fn lists(&self) -> usize {
        self.first.len().saturating_sub(1)
    }

    /// Appends `other`'s lists after the `n` of these (`n` counts lists of none when these
    /// are empty, [`Deps::default`]).
    pub fn append(&mut self, n: usize, other: &Deps, m: usize) {
        if other.is_empty() {
            // none waits: a message past the lists waits for none (`Deps::of`)
            return;
        }
        while self.lists() < n {
            self.push(&[]);
        }
        for i in 0..m {
            self.push(other.of(i));
        }
    }

    /// As [`Deps::from_lists`] gives the pushed lists: none at all when every list is empty.
    pub fn finish(self) -> Deps {
        if self.ids.is_empty() {
            return Deps::default();
        }
        self
    }

    /// One list per message, for what rewrites them (`relay`, `stripe`).
    pub fn to_lists(&self, n: usize) -> Vec<Vec<u32>> {
        (0..n).map(|i| self.of(i).to_vec()).collect()
    }

    /// The dependencies of messages `0..n` that `keep(i, d)` keeps, as [`Deps::from_lists`]
    /// of the kept lists gives them (built in place: no list per message).
    pub fn filtered(&self, n: usize, keep: impl Fn(usize, u32) -> bool) -> Deps {
        let mut d = Deps { first: Vec::with_capacity(n + 1), ids: Vec::new() };
        d.first.push(0);
        for i in 0..n {
            d.ids.extend(self.of(i).iter().copied().filter(|&x| keep(i, x)));
            d.first.push(d.ids.len() as u32);
        }
        if d.ids.is_empty() {
            return Deps::default();
        }
        d
    }

    /// No message waits for another.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The messages message `i` waits for (none for a message made after the lists: one sent
    /// into a running run).
    pub fn of(&self, i: usize) -> &[u32] {
        match self.first.get(i..i + 2) {
            Some(&[a, b]) => &self.ids[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Entries in all lists.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The reverse relation over `n` messages: for each message, those that wait for it.
    pub fn dependents(&self, n: usize) -> Deps {
        if self.is_empty() {
            return Deps::default();
        }
        let mut count = vec![0u32; n + 1];
        for &d in &self.ids {
            count[d as usize + 1] += 1;
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let mut ids = vec![0u32; self.ids.len()];
        let mut at = count.clone();
        for i in 0..n {
            for &d in self.of(i) {
                ids[at[d as usize] as usize] = i as u32;
                at[d as usize] += 1;
            }
        }
        Deps { first: count, ids }
    }

    /// The messages in an order where each comes after all it waits for, or the index of a
    /// message on a cycle (`field(i)` names it in the error).
    pub fn order(&self, n: usize, field: impl Fn(usize) -> String) -> Result<Vec<u32>, ScenarioError> {
        let rev = self.dependents(n);
        let mut waiting: Vec<u32> = (0..n).map(|i| self.of(i).len() as u32).collect();
        let mut order: Vec<u32> = (0..n as u32).filter(|&i| waiting[i as usize] == 0).collect();
        let mut k = 0;
        while k < order.len() {
            let m = order[k] as usize;
            k += 1;
            for &d in rev.of(m) {
                waiting[d as usize] -= 1;
                if waiting[d as usize] == 0 {
                    order.push(d);
                }
            }
        }
        if order.len() < n {
            let stuck = (0..n).find(|&i| waiting[i] > 0).expect("a message is left");
            return Err(ScenarioError {
                field: field(stuck),
                message: "got a dependency cycle through this message; allowed: dependencies that form no cycle".into(),
            });
        }
        Ok(order)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_reverse_and_order() {
        let d = Deps::from_lists(&[vec![], vec![0], vec![0, 1], vec![]]);
        assert_eq!((d.of(0), d.of(2), d.len()), (&[][..], &[0, 1][..], 3));
        let r = d.dependents(4);
        assert_eq!((r.of(0), r.of(1), r.of(3)), (&[1, 2][..], &[2][..], &[][..]));
        assert_eq!(d.order(4, |i| i.to_string()).unwrap(), vec![0, 3, 1, 2]);
        let cyc = Deps::from_lists(&[vec![2], vec![], vec![0]]);
        assert_eq!(cyc.order(3, |i| format!("m{i}")).unwrap_err().field, "m0");
        assert!(Deps::from_lists(&[vec![], vec![]]).is_empty());
    }
}
