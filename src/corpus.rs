//! The corpus commands: `gen`, `bless`, `audit`.

use crate::CmdResult;
use crate::cli::{AuditArgs, BlessArgs, GenArgs};

/// `isr-grader gen`.
pub fn gen_cmd(_args: GenArgs) -> CmdResult {
    Err("gen: not implemented yet".into())
}

/// `isr-grader bless`.
pub fn bless_cmd(_args: BlessArgs) -> CmdResult {
    Err("bless: not implemented yet".into())
}

/// `isr-grader audit`.
pub fn audit_cmd(_args: AuditArgs) -> CmdResult {
    Err("audit: not implemented yet".into())
}
