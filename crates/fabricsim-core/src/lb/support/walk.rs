//! The scrambled round robin of the reference simulator's oblivious and bitmap sprayers
//! (UEC htsim, `uec_mp.cpp`): a pass visits every EV of a power-of-two EVS once, EV
//! `index XOR mask`, and a new mask is drawn at random for each pass. Used by `bitmap` and by
//! `ops` with `order = "cycle"`.

use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::lb::Ev;

/// Checks an `evs_size` a walk can cover: a power of two (the mask is XORed into the index), at
/// most `max`; `when` says which setting needs the walk (`""` if the algorithm always does).
pub fn check_evs(evs_size: u32, max: u32, when: &str) -> Result<(), ScenarioError> {
    ensure(
        evs_size.is_power_of_two() && evs_size <= max,
        "lb.evs_size",
        evs_size,
        format!("allowed{when}: a power of two up to {max} (the walk XORs a per-pass mask into the index)"),
    )
}

/// Position in the walk over an EVS of `n` EVs (a power of two).
#[derive(Debug, Clone)]
pub struct XorWalk {
    n: u32,
    index: u32,
    mask: u32,
}

impl XorWalk {
    /// A walk over `n` EVs with its first mask drawn from `rng`.
    pub fn new(n: u32, rng: &mut Rng) -> XorWalk {
        debug_assert!(n.is_power_of_two());
        XorWalk { n, index: 0, mask: rng.below(n as u64) as u32 }
    }

    /// The EV at the current position.
    #[inline]
    pub fn current(&self) -> Ev {
        (self.index ^ self.mask) & (self.n - 1)
    }

    /// Moves to the next position; a new pass draws a new mask.
    #[inline]
    pub fn advance(&mut self, rng: &mut Rng) {
        self.index += 1;
        if self.index == self.n {
            self.index = 0;
            self.mask = rng.below(self.n as u64) as u32;
        }
    }

    /// The EV at the current position, then moves on.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> Ev {
        let ev = self.current();
        self.advance(rng);
        ev
    }

    /// Bits of state: the position and the mask.
    pub fn state_bits(&self) -> usize {
        2 * (32 - (self.n - 1).leading_zeros() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    #[test]
    fn every_pass_visits_each_ev_once_in_a_fresh_order() {
        let mut rng = Rng::stream(4, Stream::Host, 0);
        let mut w = XorWalk::new(64, &mut rng);
        let mut passes = Vec::new();
        for _ in 0..8 {
            let pass: Vec<Ev> = (0..64)
                .map(|_| {
                    let ev = w.current();
                    w.advance(&mut rng);
                    ev
                })
                .collect();
            let mut sorted = pass.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..64).collect::<Vec<Ev>>(), "a pass is a permutation of the EVS");
            passes.push(pass);
        }
        passes.dedup();
        assert!(passes.len() > 1, "the order changes between passes");
    }
}
