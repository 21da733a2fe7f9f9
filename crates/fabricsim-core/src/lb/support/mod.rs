//! What several load balancers share (the kinds are the files of `lb/`, one each).

pub mod mpev;
pub mod walk;
