//! What one host's NIC keeps besides its connections.

use super::NicCounts;
use crate::engine::rng::Rng;
use crate::time::Time;

/// What one host owns besides its connections: its random stream, its scheduler and its
/// counters (a run's totals are their sums, taken when read).
#[derive(Debug, Clone)]
pub(super) struct HostState {
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
    /// bounds when it can have everything: [`super::Nics::missing`]).
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
}

impl HostState {
    /// A host with its random stream and the bytes of every data packet sent to it.
    pub(super) fn new(rng: Rng, incoming: u64) -> HostState {
        HostState {
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
        }
    }
}

impl HostState {
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
