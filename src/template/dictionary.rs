//! The word dictionary that generated strings are made of.

use std::collections::HashSet;
use std::fmt;

use super::values::{PADDING, below, copy_run};
use crate::seed;
use rand_xoshiro::rand_core::Rng as _;

/// Number of words in a dictionary (Iron Cushion's figure; a power of two,
/// so a word is picked with 15 random bits).
pub(crate) const WORDS: usize = 1 << WORD_INDEX_BITS;
/// Bits of a random number needed to pick a word.
pub(crate) const WORD_INDEX_BITS: u32 = 15;
/// Shortest word.
pub(crate) const MIN_WORD_LEN: usize = 3;
/// Longest word.
pub(crate) const MAX_WORD_LEN: usize = 15;
/// The alphabet of words: exactly 64 characters, so one is picked with 6 bits.
pub(crate) const ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789?!";

/// 32,768 distinct words of 3 to 15 characters from `[A-Za-z0-9?!]`.
///
/// Each word's length is uniform over 3..=15 and each of its characters
/// uniform over the 64-character alphabet; a word that repeats an earlier
/// one is drawn again. Built deterministically from a seed. Stored as one
/// string of all words plus an offset table.
#[derive(Clone, PartialEq, Eq)]
pub struct Dictionary {
    /// All words, then [`PADDING`] spaces (for [`copy_run`]).
    padded: String,
    /// `WORDS + 1` offsets: word `i` is `padded[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
}

impl Dictionary {
    /// Builds the dictionary for `seed` (sofabench passes
    /// `seed::derive(master, seed::label::DICTIONARY)`).
    pub fn new(seed: u64) -> Self {
        let mut rng = seed::rng(seed);
        let mut text = String::with_capacity(WORDS * (MIN_WORD_LEN + MAX_WORD_LEN) / 2);
        let mut starts = Vec::with_capacity(WORDS + 1);
        let mut seen: HashSet<u128> = HashSet::with_capacity(WORDS);
        let mut word = [0u8; MAX_WORD_LEN];
        starts.push(0);
        while starts.len() <= WORDS {
            let len =
                MIN_WORD_LEN + below(&mut rng, (MAX_WORD_LEN - MIN_WORD_LEN + 1) as u64) as usize;
            // Pack the word (6 bits a character) with its length for the
            // duplicate check: 15 * 6 + 4 = 94 bits.
            let mut key = len as u128;
            for slot in &mut word[..len] {
                let index = (rng.next_u64() >> 58) as usize;
                *slot = ALPHABET[index];
                key = (key << 6) | index as u128;
            }
            if !seen.insert(key) {
                continue;
            }
            for &b in &word[..len] {
                text.push(char::from(b));
            }
            starts.push(text.len() as u32);
        }
        text.push_str(&" ".repeat(PADDING));
        Dictionary {
            padded: text,
            starts,
        }
    }

    /// Number of words (always 32,768).
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Always false; present because `len` is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Word number `i` (panics if `i >= len()`).
    pub fn word(&self, i: usize) -> &str {
        &self.padded[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// Appends word number `i` (all ASCII, nothing to escape in JSON).
    #[inline]
    pub(crate) fn write_word(&self, out: &mut Vec<u8>, i: usize) {
        let start = self.starts[i] as usize;
        let end = self.starts[i + 1] as usize;
        copy_run(out, self.padded.as_bytes(), start, end - start);
    }
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dictionary")
            .field("words", &self.len())
            .field("first", &self.word(0))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_32768_distinct_words_of_the_right_shape() {
        let d = Dictionary::new(1);
        assert_eq!(d.len(), 32_768);
        assert!(!d.is_empty());
        let mut distinct = HashSet::new();
        for i in 0..d.len() {
            let w = d.word(i);
            assert!((3..=15).contains(&w.len()), "{w:?}");
            assert!(w.bytes().all(|b| ALPHABET.contains(&b)), "{w:?}");
            let mut out = b"x".to_vec();
            d.write_word(&mut out, i);
            assert_eq!(&out[1..], w.as_bytes());
            distinct.insert(w);
        }
        assert_eq!(distinct.len(), 32_768);
    }

    #[test]
    fn lengths_and_characters_are_uniform() {
        let d = Dictionary::new(99);
        let mut lengths = [0u32; 16];
        let mut chars = [0u32; 256];
        let mut total_chars = 0u32;
        for i in 0..d.len() {
            let w = d.word(i);
            lengths[w.len()] += 1;
            for b in w.bytes() {
                chars[b as usize] += 1;
                total_chars += 1;
            }
        }
        let expected = d.len() as f64 / 13.0;
        for (len, &count) in lengths.iter().enumerate() {
            if (3..=15).contains(&len) {
                let ratio = f64::from(count) / expected;
                assert!((ratio - 1.0).abs() < 0.06, "length {len}: {count}");
            } else {
                assert_eq!(count, 0);
            }
        }
        let expected = f64::from(total_chars) / 64.0;
        for &b in ALPHABET {
            let ratio = f64::from(chars[b as usize]) / expected;
            assert!((ratio - 1.0).abs() < 0.05, "char {}: {ratio}", b as char);
        }
        // Every alphabet character occurs, '?' and '!' included.
        assert!(chars[b'?' as usize] > 0 && chars[b'!' as usize] > 0);
    }

    #[test]
    fn same_seed_same_words_other_seed_other_words() {
        let a = Dictionary::new(5);
        let b = Dictionary::new(5);
        let c = Dictionary::new(6);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let differing = (0..a.len()).filter(|&i| a.word(i) != c.word(i)).count();
        assert!(differing > 32_000, "{differing}");
    }

    #[test]
    #[should_panic]
    fn word_out_of_range_panics() {
        let _ = Dictionary::new(1).word(32_768);
    }
}
