//! The corpus commands: `gen`, `bless`, `audit`.
//!
//! - `gen` prints a scenario generator's trace, or writes it as a whole case (trace, metadata with
//!   the generator, seed and parameters, and the reference's expected output).
//! - `bless` regenerates every expected output from the reference, and every generated trace from
//!   its metadata, showing a diff for each change; `--check` changes nothing and fails if anything
//!   is out of date.
//! - `audit` runs every single mistake and every pair against every case in-process and reports
//!   what the corpus catches and tells apart ([`isr_reference::audit`]); `--witness` adds the
//!   exhaustive search for the smallest traces.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use isr_reference::audit::{self, AuditCase, GroupKind, Report};
use isr_reference::r#gen::{self, Value};
use isr_reference::search::{self, Domain, Witness};
use isr_reference::{CATALOG, Fault, FaultSet, Trace};
use serde_json::json;

use crate::CmdResult;
use crate::cases::{self, Case, CaseMeta, CaseSource, Origin, Visibility};
use crate::cli::{AuditArgs, BlessArgs, GenArgs};

/// The case folders used when none are given.
pub const DEFAULT_DIRS: [&str; 2] = ["cases/public", "cases/hidden"];

fn sources(dirs: &[PathBuf]) -> Vec<CaseSource> {
    if dirs.is_empty() {
        DEFAULT_DIRS
            .iter()
            .map(|d| CaseSource::Dir(PathBuf::from(d)))
            .collect()
    } else {
        dirs.iter().cloned().map(CaseSource::Dir).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// gen

/// `isr-grader gen`.
pub fn gen_cmd(args: GenArgs) -> CmdResult {
    if args.list {
        print!("{}", list_text());
        return Ok(0);
    }
    let scenario = args.scenario.as_deref().unwrap_or_default();
    let given = r#gen::parse_params(scenario, &args.params)?;
    let generated = r#gen::generate(scenario, args.seed, &given)?;
    let Some(dir) = &args.case_dir else {
        print!("{}", generated.text);
        return Ok(0);
    };
    let name = args
        .name
        .as_deref()
        .ok_or("--case-dir needs --name NAME for the case's files")?;
    let visibility = match args.visibility.as_str() {
        "public" => Visibility::Public,
        "hidden" => Visibility::Hidden,
        v => return Err(format!("--visibility is public or hidden, not `{v}`").into()),
    };
    let written = write_generated_case(dir, name, scenario, args.seed, &generated, visibility)?;
    eprintln!("wrote {}", written.display());
    Ok(0)
}

/// The `gen --list` text: every generator, what it builds, its parameters.
pub fn list_text() -> String {
    let mut s = String::new();
    for g in r#gen::registry() {
        let _ = writeln!(s, "{}", g.name);
        for line in wrap(g.description, 92) {
            let _ = writeln!(s, "    {line}");
        }
        if !g.aims.is_empty() {
            for (i, line) in wrap(&g.aims.join(", "), 80).into_iter().enumerate() {
                let label = if i == 0 { "aims at:" } else { "" };
                let _ = writeln!(s, "    {label:<9}{line}");
            }
        }
        let _ = writeln!(s, "    parameters (-p NAME=VALUE):");
        for p in g.params {
            let _ = writeln!(
                s,
                "      {:<9} {:<24} default {}",
                p.name,
                p.accepted(),
                p.default_text()
            );
            for line in wrap(p.help, 80) {
                let _ = writeln!(s, "                {line}");
            }
        }
        s.push('\n');
    }
    s.push_str(
        "The same scenario, seed and parameters always give the same trace, bit for bit.\n\
         Defaults marked `by seed` are drawn from the seed; a given parameter never changes the others.\n",
    );
    s
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn to_toml(params: &BTreeMap<String, Value>) -> BTreeMap<String, toml::Value> {
    params
        .iter()
        .map(|(k, v)| {
            let t = match v {
                Value::Int(n) => toml::Value::Integer(*n as i64),
                Value::Word(w) => toml::Value::String(w.clone()),
            };
            (k.clone(), t)
        })
        .collect()
}

fn from_toml(params: &BTreeMap<String, toml::Value>) -> Result<Vec<(String, Value)>, String> {
    params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                toml::Value::Integer(n) if *n >= 0 => Value::Int(*n as u64),
                toml::Value::String(s) => Value::Word(s.clone()),
                other => {
                    return Err(format!(
                        "parameter `{k}` = {other} is not a number or a word"
                    ));
                }
            };
            Ok((k.clone(), v))
        })
        .collect()
}

/// Writes `dir/NAME.trace`, `NAME.toml` and `NAME.out` for a generated trace. An existing
/// `NAME.toml` keeps its title, description, targets, points and visibility; only its origin is
/// replaced. New metadata lists as targets the generator's aims that the trace really catches.
fn write_generated_case(
    dir: &Path,
    name: &str,
    scenario: &str,
    seed: u64,
    generated: &r#gen::Generated,
    visibility: Visibility,
) -> Result<PathBuf, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let trace_path = dir.join(format!("{name}.trace"));
    let meta_path = trace_path.with_extension("toml");
    let trace = Trace::parse(&trace_path.display().to_string(), &generated.text)?;
    let expected = isr_reference::output(&trace, FaultSet::NONE);
    let origin = Origin::Generated {
        generator: scenario.to_string(),
        seed,
        params: to_toml(&generated.params),
    };
    let meta = match std::fs::read_to_string(&meta_path) {
        Ok(text) => CaseMeta {
            origin,
            ..cases::parse_meta(&meta_path, &text)?
        },
        Err(_) => {
            let g = r#gen::find(scenario).ok_or("unknown scenario")?;
            let targets = g
                .aims
                .iter()
                .filter(|id| {
                    Fault::from_id(id).is_some_and(|f| {
                        isr_reference::output(&trace, FaultSet::one(f)) != expected
                    })
                })
                .map(|s| s.to_string())
                .collect();
            CaseMeta {
                title: format!("{scenario}, seed {seed}"),
                description: g.description.to_string(),
                targets,
                points: 1,
                visibility,
                origin,
            }
        }
    };
    cases::write_atomic(&trace_path, generated.text.as_bytes())?;
    cases::write_atomic(&meta_path, toml::to_string(&meta)?.as_bytes())?;
    cases::write_atomic(&trace_path.with_extension("out"), expected.as_bytes())?;
    Ok(trace_path)
}

/// Regenerates a generated case's trace from its metadata; `None` for handwritten cases.
pub fn regenerate(case: &Case) -> Option<Result<String, String>> {
    let Origin::Generated {
        generator,
        seed,
        params,
    } = &case.meta.origin
    else {
        return None;
    };
    Some(
        from_toml(params)
            .and_then(|given| r#gen::generate(generator, *seed, &given))
            .map(|g| g.text),
    )
}

// ---------------------------------------------------------------------------------------------
// bless

/// `isr-grader bless`.
pub fn bless_cmd(args: BlessArgs) -> CmdResult {
    let cases = cases::load(&sources(&args.dirs))?;
    let mut stale = 0;
    for case in &cases {
        let mut trace = case.trace.clone();
        let mut changed = false;
        if let Some(regen) = regenerate(case) {
            let text = regen.map_err(|e| {
                format!(
                    "{}: cannot regenerate from its metadata: {e}",
                    case.meta_path().display()
                )
            })?;
            if text != case.trace_text {
                println!(
                    "{}: the trace does not regenerate bit for bit from its metadata:",
                    case.trace_path.display()
                );
                print!("{}", diff(&case.trace_text, &text, &case.trace_path));
                trace = Trace::parse(&case.trace_path.display().to_string(), &text)?;
                changed = true;
                if !args.check {
                    cases::write_atomic(&case.trace_path, text.as_bytes())?;
                }
            }
        }
        let expected = isr_reference::output(&trace, FaultSet::NONE);
        let old = case.expected.as_deref().unwrap_or_default();
        if case.expected.as_deref() != Some(expected.as_str()) {
            let what = if case.expected.is_none() {
                "is missing"
            } else {
                "is out of date"
            };
            println!("{}: {what}:", case.expected_path().display());
            print!("{}", diff(old, &expected, &case.expected_path()));
            changed = true;
            if !args.check {
                cases::write_atomic(&case.expected_path(), expected.as_bytes())?;
            }
        }
        if changed {
            stale += 1;
        }
    }
    let total = cases.len();
    if args.check {
        if stale > 0 {
            println!("bless --check: {stale} of {total} cases out of date; run `isr-grader bless`");
            return Ok(1);
        }
        println!("bless --check: all {total} cases up to date");
    } else if stale > 0 {
        println!("bless: updated {stale} of {total} cases");
    } else {
        println!("bless: all {total} cases up to date");
    }
    Ok(0)
}

fn diff(old: &str, new: &str, path: &Path) -> String {
    let shown = path.display().to_string();
    let mut s = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{shown} (stored)"), &format!("{shown} (now)"))
        .to_string();
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

// ---------------------------------------------------------------------------------------------
// audit

/// The handwritten smallest-case mistake named by a case called `NNN-<catalog id>`.
pub fn per_mistake(case: &Case) -> Option<Fault> {
    if case.meta.origin != Origin::Handwritten {
        return None;
    }
    let rest = case.name.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.strip_prefix('-')?;
    (rest.len() < case.name.len()).then(|| Fault::from_id(rest))?
}

/// The minimal witnesses found by the exhaustive search.
pub struct Witnesses {
    /// The bound searched (commands).
    pub max_len: usize,
    /// Per single mistake (catalog order): its shortest trace against the correct leader.
    pub vs_correct: Vec<(Fault, Witness)>,
    /// Per pair of single mistakes: their shortest telling-apart trace.
    pub vs_each_other: Vec<(Fault, Fault, Witness)>,
    /// Per recorded equivalence: the outcome of searching between its members (none found is
    /// the expected answer), as (equivalence number, a, b, witness).
    pub equivalences: Vec<(usize, FaultSet, FaultSet, Witness)>,
}

/// Runs the exhaustive search for every single mistake against the correct leader and against
/// every other single mistake, and between the members of every recorded equivalence.
pub fn search_witnesses(domain: &Domain) -> Witnesses {
    let faults: Vec<Fault> = Fault::all().collect();
    let mut sets = vec![FaultSet::NONE];
    sets.extend(faults.iter().map(|f| FaultSet::one(*f)));
    let mut pairs = Vec::new();
    for i in 1..sets.len() {
        pairs.push((0, i));
    }
    for i in 1..sets.len() {
        for j in i + 1..sets.len() {
            pairs.push((i, j));
        }
    }
    let eq_domain = Domain {
        max_len: domain.max_len.min(EQUIVALENCE_BOUND),
        ..domain.clone()
    };
    // One search per equivalence class, one after the other: `witnesses` uses every core
    // itself. (All classes in one search is slower: the joint state of every member merges
    // less.)
    let classes = audit::equivalence_classes();
    let eq_found: Vec<(usize, FaultSet, FaultSet, Witness)> = classes
        .iter()
        .enumerate()
        .flat_map(|(k, class)| {
            let pairs: Vec<(usize, usize)> = (1..class.len()).map(|j| (0, j)).collect();
            search::witnesses(class, &pairs, &eq_domain)
                .into_iter()
                .zip(pairs.clone())
                .map(move |(w, (a, b))| (k, class[a], class[b], w))
                .collect::<Vec<_>>()
        })
        .collect();
    let found = search::witnesses(&sets, &pairs, domain);
    let mut vs_correct = Vec::new();
    let mut vs_each_other = Vec::new();
    for ((a, b), w) in pairs.into_iter().zip(found) {
        if a == 0 {
            vs_correct.push((faults[b - 1], w));
        } else {
            vs_each_other.push((faults[a - 1], faults[b - 1], w));
        }
    }
    Witnesses {
        max_len: domain.max_len,
        vs_correct,
        vs_each_other,
        equivalences: eq_found,
    }
}

/// The bound for searching between members of a recorded equivalence: exploring every trace up
/// to it is what proves nothing tells them apart, and each further command multiplies the time
/// by about four (5 commands: a few seconds per equivalence).
pub const EQUIVALENCE_BOUND: usize = 5;

/// `isr-grader audit`.
pub fn audit_cmd(args: AuditArgs) -> CmdResult {
    let cases = cases::load(&sources(&args.dirs))?;
    let (report, mut problems) = run_audit(&cases);
    let witnesses = args.witness.then(|| search_witnesses(&Domain::default()));
    if let Some(w) = &witnesses {
        problems.extend(witness_problems(&cases, w));
    }
    if args.json {
        let doc = json_report(&cases, &report, witnesses.as_ref(), &problems);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!(
            "{}",
            human_report(&cases, &report, witnesses.as_ref(), &problems)
        );
    }
    Ok(if problems.is_empty() { 0 } else { 1 })
}

/// Runs the audit over loaded cases: the report, and every problem (the report's own plus case
/// files whose expected output or trace is out of date).
pub fn run_audit(cases: &[Case]) -> (Report, Vec<String>) {
    let traces: Vec<&Trace> = cases.iter().map(|c| &c.trace).collect();
    let sets = audit::audit_sets();
    let classes = audit::classes(&traces, &sets);
    let audit_cases: Vec<AuditCase<'_>> = cases
        .iter()
        .map(|c| AuditCase {
            name: &c.name,
            public: c.meta.visibility == Visibility::Public,
            trace: &c.trace,
            targets: c
                .meta
                .targets
                .iter()
                .filter_map(|t| Fault::from_id(t))
                .collect(),
            per_mistake: per_mistake(c),
        })
        .collect();
    let report = audit::audit(&audit_cases, &sets, &classes);
    let mut problems = report.problems.clone();
    for (i, c) in cases.iter().enumerate() {
        if c.expected.as_deref() != Some(classes.output(i, 0)) {
            problems.push(format!(
                "case {}: {} is not the reference's output; run `isr-grader bless`",
                c.name,
                c.expected_path().display()
            ));
        }
    }
    (report, problems)
}

fn witness_problems(cases: &[Case], w: &Witnesses) -> Vec<String> {
    let mut problems = Vec::new();
    for (f, wit) in &w.vs_correct {
        match wit.trace() {
            None => problems.push(format!(
                "the search finds no trace of up to {} commands on which {f} differs from the correct leader",
                w.max_len
            )),
            Some(t) => {
                if let Some(c) = cases.iter().find(|c| per_mistake(c) == Some(*f))
                    && c.trace.steps.len() > t.steps.len()
                {
                    problems.push(format!(
                        "case {} has {} commands; the smallest trace for {f} has {}",
                        c.name,
                        c.trace.steps.len(),
                        t.steps.len()
                    ));
                }
                let catalog = audit::catalog_witness_len(*f);
                if catalog > t.steps.len() {
                    problems.push(format!(
                        "the catalog's smallest trace for {f} has {catalog} commands; the search finds one of {}",
                        t.steps.len()
                    ));
                }
            }
        }
    }
    for (a, b, wit) in &w.vs_each_other {
        if wit.trace().is_none() {
            problems.push(format!(
                "the search finds no trace of up to {} commands telling {a} and {b} apart; record them as equivalent",
                w.max_len
            ));
        }
    }
    for (k, a, b, wit) in &w.equivalences {
        if let Some(t) = wit.trace() {
            problems.push(format!(
                "recorded equivalence {} is false: {a} and {b} differ on\n{}",
                k + 1,
                t.to_text()
            ));
        }
    }
    problems
}

fn set_names(report: &Report, members: &[usize]) -> String {
    members
        .iter()
        .map(|&m| report.sets[m].to_string())
        .collect::<Vec<_>>()
        .join(" = ")
}

fn one_line(t: &Trace) -> String {
    t.to_text().trim_end().replace('\n', " | ")
}

/// The audit as text for people.
pub fn human_report(
    cases: &[Case],
    report: &Report,
    witnesses: Option<&Witnesses>,
    problems: &[String],
) -> String {
    let mut s = String::new();
    let public = cases
        .iter()
        .filter(|c| c.meta.visibility == Visibility::Public)
        .count();
    let commands: usize = cases.iter().map(|c| c.trace.steps.len()).sum();
    let public_commands: usize = cases
        .iter()
        .filter(|c| c.meta.visibility == Visibility::Public)
        .map(|c| c.trace.steps.len())
        .sum();
    let singles = CATALOG.len();
    let _ = writeln!(
        s,
        "Corpus: {} cases ({public} public with {public_commands} commands, {} hidden), {commands} commands in all.",
        cases.len(),
        cases.len() - public
    );
    let _ = writeln!(
        s,
        "Machines: the correct leader, {singles} single mistakes and {} pairs; {} distinct behaviours on this corpus.\n",
        report.sets.len() - 1 - singles,
        report.behaviours
    );

    let _ = writeln!(
        s,
        "Kills per mistake (cases whose output the mistake changes):"
    );
    let _ = writeln!(
        s,
        "  {:<28} {:>5} {:>6}  smallest case",
        "mistake", "cases", "public"
    );
    for k in &report.kills {
        let smallest = k
            .cases
            .iter()
            .min_by_key(|&&c| {
                let own = per_mistake(&cases[c]) == Some(k.fault);
                (cases[c].trace.steps.len(), !own, c)
            })
            .map(|&c| {
                format!(
                    "{} ({} commands)",
                    cases[c].name,
                    cases[c].trace.steps.len()
                )
            })
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            s,
            "  {:<28} {:>5} {:>6}  {smallest}",
            k.fault.id(),
            k.cases.len(),
            k.public
        );
    }

    let _ = writeln!(
        s,
        "\nGroups of mistake sets (at most two mistakes) with identical output on every case:"
    );
    let eq = audit::EQUIVALENCES;
    let mut kinds: Vec<(GroupKind, &str)> = vec![
        (GroupKind::Singles, "NOT TOLD APART (single mistakes)"),
        (GroupKind::LooksCorrect, "look correct"),
        (GroupKind::Pairs, "not told apart by this corpus"),
        (
            GroupKind::Equivalent,
            "equivalent on every trace (recorded)",
        ),
    ];
    for (kind, label) in kinds.drain(..) {
        let groups: Vec<_> = report.groups.iter().filter(|g| g.kind == kind).collect();
        if groups.is_empty() && kind != GroupKind::Singles {
            continue;
        }
        let _ = writeln!(s, "  {label}: {}", groups.len());
        for g in groups {
            let _ = writeln!(s, "    {}", set_names(report, &g.sets));
            if kind == GroupKind::Equivalent
                && let Some(e) = eq.iter().find(|e| {
                    e.sets
                        .iter()
                        .any(|f| parse_set(f) == report.sets[g.sets[0]])
                })
            {
                for line in wrap(e.why, 88) {
                    let _ = writeln!(s, "      {line}");
                }
            }
        }
    }

    let name = |c: usize| -> String {
        let v = if cases[c].meta.visibility == Visibility::Public {
            "public"
        } else {
            "hidden"
        };
        format!(
            "{} ({v}, {} commands)",
            cases[c].name,
            cases[c].trace.steps.len()
        )
    };
    let _ = writeln!(
        s,
        "\nMinimal subset (greedy set cover) keeping every distinction the corpus makes between the\ncorrect leader and all sets of at most two mistakes: {} of {} cases",
        report.cover.len(),
        cases.len()
    );
    for (i, (c, gain)) in report.cover.iter().enumerate() {
        let _ = writeln!(s, "  {:>2}. {:<58} +{gain} pairs", i + 1, name(*c));
    }
    let _ = writeln!(
        s,
        "Keeping only the single mistakes caught and told apart takes {} cases: {}",
        report.cover_singles.len(),
        report
            .cover_singles
            .iter()
            .map(|(c, _)| cases[*c].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );

    let _ = writeln!(
        s,
        "\nCases (catches: single mistakes it catches; pairs: pairs of the {} behaviours it tells apart,\nof {} in all; unique: pairs no other case tells apart):",
        report.behaviours,
        report.behaviours * report.behaviours.saturating_sub(1) / 2
    );
    let _ = writeln!(
        s,
        "  {:<40} {:<7} {:>8} {:>7} {:>6} {:>6}",
        "case", "", "commands", "catches", "pairs", "unique"
    );
    for c in &report.cases {
        let _ = writeln!(
            s,
            "  {:<40} {:<7} {:>8} {:>7} {:>6} {:>6}",
            c.name,
            if c.public { "public" } else { "hidden" },
            c.commands,
            c.catches.len(),
            c.distinctions,
            c.unique
        );
    }

    if let Some(w) = witnesses {
        let _ = writeln!(
            s,
            "\nMinimal witnesses (exhaustive search up to {} commands):",
            w.max_len
        );
        let _ = writeln!(
            s,
            "  {:<28} {:>7} {:>10}  handwritten case",
            "mistake vs correct", "witness", "case"
        );
        for (f, wit) in &w.vs_correct {
            let len = wit
                .trace()
                .map_or("none".to_string(), |t| t.steps.len().to_string());
            let own = cases
                .iter()
                .find(|c| per_mistake(c) == Some(*f))
                .map_or(("-".to_string(), "-".to_string()), |c| {
                    (c.trace.steps.len().to_string(), c.name.clone())
                });
            let _ = writeln!(s, "  {:<28} {len:>7} {:>10}  {}", f.id(), own.0, own.1);
            if let Some(t) = wit.trace() {
                let _ = writeln!(s, "      {}", one_line(t));
            }
        }
        let mut hist: BTreeMap<usize, usize> = BTreeMap::new();
        let mut none = 0;
        for (_, _, wit) in &w.vs_each_other {
            match wit.trace() {
                Some(t) => *hist.entry(t.steps.len()).or_default() += 1,
                None => none += 1,
            }
        }
        let hist_text: Vec<String> = hist
            .iter()
            .map(|(l, n)| format!("{n} pairs in {l}"))
            .collect();
        let _ = writeln!(
            s,
            "\n  single vs single: {} pairs; {}; {none} with no witness",
            w.vs_each_other.len(),
            hist_text.join(", ")
        );
        for (a, b, wit) in &w.vs_each_other {
            match wit.trace() {
                Some(t) => {
                    let _ = writeln!(s, "    {a} vs {b}: {} | {}", t.steps.len(), one_line(t));
                }
                None => {
                    let _ = writeln!(s, "    {a} vs {b}: none within {}", w.max_len);
                }
            }
        }
        let _ = writeln!(
            s,
            "\n  recorded equivalences, searched up to {} commands:",
            w.max_len.min(EQUIVALENCE_BOUND)
        );
        for (k, a, b, wit) in &w.equivalences {
            let verdict = match wit.trace() {
                None => "no trace tells them apart".to_string(),
                Some(t) => format!("DIFFER: {}", one_line(t)),
            };
            let _ = writeln!(s, "    {}. {a} vs {b}: {verdict}", k + 1);
        }
    }

    if problems.is_empty() {
        let _ = writeln!(
            s,
            "\nAudit passed: every mistake is caught by at least two cases, one of them public, and no two single mistakes look alike."
        );
    } else {
        let _ = writeln!(s, "\nAudit FAILED: {} problems", problems.len());
        for p in problems {
            let _ = writeln!(s, "  - {p}");
        }
    }
    s
}

fn parse_set(s: &str) -> FaultSet {
    FaultSet::parse(&s.replace('+', ",")).unwrap_or_default()
}

/// The audit as one JSON document.
pub fn json_report(
    cases: &[Case],
    report: &Report,
    witnesses: Option<&Witnesses>,
    problems: &[String],
) -> serde_json::Value {
    let case_name = |c: &usize| cases[*c].name.clone();
    let kind = |k: GroupKind| match k {
        GroupKind::Equivalent => "equivalent",
        GroupKind::LooksCorrect => "looks-correct",
        GroupKind::Singles => "singles-alike",
        GroupKind::Pairs => "not-told-apart",
    };
    let mut doc = json!({
        "schema_version": 1,
        "ok": problems.is_empty(),
        "problems": problems,
        "cases": report.cases.iter().map(|c| json!({
            "name": c.name,
            "visibility": if c.public { "public" } else { "hidden" },
            "commands": c.commands,
            "catches": c.catches.iter().map(|f| f.id()).collect::<Vec<_>>(),
            "distinctions": c.distinctions,
            "unique_distinctions": c.unique,
        })).collect::<Vec<_>>(),
        "kills": report.kills.iter().map(|k| json!({
            "mistake": k.fault.id(),
            "cases": k.cases.iter().map(case_name).collect::<Vec<_>>(),
            "public": k.public,
        })).collect::<Vec<_>>(),
        "behaviours": report.behaviours,
        "groups": report.groups.iter().map(|g| json!({
            "kind": kind(g.kind),
            "sets": g.sets.iter().map(|&m| report.sets[m].to_string()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "minimal_subset": report.cover.iter().map(|(c, gain)| json!({
            "case": cases[*c].name, "new_distinctions": gain,
        })).collect::<Vec<_>>(),
        "minimal_subset_singles": report.cover_singles.iter().map(|(c, _)| cases[*c].name.clone()).collect::<Vec<_>>(),
        "equivalences": audit::EQUIVALENCES.iter().map(|e| json!({
            "sets": e.sets, "why": e.why,
        })).collect::<Vec<_>>(),
    });
    if let Some(w) = witnesses {
        let trace = |wit: &Witness| wit.trace().map(|t| t.to_text());
        doc["witnesses"] = json!({
            "max_len": w.max_len,
            "vs_correct": w.vs_correct.iter().map(|(f, wit)| json!({
                "mistake": f.id(),
                "commands": wit.trace().map(|t| t.steps.len()),
                "trace": trace(wit),
            })).collect::<Vec<_>>(),
            "vs_each_other": w.vs_each_other.iter().map(|(a, b, wit)| json!({
                "a": a.id(), "b": b.id(),
                "commands": wit.trace().map(|t| t.steps.len()),
                "trace": trace(wit),
            })).collect::<Vec<_>>(),
            "equivalences": w.equivalences.iter().map(|(k, a, b, wit)| json!({
                "equivalence": k + 1, "a": a.to_string(), "b": b.to_string(),
                "bound": w.max_len.min(EQUIVALENCE_BOUND),
                "differ_on": trace(wit),
            })).collect::<Vec<_>>(),
        });
    }
    doc
}
