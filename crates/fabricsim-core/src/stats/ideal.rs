//! The ideal FCT (DESIGN.md): a message alone on an idle, fault-free fabric, computed exactly
//! by running its packets through the store-and-forward tandem of its paths.
//!
//! Two refinements of DESIGN.md's "bottleneck of its path", both so that no message can ever
//! finish faster than its ideal:
//! - **All paths together.** A hop is the pool of every link at that position over all
//!   shortest paths (one host link; `up0` leaf uplinks; `up0 x up1` core links). A sprayed
//!   message may use them all at once, so where the uplinks are slower than the host link the
//!   ideal is set by their sum, not by one of them. Where no pool is slower than the host link
//!   (every default fabric), the pools never queue and this is the single-path tandem exactly.
//!   A single-path load balancer (ECMP) then shows the cost of using one path as a slowdown
//!   above 1, which is what the metric is for.
//! - **The message's own packets.** The ideal sends the packets its sender cuts the message
//!   into, in the order an idle NIC sends them: `mtu`-sized packets and a shorter last one; an
//!   MPTCP message is cut per subflow and the subflows are sent round-robin, so its smaller
//!   packets pipeline through the store-and-forward hops faster than one MTU packet would.
//!   With `transport.rate_cap` each connection's packets are released no faster than the cap
//!   ([`releases`]), as the NIC paces them.

use crate::lb::mptcp::shares;
use crate::time::{serialization, Time};
use crate::topology::Hop;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Wire sizes of a message of `bytes` cut into `subflows` connections: each connection's
/// packets in sequence, `mtu`-sized and a shorter last one.
fn per_connection(bytes: u64, mtu: u64, header: u64, subflows: u32) -> Vec<Vec<u64>> {
    let payload = mtu - header;
    shares(bytes, subflows)
        .into_iter()
        .map(|b| {
            let n = b.div_ceil(payload).max(1);
            (0..n).map(|i| if i + 1 == n { b - (n - 1) * payload + header } else { mtu }).collect()
        })
        .collect()
}

/// The connections' items in the order an idle NIC sends them: round-robin over the
/// connections that still have some, each in sequence.
fn round_robin<T: Copy>(conns: &[Vec<T>]) -> Vec<T> {
    let rounds = conns.iter().map(Vec::len).max().unwrap_or(0);
    (0..rounds).flat_map(|r| conns.iter().filter_map(move |c| c.get(r).copied())).collect()
}

/// Wire sizes of a message of `bytes` cut into `subflows` connections, in the order an idle
/// NIC sends them (round-robin over the connections, each in sequence).
pub fn message_packets(bytes: u64, mtu: u64, header: u64, subflows: u32) -> Vec<u64> {
    round_robin(&per_connection(bytes, mtu, header, subflows))
}

/// The connections' shares of a message of `bytes` cut into `subflows` ([`shares`]), as
/// (share, how many connections carry it): at most two sizes, one byte apart.
fn share_sizes(bytes: u64, subflows: u32) -> [(u64, u64); 2] {
    let k = u64::from(subflows).min(bytes).max(1);
    [(bytes / k + 1, bytes % k), (bytes / k, k - bytes % k)]
}

/// The last (shortest) of the packets a connection of `share` bytes sends, on the wire.
fn last_packet(share: u64, mtu: u64, header: u64) -> u64 {
    let payload = mtu - header;
    let n = share.div_ceil(payload).max(1);
    share - (n - 1) * payload + header
}

/// The time the packets of [`message_packets`] hold a link of `rate` back to back (each
/// packet serialized on its own), without listing them: the same sum, in closed form.
pub fn wire_time(bytes: u64, mtu: u64, header: u64, subflows: u32, rate: u64) -> Time {
    let payload = mtu - header;
    let one =
        |share: u64| (share.div_ceil(payload).max(1) - 1) * serialization(mtu, rate) + serialization(last_packet(share, mtu, header), rate);
    share_sizes(bytes, subflows).iter().filter(|&&(_, k)| k > 0).map(|&(share, k)| k * one(share)).sum()
}

/// The smallest of the packets of [`message_packets`], without listing them.
pub fn smallest_packet(bytes: u64, mtu: u64, header: u64, subflows: u32) -> u64 {
    share_sizes(bytes, subflows).iter().filter(|&&(_, k)| k > 0).map(|&(share, _)| last_packet(share, mtu, header)).min().unwrap_or(header)
}

/// When each packet of [`message_packets`] may start under a per-connection rate cap of `cap`
/// bits/s (0: no cap, all at 0): a connection's packets `size / cap` apart, as the NIC paces
/// them.
pub fn releases(bytes: u64, mtu: u64, header: u64, subflows: u32, cap: u64) -> Vec<Time> {
    let conns = per_connection(bytes, mtu, header, subflows);
    let paced: Vec<Vec<Time>> = conns
        .iter()
        .map(|sizes| {
            sizes
                .iter()
                .scan(0, |next: &mut Time, &size| {
                    let at = *next;
                    *next += if cap == 0 { 0 } else { serialization(size, cap) };
                    Some(at)
                })
                .collect()
        })
        .collect();
    round_robin(&paced)
}

/// Time from the first bit sent to the last bit received of `packets` (wire sizes, in sending
/// order) alone on the paths `path` describes, each packet released at `release` (empty: all
/// at once). The first hop sends them back to back from their release; every
/// hop takes packets in arrival order and starts each, whole, on whichever of its `links` is
/// free first (`start = max(arrival, earliest free link)`, `done = start + ser(size, rate)`),
/// and the packet arrives at the next hop `latency` later. With one link per hop this is the
/// single-path tandem; with equal rates its value is
/// `bytes_on_wire / rate + (hops - 1) * ser(max packet) + latencies`.
pub fn ideal_fct(path: &[Hop], packets: &[u64], release: &[Time]) -> Time {
    // (arrival at the current hop, sending order): ties keep the sending order
    let mut arrivals: Vec<(Time, usize)> = (0..packets.len()).map(|i| (release.get(i).copied().unwrap_or(0), i)).collect();
    for hop in path {
        arrivals.sort_unstable();
        let servers = hop.links.min(packets.len() as u64) as usize;
        let mut free: BinaryHeap<Reverse<Time>> = std::iter::repeat_n(Reverse(0), servers).collect();
        for (t, i) in arrivals.iter_mut() {
            let Reverse(idle) = free.pop().expect("one link at least");
            let done = idle.max(*t) + serialization(packets[*i], hop.rate);
            free.push(Reverse(done));
            *t = done + hop.latency;
        }
    }
    arrivals.iter().map(|a| a.0).max().unwrap_or(0)
}

/// [`ideal_fct`] of a message of `bytes` cut into `subflows` connections: its packets
/// ([`message_packets`]) released as [`releases`] says under a rate cap of `cap` (0: none).
///
/// Where one connection carries it, no cap paces it, its first hop is one link and every hop
/// runs at one rate, this runs only its last packets through the path: the packets before
/// them leave the first hop one service time `s` apart, and at every later hop each finds the
/// link its predecessor used free again as it arrives (that link frees exactly then), so none
/// ever waits and they stay `s` apart; only the short last packet changes places, gaining at
/// most one packet a hop. So with the last `tail` packets (more than the path could let it
/// overtake) the message takes `(n - tail) s` more than those packets alone, exactly (the
/// tests compare it with every packet run through paths of 1 to 6 hops).
pub fn message_fct(path: &[Hop], bytes: u64, mtu: u64, header: u64, subflows: u32, cap: u64) -> Time {
    let payload = mtu - header;
    let (n, tail) = (bytes.div_ceil(payload).max(1), tail(path));
    // one connection ([`share_sizes`]' count), no cap, a first hop of one link, one rate
    let one = u64::from(subflows).min(bytes) <= 1 && cap == 0;
    if let Some(first) = path.first().filter(|f| one && n > tail && f.links == 1 && path.iter().all(|h| h.rate == f.rate)) {
        let before = n - tail;
        let rest = ideal_fct(path, &message_packets(bytes - before * payload, mtu, header, 1), &[]);
        return before * serialization(mtu, first.rate) + rest;
    }
    ideal_fct(path, &message_packets(bytes, mtu, header, subflows), &releases(bytes, mtu, header, subflows, cap))
}

/// The last packets of a message [`message_fct`] runs through `path`: two a hop and two more.
fn tail(path: &[Hop]) -> u64 {
    2 * path.len() as u64 + 2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths of 1 to 6 hops at one rate, a host link at each end and 1 to 64 links between,
    /// with different latencies: the shortcut of [`message_fct`] against every packet run
    /// through, for messages of 1 to 40 packets past the tail with every kind of last packet.
    #[test]
    fn a_message_takes_its_last_packets_time_and_a_service_time_for_each_before() {
        let h = |links: u64, latency: Time| Hop { rate: G400, latency, links };
        let paths: Vec<Vec<Hop>> = vec![
            vec![h(1, 5)],
            vec![h(1, 1_000), h(1, 0)],
            vec![h(1, 700), h(2, 1_000_000), h(3, 0), h(1, 77)],
            vec![h(1, 0), h(64, 0), h(64, 0), h(1, 0)],
            vec![h(1, 1), h(8, 300_000), h(1, 20), h(5, 9), h(2, 1_000_000), h(1, 4)],
            vec![h(1, 0), h(2, 0), h(2, 0), h(2, 0), h(2, 0), h(1, 0)],
        ];
        let (mtu, header) = (4160, 64);
        for path in &paths {
            let tail = tail(path);
            for n in (tail + 1)..(tail + 40) {
                for last in [1, 2, 63, 64, 65, 1000, 2047, 2048, 2049, 4000, 4095, 4096] {
                    let bytes = (n - 1) * 4096 + last;
                    let every = ideal_fct(path, &message_packets(bytes, mtu, header, 1), &[]);
                    assert_eq!(message_fct(path, bytes, mtu, header, 1, 0), every, "{} hops, {n} packets, last {last} B", path.len());
                }
            }
        }
        // and where it does not apply: two rates, two subflows, a cap
        let mixed = [h(1, 0), Hop { rate: G100, latency: 0, links: 4 }, h(1, 0)];
        let bytes = 50 * 4096 + 10;
        assert_eq!(message_fct(&mixed, bytes, mtu, header, 1, 0), ideal_fct(&mixed, &message_packets(bytes, mtu, header, 1), &[]));
        let path = &paths[3];
        for (subflows, cap) in [(2, 0), (1, G100)] {
            let every = ideal_fct(path, &message_packets(bytes, mtu, header, subflows), &releases(bytes, mtu, header, subflows, cap));
            assert_eq!(message_fct(path, bytes, mtu, header, subflows, cap), every, "{subflows} subflows, cap {cap}");
        }
    }

    const G400: u64 = 400_000_000_000;
    const G100: u64 = 100_000_000_000;

    fn hop(rate: u64, latency: Time, links: u64) -> Hop {
        Hop { rate, latency, links }
    }

    #[test]
    fn closed_forms_agree_with_the_packets_listed() {
        for bytes in [0, 1, 63, 4095, 4096, 4097, 8192, 10_000, 123_457, 1 << 20] {
            for subflows in [1, 2, 3, 8] {
                let packets = message_packets(bytes, 4160, 64, subflows);
                let sum: Time = packets.iter().map(|&p| serialization(p, G400)).sum();
                assert_eq!(wire_time(bytes, 4160, 64, subflows, G400), sum, "{bytes} B, {subflows} subflows");
                assert_eq!(smallest_packet(bytes, 4160, 64, subflows), packets.iter().copied().min().unwrap(), "{bytes} B");
            }
        }
    }

    #[test]
    fn ideal_matches_closed_form_for_equal_rates() {
        let path = [hop(G400, 1_000_000, 1), hop(G400, 1_000_000, 8), hop(G400, 1_000_000, 8), hop(G400, 1_000_000, 1)];
        // 8 MiB in 4096 B payloads: 2048 packets of 4160 B, 83.2 ns each.
        let ideal = ideal_fct(&path, &message_packets(8 << 20, 4160, 64, 1), &[]);
        assert_eq!(ideal, 2048 * 83_200 + 3 * 83_200 + 4 * 1_000_000);
        // On one path a short last packet waits behind the full one before it at every hop...
        let one = path.map(|h| Hop { links: 1, ..h });
        let ideal = ideal_fct(&one, &message_packets(4096 + 100, 4160, 64, 1), &[]);
        assert_eq!(ideal, 83_200 + serialization(164, G400) + 3 * 83_200 + 4 * 1_000_000);
        // ...but with 8 spines it can take another one, overtake, and arrive first.
        let ideal = ideal_fct(&path, &message_packets(4096 + 100, 4160, 64, 1), &[]);
        assert_eq!(ideal, 4 * 83_200 + 4 * 1_000_000);
    }

    #[test]
    fn ideal_uses_the_bottleneck() {
        let path = [hop(G100, 0, 1), hop(G400, 0, 1)];
        // 10 packets at 332.8 ns on the slow first hop, then the last one at 83.2 ns.
        assert_eq!(ideal_fct(&path, &message_packets(10 * 4096, 4160, 64, 1), &[]), 10 * 332_800 + 83_200);
    }

    #[test]
    fn slow_uplinks_in_parallel_are_as_fast_as_their_sum() {
        // 400G host links, four 100G uplinks: together as fast as the host link, so only the
        // last packet's extra store-and-forward time on a slow link is added.
        let path = [hop(G400, 0, 1), hop(G100, 0, 4), hop(G100, 0, 4), hop(G400, 0, 1)];
        let n = 256;
        let ideal = ideal_fct(&path, &message_packets(n * 4096, 4160, 64, 1), &[]);
        assert_eq!(ideal, n * 83_200 + 2 * 332_800 + 83_200);
        // one 100G path would be four times slower
        let one = [hop(G400, 0, 1), hop(G100, 0, 1), hop(G100, 0, 1), hop(G400, 0, 1)];
        assert!(ideal_fct(&one, &message_packets(n * 4096, 4160, 64, 1), &[]) > 3 * ideal);
        // two 100G uplinks: the pool is the bottleneck (half the host rate)
        let two = [hop(G400, 0, 1), hop(G100, 0, 2), hop(G100, 0, 2), hop(G400, 0, 1)];
        assert!(ideal_fct(&two, &message_packets(n * 4096, 4160, 64, 1), &[]) >= n * 166_400);
    }

    #[test]
    fn a_rate_cap_releases_each_connections_packets_apart() {
        // 100G cap on a 400G host: 4160 B every 332.8 ns; the last, short packet follows
        assert_eq!(releases(2 * 4096 + 10, 4160, 64, 1, G100), vec![0, 332_800, 665_600]);
        assert_eq!(releases(2 * 4096 + 10, 4160, 64, 1, 0), vec![0, 0, 0]);
        // two subflows, each paced on its own: rounds alternate between them
        assert_eq!(releases(8194, 4160, 64, 2, G100), vec![0, 0, 332_800, 332_800]);
        // alone on a 400G path the cap is the bottleneck: n packets at the cap, then one hop
        let path = [hop(G400, 1_000, 1), hop(G400, 1_000, 1)];
        let n = 64;
        let packets = message_packets(n * 4096, 4160, 64, 1);
        let ideal = ideal_fct(&path, &packets, &releases(n * 4096, 4160, 64, 1, G100));
        assert_eq!(ideal, (n - 1) * 332_800 + 2 * 83_200 + 2 * 1_000);
    }

    #[test]
    fn subflows_are_cut_and_sent_round_robin() {
        assert_eq!(message_packets(2 * 4096 + 10, 4160, 64, 1), vec![4160, 4160, 74]);
        // 3 subflows of 2732, 2731, 2731 B: one packet each
        assert_eq!(message_packets(8194, 4160, 64, 3), vec![2796, 2795, 2795]);
        // 2 subflows of 4097 B: two packets each, sent alternately
        assert_eq!(message_packets(8194, 4160, 64, 2), vec![4160, 4160, 65, 65]);
        // a single-packet message in 4 subflows pipelines its quarter packets
        let path = [hop(G400, 0, 1), hop(G400, 0, 1)];
        let whole = ideal_fct(&path, &message_packets(4096, 4160, 64, 1), &[]);
        let split = ideal_fct(&path, &message_packets(4096, 4160, 64, 4), &[]);
        assert_eq!(whole, 2 * 83_200);
        assert_eq!(split, 4 * serialization(1088, G400) + serialization(1088, G400));
    }
}
