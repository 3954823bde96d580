//! FNV-1a, 64 bits: the corpus fingerprint in `--version` and in every report.
//!
//! Shared by `build.rs` (through `#[path]`) and the grader, so that both hash the same way.
//! FNV-1a is fixed by its definition (unlike std's `DefaultHasher`, whose algorithm may change
//! between Rust releases) and needs no dependency. It identifies a corpus; it does not protect
//! one (release archives carry SHA-256 checksums for that).

/// An FNV-1a 64-bit hasher.
#[derive(Debug, Clone, Copy)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    /// Adds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Adds a field: its length first, so that `("ab", "c")` and `("a", "bc")` differ.
    pub fn field(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }

    /// The hash.
    #[allow(dead_code)] // the grader's (`batch --partition`), not build.rs's
    pub fn value(&self) -> u64 {
        self.0
    }

    /// The hash as 16 lowercase hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}
