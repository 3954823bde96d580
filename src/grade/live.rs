//! Live progress for `test`: each case's line as soon as it and every case before it have
//! finished (a finished line waits for those before it, as nextest does, so the order is the
//! corpus order whatever the parallelism), and a progress bar on stderr.
//!
//! Lines are streamed only when stdout is a terminal and the report is for people; the bar only
//! when stderr is a terminal and `CI` is unset. Piped and JSON output stay one deterministic
//! document written at the end.

use std::collections::BTreeMap;
use std::io::{IsTerminal as _, Write as _};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The live view of one `test` run.
pub struct Live {
    state: Mutex<State>,
    bar: Option<ProgressBar>,
    stream: bool,
}

struct State {
    next: usize,
    held: BTreeMap<usize, String>,
    /// Where streamed lines go (stdout, or a buffer in tests).
    out: Box<dyn std::io::Write + Send>,
}

impl Live {
    /// A live view for `total` cases: streams lines if `human` output goes to a terminal.
    pub fn new(total: usize, human: bool) -> Self {
        let stream = human && std::io::stdout().is_terminal();
        let bar = (human && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none())
            .then(|| {
                let bar =
                    ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} {pos}/{len} cases [{bar:30}] {elapsed}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                bar.enable_steady_tick(std::time::Duration::from_millis(120));
                bar
            });
        Live {
            state: Mutex::new(State {
                next: 0,
                held: BTreeMap::new(),
                out: Box::new(anstream::stdout()),
            }),
            bar,
            stream,
        }
    }

    /// A live view that streams into `out` with no bar (for tests).
    pub fn streaming_into(out: Box<dyn std::io::Write + Send>) -> Self {
        Live {
            state: Mutex::new(State {
                next: 0,
                held: BTreeMap::new(),
                out,
            }),
            bar: None,
            stream: true,
        }
    }

    /// Whether case lines are being streamed (the final report then leaves them out).
    pub fn streams(&self) -> bool {
        self.stream
    }

    /// Prints `text` (the report's header) if lines are streamed.
    pub fn header(&self, text: &str) {
        if self.stream {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            self.print(&mut state.out, text);
        }
    }

    /// Case `index` finished with this line (without its newline; an empty line is not shown,
    /// as for a passing case under `-q`).
    pub fn finished(&self, index: usize, line: String) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.held.insert(index, line);
        let mut ready = String::new();
        loop {
            let next = state.next;
            let Some(line) = state.held.remove(&next) else {
                break;
            };
            if !line.is_empty() {
                ready.push_str(&line);
                ready.push('\n');
            }
            state.next += 1;
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        if self.stream && !ready.is_empty() {
            self.print(&mut state.out, &ready);
        }
    }

    /// Removes the bar (call before the rest of the report is written).
    pub fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    fn print(&self, out: &mut Box<dyn std::io::Write + Send>, text: &str) {
        let mut write = || {
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        };
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex as StdMutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<StdMutex<Vec<u8>>>);

    impl std::io::Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_finished_line_waits_for_the_lines_before_it() {
        let sink = Shared::default();
        let live = Live::streaming_into(Box::new(sink.clone()));
        let text = || String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        live.header("header\n");
        live.finished(2, "c".into());
        live.finished(1, "b".into());
        assert_eq!(text(), "header\n", "nothing before case 0 has finished");
        live.finished(0, "a".into());
        assert_eq!(text(), "header\na\nb\nc\n");
        live.finished(3, "d".into());
        assert_eq!(text(), "header\na\nb\nc\nd\n");
    }
}
