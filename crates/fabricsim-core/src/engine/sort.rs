//! Sorting a calendar bucket (see [`super::EventQueue`]).

use super::Entry;

/// Sorts a bucket earliest first. A bucket arrives in time order but for its ties (hosts in
/// lockstep fill a bucket with events of one instant), whose units come in the order they
/// were handled: a few ascending runs. A small bucket gets an insertion sort (no work where
/// it is in order); a larger one the standard library's stable sort, which merges the runs
/// it finds and cannot turn quadratic. `sort_unstable` sorted them from scratch
/// (docs/performance.md).
#[inline]
pub(super) fn sort_bucket(v: &mut [Entry]) {
    if v.len() > 32 {
        v.sort_by_key(Entry::key);
        return;
    }
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
