//! Simulated time: integer picoseconds, and the exact serialization arithmetic.
//!
//! 4096 B at 400 Gb/s is exactly 81 920 ps. A rate that does not divide evenly rounds a
//! packet's serialization up to the next picosecond, the same way everywhere (the simulator
//! and the ideal-FCT calculation both call [`serialization`]), so exactness still holds.

/// Picoseconds since the start of the run.
pub type Time = u64;

pub const PS_PER_NS: Time = 1_000;
pub const PS_PER_US: Time = 1_000_000;
pub const PS_PER_S: Time = 1_000_000_000_000;

/// Time to put `bytes` on a wire of `rate_bps`, rounded up to a whole picosecond.
#[inline]
pub fn serialization(bytes: u64, rate_bps: u64) -> Time {
    // A packet's bits in picosecond-bits fit in u64 (up to ~2 MB); the u64 division is several
    // times cheaper than u128, and this runs once per packet per hop. Whole messages take
    // the u128 path.
    const FAST: u64 = u64::MAX / (8 * PS_PER_S);
    if bytes <= FAST {
        (bytes * 8 * PS_PER_S).div_ceil(rate_bps)
    } else {
        ((bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate_bps as u128)) as Time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact() {
        assert_eq!(serialization(4096, 400_000_000_000), 81_920);
        assert_eq!(serialization(4160, 400_000_000_000), 83_200);
        assert_eq!(serialization(64, 400_000_000_000), 1_280);
        // 1 byte at 3 bps is 8/3 s: rounds up.
        assert_eq!(serialization(1, 3), 2_666_666_666_667);
        // both paths agree at the boundary
        let big = u64::MAX / (8 * PS_PER_S);
        for b in [big - 1, big, big + 1] {
            let exact = ((b as u128 * 8 * PS_PER_S as u128).div_ceil(7)) as Time;
            assert_eq!(serialization(b, 7), exact);
        }
    }
}
