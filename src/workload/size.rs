//! A target document size, or a range of them, reached by a padding member.

use std::fmt;

/// The size a document's JSON is padded to, as sent with its `_id` and without its
/// `_rev` (so an update stores what the create stored): `min` when fixed, else each
/// document's own size drawn uniformly from `min..=max` (fixed per document, whatever
/// its version).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DocSize {
    pub min: u64,
    pub max: u64,
}

/// The largest target: 64 MiB, far above CouchDB's default `max_document_size` (8 MB),
/// which a user may raise; more only fills the client's memory.
pub const MOST_DOC_SIZE: u64 = 64 << 20;

impl DocSize {
    pub fn fixed(bytes: u64) -> DocSize {
        DocSize {
            min: bytes,
            max: bytes,
        }
    }

    /// `4096`, `4KiB`, or a range `1KiB-64KiB`.
    pub fn parse(text: &str) -> Result<DocSize, String> {
        let one = |part: &str| {
            let part = part.trim();
            let digits = part
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(part.len());
            let (number, unit) = part.split_at(digits);
            let scale: u64 = match unit.trim() {
                "" | "B" => 1,
                "KB" | "kB" => 1_000,
                "MB" => 1_000_000,
                "KiB" => 1 << 10,
                "MiB" => 1 << 20,
                _ => 0,
            };
            number
                .parse::<u64>()
                .ok()
                .and_then(|n| n.checked_mul(scale))
                .filter(|&n| (1..=MOST_DOC_SIZE).contains(&n))
        };
        let size = match text.split_once('-') {
            Some((low, high)) => one(low)
                .zip(one(high))
                .map(|(min, max)| DocSize { min, max }),
            None => one(text).map(DocSize::fixed),
        };
        size.filter(|s| s.min <= s.max).ok_or_else(|| {
            format!(
                "document size {text:?} is not a size from 1 byte to 64MiB, or a range LOW-HIGH of them; give e.g. 4096, 4KiB or 1KiB-64KiB"
            )
        })
    }

    /// The target of one document, from a uniform draw.
    pub fn pick(self, draw: u64) -> u64 {
        match (self.max - self.min).checked_add(1) {
            Some(span) => self.min + draw % span,
            None => self.min,
        }
    }
}

impl fmt::Display for DocSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min == self.max {
            write!(f, "{} bytes", self.min)
        } else {
            write!(f, "{}-{} bytes", self.min, self.max)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_ranges_are_read() {
        assert_eq!(DocSize::parse("4096"), Ok(DocSize::fixed(4096)));
        assert_eq!(DocSize::parse("4KiB"), Ok(DocSize::fixed(4096)));
        assert_eq!(
            DocSize::parse("1kB-2KiB"),
            Ok(DocSize {
                min: 1000,
                max: 2048
            })
        );
        for bad in ["", "0", "2-1", "1GiB", "x", "65MiB", "1-"] {
            let err = DocSize::parse(bad).unwrap_err();
            assert!(err.contains("1KiB-64KiB"), "{bad}: {err}");
        }
        let range = DocSize { min: 10, max: 12 };
        assert!(
            (0..100)
                .map(|d| range.pick(d))
                .all(|s| (10..=12).contains(&s))
        );
        assert_eq!(DocSize::fixed(5).pick(u64::MAX), 5);
    }
}
