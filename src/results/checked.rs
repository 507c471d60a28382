//! Fields of a result file whose cost to read is not bounded by their length, checked as
//! the file is parsed, before they cost it: the run's settings (`config`), read into a
//! JSON tree that takes 5 to 40 times its text, and the histograms, whose decoding costs
//! what their header says rather than their length.

use std::collections::BTreeMap;

use serde::de::{Deserialize, Deserializer, Error as _};
use serde_json::value::RawValue;

/// The most bytes of text a result's `config` may take: a run's settings take a few KB
/// (each phase's description among them), a merge of many nodes' tens of KB.
pub const MOST_CONFIG: usize = 1024 * 1024;

/// The run's settings, refused before they are read into a tree when their text is
/// longer than [`MOST_CONFIG`].
pub fn config<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, serde_json::Value>, D::Error> {
    let raw = Box::<RawValue>::deserialize(deserializer)?;
    let length = raw.get().len();
    if length > MOST_CONFIG {
        return Err(D::Error::custom(format!(
            "its config (the run's settings) is {length} bytes: sofabench writes a few KB \
             and reads at most {} KiB",
            MOST_CONFIG / 1024
        )));
    }
    serde_json::from_str(raw.get()).map_err(D::Error::custom)
}

/// A histogram's encoding, refused when decoding it would cost more than any histogram
/// sofabench writes ([`crate::metrics::histogram::check_settings`]).
pub fn histogram<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    crate::metrics::histogram::check_settings(&text).map_err(D::Error::custom)?;
    Ok(text)
}

/// The most memory the values a result file's text reads into may take: three times
/// the text (held beside them while they are read) and this much more.
const MOST_COST_FIXED: u64 = 64 << 20;
const MOST_COST_PER_BYTE: u64 = 3;

/// What a JSON value costs once read, bytes, by its kind alone (measured: 60 MiB of
/// intervals as sofabench writes them cost 2.2 times their text by these figures, and
/// took 2.1 times; 21 million empty strings 16 times, took 15): an object becomes a
/// struct of up to a few hundred bytes whatever fields it gives (the others take their
/// defaults), a string 24 bytes and its text, a scalar 8 bytes or an `Option<u64>`; each
/// with room for a growing vector's spare capacity. A key costs its text: a struct's
/// field names are not kept, a map's keys are strings.
const OBJECT_COST: u64 = 256;
const STRING_COST: u64 = 48;
const SCALAR_COST: u64 = 16;
const ARRAY_COST: u64 = 32;

/// Refuses a result whose text would read into more than [`MOST_COST_PER_BYTE`] times
/// its length and [`MOST_COST_FIXED`]: three bytes of `"",` become a 24-byte string in
/// a vector of them, twelve bytes of `{"node":""}` a struct of hundreds. The values are
/// counted as they are parsed, nothing kept; a file sofabench wrote costs about twice
/// its length.
pub fn cost(text: &str) -> Result<(), String> {
    // Text that is not JSON is left to the reader, which says where.
    let Ok(Cost(cost)) = serde_json::from_str(text) else {
        return Ok(());
    };
    let most = MOST_COST_PER_BYTE * text.len() as u64 + MOST_COST_FIXED;
    if cost > most {
        return Err(format!(
            "its {} MiB would take {} MiB once read (short values by the million: empty \
             strings, objects or numbers), more than the {} MiB sofabench reads a file of \
             that length into",
            text.len() >> 20,
            cost >> 20,
            most >> 20
        ));
    }
    Ok(())
}

/// The cost of a JSON value, see [`cost`].
struct Cost(u64);

impl<'de> Deserialize<'de> for Cost {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Cost, D::Error> {
        deserializer.deserialize_any(CostVisitor)
    }
}

struct CostVisitor;

impl<'de> serde::de::Visitor<'de> for CostVisitor {
    type Value = Cost;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Cost, E> {
        Ok(Cost(SCALAR_COST))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Cost, E> {
        Ok(Cost(SCALAR_COST))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Cost, E> {
        Ok(Cost(SCALAR_COST))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Cost, E> {
        Ok(Cost(SCALAR_COST))
    }

    fn visit_unit<E>(self) -> Result<Cost, E> {
        Ok(Cost(SCALAR_COST))
    }

    fn visit_str<E>(self, text: &str) -> Result<Cost, E> {
        Ok(Cost(STRING_COST + text.len() as u64))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut items: A) -> Result<Cost, A::Error> {
        let mut total = ARRAY_COST;
        while let Some(Cost(item)) = items.next_element()? {
            total = total.saturating_add(item);
        }
        Ok(Cost(total))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut entries: A) -> Result<Cost, A::Error> {
        let mut total = OBJECT_COST;
        while let Some((Cost(key), Cost(value))) = entries.next_entry()? {
            let key = key.saturating_sub(STRING_COST);
            total = total.saturating_add(key).saturating_add(value);
        }
        Ok(Cost(total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_as_sofabench_writes_it_costs_less_than_short_values() {
        let fixture = include_str!("../../tests/fixtures/result-v2.json");
        let Cost(written) = serde_json::from_str(fixture).unwrap();
        assert!(written < 2 * fixture.len() as u64, "{written}");
        let strings = format!("[{}]", vec!["\"\""; 1 << 20].join(","));
        let Cost(short) = serde_json::from_str(&strings).unwrap();
        assert!(short > 15 * strings.len() as u64, "{short}");
        // Within the fixed allowance: a small file is never refused for its values.
        assert!(cost(&strings).is_ok());
    }
}
