//! Scenario generators: reproducible traces that build the situations the lesson's pitfalls live
//! in.
//!
//! Random traces almost never reach the interesting states (a follower exactly LAG_MAX behind, a
//! fetch that asks for exactly the leader's LEO at the previous fetch, a rejoin exactly at the HW),
//! so each generator here builds one situation of the lesson on purpose, with random variety
//! around it: replica ids that are not sorted and do not start at the leader's, 1 to 7 replicas,
//! LAG_MAX 0 and large, several commands in the same millisecond.
//!
//! Reproducibility is the point: a generated case is stored as generator + seed + parameters, and
//! `isr-grader bless --check` regenerates it and compares bit for bit. So the generators use their
//! own PRNG ([`Rng`], SplitMix64 written out here, not a crate whose streams may change between
//! versions), draw parameter defaults from a stream of their own (so overriding one parameter
//! never shifts the trace's random stream), and never iterate over hash maps.
//!
//! Every generator drives the correct [`Leader`] as it writes, so it can aim at the leader's real
//! state (the current HW, a follower's lastCaughtUpTime) and every trace it writes is valid:
//! fetch offsets never exceed the leader's LEO and times never go backwards.
//!
//! ```
//! use isr_reference::{r#gen, Trace};
//! let g = r#gen::generate("lag-boundary", 7, &[]).unwrap();
//! assert_eq!(g.text, r#gen::generate("lag-boundary", 7, &[]).unwrap().text);
//! Trace::parse("lag-boundary", &g.text).unwrap();
//! ```

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use crate::faults::FaultSet;
use crate::leader::{FollowerState, Leader};
use crate::trace::{Command, Config, Step};

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny PRNG whose stream is fixed forever by these
/// few lines.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A number in `lo..=hi` (`lo` when `hi <= lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p` percent.
    pub fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// One element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// Shuffles in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            xs.swap(i, j);
        }
    }
}

/// A parameter's value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Value {
    /// A number.
    Int(u64),
    /// A word (one of the parameter's choices).
    Word(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::Word(w) => f.write_str(w),
        }
    }
}

/// What values a parameter takes and where its default comes from.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A number in `min..=max`; when not given, drawn from `auto` by the seed (one element: a
    /// fixed default).
    Int {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
        /// The defaults the seed chooses from.
        auto: &'static [u64],
    },
    /// One of `words`; when not given, drawn from `auto` by the seed.
    Word {
        /// The accepted words.
        words: &'static [&'static str],
        /// The defaults the seed chooses from.
        auto: &'static [&'static str],
    },
}

/// A generator parameter.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The name used in `-p NAME=VALUE`.
    pub name: &'static str,
    /// What it does.
    pub help: &'static str,
    /// Its values and default.
    pub kind: Kind,
}

impl Param {
    /// The accepted values, e.g. `1..=7` or `exact|more|less`.
    pub fn accepted(&self) -> String {
        match self.kind {
            Kind::Int { min, max, .. } => format!("{min}..={max}"),
            Kind::Word { words, .. } => words.join("|"),
        }
    }

    /// The default, e.g. `3`, or `one of 1,2,3 by seed`.
    pub fn default_text(&self) -> String {
        let list = match self.kind {
            Kind::Int { auto, .. } => auto.iter().map(u64::to_string).collect::<Vec<_>>(),
            Kind::Word { auto, .. } => auto.iter().map(|s| s.to_string()).collect(),
        };
        let mut uniq = list.clone();
        uniq.dedup();
        if uniq.len() == 1 {
            uniq[0].clone()
        } else {
            format!("by seed from {}", list.join(","))
        }
    }

    fn parse(&self, text: &str) -> Result<Value, String> {
        match self.kind {
            Kind::Int { min, max, .. } => {
                let n: u64 = text.parse().map_err(|_| {
                    format!(
                        "parameter `{}` takes a number in {min}..={max}, not `{text}`",
                        self.name
                    )
                })?;
                self.check(Value::Int(n))
            }
            Kind::Word { .. } => self.check(Value::Word(text.to_string())),
        }
    }

    fn check(&self, v: Value) -> Result<Value, String> {
        let ok = match (&v, self.kind) {
            (Value::Int(n), Kind::Int { min, max, .. }) => (min..=max).contains(n),
            (Value::Word(w), Kind::Word { words, .. }) => words.contains(&w.as_str()),
            _ => false,
        };
        if ok {
            Ok(v)
        } else {
            Err(format!(
                "parameter `{}` takes {}, not `{v}`",
                self.name,
                self.accepted()
            ))
        }
    }
}

/// A scenario generator.
#[derive(Debug, Clone, Copy)]
pub struct Generator {
    /// Its name, as given to `isr-grader gen`.
    pub name: &'static str,
    /// What situation it builds, in the lesson's terms.
    pub description: &'static str,
    /// The catalog ids it is aimed at.
    pub aims: &'static [&'static str],
    /// Its parameters, in the order their defaults are drawn.
    pub params: &'static [Param],
    build: fn(&mut Rng, &Params, &mut Builder),
}

/// A generated trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// The trace text, exactly as a case stores it.
    pub text: String,
    /// Every parameter's value (given or drawn), by name.
    pub params: BTreeMap<String, Value>,
    /// Number of timed commands.
    pub commands: usize,
}

/// Resolved parameter values.
#[derive(Debug, Clone)]
pub struct Params(BTreeMap<String, Value>);

impl Params {
    fn int(&self, name: &str) -> u64 {
        match self.0.get(name) {
            Some(Value::Int(n)) => *n,
            other => panic!("generator bug: parameter {name} is {other:?}"),
        }
    }

    fn word(&self, name: &str) -> &str {
        match self.0.get(name) {
            Some(Value::Word(w)) => w,
            other => panic!("generator bug: parameter {name} is {other:?}"),
        }
    }
}

/// Every generator, in `gen --list` order.
pub fn registry() -> &'static [Generator] {
    GENERATORS
}

/// Looks a generator up by name.
pub fn find(name: &str) -> Option<&'static Generator> {
    GENERATORS.iter().find(|g| g.name == name)
}

/// Parses `KEY=VALUE` parameter texts for `generator`.
pub fn parse_params(generator: &str, texts: &[String]) -> Result<Vec<(String, Value)>, String> {
    let g = find(generator).ok_or_else(|| unknown_generator(generator))?;
    texts
        .iter()
        .map(|t| {
            let (k, v) = t
                .split_once('=')
                .ok_or_else(|| format!("a parameter is KEY=VALUE, not `{t}`"))?;
            let p = g.param(k.trim())?;
            Ok((p.name.to_string(), p.parse(v.trim())?))
        })
        .collect()
}

fn unknown_generator(name: &str) -> String {
    let names: Vec<&str> = GENERATORS.iter().map(|g| g.name).collect();
    format!(
        "unknown scenario `{name}`; known scenarios: {}",
        names.join(", ")
    )
}

impl Generator {
    fn param(&self, name: &str) -> Result<&'static Param, String> {
        self.params.iter().find(|p| p.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.params.iter().map(|p| p.name).collect();
            format!(
                "scenario `{}` has no parameter `{name}`; its parameters: {}",
                self.name,
                names.join(", ")
            )
        })
    }

    /// Resolves the parameters: each default is drawn from the seed's parameter stream (always,
    /// in declaration order, so giving one parameter never changes another's default), then the
    /// given values replace them.
    pub fn resolve(&self, seed: u64, given: &[(String, Value)]) -> Result<Params, String> {
        let mut r = Rng::new(seed ^ 0xA5A5_5EED_0F9A_7A3E);
        let mut map = BTreeMap::new();
        for p in self.params {
            let v = match p.kind {
                Kind::Int { auto, .. } => Value::Int(r.pick(auto)),
                Kind::Word { auto, .. } => Value::Word(r.pick(auto).to_string()),
            };
            map.insert(p.name.to_string(), v);
        }
        for (k, v) in given {
            let p = self.param(k)?;
            map.insert(p.name.to_string(), p.check(v.clone())?);
        }
        Ok(Params(map))
    }

    /// Generates the trace for `seed` and the given parameters.
    pub fn generate(&self, seed: u64, given: &[(String, Value)]) -> Result<Generated, String> {
        let params = self.resolve(seed, given)?;
        // The trace's stream depends on the generator too, so one seed gives each scenario
        // different replica ids and timings.
        let mut r = Rng::new(seed ^ fnv1a(self.name));
        let config = Config {
            replicas: replica_ids(&mut r, params.int("replicas") as usize),
            lag_max: params.int("lag_max"),
            min_isr: params.int("min_isr"),
        };
        let mut b = Builder::new(config);
        (self.build)(&mut r, &params, &mut b);
        let mut text = format!("# generated: isr-grader gen {} --seed {seed}", self.name);
        for (k, v) in &params.0 {
            let _ = write!(text, " -p {k}={v}");
        }
        text.push('\n');
        text.push_str(&b.config.to_header());
        text.push_str(&b.body);
        Ok(Generated {
            text,
            params: params.0,
            commands: b.commands,
        })
    }
}

/// Generates scenario `name` for `seed` with the given parameters (the rest default).
pub fn generate(name: &str, seed: u64, given: &[(String, Value)]) -> Result<Generated, String> {
    find(name)
        .ok_or_else(|| unknown_generator(name))?
        .generate(seed, given)
}

/// FNV-1a, 64 bits: a fixed hash of a generator's name.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// Distinct replica ids, shuffled so that they are not sorted and the leader (the first) is not
/// the smallest id (whenever there are at least two).
fn replica_ids(r: &mut Rng, n: usize) -> Vec<u64> {
    let base = r.pick(&[0, 1, 1, 2, 5, 10, 100, 1000]);
    let mut ids: Vec<u64> = (base..base + 2 * n as u64 + 1).collect();
    r.shuffle(&mut ids);
    ids.truncate(n);
    if n >= 2 {
        let min = (0..n).min_by_key(|&i| ids[i]).unwrap_or(0);
        if min == 0 {
            let other = 1 + r.below(n as u64 - 1) as usize;
            ids.swap(0, other);
        }
    }
    ids
}

/// Writes a trace while running the correct leader on it.
struct Builder {
    config: Config,
    leader: Leader,
    body: String,
    t: u64,
    commands: usize,
    scratch: Vec<u8>,
}

impl Builder {
    fn new(config: Config) -> Builder {
        Builder {
            leader: Leader::new(&config, FaultSet::NONE),
            config,
            body: String::new(),
            t: 0,
            commands: 0,
            scratch: Vec::new(),
        }
    }

    fn followers(&self) -> Vec<u64> {
        self.config.replicas[1..].to_vec()
    }

    fn lag(&self) -> u64 {
        self.config.lag_max
    }

    fn run(&mut self, cmd: Command) {
        let step = Step {
            line: 0,
            t: self.t,
            cmd,
        };
        debug_assert_eq!(self.leader.validate(&step), Ok(()));
        self.scratch.clear();
        self.leader.step(&step, &mut self.scratch);
        let _ = writeln!(self.body, "{step}");
        self.commands += 1;
    }

    /// A comment line in the trace, for the reader.
    fn note(&mut self, text: &str) {
        let _ = writeln!(self.body, "# {text}");
    }

    fn append(&mut self, n: u64) {
        self.run(Command::Append(n.max(1)));
    }

    fn produce(&mut self, n: u64) {
        self.run(Command::Produce(n.max(1)));
    }

    /// A write of `n` records: PRODUCE with probability `produce` percent, else APPEND.
    fn write(&mut self, r: &mut Rng, n: u64, produce: u64) {
        if r.percent(produce) {
            self.produce(n);
        } else {
            self.append(n);
        }
    }

    /// A fetch; the offset is clamped to the leader's LEO, so the trace stays valid.
    fn fetch(&mut self, id: u64, offset: u64) {
        let offset = offset.min(self.leader.leo());
        self.run(Command::Fetch {
            follower: id,
            offset,
        });
    }

    /// A fetch asking for everything the leader has (caught up now).
    fn fetch_all(&mut self, id: u64) {
        let l = self.leader.leo();
        self.fetch(id, l);
    }

    fn status(&mut self) {
        self.run(Command::Status);
    }

    fn after(&mut self, dt: u64) {
        self.t = self.t.saturating_add(dt);
    }

    fn at_least(&mut self, t: u64) {
        self.t = self.t.max(t);
    }

    fn leo(&self) -> u64 {
        self.leader.leo()
    }

    fn hw(&self) -> u64 {
        self.leader.hw()
    }

    fn in_isr(&self, id: u64) -> bool {
        self.leader.isr().contains(&id)
    }

    fn isr_len(&self) -> usize {
        self.leader.isr().len()
    }

    fn state(&self, id: u64) -> FollowerState {
        self.leader.follower(id).copied().unwrap_or_default()
    }
}

/// A pause of about `lo..=hi` quarters of LAG_MAX, with jitter (at least 1 ms when LAG_MAX > 0).
fn quarters(r: &mut Rng, lag: u64, lo: u64, hi: u64) -> u64 {
    let part = r.range(lo, hi);
    if lag == 0 {
        return r.range(0, 1);
    }
    let base = (lag * part / 4).max(1);
    r.range(base.saturating_sub(base / 4).max(1), base)
}

/// A short pause: often 0 (same millisecond), otherwise up to a tenth of LAG_MAX.
fn jitter(r: &mut Rng, lag: u64) -> u64 {
    if r.percent(40) {
        0
    } else {
        r.range(0, (lag / 10).max(1))
    }
}

const REPLICAS_HELP: &str = "number of replicas, the leader included";
const LAG_HELP: &str = "replica.lag.time.max.ms (LAG_MAX)";
const MIN_ISR_HELP: &str = "min.insync.replicas (MIN_ISR)";

const fn replicas(min: u64, auto: &'static [u64]) -> Param {
    Param {
        name: "replicas",
        help: REPLICAS_HELP,
        kind: Kind::Int { min, max: 7, auto },
    }
}

const fn lag_max(auto: &'static [u64]) -> Param {
    Param {
        name: "lag_max",
        help: LAG_HELP,
        kind: Kind::Int {
            min: 0,
            max: 1_000_000,
            auto,
        },
    }
}

const fn min_isr(auto: &'static [u64]) -> Param {
    Param {
        name: "min_isr",
        help: MIN_ISR_HELP,
        kind: Kind::Int {
            min: 1,
            max: 8,
            auto,
        },
    }
}

const fn int(
    name: &'static str,
    help: &'static str,
    min: u64,
    max: u64,
    auto: &'static [u64],
) -> Param {
    Param {
        name,
        help,
        kind: Kind::Int { min, max, auto },
    }
}

const fn word(
    name: &'static str,
    help: &'static str,
    words: &'static [&'static str],
    auto: &'static [&'static str],
) -> Param {
    Param {
        name,
        help,
        kind: Kind::Word { words, auto },
    }
}

static GENERATORS: &[Generator] = &[
    Generator {
        name: "constant-load",
        description: "Followers under constant load: the leader writes every round and each follower, at every fetch, asks for exactly what the leader had at its previous fetch (mode exact), a bit more (more) or a bit less (less). Only the second caught-up branch keeps them in the ISR.",
        aims: &[
            "caught-up-equality-only",
            "caught-up-strict-previous",
            "caught-up-uses-fetch-now",
            "caught-up-stale-leader-leo",
            "isr-order-sorted",
        ],
        params: &[
            replicas(2, &[2, 3, 3, 4, 5]),
            lag_max(&[10, 100, 500, 1000, 30000]),
            min_isr(&[1, 2]),
            int(
                "rounds",
                "rounds of write-then-fetch",
                1,
                100_000,
                &[8, 10, 12, 16],
            ),
            word(
                "mode",
                "what each fetch asks for, relative to the leader's LEO at the follower's previous fetch",
                &["exact", "more", "less", "mixed"],
                &["exact", "exact", "more", "mixed"],
            ),
            int("records", "most records per write", 1, 1000, &[1, 2, 3, 5]),
            int(
                "produce",
                "percent of writes that are acks=all PRODUCE requests",
                0,
                100,
                &[0, 25, 50],
            ),
        ],
        build: constant_load,
    },
    Generator {
        name: "stall",
        description: "A follower stalls while the leader keeps writing: it stops fetching (silent) or keeps fetching without progress (stuck). STATUS checks run around the moment its lag passes LAG_MAX; then it may recover.",
        aims: &[
            "shrink-by-fetch-time",
            "caught-up-stale-leader-leo",
            "shrink-inclusive",
            "hw-not-on-shrink",
            "hw-all-replicas",
        ],
        params: &[
            replicas(2, &[2, 3, 4]),
            lag_max(&[1, 10, 100, 500]),
            min_isr(&[1, 2]),
            word(
                "mode",
                "how the follower stalls (both: one silent and one stuck, with two or more followers)",
                &["silent", "stuck", "both"],
                &["silent", "stuck", "both"],
            ),
            int(
                "healthy",
                "healthy rounds before the stall",
                0,
                10_000,
                &[2, 3, 4],
            ),
            int(
                "probes",
                "STATUS checks after the stall",
                1,
                10_000,
                &[4, 5, 6],
            ),
            int(
                "recover",
                "1: the stalled followers catch up again at the end",
                0,
                1,
                &[0, 1],
            ),
            int(
                "produce",
                "percent of writes that are acks=all PRODUCE requests",
                0,
                100,
                &[0, 30],
            ),
        ],
        build: stall,
    },
    Generator {
        name: "lag-boundary",
        description: "Followers whose lag at a STATUS check is exactly LAG_MAX (stays: the check is strictly greater), one below (stays) or one above (leaves). Removing one may make the HW jump and answer waiting requests.",
        aims: &[
            "shrink-inclusive",
            "hw-not-on-shrink",
            "hw-all-replicas",
            "ack-all-replicas",
        ],
        params: &[
            replicas(2, &[2, 3, 4, 5]),
            lag_max(&[1, 2, 10, 100, 500, 30000]),
            min_isr(&[1, 2, 3]),
            word(
                "which",
                "the lag of the follower under test at the STATUS: at LAG_MAX, one below, one above, or all three at once",
                &["at", "below", "above", "all"],
                &["all", "all", "at", "above"],
            ),
            int(
                "rounds",
                "rounds, each ending with the STATUS under test",
                1,
                10_000,
                &[1, 2, 3],
            ),
            int(
                "produce",
                "percent of writes that are acks=all PRODUCE requests",
                0,
                100,
                &[0, 50],
            ),
        ],
        build: lag_boundary,
    },
    Generator {
        name: "slow-follower",
        description: "A slow follower holds the HW back (acks=all requests wait for it) until it falls more than LAG_MAX behind and leaves the ISR: then the HW jumps to the smallest LEO of the remaining members and the waiting requests are answered.",
        aims: &[
            "hw-not-on-shrink",
            "hw-all-replicas",
            "ack-all-replicas",
            "ack-first-record",
            "rejoin-early",
        ],
        params: &[
            replicas(2, &[3, 3, 4, 5]),
            lag_max(&[10, 100, 500, 1000]),
            min_isr(&[1, 2]),
            int(
                "rounds",
                "rounds of writes and fetches",
                1,
                100_000,
                &[6, 8, 10],
            ),
            int(
                "produce",
                "percent of writes that are acks=all PRODUCE requests",
                0,
                100,
                &[50, 100],
            ),
            int(
                "catch_up",
                "1: the slow follower catches up and rejoins at the end",
                0,
                1,
                &[0, 1],
            ),
        ],
        build: slow_follower,
    },
    Generator {
        name: "rejoin",
        description: "A follower leaves the ISR, then fetches with its LEO below the HW (stays out), exactly at the HW (rejoins), above it, or at the leader's LEO (rejoins).",
        aims: &[
            "rejoin-early",
            "rejoin-needs-leader-leo",
            "rejoin-never",
            "rejoin-above-hw-strict",
        ],
        params: &[
            replicas(2, &[2, 3, 3, 4]),
            lag_max(&[0, 1, 10, 100, 500]),
            min_isr(&[1, 2]),
            word(
                "at",
                "where the rejoin attempt's offset is (all: each in turn)",
                &["below", "at", "above", "leo", "all"],
                &["all", "all", "at", "below", "above"],
            ),
            int(
                "produce",
                "percent of writes that are acks=all PRODUCE requests",
                0,
                100,
                &[0, 30],
            ),
        ],
        build: rejoin,
    },
    Generator {
        name: "truncation",
        description: "A follower in the ISR fetches from a smaller offset than before (its log was truncated). The HW never moves backwards, even though the smallest LEO in the ISR just dropped.",
        aims: &["hw-can-decrease", "rejoin-early"],
        params: &[
            replicas(2, &[2, 3, 4]),
            lag_max(&[10, 100, 500, 1000]),
            min_isr(&[1, 2]),
            int("events", "truncations", 1, 10_000, &[1, 2, 3]),
            int(
                "depth",
                "most records a truncation goes back",
                1,
                1000,
                &[1, 2, 3, 5],
            ),
            int(
                "produce",
                "percent of writes that are acks=all PRODUCE requests",
                0,
                100,
                &[0, 40],
            ),
        ],
        build: truncation,
    },
    Generator {
        name: "isr-alone",
        description: "Every follower falls silent and the ISR shrinks to the leader alone; then the leader appends and receives acks=all requests while alone (the HW follows its own LEO; MIN_ISR decides whether writes are accepted), and the followers may come back.",
        aims: &[
            "hw-not-on-append",
            "min-isr-off-by-one",
            "min-isr-ignored",
            "refused-still-appends",
            "writes-off-by-one",
            "writes-counts-replicas",
            "shrink-removes-leader",
        ],
        params: &[
            replicas(1, &[1, 2, 3, 4]),
            lag_max(&[0, 1, 10, 100]),
            min_isr(&[1, 2, 3]),
            int(
                "ops",
                "writes and STATUS checks while alone",
                1,
                100_000,
                &[4, 6, 8],
            ),
            int(
                "recover",
                "1: the followers come back at the end",
                0,
                1,
                &[0, 1],
            ),
        ],
        build: isr_alone,
    },
    Generator {
        name: "acks-all",
        description: "acks=all requests with MIN_ISR above, at and below the ISR size (refused with NOT_ENOUGH_REPLICAS or accepted), the accepted ones answered by a fetch that moves the HW past them, by a shrink that makes the HW jump, or never.",
        aims: &[
            "ack-immediate",
            "ack-first-record",
            "ack-all-replicas",
            "min-isr-off-by-one",
            "min-isr-ignored",
            "refused-still-appends",
            "shrink-on-every-command",
        ],
        params: &[
            replicas(2, &[2, 3, 4]),
            lag_max(&[1, 10, 100, 500]),
            min_isr(&[1, 2, 3]),
            word(
                "isr",
                "the ISR size when requests arrive, relative to MIN_ISR (all: each in turn)",
                &["above", "at", "below", "all"],
                &["all"],
            ),
            word(
                "answer",
                "what answers the waiting requests (mixed: a fetch, then a shrink, then never)",
                &["fetch", "shrink", "never", "mixed"],
                &["mixed", "fetch", "shrink"],
            ),
            int(
                "requests",
                "acks=all requests per phase",
                1,
                1000,
                &[2, 3, 4],
            ),
        ],
        build: acks_all,
    },
    Generator {
        name: "mixed",
        description: "A long trace mixing every situation: followers that keep up, lag, stall, truncate, leave and rejoin; appends and acks=all requests; STATUS checks at ordinary times and exactly at lag boundaries; many commands in the same millisecond.",
        aims: &[],
        params: &[
            replicas(1, &[1, 2, 3, 3, 4, 5, 7]),
            lag_max(&[0, 1, 5, 100, 500, 30000]),
            min_isr(&[1, 2, 3]),
            int(
                "commands",
                "number of timed commands",
                1,
                10_000_000,
                &[2000],
            ),
        ],
        build: mixed,
    },
];

fn constant_load(r: &mut Rng, p: &Params, b: &mut Builder) {
    let lag = b.lag();
    let rounds = p.int("rounds");
    let records = p.int("records");
    let produce = p.int("produce");
    let mode = p.word("mode").to_string();
    let followers = b.followers();
    for round in 0..rounds {
        let n = r.range(1, records);
        b.write(r, n, produce);
        b.after(jitter(r, lag));
        let mut order = followers.clone();
        r.shuffle(&mut order);
        for &f in &order {
            let st = b.state(f);
            let prev = st.last_fetch_leader_leo;
            let l = b.leo();
            let m = match mode.as_str() {
                "mixed" => r.pick(&["exact", "exact", "more", "less"]),
                m => m,
            };
            // A follower that has fallen out of the ISR usually catches up (asks for
            // everything), which lets it rejoin.
            let m = if !b.in_isr(f) && r.percent(70) {
                "all"
            } else {
                m
            };
            let o = match m {
                "all" => l,
                "more" if l > prev + 1 => r.range(prev + 1, l - 1),
                "more" => l,
                "less" => prev.saturating_sub(r.range(1, 2)).max(st.leo.min(prev)),
                _ => prev,
            };
            b.fetch(f, o);
            b.after(jitter(r, lag));
        }
        if round + 1 == rounds || r.percent(75) {
            b.status();
        }
        // Most rounds are well within LAG_MAX; now and then one takes about LAG_MAX, so that
        // crediting the previous fetch's time and crediting now give different answers.
        let long = r.percent(15);
        b.after(if long {
            quarters(r, lag, 4, 4)
        } else {
            quarters(r, lag, 1, 2)
        });
    }
}

fn stall(r: &mut Rng, p: &Params, b: &mut Builder) {
    let lag = b.lag();
    let produce = p.int("produce");
    let followers = b.followers();
    let mode = p.word("mode");
    let stalled: Vec<(u64, bool)> = {
        let mut fs = followers.clone();
        r.shuffle(&mut fs);
        match mode {
            "both" if fs.len() >= 2 => vec![(fs[0], false), (fs[1], true)],
            "silent" => vec![(fs[0], false)],
            _ => vec![(fs[0], true)],
        }
    };
    let is_stalled = |f: u64| stalled.iter().any(|s| s.0 == f);
    // Healthy rounds: everyone asks for everything or for the leader's LEO at its previous fetch.
    for _ in 0..p.int("healthy") {
        let n = r.range(1, 3);
        b.write(r, n, produce);
        b.after(jitter(r, lag));
        for &f in &followers {
            if r.percent(50) {
                b.fetch_all(f);
            } else {
                let prev = b.state(f).last_fetch_leader_leo;
                b.fetch(f, prev);
            }
        }
        b.status();
        b.after(quarters(r, lag, 1, 2));
    }
    b.note("from here some followers stall");
    let n = r.range(1, 3);
    b.write(r, n, produce);
    for &(f, stuck) in &stalled {
        if stuck {
            let o = b.state(f).leo;
            b.fetch(f, o);
        }
    }
    // Probe around each stalled follower's deadline: lastCaughtUp + LAG_MAX (+1 leaves).
    let mut probes: Vec<u64> = Vec::new();
    for &(f, _) in &stalled {
        let c = b.state(f).last_caught_up;
        for d in [0i64, -1, 1, 2] {
            let t = (c + lag) as i64 + d;
            if t >= b.t as i64 {
                probes.push(t as u64);
            }
        }
    }
    let extra = p.int("probes");
    while (probes.len() as u64) < extra {
        let last = probes.iter().copied().max().unwrap_or(b.t);
        probes.push(last + quarters(r, lag, 1, 3));
    }
    probes.sort_unstable();
    probes.dedup();
    probes.truncate(extra.max(4) as usize);
    for t in probes {
        // Between probes: the leader writes, stuck followers ask again for what they have.
        let mid = b.t + (t.saturating_sub(b.t)) / 2;
        b.at_least(mid);
        let n = r.range(1, 2);
        b.write(r, n, produce);
        for &(f, stuck) in &stalled {
            if stuck && r.percent(80) {
                let o = b.state(f).leo;
                b.fetch(f, o);
            }
        }
        b.at_least(t);
        for &f in &followers {
            if !is_stalled(f) {
                b.fetch_all(f);
            }
        }
        b.status();
    }
    if p.int("recover") == 1 {
        b.after(jitter(r, lag) + 1);
        b.note("the stalled followers catch up");
        for &(f, _) in &stalled {
            b.fetch_all(f);
        }
        b.status();
        b.produce(1);
        for &f in &followers {
            b.fetch_all(f);
        }
        b.status();
    }
}

fn lag_boundary(r: &mut Rng, p: &Params, b: &mut Builder) {
    let lag = b.lag();
    let produce = p.int("produce");
    let followers = b.followers();
    let which = p.word("which");
    for _ in 0..p.int("rounds") {
        // Everyone catches up (and rejoins if it had left).
        let n = r.range(1, 3);
        b.write(r, n, produce);
        for &f in &followers {
            b.fetch_all(f);
        }
        b.after(quarters(r, lag, 1, 1));
        // Each follower gets the lag it will have at the STATUS.
        let mut kinds: Vec<&str> = match which {
            "all" => vec!["above", "at", "below"],
            w => vec![w],
        };
        if lag == 0 {
            kinds.retain(|k| *k != "below");
            if kinds.is_empty() {
                kinds.push("at");
            }
        }
        r.shuffle(&mut kinds);
        let mut fs = followers.clone();
        r.shuffle(&mut fs);
        let mut lags: Vec<(u64, u64)> = fs
            .iter()
            .enumerate()
            .map(|(i, &f)| {
                let d = if i < kinds.len() {
                    match kinds[i] {
                        "above" => lag + 1,
                        "at" => lag,
                        _ => lag - 1,
                    }
                } else {
                    r.range(0, lag / 2)
                };
                (f, d)
            })
            .collect();
        // The STATUS time: after every catch-up fetch, which happen oldest (largest lag) first.
        lags.sort_by_key(|&(f, d)| (std::cmp::Reverse(d), f));
        let start = b.t;
        let status_t = start + lags[0].1 + 1;
        for (i, &(f, d)) in lags.iter().enumerate() {
            b.at_least(status_t - d);
            if i > 0 && r.percent(60) {
                let n = r.range(1, 2);
                b.write(r, n, produce);
            }
            b.fetch_all(f);
        }
        if r.percent(70) {
            let n = r.range(1, 3);
            b.write(r, n, produce);
        }
        b.at_least(status_t);
        b.status();
        b.after(jitter(r, lag));
    }
    b.after(1);
    for &f in &followers {
        b.fetch_all(f);
    }
    b.status();
}

fn slow_follower(r: &mut Rng, p: &Params, b: &mut Builder) {
    let lag = b.lag();
    let produce = p.int("produce");
    let followers = b.followers();
    let slow = r.pick(&followers);
    for round in 0..p.int("rounds") {
        let n = r.range(2, 4);
        b.write(r, n, produce);
        b.after(jitter(r, lag));
        for &f in &followers {
            if f == slow {
                // One or two records more each time: never what the leader had at its
                // previous fetch.
                let o = b.state(f).leo + r.range(1, 2);
                b.fetch(f, o);
            } else {
                b.fetch_all(f);
            }
            b.after(jitter(r, lag));
        }
        if round == 0 {
            b.note(&format!("follower {slow} is slow: it holds the HW back"));
        }
        b.status();
        b.after(quarters(r, lag, 1, 3));
    }
    if p.int("catch_up") == 1 {
        b.note(&format!("follower {slow} catches up"));
        b.fetch_all(slow);
        b.status();
        b.produce(1);
        b.after(1);
        for &f in &followers {
            b.fetch_all(f);
        }
        b.status();
    }
}

fn rejoin(r: &mut Rng, p: &Params, b: &mut Builder) {
    let lag = b.lag();
    let produce = p.int("produce");
    let followers = b.followers();
    let f = r.pick(&followers);
    let others: Vec<u64> = followers.iter().copied().filter(|&g| g != f).collect();
    let attempts: Vec<&str> = match p.word("at") {
        "all" => vec!["below", "at", "above", "leo"],
        w => vec![w],
    };
    let n = r.range(2, 4);
    b.write(r, n, produce);
    for &g in &followers {
        b.fetch_all(g);
    }
    b.status();
    for attempt in attempts {
        // Follower f goes silent until it leaves the ISR; the others keep up.
        let n = r.range(1, 3);
        b.write(r, n, produce);
        b.after(jitter(r, lag));
        for &g in &others {
            b.fetch_all(g);
        }
        let deadline = b.state(f).last_caught_up + lag + 1;
        b.at_least(deadline);
        for &g in &others {
            b.fetch_all(g);
        }
        b.status();
        // The leader writes; the others fetch part of it, so that HW < leader LEO.
        let n = r.range(3, 5);
        b.write(r, n, produce);
        b.after(jitter(r, lag));
        let l = b.leo();
        for &g in &others {
            let o = r.range(b.hw() + 1, l.saturating_sub(1));
            b.fetch(g, o);
        }
        let hw = b.hw();
        let l = b.leo();
        let o = match attempt {
            "below" => r.range(
                b.state(f).leo.min(hw.saturating_sub(1)),
                hw.saturating_sub(1),
            ),
            "at" => hw,
            "above" if hw + 1 < l => r.range(hw + 1, l - 1),
            _ => l,
        };
        let place = match attempt {
            "leo" => "at the leader's LEO",
            "below" => "below the HW",
            "above" => "above the HW",
            _ => "at the HW",
        };
        b.note(&format!("follower {f} tries to rejoin, {place}"));
        b.fetch(f, o);
        b.status();
        if r.percent(50) {
            b.produce(1);
        }
        b.after(jitter(r, lag));
    }
    b.after(1);
    for &g in &followers {
        b.fetch_all(g);
    }
    b.status();
}

fn truncation(r: &mut Rng, p: &Params, b: &mut Builder) {
    let lag = b.lag();
    let produce = p.int("produce");
    let depth = p.int("depth");
    let followers = b.followers();
    for _ in 0..2 {
        let n = r.range(2, 4);
        b.write(r, n, produce);
        for &f in &followers {
            b.fetch_all(f);
        }
        b.status();
        b.after(quarters(r, lag, 1, 1));
    }
    for _ in 0..p.int("events") {
        let in_isr: Vec<u64> = followers.iter().copied().filter(|&f| b.in_isr(f)).collect();
        let f = if in_isr.is_empty() {
            r.pick(&followers)
        } else {
            r.pick(&in_isr)
        };
        let o = b.state(f).leo.saturating_sub(r.range(1, depth));
        b.note(&format!("follower {f} truncates its log"));
        b.fetch(f, o);
        b.status();
        let n = r.range(1, 3);
        b.write(r, n, produce);
        b.after(jitter(r, lag));
        for &g in &followers {
            if g != f {
                b.fetch_all(g);
            }
        }
        b.status();
        // It stays behind for a while (maybe longer than LAG_MAX), then catches up.
        b.after(quarters(r, lag, 2, 6));
        let o = b.state(f).leo + 1;
        b.fetch(f, o);
        for &g in &followers {
            if g != f {
                b.fetch_all(g);
            }
        }
        b.status();
        b.after(jitter(r, lag));
        b.fetch_all(f);
        b.status();
        b.after(quarters(r, lag, 1, 1));
    }
}

fn isr_alone(r: &mut Rng, p: &Params, b: &mut Builder) {
    let lag = b.lag();
    let followers = b.followers();
    let n = r.range(1, 3);
    b.write(r, n, 50);
    for &f in &followers {
        b.fetch_all(f);
    }
    b.status();
    b.note("the followers fall silent");
    b.write(r, n, 50);
    b.after(lag + 1);
    b.status();
    let ops = p.int("ops");
    for i in 0..ops {
        b.after(jitter(r, lag));
        let n = r.range(1, 3);
        match i % 3 {
            0 => b.produce(n),
            1 if r.percent(50) => b.append(n),
            1 => b.produce(n),
            _ => b.status(),
        }
    }
    b.status();
    if p.int("recover") == 1 {
        b.after(1);
        b.note("the followers come back");
        for &f in &followers {
            b.fetch_all(f);
        }
        b.status();
        b.produce(1);
        b.status();
    }
}

fn acks_all(r: &mut Rng, p: &Params, b: &mut Builder) {
    let lag = b.lag();
    let followers = b.followers();
    let n = b.config.replicas.len() as u64;
    let m = b.config.min_isr;
    let requests = p.int("requests");
    let phases: Vec<&str> = match p.word("isr") {
        "all" => vec!["above", "at", "below"],
        w => vec![w],
    };
    let count = phases.len();
    for (i, phase) in phases.into_iter().enumerate() {
        // The wanted ISR size relative to MIN_ISR, clamped to what the replicas allow.
        let k = match phase {
            "above" => m + 1,
            "at" => m,
            _ => m.saturating_sub(1),
        }
        .clamp(1, n) as usize;
        set_isr_size(r, b, k);
        b.note(&format!("ISR size {}, MIN_ISR {m}", b.isr_len()));
        let answer = match p.word("answer") {
            "mixed" if i + 1 == count => "never",
            "mixed" => ["fetch", "shrink"][i % 2],
            a => a,
        };
        for _ in 0..requests {
            b.after(jitter(r, lag));
            let n = r.range(1, 3);
            b.produce(n);
        }
        b.after(1);
        let members: Vec<u64> = followers.iter().copied().filter(|&f| b.in_isr(f)).collect();
        match answer {
            "fetch" => {
                // Partial fetches first (somewhere inside the waiting records, so a request may
                // have its first record below the HW but not its last), then everything.
                for &f in &members {
                    let (hw, l) = (b.hw(), b.leo());
                    let o = r.range(hw + 1, l.saturating_sub(1));
                    b.fetch(f, o);
                }
                b.after(jitter(r, lag));
                for &f in &members {
                    b.fetch_all(f);
                }
                b.status();
            }
            "shrink" if !members.is_empty() => {
                // One member stays behind; the others catch up; the check removes it.
                let lagger = r.pick(&members);
                let deadline = b.state(lagger).last_caught_up + lag + 1;
                for &f in &members {
                    if f != lagger {
                        b.fetch_all(f);
                    }
                }
                b.at_least(deadline);
                for &f in &members {
                    if f != lagger {
                        b.fetch_all(f);
                    }
                }
                b.status();
            }
            _ => b.status(),
        }
        b.after(jitter(r, lag));
    }
}

/// Brings the ISR to `k` members: followers out of it rejoin by catching up; followers in it fall
/// silent until a STATUS check removes them.
fn set_isr_size(r: &mut Rng, b: &mut Builder, k: usize) {
    let lag = b.lag();
    let followers = b.followers();
    let mut inside: Vec<u64> = followers.iter().copied().filter(|&f| b.in_isr(f)).collect();
    let outside: Vec<u64> = followers
        .iter()
        .copied()
        .filter(|&f| !b.in_isr(f))
        .collect();
    let mut size = inside.len() + 1;
    for &f in &outside {
        if size >= k {
            break;
        }
        b.fetch_all(f);
        if b.in_isr(f) {
            inside.push(f);
            size += 1;
        }
    }
    if size > k {
        r.shuffle(&mut inside);
        let (stay, go) = inside.split_at(k - 1);
        let deadline = go
            .iter()
            .map(|&f| b.state(f).last_caught_up)
            .max()
            .unwrap_or(0)
            + lag
            + 1;
        let n = r.range(1, 2);
        b.append(n);
        for &f in stay {
            b.fetch_all(f);
        }
        b.at_least(deadline);
        for &f in stay {
            b.fetch_all(f);
        }
    }
    b.status();
}

/// What a follower does in the long mixed trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Habit {
    /// Asks for everything.
    Full,
    /// Asks for the leader's LEO at its previous fetch.
    Exact,
    /// A bit more than that.
    More,
    /// A bit less than that.
    Less,
    /// Asks for what it has (no progress).
    Stuck,
    /// Does not fetch.
    Silent,
    /// One or two records more than it has.
    Slow,
    /// Goes back a little, once, then asks for everything.
    Truncate,
}

const HABITS: &[Habit] = &[
    Habit::Full,
    Habit::Full,
    Habit::Exact,
    Habit::Exact,
    Habit::More,
    Habit::Less,
    Habit::Stuck,
    Habit::Silent,
    Habit::Slow,
    Habit::Truncate,
];

fn mixed(r: &mut Rng, p: &Params, b: &mut Builder) {
    let lag = b.lag();
    let followers = b.followers();
    let mut habits: Vec<Habit> = followers.iter().map(|_| r.pick(HABITS)).collect();
    let target = p.int("commands") as usize;
    while b.commands < target {
        // Time: mostly the same millisecond or a little later, sometimes exactly LAG_MAX or
        // LAG_MAX + 1 later, sometimes much later.
        let dt = match r.below(100) {
            0..35 => 0,
            35..45 => 1,
            45..75 => r.range(0, (lag / 4).max(1)),
            75..80 => lag,
            80..85 => lag + 1,
            _ => r.range(lag / 2, 2 * lag + 2),
        };
        b.after(dt);
        for h in habits.iter_mut() {
            if r.percent(2) {
                *h = r.pick(HABITS);
            }
        }
        let roll = r.below(100);
        if roll < 22 || (followers.is_empty() && roll < 70) {
            let n = if r.percent(90) {
                r.range(1, 4)
            } else {
                r.range(5, 50)
            };
            b.write(r, n, 40);
        } else if roll < 85 && !followers.is_empty() {
            let i = r.below(followers.len() as u64) as usize;
            let f = followers[i];
            let st = b.state(f);
            let l = b.leo();
            let prev = st.last_fetch_leader_leo;
            let o = match habits[i] {
                Habit::Full => l,
                Habit::Exact => prev,
                Habit::More => r.range(prev, l),
                Habit::Less => prev.saturating_sub(r.range(1, 3)),
                Habit::Stuck => st.leo,
                Habit::Silent => continue,
                Habit::Slow => st.leo + r.range(1, 2),
                Habit::Truncate => {
                    habits[i] = Habit::Full;
                    st.leo.saturating_sub(r.range(1, 4))
                }
            };
            b.fetch(f, o);
        } else {
            b.status();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Trace;

    #[test]
    fn splitmix64_known_answers() {
        // The reference sequence for seed 0 (Vigna's splitmix64.c).
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn every_generator_is_valid_and_deterministic() {
        for g in registry() {
            for seed in 0..40 {
                let a = g.generate(seed, &[]).unwrap();
                let b = g.generate(seed, &[]).unwrap();
                assert_eq!(a, b, "{} seed {seed}", g.name);
                let t = Trace::parse(g.name, &a.text)
                    .unwrap_or_else(|e| panic!("{} seed {seed}: {e}\n{}", g.name, a.text));
                assert_eq!(t.steps.len(), a.commands);
                assert!(a.commands > 0, "{} seed {seed}", g.name);
            }
        }
    }

    #[test]
    fn given_parameters_do_not_shift_the_others() {
        let g = find("constant-load").unwrap();
        let all = g.resolve(5, &[]).unwrap();
        let one = g.resolve(5, &[("rounds".into(), Value::Int(3))]).unwrap();
        for (k, v) in &all.0 {
            if k != "rounds" {
                assert_eq!(one.0.get(k), Some(v), "{k}");
            }
        }
        assert_eq!(one.int("rounds"), 3);
    }

    #[test]
    fn replica_ids_are_unsorted_with_a_leader_that_is_not_the_smallest() {
        let mut r = Rng::new(1);
        for n in 1..=7 {
            for _ in 0..50 {
                let ids = replica_ids(&mut r, n);
                assert_eq!(ids.len(), n);
                let mut s = ids.clone();
                s.sort_unstable();
                s.dedup();
                assert_eq!(s.len(), n, "{ids:?}");
                if n >= 2 {
                    assert_ne!(ids[0], s[0], "{ids:?}");
                }
            }
        }
    }

    #[test]
    fn bad_parameters_are_explained() {
        let e = parse_params("stall", &["mode=sleepy".into()]).unwrap_err();
        assert!(e.contains("silent|stuck|both"), "{e}");
        let e = parse_params("stall", &["nope=1".into()]).unwrap_err();
        assert!(
            e.contains("no parameter `nope`") && e.contains("healthy"),
            "{e}"
        );
        let e = parse_params("stall", &["replicas=9".into()]).unwrap_err();
        assert!(e.contains("2..=7"), "{e}");
        let e = parse_params("stall", &["replicas".into()]).unwrap_err();
        assert!(e.contains("KEY=VALUE"), "{e}");
        let e = generate("nope", 0, &[]).unwrap_err();
        assert!(e.contains("constant-load"), "{e}");
    }
}
