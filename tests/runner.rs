//! Tests of the runner against hostile programs (`tests/fixtures/hostile/`).
//!
//! Timing assertions are loose on purpose ("returned within 5 s"), so that a loaded machine
//! does not make them fail.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

use isr_grader::runner::*;
use rustix::io::Errno;
use rustix::process::{Pid, Signal};

/// Set in the child test process of the tests that need a grader process of their own.
const HELPER_ENV: &str = "ISR_RUNNER_TEST_HELPER";
/// A bound no healthy run here comes near; the point is that nothing hangs.
const PROMPT: Duration = Duration::from_secs(5);

fn setup() {
    static PREPARE: Once = Once::new();
    PREPARE.call_once(|| prepare_grader_process().expect("prepare the grader process"));
}

fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hostile")
        .join(name)
}

fn fixture(name: &str) -> Program {
    Program::new([fixture_path(name)])
}

fn sh(script: &str) -> Program {
    Program::new(["sh", "-c", script])
}

/// Runs and measures the wall time of the whole call (including the cleanup).
fn timed_run(program: &Program, stdin: &[u8], limits: &Limits) -> (RunOutcome, Duration) {
    setup();
    let start = Instant::now();
    let outcome = run(program, stdin, limits).expect("the program starts");
    (outcome, start.elapsed())
}

fn run_ok(program: &Program, stdin: &[u8], limits: &Limits) -> RunOutcome {
    timed_run(program, stdin, limits).0
}

fn short_timeout() -> Limits {
    Limits {
        timeout: Duration::from_millis(300),
        grace: Duration::from_millis(200),
        ..Limits::default()
    }
}

fn stdout_lines(outcome: &RunOutcome) -> Vec<String> {
    String::from_utf8_lossy(&outcome.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn pid(text: &str) -> Pid {
    Pid::from_raw(text.trim().parse().expect("a pid")).expect("a non-zero pid")
}

/// No process (not even a zombie) is left in the group.
fn group_gone(pgid: Pid) -> bool {
    rustix::process::test_kill_process_group(pgid) == Err(Errno::SRCH)
}

/// The state letter of a process in /proc, if it exists.
fn proc_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

/// Running (not dead and not a zombie) processes whose process group is `pgid`.
fn running_members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // Fields after "comm)": state ppid pgrp ...
            let Some((_, rest)) = stat.rsplit_once(") ") else {
                return false;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields.len() > 2 && fields[2] == pgid.to_string() && !matches!(fields[0], "Z" | "X")
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Timeouts

#[test]
fn sleeping_forever_times_out_and_the_group_is_killed() {
    let (outcome, took) = timed_run(&fixture("sleep_forever.sh"), b"", &short_timeout());
    assert_eq!(outcome.termination, Termination::TimedOut);
    assert!(took < PROMPT, "took {took:?}");
    assert!(outcome.elapsed >= Duration::from_millis(300));
    let pgid = pid(&stdout_lines(&outcome)[0]);
    assert!(group_gone(pgid), "group {pgid:?} still has processes");
}

#[test]
fn a_program_ignoring_sigterm_is_killed_after_the_grace_period() {
    let (outcome, took) = timed_run(&fixture("ignore_term.sh"), b"", &short_timeout());
    assert_eq!(outcome.termination, Termination::TimedOut);
    assert!(took < PROMPT, "took {took:?}");
    let pgid = pid(&stdout_lines(&outcome)[0]);
    assert!(group_gone(pgid), "group {pgid:?} still has processes");
}

// ---------------------------------------------------------------------------------------
// Output

#[test]
fn infinite_output_is_stopped_at_the_cap() {
    let limits = Limits {
        output_cap: 64 * 1024,
        ..Limits::default()
    };
    for program in [fixture("flood_stdout.sh"), Program::new(["yes"])] {
        let (outcome, took) = timed_run(&program, b"", &limits);
        assert_eq!(outcome.termination, Termination::OutputLimit);
        assert!(took < PROMPT, "took {took:?}");
        assert_eq!(outcome.stdout.len(), 64 * 1024);
        assert!(outcome.stdout.chunks(2).all(|pair| pair == b"y\n"));
    }
}

#[test]
fn output_exactly_at_the_cap_is_accepted_one_byte_more_is_not() {
    let program = sh("head -c 1000 /dev/zero");
    let at_cap = Limits {
        output_cap: 1000,
        ..Limits::default()
    };
    let outcome = run_ok(&program, b"", &at_cap);
    assert_eq!(outcome.termination, Termination::Exited(0));
    assert_eq!(outcome.stdout, vec![0u8; 1000]);

    let below = Limits {
        output_cap: 999,
        ..Limits::default()
    };
    let outcome = run_ok(&program, b"", &below);
    assert_eq!(outcome.termination, Termination::OutputLimit);
    assert_eq!(outcome.stdout.len(), 999);
}

#[test]
fn a_megabyte_of_stderr_keeps_the_tail_and_counts_every_byte() {
    let outcome = run_ok(&fixture("stderr_flood.sh"), b"", &Limits::default());
    assert_eq!(outcome.termination, Termination::Exited(0));
    assert_eq!(outcome.stderr_bytes, 1_000_003);
    assert_eq!(outcome.stderr_tail.len(), 8 * 1024);
    assert!(outcome.stderr_tail.ends_with(b"eeeEND"));
    assert!(outcome.stdout.is_empty());

    let no_tail = Limits {
        stderr_tail: 0,
        ..Limits::default()
    };
    let outcome = run_ok(&fixture("stderr_flood.sh"), b"", &no_tail);
    assert_eq!(outcome.stderr_bytes, 1_000_003);
    assert!(outcome.stderr_tail.is_empty());
}

#[test]
fn crlf_passes_through_unchanged() {
    let input = b"a\r\nb\rc\n\r\n";
    let outcome = run_ok(&fixture("crlf.sh"), input, &Limits::default());
    assert_eq!(outcome.termination, Termination::Exited(0));
    let mut expected = b"first\r\nsecond\r\n".to_vec();
    expected.extend_from_slice(input);
    assert_eq!(outcome.stdout, expected);
    assert!(outcome.stdin_complete);
}

// ---------------------------------------------------------------------------------------
// Stdin

#[test]
fn exiting_at_once_without_reading_ten_megabytes_of_stdin_is_harmless() {
    let input = vec![b'x'; 10 << 20];
    let (outcome, took) = timed_run(
        &fixture("exit_without_reading.sh"),
        &input,
        &Limits::default(),
    );
    assert_eq!(outcome.termination, Termination::Exited(0));
    assert!(!outcome.stdin_complete);
    assert!(took < PROMPT, "took {took:?}");
}

#[test]
fn closing_stdin_early_is_reported_as_incomplete() {
    let input = vec![b'z'; 1 << 20];
    let outcome = run_ok(&sh("head -c 5"), &input, &Limits::default());
    assert_eq!(outcome.termination, Termination::Exited(0));
    assert_eq!(outcome.stdout, b"zzzzz");
    assert!(!outcome.stdin_complete);
}

#[test]
fn large_stdin_and_stdout_flow_at_the_same_time() {
    // More than any pipe buffer in both directions: a runner that wrote all of stdin before
    // reading stdout would deadlock.
    let input: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    let outcome = run_ok(&Program::new(["cat"]), &input, &Limits::default());
    assert_eq!(outcome.termination, Termination::Exited(0));
    assert!(outcome.stdin_complete);
    assert!(outcome.stdout == input, "stdout differs from stdin");
}

#[test]
fn empty_stdin_is_complete() {
    let outcome = run_ok(&Program::new(["cat"]), b"", &Limits::default());
    assert_eq!(outcome.termination, Termination::Exited(0));
    assert!(outcome.stdin_complete);
    assert!(outcome.stdout.is_empty());
}

// ---------------------------------------------------------------------------------------
// Signals

#[test]
fn a_program_killed_by_a_signal_reports_its_name() {
    let outcome = run_ok(&fixture("segfault.sh"), b"", &Limits::default());
    assert_eq!(
        outcome.termination,
        Termination::Signaled {
            signal: 11,
            name: "SIGSEGV"
        }
    );
    assert_eq!(
        outcome.termination.to_string(),
        "killed by signal 11 (SIGSEGV)"
    );
    for (script, signal, name) in [
        ("kill -ABRT $$", 6, "SIGABRT"),
        ("kill -KILL $$", 9, "SIGKILL"),
        ("kill -FPE $$", 8, "SIGFPE"),
    ] {
        let outcome = run_ok(&sh(script), b"", &Limits::default());
        assert_eq!(outcome.termination, Termination::Signaled { signal, name });
    }
}

#[test]
fn exit_codes_are_reported() {
    let outcome = run_ok(
        &sh("echo out; echo err >&2; exit 3"),
        b"",
        &Limits::default(),
    );
    assert_eq!(outcome.termination, Termination::Exited(3));
    assert!(!outcome.termination.success());
    assert_eq!(outcome.stdout, b"out\n");
    assert_eq!(outcome.stderr_tail, b"err\n");
    assert_eq!(outcome.stderr_bytes, 4);
}

#[test]
fn signal_names_cover_the_common_signals() {
    assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
    assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
    assert_eq!(signal_name(libc::SIGABRT), "SIGABRT");
    assert_eq!(signal_name(libc::SIGBUS), "SIGBUS");
    assert_eq!(signal_name(libc::SIGXCPU), "SIGXCPU");
    assert_eq!(signal_name(libc::SIGXFSZ), "SIGXFSZ");
    assert_eq!(signal_name(libc::SIGPIPE), "SIGPIPE");
    assert_eq!(signal_name(0), "unknown signal");
    assert_eq!(signal_name(200), "unknown signal");
}

#[test]
fn programs_start_with_default_signal_dispositions() {
    // The grader ignores SIGPIPE; its programs must not inherit that (nor a blocked mask).
    let program = Program::new(["grep", "-E", "^(SigBlk|SigIgn):", "/proc/self/status"]);
    let outcome = run_ok(&program, b"", &Limits::default());
    assert_eq!(outcome.termination, Termination::Exited(0));
    let text = String::from_utf8_lossy(&outcome.stdout);
    let mask = |name: &str| -> u64 {
        let line = text.lines().find(|line| line.starts_with(name)).unwrap();
        u64::from_str_radix(line[name.len()..].trim(), 16).unwrap()
    };
    assert_eq!(mask("SigBlk:"), 0, "{text}");
    // Signals 1 to 31. (glibc keeps its internal signals 32 and 33 out of reach: a grader
    // started by `posix_spawn`, as `cargo test` starts this one, may pass them on ignored.)
    assert_eq!(mask("SigIgn:") & 0x7fff_ffff, 0, "{text}");
}

// ---------------------------------------------------------------------------------------
// Process groups and reaping

#[test]
fn a_forked_sleeping_child_is_killed_and_reaped() {
    let (outcome, took) = timed_run(&fixture("fork_sleeper.sh"), b"", &Limits::default());
    assert_eq!(outcome.termination, Termination::Exited(0));
    assert!(took < PROMPT, "took {took:?}");
    let lines = stdout_lines(&outcome);
    let (pgid, sleeper) = (pid(&lines[0]), pid(&lines[1]));
    assert!(group_gone(pgid), "group {pgid:?} still has processes");
    // Killed and reaped: not even a zombie is left.
    assert_eq!(proc_state(sleeper.as_raw_nonzero().get()), None);
}

#[test]
fn a_background_child_holding_stdout_does_not_make_the_run_wait() {
    let (outcome, took) = timed_run(
        &fixture("background_holds_stdout.sh"),
        b"",
        &Limits::default(),
    );
    assert_eq!(outcome.termination, Termination::Exited(0));
    assert_eq!(outcome.stdout, b"hi\n");
    assert!(took < PROMPT, "took {took:?}");

    let (outcome, took) = timed_run(&sh("echo hi; sleep 30 & exit 0"), b"", &Limits::default());
    assert_eq!(outcome.termination, Termination::Exited(0));
    assert_eq!(outcome.stdout, b"hi\n");
    assert!(took < PROMPT, "took {took:?}");
}

#[test]
fn a_child_that_left_the_group_cannot_hold_the_run() {
    let (outcome, took) = timed_run(&fixture("escape_session.sh"), b"", &Limits::default());
    let lines = stdout_lines(&outcome);
    // Out of the runner's reach (a new session): end it here, and reap it if it was
    // re-parented to this process.
    let escaped = pid(&lines[1]);
    let _ = rustix::process::kill_process(escaped, Signal::KILL);
    let _ = rustix::process::waitpid(Some(escaped), rustix::process::WaitOptions::empty());

    assert_eq!(outcome.termination, Termination::Exited(0));
    assert_eq!(lines[0], "start");
    assert!(took < PROMPT, "took {took:?}");
}

// ---------------------------------------------------------------------------------------
// Working folder, environment, limits

#[test]
fn each_run_gets_a_fresh_empty_folder_that_is_removed_afterwards() {
    let program = sh("pwd; ls -A | wc -l; echo data > left-behind");
    let first = run_ok(&program, b"", &Limits::default());
    let second = run_ok(&program, b"", &Limits::default());
    let (first, second) = (stdout_lines(&first), stdout_lines(&second));
    assert_ne!(first[0], second[0]);
    for lines in [&first, &second] {
        assert_eq!(lines[1].trim(), "0", "the folder was not empty");
        assert!(
            !Path::new(&lines[0]).exists(),
            "{} was not removed",
            lines[0]
        );
    }
}

#[test]
fn a_given_working_folder_is_used_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let program = Program {
        cwd: Some(dir.path().to_path_buf()),
        ..sh("pwd; echo kept > file")
    };
    let outcome = run_ok(&program, b"", &Limits::default());
    let expected = dir.path().canonicalize().unwrap();
    assert_eq!(stdout_lines(&outcome)[0], expected.to_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("file")).unwrap(),
        "kept\n"
    );
}

#[test]
fn the_environment_is_exactly_the_given_one() {
    let mut program = sh(r#"echo "${HOME-unset} ${ISR_X-unset}""#);
    program.env.push(("ISR_X".into(), "42".into()));
    let outcome = run_ok(&program, b"", &Limits::default());
    assert_eq!(outcome.stdout, b"unset 42\n");
}

#[test]
fn rlimits_are_set_in_the_child() {
    let limits = Limits {
        memory_bytes: Some(512 << 20),
        file_size: Some(1 << 20),
        ..Limits::default()
    };
    let outcome = run_ok(&Program::new(["cat", "/proc/self/limits"]), b"", &limits);
    let text = String::from_utf8_lossy(&outcome.stdout);
    let limit = |name: &str| -> (String, String) {
        let line = text
            .lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {text}"));
        let fields: Vec<&str> = line[name.len()..].split_whitespace().collect();
        (fields[0].to_owned(), fields[1].to_owned())
    };
    let both = |v: u64| (v.to_string(), v.to_string());
    assert_eq!(limit("Max address space"), both(512 << 20));
    assert_eq!(limit("Max file size"), both(1 << 20));
    assert_eq!(limit("Max core file size"), both(0));
}

#[test]
fn a_file_larger_than_the_file_size_limit_kills_the_writer() {
    let limits = Limits {
        file_size: Some(1_000_000),
        ..Limits::default()
    };
    let outcome = run_ok(&fixture("write_big_file.sh"), b"", &limits);
    assert_eq!(
        outcome.termination,
        Termination::Signaled {
            signal: libc::SIGXFSZ,
            name: "SIGXFSZ"
        }
    );
}

// ---------------------------------------------------------------------------------------
// Spawn errors

#[test]
fn missing_programs_are_not_found() {
    setup();
    let missing = run(
        &Program::new(["/nonexistent/dir/prog"]),
        b"",
        &Limits::default(),
    );
    assert!(
        matches!(&missing, Err(SpawnError::NotFound(path)) if path == Path::new("/nonexistent/dir/prog")),
        "{missing:?}"
    );
    let bare = run(
        &Program::new(["isr-grader-no-such-program"]),
        b"",
        &Limits::default(),
    );
    assert!(
        matches!(&bare, Err(SpawnError::NotFound(path)) if path == Path::new("isr-grader-no-such-program")),
        "{bare:?}"
    );
    let message = bare.unwrap_err().to_string();
    assert_eq!(message, "program not found: isr-grader-no-such-program");
}

#[test]
fn files_without_execute_permission_and_folders_are_not_executable() {
    setup();
    let file = fixture_path("not_executable.sh");
    let result = run(&Program::new([&file]), b"", &Limits::default());
    assert!(
        matches!(&result, Err(SpawnError::NotExecutable(path)) if *path == file),
        "{result:?}"
    );
    assert!(
        result
            .unwrap_err()
            .to_string()
            .starts_with("program is not executable: ")
    );

    let folder = fixture_path("");
    let result = run(&Program::new([&folder]), b"", &Limits::default());
    assert!(
        matches!(result, Err(SpawnError::NotExecutable(_))),
        "{result:?}"
    );

    // Found through PATH, but not executable.
    let mut program = Program::new(["not_executable.sh"]);
    program.env = vec![("PATH".into(), fixture_path("").into_os_string())];
    let result = run(&program, b"", &Limits::default());
    assert!(
        matches!(result, Err(SpawnError::NotExecutable(_))),
        "{result:?}"
    );
}

#[test]
fn bare_names_are_looked_up_in_the_programs_path() {
    let mut program = Program::new(["crlf.sh"]);
    program.env = vec![
        ("PATH".into(), fixture_path("").into_os_string()),
        ("UNUSED".into(), OsString::from("x")),
    ];
    // crlf.sh runs `cat`, which this PATH does not have: the shell says so on stderr.
    let outcome = run_ok(&program, b"", &Limits::default());
    assert!(outcome.stdout.starts_with(b"first\r\n"));
}

#[test]
fn bad_command_lines_and_folders_are_other_errors() {
    setup();
    let empty = Program::new(Vec::<OsString>::new());
    assert!(matches!(
        run(&empty, b"", &Limits::default()),
        Err(SpawnError::Other(_))
    ));
    let program = Program {
        cwd: Some(PathBuf::from("/nonexistent/folder")),
        ..Program::new(["true"])
    };
    assert!(matches!(
        run(&program, b"", &Limits::default()),
        Err(SpawnError::Other(_))
    ));
}

// ---------------------------------------------------------------------------------------
// run_parallel

#[test]
fn run_parallel_keeps_input_order() {
    let items: Vec<u64> = (0..40).collect();
    for jobs in [0, 1, 3, 100] {
        let results = run_parallel(jobs, &items, |&i| {
            // Early items take longest, so they finish last.
            std::thread::sleep(Duration::from_millis((40 - i) % 7));
            i * 2
        });
        assert_eq!(results, items.iter().map(|i| i * 2).collect::<Vec<_>>());
    }
    assert!(run_parallel(4, &[] as &[u8], |_| 0).is_empty());
}

#[test]
fn run_parallel_runs_programs() {
    setup();
    let programs: Vec<Program> = (0..6).map(|i| sh(&format!("echo {i}"))).collect();
    let outcomes = run_parallel(3, &programs, |program| {
        run(program, b"", &Limits::default()).map(|outcome| outcome.stdout)
    });
    for (i, outcome) in outcomes.into_iter().enumerate() {
        assert_eq!(outcome.unwrap(), format!("{i}\n").into_bytes());
    }
}

// ---------------------------------------------------------------------------------------
// Interrupts. Killing every live group would hit the other tests' runs, so these run in a
// child test process (this binary, filtered to `helper_process`).

/// Not a test of its own: does nothing unless started by one of the tests below.
#[test]
fn helper_process() {
    let Some(mode) = std::env::var_os(HELPER_ENV) else {
        return;
    };
    let mode = mode.into_string().unwrap();
    prepare_grader_process().unwrap();
    let long = Limits {
        timeout: Duration::from_secs(60),
        ..Limits::default()
    };
    if let Some(dir) = mode.strip_prefix("interrupt:") {
        // Two runs that write their group id, then wait for the SIGINT sent by the parent.
        let programs: Vec<Program> = (0..2)
            .map(|i| {
                sh(&format!(
                    "sleep 1000 & echo $$ > {dir}/tmp{i} && mv {dir}/tmp{i} {dir}/pgid{i}; wait"
                ))
            })
            .collect();
        let outcomes = run_parallel(2, &programs, |program| run(program, b"", &long));
        // The interrupt killed both runs and closed the runner: nothing starts any more.
        let killed = outcomes.iter().all(|o| {
            matches!(
                o,
                Ok(RunOutcome {
                    termination: Termination::Signaled { signal: 9, .. },
                    ..
                })
            )
        });
        let refused = matches!(
            run(&sh("true"), b"", &long),
            Err(SpawnError::Other(e)) if e.kind() == std::io::ErrorKind::Interrupted
        );
        std::process::exit(if killed && refused { 130 } else { 3 });
    }
    if let Some(dir) = mode.strip_prefix("twice:") {
        // A caller that never finishes after the first interrupt: the second one exits.
        std::fs::write(format!("{dir}/ready"), "").unwrap();
        loop {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    assert_eq!(mode, "kill-live");
    assert!(live_groups().is_empty());
    std::thread::scope(|scope| {
        let runner = scope.spawn(|| run(&sh("sleep 1000 & wait"), b"", &long));
        let deadline = Instant::now() + PROMPT;
        while live_groups().is_empty() {
            assert!(Instant::now() < deadline, "the run never registered");
            std::thread::sleep(Duration::from_millis(5));
        }
        let pgid = live_groups()[0];
        assert_eq!(kill_live_groups(), 1);
        let outcome = runner.join().unwrap().unwrap();
        assert_eq!(
            outcome.termination,
            Termination::Signaled {
                signal: 9,
                name: "SIGKILL"
            }
        );
        assert!(live_groups().is_empty());
        assert!(group_gone(Pid::from_raw(pgid).unwrap()));
    });
}

fn helper(mode: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "helper_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER_ENV, mode)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    command
}

#[test]
fn kill_live_groups_kills_every_registered_run() {
    let status = helper("kill-live").status().unwrap();
    assert!(status.success(), "helper failed: {status:?}");
}

#[test]
fn sigint_kills_every_live_group_and_closes_the_runner() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = helper(&format!("interrupt:{}", dir.path().display()))
        .spawn()
        .unwrap();
    let files = [dir.path().join("pgid0"), dir.path().join("pgid1")];
    let deadline = Instant::now() + PROMPT;
    while !files.iter().all(|file| file.exists()) {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the helper's runs did not start");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let pgids: Vec<i32> = files
        .iter()
        .map(|file| {
            std::fs::read_to_string(file)
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    let helper_pid = Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(helper_pid, Signal::INT).unwrap();

    let deadline = Instant::now() + PROMPT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the helper did not exit after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
    // The killed programs may linger as zombies (their parent, the helper, is gone, and they
    // went to init or to this process if it is a subreaper), but none may still be running.
    let deadline = Instant::now() + PROMPT;
    for pgid in pgids {
        while !running_members(pgid).is_empty() {
            assert!(
                Instant::now() < deadline,
                "group {pgid} still runs {:?}",
                running_members(pgid)
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // Reap those that were re-parented to this process.
        let pgid = Pid::from_raw(pgid).unwrap();
        while let Ok(Some(_)) =
            rustix::process::waitpgid(pgid, rustix::process::WaitOptions::NOHANG)
        {}
    }
}

#[test]
fn the_first_interrupt_lets_the_caller_finish_the_second_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = helper(&format!("twice:{}", dir.path().display()))
        .spawn()
        .unwrap();
    let deadline = Instant::now() + PROMPT;
    while !dir.path().join("ready").exists() {
        assert!(Instant::now() < deadline, "the helper never got ready");
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, Signal::TERM).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the first interrupt ended the process"
    );
    rustix::process::kill_process(pid, Signal::INT).unwrap();
    let deadline = Instant::now() + PROMPT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the helper did not exit after the second interrupt");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
}
