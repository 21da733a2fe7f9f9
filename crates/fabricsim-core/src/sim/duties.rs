//! The duties of the whole run, which wait in the first piece's queue under their own units:
//! the no-progress guard, the fault timeline (and what routing then allows), the samples and
//! a trace's windows.

use std::cmp::Reverse;
use std::sync::Arc;

use super::piece::Piece;
use super::Simulation;
use crate::engine::watchdog::Activity;
use crate::engine::{Event, FAULT_UNIT, RECORD_UNIT};
use crate::faults::link::Change;
use crate::switch::EgressPort;
use crate::time::Time;
use crate::topology::{Cut, Restriction};

impl Simulation {
    /// Runs one of the duties of the whole run (`by`: its unit), which wait in the first
    /// piece's queue.
    #[cold]
    pub(super) fn run_duty(&mut self, now: Time, event: Event, by: u32) {
        let seen = Seen::of(event, &self.pieces, self.trace_messages());
        self.duty(now, event, by, seen);
    }

    /// [`Simulation::run_duty`], with what it reads of every piece's hosts and queues `seen`
    /// (summed over the processes of a run across them: `sim::ranks`).
    pub(super) fn duty(&mut self, now: Time, event: Event, by: u32, seen: Seen) {
        debug_assert_eq!(self.duty_times.peek(), Some(&Reverse(now)));
        self.duty_times.pop();
        match event {
            Event::Watch => {
                let Seen { activity: a, queued, .. } = seen;
                // a session with every message done waits for the next: nothing stalled
                let idle = self.open.is_some() && self.done == self.flow_count();
                // a trace's messages not drawn yet start later, as those drawn and pending do
                let pending = a.starts_pending()
                    || self.faults.next_time().is_some()
                    || idle
                    || self.model.arrivals.is_some()
                    || self.jobs_to_start();
                if self.watchdog.stalled(now, a.progress, pending) {
                    self.stop_at = 0;
                } else if now - self.watchdog.quiet_since() >= self.watchdog.every() && self.pfc_deadlock().is_some() {
                    // nothing new for a whole check, and ports that can never send again
                    self.stop_at = 0;
                } else if queued {
                    self.schedule_duty(now + self.watchdog.every(), Event::Watch);
                } else if let Some(open) = &mut self.open {
                    open.watching = false; // until a message is sent
                }
            }
            Event::Faults => {
                let (pieces, cut, excluded) = (&mut self.pieces, &self.cut, &mut self.excluded);
                let mut converged = false;
                self.faults.fire(now, |ports, change| {
                    pieces.iter_mut().for_each(|p| p.links.apply(ports, change));
                    if change == Change::Converge {
                        // routing adopts the link's state of this moment
                        excluded.resize(pieces[0].fabric.topology().ports.len(), false);
                        converged = true;
                        for port in ports {
                            excluded[port as usize] = port_of(pieces, cut, port).fault.as_ref().is_some_and(|f| f.down);
                        }
                    }
                });
                if converged {
                    self.restrict();
                }
                if let Some(at) = self.faults.next_time() {
                    self.schedule_duty(at, Event::Faults);
                }
            }
            Event::Sample => {
                if let Some(s) = self.sampler.as_mut() {
                    match &seen.sampled {
                        Some(values) => s.sample_values(now, |k, _| values[k]),
                        None => {
                            let (pieces, cut) = (&self.pieces, &self.cut);
                            s.sample(now, |port| port_of(pieces, cut, port));
                        }
                    }
                    let at = now + s.every;
                    self.schedule_duty(at, Event::Sample);
                }
            }
            Event::Window => {
                let slot = usize::from(self.window_bytes[0].is_some());
                self.window_bytes[slot] = Some(seen.delivered);
            }
            Event::Generate if self.model.making.is_some() => self.jobs_duty(now),
            Event::Generate => self.draw(false),
            _ => unreachable!("{event:?} is a host's or a switch's"),
        }
        debug_assert_eq!(by, duty_unit(event), "{event:?}");
    }

    /// Routing adopts the links it excludes now: what each table entry's group may still use,
    /// computed once for the run and shared by the pieces.
    fn restrict(&mut self) {
        let topo = &self.model.topo;
        let r = if self.excluded.iter().any(|&x| x) { topo.tables.restrict(&topo.ports, &self.excluded) } else { Restriction::default() };
        let r = Arc::new(r);
        for p in &mut self.pieces {
            p.fabric.restrict(r.clone());
        }
    }

    /// Schedules a duty of the whole run at `at`, numbered by its unit (the fault timeline's
    /// or the recorders').
    pub(super) fn schedule_duty(&mut self, at: Time, event: Event) {
        let queue = &mut self.pieces[0].queue;
        queue.schedule(queue.origin(duty_unit(event)), at, event);
        self.duty_times.push(Reverse(at));
    }
}

/// What a duty reads of the pieces' hosts, queues and ports: the no-progress guard their
/// activity and whether any event is queued, a trace's window the payload its messages
/// delivered, the samples each sampled port's busy time and data queue (`None`: read from the
/// ports; a run across processes gathers them, `sim::ranks`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Seen {
    pub activity: Activity,
    pub queued: bool,
    pub delivered: u64,
    pub sampled: Option<Vec<(Time, u64)>>,
}

impl Seen {
    /// What `event` reads of `pieces` (nothing for the others; `trace`: the trace's messages).
    pub fn of(event: Event, pieces: &[Box<Piece>], trace: usize) -> Seen {
        match event {
            Event::Watch => Seen {
                activity: super::results::activity(pieces),
                queued: pieces.iter().any(|p| !p.queue.is_empty()),
                delivered: 0,
                sampled: None,
            },
            Event::Window => Seen { delivered: pieces.iter().map(|p| super::results::delivered(p, trace)).sum(), ..Seen::default() },
            _ => Seen::default(),
        }
    }

    /// The sum of two processes' (or pieces') `Seen` (of a duty that reads no port).
    pub fn add(self, o: Seen) -> Seen {
        Seen {
            activity: self.activity + o.activity,
            queued: self.queued || o.queued,
            delivered: self.delivered + o.delivered,
            sampled: None,
        }
    }
}

/// Egress port `port` as the piece of its sending node holds it.
pub(super) fn port_of<'a>(pieces: &'a [Box<Piece>], cut: &Cut, port: u32) -> &'a EgressPort {
    let from = pieces[0].fabric.topology().ports[port as usize].from;
    pieces[usize::from(cut.home(from))].links.port(port)
}

/// The unit of a duty of the whole run: the fault timeline's (first at any instant) or the
/// recorders'.
fn duty_unit(event: Event) -> u32 {
    if event == Event::Faults {
        FAULT_UNIT
    } else {
        RECORD_UNIT
    }
}

impl Simulation {
    /// A cycle of ports priority flow control holds paused, each waiting on the next, and
    /// their class, if there is one: read off the pieces, or in a run across ranks off what
    /// the ranks last told each other of them.
    pub(super) fn pfc_deadlock(&self) -> Option<(u8, Vec<u32>)> {
        self.model.switch.pfc?;
        let links: Vec<&crate::switch::links::Links> = self.pieces.iter().map(|p| &p.links).collect();
        match &self.pauses_told {
            Some(told) => crate::switch::pfc::deadlock::find_in(links[0].pfc.as_ref()?.classes(), told),
            None => crate::switch::pfc::deadlock::find(&links),
        }
    }
}
