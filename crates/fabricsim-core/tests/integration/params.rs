//! Every kind's parameters, read from its `Config`'s declaration (what docs/scenario.md's tables
//! and the scenario schema are generated from), name exactly the fields serde reads, each with a
//! meaning; a parameter with an example is required (the scenario is refused without it), every
//! field the schema requires has one, and the examples are valid.

use std::collections::BTreeSet;

use fabricsim_core::faults::FaultConfig;
use fabricsim_core::lb::LbConfig;
use fabricsim_core::registry::{KindParams, Param};
use fabricsim_core::topology::TopologyConfig;
use fabricsim_core::workload::WorkloadConfig;
use fabricsim_core::{check, parameters, Scenario};

/// The table as a scenario writes it, with `kind` and every required parameter's example
/// (a fault that takes a `link` hits one).
fn table(kind: &str, params: &[Param], without: Option<&str>) -> serde_json::Value {
    let mut t = serde_json::Map::new();
    t.insert("kind".into(), kind.into());
    for p in params {
        if let Some(example) = &p.example {
            if Some(p.name.as_str()) != without {
                t.insert(p.name.clone(), serde_json::from_str(example).expect("an example is JSON"));
            }
        }
    }
    serde_json::Value::Object(t)
}

fn scenario(table_name: &str, t: serde_json::Value) -> Result<(), String> {
    let json = match table_name {
        "faults" => serde_json::json!({ "faults": [t] }),
        other => serde_json::json!({ other: t }),
    };
    let s = Scenario::from_json(&json.to_string()).map_err(|e| e.to_string())?;
    check(&s).map_err(|e| e.to_string())
}

#[test]
fn every_kinds_params_name_exactly_its_configs_fields() {
    type FieldsOf = fn(&str) -> Vec<&'static str>;
    let tables: [(&str, Vec<KindParams>, FieldsOf); 4] = [
        ("lb", LbConfig::params(), LbConfig::fields_of),
        ("workload", WorkloadConfig::params(), WorkloadConfig::fields_of),
        ("faults", FaultConfig::params(), FaultConfig::fields_of),
        ("topology", TopologyConfig::params(), TopologyConfig::fields_of),
    ];
    let mut kinds = 0;
    for (name, table_params, fields_of) in &tables {
        for (kind, params) in table_params {
            kinds += 1;
            let fields: BTreeSet<&str> = fields_of(kind).into_iter().collect();
            let named: BTreeSet<&str> = params.iter().map(|p| p.name.as_str()).collect();
            assert_eq!(named.len(), params.len(), "{name} {kind}: a parameter listed twice");
            assert_eq!(named, fields, "{name} {kind}: the declaration's parameters against the fields serde reads");
            for p in params {
                assert!(p.doc.len() > 10 && p.doc.ends_with('.'), "{name} {kind}.{}: a sentence saying what it means", p.name);
            }
        }
    }
    assert_eq!(kinds, 12 + 5 + 7 + 5);
    assert_eq!(parameters().len(), tables.iter().map(|t| t.1.iter().map(|k| k.1.len()).sum::<usize>()).sum::<usize>());
}

#[test]
fn required_parameters_are_required_and_their_examples_valid() {
    for (name, table_params) in [("lb", LbConfig::params()), ("workload", WorkloadConfig::params()), ("faults", FaultConfig::params())] {
        for (kind, params) in &table_params {
            let mut full = table(kind, params, None);
            if name == "faults" && params.iter().any(|p| p.name == "link") {
                full["link"] = "leaf0:up0".into();
            }
            scenario(name, full.clone()).unwrap_or_else(|e| panic!("{name} {kind} with its examples: {e}"));
            for p in params.iter().filter(|p| p.example.is_some()) {
                let mut t = full.clone();
                t.as_object_mut().unwrap().remove(&p.name);
                let err = scenario(name, t).expect_err(&format!("{name} {kind} without {}", p.name));
                assert!(err.contains(&p.name), "{name} {kind} without {}: {err}", p.name);
            }
        }
    }
}

#[test]
fn every_field_a_kind_requires_has_an_example() {
    use schemars::JsonSchema;
    let mut g = schemars::SchemaGenerator::default();
    let tables = [
        ("lb", LbConfig::json_schema(&mut g), LbConfig::params()),
        ("workload", WorkloadConfig::json_schema(&mut g), WorkloadConfig::params()),
        ("faults", FaultConfig::json_schema(&mut g), FaultConfig::params()),
        ("topology", TopologyConfig::json_schema(&mut g), TopologyConfig::params()),
    ];
    let mut required = 0;
    for (table, schema, params) in tables {
        let v = schema.to_value();
        for alt in v["anyOf"].as_array().expect("one table a kind") {
            let kind = alt["properties"]["kind"]["const"].as_str().expect("each kind names itself");
            let own = &params.iter().find(|(k, _)| *k == kind).expect("a kind's parameters").1;
            for name in alt.get("required").and_then(|r| r.as_array()).into_iter().flatten().filter_map(|r| r.as_str()) {
                if name != "kind" {
                    required += 1;
                    assert!(own.iter().any(|p| p.name == name && p.example.is_some()), "{table} {kind}.{name}: required, with no example");
                }
            }
        }
    }
    assert!(required >= 10, "the kinds require {required} fields");
}
