//! The compiled form of a template.
//!
//! Both JSON and XML templates are read into the same tree of [`Node`]s;
//! equal trees generate equal bytes. The tree is then flattened, one
//! [`Program`] field per top-level member, into a list of [`Op`]s: runs of
//! fixed bytes (already escaped keys, brackets, commas, `null`) interleaved
//! with value generators, so writing a document is a single pass that copies
//! bytes and draws random values.

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

/// One value of a template.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    /// Kept as `null`.
    Null,
    /// A generated boolean.
    Bool,
    /// A generated integer in `[min, max]`.
    Int { min: i64, max: i64 },
    /// A generated float in `[min, max)`; the default range `[0, 1)` has
    /// `f32` precision (see `values`).
    Float { min: f64, max: f64 },
    /// A generated string of dictionary words.
    Str,
    /// A generated RFC 3339 timestamp.
    Timestamp,
    /// An array of the same length with each element generated.
    Array(Vec<Node>),
    /// An object with the same keys in the same order.
    Object(Vec<Member>),
}

impl Node {
    pub(crate) fn default_int() -> Node {
        Node::Int {
            min: DEFAULT_INT_MIN,
            max: DEFAULT_INT_MAX,
        }
    }

    pub(crate) fn default_float() -> Node {
        Node::Float {
            min: DEFAULT_FLOAT_MIN,
            max: DEFAULT_FLOAT_MAX,
        }
    }

    /// What kind of value this is, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool => "a boolean",
            Node::Int { .. } => "an integer",
            Node::Float { .. } => "a float",
            Node::Str => "a string",
            Node::Timestamp => "a timestamp string",
            Node::Array(_) => "an array",
            Node::Object(_) => "an object",
        }
    }
}

/// One key/value pair of an object.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Member {
    /// The key as written in the template.
    pub(crate) name: String,
    /// `"name":`, JSON-escaped, ready to copy.
    pub(crate) key: Box<[u8]>,
    pub(crate) value: Node,
}

impl Member {
    pub(crate) fn new(name: String, value: Node) -> Member {
        let mut key = Vec::with_capacity(name.len() + 3);
        write_json_string(&mut key, &name);
        key.push(b':');
        Member {
            name,
            key: key.into_boxed_slice(),
            value,
        }
    }
}

/// Drops CouchDB's reserved top-level `_id` and `_rev` members; the writer
/// adds its own.
pub(crate) fn without_reserved(members: Vec<Member>) -> Vec<Member> {
    members
        .into_iter()
        .filter(|m| m.name != "_id" && m.name != "_rev")
        .collect()
}

/// One step of writing a value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op {
    /// Copy `program.bytes[start..end]` (`bytes` ends with [`PADDING`]
    /// spare bytes).
    Bytes {
        start: usize,
        end: usize,
    },
    Bool,
    /// Uniform over the `i32` range.
    Int32,
    /// Uniform over `[min, min + span]`.
    IntRange {
        min: i64,
        span: u64,
    },
    /// Uniform `f32` in `[0, 1)`.
    UnitFloat,
    /// Uniform `f64` in `[min, max)`.
    FloatRange {
        min: f64,
        max: f64,
    },
    Str,
    Timestamp,
}

/// The ops of one top-level member, key included.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Field {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// A template flattened for writing.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct Program {
    pub(crate) bytes: Vec<u8>,
    pub(crate) ops: Vec<Op>,
    pub(crate) fields: Vec<Field>,
}

impl Program {
    /// Flattens the top-level members of a template.
    pub(crate) fn compile(members: &[Member]) -> Program {
        let mut compiler = Compiler {
            program: Program::default(),
            pending: Vec::new(),
        };
        for member in members {
            let start = compiler.program.ops.len();
            compiler.pending.extend_from_slice(&member.key);
            compiler.node(&member.value);
            compiler.flush();
            let end = compiler.program.ops.len();
            compiler.program.fields.push(Field { start, end });
        }
        // Readable slack for `copy_run`.
        compiler.program.bytes.extend_from_slice(&[0; PADDING]);
        compiler.program
    }
}

struct Compiler {
    program: Program,
    /// Fixed bytes not yet turned into an op.
    pending: Vec<u8>,
}

impl Compiler {
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let start = self.program.bytes.len();
            self.program.bytes.append(&mut self.pending);
            let end = self.program.bytes.len();
            self.program.ops.push(Op::Bytes { start, end });
        }
    }

    fn op(&mut self, op: Op) {
        self.flush();
        self.program.ops.push(op);
    }

    fn node(&mut self, node: &Node) {
        match node {
            Node::Null => self.pending.extend_from_slice(b"null"),
            Node::Bool => self.op(Op::Bool),
            &Node::Int { min, max } => {
                if (min, max) == (DEFAULT_INT_MIN, DEFAULT_INT_MAX) {
                    self.op(Op::Int32)
                } else {
                    self.op(Op::IntRange {
                        min,
                        span: max.wrapping_sub(min) as u64,
                    })
                }
            }
            &Node::Float { min, max } => {
                if (min, max) == (DEFAULT_FLOAT_MIN, DEFAULT_FLOAT_MAX) {
                    self.op(Op::UnitFloat)
                } else {
                    self.op(Op::FloatRange { min, max })
                }
            }
            Node::Str => self.op(Op::Str),
            Node::Timestamp => self.op(Op::Timestamp),
            Node::Array(elements) => {
                self.pending.push(b'[');
                for (i, element) in elements.iter().enumerate() {
                    if i > 0 {
                        self.pending.push(b',');
                    }
                    self.node(element);
                }
                self.pending.push(b']');
            }
            Node::Object(members) => {
                self.pending.push(b'{');
                for (i, member) in members.iter().enumerate() {
                    if i > 0 {
                        self.pending.push(b',');
                    }
                    self.pending.extend_from_slice(&member.key);
                    self.node(&member.value);
                }
                self.pending.push(b'}');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_escaped_once() {
        let m = Member::new("a\"b\\c\n".to_owned(), Node::Null);
        assert_eq!(&*m.key, b"\"a\\\"b\\\\c\\n\":");
    }

    #[test]
    fn fixed_bytes_are_merged() {
        let members = vec![
            Member::new(
                "a".into(),
                Node::Array(vec![Node::Null, Node::Object(vec![]), Node::Bool]),
            ),
            Member::new(
                "b".into(),
                Node::Object(vec![Member::new("c".into(), Node::Null)]),
            ),
        ];
        let p = Program::compile(&members);
        assert_eq!(
            p.fields,
            vec![Field { start: 0, end: 3 }, Field { start: 3, end: 4 }]
        );
        let text = |op: &Op| match *op {
            Op::Bytes { start, end } => String::from_utf8(p.bytes[start..end].to_vec()).unwrap(),
            other => format!("<{other:?}>"),
        };
        let all: Vec<String> = p.ops.iter().map(text).collect();
        assert_eq!(
            all,
            ["\"a\":[null,{},", "<Bool>", "]", "\"b\":{\"c\":null}"]
        );
    }

    #[test]
    fn default_ranges_use_the_fast_ops() {
        let members = vec![
            Member::new("i".into(), Node::default_int()),
            Member::new("f".into(), Node::default_float()),
            Member::new("j".into(), Node::Int { min: -1, max: 1 }),
            Member::new("g".into(), Node::Float { min: 0.0, max: 2.0 }),
            Member::new(
                "k".into(),
                Node::Int {
                    min: i64::MIN,
                    max: i64::MAX,
                },
            ),
        ];
        let ops: Vec<Op> = Program::compile(&members)
            .ops
            .into_iter()
            .filter(|op| !matches!(op, Op::Bytes { .. }))
            .collect();
        assert_eq!(
            ops,
            [
                Op::Int32,
                Op::UnitFloat,
                Op::IntRange { min: -1, span: 2 },
                Op::FloatRange { min: 0.0, max: 2.0 },
                Op::IntRange {
                    min: i64::MIN,
                    span: u64::MAX
                },
            ]
        );
    }

    #[test]
    fn reserved_members_are_dropped() {
        let members = vec![
            Member::new("_id".into(), Node::Str),
            Member::new(
                "x".into(),
                Node::Object(vec![Member::new("_id".into(), Node::Str)]),
            ),
            Member::new("_rev".into(), Node::Str),
            Member::new("_idx".into(), Node::Str),
        ];
        let kept: Vec<String> = without_reserved(members)
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(kept, ["x", "_idx"]);
    }
}
