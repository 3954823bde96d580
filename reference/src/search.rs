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

/// Finds, for every requested pair `(a, b)` of indexes into `sets`, the shortest trace in `domain`
/// on which the two leaders' outputs differ.
pub fn witnesses(sets: &[FaultSet], pairs: &[(usize, usize)], domain: &Domain) -> Vec<Witness> {
    let mut best: Vec<Option<Trace>> = vec![None; pairs.len()];
    for config in &domain.configs {
        let open: Vec<usize> = (0..pairs.len())
            .filter(|&p| best[p].as_ref().is_none_or(|t| t.steps.len() > 1))
            .collect();
        if open.is_empty() {
            break;
        }
        let bound = |p: usize| {
            best[p]
                .as_ref()
                .map_or(domain.max_len, |t| t.steps.len() - 1)
        };
        let found = search_config(sets, pairs, &open, config, domain, bound);
        for (p, trace) in found {
            best[p] = Some(trace);
        }
    }
    best.into_iter()
        .map(|b| match b {
            Some(t) => Witness::Found(t),
            None => Witness::NoneWithin {
                max_len: domain.max_len,
            },
        })
        .collect()
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
    let mut frontier: Vec<(usize, u64, Vec<Leader>)> = vec![(usize::MAX, 0, root)];
    let mut seen: HashSet<Vec<u64>> = HashSet::new();
    let mut found = Vec::new();
    let mut outs: Vec<Vec<u8>> = vec![Vec::new(); machines_sets.len()];
    let mut key = Vec::new();
    for depth in 1..=max_depth {
        open.retain(|&p| bound(p) >= depth);
        if open.is_empty() {
            break;
        }
        let mut next = Vec::new();
        for (node, now, ms) in &frontier {
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
                    let mut hit = false;
                    open.retain(|&p| {
                        let (a, b) = pairs[p];
                        if outs[slot[&a]] != outs[slot[&b]] {
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
                    key.clear();
                    for m in &next_ms {
                        m.search_key(t, horizon, &mut key);
                    }
                    if seen.insert(key.clone()) {
                        next.push((id, t, next_ms));
                    }
                }
            }
        }
        frontier = next;
    }
    found
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
