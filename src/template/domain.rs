//! Value domains in JSON templates: a one-member object whose key names a kind of value
//! and whose value says which values it takes, compiled as one generated value.
//!
//! ```json
//! {
//!   "age":     {"$integer": {"min": 18, "max": 99}},
//!   "score":   {"$float": {"min": 0, "max": 100}},
//!   "country": {"$string": {"distinct": 50}}
//! }
//! ```
//!
//! `$integer` and `$float` are the XML template's `<integer min max/>` and `<float min
//! max/>` (same defaults, same values), `$string` its `<string distinct="N"/>`. Any other
//! object is kept as it is, so templates without these keys (Iron Cushion's) compile as
//! they always did.

use serde::Deserialize;
use serde::de::{self, MapAccess};

use super::schema::{
    DEFAULT_FLOAT_MAX, DEFAULT_FLOAT_MIN, DEFAULT_INT_MAX, DEFAULT_INT_MIN, Generated,
};

/// Start of every error message about a domain, so the reader can give the remedy.
pub(crate) const PROBLEM: &str = "value domain";

/// The remedy for any mistake in a domain.
pub(crate) const REMEDY: &str = "write a value domain as the only member of its object: \
    {\"$integer\": {\"min\": 0, \"max\": 99}}, {\"$float\": {\"min\": 0, \"max\": 1}} or \
    {\"$string\": {\"distinct\": 50}}";

/// The kinds of domain, by the key that names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Integer,
    Float,
    String,
}

impl Kind {
    /// The kind `key` names, if it names one.
    pub(crate) fn named(key: &str) -> Option<Kind> {
        match key {
            "$integer" => Some(Kind::Integer),
            "$float" => Some(Kind::Float),
            "$string" => Some(Kind::String),
            _ => None,
        }
    }

    fn key(self) -> &'static str {
        match self {
            Kind::Integer => "$integer",
            Kind::Float => "$float",
            Kind::String => "$string",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object of min and max")]
struct Bounds {
    min: Option<serde_json::Number>,
    max: Option<serde_json::Number>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object of distinct")]
struct Distinct {
    distinct: serde_json::Number,
}

/// Reads the value of a `kind` domain, then checks that nothing follows it in its object.
pub(crate) fn read<'de, A: MapAccess<'de>>(kind: Kind, map: &mut A) -> Result<Generated, A::Error> {
    let key = kind.key();
    let generated = match kind {
        Kind::Integer => {
            let bounds: Bounds = map.next_value().map_err(|e| wrong(key, e))?;
            let bound = |n: Option<serde_json::Number>, default: i64, name: &str| match n {
                None => Ok(default),
                Some(n) => n
                    .as_i64()
                    .ok_or_else(|| format!("{name} {n}, not a whole number in the 64-bit range")),
            };
            bound(bounds.min, DEFAULT_INT_MIN, "min")
                .and_then(|min| Ok((min, bound(bounds.max, DEFAULT_INT_MAX, "max")?)))
                .and_then(|(min, max)| Generated::int_range(min, max))
        }
        Kind::Float => {
            let bounds: Bounds = map.next_value().map_err(|e| wrong(key, e))?;
            let bound = |n: Option<serde_json::Number>, default: f64| {
                n.map_or(default, |n| n.as_f64().unwrap_or(f64::NAN))
            };
            Generated::float_range(
                bound(bounds.min, DEFAULT_FLOAT_MIN),
                bound(bounds.max, DEFAULT_FLOAT_MAX),
            )
        }
        Kind::String => {
            let distinct: Distinct = map.next_value().map_err(|e| wrong(key, e))?;
            distinct
                .distinct
                .as_u64()
                .ok_or_else(|| format!("distinct {}, not a whole number", distinct.distinct))
                .and_then(Generated::one_of)
        }
    }
    .map_err(|problem| de::Error::custom(format_args!("{PROBLEM} {key} has {problem}")))?;
    if map.next_key::<de::IgnoredAny>()?.is_some() {
        return Err(de::Error::custom(format_args!(
            "{PROBLEM} {key} shares its object with another member"
        )));
    }
    Ok(generated)
}

/// The error of a domain's value that is not the object it should be.
fn wrong<E: de::Error>(key: &str, e: E) -> E {
    let shown = e.to_string();
    let problem = match shown.rfind(" at line ") {
        Some(i) => &shown[..i],
        None => &shown[..],
    };
    E::custom(format_args!("{PROBLEM} {key}: {problem}"))
}
