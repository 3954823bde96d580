//! What a submission is written in, when nothing names its program: a Rust crate (`Cargo.toml`)
//! or a Python program (`main.py`), each with the build and run commands the student template
//! uses. Instructor mode only (a class of submissions, one `instructor.toml`); the instructor's
//! `languages` key limits what is recognized.

use std::fmt;
use std::path::Path;

use serde::Deserialize;

/// A language the grader recognizes a submission by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// A Cargo package at the submission's root: `cargo build --release`, then its binary.
    Rust,
    /// A `main.py` at the submission's root: `python3 main.py`.
    Python,
}

impl Language {
    /// Every language, in the order they are tried.
    pub const ALL: [Language; 2] = [Language::Rust, Language::Python];
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
        })
    }
}

/// A recognized submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    /// Its language.
    pub language: Language,
    /// The program and its arguments, relative to the submission's folder.
    pub run: Vec<String>,
    /// The build command, if the language needs one.
    pub build: Option<String>,
    /// The file it was recognized by.
    pub evidence: &'static str,
}

/// Recognizes the submission in `dir` among `allowed` languages (tried in [`Language::ALL`]'s
/// order). `network`: whether the build may fetch dependencies (otherwise Cargo is told to stay
/// offline, so a missing dependency fails at once with Cargo's own message).
pub fn detect(dir: &Path, allowed: &[Language], network: bool) -> Option<Detected> {
    Language::ALL
        .into_iter()
        .filter(|l| allowed.contains(l))
        .find_map(|language| match language {
            Language::Rust => rust(dir, network),
            Language::Python => dir.join("main.py").is_file().then(|| Detected {
                language,
                run: vec!["python3".into(), "main.py".into()],
                build: None,
                evidence: "main.py",
            }),
        })
}

/// A Cargo package: its binary is the `[[bin]]` named like the package, else the first
/// `[[bin]]`, else the package itself (with `src/main.rs`).
fn rust(dir: &Path, network: bool) -> Option<Detected> {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    let manifest: toml::Table = toml::from_str(&text).ok()?;
    let package = manifest
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str());
    let bins: Vec<&str> = manifest
        .get("bin")
        .and_then(|b| b.as_array())
        .map(|bins| {
            bins.iter()
                .filter_map(|b| b.get("name").and_then(|n| n.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let binary = match package {
        Some(p) if bins.contains(&p) => p,
        _ => match bins.first() {
            Some(b) => b,
            None => package.filter(|_| dir.join("src/main.rs").is_file())?,
        },
    };
    // A name that could climb out of target/release is no binary name.
    if binary.is_empty() || binary.contains(['/', '\\']) || binary.starts_with('.') {
        return None;
    }
    let offline = if network { "" } else { " --offline" };
    Some(Detected {
        language: Language::Rust,
        run: vec![format!("target/release/{binary}")],
        build: Some(format!("cargo build --release --quiet{offline}")),
        evidence: "Cargo.toml",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn the_templates_are_recognized() {
        let rust = folder(&[
            (
                "Cargo.toml",
                "[package]\nname = \"isr-leader\"\n[[bin]]\nname = \"isr-leader\"\npath = \"src/main.rs\"\n",
            ),
            ("main.py", ""),
        ]);
        let d = detect(rust.path(), &Language::ALL, false).unwrap();
        assert_eq!(d.language, Language::Rust);
        assert_eq!(d.run, ["target/release/isr-leader"]);
        assert_eq!(
            d.build.as_deref(),
            Some("cargo build --release --quiet --offline")
        );
        let python_only = detect(rust.path(), &[Language::Python], false).unwrap();
        assert_eq!(python_only.run, ["python3", "main.py"]);

        let package = folder(&[
            ("Cargo.toml", "[package]\nname = \"x\"\n"),
            ("src/main.rs", ""),
        ]);
        let d = detect(package.path(), &Language::ALL, true).unwrap();
        assert_eq!(d.run, ["target/release/x"]);
        assert_eq!(d.build.as_deref(), Some("cargo build --release --quiet"));
    }

    #[test]
    fn nothing_recognizable_is_none() {
        let empty = folder(&[("notes.txt", "")]);
        assert_eq!(detect(empty.path(), &Language::ALL, false), None);
        let broken = folder(&[("Cargo.toml", "[package")]);
        assert_eq!(detect(broken.path(), &Language::ALL, false), None);
        let library = folder(&[
            ("Cargo.toml", "[package]\nname = \"x\"\n"),
            ("src/lib.rs", ""),
        ]);
        assert_eq!(detect(library.path(), &Language::ALL, false), None);
        let climbing = folder(&[("Cargo.toml", "[[bin]]\nname = \"../../x\"\n")]);
        assert_eq!(detect(climbing.path(), &Language::ALL, false), None);
        let python = folder(&[("main.py", "")]);
        assert_eq!(detect(python.path(), &[Language::Rust], false), None);
    }
}
