//! Debian's headless Chromium, for the tests that open the HTML reports in a real browser: the
//! DOM it builds (`--dump-dom`) and a screenshot whose pixels are searched for the colours the
//! style sheet gives each part of a page. Chromium is required: without it these tests fail and
//! say to install it (`.ci/run` does).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Debian's Chromium on PATH, or the test fails saying how to get it.
pub fn chromium() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|d| [d.join("chromium"), d.join("chromium-browser")])
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "no chromium on PATH: the HTML reports' browser tests need Debian's Chromium \
                 (apt-get install chromium)"
            )
        })
}

/// Runs headless Chromium on the page at `page` in a `width`×`height` window with `args`;
/// returns its stdout. Fails the test if it does not end within two minutes (a hang guard, not
/// a timing assertion).
pub fn chromium_on(page: &Path, (width, height): (u32, u32), args: &[String]) -> String {
    let scratch = tempfile::tempdir().unwrap();
    // Its output goes to files: a pipe nobody reads while waiting would fill and block it.
    let stdout = scratch.path().join("stdout");
    let stderr = scratch.path().join("stderr");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--no-first-run",
        ])
        .arg(format!("--window-size={width},{height}"))
        .arg(format!(
            "--user-data-dir={}",
            scratch.path().join("profile").display()
        ))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish: {}", read(&stderr));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "chromium failed: {}", read(&stderr));
    read(&stdout)
}

/// The DOM Chromium builds from the page.
pub fn dom(page: &Path) -> String {
    chromium_on(page, (1280, 2000), &["--dump-dom".to_string()])
}

/// A screenshot of `page` in a `window`, saved as `png`: its pixels (RGB), after checking it
/// decodes at the window's size.
pub fn screenshot(page: &Path, png: &Path, window: (u32, u32)) -> Vec<[u8; 3]> {
    let _ = std::fs::remove_file(png);
    chromium_on(page, window, &[format!("--screenshot={}", png.display())]);
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png).unwrap_or_else(|e| panic!("{}: {e}", png.display())),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), window);
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected colour type {other:?}"),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect()
}

/// Pixels within `tolerance` of `colour` on every channel.
pub fn count_near(pixels: &[[u8; 3]], colour: [u8; 3], tolerance: u8) -> usize {
    pixels
        .iter()
        .filter(|p| (0..3).all(|i| p[i].abs_diff(colour[i]) <= tolerance))
        .count()
}

/// Where a person can open the screenshots: the target folder.
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}
