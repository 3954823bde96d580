//! The case corpus on disk (or built into the binary): loading, validating and writing cases.
//!
//! A case is three files side by side in a case folder, sharing a name:
//! - `NAME.toml`: metadata ([`CaseMeta`]);
//! - `NAME.trace`: the input;
//! - `NAME.out`: the expected output, written only by `isr-grader bless` from the reference.
//!
//! Folders are walked recursively and sorted by path, so corpus order never depends on the file
//! system. Every problem is a [`CaseError`] naming the file (and line, where there is one).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};
use isr_reference::{Fault, Trace};
use serde::{Deserialize, Serialize};

/// The public cases, built into the binary: the default case set, so a student who copied the
/// template elsewhere can self-check with no path to the corpus. Hidden cases are never built in.
pub static BUILTIN_PUBLIC: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/cases/public");

/// The label used for the built-in public cases in messages.
pub const BUILTIN_LABEL: &str = "<built-in public cases>";

/// Who may see a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Shown to students, built into the binary.
    Public,
    /// Instructors only.
    Hidden,
}

/// Where a case's trace came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Origin {
    /// Written by hand.
    Handwritten,
    /// Produced by `isr-grader gen GENERATOR --seed SEED` with `params`; regenerates bit for bit.
    Generated {
        /// The scenario generator's name.
        generator: String,
        /// The seed.
        seed: u64,
        /// The generator's parameters.
        #[serde(default)]
        params: BTreeMap<String, toml::Value>,
    },
    /// Shrunk by `isr-grader shrink --save` from a program's failure on another trace.
    Shrunk {
        /// The case or trace file it was shrunk from.
        from: String,
        /// The generator of the trace it was shrunk from, when it was generated.
        #[serde(default)]
        generator: Option<String>,
        /// That generator's seed.
        #[serde(default)]
        seed: Option<u64>,
        /// The program whose failure it is, as a command line.
        program: String,
        /// How the program differed (`STATUS HW`, `missing ACK`, ...).
        difference: String,
    },
}

/// A case's metadata (`NAME.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseMeta {
    /// A short title.
    pub title: String,
    /// One paragraph for the student, in the lesson's terms.
    pub description: String,
    /// Catalog ids of the mistakes this case is aimed at.
    #[serde(default)]
    pub targets: Vec<String>,
    /// Points for passing it.
    #[serde(default = "one")]
    pub points: u32,
    /// Who may see it.
    pub visibility: Visibility,
    /// Where its trace came from.
    pub origin: Origin,
}

fn one() -> u32 {
    1
}

/// One loaded case.
#[derive(Debug, Clone)]
pub struct Case {
    /// The file stem, unique in a run.
    pub name: String,
    /// The metadata.
    pub meta: CaseMeta,
    /// The trace file's path (for messages; for built-in cases a path under [`BUILTIN_LABEL`]).
    pub trace_path: PathBuf,
    /// The trace's text as stored.
    pub trace_text: String,
    /// The parsed, validated trace.
    pub trace: Trace,
    /// The expected output (`NAME.out`), `None` when it does not exist yet.
    pub expected: Option<String>,
    /// Whether the case is on disk (and so can be blessed); false for built-in ones.
    pub on_disk: bool,
}

impl Case {
    /// The path of the expected-output file.
    pub fn expected_path(&self) -> PathBuf {
        self.trace_path.with_extension("out")
    }

    /// The path of the metadata file.
    pub fn meta_path(&self) -> PathBuf {
        self.trace_path.with_extension("toml")
    }
}

/// A problem with a case file: which file, which line, what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseError {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.path.display(), l, self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for CaseError {}

fn err(path: &Path, line: Option<usize>, message: impl Into<String>) -> CaseError {
    CaseError {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// Where to load cases from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseSource {
    /// The public cases built into the binary.
    BuiltinPublic,
    /// A folder on disk, walked recursively.
    Dir(PathBuf),
}

/// Loads every case of every source, in order (sources in the given order, files sorted by path
/// inside each). Names must be unique across sources.
pub fn load(sources: &[CaseSource]) -> Result<Vec<Case>, CaseError> {
    let mut cases: Vec<Case> = Vec::new();
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for source in sources {
        let files = match source {
            CaseSource::BuiltinPublic => builtin_files(),
            CaseSource::Dir(dir) => disk_files(dir)?,
        };
        for file in files {
            let case = parse_case(file)?;
            if let Some(prev) = seen.insert(case.name.clone(), case.trace_path.clone()) {
                return Err(err(
                    &case.trace_path,
                    None,
                    format!(
                        "case name `{}` is also used by {}; case names must be unique",
                        case.name,
                        prev.display()
                    ),
                ));
            }
            cases.push(case);
        }
    }
    Ok(cases)
}

/// The texts of one case before parsing.
struct CaseFiles {
    trace_path: PathBuf,
    trace: String,
    meta: Option<String>,
    expected: Option<String>,
    on_disk: bool,
}

fn builtin_files() -> Vec<CaseFiles> {
    let mut traces = Vec::new();
    collect_builtin(&BUILTIN_PUBLIC, &mut traces);
    traces.sort_by(|a, b| a.path().cmp(b.path()));
    traces
        .into_iter()
        .map(|f| {
            let text = |ext: &str| {
                BUILTIN_PUBLIC
                    .get_file(f.path().with_extension(ext))
                    .map(|g| String::from_utf8_lossy(g.contents()).into_owned())
            };
            CaseFiles {
                trace_path: Path::new(BUILTIN_LABEL).join(f.path()),
                trace: String::from_utf8_lossy(f.contents()).into_owned(),
                meta: text("toml"),
                expected: text("out"),
                on_disk: false,
            }
        })
        .collect()
}

fn collect_builtin<'a>(dir: &'a Dir<'a>, out: &mut Vec<&'a include_dir::File<'a>>) {
    for f in dir.files() {
        if f.path().extension().is_some_and(|e| e == "trace") {
            out.push(f);
        }
    }
    for d in dir.dirs() {
        collect_builtin(d, out);
    }
}

/// The case files of a folder. Symbolic links inside it are refused, not skipped or followed: a
/// link can point anywhere (into a submission), and a case that silently disappears changes
/// the grade. The folder itself may be a link (the instructor named it). A folder without any
/// case is refused too: grading on no case would be `0/0 passed` and exit 0.
fn disk_files(dir: &Path) -> Result<Vec<CaseFiles>, CaseError> {
    if !dir.is_dir() {
        return Err(err(dir, None, "no such case folder"));
    }
    let mut paths = Vec::new();
    let mut others = 0usize;
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| err(dir, None, format!("cannot read: {e}")))?;
        let p = entry.path();
        if entry.depth() > 0 && entry.path_is_symlink() {
            return Err(err(
                p,
                None,
                "a symbolic link in a case folder: refused (case files and folders must be real ones; copy the file in instead)",
            ));
        }
        if entry.file_type().is_file() {
            if p.extension().is_some_and(|e| e == "trace") {
                paths.push(p.to_path_buf());
            } else {
                others += 1;
            }
        }
    }
    if paths.is_empty() {
        return Err(err(
            dir,
            None,
            format!(
                "no case in this folder ({others} other file{}): a case is NAME.trace beside NAME.toml and NAME.out",
                if others == 1 { "" } else { "s" }
            ),
        ));
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let read = |path: &Path| -> Result<Option<String>, CaseError> {
                match std::fs::read(path) {
                    Ok(b) => String::from_utf8(b)
                        .map(Some)
                        .map_err(|_| err(path, None, "not valid UTF-8")),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(err(path, None, format!("cannot read: {e}"))),
                }
            };
            Ok(CaseFiles {
                trace: read(&p)?.unwrap_or_default(),
                meta: read(&p.with_extension("toml"))?,
                expected: read(&p.with_extension("out"))?,
                trace_path: p,
                on_disk: true,
            })
        })
        .collect()
}

/// A TOML error as a [`CaseError`] naming the file and the line of the error's span.
pub fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> CaseError {
    let line = e
        .span()
        .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
    err(path, line, e.message().trim().to_string())
}

/// Parses a case's metadata text; errors name the file and line.
pub fn parse_meta(path: &Path, text: &str) -> Result<CaseMeta, CaseError> {
    let meta: CaseMeta = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
    for id in &meta.targets {
        if Fault::from_id(id).is_none() {
            let line = text
                .lines()
                .position(|l| l.contains(&format!("\"{id}\"")))
                .map(|i| i + 1);
            return Err(err(
                path,
                line,
                format!(
                    "unknown catalog id `{id}` in targets; known ids: {}",
                    Fault::known_ids()
                ),
            ));
        }
    }
    Ok(meta)
}

fn parse_case(f: CaseFiles) -> Result<Case, CaseError> {
    let name = f
        .trace_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let meta_path = f.trace_path.with_extension("toml");
    let meta_text = f.meta.ok_or_else(|| {
        err(
            &meta_path,
            None,
            "missing: every case needs NAME.toml beside NAME.trace",
        )
    })?;
    let meta = parse_meta(&meta_path, &meta_text)?;
    let shown = f.trace_path.display().to_string();
    let trace = Trace::parse(&shown, &f.trace).map_err(|e| CaseError {
        path: f.trace_path.clone(),
        line: (e.line > 0).then_some(e.line),
        message: e.message,
    })?;
    Ok(Case {
        name,
        meta,
        trace_path: f.trace_path,
        trace_text: f.trace,
        trace,
        expected: f.expected,
        on_disk: f.on_disk,
    })
}

/// Writes `contents` to `path` atomically: a temporary file in the same folder, then a rename, so
/// readers never see a half-written file. The file is readable by all (0644 less the umask), like
/// any file a program writes: reports are meant to be read, served and shared.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(dir)?;
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Whether a case name matches a `--filter` pattern. One rule: the pattern is a glob that may
/// match any part of the name (`*` any run of characters, `?` one character), as if it began and
/// ended with `*`. So `worked`, `worked*`, `*worked` and `w*d` all match `001-worked-trace`.
pub fn name_matches(name: &str, pattern: &str) -> bool {
    let name: Vec<char> = name.chars().collect();
    let glob: Vec<char> = std::iter::once('*')
        .chain(pattern.chars())
        .chain(std::iter::once('*'))
        .collect();
    // The classic linear glob match: on a mismatch, retry from the last `*` one character on.
    let (mut n, mut g) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match glob.get(g) {
            Some('*') => {
                star = Some((g, n));
                g += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                n += 1;
                g += 1;
            }
            _ => match star {
                Some((sg, sn)) => {
                    star = Some((sg, sn + 1));
                    g = sg + 1;
                    n = sn + 1;
                }
                None => return false,
            },
        }
    }
    glob[g..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_are_readable_by_all() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.html");
        write_atomic(&path, b"x").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        // 0644 less the umask: the group and others may read unless the umask forbids it.
        assert_eq!(mode & 0o600, 0o600, "{mode:o}");
        assert_ne!(mode, 0o600, "{mode:o}");
        assert_eq!(std::fs::read(&path).unwrap(), b"x");
    }

    #[test]
    fn filter_patterns() {
        assert!(name_matches("001-worked-trace", "worked"));
        assert!(name_matches("001-worked-trace", "001-*"));
        assert!(name_matches("001-worked-trace", "*trace"));
        assert!(name_matches("001-worked-trace", "0*w*e"));
        assert!(!name_matches("001-worked-trace", "*x*"));
        // One rule: a wildcard never turns the match into a whole-name one.
        for pattern in [
            "worked*",
            "*worked",
            "w*d",
            "w?rked",
            "001-worked-trace",
            "",
            "*",
        ] {
            assert!(name_matches("001-worked-trace", pattern), "{pattern}");
        }
        for pattern in ["worked-x", "w?d", "trace-", "001-worked-trace-"] {
            assert!(!name_matches("001-worked-trace", pattern), "{pattern}");
        }
    }

    #[test]
    fn meta_errors_name_the_line() {
        let p = Path::new("c.toml");
        let e = parse_meta(p, "title = \"x\"\ndescription = \"d\"\nvisibility = \"public\"\norigin = { kind = \"handwritten\" }\npoints = 1\ntypo = 3\n").unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("typo"), "{e}");
        let e = parse_meta(p, "title = \"x\"\ndescription = \"d\"\nvisibility = \"public\"\norigin = { kind = \"handwritten\" }\ntargets = [\"nope\"]\n").unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
    }
}
