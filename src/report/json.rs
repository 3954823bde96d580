//! The `--format json` document, `schema_version` 1: one typed model ([`ReportV1`], and
//! [`ErrorV1`] when the grader could not grade), serialized with serde and described by the JSON
//! Schema that `schemars` derives from the same types ([`schema`], committed as
//! `schema/report-v1.json`).
//!
//! **API boundary:** these types are the schema. A field may be added; none may be renamed,
//! removed or change its type without a new schema version (a new set of types beside these).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::{CaseReport, Report};

/// The schema version, always 1 in this model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaVersion1;

impl Serialize for SchemaVersion1 {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(1)
    }
}

impl<'de> Deserialize<'de> for SchemaVersion1 {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match u32::deserialize(deserializer)? {
            1 => Ok(SchemaVersion1),
            other => Err(serde::de::Error::custom(format!(
                "schema_version {other}: this grader reads version 1"
            ))),
        }
    }
}

impl JsonSchema for SchemaVersion1 {
    fn schema_name() -> Cow<'static, str> {
        "SchemaVersion1".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The version of this document's schema: 1.",
            "type": "integer",
            "const": 1
        })
    }
}

/// A document `isr-grader test --format json` prints: a report, or an error (exit 2).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(title = "isr-grader JSON report, schema version 1")]
pub enum DocumentV1 {
    /// The grading result (exit 0, 1 or 130).
    Report(Box<ReportV1>),
    /// The grader could not grade (exit 2).
    Error(ErrorV1),
}

/// The document printed when the grader could not grade (exit 2).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorV1 {
    /// Always 1.
    pub schema_version: SchemaVersion1,
    /// What went wrong, with the file and line where there is one.
    pub error: String,
}

/// The grading result.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReportV1 {
    /// Always 1.
    pub schema_version: SchemaVersion1,
    /// The grader that graded and the cases it graded, e.g. `isr-grader 0.1.0 (rev
    /// abc123def456, cases 0123456789abcdef)`.
    pub grader_version: String,
    /// The program graded, as a command line.
    pub program: String,
    /// Where the cases came from, in order.
    pub case_sources: Vec<String>,
    /// The protections in force while the program ran, in words.
    pub sandbox: String,
    /// What the grader decided that the reader should know (settings it ignored).
    pub notes: Vec<String>,
    /// Whether the grader was interrupted (cases not run have the verdict `not-run`).
    pub interrupted: bool,
    /// The build step; null when none ran.
    pub build: Option<BuildV1>,
    /// Counts and points.
    pub summary: SummaryV1,
    /// Every case, in corpus order (empty when the build failed).
    pub cases: Vec<CaseV1>,
    /// The diagnosis; null when the build failed, no case ran or the grader was interrupted.
    pub diagnosis: Option<DiagnosisV1>,
    /// Exploration beyond the corpus; null when off or not run.
    pub explored: Option<ExploreV1>,
    /// Set when the program did not run at all (every failure ends the same way).
    pub did_not_run: Option<DidNotRunV1>,
    /// The limits every case ran under (absent from reports of graders before 0.1.0's class
    /// work).
    #[serde(default)]
    pub limits: Option<LimitsV1>,
    /// The seed of the generated traces; null when nothing was explored. `--seed` (or
    /// `[explore] seed`) repeats them.
    #[serde(default)]
    pub seed: Option<u64>,
    /// The hash of the cases graded, as in `grader_version`: two reports with the same hash
    /// graded against the same cases.
    #[serde(default)]
    pub cases_hash: Option<String>,
}

/// The limits each case ran under.
#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct LimitsV1 {
    /// Wall-clock limit per case, in seconds.
    pub timeout_secs: f64,
    /// Address-space limit per case, in MiB; null: the grader's own limit.
    pub memory_mib: Option<u64>,
    /// Most stdout kept per case, in KiB.
    pub output_kib: u64,
}

/// The build step.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BuildV1 {
    /// The shell command.
    pub command: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// The last lines of its output.
    pub output_tail: String,
}

/// Counts and points.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SummaryV1 {
    /// Cases graded.
    pub cases: usize,
    /// Cases passed.
    pub passed: usize,
    /// Cases not passed (not-run included).
    pub failed: usize,
    /// Points earned.
    pub points: u32,
    /// Points possible: over the cases selected, also when the build failed and none ran.
    pub max_points: u32,
    /// Cases not run because the grader was interrupted.
    pub not_run: usize,
}

/// A case's verdict.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictV1 {
    /// Output as expected, exit code 0.
    Pass,
    /// Output differs.
    Wrong,
    /// Killed at the wall-clock limit.
    Timeout,
    /// Killed by a signal (`signal` names it).
    Crash,
    /// Exited with a non-zero code (`exit_code`); output still compared.
    ExitCode,
    /// Printed more than the output limit.
    OutputLimit,
    /// Printed nothing where output was expected.
    NoOutput,
    /// Not run: the grader was interrupted.
    NotRun,
    /// Two runs on the same input printed different output (`nondeterminism` says where).
    Nondeterministic,
}

/// One case's result.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CaseV1 {
    /// The case's name.
    pub name: String,
    /// The case's title.
    pub title: String,
    /// The verdict.
    pub verdict: VerdictV1,
    /// The signal's name for a crash (`SIGSEGV`), else null.
    pub signal: Option<String>,
    /// The exit code for `exit-code`, else null.
    pub exit_code: Option<i32>,
    /// The wall-clock limit the program ran past, in seconds, for `timeout`; else null.
    pub time_limit_secs: Option<f64>,
    /// Points earned.
    pub points: u32,
    /// Points possible.
    pub max_points: u32,
    /// Whether the case is hidden from students.
    pub hidden: bool,
    /// The wall-clock time of the run, in seconds (0 for a case not run).
    pub time_secs: f64,
    /// The first differing line among the compared (normalized) lines, 1-based; null when the
    /// output matched.
    pub first_diff_line: Option<usize>,
    /// The expected line there; null when the program printed more than expected.
    pub expected_line: Option<String>,
    /// The program's line there; null when it stopped early.
    pub actual_line: Option<String>,
    /// The input command behind the first difference.
    pub origin: Option<OriginV1>,
    /// Lines of stdout that are not events (the first few, each cut to a bound).
    pub stray_lines: Vec<StrayLineV1>,
    /// How many such lines there were in all.
    pub stray_lines_total: usize,
    /// The end of what the program wrote to stderr.
    pub stderr_tail: String,
    /// The smallest trace found on which the program still differs the same way; null when
    /// not shrunk (passed, a timeout, or the shrinking budget was spent).
    pub shrunk: Option<ShrunkV1>,
    /// Set when two runs on this input printed different output.
    pub nondeterminism: Option<NondeterminismV1>,
}

/// The smallest trace where the program differs.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ShrunkV1 {
    /// Commands in the shrunk trace.
    pub commands: usize,
    /// Commands in the trace it was shrunk from.
    pub from_commands: usize,
    /// Program runs the shrinking took (0 when `same_as` is set).
    pub runs: usize,
    /// The case already shrunk to this same trace (it differs the same way), if any.
    pub same_as: Option<String>,
    /// How the program differs: `STATUS HW`, `missing ACK`, `crash SIGSEGV`, ...
    pub kind: String,
    /// The shrunk trace, as a case file stores it.
    pub trace: String,
    /// What the program should print on it (the reference's output; for `beyond_corpus`, the
    /// named mistakes').
    pub expected: Vec<String>,
    /// What the program printed on it (the first lines, each cut to a bound).
    pub actual: Vec<String>,
    /// The first differing line (1-based) with both sides; null when none.
    pub first_diff: Option<FirstDiffV1>,
    /// The reference's explanation of the shrunk trace, line by line.
    pub explanation: Vec<String>,
}

/// A first differing line.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FirstDiffV1 {
    /// 1-based, among the compared lines.
    pub line: usize,
    /// The expected line; null when the program printed more.
    pub expected: Option<String>,
    /// The program's line; null when it stopped early.
    pub actual: Option<String>,
}

/// Two runs that disagreed.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NondeterminismV1 {
    /// 1-based line where the runs first differ.
    pub line: usize,
    /// That line in the first run (null: not shown, or it had stopped).
    pub first: Option<String>,
    /// That line in the second run.
    pub second: Option<String>,
    /// The likely cause, for this exercise.
    pub cause: String,
}

/// Exploration beyond the corpus.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExploreV1 {
    /// The seed; `--seed` replays this exploration.
    pub seed: u64,
    /// Generated traces run.
    pub traces: usize,
    /// Points each failing explored trace costs (0: reported only).
    pub points_each: u32,
    /// The first failing explored traces, as cases named by generator and seed.
    pub failing: Vec<CaseV1>,
    /// Failing explored traces in all.
    pub failing_total: usize,
}

/// The program did not run at all.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DidNotRunV1 {
    /// The line every failing run ended with.
    pub line: String,
    /// Where it comes from and what to do.
    pub cause: String,
}

/// An exact diagnosis on the corpus that an explored trace contradicts.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BeyondCorpusV1 {
    /// The mistakes that reproduced every corpus case.
    pub mistakes: Vec<String>,
    /// The explored trace on which they differ from the program.
    pub explored_case: String,
    /// The smallest trace on which the program and those mistakes differ.
    pub shrunk: Option<ShrunkV1>,
}

fn shrunk_v1(sh: &super::Shrunk) -> ShrunkV1 {
    ShrunkV1 {
        commands: sh.commands,
        from_commands: sh.from_commands,
        runs: sh.runs,
        same_as: sh.same_as.clone(),
        kind: sh.kind.clone(),
        trace: sh.trace.clone(),
        expected: sh.expected.clone(),
        actual: sh.actual.clone(),
        first_diff: sh.first_diff.as_ref().map(|d| FirstDiffV1 {
            line: d.line,
            expected: d.expected.clone(),
            actual: d.actual.clone(),
        }),
        explanation: sh.explanation.clone(),
    }
}

fn case_v1(c: &CaseReport) -> CaseV1 {
    use super::Verdict as V;
    CaseV1 {
        name: c.name.clone(),
        title: c.title.clone(),
        verdict: match c.verdict {
            V::Pass => VerdictV1::Pass,
            V::Wrong => VerdictV1::Wrong,
            V::Timeout { .. } => VerdictV1::Timeout,
            V::Crash { .. } => VerdictV1::Crash,
            V::ExitCode { .. } => VerdictV1::ExitCode,
            V::OutputLimit => VerdictV1::OutputLimit,
            V::NoOutput => VerdictV1::NoOutput,
            V::NotRun => VerdictV1::NotRun,
            V::Nondeterministic => VerdictV1::Nondeterministic,
        },
        signal: match &c.verdict {
            V::Crash { signal } => Some(signal.clone()),
            _ => None,
        },
        exit_code: match c.verdict {
            V::ExitCode { code } => Some(code),
            _ => None,
        },
        time_limit_secs: match c.verdict {
            V::Timeout { limit_ms } => Some(limit_ms as f64 / 1000.0),
            _ => None,
        },
        points: c.points,
        max_points: c.max_points,
        hidden: c.hidden,
        time_secs: (c.elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
        first_diff_line: c.first_diff.as_ref().map(|d| d.line),
        expected_line: c.first_diff.as_ref().and_then(|d| d.expected.clone()),
        actual_line: c.first_diff.as_ref().and_then(|d| d.actual.clone()),
        origin: c.origin.as_ref().map(|o| OriginV1 {
            location: o.location.clone(),
            command: o.command.clone(),
            explanation: o.explanation.clone(),
        }),
        stray_lines: c
            .stray_lines
            .iter()
            .map(|(line, text)| StrayLineV1 {
                line: *line,
                text: text.clone(),
            })
            .collect(),
        stray_lines_total: c.stray_total,
        stderr_tail: c.stderr_tail.clone(),
        shrunk: c.shrunk.as_ref().map(shrunk_v1),
        nondeterminism: c.nondeterminism.as_ref().map(|n| NondeterminismV1 {
            line: n.line,
            first: n.first.clone(),
            second: n.second.clone(),
            cause: n.cause.clone(),
        }),
    }
}

/// The input command behind a first difference.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct OriginV1 {
    /// `file:line` of the command in the case's input.
    pub location: String,
    /// The command.
    pub command: String,
    /// The reference's explanation of that command, one sentence per entry.
    pub explanation: Vec<String>,
}

/// A line of stdout that is not an event.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct StrayLineV1 {
    /// Its 1-based line number in stdout.
    pub line: usize,
    /// The line (cut to a bound).
    pub text: String,
}

/// The diagnosis.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DiagnosisV1 {
    /// Whether `mistakes` reproduces the program's output on every case (with no mistake: the
    /// failures are only `slips`).
    pub exact: bool,
    /// The smallest exact set of known mistakes, as catalog ids (empty when not exact).
    pub mistakes: Vec<String>,
    /// The same mistakes, in words.
    pub details: Vec<MistakeV1>,
    /// Other sets the cases cannot tell apart from `mistakes`.
    pub alternatives: Vec<Vec<String>>,
    /// When not exact: the known mistake sets that reproduce the most failing cases, best first
    /// (a hint, not a verdict).
    pub closest: Vec<ClosestV1>,
    /// Formatting slips seen besides (debug lines on stdout, a non-zero exit code).
    pub slips: Vec<String>,
    /// Set when `mistakes` reproduced every corpus case but not an explored trace (then
    /// `exact` is false and `mistakes` is kept).
    pub beyond_corpus: Option<BeyondCorpusV1>,
    /// Explored traces the exact diagnosis also holds on (0: none checked).
    pub confirmed_on: usize,
}

/// A known mistake, in words.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct MistakeV1 {
    /// The catalog id.
    pub id: String,
    /// What the program does wrong.
    pub title: String,
    /// Where the broken rule is taught.
    pub section: String,
    /// The rule.
    pub rule: String,
    /// Why it matters.
    pub explanation: String,
    /// The smallest graded case on which this mistake alone changes the output.
    pub smallest_case: Option<String>,
}

/// A mistake set that explains some failing cases.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ClosestV1 {
    /// The catalog ids.
    pub mistakes: Vec<String>,
    /// Failing cases it reproduces exactly.
    pub explains: usize,
    /// Failing cases in all.
    pub failing: usize,
}

impl From<&Report> for ReportV1 {
    fn from(report: &Report) -> Self {
        use super::Verdict as V;
        let cases = report.cases.iter().map(case_v1).collect();
        let diagnosis = report.diagnosis.as_ref().map(|d| DiagnosisV1 {
            exact: d.exact,
            mistakes: d.mistakes.iter().map(|m| m.id.clone()).collect(),
            details: d
                .mistakes
                .iter()
                .map(|m| MistakeV1 {
                    id: m.id.clone(),
                    title: m.title.clone(),
                    section: m.section.clone(),
                    rule: m.rule.clone(),
                    explanation: m.explanation.clone(),
                    smallest_case: m.smallest_case.clone(),
                })
                .collect(),
            alternatives: d.alternatives.clone(),
            closest: d
                .closest
                .iter()
                .map(|c| ClosestV1 {
                    mistakes: c.mistakes.clone(),
                    explains: c.explains,
                    failing: c.failing,
                })
                .collect(),
            slips: d.slips.clone(),
            beyond_corpus: d.beyond_corpus.as_ref().map(|b| BeyondCorpusV1 {
                mistakes: b.mistakes.clone(),
                explored_case: b.explored_case.clone(),
                shrunk: b.shrunk.as_ref().map(shrunk_v1),
            }),
            confirmed_on: d.confirmed_on,
        });
        ReportV1 {
            schema_version: SchemaVersion1,
            grader_version: report.grader_version.clone(),
            program: report.program.clone(),
            case_sources: report.case_sources.clone(),
            sandbox: report.sandbox.clone(),
            notes: report.notes.clone(),
            interrupted: report.interrupted,
            build: report.build.as_ref().map(|b| BuildV1 {
                command: b.command.clone(),
                ok: b.ok,
                output_tail: b.output_tail.clone(),
            }),
            summary: SummaryV1 {
                cases: report.cases.len(),
                passed: report.passed(),
                failed: report.cases.len() - report.passed(),
                points: report.points(),
                max_points: report.max_points(),
                not_run: report
                    .cases
                    .iter()
                    .filter(|c| c.verdict == V::NotRun)
                    .count(),
            },
            cases,
            diagnosis,
            explored: report.explored.as_ref().map(|e| ExploreV1 {
                seed: e.seed,
                traces: e.traces,
                points_each: e.points_each,
                failing: e.failing.iter().map(case_v1).collect(),
                failing_total: e.failing_total,
            }),
            did_not_run: report.did_not_run.as_ref().map(|d| DidNotRunV1 {
                line: d.line.clone(),
                cause: d.cause.clone(),
            }),
            limits: Some(LimitsV1 {
                timeout_secs: report.settings.timeout_secs,
                memory_mib: report.settings.memory_mib,
                output_kib: report.settings.output_kib,
            }),
            seed: report.settings.seed,
            cases_hash: Some(report.settings.cases_hash.clone()).filter(|h| !h.is_empty()),
        }
    }
}

/// The JSON document for a report.
pub fn render(report: &Report) -> String {
    to_text(&DocumentV1::Report(Box::new(report.into())))
}

/// The JSON document for a grader error (exit 2).
pub fn render_error(error: &str) -> String {
    to_text(&DocumentV1::Error(ErrorV1 {
        schema_version: SchemaVersion1,
        error: error.to_string(),
    }))
}

fn to_text(doc: &DocumentV1) -> String {
    // Serializing these types cannot fail: no map has non-string keys, no float is NaN.
    serde_json::to_string_pretty(doc).unwrap_or_else(|e| {
        format!(
            "{{\"schema_version\": 1, \"error\": {}}}",
            serde_json::Value::String(e.to_string())
        )
    })
}

/// Reads a JSON document this grader (schema version 1) wrote; the error says what is wrong
/// (serde's line and column).
pub fn parse(text: &str) -> Result<DocumentV1, serde_json::Error> {
    // Not through the untagged enum: its error would name no field.
    let value: serde_json::Value = serde_json::from_str(text)?;
    SchemaVersion1::deserialize(&value["schema_version"])?;
    if value.get("error").is_some() {
        Ok(DocumentV1::Error(serde_json::from_value(value)?))
    } else {
        Ok(DocumentV1::Report(Box::new(serde_json::from_value(value)?)))
    }
}

/// The JSON Schema of the documents (`schema/report-v1.json`).
pub fn schema() -> String {
    let schema = schemars::schema_for!(DocumentV1);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// A report read back is the report written: `batch` and `merge` rebuild class results
    /// from these documents.
    #[test]
    fn a_document_reads_back_as_written() {
        let doc = super::DocumentV1::Error(super::ErrorV1 {
            schema_version: super::SchemaVersion1,
            error: "x".into(),
        });
        let text = super::to_text(&doc);
        assert!(matches!(super::parse(&text), Ok(super::DocumentV1::Error(e)) if e.error == "x"));
        let two = text.replace("\"schema_version\": 1", "\"schema_version\": 2");
        let err = super::parse(&two)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("reads version 1"), "{err}");
    }

    /// The committed schema is the one the types give (`ISR_GRADER_BLESS_SCHEMA=1` rewrites it).
    #[test]
    fn the_committed_schema_is_current() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/report-v1.json");
        let generated = super::schema();
        if std::env::var_os("ISR_GRADER_BLESS_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is out of date: run `ISR_GRADER_BLESS_SCHEMA=1 cargo test --lib schema` and review the diff",
            path.display()
        );
    }
}
