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
//! default `0` and `1`, max exclusive); `<string>` accepts `distinct="N"`: one of N
//! distinct strings (1 to 2^32, see `values`). Whitespace between tags and comments
//! are ignored; any other text, attribute or tag is an error, and so is a DTD
//! (`<!DOCTYPE>`), so no entity can expand.
//!
//! The file is read as a stream of tags (quick-xml) and compiled as it goes: a tree of
//! the whole document (roxmltree's, before) took seven times the file's size.

use std::borrow::Cow;
use std::num::IntErrorKind;

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};

use super::error::{TemplateError, excerpt};
use super::schema::{
    Compiler, DEFAULT_FLOAT_MAX, DEFAULT_FLOAT_MIN, DEFAULT_INT_MAX, DEFAULT_INT_MIN, Generated,
    Key, Keys, MAX_DEPTH, MAX_DISTINCT, Program, Refused,
};

/// Every tag an XML template may use.
const TAGS: &str = "<object>, <entry>, <name>, <value>, <array>, <element>, <boolean>, <integer>, \
                    <float>, <string>, <timestamp>, <null>";
/// The tags that stand for a value.
const VALUE_TAGS: &str =
    "<object>, <array>, <boolean/>, <integer/>, <float/>, <string/>, <timestamp/> or <null/>";

/// The compiled XML template `text` (top-level `_id`, `_rev` removed).
pub(crate) fn parse(text: &str, source: &str) -> Result<Program, TemplateError> {
    let mut reader = Reader {
        xml: quick_xml::Reader::from_str(text),
        text,
        source,
        compiler: Compiler::new(),
    };
    let root = reader.root()?;
    reader.check_known(&root)?;
    if root.name() != "object" {
        return Err(reader.error(
            &root,
            format!("the outermost tag is <{}>, not <object>", root.name()),
            "an XML template is one <object> holding <entry> tags",
        ));
    }
    reader.no_attributes(&root)?;
    reader.object(&root, 1, Keys::top_level())?;
    reader.after_root()?;
    reader.compiler.finish().map_err(|_| {
        TemplateError::whole(
            source,
            "the template compiles to more than 4 GiB",
            "make the template smaller",
        )
    })
}

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// A start tag (or an empty one, `<null/>`) and where it is.
struct Tag<'a> {
    start: BytesStart<'a>,
    /// `<tag/>`: no children, no end tag to read.
    empty: bool,
    /// Byte offset of its `<`.
    at: usize,
}

impl Tag<'_> {
    /// The name as written (`x:entry` keeps its prefix: templates use no namespaces).
    fn name(&self) -> &str {
        self.start.name().into_inner()
    }
}

/// What came next inside a tag.
enum Next<'a> {
    Tag(Tag<'a>),
    /// Text or a CDATA section, and where it starts.
    Text(Cow<'a, str>, usize),
    /// An entity or character reference (`amp`, `#9`), and where its `&` is.
    Reference(Cow<'a, str>, usize),
    /// The parent's end tag.
    End,
}

struct Reader<'a> {
    xml: quick_xml::Reader<&'a [u8]>,
    text: &'a str,
    source: &'a str,
    compiler: Compiler,
}

impl<'a> Reader<'a> {
    fn error_at(&self, offset: usize, problem: String, remedy: &str) -> TemplateError {
        TemplateError::at_offset(self.source, self.text, offset, problem, remedy)
    }

    fn error(&self, tag: &Tag<'a>, problem: String, remedy: &str) -> TemplateError {
        self.error_at(tag.at, problem, remedy)
    }

    fn invalid(&self, offset: usize, problem: impl std::fmt::Display) -> TemplateError {
        self.error_at(
            offset,
            format!("invalid XML: {problem}"),
            "fix the XML at that position",
        )
    }

    /// The next event, comments and processing instructions skipped.
    fn event(&mut self) -> Result<(Event<'a>, usize), TemplateError> {
        loop {
            let at = usize::try_from(self.xml.buffer_position()).unwrap_or(usize::MAX);
            let event = self.xml.read_event().map_err(|e| {
                let offset = usize::try_from(self.xml.error_position()).unwrap_or(usize::MAX);
                self.invalid(offset, e)
            })?;
            match event {
                Event::Comment(_) | Event::PI(_) | Event::Decl(_) => continue,
                Event::DocType(_) => {
                    return Err(self.error_at(
                        at,
                        "invalid XML: a <!DOCTYPE> declaration (DTD) is not allowed".into(),
                        "remove the <!DOCTYPE> declaration",
                    ));
                }
                event => return Ok((event, at)),
            }
        }
    }

    /// The next tag, text or end inside `parent`.
    fn next(&mut self, parent: &Tag<'a>) -> Result<Next<'a>, TemplateError> {
        if parent.empty {
            return Ok(Next::End);
        }
        let (event, at) = self.event()?;
        Ok(match event {
            Event::Start(start) => Next::Tag(Tag {
                start,
                empty: false,
                at,
            }),
            Event::Empty(start) => Next::Tag(Tag {
                start,
                empty: true,
                at,
            }),
            Event::End(_) => Next::End,
            Event::Text(text) => Next::Text(text.xml10_content(), at),
            Event::CData(data) => Next::Text(data.xml10_content(), at + "<![CDATA[".len()),
            Event::GeneralRef(reference) => Next::Reference(reference.into_inner(), at),
            _ => {
                return Err(self.invalid(
                    self.text.len(),
                    format!("the file ends inside <{}>", parent.name()),
                ));
            }
        })
    }

    /// The next child tag of `parent` (checked to be a template tag), or `None` at its
    /// end; text between tags must be whitespace.
    fn child(&mut self, parent: &Tag<'a>) -> Result<Option<Tag<'a>>, TemplateError> {
        loop {
            match self.next(parent)? {
                Next::End => return Ok(None),
                Next::Tag(tag) => {
                    self.check_known(&tag)?;
                    return Ok(Some(tag));
                }
                Next::Text(text, at) => {
                    if let Some(skip) = text.find(|c| !is_xml_space(c)) {
                        let shown = text.trim_matches(is_xml_space);
                        return Err(self.stray_text(parent, shown, at + skip));
                    }
                }
                Next::Reference(name, at) => {
                    return Err(self.stray_text(parent, &format!("&{name};"), at));
                }
            }
        }
    }

    fn stray_text(&self, parent: &Tag<'a>, text: &str, at: usize) -> TemplateError {
        self.error_at(
            at,
            format!(
                "unexpected text \"{}\" inside <{}>",
                excerpt(text),
                parent.name()
            ),
            "only tags belong here; text is allowed only inside <name>",
        )
    }

    /// The outermost tag, after the XML declaration, comments and whitespace.
    fn root(&mut self) -> Result<Tag<'a>, TemplateError> {
        loop {
            let (event, at) = self.event()?;
            match event {
                Event::Start(start) => {
                    return Ok(Tag {
                        start,
                        empty: false,
                        at,
                    });
                }
                Event::Empty(start) => {
                    return Ok(Tag {
                        start,
                        empty: true,
                        at,
                    });
                }
                Event::Text(text) if text.xml10_content().chars().all(is_xml_space) => {}
                Event::Eof => {
                    return Err(self.invalid(at, "the document does not have a root node"));
                }
                _ => return Err(self.invalid(at, "text before the outermost tag")),
            }
        }
    }

    /// Only comments and whitespace may follow the outermost tag.
    fn after_root(&mut self) -> Result<(), TemplateError> {
        loop {
            let (event, at) = self.event()?;
            match event {
                Event::Eof => return Ok(()),
                Event::Text(text) if text.xml10_content().chars().all(is_xml_space) => {}
                Event::Start(_) | Event::Empty(_) => {
                    return Err(self.invalid(at, "a second tag after the outermost one"));
                }
                _ => return Err(self.invalid(at, "text after the outermost tag")),
            }
        }
    }

    /// Errors on tags that are not part of the template language.
    fn check_known(&self, tag: &Tag<'a>) -> Result<(), TemplateError> {
        let known = matches!(
            tag.name(),
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
            Err(self.error(
                tag,
                format!("unknown tag <{}>", tag.name()),
                &format!("use only the template tags {TAGS}"),
            ))
        }
    }

    fn no_attributes(&self, tag: &Tag<'a>) -> Result<(), TemplateError> {
        self.only_attributes(tag, &[]).map(|_| ())
    }

    /// The attributes of `tag`, each of them in `allowed`: (name, value, offset), the
    /// value with entities resolved.
    fn only_attributes(
        &self,
        tag: &Tag<'a>,
        allowed: &[&str],
    ) -> Result<Vec<(String, String, usize)>, TemplateError> {
        let mut found = Vec::new();
        for attribute in tag.start.attributes() {
            let attribute = attribute.map_err(|e| {
                let shown = e.to_string();
                let problem = shown.split_once(": ").map_or(&*shown, |(_, p)| p);
                self.invalid(tag.at, problem)
            })?;
            let name = attribute.key.into_inner().to_owned();
            let offset = self.offset_of(attribute.key.into_inner()).unwrap_or(tag.at);
            let value = attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|e| self.invalid(offset, e))?
                .into_owned();
            if !allowed.contains(&name.as_str()) {
                let remedy = if allowed.is_empty() {
                    format!("<{}> takes no attributes; remove it", tag.name())
                } else {
                    format!(
                        "<{}> takes only {}; remove it",
                        tag.name(),
                        allowed.join(" and ")
                    )
                };
                return Err(self.error_at(
                    offset,
                    format!(
                        "unexpected attribute {name}=\"{}\" on <{}>",
                        excerpt(&value),
                        tag.name()
                    ),
                    &remedy,
                ));
            }
            found.push((name, value, offset));
        }
        Ok(found)
    }

    /// Where `part`, a slice of the text, begins in it.
    fn offset_of(&self, part: &str) -> Option<usize> {
        let offset = (part.as_ptr() as usize).checked_sub(self.text.as_ptr() as usize)?;
        (offset <= self.text.len()).then_some(offset)
    }

    /// Checks that a tag that must be empty (`<string/>` and friends) is, and reads its
    /// end.
    fn empty(&mut self, tag: &Tag<'a>) -> Result<(), TemplateError> {
        if let Some(child) = self.child(tag)? {
            return Err(self.error(
                &child,
                format!("<{}> cannot be inside <{}>", child.name(), tag.name()),
                &format!("write <{}/> with nothing inside", tag.name()),
            ));
        }
        Ok(())
    }

    /// Compiles the value tag `tag`, through its end.
    fn value(&mut self, tag: &Tag<'a>, depth: usize) -> Result<(), TemplateError> {
        let name = tag.name();
        if matches!(name, "object" | "array") && depth > MAX_DEPTH {
            return Err(self.error(
                tag,
                format!("objects and arrays are nested more than {MAX_DEPTH} levels deep"),
                "flatten the template",
            ));
        }
        if matches!(name, "entry" | "name" | "value" | "element") {
            return Err(self.error(
                tag,
                format!("<{name}> is not a value tag"),
                &format!("put one of {VALUE_TAGS} here"),
            ));
        }
        let allowed: &[&str] = match name {
            "integer" | "float" => &["min", "max"],
            "string" => &["distinct"],
            _ => &[],
        };
        let attributes = self.only_attributes(tag, allowed)?;
        match name {
            "object" => {
                self.compiler.fixed(b"{");
                self.object(tag, depth + 1, Keys::default())?;
                self.compiler.fixed(b"}");
            }
            "array" => {
                self.compiler.fixed(b"[");
                self.array(tag, depth + 1)?;
                self.compiler.fixed(b"]");
            }
            "null" => {
                self.empty(tag)?;
                self.compiler.fixed(b"null");
            }
            _ => {
                self.empty(tag)?;
                let generated = match name {
                    "boolean" => Generated::Bool,
                    "string" => self.string(&attributes)?,
                    "timestamp" => Generated::Timestamp,
                    "integer" => self.integer(tag, &attributes)?,
                    _ => self.float(tag, &attributes)?,
                };
                self.compiler.value(generated);
            }
        }
        Ok(())
    }

    /// Compiles the entries of `<object>` `tag`; at the top level (`keys` says which) each
    /// is a top-level value.
    fn object(&mut self, tag: &Tag<'a>, depth: usize, mut keys: Keys) -> Result<(), TemplateError> {
        let top = depth == 1;
        let mut first = true;
        while let Some(entry) = self.child(tag)? {
            if entry.name() != "entry" {
                return Err(self.error(
                    &entry,
                    format!("<{}> cannot be directly inside <object>", entry.name()),
                    "write each key and value as <entry><name>key</name><value>...</value></entry>",
                ));
            }
            self.no_attributes(&entry)?;
            if !top && !first {
                self.compiler.fixed(b",");
            }
            first = false;
            let mark = self.compiler.mark();
            match self.entry(&entry, depth, &mut keys)? {
                Key::Kept if top => self.compiler.end_field(mark).map_err(|_| {
                    self.error(
                        &entry,
                        "the template is too large".into(),
                        "make it smaller",
                    )
                })?,
                Key::Kept => {}
                Key::Reserved => self.compiler.rewind(mark),
            }
        }
        Ok(())
    }

    /// Compiles one `<entry>`: its key, then its value (in either order in the file).
    fn entry(
        &mut self,
        entry: &Tag<'a>,
        depth: usize,
        keys: &mut Keys,
    ) -> Result<Key, TemplateError> {
        let value_mark = self.compiler.mark();
        let mut key = None;
        let mut has_value = false;
        while let Some(part) = self.child(entry)? {
            let name = part.name();
            let seen = match name {
                "name" => key.is_some(),
                "value" => has_value,
                _ => {
                    return Err(self.error(
                        &part,
                        format!("<{name}> cannot be directly inside <entry>"),
                        "an <entry> holds one <name> and one <value>",
                    ));
                }
            };
            if seen {
                return Err(self.error(
                    &part,
                    format!("<entry> has more than one <{name}>"),
                    "an <entry> holds one <name> and one <value>",
                ));
            }
            if name == "value" {
                self.single(&part, depth)?;
                has_value = true;
                continue;
            }
            let text = self.name(&part)?;
            let before = has_value.then_some(value_mark);
            let kept = self
                .compiler
                .key(keys, &text, before)
                .map_err(|r| match r {
                    Refused::Duplicate => self.error(
                        &part,
                        format!("duplicate key \"{}\" in <object>", excerpt(&text)),
                        "keys in one object must be unique; remove or rename one of them",
                    ),
                    Refused::TooLarge => {
                        self.error(&part, "the template is too large".into(), "make it smaller")
                    }
                })?;
            key = Some(kept);
        }
        match (key, has_value) {
            (Some(key), true) => Ok(key),
            (key, _) => {
                let missing = if key.is_none() { "name" } else { "value" };
                Err(self.error(
                    entry,
                    format!("<entry> has no <{missing}>"),
                    "give every <entry> one <name> (the key) and one <value> (the value's tag)",
                ))
            }
        }
    }

    /// Compiles the `<element>`s of `<array>` `tag`.
    fn array(&mut self, tag: &Tag<'a>, depth: usize) -> Result<(), TemplateError> {
        let mut first = true;
        while let Some(element) = self.child(tag)? {
            if element.name() != "element" {
                return Err(self.error(
                    &element,
                    format!("<{}> cannot be directly inside <array>", element.name()),
                    "write each element as <element>...</element>",
                ));
            }
            if !first {
                self.compiler.fixed(b",");
            }
            first = false;
            self.single(&element, depth)?;
        }
        Ok(())
    }

    /// Compiles the one value tag inside `<value>` or `<element>` `holder`.
    fn single(&mut self, holder: &Tag<'a>, depth: usize) -> Result<(), TemplateError> {
        self.no_attributes(holder)?;
        let Some(only) = self.child(holder)? else {
            return Err(self.error(
                holder,
                format!("<{}> is empty", holder.name()),
                &format!("put exactly one of {VALUE_TAGS} inside it"),
            ));
        };
        self.value(&only, depth)?;
        if let Some(second) = self.child(holder)? {
            return Err(self.error(
                &second,
                format!("<{}> holds more than one tag", holder.name()),
                &format!("put exactly one of {VALUE_TAGS} inside it (use <array> for several)"),
            ));
        }
        Ok(())
    }

    /// The key in `<name>`: all its text, verbatim, entities and CDATA resolved.
    fn name(&mut self, tag: &Tag<'a>) -> Result<String, TemplateError> {
        self.no_attributes(tag)?;
        let mut key = String::new();
        loop {
            match self.next(tag)? {
                Next::End => return Ok(key),
                Next::Tag(child) => {
                    self.check_known(&child)?;
                    return Err(self.error(
                        &child,
                        format!("<{}> cannot be inside <name>", child.name()),
                        "<name> holds only the key as text, e.g. <name>count</name>",
                    ));
                }
                Next::Text(text, _) => key.push_str(&text),
                Next::Reference(name, at) => key.push(self.resolve(&name, at)?),
            }
        }
    }

    /// The character a reference (`amp`, `#9`, `#x1F600`) stands for.
    fn resolve(&self, reference: &str, at: usize) -> Result<char, TemplateError> {
        let character = if let Some(number) = reference.strip_prefix('#') {
            let parsed = match number.strip_prefix('x') {
                Some(hex) => u32::from_str_radix(hex, 16),
                None => number.parse(),
            };
            parsed.ok().and_then(char::from_u32).filter(|&c| c != '\0')
        } else {
            quick_xml::escape::resolve_predefined_entity(reference).and_then(|s| s.chars().next())
        };
        character.ok_or_else(|| {
            self.invalid(
                at,
                format!("unknown or invalid reference &{};", excerpt(reference)),
            )
        })
    }

    /// The value of attribute `name` among `attributes`, trimmed, with its offset.
    fn attribute<'b>(
        attributes: &'b [(String, String, usize)],
        name: &str,
    ) -> Option<(&'b str, usize)> {
        attributes
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, value, offset)| (value.trim_matches(is_xml_space), *offset))
    }

    fn integer(
        &self,
        tag: &Tag<'a>,
        attributes: &[(String, String, usize)],
    ) -> Result<Generated, TemplateError> {
        let bound = |name: &str, default: i64| -> Result<(i64, bool), TemplateError> {
            let Some((text, offset)) = Self::attribute(attributes, name) else {
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
        Generated::int_range(min, max).map_err(|_| {
            self.range_error(
                tag,
                &min.to_string(),
                min_given,
                &max.to_string(),
                max_given,
            )
        })
    }

    /// `<string/>`, or one of `distinct` strings.
    fn string(&self, attributes: &[(String, String, usize)]) -> Result<Generated, TemplateError> {
        let Some((text, offset)) = Self::attribute(attributes, "distinct") else {
            return Ok(Generated::Str);
        };
        let remedy = format!("write distinct as a whole number from 1 to {MAX_DISTINCT}");
        let distinct = text.parse::<u64>().map_err(|_| {
            let problem = format!(
                "distinct=\"{}\" on <string> is not a whole number",
                excerpt(text)
            );
            self.error_at(offset, problem, &remedy)
        })?;
        Generated::one_of(distinct)
            .map_err(|problem| self.error_at(offset, format!("<string> has {problem}"), &remedy))
    }

    fn float(
        &self,
        tag: &Tag<'a>,
        attributes: &[(String, String, usize)],
    ) -> Result<Generated, TemplateError> {
        let bound = |name: &str, default: f64| -> Result<(f64, bool), TemplateError> {
            let Some((text, offset)) = Self::attribute(attributes, name) else {
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
        Generated::float_range(min, max).map_err(|_| {
            self.range_error(
                tag,
                &min.to_string(),
                min_given,
                &max.to_string(),
                max_given,
            )
        })
    }

    fn range_error(
        &self,
        tag: &Tag<'a>,
        min: &str,
        min_given: bool,
        max: &str,
        max_given: bool,
    ) -> TemplateError {
        let default = |given: bool| if given { "" } else { " (the default)" };
        self.error(
            tag,
            format!(
                "<{}> has min {min}{} greater than max {max}{}",
                tag.name(),
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

    fn members(text: &str) -> Vec<String> {
        parse(text, "t.xml").unwrap().shape()
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
        assert_eq!(
            m,
            [
                "\"b\":<bool>",
                "\"i\":<int>",
                "\"r\":<int -3..=3>",
                "\"f\":<float>",
                "\"g\":<float 0..1000>",
                "\"s\":<str>",
                "\"t\":<time>",
                "\"n\":null",
                "\"a\":[null]",
                "\" x & <y> z\":{}",
            ]
        );
    }

    #[test]
    fn a_value_may_come_before_its_name_at_any_depth() {
        let both = |first: &str, second: &str| {
            members(&format!(
                "<object><entry>{first}{second}</entry><entry><name>z</name><value><null/></value></entry></object>"
            ))
        };
        let name = "<name>k</name>";
        let value = "<value><object><entry><value><array><element><integer min=\"1\" max=\"2\"/></element>\
                     <element><null/></element><element><string/></element></array></value><name>a</name></entry>\
                     <entry><name>b</name><value><boolean/></value></entry></object></value>";
        let expected = [
            "\"k\":{\"a\":[<int 1..=2>,null,<str>],\"b\":<bool>}",
            "\"z\":null",
        ];
        assert_eq!(both(name, value), expected);
        assert_eq!(both(value, name), expected);
        // A value of fixed bytes only, and a dropped _id after its value.
        assert_eq!(
            members(
                "<object><entry><value><array><element><null/></element></array></value><name>n</name></entry>\
                 <entry><value><string/></value><name>_id</name></entry>\
                 <entry><value><object/></value><name>o</name></entry></object>"
            ),
            ["\"n\":[null]", "\"o\":{}"]
        );
        let e = error(
            "<object><entry><name>a</name><value><null/></value></entry>\
             <entry><value><null/></value><name>a</name></entry></object>",
        );
        assert!(e.contains("duplicate key \"a\" in <object>"), "{e}");
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
        assert!(e.starts_with("t.xml:3:1: invalid XML: "), "{e}");
        assert!(e.contains("</entry>") && e.contains("</object>"), "{e}");
        assert!(e.ends_with("; fix the XML at that position"), "{e}");
        let e = error("<object>\n<entry><name>a</name>");
        assert!(e.starts_with("t.xml:2:"), "{e}");
        assert!(e.contains("invalid XML:"), "{e}");
        let e = error("<object/><object/>");
        assert!(
            e.starts_with("t.xml:1:10: invalid XML: a second tag after the outermost one"),
            "{e}"
        );
        assert!(error("x<object/>").contains("invalid XML: text before the outermost tag"));
        assert!(error("<object/>y").contains("invalid XML: text after the outermost tag"));
        let e =
            error("<object><entry><name>a&bogus;</name><value><null/></value></entry></object>");
        assert!(
            e.starts_with("t.xml:1:23: invalid XML: unknown or invalid reference &bogus;"),
            "{e}"
        );
        assert!(
            error("<object><entry><name>&#0;</name><value><null/></value></entry></object>")
                .contains("invalid reference &#0;")
        );
        let e = error("");
        assert!(
            e.starts_with("t.xml:1:1: invalid XML: the document does not have a root node"),
            "{e}"
        );
        let e = error("<!DOCTYPE object><object/>");
        assert!(e.ends_with("; remove the <!DOCTYPE> declaration"), "{e}");
        // The billion-laughs entity attack needs a DTD: it is refused before any expansion.
        let laughs = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">\
                      <!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>\
                      <object><entry><name>&lol2;</name><value><null/></value></entry></object>";
        assert!(error(laughs).contains("<!DOCTYPE> declaration (DTD) is not allowed"));
    }

    #[test]
    fn unknown_tags_are_named_with_the_valid_ones() {
        let e = error("<object>\n <entry><name>a</name><value><date/></value></entry></object>");
        assert_eq!(
            e,
            "t.xml:2:30: unknown tag <date>; use only the template tags <object>, <entry>, <name>, \
             <value>, <array>, <element>, <boolean>, <integer>, <float>, <string>, <timestamp>, <null>"
        );
        // Templates use no namespaces: a prefixed tag is unknown, a declaration an attribute.
        let e = error("<object><x:entry/></object>");
        assert!(e.contains("unknown tag <x:entry>"), "{e}");
        let e = error("<object xmlns=\"urn:x\"/>");
        assert!(
            e.contains("unexpected attribute xmlns=\"urn:x\" on <object>"),
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
            e.starts_with("t.xml:1:44: <value> holds more than one tag; put exactly one of"),
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
            .contains("<element> holds more than one tag;")
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
        assert!(error(&wrap("<boolean min=\"1\"/>")).contains(
            "unexpected attribute min=\"1\" on <boolean>; <boolean> takes no attributes"
        ));
        assert!(error(&wrap("<integer step=\"1\"/>")).contains(
            "unexpected attribute step=\"1\" on <integer>; <integer> takes only min and max"
        ));
        assert!(error("<object id=\"1\"/>").contains("unexpected attribute id=\"1\" on <object>"));
    }

    #[test]
    fn strings_take_a_number_of_distinct_values() {
        assert_eq!(
            members(&wrap("<string distinct=\" 12 \"/>")),
            ["\"k\":<str one of 12>"]
        );
        assert_eq!(
            members(&wrap("<string distinct=\"4294967296\"/>")),
            ["\"k\":<str one of 4294967296>"]
        );
        assert_eq!(
            error(&wrap("<string distinct=\"0\"/>")),
            "t.xml:1:45: <string> has distinct 0 outside 1 to 4294967296; write distinct as a \
             whole number from 1 to 4294967296"
        );
        assert!(
            error(&wrap("<string distinct=\"many\"/>"))
                .contains("distinct=\"many\" on <string> is not a whole number; write distinct")
        );
        assert!(error(&wrap("<string min=\"1\"/>")).contains(
            "unexpected attribute min=\"1\" on <string>; <string> takes only distinct; remove it"
        ));
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
            members(&wrap("<integer min=\"7\" max=\"7\"/>")),
            ["\"k\":<int 7..=7>"]
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
