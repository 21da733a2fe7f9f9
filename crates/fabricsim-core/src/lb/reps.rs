//! `reps`: REPS, recycled entropy packet spraying: the algorithm of `arcane` under the name
//! the UEC reference simulator uses (ARCANE sec. 3, Alg. 1-2); same parameters, same state.

use crate::registry::AlgorithmInfo;
pub use super::arcane::Config;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "lb",
    name: "reps",
    summary: "the same algorithm as arcane (REPS, recycled entropy packet spraying)",
    reference: "ARCANE sec. 3, Alg. 1-2",
};
