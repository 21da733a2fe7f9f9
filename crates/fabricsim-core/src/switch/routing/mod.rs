//! Switch next-hop rules: which port of a forwarding table's group (`topology::tables`: two or
//! more next hops on shortest paths, a fat tree's up-ports) a packet takes; a single next hop
//! needs no rule. One file per rule, one line per rule in the list below.
//!
//! `routing` is one rule for every tier, or a list with one rule per switch tier that has
//! groups (leaves, then aggregation switches in 3 tiers). `"auto"` picks `mp_ev` for the
//! load balancers that write an MP-EV (`prime`, `co_prime`, `round_robin`) and `ecmp`
//! otherwise.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::rng::Rng;
use crate::packet::Packet;
use crate::registry::{named_kinds, AlgorithmInfo};
use crate::switch::SwitchModel;
pub use adaptive::{LoadSense, PortLoads};
pub use support::header_hash::{self, HashFunction};

pub mod support;

/// Declares the rules, one line each (`Variant => module`): each module has `INFO` and
/// `choose`, the member of a group a switch of that rule picks.
macro_rules! rules {
    ($($Variant:ident => $module:ident),+ $(,)?) => {
        $(pub mod $module;)+

        named_kinds! {
            /// A switch tier's next-hop rule.
            Rule, $($Variant => $module),+
        }

        /// The position in `group` (its ports) a switch picks by its rule, among `set`
        /// (positions) if routing restricts it. `None` for the rules that need randomness
        /// when no `rng` is given (path inspection).
        #[inline(always)]
        pub fn choose_up(r: &Route, group: &[u32], pkt: &Packet, set: Option<&[u32]>, rng: Option<&mut Rng>, loads: &mut PortLoads<'_>, m: &SwitchModel) -> Option<u32> {
            match r.rule {
                $(Rule::$Variant => $module::choose(r, group, pkt, set, rng, loads, m)),+
            }
        }
    };
}

rules! {
    Ecmp => ecmp,
    MpEv => mp_ev,
    Adaptive => adaptive,
    Spray => spray,
    Pin => pin,
}

/// `"auto"`: the rule the load balancer needs.
pub const AUTO: AlgorithmInfo = AlgorithmInfo {
    category: "routing",
    name: "auto",
    summary: "mp_ev for prime, co_prime and round_robin; ecmp otherwise",
    reference: "",
};

/// The rules `routing` accepts, `auto` last.
pub const RULES: &[AlgorithmInfo] = &[ecmp::INFO, mp_ev::INFO, adaptive::INFO, spray::INFO, pin::INFO, AUTO];

/// `routing = "ecmp"` or `routing = ["adaptive", "ecmp"]`; `None` is `"auto"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoutingConfig {
    All(Option<Rule>),
    PerTier(Vec<Option<Rule>>),
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig::All(None)
    }
}

fn rule_name(r: &Option<Rule>) -> &'static str {
    r.map_or(AUTO.name, Rule::name)
}

fn parse_rule<E: serde::de::Error>(name: &str) -> Result<Option<Rule>, E> {
    if name == AUTO.name {
        return Ok(None);
    }
    Rule::from_name(name).map(Some).ok_or_else(|| {
        let allowed: Vec<&str> = RULES.iter().map(|a| a.name).collect();
        E::custom(format!("unknown {name:?}; allowed: {}, or a list with one per switch tier", allowed.join(", ")))
    })
}

impl Serialize for RoutingConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RoutingConfig::All(r) => s.serialize_str(rule_name(r)),
            RoutingConfig::PerTier(v) => v.iter().map(rule_name).collect::<Vec<_>>().serialize(s),
        }
    }
}

impl schemars::JsonSchema for RoutingConfig {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RoutingConfig".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let rule = crate::registry::options::names(RULES);
        schemars::json_schema!({ "anyOf": [rule, { "type": "array", "items": rule }] })
    }
}

impl<'de> Deserialize<'de> for RoutingConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(name) => Ok(RoutingConfig::All(parse_rule(&name)?)),
            serde_json::Value::Array(items) => items
                .iter()
                .map(|v| v.as_str().ok_or_else(|| D::Error::custom(format!("expected a rule name, got {v}"))).and_then(parse_rule))
                .collect::<Result<Vec<_>, _>>()
                .map(RoutingConfig::PerTier),
            other => Err(D::Error::custom(format!("expected a rule name or a list of them, got {other}"))),
        }
    }
}

impl RoutingConfig {
    /// One rule per switch tier with up-ports; `auto` resolved with the load balancer's wish.
    pub fn resolve(&self, tiers_with_up: usize, auto: Rule) -> Result<Vec<Rule>, String> {
        let names: Vec<Option<Rule>> = match self {
            RoutingConfig::All(r) => vec![*r; tiers_with_up],
            RoutingConfig::PerTier(v) if v.len() == tiers_with_up => v.clone(),
            RoutingConfig::PerTier(v) => {
                return Err(format!("got {} rules; allowed: one rule, or one per switch tier with up-ports ({tiers_with_up})", v.len()))
            }
        };
        Ok(names.into_iter().map(|n| n.unwrap_or(auto)).collect())
    }
}

/// A switch's routing fields (hot path).
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// The switch tier (index into the per-tier rules); unused for top switches.
    pub tier: u8,
    pub rule: Rule,
    /// Per-switch ECMP hash salt.
    pub salt: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_tier_lists_must_match_the_tiers() {
        let one = RoutingConfig::All(None).resolve(2, Rule::MpEv).unwrap();
        assert_eq!(one, vec![Rule::MpEv, Rule::MpEv]);
        let per = RoutingConfig::PerTier(vec![Some(Rule::Adaptive), Some(Rule::Ecmp)]).resolve(2, Rule::Ecmp).unwrap();
        assert_eq!(per, vec![Rule::Adaptive, Rule::Ecmp]);
        assert!(RoutingConfig::PerTier(vec![Some(Rule::Ecmp)]).resolve(2, Rule::Ecmp).is_err());
    }
}
