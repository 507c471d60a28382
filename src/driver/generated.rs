//! Request bodies made as they are written (attachments up to gigabytes), and answers
//! counted as they are read: neither is ever held whole in memory.

/// How much of a generated body is made and written at once: large enough that the
/// socket takes it in few writes, small enough to keep per connection.
pub const CHUNK: usize = 64 * 1024;

/// A body of `length` bytes, a function of `seed` alone, so that whoever knows the seed
/// can make the same bytes again (a test checking what the server stored, a read
/// checking what it got back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeneratedBody {
    pub length: u64,
    pub seed: u64,
    /// The body's `Content-Type`.
    pub content_type: &'static str,
}

impl GeneratedBody {
    /// Appends the body's bytes from `offset` on, at most `most` of them, to `out`.
    pub fn write_part(&self, offset: u64, most: usize, out: &mut Vec<u8>) {
        let end = self.length.min(offset.saturating_add(most as u64));
        let mut at = offset;
        while at < end {
            let word = mix(self.seed ^ (at / 8).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let bytes = word.to_le_bytes();
            let from = (at % 8) as usize;
            let take = (8 - from).min((end - at) as usize);
            out.extend_from_slice(&bytes[from..from + take]);
            at += take as u64;
        }
    }
}

/// SplitMix64's finaliser: every 8 bytes of a body differ, and cost a few instructions.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What an exchange does beyond a plain request and a whole answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Streaming {
    /// A body made while it is written, instead of the call's own.
    pub body: Option<GeneratedBody>,
    /// Count the answer's body instead of keeping it, refusing it past this many bytes.
    pub count_answer_up_to: Option<u64>,
    /// Count the answer's body and a query's rows in it (the exchange's `rows`) instead
    /// of keeping it, refusing it past `count_answer_up_to` or else the endpoint's
    /// largest answer.
    pub count_rows: bool,
}

impl Streaming {
    /// A plain exchange.
    pub const NONE: Streaming = Streaming {
        body: None,
        count_answer_up_to: None,
        count_rows: false,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(length: u64, seed: u64) -> GeneratedBody {
        GeneratedBody {
            length,
            seed,
            content_type: "application/octet-stream",
        }
    }

    #[test]
    fn parts_made_in_any_steps_join_into_the_same_body() {
        let b = body(1000, 7);
        let mut whole = Vec::new();
        b.write_part(0, 5000, &mut whole);
        assert_eq!(whole.len(), 1000);
        let mut pieces = Vec::new();
        let mut offset = 0;
        for step in [3, 13, 1, 500, 1000] {
            let before = pieces.len();
            b.write_part(offset, step, &mut pieces);
            offset += (pieces.len() - before) as u64;
        }
        assert_eq!(pieces, whole);
        let mut other = Vec::new();
        body(1000, 8).write_part(0, 1000, &mut other);
        assert_ne!(other, whole, "another seed makes other bytes");
    }
}
