//! A switch under priority flow control (`switch.overflow = "pfc"`; [`crate::switch::pfc`]):
//! data is queued whatever the buffer, each ingress's count pauses and resumes its sender,
//! and a PFC frame that reaches the switch pauses or resumes one of its ports.

use super::Switch;
use crate::packet::Packet;
use crate::switch::links::Sink;
use crate::switch::pfc::Hold;
use crate::switch::{red_mark, EcnMark, SwitchModel};
use crate::time::Time;

impl Switch {
    /// Queues data packet `pkt`, which came in on the wire at `w`, at its port at `at` (or puts
    /// it straight on the wire if the port is free and its class not paused); past its
    /// ingress's `xoff` the switch pauses the ingress's sender, past `xoff + headroom` it drops
    /// the packet.
    #[inline(never)]
    pub(super) fn enqueue_lossless(&mut self, m: &SwitchModel, out: &mut Sink, now: Time, at: u32, mut pkt: Packet, w: u32) {
        let paused = out.links.paused(at) >> pkt.class & 1 != 0;
        if out.is_free(at, now) && !paused {
            out.transmit(now, at, pkt);
            return;
        }
        let dynamic = self.dynamic_xoff(m);
        let pfc = out.links.pfc.as_mut().expect("PFC's state where it runs");
        let hold = pfc.hold(at, w, pkt.class, pkt.size.into(), m.buffer, dynamic);
        let p = &mut out.links.ports[at as usize];
        if hold == Hold::Drop {
            p.lose(&pkt);
            return;
        }
        if m.shared.is_some() {
            self.pooled += u64::from(pkt.size);
        }
        if let Some((kmin, kmax, EcnMark::Enqueue)) = m.ecn {
            if red_mark(p.classes[pkt.class as usize].bytes, kmin, kmax, &mut self.rng) {
                p.stats.ecn_marks += 1;
                pkt.ecn = true;
            }
        }
        p.push_data(now, pkt);
        if let Hold::Pause(w) = hold {
            self.send_pfc(out, now, w, pkt.class, true);
        }
        if out.is_free(at, now) {
            self.next::<true>(m, out, now, at);
        } else {
            out.wake_when_free(at);
        }
    }

    /// Data packet `pkt` left the port at `at`: its ingress's count falls, and at `xon` the
    /// switch resumes the ingress's sender.
    #[inline(never)]
    pub(super) fn released(&mut self, m: &SwitchModel, out: &mut Sink, now: Time, at: u32, pkt: &Packet) {
        let dynamic = self.dynamic_xoff(m);
        let pfc = out.links.pfc.as_mut().expect("PFC's state where it runs");
        if let Some(w) = pfc.release(at, pkt.class, pkt.size.into(), m.buffer, dynamic) {
            self.send_pfc(out, now, w, pkt.class, false);
        }
    }

    /// A PFC frame reached this switch: it pauses or resumes one of its ports, which starts
    /// its next packet if it may send again and is free.
    #[cold]
    pub(super) fn on_frame(&mut self, m: &SwitchModel, out: &mut Sink, now: Time, frame: &Packet) {
        let at = out.links.cut().port(frame.conn) as u32;
        let pfc = out.links.pfc.as_mut().expect("PFC frames only where PFC runs");
        if pfc.on_frame(at, frame, now) && out.is_free(at, now) {
            self.next::<true>(m, out, now, at);
        }
    }

    /// Sends the sender of the wire at `w` a PAUSE (`on`) or RESUME for `class`, on the port
    /// back to it.
    fn send_pfc(&mut self, out: &mut Sink, now: Time, w: u32, class: u8, on: bool) {
        let port = out.links.wire_at(w).id();
        let pfc = out.links.pfc.as_mut().expect("PFC's state where it runs");
        let back = pfc.back(w);
        let frame = pfc.frame(back, port, class, on, (self.node, out.links.ports[back as usize].to));
        out.send_frame(now, back, frame);
    }

    /// With a shared buffer and `pfc.xoff = "auto"`: `alpha` times the pool's free space.
    fn dynamic_xoff(&self, m: &SwitchModel) -> Option<u64> {
        let (pool, alpha) = m.shared?;
        Some((alpha * pool.saturating_sub(self.pooled) as f64) as u64)
    }
}
