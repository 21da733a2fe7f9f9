//! Sorting a calendar bucket (see [`super::EventQueue`]).

use super::Entry;

/// Scratch space a bucket's sort reuses: the starts of its runs, and a run being merged.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    runs: Vec<usize>,
    left: Vec<Entry>,
}

/// Sorts a bucket earliest first. A bucket arrives in time order but for its ties (hosts in
/// lockstep fill a bucket with events of one instant), whose units come in the order they
/// were handled: a few ascending runs, one per instant that scheduled into it. A small bucket
/// gets an insertion sort (no work where it is in order); a larger one has its runs merged
/// pairwise, level by level (n log(runs) where a general sort takes n log n: a 1024-host
/// run's buckets of ~50 events in ~8 runs took a fifth of its instructions in `std`'s
/// stable sort, docs/performance.md); one of many short runs gets `std`'s sort.
#[inline]
pub(super) fn sort_bucket(v: &mut [Entry], scratch: &mut Scratch) {
    if v.len() <= 32 {
        insertion_sort(v);
        return;
    }
    let runs = &mut scratch.runs;
    runs.clear();
    runs.push(0);
    for i in 1..v.len() {
        if v[i - 1].key() > v[i].key() {
            runs.push(i);
        }
    }
    if runs.len() > v.len() / 4 {
        v.sort_unstable_by_key(Entry::key);
        return;
    }
    runs.push(v.len());
    // runs[..k] start the k runs, runs[k] is the end; each level merges neighbours
    while runs.len() > 2 {
        let k = runs.len() - 1;
        let mut kept = 0;
        for j in (0..k).step_by(2) {
            if j + 1 < k {
                merge(&mut v[runs[j]..runs[j + 2]], runs[j + 1] - runs[j], &mut scratch.left);
            }
            runs[kept] = runs[j];
            kept += 1;
        }
        runs[kept] = v.len();
        runs.truncate(kept + 1);
    }
}

fn insertion_sort(v: &mut [Entry]) {
    for i in 1..v.len() {
        let e = v[i];
        if v[i - 1].key() < e.key() {
            continue;
        }
        let mut j = i;
        while j > 0 && v[j - 1].key() > e.key() {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = e;
    }
}

/// Merges the sorted `v[..mid]` and `v[mid..]` in place (the left part copied to `left`).
fn merge(v: &mut [Entry], mid: usize, left: &mut Vec<Entry>) {
    left.clear();
    left.extend_from_slice(&v[..mid]);
    let (mut i, mut j, mut k) = (0, mid, 0);
    while i < left.len() && j < v.len() {
        if v[j].key() < left[i].key() {
            v[k] = v[j];
            j += 1;
        } else {
            v[k] = left[i];
            i += 1;
        }
        k += 1;
    }
    // what is left of the right run is in place already
    v[k..k + left.len() - i].copy_from_slice(&left[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Rng, Stream};
    use crate::engine::Event;

    #[test]
    fn buckets_of_any_size_and_runs_come_out_sorted() {
        let mut rng = Rng::stream(7, Stream::Host, 0);
        let mut scratch = Scratch::default();
        for len in 0..200 {
            for runs in [1, 2, 3, 8, 40, 200] {
                // `runs` ascending runs of keys with ties in time
                let mut v: Vec<Entry> =
                    (0..len).map(|i| Entry { time: rng.below(3), order: rng.below(1 << 30), event: Event::Rto(i) }).collect();
                for chunk in v.chunks_mut((len as usize).div_ceil(runs).max(1)) {
                    chunk.sort_by_key(Entry::key);
                }
                let mut want: Vec<u128> = v.iter().map(Entry::key).collect();
                want.sort_unstable();
                sort_bucket(&mut v, &mut scratch);
                assert_eq!(v.iter().map(Entry::key).collect::<Vec<_>>(), want, "{len} entries in {runs} runs");
            }
        }
    }
}
