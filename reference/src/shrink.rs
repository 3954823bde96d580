//! Shrinking a failing trace: the smallest trace on which a program still fails the same way.
//!
//! The algorithm knows the trace format but nothing about the program: it asks a predicate,
//! "does this program still fail the same way on these candidates?", a batch at a time (the
//! caller may run a batch in parallel), and remembers every answer (a candidate is never asked
//! twice). Every candidate is kept valid for the reference: after a command is removed or a
//! number made smaller, [`repair`] clamps fetch offsets to the correct leader's LEO and drops
//! fetches from replicas no longer in the header, as Hypothesis keeps shrunk cases valid by
//! shrinking the generator's choices instead of the output.
//!
//! Phases, repeated until nothing changes:
//! 1. the shortest failing prefix (binary search; a divergence is usually at one command);
//! 2. delta debugging over commands (Zeller and Hildebrandt's ddmin, complements only, resuming
//!    at the chunk after the last removal), down to one command at a time;
//! 3. the header: fewer replicas, small replica ids, smaller LAG_MAX and MIN_ISR;
//! 4. numbers: record counts, fetch offsets and the gaps between times made smaller.
//!
//! The candidates of a batch are tried in a fixed order and the first that still fails wins, so
//! the result does not depend on how the caller schedules a batch.

use std::collections::HashMap;

use crate::faults::FaultSet;
use crate::leader::Leader;
use crate::trace::{Command, Config, Step, Trace};

/// The result of [`shrink`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shrunk {
    /// The smallest trace found that still fails the same way.
    pub trace: Trace,
    /// Candidates the predicate was asked about (program runs, for a grader).
    pub tests: usize,
}

/// Makes `steps` a valid trace for `config`: fetches from ids that are not followers are
/// dropped, times made non-decreasing, fetch offsets clamped to the correct leader's LEO, and
/// line numbers renumbered as in [`Trace::to_text`]. None when the header itself is invalid or
/// a count would overflow the LEO.
pub fn repair(name: &str, config: &Config, steps: &[Step]) -> Option<Trace> {
    if config.replicas.is_empty() || config.min_isr == 0 {
        return None;
    }
    let mut ids = config.replicas.clone();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() != config.replicas.len() {
        return None;
    }
    let mut leader = Leader::new(config, FaultSet::NONE);
    let mut out = Vec::new();
    let mut fixed = Vec::with_capacity(steps.len());
    let mut last_t = 0;
    for s in steps {
        let mut step = *s;
        step.t = step.t.max(last_t);
        if let Command::Fetch { follower, offset } = step.cmd {
            if follower == config.leader() || config.index_of(follower).is_none() {
                continue;
            }
            step.cmd = Command::Fetch {
                follower,
                offset: offset.min(leader.leo()),
            };
        }
        step.line = fixed.len() + 4;
        leader.validate(&step).ok()?;
        out.clear();
        leader.step(&step, &mut out);
        last_t = step.t;
        fixed.push(step);
    }
    Some(Trace {
        name: name.to_string(),
        config: config.clone(),
        steps: fixed,
    })
}

/// Shrinks `trace`, on which `still_fails` holds, to a smallest trace on which it still holds.
///
/// `still_fails` gets a batch of at most `batch` candidates (all valid, none asked before) and
/// answers for each whether it still fails the same way, or None to stop shrinking there (a
/// budget ran out): the smallest trace found so far is the result. A predicate that is not deterministic
/// gives a smaller or larger result, never a wrong one: only traces it said yes to are kept.
pub fn shrink<P>(trace: &Trace, batch: usize, still_fails: P) -> Shrunk
where
    P: FnMut(&[Trace]) -> Option<Vec<bool>>,
{
    let mut s = Shrinker {
        pred: still_fails,
        memo: HashMap::new(),
        tests: 0,
        batch: batch.max(1),
        name: trace.name.clone(),
        stopped: false,
    };
    let mut best =
        repair(&trace.name, &trace.config, &trace.steps).unwrap_or_else(|| trace.clone());
    s.memo.insert(best.to_text(), true);
    best = s.prefix(best);
    for _round in 0..8 {
        if s.stopped {
            break;
        }
        let before = best.to_text();
        best = s.ddmin(best);
        best = s.header(best);
        best = s.numbers(best);
        if best.to_text() == before {
            break;
        }
    }
    Shrunk {
        trace: best,
        tests: s.tests,
    }
}

struct Shrinker<P> {
    pred: P,
    memo: HashMap<String, bool>,
    tests: usize,
    batch: usize,
    name: String,
    /// The predicate asked to stop.
    stopped: bool,
}

/// For each step of a valid trace, how far a fetch is behind the correct leader's LEO (0 for
/// other commands).
fn behind(trace: &Trace) -> Vec<u64> {
    let mut leader = Leader::new(&trace.config, FaultSet::NONE);
    let mut out = Vec::new();
    trace
        .steps
        .iter()
        .map(|s| {
            let d = match s.cmd {
                Command::Fetch { offset, .. } => leader.leo().saturating_sub(offset),
                _ => 0,
            };
            out.clear();
            leader.step(s, &mut out);
            d
        })
        .collect()
}

/// Like [`repair`], but each fetch keeps its distance behind the leader's LEO (a follower that
/// was caught up stays caught up when records before it are removed).
fn repair_relative(name: &str, config: &Config, steps: &[(Step, u64)]) -> Option<Trace> {
    let mut leader = Leader::new(config, FaultSet::NONE);
    let mut out = Vec::new();
    let mut fixed = Vec::with_capacity(steps.len());
    for &(s, d) in steps {
        let mut step = s;
        if let Command::Fetch { follower, .. } = step.cmd {
            step.cmd = Command::Fetch {
                follower,
                offset: leader.leo().saturating_sub(d),
            };
        }
        if leader.validate(&step).is_ok() {
            out.clear();
            leader.step(&step, &mut out);
        }
        fixed.push(step);
    }
    repair(name, config, &fixed)
}

impl<P: FnMut(&[Trace]) -> Option<Vec<bool>>> Shrinker<P> {
    fn candidate(&self, config: &Config, steps: &[Step]) -> Option<Trace> {
        repair(&self.name, config, steps)
    }

    /// Both repairs of the steps of `best` picked by `keep`: distances behind the LEO kept,
    /// then absolute offsets clamped.
    fn candidates_keeping(
        &self,
        best: &Trace,
        dists: &[u64],
        keep: impl Fn(usize) -> bool,
    ) -> Vec<Trace> {
        let picked: Vec<(Step, u64)> = best
            .steps
            .iter()
            .zip(dists)
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(_, (s, d))| (*s, *d))
            .collect();
        let steps: Vec<Step> = picked.iter().map(|(s, _)| *s).collect();
        let mut v = Vec::new();
        if let Some(t) = repair_relative(&self.name, &best.config, &picked) {
            v.push(t);
        }
        if let Some(t) = self.candidate(&best.config, &steps)
            && !v.contains(&t)
        {
            v.push(t);
        }
        v
    }

    /// The first candidate, in order, that still fails; asks in batches, skipping known ones.
    fn first_failing(&mut self, current: &Trace, candidates: Vec<Trace>) -> Option<Trace> {
        let mut seen = std::collections::HashSet::new();
        let limit = size(current);
        let keyed: Vec<(String, Trace)> = candidates
            .into_iter()
            .filter(|t| size(t) < limit)
            .map(|t| (t.to_text(), t))
            .filter(|(k, _)| seen.insert(k.clone()))
            .collect();
        let mut start = 0;
        while start < keyed.len() {
            // Gather the next `batch` unknown candidates, up to the first known failing one.
            let mut ask = Vec::new();
            let mut end = start;
            while end < keyed.len() && ask.len() < self.batch {
                match self.memo.get(&keyed[end].0) {
                    Some(true) => break,
                    Some(false) => {}
                    None => ask.push(end),
                }
                end += 1;
            }
            if !ask.is_empty() {
                let traces: Vec<Trace> = ask.iter().map(|&i| keyed[i].1.clone()).collect();
                if self.stopped {
                    return None;
                }
                let Some(answers) = (self.pred)(&traces) else {
                    self.stopped = true;
                    return None;
                };
                self.tests += traces.len();
                for (&i, ok) in ask.iter().zip(answers) {
                    self.memo.insert(keyed[i].0.clone(), ok);
                }
            }
            let stop = (end + 1).min(keyed.len());
            for (k, t) in &keyed[start..stop] {
                if self.memo.get(k) == Some(&true) {
                    return Some(t.clone());
                }
            }
            start = stop;
        }
        None
    }

    /// The shortest failing prefix, by binary search (a prefix failing is assumed monotone; the
    /// result is only kept when it was seen to fail).
    fn prefix(&mut self, best: Trace) -> Trace {
        let (mut lo, mut hi) = (0usize, best.steps.len());
        let mut found = best.clone();
        while lo < hi && !self.stopped {
            let mid = lo + (hi - lo) / 2;
            let cand = self.candidate(&best.config, &best.steps[..mid]);
            match cand.and_then(|c| self.first_failing(&best, vec![c])) {
                Some(t) => {
                    hi = mid;
                    found = t;
                }
                None => lo = mid + 1,
            }
        }
        found
    }

    /// Delta debugging over commands: remove chunks while it still fails. After a removal the
    /// next round starts at the chunk that went (the chunks before it were just seen to matter).
    fn ddmin(&mut self, mut best: Trace) -> Trace {
        let mut n = 2usize;
        let mut start = 0usize;
        loop {
            let len = best.steps.len();
            if len == 0 || self.stopped {
                return best;
            }
            n = n.min(len);
            let dists = behind(&best);
            let cands: Vec<(usize, Trace)> = (0..n)
                .map(|k| (start + k) % n)
                .flat_map(|k| {
                    let (a, b) = (k * len / n, (k + 1) * len / n);
                    self.candidates_keeping(&best, &dists, |i| i < a || i >= b)
                        .into_iter()
                        .map(move |t| (k, t))
                })
                .collect();
            let traces: Vec<Trace> = cands.iter().map(|(_, t)| t.clone()).collect();
            match self.first_failing(&best, traces) {
                Some(t) => {
                    start = cands.iter().find(|(_, c)| *c == t).map_or(0, |(k, _)| *k);
                    best = t;
                    n = (n - 1).max(2);
                    start = start.min(n - 1);
                }
                None if n >= len => return best,
                None => {
                    n = (2 * n).min(len);
                    start = 0;
                }
            }
        }
    }

    /// Fewer replicas, small ids, smaller LAG_MAX and MIN_ISR.
    fn header(&mut self, mut best: Trace) -> Trace {
        loop {
            if self.stopped {
                return best;
            }
            let c = &best.config;
            let mut configs = Vec::new();
            for k in (1..c.replicas.len()).rev() {
                let mut d = c.clone();
                d.replicas.remove(k);
                configs.push(d);
            }
            // Ids renumbered to ranks, keeping their order (sorted or not).
            let mut sorted = c.replicas.clone();
            sorted.sort_unstable();
            let ranks: Vec<u64> = c
                .replicas
                .iter()
                .map(|r| sorted.iter().position(|s| s == r).unwrap_or(0) as u64)
                .collect();
            if ranks != c.replicas {
                configs.push(Config {
                    replicas: ranks.clone(),
                    ..c.clone()
                });
            }
            for lag in smaller(
                c.lag_max,
                &[0, 1, c.lag_max / 2, c.lag_max.saturating_sub(1)],
            ) {
                configs.push(Config {
                    lag_max: lag,
                    ..c.clone()
                });
            }
            let recoded: Vec<(Config, Vec<Step>)> = [0u64, 1, 2]
                .into_iter()
                .filter(|&l| l < c.lag_max || best.steps.last().is_some_and(|s| s.t > 3 * (l + 1)))
                .map(|l| {
                    let mut prev = 0;
                    let mut t = 0;
                    let steps = best
                        .steps
                        .iter()
                        .map(|s| {
                            t += recode_gap(s.t - prev, c.lag_max, l);
                            prev = s.t;
                            Step { t, ..*s }
                        })
                        .collect();
                    (
                        Config {
                            lag_max: l,
                            ..c.clone()
                        },
                        steps,
                    )
                })
                .collect();
            // Every time and LAG_MAX scaled down together (floor, then ceiling).
            let last = best.steps.last().map_or(0, |s| s.t);
            let scaled: Vec<(Config, Vec<Step>)> = [1u64, 2, 3, 5, 10, 100, c.lag_max / 2]
                .into_iter()
                .filter(|&l| l < c.lag_max)
                .flat_map(|l| [(l, false), (l, true)])
                .map(|(l, up)| {
                    let scale = |t: u64| {
                        let num = u128::from(t) * u128::from(l);
                        let den = u128::from(c.lag_max.max(1));
                        let v = if up { num.div_ceil(den) } else { num / den };
                        u64::try_from(v).unwrap_or(last)
                    };
                    let steps = best
                        .steps
                        .iter()
                        .map(|s| Step {
                            t: scale(s.t),
                            ..*s
                        })
                        .collect();
                    (
                        Config {
                            lag_max: l,
                            ..c.clone()
                        },
                        steps,
                    )
                })
                .collect();
            let n = c.replicas.len() as u64;
            for m in smaller(c.min_isr, &[1, n, c.min_isr.saturating_sub(1)]) {
                if m >= 1 {
                    configs.push(Config {
                        min_isr: m,
                        ..c.clone()
                    });
                }
            }
            let dists = behind(&best);
            let mut cands: Vec<Trace> = recoded
                .iter()
                .chain(&scaled)
                .flat_map(|(d, steps)| {
                    let rel: Vec<(Step, u64)> =
                        steps.iter().copied().zip(dists.iter().copied()).collect();
                    [
                        repair_relative(&self.name, d, &rel),
                        self.candidate(d, steps),
                    ]
                })
                .flatten()
                .collect();
            cands.extend(configs.iter().filter_map(|d| {
                let steps: Vec<Step> = best
                    .steps
                    .iter()
                    .filter_map(|s| renumber_ids(s, c, d))
                    .collect();
                self.candidate(d, &steps)
            }));
            match self.first_failing(&best, cands) {
                Some(t) => best = t,
                None => return best,
            }
        }
    }

    /// Both repairs of `steps` under `best`'s header, keeping `best`'s fetch distances.
    fn both(&self, best: &Trace, dists: &[u64], steps: &[Step]) -> Vec<Trace> {
        let rel: Vec<(Step, u64)> = steps.iter().copied().zip(dists.iter().copied()).collect();
        let mut v: Vec<Trace> = repair_relative(&self.name, &best.config, &rel)
            .into_iter()
            .collect();
        if let Some(t) = self.candidate(&best.config, steps)
            && !v.contains(&t)
        {
            v.push(t);
        }
        v
    }

    /// The smallest value in `min..v` for one number of `best` (set by `make`) that still fails:
    /// the values of `tries` first, then a binary search. None when no smaller value fails.
    fn lower(
        &mut self,
        best: &Trace,
        v: u64,
        min: u64,
        tries: &[u64],
        make: impl Fn(u64) -> Vec<Step>,
    ) -> Option<Trace> {
        let dists = behind(best);
        let quick: Vec<u64> = smaller(v, tries)
            .into_iter()
            .filter(|&x| x >= min)
            .collect();
        let cands: Vec<Trace> = quick
            .iter()
            .flat_map(|&x| self.both(best, &dists, &make(x)))
            .collect();
        if let Some(t) = self.first_failing(best, cands) {
            return Some(t);
        }
        let (mut lo, mut hi) = (min, v);
        let mut found = None;
        while lo < hi && !self.stopped {
            let mid = lo + (hi - lo) / 2;
            let cands = self.both(best, &dists, &make(mid));
            match self.first_failing(best, cands) {
                Some(t) => {
                    hi = mid;
                    found = Some(t);
                }
                None => lo = mid + 1,
            }
        }
        found
    }

    /// Smaller record counts and fetch offsets, smaller gaps between times.
    fn numbers(&mut self, mut best: Trace) -> Trace {
        let mut i = 0;
        'steps: while i < best.steps.len() && !self.stopped {
            for slot in 0..2 {
                let s = best.steps[i];
                let steps = best.steps.clone();
                let lag = best.config.lag_max;
                let found = match (slot, s.cmd) {
                    (0, Command::Append(n) | Command::Produce(n)) => {
                        self.lower(&best, n, 1, &[1], |m| {
                            let mut st = steps.clone();
                            st[i].cmd = match s.cmd {
                                Command::Append(_) => Command::Append(m),
                                _ => Command::Produce(m),
                            };
                            st
                        })
                    }
                    (0, Command::Fetch { follower, offset }) => {
                        self.lower(&best, offset, 0, &[0], |o| {
                            let mut st = steps.clone();
                            st[i].cmd = Command::Fetch {
                                follower,
                                offset: o,
                            };
                            st
                        })
                    }
                    (1, _) => {
                        // The gap from the previous command's time (0 before the first); the
                        // later commands move with it.
                        let prev = if i == 0 { 0 } else { best.steps[i - 1].t };
                        let gap = s.t - prev;
                        self.lower(&best, gap, 0, &[0, 1, lag, lag + 1], |g| {
                            let mut st = steps.clone();
                            let delta = gap - g;
                            for later in &mut st[i..] {
                                later.t -= delta;
                            }
                            st
                        })
                    }
                    _ => None,
                };
                if let Some(t) = found {
                    let fewer = t.steps.len() != best.steps.len();
                    best = t;
                    if fewer {
                        continue 'steps;
                    }
                }
            }
            i += 1;
        }
        best
    }
}

/// A gap between two times under LAG_MAX `lag`, recoded for LAG_MAX `small`: none stays none,
/// below LAG_MAX becomes 1 (or `small` when that is smaller), exactly LAG_MAX becomes `small`,
/// beyond it `small + 1`.
fn recode_gap(gap: u64, lag: u64, small: u64) -> u64 {
    use std::cmp::Ordering::*;
    match (gap, gap.cmp(&lag)) {
        (0, _) => 0,
        (_, Less) => small.clamp(1, 1),
        (_, Equal) => small,
        (_, Greater) => small + 1,
    }
}

/// How big a trace is, compared lexicographically: commands, replicas, LAG_MAX, MIN_ISR, then
/// the sum of its numbers. Only a strictly smaller candidate replaces the current trace, so
/// shrinking ends.
fn size(t: &Trace) -> (usize, usize, u64, u64, u128) {
    let c = &t.config;
    let mut sum: u128 = c.replicas.iter().map(|&r| u128::from(r)).sum();
    for s in &t.steps {
        sum += u128::from(s.t);
        sum += match s.cmd {
            Command::Append(n) | Command::Produce(n) => u128::from(n),
            Command::Fetch { follower, offset } => u128::from(follower) + u128::from(offset),
            Command::Status => 0,
        };
    }
    (t.steps.len(), c.replicas.len(), c.lag_max, c.min_isr, sum)
}

/// The values of `tries` below `v`, distinct, in the order given.
fn smaller(v: u64, tries: &[u64]) -> Vec<u64> {
    let mut out = Vec::new();
    for &x in tries {
        if x < v && !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// A step under header `to` when `from`'s replicas are renamed position by position (a removed
/// replica's fetches are dropped).
fn renumber_ids(s: &Step, from: &Config, to: &Config) -> Option<Step> {
    let Command::Fetch { follower, offset } = s.cmd else {
        return Some(*s);
    };
    if from.replicas.len() == to.replicas.len() {
        let k = from.index_of(follower)?;
        return Some(Step {
            cmd: Command::Fetch {
                follower: to.replicas[k],
                offset,
            },
            ..*s
        });
    }
    to.index_of(follower)?;
    Some(*s)
}

/// What kind of difference the first differing line is, in a few words: `STATUS HW`,
/// `missing ACK`, `extra STATUS`, `ACK instead of STATUS`. Two runs that differ "the same way"
/// have the same kind. None when the lines are the same.
pub fn divergence_kind(expected: &[String], actual: &[String]) -> Option<(usize, String)> {
    let k = (0..expected.len().max(actual.len())).find(|&k| expected.get(k) != actual.get(k))?;
    // Only the contract's verbs: a kind never carries a program's own text.
    let verb = |l: &str| {
        l.split_whitespace()
            .nth(1)
            .filter(|v| matches!(*v, "STATUS" | "ACK" | "NOT_ENOUGH_REPLICAS"))
            .unwrap_or("non-event line")
            .to_string()
    };
    let kind = match (expected.get(k), actual.get(k)) {
        (Some(e), None) => format!("missing {}", verb(e)),
        (None, Some(a)) => format!("extra {}", verb(a)),
        (Some(e), Some(a)) if verb(e) != verb(a) => format!("{} instead of {}", verb(a), verb(e)),
        (Some(e), Some(a)) => {
            let fe: Vec<&str> = e.split_whitespace().collect();
            let fa: Vec<&str> = a.split_whitespace().collect();
            let field = (0..fe.len().max(fa.len()))
                .find(|&i| fe.get(i) != fa.get(i))
                .map_or("", |i| match i {
                    0 => "time",
                    _ => fe
                        .get(i)
                        .and_then(|f| f.split('=').next())
                        .filter(|f| f.chars().all(|c| c.is_ascii_uppercase()))
                        .unwrap_or("value"),
                });
            format!("{} {field}", verb(e))
        }
        (None, None) => return None,
    };
    Some((k + 1, kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn kinds() {
        let e = lines("1 STATUS ISR=5,6 HW=2 LEO=4 WRITES=OK\n2 ACK 0");
        let a = lines("1 STATUS ISR=5,6 HW=3 LEO=4 WRITES=OK");
        assert_eq!(divergence_kind(&e, &a), Some((1, "STATUS HW".into())));
        assert_eq!(
            divergence_kind(&e, &e[..1]),
            Some((2, "missing ACK".into()))
        );
        assert_eq!(divergence_kind(&e[..1], &e), Some((2, "extra ACK".into())));
        assert_eq!(divergence_kind(&e, &e), None);
        let junk = lines("\x1b[2J hello");
        assert_eq!(
            divergence_kind(&e, &junk),
            Some((1, "non-event line instead of STATUS".into()))
        );
    }

    #[test]
    fn repair_clamps_offsets_and_drops_strangers() {
        let t = Trace::parse("t", "REPLICAS 5 6 7\nLAG_MAX 5\nMIN_ISR 1\n0 APPEND 4\n1 FETCH 6 4\n2 FETCH 7 3\n3 STATUS\n").unwrap();
        let c = Config {
            replicas: vec![5, 6],
            ..t.config.clone()
        };
        let r = repair("t", &c, &t.steps[1..]).unwrap();
        assert_eq!(
            r.to_text(),
            "REPLICAS 5 6\nLAG_MAX 5\nMIN_ISR 1\n1 FETCH 6 0\n3 STATUS\n"
        );
        assert_eq!(Trace::parse("t", &r.to_text()).unwrap().steps, r.steps);
    }

    #[test]
    fn shrinks_a_mistake_to_its_witness_size() {
        // hw-not-on-shrink on a long generated trace.
        let f = crate::Fault::HwNotOnShrink;
        let g = crate::r#gen::generate("slow-follower", 3, &[]).unwrap();
        let t = Trace::parse("g", &g.text).unwrap();
        let set = FaultSet::one(f);
        let kind = |t: &Trace| {
            divergence_kind(&lines(&output(t, FaultSet::NONE)), &lines(&output(t, set)))
                .map(|k| k.1)
        };
        let want = kind(&t);
        assert!(want.is_some());
        let s = shrink(&t, 2, |cs| {
            Some(cs.iter().map(|c| kind(c) == want).collect())
        });
        assert_eq!(kind(&s.trace), want);
        assert!(
            s.trace.steps.len() <= crate::audit::catalog_witness_len(f) + 1,
            "{}",
            s.trace.to_text()
        );
    }
}
