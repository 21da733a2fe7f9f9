//! A host: the unit that owns its NIC's scheduler, its random stream and its counters.

use super::NicCounts;
use crate::engine::rng::Rng;
use crate::engine::watchdog::Activity;
use crate::time::Time;

/// One host: its node and where its piece's links keep its NIC port, its random stream, its
/// NIC's scheduler and its counters (a run's totals are their sums, taken when read). Its
/// connections' halves and its messages' counts live in its piece's tables
/// ([`super::Nics`], keyed by connection and message), which only its own events touch; what
/// it does it writes to a [`crate::switch::links::Sink`] ([`super::Nics::handle`], its one
/// entry point).
#[derive(Debug, Clone)]
pub struct Host {
    pub node: u32,
    pub port: u32,
    pub(super) rng: Rng,
    /// Connections with something left to send, pulled round-robin from `rr`.
    pub(super) active: Vec<u32>,
    pub(super) rr: usize,
    /// With `rate_cap`: when a wake-up is scheduled for a connection the cap holds back
    /// (`Time::MAX`: none).
    pub(super) wake: Time,
    pub(super) counts: NicCounts,
    /// Messages this host received completely.
    pub(super) done: u32,
    /// Data packets that brought this host new data (the no-progress guard watches them), and
    /// their bytes on the wire ...
    pub(super) progress: u64,
    pub(super) progress_bytes: u64,
    /// ... of the bytes of every data packet sent to it, each once (what it still misses
    /// bounds when it can have everything: [`Host::missing`]).
    pub(super) incoming: u64,
    /// Connection starts (and sends on the scale-up network) scheduled for its messages, not
    /// yet taken.
    pub(super) pending: u32,
    /// Release notices it sent to other hosts, and those it took (a notice is in flight while
    /// the sums differ).
    pub(super) notices_sent: u64,
    pub(super) notices_taken: u64,
    /// Messages it started on the scale-up network, and those it received there.
    pub(super) up_sent: u64,
    pub(super) up_done: u64,
    /// Its CPUs that entries claimed (`MessageSpec::cpu`): each one's number and when it is
    /// free (empty unless a workload names a CPU).
    pub(super) cpus: Vec<(u16, Time)>,
    /// With `transport.message_overhead` or `message_gap`: when its posting and its NIC's gap
    /// are next free (LogGOPSim's `nexto` and `nextgs`).
    pub(super) posting: (Time, Time),
}

impl Host {
    /// Host `node`, whose NIC port its piece's links keep at `port`, with its random stream and
    /// the bytes of every data packet sent to it.
    pub(super) fn new(node: u32, port: u32, rng: Rng, incoming: u64) -> Host {
        Host {
            node,
            port,
            rng,
            active: Vec::new(),
            rr: 0,
            wake: Time::MAX,
            counts: NicCounts::default(),
            done: 0,
            progress: 0,
            progress_bytes: 0,
            incoming,
            pending: 0,
            notices_sent: 0,
            notices_taken: 0,
            up_sent: 0,
            up_done: 0,
            cpus: Vec::new(),
            posting: (0, 0),
        }
    }
}

impl Host {
    /// Messages this host received completely.
    pub fn done(&self) -> u32 {
        self.done
    }

    /// Data packets by fate at this host.
    pub fn counts(&self) -> NicCounts {
        self.counts
    }

    /// Bytes on the wire of the data packets it has not received yet (each once): it cannot
    /// complete its last message before they crossed its link.
    pub fn missing(&self) -> u64 {
        self.incoming - self.progress_bytes
    }

    /// What the no-progress guard reads of it.
    pub fn activity(&self) -> Activity {
        Activity {
            progress: self.progress,
            starts: self.pending.into(),
            notices_sent: self.notices_sent,
            notices_taken: self.notices_taken,
            up_sent: self.up_sent,
            up_done: self.up_done,
        }
    }

    /// Its counters, as a process that ran it tells another (a run across ranks:
    /// `sim::ranks`; [`Host::set_tallies`] takes them).
    pub fn tallies(&self) -> [u64; 12] {
        let c = &self.counts;
        [
            c.data_sent,
            c.data_delivered,
            c.headers_delivered,
            self.done.into(),
            self.progress,
            self.progress_bytes,
            self.incoming,
            self.pending.into(),
            self.notices_sent,
            self.notices_taken,
            self.up_sent,
            self.up_done,
        ]
    }

    /// Sets its counters to what [`Host::tallies`] gave.
    pub fn set_tallies(&mut self, t: [u64; 12]) {
        let c = &mut self.counts;
        (c.data_sent, c.data_delivered, c.headers_delivered) = (t[0], t[1], t[2]);
        (self.done, self.progress, self.progress_bytes, self.incoming) = (t[3] as u32, t[4], t[5], t[6]);
        (self.pending, self.notices_sent, self.notices_taken, self.up_sent, self.up_done) = (t[7] as u32, t[8], t[9], t[10], t[11]);
    }

    /// Frees what only a running simulation needs: its scheduler.
    pub fn free_schedule(&mut self) {
        self.active = Vec::new();
    }

    /// Counts the bytes of a message added to the run that it receives.
    pub fn expect(&mut self, incoming: u64) {
        self.incoming += incoming;
    }

    /// A connection ready at `now` is posted, its host's posting costing `o` and its NIC's gap
    /// `g` (LogGOPSim's send: it begins once both are free, which it then holds for `o` and
    /// `g`); returns when its NIC may send it, `o` after it began.
    pub(super) fn post(&mut self, now: Time, (o, g): (Time, Time)) -> Time {
        let begin = now.max(self.posting.0).max(self.posting.1);
        self.posting = (begin.saturating_add(o), begin.saturating_add(g));
        begin.saturating_add(o)
    }

    /// An entry ready at `ready` takes CPU `cpu` for `work`: it begins when the CPU is free,
    /// in the order entries claim it; returns when it ends.
    pub(super) fn claim(&mut self, cpu: u16, ready: Time, work: Time) -> Time {
        let at = match self.cpus.iter().position(|c| c.0 == cpu) {
            Some(i) => i,
            None => {
                self.cpus.push((cpu, 0));
                self.cpus.len() - 1
            }
        };
        let end = ready.max(self.cpus[at].1).saturating_add(work);
        self.cpus[at].1 = end;
        end
    }
}
