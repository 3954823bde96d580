//! What differs between the platforms the runner supports: one function per call site that is
//! not portable, with the same signature on every platform. Where a platform lacks a
//! capability, its function is a stub that says so (returns `None`, `false`, or does nothing)
//! and [`GAPS`] lists, in words, what the runner then cannot guarantee; the sandbox status puts
//! that in every report. Call sites carry no `cfg`.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub(crate) use macos::*;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
compile_error!("isr-grader's runner supports Linux and macOS (on Windows, use WSL)");
