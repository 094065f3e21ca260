//! `spgemm report`: results of `spgemm bench --json` from several runs
//! (devices, backends, vendors) side by side, as a table and an SVG chart
//! of GFLOPS per matrix per device and library.

use super::CliError;
use clap::Args;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// JSON files written by `spgemm bench --json`.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The chart to write (SVG).
    #[arg(short, long, default_value = "spgemm-report.svg")]
    output: PathBuf,
}

/// GFLOPS by (series, matrix); series are "library on device".
struct Results {
    matrices: Vec<String>,
    series: Vec<String>,
    gflops: BTreeMap<(String, String), f64>,
}

fn output_error(path: &std::path::Path, message: impl ToString) -> CliError {
    CliError::Output {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

fn load(files: &[PathBuf]) -> Result<Results, CliError> {
    let mut r = Results {
        matrices: Vec::new(),
        series: Vec::new(),
        gflops: BTreeMap::new(),
    };
    let mut add = |series: String, matrix: &str, g: f64| {
        if !r.series.contains(&series) {
            r.series.push(series.clone());
        }
        if !r.matrices.iter().any(|m| m == matrix) {
            r.matrices.push(matrix.to_string());
        }
        r.gflops.insert((series, matrix.to_string()), g);
    };
    for path in files {
        let text = std::fs::read_to_string(path).map_err(|e| output_error(path, e))?;
        let rows: Vec<serde_json::Value> = serde_json::from_str(&text)
            .map_err(|e| output_error(path, format!("not a bench result array: {e}")))?;
        for (i, row) in rows.iter().enumerate() {
            let field = |k: &str| {
                row.get(k)
                    .ok_or_else(|| output_error(path, format!("entry {i} has no '{k}'")))
            };
            let matrix = field("matrix")?.as_str().unwrap_or("?");
            let device = field("device")?.as_str().unwrap_or("?");
            let backend = field("backend")?.as_str().unwrap_or("?");
            let g = field("gflops")?
                .as_f64()
                .ok_or_else(|| output_error(path, format!("entry {i}: gflops is not a number")))?;
            add(format!("spgemm {backend} on {device}"), matrix, g);
            if let Some(c) = row.get("compared").filter(|c| !c.is_null()) {
                if let (Some(lib), Some(g)) = (
                    c.get("library").and_then(|l| l.as_str()),
                    c.get("gflops").and_then(|g| g.as_f64()),
                ) {
                    add(format!("{lib} on {device}"), matrix, g);
                }
            }
        }
    }
    Ok(r)
}

pub fn run(args: &ReportArgs) -> Result<(), CliError> {
    spgemm::files::check_output(&args.output, false)?;
    let r = load(&args.files)?;
    println!("GFLOPS (2·nprod / time)");
    for (i, s) in r.series.iter().enumerate() {
        println!("  [{}] {s}", i + 1);
    }
    print!("{:<28}", "matrix");
    for i in 0..r.series.len() {
        print!(" {:>10}", format!("[{}]", i + 1));
    }
    println!();
    for m in &r.matrices {
        print!("{m:<28}");
        for s in &r.series {
            match r.gflops.get(&(s.clone(), m.clone())) {
                Some(g) => print!(" {g:>10.2}"),
                None => print!(" {:>10}", "-"),
            }
        }
        println!();
    }
    chart(&r, &args.output).map_err(|e| output_error(&args.output, e))?;
    eprintln!("wrote {}", args.output.display());
    Ok(())
}

/// Grouped bars: one group per matrix, one bar per series.
fn chart(r: &Results, path: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let width =
        (160 + 90 * r.matrices.len() as u32 * r.series.len().max(1) as u32 / 2).clamp(640, 4000);
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let top = r.gflops.values().copied().fold(0.0f64, f64::max).max(1e-9) * 1.15;
    let groups = r.matrices.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption("spgemm: GFLOPS per matrix", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(60)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..groups as f64, 0f64..top)?;
    let names = r.matrices.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        // Ticks every half unit; only group centres (odd halves) are named.
        .x_labels(2 * groups + 1)
        .x_label_formatter(&|x| {
            let half = (x * 2.0).round() as usize;
            if half % 2 == 1 {
                names.get(half / 2).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("GFLOPS")
        .draw()?;
    let n = r.series.len().max(1) as f64;
    for (si, s) in r.series.iter().enumerate() {
        let color = Palette99::pick(si).to_rgba();
        let bars = r.matrices.iter().enumerate().filter_map(|(mi, m)| {
            let g = *r.gflops.get(&(s.clone(), m.clone()))?;
            let x0 = mi as f64 + 0.1 + 0.8 * si as f64 / n;
            Some(Rectangle::new(
                [(x0, 0.0), (x0 + 0.8 / n, g)],
                color.filled(),
            ))
        });
        chart
            .draw_series(bars)?
            .label(s.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
