//! The ideal FCT (DESIGN.md): a message alone on an idle fabric, computed exactly by running
//! its packets through the store-and-forward tandem of its path.

use crate::time::{serialization, Time};
use crate::topology::Hop;

/// Time from the first bit sent to the last bit received of a `bytes` message alone on
/// `path`: each packet leaves the sender back to back, and hop h starts a packet when the
/// packet has fully arrived and the hop's link is free (`f[h][i] = max(f[h][i-1],
/// arrival[h][i]) + ser(s_i, r_h)`). With equal rates this is
/// `bytes_on_wire / rate + (hops - 1) * ser(max packet) + latencies`.
pub fn ideal_fct(path: &[Hop], bytes: u64, mtu: u64, header: u64) -> Time {
    let payload = mtu - header;
    let n = bytes.div_ceil(payload);
    let last = bytes - (n - 1) * payload + header;
    let mut free = vec![0 as Time; path.len()];
    let mut arrival = 0;
    for i in 0..n {
        let size = if i + 1 == n { last } else { mtu };
        let mut t = 0;
        for (h, hop) in path.iter().enumerate() {
            free[h] = free[h].max(t) + serialization(size, hop.rate);
            t = free[h] + hop.latency;
        }
        arrival = t;
    }
    arrival
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_matches_closed_form_for_equal_rates() {
        let hop = |lat| Hop { rate: 400_000_000_000, latency: lat };
        let path = [hop(1_000_000), hop(1_000_000), hop(1_000_000), hop(1_000_000)];
        // 8 MiB in 4096 B payloads: 2048 packets of 4160 B, 83.2 ns each.
        let ideal = ideal_fct(&path, 8 << 20, 4160, 64);
        assert_eq!(ideal, 2048 * 83_200 + 3 * 83_200 + 4 * 1_000_000);
        // A short last packet still waits behind the full one before it at every hop.
        let ideal = ideal_fct(&path, 4096 + 100, 4160, 64);
        assert_eq!(ideal, 83_200 + serialization(164, 400_000_000_000) + 3 * 83_200 + 4 * 1_000_000);
    }

    #[test]
    fn ideal_uses_the_bottleneck() {
        let path = [Hop { rate: 100_000_000_000, latency: 0 }, Hop { rate: 400_000_000_000, latency: 0 }];
        // 10 packets at 332.8 ns on the slow first hop, then the last one at 83.2 ns.
        assert_eq!(ideal_fct(&path, 10 * 4096, 4160, 64), 10 * 332_800 + 83_200);
    }
}
