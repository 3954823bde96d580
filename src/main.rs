//! `isr-grader`: grades a student's ISR / high-watermark leader against the case corpus.

use std::process::ExitCode;

use clap::Parser;
use isr_grader::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.color {
        clap::ColorChoice::Auto => anstream::ColorChoice::Auto,
        clap::ColorChoice::Always => anstream::ColorChoice::Always,
        clap::ColorChoice::Never => anstream::ColorChoice::Never,
    }
    .write_global();
    let result = match cli.command {
        Command::Test(args) => isr_grader::grade::test_cmd(args),
        Command::Show(args) => isr_grader::grade::show_cmd(args),
        Command::Gen(args) => isr_grader::corpus::gen_cmd(args),
        Command::Bless(args) => isr_grader::corpus::bless_cmd(args),
        Command::Audit(args) => isr_grader::corpus::audit_cmd(args),
        Command::Demo(args) => isr_grader::grade::demo_cmd(args),
        Command::Leader(args) => isr_grader::grade::leader_cmd(args),
        Command::Generate(args) => isr_grader::generate::generate_cmd(args),
        Command::Sandbox(args) => {
            isr_grader::runner::sandbox::helper_main(args.plan_fd, args.status_fd, args.probe)
        }
    };
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            anstream::eprintln!("isr-grader: error: {e}");
            ExitCode::from(isr_grader::exit_codes::ERROR)
        }
    }
}
