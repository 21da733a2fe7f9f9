//! What the collective algorithms serve besides jobs: one collective expanded for a trace
//! importer, and NCCL's tuner for `algorithm = "auto"` (the algorithms are the files of
//! `collective/`, one each).

pub mod expand;
pub mod nccl;
pub mod out;
pub mod qps;
pub mod tuner;
