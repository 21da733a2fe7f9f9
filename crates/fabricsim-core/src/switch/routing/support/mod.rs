//! What the routing rules share that is not a rule: the header hash ECMP computes.

pub mod header_hash;
