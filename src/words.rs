//! Numbers in sentences, for messages and headers written anywhere in the crate.

/// `n` and the noun, in the plural unless `n` is 1: "1 operation", "2 operations".
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(super::counted(1, "operation"), "1 operation");
        assert_eq!(super::counted(0, "operation"), "0 operations");
        assert_eq!(super::counted(200, "operation"), "200 operations");
    }
}
