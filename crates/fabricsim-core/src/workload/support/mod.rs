//! What the workload kinds and jobs share: message dependencies and the expansion of
//! `[[jobs]]` (the kinds are the files of `workload/`, one each).

pub mod deps;
pub mod job;
pub mod jobs_table;
pub mod making;
pub mod relay;
pub mod stripe;
pub mod window;
