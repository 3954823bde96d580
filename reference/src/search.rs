//! Exhaustive search for minimal witnesses: the shortest trace on which two leaders (each a set
//! of mistakes) print different output.
//!
//! The search is breadth-first by number of commands over a small [`Domain`]: a few headers (up
//! to 3 replicas, ids not always sorted), record counts 1 and 2, every fetch offset up to the
//! leader's LEO, and time steps of 0, 1, LAG_MAX and LAG_MAX+1. All machines run in lockstep
//! along shared prefixes. Two prefixes that leave every machine in the same state (times seen as
//! ages, capped where they stop mattering) have the same futures, so only one is expanded: that
//! is what keeps the search small. A pair's first divergence found at depth `d` is a shortest
//! witness for that header, because every shorter trace was already expanded.
//!
//! A witness against the correct leader must also make the correct leader print at least one
//! line: on a trace where the expected output is empty, a program that prints nothing at all
//! would pass, so such a trace grades nobody. While the correct leader is still silent along a
//! path, every machine's whole output so far is part of the state (a mistake may print early
//! and the correct leader the same lines later); once it has printed, outputs that agreed so far
//! are compared command by command.

use std::collections::{HashMap, HashSet};

use crate::faults::FaultSet;
use crate::leader::Leader;
use crate::trace::{Command, Config, Step, Trace};

/// The space searched.
#[derive(Debug, Clone)]
pub struct Domain {
    /// Headers to try, in order of preference (a tie in length keeps the earlier header).
    pub configs: Vec<Config>,
    /// Most commands in a trace.
    pub max_len: usize,
    /// Record counts for APPEND and PRODUCE.
    pub counts: Vec<u64>,
    /// The correct leader's LEO is kept at or below this.
    pub max_leo: u64,
}

impl Default for Domain {
    fn default() -> Self {
        let mut configs = Vec::new();
        let replica_lists: [&[u64]; 5] = [&[0], &[0, 1], &[1, 0], &[0, 1, 2], &[2, 0, 1]];
        for replicas in replica_lists {
            for lag_max in [0, 1, 2] {
                for min_isr in 1..=3 {
                    configs.push(Config {
                        replicas: replicas.to_vec(),
                        lag_max,
                        min_isr,
                    });
                }
            }
        }
        Domain {
            configs,
            max_len: 6,
            counts: vec![1, 2],
            max_leo: 3,
        }
    }
}

/// The outcome for one pair of machines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Witness {
    /// The shortest trace found that tells them apart.
    Found(Trace),
    /// No trace in the domain tells them apart.
    NoneWithin {
        /// The length bound searched.
        max_len: usize,
    },
}

impl Witness {
    /// The trace, if any.
    pub fn trace(&self) -> Option<&Trace> {
        match self {
            Witness::Found(t) => Some(t),
            Witness::NoneWithin { .. } => None,
        }
    }
}

struct Node {
    parent: usize,
    step: Step,
}

/// A node of the frontier: its id, its time, the machines, and the outputs so far while the
/// correct leader is silent.
type Frontier = (usize, u64, Vec<Leader>, Option<Vec<Vec<u8>>>);

/// Finds, for every requested pair `(a, b)` of indexes into `sets`, the shortest trace in `domain`
/// on which the two leaders' outputs differ.
///
/// The headers are shared out among the cores (header `i` to thread `i % threads`); each thread
/// keeps, per pair, the first header in its share with the shortest witness, and the merge
/// keeps the shortest over all, the earlier header on a tie. That is exactly what one thread
/// going through the headers in order finds, so the result does not depend on the core count.
pub fn witnesses(sets: &[FaultSet], pairs: &[(usize, usize)], domain: &Domain) -> Vec<Witness> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, domain.configs.len().max(1));
    let shares: Vec<Vec<Option<(usize, Trace)>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                scope.spawn(move || {
                    let share = domain
                        .configs
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % threads == k);
                    witnesses_in(sets, pairs, domain, share)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    (0..pairs.len())
        .map(|p| {
            shares
                .iter()
                .filter_map(|share| share[p].as_ref())
                .min_by_key(|(config, t)| (t.steps.len(), *config))
                .map_or(
                    Witness::NoneWithin {
                        max_len: domain.max_len,
                    },
                    |(_, t)| Witness::Found(t.clone()),
                )
        })
        .collect()
}

/// The search over some of the headers, in order: per pair, the header index and the witness.
fn witnesses_in<'a>(
    sets: &[FaultSet],
    pairs: &[(usize, usize)],
    domain: &Domain,
    configs: impl Iterator<Item = (usize, &'a Config)>,
) -> Vec<Option<(usize, Trace)>> {
    let mut best: Vec<Option<(usize, Trace)>> = vec![None; pairs.len()];
    for (index, config) in configs {
        let open: Vec<usize> = (0..pairs.len())
            .filter(|&p| best[p].as_ref().is_none_or(|(_, t)| t.steps.len() > 1))
            .collect();
        if open.is_empty() {
            break;
        }
        let bound = |p: usize| {
            best[p]
                .as_ref()
                .map_or(domain.max_len, |(_, t)| t.steps.len() - 1)
        };
        let found = search_config(sets, pairs, &open, config, domain, bound);
        for (p, trace) in found {
            best[p] = Some((index, trace));
        }
    }
    best
}

fn search_config(
    sets: &[FaultSet],
    pairs: &[(usize, usize)],
    open: &[usize],
    config: &Config,
    domain: &Domain,
    bound: impl Fn(usize) -> usize,
) -> Vec<(usize, Trace)> {
    let mut open: Vec<usize> = open.to_vec();
    let max_depth = open.iter().map(|&p| bound(p)).max().unwrap_or(0);
    // Only machines in an open pair need to run; index 0 is always the correct leader (the
    // validator).
    let mut used: Vec<usize> = open
        .iter()
        .flat_map(|&p| [pairs[p].0, pairs[p].1])
        .collect();
    used.sort_unstable();
    used.dedup();
    let mut machines_sets = vec![FaultSet::NONE];
    machines_sets.extend(used.iter().map(|&i| sets[i]));
    let slot: HashMap<usize, usize> = used.iter().enumerate().map(|(k, &i)| (i, k + 1)).collect();
    let lag = config.lag_max;
    let horizon = lag + 1;
    let mut deltas = vec![0, 1, lag, lag + 1];
    deltas.sort_unstable();
    deltas.dedup();
    let followers: Vec<u64> = config.replicas[1..].to_vec();

    let mut nodes: Vec<Node> = Vec::new();
    let root: Vec<Leader> = machines_sets
        .iter()
        .map(|f| Leader::new(config, *f))
        .collect();
    // A pair with the correct leader on one side needs a non-empty expected output.
    let against_correct: Vec<bool> = pairs
        .iter()
        .map(|&(a, b)| sets[a].is_empty() || sets[b].is_empty())
        .collect();
    // Per node: the node, the time, the machines, and — while the correct leader (slot 0) has
    // printed nothing on the path — every machine's output so far.
    let silent_start = Some(vec![Vec::new(); machines_sets.len()]);
    let mut frontier: Vec<Frontier> = vec![(usize::MAX, 0, root, silent_start)];
    let mut seen: HashSet<Vec<u64>> = HashSet::new();
    let mut found = Vec::new();
    let mut outs: Vec<Vec<u8>> = vec![Vec::new(); machines_sets.len()];
    let mut key = Vec::new();
    for depth in 1..=max_depth {
        open.retain(|&p| bound(p) >= depth);
        if open.is_empty() {
            break;
        }
        // Machines whose output matters while the correct leader is silent: those in an open
        // pair with it.
        let mut watched = vec![false; machines_sets.len()];
        for &p in open.iter().filter(|&&p| against_correct[p]) {
            watched[slot[&pairs[p].0]] = true;
            watched[slot[&pairs[p].1]] = true;
        }
        let mut next = Vec::new();
        for (node, now, ms, silent) in &frontier {
            let leo = ms[0].leo();
            let mut cmds = vec![Command::Status];
            for &n in &domain.counts {
                if leo + n <= domain.max_leo {
                    cmds.push(Command::Append(n));
                    cmds.push(Command::Produce(n));
                }
            }
            for &f in &followers {
                for o in 0..=leo {
                    cmds.push(Command::Fetch {
                        follower: f,
                        offset: o,
                    });
                }
            }
            for &d in &deltas {
                let t = now + d;
                for &cmd in &cmds {
                    let step = Step { line: 0, t, cmd };
                    let mut next_ms = ms.clone();
                    for (m, out) in next_ms.iter_mut().zip(outs.iter_mut()) {
                        out.clear();
                        m.step(&step, out);
                    }
                    let id = nodes.len();
                    nodes.push(Node {
                        parent: *node,
                        step,
                    });
                    // The outputs so far, while the correct leader has been silent until now.
                    let so_far: Option<Vec<Vec<u8>>> = silent.as_ref().map(|before| {
                        before
                            .iter()
                            .zip(&outs)
                            .map(|(b, o)| [b.as_slice(), o.as_slice()].concat())
                            .collect()
                    });
                    let correct_printed_now = !outs[0].is_empty();
                    let mut hit = false;
                    open.retain(|&p| {
                        let (a, b) = pairs[p];
                        let (sa, sb) = (slot[&a], slot[&b]);
                        let differs = match (&so_far, against_correct[p]) {
                            // Silent so far: only the whole outputs tell, and only once the
                            // correct leader prints.
                            (Some(all), true) => correct_printed_now && all[sa] != all[sb],
                            // Everything agreed before this command.
                            _ => outs[sa] != outs[sb],
                        };
                        if differs {
                            found.push((p, build(config, &nodes, id)));
                            hit = true;
                            false
                        } else {
                            true
                        }
                    });
                    if hit && open.is_empty() {
                        return found;
                    }
                    if depth == max_depth {
                        continue;
                    }
                    let still_silent = so_far
                        .filter(|_| !correct_printed_now)
                        .map(|all| all.into_iter().map(|o| settle(o, t)).collect::<Vec<_>>());
                    key.clear();
                    for m in &next_ms {
                        m.search_key(t, horizon, &mut key);
                    }
                    if let Some(all) = &still_silent {
                        // Only machines still paired with the correct leader need their output
                        // in the state; stamps are all `now` (or the marker), so they go too.
                        for (o, _) in all.iter().zip(&watched).filter(|(_, w)| **w) {
                            let unstamped = o
                                .split(|&b| b == b'\n')
                                .map(|l| l.iter().position(|&b| b == b' ').map_or(l, |i| &l[i..]));
                            for l in unstamped {
                                key.push(l.len() as u64);
                                key.extend(l.iter().map(|&b| u64::from(b)));
                            }
                            key.push(u64::MAX - 1);
                        }
                    } else {
                        key.push(u64::MAX);
                    }
                    if seen.insert(key.clone()) {
                        next.push((id, t, next_ms, still_silent));
                    }
                }
            }
        }
        frontier = next;
    }
    found
}

/// What a machine printed while the correct leader was silent, reduced to what can still
/// matter at time `now`. The correct leader will only ever print lines stamped `now` or later,
/// so output with an earlier stamp can never be matched: it is replaced by a marker that no
/// output line equals (the comparison is then decided as soon as the correct leader prints).
/// Output stamped `now` is kept as it is.
fn settle(out: Vec<u8>, now: u64) -> Vec<u8> {
    const DOOMED: &[u8] = b"\0";
    if out.is_empty() || out.starts_with(DOOMED) {
        return out;
    }
    let first_stamp = out
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0u64, |v, &b| {
            v.saturating_mul(10).saturating_add(u64::from(b - b'0'))
        });
    if first_stamp < now {
        DOOMED.to_vec()
    } else {
        out
    }
}

fn build(config: &Config, nodes: &[Node], mut id: usize) -> Trace {
    let mut steps = Vec::new();
    while id != usize::MAX {
        steps.push(nodes[id].step);
        id = nodes[id].parent;
    }
    steps.reverse();
    let header_lines = 3;
    for (k, s) in steps.iter_mut().enumerate() {
        s.line = header_lines + k + 1;
    }
    Trace {
        name: "witness".into(),
        config: config.clone(),
        steps,
    }
}
