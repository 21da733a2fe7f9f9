use super::*;
use crate::engine::rng::{Rng, Stream};
use crate::host::transport::{ooo::Ooo, Transport};
use crate::host::CcKind;
use crate::lb::LbConfig;

/// Both halves of a connection, the sender's reached through `Deref` (the tests play the
/// fabric between them).
struct Flow {
    s: SendHalf,
    rx: Receiver,
}
impl std::ops::Deref for Flow {
    type Target = SendHalf;
    fn deref(&self) -> &SendHalf {
        &self.s
    }
}
impl std::ops::DerefMut for Flow {
    fn deref_mut(&mut self) -> &mut SendHalf {
        &mut self.s
    }
}

fn flow(bytes: u64) -> Flow {
    flow_in(bytes, 3 * 1064)
}

/// A flow of `bytes` in 1064-byte packets under a fixed window of `window` bytes.
fn flow_in(bytes: u64, window: u64) -> Flow {
    let ctx = crate::lb::LbContext {
        bdp_packets: 3,
        base_rtt: 1,
        mtu: 1064,
        mp_ev: crate::packet::mp_ev::MpEvLayout::new(&[2]),
        kmin_packets: 1,
        buffer_packets: 3,
        packet_time: 1,
    };
    let lb = LbConfig::default().build(&ctx, &mut Rng::stream(1, Stream::Host, 0));
    let cc = crate::host::cc::CcContext { init: window, max: window, mtu: 1064, mss: 1000, base_rtt: 1, rate: 1, trimming: true };
    let s = SendHalf::new(MessageSpec::new(0, 1, bytes, 0, 0), 1064, 64, Cwnd::new(CcKind::None, &cc), lb);
    let rx = Receiver::new(s.n_pkts, AckPolicy { every: 1, ..Default::default() });
    Flow { s, rx }
}

#[test]
fn packetization_and_window() {
    let mut f = flow(4500); // 1000 + 1000 + 1000 + 1000 + 500
    assert_eq!(f.n_pkts, 5);
    assert_eq!(f.wire_size(4), 564);
    let sent: Vec<u32> = std::iter::from_fn(|| f.next_psn().inspect(|&p| f.on_sent(p, 0, 0))).collect();
    assert_eq!(sent, vec![0, 1, 2], "window of 3 packets");
    assert!(f.declare_lost(1));
    assert!(!f.declare_lost(1), "already lost");
    assert_eq!(f.next_psn(), Some(1), "retransmission first");
}

#[test]
fn a_packet_asks_for_an_ack_when_it_fills_the_window_is_the_last_or_is_resent() {
    // transport.ack_request: UE's AR flag where the reference's UecSrc sets it
    let mut f = flow(4500); // 5 packets, a window of 3
    let mut asks = Vec::new();
    while let Some(p) = f.next_psn() {
        f.on_sent(p, 0, 0);
        asks.push(f.asks_ack(p));
    }
    // the reference's test: in flight (this packet included) plus its size reaches the window,
    // so the second asks (one more packet would leave the window full) and so does the third
    assert_eq!(asks, vec![false, true, true], "from the second on, no second packet of its size fits after it");
    Ooo::on_data(&mut f.rx, 1, 0, 1000, false, false);
    assert_eq!(ack(&mut f, 0), 1064);
    let p = f.next_psn().unwrap();
    f.on_sent(p, 0, 0);
    assert!(f.asks_ack(p), "psn 3 fills the window again");
    // a window of 3.5 packets: after the third nothing of its size fits, though the window is not full
    let mut h = flow_in(4500, 3 * 1064 + 532);
    let mut asks = Vec::new();
    while let Some(p) = h.next_psn() {
        h.on_sent(p, 0, 0);
        asks.push(h.asks_ack(p));
    }
    assert_eq!(asks, vec![false, false, true], "3 x 1064 in flight leave 532 B of window: the third asks");
    assert!(f.declare_lost(1));
    let p = f.next_psn().unwrap();
    f.on_sent(p, 0, 0);
    assert!(p == 1 && f.asks_ack(1), "a retransmission asks");
    let mut g = flow(1500); // 2 packets: the second is the last to send
    let p = g.next_psn().unwrap();
    g.on_sent(p, 0, 0);
    assert!(!g.asks_ack(p));
    let p = g.next_psn().unwrap();
    g.on_sent(p, 0, 0);
    assert!(g.asks_ack(p), "nothing left to send");
    let mut r = Receiver::new(4, AckPolicy { every: 4, ..Default::default() });
    assert!(!Ooo::on_data(&mut r, 0, 0, 10, false, false).send_ack);
    assert!(Ooo::on_data(&mut r, 0, 1, 10, false, true).send_ack, "an ACK request is ACKed at once");
}

/// The ACK `f`'s receiver sends for an arrival of `psn`, applied to its sender.
fn ack(f: &mut Flow, psn: u32) -> u64 {
    let (cum, sack) = f.rx.ack_fields(psn, false);
    f.on_ack(psn, cum, sack, false, &mut Vec::new())
}

#[test]
fn acks_carry_a_cumulative_psn_and_a_selective_bitmap() {
    let mut f = flow(4500);
    while let Some(p) = f.next_psn() {
        f.on_sent(p, 0, 0);
    }
    Ooo::on_data(&mut f.rx, 1, 2, 1000, false, false);
    let (cum, sack) = f.rx.ack_fields(2, false);
    assert_eq!((cum, sack), (0, 0b10), "0 missing: the bitmap starts at 1 and has 2");
    Ooo::on_data(&mut f.rx, 1, 0, 1000, false, false);
    assert_eq!(ack(&mut f, 0), 2 * 1064);
    assert_eq!(f.tx.in_flight, 1064);
    assert_eq!(f.on_ack(2, cum, sack, false, &mut Vec::new()), 0, "a reordered older ACK adds nothing");
}

#[test]
fn a_lost_ack_is_covered_by_the_next_one() {
    // the window of 3 goes out; each arrival triggers an ACK, the first two are lost: the
    // third reports all three, and nothing is declared lost or resent
    let mut f = flow(4500);
    while let Some(p) = f.next_psn() {
        f.on_sent(p, 0, 0);
    }
    for psn in 0..3 {
        Ooo::on_data(&mut f.rx, 1, psn, 1000, false, false);
    }
    assert_eq!(ack(&mut f, 2), 3 * 1064, "the one ACK that arrived covers the lost ones");
    assert_eq!((f.tx.in_flight, f.tx.acked, f.stats.retransmits), (0, 3, 0));
    assert_eq!(f.next_psn(), Some(3), "the window moves on to new data");
}

#[test]
fn the_bitmap_is_bounded_what_lies_beyond_it_waits_for_a_later_ack() {
    // 200 packets out, psn 0 lost: the receiver has 1..200, but an ACK reports only 64
    // PSNs ending at its trigger; the packets below its window stay in flight
    let mut f = flow(200 * 1000);
    f.tx.window = Cwnd::new(
        CcKind::None,
        &crate::host::cc::CcContext { init: 1 << 30, max: 1 << 30, mtu: 1064, mss: 1000, base_rtt: 1, rate: 1, trimming: true },
    );
    while let Some(p) = f.next_psn() {
        f.on_sent(p, 0, 0);
    }
    for psn in 1..200 {
        Ooo::on_data(&mut f.rx, 1, psn, 1000, false, false);
    }
    assert_eq!(ack(&mut f, 199), 64 * 1064, "the last ACK reports psn 136..=199");
    assert_eq!(f.tx.acked, 64);
    Ooo::on_data(&mut f.rx, 2, 0, 1000, false, false);
    assert_eq!(ack(&mut f, 0), 136 * 1064, "the hole filled: the cumulative PSN covers the rest");
    assert!(f.sender_done());
}

#[test]
fn with_every_ev_reported_the_ack_carries_the_marks_of_the_32_psns_up_to_its_trigger() {
    let mut f = flow(4500);
    f.rx = Receiver::new(5, AckPolicy { every: 4, all_evs: true, ..Default::default() });
    f.tx.keep_evs(5);
    let evs = [10, 11, 12];
    for (p, ev) in (0..3).zip(evs) {
        let psn = f.next_psn().unwrap();
        assert_eq!(psn, p);
        f.on_sent(psn, ev, 0);
    }
    for (psn, ecn) in [(1, true), (0, false), (2, true)] {
        Ooo::on_data(&mut f.rx, 1, psn, 1000, ecn, false);
    }
    let (cum, sack) = f.rx.ack_fields(2, false);
    let mut out = Vec::new();
    assert_eq!(f.on_ack(2, cum, sack, true, &mut out), 3 * 1064);
    assert_eq!(out, vec![(0, false), (1, true), (2, true)], "lowest first, the trigger last");
    assert_eq!(f.tx.sent_ev[1], 11, "the sender knows the EV each packet went on");
}

#[test]
fn the_send_log_holds_about_a_window_not_every_packet_sent() {
    // 1 000 packets through a window of 3, each ACKed in turn and no timer firing: the log
    // drops its acknowledged front before it grows, so it stays at a handful of records
    let mut f = flow(1_000_000);
    let mut most = 0;
    while !f.sender_done() {
        while let Some(p) = f.next_psn() {
            f.on_sent(p, 0, 0);
            most = most.max(f.tx.send_log.len());
        }
        let oldest = f.tx.send_log.iter().map(|r| r.psn).find(|&p| f.tx.state[p as usize] == PsnState::InFlight).unwrap();
        Ooo::on_data(&mut f.rx, 1, oldest, 1000, false, false);
        ack(&mut f, oldest);
    }
    assert_eq!(f.n_pkts, 1000);
    assert!(most <= 8, "the log held {most} records for a window of 3");
    // and what the timer reads is as before: the live records, oldest first
    let mut g = flow(10_000);
    for _ in 0..3 {
        let p = g.next_psn().unwrap();
        g.on_sent(p, 0, 0);
    }
    Ooo::on_data(&mut g.rx, 1, 1, 1000, false, false);
    ack(&mut g, 1);
    let (mut live, mut expired) = (Vec::new(), Vec::new());
    g.in_flight_on(&[0], &mut live);
    assert_eq!(live.iter().map(|r| r.psn).collect::<Vec<_>>(), vec![0, 2]);
    g.expired(10, 5, &mut expired);
    assert_eq!(expired.iter().map(|r| r.psn).collect::<Vec<_>>(), vec![0, 2]);
}
