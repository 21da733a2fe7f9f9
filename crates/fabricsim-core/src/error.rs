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
            let allowed = if allowed.is_empty() { "no fields here".to_string() } else { allowed.join(", ") };
            return format!("unknown field {name:?}; allowed: {allowed}");
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

#[cfg(test)]
mod tests {
    use super::readable;

    #[test]
    fn serde_messages_read_in_the_scenarios_words() {
        assert_eq!(
            readable("unknown field `kidn`, expected `evs_size` or `order`", &["kind"]),
            "unknown field \"kidn\"; allowed: kind, evs_size, order"
        );
        assert_eq!(
            readable("unknown field `x`, expected one of `size`, `start`, `class`", &[]),
            "unknown field \"x\"; allowed: size, start, class"
        );
        assert_eq!(readable("unknown field `x`, there are no fields", &[]), "unknown field \"x\"; allowed: no fields here");
        assert_eq!(readable("invalid value: integer `-1`, expected u32", &[]), "got -1; allowed: a whole number from 0 to 4294967295");
        assert_eq!(readable("invalid type: floating point `1.5`, expected u8", &[]), "got 1.5; allowed: a whole number from 0 to 255");
        assert_eq!(readable("invalid type: string \"x\", expected f64", &[]), "got \"x\"; allowed: a number");
        assert_eq!(readable("invalid type: map, expected a boolean", &[]), "got a table; allowed: true or false");
        // anything else is left as it is
        assert_eq!(readable("got 0B; allowed: a positive size", &[]), "got 0B; allowed: a positive size");
        assert_eq!(readable("invalid type: map, expected a string", &[]), "invalid type: map, expected a string");
    }
}
