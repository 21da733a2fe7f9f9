//! The fabric's queueing rules: trimming into the control queue, its overflow, ECN at
//! enqueue and at dequeue.

use super::*;
use crate::engine::{node_unit, EventQueue};
use crate::packet::Kind;
use crate::scenario::Scenario;

/// A fabric's switches in one piece with their links and queue.
struct Switches {
    f: Fabric,
    units: Vec<Switch>,
    links: Links,
    q: EventQueue,
}

impl Switches {
    /// Feeds `input` to switch `node` at `now`: what it does goes to the links and the queue.
    fn feed(&mut self, node: u32, now: Time, input: Input) {
        let me = self.q.origin(node_unit(node));
        let sw = &mut self.units[self.f.switch_of(node)];
        sw.handle(&mut self.f, &mut Sink::new(&mut self.q, &mut self.links, me), now, input);
    }

    /// Queues `pkt` at the port at `port` of its switch, at time 0.
    fn enqueue(&mut self, port: u32, pkt: Packet) {
        let node = self.links.port_at(port).from;
        let me = self.q.origin(node_unit(node));
        let sw = &mut self.units[self.f.switch_of(node)];
        sw.enqueue(&self.f.cfg, &mut Sink::new(&mut self.q, &mut self.links, me), 0, port, pkt, u32::MAX);
    }

    /// The port at `port` is free at `now`.
    fn free(&mut self, port: u32, now: Time) {
        self.feed(self.links.port_at(port).from, now, Input::PortFree(port));
    }
}

/// A 16-host fabric with `switch` settings, and the index of port `leaf0:up0`.
fn fabric(switch: &str) -> (Switches, u32) {
    let text = format!("[topology]\nhosts = 16\nradix = 8\n[switch]\n{switch}");
    let value: toml::Table = toml::from_str(&text).expect("test TOML");
    let model = Scenario::from_deserializer(value).expect("valid").resolve().expect("resolves");
    let topo = model.topo.clone();
    let cut = Arc::new(Cut::whole(&topo));
    let links = Links::piece(topo.clone(), model.switch.classes as usize, model.switch.pfc, 1, cut.clone(), 0);
    let (f, units) = Fabric::piece(topo.clone(), model.switch.clone(), 1, cut, 0, &links);
    let port = topo.ports.iter().position(|p| p.name == "leaf0:up0").expect("leaf0:up0") as u32;
    let q = EventQueue::with_horizon(1_000_000).with_nodes(topo.nodes.len());
    (Switches { f, units, links, q }, port)
}

fn data(conn: u32, psn: u32) -> Packet {
    Packet { size: 4160, psn, ..Packet::control(Kind::Data, conn, 0, 9, 0) }
}

/// [`fabric`], with `count` full packets of connection `conn` (PSNs 0, 1, ...) sent to
/// `leaf0:up0` at time 0.
fn filled(switch: &str, conn: u32, count: u32) -> (Switches, u32) {
    let (mut s, port) = fabric(switch);
    for psn in 0..count {
        s.enqueue(port, data(conn, psn));
    }
    (s, port)
}

#[test]
fn a_full_queue_trims_into_the_control_queue_which_leaves_first() {
    // room for two queued packets; the first goes straight onto the free wire
    let (mut s, port) = filled("buffer = \"8320B\"\necn = { enabled = false }\n", 2, 4);
    let p = &s.links.ports()[port as usize];
    assert_eq!((p.stats.trims, s.links.losses().data_trimmed, s.links.conn_losses()[&2].trims), (1, 1, 1));
    assert_eq!(p.data_bytes, 8320, "two full packets wait");
    let header = p.control.front().copied().expect("the trimmed header waits in the control queue");
    assert!(header.trimmed && header.psn == 3 && header.size as u64 == s.f.cfg.header);
    // when the wire frees, the header goes before the data queued ahead of it
    let free = p.busy_until;
    s.free(port, free);
    let (_, sent) = s.links.wire(port).packets().last().copied().expect("on the wire");
    assert!(sent.trimmed && sent.psn == 3);
}

#[test]
fn a_full_control_queue_drops_headers_and_counts_them() {
    // one packet queued; the control queue holds one full packet's bytes: 65 headers of 64 B
    let (s, port) = filled("buffer = \"4160B\"\ncontrol_buffer = \"4160B\"\necn = { enabled = false }\n", 1, 70);
    // psn 0 on the wire, psn 1 queued, 65 trimmed headers queued, the last 3 lost
    let (p, l) = (&s.links.ports()[port as usize], &s.links);
    assert_eq!(p.control.len(), 65);
    assert_eq!((l.losses().data_trimmed, l.losses().headers_dropped, p.stats.drops), (68, 3, 3));
    assert_eq!(l.conn_losses()[&1].trims, 68, "a trimmed packet is counted once, when trimmed");
    assert_eq!(l.conn_losses()[&1].drops, 0, "a lost header is not a second loss of its packet");
}

#[test]
fn ecn_at_enqueue_marks_the_late_packet_at_dequeue_the_early_one() {
    // Kmin = 1 B, Kmax = one packet: marked exactly when a packet finds (enqueue) or leaves
    // behind (dequeue) a full packet in its queue
    let marks = |mark: &str| -> Vec<(u32, bool)> {
        let (mut s, port) = filled(&format!("buffer = \"1bdp\"\necn = {{ kmin = \"1B\", kmax = \"4160B\", mark = \"{mark}\" }}\n"), 0, 3);
        for _ in 0..2 {
            let free = s.links.ports()[port as usize].busy_until;
            s.free(port, free);
        }
        s.links.wire(port).packets().map(|(_, p)| (p.psn, p.ecn)).collect()
    };
    // psn 0 never queued; psn 2 found psn 1 ahead (enqueue); psn 1 left psn 2 behind (dequeue)
    assert_eq!(marks("enqueue"), vec![(0, false), (1, false), (2, true)]);
    assert_eq!(marks("dequeue"), vec![(0, false), (1, true), (2, false)]);
}

/// Where switch `node` put what it was fed: the names of the ports holding a packet, on their
/// wire or in their queues.
fn holding(s: &Switches) -> Vec<String> {
    let topo = s.f.topology().clone();
    (0..topo.ports.len() as u32)
        .filter(|&p| s.links.wire(p).packets().next().is_some() || s.links.port(p).packets().next().is_some())
        .map(|p| topo.ports[p as usize].name.clone())
        .collect()
}

/// Feeds `pkt` to the switch that port `from` (a name) leaves.
fn feed(s: &mut Switches, from: &str, pkt: Packet) {
    let topo = s.f.topology().clone();
    let node = topo.ports[topo.ports.iter().position(|p| p.name == from).expect("a port")].from;
    s.feed(node, 0, Input::Packet(pkt, u32::MAX));
}

#[test]
fn a_switch_sends_a_packet_down_to_its_own_host_and_up_by_its_hash_otherwise() {
    // 4 hosts a leaf: host 1 hangs on leaf 0, host 9 on leaf 2
    let (mut s, _) = fabric("routing = \"ecmp\"\n");
    feed(&mut s, "leaf0:up0", Packet { dst: 1, ..data(3, 0) });
    assert_eq!(holding(&s), ["leaf0:down1"]);
    let (mut s, _) = fabric("routing = \"ecmp\"\n");
    feed(&mut s, "leaf0:up0", Packet { ev: 11, ..data(3, 0) });
    feed(&mut s, "leaf0:up0", Packet { ev: 11, ..data(3, 1) });
    let up = holding(&s);
    assert!(up.len() == 1 && up[0].starts_with("leaf0:up"), "one flow and entropy, one uplink: {up:?}");
    let (mut s, _) = fabric("routing = \"ecmp\"\n");
    let spine = up[0].replace("leaf0:up", "spine");
    feed(&mut s, &format!("{spine}:down0"), data(3, 0));
    assert_eq!(holding(&s), [format!("{spine}:down2")], "the spine sends it down to host 9's leaf");
}
