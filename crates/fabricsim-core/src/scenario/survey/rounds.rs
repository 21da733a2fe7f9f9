//! A ring's later steps counted in closed form ([`Sink::rounds`](crate::workload::collective::Sink::rounds)
//! where each message carries on what the message it waits for carried).
//!
//! In a ring each member passes on the chunk it received: the message of member r in step s
//! waits for member r-1's in step s-1 and has its bytes (`collective::ring`). Follow one chunk
//! through the rounds and it crosses the members in turn, every message of it waiting for the one
//! before it, which its own source received: so its `k`-th message finishes (at its ideal) at
//! the finish of the one it started from plus the sum, over the members it crossed, of each
//! member's delay and ideal FCT for its bytes; sits one level deeper in the dependency graph
//! than the one before; and adds its member's events, kept bytes and bytes under way. Sums over
//! consecutive members of a cycle are differences of prefix sums, so a ring of `n` members and
//! `2 (n - 1)` steps is counted in `O(n)` work and its levels in `O(n + steps)`, instead of
//! `2 n (n - 1)` messages one by one (98 304 GPUs of Llama 3 405B: 1.2 G of the survey's 1.3 G).
//! The values are those [`Counting::count`] gives each message in turn, by the same code
//! ([`Counting::known`], [`crate::budget::Tally::sizes`]); what the closed form needs is
//! checked and the messages are counted one by one where it does not hold: a round of messages
//! that read no permutation of the round before, a message whose bytes or ends differ from what
//! the form assumes in the first two rounds or the last two, one the checks would refuse, a
//! far message among them, fewer than [`Self::LEAST`] messages.

use super::{Counting, Known};
use crate::time::Time;
use crate::workload::collective::{MakeRound, Tag};
use crate::workload::MessageSpec;

/// One member's message for one of the chunks' sizes: what counting it adds.
#[derive(Clone, Copy, Default)]
struct Step {
    /// Its delay and ideal FCT: what it adds to the finish of the message it waits for.
    time: Time,
    events: u64,
    kept: u64,
    live: u64,
    connections: u64,
}

impl Step {
    fn plus(self, o: Step) -> Option<Step> {
        Some(Step {
            time: self.time.checked_add(o.time)?,
            events: self.events.checked_add(o.events)?,
            kept: self.kept.checked_add(o.kept)?,
            live: self.live.checked_add(o.live)?,
            connections: self.connections.checked_add(o.connections)?,
        })
    }

    fn minus(self, o: Step) -> Step {
        Step {
            time: self.time - o.time,
            events: self.events - o.events,
            kept: self.kept - o.kept,
            live: self.live - o.live,
            connections: self.connections - o.connections,
        }
    }

    fn times(self, k: u64) -> Option<Step> {
        Some(Step {
            time: self.time.checked_mul(k)?,
            events: self.events.checked_mul(k)?,
            kept: self.kept.checked_mul(k)?,
            live: self.live.checked_mul(k)?,
            connections: self.connections.checked_mul(k)?,
        })
    }
}

impl Counting<'_> {
    /// The fewest messages counted in closed form.
    const LEAST: usize = 4096;

    /// Counts [`Sink::rounds`](crate::workload::collective::Sink::rounds) in closed form where
    /// it holds (the module doc); `None` where it does not, having counted nothing.
    pub(super) fn rounds_closed(&mut self, last: &[u32], rounds: usize, reads: &[usize], make: &mut MakeRound<'_>) -> Option<Vec<u32>> {
        let w = last.len();
        if rounds < 2 || w.checked_mul(rounds)? < Self::LEAST {
            return None;
        }
        let count = u32::try_from(w * rounds).ok()?;
        let base = (self.base as usize + self.pushed) as u32;
        base.checked_add(count)?;
        // each message reads one of the round before, each of which one reads: chunks go on
        let mut inv = vec![usize::MAX; w];
        for (i, &r) in reads.iter().enumerate() {
            if r >= w || inv[r] != usize::MAX {
                return None;
            }
            inv[r] = i;
        }
        // the first two rounds and the last two: the same ends, delay, start and job every
        // round, and each message the bytes of the one it reads
        let first: Vec<(MessageSpec, Tag)> = (0..w).map(|i| make(0, i)).collect();
        let same = |a: &(MessageSpec, Tag), b: &(MessageSpec, Tag)| {
            MessageSpec { bytes: 0, qp: 0, ..a.0 } == MessageSpec { bytes: 0, qp: 0, ..b.0 } && a.1.job == b.1.job
        };
        for pair in [(0, 1), (rounds - 2, rounds - 1)] {
            let before: Vec<(MessageSpec, Tag)> = if pair.0 == 0 { first.clone() } else { (0..w).map(|i| make(pair.0, i)).collect() };
            for i in 0..w {
                let m = make(pair.1, i);
                if !same(&m, &first[i]) || !same(&before[i], &first[i]) || m.0.bytes != before[reads[i]].0.bytes {
                    return None;
                }
            }
        }
        let (start, tag) = (first[0].0.start, first[0].1);
        if first.iter().any(|m| m.0.start != start || m.1.job != tag.job || m.0.is_compute()) {
            return None;
        }
        // where each message sits in its cycle: message i of a round is read by inv[i] of the next
        let mut cycles: Vec<Vec<usize>> = Vec::new();
        let mut at = vec![(0usize, 0usize); w];
        let mut seen = vec![false; w];
        for i in 0..w {
            if seen[i] {
                continue;
            }
            let mut c = Vec::new();
            let mut j = i;
            while !seen[j] {
                seen[j] = true;
                at[j] = (cycles.len(), c.len());
                c.push(j);
                j = inv[j];
            }
            cycles.push(c);
        }
        // each chunk's bytes (those of the message that first reads it) and the sizes
        let bytes: Vec<u64> = (0..w).map(|p| first[inv[p]].0.bytes).collect();
        let mut sizes: Vec<u64> = bytes.clone();
        sizes.sort_unstable();
        sizes.dedup();
        if sizes.len() > 8 {
            return None;
        }
        // what each member's message adds, for each size
        let mut steps: Vec<Vec<Step>> = Vec::with_capacity(sizes.len());
        let mut ends: Vec<(u32, u32)> = vec![(0, 0); w];
        for &b in &sizes {
            let mut row = Vec::with_capacity(w);
            for (i, (m, _)) in first.iter().enumerate() {
                let m = MessageSpec { bytes: b, ..*m };
                if super::too_many_packets(&m, self.payload) || u32::from(m.class) >= self.classes {
                    return None;
                }
                let Known { on, connections, events, fct } = self.known(&m);
                ends[i] = on;
                let (kept, live) = self.tally.sizes(&m, connections);
                row.push(Step { time: m.delay.checked_add(fct)?, events, kept, live, connections });
            }
            steps.push(row);
        }
        // each message is released when it hears of the one it reads: at its finish, which its
        // own source received, not before its start
        let levels = self.tally.levels().map(|l| (0..w).map(|p| l.get(last[p])).collect::<Option<Vec<u32>>>());
        let levels = match levels {
            Some(None) => return None,
            Some(Some(l)) => Some(l),
            None => None,
        };
        let finishes = match &self.least {
            Some(least) => {
                let (done, given) = least.done();
                let f: Vec<(Time, u32, u32)> = (0..w).map(|p| done.get(last[p])).collect::<Option<_>>()?;
                let chained = (0..w).all(|i| ends[reads[i]].1 == ends[i].0 && f[reads[i]].2 == ends[i].0);
                if given || !chained || f.iter().any(|&(t, ..)| t < start) || !done.may_skip(count - w as u32) {
                    return None;
                }
                Some(f)
            }
            None => None,
        };
        if self.tally.levels().is_some_and(|l| !l.may_skip(count - w as u32)) {
            return None;
        }
        // prefix sums over each cycle, twice round, for each size
        let size_of = |b: u64| sizes.binary_search(&b).unwrap_or(0);
        let mut prefix: Vec<Vec<Vec<Step>>> = Vec::with_capacity(sizes.len());
        for row in &steps {
            let mut per_cycle = Vec::with_capacity(cycles.len());
            for c in &cycles {
                let mut p = Vec::with_capacity(2 * c.len() + 1);
                p.push(Step::default());
                for t in 0..2 * c.len() {
                    p.push(p[t].plus(row[c[t % c.len()]])?);
                }
                per_cycle.push(p);
            }
            prefix.push(per_cycle);
        }
        // each chunk, from the message that first reads it on
        let mut total = Step::default();
        let mut chain_end: Vec<(Time, u32)> = vec![(0, 0); w];
        let (lo, hi) = match &levels {
            Some(l) => (l.iter().min().map_or(0, |&m| m + 1), l.iter().max().map_or(0, |&m| m + rounds as u32)),
            None => (0, 0),
        };
        let mut under_way = vec![0u64; if levels.is_some() { (hi - lo + 2) as usize } else { 0 }];
        for p in 0..w {
            let (c, t) = at[p];
            let len = cycles[c].len();
            let z = size_of(bytes[p]);
            let sums = &prefix[z][c];
            let t0 = (t + 1) % len;
            let (full, rem) = ((rounds / len) as u64, rounds % len);
            let whole = sums[len].times(full)?;
            let chunk = whole.plus(sums[t0 + rem].minus(sums[t0]))?;
            total = total.plus(chunk)?;
            let finish = finishes.as_ref().map_or(0, |f| f[p].0.saturating_add(chunk.time));
            if let Some(l) = &levels {
                let from = (l[p] + 1 - lo) as usize;
                let row = &steps[z];
                if cycles[c].iter().all(|&i| row[i].live == row[cycles[c][0]].live) {
                    // one level more each message, the same bytes under way at each
                    let live = row[cycles[c][0]].live;
                    under_way[from] = under_way[from].wrapping_add(live);
                    under_way[from + rounds] = under_way[from + rounds].wrapping_sub(live);
                } else {
                    for s in 0..rounds {
                        let live = row[cycles[c][(t0 + s) % len]].live;
                        under_way[from + s] = under_way[from + s].wrapping_add(live);
                        under_way[from + s + 1] = under_way[from + s + 1].wrapping_sub(live);
                    }
                }
            }
            chain_end[p] = (finish, levels.as_ref().map_or(0, |l| l[p] + rounds as u32));
        }
        for k in 1..under_way.len() {
            under_way[k] = under_way[k].wrapping_add(under_way[k - 1]);
        }
        under_way.pop();
        // the last round: message i carries the chunk `rounds` reads back along its cycle
        let mut last_levels = Vec::with_capacity(w);
        let mut last_done = Vec::with_capacity(w);
        for i in 0..w {
            let (c, t) = at[i];
            let len = cycles[c].len();
            let p = cycles[c][(t + len - rounds % len) % len];
            last_levels.push(chain_end[p].1);
            last_done.push((chain_end[p].0, ends[i].0, ends[i].1));
        }
        let latest = last_done.iter().map(|d| d.0).max().unwrap_or(0);
        self.tally.add_counted(count, (total.kept, total.live, u64::from(count), total.connections), lo, &under_way, &last_levels);
        self.events = self.events.saturating_add(total.events);
        if let Some(least) = &mut self.least {
            least.add_counted(count, tag.job, latest, &last_done);
        }
        self.pushed += count as usize;
        #[cfg(test)]
        tests::CLOSED.with(|c| c.set(c.get() + 1));
        let end = base + count;
        Some((end - w as u32..end).collect())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use crate::scenario::Scenario;

    thread_local! {
        /// Rounds counted in closed form on this thread.
        pub(super) static CLOSED: Cell<usize> = const { Cell::new(0) };
    }

    /// Counted in closed form, a ring's later steps count what counting each message counts:
    /// the same events, memory estimate and warnings, and each job's least time to the
    /// picosecond; in rings of one and two chunk sizes, of pieces, of members on one server's
    /// scale-up network and across the fabric, over iterations, and a training job's
    /// data-parallel rings (allreduce, and reduce-scatter then all-gather).
    #[test]
    fn a_ring_in_closed_form_counts_what_each_message_counts() {
        let train = |dp: u32, extra: &str| {
            format!(
                "[topology]\nhosts = {}\nradix = 64\nnics_per_server = 8\nrails = true\nscale_up_rate = \"7200Gbps\"\n[[jobs]]\n\
                 ranks = {0}\nmodel = {{ preset = \"llama3-8b\", layers = 2 }}\nparallel = {{ tp = 8, pp = 2, dp = {dp}, micro_batches = 2, \
                 gpu_tflops = 400{extra} }}\n",
                16 * dp
            )
        };
        let cases = [
            train(64, ""),
            train(80, ", distributed_optimizer = true"),
            "[topology]\nhosts = 64\nradix = 16\nnics_per_server = 8\nscale_up_rate = \"7200Gbps\"\n[[jobs]]\ncollective = \"allreduce\"\n\
             size = \"1000003B\"\nranks = 48\niterations = 2\nchannels = 2\n"
                .to_string(),
            "[topology]\nhosts = 128\nradix = 16\n[[jobs]]\ncollective = \"allgather\"\nsize = \"5000KiB\"\nranks = 40\nslice = \"8KiB\"\n\
             [[jobs]]\ncollective = \"reduce_scatter\"\nsize = \"8MiB\"\nranks = 80\ncosts = \"none\"\n"
                .to_string(),
        ];
        for (i, text) in cases.iter().enumerate() {
            let table: toml::Table = toml::from_str(text).unwrap();
            let s = Scenario::from_deserializer(table).unwrap();
            CLOSED.with(|c| c.set(0));
            let (a, least_a) = s.counted(true, None).unwrap().unwrap();
            assert!(CLOSED.with(|c| c.get()) > 0, "case {i}: the closed form ran");
            CLOSED.with(|c| c.set(0));
            let (b, least_b) = s.counted(false, None).unwrap().unwrap();
            assert_eq!(CLOSED.with(|c| c.get()), 0, "case {i}: the rounds one by one");
            assert!(least_a.is_some(), "case {i}: a least time is told");
            assert_eq!((a.warnings, a.events, a.need, least_a), (b.warnings, b.events, b.need, least_b), "case {i}");
        }
    }
}
