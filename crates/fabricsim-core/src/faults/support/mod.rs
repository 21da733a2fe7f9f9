//! How faults take effect: the timeline of their changes and what a change leaves on a link
//! (the kinds are the files of `faults/`, one each).

pub mod link;
pub mod timeline;
