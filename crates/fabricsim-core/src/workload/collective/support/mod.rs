//! What the collective algorithms serve besides jobs: one collective expanded for a trace
//! importer (the algorithms are the files of `collective/`, one each).

pub mod expand;
