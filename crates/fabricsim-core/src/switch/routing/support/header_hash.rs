//! `switch.hash_function`: the hash a switch ASIC computes over a packet's header fields for
//! ECMP, as switch vendors offer them: CRC-16, CRC-32 and XOR folds (Broadcom's and
//! Mellanox/NVIDIA Spectrum's ECMP hash options; the seed is the CRC's initial value or the
//! fold's initial word), beside fabricsim's default `mix` (a salted 64-bit mix: an ideal hash).
//!
//! The fields are those of a RoCE v2 packet as the switch parses them, in header order: source
//! and destination IPv4 address (the hosts' ids), IP protocol 17 (UDP), UDP source port (the
//! packet's EV, its low 16 bits), UDP destination port 4791 (RoCE v2) and, with
//! `hash_fields = "five_tuple_qp"`, the 24-bit destination queue pair of the BTH. The index is
//! the hash modulo the ports. A fold of XORs is symmetric in the addresses and cancels equal
//! words: flows whose source XOR destination is the same, with the same ports, take the same
//! path, which a CRC does not do.

use serde::{Deserialize, Serialize};

/// `switch.hash_function`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HashFunction {
    /// A salted 64-bit mix of the fields: every field bit moves every index bit (an ideal hash).
    #[default]
    Mix,
    /// CRC-32 (IEEE 802.3, reflected), its initial value the switch's seed.
    Crc32,
    /// CRC-16/CCITT (polynomial 0x1021), its initial value the switch's seed.
    Crc16,
    /// The XOR of the fields' 16-bit words and the seed.
    Xor,
}

/// RoCE v2's UDP destination port.
const ROCE_PORT: u16 = 4791;

/// The header bytes hashed: addresses, protocol, ports and (`qp`) the destination queue pair.
fn fields(src: u32, dst: u32, ev: u32, qp: Option<u32>) -> ([u8; 16], usize) {
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&src.to_be_bytes());
    b[4..8].copy_from_slice(&dst.to_be_bytes());
    b[8] = 17;
    b[9..11].copy_from_slice(&(ev as u16).to_be_bytes());
    b[11..13].copy_from_slice(&ROCE_PORT.to_be_bytes());
    match qp {
        Some(q) => {
            b[13..16].copy_from_slice(&q.to_be_bytes()[1..4]);
            (b, 16)
        }
        None => (b, 13),
    }
}

/// CRC-32 (reflected, polynomial 0xEDB88320) of `data` from register `init` (the standard's
/// 0xFFFFFFFF), final XOR 0xFFFFFFFF.
pub fn crc32(init: u32, data: &[u8]) -> u32 {
    let mut c = init;
    for &byte in data {
        c ^= u32::from(byte);
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

/// CRC-16/CCITT (polynomial 0x1021, not reflected) of `data` from register `init` (0xFFFF for
/// CCITT-FALSE).
pub fn crc16(init: u16, data: &[u8]) -> u16 {
    let mut c = init;
    for &byte in data {
        c ^= u16::from(byte) << 8;
        for _ in 0..8 {
            c = if c & 0x8000 != 0 { (c << 1) ^ 0x1021 } else { c << 1 };
        }
    }
    c
}

/// The XOR of `data`'s big-endian 16-bit words (an odd byte as a word's high byte) and `init`.
pub fn xor16(init: u16, data: &[u8]) -> u16 {
    data.chunks(2).fold(init, |h, w| h ^ (u16::from(w[0]) << 8 | u16::from(*w.get(1).unwrap_or(&0))))
}

/// The port index (of `n`) `function` gives a packet's fields under seed `salt`.
pub fn index(function: HashFunction, salt: u64, src: u32, dst: u32, ev: u32, qp: Option<u32>, n: u32) -> u32 {
    let (b, len) = fields(src, dst, ev, qp);
    let data = &b[..len];
    let h = match function {
        HashFunction::Crc32 => crc32(0xFFFF_FFFF ^ salt as u32, data),
        HashFunction::Crc16 => u32::from(crc16(0xFFFF ^ salt as u16, data)),
        HashFunction::Xor => u32::from(xor16(salt as u16, data)),
        HashFunction::Mix => unreachable!("the mix is ecmp::ecmp_index"),
    };
    h % n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crcs_give_their_standard_check_values() {
        // the catalogue's check values of "123456789" (CRC-32/ISO-HDLC, CRC-16/IBM-3740 a.k.a. CCITT-FALSE)
        assert_eq!(crc32(0xFFFF_FFFF, b"123456789"), 0xCBF4_3926);
        assert_eq!(crc16(0xFFFF, b"123456789"), 0x29B1);
        assert_eq!(xor16(0, &[0x12, 0x34, 0x56, 0x78, 0x9A]), 0x1234 ^ 0x5678 ^ 0x9A00);
    }

    #[test]
    fn a_fold_of_xors_is_symmetric_and_cancels_where_a_crc_does_not() {
        let i = |f, s, d| index(f, 7, s, d, 5, None, 1 << 16);
        assert_eq!(i(HashFunction::Xor, 3, 9), i(HashFunction::Xor, 9, 3));
        // source XOR destination alike: the same word left
        assert_eq!(i(HashFunction::Xor, 1, 17), i(HashFunction::Xor, 2, 18));
        for f in [HashFunction::Crc32, HashFunction::Crc16] {
            assert_ne!(i(f, 1, 17), i(f, 2, 18), "{f:?}");
        }
    }
}
