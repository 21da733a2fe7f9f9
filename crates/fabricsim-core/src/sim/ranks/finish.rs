//! A run's last window across ranks: one in which messages may complete, which must stop at
//! the end of the instant of the run's last completion (`Simulation::turns` stops a run
//! there). One process finds that instant in turns, event by event in one key order; across
//! ranks a turn costs two collective calls, and the last microseconds of a large run took tens
//! of thousands of them. Instead, in two phases:
//!
//! 1. each piece that still has messages to complete runs the window until it completed its
//!    last one, and then to the end of that instant (or to the window's end, if it did not):
//!    what it does cannot reach another piece within the window, and the run cannot end
//!    before the last completion of any piece;
//! 2. the ranks tell each other whether every piece completed its last message, and when:
//!    if all did, the run ends at the latest of those instants, and every piece runs up to its
//!    end; otherwise the run goes on, and every piece runs up to the window's end.
//!
//! Which piece completes a message is its destination's (where its receiver counts it, or a
//! compute task's host); a piece whose count came out wrong would have run past the run's end,
//! and the run stops with that said rather than give other results than one process.

use super::codec::{Reader, Writer};
use super::Rank;
use crate::sim::parallel::Shared;
use crate::sim::piece::Pause;
use crate::sim::Simulation;
use crate::time::Time;

impl Simulation {
    /// The messages each piece completes in all: its hosts are their destinations (a
    /// message's `dst` is its receiving host's node, as `Piece::unit_of` reads it).
    pub(super) fn expected_completions(&self) -> Vec<u32> {
        let mut expected = vec![0; self.pieces.len()];
        for m in self.pieces[0].nics.messages() {
            expected[usize::from(self.cut.home(m.spec.dst))] += 1;
        }
        expected
    }

    /// The completion bound's parts (`Piece::completion_parts`) over this rank's pieces.
    pub(super) fn own_parts(&self, r: &Rank) -> (Time, Time) {
        r.own.clone().map(|i| self.pieces[i].completion_parts()).fold((0, 0), |(at, after), (a, b)| (at.max(a), after.max(b)))
    }

    /// The pieces' completion bound in parts (`Piece::completion_parts`) over every rank,
    /// where the ranks did not tell them as they agreed (the bound found before still reached
    /// past the window they expected).
    pub(super) fn completion_parts_across(&self, r: &Rank) -> (Time, Time) {
        let (mut at, mut after) = self.own_parts(r);
        let mut w = Writer::default();
        w.u64(at);
        w.u64(after);
        for bytes in r.ex.all_gather(w.0) {
            let mut rd = Reader::new(&bytes);
            (at, after) = (at.max(rd.u64()), after.max(rd.u64()));
        }
        (at, after)
    }

    /// A window up to `end` in which messages may complete (the module doc): phase 1 on the
    /// driver's thread, phase 2 on the rank's threads.
    pub(super) fn finishing_window(&mut self, r: &mut Rank, shared: &Shared, end: Time) {
        let bound = u128::from(end) << 64;
        // 1: each piece with messages left, to the end of the instant of its last completion
        let (mut left_over, mut last) = (false, 0);
        for i in r.own.clone() {
            if self.pieces[i].nics.reported() >= r.expected[i] {
                continue;
            }
            let mut until = bound;
            loop {
                let piece = &mut self.pieces[i];
                let (mut left, mut now) = (u64::MAX, 0);
                let pause = piece.run::<{ Pause::ON_COMPLETION }>(until, &mut left, &mut now);
                r.ran += u64::MAX - left;
                r.done += piece.newly_done();
                let reported = piece.nics.reported();
                match pause {
                    Pause::Changed if reported >= r.expected[i] && until == bound => {
                        last = last.max(now);
                        until = u128::from(now + 1) << 64;
                    }
                    Pause::Changed => {}
                    Pause::Bound => break,
                    Pause::Duty(..) => unreachable!("no duty of the whole run falls in a window"),
                }
            }
            left_over |= self.pieces[i].nics.reported() < r.expected[i];
        }
        // 2: the run's end, if every piece completed its last message, else the window's
        let mut w = Writer::default();
        w.u8(u8::from(left_over));
        w.u64(last);
        w.u32(r.done);
        let (mut going_on, mut end_at, mut done) = (false, 0, self.done);
        for bytes in r.ex.all_gather(w.0) {
            let mut rd = Reader::new(&bytes);
            going_on |= rd.u8() == 1;
            end_at = end_at.max(rd.u64());
            done += rd.u32();
        }
        // every message completed exactly where every piece completed its own last
        assert_eq!(
            done >= self.stop_at,
            !going_on,
            "the pieces completed other messages than their hosts receive: the run cannot find its end across ranks"
        );
        // every piece to the run's end, or to the window's, as any window on the ranks' threads
        // (what phase 1 handed other pieces is posted with the rest)
        self.window_across(r, shared, if going_on { end } else { end_at + 1 });
    }
}
