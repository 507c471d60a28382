//! The sizes of the attachments a run writes (`--attachment-size`), and the bytes in them.

use rand::RngExt;

use crate::driver::GeneratedBody;
use crate::seed::Rng;

/// The largest attachment accepted (4 GiB less a byte, so that a length fits in four
/// bytes): past what servers take in one request (CouchDB's
/// `max_http_request_size` is 4 GiB), and bounding the arithmetic on lengths.
pub const MAX_ATTACHMENT: u64 = u32::MAX as u64;

/// The most sizes in a list.
pub const MAX_SIZES: usize = 64;

/// The name every attachment a run writes has on its document.
pub const ATTACHMENT_NAME: &str = "blob";

/// The sizes attachments are drawn from, each as likely as the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachmentSizes {
    sizes: Vec<u64>,
}

impl AttachmentSizes {
    /// Sizes from `--attachment-size`, each already parsed; refused when there are none,
    /// too many, or one is 0 or past [`MAX_ATTACHMENT`].
    pub fn new(sizes: Vec<u64>) -> Result<AttachmentSizes, String> {
        if sizes.is_empty() || sizes.len() > MAX_SIZES {
            return Err(format!(
                "--attachment-size: give 1 to {MAX_SIZES} sizes separated by commas, e.g. 64KiB or 1KiB,1MiB"
            ));
        }
        if let Some(bad) = sizes.iter().find(|&&s| s == 0 || s > MAX_ATTACHMENT) {
            return Err(format!(
                "--attachment-size: {bad} bytes is not from 1 byte to 4 GiB less one byte; give a smaller size"
            ));
        }
        Ok(AttachmentSizes { sizes })
    }

    /// One size: what every attachment has.
    pub fn fixed(size: u64) -> AttachmentSizes {
        AttachmentSizes { sizes: vec![size] }
    }

    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// The size of the next attachment.
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        match self.sizes.as_slice() {
            [one] => *one,
            many => many[rng.random_range(0..many.len())],
        }
    }
}

impl Default for AttachmentSizes {
    fn default() -> AttachmentSizes {
        AttachmentSizes::fixed(64 << 10)
    }
}

/// The attachment of `length` bytes on document `number` in a run seeded `seed`: its bytes
/// depend on the run and the document only, so a test can make them again.
pub fn attachment_body(seed: u64, number: u64, length: u64) -> GeneratedBody {
    GeneratedBody {
        length,
        seed: seed ^ number.wrapping_mul(0xD6E8_FEB8_6659_FD93),
        content_type: "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed;

    #[test]
    fn sizes_are_bounded_and_drawn_from_the_list() {
        assert!(AttachmentSizes::new(vec![]).is_err());
        assert!(AttachmentSizes::new(vec![0]).is_err());
        assert!(AttachmentSizes::new(vec![MAX_ATTACHMENT + 1]).is_err());
        let sizes = AttachmentSizes::new(vec![10, 20]).unwrap();
        let mut rng = seed::rng(1);
        let drawn: Vec<u64> = (0..100).map(|_| sizes.draw(&mut rng)).collect();
        assert!(drawn.contains(&10) && drawn.contains(&20));
        assert!(drawn.iter().all(|s| [10, 20].contains(s)));
    }
}
