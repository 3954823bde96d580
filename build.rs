//! Records what `isr-grader --version` prints besides the package version: the git revision the
//! binary was built from and a hash of the case corpus (`cases/public` and `cases/hidden`).
//!
//! - `ISR_GRADER_GIT_REV`: `ISR_GRADER_GIT_REV` from the environment when set (release builds
//!   may set it), else `git rev-parse HEAD`, else the `sha1` of `.cargo_vcs_info.json` (a crate
//!   packaged by `cargo package`), else `unknown`. 12 hex digits.
//! - `ISR_GRADER_CORPUS_HASH`: FNV-1a 64 (`src/fnv.rs`) over every file under `cases/`, in
//!   sorted path order, each as its relative path then its bytes; `none` without a corpus.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "src/fnv.rs"]
mod fnv;

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo:rustc-env=ISR_GRADER_GIT_REV={}", git_rev(&root));
    println!(
        "cargo:rustc-env=ISR_GRADER_CORPUS_HASH={}",
        corpus_hash(&root)
    );
    println!("cargo:rerun-if-env-changed=ISR_GRADER_GIT_REV");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/fnv.rs");
    for dir in ["cases/public", "cases/hidden"] {
        if root.join(dir).is_dir() {
            println!("cargo:rerun-if-changed={dir}");
        }
    }
}

fn short(rev: &str) -> Option<String> {
    let rev = rev.trim();
    (rev.len() >= 12 && rev.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| rev[..12].to_ascii_lowercase())
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn git_rev(root: &Path) -> String {
    if let Some(rev) = std::env::var("ISR_GRADER_GIT_REV")
        .ok()
        .and_then(|r| short(&r))
    {
        return rev;
    }
    if let Some(rev) = git(root, &["rev-parse", "HEAD"]).and_then(|r| short(&r)) {
        watch_git(root);
        return rev;
    }
    // `cargo package` records the commit here.
    if let Ok(text) = fs::read_to_string(root.join(".cargo_vcs_info.json"))
        && let Some(i) = text.find("\"sha1\"")
        && let Some(rev) = text[i + 6..].split('"').nth(1).and_then(short)
    {
        return rev;
    }
    "unknown".into()
}

/// Reruns the build script when HEAD moves: HEAD itself, the branch it points to, packed refs.
/// Works in a worktree too (HEAD in the worktree's git dir, refs in the common one).
fn watch_git(root: &Path) {
    let abs = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() { p } else { root.join(p) }
    };
    let (Some(git_dir), Some(common)) = (
        git(root, &["rev-parse", "--git-dir"]).map(abs),
        git(root, &["rev-parse", "--git-common-dir"]).map(abs),
    ) else {
        return;
    };
    let mut watch = vec![git_dir.join("HEAD"), common.join("packed-refs")];
    if let Ok(head) = fs::read_to_string(git_dir.join("HEAD"))
        && let Some(r) = head.trim().strip_prefix("ref: ")
    {
        watch.push(common.join(r));
    }
    for p in watch.into_iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

fn corpus_hash(root: &Path) -> String {
    let mut files = Vec::new();
    for dir in ["cases/public", "cases/hidden"] {
        collect(&root.join(dir), &mut files);
    }
    if files.is_empty() {
        return "none".into();
    }
    files.sort();
    let mut h = fnv::Fnv64::default();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f);
        h.field(rel.to_string_lossy().replace('\\', "/").as_bytes());
        h.field(&fs::read(f).unwrap_or_default());
    }
    h.hex()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}
