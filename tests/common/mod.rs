//! Helpers shared by the integration tests.

use std::process::Output;

use serde_json::Value;

/// The JSON report a run printed on stdout; fails the test with both streams when it is not
/// JSON.
pub fn json_report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}
