//! Priority flow control (`switch.overflow = "pfc"`): lossless Ethernet, IEEE 802.1Qbb.
//!
//! A switch counts, for each port a packet came in on (its ingress) and each data class
//! (priority), the bytes it holds that came that way. Past `xoff` it sends the ingress's
//! sender a PAUSE for the class; at or below `xon` a RESUME. PAUSE and RESUME are MAC control
//! frames of 64 bytes that take the wire: a switch sends one on the port back to the sender
//! right after the packet that port is serializing, ahead of anything queued, and it reaches
//! the sender after the link's latency. A paused port (a switch's, or a host NIC's) finishes
//! the packet it is sending and sends no data of that class until RESUME; control packets
//! (ACKs, NACKs, CNPs) still go. The headroom above `xoff` absorbs what is on the way in
//! the meantime: the link's data over the delays both ways, the frame's wait and its own time,
//! plus the packet the sender is sending; a packet past `xoff + headroom` is dropped and
//! counted (a lossless fabric with enough headroom shows none). So a full queue pushes back hop
//! by hop to the senders instead of dropping: congestion spreads upstream, a flow that shares
//! a paused port with a congested one waits behind it (head-of-line blocking), and a cycle of
//! ports each waiting on the next never drains (a PFC deadlock: `deadlock.rs`).
//!
//! What this leaves out, said in docs/model.md ("Lossless Ethernet"): a PAUSE holds until its
//! RESUME (a switch refreshes its pause before the quanta run out while it stays past `xon`,
//! so the sender never resumes on expiry); PFC frames are never lost; a host's receive side
//! never pauses (it takes data at line rate); the control class is not paused.

pub mod config;
pub mod deadlock;

use std::collections::VecDeque;

use crate::packet::{Kind, Packet};
use crate::switch::port::EgressPort;
use crate::time::Time;

pub use config::{PfcConfig, PfcModel, FRAME};

/// A piece's flow-control state: its nodes' ingress counts (per wire into them) and its ports'
/// pauses (per port it sends on).
#[derive(Debug, Clone)]
pub struct Pfc {
    classes: usize,
    model: PfcModel,
    /// Per wire: the local slot of the port back to its sender (where its PAUSE goes), and
    /// its headroom.
    back: Vec<u32>,
    headroom: Vec<u64>,
    /// Per wire and class: the bytes its receiving switch holds that came in on it, and
    /// whether a PAUSE for it stands.
    held: Vec<u64>,
    standing: Vec<bool>,
    /// Per port and class: the wire each data packet queued there came in on, in queue order.
    from: Vec<VecDeque<u32>>,
    /// Per port: the classes its far end paused (a bit each), since when one has been, the
    /// time it has had one paused, and the PFC frames it sent.
    paused: Vec<u8>,
    since: Vec<Time>,
    paused_ps: Vec<Time>,
    frames: Vec<u64>,
}

/// What a switch does with a data packet it queues under PFC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// Queue it.
    Queue,
    /// Queue it, and pause the sender of the wire at this slot: its ingress just passed `xoff`.
    Pause(u32),
    /// Drop it: its ingress is past `xoff + headroom`.
    Drop,
}

impl Pfc {
    /// The state of a piece's `ports` and of its wires, given in order as `links`: each one's
    /// port back to its sender (a local slot; `u32::MAX` for a wire into a host, which never
    /// pauses) and the wire's rate and delay.
    pub fn new(model: PfcModel, classes: usize, ports: &[EgressPort], links: Vec<(u32, (u64, u64))>) -> Pfc {
        let wires = links.len();
        let headroom = links
            .iter()
            .map(|&(b, wire)| if b == u32::MAX { 0 } else { model.headroom_of(wire, (ports[b as usize].rate, ports[b as usize].delay)) })
            .collect();
        let back = links.into_iter().map(|l| l.0).collect();
        Pfc {
            classes,
            model,
            back,
            headroom,
            held: vec![0; wires * classes],
            standing: vec![false; wires * classes],
            from: vec![VecDeque::new(); ports.len() * classes],
            paused: vec![0; ports.len()],
            since: vec![0; ports.len()],
            paused_ps: vec![0; ports.len()],
            frames: vec![0; ports.len()],
        }
    }

    /// The classes the far end of the port at `at` has paused.
    #[inline]
    pub fn mask(&self, at: u32) -> u8 {
        self.paused[at as usize]
    }

    /// The switch queues a data packet of `size` bytes and `class` that came in on wire `w`
    /// at its port at `at`, with `xoff` the threshold (`None`: the static one, buffer less
    /// headroom or as given).
    pub fn hold(&mut self, at: u32, w: u32, class: u8, size: u64, buffer: u64, dynamic: Option<u64>) -> Hold {
        let i = w as usize * self.classes + class as usize;
        let xoff = self.xoff(w, buffer, dynamic);
        if self.held[i] + size > xoff + self.headroom[w as usize] {
            return Hold::Drop;
        }
        self.held[i] += size;
        self.from[at as usize * self.classes + class as usize].push_back(w);
        if self.held[i] > xoff && !self.standing[i] {
            self.standing[i] = true;
            return Hold::Pause(w);
        }
        Hold::Queue
    }

    /// A data packet of `size` bytes and `class` left the switch's port at `at`: returns the
    /// wire whose sender to resume, if its ingress fell to `xon`.
    pub fn release(&mut self, at: u32, class: u8, size: u64, buffer: u64, dynamic: Option<u64>) -> Option<u32> {
        let w = self.from[at as usize * self.classes + class as usize].pop_front().expect("a queued packet's ingress");
        let i = w as usize * self.classes + class as usize;
        self.held[i] -= size;
        let xon = self.model.xon_under(self.xoff(w, buffer, dynamic));
        (self.standing[i] && self.held[i] <= xon).then(|| {
            self.standing[i] = false;
            w
        })
    }

    /// The local slot of the port back to the sender of the wire at `w`.
    pub fn back(&self, w: u32) -> u32 {
        self.back[w as usize]
    }

    fn xoff(&self, w: u32, buffer: u64, dynamic: Option<u64>) -> u64 {
        self.model.xoff.or(dynamic).unwrap_or_else(|| buffer.saturating_sub(self.headroom[w as usize]))
    }

    /// The PAUSE (`on`) or RESUME for `class` that the port at `back` sends to its far end,
    /// for that end's port `port` (a global id), from node `from` to node `to`; counted.
    pub fn frame(&mut self, back: u32, port: u32, class: u8, on: bool, (from, to): (u32, u32)) -> Packet {
        self.frames[back as usize] += 1;
        Packet { class, psn: u32::from(on), ..Packet::control(Kind::Pfc, port, from, to, FRAME as u16) }
    }

    /// A PFC frame reached the sender of the port at `at`: its class pauses or resumes at
    /// `now`. True when the port has a class it may send again.
    pub fn on_frame(&mut self, at: u32, frame: &Packet, now: Time) -> bool {
        let (a, bit) = (at as usize, 1u8 << frame.class);
        let before = self.paused[a];
        self.paused[a] = if frame.psn != 0 { before | bit } else { before & !bit };
        match (before, self.paused[a]) {
            (0, 1..) => self.since[a] = now,
            (1.., 0) => self.paused_ps[a] += now - self.since[a],
            _ => {}
        }
        before & !self.paused[a] != 0
    }

    /// The time the port at `at` has had a class paused, up to `now`, and the PFC frames it
    /// sent.
    pub fn port_counts(&self, at: usize, now: Time) -> (Time, u64) {
        let open = if self.paused[at] != 0 { now.saturating_sub(self.since[at]) } else { 0 };
        (self.paused_ps[at] + open, self.frames[at])
    }

    /// The port at `at`'s pause state and counters: the classes paused, since when, the time
    /// paused before that, the frames it sent (a run across ranks tells them to rank 0).
    pub fn port_state(&self, at: usize) -> (u8, Time, Time, u64) {
        (self.paused[at], self.since[at], self.paused_ps[at], self.frames[at])
    }

    /// Sets what [`Pfc::port_state`] read, on another rank's copy of the piece.
    pub fn set_port_state(&mut self, at: usize, (paused, since, paused_ps, frames): (u8, Time, Time, u64)) {
        (self.paused[at], self.since[at], self.paused_ps[at], self.frames[at]) = (paused, since, paused_ps, frames);
    }

    /// The wires each data packet queued at the port at `at` in `class` came in on.
    pub fn queued_from(&self, at: usize, class: usize) -> &VecDeque<u32> {
        &self.from[at * self.classes + class]
    }

    pub fn classes(&self) -> usize {
        self.classes
    }
}
