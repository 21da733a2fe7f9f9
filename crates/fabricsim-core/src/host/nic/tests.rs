//! The NIC alone: packets fed to a host's receiving and sending halves, and what it puts on
//! its link, read from its port and wire (no run; the pieces are built and not started).

use super::Input;
use crate::engine::{node_unit, Event};
use crate::packet::{AckExt, DataExt, Kind, Packet};
use crate::sim::piece::Piece;
use crate::switch::links::Sink;
use crate::{Scenario, Simulation};

/// One message of `size` (4 096 B payloads: "12KiB" is 3 packets) from host 0 to host 9 of a
/// 16-host leaf-spine, with `transport` settings (JSON fields).
fn piece_of(size: &str, transport: &str) -> Piece {
    let text = format!(
        r#"{{"topology": {{"hosts": 16, "radix": 8}}, "transport": {{ {transport} }}, "lb": {{"kind": "ops"}},
            "workload": {{"kind": "flows", "flows": [{{"src": 0, "dst": 9, "size": "{size}"}}]}}}}"#
    );
    *Simulation::new(&Scenario::from_json(&text).expect("valid")).expect("builds").into_pieces().remove(0)
}

fn piece(transport: &str) -> Piece {
    piece_of("12KiB", transport)
}

/// Data packet `psn` of the message's one connection (0), on entropy `ev`.
fn data(psn: u32, ev: u32, ecn: bool, ack_request: bool) -> Packet {
    Packet { ecn, ..Packet::data(0, 0, 0, psn, ev, (0, 9), 4160, DataExt { ack_request }) }
}

/// What `host`'s NIC has put on its link, first to last: on the wire, then queued at its port.
fn sent(p: &Piece, host: u32) -> Vec<Packet> {
    let port = p.fabric.topology().tables.out_of_host(host);
    let mut out: Vec<Packet> = p.links.wire(port).packets().map(|&(_, k)| k).collect();
    out.extend(p.links.port(port).packets().copied());
    out
}

/// Feeds `input` to `host` at `now` through its one entry point.
fn feed_in(p: &mut Piece, now: u64, host: u32, input: Input) {
    let me = p.queue.origin(node_unit(host));
    let h = p.hosts.iter_mut().find(|h| h.node == host).expect("the piece's host");
    p.nics.handle(h, &mut Sink::new(&mut p.queue, &mut p.links, me), now, input);
}

/// Feeds `pkt` to `host` at `now`.
fn feed(p: &mut Piece, now: u64, host: u32, pkt: Packet) {
    feed_in(p, now, host, Input::Packet(pkt));
}

#[test]
fn a_data_packet_is_acked_at_once_echoing_its_psn_entropy_and_mark() {
    let mut p = piece("");
    feed(&mut p, 1_000, 9, data(1, 77, true, false));
    let out = sent(&p, 9);
    assert_eq!(out.len(), 1, "{out:?}");
    let ack = out[0];
    assert_eq!((ack.kind, ack.src, ack.dst, ack.conn, ack.psn, ack.ev, ack.ecn), (Kind::Ack, 9, 0, 0, 1, 77, true));
    let AckExt { cum, sack } = ack.ext();
    assert_eq!(cum, 0, "PSN 0 is still missing");
    assert_ne!(sack, 0, "PSN 1 is reported selectively");
    assert_eq!(ack.size, 64, "an ACK is a header");
}

#[test]
fn a_trimmed_header_is_nacked_and_nothing_is_acked() {
    let mut p = piece("");
    feed(&mut p, 1_000, 9, Packet { trimmed: true, size: 64, ..data(0, 5, false, false) });
    let out = sent(&p, 9);
    assert_eq!(out.iter().map(|k| (k.kind, k.psn)).collect::<Vec<_>>(), [(Kind::Nack, 0)]);
}

#[test]
fn coalesced_acks_wait_for_their_count_unless_the_sender_asks() {
    let mut p = piece(r#""ack_every": 4, "ack_request": true"#);
    feed(&mut p, 1_000, 9, data(0, 1, false, false));
    assert!(sent(&p, 9).is_empty(), "the first of four waits");
    feed(&mut p, 2_000, 9, data(1, 2, false, true));
    let out = sent(&p, 9);
    assert_eq!(out.len(), 1, "an ACK request is answered at once");
    assert_eq!((out[0].psn, out[0].ext::<AckExt>().cum), (1, 2));
}

#[test]
fn the_sender_sends_on_its_entropy_and_counts_the_message_acknowledged_at_its_ack() {
    let mut p = piece_of("4KiB", "");
    feed_in(&mut p, 0, 0, Input::Event(Event::ConnStart(0)));
    let out = sent(&p, 0);
    assert_eq!(out.len(), 1, "{out:?}");
    let d = out[0];
    assert_eq!((d.kind, d.src, d.dst, d.conn, d.psn, d.size), (Kind::Data, 0, 9, 0, 0, 4160));
    assert!(!d.asks_ack(), "no ACK request unless transport.ack_request");
    assert_eq!(p.nics.states()[0].acked, 0);
    // host 9's ACK of the message's one packet
    feed(&mut p, 10_000_000, 0, d.ack(9, 64, (1, 0)));
    assert_eq!(p.nics.states()[0].acked, 1, "its one connection has every packet acknowledged");
    let mut table = p.nics.take_connections();
    assert!(table.sender(0).is_none(), "and its sending half is retired");
}
