//! The distribution's names agree: the archives that the release workflow publishes are the ones
//! that `[package.metadata.binstall]` (both packages) and install.sh look for, for all four
//! targets. (The workflows themselves are linted by actionlint in `.ci/run`; they cannot run
//! here.)

use std::path::PathBuf;

const TARGETS: [&str; 4] = [
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
];

fn read(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The archive name the release workflow gives a target's build.
fn archive(version: &str, target: &str) -> String {
    format!("isr-grader-{version}-{target}.tar.gz")
}

fn expand(template: &str, version: &str, target: &str, bin: &str) -> String {
    template
        .replace("{ repo }", "https://github.com/o/r")
        .replace("{ version }", version)
        .replace("{ target }", target)
        .replace("{ bin }", bin)
        .replace("{ binary-ext }", "")
}

#[test]
fn the_release_workflow_builds_every_target_under_the_archive_name() {
    let wf = read(".github/workflows/release.yml");
    for t in TARGETS {
        assert!(
            wf.contains(&format!("target: {t},")),
            "release.yml builds no {t}"
        );
    }
    assert!(wf.contains(r#"name="isr-grader-$VERSION-$TARGET""#));
    assert!(wf.contains(r#"tar -C dist -czf "dist/$name.tar.gz" "$name""#));
    assert!(wf.contains("SHA256SUMS"));
}

#[test]
fn binstall_metadata_finds_the_release_archives() {
    for (manifest, bin) in [
        ("Cargo.toml", "isr-grader"),
        ("reference/Cargo.toml", "isr-reference"),
    ] {
        let doc: toml::Table = toml::from_str(&read(manifest)).unwrap();
        let package = doc["package"].as_table().unwrap();
        let version = package["version"].as_str().unwrap();
        let meta = package["metadata"]["binstall"].as_table().unwrap();
        assert_eq!(meta["pkg-fmt"].as_str(), Some("tgz"), "{manifest}");
        // Every release target, and the glibc hosts (which use the static musl builds).
        let hosts = TARGETS.iter().map(|t| (*t, *t)).chain([
            ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl"),
            ("aarch64-unknown-linux-gnu", "aarch64-unknown-linux-musl"),
        ]);
        for (host, built) in hosts {
            let over = meta
                .get("overrides")
                .and_then(|o| o.get(host))
                .and_then(|o| o.as_table());
            let field = |k: &str| {
                over.and_then(|o| o.get(k))
                    .unwrap_or(&meta[k])
                    .as_str()
                    .unwrap()
            };
            let url = expand(field("pkg-url"), version, host, bin);
            assert_eq!(
                url,
                format!(
                    "https://github.com/o/r/releases/download/v{version}/{}",
                    archive(version, built)
                ),
                "{manifest} on {host}"
            );
            let dir = expand(field("bin-dir"), version, host, bin);
            assert_eq!(
                dir,
                format!("isr-grader-{version}-{built}/{bin}"),
                "{manifest} on {host}"
            );
        }
    }
}

#[test]
fn install_sh_looks_for_the_archive_names_and_checks_them() {
    let sh = read("install.sh");
    assert!(sh.starts_with("#!/bin/sh\n"));
    assert!(sh.contains(r#"isr-grader-[^ /]+-$target\.tar\.gz"#));
    assert!(sh.contains("os=unknown-linux-musl") && sh.contains("os=apple-darwin"));
    assert!(sh.contains(r#"[ "$actual" = "$expected" ]"#));
    // The release workflow rewrites these two lines.
    assert!(sh.contains("\nDEFAULT_REPO=\n") && sh.contains("\nDEFAULT_VERSION=latest\n"));
}

/// install.sh against a release folder made here (`file://`, so it needs curl): it installs
/// both programs from the archive for this machine, and refuses an archive whose checksum is
/// not the one in SHA256SUMS.
#[test]
#[cfg(target_os = "linux")]
fn install_sh_installs_a_checked_archive_and_refuses_a_tampered_one() {
    use std::process::Command;
    let has = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("curl") || !has("sha256sum") {
        eprintln!("skipped: needs curl and sha256sum");
        return;
    }
    let target = format!("{}-unknown-linux-musl", std::env::consts::ARCH);
    let tmp = tempfile::tempdir().unwrap();
    let rel = tmp.path().join("release");
    let name = format!("isr-grader-9.9.9-{target}");
    std::fs::create_dir_all(rel.join(&name)).unwrap();
    // Stand-ins (the real binaries are tens of MB): install.sh copies them and runs
    // `isr-grader --version`.
    for bin in ["isr-grader", "isr-reference"] {
        let script = format!("#!/bin/sh\necho '{bin} 9.9.9 (rev 0123456789ab, corpus none)'\n");
        std::fs::write(rel.join(&name).join(bin), script).unwrap();
    }
    let sh = |script: &str| {
        let out = Command::new("sh")
            .args(["-c", script])
            .current_dir(&rel)
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {out:?}");
    };
    sh(&format!(
        "tar -czf {name}.tar.gz {name} && sha256sum {name}.tar.gz > SHA256SUMS"
    ));
    let install = |dir: &str| {
        Command::new("sh")
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("install.sh"))
            .args(["--dir", dir])
            .env("ISR_GRADER_BASE_URL", format!("file://{}", rel.display()))
            .output()
            .unwrap()
    };
    let dir = tmp.path().join("bin");
    let out = install(dir.to_str().unwrap());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains("checksum ok"), "{text}");
    assert!(
        text.contains("isr-grader 9.9.9 (rev 0123456789ab"),
        "{text}"
    );
    assert!(dir.join("isr-grader").is_file() && dir.join("isr-reference").is_file());

    // One byte of the checksum changed: nothing installed, exit 1.
    let sums = std::fs::read_to_string(rel.join("SHA256SUMS")).unwrap();
    let flipped = if sums.starts_with('0') { "1" } else { "0" };
    std::fs::write(rel.join("SHA256SUMS"), format!("{flipped}{}", &sums[1..])).unwrap();
    let dir = tmp.path().join("bin2");
    let out = install(dir.to_str().unwrap());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not match SHA256SUMS"));
    assert!(!dir.join("isr-grader").exists());
}
