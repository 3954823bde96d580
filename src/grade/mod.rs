//! The `test` and `show` commands.

use crate::CmdResult;
use crate::cli::{ShowArgs, TestArgs};

/// `isr-grader test`.
pub fn test_cmd(_args: TestArgs) -> CmdResult {
    Err("test: not implemented yet".into())
}

/// `isr-grader show`.
pub fn show_cmd(_args: ShowArgs) -> CmdResult {
    Err("show: not implemented yet".into())
}
