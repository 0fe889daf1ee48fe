//! The benchmark's HTML report: one self-contained file (inline SVG, CSS and a little script,
//! nothing fetched), readable offline and attachable to a CI job.
//!
//! - One chart per metric present (cycles, cycles by llvm-mca, executed instructions, timer):
//!   a bar per case of sysyc / reference (or now / baseline without a reference) on a log2
//!   axis centred on 1, so 0.05 and 20 are as visible as 0.9 and 1.1, with the geometric mean.
//! - A table with a row per case: status (broken, regressed, the reference's troubles), the
//!   compiler that stood in as the reference, both compilers' numbers and the ratio per metric,
//!   static counts; click a header to sort, type in the box to filter.
//! - With earlier runs (`--history DIR`), a trend chart per metric: the geometric mean of
//!   sysyc / reference for each saved run, in time order, labelled by commit.

use super::bench::Comparison;
use super::results::{BenchReport, BenchRow, Measure, Metric};
use super::stats::geomean;
use std::fmt::Write;

/// The whole page. `report` is the run shown in charts and table (`None` for a trend-only
/// page); `cmp` its comparison with a baseline; `history` the runs for the trend view, oldest
/// first (a trend needs two).
pub fn html(
    report: Option<&BenchReport>,
    cmp: Option<&Comparison>,
    history: &[BenchReport],
) -> String {
    let mut body = String::new();
    if let Some(r) = report {
        let _ = writeln!(body, "<p>{}</p>", esc(&describe(r)));
        let mut charts = 0;
        for m in Metric::ALL {
            let (title, bars) = if r.reference.is_some() {
                let bars: Vec<Bar> = r
                    .cases
                    .iter()
                    .filter_map(|row| {
                        let v = row.ratio_of(m)?;
                        Some(Bar {
                            name: row.name.clone(),
                            value: v,
                        })
                    })
                    .collect();
                (
                    format!("{}: sysyc / gcc -O2 (lower is better)", m.title()),
                    bars,
                )
            } else {
                let bars = cmp
                    .and_then(|c| c.ratios.iter().find(|(k, _)| *k == m))
                    .map(|(_, l)| {
                        l.iter()
                            .map(|(n, v)| Bar {
                                name: n.clone(),
                                value: *v,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                (
                    format!("{}: now / baseline (lower is better)", m.title()),
                    bars,
                )
            };
            if !bars.is_empty() {
                charts += 1;
                body += &ratio_chart(m.key(), &title, &bars);
            }
        }
        if charts == 0 {
            body += "<p>No ratios to chart (use --reference gcc or --baseline).</p>\n";
        }
        body += &table(r, cmp);
    }
    if history.len() >= 2 {
        body += "<h2>Trend across saved runs</h2>\n";
        let mut any = false;
        for m in Metric::ALL {
            let points = trend(history, m);
            if points.len() >= 2 {
                any = true;
                body += &trend_chart(m, &points);
            }
        }
        if !any {
            body += "<p>No metric measured against a reference in two or more runs.</p>\n";
        }
    }
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sysyc bench</title>\n<style>{STYLE}</style></head><body>\n<h1>sysyc bench</h1>\n{body}<script>{SCRIPT}</script>\n</body></html>\n"
    )
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,td.t{text-align:left}th{cursor:pointer;background:#f4f4f4;user-select:none}th.up::after{content:' \\25B2'}th.down::after{content:' \\25BC'}tr.bad td{background:#fde8e8}svg{display:block;margin:1em 0}#filter{margin:.5em 0;padding:3px;width:24em}";

/// Sorting by a click on a header (numbers by their `data-v`, text otherwise; `-` last) and
/// filtering rows by the text box.
const SCRIPT: &str = r#"
(function(){
  var t=document.getElementById('cases'); if(!t) return;
  var body=t.tBodies[0];
  t.querySelectorAll('th').forEach(function(th,i){
    th.addEventListener('click',function(){
      var up=!th.classList.contains('up');
      t.querySelectorAll('th').forEach(function(h){h.classList.remove('up','down');});
      th.classList.add(up?'up':'down');
      var rows=Array.prototype.slice.call(body.rows);
      function key(r){var c=r.cells[i];var v=c.getAttribute('data-v');return v===null?c.textContent:(v===''?null:parseFloat(v));}
      rows.sort(function(a,b){
        var x=key(a),y=key(b);
        if(x===null) return y===null?0:1; if(y===null) return -1;
        var d=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));
        return up?d:-d;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
  var f=document.getElementById('filter');
  f.addEventListener('input',function(){
    var q=f.value.toLowerCase();
    Array.prototype.forEach.call(body.rows,function(r){
      r.style.display=r.textContent.toLowerCase().indexOf(q)>=0?'':'none';});
  });
})();
"#;

/// One line on the configuration of a run.
fn describe(r: &BenchReport) -> String {
    let mut s = format!(
        "sysyc -O{}{}, {} case(s), {} timed run(s) each",
        r.opt_level,
        r.regalloc
            .as_ref()
            .map_or(String::new(), |a| format!(" (register allocator: {a})")),
        r.cases.len(),
        r.runs
    );
    if let Some(c) = &r.commit {
        let _ = write!(s, ", commit {c}");
    }
    if let Some(sh) = &r.shard {
        let _ = write!(s, ", shard {sh} only");
    }
    for m in Metric::ALL {
        if let Some(g) = geomean(r.cases.iter().filter_map(|row| row.ratio_of(m))) {
            let _ = write!(s, "; geomean sysyc/gcc {} {g:.3}", m.key());
        }
    }
    s + "."
}

struct Bar {
    name: String,
    value: f64,
}

/// A log2 axis over `[2^lo, 2^hi]` mapped to `[x0, x0 + width]`.
struct LogAxis {
    lo: i32,
    hi: i32,
    x0: f64,
    width: f64,
}

impl LogAxis {
    /// An axis covering every value and 1, with a little room, in whole powers of two.
    fn covering(values: impl Iterator<Item = f64>, x0: f64, width: f64) -> LogAxis {
        let (mut lo, mut hi) = (1.0f64, 1.0f64);
        for v in values.filter(|v| *v > 0.0 && v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let lo = ((lo / 1.1).log2().floor() as i32).clamp(-30, -1);
        let hi = ((hi * 1.1).log2().ceil() as i32).clamp(1, 30);
        LogAxis { lo, hi, x0, width }
    }

    fn at(&self, v: f64) -> f64 {
        let t = (v.max(1e-12).log2() - self.lo as f64) / (self.hi - self.lo) as f64;
        self.x0 + t.clamp(0.0, 1.0) * self.width
    }

    /// Tick values (powers of two, thinned to at most ~12) with labels `1/4`, `1`, `8`.
    fn ticks(&self) -> Vec<(f64, String)> {
        let step = ((self.hi - self.lo) as usize).div_ceil(12).max(1);
        (self.lo..=self.hi)
            .filter(|e| ((e - self.lo) as usize).is_multiple_of(step) || *e == 0)
            .map(|e| {
                let label = if e >= 0 {
                    format!("{}", 1u64 << e.min(62))
                } else {
                    format!("1/{}", 1u64 << (-e).min(62))
                };
                (2f64.powi(e), label)
            })
            .collect()
    }
}

fn colour(v: f64) -> &'static str {
    if v <= 1.0 {
        "#4a9a4a"
    } else if v <= 1.5 {
        "#d99a2b"
    } else {
        "#c0392b"
    }
}

/// A horizontal bar chart of ratios on a log2 axis, bars growing from 1 (left: better).
fn ratio_chart(key: &str, title: &str, bars: &[Bar]) -> String {
    let (label_w, plot_w, row_h, top) = (300.0, 600.0, 16.0, 34.0);
    let axis = LogAxis::covering(bars.iter().map(|b| b.value), label_w, plot_w);
    let geo = geomean(bars.iter().map(|b| b.value));
    let bottom = top + row_h * bars.len() as f64;
    let mut s = format!(
        "<svg class=\"chart\" data-metric=\"{key}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        label_w + plot_w + 90.0,
        bottom + 44.0
    );
    let _ = writeln!(
        s,
        "<text x=\"{label_w}\" y=\"16\" font-size=\"13\">{} (log scale)</text>",
        esc(title)
    );
    for (v, label) in axis.ticks() {
        let x = axis.at(v);
        let (stroke, w) = if v == 1.0 {
            ("#333", 1.5)
        } else {
            ("#ddd", 1.0)
        };
        let _ = writeln!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{}\" y2=\"{bottom}\" stroke=\"{stroke}\" stroke-width=\"{w}\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{label}</text>",
            top - 4.0,
            bottom + 14.0
        );
    }
    let one = axis.at(1.0);
    for (i, b) in bars.iter().enumerate() {
        let y = top + row_h * i as f64;
        let x = axis.at(b.value);
        let (left, width) = if x < one {
            (x, one - x)
        } else {
            (one, x - one)
        };
        let (tx, anchor) = if x < one {
            (x - 4.0, "end")
        } else {
            (x + 4.0, "start")
        };
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{left:.1}\" y=\"{}\" width=\"{:.1}\" height=\"{}\" fill=\"{}\"><title>{}: {:.3}</title></rect><text x=\"{tx:.1}\" y=\"{}\" text-anchor=\"{anchor}\" fill=\"#555\">{:.3}</text>",
            label_w - 70.0,
            y + 11.0,
            esc(&b.name),
            y + 2.0,
            width.max(1.0),
            row_h - 4.0,
            colour(b.value),
            esc(&b.name),
            b.value,
            y + 11.0,
            b.value
        );
    }
    if let Some(g) = geo {
        let _ = writeln!(
            s,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{bottom}\" stroke=\"#1f5fbf\" stroke-dasharray=\"5,3\" stroke-width=\"2\"/><text x=\"{0:.1}\" y=\"{1}\" text-anchor=\"middle\" fill=\"#1f5fbf\">geomean {g:.3}</text>",
            axis.at(g),
            bottom + 30.0
        );
    }
    s + "</svg>\n"
}

/// The case table: status, the reference compiler, per metric both numbers and the ratio.
fn table(r: &BenchReport, cmp: Option<&Comparison>) -> String {
    let with_ref = r.reference.is_some();
    let metrics: Vec<Metric> = Metric::ALL
        .into_iter()
        .filter(|m| {
            r.cases.iter().any(|row| {
                m.value(&row.sysyc).is_some()
                    || row.reference.as_ref().is_some_and(|g| m.value(g).is_some())
            })
        })
        .collect();
    let mut s = String::from(
        "<h2>Cases</h2>\n<input id=\"filter\" placeholder=\"filter: case, status or compiler\">\n<table id=\"cases\"><thead><tr><th>case</th><th>status</th>",
    );
    if with_ref {
        s += "<th>reference</th>";
    }
    for m in &metrics {
        let _ = write!(s, "<th>sysyc {}</th>", m.key());
        if with_ref {
            let _ = write!(s, "<th>ref {0}</th><th>ratio {0}</th>", m.key());
        }
    }
    s += "<th>timer spread</th><th>static</th><th>spill loads</th><th>spill stores</th><th>moves</th><th>frame bytes</th></tr></thead>\n<tbody>\n";
    for row in &r.cases {
        let status = status(row, cmp);
        let bad = status != "ok";
        let _ = write!(
            s,
            "<tr{}><td>{}</td><td class=\"t\">{}</td>",
            if bad { " class=\"bad\"" } else { "" },
            esc(&row.name),
            esc(&status)
        );
        if with_ref {
            let by = row
                .reference
                .as_ref()
                .and_then(|g| g.built_by.clone())
                .map_or("-".into(), |b| format!("{b} -O2"));
            let _ = write!(s, "<td class=\"t\">{}</td>", esc(&by));
        }
        for &m in &metrics {
            s += &num_cell(m.value(&row.sysyc), |v| m.show(v));
            if with_ref {
                s += &num_cell(row.reference.as_ref().and_then(|g| m.value(g)), |v| {
                    m.show(v)
                });
                s += &num_cell(row.ratio_of(m), |v| format!("{v:.3}"));
            }
        }
        let spread = row.sysyc.timer.as_ref().filter(|t| t.n > 1);
        s += &num_cell(spread.and_then(|t| t.noise_pct()), |p| {
            let t = spread.map_or((0.0, 0.0), |t| (t.min, t.max));
            format!("{:.1}-{:.1}ms ±{p:.1}%", t.0 / 1e3, t.1 / 1e3)
        });
        let count = |f: fn(&Measure) -> Option<u64>| {
            num_cell(f(&row.sysyc).map(|v| v as f64), |v| format!("{v:.0}"))
        };
        s += &count(|m| m.static_insns);
        s += &count(|m| m.spill_loads);
        s += &count(|m| m.spill_stores);
        s += &count(|m| m.moves);
        s += &count(|m| m.frame_bytes);
        s += "</tr>\n";
    }
    s + "</tbody></table>\n"
}

/// The status of a row: `ok`, or what is wrong with sysyc's run, the baseline comparison and
/// the reference's run.
fn status(row: &BenchRow, cmp: Option<&Comparison>) -> String {
    let mut parts = Vec::new();
    if !row.sysyc.ok() {
        parts.push(row.sysyc.status.clone());
    }
    if let Some((_, why)) = cmp.and_then(|c| c.regressions.iter().find(|(n, _)| *n == row.name)) {
        if row.sysyc.ok() {
            parts.push(format!("regressed: {why}"));
        }
    }
    if let Some(g) = row.reference.as_ref().filter(|g| !g.ok()) {
        parts.push(format!("gcc: {}", g.status));
    }
    if parts.is_empty() {
        "ok".into()
    } else {
        parts.join("; ")
    }
}

fn num_cell(v: Option<f64>, show: impl Fn(f64) -> String) -> String {
    match v {
        Some(v) => format!("<td data-v=\"{v}\">{}</td>", esc(&show(v))),
        None => "<td data-v=\"\">-</td>".into(),
    }
}

/// One point of a trend: a run's label and the geometric mean of sysyc / reference.
struct Point {
    label: String,
    value: f64,
    cases: usize,
}

/// The trend of `m` over `runs`: per run that measured it against a reference, the geometric
/// mean ratio over its cases.
fn trend(runs: &[BenchReport], m: Metric) -> Vec<Point> {
    runs.iter()
        .filter_map(|r| {
            let ratios: Vec<f64> = r.cases.iter().filter_map(|row| row.ratio_of(m)).collect();
            Some(Point {
                label: run_label(r),
                value: geomean(ratios.iter().copied())?,
                cases: ratios.len(),
            })
        })
        .collect()
}

fn run_label(r: &BenchReport) -> String {
    r.commit.clone().unwrap_or_else(|| date(r.unix_time))
}

/// `YYYY-MM-DD` of a Unix time (UTC), from the civil-from-days algorithm.
fn date(unix: u64) -> String {
    let z = (unix / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A line chart of a trend: runs left to right, the ratio on a log2 axis (up is worse).
fn trend_chart(m: Metric, points: &[Point]) -> String {
    let (left, top, plot_w, plot_h) = (70.0, 30.0, 760.0, 220.0);
    let axis = LogAxis::covering(points.iter().map(|p| p.value), 0.0, plot_h);
    let y = |v: f64| top + plot_h - axis.at(v);
    let step = plot_w / (points.len() - 1).max(1) as f64;
    let x = |i: usize| left + step * i as f64;
    let mut s = format!(
        "<svg class=\"trend\" data-metric=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"{left}\" y=\"16\" font-size=\"13\">{}: geomean sysyc / gcc -O2 per saved run (log scale, lower is better)</text>\n",
        m.key(),
        left + plot_w + 60.0,
        top + plot_h + 70.0,
        esc(m.title())
    );
    for (v, label) in axis.ticks() {
        let (stroke, w) = if v == 1.0 {
            ("#333", 1.5)
        } else {
            ("#ddd", 1.0)
        };
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{0}\" y1=\"{1:.1}\" y2=\"{1:.1}\" stroke=\"{stroke}\" stroke-width=\"{w}\"/><text x=\"{2}\" y=\"{3:.1}\" text-anchor=\"end\">{label}</text>",
            left + plot_w,
            y(v),
            left - 6.0,
            y(v) + 4.0
        );
    }
    let path: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:.1},{:.1}", x(i), y(p.value)))
        .collect();
    let _ = writeln!(
        s,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"2\"/>",
        path.join(" ")
    );
    for (i, p) in points.iter().enumerate() {
        let _ = writeln!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{}\"><title>{}: {:.3} over {} cases</title></circle><text transform=\"translate({:.1},{:.1}) rotate(30)\" font-size=\"10\">{}</text>",
            x(i),
            y(p.value),
            colour(p.value),
            esc(&p.label),
            p.value,
            p.cases,
            x(i),
            top + plot_h + 12.0,
            esc(&p.label)
        );
    }
    s + "</svg>\n"
}

/// The trend as text, for the terminal.
pub fn trend_table(runs: &[BenchReport]) -> String {
    let mut s = format!("{:<24} {:<12} {:>6}", "run", "date", "cases");
    let metrics: Vec<Metric> = Metric::ALL
        .into_iter()
        .filter(|&m| {
            runs.iter()
                .any(|r| r.cases.iter().any(|c| c.ratio_of(m).is_some()))
        })
        .collect();
    for m in &metrics {
        let _ = write!(s, " {:>12}", format!("{}/gcc", m.key()));
    }
    s.push('\n');
    for r in runs {
        let _ = write!(
            s,
            "{:<24} {:<12} {:>6}",
            r.commit.as_deref().unwrap_or("-"),
            date(r.unix_time),
            r.cases.len()
        );
        for &m in &metrics {
            let g = geomean(r.cases.iter().filter_map(|c| c.ratio_of(m)));
            let _ = write!(s, " {:>12}", g.map_or("-".into(), |g| format!("{g:.4}")));
        }
        s.push('\n');
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::bench::tests::sample_report;

    #[test]
    fn a_chart_per_metric_present_on_a_log_axis() {
        let mut r = sample_report();
        let page = html(Some(&r), None, &[]);
        // Instructions and timers are present, cycles not: two charts, three bars each.
        assert_eq!(page.matches("<svg class=\"chart\"").count(), 2, "{page}");
        assert!(page.contains("data-metric=\"insns\"") && page.contains("data-metric=\"timer\""));
        assert_eq!(page.matches("<rect").count(), 6);
        assert!(page.contains("geomean 1.423") && page.contains("perf/case&lt;0&gt;"));
        assert!(page.contains("(log scale)") && page.contains(">1/2<") && page.contains(">2<"));
        // The reference compiler is named per case; the table sorts and filters.
        assert!(page.contains("<td class=\"t\">clang -O2</td>"), "{page}");
        assert!(page.contains("id=\"filter\"") && page.contains("addEventListener('click'"));
        // Cycles, once measured, get their own chart.
        for row in &mut r.cases {
            row.sysyc.cycles = row.sysyc.insns.map(|i| i * 2);
            if let Some(g) = &mut row.reference {
                g.cycles = g.insns.map(|i| i * 3);
            }
        }
        let page = html(Some(&r), None, &[]);
        assert!(
            page.contains("data-metric=\"cycles\""),
            "cycles chart missing"
        );
        assert!(page.contains("<th>ratio cycles</th>"));
        if let Some(p) = std::env::var_os("SYSY_BENCH_HTML_SAMPLE") {
            std::fs::write(p, &page).unwrap();
        }
    }

    #[test]
    fn log_axis_keeps_small_ratios_apart() {
        let a = LogAxis::covering([0.01, 0.05, 3.0].into_iter(), 0.0, 100.0);
        assert_eq!((a.lo, a.hi), (-7, 2));
        assert!(a.at(0.05) - a.at(0.01) > 20.0);
        assert!((a.at(1.0) - 700.0 / 9.0).abs() < 1e-9);
        let labels: Vec<String> = a.ticks().into_iter().map(|t| t.1).collect();
        assert!(labels.contains(&"1/128".to_string()) && labels.contains(&"1".to_string()));
    }

    #[test]
    fn trend_over_saved_runs() {
        let mut runs = vec![sample_report(), sample_report()];
        runs[1].commit = Some("def456".into());
        runs[1].unix_time += 86_400;
        runs[1].cases[2].sysyc.insns = Some(100);
        let page = html(None, None, &runs);
        assert_eq!(page.matches("<svg class=\"trend\"").count(), 2, "{page}");
        assert!(page.contains("abc123: 1.423 over 3 cases"), "{page}");
        assert!(page.contains("def456: 0.986 over 3 cases"), "{page}");
        let t = trend_table(&runs);
        assert!(
            t.contains("def456") && t.contains("2023-11-15") && t.contains("0.9865"),
            "{t}"
        );
    }
}
