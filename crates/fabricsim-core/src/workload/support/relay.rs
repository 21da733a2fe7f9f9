//! Messages relayed through a server's scale-up network: on a fabric of islands (a rail-only
//! one: Wang et al., "How to Build Low-cost Networks for Large Language Models (without
//! Sacrificing Performance)", 2023, where no link joins two rails) a message between hosts the
//! fabric does not join first crosses the scale-up network (NVLink) of its source's server to
//! the GPU there that the fabric joins to the destination, the one of the destination's local
//! rank where it can, and is sent from there (NCCL's PXN, "PCI x NVLink", moves data the same
//! way).
//!
//! The message is split in two: the scale-up transfer (a new message, appended, that takes the
//! original's release: its start, dependencies, compute delay and CPU, and its job's tag), and
//! the fabric transfer (the original message, so that what waits for it still does, now from
//! the relaying GPU and released when the first part is done). Simplification: the relaying GPU
//! forwards the whole message once it has it (store and forward); NCCL pipelines the two in
//! chunks, so the relay costs at most the scale-up time of one message more than it would
//! there (at 900 GB/s of NVLink against 50 GB/s of a 400 Gb/s NIC, about 6 % of the fabric
//! time).

use crate::topology::Topology;
use crate::workload::collective::Tag;
use crate::workload::MessageSpec;

/// Relays the messages `topo`'s fabric cannot carry (see the module): `messages`, their
/// dependency lists and tags grow by one message per relay. Returns the relays made, or a
/// message that cannot be carried (its index, the field at fault, and why): one whose
/// source's server has no GPU the fabric joins to its destination, or one that waits for a
/// message whose receiver cannot tell its source so.
pub fn through_scale_up(
    topo: &Topology,
    messages: &mut Vec<MessageSpec>,
    deps: &mut Vec<Vec<u32>>,
    tags: &mut Vec<Tag>,
) -> Result<usize, (usize, &'static str, String)> {
    if topo.tables.split().is_none() {
        return Ok(0);
    }
    let joined = |a: u32, b: u32| topo.tables.reachable(a, b) || topo.scale_up_between(a, b).is_some();
    let why =
        |a: u32, b: u32| format!("host {a} cannot reach host {b}: not over the fabric, nor through a GPU of its server's scale-up network");
    let original = messages.len();
    for i in 0..original {
        let m = messages[i];
        let (a, b) = (topo.slot(m.src), topo.slot(m.dst));
        // a message's receiver tells each message waiting for it, from its own host
        if let Some(&d) = deps[i].iter().find(|&&d| {
            let (from, to) = (topo.slot(messages[d as usize].dst), a);
            !joined(from, to) && topo.relay(from, to).is_none()
        }) {
            return Err((i, "src", why(messages[d as usize].dst, m.src)));
        }
        if m.is_compute() || joined(a, b) {
            continue;
        }
        let relay = topo.host(topo.relay(a, b).ok_or_else(|| (i, "dst", why(m.src, m.dst)))?);
        let first = messages.len() as u32;
        messages.push(MessageSpec { dst: relay, ..m });
        let waits = std::mem::replace(&mut deps[i], vec![first]);
        deps.push(waits);
        if let Some(&tag) = tags.get(i) {
            tags.push(tag);
        }
        let second = &mut messages[i];
        (second.src, second.start, second.delay, second.cpu) = (relay, 0, 0, None);
    }
    Ok(messages.len() - original)
}
