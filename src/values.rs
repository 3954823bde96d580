//! Setting values parsed at the edge: each type accepts only sensible values, from a flag
//! (`FromStr`, used by clap) or from a config file (`TryFrom`, used by serde), with the same
//! bounds and the same words. Past this module a timeout is never zero, NaN or a century.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;

/// A value outside its bounds, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError(String);

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ValueError {}

/// Longest timeout per case: one hour (a case of this exercise runs in milliseconds).
pub const MAX_TIMEOUT_SECS: f64 = 3600.0;
/// Smallest address-space limit that can start a program at all (a dynamically linked `sh`
/// needs a few MiB), in MiB.
pub const MIN_MEMORY_MIB: u64 = 16;
/// Largest address-space limit, in MiB (1 TiB).
pub const MAX_MEMORY_MIB: u64 = 1 << 20;
/// Largest stdout limit, in KiB (64 MiB: the grader keeps up to this much per running case).
pub const MAX_OUTPUT_KIB: u64 = 64 << 10;
/// Most cases run at once.
pub const MAX_JOBS: usize = 256;

/// `--timeout SECS` / `limits.timeout_secs`: positive, finite, at most an hour.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "f64")]
pub struct TimeoutSecs(Duration);

impl TimeoutSecs {
    /// The duration.
    pub fn get(self) -> Duration {
        self.0
    }
}

impl TryFrom<f64> for TimeoutSecs {
    type Error = ValueError;
    fn try_from(secs: f64) -> Result<Self, ValueError> {
        if secs.is_nan() || secs.is_infinite() {
            return Err(ValueError(format!(
                "timeout must be a number of seconds, found {secs}"
            )));
        }
        if secs < 0.001 {
            return Err(ValueError(format!(
                "timeout must be at least 0.001 seconds, found {secs}"
            )));
        }
        if secs > MAX_TIMEOUT_SECS {
            let shown = if secs < 1e9 {
                secs.to_string()
            } else {
                format!("{secs:e}")
            };
            return Err(ValueError(format!(
                "timeout of {shown} seconds is more than the most allowed, {MAX_TIMEOUT_SECS} (an hour)"
            )));
        }
        Ok(TimeoutSecs(Duration::from_secs_f64(secs)))
    }
}

impl FromStr for TimeoutSecs {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Self, ValueError> {
        let secs: f64 = s
            .trim()
            .parse()
            .map_err(|_| ValueError(format!("`{s}` is not a number of seconds")))?;
        Self::try_from(secs)
    }
}

fn bounded_u64(s: &str, what: &str, unit: &str, min: u64, max: u64) -> Result<u64, ValueError> {
    let n: u64 = s.trim().parse().map_err(|_| {
        ValueError(format!(
            "`{s}` is not a whole number of {unit} (between {min} and {max})"
        ))
    })?;
    check_u64(n, what, unit, min, max)
}

fn check_u64(n: u64, what: &str, unit: &str, min: u64, max: u64) -> Result<u64, ValueError> {
    if n < min || n > max {
        return Err(ValueError(format!(
            "{what} must be between {min} and {max} {unit}, found {n}"
        )));
    }
    Ok(n)
}

/// `--memory MIB` / `limits.memory_mb`: the address-space limit, 16 MiB to 1 TiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct MemoryMib(u64);

impl MemoryMib {
    /// The limit in bytes.
    pub fn bytes(self) -> u64 {
        self.0 << 20
    }
}

impl TryFrom<i64> for MemoryMib {
    type Error = ValueError;
    fn try_from(n: i64) -> Result<Self, ValueError> {
        let n = u64::try_from(n).map_err(|_| {
            ValueError(format!(
                "memory must be a positive number of MiB, found {n}"
            ))
        })?;
        check_u64(n, "memory", "MiB", MIN_MEMORY_MIB, MAX_MEMORY_MIB).map(MemoryMib)
    }
}

impl FromStr for MemoryMib {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Self, ValueError> {
        bounded_u64(s, "memory", "MiB", MIN_MEMORY_MIB, MAX_MEMORY_MIB).map(MemoryMib)
    }
}

/// `--output-limit KIB` / `limits.output_kb`: stdout kept per case, 1 KiB to 64 MiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct OutputKib(u64);

impl OutputKib {
    /// The limit in bytes.
    pub fn bytes(self) -> usize {
        // At most 64 MiB: fits every usize the grader builds for.
        usize::try_from(self.0 << 10).unwrap_or(usize::MAX)
    }
}

impl TryFrom<i64> for OutputKib {
    type Error = ValueError;
    fn try_from(n: i64) -> Result<Self, ValueError> {
        let n = u64::try_from(n).map_err(|_| {
            ValueError(format!(
                "output limit must be a positive number of KiB, found {n}"
            ))
        })?;
        check_u64(n, "output limit", "KiB", 1, MAX_OUTPUT_KIB).map(OutputKib)
    }
}

impl FromStr for OutputKib {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Self, ValueError> {
        bounded_u64(s, "output limit", "KiB", 1, MAX_OUTPUT_KIB).map(OutputKib)
    }
}

/// `--jobs N` / `jobs`: cases run at once, 1 to 256 (leave it out for the number of cores).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct Jobs(usize);

impl Jobs {
    /// The count.
    pub fn get(self) -> usize {
        self.0
    }
}

impl TryFrom<i64> for Jobs {
    type Error = ValueError;
    fn try_from(n: i64) -> Result<Self, ValueError> {
        let n = u64::try_from(n)
            .map_err(|_| ValueError(format!("jobs must be a positive number, found {n}")))?;
        check_u64(
            n,
            "jobs",
            "(leave it out for the number of cores)",
            1,
            MAX_JOBS as u64,
        )
        .map(|n| Jobs(n as usize))
    }
}

impl FromStr for Jobs {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Self, ValueError> {
        bounded_u64(
            s,
            "jobs",
            "(leave it out for the number of cores)",
            1,
            MAX_JOBS as u64,
        )
        .map(|n| Jobs(n as usize))
    }
}

/// `--sandbox-uid UID[:GID]` / `sandbox_uid`: who the program runs as when the grader is root.
/// The gid defaults to the uid; 0 (root) is refused, since it would drop nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct RunAs {
    /// The uid.
    pub uid: u32,
    /// The gid.
    pub gid: u32,
}

impl FromStr for RunAs {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Self, ValueError> {
        let bad = || {
            ValueError(format!(
                "`{s}` is not UID or UID:GID (numbers, not 0), e.g. 65534:65534"
            ))
        };
        let (uid, gid) = match s.split_once(':') {
            Some((u, g)) => (u, g),
            None => (s, s),
        };
        let uid: u32 = uid.trim().parse().map_err(|_| bad())?;
        let gid: u32 = gid.trim().parse().map_err(|_| bad())?;
        if uid == 0 || gid == 0 {
            return Err(bad());
        }
        Ok(RunAs { uid, gid })
    }
}

impl TryFrom<String> for RunAs {
    type Error = ValueError;
    fn try_from(s: String) -> Result<Self, ValueError> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts() {
        for bad in [
            "0", "-1", "NaN", "inf", "-inf", "1e300", "3601", "abc", "", "0.0001",
        ] {
            assert!(bad.parse::<TimeoutSecs>().is_err(), "{bad} accepted");
        }
        for (good, ms) in [("0.5", 500), ("10", 10_000), ("3600", 3_600_000)] {
            assert_eq!(
                good.parse::<TimeoutSecs>().unwrap().get(),
                Duration::from_millis(ms)
            );
        }
    }

    #[test]
    fn sizes_and_counts() {
        for bad in ["0", "-1", "15", "1048577", "1.5", "1e3", "x"] {
            assert!(bad.parse::<MemoryMib>().is_err(), "memory {bad} accepted");
        }
        assert_eq!("1024".parse::<MemoryMib>().unwrap().bytes(), 1 << 30);
        for bad in ["0", "-5", "65537"] {
            assert!(bad.parse::<OutputKib>().is_err(), "output {bad} accepted");
        }
        assert_eq!("8192".parse::<OutputKib>().unwrap().bytes(), 8 << 20);
        for bad in ["0", "-1", "257"] {
            assert!(bad.parse::<Jobs>().is_err(), "jobs {bad} accepted");
        }
        assert_eq!(
            MemoryMib::try_from(0).unwrap_err().to_string(),
            "memory must be between 16 and 1048576 MiB, found 0"
        );
    }

    #[test]
    fn run_as() {
        assert_eq!(
            "1000".parse::<RunAs>().unwrap(),
            RunAs {
                uid: 1000,
                gid: 1000
            }
        );
        assert_eq!(
            "1000:100".parse::<RunAs>().unwrap(),
            RunAs {
                uid: 1000,
                gid: 100
            }
        );
        for bad in ["0", "0:0", "1000:0", "x", "1:2:3", "-1"] {
            assert!(bad.parse::<RunAs>().is_err(), "{bad} accepted");
        }
    }
}
