//! Latency histograms in HdrHistogram's standard form: V2 deflate-compressed, base64
//! encoded, as its interval logs carry them. Interval rows keep them so that a long run
//! stays small, and results so that runs from many nodes merge without loss.

use std::cell::RefCell;

use base64::Engine as _;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

/// Encodes a histogram (microseconds) in HdrHistogram's compressed form.
pub fn encode(histogram: &Histogram<u64>) -> String {
    CODEC.with(|codec| codec.borrow_mut().encode(histogram))
}

/// Decodes what [`encode`] wrote, or what HdrHistogram's own tools write with at most
/// [`MOST_DIGITS`] significant digits. The text comes from files anyone can write:
/// lengths inside it are checked against the data before the decoder may trust them (it
/// sizes a buffer from one), and its digits before it allocates the counts.
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64(text)?;
    CODEC.with(|codec| codec.borrow_mut().decode(&bytes))
}

/// A histogram's settings, as its header states them, read without its counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    pub lowest: u64,
    pub highest: u64,
    pub digits: u8,
}

impl Settings {
    /// How many counts a histogram of these settings holds: what decoding it allocates,
    /// and what every merge and percentile of it walks. 0 for settings no histogram can
    /// have (decoding them fails before it allocates).
    pub fn counts(&self) -> u64 {
        // A histogram of one-byte counts allocates a byte per count: the length without
        // the cost, and without a copy of the crate's bucket arithmetic.
        Histogram::<u8>::new_with_bounds(self.lowest, self.highest, self.digits)
            .map_or(0, |h| h.distinct_values() as u64)
    }
}

/// Reads a histogram's settings from its header, refusing, as cheaply as it can be known,
/// one that would cost more to decode than any sofabench writes: one with more than
/// [`MOST_DIGITS`] significant digits. Only the header is inflated; its counts are not
/// looked at.
pub fn check_settings(text: &str) -> Result<Settings, String> {
    let bytes = base64(text)?;
    CODEC.with(|codec| codec.borrow_mut().settings(&bytes))
}

/// The most a histogram may take once inflated: its 40-byte header and at most 9 bytes
/// per count, of the 56,320 counts that 3 significant digits take over the whole u64
/// range (500 KB).
const MOST_INFLATED: usize = 1 << 20;

/// The V2 encodings' cookies, and the inner header's length (cookie, payload length,
/// normalizing offset, digits, lowest, highest, conversion ratio).
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
const V2_HEADER: usize = 40;
/// Where the significant digits, the lowest and the highest value sit in the inner header.
const V2_DIGITS_AT: usize = 12;
const V2_LOWEST_AT: usize = 16;
const V2_HIGHEST_AT: usize = 24;

/// The most significant digits read: what sofabench writes
/// ([`crate::metrics::recorder::LATENCY_SIGNIFICANT_DIGITS`]). A histogram holds a
/// count per distinguishable value, allocated and walked whole by every decode, merge
/// and percentile: over the whole u64 range 3 digits are 56,320 counts (440 KiB), 5
/// digits 6.3 million (50 MiB), and a few hundred of those took minutes to report.
pub const MOST_DIGITS: u8 = crate::metrics::recorder::LATENCY_SIGNIFICANT_DIGITS;

thread_local! {
    static CODEC: RefCell<Codec> = RefCell::new(Codec::new());
}

/// The encoder's and decoder's state, kept per thread and reset between histograms: a
/// new inflater or deflater zeroes tens to hundreds of KB of tables and window, and made
/// once per histogram that was most of the time `merge` and the HTML page took on
/// results of many intervals.
struct Codec {
    inflater: Inflater,
    deflater: Compress,
    /// The last histogram serialized, before it is deflated.
    plain: Vec<u8>,
    deserializer: Deserializer,
    serializer: V2Serializer,
}

/// An inflater and what it inflated last.
struct Inflater {
    stream: Decompress,
    plain: Vec<u8>,
}

impl Codec {
    fn new() -> Codec {
        Codec {
            inflater: Inflater {
                stream: Decompress::new(true),
                plain: Vec::new(),
            },
            deflater: Compress::new(Compression::default(), true),
            plain: Vec::new(),
            deserializer: Deserializer::new(),
            serializer: V2Serializer::new(),
        }
    }

    fn encode(&mut self, histogram: &Histogram<u64>) -> String {
        self.plain.clear();
        if self
            .serializer
            .serialize(histogram, &mut self.plain)
            .is_err()
        {
            // Only a histogram of more than 4 GB of counts fails to serialize.
            return String::new();
        }
        let mut bytes = Vec::with_capacity(8 + self.plain.len() / 2 + 64);
        bytes.extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        bytes.extend_from_slice(&[0; 4]);
        self.deflater.reset();
        let mut input = &self.plain[..];
        loop {
            bytes.reserve(input.len() / 2 + 64);
            let before = self.deflater.total_in();
            let status = self
                .deflater
                .compress_vec(input, &mut bytes, FlushCompress::Finish);
            input = &input[(self.deflater.total_in() - before) as usize..];
            if !matches!(status, Ok(Status::Ok | Status::BufError)) {
                break;
            }
        }
        let deflated = (bytes.len() - 8) as u32;
        bytes[4..8].copy_from_slice(&deflated.to_be_bytes());
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<Histogram<u64>, String> {
        let inner = self.inflater.inner(bytes, MOST_INFLATED)?;
        check_digits(inner)?;
        check_length(inner)?;
        let mut histogram: Histogram<u64> = self
            .deserializer
            .deserialize(&mut &inner[..])
            .map_err(|e| format!("a histogram cannot be decoded: {e:?}"))?;
        histogram.auto(true);
        Ok(histogram)
    }

    fn settings(&mut self, bytes: &[u8]) -> Result<Settings, String> {
        let header = self.inflater.inner(bytes, V2_HEADER)?;
        check_digits(header)?;
        let long = |at| long(header, at).ok_or("a histogram is cut short");
        Ok(Settings {
            lowest: long(V2_LOWEST_AT)?,
            highest: long(V2_HIGHEST_AT)?,
            digits: word(header, V2_DIGITS_AT).unwrap_or(0) as u8,
        })
    }
}

impl Inflater {
    /// The uncompressed V2 encoding inside `bytes`, inflated when it is deflated, of at
    /// most `most` bytes: a header alone is read without the counts after it. Refuses
    /// more than [`MOST_INFLATED`].
    fn inner<'a>(&'a mut self, bytes: &'a [u8], most: usize) -> Result<&'a [u8], String> {
        match word(bytes, 0) {
            Some(V2_COMPRESSED_COOKIE) => {
                self.inflate(bytes.get(8..).unwrap_or_default(), most)?;
                Ok(&self.plain)
            }
            Some(V2_COOKIE) => Ok(&bytes[..bytes.len().min(most.max(V2_HEADER))]),
            _ => Err("a histogram has an unknown encoding (cookie)".to_string()),
        }
    }

    /// Inflates `deflated` into `self.plain`, stopping after `most` bytes; refuses a
    /// stream that inflates to more than [`MOST_INFLATED`].
    fn inflate(&mut self, deflated: &[u8], most: usize) -> Result<(), String> {
        let limit = most.min(MOST_INFLATED + 1);
        self.stream.reset(true);
        self.plain.clear();
        let mut input = deflated;
        let mut filled = 0;
        while filled < limit {
            self.plain.resize(limit.min(filled.max(4 * 1024) * 2), 0);
            let (before_in, before_out) = (self.stream.total_in(), self.stream.total_out());
            let status = self
                .stream
                .decompress(input, &mut self.plain[filled..], FlushDecompress::None)
                .map_err(|e| format!("a histogram cannot be inflated: {e}"))?;
            input = &input[(self.stream.total_in() - before_in) as usize..];
            filled += (self.stream.total_out() - before_out) as usize;
            match status {
                Status::StreamEnd => break,
                _ if self.stream.total_out() == before_out && input.is_empty() => {
                    return Err("a histogram is cut short".to_string());
                }
                _ => {}
            }
        }
        self.plain.truncate(filled);
        if filled > MOST_INFLATED {
            return Err(format!(
                "a histogram inflates to more than {} MB; it is not one sofabench wrote",
                MOST_INFLATED >> 20
            ));
        }
        Ok(())
    }
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

/// The big-endian 64-bit value at `at`, if the bytes reach that far.
fn long(bytes: &[u8], at: usize) -> Option<u64> {
    let bytes: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_be_bytes(bytes))
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

/// Refuses an encoding whose inner payload length claims more bytes than it holds.
fn check_length(inner: &[u8]) -> Result<(), String> {
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

    #[test]
    fn what_one_encodes_another_decodes_and_hdrhistograms_own_reader_too() {
        // The codec's state is kept between histograms: nothing of one may reach the next.
        let mut all = Vec::new();
        for values in [&[1_u64][..], &[5, 900_000, 3], &[], &[u64::MAX / 4, 2]] {
            let mut h = crate::metrics::recorder::new_histogram();
            for v in values {
                h.record(*v).unwrap();
            }
            all.push((encode(&h), h));
        }
        for (text, h) in &all {
            assert_eq!(&decode(text).unwrap(), h);
            let bytes = base64(text).unwrap();
            let theirs: Histogram<u64> = Deserializer::new()
                .deserialize(&mut bytes.as_slice())
                .unwrap();
            assert_eq!(&theirs, h);
        }
    }

    #[test]
    fn settings_are_read_from_the_header_and_count_what_a_decode_allocates() {
        let mut h = Histogram::<u64>::new_with_bounds(1, u64::MAX, 3).unwrap();
        h.record(7).unwrap();
        let settings = check_settings(&encode(&h)).unwrap();
        assert_eq!(
            settings,
            Settings {
                lowest: 1,
                highest: u64::MAX,
                digits: 3
            }
        );
        assert_eq!(settings.counts(), 56_320);
        assert_eq!(settings.counts(), h.distinct_values() as u64);
        let narrow = crate::metrics::recorder::new_histogram();
        let counts = check_settings(&encode(&narrow)).unwrap().counts();
        assert_eq!(counts, narrow.distinct_values() as u64);
        let impossible = Settings {
            lowest: 0,
            highest: 0,
            digits: 3,
        };
        assert_eq!(impossible.counts(), 0);
    }

    #[test]
    fn a_stream_cut_short_is_refused() {
        let mut h = crate::metrics::recorder::new_histogram();
        for v in 1..5_000 {
            h.record(v * 37).unwrap();
        }
        let bytes = base64(&encode(&h)).unwrap();
        for cut in [9, 20, bytes.len() / 2, bytes.len() - 1] {
            let text = base64::engine::general_purpose::STANDARD.encode(&bytes[..cut]);
            assert!(decode(&text).is_err(), "cut at {cut}");
        }
        assert_eq!(decode(&encode(&h)).unwrap(), h, "and the codec still works");
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
        for refused in [
            check_settings(&widest(4)).map(drop),
            decode(&widest(5)).map(drop),
        ] {
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
