//! Latency histograms in HdrHistogram's standard form: V2 deflate-compressed, base64
//! encoded, as its interval logs carry them. Interval rows keep them so that a long run
//! stays small, and results so that runs from many nodes merge without loss.

use base64::Engine as _;
use hdrhistogram::Histogram;
use std::io::Read as _;

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// Encodes a histogram (microseconds) in HdrHistogram's compressed form.
pub fn encode(histogram: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    let _ = V2DeflateSerializer::new().serialize(histogram, &mut bytes);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The most a histogram may take once inflated: 3 significant digits over the whole u64
/// range need about 1 MB; HdrHistogram's widest settings some tens of MB.
const MOST_INFLATED: u64 = 64 << 20;

/// The V2 encodings' cookies, and the inner header's length (cookie, payload length,
/// normalizing offset, digits, lowest, highest, conversion ratio).
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
const V2_HEADER: usize = 40;
/// Where the significant digits sit in the inner header.
const V2_DIGITS_AT: usize = 12;

/// The most significant digits read: what sofabench writes
/// ([`crate::metrics::recorder::LATENCY_SIGNIFICANT_DIGITS`]). A histogram holds a
/// count per distinguishable value, allocated and walked whole by every decode, merge
/// and percentile: over the whole u64 range 3 digits are 55,296 counts (432 KiB), 5
/// digits 6.3 million (50 MiB), and a few hundred of those took minutes to report.
pub const MOST_DIGITS: u8 = crate::metrics::recorder::LATENCY_SIGNIFICANT_DIGITS;

/// Decodes what [`encode`] wrote, or what HdrHistogram's own tools write with at most
/// [`MOST_DIGITS`] significant digits. The text comes from files anyone can write:
/// lengths inside it are checked against the data before the decoder may trust them (it
/// sizes a buffer from one), and its digits before it allocates the counts.
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64(text)?;
    check_lengths(&bytes)?;
    let mut histogram: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("a histogram cannot be decoded: {e:?}"))?;
    histogram.auto(true);
    Ok(histogram)
}

/// Refuses, as cheaply as it can be known, a histogram that would cost more to decode
/// than any sofabench writes: one with more than [`MOST_DIGITS`] significant digits.
/// Only the header is inflated; its counts are not looked at.
pub fn check_settings(text: &str) -> Result<(), String> {
    let bytes = base64(text)?;
    let mut inflated = Vec::with_capacity(V2_HEADER);
    let header = match word(&bytes, 0) {
        Some(V2_COMPRESSED_COOKIE) => {
            flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default())
                .take(V2_HEADER as u64)
                .read_to_end(&mut inflated)
                .map_err(|e| format!("a histogram cannot be inflated: {e}"))?;
            &inflated[..]
        }
        Some(V2_COOKIE) => &bytes[..],
        _ => return Err("a histogram has an unknown encoding (cookie)".to_string()),
    };
    check_digits(header)
}

fn base64(text: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("a histogram is not valid base64: {e}"))
}

/// The big-endian word at `at`, if the bytes reach that far.
fn word(bytes: &[u8], at: usize) -> Option<u32> {
    bytes
        .get(at..at + 4)
        .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
}

/// Refuses an inner header with more significant digits than [`MOST_DIGITS`].
fn check_digits(inner: &[u8]) -> Result<(), String> {
    let digits = word(inner, V2_DIGITS_AT).ok_or("a histogram is cut short")?;
    if digits > u32::from(MOST_DIGITS) {
        return Err(format!(
            "a histogram has {digits} significant digits: sofabench writes {MOST_DIGITS} and reads \
             no more (each digit multiplies the work of every histogram by about 10)"
        ));
    }
    Ok(())
}

/// Refuses an encoding whose inner payload length claims more bytes than it holds, or
/// whose digits [`check_digits`] refuses.
fn check_lengths(bytes: &[u8]) -> Result<(), String> {
    let inflated;
    let inner = match word(bytes, 0) {
        Some(V2_COMPRESSED_COOKIE) => {
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default())
                .take(MOST_INFLATED + 1)
                .read_to_end(&mut out)
                .map_err(|e| format!("a histogram cannot be inflated: {e}"))?;
            if out.len() as u64 > MOST_INFLATED {
                return Err(format!(
                    "a histogram inflates to more than {} MB; it is not one sofabench wrote",
                    MOST_INFLATED >> 20
                ));
            }
            inflated = out;
            &inflated[..]
        }
        Some(V2_COOKIE) => bytes,
        _ => return Err("a histogram has an unknown encoding (cookie)".to_string()),
    };
    check_digits(inner)?;
    let claimed = word(inner, 4).ok_or("a histogram is cut short")? as usize;
    if inner.len() < V2_HEADER || claimed > inner.len() - V2_HEADER {
        return Err(format!(
            "a histogram claims {claimed} bytes of counts but holds {}; the file was changed or cut",
            inner.len().saturating_sub(V2_HEADER)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_exactly() {
        let mut h = crate::metrics::recorder::new_histogram();
        for v in [1, 17, 1_000, 1_001, 250_000, 3_600_000_000] {
            h.record(v).unwrap();
        }
        let back = decode(&encode(&h)).unwrap();
        assert_eq!(back, h);
        assert!(decode("not base64!").is_err());
    }

    /// A valid encoding whose inner payload length is replaced by `claimed`.
    fn lying(claimed: u32) -> String {
        use std::io::Write as _;
        let mut h = crate::metrics::recorder::new_histogram();
        h.record(1_000).unwrap();
        let mut plain = Vec::new();
        hdrhistogram::serialization::V2Serializer::new()
            .serialize(&h, &mut plain)
            .unwrap();
        plain[4..8].copy_from_slice(&claimed.to_be_bytes());
        let mut deflated =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        deflated.write_all(&plain).unwrap();
        let deflated = deflated.finish().unwrap();
        let mut bytes = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        bytes.extend_from_slice(&(deflated.len() as u32).to_be_bytes());
        bytes.extend_from_slice(&deflated);
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn more_digits_than_sofabench_writes_are_refused_from_the_header() {
        let widest = |digits| {
            let mut h = Histogram::<u64>::new_with_bounds(1, u64::MAX, digits).unwrap();
            h.record(1_000).unwrap();
            encode(&h)
        };
        assert!(check_settings(&widest(3)).is_ok());
        assert!(decode(&widest(3)).is_ok());
        for refused in [check_settings(&widest(4)), decode(&widest(5)).map(drop)] {
            let err = refused.unwrap_err();
            assert!(
                err.contains("significant digits: sofabench writes 3"),
                "{err}"
            );
        }
    }

    #[test]
    fn lengths_that_lie_are_refused_before_anything_is_allocated() {
        // Before, u32::MAX made the decoder allocate 4 GB and abort the process.
        let err = decode(&lying(u32::MAX)).unwrap_err();
        assert!(err.contains("claims 4294967295 bytes"), "{err}");
        assert!(
            decode(&lying(0)).is_ok(),
            "a shorter claim reads fewer counts"
        );
        assert!(decode("AAAA").unwrap_err().contains("unknown encoding"));
    }
}
