//! Comparing outputs as the contract says: CRLF -> LF, trailing whitespace trimmed, blank lines
//! ignored wherever they stand. Knows nothing about the exercise.

use similar::{Algorithm, DiffTag, TextDiff};

use crate::report::{DiffLine, FirstDiff};

/// A normalized line and where it stood in the raw output (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// The raw line number.
    pub number: usize,
    /// The line, trailing whitespace trimmed.
    pub text: &'a str,
}

/// The normalized lines of `text`, one at a time, borrowed (no allocation per line). Decode
/// raw output with `String::from_utf8_lossy` first (invalid UTF-8 is replaced, not rejected).
pub fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    text.split('\n')
        .enumerate()
        .map(|(i, l)| Line {
            number: i + 1,
            text: l.trim_end(),
        })
        .filter(|l| !l.text.is_empty())
}

/// The normalized lines of `text`, collected.
pub fn normalize(text: &str) -> Vec<Line<'_>> {
    lines(text).collect()
}

/// The first position where the two line lists differ, if any.
pub fn first_diff<E: AsRef<str>, A: AsRef<str>>(expected: &[E], actual: &[A]) -> Option<FirstDiff> {
    let n = expected.len().max(actual.len());
    let get = |v: &[E], i: usize| v.get(i).map(|s| s.as_ref().to_string());
    (0..n)
        .find(|&i| expected.get(i).map(AsRef::as_ref) != actual.get(i).map(AsRef::as_ref))
        .map(|i| FirstDiff {
            line: i + 1,
            expected: get(expected, i),
            actual: actual.get(i).map(|s| s.as_ref().to_string()),
        })
}

/// A line diff with `context` lines around each change, at most `max_lines` lines (the rest is
/// summarized in a `~` line).
pub fn line_diff<E: AsRef<str>, A: AsRef<str>>(
    expected: &[E],
    actual: &[A],
    context: usize,
    max_lines: usize,
) -> Vec<DiffLine> {
    let e: Vec<&str> = expected.iter().map(AsRef::as_ref).collect();
    let a: Vec<&str> = actual.iter().map(AsRef::as_ref).collect();
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .diff_slices(&e, &a);
    let mut out = Vec::new();
    for (g, group) in diff.grouped_ops(context).iter().enumerate() {
        if g > 0 {
            out.push(DiffLine {
                tag: '~',
                text: "...".into(),
            });
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let tag = match (op.tag(), change.tag()) {
                    (DiffTag::Equal, _) => ' ',
                    (_, similar::ChangeTag::Delete) => '-',
                    (_, similar::ChangeTag::Insert) => '+',
                    (_, similar::ChangeTag::Equal) => ' ',
                };
                out.push(DiffLine {
                    tag,
                    text: change.value().to_string(),
                });
            }
        }
    }
    if out.len() > max_lines {
        let rest = out.len() - max_lines;
        out.truncate(max_lines);
        out.push(DiffLine {
            tag: '~',
            text: format!("... {rest} more diff lines"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_ignores_crlf_trailing_space_and_blank_lines() {
        let n = normalize("a \r\n\r\n\nb\t\n  \nc");
        let texts: Vec<&str> = n.iter().map(|l| l.text).collect();
        assert_eq!(texts, ["a", "b", "c"]);
        assert_eq!(n[1].number, 4);
    }

    #[test]
    fn first_difference() {
        let e = vec!["a".to_string(), "b".into()];
        assert_eq!(first_diff(&e, &e), None);
        let d = first_diff(&e, &["a".to_string()]).unwrap();
        assert_eq!(
            (d.line, d.expected.as_deref(), d.actual),
            (2, Some("b"), None)
        );
    }

    #[test]
    fn diff_has_context_and_a_cap() {
        let e: Vec<String> = (0..20).map(|i| i.to_string()).collect();
        let mut a = e.clone();
        a[10] = "x".into();
        let d = line_diff(&e, &a, 1, 100);
        let shown: Vec<String> = d.iter().map(|l| format!("{}{}", l.tag, l.text)).collect();
        assert_eq!(shown, [" 9", "-10", "+x", " 11"]);
        assert_eq!(line_diff(&e, &a, 1, 2).len(), 3);
    }
}
