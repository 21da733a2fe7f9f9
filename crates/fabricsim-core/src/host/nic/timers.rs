//! A connection's timers at its hosts: the sender's congestion-control timer (DCQCN's rate
//! increase) and retransmission timer, and the receiver's CNP window.

use super::{Host, Nics};
use crate::engine::Event;
use crate::host::cc::CongestionControl;
use crate::host::table::End;
use crate::lb::LoadBalancer;
use crate::packet::{Kind, Packet};
use crate::switch::links::Sink;
use crate::time::Time;

impl Nics {
    /// `CcTimer`: the connection's congestion-control timer fired (DCQCN's rate increase).
    pub(super) fn on_cc_timer(&mut self, h: &mut Host, out: &mut Sink, now: Time, c: u32) {
        let Some(conn) = self.conns.sender(c) else { return };
        if let Some(at) = conn.tx.window.on_timer(now) {
            out.schedule(at, Event::CcTimer(c));
        }
        conn.tx.repace(self.cfg.rate_cap);
        debug_assert_eq!(conn.spec.src, h.node);
        self.kick(h, out, now);
    }

    /// `CnpTimer`: a receiver's CNP window ended; one CNP goes out for its marks, if any.
    pub(super) fn on_cnp_timer(&mut self, h: &mut Host, out: &mut Sink, now: Time, c: u32) {
        let spec = self.messages[self.conns.message_of(c) as usize].spec;
        let window_end = match self.conns.receiver(c, &spec) {
            Some(half) => half.rx.cnp.on_timer(now).inspect(|_| half.stats.cnps += 1),
            None => {
                let Some(cnp) = self.conns.notifier_mut(c) else { return }; // no CNPs without DCQCN
                let end = cnp.on_timer(now);
                if end.is_some() {
                    self.conns.count_late(c, End::Rx, |s| s.cnps += 1);
                }
                end
            }
        };
        let Some(window_end) = window_end else { return };
        out.schedule(window_end, Event::CnpTimer(c));
        debug_assert_eq!(spec.dst, h.node);
        let cnp = Packet::control(Kind::Cnp, c, spec.dst, spec.src, self.cfg.header as u16);
        self.send_control(h, out, now, cnp);
    }

    /// `Rto`: the connection's retransmission timer fired.
    pub(super) fn on_rto(&mut self, h: &mut Host, out: &mut Sink, now: Time, c: u32) {
        let Some(conn) = self.conns.sender(c) else {
            // done: nothing is in flight, and the NIC looks for work as it did with the state
            self.kick(h, out, now);
            return;
        };
        conn.tx.rto_armed = false;
        self.scratch.clear();
        conn.expired(now, conn.tx.rto.rto, &mut self.scratch);
        let mut any = false;
        for r in &self.scratch {
            let lost = self.cfg.kind.on_timeout(conn, r);
            if lost {
                any = true;
                conn.stats.timeouts += 1;
                conn.tx.window.on_loss(now, conn.tx.in_flight);
                conn.tx.lb.on_timeout(now, r.ev);
            }
        }
        if any && conn.tx.rto.is_adaptive() {
            // RFC 6298 sec. 5.4-5.5 with loss recovery as RFC 6675 (sec. 5.1) and Linux do it,
            // for the paths the evidence covers: an expired estimated timer means the path of
            // the expired packets failed, so what is still in flight on those paths (their EVs)
            // counts as lost, resent as the window allows, not held back behind packets that will
            // never be acknowledged. On one path (ECMP) that is everything in flight; a sprayed
            // connection's packets on other paths are no evidence of loss and wait for their own
            // timer. The timer backs off once per episode: not again for a packet sent before
            // the last back-off, whose loss that back-off answered (else every path through a
            // dead switch would double it). The load balancer hears only of the packets that
            // timed out themselves.
            let latest = self.scratch.iter().map(|r| r.at).max().unwrap_or(0);
            self.evs.clear();
            self.evs.extend(self.scratch.iter().map(|r| r.ev));
            self.evs.sort_unstable();
            self.evs.dedup();
            self.scratch.clear();
            conn.in_flight_on(&self.evs, &mut self.scratch);
            for r in &self.scratch {
                if self.cfg.kind.on_timeout(conn, r) {
                    conn.stats.timeouts += 1;
                }
            }
            conn.tx.rto.on_timeout(now, latest);
        }
        let (spec, shared) = (conn.spec, conn.tx.shared);
        if let Some(front) = conn.tx.send_log.front() {
            conn.tx.rto_armed = true;
            // an RTO that shrank since the front was sent fires now, not in the past
            out.schedule((front.at + conn.tx.rto.rto).max(now), Event::Rto(c));
        }
        if shared {
            self.conns.share_window(&spec);
        }
        self.kick(h, out, now);
    }
}
