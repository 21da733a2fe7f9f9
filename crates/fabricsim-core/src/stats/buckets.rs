//! FCT slowdown by message size, in the buckets the papers report traces in (ARCANE sec. 4.2;
//! HPCC): < 100 KB, 100 KB-1 MB, 1-10 MB, > 10 MB (KB = 1000 bytes).

use super::{columns, mean, percentile, Column, Table};

/// The buckets' lower bounds, bytes, and names.
pub const BUCKETS: [(u64, &str); 4] = [(0, "<100KB"), (100_000, "100KB-1MB"), (1_000_000, "1-10MB"), (10_000_000, ">10MB")];

/// One row per bucket from each message's size and slowdown (`None`: not completed).
pub fn table(messages: impl Iterator<Item = (u64, Option<f64>)>) -> Table {
    let bucket = |b: u64| BUCKETS.iter().rposition(|&(lo, _)| b >= lo).unwrap_or(0);
    let mut count = [0u64; 4];
    let mut done: [Vec<f64>; 4] = Default::default();
    for (b, s) in messages {
        let k = bucket(b);
        count[k] += 1;
        done[k].extend(s);
    }
    let mut t = Table::new(columns::BUCKETS);
    t.add("bucket", Column::Str(BUCKETS.iter().map(|b| b.1.to_string()).collect()));
    t.add("min_bytes", Column::U64(BUCKETS.iter().map(|b| b.0).collect()));
    t.add("messages", Column::U64(count.to_vec()));
    t.add("completed", Column::U64(done.iter().map(|d| d.len() as u64).collect()));
    t.add("p50_slowdown", Column::OptF64(done.iter().map(|d| percentile(d, 50.0)).collect()));
    t.add("p99_slowdown", Column::OptF64(done.iter().map(|d| percentile(d, 99.0)).collect()));
    t.add("mean_slowdown", Column::OptF64(done.iter().map(|d| mean(d)).collect()));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_fall_in_their_bucket() {
        let t = table([1, 99_999, 100_000, 5_000_000, 10_000_000].into_iter().zip([Some(1.0), Some(3.0), None, Some(2.0), Some(4.0)]));
        assert_eq!(t.u64("messages"), &[2, 1, 1, 1]);
        assert_eq!(t.u64("completed"), &[2, 0, 1, 1]);
        assert_eq!(t.opt_f64("p99_slowdown"), &[Some(3.0), None, Some(2.0), Some(4.0)]);
        assert_eq!(t.opt_f64("mean_slowdown")[0], Some(2.0));
    }
}
