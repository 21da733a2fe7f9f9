//! Errors a user can cause. A bad scenario is rejected before the run with a message that
//! names the field, the value and what is allowed; nothing a user writes makes the core panic.

use thiserror::Error;

/// A scenario the core cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field}: {message}")]
pub struct ScenarioError {
    /// Dotted path of the field (`"switch.ecn.kmin"`, `"workload.flows[3].dst"`).
    pub field: String,
    /// What was wrong: the value given and what is allowed.
    pub message: String,
}

impl ScenarioError {
    /// `field: got VALUE; ALLOWED`.
    pub fn new(field: impl Into<String>, value: impl std::fmt::Display, allowed: impl std::fmt::Display) -> Self {
        ScenarioError { field: field.into(), message: format!("got {value}; {allowed}") }
    }
}

/// Shorthand for a check that fails with a [`ScenarioError`].
pub fn ensure(ok: bool, field: &str, value: impl std::fmt::Display, allowed: impl std::fmt::Display) -> Result<(), ScenarioError> {
    if ok {
        Ok(())
    } else {
        Err(ScenarioError::new(field, value, allowed))
    }
}

/// serde's messages in the scenario's words: `unknown field `x`, expected `a` or `b`` becomes
/// `unknown field "x"; allowed: a, b` (with `also`, the fields read before, first), and
/// `invalid type: floating point `1.5`, expected u32` becomes `got 1.5; allowed: a whole number
/// from 0 to 4294967295`: no Rust type names. Other messages are returned as they are.
pub fn readable(msg: &str, also: &[&str]) -> String {
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some((name, expected)) = rest.split_once('`') {
            let list = expected.trim_start_matches(", ").trim_start_matches("expected ").trim_start_matches("one of ");
            let mut allowed: Vec<String> = also.iter().map(|a| a.to_string()).collect();
            if !list.starts_with("there are no fields") {
                allowed.extend(
                    list.split(['`', ','])
                        .map(|w| w.trim().trim_start_matches("or ").trim())
                        .filter(|w| !w.is_empty() && *w != "or")
                        .map(String::from),
                );
            }
            let guess = closest(name, &allowed).map(|g| format!(" (did you mean {g:?}?)")).unwrap_or_default();
            let allowed = if allowed.is_empty() { "no fields here".to_string() } else { allowed.join(", ") };
            return format!("unknown field {name:?}{guess}; allowed: {allowed}");
        }
    }
    let Some((found, ty)) = msg.rsplit_once(", expected ") else { return msg.to_string() };
    let allowed = match ty {
        "u8" => format!("a whole number from 0 to {}", u8::MAX),
        "u16" => format!("a whole number from 0 to {}", u16::MAX),
        "u32" => format!("a whole number from 0 to {}", u32::MAX),
        "u64" | "usize" => format!("a whole number from 0 to {}", u64::MAX),
        "i32" => format!("a whole number from {} to {}", i32::MIN, i32::MAX),
        "i64" | "isize" => format!("a whole number from {} to {}", i64::MIN, i64::MAX),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" => "true or false".to_string(),
        _ => return msg.to_string(),
    };
    let got = found.trim_start_matches("invalid value: ").trim_start_matches("invalid type: ");
    let got = match got.split_once(' ') {
        Some(("integer" | "floating" | "boolean", v)) => v.trim_start_matches("point ").trim_matches('`').to_string(),
        Some(("string", v)) => v.to_string(),
        _ => match got {
            "map" => "a table".to_string(),
            "sequence" => "a list".to_string(),
            "null" | "unit value" => "nothing".to_string(),
            other => other.to_string(),
        },
    };
    format!("got {got}; allowed: {allowed}")
}

/// The one of `names` a misspelt `name` most likely meant: the nearest by edits (insertions,
/// deletions, substitutions, two neighbours swapped), if it is within a third of its length
/// (at least one) and no other is as near.
fn closest<'a>(name: &str, names: &'a [String]) -> Option<&'a str> {
    let edits = |a: &str, b: &str| {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        // d[i][j]: edits from a's first i letters to b's first j
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        d[0] = (0..=b.len()).collect();
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let mut e = (d[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1])).min(d[i - 1][j] + 1).min(d[i][j - 1] + 1);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    e = e.min(d[i - 2][j - 2] + 1);
                }
                d[i][j] = e;
            }
        }
        d[a.len()][b.len()]
    };
    let limit = (name.chars().count() / 3).max(1);
    let mut by: Vec<(usize, &str)> = names.iter().map(|n| (edits(name, n), n.as_str())).filter(|&(d, _)| d <= limit).collect();
    by.sort();
    match by.as_slice() {
        [(d, n), rest @ ..] if rest.first().is_none_or(|(e, _)| e > d) => Some(n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::readable;

    #[test]
    fn serde_messages_read_in_the_scenarios_words() {
        assert_eq!(
            readable("unknown field `kidn`, expected `evs_size` or `order`", &["kind"]),
            "unknown field \"kidn\" (did you mean \"kind\"?); allowed: kind, evs_size, order"
        );
        assert_eq!(
            readable("unknown field `x`, expected one of `size`, `start`, `class`", &[]),
            "unknown field \"x\"; allowed: size, start, class"
        );
        assert_eq!(readable("unknown field `x`, there are no fields", &[]), "unknown field \"x\"; allowed: no fields here");
        // a near miss is named (issue 68): one edit in four letters; none when two are as near
        assert_eq!(
            readable("unknown field `host`, expected `hosts` or `radix`", &["kind"]),
            "unknown field \"host\" (did you mean \"hosts\"?); allowed: kind, hosts, radix"
        );
        assert_eq!(
            readable("unknown field `sise`, expected `size` or `start`", &[]),
            "unknown field \"sise\" (did you mean \"size\"?); allowed: size, start"
        );
        assert_eq!(readable("unknown field `ab`, expected `ac` or `ad`", &[]), "unknown field \"ab\"; allowed: ac, ad");
        assert_eq!(readable("invalid value: integer `-1`, expected u32", &[]), "got -1; allowed: a whole number from 0 to 4294967295");
        assert_eq!(readable("invalid type: floating point `1.5`, expected u8", &[]), "got 1.5; allowed: a whole number from 0 to 255");
        assert_eq!(readable("invalid type: string \"x\", expected f64", &[]), "got \"x\"; allowed: a number");
        assert_eq!(readable("invalid type: map, expected a boolean", &[]), "got a table; allowed: true or false");
        // anything else is left as it is
        assert_eq!(readable("got 0B; allowed: a positive size", &[]), "got 0B; allowed: a positive size");
        assert_eq!(readable("invalid type: map, expected a string", &[]), "invalid type: map, expected a string");
    }
}
