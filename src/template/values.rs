//! Value generators and JSON string escaping.
//!
//! All sampling is done here from raw 64-bit outputs of the generator, with
//! fixed, documented arithmetic, so generated documents do not depend on a
//! `rand` version:
//!
//! * boolean: top bit of one output;
//! * default integer: top 32 bits of one output, as `i32` (uniform over the
//!   whole `i32` range);
//! * integer in `[min, max]`: Lemire's multiply-and-reject method (exactly
//!   uniform);
//! * default float: top 24 bits of one output times 2^-24, an `f32` uniform
//!   in `[0, 1)`, written in shortest form (as Iron Cushion's Java
//!   `Random.nextFloat`, e.g. `0.8474894`);
//! * float in `[min, max)`: top 53 bits times 2^-53 as `f64`, scaled;
//!   written in shortest form (`f64`);
//! * string: 1 to 5 words (uniform, Lemire) from the dictionary, each word
//!   picked by the top 15 bits of one output, joined by single spaces;
//! * one of `n` strings: `k` uniform in `0..n` (Lemire), written as dictionary word
//!   `k mod 32768`, followed for `k >= 32768` by a space and `k / 32768` (words hold no
//!   space, so the `n` values are distinct);
//! * timestamp: a whole second uniform in 2000-01-01T00:00:00Z up to
//!   (excluding) 2030-01-01T00:00:00Z.

use rand_xoshiro::rand_core::Rng as _;

use super::dictionary::{Dictionary, WORD_INDEX_BITS, WORDS};
use super::timestamp;
use crate::seed::Rng;

/// Most words in a generated string.
pub(crate) const MAX_WORDS: u64 = 5;

/// A number uniform in `0..n` (`n > 0`), Lemire's nearly divisionless method.
#[inline]
pub(crate) fn below(rng: &mut Rng, n: u64) -> u64 {
    debug_assert!(n > 0);
    let mut product = u128::from(rng.next_u64()) * u128::from(n);
    if (product as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (product as u64) < threshold {
            product = u128::from(rng.next_u64()) * u128::from(n);
        }
    }
    (product >> 64) as u64
}

#[inline]
pub(crate) fn write_bool(out: &mut Vec<u8>, rng: &mut Rng) {
    // Branch-free (a random branch mispredicts half the time): copy a fixed
    // 8-byte block, keep 4 or 5 bytes.
    let truth = rng.next_u64() >> 63;
    let block = if truth == 1 {
        *b"true____"
    } else {
        *b"false___"
    };
    let kept = out.len() + 5 - truth as usize;
    out.extend_from_slice(&block);
    out.truncate(kept);
}

/// Uniform over the whole `i32` range.
#[inline]
pub(crate) fn write_i32(out: &mut Vec<u8>, rng: &mut Rng) {
    let value = (rng.next_u64() >> 32) as u32 as i32;
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Uniform over `[min, min + span]` (`span` = max - min, as unsigned).
#[inline]
pub(crate) fn write_int_range(out: &mut Vec<u8>, rng: &mut Rng, min: i64, span: u64) {
    let offset = if span == u64::MAX {
        rng.next_u64()
    } else {
        below(rng, span + 1)
    };
    let value = (min as u64).wrapping_add(offset) as i64;
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Uniform `f32` in `[0, 1)` with 24 random bits.
#[inline]
pub(crate) fn write_unit_float(out: &mut Vec<u8>, rng: &mut Rng) {
    let value = (rng.next_u64() >> 40) as f32 * (1.0 / (1u32 << 24) as f32);
    out.extend_from_slice(ryu::Buffer::new().format_finite(value).as_bytes());
}

/// Uniform `f64` in `[min, max)` (just `min` when `min == max`); both finite.
#[inline]
pub(crate) fn write_float_range(out: &mut Vec<u8>, rng: &mut Rng, min: f64, max: f64) {
    let value = float_in(rng, min, max);
    out.extend_from_slice(ryu::Buffer::new().format_finite(value).as_bytes());
}

pub(crate) fn float_in(rng: &mut Rng, min: f64, max: f64) -> f64 {
    let unit = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let width = max - min;
    let value = if width.is_finite() {
        min + width * unit
    } else {
        // min and max of opposite signs near the f64 limits.
        min * (1.0 - unit) + max * unit
    };
    if value >= max {
        // Rounding reached max: the largest float below it (or min if equal).
        max.next_down().max(min)
    } else {
        value.max(min)
    }
}

/// Appends `src[start..start + len]`. Short runs are copied as a fixed
/// 16-byte block and the excess cut off, which avoids a `memcpy` call; for
/// that, callers keep [`PADDING`] readable bytes after their data.
#[inline]
pub(crate) fn copy_run(out: &mut Vec<u8>, src: &[u8], start: usize, len: usize) {
    if len <= PADDING
        && let Some(block) = src.get(start..start + PADDING)
    {
        let kept = out.len() + len;
        out.extend_from_slice(block);
        out.truncate(kept);
        return;
    }
    out.extend_from_slice(&src[start..start + len]);
}

/// Bytes kept readable after a buffer used with [`copy_run`].
pub(crate) const PADDING: usize = 16;

/// 1 to 5 dictionary words separated by single spaces, in double quotes.
#[inline]
pub(crate) fn write_words(out: &mut Vec<u8>, rng: &mut Rng, dictionary: &Dictionary) {
    let count = 1 + below(rng, MAX_WORDS);
    out.push(b'"');
    for n in 0..count {
        if n > 0 {
            out.push(b' ');
        }
        let index = (rng.next_u64() >> (64 - WORD_INDEX_BITS)) as usize;
        dictionary.write_word(out, index);
    }
    out.push(b'"');
}

/// One of `distinct` strings (at least 1), in double quotes.
#[inline]
pub(crate) fn write_one_of(
    out: &mut Vec<u8>,
    rng: &mut Rng,
    dictionary: &Dictionary,
    distinct: u64,
) {
    let k = below(rng, distinct);
    out.push(b'"');
    dictionary.write_word(out, (k % WORDS as u64) as usize);
    let round = k / WORDS as u64;
    if round > 0 {
        out.push(b' ');
        out.extend_from_slice(itoa::Buffer::new().format(round).as_bytes());
    }
    out.push(b'"');
}

/// A UTC timestamp in double quotes.
#[inline]
pub(crate) fn write_timestamp(out: &mut Vec<u8>, rng: &mut Rng) {
    let secs = timestamp::START + below(rng, (timestamp::END - timestamp::START) as u64) as i64;
    out.push(b'"');
    timestamp::write(out, secs);
    out.push(b'"');
}

/// Appends `s` as a JSON string: quotes, backslash and control characters
/// escaped, everything else (any Unicode) copied as UTF-8.
pub(crate) fn write_json_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    // Fast path (document ids and revisions): nothing to escape. A fold
    // without early exit, so the check vectorises.
    let plain = !bytes.iter().fold(false, |escape, &b| {
        escape | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if plain {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut copied = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0C => b"\\f",
            0x00..=0x1F => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[copied..i]);
        if short.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xF)]);
        } else {
            out.extend_from_slice(short);
        }
        copied = i + 1;
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed;

    const SAMPLES: usize = 200_000;

    fn generated<F: FnMut(&mut Vec<u8>, &mut Rng)>(seed: u64, mut f: F) -> Vec<String> {
        let mut rng = seed::rng(seed);
        (0..SAMPLES)
            .map(|_| {
                let mut out = Vec::new();
                f(&mut out, &mut rng);
                String::from_utf8(out).unwrap()
            })
            .collect()
    }

    /// Counts of `values` in `buckets` equal-width buckets over `[low, high)`;
    /// asserts each is within `tolerance` (relative) of the expected count.
    fn assert_flat(values: &[f64], low: f64, high: f64, buckets: usize, tolerance: f64) {
        let mut counts = vec![0usize; buckets];
        for &v in values {
            let b = ((v - low) / (high - low) * buckets as f64) as usize;
            counts[b.min(buckets - 1)] += 1;
        }
        let expected = values.len() as f64 / buckets as f64;
        for (b, &c) in counts.iter().enumerate() {
            let ratio = c as f64 / expected;
            assert!(
                (ratio - 1.0).abs() < tolerance,
                "bucket {b}: {c} vs {expected}"
            );
        }
    }

    #[test]
    fn below_is_uniform_and_in_range() {
        let mut rng = seed::rng(3);
        for n in [1u64, 2, 3, 5, 7, 1000, u64::MAX / 3 * 2] {
            let mut low_half = 0;
            for _ in 0..20_000 {
                let x = below(&mut rng, n);
                assert!(x < n);
                if x < n / 2 {
                    low_half += 1;
                }
            }
            if n >= 1000 {
                assert!((low_half as f64 / 20_000.0 - 0.5).abs() < 0.02, "{n}");
            }
        }
        let mut counts = [0u32; 5];
        for _ in 0..SAMPLES {
            counts[below(&mut rng, 5) as usize] += 1;
        }
        for c in counts {
            assert!(
                (f64::from(c) / SAMPLES as f64 - 0.2).abs() < 0.005,
                "{counts:?}"
            );
        }
    }

    #[test]
    fn booleans_are_fifty_fifty() {
        let values = generated(1, write_bool);
        let trues = values.iter().filter(|v| *v == "true").count();
        let falses = values.iter().filter(|v| *v == "false").count();
        assert_eq!(trues + falses, SAMPLES);
        let share = trues as f64 / SAMPLES as f64;
        assert!((share - 0.5).abs() < 0.005, "{share}");
    }

    #[test]
    fn integers_cover_the_i32_range_uniformly() {
        let values: Vec<f64> = generated(2, write_i32)
            .iter()
            .map(|v| {
                assert!(!v.contains(['.', 'e', 'E']), "{v}");
                v.parse::<i32>().unwrap() as f64
            })
            .collect();
        let negative = values.iter().filter(|&&v| v < 0.0).count();
        assert!((negative as f64 / SAMPLES as f64 - 0.5).abs() < 0.005);
        let min = values.iter().cloned().fold(f64::MAX, f64::min);
        let max = values.iter().cloned().fold(f64::MIN, f64::max);
        assert!(min < -2.14e9 && max > 2.14e9, "{min} {max}");
        assert_flat(&values, i32::MIN as f64, i32::MAX as f64 + 1.0, 20, 0.05);
        let mean = values.iter().sum::<f64>() / SAMPLES as f64;
        assert!(mean.abs() < 2.0e7, "{mean}");
    }

    #[test]
    fn integer_ranges_are_honoured() {
        for (min, max) in [
            (-3i64, 3i64),
            (10, 10),
            (0, 1),
            (i64::MIN, i64::MAX),
            (i64::MAX - 1, i64::MAX),
        ] {
            let span = max.wrapping_sub(min) as u64;
            let values: Vec<i64> = generated(4, |out, rng| write_int_range(out, rng, min, span))
                .iter()
                .map(|v| v.parse().unwrap())
                .collect();
            assert!(
                values.iter().all(|v| (min..=max).contains(v)),
                "{min} {max}"
            );
            if span <= 6 {
                for target in min..=max {
                    let share =
                        values.iter().filter(|&&v| v == target).count() as f64 / SAMPLES as f64;
                    let expected = 1.0 / (span + 1) as f64;
                    assert!((share - expected).abs() < 0.01, "{target}: {share}");
                }
            } else {
                let negative = values.iter().filter(|&&v| v < 0).count() as f64 / SAMPLES as f64;
                assert!((negative - 0.5).abs() < 0.01);
            }
        }
    }

    #[test]
    fn floats_are_uniform_in_unit_interval() {
        let values: Vec<f64> = generated(5, write_unit_float)
            .iter()
            .map(|v| {
                assert!(v.contains(['.', 'e']), "{v} must read back as a float");
                v.parse().unwrap()
            })
            .collect();
        assert!(values.iter().all(|v| (0.0..1.0).contains(v)));
        let mean = values.iter().sum::<f64>() / SAMPLES as f64;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
        assert_flat(&values, 0.0, 1.0, 20, 0.05);
        // Iron Cushion-like short output: the shortest form of an f32 (9
        // significant digits at most), not of an f64 (up to 17).
        for text in generated(5, write_unit_float) {
            let mantissa = text.split('e').next().unwrap_or("");
            let digits = mantissa
                .bytes()
                .filter(u8::is_ascii_digit)
                .skip_while(|&d| d == b'0')
                .count();
            assert!(digits <= 9, "{text}");
        }
    }

    #[test]
    fn float_ranges_are_honoured() {
        for (min, max) in [
            (-5.0, 5.0),
            (2.5, 2.5),
            (1e300, 1.7e308),
            (-f64::MAX, f64::MAX),
            (0.0, 1e-300),
        ] {
            let values: Vec<f64> = generated(6, |out, rng| write_float_range(out, rng, min, max))
                .iter()
                .map(|v| v.parse().unwrap())
                .collect();
            for &v in &values {
                assert!(
                    v.is_finite() && v >= min && (v < max || min == max),
                    "{v} in {min}..{max}"
                );
            }
            if min < max && (max - min).is_finite() {
                // Mean position within the range, about 1/2.
                let mean =
                    values.iter().map(|v| (v - min) / (max - min)).sum::<f64>() / SAMPLES as f64;
                assert!((mean - 0.5).abs() < 0.005, "{mean}");
            }
        }
        // Rounding that lands on max is pulled back below it.
        let mut rng = seed::rng(1);
        for _ in 0..1000 {
            let v = float_in(&mut rng, 1.0, 1.0 + f64::EPSILON);
            assert_eq!(v, 1.0);
        }
    }

    #[test]
    fn strings_have_one_to_five_dictionary_words() {
        let dictionary = Dictionary::new(8);
        let words: std::collections::HashSet<&str> =
            (0..dictionary.len()).map(|i| dictionary.word(i)).collect();
        let values = generated(7, |out, rng| write_words(out, rng, &dictionary));
        let mut counts = [0usize; 6];
        for v in &values {
            let inner = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap();
            let parts: Vec<&str> = inner.split(' ').collect();
            assert!((1..=5).contains(&parts.len()), "{v}");
            counts[parts.len()] += 1;
            for p in &parts {
                assert!((3..=15).contains(&p.len()), "{v}");
                assert!(words.contains(p), "{p} not in dictionary");
            }
        }
        for (n, &c) in counts.iter().enumerate().skip(1) {
            let share = c as f64 / SAMPLES as f64;
            assert!((share - 0.2).abs() < 0.005, "{n} words: {share}");
        }
        assert_eq!(counts[0], 0);
    }

    #[test]
    fn words_are_picked_uniformly() {
        let dictionary = Dictionary::new(8);
        let mut position = std::collections::HashMap::new();
        for i in 0..dictionary.len() {
            position.insert(dictionary.word(i), i);
        }
        let values = generated(9, |out, rng| write_words(out, rng, &dictionary));
        let mut indexes = Vec::new();
        for v in &values {
            for word in v.trim_matches('"').split(' ') {
                indexes.push(position[word] as f64);
            }
        }
        assert!(indexes.len() > 500_000);
        assert_flat(&indexes, 0.0, dictionary.len() as f64, 32, 0.03);
    }

    #[test]
    fn one_of_n_gives_n_distinct_strings_evenly() {
        let dictionary = Dictionary::new(8);
        let words: std::collections::HashSet<&str> =
            (0..dictionary.len()).map(|i| dictionary.word(i)).collect();
        for distinct in [1u64, 7, 50] {
            let values = generated(11, |out, rng| write_one_of(out, rng, &dictionary, distinct));
            let mut counts = std::collections::HashMap::new();
            for v in &values {
                *counts.entry(v.as_str()).or_insert(0usize) += 1;
            }
            assert_eq!(counts.len() as u64, distinct);
            let expected = SAMPLES as f64 / distinct as f64;
            for (v, &c) in &counts {
                assert!(words.contains(v.trim_matches('"')), "{v}");
                assert!(
                    (c as f64 / expected - 1.0).abs() < 0.05,
                    "{v}: {c} vs {expected}"
                );
            }
        }
    }

    #[test]
    fn one_of_more_than_the_dictionary_numbers_the_rounds() {
        let dictionary = Dictionary::new(8);
        let words: std::collections::HashSet<&str> =
            (0..dictionary.len()).map(|i| dictionary.word(i)).collect();
        let distinct = WORDS as u64 * 3;
        let values = generated(12, |out, rng| write_one_of(out, rng, &dictionary, distinct));
        let mut rounds = [0usize; 3];
        for v in &values {
            let inner = v.trim_matches('"');
            let (word, round) = match inner.split_once(' ') {
                Some((word, n)) => (word, n.parse::<usize>().unwrap()),
                None => (inner, 0),
            };
            assert!(round < 3 && (round > 0) == inner.contains(' '), "{v}");
            assert!(words.contains(word), "{v}");
            rounds[round] += 1;
        }
        for c in rounds {
            assert!(
                (c as f64 / SAMPLES as f64 - 1.0 / 3.0).abs() < 0.01,
                "{rounds:?}"
            );
        }
    }

    #[test]
    fn timestamps_are_in_range_and_uniform() {
        let values: Vec<f64> = generated(10, write_timestamp)
            .iter()
            .map(|v| {
                let inner = v.trim_matches('"');
                assert_eq!(inner.len(), timestamp::LEN);
                assert!(inner.ends_with('Z'), "{v}");
                let secs = timestamp::parse(inner).unwrap();
                assert!((timestamp::START..timestamp::END).contains(&secs), "{v}");
                secs as f64
            })
            .collect();
        assert_flat(
            &values,
            timestamp::START as f64,
            timestamp::END as f64,
            30,
            0.05,
        );
    }

    #[test]
    fn escaping_round_trips_through_serde_json() {
        for s in [
            "",
            "plain",
            "quote \" backslash \\ slash /",
            "\n\r\t\u{8}\u{c}\u{0}\u{1}\u{1f}\u{7f}",
            "unicode é ✓ 😀 \u{2028}\u{2029} \u{fffd}",
            "\"\"\\\\",
        ] {
            let mut out = Vec::new();
            write_json_string(&mut out, s);
            let text = String::from_utf8(out).unwrap();
            let back: String = serde_json::from_str(&text).unwrap();
            assert_eq!(back, s, "{text}");
            assert!(!text.bytes().any(|b| b < 0x20), "{text:?}");
        }
        let mut out = Vec::new();
        write_json_string(&mut out, "a\"\u{1}");
        assert_eq!(out, b"\"a\\\"\\u0001\"");
    }
}
