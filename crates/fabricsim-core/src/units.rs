//! Quantities with units, as a person writes them in a scenario: `"400Gbps"`, `"500ns"`,
//! `"8MiB"`, `"0.2bdp"`.
//!
//! Every quantity is parsed exactly: the decimal text is read as a rational number and scaled
//! with integer arithmetic, so `"1.5MB"` is exactly 1 500 000 bytes and `"0.7bdp"` of a 100-packet
//! BDP is exactly 70 packets. A quantity that does not land on a whole unit of the core
//! (`"1.5ps"`, `"0.3B"`) is rejected rather than rounded. Plain numbers without a unit are
//! rejected too: a bare `4096` could be bytes, bits or packets.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

use crate::time::Time;

/// A non-negative decimal number read exactly: `value = mantissa / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    pub mantissa: u128,
    pub scale: u32,
}

impl Decimal {
    /// Parses `"12"`, `"1.5"`, `".25"`; `None` for anything else (signs, exponents, junk).
    pub fn parse(s: &str) -> Option<Decimal> {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        let digits = |t: &str| t.bytes().all(|c| c.is_ascii_digit());
        if !digits(int) || !digits(frac) || int.len() + frac.len() > 30 {
            return None;
        }
        let mantissa: u128 = format!("{int}{frac}").parse().ok()?;
        Some(Decimal { mantissa, scale: frac.len() as u32 })
    }

    /// `self * factor`, if it is a whole number that fits in u64.
    pub fn times_exact(self, factor: u128) -> Option<u64> {
        let den = 10u128.pow(self.scale);
        let num = self.mantissa.checked_mul(factor)?;
        if num % den != 0 {
            return None;
        }
        u64::try_from(num / den).ok()
    }

    /// `self * tenths / 10`, exactly.
    pub fn tenths(self, tenths: u128) -> Decimal {
        Decimal { mantissa: self.mantissa.saturating_mul(tenths), scale: self.scale + 1 }
    }

    /// `ceil(self * factor)`.
    pub fn times_ceil(self, factor: u128) -> u64 {
        let den = 10u128.pow(self.scale);
        let num = self.mantissa.saturating_mul(factor);
        u64::try_from(num.div_ceil(den)).unwrap_or(u64::MAX)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scale == 0 {
            return write!(f, "{}", self.mantissa);
        }
        let den = 10u128.pow(self.scale);
        let frac = format!("{:0width$}", self.mantissa % den, width = self.scale as usize);
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() {
            write!(f, "{}", self.mantissa / den)
        } else {
            write!(f, "{}.{}", self.mantissa / den, frac)
        }
    }
}

/// Splits `"400 Gbps"` into the number and the unit.
fn split_unit(s: &str) -> (&str, &str) {
    // ASCII spaces only: a no-break space (copied from a web page) is not a separator, so
    // "400\u{a0}Gbps" names an unknown unit instead of passing for "400 Gbps"
    let s = s.trim_ascii();
    let at = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    (s[..at].trim_ascii(), s[at..].trim_ascii())
}

/// Parses `text` against a unit table (unit spelling, factor to the base unit).
fn parse_with(text: &str, units: &[(&str, u128)]) -> Option<u64> {
    let (num, unit) = split_unit(text);
    let factor = units.iter().find(|(u, _)| *u == unit)?.1;
    Decimal::parse(num)?.times_exact(factor)
}

/// Writes `value` in the largest unit that divides it exactly (`units` in increasing order).
fn format_with(value: u64, units: &[(&str, u128)]) -> String {
    let v = value as u128;
    let (unit, factor) = units.iter().rev().find(|(_, f)| v >= *f && v.is_multiple_of(*f)).copied().unwrap_or(units[0]);
    format!("{}{}", v / factor, unit)
}

const RATE_UNITS: &[(&str, u128)] =
    &[("bps", 1), ("Kbps", 1_000), ("Mbps", 1_000_000), ("Gbps", 1_000_000_000), ("Tbps", 1_000_000_000_000)];
const TIME_UNITS: &[(&str, u128)] = &[("ps", 1), ("ns", 1_000), ("us", 1_000_000), ("ms", 1_000_000_000), ("s", 1_000_000_000_000)];
const SIZE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];
/// Display prefers binary units, then decimal ones.
const SIZE_DISPLAY: &[(&str, u128)] = &[("B", 1), ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000)];
const SIZE_DISPLAY_BIN: &[(&str, u128)] = &[("B", 1), ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)];

fn unit_list(units: &[(&str, u128)]) -> String {
    units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
}

macro_rules! quantity {
    ($name:ident, $what:literal, $example:literal, $units:expr, $fmt:expr, $max:expr) => {
        impl $name {
            /// The largest value a scenario may write: far beyond any fabric, small enough that
            /// sums of such values never wrap the core's u64 arithmetic.
            pub const MAX: u64 = $max;

            /// Parses the unit string; the error says what is allowed.
            pub fn parse(text: &str) -> Result<Self, String> {
                match parse_with(text, $units) {
                    Some(v) if v <= Self::MAX => Ok($name(v)),
                    Some(_) => Err(format!("got {}; allowed: at most {}", text.trim(), $fmt(Self::MAX))),
                    None => Err(format!(
                        concat!("expected ", $what, " with a unit like ", $example, " (units: {}), got {:?}"),
                        unit_list($units),
                        text
                    )),
                }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&$fmt(self.0))
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(UnitVisitor::<$name>::new($what, $example, $units, $name::parse))
            }
        }
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                unit_schema(concat!($what, " with a unit like ", $example), $units, false)
            }
        }
    };
}

/// A link rate in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(pub u64);
/// A duration in picoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub Time);
/// A size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size(pub u64);

impl Duration {
    /// Zero (a default left out of a recorded scenario).
    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }
}

fn format_size(v: u64) -> String {
    let bin = format_with(v, SIZE_DISPLAY_BIN);
    let dec = format_with(v, SIZE_DISPLAY);
    if bin.len() <= dec.len() {
        bin
    } else {
        dec
    }
}

// 100 Tb/s, 100 000 s (about 28 hours of simulated time), 1 TiB
quantity!(Rate, "a rate", "\"400Gbps\"", RATE_UNITS, |v| format_with(v, RATE_UNITS), 100_000_000_000_000);
quantity!(Duration, "a duration", "\"500ns\"", TIME_UNITS, |v| format_with(v, TIME_UNITS), 100_000 * 1_000_000_000_000);
quantity!(Size, "a size", "\"4096B\" or \"2MiB\"", SIZE_UNITS, format_size, 1 << 40);

/// A byte quantity given either in bytes or as a fraction of the fabric's BDP (`"0.2bdp"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeOrBdp {
    Bytes(u64),
    Bdp(Decimal),
}

impl SizeOrBdp {
    pub fn parse(text: &str) -> Result<Self, String> {
        let (num, unit) = split_unit(text);
        if unit == "bdp" {
            if let Some(d) = Decimal::parse(num) {
                return Ok(SizeOrBdp::Bdp(d));
            }
        } else if let Ok(Size(b)) = Size::parse(text) {
            return Ok(SizeOrBdp::Bytes(b));
        }
        Err(format!(
            "expected a size like \"420160B\" or a fraction of the BDP like \"0.2bdp\" (units: {}, bdp), got {:?}",
            unit_list(SIZE_UNITS),
            text
        ))
    }

    /// `tenths` tenths of this quantity (a BDP fraction stays one; bytes round down).
    pub fn tenths(self, tenths: u64) -> SizeOrBdp {
        match self {
            SizeOrBdp::Bytes(b) => SizeOrBdp::Bytes(b / 10 * tenths + b % 10 * tenths / 10),
            SizeOrBdp::Bdp(d) => SizeOrBdp::Bdp(d.tenths(tenths as u128)),
        }
    }

    /// Bytes; a BDP fraction rounds up to whole packets of `mtu` bytes (DESIGN.md, BDP).
    pub fn resolve(self, bdp_packets: u64, mtu: u64) -> u64 {
        match self {
            SizeOrBdp::Bytes(b) => b,
            SizeOrBdp::Bdp(d) => d.times_ceil(bdp_packets as u128).saturating_mul(mtu),
        }
    }
}

impl fmt::Display for SizeOrBdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeOrBdp::Bytes(b) => f.write_str(&format_size(*b)),
            SizeOrBdp::Bdp(d) => write!(f, "{d}bdp"),
        }
    }
}
impl Serialize for SizeOrBdp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
impl<'de> Deserialize<'de> for SizeOrBdp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor::<SizeOrBdp>::new(
            "a size or BDP fraction",
            "\"420160B\" or \"0.2bdp\"",
            SIZE_UNITS,
            SizeOrBdp::parse,
        ))
    }
}

impl schemars::JsonSchema for SizeOrBdp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SizeOrBdp".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        unit_schema("a size, or a fraction of the BDP, like \"420160B\" or \"0.2bdp\"", SIZE_UNITS, true)
    }
}

/// The schema of a quantity written as a string with one of `units` (and, if `bdp`, `bdp`):
/// what a scenario's editor checks as it is typed (the core's parse is the authority).
fn unit_schema(what: &str, units: &[(&str, u128)], bdp: bool) -> schemars::Schema {
    let mut names: Vec<&str> = units.iter().map(|(u, _)| *u).collect();
    if bdp {
        names.push("bdp");
    }
    schemars::json_schema!({
        "type": "string",
        "description": what,
        "pattern": format!("^\\s*([0-9]+\\.?[0-9]*|\\.[0-9]+)\\s*({})\\s*$", names.join("|")),
    })
}

/// Accepts only strings; numbers get an error that asks for a unit.
struct UnitVisitor<T> {
    what: &'static str,
    example: &'static str,
    units: &'static [(&'static str, u128)],
    parse: fn(&str) -> Result<T, String>,
}

impl<T> UnitVisitor<T> {
    fn new(
        what: &'static str,
        example: &'static str,
        units: &'static [(&'static str, u128)],
        parse: fn(&str) -> Result<T, String>,
    ) -> Self {
        UnitVisitor { what, example, units, parse }
    }
    fn unitless<E: de::Error>(&self, v: impl fmt::Display) -> E {
        E::custom(format!(
            "expected {} with a unit like {} (units: {}), got the unit-less number {v}",
            self.what,
            self.example,
            unit_list(self.units)
        ))
    }
}

impl<'de, T> Visitor<'de> for UnitVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} with a unit like {}", self.what, self.example)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Err(self.unitless(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Err(self.unitless(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(self.unitless(v))
    }
}

/// A parameter that is either `"auto"` (derived from the fabric) or a value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum AutoOr<T> {
    #[default]
    Auto,
    Value(T),
}

impl<T: Copy> AutoOr<T> {
    pub fn or(self, auto: T) -> T {
        match self {
            AutoOr::Auto => auto,
            AutoOr::Value(v) => v,
        }
    }
}

impl<T: Serialize> Serialize for AutoOr<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AutoOr::Auto => s.serialize_str("auto"),
            AutoOr::Value(v) => v.serialize(s),
        }
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for AutoOr<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("AutoOr_{}", T::schema_name()).into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        keyword_or_schema::<T>(g, "auto")
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for AutoOr<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        if v.as_str() == Some("auto") {
            return Ok(AutoOr::Auto);
        }
        T::deserialize(v)
            .map(AutoOr::Value)
            .map_err(|e| serde::de::Error::custom(format!("{}, or \"auto\"", crate::error::readable(&e.to_string(), &[]))))
    }
}

/// Deserializes a keyword (`"auto"`, `"adaptive"`) as `None`, or a value `parse` reads from a
/// string as `Some`; anything else is refused naming `expected` and the keyword.
pub fn keyword_or<'de, D: Deserializer<'de>, T>(
    d: D,
    keyword: &str,
    parse: impl Fn(&str) -> Result<T, String>,
    expected: &str,
) -> Result<Option<T>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Text(String),
        Other(serde_json::Value),
    }
    match Raw::deserialize(d)? {
        Raw::Text(t) if t == keyword => Ok(None),
        Raw::Text(t) => parse(&t).map(Some).map_err(|e| serde::de::Error::custom(format!("{e}, or \"{keyword}\""))),
        Raw::Other(v) => Err(serde::de::Error::custom(format!("expected \"{keyword}\" or {expected}, got {v}"))),
    }
}

/// The schema of a value that is either `keyword` or a `T` (what [`keyword_or`] and [`AutoOr`]
/// read).
pub fn keyword_or_schema<T: schemars::JsonSchema>(g: &mut schemars::SchemaGenerator, keyword: &str) -> schemars::Schema {
    schemars::json_schema!({ "anyOf": [{ "const": keyword }, g.subschema_for::<T>()] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exactly() {
        assert_eq!(Rate::parse("400Gbps").unwrap(), Rate(400_000_000_000));
        assert_eq!(Rate::parse("1.6Tbps").unwrap(), Rate(1_600_000_000_000));
        assert_eq!(Duration::parse("1us").unwrap(), Duration(1_000_000));
        assert_eq!(Duration::parse("8.338us").unwrap(), Duration(8_338_000));
        assert_eq!(Size::parse("8MiB").unwrap(), Size(8 << 20));
        assert_eq!(Size::parse("1.5MB").unwrap(), Size(1_500_000));
        assert_eq!(Size::parse("4096 B").unwrap(), Size(4096));
        assert_eq!(Size::parse("1TiB").unwrap(), Size(1 << 40));
        assert_eq!(Size::parse("0.5TB").unwrap(), Size(500_000_000_000));
        assert!(Size::parse("1.5TiB").unwrap_err().contains("at most"));
    }

    #[test]
    fn rejects_bad_text() {
        for bad in ["-5MiB", "5", "5 parsecs", "1.5ps", "", "Gbps", "1e3B", "0.3B"] {
            assert!(Size::parse(bad).is_err() || Duration::parse(bad).is_err(), "{bad}");
        }
        assert!(Duration::parse("1.5ps").is_err());
        // bounded so that sums of user values never wrap
        assert_eq!(Duration::parse("100000s").unwrap(), Duration(Duration::MAX));
        let e = Duration::parse("18446744s").unwrap_err();
        assert!(e.contains("18446744s") && e.contains("at most 100000s"), "{e}");
        assert!(Rate::parse("101Tbps").unwrap_err().contains("at most 100Tbps"));
        let e = Size::parse("2000GiB").unwrap_err();
        assert!(e.contains("2000GiB") && e.contains(&format!("at most {}", Size(Size::MAX))), "{e}");
        assert_eq!(Duration::MAX.checked_mul(184), Some(184 * Duration::MAX), "184 of them still fit");
        let msg = Size::parse("-5MiB").unwrap_err();
        assert!(msg.contains("-5MiB") && msg.contains("MiB"), "{msg}");
        // a no-break space is no separator (ASCII spaces are)
        assert!(Rate::parse("400\u{a0}Gbps").is_err());
        assert_eq!(Rate::parse(" 400 Gbps ").unwrap(), Rate(400_000_000_000));
    }

    #[test]
    fn displays_round_trip() {
        for t in ["400Gbps", "100Mbps", "1bps"] {
            assert_eq!(Rate::parse(t).unwrap().to_string(), t);
        }
        for t in ["500ns", "1us", "70us", "100ms", "83200ps"] {
            assert_eq!(Duration::parse(t).unwrap().to_string(), t);
        }
        for t in ["4160B", "8MiB", "64B", "1500KB"] {
            assert_eq!(Size::parse(t).unwrap().to_string(), t);
        }
        assert_eq!(SizeOrBdp::parse("0.2bdp").unwrap().to_string(), "0.2bdp");
    }

    #[test]
    fn bdp_fractions_round_up_to_packets_exactly() {
        let half = SizeOrBdp::parse("0.7bdp").unwrap();
        assert_eq!(half.resolve(100, 4160), 70 * 4160);
        assert_eq!(SizeOrBdp::parse("0.2bdp").unwrap().resolve(101, 4160), 21 * 4160);
        assert_eq!(SizeOrBdp::parse("1bdp").unwrap().resolve(101, 4160), 420_160);
    }

    #[test]
    fn unitless_numbers_are_rejected_with_a_hint() {
        let err = serde_json::from_str::<Size>("4096").unwrap_err().to_string();
        assert!(err.contains("unit-less number 4096"), "{err}");
    }
}
