//! The leader of one partition, for the ISR / high-watermark exercise.
//!
//! - [`trace`] reads the trace into typed commands (done for you).
//! - [`output`] writes the exact output lines of the contract (done for you).
//! - [`leader`] is the leader's bookkeeping: **this is where your work goes.**

pub mod leader;
pub mod output;
pub mod trace;
