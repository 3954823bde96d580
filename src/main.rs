//! `isr-grader`: grades a student's ISR / high-watermark leader against the case corpus.

use std::process::ExitCode;

use clap::Parser;
use isr_grader::cli::{Cli, Command};

fn main() -> ExitCode {
    // The sandbox helper runs once per case: it skips clap's whole command tree.
    let args: Vec<String> = std::env::args().skip(1).take(6).collect();
    if args.first().map(String::as_str) == Some(isr_grader::runner::sandbox::HELPER_SUBCOMMAND) {
        sandbox_helper(&args[1..]);
    }
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
        Command::Shrink(args) => isr_grader::grade::shrink_cmd::shrink_cmd(args),
        Command::Gen(args) => isr_grader::corpus::gen_cmd(args),
        Command::Bless(args) => isr_grader::corpus::bless_cmd(args),
        Command::Audit(args) => isr_grader::corpus::audit_cmd(args),
        Command::Batch(args) => isr_grader::class::batch::batch_cmd(args),
        Command::Merge(args) => isr_grader::class::merge::merge_cmd(args),
        Command::Demo(args) => isr_grader::grade::demo_cmd(args),
        Command::Gradescope(args) => isr_grader::autograder::gradescope_cmd(args),
        Command::Leader(args) => isr_grader::grade::leader_cmd(args),
        Command::Generate(args) => isr_grader::generate::generate_cmd(args),
    };
    match result {
        Ok(code) => ExitCode::from(code as u8),
        // A reader that stopped reading (`| head`) is no error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            anstream::eprintln!("isr-grader: error: {e}");
            ExitCode::from(isr_grader::exit_codes::ERROR)
        }
    }
}

/// `isr-grader __sandbox --status-fd N --plan-fd M [--probe]`: the sandbox helper, which the
/// runner starts in place of each program. Hidden, and parsed by hand before clap (see `main`).
fn sandbox_helper(args: &[String]) -> ! {
    let mut status_fd = -1;
    let mut plan_fd = -1;
    let mut probe = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut number = || it.next().and_then(|v| v.parse::<i32>().ok()).unwrap_or(-1);
        match arg.as_str() {
            "--status-fd" => status_fd = number(),
            "--plan-fd" => plan_fd = number(),
            "--probe" => probe = true,
            _ => {}
        }
    }
    isr_grader::runner::sandbox::helper_main(plan_fd, status_fd, probe)
}
