//! `isr-reference`: the correct leader as a program (or, with `--fault`, a student with those
//! mistakes).

use std::io::{self, Read, Write};
use std::process::ExitCode;

use isr_reference::{CATALOG, FaultSet, Trace, explain, stream};

const USAGE: &str = "usage: isr-reference [--fault ID[,ID...]] [--explain] [TRACE]
       isr-reference --list-faults

Reads a trace (TRACE, or stdin when absent or `-`) and prints what the leader prints.
  --fault IDS     behave as a student with these known mistakes (see --list-faults)
  --explain       print the trace annotated with every decision and the numbers behind it
  --list-faults   print the catalog of known mistakes
";

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            let _ = writeln!(io::stderr(), "isr-reference: {msg}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<(), String> {
    let mut faults = FaultSet::NONE;
    let mut explain_mode = false;
    let mut list = false;
    let mut path: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--fault" | "--faults" => {
                let v = args.next().ok_or("--fault needs a list of ids")?;
                faults = faults.union(FaultSet::parse(&v)?);
            }
            s if s.starts_with("--fault=") => {
                faults = faults.union(FaultSet::parse(&s["--fault=".len()..])?);
            }
            "--explain" => explain_mode = true,
            "--list-faults" => list = true,
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            "-V" | "--version" => {
                println!("isr-reference {}", env!("CARGO_PKG_VERSION"));
                return Ok(());
            }
            s if s.starts_with('-') && s != "-" => {
                return Err(format!("unknown option `{s}`\n{USAGE}"));
            }
            _ => {
                if path.is_some() {
                    return Err(format!("only one TRACE may be given\n{USAGE}"));
                }
                path = Some(a);
            }
        }
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    if list {
        for info in CATALOG {
            let _ = writeln!(
                out,
                "{}\n  {}\n  breaks: {} — {}\n  why: {}\n  smallest trace:\n{}",
                info.id,
                info.title,
                info.section,
                info.rule,
                info.explanation,
                info.witness
                    .lines()
                    .map(|l| format!("    {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        return out.flush().map_err(|e| e.to_string());
    }
    let name = match &path {
        Some(p) if p != "-" => p.clone(),
        _ => "<stdin>".to_string(),
    };
    let input: Box<dyn Read + Send> = match &path {
        Some(p) if p != "-" => {
            Box::new(std::fs::File::open(p).map_err(|e| format!("cannot read {p}: {e}"))?)
        }
        _ => Box::new(io::stdin()),
    };
    if explain_mode {
        let mut text = String::new();
        let mut input = input;
        input
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read {name}: {e}"))?;
        let trace = Trace::parse(&name, &text).map_err(|e| e.to_string())?;
        let _ = out.write_all(explain::explain(&trace, faults).as_bytes());
        return out.flush().map_err(|e| e.to_string());
    }
    drop(out);
    stream::run_to_stdout(&name, input, faults).map_err(|e| e.to_string())
}
