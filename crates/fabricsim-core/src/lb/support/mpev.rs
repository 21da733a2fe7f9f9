//! The multi-part EV generator of PRIME (sec. III-D, "Generating MP-EV", Alg. 2, Fig. 5).
//!
//! One part per switch tier with up-ports; each part has an array holding a permutation of
//! that tier's up-port indices and a counter walking it. A packet's MP-EV is the concatenation
//! of `perm[t][counter[t]]` over the tiers. Counters are *dependent*: the tier-0 counter
//! advances on every packet and the tier-t+1 counter advances when tier t wraps around. When
//! a counter wraps, its permutation is reshuffled with Fisher-Yates, from a per-host seeded
//! stream, so hosts do not synchronize. Without reshuffling (`round_robin`) the order is a
//! fixed round robin.

use crate::engine::rng::Rng;
use crate::lb::Ev;
use crate::packet::mp_ev::MpEvLayout;

#[derive(Debug, Clone)]
pub struct MpEvGenerator {
    perms: Vec<Vec<u32>>,
    counters: Vec<u32>,
    shuffle: bool,
}

impl MpEvGenerator {
    /// Permutations start shuffled (`shuffle`) or as the identity.
    pub fn new(layout: &MpEvLayout, rng: &mut Rng, shuffle: bool) -> MpEvGenerator {
        let perms = layout
            .parts
            .iter()
            .map(|&(n, _, _)| {
                let mut p: Vec<u32> = (0..n).collect();
                if shuffle {
                    rng.shuffle(&mut p);
                }
                p
            })
            .collect();
        MpEvGenerator { perms, counters: vec![0; layout.parts.len()], shuffle }
    }

    /// Starts the counters at `offsets` (each reduced modulo its part's size).
    pub fn with_offsets(mut self, offsets: &[u32]) -> Self {
        for (c, (o, p)) in self.counters.iter_mut().zip(offsets.iter().zip(&self.perms)) {
            *c = o % p.len() as u32;
        }
        self
    }

    /// The next MP-EV; advances the dependent counters.
    pub fn next(&mut self, layout: &MpEvLayout, rng: &mut Rng) -> Ev {
        let mut ev = 0;
        for (t, &(_, shift, _)) in layout.parts.iter().enumerate() {
            ev |= self.perms[t][self.counters[t] as usize] << shift;
        }
        for t in 0..self.counters.len() {
            self.counters[t] += 1;
            if (self.counters[t] as usize) < self.perms[t].len() {
                break;
            }
            self.counters[t] = 0;
            if self.shuffle {
                rng.shuffle(&mut self.perms[t]);
            }
        }
        ev
    }

    /// Bits of state: the permutations and the counters.
    pub fn state_bits(&self, layout: &MpEvLayout) -> usize {
        layout.parts.iter().map(|&(n, _, bits)| (n as usize + 1) * bits as usize).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn each_round_uses_every_port_of_every_tier_exactly_once() {
        let layout = MpEvLayout::new(&[8, 4]);
        let mut rng = Rng::stream(1, Stream::Host, 3);
        let mut g = MpEvGenerator::new(&layout, &mut rng, true);
        let evs: Vec<Ev> = (0..8 * 4 * 5).map(|_| g.next(&layout, &mut rng)).collect();
        // tier 0: every window of 8 packets is a permutation of the 8 uplinks
        for w in evs.chunks(8) {
            let mut t0: Vec<u32> = w.iter().map(|&e| layout.part(e, 0)).collect();
            t0.sort_unstable();
            assert_eq!(t0, (0..8).collect::<Vec<_>>());
            // the tier-1 part is constant within a tier-0 round (dependent counters)
            assert!(w.iter().all(|&e| layout.part(e, 1) == layout.part(w[0], 1)));
        }
        // tier 1: every 4 tier-0 rounds use each tier-1 port once
        for w in evs.chunks(32) {
            let mut t1: Vec<u32> = w.chunks(8).map(|r| layout.part(r[0], 1)).collect();
            t1.sort_unstable();
            assert_eq!(t1, (0..4).collect::<Vec<_>>());
        }
        // rounds are reshuffled: not every tier-0 round has the same order
        let rounds: std::collections::HashSet<Vec<Ev>> = evs.chunks(8).map(|w| w.iter().map(|&e| layout.part(e, 0)).collect()).collect();
        assert!(rounds.len() > 10);
    }

    #[test]
    fn hosts_use_different_orders() {
        let layout = MpEvLayout::new(&[16]);
        let orders: std::collections::HashSet<Vec<Ev>> = (0..8)
            .map(|h| {
                let mut rng = Rng::stream(1, Stream::Host, h);
                let mut g = MpEvGenerator::new(&layout, &mut rng, true);
                (0..16).map(|_| g.next(&layout, &mut rng)).collect()
            })
            .collect();
        assert_eq!(orders.len(), 8);
    }

    #[test]
    fn without_shuffle_it_is_a_fixed_round_robin() {
        let layout = MpEvLayout::new(&[4, 2]);
        let mut rng = Rng::stream(1, Stream::Host, 0);
        let mut g = MpEvGenerator::new(&layout, &mut rng, false).with_offsets(&[1, 0]);
        let parts: Vec<(u32, u32)> = (0..8).map(|_| g.next(&layout, &mut rng)).map(|e| (layout.part(e, 0), layout.part(e, 1))).collect();
        assert_eq!(parts, vec![(1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (3, 1), (0, 0)]);
    }
}
