//! `spgemm bench` on products of two matrices and on whole jobs, and the
//! comparisons that cannot run.

use crate::common;

use std::process::Command;

fn spgemm() -> Command {
    common::spgemm_command()
}

fn tmp(name: &str) -> std::path::PathBuf {
    common::temp_file("cli-products", name)
}

fn json(path: &std::path::Path) -> Vec<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v.as_array().unwrap().clone()
}

#[test]
fn bench_names_the_product_it_computed() {
    let out = tmp("products.json");
    let ash = common::matrices_dir().join("ash219.mtx.gz");
    let r = spgemm()
        .args(["bench", "--backend", "cpu", "--reps", "1", "--check"])
        .args([
            "gen:poisson7:6+gen:sa-p:6",
            ash.to_str().unwrap(),
            "gen:er:50:3",
        ])
        .args(["--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(stdout.contains("A·Aᵀ when rectangular"), "{stdout}");
    let rows = json(&out);
    let products: Vec<&str> = rows
        .iter()
        .map(|r| r["product"].as_str().unwrap())
        .collect();
    assert_eq!(products, ["A·B", "A·Aᵀ", "A·A"]);
    assert_eq!(rows[0]["matrix"], "poisson7:6+sa-p:6");
    assert_eq!(rows[0]["cols"], 216);
}

#[test]
fn a_product_of_mismatched_shapes_is_a_one_line_error() {
    let r = spgemm()
        .args(["bench", "--backend", "cpu", "gen:er:50:3+gen:er:40:3"])
        .output()
        .unwrap();
    assert!(!r.status.success());
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(stderr.contains("dimension mismatch"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn comparisons_that_cannot_run_are_errors() {
    for args in [
        &["--whole-job", "--compare", "scipy-cupy"][..],
        &["--compare", "scipy-cupy"][..],
        &["--compare", "cusparse"][..],
        &["--whole-job", "--compare", "rocsparse"][..],
        &["--whole-job", "--compare", "graphblas"][..],
    ] {
        let r = spgemm()
            .args(["bench", "--backend", "cpu", "--reps", "1", "gen:er:50:3"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{args:?} succeeded");
        assert!(stderr.contains("error: comparison:"), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
}

/// Products beside SuiteSparse:GraphBLAS's plus-times `mxm` in the same
/// run (the README's test command installs python-graphblas), on a
/// hypersparse product and a product of two matrices: the same nnz(C).
#[test]
fn products_beside_graphblas() {
    let out = tmp("graphblas.json");
    let r = spgemm()
        .args([
            "bench",
            "--backend",
            "cpu",
            "--reps",
            "1",
            "--compare",
            "graphblas",
        ])
        .args(["gen:er:3000:1", "gen:poisson7:6+gen:sa-p:6"])
        .args(["--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for row in json(&out) {
        let peer = &row["compared"];
        assert!(
            peer["library"]
                .as_str()
                .unwrap()
                .starts_with("SuiteSparse:GraphBLAS"),
            "{row}"
        );
        assert_eq!(peer["nnz_c"], row["nnz_c"], "{row}");
        assert!(peer["speedup"].as_f64().unwrap() > 0.0, "{row}");
    }
}

#[test]
fn semiring_products_and_triangles_beside_graphblas() {
    let out = tmp("triangles.json");
    let grqc = common::matrices_dir().join("ca-GrQc.mtx.gz");
    let bench = ["bench", "--backend", "cpu", "--reps", "1", "--check"];
    let r = spgemm()
        .args(bench)
        .args(["--triangles", "--compare", "graphblas"])
        .args([grqc.to_str().unwrap(), "gen:rmat:8:8"])
        .args(["--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rows = json(&out);
    assert_eq!(rows[0]["triangles"], 48260.0);
    for row in &rows {
        assert_eq!(row["check"], "ok", "{row}");
        let peer = row["graphblas"]["library"].as_str().unwrap();
        assert!(peer.starts_with("SuiteSparse:GraphBLAS"), "{row}");
    }
    let out = tmp("semiring.json");
    let r = spgemm()
        .args(bench)
        .args(["--semiring", "min_plus", "--mask-self", "--complement"])
        .args(["--compare", "graphblas", "gen:er:300:4"])
        .args(["--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rows = json(&out);
    assert_eq!(rows[0]["product"], "C<!A> = A min_plus B");
    assert_eq!(rows[0]["check"], "ok");
    assert!(rows[0]["nnz_c"].as_u64().unwrap() > 300);
    // What cannot run is a one-line error before anything runs.
    for (args, want) in [
        (&["--complement"][..], "--mask-self"),
        (&["--semiring", "min_times"][..], "unknown semiring"),
        (
            &["--semiring", "any_pair", "--compare", "scipy"][..],
            "compare with --compare graphblas",
        ),
    ] {
        let r = spgemm()
            .args(["bench", "--backend", "cpu", "gen:er:30:2"])
            .args(args)
            .output()
            .unwrap();
        assert!(!r.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
}

#[test]
fn breadth_first_searches_beside_graphblas() {
    let out = tmp("bfs.json");
    let road = common::matrices_dir().join("luxembourg_osm.mtx.gz");
    let r = spgemm()
        .args([
            "bench",
            "--backend",
            "cpu",
            "--reps",
            "1",
            "--check",
            "--bfs",
        ])
        .args([
            "--compare",
            "graphblas",
            road.to_str().unwrap(),
            "gen:rmat:8:8",
        ])
        .args(["--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rows = json(&out);
    // The road network is one component: every vertex, 1,035 levels from
    // vertex 0.
    assert_eq!(rows[0]["reached"], 114_599);
    assert_eq!(rows[0]["levels"], 1035);
    for row in &rows {
        assert_eq!(row["check"], "ok", "{row}");
        assert!(row["graphblas"]["speedup"].as_f64().unwrap() > 0.0, "{row}");
    }
    // A matrix that is not square is a one-line error naming its shape.
    let rect = common::matrices_dir().join("ash219.mtx.gz");
    let r = spgemm()
        .args(["bench", "--backend", "cpu", "--bfs", rect.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!r.status.success());
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("graph: the adjacency matrix is 219x85, not square"),
        "{stderr}"
    );
}

/// The whole job beside SciPy's (CI installs SciPy).
#[test]
fn whole_job_times_every_step_beside_scipy() {
    let out = tmp("whole.json");
    let m = common::matrices_dir().join("bcsstk08.mtx.gz");
    let r = spgemm()
        .args([
            "bench",
            "--backend",
            "cpu",
            "--whole-job",
            "--compare",
            "scipy",
        ])
        .args([
            "--reps",
            "1",
            m.to_str().unwrap(),
            "gen:poisson7:5+gen:sa-p:5",
        ])
        .args(["--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rows = json(&out);
    assert_eq!(rows.len(), 2);
    for row in &rows {
        for step in ["read_ms", "multiply_ms", "write_ms", "total_ms"] {
            assert!(row["ours"][step].as_f64().unwrap() > 0.0, "{row}");
            assert!(row["python"][step].as_f64().unwrap() > 0.0, "{row}");
            assert!(row["speedup"][step].as_f64().unwrap() > 0.0, "{row}");
        }
        assert!(row["python_version"].as_str().unwrap().starts_with("scipy"));
    }
    assert_eq!(rows[0]["product"], "A·A");
    assert_eq!(rows[1]["product"], "A·B");
    assert!(rows[0]["output_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn multiply_with_a_semiring_mask_and_pruning_matches_the_reference() {
    let bus = common::matrices_dir().join("494_bus.mtx.gz");
    let out = tmp("min_plus.mtx");
    let r = spgemm()
        .args([
            "multiply",
            bus.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .args([
            "--semiring",
            "min-plus",
            "--mask",
            bus.to_str().unwrap(),
            "--complement",
        ])
        .args(["--keep", "3", "--prune", "0.5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(stderr.contains("(min_plus, ⟨¬M⟩, rows pruned)"), "{stderr}");
    let a: spgemm::CsrMatrix<f64> = spgemm::mtx::read_path(&bus).unwrap();
    let spec = spgemm::ProductSpec::new()
        .semiring(spgemm::semiring::Semiring::MinPlus)
        .mask(a.view(), true)
        .prune_below(0.5)
        .keep(3);
    let want = spgemm::reference::multiply_spec(a.view(), a.view(), &spec).unwrap();
    let got: spgemm::CsrMatrix<f64> = spgemm::mtx::read_path(&out).unwrap();
    assert_eq!(got, want);
}

#[test]
fn integer_values_are_read_multiplied_and_written_exactly() {
    // An integer Matrix Market file with negative values and one past 2³¹.
    let a = tmp("integers.mtx");
    let mut entries = Vec::new();
    for i in 0..40u64 {
        for j in [i, (i * 7 + 3) % 40, (i * 13 + 5) % 40] {
            if (i, j) != (0, 0) {
                entries.push(format!(
                    "{} {} {}",
                    i + 1,
                    j + 1,
                    ((i * 31 + j) % 11) as i64 - 5
                ));
            }
        }
    }
    entries.push("1 1 3000000000".into());
    let text = format!(
        "%%MatrixMarket matrix coordinate integer general\n40 40 {}\n{}\n",
        entries.len(),
        entries.join("\n")
    );
    std::fs::write(&a, &text).unwrap();
    let m: spgemm::CsrMatrix<i64> = spgemm::mtx::read_path(&a).unwrap();
    for (precision, semiring, out) in [
        ("i64", "plus_times", tmp("integers_c.mtx")),
        ("i64", "min_plus", tmp("integers_min.npz")),
    ] {
        let r = spgemm()
            .args(["multiply", a.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .args([
                "--backend",
                "cpu",
                "--precision",
                precision,
                "--semiring",
                semiring,
            ])
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let spec = spgemm::ProductSpec::new().semiring(semiring.parse().unwrap());
        let want = spgemm::reference::multiply_spec(m.view(), m.view(), &spec).unwrap();
        // (3·10⁹)² wraps in i64, as GraphBLAS's INT64 does.
        let got: spgemm::CsrMatrix<i64> = if semiring == "min_plus" {
            spgemm::npz::read_path(&out).unwrap()
        } else {
            spgemm::mtx::read_path(&out).unwrap()
        };
        assert_eq!(got, want, "{semiring}");
    }
    let head = std::fs::read_to_string(tmp("integers_c.mtx")).unwrap();
    assert!(head.starts_with("%%MatrixMarket matrix coordinate integer general"));
    // 3·10⁹ does not fit i32; a real value is no integer: one line naming
    // the line at fault.
    let bus = common::matrices_dir().join("494_bus.mtx.gz");
    let line = format!("line {}: ", entries.len() + 2);
    for (file, want) in [
        (
            a.to_str().unwrap(),
            [line.as_str(), "value '3000000000' does not fit i32"],
        ),
        (
            bus.to_str().unwrap(),
            ["line 15: ", "value '2220.874' is not an integer of i32"],
        ),
    ] {
        let r = spgemm()
            .args(["multiply", file, "-o", tmp("never.mtx").to_str().unwrap()])
            .args(["--precision", "i32", "--backend", "cpu"])
            .output()
            .unwrap();
        assert!(!r.status.success());
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(want.iter().all(|w| stderr.contains(w)), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
}

/// `--precision bool`: a pattern file squared as booleans (`lor_land`) and
/// under `min_plus` (`land_lor` on booleans), written as 0/1 integers and
/// `.npz` bools, against the reference on booleans; a value other than 0
/// and 1 refused by its line; bench refusing booleans in one line.
#[test]
fn booleans_multiply_and_refuse_elsewhere() {
    let email = common::matrices_dir().join("email-Eu-core.mtx.gz");
    let a: spgemm::CsrMatrix<spgemm::Bool> = spgemm::mtx::read_path(&email).unwrap();
    for (semiring, out) in [
        ("plus_times", tmp("bools_c.mtx")),
        ("min_plus", tmp("bools_min.npz")),
    ] {
        let r = spgemm()
            .args([
                "multiply",
                email.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ])
            .args([
                "--backend",
                "cpu",
                "--precision",
                "bool",
                "--semiring",
                semiring,
            ])
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let spec = spgemm::ProductSpec::new().semiring(semiring.parse().unwrap());
        let want = spgemm::reference::multiply_spec(a.view(), a.view(), &spec).unwrap();
        let got: spgemm::CsrMatrix<spgemm::Bool> =
            spgemm::files::read(&out, &Default::default()).unwrap();
        assert_eq!(got, want, "{semiring}");
    }
    let bus = common::matrices_dir().join("494_bus.mtx.gz");
    for (args, want) in [
        (
            [
                "multiply",
                bus.to_str().unwrap(),
                "-o",
                tmp("never.mtx").to_str().unwrap(),
            ],
            "line 15: ",
        ),
        (
            ["bench", bus.to_str().unwrap(), "--reps", "1"],
            "--precision bool runs with `spgemm multiply` only",
        ),
    ] {
        let r = spgemm()
            .args(args)
            .args(["--precision", "bool", "--backend", "cpu"])
            .output()
            .unwrap();
        assert!(!r.status.success());
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(stderr.contains(want), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
}

#[test]
fn bad_product_options_are_one_line_errors() {
    let bus = common::matrices_dir().join("494_bus.mtx.gz");
    let ash = common::matrices_dir().join("ash219.mtx.gz");
    let out = tmp("bad.mtx");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--semiring", "min_times"],
            "unknown semiring \"min_times\"",
        ),
        (
            &["--mask", ash.to_str().unwrap()],
            "the mask is 219x85 but the product is 494x494",
        ),
        (&["--prune=-1"], "at least 0"),
        (&["--complement"], "--mask"),
    ];
    // The CPU named: `auto` on a host without a GPU says so on a line of
    // its own before the product runs.
    for (args, want) in cases {
        let r = spgemm()
            .args([
                "multiply",
                bus.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--backend",
                "cpu",
            ])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{args:?}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    }
}

#[test]
fn ptap_writes_the_galerkin_product_and_times_a_resetup() {
    let out = tmp("ptap.mtx");
    let r = spgemm()
        .args([
            "ptap",
            "gen:poisson7:9",
            "gen:sa-p:9",
            "-o",
            out.to_str().unwrap(),
        ])
        .args(["--backend", "cpu"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(
        stderr.contains("C = Pᵀ·A·P: 27x27")
            && stderr.contains("re-setup")
            && stderr.contains("one call without a plan"),
        "{stderr}"
    );
    let a: spgemm::CsrMatrix<f64> = spgemm::generate::poisson_7(9).unwrap();
    let p: spgemm::CsrMatrix<f64> = spgemm::generate::sa_prolongator(9).unwrap();
    let ap = spgemm::reference::multiply(&a, &p).unwrap();
    let want = spgemm::reference::multiply(&p.transpose().unwrap(), &ap).unwrap();
    let got: spgemm::CsrMatrix<f64> = spgemm::mtx::read_path(&out).unwrap();
    assert_eq!(got.col_indices(), want.col_indices());
    for (x, y) in got.values().iter().zip(want.values()) {
        assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "{x} against {y}");
    }
    // R·A·P with R = Pᵀ given as a file is the same product.
    let rfile = tmp("r.mtx");
    spgemm::mtx::write_path(&rfile, &p.transpose().unwrap()).unwrap();
    let out2 = tmp("rap.mtx");
    let r = spgemm()
        .args([
            "ptap",
            "gen:poisson7:9",
            "gen:sa-p:9",
            "-o",
            out2.to_str().unwrap(),
        ])
        .args(["--backend", "cpu", "--restriction", rfile.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let got2: spgemm::CsrMatrix<f64> = spgemm::mtx::read_path(&out2).unwrap();
    assert_eq!(got2, got);
}
