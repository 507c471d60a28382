//! Writing documents from a compiled template.

use super::Template;
use super::dictionary::Dictionary;
use super::schema::Op;
use super::values::{
    below, copy_run, write_bool, write_float_range, write_i32, write_int_range, write_json_string,
    write_one_of, write_timestamp, write_unit_float, write_words,
};
use rand_xoshiro::rand_core::Rng as _;

use crate::seed::{self, Rng};
use crate::workload::DocSize;

/// Label, under a document's seed, of the stream that picks which top-level
/// value each update regenerates. It is [`field_label`] of generation 0,
/// which no value has.
const UPDATES: u64 = 0;

/// Label, under a document's seed, of top-level value `i` at generation `g`
/// (`g >= 1`): `g * 2^32 + i`. One derivation instead of two; distinct for
/// fewer than 2^32 top-level values.
#[inline]
fn field_label(i: usize, g: u32) -> u64 {
    (u64::from(g) << 32) ^ i as u64
}

/// Top-level values whose generations are worked out in one pass.
const CHUNK: usize = 64;

/// Label, under a document's seed, of the draw of its target size. Top-level value
/// labels are `g * 2^32 + i` with `g >= 1` the version that made the value, which
/// stays far below 2^31.
const PADDING_SIZE: u64 = 1 << 63;

/// Label, under a document's seed, of its padding's letters.
const PADDING_TEXT: u64 = (1 << 63) + 1;

/// `,"sofabench_padding":""` without the comma.
const PADDING_MEMBER: u64 = 22;

/// The letters padding is made of: 64 of them, so one draw gives ten.
const PADDING_LETTERS: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-.";

/// Appends a padding member of `room` bytes in all (nothing when it does not fit).
fn pad(out: &mut Vec<u8>, doc: u64, room: u64, after_member: bool) {
    let overhead = PADDING_MEMBER + u64::from(after_member);
    let Some(letters) = room.checked_sub(overhead) else {
        return;
    };
    if after_member {
        out.push(b',');
    }
    out.extend_from_slice(b"\"sofabench_padding\":\"");
    let mut rng = seed::rng(seed::derive(doc, PADDING_TEXT));
    let mut left = letters;
    out.reserve(letters as usize + 1);
    while left > 0 {
        let mut draw = rng.next_u64();
        for _ in 0..left.min(10) {
            out.push(PADDING_LETTERS[(draw & 63) as usize]);
            draw >>= 6;
        }
        left -= left.min(10);
    }
    out.push(b'"');
}

/// Writes the documents of a run: a pure function of the template, the
/// master seed, the document number and the version. Shared by all
/// connections (it is `Send + Sync` and never mutated).
///
/// # Reproducible updates
///
/// With `doc = derive(derive(master, DOCUMENT), number)`:
///
/// * the update that produces version `k` (`k >= 2`) regenerates top-level
///   value `c(k)`, where `c(2), c(3), ...` are successive draws, uniform
///   over the top-level values, from `rng(derive(doc, 0))`;
/// * in version `v`, top-level value `i` has generation `g`, the largest `k`
///   in `2..=v` with `c(k) = i`, or 1 if there is none, and its content is
///   generated from `rng(derive(doc, g * 2^32 + i))`.
///
/// So version `v` equals version `v - 1` except for value `c(v)`, which is
/// regenerated (it may by chance come out the same, e.g. a boolean), exactly
/// Iron Cushion's update rule, with no document stored. Writing version `v`
/// costs `O(v)` draws on top of the document itself.
#[derive(Clone, Debug)]
pub struct DocumentWriter {
    template: Template,
    dictionary: Dictionary,
    /// `derive(master, DOCUMENT)`.
    documents: u64,
}

impl DocumentWriter {
    /// A writer for `template` under `master_seed`; the dictionary comes from
    /// `seed::derive(master_seed, seed::label::DICTIONARY)`.
    pub fn new(template: Template, master_seed: u64) -> Self {
        DocumentWriter {
            template,
            dictionary: Dictionary::new(seed::derive(master_seed, seed::label::DICTIONARY)),
            documents: seed::derive(master_seed, seed::label::DOCUMENT),
        }
    }

    /// Appends (does not clear) the JSON object of document `number` at
    /// `version` (1 = as created; 0 is treated as 1) to `out`. If given,
    /// `"_id"` then `"_rev"` are written as the first members (JSON-escaped).
    /// The output is compact: no whitespace.
    pub fn write(
        &self,
        out: &mut Vec<u8>,
        number: u64,
        version: u32,
        id: Option<&str>,
        rev: Option<&str>,
    ) {
        self.write_sized(out, number, version, id, rev, None);
    }

    /// [`DocumentWriter::write`], padded to `size` when given (see [`DocSize`]): a last
    /// member `"sofabench_padding"` of random letters and digits (random, so that a
    /// compressing server stores what it is sent). A document that is already as large
    /// as its target, or short of it by less than the member itself, gets none.
    pub fn write_sized(
        &self,
        out: &mut Vec<u8>,
        number: u64,
        version: u32,
        id: Option<&str>,
        rev: Option<&str>,
        size: Option<DocSize>,
    ) {
        let doc = seed::derive(self.documents, number);
        let start = out.len();
        self.write_members(out, doc, version, id, rev);
        if let Some(size) = size {
            // The `_rev` member does not count: `,"_rev":"…"` (the comma after an `_id`).
            let rev_member = rev.map_or(0, |r| r.len() + 9 + usize::from(id.is_some()));
            let written = (out.len() - start).saturating_sub(rev_member) as u64 + 1;
            let target = size.pick(seed::derive(doc, PADDING_SIZE));
            pad(
                out,
                doc,
                target.saturating_sub(written),
                out.len() - start > 1,
            );
        }
        out.push(b'}');
    }

    /// The document's members after its `{`, without the closing `}`.
    fn write_members(
        &self,
        out: &mut Vec<u8>,
        doc: u64,
        version: u32,
        id: Option<&str>,
        rev: Option<&str>,
    ) {
        let fields = self.template.top_level_len();
        out.push(b'{');
        let mut first = true;
        for (key, value) in [(&b"\"_id\":"[..], id), (&b"\"_rev\":"[..], rev)] {
            if let Some(value) = value {
                if !first {
                    out.push(b',');
                }
                first = false;
                out.extend_from_slice(key);
                write_json_string(out, value);
            }
        }
        if version < 2 {
            for i in 0..fields {
                if !first {
                    out.push(b',');
                }
                first = false;
                let mut rng = seed::rng(seed::derive(doc, field_label(i, 1)));
                self.run(out, i, &mut rng);
            }
            return;
        }
        let mut chunk_start = 0;
        while chunk_start < fields {
            let chunk_end = fields.min(chunk_start + CHUNK);
            let mut generations = [1u32; CHUNK];
            let mut updates = seed::rng(seed::derive(doc, UPDATES));
            for k in 2..=version {
                let chosen = below(&mut updates, fields as u64) as usize;
                if (chunk_start..chunk_end).contains(&chosen) {
                    generations[chosen - chunk_start] = k;
                }
            }
            for (i, generation) in (chunk_start..chunk_end).zip(generations) {
                if !first {
                    out.push(b',');
                }
                first = false;
                let mut rng = seed::rng(seed::derive(doc, field_label(i, generation)));
                self.run(out, i, &mut rng);
            }
            chunk_start = chunk_end;
        }
    }

    /// Writes top-level value `field`, its key included.
    #[inline]
    fn run(&self, out: &mut Vec<u8>, field: usize, rng: &mut Rng) {
        let program = &self.template.program;
        let (start, end) = (program.starts[field], program.starts[field + 1]);
        let bytes = &program.bytes;
        let mut at = start.byte as usize;
        let mut ranges = program.ranges[start.range as usize..].iter();
        for &op in &program.ops[start.op as usize..end.op as usize] {
            copy_run(out, bytes, at, op.run());
            at += op.run();
            match op.kind() {
                Op::BOOL => write_bool(out, rng),
                Op::INT32 => write_i32(out, rng),
                Op::INT_RANGE => {
                    if let Some(&[min, span]) = ranges.next() {
                        write_int_range(out, rng, min as i64, span);
                    }
                }
                Op::UNIT_FLOAT => write_unit_float(out, rng),
                Op::FLOAT_RANGE => {
                    if let Some(&[min, max]) = ranges.next() {
                        write_float_range(out, rng, f64::from_bits(min), f64::from_bits(max));
                    }
                }
                Op::STR => write_words(out, rng, &self.dictionary),
                Op::ONE_OF => {
                    if let Some(&[distinct, _]) = ranges.next() {
                        write_one_of(out, rng, &self.dictionary, distinct);
                    }
                }
                Op::TIMESTAMP => write_timestamp(out, rng),
                _ => {}
            }
        }
    }

    /// Which top-level value (index into the template's top level) the update
    /// that produced `version` (>= 2) regenerated; `None` for versions 0 and
    /// 1 or an empty top level.
    pub fn updated_field(&self, number: u64, version: u32) -> Option<usize> {
        let fields = self.template.top_level_len() as u64;
        if version < 2 || fields == 0 {
            return None;
        }
        let doc = seed::derive(self.documents, number);
        let mut updates = seed::rng(seed::derive(doc, UPDATES));
        let mut chosen = 0;
        for _ in 2..=version {
            chosen = below(&mut updates, fields);
        }
        Some(chosen as usize)
    }

    /// The words strings are made of.
    pub fn dictionary(&self) -> &Dictionary {
        &self.dictionary
    }

    /// The template documents are generated from.
    pub fn template(&self) -> &Template {
        &self.template
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> DocumentWriter {
        let template =
            Template::from_json_str(r#"{"name": "text", "n": 1, "tags": ["a"]}"#, "t").unwrap();
        DocumentWriter::new(template, 3)
    }

    fn sized(number: u64, version: u32, rev: Option<&str>, size: DocSize) -> Vec<u8> {
        let mut out = Vec::new();
        writer().write_sized(&mut out, number, version, Some("id-1"), rev, Some(size));
        out
    }

    #[test]
    fn padding_reaches_the_target_without_counting_the_rev() {
        let rev = "2-6d7933ba841aac702de8c481a90355ad";
        for number in 0..20 {
            let doc = sized(number, 1, None, DocSize::fixed(1000));
            assert_eq!(doc.len(), 1000);
            let value: serde_json::Value = serde_json::from_slice(&doc).unwrap();
            let padding = value["sofabench_padding"].as_str().unwrap();
            assert!(
                padding
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
            );
            let updated = sized(number, 2, Some(rev), DocSize::fixed(1000));
            let rev_member = format!(",\"_rev\":\"{rev}\"").len();
            assert_eq!(updated.len() - rev_member, 1000);
        }
    }

    #[test]
    fn without_a_size_nothing_changes_and_small_targets_are_left_alone() {
        let w = writer();
        let (mut plain, mut none) = (Vec::new(), Vec::new());
        w.write(&mut plain, 5, 3, Some("id"), Some("1-a"));
        w.write_sized(&mut none, 5, 3, Some("id"), Some("1-a"), None);
        assert_eq!(plain, none);
        let small = sized(5, 1, None, DocSize::fixed(10));
        assert!(!String::from_utf8(small).unwrap().contains("padding"));
    }

    #[test]
    fn a_range_gives_each_document_its_own_size_for_good() {
        let range = DocSize {
            min: 500,
            max: 5000,
        };
        let sizes: Vec<usize> = (0..50).map(|n| sized(n, 1, None, range).len()).collect();
        assert!(sizes.iter().all(|s| (500..=5000).contains(s)), "{sizes:?}");
        assert!(sizes.iter().min() < Some(&1500) && sizes.iter().max() > Some(&4000));
        assert_eq!(sized(7, 1, None, range).len(), sizes[7]);
    }
}
