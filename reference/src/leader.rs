//! The leader state machine: the exercise's reference solution, with every catalog mistake as a
//! switch on it.
//!
//! The machine does no I/O: [`Leader::step`] appends the output lines of one command to a byte
//! buffer. [`Leader::step_explained`] also records, in the lesson's words, every decision and the
//! numbers behind it (the `--explain` view).
//!
//! A faulty machine runs on any trace that is valid for the correct leader and never panics, even
//! when its own state disagrees with the trace (a fetch beyond its own LEO, an empty ISR): it uses
//! saturating arithmetic and simply carries on, as a student's program would.

use std::collections::VecDeque;
use std::fmt::Write as _;

use crate::faults::{Fault, FaultSet};
use crate::trace::{Command, Config, Step};

/// What the leader knows about one follower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FollowerState {
    /// The follower's LEO: the offset of its latest fetch.
    pub leo: u64,
    /// lastCaughtUpTime.
    pub last_caught_up: u64,
    /// lastFetchTime.
    pub last_fetch_time: u64,
    /// lastFetchLeaderLEO: the leader's LEO at the follower's latest fetch.
    pub last_fetch_leader_leo: u64,
}

/// The leader of one partition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Leader {
    replicas: Vec<u64>,
    lag_max: u64,
    min_isr: u64,
    faults: FaultSet,
    hw: u64,
    /// Per replica (replica-list order); index 0 is the leader, and of its entry only `leo` (the
    /// leader's LEO) is used.
    followers: Vec<FollowerState>,
    /// ISR membership per replica index.
    in_isr: Vec<bool>,
    /// Waiting acks=all requests: (base, end).
    waiting: VecDeque<(u64, u64)>,
}

/// Explanation notes collected during one step.
pub type Notes = Vec<String>;

macro_rules! note {
    ($notes:expr, $($arg:tt)*) => {
        if let Some(n) = $notes.as_deref_mut() {
            n.push(format!($($arg)*));
        }
    };
}

impl Leader {
    /// A leader in the start state of the contract, with the given mistakes switched on.
    pub fn new(config: &Config, faults: FaultSet) -> Leader {
        let n = config.replicas.len();
        Leader {
            replicas: config.replicas.clone(),
            lag_max: config.lag_max,
            min_isr: config.min_isr,
            faults,
            hw: 0,
            followers: vec![FollowerState::default(); n],
            in_isr: vec![true; n],
            waiting: VecDeque::new(),
        }
    }

    /// The mistakes switched on.
    pub fn faults(&self) -> FaultSet {
        self.faults
    }

    /// The leader's LEO.
    pub fn leo(&self) -> u64 {
        self.followers[0].leo
    }

    /// The high watermark.
    pub fn hw(&self) -> u64 {
        self.hw
    }

    /// The ISR's member ids in replica-list order.
    pub fn isr(&self) -> Vec<u64> {
        self.replicas
            .iter()
            .zip(&self.in_isr)
            .filter(|(_, i)| **i)
            .map(|(&r, _)| r)
            .collect()
    }

    /// The state kept for follower `id` (None for the leader or a non-replica).
    pub fn follower(&self, id: u64) -> Option<&FollowerState> {
        let i = self.index(id)?;
        (i > 0).then(|| &self.followers[i])
    }

    /// Number of acks=all requests waiting for an answer.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Appends to `key` a canonical description of the state as seen from time `now`: times are
    /// stored as ages, and ages beyond `horizon` are all the same (for exhaustive search, two
    /// states with the same key behave the same on every future command).
    pub fn search_key(&self, now: u64, horizon: u64, key: &mut Vec<u64>) {
        let age = |x: u64| now.saturating_sub(x).min(horizon);
        key.push(self.leo());
        key.push(self.hw);
        for (f, in_isr) in self.followers.iter().zip(&self.in_isr).skip(1) {
            key.extend([
                f.leo,
                age(f.last_caught_up),
                age(f.last_fetch_time),
                f.last_fetch_leader_leo,
                u64::from(*in_isr),
            ]);
        }
        key.push(u64::from(self.in_isr[0]));
        key.push(age(0));
        key.push(self.waiting.len() as u64);
        for (b, e) in &self.waiting {
            key.extend([*b, *e]);
        }
    }

    /// Whether mistake `f` is switched on. `F` is false for the correct leader, so that its
    /// machine is compiled without any of the mistakes' branches (the hot path).
    #[inline(always)]
    fn on<const F: bool>(&self, f: Fault) -> bool {
        F && self.faults.has(f)
    }

    #[inline]
    fn index(&self, id: u64) -> Option<usize> {
        self.replicas.iter().position(|&r| r == id)
    }

    fn isr_size(&self) -> u64 {
        self.in_isr.iter().filter(|&&b| b).count() as u64
    }

    /// Checks what the contract requires of a trace beyond its syntax, given this (correct)
    /// leader's state before the step: a fetch offset may not exceed the leader's LEO, and the LEO
    /// must fit in u64.
    pub fn validate(&self, step: &Step) -> Result<(), String> {
        match step.cmd {
            Command::Fetch { follower, offset } if offset > self.leo() => Err(format!(
                "FETCH {follower} {offset} asks beyond the leader's LEO {} at that moment",
                self.leo()
            )),
            Command::Append(n) | Command::Produce(n) if self.leo().checked_add(n).is_none() => Err(
                format!("the leader's LEO {} + {n} would overflow u64", self.leo()),
            ),
            _ => Ok(()),
        }
    }

    /// Runs one command and appends its output lines (LF-terminated) to `out`.
    #[inline]
    pub fn step(&mut self, step: &Step, out: &mut Vec<u8>) {
        if self.faults.is_empty() {
            self.run::<false>(step, out, None);
        } else {
            self.run::<true>(step, out, None);
        }
    }

    /// Like [`Leader::step`], and also appends to `notes` the decisions taken and the numbers
    /// behind them, one sentence per note, in the lesson's terms.
    pub fn step_explained(&mut self, step: &Step, out: &mut Vec<u8>, notes: &mut Notes) {
        self.run::<true>(step, out, Some(notes));
    }

    fn run<const F: bool>(
        &mut self,
        step: &Step,
        out: &mut Vec<u8>,
        mut notes: Option<&mut Notes>,
    ) {
        let t = step.t;
        let is_status = matches!(step.cmd, Command::Status);
        if !is_status && self.on::<F>(Fault::ShrinkOnEveryCommand) {
            self.shrink::<F>(t, &mut notes);
        }
        let mut recompute_hw = true;
        match step.cmd {
            Command::Append(n) => {
                let before = self.leo();
                self.followers[0].leo = self.leo().saturating_add(n);
                note!(notes, "leader LEO {before} -> {}", self.leo());
                if self.on::<F>(Fault::HwNotOnAppend) {
                    recompute_hw = false;
                }
            }
            Command::Produce(n) => {
                self.produce::<F>(t, n, out, &mut notes);
                if self.on::<F>(Fault::HwNotOnAppend) {
                    recompute_hw = false;
                }
            }
            Command::Fetch { follower, offset } => self.fetch::<F>(t, follower, offset, &mut notes),
            Command::Status => {
                self.shrink::<F>(t, &mut notes);
                if self.on::<F>(Fault::HwNotOnShrink) {
                    recompute_hw = false;
                }
            }
        }
        if recompute_hw {
            self.update_hw::<F>(&mut notes);
        } else {
            note!(notes, "HW not recomputed, stays {}", self.hw);
        }
        self.answer_waiting::<F>(t, out, &mut notes);
        if is_status {
            self.print_status::<F>(t, out, &mut notes);
        }
    }

    fn fetch<const F: bool>(&mut self, t: u64, id: u64, o: u64, notes: &mut Option<&mut Notes>) {
        let Some(i) = self.index(id).filter(|&i| i > 0) else {
            note!(notes, "{id} is not a follower: ignored");
            return;
        };
        let l = self.leo();
        let f = self.followers[i];
        let mut lcu = f.last_caught_up;
        if o >= l {
            lcu = lcu.max(t);
            note!(
                notes,
                "{o} >= leader LEO {l}: caught up now, lastCaughtUp({id}) = {lcu}"
            );
        } else if self.on::<F>(Fault::CaughtUpEqualityOnly) {
            note!(
                notes,
                "{o} < leader LEO {l}: not caught up (only equality counts), lastCaughtUp({id}) stays {lcu}"
            );
        } else {
            let prev = f.last_fetch_leader_leo;
            let strict = self.on::<F>(Fault::CaughtUpStrictPrevious);
            let covers = if strict { o > prev } else { o >= prev };
            let op = if strict { ">" } else { ">=" };
            if covers {
                let credit = if self.on::<F>(Fault::CaughtUpUsesFetchNow) {
                    t
                } else {
                    f.last_fetch_time
                };
                lcu = lcu.max(credit);
                note!(
                    notes,
                    "{o} < {l} but {o} {op} {prev} (the leader's LEO at its previous fetch, t={}): caught up then, lastCaughtUp({id}) = {lcu}",
                    f.last_fetch_time
                );
            } else {
                note!(
                    notes,
                    "{o} < {l} and not {o} {op} {prev} (the leader's LEO at its previous fetch): not caught up, lastCaughtUp({id}) stays {lcu}"
                );
            }
        }
        let recorded_leo = if self.on::<F>(Fault::CaughtUpStaleLeaderLeo) {
            f.last_fetch_leader_leo
        } else {
            l
        };
        self.followers[i] = FollowerState {
            leo: o,
            last_caught_up: lcu,
            last_fetch_time: t,
            last_fetch_leader_leo: recorded_leo,
        };
        note!(
            notes,
            "LEO({id}) = {o}, lastFetchLeaderLEO({id}) = {recorded_leo}, lastFetchTime({id}) = {t}"
        );
        if !self.in_isr[i] {
            let hw = self.hw;
            let (joins, why) = if self.on::<F>(Fault::RejoinNever) {
                (false, "removed followers never rejoin".to_string())
            } else if self.on::<F>(Fault::RejoinEarly) {
                (true, "any fetch rejoins".to_string())
            } else if self.on::<F>(Fault::RejoinNeedsLeaderLeo) {
                (o >= l, format!("{o} vs leader LEO {l}"))
            } else if self.on::<F>(Fault::RejoinAboveHwStrict) {
                (o > hw, format!("{o} > HW {hw}?"))
            } else {
                (o >= hw, format!("{o} >= HW {hw}?"))
            };
            if joins {
                self.in_isr[i] = true;
                note!(notes, "{id} is not in the ISR; {why}: it joins the ISR");
            } else {
                note!(notes, "{id} is not in the ISR; {why}: it stays out");
            }
        }
    }

    fn shrink<const F: bool>(&mut self, t: u64, notes: &mut Option<&mut Notes>) {
        let inclusive = self.on::<F>(Fault::ShrinkInclusive);
        let by_fetch = self.on::<F>(Fault::ShrinkByFetchTime);
        let op = if inclusive { ">=" } else { ">" };
        let lag_max = self.lag_max;
        let mut removed = Vec::new();
        for i in 0..self.replicas.len() {
            if !self.in_isr[i] {
                continue;
            }
            let id = self.replicas[i];
            let since = if i == 0 {
                if !self.on::<F>(Fault::ShrinkRemovesLeader) {
                    continue;
                }
                0
            } else if by_fetch {
                self.followers[i].last_fetch_time
            } else {
                self.followers[i].last_caught_up
            };
            let lag = t.saturating_sub(since);
            let out = if inclusive {
                lag >= lag_max
            } else {
                lag > lag_max
            };
            if out {
                self.in_isr[i] = false;
                removed.push(id);
                note!(
                    notes,
                    "{t} - {since} = {lag} {op} LAG_MAX {lag_max}: {id} leaves the ISR"
                );
            }
        }
        if removed.is_empty() && notes.is_some() {
            let parts: Vec<String> = (1..self.replicas.len())
                .filter(|&i| self.in_isr[i])
                .map(|i| {
                    let s = if by_fetch {
                        self.followers[i].last_fetch_time
                    } else {
                        self.followers[i].last_caught_up
                    };
                    format!("{}: {t} - {s} = {}", self.replicas[i], t.saturating_sub(s))
                })
                .collect();
            if parts.is_empty() {
                note!(notes, "ISR check: no follower in the ISR to check");
            } else {
                note!(
                    notes,
                    "ISR check: every follower within LAG_MAX {lag_max} ({})",
                    parts.join(", ")
                );
            }
        }
    }

    /// The LEO of replica `i` (the leader's own for index 0).
    fn leo_of(&self, i: usize) -> u64 {
        self.followers[i].leo
    }

    fn min_leo(&self, all: bool) -> Option<u64> {
        self.followers
            .iter()
            .zip(&self.in_isr)
            .filter(|(_, in_isr)| all || **in_isr)
            .map(|(f, _)| f.leo)
            .min()
    }

    fn update_hw<const F: bool>(&mut self, notes: &mut Option<&mut Notes>) {
        let all = self.on::<F>(Fault::HwAllReplicas);
        let Some(m) = self.min_leo(all) else {
            note!(notes, "the ISR is empty: HW stays {}", self.hw);
            return;
        };
        let before = self.hw;
        self.hw = if self.on::<F>(Fault::HwCanDecrease) {
            m
        } else {
            before.max(m)
        };
        if notes.is_some() {
            let over = if all { "all replicas" } else { "the ISR" };
            let parts: Vec<String> = (0..self.replicas.len())
                .filter(|&i| all || self.in_isr[i])
                .map(|i| self.leo_of(i).to_string())
                .collect();
            let mut s = format!("HW = min over {over}({}) = {m}", parts.join(","));
            if self.hw != m {
                let _ = write!(s, "; it never decreases, so HW stays {}", self.hw);
            } else if before != self.hw {
                let _ = write!(s, " (was {before})");
            }
            note!(notes, "{s}");
        }
    }

    fn produce<const F: bool>(
        &mut self,
        t: u64,
        n: u64,
        out: &mut Vec<u8>,
        notes: &mut Option<&mut Notes>,
    ) {
        let (size, what) = if self.on::<F>(Fault::MinIsrIgnored) {
            (self.replicas.len() as u64, "replica count")
        } else {
            (self.isr_size(), "ISR size")
        };
        let refuse = if self.on::<F>(Fault::MinIsrOffByOne) {
            size <= self.min_isr
        } else {
            size < self.min_isr
        };
        if refuse {
            push_line(out, t, b" NOT_ENOUGH_REPLICAS");
            if self.on::<F>(Fault::RefusedStillAppends) {
                self.followers[0].leo = self.leo().saturating_add(n);
                note!(
                    notes,
                    "{what} {size} vs MIN_ISR {}: refused with NOT_ENOUGH_REPLICAS, but the records are appended anyway, leader LEO = {}",
                    self.min_isr,
                    self.leo()
                );
            } else {
                note!(
                    notes,
                    "{what} {size} < MIN_ISR {}: refused with NOT_ENOUGH_REPLICAS, nothing appended",
                    self.min_isr
                );
            }
            return;
        }
        let base = self.leo();
        self.followers[0].leo = self.leo().saturating_add(n);
        self.waiting.push_back((base, self.leo()));
        note!(
            notes,
            "{what} {size} >= MIN_ISR {}: accepted, records {base}..{} appended, leader LEO = {}; the request waits until HW >= {}",
            self.min_isr,
            self.leo().saturating_sub(1),
            self.leo(),
            self.leo()
        );
    }

    fn answer_waiting<const F: bool>(
        &mut self,
        t: u64,
        out: &mut Vec<u8>,
        notes: &mut Option<&mut Notes>,
    ) {
        if self.waiting.is_empty() {
            return;
        }
        let bound = if self.on::<F>(Fault::AckAllReplicas) {
            self.min_leo(true).unwrap_or(0)
        } else {
            self.hw
        };
        while let Some(&(base, end)) = self.waiting.front() {
            let ok = if self.on::<F>(Fault::AckImmediate) {
                true
            } else if self.on::<F>(Fault::AckFirstRecord) {
                bound > base
            } else {
                end <= bound
            };
            if !ok {
                break;
            }
            self.waiting.pop_front();
            let mut buf = itoa::Buffer::new();
            out.extend_from_slice(buf.format(t).as_bytes());
            out.extend_from_slice(b" ACK ");
            out.extend_from_slice(buf.format(base).as_bytes());
            out.push(b'\n');
            note!(
                notes,
                "request at offset {base} (end {end}) is fully below the HW {}: ACK {base}",
                self.hw
            );
        }
        if let Some(&(base, end)) = self.waiting.front() {
            note!(
                notes,
                "{} request(s) still waiting; the oldest (offset {base}) needs HW >= {end}",
                self.waiting.len()
            );
        }
    }

    fn print_status<const F: bool>(
        &self,
        t: u64,
        out: &mut Vec<u8>,
        notes: &mut Option<&mut Notes>,
    ) {
        let mut ids: Vec<u64> = Vec::new();
        let sorted = self.on::<F>(Fault::IsrOrderSorted);
        if sorted {
            ids = self.isr();
            ids.sort_unstable();
        }
        let members: &[u64] = if sorted { &ids } else { &self.replicas };
        let isr_size = self.isr_size();
        let (size, what) = if self.on::<F>(Fault::WritesCountsReplicas) {
            (self.replicas.len() as u64, "replica count")
        } else {
            (isr_size, "ISR size")
        };
        let ok = if self.on::<F>(Fault::WritesOffByOne) {
            size > self.min_isr
        } else {
            size >= self.min_isr
        };
        let mut buf = itoa::Buffer::new();
        out.extend_from_slice(buf.format(t).as_bytes());
        out.extend_from_slice(b" STATUS ISR=");
        let mut first = true;
        for (k, id) in members.iter().enumerate() {
            if !sorted && !self.in_isr[k] {
                continue;
            }
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(buf.format(*id).as_bytes());
        }
        out.extend_from_slice(b" HW=");
        out.extend_from_slice(buf.format(self.hw).as_bytes());
        out.extend_from_slice(b" LEO=");
        out.extend_from_slice(buf.format(self.leo()).as_bytes());
        out.extend_from_slice(if ok {
            b" WRITES=OK\n".as_slice()
        } else {
            b" WRITES=NOT_ENOUGH_REPLICAS\n".as_slice()
        });
        note!(
            notes,
            "{what} {size} {} MIN_ISR {}: WRITES={}",
            if ok { ">=" } else { "<" },
            self.min_isr,
            if ok { "OK" } else { "NOT_ENOUGH_REPLICAS" }
        );
    }
}

fn push_line(out: &mut Vec<u8>, t: u64, rest: &[u8]) {
    out.extend_from_slice(itoa::Buffer::new().format(t).as_bytes());
    out.extend_from_slice(rest);
    out.push(b'\n');
}
