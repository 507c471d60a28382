//! The compiled form of a template, and the compiler both readers feed.
//!
//! The JSON and XML readers call a [`Compiler`] as they parse, with no tree in between, so
//! loading a template costs its text plus its compiled form (docs/PERFORMANCE.md, section
//! 8). A [`Program`] holds a document's fixed bytes (escaped keys, brackets, commas,
//! `null`) in one buffer, in order, and one 4-byte [`Op`] per generated value: "copy the next
//! `n` fixed bytes, then generate a value of this kind". The `min`/`max` of ranged values
//! are kept aside, in order of use. Writing a top-level value is one pass over its ops;
//! equal templates, whichever format they came from, compile to equal programs.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::values::{PADDING, write_json_string};

/// Generated integers default to the `i32` range (as Iron Cushion's).
pub(crate) const DEFAULT_INT_MIN: i64 = i32::MIN as i64;
/// See [`DEFAULT_INT_MIN`].
pub(crate) const DEFAULT_INT_MAX: i64 = i32::MAX as i64;
/// Generated floats default to `[0, 1)`.
pub(crate) const DEFAULT_FLOAT_MIN: f64 = 0.0;
/// See [`DEFAULT_FLOAT_MIN`].
pub(crate) const DEFAULT_FLOAT_MAX: f64 = 1.0;
/// Deepest nesting of objects and arrays accepted (serde_json's own limit
/// is 128 for JSON; XML is held to the same).
pub(crate) const MAX_DEPTH: usize = 128;

/// A value the writer generates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Generated {
    /// `true` or `false`.
    Bool,
    /// An integer in `[min, max]`.
    Int { min: i64, max: i64 },
    /// A float in `[min, max)`; the default range `[0, 1)` has `f32` precision (see
    /// `values`).
    Float { min: f64, max: f64 },
    /// A string of dictionary words.
    Str,
    /// One of `distinct` strings, uniformly (see `values::write_one_of`).
    OneOf { distinct: u64 },
    /// An RFC 3339 timestamp.
    Timestamp,
}

impl Generated {
    pub(crate) fn default_int() -> Generated {
        Generated::Int {
            min: DEFAULT_INT_MIN,
            max: DEFAULT_INT_MAX,
        }
    }

    pub(crate) fn default_float() -> Generated {
        Generated::Float {
            min: DEFAULT_FLOAT_MIN,
            max: DEFAULT_FLOAT_MAX,
        }
    }

    /// The op kind and, for a ranged value, its range.
    fn encode(self) -> (u32, Option<[u64; 2]>) {
        match self {
            Generated::Bool => (Op::BOOL, None),
            Generated::Int { min, max } if (min, max) == (DEFAULT_INT_MIN, DEFAULT_INT_MAX) => {
                (Op::INT32, None)
            }
            Generated::Int { min, max } => {
                let span = max.wrapping_sub(min) as u64;
                (Op::INT_RANGE, Some([min as u64, span]))
            }
            Generated::Float { min, max }
                if (min, max) == (DEFAULT_FLOAT_MIN, DEFAULT_FLOAT_MAX) =>
            {
                (Op::UNIT_FLOAT, None)
            }
            Generated::Float { min, max } => {
                (Op::FLOAT_RANGE, Some([min.to_bits(), max.to_bits()]))
            }
            Generated::Str => (Op::STR, None),
            Generated::OneOf { distinct } => (Op::ONE_OF, Some([distinct, 0])),
            Generated::Timestamp => (Op::TIMESTAMP, None),
        }
    }

    /// An integer in `[min, max]`, or why not (the reader adds where and how to fix it).
    pub(crate) fn int_range(min: i64, max: i64) -> Result<Generated, String> {
        if min > max {
            return Err(format!("min {min} greater than max {max}"));
        }
        Ok(Generated::Int { min, max })
    }

    /// A float in `[min, max)` (`-0` read as `0`), or why not.
    pub(crate) fn float_range(min: f64, max: f64) -> Result<Generated, String> {
        if !(min.is_finite() && max.is_finite()) {
            return Err("a bound that is not a finite number".into());
        }
        if min > max {
            return Err(format!("min {min} greater than max {max}"));
        }
        Ok(Generated::Float {
            min: min + 0.0,
            max: max + 0.0,
        })
    }

    /// One of `distinct` strings, or why not.
    pub(crate) fn one_of(distinct: u64) -> Result<Generated, String> {
        if !(1..=MAX_DISTINCT).contains(&distinct) {
            return Err(format!("distinct {distinct} outside 1 to {MAX_DISTINCT}"));
        }
        Ok(Generated::OneOf { distinct })
    }
}

/// Most distinct values a string domain may have (2^32: far more than any selectivity
/// needs, and the words-and-number form stays short).
pub(crate) const MAX_DISTINCT: u64 = 1 << 32;

/// One step of writing: copy [`Op::run`] fixed bytes, then generate a value of
/// [`Op::kind`]. Packed in 4 bytes, as a template is mostly ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Op(u32);

impl Op {
    /// Generates nothing: only copies its run.
    pub(crate) const FIXED: u32 = 0;
    pub(crate) const BOOL: u32 = 1;
    /// Uniform over the `i32` range.
    pub(crate) const INT32: u32 = 2;
    /// Uniform over `[min, min + span]`, from the next range: `[min as u64, span]`.
    pub(crate) const INT_RANGE: u32 = 3;
    /// Uniform `f32` in `[0, 1)`.
    pub(crate) const UNIT_FLOAT: u32 = 4;
    /// Uniform `f64` in `[min, max)`, from the next range: `[min, max]` as bits.
    pub(crate) const FLOAT_RANGE: u32 = 5;
    pub(crate) const STR: u32 = 6;
    pub(crate) const TIMESTAMP: u32 = 7;
    /// One of `n` strings, from the next range: `[n, 0]`.
    pub(crate) const ONE_OF: u32 = 8;
    const KIND_BITS: u32 = 4;
    /// The longest run one op copies; longer runs take several ops.
    const MAX_RUN: usize = (u32::MAX >> Op::KIND_BITS) as usize;

    fn new(run: usize, kind: u32) -> Op {
        debug_assert!(run <= Op::MAX_RUN && kind < 1 << Op::KIND_BITS);
        Op(((run as u32) << Op::KIND_BITS) | kind)
    }

    #[inline]
    pub(crate) fn run(self) -> usize {
        (self.0 >> Op::KIND_BITS) as usize
    }

    #[inline]
    pub(crate) fn kind(self) -> u32 {
        self.0 & ((1 << Op::KIND_BITS) - 1)
    }
}

/// Where a top-level value starts in each of a program's lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Start {
    pub(crate) op: u32,
    pub(crate) byte: u32,
    pub(crate) range: u32,
}

/// A template compiled for writing.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct Program {
    /// Every fixed byte, in order, then [`PADDING`] spare bytes.
    pub(crate) bytes: Vec<u8>,
    pub(crate) ops: Vec<Op>,
    /// The ranges of `INT_RANGE`, `FLOAT_RANGE` and `ONE_OF` ops, in order.
    pub(crate) ranges: Vec<[u64; 2]>,
    /// The start of each top-level value (its key included), then the end of the last.
    pub(crate) starts: Vec<Start>,
}

impl Program {
    /// Number of top-level values.
    pub(crate) fn fields(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// The key of top-level value `i`, unescaped.
    pub(crate) fn name(&self, i: usize) -> Option<String> {
        let start = self.starts.get(i + 1).and(self.starts.get(i))?;
        let key = escaped_key_at(&self.bytes, start.byte as usize);
        serde_json::from_slice(&key[..key.len() - 1]).ok()
    }
}

#[cfg(test)]
impl Program {
    /// Each top-level value as text, generated values shown as `<bool>`, `<int>`,
    /// `<int MIN..=MAX>`, `<float>`, `<float MIN..MAX>`, `<str>`, `<str one of N>`, `<time>`.
    pub(crate) fn shape(&self) -> Vec<String> {
        (0..self.fields())
            .map(|field| {
                let (start, end) = (self.starts[field], self.starts[field + 1]);
                let mut at = start.byte as usize;
                let mut ranges = self.ranges[start.range as usize..].iter();
                let mut text = String::new();
                for op in &self.ops[start.op as usize..end.op as usize] {
                    text.push_str(std::str::from_utf8(&self.bytes[at..at + op.run()]).unwrap());
                    at += op.run();
                    let shown = match op.kind() {
                        Op::FIXED => String::new(),
                        Op::BOOL => "<bool>".into(),
                        Op::INT32 => "<int>".into(),
                        Op::INT_RANGE => {
                            let [min, span] = ranges.next().unwrap();
                            let max = (*min as i64).wrapping_add(*span as i64);
                            format!("<int {}..={max}>", *min as i64)
                        }
                        Op::UNIT_FLOAT => "<float>".into(),
                        Op::FLOAT_RANGE => {
                            let [min, max] = ranges.next().unwrap();
                            format!("<float {}..{}>", f64::from_bits(*min), f64::from_bits(*max))
                        }
                        Op::STR => "<str>".into(),
                        Op::ONE_OF => {
                            let [distinct, _] = ranges.next().unwrap();
                            format!("<str one of {distinct}>")
                        }
                        _ => "<time>".into(),
                    };
                    text.push_str(&shown);
                }
                text
            })
            .collect()
    }
}

/// Why compiling stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The key just given is already in its object.
    Duplicate,
    /// The compiled form does not fit 32-bit offsets (4 GiB); files are read with a far
    /// smaller limit, so this is a guard, not a case anyone meets.
    TooLarge,
}

/// Where the compiler was, to go back to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mark {
    bytes: usize,
    ops: usize,
    ranges: usize,
}

/// The keys of one object seen so far, to refuse a repeated one.
#[derive(Default)]
pub(crate) struct Keys {
    /// Offsets of the escaped keys in the program's bytes.
    offsets: HashTable<u32>,
    /// At the top level: whether `_id` and `_rev` were seen (they compile to nothing).
    reserved: Option<[bool; 2]>,
}

impl Keys {
    /// The keys of the top-level object, where `_id` and `_rev` are dropped.
    pub(crate) fn top_level() -> Keys {
        Keys {
            offsets: HashTable::new(),
            reserved: Some([false, false]),
        }
    }
}

/// What [`Compiler::key`] did with a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    /// Written; its value follows.
    Kept,
    /// A top-level `_id` or `_rev`: its value is read and dropped.
    Reserved,
}

/// Builds a [`Program`] from calls made in document order.
pub(crate) struct Compiler {
    program: Program,
    /// Where the fixed bytes not yet covered by an op begin.
    run_start: usize,
    hasher: std::hash::RandomState,
}

impl Compiler {
    pub(crate) fn new() -> Compiler {
        Compiler {
            program: Program::default(),
            run_start: 0,
            hasher: std::hash::RandomState::new(),
        }
    }

    /// Fixed bytes: brackets, commas, `null`.
    pub(crate) fn fixed(&mut self, bytes: &[u8]) {
        self.program.bytes.extend_from_slice(bytes);
    }

    /// A generated value.
    pub(crate) fn value(&mut self, value: Generated) {
        let (kind, range) = value.encode();
        self.op(kind);
        self.program.ranges.extend(range);
    }

    /// `"name":`, unless `name` is already in `keys` (a [`Refused::Duplicate`]) or is a
    /// top-level `_id` or `_rev` ([`Key::Reserved`], nothing written). Written at the end,
    /// or, for a value compiled before its key (XML allows `<value>` before `<name>`),
    /// at `before`, where that value begins.
    pub(crate) fn key(
        &mut self,
        keys: &mut Keys,
        name: &str,
        before: Option<Mark>,
    ) -> Result<Key, Refused> {
        if let Some(seen) = &mut keys.reserved {
            let slot = match name {
                "_id" => Some(0),
                "_rev" => Some(1),
                _ => None,
            };
            if let Some(slot) = slot {
                if std::mem::replace(&mut seen[slot], true) {
                    return Err(Refused::Duplicate);
                }
                return Ok(Key::Reserved);
            }
        }
        let start = self.program.bytes.len();
        write_json_string(&mut self.program.bytes, name);
        self.program.bytes.push(b':');
        let bytes = &self.program.bytes;
        let new = &bytes[start..];
        let hash = self.hasher.hash_one(new);
        let at = |o: &u32| escaped_key_at(bytes, *o as usize);
        if keys.offsets.find(hash, |o| at(o) == new).is_some() {
            self.program.bytes.truncate(start);
            return Err(Refused::Duplicate);
        }
        let length = new.len();
        let place = match before {
            Some(mark) => self.move_key_before(mark, length)?,
            None => start,
        };
        let offset = u32::try_from(place).map_err(|_| Refused::TooLarge)?;
        let (bytes, hasher) = (&self.program.bytes, &self.hasher);
        keys.offsets.insert_unique(hash, offset, |o| {
            hasher.hash_one(escaped_key_at(bytes, *o as usize))
        });
        Ok(Key::Kept)
    }

    /// Moves the `length` bytes of a key just written to `mark`, where its value begins,
    /// and returns where it now is. The first op since `mark`, if any, copies them with its
    /// run, and the bytes no op covers yet moved along; otherwise they are among those.
    fn move_key_before(&mut self, mark: Mark, length: usize) -> Result<usize, Refused> {
        self.program.bytes[mark.bytes..].rotate_right(length);
        if let Some(first) = self.program.ops.get_mut(mark.ops) {
            let run = first.run() + length;
            if run > Op::MAX_RUN {
                return Err(Refused::TooLarge);
            }
            *first = Op::new(run, first.kind());
            self.run_start += length;
        }
        Ok(mark.bytes)
    }

    /// Where the compiler is now: before a top-level value, or before a value to drop.
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            bytes: self.program.bytes.len(),
            ops: self.program.ops.len(),
            ranges: self.program.ranges.len(),
        }
    }

    /// Forgets everything compiled since `mark` (a dropped `_id` or `_rev`).
    pub(crate) fn rewind(&mut self, mark: Mark) {
        self.program.bytes.truncate(mark.bytes);
        self.program.ops.truncate(mark.ops);
        self.program.ranges.truncate(mark.ranges);
        self.run_start = self.run_start.min(mark.bytes);
    }

    /// Ends the top-level value that began at `mark`.
    pub(crate) fn end_field(&mut self, mark: Mark) -> Result<(), Refused> {
        if self.program.bytes.len() > self.run_start {
            self.op(Op::FIXED);
        }
        let start = start_of(mark)?;
        self.program.starts.push(start);
        Ok(())
    }

    /// The program, once every top-level value has ended.
    pub(crate) fn finish(mut self) -> Result<Program, Refused> {
        let end = start_of(self.mark())?;
        let program = &mut self.program;
        program.starts.push(end);
        // Readable slack for `copy_run`.
        program.bytes.extend_from_slice(&[0; PADDING]);
        program.bytes.shrink_to_fit();
        program.ops.shrink_to_fit();
        program.ranges.shrink_to_fit();
        program.starts.shrink_to_fit();
        Ok(self.program)
    }

    /// Covers the pending fixed bytes, then generates `kind`.
    fn op(&mut self, kind: u32) {
        let run = self.program.bytes.len() - self.run_start;
        push_op(&mut self.program.ops, run, kind, Op::MAX_RUN);
        self.run_start = self.program.bytes.len();
    }
}

/// Pushes the op that copies `run` bytes and generates `kind`, preceded by as many
/// copy-only ops as a run longer than `max_run` needs.
fn push_op(ops: &mut Vec<Op>, mut run: usize, kind: u32, max_run: usize) {
    while run > max_run {
        ops.push(Op::new(max_run, Op::FIXED));
        run -= max_run;
    }
    ops.push(Op::new(run, kind));
}

fn start_of(mark: Mark) -> Result<Start, Refused> {
    let small = |n: usize| u32::try_from(n).map_err(|_| Refused::TooLarge);
    Ok(Start {
        op: small(mark.ops)?,
        byte: small(mark.bytes)?,
        range: small(mark.ranges)?,
    })
}

/// The escaped key `"…":` that starts at `bytes[start]`. A JSON string ends at its first
/// unescaped quote, so the key's length need not be stored.
fn escaped_key_at(bytes: &[u8], start: usize) -> &[u8] {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return &bytes[start..(i + 2).min(bytes.len())],
            _ => i += 1,
        }
    }
    &bytes[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles a value.
    type ValueFn<'a> = &'a dyn Fn(&mut Compiler);

    /// The program of top-level members given as (key, closure compiling the value).
    fn compile(members: &[(&str, ValueFn)]) -> Program {
        let mut c = Compiler::new();
        let mut keys = Keys::top_level();
        for (name, value) in members {
            let mark = c.mark();
            match c.key(&mut keys, name, None).unwrap() {
                Key::Kept => {
                    value(&mut c);
                    c.end_field(mark).unwrap();
                }
                Key::Reserved => {
                    value(&mut c);
                    c.rewind(mark);
                }
            }
        }
        c.finish().unwrap()
    }

    /// Each op as its run's text and its kind.
    fn shown(p: &Program) -> Vec<(String, u32)> {
        let mut at = 0;
        p.ops
            .iter()
            .map(|op| {
                let text = String::from_utf8(p.bytes[at..at + op.run()].to_vec()).unwrap();
                at += op.run();
                (text, op.kind())
            })
            .collect()
    }

    #[test]
    fn fixed_bytes_are_merged_into_the_next_op() {
        let p = compile(&[
            ("a", &|c| {
                c.fixed(b"[null,{},");
                c.value(Generated::Bool);
                c.fixed(b"]");
            }),
            ("b", &|c| c.fixed(b"{\"c\":null}")),
        ]);
        assert_eq!(
            shown(&p),
            [
                ("\"a\":[null,{},".to_string(), Op::BOOL),
                ("]".to_string(), Op::FIXED),
                ("\"b\":{\"c\":null}".to_string(), Op::FIXED),
            ]
        );
        let starts: Vec<(u32, u32)> = p.starts.iter().map(|s| (s.op, s.byte)).collect();
        assert_eq!(starts, [(0, 0), (2, 14), (3, 28)]);
        assert_eq!(p.fields(), 2);
        assert_eq!(p.name(1).as_deref(), Some("b"));
        assert_eq!(p.name(2), None);
    }

    #[test]
    fn default_ranges_use_the_fast_ops() {
        let p = compile(&[("x", &|c| {
            c.value(Generated::default_int());
            c.value(Generated::default_float());
            c.value(Generated::Int { min: -1, max: 1 });
            c.value(Generated::Float { min: 0.0, max: 2.0 });
            c.value(Generated::Int {
                min: i64::MIN,
                max: i64::MAX,
            });
        })]);
        let kinds: Vec<u32> = p.ops.iter().map(|op| op.kind()).collect();
        assert_eq!(
            kinds,
            [
                Op::INT32,
                Op::UNIT_FLOAT,
                Op::INT_RANGE,
                Op::FLOAT_RANGE,
                Op::INT_RANGE
            ]
        );
        assert_eq!(
            p.ranges,
            [
                [-1i64 as u64, 2],
                [0.0f64.to_bits(), 2.0f64.to_bits()],
                [i64::MIN as u64, u64::MAX]
            ]
        );
    }

    #[test]
    fn keys_are_escaped_once_and_named_back() {
        let p = compile(&[("a\"b\\c\n", &|c| c.fixed(b"null"))]);
        assert_eq!(&p.bytes[..16], b"\"a\\\"b\\\\c\\n\":null");
        assert_eq!(p.name(0).as_deref(), Some("a\"b\\c\n"));
    }

    #[test]
    fn reserved_members_are_dropped_at_the_top_level_only() {
        let p = compile(&[
            ("_id", &|c| c.value(Generated::Str)),
            ("x", &|c| {
                let mut keys = Keys::default();
                c.fixed(b"{");
                assert_eq!(c.key(&mut keys, "_id", None), Ok(Key::Kept));
                c.value(Generated::Str);
                c.fixed(b"}");
            }),
            ("_rev", &|c| c.value(Generated::Int { min: 1, max: 2 })),
            ("_idx", &|c| c.value(Generated::Str)),
        ]);
        assert_eq!(p.fields(), 2);
        assert_eq!(p.name(0).as_deref(), Some("x"));
        assert_eq!(p.name(1).as_deref(), Some("_idx"));
        assert!(p.ranges.is_empty(), "the dropped range went too");
        assert_eq!(
            shown(&p),
            [
                ("\"x\":{\"_id\":".to_string(), Op::STR),
                ("}".to_string(), Op::FIXED),
                ("\"_idx\":".to_string(), Op::STR),
            ]
        );
    }

    #[test]
    fn repeated_keys_are_refused() {
        let mut c = Compiler::new();
        let mut top = Keys::top_level();
        assert_eq!(c.key(&mut top, "_id", None), Ok(Key::Reserved));
        assert_eq!(c.key(&mut top, "_id", None), Err(Refused::Duplicate));
        let mut keys = Keys::default();
        // Keys that are prefixes of each other, or differ only in escapes, are distinct.
        for name in ["a", "ab", "a\"", "a\\", "", "_id", "_rev"] {
            assert_eq!(c.key(&mut keys, name, None), Ok(Key::Kept), "{name}");
        }
        let before = c.mark().bytes;
        for name in ["a", "ab", "a\"", "a\\", "", "_id"] {
            assert_eq!(
                c.key(&mut keys, name, None),
                Err(Refused::Duplicate),
                "{name}"
            );
            assert_eq!(c.mark().bytes, before, "a refused key is not kept");
        }
        // Thousands of keys: the table grows (rehashing every offset) and still finds them.
        for i in 0..5000 {
            assert_eq!(c.key(&mut keys, &format!("k{i}"), None), Ok(Key::Kept));
        }
        for i in (0..5000).step_by(7) {
            assert_eq!(
                c.key(&mut keys, &format!("k{i}"), None),
                Err(Refused::Duplicate)
            );
        }
    }

    #[test]
    fn runs_longer_than_an_op_holds_are_split() {
        let mut ops = Vec::new();
        push_op(&mut ops, 25, Op::BOOL, 10);
        push_op(&mut ops, 10, Op::STR, 10);
        let expected = [
            (10, Op::FIXED),
            (10, Op::FIXED),
            (5, Op::BOOL),
            (10, Op::STR),
        ];
        let got: Vec<(usize, u32)> = ops.iter().map(|op| (op.run(), op.kind())).collect();
        assert_eq!(got, expected);
        let longest = Op::new(Op::MAX_RUN, Op::TIMESTAMP);
        assert_eq!(
            (longest.run(), longest.kind()),
            (Op::MAX_RUN, Op::TIMESTAMP)
        );
    }

    #[test]
    fn the_escaped_key_ends_at_its_closing_quote() {
        let bytes = b"\"a\\\"\\\\\":null\"b\":1";
        assert_eq!(escaped_key_at(bytes, 0), b"\"a\\\"\\\\\":");
        assert_eq!(escaped_key_at(bytes, 12), b"\"b\":");
        assert_eq!(escaped_key_at(b"\"cut", 0), b"\"cut");
    }
}
