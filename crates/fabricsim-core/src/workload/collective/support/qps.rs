//! A connection's queue pairs taken in turn (a job's `qps`).

/// Queue pairs a connection (a job's `qps`, NCCL's `NCCL_IB_QPS_PER_CONNECTION`) used in
/// NCCL's round-robin mode (`NCCL_IB_SPLIT_DATA_ON_QPS = 0`, the default since NCCL 2.20): a
/// connection's k-th request goes whole on its queue pair k mod `qps` (NCCL's
/// `src/transport/net_ib/common.h`, `ncclIbCommBaseGetQpForRequest`: `(id * nQps + qpIndex) %
/// nqps` with one QP a request, `id` the connection's request counter). A message here is
/// one request; the count runs on across a job's iterations, as NCCL's does across
/// operations. Channel `c`'s queue pairs are `c * qps` to `c * qps + qps - 1`.
#[derive(Debug)]
pub struct QpCycle {
    qps: u16,
    /// Requests posted so far on each (source, destination, channel).
    posted: rustc_hash::FxHashMap<(u32, u32, u16), u32>,
}

impl QpCycle {
    pub fn new(qps: u16) -> QpCycle {
        QpCycle { qps, posted: Default::default() }
    }

    /// The queue pair of the next request from `src` to `dst` on `channel`.
    pub(in crate::workload::collective) fn next(&mut self, src: u32, dst: u32, channel: u16) -> u16 {
        let k = self.posted.entry((src, dst, channel)).or_insert(0);
        let qp = channel * self.qps + (*k % u32::from(self.qps)) as u16;
        *k += 1;
        qp
    }
}
