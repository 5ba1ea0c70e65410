//! Errors that name the place: `file:line:col: message`, on one line.

use std::fmt;
use std::path::Path;

/// An error at a position in a file (line and column are 1-based; 0 when unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The file.
    pub file: String,
    /// Line.
    pub line: usize,
    /// Column.
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl Located {
    /// An error about a whole file.
    pub fn file(path: &Path, message: String) -> Located {
        Located {
            file: path.display().to_string(),
            line: 0,
            col: 0,
            message,
        }
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.col, self.message
            )
        }
    }
}

impl std::error::Error for Located {}

/// 1-based line and column of the first occurrence of `needle` written as a quoted string
/// (else anywhere) in `text`; (0, 0) if absent.
pub fn position_of(text: &str, needle: &str) -> (usize, usize) {
    let quoted = format!("\"{needle}\"");
    let Some(at) = text.find(&quoted).or_else(|| text.find(needle)) else {
        return (0, 0);
    };
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = at - before.rfind('\n').map_or(0, |n| n + 1) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based() {
        let t = "(\n  chip: \"nope\",\n)";
        assert_eq!(position_of(t, "nope"), (2, 9));
        assert_eq!(position_of(t, "absent"), (0, 0));
    }
}
