//! What this binary is: the package version, the git revision it was built from and a hash of
//! the corpus it was built with (both recorded by `build.rs`).

/// The git revision the binary was built from (12 hex digits), or `unknown`.
pub const GIT_REV: &str = env!("ISR_GRADER_GIT_REV");

/// FNV-1a 64 of `cases/public` and `cases/hidden` at build time (16 hex digits), or `none`.
pub const CORPUS_HASH: &str = env!("ISR_GRADER_CORPUS_HASH");

/// What `--version` prints after the program's name: `0.1.0 (rev abc123def456, corpus 0123…)`.
pub const LONG: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (rev ",
    env!("ISR_GRADER_GIT_REV"),
    ", corpus ",
    env!("ISR_GRADER_CORPUS_HASH"),
    ")"
);

/// The grader's name, version and revision, with `cases` (a hash of the cases graded) in place
/// of the build-time corpus hash: `isr-grader 0.1.0 (rev abc123def456, cases 0123…)`.
pub fn with_cases(cases_hash: &str) -> String {
    format!(
        "isr-grader {} (rev {GIT_REV}, cases {cases_hash})",
        env!("CARGO_PKG_VERSION")
    )
}
