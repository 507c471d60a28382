//! Latency histograms in HdrHistogram's standard form: V2 deflate-compressed, base64
//! encoded, as its interval logs carry them. Interval rows keep them so that a long run
//! stays small, and results so that runs from many nodes merge without loss.

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// Encodes a histogram (microseconds) in HdrHistogram's compressed form.
pub fn encode(histogram: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    let _ = V2DeflateSerializer::new().serialize(histogram, &mut bytes);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes what [`encode`] wrote, or what HdrHistogram's own tools write.
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("a histogram is not valid base64: {e}"))?;
    let mut histogram: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("a histogram cannot be decoded: {e:?}"))?;
    histogram.auto(true);
    Ok(histogram)
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
}
