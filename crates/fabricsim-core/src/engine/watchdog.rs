//! The no-progress guard: a run in which nothing can ever change again stops instead of
//! spinning until `stop.max_time`.
//!
//! A message whose every path is dead (a host link down for good, say) keeps its sender's
//! retransmission timer firing forever; with a long `stop.max_time` that is billions of
//! events for nothing. The guard is a global duty at times known in advance: every eighth of
//! its `window` (1000 RTOs) a `Watch` event sums what the hosts delivered; when no receiver
//! has accepted new data for a whole window while every message has started (no start or
//! release notice pending, nothing on a server's scale-up network) and no fault action is
//! pending (a link that comes back, routing that reconverges), nothing can change the outcome
//! and the run stops as incomplete, with its reason.

use crate::time::Time;

/// RTOs without new data after which a run with nothing pending has stopped progressing.
pub const WINDOW_RTOS: u64 = 1000;

#[derive(Debug, Clone)]
pub struct Watchdog {
    window: Time,
    /// When progress was last seen, and the progress count then.
    seen_at: Time,
    seen: u64,
    /// The first check that saw the latest progress count (what a stopped run reports).
    progressed_at: Time,
    progressed: u64,
}

impl Watchdog {
    pub fn new(rto: Time) -> Watchdog {
        Watchdog { window: rto.saturating_mul(WINDOW_RTOS), seen_at: 0, seen: 0, progressed_at: 0, progressed: 0 }
    }

    /// How often the guard looks (an eighth of its window).
    pub fn every(&self) -> Time {
        (self.window / 8).max(1)
    }

    /// `progress` is a count that grows whenever a receiver accepts new data; `pending` is
    /// whether anything scheduled could still change the run (a message yet to start, a
    /// fault action). True when the run has stalled.
    pub fn stalled(&mut self, now: Time, progress: u64, pending: bool) -> bool {
        if progress != self.progressed {
            (self.progressed_at, self.progressed) = (now, progress);
        }
        if progress != self.seen || pending {
            (self.seen_at, self.seen) = (now, progress);
            return false;
        }
        now - self.seen_at >= self.window
    }
}

impl Watchdog {
    /// Since when no new data has arrived and nothing has been pending (the last check that
    /// saw either).
    pub fn quiet_since(&self) -> Time {
        self.seen_at
    }

    /// The check that first saw the latest new data (0: none yet): the last new data arrived
    /// at most [`Watchdog::every`] before it.
    pub fn progressed_at(&self) -> Time {
        self.progressed_at
    }

    /// The window of no new data after which a run with nothing pending stops.
    pub fn window(&self) -> Time {
        self.window
    }
}

/// What the no-progress guard reads of the hosts: sums over them, which add up over pieces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activity {
    /// Data packets that brought their receiver new data.
    pub progress: u64,
    /// Connection starts scheduled and not yet taken.
    pub starts: u64,
    pub notices_sent: u64,
    pub notices_taken: u64,
    /// Messages started on a scale-up network, and delivered there.
    pub up_sent: u64,
    pub up_done: u64,
}

impl std::ops::Add for Activity {
    type Output = Activity;

    fn add(self, o: Activity) -> Activity {
        Activity {
            progress: self.progress + o.progress,
            starts: self.starts + o.starts,
            notices_sent: self.notices_sent + o.notices_sent,
            notices_taken: self.notices_taken + o.notices_taken,
            up_sent: self.up_sent + o.up_sent,
            up_done: self.up_done + o.up_done,
        }
    }
}

impl Activity {
    /// Whether a connection start, a release notice or a message on a scale-up network is
    /// on its way (a message waiting for others is not).
    pub fn starts_pending(&self) -> bool {
        self.starts > 0 || self.notices_sent != self.notices_taken || self.up_sent != self.up_done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_only_after_a_window_without_progress_or_pending_work() {
        let mut w = Watchdog::new(10);
        assert!(!w.stalled(5_000, 0, false), "nothing delivered yet, but the window has not passed since 0");
        assert!(w.stalled(10_000, 0, false));
        assert!(!w.stalled(10_001, 1, false), "new data resets it");
        assert!(!w.stalled(30_000, 1, true), "a pending fault or start resets it");
        assert!(!w.stalled(39_999, 1, false));
        assert!(w.stalled(40_000, 1, false));
    }
}
