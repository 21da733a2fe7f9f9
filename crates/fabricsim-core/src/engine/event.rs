//! What can happen in a run, and where a run stands.

/// What can happen. Each carries a small index; components own their state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// An egress port finished serializing its packet and has more waiting (or is a NIC):
    /// where its piece keeps it (`topology::Cut`; the event's key has its node's unit).
    PortFree(u32),
    /// The head packet of a link's pipe reaches the far end: where the far end's piece keeps
    /// the wire (the key has the sending node's unit and the port's id).
    PipeArrive(u32),
    /// A connection becomes ready to send.
    ConnStart(u32),
    /// A connection's message is posted (`transport.message_overhead`): its NIC may send it.
    Posted(u32),
    /// A message's source host learns that one of the messages it waits for, received by
    /// another host, completed (a notification across the fabric).
    Release(u32),
    /// A connection's retransmission timer.
    Rto(u32),
    /// A host's NIC may send again: a connection's pacing gap passed.
    NicWake(u32),
    /// A connection's congestion-control timer (DCQCN's rate increase).
    CcTimer(u32),
    /// A connection's receiver ends a CNP window (DCQCN).
    CnpTimer(u32),
    /// A message between two GPUs of one server is released at its source: it takes its
    /// turn on the source's port of the scale-up network (`host::nic::scale_up`).
    UpSend(u32),
    /// Its first bit reaches its destination's port of the scale-up network.
    UpArrive(u32),
    /// Its last bit reaches its destination.
    UpDone(u32),
    /// Its source hears that it was received (its next step may wait for that).
    UpAck(u32),
    /// A host's sending port on the scale-up network is done with its message, and others
    /// wait for it: the next in turn starts.
    UpFree(u32),
    /// A leg of a scale-up switch: its first bit passes its destination's port, and legs that
    /// cut through wait for it.
    UpBegin(u32),
    /// A compute task (a training job's) is done: its host computed for its delay.
    Computed(u32),
    /// The fault timeline's next actions take effect (one such event is pending at a time).
    Faults,
    /// The no-progress guard looks at the run ([`super::watchdog`]).
    Watch,
    /// Record the sampled ports.
    Sample,
    /// A trace's window ends: record what its messages have delivered.
    Window,
    /// A trace drawn as the run goes takes its next messages (`sim::generate`).
    Generate,
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    /// Every message completed.
    Complete,
    /// The next event lies beyond `stop.max_time`.
    TimeLimit,
    /// `stop.max_events` events were processed.
    EventLimit,
    /// `stop.max_wall` of wall-clock time went by.
    WallLimit,
    /// Nothing left to do but messages are unfinished (a bug guard; should not happen).
    Stalled,
    /// Nothing new delivered for 1000 RTOs with nothing pending that could change it
    /// ([`super::watchdog`]).
    NoProgress,
    /// Ports paused by priority flow control in a cycle, each waiting on the next: none can
    /// ever send again (`switch::pfc::deadlock`).
    PfcDeadlock,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Complete => "complete",
            _ => "incomplete",
        }
    }
    pub fn reason(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Complete => "all flows completed",
            Status::TimeLimit => "stop.max_time reached",
            Status::EventLimit => "stop.max_events reached",
            Status::WallLimit => "stop.max_wall reached",
            Status::Stalled => "no events left",
            Status::NoProgress => "no progress: nothing delivered for 1000 RTOs and no fault or message start pending",
            Status::PfcDeadlock => "PFC deadlock: ports paused in a cycle, each waiting on the next",
        }
    }
}
