//! The messages' first sends and ends, read from their connections' rows (stage 1 of the
//! results, [`super::MessageColumns::of`] reads them).

use super::WorkView;
use crate::host::parts::ConnParts;
use crate::host::table::{ConnRow, ConnTable};
use crate::stats::Nullable;
use crate::time::Time;

/// When each message first sent and ended, read from its connections (its MPTCP subflows:
/// the first send and the last end), and the load balancers' state size.
pub struct Ends {
    pub(super) first_send: Nullable<Time>,
    pub(super) end: Nullable<Time>,
    pub(super) lb_state_bytes: u64,
}

impl Ends {
    /// The messages' ends; `flows` holds their connections' rows.
    pub fn of(w: &WorkView<'_>, flows: &ConnParts<'_>) -> Ends {
        let n = w.messages.len();
        let (mut first_send, mut end) = (Nullable::with_capacity(n), Nullable::with_capacity(n));
        for i in 0..n {
            let (first, last) = Self::message(w, i, &|c| flows.row(c));
            first_send.push(first);
            end.push(last);
        }
        Ends { first_send, end, lb_state_bytes: Self::lb_state(w, flows) }
    }

    /// [`Ends::of`] for a run of one piece, whose connection table `table` gives each
    /// connection's row back once read: the messages are read from the last to the first,
    /// so that the table shrinks while the ends grow (a row is 48 bytes a connection, the
    /// ends 18 a message).
    pub fn giving_back(w: &WorkView<'_>, table: &mut ConnTable) -> Ends {
        let lb_state_bytes = Self::lb_state(w, &ConnParts::new(vec![&*table]));
        let n = w.messages.len();
        let (mut first_send, mut end) = (Nullable::with_capacity(n), Nullable::with_capacity(n));
        for i in (0..n).rev() {
            let (first, last) = Self::message(w, i, &|c| table.row(c));
            first_send.push(first);
            end.push(last);
            if w.messages[i].count > 0 {
                table.give_back_rows(w.messages[i].first as usize);
            }
        }
        first_send.reverse();
        end.reverse();
        Ends { first_send, end, lb_state_bytes }
    }

    /// Message `i`'s first send and end, its connections' rows read by `row`.
    fn message(w: &WorkView<'_>, i: usize, row: &dyn Fn(u32) -> ConnRow) -> (Option<Time>, Option<Time>) {
        let (m, state) = (&w.messages[i], &w.states[i]);
        if m.count == 0 {
            // on a scale-up network, or a compute task: its ends kept its times
            let t = w.up.get(&(i as u32)).copied().unwrap_or([Time::MAX; 2]);
            let known = |t: Time| (t != Time::MAX).then_some(t);
            return (known(t[0]), known(t[1]));
        }
        let (mut first, mut last) = (None::<Time>, None::<Time>);
        for c in m.first..m.first + m.count {
            let r = row(c);
            first = first.into_iter().chain(r.first_send()).min();
            last = last.into_iter().chain(r.end()).max();
        }
        (first, if state.done == m.count { last } else { None })
    }

    /// Per message: all of its connections' load-balancer state.
    fn lb_state(w: &WorkView<'_>, flows: &ConnParts<'_>) -> u64 {
        w.messages.first().map_or(0, |m| flows.lb_state_bytes(0, &m.spec))
    }
}
