//! Building the connections that carry a message: one, or (MPTCP) its subflows, each with its
//! own load balancer drawn from the message's own random stream, its window and its timer.
//!
//! A connection's sending half is built when its message starts, its receiving half when its
//! first packet arrives ([`ConnFactory::receiver`]), not when the run is set up: a job of
//! millions of messages keeps only the ones under way (docs/model.md, "Memory"). The load
//! balancers' draws must not move with that: each message draws from a stream derived from
//! the run's seed and the message's id ([`ConnFactory::stream`]), so what it draws does not
//! depend on when it was made or started, nor on the other messages (a message sent into a
//! running session draws what it would have drawn up front). A host's own stream is left to
//! what its load balancers draw while they send.

use crate::engine::rng::{Rng, Stream};
use crate::host::cc::{CcContext, Cwnd};
use crate::host::connection::{RecvHalf, SendHalf};
use crate::host::TransportModel;
use crate::lb::{ecmp, mptcp, HostLb, LbConfig, LbContext, MAX_EVS};
use crate::time::Time;
use crate::topology::Routes;
use crate::workload::MessageSpec;

/// What building a connection needs to know of the scenario.
#[derive(Debug, Clone)]
pub struct ConnFactory {
    transport: TransportModel,
    lb: LbConfig,
    lb_ctx: LbContext,
    cc: CcContext,
    routes: Routes,
    /// The run's seed, which each message's stream derives from.
    seed: u64,
}

impl ConnFactory {
    /// `cc` is the window's context for a lone connection (subflows split its initial window);
    /// `seed` the run's.
    pub fn new(transport: TransportModel, lb: LbConfig, lb_ctx: LbContext, cc: CcContext, routes: Routes, seed: u64) -> ConnFactory {
        ConnFactory { transport, lb, lb_ctx, cc, routes, seed }
    }

    /// Message `m`'s own stream, which its load balancers draw from when they are built.
    pub fn stream(&self, m: u32) -> Rng {
        Rng::stream(self.seed, Stream::Message, m.into())
    }

    /// The bytes each connection of a message of `bytes` carries (one, or the subflows' shares).
    pub fn shares(&self, bytes: u64) -> Vec<u64> {
        mptcp::shares(bytes, self.lb.subflows())
    }

    /// Bytes on the wire of the data packets of a connection carrying `bytes` (payloads and
    /// headers, each packet once).
    pub fn wire_bytes(&self, bytes: u64) -> u64 {
        bytes + u64::from(self.packets(bytes)) * self.transport.header
    }

    /// Bytes on the wire of the data packets of `spec`'s message, each once: what it sends its
    /// destination (none on a scale-up network or for a compute task).
    pub fn incoming(&self, spec: &MessageSpec) -> u64 {
        if self.on_scale_up(spec) || spec.is_compute() {
            return 0;
        }
        self.shares(spec.bytes).into_iter().map(|b| self.wire_bytes(b)).sum()
    }

    /// Packets of a connection carrying `bytes`.
    pub fn packets(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.transport.mtu - self.transport.header) as u32
    }

    /// The load balancers of a message's connections, in order, drawn from `rng`.
    pub fn load_balancers(&self, spec: &MessageSpec, rng: &mut Rng) -> Vec<HostLb> {
        let n = self.shares(spec.bytes).len();
        (0..n).map(|_| if spec.pinned() { HostLb::Ecmp(ecmp::Ecmp::new(MAX_EVS, rng)) } else { self.lb.build(&self.lb_ctx, rng) }).collect()
    }

    /// How long a notification from host `from` takes to reach host `to`
    /// ([`Routes::notice_latency`]).
    pub fn notify_latency(&self, from: u32, to: u32) -> Time {
        self.routes.notice_latency(from, to)
    }

    /// Whether `spec`'s message crosses its server's scale-up network (its two ends are GPUs
    /// of one server that has one): it then has no connection.
    pub fn on_scale_up(&self, spec: &MessageSpec) -> bool {
        self.routes.topology().scale_up_between(spec.src, spec.dst).is_some()
    }

    /// The transport every connection runs.
    pub fn transport(&self) -> &TransportModel {
        &self.transport
    }

    /// The receiving half of a connection of `spec`'s message carrying `bytes`.
    pub fn receiver(&self, spec: &MessageSpec, bytes: u64) -> RecvHalf {
        let t = &self.transport;
        RecvHalf::new(bytes, t.mtu - t.header, usize::try_from(self.routes.paths(spec.src, spec.dst)).unwrap_or(usize::MAX), t.ack_policy)
    }

    /// The sending halves of a message's connections, their load balancers drawn from `rng`.
    pub fn senders(&self, spec: &MessageSpec, rng: &mut Rng) -> Vec<SendHalf> {
        let t = &self.transport;
        let shares = self.shares(spec.bytes);
        let k = shares.len() as u64;
        // subflows share the line-rate window at first, each may grow to max_cwnd
        let cc = CcContext { init: if k > 1 { (t.init_cwnd / k).max(t.mtu) } else { t.init_cwnd }, ..self.cc };
        let lbs = self.load_balancers(spec, rng);
        shares
            .into_iter()
            .zip(lbs)
            .map(|(bytes, lb)| {
                let window = Cwnd::new(t.cc, &cc);
                let mut conn = SendHalf::new(MessageSpec { bytes, ..*spec }, t.mtu, t.header, window, lb);
                conn.tx.rto = t.rto_timer();
                if t.rto_adaptive || t.cc.needs_rtt() {
                    conn.tx.keep_send_times(conn.n_pkts);
                }
                if t.ack_policy.all_evs {
                    conn.tx.keep_evs(conn.n_pkts);
                }
                conn
            })
            .collect()
    }
}
