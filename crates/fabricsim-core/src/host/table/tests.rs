//! A connection table's halves and stored rows.

use super::*;
use crate::scenario::Scenario;
use crate::sim::Simulation;

/// The table of one message of `spec` on a small fabric (in one piece), and the payload
/// of a full packet.
fn table(spec: impl Fn(u64) -> MessageSpec) -> (ConnTable, u64, MessageSpec) {
    let json = r#"{"topology": {"hosts": 16, "radix": 8}, "workload": {"kind": "permutation", "size": "64KiB"}}"#;
    let model = Scenario::from_json(json).expect("valid").resolve().expect("resolves");
    let payload = model.transport.mtu - model.transport.header;
    let spec = spec(payload);
    let factory = Simulation::factory(&model);
    let layout = ConnCatalog::build(&factory, &[spec], 16, None);
    (ConnTable::new(factory, false, layout.catalog, 0, &layout.bytes[0]), payload, spec)
}

#[test]
fn a_stored_row_keeps_counts_beyond_two_bytes_exactly() {
    let (mut t, _, _) = table(|payload| MessageSpec::new(0, 1, 10 * payload + 1, 0, 0));
    let c = 0;
    let pending = t.row(c);
    assert_eq!((pending.n_pkts, pending.delivered_bytes, pending.first_send()), (11, 0, None));
    let big = u64::from(u16::MAX) + 5;
    t.count_late(c, End::Rx, |s| s.cnps += 1);
    t.count_late(c, End::Tx, |s| s.data_packets = big);
    t.count_late(c, End::Rx, |s| s.cnps += 1); // once wide, it stays exact
    let r = t.row(c);
    assert_eq!((r.stats.data_packets, r.stats.cnps, r.stats.retransmits), (big, 2, 0));
    assert_eq!(Stored::narrow(&r.stats), None);
    let small = ConnStats { retransmits: 7, ..ConnStats::default() };
    assert_eq!(Stored::narrow(&small).map(|n| Stored::widen(&n).retransmits), Some(7));
    let edge = ConnStats { timeouts: u64::from(u16::MAX), ..ConnStats::default() };
    assert_eq!(Stored::narrow(&edge).map(|n| Stored::widen(&n).timeouts), Some(u64::from(u16::MAX)));
    assert_eq!(STORED_ROW_BYTES, 48, "a stored row is what a run keeps per connection");
}

#[test]
fn each_half_lives_only_while_it_works_and_leaves_its_counts_in_the_row() {
    let (mut t, payload, spec) = table(|payload| MessageSpec::new(0, 1, 3 * payload, 0, 0));
    let c = 0;
    t.start(c..c + 1, &spec);
    assert_eq!((t.senders.len(), t.receivers.len()), (1, 0), "the receiver exists from its first packet on");
    t.sender_live(c).stats.data_packets = 3;
    for psn in 0..3 {
        let half = t.receiver(c, &spec).expect("not complete yet");
        let completed = crate::host::TransportKind::Ooo.on_data(&mut half.rx, 10 + psn as Time, psn, payload, false, false).completed;
        if psn == 1 {
            half.stats.cnps = 2;
        }
        assert_eq!(completed, psn == 2);
    }
    assert_eq!(t.row(c).stats.cnps, 2, "a live half's counts show in the row");
    t.finish_receiver(c);
    assert!(t.receiver(c, &spec).is_none(), "a complete receiver is not rebuilt by a late packet");
    assert_eq!(t.receivers.len(), 0);
    let r = t.row(c);
    assert_eq!((r.delivered_bytes, r.end(), r.stats.cnps, r.stats.data_packets), (3 * payload, Some(12), 2, 3));
    t.finish_sender(c);
    assert_eq!(t.senders.len(), 0);
    let r = t.row(c);
    assert_eq!((r.stats.cnps, r.stats.data_packets, r.n_pkts), (2, 3, 3), "both halves' counts, once each");
    assert_eq!(t.peak_live(), 1);
}
