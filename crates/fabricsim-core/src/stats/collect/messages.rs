//! The flows table's columns read from the messages themselves (their hosts, sizes, starts,
//! classes, paths and ideal FCTs), made as the run's list of messages gives its memory back.

use std::borrow::Cow;

use super::MessageColumns;
use crate::host::message::Message;
use crate::host::TransportModel;
use crate::stats::least::IdealFcts;
use crate::stats::Keep;
use crate::topology::Routes;

impl MessageColumns {
    /// The columns read from the messages themselves, made from the last message to the first;
    /// a list given whole (`Cow::Owned`, a finished run's) gives its memory back as they are
    /// made (a chunk at a time: the columns' pages are touched as the list's are released), so
    /// that the list and its columns, each about 40 bytes a message, never take their memory
    /// together; a borrowed one (a run that goes on) is only read.
    pub fn add_messages(&mut self, mut messages: Cow<'_, [Message]>, routes: &Routes, transport: &TransportModel, keep: &Keep) {
        const CHUNK: usize = 1 << 16;
        let n = messages.len();
        let topo = routes.topology();
        // zeroed columns: their pages are the system's until written
        let u64s = |name: &str| if keep.has(name) { vec![0u64; n] } else { Vec::new() };
        let (mut src, mut dst, mut class, mut path_links) = (u64s("src"), u64s("dst"), u64s("class"), u64s("path_links"));
        // (the start always: an FCT runs from it where nothing was sent)
        let (mut bytes, mut start, mut ideal) = (vec![0u64; n], vec![0u64; n], vec![0u64; n]);
        let mut pinned = if keep.has("pinned") { vec![false; n] } else { Vec::new() };
        let (mut scale_up, mut compute) = (vec![false; n], vec![false; n]);
        // the ideal depends only on the route, the size and the connections: computed once
        // per (route, size, connections)
        let mut fcts = IdealFcts::default();
        let mut hi = n;
        while hi > 0 {
            let lo = hi.saturating_sub(CHUNK);
            for (i, m) in messages[lo..hi].iter().enumerate().map(|(k, m)| (lo + k, m)) {
                let spec = &m.spec;
                // the engine's host ids are leaf slots; the table speaks the scenario's host ids
                if let Some(x) = src.get_mut(i) {
                    *x = topo.host(spec.src) as u64;
                }
                if let Some(x) = dst.get_mut(i) {
                    *x = topo.host(spec.dst) as u64;
                }
                if let Some(x) = class.get_mut(i) {
                    *x = spec.class as u64;
                }
                if let Some(x) = pinned.get_mut(i) {
                    *x = spec.pinned();
                }
                if let Some(x) = path_links.get_mut(i) {
                    // compute tasks and scale-up messages cross no fabric link
                    *x = if m.on_scale_up() || spec.is_compute() { 0 } else { topo.links(spec.src, spec.dst) as u64 };
                }
                (bytes[i], start[i]) = (spec.bytes, spec.start);
                ideal[i] = fcts.of(routes, transport, spec, m.count);
                scale_up[i] = m.on_scale_up();
                compute[i] = spec.is_compute();
            }
            if let Cow::Owned(list) = &mut messages {
                list.truncate(lo);
                list.shrink_to_fit();
            }
            hi = lo;
        }
        (self.src, self.dst, self.start, self.class, self.source.path_links) = (src, dst, start, class, path_links);
        (self.bytes, self.ideal, self.pinned, self.scale_up, self.compute) = (bytes, ideal, pinned, scale_up, compute);
    }
}
