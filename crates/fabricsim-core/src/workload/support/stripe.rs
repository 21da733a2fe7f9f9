//! Messages striped over a host's NIC ports: the planes of a multi-plane fabric
//! (`topology::generators::multi_plane`: each host has a port in every plane) or a fat tree's
//! NICs of a GPU (`nics_per_gpu`). A message between two hosts is cut into one part per port,
//! of equal size (the first takes what does not divide), each from the source's port `p` to
//! the destination's. NCCL puts channel `c` of a GPU on its local NIC `c mod k`
//! (`src/graph/topo.cc`, `ncclTopoGetLocalNetType`: `net += channelId % netsPerGpu`) and its
//! search opens at least one channel a NIC (a channel's bandwidth is at most a NIC's,
//! `src/graph/search.cc`), so every NIC carries an equal share of each step. A job with at
//! least a channel a port has its channel `c`'s messages whole on port `c mod k`, as NCCL puts
//! them; any other message (a job of fewer channels than ports, which NCCL would not open;
//! flows; traces) is cut into equal parts, which is that placement with one channel a port.
//! What waits for the message waits for every part. The message's own row carries port 0's
//! part and the other ports' are appended, each taking the message's release (start,
//! dependencies, compute delay). Compute tasks, messages on a server's scale-up network and
//! messages of fewer bytes than ports stay whole, on port 0.

use crate::topology::Topology;
use crate::workload::collective::Tag;
use crate::workload::job::JobConfig;
use crate::workload::MessageSpec;

/// Stripes `messages` over `topo`'s NIC ports (see the module): the other ports' parts are
/// appended to `messages`, their dependency lists and tags; a message of one of `jobs` (by its
/// tag) with a channel a port goes whole on its channel's port (`channel_port`). Returns the
/// parts appended.
pub fn over_planes(
    topo: &Topology,
    messages: &mut Vec<MessageSpec>,
    deps: &mut Vec<Vec<u32>>,
    tags: &mut Vec<Tag>,
    jobs: &[JobConfig],
) -> usize {
    let planes = topo.planes();
    if planes < 2 {
        return 0;
    }
    let original = messages.len();
    // per message: its first appended part (the others follow it)
    let mut parts = vec![u32::MAX; original];
    for i in 0..original {
        let m = messages[i];
        let whole = m.is_compute() || m.bytes < u64::from(planes) || topo.scale_up_between(topo.slot(m.src), topo.slot(m.dst)).is_some();
        if whole {
            continue;
        }
        // port `p` of host `h` as the scenario numbers it, which `Topology::slot` maps to its
        // node with the rest of the messages
        let on = |h: u32, p: u32| h + p * topo.gpus();
        if let Some(p) = tags.get(i).and_then(|t| channel_port(jobs.get(t.job as usize)?, &m, planes)) {
            (messages[i].src, messages[i].dst) = (on(m.src, p), on(m.dst, p));
            continue;
        }
        let share = m.bytes / u64::from(planes);
        parts[i] = messages.len() as u32;
        for p in 1..planes {
            messages.push(MessageSpec { src: on(m.src, p), dst: on(m.dst, p), bytes: share, ..m });
            deps.push(deps[i].clone());
            if let Some(&tag) = tags.get(i) {
                tags.push(tag);
            }
        }
        messages[i].bytes = m.bytes - share * u64::from(planes - 1);
    }
    // what waits for a message waits for each of its parts
    let more = planes - 1;
    for list in deps.iter_mut() {
        let extra: Vec<u32> =
            list.iter().filter(|&&d| parts[d as usize] != u32::MAX).flat_map(|&d| parts[d as usize]..parts[d as usize] + more).collect();
        list.extend(extra);
    }
    messages.len() - original
}

/// The port NCCL puts message `m` of `job` on, where the job has a channel a port of `ports`:
/// its channel's (its queue pair over the job's `qps`) modulo the ports (`ncclTopoGetLocalNetType`);
/// `None` where it has fewer channels (the message is cut into a part a port).
fn channel_port(job: &JobConfig, m: &MessageSpec, ports: u32) -> Option<u32> {
    let qps = job.qps.unwrap_or(1).max(1);
    (job.channels.unwrap_or(1) >= ports).then(|| u32::from(m.qp) / qps % ports)
}
