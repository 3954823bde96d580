//! The picture of a failing case: the reference leader stepped through the trace (each
//! replica's LEO, the high watermark and the ISR after every command), its output lines, and
//! the program's output lines read leniently (the HW and the ISR its `STATUS` lines say), put
//! into a [`report::svg::Timeline`](crate::report::svg::Timeline) with the first difference
//! marked.
//!
//! Bounded whatever the trace and the program printed: the program's lines are read one at a
//! time from its (already capped) stdout and never kept, and the timeline itself keeps at most
//! about [`svg::MAX_CELLS`] cells per row plus a full-resolution window around the first
//! difference.

use isr_reference::{FaultSet, Leader, Step, Trace};

use super::compare;
use crate::report::Shrunk;
use crate::report::svg::{self, Divergence, SeriesStyle, Shape, Side, State, Timeline};

/// Replicas drawn (the first ones of the replica list; the exercise's traces have at most 7):
/// a picture with hundreds of lines and bands would be neither readable nor small.
const MAX_REPLICAS: usize = 10;

/// Commands before and after the first difference kept at full resolution (the zoom).
const BEFORE: u64 = 40;
const AFTER: u64 = 20;

/// The commands kept at full resolution around the first difference at `x`: [`BEFORE`]
/// before it and [`AFTER`] after, the window slid inside `0..len` when it meets an end (so an
/// early difference still gets a window of the same width).
fn window(x: u64, len: u64) -> (u64, u64) {
    let width = BEFORE + AFTER;
    let start = x.saturating_sub(BEFORE).min(len.saturating_sub(width));
    (start, (start + width).min(len))
}

/// What a line of output is, read leniently.
struct Line {
    /// Its time, when it starts with a number.
    t: Option<u64>,
    shape: Shape,
    /// `HW=` of a STATUS line.
    hw: Option<u64>,
    /// `ISR=` of a STATUS line, as membership per replica index (None: absent or unreadable).
    isr: Option<Vec<bool>>,
}

fn read_line(text: &str, replicas: &[u64]) -> Line {
    let mut toks = text.split_whitespace();
    let t = toks.next().and_then(|w| w.parse::<u64>().ok());
    let verb = toks.next().unwrap_or("");
    let is = |name: &str| t.is_some() && verb.eq_ignore_ascii_case(name);
    let shape = if is("STATUS") {
        Shape::Dot
    } else if is("ACK") {
        Shape::Triangle
    } else if is("NOT_ENOUGH_REPLICAS") {
        Shape::Cross
    } else {
        Shape::Square
    };
    let (mut hw, mut isr) = (None, None);
    if shape == Shape::Dot {
        for tok in toks {
            let Some((key, value)) = tok.split_once('=') else {
                continue;
            };
            if key.eq_ignore_ascii_case("HW") {
                hw = value.parse().ok();
            } else if key.eq_ignore_ascii_case("ISR") {
                let mut member = vec![false; replicas.len()];
                let ok = value.is_empty()
                    || value.split(',').all(|id| match id.trim().parse::<u64>() {
                        Ok(id) => {
                            if let Some(i) = replicas.iter().position(|&r| r == id) {
                                member[i] = true;
                            }
                            true
                        }
                        Err(_) => false,
                    });
                isr = ok.then_some(member);
            }
        }
    }
    Line { t, shape, hw, isr }
}

/// The step a program's line belongs to when it is not the expected line's: the first step at
/// or after `cursor` with the line's time (a STATUS command for a STATUS line, if there is
/// one), else the last one before that time; `cursor` when the line has no time.
fn step_of(steps: &[Step], line: &Line, cursor: usize) -> usize {
    let last = steps.len().saturating_sub(1);
    let Some(t) = line.t else {
        return cursor.min(last);
    };
    let from = steps.partition_point(|s| s.t < t).max(cursor);
    let to = steps.partition_point(|s| s.t <= t).max(from);
    let same = from..to;
    let status = same.clone().find(|&i| {
        line.shape == Shape::Dot && matches!(steps[i].cmd, isr_reference::Command::Status)
    });
    status
        .or_else(|| (!same.is_empty()).then_some(from))
        .unwrap_or_else(|| from.saturating_sub(1).max(cursor))
        .min(last)
}

/// The first difference: the expected line's index, its step, both lines.
struct First {
    line: usize,
    x: usize,
    expected: Option<String>,
    actual: Option<String>,
}

/// Where the program's normalized output first differs from the reference's on `trace`.
fn first_difference(trace: &Trace, stdout: &str) -> Option<First> {
    let mut leader = Leader::new(&trace.config, FaultSet::NONE);
    let mut program = compare::lines(stdout).map(|l| l.text);
    let mut out = Vec::new();
    let mut k = 0usize;
    for (x, step) in trace.steps.iter().enumerate() {
        out.clear();
        leader.step(step, &mut out);
        for e in String::from_utf8_lossy(&out).lines() {
            let a = program.next();
            if a != Some(e) {
                return Some(First {
                    line: k,
                    x,
                    expected: Some(e.to_string()),
                    actual: a.map(str::to_string),
                });
            }
            k += 1;
        }
    }
    let extra = program.next()?;
    let x = step_of(&trace.steps, &read_line(extra, &[]), 0);
    Some(First {
        line: k,
        x,
        expected: None,
        actual: Some(extra.to_string()),
    })
}

/// The timeline of `trace` with what the program printed on it (`stdout`, raw).
pub fn build(title: &str, trace: &Trace, stdout: &str) -> Timeline {
    let steps = &trace.steps;
    let replicas = &trace.config.replicas;
    let len = steps.len() as u64;
    let first = first_difference(trace, stdout);
    let detail = first
        .as_ref()
        .filter(|_| len > svg::ZOOM_AFTER)
        .map(|f| window(f.x as u64, len));
    let mut tl = Timeline::new(title, len, detail);
    tl.x_name = "command".into();
    tl.y_name = "offset".into();
    tl.time_unit = "ms".into();
    let name = |i: usize| {
        if i == 0 {
            format!("{} (leader)", replicas[i])
        } else {
            replicas[i].to_string()
        }
    };
    // Only the first replicas are drawn, and only they are looked up in the program's lines.
    let drawn = &replicas[..replicas.len().min(MAX_REPLICAS)];
    if drawn.len() < replicas.len() {
        tl.note = Some(format!(
            "The first {} of {} replicas are drawn.",
            drawn.len(),
            replicas.len()
        ));
    }
    let leos: Vec<usize> = (0..drawn.len())
        .map(|i| tl.add_series(&format!("LEO of {}", name(i)), SeriesStyle::Member(i)))
        .collect();
    let hw = tl.add_series("HW (expected)", SeriesStyle::Reference);
    let your_hw = tl.add_series("HW (yours, from STATUS)", SeriesStyle::Actual);
    let bands: Vec<usize> = (0..drawn.len()).map(|i| tl.add_band(&name(i), i)).collect();
    let expected_row = tl.add_events("expected output", Side::Expected);
    let your_row = tl.add_events("your output", Side::Actual);

    let mut leader = Leader::new(&trace.config, FaultSet::NONE);
    let mut program = compare::lines(stdout).map(|l| l.text);
    let mut cursor = 0usize;
    let mut strays = false;
    let mut out = Vec::new();
    // Expected membership after the command being read (what a program's STATUS is checked
    // against).
    let mut member = vec![true; drawn.len()];
    let mut yours = |tl: &mut Timeline,
                     text: &str,
                     expected: Option<(usize, &str)>,
                     member: &[bool],
                     cursor: &mut usize| {
        let line = read_line(text, drawn);
        let exp = expected.map(|(x, e)| (x, read_line(e, drawn)));
        let x = match &exp {
            Some((x, e)) if e.t == line.t && line.t.is_some() => *x,
            Some((x, _)) if line.t.is_none() => *x,
            _ => step_of(steps, &line, *cursor),
        }
        .max(*cursor);
        *cursor = x;
        let differs = expected.is_none_or(|(_, e)| e != text);
        strays |= line.shape == Shape::Square;
        tl.push_event(your_row, x as u64, line.shape, differs);
        if let Some(h) = line.hw {
            tl.push_value(your_hw, x as u64, h);
        }
        if line.shape == Shape::Dot {
            let x = x as u64;
            for (i, &b) in bands.iter().enumerate() {
                let said = line.isr.as_ref().map(|m| m[i]);
                let state = match said {
                    Some(true) => State::In,
                    Some(false) => State::Out,
                    None => State::Unknown,
                };
                tl.push_band(b, Side::Actual, x, state);
                // Flagged at this command only: between two STATUS lines nothing is known.
                let differs = said.is_some_and(|m| m != member[i]);
                tl.push_band(
                    b,
                    Side::Flagged,
                    x,
                    if differs { State::In } else { State::Out },
                );
                if x + 1 < len {
                    tl.push_band(b, Side::Flagged, x + 1, State::Out);
                }
            }
        }
    };
    for (x, step) in steps.iter().enumerate() {
        out.clear();
        leader.step(step, &mut out);
        let xu = x as u64;
        tl.push_time(xu, step.t);
        tl.push_value(leos[0], xu, leader.leo());
        for (i, id) in drawn.iter().enumerate().skip(1) {
            let leo = leader.follower(*id).map_or(0, |f| f.leo);
            tl.push_value(leos[i], xu, leo);
        }
        tl.push_value(hw, xu, leader.hw());
        let isr = leader.isr();
        for (i, id) in drawn.iter().enumerate() {
            member[i] = isr.contains(id);
            let state = if member[i] { State::In } else { State::Out };
            tl.push_band(bands[i], Side::Expected, xu, state);
        }
        for e in String::from_utf8_lossy(&out).lines() {
            let a = program.next();
            tl.push_event(expected_row, xu, read_line(e, drawn).shape, a != Some(e));
            if let Some(a) = a {
                yours(&mut tl, a, Some((x, e)), &member, &mut cursor);
            }
        }
    }
    // Lines past the expected ones.
    for a in program {
        yours(&mut tl, a, None, &member, &mut cursor);
    }
    tl.shapes = vec![
        (Shape::Dot, "STATUS".into()),
        (Shape::Triangle, "ACK".into()),
        (Shape::Cross, "NOT_ENOUGH_REPLICAS".into()),
    ];
    if strays {
        tl.shapes.push((Shape::Square, "not an event".into()));
    }
    tl.divergence = first.map(|f| {
        let command = steps.get(f.x).map_or_else(String::new, |s| s.to_string());
        Divergence {
            x: f.x as u64,
            label: "first difference".into(),
            lines: vec![
                format!(
                    "first difference at output line {}, from command {} ({command}):",
                    f.line + 1,
                    f.x + 1
                ),
                format!(
                    "expected: {}",
                    f.expected.as_deref().unwrap_or("(nothing more)")
                ),
                format!(
                    "yours:    {}",
                    f.actual.as_deref().unwrap_or("(nothing more)")
                ),
            ],
        }
    });
    tl
}

/// The timeline of a shrunk trace (what a student sees of a failing hidden case): drawn from
/// the shrunk trace and the program's lines on it, nothing else. None when the trace does not
/// parse (it always should).
pub fn of_shrunk(name: &str, sh: &Shrunk) -> Option<Timeline> {
    let trace = Trace::parse(name, &sh.trace).ok()?;
    let mut tl = build(
        &format!("{name}: the smallest trace where your program differs"),
        &trace,
        &sh.actual.join("\n"),
    );
    tl.note = Some(
        "A hidden case: drawn from its shrunk trace (shown below), not from the case itself."
            .into(),
    );
    Some(tl)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKED: &str = "REPLICAS 5 6 7\nLAG_MAX 500\nMIN_ISR 2\n0 APPEND 4\n100 FETCH 6 4\n120 FETCH 7 2\n130 STATUS\n400 FETCH 6 4\n550 STATUS\n600 FETCH 7 4\n601 STATUS\n";

    fn worked() -> Trace {
        Trace::parse("worked", WORKED).unwrap()
    }

    #[test]
    fn statuses_are_read_leniently() {
        let l = read_line("550 status isr=5,7 hw=4 LEO=4", &[5, 6, 7]);
        assert_eq!((l.t, l.shape, l.hw), (Some(550), Shape::Dot, Some(4)));
        assert_eq!(l.isr, Some(vec![true, false, true]));
        let l = read_line("550 STATUS ISR=5,x HW=", &[5, 6, 7]);
        assert_eq!((l.hw, l.isr), (None, None));
        assert_eq!(read_line("debug: hello", &[5]).shape, Shape::Square);
        assert_eq!(read_line("7 ACK 0", &[5]).shape, Shape::Triangle);
    }

    #[test]
    fn the_first_difference_is_the_first_differing_line() {
        let t = worked();
        let right = isr_reference::output(&t, FaultSet::NONE);
        assert!(first_difference(&t, &right).is_none());
        let wrong = right.replace("550 STATUS ISR=5,6 HW=4", "550 STATUS ISR=5,6,7 HW=2");
        let f = first_difference(&t, &wrong).unwrap();
        assert_eq!((f.line, f.x), (1, 5));
        // Stopped early; printed more.
        let f = first_difference(&t, "130 STATUS ISR=5,6,7 HW=2 LEO=4 WRITES=OK\n").unwrap();
        assert_eq!((f.line, f.x, f.actual), (1, 5, None));
        let more = format!("{right}601 STATUS again\n");
        let f = first_difference(&t, &more).unwrap();
        assert_eq!((f.line, f.x, f.expected), (3, 7, None));
    }

    #[test]
    fn the_timeline_holds_the_reference_and_the_program() {
        let t = worked();
        let wrong = isr_reference::output(&t, FaultSet::parse("hw-not-on-shrink").unwrap());
        let tl = build("worked", &t, &wrong);
        assert_eq!(tl.len, 8);
        // The leader's LEO, then the followers'.
        assert_eq!(tl.series[0].points.last().unwrap().last, 4);
        // The expected HW jumps from 2 to 4 at the second STATUS (command 6, x 5).
        let hw = &tl.series[3].points;
        assert!(hw.iter().any(|p| p.x == 5 && p.last == 4), "{hw:?}");
        // Follower 7 leaves the ISR at x 5 and rejoins at x 6.
        let seven = &tl.bands[2].expected;
        assert!(
            seven.contains(&svg::Run {
                x: 5,
                state: State::Out
            }),
            "{seven:?}"
        );
        assert!(
            seven.contains(&svg::Run {
                x: 6,
                state: State::In
            }),
            "{seven:?}"
        );
        let d = tl.divergence.as_ref().unwrap();
        assert_eq!(d.x, 5);
        assert!(
            d.lines[1].contains("HW=4") && d.lines[2].contains("HW=2"),
            "{:?}",
            d.lines
        );
        // The program's HW from its STATUS lines.
        let yours: Vec<u64> = tl.series[4].points.iter().map(|p| p.last).collect();
        assert_eq!(yours, vec![2, 4]);
    }

    #[test]
    fn worked_trace_snapshot() {
        let t = worked();
        let wrong = isr_reference::output(&t, FaultSet::parse("hw-not-on-shrink").unwrap());
        let svg = svg::render(&build(
            "001-worked-trace — the lesson's worked trace",
            &t,
            &wrong,
        ));
        roxmltree::Document::parse(&svg).unwrap();
        insta::assert_snapshot!("timeline_worked_trace", svg);
    }

    #[test]
    fn the_zoom_window_keeps_its_width_at_the_ends() {
        assert_eq!(window(500, 2000), (460, 520));
        assert_eq!(window(11, 2000), (0, 60));
        assert_eq!(window(1995, 2000), (1940, 2000));
        assert_eq!(window(3, 30), (0, 30));
    }

    #[test]
    fn only_the_first_replicas_are_drawn() {
        let ids: Vec<String> = (1..=30).map(|i| i.to_string()).collect();
        let text = format!(
            "REPLICAS {}\nLAG_MAX 5\nMIN_ISR 1\n0 APPEND 2\n1 FETCH 30 2\n2 STATUS\n",
            ids.join(" ")
        );
        let t = Trace::parse("many", &text).unwrap();
        let tl = build("many", &t, "2 STATUS ISR=1,30 HW=2 LEO=2 WRITES=OK\n");
        assert_eq!(tl.bands.len(), MAX_REPLICAS);
        assert_eq!(tl.series.len(), MAX_REPLICAS + 2);
        assert_eq!(
            tl.note.as_deref(),
            Some("The first 10 of 30 replicas are drawn.")
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Whatever a program prints (lines out of order, unknown ids, huge numbers, no time,
        /// garbage), the builder neither panics nor draws something that is not XML.
        #[test]
        fn any_output_gives_a_picture(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    "[0-9]{1,4} STATUS ISR=[0-9,]{0,12} HW=[0-9]{1,3} LEO=[0-9]{1,3} WRITES=OK",
                    "[0-9]{1,25} (ACK|NOT_ENOUGH_REPLICAS|status|STATUS) [0-9a-z=,]{0,10}",
                    ".{0,30}",
                ],
                0..40,
            ),
            empty in proptest::prelude::any::<bool>(),
        ) {
            let t = if empty {
                Trace::parse("empty", "REPLICAS 1\nLAG_MAX 0\nMIN_ISR 1\n").unwrap()
            } else {
                worked()
            };
            let tl = build("any", &t, &lines.join("\n"));
            proptest::prop_assert!(roxmltree::Document::parse(&svg::render(&tl)).is_ok());
        }
    }

    /// A trace of `n` commands under constant load, with a follower that stalls for a while.
    fn long_trace(n: usize) -> Trace {
        let mut text = String::from("REPLICAS 1 2 3\nLAG_MAX 300\nMIN_ISR 2\n");
        let mut leo = 0u64;
        for i in 0..n {
            let t = i as u64 * 10;
            let line = match i % 4 {
                0 => {
                    leo += 3;
                    format!("{t} APPEND 3\n")
                }
                1 => format!("{t} FETCH 2 {leo}\n"),
                2 if (n / 3..n / 2).contains(&i) => format!("{t} STATUS\n"),
                2 => format!("{t} FETCH 3 {}\n", leo.saturating_sub(2)),
                _ => format!("{t} STATUS\n"),
            };
            text.push_str(&line);
        }
        Trace::parse("long", &text).unwrap()
    }

    #[test]
    fn long_traces_give_bounded_well_formed_pictures() {
        for n in [2_000, 10_000, 100_000] {
            let t = long_trace(n);
            let wrong =
                isr_reference::output(&t, FaultSet::parse("caught-up-equality-only").unwrap());
            let tl = build("long", &t, &wrong);
            assert!(tl.divergence.is_some());
            for s in &tl.series {
                assert!(
                    s.points.len() <= 2 * svg::MAX_CELLS as usize + 100,
                    "{}",
                    s.points.len()
                );
            }
            let svg = svg::render(&tl);
            roxmltree::Document::parse(&svg).unwrap();
            assert!(svg.len() < 200_000, "{n} commands: {} bytes", svg.len());
            assert!(svg.contains("zoom: commands"), "{n}");
        }
    }
}
