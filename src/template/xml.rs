//! Reading an XML template (Iron Cushion's format, extended).
//!
//! ```xml
//! <object>
//!   <entry><name>count</name><value><integer min="0" max="99"/></value></entry>
//!   <entry><name>tags</name><value>
//!     <array><element><string/></element><element><null/></element></array>
//!   </value></entry>
//!   <entry><name>seen</name><value><timestamp/></value></entry>
//! </object>
//! ```
//!
//! The outermost tag is `<object>`. `<object>` holds `<entry>` tags, each
//! with one `<name>` (the key, taken verbatim, whitespace included) and one
//! `<value>`; `<array>` holds `<element>` tags. `<value>` and `<element>`
//! hold exactly one value tag: `<object>`, `<array>`, `<boolean/>`,
//! `<integer/>`, `<float/>`, `<string/>`, `<timestamp/>` or `<null/>`.
//! `<integer>` and `<float>` accept `min` and `max` attributes (integers:
//! whole numbers within `i64`, default `i32` range, inclusive; floats: finite,
//! default `0` and `1`, max exclusive). Whitespace between tags and comments
//! are ignored; any other text, attribute or tag is an error.

use std::collections::HashSet;
use std::num::IntErrorKind;

use roxmltree::{Document, Node as XmlNode};

use super::error::{TemplateError, excerpt};
use super::schema::{
    DEFAULT_FLOAT_MAX, DEFAULT_FLOAT_MIN, DEFAULT_INT_MAX, DEFAULT_INT_MIN, MAX_DEPTH, Member,
    Node, without_reserved,
};

/// Every tag an XML template may use.
const TAGS: &str = "<object>, <entry>, <name>, <value>, <array>, <element>, <boolean>, <integer>, \
                    <float>, <string>, <timestamp>, <null>";
/// The tags that stand for a value.
const VALUE_TAGS: &str =
    "<object>, <array>, <boolean/>, <integer/>, <float/>, <string/>, <timestamp/> or <null/>";

/// The top-level members of the XML template `text` (`_id`, `_rev` removed).
pub(crate) fn parse(text: &str, source: &str) -> Result<Vec<Member>, TemplateError> {
    let doc = Document::parse(text).map_err(|e| from_roxmltree(&e, source))?;
    let reader = Reader { doc: &doc, source };
    let root = doc.root_element();
    reader.check_known(root)?;
    if tag(root) != "object" {
        return Err(reader.error(
            root,
            format!("the outermost tag is <{}>, not <object>", tag(root)),
            "an XML template is one <object> holding <entry> tags",
        ));
    }
    reader.no_attributes(root)?;
    Ok(without_reserved(reader.object(root, 1)?))
}

fn from_roxmltree(e: &roxmltree::Error, source: &str) -> TemplateError {
    let pos = e.pos();
    let problem = e.to_string().replace(&format!(" at {pos}"), "");
    let remedy = match e {
        roxmltree::Error::DtdDetected => "remove the <!DOCTYPE> declaration",
        _ => "fix the XML at that position",
    };
    TemplateError::at(
        source,
        pos.row,
        pos.col,
        format!("invalid XML: {problem}"),
        remedy,
    )
}

/// The local name of an element.
fn tag<'a>(node: XmlNode<'a, '_>) -> &'a str {
    node.tag_name().name()
}

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

struct Reader<'a, 'input> {
    doc: &'a Document<'input>,
    source: &'a str,
}

impl<'a, 'input> Reader<'a, 'input> {
    fn error_at(&self, offset: usize, problem: String, remedy: &str) -> TemplateError {
        let pos = self.doc.text_pos_at(offset);
        TemplateError::at(self.source, pos.row, pos.col, problem, remedy)
    }

    fn error(&self, node: XmlNode<'a, 'input>, problem: String, remedy: &str) -> TemplateError {
        self.error_at(node.range().start, problem, remedy)
    }

    /// Errors on tags that are not part of the template language.
    fn check_known(&self, node: XmlNode<'a, 'input>) -> Result<(), TemplateError> {
        let name = tag(node);
        let known = node.tag_name().namespace().is_none()
            && matches!(
                name,
                "object"
                    | "entry"
                    | "name"
                    | "value"
                    | "array"
                    | "element"
                    | "boolean"
                    | "integer"
                    | "float"
                    | "string"
                    | "timestamp"
                    | "null"
            );
        if known {
            Ok(())
        } else {
            let shown = match node.tag_name().namespace() {
                Some(ns) => format!("<{name}> (in namespace {ns})"),
                None => format!("<{name}>"),
            };
            Err(self.error(
                node,
                format!("unknown tag {shown}"),
                &format!("use only the template tags {TAGS}"),
            ))
        }
    }

    /// The child elements of `node`, after checking that any text between
    /// them is whitespace.
    fn children(
        &self,
        node: XmlNode<'a, 'input>,
    ) -> Result<Vec<XmlNode<'a, 'input>>, TemplateError> {
        let mut elements = Vec::new();
        for child in node.children() {
            if child.is_element() {
                self.check_known(child)?;
                elements.push(child);
            } else if child.is_text() {
                let text = child.text().unwrap_or("");
                if let Some(skip) = text.find(|c| !is_xml_space(c)) {
                    return Err(self.error_at(
                        child.range().start + skip,
                        format!(
                            "unexpected text \"{}\" inside <{}>",
                            excerpt(text.trim_matches(is_xml_space)),
                            tag(node)
                        ),
                        "only tags belong here; text is allowed only inside <name>",
                    ));
                }
            }
        }
        Ok(elements)
    }

    fn no_attributes(&self, node: XmlNode<'a, 'input>) -> Result<(), TemplateError> {
        self.only_attributes(node, &[])
    }

    fn only_attributes(
        &self,
        node: XmlNode<'a, 'input>,
        allowed: &[&str],
    ) -> Result<(), TemplateError> {
        for attribute in node.attributes() {
            if attribute.namespace().is_some() || !allowed.contains(&attribute.name()) {
                let remedy = if allowed.is_empty() {
                    format!("<{}> takes no attributes; remove it", tag(node))
                } else {
                    format!(
                        "<{}> takes only {}; remove it",
                        tag(node),
                        allowed.join(" and ")
                    )
                };
                return Err(self.error_at(
                    attribute.range().start,
                    format!(
                        "unexpected attribute {}=\"{}\" on <{}>",
                        attribute.name(),
                        excerpt(attribute.value()),
                        tag(node)
                    ),
                    &remedy,
                ));
            }
        }
        Ok(())
    }

    /// Checks a tag that must have no child tags (`<string/>` and friends).
    fn empty(&self, node: XmlNode<'a, 'input>) -> Result<(), TemplateError> {
        if let Some(child) = self.children(node)?.first() {
            return Err(self.error(
                *child,
                format!("<{}> cannot be inside <{}>", tag(*child), tag(node)),
                &format!("write <{}/> with nothing inside", tag(node)),
            ));
        }
        Ok(())
    }

    /// The node for a value tag.
    fn value(&self, node: XmlNode<'a, 'input>, depth: usize) -> Result<Node, TemplateError> {
        let name = tag(node);
        if matches!(name, "object" | "array") && depth > MAX_DEPTH {
            return Err(self.error(
                node,
                format!("objects and arrays are nested more than {MAX_DEPTH} levels deep"),
                "flatten the template",
            ));
        }
        if matches!(name, "entry" | "name" | "value" | "element") {
            return Err(self.error(
                node,
                format!("<{name}> is not a value tag"),
                &format!("put one of {VALUE_TAGS} here"),
            ));
        }
        let allowed: &[&str] = if matches!(name, "integer" | "float") {
            &["min", "max"]
        } else {
            &[]
        };
        self.only_attributes(node, allowed)?;
        Ok(match name {
            "object" => Node::Object(self.object(node, depth + 1)?),
            "array" => Node::Array(self.array(node, depth + 1)?),
            "boolean" | "string" | "timestamp" | "null" => {
                self.empty(node)?;
                match name {
                    "boolean" => Node::Bool,
                    "string" => Node::Str,
                    "timestamp" => Node::Timestamp,
                    _ => Node::Null,
                }
            }
            "integer" => {
                self.empty(node)?;
                self.integer(node)?
            }
            "float" => {
                self.empty(node)?;
                self.float(node)?
            }
            other => {
                // Not reached: every element passed here was checked as known.
                return Err(self.error(
                    node,
                    format!("unknown tag <{other}>"),
                    &format!("use only the template tags {TAGS}"),
                ));
            }
        })
    }

    fn object(
        &self,
        node: XmlNode<'a, 'input>,
        depth: usize,
    ) -> Result<Vec<Member>, TemplateError> {
        let mut members = Vec::new();
        let mut seen = HashSet::new();
        for entry in self.children(node)? {
            if tag(entry) != "entry" {
                return Err(self.error(
                    entry,
                    format!("<{}> cannot be directly inside <object>", tag(entry)),
                    "write each key and value as <entry><name>key</name><value>...</value></entry>",
                ));
            }
            self.no_attributes(entry)?;
            let mut name = None;
            let mut value = None;
            for part in self.children(entry)? {
                let slot = match tag(part) {
                    "name" => &mut name,
                    "value" => &mut value,
                    other => {
                        return Err(self.error(
                            part,
                            format!("<{other}> cannot be directly inside <entry>"),
                            "an <entry> holds one <name> and one <value>",
                        ));
                    }
                };
                if slot.is_some() {
                    return Err(self.error(
                        part,
                        format!("<entry> has more than one <{}>", tag(part)),
                        "an <entry> holds one <name> and one <value>",
                    ));
                }
                *slot = Some(part);
            }
            let (Some(name), Some(value)) = (name, value) else {
                let missing = if name.is_none() { "name" } else { "value" };
                return Err(self.error(
                    entry,
                    format!("<entry> has no <{missing}>"),
                    "give every <entry> one <name> (the key) and one <value> (the value's tag)",
                ));
            };
            let key = self.name(name)?;
            if !seen.insert(key.clone()) {
                return Err(self.error(
                    name,
                    format!("duplicate key \"{}\" in <object>", excerpt(&key)),
                    "keys in one object must be unique; remove or rename one of them",
                ));
            }
            let node = self.value(self.single(value)?, depth)?;
            members.push(Member::new(key, node));
        }
        Ok(members)
    }

    fn array(&self, node: XmlNode<'a, 'input>, depth: usize) -> Result<Vec<Node>, TemplateError> {
        let mut elements = Vec::new();
        for element in self.children(node)? {
            if tag(element) != "element" {
                return Err(self.error(
                    element,
                    format!("<{}> cannot be directly inside <array>", tag(element)),
                    "write each element as <element>...</element>",
                ));
            }
            self.no_attributes(element)?;
            elements.push(self.value(self.single(element)?, depth)?);
        }
        Ok(elements)
    }

    /// The one value tag inside `<value>` or `<element>`.
    fn single(&self, node: XmlNode<'a, 'input>) -> Result<XmlNode<'a, 'input>, TemplateError> {
        self.no_attributes(node)?;
        let children = self.children(node)?;
        match children.as_slice() {
            [only] => Ok(*only),
            [] => Err(self.error(
                node,
                format!("<{}> is empty", tag(node)),
                &format!("put exactly one of {VALUE_TAGS} inside it"),
            )),
            [_, second, ..] => Err(self.error(
                *second,
                format!("<{}> holds {} tags", tag(node), children.len()),
                &format!("put exactly one of {VALUE_TAGS} inside it (use <array> for several)"),
            )),
        }
    }

    /// The key in `<name>`: all its text, verbatim.
    fn name(&self, node: XmlNode<'a, 'input>) -> Result<String, TemplateError> {
        self.no_attributes(node)?;
        let mut key = String::new();
        for child in node.children() {
            if child.is_element() {
                self.check_known(child)?;
                return Err(self.error(
                    child,
                    format!("<{}> cannot be inside <name>", tag(child)),
                    "<name> holds only the key as text, e.g. <name>count</name>",
                ));
            }
            if let Some(text) = child.text().filter(|_| child.is_text()) {
                key.push_str(text);
            }
        }
        Ok(key)
    }

    /// The value of attribute `name`, trimmed, with its byte offset.
    fn attribute(&self, node: XmlNode<'a, 'input>, name: &str) -> Option<(&'a str, usize)> {
        node.attribute_node(name)
            .map(|a| (a.value().trim_matches(is_xml_space), a.range().start))
    }

    fn integer(&self, node: XmlNode<'a, 'input>) -> Result<Node, TemplateError> {
        let bound = |name: &str, default: i64| -> Result<(i64, bool), TemplateError> {
            let Some((text, offset)) = self.attribute(node, name) else {
                return Ok((default, false));
            };
            text.parse::<i64>().map(|n| (n, true)).map_err(|e| {
                let problem = match e.kind() {
                    IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => "is outside the 64-bit integer range",
                    _ => "is not a whole number",
                };
                self.error_at(
                    offset,
                    format!("{name}=\"{}\" on <integer> {problem}", excerpt(text)),
                    "write min and max as whole numbers from -9223372036854775808 to 9223372036854775807",
                )
            })
        };
        let (min, min_given) = bound("min", DEFAULT_INT_MIN)?;
        let (max, max_given) = bound("max", DEFAULT_INT_MAX)?;
        if min > max {
            return Err(self.range_error(
                node,
                &min.to_string(),
                min_given,
                &max.to_string(),
                max_given,
            ));
        }
        Ok(Node::Int { min, max })
    }

    fn float(&self, node: XmlNode<'a, 'input>) -> Result<Node, TemplateError> {
        let bound = |name: &str, default: f64| -> Result<(f64, bool), TemplateError> {
            let Some((text, offset)) = self.attribute(node, name) else {
                return Ok((default, false));
            };
            match text.parse::<f64>() {
                Ok(n) if n.is_finite() => Ok((n, true)),
                _ => Err(self.error_at(
                    offset,
                    format!(
                        "{name}=\"{}\" on <float> is not a finite number",
                        excerpt(text)
                    ),
                    "write min and max as decimal numbers, e.g. min=\"-1.5\" max=\"2e3\"",
                )),
            }
        };
        let (min, min_given) = bound("min", DEFAULT_FLOAT_MIN)?;
        let (max, max_given) = bound("max", DEFAULT_FLOAT_MAX)?;
        if min > max {
            return Err(self.range_error(
                node,
                &min.to_string(),
                min_given,
                &max.to_string(),
                max_given,
            ));
        }
        // -0.0 == 0.0: normalise so the default range is recognised.
        Ok(Node::Float {
            min: min + 0.0,
            max: max + 0.0,
        })
    }

    fn range_error(
        &self,
        node: XmlNode<'a, 'input>,
        min: &str,
        min_given: bool,
        max: &str,
        max_given: bool,
    ) -> TemplateError {
        let default = |given: bool| if given { "" } else { " (the default)" };
        self.error(
            node,
            format!(
                "<{}> has min {min}{} greater than max {max}{}",
                tag(node),
                default(min_given),
                default(max_given)
            ),
            "make min less than or equal to max",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(text: &str) -> Vec<Member> {
        parse(text, "t.xml").unwrap()
    }

    fn error(text: &str) -> String {
        parse(text, "t.xml").unwrap_err().to_string()
    }

    fn wrap(value: &str) -> String {
        format!("<object><entry><name>k</name><value>{value}</value></entry></object>")
    }

    #[test]
    fn all_tags_are_read() {
        let m = members(
            "<?xml version=\"1.0\"?>\n<!-- comment -->\n<object>\n\
             <entry><name>b</name><value><boolean/></value></entry>\n\
             <entry><value><integer/></value><name>i</name></entry>\n\
             <entry><name>r</name><value><integer min=\" -3 \" max=\"3\"/></value></entry>\n\
             <entry><name>f</name><value><float></float></value></entry>\n\
             <entry><name>g</name><value><float min=\"-0\" max=\"1e3\"/></value></entry>\n\
             <entry><name>s</name><value><string/></value></entry>\n\
             <entry><name>t</name><value><timestamp/></value></entry>\n\
             <entry><name>n</name><value><null/></value></entry>\n\
             <entry><name>a</name><value><array><element><null/></element><!-- c --></array></value></entry>\n\
             <entry><name> x &amp; &lt;y&gt; <![CDATA[z]]></name><value><object/></value></entry>\n\
             </object>",
        );
        let kinds: Vec<(&str, Node)> = m
            .iter()
            .map(|m| (m.name.as_str(), m.value.clone()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("b", Node::Bool),
                ("i", Node::default_int()),
                ("r", Node::Int { min: -3, max: 3 }),
                ("f", Node::default_float()),
                (
                    "g",
                    Node::Float {
                        min: 0.0,
                        max: 1000.0
                    }
                ),
                ("s", Node::Str),
                ("t", Node::Timestamp),
                ("n", Node::Null),
                ("a", Node::Array(vec![Node::Null])),
                (" x & <y> z", Node::Object(vec![])),
            ]
        );
    }

    #[test]
    fn outermost_tag_must_be_object() {
        assert_eq!(
            error("<array/>"),
            "t.xml:1:1: the outermost tag is <array>, not <object>; an XML template is one \
             <object> holding <entry> tags"
        );
        assert!(
            error("\n  <strin/>").starts_with(
                "t.xml:2:3: unknown tag <strin>; use only the template tags <object>,"
            )
        );
    }

    #[test]
    fn invalid_xml_has_position() {
        let e = error("<object>\n  <entry>\n</object>");
        assert!(
            e.starts_with(
                "t.xml:3:1: invalid XML: expected 'entry' tag, not 'object'; fix the XML"
            ),
            "{e}"
        );
        let e = error("");
        assert!(
            e.starts_with("t.xml:1:1: invalid XML: the document does not have a root node"),
            "{e}"
        );
        let e = error("<!DOCTYPE object><object/>");
        assert!(e.ends_with("; remove the <!DOCTYPE> declaration"), "{e}");
    }

    #[test]
    fn unknown_tags_are_named_with_the_valid_ones() {
        let e = error("<object>\n <entry><name>a</name><value><date/></value></entry></object>");
        assert_eq!(
            e,
            "t.xml:2:30: unknown tag <date>; use only the template tags <object>, <entry>, <name>, \
             <value>, <array>, <element>, <boolean>, <integer>, <float>, <string>, <timestamp>, <null>"
        );
        let e = error("<object xmlns:x=\"urn:x\"><x:entry/></object>");
        assert!(
            e.contains("unknown tag <entry> (in namespace urn:x)"),
            "{e}"
        );
    }

    #[test]
    fn misplaced_tags() {
        let e = error("<object><string/></object>");
        assert_eq!(
            e,
            "t.xml:1:9: <string> cannot be directly inside <object>; write each key and value as \
             <entry><name>key</name><value>...</value></entry>"
        );
        assert!(
            error(&wrap("<array><string/></array>"))
                .contains("<string> cannot be directly inside <array>; write each element as")
        );
        assert!(
            error(&wrap("<entry/>"))
                .contains("<entry> is not a value tag; put one of <object>, <array>,")
        );
        assert!(
            error(&wrap("<string><null/></string>"))
                .contains("<null> cannot be inside <string>; write <string/> with nothing inside")
        );
        assert!(error("<object><entry><name>a</name><value><null/></value><element/></entry></object>")
            .contains("<element> cannot be directly inside <entry>; an <entry> holds one <name> and one <value>"));
        assert!(
            error("<object><entry><name>a<b/></name><value><null/></value></entry></object>")
                .contains("unknown tag <b>")
        );
        assert!(
            error("<object><entry><name>a<null/></name><value><null/></value></entry></object>")
                .contains("<null> cannot be inside <name>; <name> holds only the key")
        );
    }

    #[test]
    fn entries_need_one_name_and_one_value() {
        assert_eq!(
            error("<object>\n  <entry><value><null/></value></entry>\n</object>"),
            "t.xml:2:3: <entry> has no <name>; give every <entry> one <name> (the key) and one \
             <value> (the value's tag)"
        );
        assert!(
            error("<object><entry><name>a</name></entry></object>")
                .starts_with("t.xml:1:9: <entry> has no <value>;")
        );
        assert!(
            error(
                "<object><entry><name>a</name><name>b</name><value><null/></value></entry></object>"
            )
            .starts_with("t.xml:1:30: <entry> has more than one <name>;")
        );
    }

    #[test]
    fn values_and_elements_hold_exactly_one_tag() {
        let e = error(&wrap(""));
        assert!(
            e.starts_with(
                "t.xml:1:30: <value> is empty; put exactly one of <object>, <array>, <boolean/>,"
            ),
            "{e}"
        );
        let e = error(&wrap("<null/><string/>"));
        assert!(
            e.starts_with("t.xml:1:44: <value> holds 2 tags; put exactly one of"),
            "{e}"
        );
        assert!(e.ends_with("(use <array> for several)"), "{e}");
        assert!(
            error(&wrap("<array><element>  </element></array>")).contains("<element> is empty;")
        );
        assert!(
            error(&wrap(
                "<array><element><null/><null/><null/></element></array>"
            ))
            .contains("<element> holds 3 tags;")
        );
    }

    #[test]
    fn stray_text_is_an_error() {
        let e = error("<object>\n  hello <entry/></object>");
        assert_eq!(
            e,
            "t.xml:2:3: unexpected text \"hello\" inside <object>; only tags belong here; text is allowed only inside <name>"
        );
        assert!(
            error(&wrap("<string>abc</string>"))
                .contains("unexpected text \"abc\" inside <string>")
        );
        assert!(error(&wrap("x<null/>")).contains("unexpected text \"x\" inside <value>"));
        // Whitespace of every XML kind is fine.
        assert_eq!(members(&wrap(" \t\r\n<null/>\n")).len(), 1);
    }

    #[test]
    fn attributes_are_checked() {
        let e = error(&wrap("<integer min=\"ten\"/>"));
        assert_eq!(
            e,
            "t.xml:1:46: min=\"ten\" on <integer> is not a whole number; write min and max as whole \
             numbers from -9223372036854775808 to 9223372036854775807"
        );
        assert!(
            error(&wrap("<integer max=\"1.5\"/>"))
                .contains("max=\"1.5\" on <integer> is not a whole number")
        );
        assert!(
            error(&wrap("<integer max=\"9223372036854775808\"/>"))
                .contains("is outside the 64-bit integer range")
        );
        assert!(
            error(&wrap("<float min=\"abc\"/>"))
                .contains("min=\"abc\" on <float> is not a finite number; write min")
        );
        assert!(
            error(&wrap("<float max=\"inf\"/>"))
                .contains("max=\"inf\" on <float> is not a finite number")
        );
        assert!(error(&wrap("<float max=\"1e400\"/>")).contains("is not a finite number"));
        assert!(error(&wrap("<float max=\"NaN\"/>")).contains("is not a finite number"));
        assert!(
            error(&wrap("<string min=\"1\"/>")).contains(
                "unexpected attribute min=\"1\" on <string>; <string> takes no attributes"
            )
        );
        assert!(error(&wrap("<integer step=\"1\"/>")).contains(
            "unexpected attribute step=\"1\" on <integer>; <integer> takes only min and max"
        ));
        assert!(error("<object id=\"1\"/>").contains("unexpected attribute id=\"1\" on <object>"));
    }

    #[test]
    fn min_must_not_exceed_max() {
        assert_eq!(
            error(&wrap("<integer min=\"10\" max=\"5\"/>")),
            "t.xml:1:37: <integer> has min 10 greater than max 5; make min less than or equal to max"
        );
        assert!(
            error(&wrap("<integer min=\"3000000000\"/>")).contains(
                "<integer> has min 3000000000 greater than max 2147483647 (the default);"
            )
        );
        assert!(
            error(&wrap("<float min=\"2\"/>"))
                .contains("<float> has min 2 greater than max 1 (the default);")
        );
        assert!(
            error(&wrap("<float min=\"0.5\" max=\"0.25\"/>"))
                .contains("<float> has min 0.5 greater than max 0.25;")
        );
        // Equal bounds are allowed.
        assert_eq!(
            members(&wrap("<integer min=\"7\" max=\"7\"/>"))[0].value,
            Node::Int { min: 7, max: 7 }
        );
    }

    #[test]
    fn duplicate_names_are_an_error() {
        let e = error(
            "<object><entry><name>a</name><value><null/></value></entry>\n<entry><name>a</name><value><null/></value></entry></object>",
        );
        assert!(
            e.starts_with(
                "t.xml:2:8: duplicate key \"a\" in <object>; keys in one object must be unique"
            ),
            "{e}"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let n = 100_000;
        let deep = wrap(&format!(
            "{}<null/>{}",
            "<array><element>".repeat(n),
            "</element></array>".repeat(n)
        ));
        let e = error(&deep);
        assert!(
            e.contains("nested more than 128 levels deep; flatten the template"),
            "{e}"
        );
        let fine = wrap(&format!(
            "{}<null/>{}",
            "<array><element>".repeat(100),
            "</element></array>".repeat(100)
        ));
        assert_eq!(members(&fine).len(), 1);
    }
}
