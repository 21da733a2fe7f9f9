//! Options declared once. Each configuration struct declares its fields with serde's
//! attributes (name, default, `deny_unknown_fields`), each field's meaning in its doc comment,
//! and, for a field a scenario must give, a valid value (`#[schemars(example =
//! example("..."))]`). `schemars` reads that one declaration into a JSON schema (as ruff
//! generates `ruff.schema.json` from its options' declarations), and everything else is read
//! from the schema: the kinds' parameter lists ([`params_of`]: docs/scenario.md's tables,
//! Python's field lists), which top-level fields are tables and which lists of tables (the
//! array-versus-table check, [`table_shapes`]), and the schema file editors check a scenario
//! against ([`scenario_schema`]: `fabricsim schema`).

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::registry::AlgorithmInfo;

/// A parameter of a `kind`-tagged table (an `[lb]` algorithm's, a fault's, a workload's): its
/// name, what it means, and, for one a scenario must give, a valid value (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Param {
    pub name: String,
    pub doc: String,
    /// A valid value (JSON) for a parameter that must be given; `None` where it may be left out.
    pub example: Option<String>,
}

/// The value of a `#[schemars(example = example("..."))]` attribute: JSON text, parsed.
pub fn example(json: &str) -> Value {
    serde_json::from_str(json).expect("an option's example is JSON")
}

/// The schema of `T`, written out where it would be a reference to a definition (the
/// definitions stay in `g`).
pub fn inline<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    let s = T::json_schema(g);
    let found = resolve(s.as_value(), g.definitions()).cloned();
    found.map_or(s, |v| Schema::try_from(v).expect("a definition is a schema"))
}

/// The definition `v` refers to (`{"$ref": "#/$defs/Name"}`), if it is a reference.
fn resolve<'a>(v: &'a Value, defs: &'a Map<String, Value>) -> Option<&'a Value> {
    let name = v.get("$ref")?.as_str()?.rsplit('/').next()?;
    let found = defs.get(name)?;
    Some(resolve(found, defs).unwrap_or(found))
}

/// A doc comment as one paragraph per blank line (the lines of a paragraph joined by spaces).
fn prose(doc: &str) -> String {
    doc.split("\n\n").map(|p| p.split('\n').map(str::trim).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n\n")
}

/// The parameters `T` declares, in its order: each field's name, its doc comment and its
/// example (a field a scenario must give has one; one it may leave out has none).
pub fn params_of<T: JsonSchema>() -> Vec<Param> {
    let root = inline::<T>(&mut SchemaGenerator::default());
    let Some(props) = root.as_value().get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, p)| Param {
            name: name.clone(),
            doc: prose(p.get("description").and_then(Value::as_str).unwrap_or_default()),
            example: p.get("examples").and_then(|e| e.get(0)).map(Value::to_string),
        })
        .collect()
}

/// What a tagged table's `kind` field means and defaults to, as docs/scenario.md's table of that
/// section says it (the schema's `x-kind`).
#[derive(Debug, Clone, Copy)]
pub struct KindDoc {
    pub default: &'static str,
    pub doc: &'static str,
}

/// The schema of a `kind`-tagged table: one of its kinds' tables, each its `Config`'s fields
/// and `kind`, which the table may leave out for the kinds `optional` (the default kind, and one
/// the front end infers from its fields: a `[topology]` with a `file` is a graph).
pub fn tagged(kinds: Vec<(AlgorithmInfo, Schema)>, optional: &[&str], kind: Option<&KindDoc>) -> Schema {
    let one_of: Vec<Value> = kinds
        .into_iter()
        .map(|(info, schema)| {
            let mut v = schema.to_value();
            let obj = v.as_object_mut().expect("a kind's table is an object");
            for key in ["$schema", "title"] {
                obj.remove(key);
            }
            let kind = serde_json::json!({ "const": info.name, "description": info.summary });
            let mut props = Map::new();
            props.insert("kind".into(), kind);
            if let Some(Value::Object(own)) = obj.remove("properties") {
                props.extend(own);
            }
            obj.insert("properties".into(), Value::Object(props));
            obj.insert("type".into(), "object".into());
            if !optional.contains(&info.name) {
                let required = obj.entry("required").or_insert_with(|| Value::Array(Vec::new()));
                required.as_array_mut().expect("required is a list").insert(0, "kind".into());
            }
            v
        })
        .collect();
    // any of them: a table that leaves out `kind` may fit two kinds (`{}`)
    let mut s = schemars::json_schema!({ "anyOf": one_of });
    if let Some(k) = kind {
        s.insert("x-kind".into(), serde_json::json!({ "default": k.default, "description": k.doc }));
    }
    s
}

/// The schema of a name among `names` (a plain-named kind: `cc = "dctcp"`), each described by
/// its summary.
pub fn names(names: &[AlgorithmInfo]) -> Schema {
    let one: Vec<Value> = names.iter().map(|a| serde_json::json!({ "const": a.name, "description": a.summary })).collect();
    schemars::json_schema!({ "type": "string", "oneOf": one })
}

/// The schema of a whole scenario, as an editor reads it (`fabricsim schema`).
pub fn scenario_schema() -> Value {
    schemars::schema_for!(crate::Scenario).to_value()
}

/// What the array-versus-table check knows of a scenario's shape, read from its schema: the
/// top-level fields that are tables, those that are lists of tables (`[[jobs]]`), and the
/// fields of those lists' items that are tables (a job's `model`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shapes {
    pub tables: Vec<String>,
    pub lists: Vec<String>,
    pub inner: Vec<String>,
}

/// [`Shapes`], read once.
pub fn table_shapes() -> &'static Shapes {
    static SHAPES: std::sync::OnceLock<Shapes> = std::sync::OnceLock::new();
    SHAPES.get_or_init(|| {
        let mut g = SchemaGenerator::default();
        let root = inline::<crate::Scenario>(&mut g);
        let defs = g.definitions().clone();
        let mut shapes = Shapes { tables: Vec::new(), lists: Vec::new(), inner: Vec::new() };
        for (name, p) in properties(root.as_value(), &defs) {
            if is_table(p, &defs) {
                shapes.tables.push(name.clone());
            } else if let Some(item) = p.get("items").filter(|i| is_table(i, &defs)) {
                shapes.lists.push(name.clone());
                for (inner, q) in properties(item, &defs) {
                    if is_table(q, &defs) && !shapes.inner.contains(inner) {
                        shapes.inner.push(inner.clone());
                    }
                }
            }
        }
        shapes
    })
}

/// The properties of object schema `v` (through a reference, or the alternatives of a tagged
/// table), in order.
fn properties<'a>(v: &'a Value, defs: &'a Map<String, Value>) -> Vec<(&'a String, &'a Value)> {
    let v = resolve(v, defs).unwrap_or(v);
    let mut out: Vec<(&String, &Value)> = v.get("properties").and_then(Value::as_object).map(|p| p.iter().collect()).unwrap_or_default();
    for alt in ["anyOf", "oneOf"].iter().filter_map(|k| v.get(*k).and_then(Value::as_array)).flatten() {
        out.extend(properties(alt, defs));
    }
    out
}

/// Whether schema `v` is an object (a table), possibly through references, `anyOf`/`oneOf`
/// (a table or nothing, or one of a tagged table's kinds).
fn is_table(v: &Value, defs: &Map<String, Value>) -> bool {
    let v = resolve(v, defs).unwrap_or(v);
    let typed = |t: &Value| t == "object" || t.as_array().is_some_and(|a| a.iter().any(|x| x == "object"));
    v.get("type").is_some_and(typed)
        || ["anyOf", "oneOf"].iter().any(|k| {
            v.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|alts| alts.iter().any(|a| a.get("type") != Some(&"null".into()) && is_table(a, defs)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_are_read_from_the_scenarios_declaration() {
        let s = table_shapes();
        for t in ["topology", "switch", "transport", "lb", "workload", "stop", "mixed", "samples"] {
            assert!(s.tables.iter().any(|x| x == t), "{t} is a table: {s:?}");
        }
        assert_eq!(s.tables.len(), 8, "{s:?}");
        assert_eq!(s.lists, ["jobs", "faults"], "{s:?}");
        assert_eq!(s.inner, ["model", "parallel"], "{s:?}");
    }
}
