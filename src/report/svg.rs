//! A timeline picture: numeric series as step lines, membership bands, rows of event markers
//! and one marked divergence over an x axis of steps, rendered as one standalone SVG string.
//!
//! Like the rest of `report`, this knows nothing about the exercise: the grading layer fills a
//! [`Timeline`] (`grade::timeline` puts each replica's LEO, the high watermark, the ISR and the
//! output lines into it) and [`render`] draws whatever it holds.
//!
//! **Bounded.** A timeline is filled one x at a time through [`Timeline::push_value`],
//! [`Timeline::push_band`], [`Timeline::push_event`] and [`Timeline::push_time`]. Outside its
//! `detail` window (the part a zoom shows at full resolution) x is grouped into cells of
//! [`Timeline::bucket`] steps, at most about [`MAX_CELLS`] of them: a series keeps the smallest,
//! largest and last value of a cell, a band one state per cell (`Mixed` when it changed inside
//! the cell), an event row one marker per cell (with a count). So its size does not grow with
//! the trace past [`MAX_CELLS`] plus the detail window, and neither does the SVG: the renderer
//! draws at most one column per two pixels (min/max per column, run-length bands, one marker
//! per column), and a second panel zoomed on the detail window when the trace is long.
//!
//! Every string reaches the SVG through [`text`] (control characters shown, markup escaped,
//! characters XML forbids dropped). The palette is Okabe–Ito (colour-blind safe); "yours" is
//! always vermillion and the divergence the report's `--fail` red.

use std::fmt::Write as _;

/// Cells outside the detail window: the resolution of a long timeline.
pub const MAX_CELLS: u64 = 512;
/// Longest text drawn (longer strings are cut with an ellipsis).
const MAX_TEXT: usize = 120;

/// A value that holds from step `x` until the next point's `x`: within that stretch it ranged
/// over `lo..=hi` and ended at `last` (all three equal at full resolution).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    /// First step of the stretch.
    pub x: u64,
    /// Smallest value in it.
    pub lo: u64,
    /// Largest value in it.
    pub hi: u64,
    /// The value at its end.
    pub last: u64,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesStyle {
    /// One of several like series (colour `k` of the palette), thin.
    Member(usize),
    /// The expected reference line: thick, dark.
    Reference,
    /// What the program says: dashed vermillion, dots where it said it (when there is room).
    Actual,
}

/// A numeric series drawn as a step line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    /// Its legend.
    pub label: String,
    /// How it is drawn.
    pub style: SeriesStyle,
    /// Change points in ascending `x` (nothing is drawn before the first).
    pub points: Vec<Point>,
}

/// A band's state over a stretch of steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// A member.
    In,
    /// Not a member.
    Out,
    /// Both within the stretch (a cell of a long timeline).
    Mixed,
    /// Not known (what the program said is not known before its first report).
    Unknown,
}

/// A state that holds from step `x` until the next run's `x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// First step.
    pub x: u64,
    /// The state.
    pub state: State,
}

/// One row of membership: expected, what the program said (drawn as a thin line under it),
/// and where the grading layer found the two disagree (drawn vermillion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Band {
    /// The row's label.
    pub label: String,
    /// Palette colour of the row.
    pub colour: usize,
    /// Expected membership, run-length encoded.
    pub expected: Vec<Run>,
    /// The program's membership, run-length encoded (`Unknown` where it said nothing).
    pub actual: Vec<Run>,
    /// Where the two disagree (`In` or `Mixed`: flagged).
    pub flagged: Vec<Run>,
}

/// Which side of a band a state belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The expected membership.
    Expected,
    /// The program's.
    Actual,
    /// The disagreements.
    Flagged,
}

/// A marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shape {
    /// A circle.
    Dot,
    /// A triangle.
    Triangle,
    /// A cross.
    Cross,
    /// A square.
    Square,
}

/// A marker (or, in a long timeline, `count` markers of one cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The step (the cell's first step when merged).
    pub x: u64,
    /// The shape (of the first marker of a cell).
    pub shape: Shape,
    /// Whether it differs from its counterpart (drawn vermillion).
    pub differs: bool,
    /// Markers merged into this one.
    pub count: u32,
}

/// A row of markers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// The row's label.
    pub label: String,
    /// Whether it is the program's row (vermillion where it differs) or the expected one.
    pub side: Side,
    /// Markers in ascending `x`.
    pub events: Vec<Event>,
}

/// The one marked divergence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The step.
    pub x: u64,
    /// A short label next to the mark.
    pub label: String,
    /// Lines under the legend that say what differs (e.g. expected, yours).
    pub lines: Vec<String>,
}

/// Everything one picture shows (see the module's documentation for the bounds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// The picture's title.
    pub title: String,
    /// A note under the title (e.g. where the data comes from), if any.
    pub note: Option<String>,
    /// Steps: x runs over `0..len`.
    pub len: u64,
    /// Outside `detail`, steps per cell.
    pub bucket: u64,
    /// The steps kept at full resolution (`start..end`), shown zoomed when the timeline is long.
    pub detail: Option<(u64, u64)>,
    /// What x counts (the axis label), e.g. `command`.
    pub x_name: String,
    /// What the y axis measures, e.g. `offset`.
    pub y_name: String,
    /// A second label of some steps, ascending (e.g. the time): `(x, label value)`.
    pub times: Vec<(u64, u64)>,
    /// The unit of `times`, e.g. `ms`.
    pub time_unit: String,
    /// Step lines.
    pub series: Vec<Series>,
    /// Membership rows.
    pub bands: Vec<Band>,
    /// Marker rows.
    pub events: Vec<EventRow>,
    /// What each shape means, for the legend.
    pub shapes: Vec<(Shape, String)>,
    /// The first divergence, if any.
    pub divergence: Option<Divergence>,
}

impl Timeline {
    /// An empty timeline of `len` steps, keeping `detail` (clamped to `0..len`) at full
    /// resolution and grouping the other steps into at most about [`MAX_CELLS`] cells.
    pub fn new(title: &str, len: u64, detail: Option<(u64, u64)>) -> Timeline {
        let detail = detail
            .map(|(a, b)| (a.min(len), b.min(len)))
            .filter(|(a, b)| a < b);
        Timeline {
            title: title.to_string(),
            note: None,
            len,
            bucket: len.div_ceil(MAX_CELLS).max(1),
            detail,
            x_name: "step".into(),
            y_name: "value".into(),
            times: Vec::new(),
            time_unit: String::new(),
            series: Vec::new(),
            bands: Vec::new(),
            events: Vec::new(),
            shapes: Vec::new(),
            divergence: None,
        }
    }

    /// The first step of the cell `x` falls in (non-decreasing in `x`).
    pub fn cell(&self, x: u64) -> u64 {
        match self.detail {
            Some((a, b)) if x >= a && x < b => x,
            Some((_, b)) if x >= b => (x - x % self.bucket).max(b),
            _ => x - x % self.bucket,
        }
    }

    /// Adds a series; returns its index for [`Timeline::push_value`].
    pub fn add_series(&mut self, label: &str, style: SeriesStyle) -> usize {
        self.series.push(Series {
            label: label.to_string(),
            style,
            points: Vec::new(),
        });
        self.series.len() - 1
    }

    /// Series `s` has value `v` from step `x` on. Steps must not decrease from one call to the
    /// next for the same series (an earlier `x` counts as the last one's).
    pub fn push_value(&mut self, s: usize, x: u64, v: u64) {
        let c = self.cell(x);
        let Some(series) = self.series.get_mut(s) else {
            return;
        };
        match series.points.last_mut() {
            Some(p) if p.x >= c => {
                p.lo = p.lo.min(v);
                p.hi = p.hi.max(v);
                p.last = v;
            }
            Some(p) if p.last == v => {}
            Some(p) => {
                // Inside a cell the previous value held until `x`.
                let before = if x > c { p.last } else { v };
                series.points.push(Point {
                    x: c,
                    lo: before.min(v),
                    hi: before.max(v),
                    last: v,
                });
            }
            None => series.points.push(Point {
                x: c,
                lo: v,
                hi: v,
                last: v,
            }),
        }
    }

    /// Adds a band row; returns its index for [`Timeline::push_band`].
    pub fn add_band(&mut self, label: &str, colour: usize) -> usize {
        self.bands.push(Band {
            label: label.to_string(),
            colour,
            expected: Vec::new(),
            actual: Vec::new(),
            flagged: Vec::new(),
        });
        self.bands.len() - 1
    }

    /// Band `b`'s `side` is in `state` from step `x` on (steps non-decreasing per side).
    pub fn push_band(&mut self, b: usize, side: Side, x: u64, state: State) {
        let c = self.cell(x);
        let Some(band) = self.bands.get_mut(b) else {
            return;
        };
        let runs = match side {
            Side::Expected => &mut band.expected,
            Side::Actual => &mut band.actual,
            Side::Flagged => &mut band.flagged,
        };
        match runs.last_mut() {
            // Within one cell: what is known wins over `Unknown`; two states make `Mixed`.
            Some(r) if r.x >= c => {
                if r.state == State::Unknown {
                    r.state = state;
                } else if r.state != state && state != State::Unknown {
                    r.state = State::Mixed;
                }
            }
            Some(r) if r.state == state => {}
            Some(r) => {
                let state = if x > c && r.state != State::Unknown && state != State::Unknown {
                    State::Mixed
                } else {
                    state
                };
                if r.state != state {
                    runs.push(Run { x: c, state });
                }
            }
            None => runs.push(Run { x: c, state }),
        }
        // Two equal neighbours (a cell that ended as the one before it) are one run.
        if runs.len() >= 2 && runs[runs.len() - 1].state == runs[runs.len() - 2].state {
            runs.pop();
        }
    }

    /// Adds a marker row; returns its index for [`Timeline::push_event`].
    pub fn add_events(&mut self, label: &str, side: Side) -> usize {
        self.events.push(EventRow {
            label: label.to_string(),
            side,
            events: Vec::new(),
        });
        self.events.len() - 1
    }

    /// A marker in row `r` at step `x` (steps non-decreasing per row).
    pub fn push_event(&mut self, r: usize, x: u64, shape: Shape, differs: bool) {
        let c = self.cell(x);
        let exact = self.bucket <= 1 || self.detail.is_some_and(|(a, b)| x >= a && x < b);
        let Some(row) = self.events.get_mut(r) else {
            return;
        };
        match row.events.last_mut() {
            Some(e) if !exact && e.x >= c => {
                e.count = e.count.saturating_add(1);
                e.differs |= differs;
            }
            _ => row.events.push(Event {
                x: if exact { x } else { c },
                shape,
                differs,
                count: 1,
            }),
        }
    }

    /// Step `x` has the second label `t` (kept once per cell; steps non-decreasing).
    pub fn push_time(&mut self, x: u64, t: u64) {
        let c = self.cell(x);
        if self
            .times
            .last()
            .is_none_or(|&(last, _)| self.cell(last) < c)
        {
            self.times.push((x, t));
        }
    }
}

/// `s` for SVG text and attribute values: control and bidi characters shown visibly, markup
/// escaped, the characters XML 1.0 forbids dropped, cut to a readable length.
pub fn text(s: &str) -> String {
    let shown = super::visible(s);
    let mut kept: String = shown
        .chars()
        .filter(|c| !matches!(c, '\u{fffe}' | '\u{ffff}'))
        .take(MAX_TEXT)
        .collect();
    if shown.chars().count() > MAX_TEXT {
        kept.push('…');
    }
    super::html::escape(&kept)
}

// ---------------------------------------------------------------------------------------------
// Rendering.

/// Okabe–Ito: blue, bluish green, orange, reddish purple, sky blue, yellow (darkened for text
/// on white).
const PALETTE: [&str; 6] = [
    "#0072B2", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#B8A200",
];
/// What the program said.
const YOURS: &str = "#D55E00";
/// The divergence (the report's `--fail`).
const FAIL: &str = "#c62828";
/// Text and the reference line (the report's `--fg`, `--muted`, `--line`, `--panel`).
const FG: &str = "#1d2330";
const MUTED: &str = "#5b6474";
const LINE: &str = "#d9dee7";
const PANEL: &str = "#f5f7fa";

const WIDTH: f64 = 960.0;
const LEFT: f64 = 132.0;
const RIGHT: f64 = 24.0;
const PLOT: f64 = WIDTH - LEFT - RIGHT;
/// Narrowest column drawn, in pixels.
const COL: f64 = 2.0;
const CHART: f64 = 150.0;
const ROW: f64 = 18.0;
/// Past this many steps the picture gets a second panel zoomed on the detail window.
pub const ZOOM_AFTER: u64 = 80;

fn colour(k: usize) -> &'static str {
    PALETTE[k % PALETTE.len()]
}

/// A number with thousands separators: `12,345`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A coordinate with at most one decimal.
fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// One panel: the steps `a..b`, split into columns.
struct Panel {
    a: u64,
    b: u64,
    cols: u64,
}

impl Panel {
    fn new(a: u64, b: u64) -> Panel {
        let b = b.max(a.saturating_add(1));
        let cols = (b - a).min((PLOT / COL) as u64).max(1);
        Panel { a, b, cols }
    }

    /// The first step of column `j` (`j == cols`: the end).
    fn col_start(&self, j: u64) -> u64 {
        let span = u128::from(self.b - self.a);
        self.a + (span * u128::from(j) / u128::from(self.cols)) as u64
    }

    /// The column of step `x` (clamped).
    fn col_of(&self, x: u64) -> u64 {
        let x = x.clamp(self.a, self.b - 1);
        let span = u128::from(self.b - self.a);
        let j = (u128::from(x - self.a) * u128::from(self.cols) / span) as u64;
        // Integer division may put x one column early; move forward while it starts later.
        let mut j = j.min(self.cols - 1);
        while j + 1 < self.cols && self.col_start(j + 1) <= x {
            j += 1;
        }
        j
    }

    fn px(&self, j: u64) -> f64 {
        LEFT + PLOT * j as f64 / self.cols as f64
    }

    /// The middle of step `x`'s column.
    fn mid(&self, x: u64) -> f64 {
        let j = self.col_of(x);
        (self.px(j) + self.px(j + 1)) / 2.0
    }
}

/// Per column: the values a series took there (lo, hi, last).
fn columns_of(points: &[Point], len: u64, p: &Panel) -> Vec<Option<(u64, u64, u64)>> {
    let mut cols: Vec<Option<(u64, u64, u64)>> = vec![None; p.cols as usize];
    for (i, pt) in points.iter().enumerate() {
        let end = points
            .get(i + 1)
            .map_or(len.max(pt.x.saturating_add(1)), |q| q.x);
        if end <= p.a || pt.x >= p.b || end <= pt.x {
            continue;
        }
        let (from, to) = (p.col_of(pt.x.max(p.a)), p.col_of((end - 1).min(p.b - 1)));
        for j in from..=to {
            let slot = &mut cols[j as usize];
            // A stretch that began before this column entered it at its last value.
            let (lo, hi) = if j == from {
                (pt.lo, pt.hi)
            } else {
                (pt.last, pt.last)
            };
            *slot = Some(match *slot {
                Some((l, h, _)) => (l.min(lo), h.max(hi), pt.last),
                None => (lo, hi, pt.last),
            });
        }
    }
    cols
}

/// Per column: the state of a run-length band (`None`: no run covers it).
fn band_columns(runs: &[Run], len: u64, p: &Panel) -> Vec<Option<State>> {
    let mut cols: Vec<Option<State>> = vec![None; p.cols as usize];
    for (i, r) in runs.iter().enumerate() {
        let end = runs
            .get(i + 1)
            .map_or(len.max(r.x.saturating_add(1)), |q| q.x);
        if end <= p.a || r.x >= p.b || end <= r.x {
            continue;
        }
        let (from, to) = (p.col_of(r.x.max(p.a)), p.col_of((end - 1).min(p.b - 1)));
        for j in from..=to {
            let slot = &mut cols[j as usize];
            *slot = Some(match *slot {
                None => r.state,
                Some(s) if s == r.state => s,
                Some(State::Unknown) => r.state,
                Some(s) if r.state == State::Unknown => s,
                Some(_) => State::Mixed,
            });
        }
    }
    cols
}

/// Nice tick values covering `lo..=hi`, at most about `max` of them.
fn ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    let span = (hi - lo).max(1.0);
    let raw = span / max.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
        .max(1.0);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + 1e-9 && out.len() <= max * 2 {
        out.push(v);
        v += step;
    }
    out
}

/// The label of the time at step `x`: exact when recorded, else the cell's (`≈`).
fn time_at(t: &Timeline, x: u64) -> Option<String> {
    let i = t.times.partition_point(|&(tx, _)| tx <= x);
    let &(tx, v) = t.times.get(i.checked_sub(1)?)?;
    let approx = if tx == x { "" } else { "≈" };
    Some(format!("{approx}{}", grouped(v)))
}

/// The SVG namespace declaration a standalone file needs (an `<svg>` inside HTML gets it
/// from the parser).
const XMLNS: &str = " xmlns=\"http://www.w3.org/2000/svg\"";

/// [`render`] for inlining into an HTML page: without the namespace declaration, so that the
/// page names no URL at all.
pub fn render_inline(t: &Timeline) -> String {
    render(t).replacen(XMLNS, "", 1)
}

/// Renders the timeline as a standalone SVG document (an `<svg>` element with `viewBox`,
/// `<title>` and a legend). Never panics, whatever the timeline holds.
pub fn render(t: &Timeline) -> String {
    let len = t.len.max(1);
    let mut panels = vec![(Panel::new(0, len), None::<String>)];
    if let Some((a, b)) = t.detail.filter(|_| t.len > ZOOM_AFTER) {
        let (a, b) = (a.min(len - 1), b.min(len).max(a.min(len - 1) + 1));
        let label = format!(
            "zoom: {}s {} to {}, at full resolution",
            t.x_name,
            grouped(a + 1),
            grouped(b)
        );
        panels.push((Panel::new(a, b), Some(label)));
    }
    let bands_h = t.bands.len() as f64 * ROW;
    let events_h = t.events.len() as f64 * ROW;
    let panel_h = 22.0 + CHART + 10.0 + bands_h + events_h + 40.0;
    let legend_rows = legend(t);
    let div_lines = t.divergence.as_ref().map_or(0, |d| d.lines.len().min(3)) as f64;
    let head = 30.0
        + if t.note.is_some() { 18.0 } else { 0.0 }
        + legend_rows.len() as f64 * 20.0
        + div_lines * 18.0
        + 8.0;
    let height = head + panel_h * panels.len() as f64 + 8.0;

    let mut s = String::with_capacity(32 * 1024);
    let _ = write!(
        s,
        "<svg{XMLNS} viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" \
         font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif\" font-size=\"12\" \
         role=\"img\" aria-label=\"{}\">\n<title>{}</title>\n",
        n(WIDTH),
        n(height),
        n(WIDTH),
        n(height),
        text(&t.title),
        text(&t.title)
    );
    let _ = writeln!(
        s,
        "<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>",
        n(WIDTH),
        n(height)
    );
    let mut y = 22.0;
    let _ = writeln!(
        s,
        "<text x=\"12\" y=\"{}\" font-size=\"15\" font-weight=\"600\" fill=\"{FG}\">{}</text>",
        n(y),
        text(&t.title)
    );
    if let Some(note) = &t.note {
        y += 18.0;
        let _ = writeln!(
            s,
            "<text x=\"12\" y=\"{}\" fill=\"{MUTED}\">{}</text>",
            n(y),
            text(note)
        );
    }
    y += 8.0;
    for row in &legend_rows {
        y += 20.0;
        let _ = writeln!(s, "<g transform=\"translate(0,{})\">{row}</g>", n(y - 4.0));
    }
    if let Some(d) = &t.divergence {
        for (i, line) in d.lines.iter().take(3).enumerate() {
            y += 18.0;
            let colour = if i == 0 { FAIL } else { FG };
            let _ = writeln!(
                s,
                "<text x=\"12\" y=\"{}\" fill=\"{colour}\" font-family=\"'DejaVu Sans Mono', Menlo, Consolas, monospace\" font-size=\"12\">{}</text>",
                n(y),
                text(line)
            );
        }
    }
    y += 12.0;
    let zoom = panels.get(1).map(|(p, _)| (p.a, p.b));
    for (p, label) in &panels {
        panel(
            &mut s,
            t,
            p,
            label.as_deref(),
            if label.is_none() { zoom } else { None },
            y,
        );
        y += panel_h;
    }
    s.push_str("</svg>\n");
    s
}

/// The legend's items (a swatch, a label), laid out in rows that wrap at the picture's width:
/// the SVG of each row, with its items placed at y = 0.
fn legend(t: &Timeline) -> Vec<String> {
    let mut items: Vec<(String, &str)> = Vec::new();
    for series in &t.series {
        let swatch = match series.style {
            SeriesStyle::Member(k) => format!(
                "<path d=\"M0 0h18\" stroke=\"{}\" stroke-width=\"2\"/>",
                colour(k)
            ),
            SeriesStyle::Reference => {
                format!(
                    "<path d=\"M0 0h18\" stroke=\"{FG}\" stroke-width=\"7\" stroke-opacity=\"0.3\"/>"
                )
            }
            SeriesStyle::Actual => format!(
                "<path d=\"M0 0h18\" stroke=\"{YOURS}\" stroke-width=\"2\" stroke-dasharray=\"4 3\"/><circle cx=\"9\" cy=\"0\" r=\"2.5\" fill=\"{YOURS}\"/>"
            ),
        };
        items.push((swatch, &series.label));
    }
    if !t.bands.is_empty() {
        let stripes: String = t
            .bands
            .iter()
            .take(3)
            .enumerate()
            .map(|(i, b)| {
                format!(
                    "<rect x=\"{}\" y=\"-6\" width=\"6\" height=\"10\" fill=\"{}\" fill-opacity=\"0.55\"/>",
                    6 * i,
                    colour(b.colour)
                )
            })
            .collect();
        items.push((stripes, "in the ISR (expected)"));
        items.push((
            format!("<rect x=\"0\" y=\"1\" width=\"18\" height=\"3\" fill=\"{FG}\"/>"),
            "in the ISR (yours, as last said)",
        ));
        items.push((
            format!("<rect x=\"0\" y=\"-3\" width=\"18\" height=\"7\" fill=\"{YOURS}\"/>"),
            "yours differs",
        ));
    }
    for (shape, label) in &t.shapes {
        let mut sw = String::new();
        marker(&mut sw, *shape, 9.0, 0.0, FG, false);
        items.push((sw, label));
    }
    if t.divergence.is_some() {
        items.push((
            format!("<path d=\"M9 -8v14\" stroke=\"{FAIL}\" stroke-width=\"2.5\"/>"),
            "first difference",
        ));
    }
    let mut rows = Vec::new();
    let (mut row, mut x) = (String::new(), 12.0);
    for (swatch, label) in items.into_iter().take(40) {
        let label = text(label);
        // Wide enough for capitals in a 12 px sans-serif.
        let w = 26.0 + 7.2 * label.chars().count().min(60) as f64;
        if x + w > WIDTH - 12.0 && !row.is_empty() {
            rows.push(std::mem::take(&mut row));
            x = 12.0;
        }
        let _ = write!(
            row,
            "<g transform=\"translate({},0)\">{swatch}<text x=\"22\" y=\"4\" fill=\"{FG}\">{label}</text></g>",
            n(x)
        );
        x += w + 12.0;
    }
    if !row.is_empty() {
        rows.push(row);
    }
    rows
}

/// A marker centred on (cx, cy).
fn marker(s: &mut String, shape: Shape, cx: f64, cy: f64, fill: &str, big: bool) {
    let r = if big { 5.0 } else { 4.0 };
    let (x, y) = (n(cx), n(cy));
    let _ = match shape {
        Shape::Dot => write!(
            s,
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"{}\" fill=\"{fill}\"/>",
            n(r * 0.85)
        ),
        Shape::Triangle => write!(
            s,
            "<path d=\"M{} {}l{} {}h{}z\" fill=\"{fill}\"/>",
            n(cx),
            n(cy - r),
            n(r),
            n(2.0 * r * 0.87),
            n(-2.0 * r)
        ),
        Shape::Cross => write!(
            s,
            "<path d=\"M{} {}l{} {}m0 {}l{} {}\" stroke=\"{fill}\" stroke-width=\"2\"/>",
            n(cx - r * 0.8),
            n(cy - r * 0.8),
            n(1.6 * r),
            n(1.6 * r),
            n(-1.6 * r),
            n(-1.6 * r),
            n(1.6 * r)
        ),
        Shape::Square => write!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"/>",
            n(cx - r * 0.75),
            n(cy - r * 0.75),
            n(1.5 * r),
            n(1.5 * r)
        ),
    };
}

fn panel(
    s: &mut String,
    t: &Timeline,
    p: &Panel,
    label: Option<&str>,
    zoom: Option<(u64, u64)>,
    top: f64,
) {
    let title = match label {
        Some(l) => l.to_string(),
        None => format!(
            "the whole trace: {} {}{}",
            grouped(t.len),
            t.x_name,
            if t.len == 1 { "" } else { "s" }
        ),
    };
    let _ = writeln!(
        s,
        "<g>\n<text x=\"12\" y=\"{}\" font-weight=\"600\" fill=\"{FG}\">{}</text>",
        n(top + 14.0),
        text(&title)
    );
    let chart_top = top + 22.0;
    let chart_bottom = chart_top + CHART;
    let bands_top = chart_bottom + 10.0;
    let events_top = bands_top + t.bands.len() as f64 * ROW;
    let axis_y = events_top + t.events.len() as f64 * ROW;
    // Background and the zoomed window.
    let _ = writeln!(
        s,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{PANEL}\"/>",
        n(LEFT),
        n(chart_top),
        n(PLOT),
        n(CHART)
    );
    if let Some((a, b)) = zoom {
        let (x0, x1) = (p.px(p.col_of(a)), p.px(p.col_of(b.saturating_sub(1)) + 1));
        // The label beside the window, on the side with room, at the chart's foot.
        let (lx, anchor) = if x1 < LEFT + PLOT * 0.7 {
            (x1 + 4.0, "start")
        } else {
            (x0 - 4.0, "end")
        };
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#2456c7\" fill-opacity=\"0.08\" stroke=\"#2456c7\" stroke-opacity=\"0.6\" stroke-dasharray=\"3 3\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#2456c7\" text-anchor=\"{anchor}\" stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\">zoomed below</text>",
            n(x0),
            n(chart_top),
            n((x1 - x0).max(1.0)),
            n(axis_y - chart_top),
            n(lx),
            n(chart_bottom - 6.0)
        );
    }
    // The y scale over what this panel shows.
    let cols: Vec<Vec<Option<(u64, u64, u64)>>> = t
        .series
        .iter()
        .map(|se| columns_of(&se.points, t.len, p))
        .collect();
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for c in cols.iter().flatten().flatten() {
        lo = lo.min(c.0);
        hi = hi.max(c.1);
    }
    if lo > hi {
        (lo, hi) = (0, 1);
    }
    let (lo, hi) = (lo as f64, (hi as f64).max(lo as f64 + 1.0));
    let pad = (hi - lo) * 0.06;
    let (ylo, yhi) = (lo - pad, hi + pad);
    let yv = |v: u64| chart_bottom - (v as f64 - ylo) / (yhi - ylo) * CHART;
    // Y ticks.
    s.push_str("<g font-size=\"11\" fill=\"");
    s.push_str(MUTED);
    s.push_str("\" text-anchor=\"end\">");
    for v in ticks(lo, hi, 4) {
        let yy = chart_bottom - (v - ylo) / (yhi - ylo) * CHART;
        let _ = write!(
            s,
            "<path d=\"M{} {}h{}\" stroke=\"{LINE}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            n(LEFT),
            n(yy),
            n(PLOT),
            n(LEFT - 6.0),
            n(yy + 4.0),
            grouped(v as u64)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"12\" y=\"{}\" text-anchor=\"start\" font-size=\"12\" fill=\"{FG}\">{}</text></g>",
        n(chart_top + 12.0),
        text(&t.y_name)
    );
    // Series: the reference first, as a wide translucent band that the members' thin lines
    // stay visible in, then the members, the program's on top.
    let mut order: Vec<usize> = (0..t.series.len()).collect();
    order.sort_by_key(|&i| match t.series[i].style {
        SeriesStyle::Reference => 0,
        SeriesStyle::Member(_) => 1,
        SeriesStyle::Actual => 2,
    });
    let room_for_dots = p.b - p.a <= 200;
    // Like series at the same value are drawn side by side, 2 px apart, not on top of each
    // other.
    let members = t
        .series
        .iter()
        .filter(|se| matches!(se.style, SeriesStyle::Member(_)))
        .count();
    for i in order {
        let se = &t.series[i];
        let shift = match se.style {
            SeriesStyle::Member(k) => (k % 8) as f64 * 2.0 - (members.min(8) as f64 - 1.0),
            _ => 0.0,
        };
        let yv = |v: u64| yv(v) + shift;
        let (stroke, width, dash) = match se.style {
            SeriesStyle::Member(k) => (colour(k), "2", ""),
            SeriesStyle::Reference => (FG, "7", " stroke-opacity=\"0.3\""),
            SeriesStyle::Actual => (YOURS, "2", " stroke-dasharray=\"5 3\""),
        };
        let mut d = String::new();
        let mut cur: Option<f64> = None;
        for (j, c) in cols[i].iter().enumerate() {
            let Some((l, h, last)) = *c else { continue };
            let x0 = p.px(j as u64);
            match cur {
                None => {
                    let _ = write!(d, "M{} {}", n(x0), n(yv(l)));
                    cur = Some(yv(l));
                }
                Some(_) => {
                    let _ = write!(d, "H{}", n(x0));
                }
            }
            for v in [l, h, last] {
                let yy = yv(v);
                if cur.is_none_or(|c| (c - yy).abs() > 0.05) {
                    let _ = write!(d, "V{}", n(yy));
                    cur = Some(yy);
                }
            }
            // To the column's end; the next column starts there.
            if cols[i].get(j + 1).is_none_or(Option::is_none) {
                let _ = write!(d, "H{}", n(p.px(j as u64 + 1)));
            }
        }
        if !d.is_empty() {
            let _ = writeln!(
                s,
                "<path d=\"{d}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{width}\"{dash} stroke-linejoin=\"round\"><title>{}</title></path>",
                text(&se.label)
            );
        }
        if se.style == SeriesStyle::Actual && room_for_dots {
            s.push_str("<g fill=\"");
            s.push_str(YOURS);
            s.push_str("\">");
            for pt in se.points.iter().filter(|q| q.x >= p.a && q.x < p.b) {
                let _ = write!(
                    s,
                    "<circle cx=\"{}\" cy=\"{}\" r=\"3\"/>",
                    n(p.px(p.col_of(pt.x))),
                    n(yv(pt.last))
                );
            }
            s.push_str("</g>\n");
        }
    }
    // Bands.
    for (k, band) in t.bands.iter().enumerate() {
        let y0 = bands_top + k as f64 * ROW;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{FG}\">{}</text><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{PANEL}\"/>",
            n(LEFT - 6.0),
            n(y0 + 12.0),
            text(&band.label),
            n(LEFT),
            n(y0 + 1.0),
            n(PLOT),
            n(ROW - 2.0)
        );
        let exp = band_columns(&band.expected, t.len, p);
        let act = band_columns(&band.actual, t.len, p);
        let fill = colour(band.colour);
        let _ = write!(s, "<g fill=\"{fill}\" fill-opacity=\"0.55\">");
        rects(s, p, &exp, |st| st == Some(State::In), y0 + 1.0, ROW - 2.0);
        s.push_str("</g>");
        let _ = write!(s, "<g fill=\"{fill}\" fill-opacity=\"0.25\">");
        rects(
            s,
            p,
            &exp,
            |st| st == Some(State::Mixed),
            y0 + 1.0,
            ROW - 2.0,
        );
        s.push_str("</g>");
        let _ = write!(s, "<g fill=\"{FG}\">");
        rects(s, p, &act, |st| st == Some(State::In), y0 + ROW - 6.0, 3.0);
        s.push_str("</g>");
        let _ = write!(s, "<g fill=\"{FG}\" fill-opacity=\"0.35\">");
        rects(
            s,
            p,
            &act,
            |st| st == Some(State::Mixed),
            y0 + ROW - 6.0,
            3.0,
        );
        s.push_str("</g>");
        let flagged = band_columns(&band.flagged, t.len, p);
        let _ = write!(s, "<g fill=\"{YOURS}\">");
        rects(
            s,
            p,
            &flagged,
            |st| matches!(st, Some(State::In | State::Mixed)),
            y0 + ROW - 8.0,
            7.0,
        );
        s.push_str("</g>\n");
    }
    // Events.
    for (k, row) in t.events.iter().enumerate() {
        let y0 = events_top + k as f64 * ROW;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{FG}\">{}</text><path d=\"M{} {}h{}\" stroke=\"{LINE}\"/>",
            n(LEFT - 6.0),
            n(y0 + 12.0),
            text(&row.label),
            n(LEFT),
            n(y0 + ROW / 2.0),
            n(PLOT)
        );
        // One marker per column: differing ones win.
        let mut per_col: Vec<Option<(Shape, bool, u32)>> = vec![None; p.cols as usize];
        for e in row.events.iter().filter(|e| e.x >= p.a && e.x < p.b) {
            let slot = &mut per_col[p.col_of(e.x) as usize];
            *slot = Some(match *slot {
                None => (e.shape, e.differs, e.count),
                Some((sh, d, c)) => (
                    if e.differs && !d { e.shape } else { sh },
                    d || e.differs,
                    c.saturating_add(e.count),
                ),
            });
        }
        let colw = PLOT / p.cols as f64;
        let big = colw >= 8.0;
        let mut ticks_d = [String::new(), String::new(), String::new()];
        for (j, slot) in per_col.iter().enumerate() {
            let Some((shape, differs, _)) = *slot else {
                continue;
            };
            let fill = if differs && row.side == Side::Actual {
                YOURS
            } else if differs {
                FG
            } else {
                MUTED
            };
            let cx = (p.px(j as u64) + p.px(j as u64 + 1)) / 2.0;
            if big {
                marker(s, shape, cx, y0 + ROW / 2.0, fill, true);
            } else {
                // Ticks, one path per colour.
                let k = [YOURS, FG, MUTED]
                    .iter()
                    .position(|c| *c == fill)
                    .unwrap_or(2);
                let _ = write!(ticks_d[k], "M{} {}v{}", n(cx), n(y0 + 3.0), n(ROW - 6.0));
            }
        }
        for (d, colour) in ticks_d.iter().zip([YOURS, FG, MUTED]) {
            if !d.is_empty() {
                let _ = write!(
                    s,
                    "<path d=\"{d}\" stroke=\"{colour}\" stroke-width=\"{}\"/>",
                    n(colw.clamp(1.0, 2.0) * 0.6)
                );
            }
        }
        s.push('\n');
    }
    // The x axis: steps (1-based for people) and their times.
    let _ = write!(
        s,
        "<path d=\"M{} {}h{}\" stroke=\"{MUTED}\"/><g font-size=\"11\" fill=\"{MUTED}\" text-anchor=\"middle\">",
        n(LEFT),
        n(axis_y + 1.0),
        n(PLOT)
    );
    let span = p.b - p.a;
    // As many ticks as their widest label leaves room for.
    let widest = t
        .times
        .iter()
        .map(|&(_, v)| grouped(v).len() + 1)
        .max()
        .unwrap_or(0)
        .max(grouped(p.b).len());
    let max_ticks = ((PLOT / (6.5 * widest as f64 + 18.0)) as usize).clamp(2, 10);
    let steps_ticks: Vec<u64> = if span <= max_ticks as u64 {
        (p.a..p.b).collect()
    } else {
        ticks((p.a + 1) as f64, p.b as f64, max_ticks)
            .into_iter()
            .map(|v| (v as u64).saturating_sub(1))
            .filter(|x| *x >= p.a && *x < p.b)
            .collect()
    };
    for x in steps_ticks {
        let cx = p.mid(x);
        let _ = write!(
            s,
            "<path d=\"M{} {}v4\" stroke=\"{MUTED}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            n(cx),
            n(axis_y + 1.0),
            n(cx),
            n(axis_y + 15.0),
            grouped(x + 1)
        );
        if let Some(tl) = time_at(t, x) {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                n(cx),
                n(axis_y + 28.0),
                text(&tl)
            );
        }
    }
    let _ = writeln!(
        s,
        "</g><text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\" fill=\"{MUTED}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\" fill=\"{MUTED}\">{}</text>",
        n(LEFT - 6.0),
        n(axis_y + 15.0),
        text(&t.x_name),
        n(LEFT - 6.0),
        n(axis_y + 28.0),
        if t.times.is_empty() {
            String::new()
        } else if t.time_unit.is_empty() {
            "time".to_string()
        } else {
            text(&format!("time ({})", t.time_unit))
        }
    );
    // The divergence, across the chart, the bands and the events; its label above the chart,
    // clear of the data and of the panel's title.
    if let Some(d) = t.divergence.as_ref().filter(|d| d.x >= p.a && d.x < p.b) {
        let cx = p.mid(d.x);
        let right = cx > LEFT + PLOT * 0.6;
        let (lx, anchor) = if right {
            (cx - 8.0, "end")
        } else {
            (
                (cx + 8.0).max(12.0 + 7.0 * title.chars().count() as f64 + 16.0),
                "start",
            )
        };
        let _ = writeln!(
            s,
            "<path d=\"M{} {}V{}\" stroke=\"{FAIL}\" stroke-width=\"2.5\"/><path d=\"M{} {}l-5 -7h10z\" fill=\"{FAIL}\"/>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\" font-weight=\"600\" fill=\"{FAIL}\">{}</text>",
            n(cx),
            n(chart_top),
            n(axis_y),
            n(cx),
            n(chart_top),
            n(lx),
            n(top + 14.0),
            text(&d.label)
        );
    }
    s.push_str("</g>\n");
}

/// Rectangles over the runs of columns whose state `pick` accepts.
fn rects(
    s: &mut String,
    p: &Panel,
    cols: &[Option<State>],
    pick: impl Fn(Option<State>) -> bool,
    y: f64,
    h: f64,
) {
    // One path of rectangles (a short `d` per run, not an element each).
    let mut d = String::new();
    let mut j = 0;
    while j < cols.len() {
        if !pick(cols[j]) {
            j += 1;
            continue;
        }
        let start = j;
        while j < cols.len() && pick(cols[j]) {
            j += 1;
        }
        let (x0, x1) = (p.px(start as u64), p.px(j as u64));
        let w = n((x1 - x0).max(1.0));
        let _ = write!(d, "M{} {}h{w}v{}h-{w}z", n(x0), n(y), n(h));
    }
    if !d.is_empty() {
        let _ = write!(s, "<path d=\"{d}\"/>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A small timeline by hand: two members, a reference, the program's line, a band, markers.
    fn small() -> Timeline {
        let mut t = Timeline::new("case <one> & \"two\"", 6, None);
        t.x_name = "command".into();
        t.y_name = "offset".into();
        t.time_unit = "ms".into();
        let a = t.add_series("A", SeriesStyle::Member(0));
        let r = t.add_series("reference", SeriesStyle::Reference);
        let y = t.add_series("yours", SeriesStyle::Actual);
        let b = t.add_band("A", 0);
        let e = t.add_events("expected", Side::Expected);
        let o = t.add_events("yours", Side::Actual);
        for x in 0..6u64 {
            t.push_time(x, x * 100);
            t.push_value(a, x, x * 2);
            t.push_value(r, x, x);
            t.push_band(
                b,
                Side::Expected,
                x,
                if x == 3 { State::Out } else { State::In },
            );
        }
        t.push_value(y, 2, 1);
        t.push_band(b, Side::Actual, 2, State::In);
        t.push_value(y, 4, 2);
        t.push_band(b, Side::Actual, 4, State::In);
        t.push_event(e, 2, Shape::Dot, false);
        t.push_event(o, 2, Shape::Dot, false);
        t.push_event(e, 4, Shape::Dot, true);
        t.push_event(o, 4, Shape::Triangle, true);
        t.shapes = vec![
            (Shape::Dot, "STATUS".into()),
            (Shape::Triangle, "ACK".into()),
        ];
        t.divergence = Some(Divergence {
            x: 4,
            label: "first difference".into(),
            lines: vec!["expected: 4".into(), "yours: \x1b[31m<b>".into()],
        });
        t
    }

    fn well_formed(svg: &str) {
        if let Err(e) = roxmltree::Document::parse(svg) {
            panic!("not XML ({e}):\n{svg}");
        }
    }

    #[test]
    fn a_small_timeline_snapshot() {
        let svg = render(&small());
        well_formed(&svg);
        assert!(svg.contains("<title>case &lt;one&gt; &amp; &quot;two&quot;</title>"));
        assert!(svg.contains("yours: \\x1b[31m&lt;b&gt;"));
        insta::assert_snapshot!("svg_small", svg);
    }

    #[test]
    fn cells_group_steps_outside_the_detail_window() {
        let mut t = Timeline::new("t", 10_000, Some((5_000, 5_060)));
        assert_eq!(t.bucket, 20);
        assert_eq!(t.cell(5_010), 5_010);
        assert_eq!(t.cell(5_061), 5_060);
        assert_eq!(t.cell(4_999), 4_980);
        let s = t.add_series("s", SeriesStyle::Reference);
        let b = t.add_band("b", 0);
        let e = t.add_events("e", Side::Expected);
        for x in 0..10_000u64 {
            t.push_value(s, x, x);
            t.push_band(
                b,
                Side::Expected,
                x,
                if x % 3 == 0 { State::In } else { State::Out },
            );
            t.push_event(e, x, Shape::Dot, x == 7_000);
            t.push_time(x, x * 10);
        }
        let bound = (MAX_CELLS + 60 + 2) as usize;
        assert!(
            t.series[0].points.len() <= bound,
            "{}",
            t.series[0].points.len()
        );
        assert!(t.bands[0].expected.len() <= bound);
        assert!(t.events[0].events.len() <= bound);
        assert!(t.times.len() <= bound);
        // Merged cells keep their extremes, and the detail window every step.
        assert_eq!(
            t.series[0].points[0],
            Point {
                x: 0,
                lo: 0,
                hi: 19,
                last: 19
            }
        );
        assert!(
            t.series[0]
                .points
                .iter()
                .any(|p| p.x == 5_030 && p.lo == 5_030 && p.hi == 5_030)
        );
        assert_eq!(t.bands[0].expected[0].state, State::Mixed);
        assert!(t.events[0].events.iter().any(|e| e.differs && e.x == 7_000));
        let svg = render(&t);
        well_formed(&svg);
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
        assert!(svg.contains("zoom: steps 5,001 to 5,060"));
    }

    #[test]
    fn a_value_changed_inside_a_cell_keeps_the_previous_one_in_its_range() {
        let mut t = Timeline::new("t", 10_000, None);
        assert_eq!(t.bucket, 20);
        let s = t.add_series("s", SeriesStyle::Reference);
        t.push_value(s, 0, 5);
        t.push_value(s, 3, 9);
        t.push_value(s, 105, 7);
        assert_eq!(
            t.series[0].points[0],
            Point {
                x: 0,
                lo: 5,
                hi: 9,
                last: 9
            }
        );
        assert_eq!(
            t.series[0].points[1],
            Point {
                x: 100,
                lo: 7,
                hi: 9,
                last: 7
            }
        );
    }

    fn state() -> impl Strategy<Value = State> {
        prop_oneof![
            Just(State::In),
            Just(State::Out),
            Just(State::Mixed),
            Just(State::Unknown)
        ]
    }

    fn shape() -> impl Strategy<Value = Shape> {
        prop_oneof![
            Just(Shape::Dot),
            Just(Shape::Triangle),
            Just(Shape::Cross),
            Just(Shape::Square)
        ]
    }

    prop_compose! {
        /// Any timeline, including nonsense the builder would never make: unsorted points,
        /// steps beyond `len`, a window out of range, huge values, odd text.
        fn any_timeline()(
            len in prop_oneof![Just(0u64), 1u64..50, 50u64..100_000, Just(u64::MAX)],
            detail in proptest::option::of((any::<u64>(), any::<u64>())),
            bucket in 0u64..1000,
            title in ".{0,40}",
            points in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()), 0..40),
            small in proptest::collection::vec((0u64..200, 0u64..1000), 0..40),
            runs in proptest::collection::vec((any::<u64>(), state()), 0..20),
            events in proptest::collection::vec((0u64..300, shape(), any::<bool>(), any::<u32>()), 0..30),
            times in proptest::collection::vec((any::<u64>(), any::<u64>()), 0..10),
            div in proptest::option::of((any::<u64>(), ".{0,30}")),
        ) -> Timeline {
            let mut t = Timeline::new(&title, len, None);
            t.bucket = bucket;
            t.detail = detail;
            t.times = times;
            t.series.push(Series {
                label: title.clone(),
                style: SeriesStyle::Actual,
                points: points.into_iter().map(|(x, lo, hi, last)| Point { x, lo, hi, last }).collect(),
            });
            t.series.push(Series {
                label: "m".into(),
                style: SeriesStyle::Member(7),
                points: small.into_iter().map(|(x, v)| Point { x, lo: v, hi: v, last: v }).collect(),
            });
            let runs: Vec<Run> = runs.into_iter().map(|(x, state)| Run { x, state }).collect();
            t.bands.push(Band { label: "b".into(), colour: 3, expected: runs.clone(), flagged: runs.iter().skip(1).copied().collect(), actual: runs.into_iter().rev().collect() });
            t.events.push(EventRow {
                label: "e".into(),
                side: Side::Actual,
                events: events.into_iter().map(|(x, shape, differs, count)| Event { x, shape, differs, count }).collect(),
            });
            t.shapes = vec![(Shape::Cross, title)];
            t.divergence = div.map(|(x, label)| Divergence { x, lines: vec![label.clone()], label });
            t
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn rendering_never_panics_and_is_xml(t in any_timeline()) {
            let svg = render(&t);
            prop_assert!(roxmltree::Document::parse(&svg).is_ok(), "{}", svg);
        }

        #[test]
        fn pushing_never_panics_and_stays_bounded(
            len in 0u64..5_000,
            detail in proptest::option::of((0u64..6_000, 0u64..6_000)),
            pushes in proptest::collection::vec((0u64..6_000, any::<u64>(), state(), shape(), any::<bool>()), 0..400),
        ) {
            let mut t = Timeline::new("t", len, detail);
            let s = t.add_series("s", SeriesStyle::Reference);
            let b = t.add_band("b", 0);
            let e = t.add_events("e", Side::Actual);
            let mut xs: Vec<_> = pushes;
            xs.sort_by_key(|p| p.0);
            for (x, v, st, sh, d) in xs {
                t.push_value(s, x, v);
                t.push_band(b, Side::Actual, x, st);
                t.push_event(e, x, sh, d);
                t.push_time(x, v);
            }
            let cells = (MAX_CELLS + 2) as usize + t.detail.map_or(0, |(a, b)| (b - a) as usize);
            prop_assert!(t.series[0].points.len() <= cells.max(400));
            prop_assert!(roxmltree::Document::parse(&render(&t)).is_ok());
        }
    }
}
