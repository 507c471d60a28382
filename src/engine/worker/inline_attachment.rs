//! Inline attachments in bulk documents (`--bulk-attachment-size`): each document of a
//! bulk insert carries `_attachments` with its bytes in base64, the same bytes a
//! standalone `attachment_write` of that document would send, so reads check them alike.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::workload::attachment::{ATTACHMENT_NAME, attachment_body};

/// Bytes made and encoded at a time: a multiple of 3, so that no chunk but the last
/// ends in base64 padding.
const CHUNK: usize = 48 * 1024;

/// Adds the attachment of `length` bytes of document `number` to the document at the end
/// of `body` (which ends with its closing `}`); `scratch` holds one chunk of raw bytes.
pub(super) fn append(
    body: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    seed: u64,
    number: u64,
    length: u64,
) {
    if body.pop() != Some(b'}') {
        // The template writer always closes its document; nothing to add to otherwise.
        return;
    }
    if body.last() != Some(&b'{') {
        body.push(b',');
    }
    body.extend_from_slice(b"\"_attachments\":{\"");
    body.extend_from_slice(ATTACHMENT_NAME.as_bytes());
    body.extend_from_slice(b"\":{\"content_type\":\"application/octet-stream\",\"data\":\"");
    let bytes = attachment_body(seed, number, length);
    let mut offset = 0;
    while offset < length {
        scratch.clear();
        bytes.write_part(offset, CHUNK, scratch);
        offset += scratch.len() as u64;
        let start = body.len();
        let encoded = scratch.len().div_ceil(3) * 4;
        body.resize(start + encoded, 0);
        // The room is exactly the encoded length: encoding cannot run out of it.
        let written = STANDARD
            .encode_slice(&scratch[..], &mut body[start..])
            .unwrap_or(0);
        body.truncate(start + written);
    }
    body.extend_from_slice(b"\"}}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attachment_goes_in_the_document_as_base64_of_the_seeds_bytes() {
        for length in [
            1,
            2,
            3,
            100,
            CHUNK as u64 - 1,
            CHUNK as u64 + 2,
            3 * CHUNK as u64,
        ] {
            let mut body = br#"{"_id":"a","x":1}"#.to_vec();
            let mut scratch = Vec::new();
            append(&mut body, &mut scratch, 7, 42, length);
            let doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(doc["x"], 1);
            let blob = &doc["_attachments"]["blob"];
            assert_eq!(blob["content_type"], "application/octet-stream");
            let data = STANDARD.decode(blob["data"].as_str().unwrap()).unwrap();
            let mut expected = Vec::new();
            attachment_body(7, 42, length).write_part(0, length as usize, &mut expected);
            assert_eq!(data, expected, "{length}");
        }
        let mut empty = b"{}".to_vec();
        append(&mut empty, &mut Vec::new(), 1, 1, 4);
        let doc: serde_json::Value = serde_json::from_slice(&empty).unwrap();
        assert!(doc["_attachments"]["blob"]["data"].is_string());
    }
}
