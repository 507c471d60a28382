//! Rows of cells padded into columns, for the tables of `compare` and of repetitions.

use std::fmt::Write as _;

/// Pads the cells into columns: the first two left-aligned, the rest right-aligned but
/// the last, a note.
pub fn columns(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let width = widths[c];
            if c < 2 || c == columns - 1 {
                let _ = write!(line, "  {cell:<width$}");
            } else {
                let _ = write!(line, "  {cell:>width$}");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
