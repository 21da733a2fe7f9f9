//! The registry mechanism: [`AlgorithmInfo`] (a name a scenario can write, with its one-line
//! summary and source), the macros that turn one line per kind into a configuration enum
//! (`tagged_config!` for `kind`-tagged tables, `named_kinds!` for plain names), and the
//! reader of `kind`-tagged tables. The list of everything registered is [`crate::registry()`], at the top of the crate, which sees every component.
//!
//! serde's internally tagged enums buffer the table before choosing the variant and lose the
//! path of an error inside it (`workload` instead of `workload.size`). [`split_kind`] reads
//! `kind` first, then [`fields`] deserializes the variant's own struct with path tracking and
//! passes the inner path out through the error text; [`join`] joins it to the outer path.

use crate::error::ScenarioError;
use serde::de::{DeserializeOwned, Error};
use serde::{Deserialize, Deserializer, Serialize};

/// A registered name with its one-line doc and source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AlgorithmInfo {
    pub category: &'static str,
    pub name: &'static str,
    pub summary: &'static str,
    pub reference: &'static str,
}

pub mod options;
pub use options::{example, params_of, Param};

/// A kind's name and its parameters (a tagged table's [`params`](options) lists one per kind).
pub type KindParams = (&'static str, Vec<Param>);

/// The field names a `Config` type reads (what serde's derive declares for it), found by
/// asking it to read from a deserializer that only records them: not a source of anything, but
/// the witness, independent of the schema, that the schema names what serde reads (a test
/// compares the two for every kind).
pub fn field_names<T: DeserializeOwned>() -> Vec<&'static str> {
    use serde::de::Visitor;
    struct Names<'a>(&'a mut Vec<&'static str>);
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("names recorded")
        }
    }
    impl std::error::Error for Stop {}
    impl Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    impl<'de> Deserializer<'de> for Names<'_> {
        type Error = Stop;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: Visitor<'de>>(self, _: &'static str, fields: &'static [&'static str], _: V) -> Result<V::Value, Stop> {
            self.0.extend_from_slice(fields);
            Err(Stop)
        }
        fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, v: V) -> Result<V::Value, Stop> {
            v.visit_newtype_struct(self)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit unit_struct seq
            tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut names = Vec::new();
    let _ = T::deserialize(Names(&mut names));
    names
}

/// Marks the start of an inner path inside an error message.
pub const PATH_MARK: char = '\u{1}';

/// Splits a table into its `kind` (or `default`) and the remaining fields.
pub fn split_kind<'de, D: Deserializer<'de>>(d: D, default: &str) -> Result<(String, serde_json::Value), D::Error> {
    let mut table = serde_json::Map::deserialize(d)?;
    let kind = match table.remove("kind") {
        None => default.to_string(),
        Some(serde_json::Value::String(s)) => s,
        Some(other) => return Err(D::Error::custom(format!("{PATH_MARK}kind{PATH_MARK}expected a name, got {other}"))),
    };
    Ok((kind, serde_json::Value::Object(table)))
}

/// Deserializes a variant's fields, keeping the path of any error.
pub fn fields<T: DeserializeOwned, E: Error>(v: serde_json::Value) -> Result<T, E> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = dotted(e.path());
        // the table's own `kind` was read before its fields: it is allowed too
        let msg = crate::error::readable(&e.into_inner().to_string(), &["kind"]);
        if path == "." {
            E::custom(msg)
        } else {
            E::custom(format!("{PATH_MARK}{path}{PATH_MARK}{msg}"))
        }
    })
}

/// The error for a `kind` that is not registered, or missing where there is no default.
pub fn unknown_kind<E: Error>(kind: &str, allowed: &[&str]) -> E {
    let what = if kind.is_empty() { "missing".to_string() } else { format!("unknown {kind:?}") };
    E::custom(format!("{PATH_MARK}kind{PATH_MARK}{what}; allowed: {}", allowed.join(", ")))
}

/// A field path as a scenario writes it (`switch.ecn.kmin`, `workload.flows[3].dst`), with
/// keys that are not plain names quoted (`topology." "`), so an odd key stays readable.
pub fn dotted(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if plain {
                    out.push_str(key);
                } else {
                    out.push_str(&format!("{key:?}"));
                }
            }
            Segment::Enum { variant } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(variant);
            }
            Segment::Unknown => {}
        }
    }
    if out.is_empty() {
        ".".into()
    } else {
        out
    }
}

/// Joins an outer path and a message that may carry an inner path.
pub fn join(outer: &str, msg: &str) -> (String, String) {
    let mut parts = msg.splitn(3, PATH_MARK);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(_), Some(inner), Some(rest)) => {
            let field = if outer.is_empty() || outer == "." { inner.to_string() } else { format!("{outer}.{inner}") };
            // a nested tagged table can mark again
            let (f2, m2) = join(&field, rest);
            (f2, m2)
        }
        _ => (outer.to_string(), msg.to_string()),
    }
}

/// A configuration written with its `kind` first, then its own fields.
#[derive(Serialize)]
pub struct Tagged<'a, T: Serialize> {
    pub kind: &'static str,
    #[serde(flatten)]
    pub config: &'a T,
}

/// Declares a `kind`-tagged table from one line per kind, `Variant => module`: each module
/// provides `INFO` (its [`AlgorithmInfo`], whose `name` is the `kind`) and `Config` (its
/// parameters, a serde struct with `deny_unknown_fields`, each field's meaning in its doc
/// comment and, for one that must be given, an example: [`options`]). The enum reads with
/// full error paths ([`split_kind`], [`fields`]), writes `kind` first, lists its kinds in
/// `KINDS` and their parameters in `params()`, and has the schema of one of its kinds' tables
/// (in which the default kind, and one the front end infers, `or "graph"`, may leave out `kind`;
/// `(KIND)`: the [`KindDoc`](options::KindDoc) of its `kind` field, for docs/scenario.md's table).
macro_rules! tagged_config {
    ($(#[$meta:meta])* $Enum:ident, default $default:literal $(or $implied:literal)? $(($kind:path))?, $($Variant:ident => $module:ident),+ $(,)?) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $Enum {
            $($Variant($module::Config)),+
        }

        impl $Enum {
            /// Every kind this table accepts, in registry order.
            pub const KINDS: &'static [$crate::registry::AlgorithmInfo] = &[$($module::INFO),+];

            /// Each kind's own parameters, in registry order, read from its `Config`'s
            /// declaration ([`params_of`](crate::registry::params_of)).
            pub fn params() -> Vec<$crate::registry::KindParams> {
                vec![$(($module::INFO.name, $crate::registry::params_of::<$module::Config>())),+]
            }

            /// The fields kind `kind`'s `Config` reads as serde's derive declares them (empty
            /// for an unknown kind): what its `params()` must name.
            pub fn fields_of(kind: &str) -> Vec<&'static str> {
                $(if kind == $module::INFO.name {
                    return $crate::registry::field_names::<$module::Config>();
                })+
                Vec::new()
            }

            /// The `kind` as a scenario writes it.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Self::$Variant(_) => $module::INFO.name),+
                }
            }
        }

        impl schemars::JsonSchema for $Enum {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($Enum).into()
            }
            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let kinds = vec![$(($module::INFO, $crate::registry::options::inline::<$module::Config>(g))),+];
                let doc: Option<&$crate::registry::options::KindDoc> = None $(.or(Some(&$kind)))?;
                $crate::registry::options::tagged(kinds, &[$default $(, $implied)?], doc)
            }
        }

        impl serde::Serialize for $Enum {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Self::$Variant(c) => $crate::registry::Tagged { kind: $module::INFO.name, config: c }.serialize(s)),+
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $Enum {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let (kind, rest) = $crate::registry::split_kind(d, $default)?;
                $(if kind == $module::INFO.name {
                    return Ok(Self::$Variant($crate::registry::fields(rest)?));
                })+
                Err($crate::registry::unknown_kind(&kind, &Self::KINDS.iter().map(|a| a.name).collect::<Vec<_>>()))
            }
        }
    };
}
pub(crate) use tagged_config;

/// Declares a kind named by a plain string (`routing = "ecmp"`, `cc = "dctcp"`) from one line
/// per kind, `Variant => module`, each module providing `INFO`. The enum reads and writes the
/// name; an unknown name is refused with the allowed ones.
macro_rules! named_kinds {
    ($(#[$meta:meta])* $Enum:ident, $($Variant:ident => $module:ident),+ $(,)?) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $Enum {
            $($Variant),+
        }

        impl $Enum {
            /// Every kind, in registry order.
            pub const KINDS: &'static [$crate::registry::AlgorithmInfo] = &[$($module::INFO),+];

            /// The name a scenario uses.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$Variant => $module::INFO.name),+
                }
            }

            /// The kind of this name, if there is one.
            pub fn from_name(name: &str) -> Option<Self> {
                $(if name == $module::INFO.name {
                    return Some(Self::$Variant);
                })+
                None
            }
        }

        impl serde::Serialize for $Enum {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl schemars::JsonSchema for $Enum {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($Enum).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                $crate::registry::options::names(Self::KINDS)
            }
        }

        impl<'de> serde::Deserialize<'de> for $Enum {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = $crate::registry::name_of(d)?;
                Self::from_name(&name).ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "unknown {name:?}; allowed: {}",
                        Self::KINDS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
                    ))
                })
            }
        }
    };
}
pub(crate) use named_kinds;

/// Reads a name (a string), saying what was found otherwise.
pub fn name_of<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => Ok(s),
        other => Err(D::Error::custom(format!("expected a name, got {other}"))),
    }
}

/// Refuses an array given where `text` (a JSON object) must hold a table (the keys `tables`)
/// or a list of tables (`lists`, whose items' keys `inner` are tables too: a job's `model` and
/// `parallel`), naming the field: serde reads a struct from an array of its fields in order,
/// which would accept `topology = ["fat_tree", 2, 16]` as a fat tree and `model =
/// ["gpt3-1.3b"]` as a preset. Reads the text once more without building it (the contents are
/// skipped).
/// `shapes` gives the three lists, asked for only where the text holds an array at its top
/// level (reading them from the scenario's declaration takes a few milliseconds, once).
pub fn tables_not_arrays(text: &str, shapes: impl FnOnce() -> &'static options::Shapes) -> Result<(), ScenarioError> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    /// A visitor's answer for any value that is neither a table nor an array.
    macro_rules! scalars {
        ($t:ty, $v:expr) => {
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<$t, E> {
                Ok($v)
            }
            fn visit_i64<E>(self, _: i64) -> Result<$t, E> {
                Ok($v)
            }
            fn visit_u64<E>(self, _: u64) -> Result<$t, E> {
                Ok($v)
            }
            fn visit_f64<E>(self, _: f64) -> Result<$t, E> {
                Ok($v)
            }
            fn visit_str<E>(self, _: &str) -> Result<$t, E> {
                Ok($v)
            }
            fn visit_unit<E>(self) -> Result<$t, E> {
                Ok($v)
            }
        };
    }
    /// What a top-level value is: a table (its contents skipped), an array (and what each of
    /// its items is), or else.
    enum Shape {
        Table,
        Array(Vec<Item>),
        Other,
    }
    /// An item of an array: an array itself, or the keys of a table that hold arrays.
    #[derive(Default)]
    struct Item {
        array: bool,
        array_keys: Vec<String>,
    }
    /// Whether a value is an array (its contents skipped).
    struct IsArray(bool);
    struct IsArrayOf;
    impl<'de> Visitor<'de> for IsArrayOf {
        type Value = bool;
        scalars!(bool, false);
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<bool, A::Error> {
            while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(false)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<bool, A::Error> {
            while s.next_element::<IgnoredAny>()?.is_some() {}
            Ok(true)
        }
    }
    impl<'de> serde::Deserialize<'de> for IsArray {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IsArray, D::Error> {
            d.deserialize_any(IsArrayOf).map(IsArray)
        }
    }
    struct ItemOf;
    impl<'de> Visitor<'de> for ItemOf {
        type Value = Item;
        scalars!(Item, Item::default());
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Item, A::Error> {
            let mut array_keys = Vec::new();
            while let Some((key, value)) = m.next_entry::<String, IsArray>()? {
                if value.0 {
                    array_keys.push(key);
                }
            }
            Ok(Item { array: false, array_keys })
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Item, A::Error> {
            while s.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Item { array: true, array_keys: Vec::new() })
        }
    }
    impl<'de> serde::Deserialize<'de> for Item {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Item, D::Error> {
            d.deserialize_any(ItemOf)
        }
    }
    struct ShapeOf;
    impl<'de> Visitor<'de> for ShapeOf {
        type Value = Shape;
        scalars!(Shape, Shape::Other);
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Shape, A::Error> {
            while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Shape::Table)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Shape, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = s.next_element::<Item>()? {
                items.push(item);
            }
            Ok(Shape::Array(items))
        }
    }
    impl<'de> serde::Deserialize<'de> for Shape {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Shape, D::Error> {
            d.deserialize_any(ShapeOf)
        }
    }
    // text that is no JSON object: the scenario's own parse says what is wrong
    let Ok(top) = serde_json::from_str::<std::collections::HashMap<String, Shape>>(text) else { return Ok(()) };
    if !top.values().any(|s| matches!(s, Shape::Array(_))) {
        return Ok(()); // no array, so none where a table belongs
    }
    let options::Shapes { tables, lists, inner } = shapes();
    for key in tables {
        if let Some(Shape::Array(_)) = top.get(key) {
            return Err(ScenarioError::new(key, "an array", "allowed: a table of named fields ([section] in TOML)"));
        }
    }
    for key in lists {
        if let Some(Shape::Array(items)) = top.get(key) {
            for (i, item) in items.iter().enumerate() {
                if item.array {
                    return Err(ScenarioError::new(
                        format!("{key}[{i}]"),
                        "an array",
                        "allowed: a table of named fields ([[section]] in TOML)",
                    ));
                }
                if let Some(k) = item.array_keys.iter().find(|k| inner.contains(k)) {
                    return Err(ScenarioError::new(
                        format!("{key}[{i}].{k}"),
                        "an array",
                        format!("allowed: a table of named fields ({k} = {{ ... }} or [{key}.{k}] in TOML)"),
                    ));
                }
            }
        }
    }
    Ok(())
}
