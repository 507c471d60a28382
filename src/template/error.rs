//! The error type for template loading.

use std::fmt;

/// Why a template could not be loaded.
///
/// Displays as one line:
/// `<file>:<line>:<column>: <what is wrong>; <what to do>`, or
/// `<file>: <what is wrong>; <what to do>` when no position is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError {
    file: String,
    position: Option<(u32, u32)>,
    problem: String,
    remedy: String,
}

impl TemplateError {
    /// An error at a known 1-based line and column.
    pub(crate) fn at(
        file: &str,
        line: u32,
        column: u32,
        problem: impl Into<String>,
        remedy: impl Into<String>,
    ) -> Self {
        TemplateError {
            file: file.to_owned(),
            position: Some((line.max(1), column.max(1))),
            problem: problem.into(),
            remedy: remedy.into(),
        }
    }

    /// An error about the file as a whole.
    pub(crate) fn whole(file: &str, problem: impl Into<String>, remedy: impl Into<String>) -> Self {
        TemplateError {
            file: file.to_owned(),
            position: None,
            problem: problem.into(),
            remedy: remedy.into(),
        }
    }

    /// An error at byte offset `offset` of `text`.
    pub(crate) fn at_offset(
        file: &str,
        text: &str,
        offset: usize,
        problem: impl Into<String>,
        remedy: impl Into<String>,
    ) -> Self {
        let (line, column) = line_column(text, offset);
        Self::at(file, line, column, problem, remedy)
    }

    /// The file name given when loading.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// 1-based line of the problem, if known.
    pub fn line(&self) -> Option<u32> {
        self.position.map(|(line, _)| line)
    }

    /// 1-based column (in characters) of the problem, if known.
    pub fn column(&self) -> Option<u32> {
        self.position.map(|(_, column)| column)
    }

    /// What is wrong.
    pub fn problem(&self) -> &str {
        &self.problem
    }

    /// What to do about it.
    pub fn remedy(&self) -> &str {
        &self.remedy
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{}:{}:{}: ", self.file, line, column)?,
            None => write!(f, "{}: ", self.file)?,
        }
        // Keep the message on one line whatever the input contained.
        for c in self
            .problem
            .chars()
            .chain("; ".chars())
            .chain(self.remedy.chars())
        {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for TemplateError {}

/// 1-based line and column (counted in characters) of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (clamp_u32(line), clamp_u32(column))
}

fn clamp_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Shortens `text` for quoting in a message.
pub(crate) fn excerpt(text: &str) -> String {
    const LIMIT: usize = 40;
    let mut out: String = text.chars().take(LIMIT).collect();
    if text.chars().nth(LIMIT).is_some() {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_and_without_position() {
        let e = TemplateError::at("a.json", 3, 7, "bad thing", "do good");
        assert_eq!(e.to_string(), "a.json:3:7: bad thing; do good");
        let e = TemplateError::whole("a.json", "bad thing", "do good");
        assert_eq!(e.to_string(), "a.json: bad thing; do good");
    }

    #[test]
    fn display_is_one_line() {
        let e = TemplateError::at("a.json", 1, 1, "key \"a\nb\"", "x\ty");
        let shown = e.to_string();
        assert!(!shown.contains('\n') && !shown.contains('\t'), "{shown}");
        assert!(shown.contains("a\\nb"), "{shown}");
    }

    #[test]
    fn positions() {
        let text = "ab\ncdé\nf";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 2), (1, 3));
        assert_eq!(line_column(text, 3), (2, 1));
        // 'é' is two bytes but one column.
        assert_eq!(line_column(text, 7), (2, 4));
        assert_eq!(line_column(text, 8), (3, 1));
        assert_eq!(line_column(text, 999), (3, 2));
        // Inside a multi-byte character: rounds down.
        assert_eq!(line_column(text, 6), (2, 3));
    }

    #[test]
    fn excerpts() {
        assert_eq!(excerpt("short"), "short");
        let long = "x".repeat(50);
        assert_eq!(excerpt(&long), format!("{}...", "x".repeat(40)));
    }
}
