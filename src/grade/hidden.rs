//! Hidden cases stay hidden but still teach: in a student's report a failing hidden case keeps
//! its verdict, its shrunk trace (a new trace of a few commands) and the diagnosis, and loses
//! everything drawn from the hidden trace or its expected output: the first difference, the
//! command behind it, the diff, and what the program echoed of its input (stdout lines that are
//! not events, stderr, the lines of two disagreeing runs). Its picture is redrawn from the
//! shrunk trace (which the student sees anyway), or dropped when there is none. `--show-hidden`
//! keeps everything.

use super::timeline;
use crate::report::CaseReport;

/// What stands in for a hidden line.
pub const HIDDEN: &str = "(hidden case: not shown)";

/// Removes what a student may not see from the hidden cases' reports.
pub fn redact(reports: &mut [CaseReport]) {
    for r in reports.iter_mut().filter(|r| r.hidden) {
        r.first_diff = None;
        r.origin = None;
        r.diff.clear();
        r.show_command = None;
        for (_, l) in &mut r.stray_lines {
            *l = HIDDEN.to_string();
        }
        if !r.stderr_tail.is_empty() {
            r.stderr_tail = HIDDEN.to_string();
        }
        if let Some(n) = &mut r.nondeterminism {
            n.first = None;
            n.second = None;
        }
        r.timeline = r
            .shrunk
            .as_ref()
            .and_then(|sh| timeline::of_shrunk(&r.name, sh));
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::report::{Shrunk, Verdict, svg};

    fn hidden_case(shrunk: Option<Shrunk>) -> CaseReport {
        let mut secret = svg::Timeline::new("SECRET 7777", 3, None);
        secret.divergence = Some(svg::Divergence {
            x: 1,
            label: "SECRET".into(),
            lines: vec!["7777 STATUS".into()],
        });
        CaseReport {
            shrunk,
            timeline: Some(secret),
            ..CaseReport::bare("h1", "hidden", true, Verdict::Wrong, 1)
        }
    }

    #[test]
    fn a_hidden_case_is_drawn_from_its_shrunk_trace_or_not_at_all() {
        let mut none = [hidden_case(None)];
        redact(&mut none);
        assert!(none[0].timeline.is_none());
        let shrunk = Shrunk {
            commands: 2,
            from_commands: 50,
            runs: 9,
            same_as: None,
            kind: "STATUS HW".into(),
            trace: "REPLICAS 1 2\nLAG_MAX 5\nMIN_ISR 1\n0 APPEND 1\n1 STATUS\n".into(),
            expected: vec!["1 STATUS ISR=1,2 HW=0 LEO=1 WRITES=OK".into()],
            actual: vec!["1 STATUS ISR=1,2 HW=1 LEO=1 WRITES=OK".into()],
            first_diff: None,
            explanation: Vec::new(),
        };
        let mut some = [hidden_case(Some(shrunk))];
        redact(&mut some);
        let t = some[0]
            .timeline
            .as_ref()
            .expect("a picture of the shrunk trace");
        assert_eq!(t.len, 2);
        let svg = svg::render(t);
        assert!(!svg.contains("SECRET") && !svg.contains("7777"));
        assert!(
            svg.contains("HW=1"),
            "the shrunk trace's difference is drawn"
        );
    }
}
