//! A top-level value of a generated document, found in its bytes: the writer's output is
//! compact JSON, so a small skipper finds the value without parsing the document.

/// The bytes of the value of the top-level member whose key is written `quoted_key`
/// (JSON-encoded, quotes included), or `None` when the document has no such member.
pub fn top_level_value<'a>(document: &'a [u8], quoted_key: &[u8]) -> Option<&'a [u8]> {
    top_level_range(document, quoted_key).map(|range| &document[range])
}

/// Where [`top_level_value`]'s value lies in `document`.
pub fn top_level_range(document: &[u8], quoted_key: &[u8]) -> Option<std::ops::Range<usize>> {
    let mut at = 1; // past the document's `{`
    while at < document.len() {
        let key_end = skip_string(document, at)?;
        let value_start = key_end + 1; // past `:`
        let value_end = skip_value(document, value_start)?;
        if &document[at..key_end] == quoted_key {
            return Some(value_start..value_end);
        }
        if document.get(value_end) != Some(&b',') {
            return None;
        }
        at = value_end + 1;
    }
    None
}

/// The end of the string starting at `at` (its opening quote).
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end of the compact JSON value starting at `at`.
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    match *bytes.get(at)? {
        b'"' => skip_string(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = skip_string(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let len = bytes[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']'))?;
            Some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_top_level_values_of_every_kind() {
        let doc = br#"{"_id":"a","n":{"Age":1},"s":"x\"y,}","Age":42,"f":-1.5e3,"l":[1,{"a":"]"}],"t":"2020-01-01T00:00:00Z"}"#;
        assert_eq!(top_level_value(doc, br#""Age""#), Some(&b"42"[..]));
        assert_eq!(top_level_value(doc, br#""s""#), Some(&br#""x\"y,}""#[..]));
        assert_eq!(top_level_value(doc, br#""f""#), Some(&b"-1.5e3"[..]));
        assert_eq!(
            top_level_value(doc, br#""l""#),
            Some(&br#"[1,{"a":"]"}]"#[..])
        );
        assert_eq!(
            top_level_value(doc, br#""t""#),
            Some(&br#""2020-01-01T00:00:00Z""#[..])
        );
        assert_eq!(top_level_value(doc, br#""a""#), None);
    }

    #[test]
    fn broken_documents_give_none() {
        assert_eq!(top_level_value(b"{", br#""a""#), None);
        assert_eq!(top_level_value(br#"{"a":"#, br#""a""#), None);
        assert_eq!(top_level_value(br#"{"a":[1,"#, br#""a""#), None);
        assert_eq!(top_level_value(br#"{"b"}"#, br#""a""#), None);
    }
}
