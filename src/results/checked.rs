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

/// The most work a result file's histograms may take to read, in counts walked (see
/// [`Cost::work`]): this many per byte of its text, and a fixed allowance. A file
/// sofabench wrote takes 14 to 30 per byte (an interval row's other figures are text
/// too); histograms whose headers claim the whole u64 range for a single value take up
/// to 700. Every count walked costs about 1.5 ns in a merge or a chart (measured,
/// docs/PERFORMANCE.md), so the HTML page or a merge reads a file of any accepted size
/// at about 100 MiB a minute or faster, and a file of ordinary size in seconds.
const MOST_WORK_PER_BYTE: u64 = 128;
const MOST_WORK_FIXED: u64 = 1 << 27;

/// What decoding a histogram costs beside its counts, in counts: its inflater's tables
/// and the histogram's own allocation (measured: about 10 us of a 25 us decode and
/// merge of 9,216 counts).
const WORK_PER_HISTOGRAM: u64 = 8_192;

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
/// a vector of them, twelve bytes of `{"node":""}` a struct of hundreds. Refuses too a
/// result whose histograms would take more work to read than [`MOST_WORK_PER_BYTE`]
/// per byte and [`MOST_WORK_FIXED`]: a histogram's work is what its header claims, not
/// its length. The values are counted as they are parsed, nothing kept; a file
/// sofabench wrote costs about twice its length.
pub fn cost(text: &str) -> Result<(), String> {
    // Text that is not JSON is left to the reader, which says where.
    let Ok(cost) = serde_json::from_str::<Cost>(text) else {
        return Ok(());
    };
    let length = text.len() as u64;
    let most = MOST_COST_PER_BYTE * length + MOST_COST_FIXED;
    if cost.bytes > most {
        return Err(format!(
            "its {} MiB would take {} MiB once read (short values by the million: empty \
             strings, objects or numbers), more than the {} MiB sofabench reads a file of \
             that length into",
            length >> 20,
            cost.bytes >> 20,
            most >> 20
        ));
    }
    let most = MOST_WORK_PER_BYTE * length + MOST_WORK_FIXED;
    if cost.work > most {
        return Err(format!(
            "its histograms claim {} million counts to walk, more than the {} million \
             sofabench reads in a file of {} KiB: histograms that claim the widest range \
             for few values, as sofabench never writes them",
            cost.work / 1_000_000,
            most / 1_000_000,
            length >> 10
        ));
    }
    Ok(())
}

/// What a JSON value costs once read: `bytes` of memory, see [`cost`], and `work`, the
/// counts its histograms hold (each histogram's header claims them, and each is walked
/// by a decode, a merge or a percentile) and [`WORK_PER_HISTOGRAM`] for each.
#[derive(Clone, Copy, Debug, Default)]
struct Cost {
    bytes: u64,
    work: u64,
}

impl Cost {
    fn of_bytes(bytes: u64) -> Cost {
        Cost { bytes, work: 0 }
    }

    fn plus(self, other: Cost) -> Cost {
        Cost {
            bytes: self.bytes.saturating_add(other.bytes),
            work: self.work.saturating_add(other.work),
        }
    }
}

impl<'de> Deserialize<'de> for Cost {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Cost, D::Error> {
        deserializer.deserialize_any(CostVisitor { histogram: false })
    }
}

/// Visits a value; `histogram` when it is the value of a member named `histogram`,
/// whose text, when it is one, is costed as a histogram too.
struct CostVisitor {
    histogram: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for CostVisitor {
    type Value = Cost;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Cost, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for CostVisitor {
    type Value = Cost;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Cost, E> {
        Ok(Cost::of_bytes(SCALAR_COST))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Cost, E> {
        Ok(Cost::of_bytes(SCALAR_COST))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Cost, E> {
        Ok(Cost::of_bytes(SCALAR_COST))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Cost, E> {
        Ok(Cost::of_bytes(SCALAR_COST))
    }

    fn visit_unit<E>(self) -> Result<Cost, E> {
        Ok(Cost::of_bytes(SCALAR_COST))
    }

    fn visit_str<E>(self, text: &str) -> Result<Cost, E> {
        let work = if self.histogram {
            // One the reader refuses costs nothing: it is refused before it is decoded.
            crate::metrics::histogram::check_settings(text)
                .map_or(0, |settings| settings.counts() + WORK_PER_HISTOGRAM)
        } else {
            0
        };
        Ok(Cost {
            bytes: STRING_COST + text.len() as u64,
            work,
        })
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut items: A) -> Result<Cost, A::Error> {
        let mut total = Cost::of_bytes(ARRAY_COST);
        while let Some(item) = items.next_element::<Cost>()? {
            total = total.plus(item);
        }
        Ok(total)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut entries: A) -> Result<Cost, A::Error> {
        let mut total = Cost::of_bytes(OBJECT_COST);
        while let Some(key) = entries.next_key::<Key>()? {
            let value = entries.next_value_seed(CostVisitor {
                histogram: key.histogram,
            })?;
            total = total.plus(Cost::of_bytes(key.length)).plus(value);
        }
        Ok(total)
    }
}

/// A member's name, as its cost: its length, and whether it names a histogram.
struct Key {
    length: u64,
    histogram: bool,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> serde::de::Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a member's name")
    }

    fn visit_str<E>(self, text: &str) -> Result<Key, E> {
        Ok(Key {
            length: text.len() as u64,
            histogram: text == "histogram",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_as_sofabench_writes_it_costs_less_than_short_values() {
        let fixture = include_str!("../../tests/fixtures/result-v2.json");
        let written: Cost = serde_json::from_str(fixture).unwrap();
        assert!(written.bytes < 2 * fixture.len() as u64, "{written:?}");
        let strings = format!("[{}]", vec!["\"\""; 1 << 20].join(","));
        let short: Cost = serde_json::from_str(&strings).unwrap();
        assert!(short.bytes > 15 * strings.len() as u64, "{short:?}");
        // Within the fixed allowance: a small file is never refused for its values.
        assert!(cost(&strings).is_ok());
    }

    #[test]
    fn a_result_as_sofabench_writes_it_takes_a_fraction_of_the_work_allowed() {
        let fixture = include_str!("../../tests/fixtures/result-v2.json");
        let written: Cost = serde_json::from_str(fixture).unwrap();
        // 28 histograms of 2,048 to 9,216 counts by their headers (read apart from
        // sofabench, by HdrHistogram's bucket arithmetic, in Python), 190,464 in all.
        assert_eq!(written.work, 190_464 + 28 * WORK_PER_HISTOGRAM);
        assert!(written.work < MOST_WORK_PER_BYTE / 4 * fixture.len() as u64);
    }

    #[test]
    fn histograms_claiming_the_widest_range_for_one_value_are_refused_by_their_work() {
        let mut widest = hdrhistogram::Histogram::<u64>::new_with_bounds(1, u64::MAX, 3).unwrap();
        widest.record(u64::MAX / 2).unwrap();
        let text = crate::metrics::histogram::encode(&widest);
        let item = format!("{{\"histogram\":\"{text}\"}}");
        let many = format!("[{}]", vec![item.as_str(); 40_000].join(","));
        let cost: Cost = serde_json::from_str(&many).unwrap();
        assert_eq!(cost.work, 40_000 * (56_320 + WORK_PER_HISTOGRAM));
        let refused = super::cost(&many).unwrap_err();
        assert!(
            refused.contains("histograms claim 2580 million counts"),
            "{refused}"
        );
        // The same text under another name is only text.
        let renamed = many.replace("histogram", "histogrammes");
        assert_eq!(serde_json::from_str::<Cost>(&renamed).unwrap().work, 0);
        assert!(super::cost(&renamed).is_ok());
    }
}
