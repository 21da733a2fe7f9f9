//! The multi-part EV (PRIME sec. III-D, Fig. 4): one part per switch tier with up-ports, each
//! the index of the up-port that tier's switch takes. Part t occupies `ceil(log2(up-ports at
//! tier t))` bits, tier 0 in the low bits; a part value beyond the port count wraps modulo it.
//! Hosts write it (`lb::mpev`), switches read it (`switch::routing`, rule `mp_ev`): it is part
//! of the packet format, so it lives here, below both.

/// Where each tier's part sits in a multi-part EV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpEvLayout {
    /// Per switch tier with up-ports: (up-port count, bit shift, bit width).
    pub parts: Vec<(u32, u32, u32)>,
}

impl MpEvLayout {
    pub fn new(up_ports: &[u32]) -> MpEvLayout {
        let mut shift = 0;
        let parts = up_ports
            .iter()
            .map(|&n| {
                let bits = 32 - (n.max(2) - 1).leading_zeros();
                let part = (n, shift, bits);
                shift += bits;
                part
            })
            .collect();
        MpEvLayout { parts }
    }

    /// The up-port index a switch of `tier` reads from `ev`.
    #[inline]
    pub fn part(&self, ev: u32, tier: usize) -> u32 {
        let (n, shift, bits) = self.parts[tier];
        ((ev >> shift) & ((1 << bits) - 1)) % n
    }

    /// Packs one up-port index per tier into an MP-EV.
    pub fn pack(&self, indices: &[u32]) -> u32 {
        self.parts.iter().zip(indices).map(|(&(_, shift, _), &i)| i << shift).sum()
    }

    /// Total bits of an MP-EV.
    pub fn bits(&self) -> u32 {
        self.parts.iter().map(|p| p.2).sum()
    }

    /// Number of distinct paths (MP-EVs).
    pub fn paths(&self) -> u32 {
        self.parts.iter().map(|p| p.0).product()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mp_ev_packs_and_unpacks_each_tier() {
        let l = MpEvLayout::new(&[8, 6]);
        assert_eq!(l.parts, vec![(8, 0, 3), (6, 3, 3)]);
        for a in 0..8 {
            for b in 0..6 {
                let ev = l.pack(&[a, b]);
                assert_eq!((l.part(ev, 0), l.part(ev, 1)), (a, b));
            }
        }
        assert_eq!(l.paths(), 48);
        assert_eq!(l.bits(), 6);
    }
}
