//! `isr-grader generate`: shell completions and man pages, generated from the clap definitions
//! in [`crate::cli`] (one source for `--help`, completions and the manual, as ripgrep does).

use std::io::Write as _;

use clap::CommandFactory;

use crate::cli::{Cli, Generate, GenerateArgs};
use crate::{CmdResult, exit_codes};

/// `isr-grader generate completions SHELL` / `generate man [SUBCOMMAND]`, on stdout.
pub fn generate_cmd(args: GenerateArgs) -> CmdResult {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    match args.what {
        Generate::Completions { shell } => {
            clap_complete::generate(shell, &mut cmd, "isr-grader", &mut out);
        }
        Generate::Man { subcommand: None } => clap_mangen::Man::new(cmd).render(&mut out)?,
        Generate::Man {
            subcommand: Some(name),
        } => {
            let sub = cmd
                .get_subcommands()
                .find(|s| s.get_name() == name && !s.is_hide_set())
                .cloned()
                .ok_or_else(|| {
                    let names: Vec<&str> = cmd
                        .get_subcommands()
                        .filter(|s| !s.is_hide_set())
                        .map(|s| s.get_name())
                        .collect();
                    format!("no subcommand {name:?} (there are: {})", names.join(", "))
                })?;
            let page = sub
                .name(format!("isr-grader-{name}"))
                .bin_name(format!("isr-grader {name}"))
                .version(env!("CARGO_PKG_VERSION"));
            clap_mangen::Man::new(page).render(&mut out)?;
        }
    }
    match std::io::stdout().lock().write_all(&out) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(exit_codes::OK),
    }
}
