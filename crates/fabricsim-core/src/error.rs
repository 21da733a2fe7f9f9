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
