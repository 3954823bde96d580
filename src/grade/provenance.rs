//! Which grader graded which cases: the version string that every report carries.

use crate::cases::{Case, Visibility};
use crate::fnv::Fnv64;
use crate::version;

/// A hash of the cases graded, as they were loaded (FNV-1a 64, 16 hex digits): in order, each
/// case's name, points, visibility, trace and expected output. Two reports with the same hash
/// graded against the same cases; a changed, added or removed case changes it.
pub fn cases_hash(cases: &[Case]) -> String {
    let mut h = Fnv64::default();
    h.field(&(cases.len() as u64).to_le_bytes());
    for c in cases {
        h.field(c.name.as_bytes());
        h.field(&c.meta.points.to_le_bytes());
        h.field(&[u8::from(c.meta.visibility == Visibility::Hidden)]);
        h.field(c.trace_text.as_bytes());
        h.field(c.expected.as_deref().unwrap_or("").as_bytes());
    }
    h.hex()
}

/// `isr-grader 0.1.0 (rev abc123def456, cases 0123456789abcdef)` for these cases.
pub fn grader_version(cases: &[Case]) -> String {
    version::with_cases(&cases_hash(cases))
}
