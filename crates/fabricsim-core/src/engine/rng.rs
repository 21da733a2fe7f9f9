//! Seeded random streams. One seed per run; each component (switch, host, workload generator)
//! draws from its own stream derived from (seed, component kind, index), so adding a draw in
//! one component never shifts another's sequence.

use rand_core::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Stream families; part of the derivation so that host 3 and switch 3 differ.
#[derive(Debug, Clone, Copy)]
#[repr(u64)]
pub enum Stream {
    Workload = 1,
    Host = 2,
    Switch = 3,
    Salt = 4,
    /// Fault draws: which links a `fraction` hits, and each lossy link's losses.
    Fault = 5,
    /// The `[mixed]` choice of pinned flows.
    Mixed = 6,
    /// A message's load balancers (index: the message's id): its own stream, whatever the
    /// order in which messages are made or started.
    Message = 7,
}

/// SplitMix64 finalizer: a good 64-bit mixer, used for seeds and ECMP hashing.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A deterministic random stream.
#[derive(Debug, Clone)]
pub struct Rng(Xoshiro256PlusPlus);

impl Rng {
    pub fn stream(seed: u64, kind: Stream, index: u64) -> Rng {
        let s = mix64(mix64(seed ^ mix64(kind as u64)) ^ index);
        Rng(Xoshiro256PlusPlus::seed_from_u64(s))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (Lemire's multiply-shift with rejection: unbiased). `n > 0`.
    #[inline]
    /// Uniform in [0, 1), 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(1, Stream::Host, 0).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut h0 = Rng::stream(1, Stream::Host, 0);
        let mut h1 = Rng::stream(1, Stream::Host, 1);
        let mut s0 = Rng::stream(1, Stream::Switch, 0);
        let x = h0.next_u64();
        assert_ne!(x, h1.next_u64());
        assert_ne!(x, s0.next_u64());
        assert_ne!(x, Rng::stream(2, Stream::Host, 0).next_u64());
    }

    #[test]
    fn below_is_uniform_enough() {
        let mut r = Rng::stream(7, Stream::Workload, 0);
        let mut counts = [0u32; 8];
        for _ in 0..80_000 {
            counts[r.below(8) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (9_000..11_000).contains(&c)), "{counts:?}");
    }
}
