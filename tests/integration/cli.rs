//! The `spgemm` command end to end.

use crate::common;

use std::process::Command;

fn spgemm() -> Command {
    common::spgemm_command()
}

fn tmp(name: &str) -> std::path::PathBuf {
    common::temp_file("cli", name)
}

/// Runs `cmd`, asserts that it succeeded, and returns its standard error.
fn stderr_of_success(cmd: &mut Command) -> String {
    let r = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr).into_owned();
    assert!(r.status.success(), "{err}");
    err
}

#[test]
fn multiply_writes_the_right_product() {
    let a = common::matrices_dir().join("lp_ship04l.mtx.gz");
    let b = tmp("ship_t.mtx");
    let at = spgemm::mtx::read_path::<f64>(&a)
        .unwrap()
        .transpose()
        .unwrap();
    spgemm::mtx::write_path(&b, &at).unwrap();
    let a = a.to_str().unwrap();
    let b = b.to_str().unwrap();
    let times = tmp("times.json");
    for (out, verbose) in [(tmp("c.mtx.gz"), false), (tmp("c.npz"), true)] {
        let mut args = vec![
            "multiply",
            a,
            b,
            "-o",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
        ];
        args.extend(["--timings", times.to_str().unwrap()]);
        if verbose {
            args.push("-v");
        }
        let stderr = stderr_of_success(spgemm().args(&args));
        // The backend is named only when asked for.
        assert_eq!(stderr.contains("backend: cpu"), verbose, "{stderr}");
        for step in ["read ", "upload ", "product ", "download ", "write "] {
            assert!(stderr.contains(step), "no {step}time in: {stderr}");
        }
        let t: serde_json::Value = serde_json::from_slice(&std::fs::read(&times).unwrap()).unwrap();
        assert!(
            t["read_ms"].as_f64().unwrap() > 0.0 && t["write_ms"].as_f64().is_some(),
            "{t}"
        );
        let c = spgemm::files::read::<f64>(&out, &Default::default()).unwrap();
        let a = spgemm::mtx::read_path::<f64>(a).unwrap();
        spgemm::verify::check_product(&a, &at, &c).unwrap().unwrap();
    }
}

#[test]
fn bench_reports_json_and_checks() {
    let json = tmp("bench.json");
    let m = common::matrices_dir().join("bcsstk08.mtx.gz");
    let r = spgemm()
        .args([
            "bench",
            m.to_str().unwrap(),
            "gen:stencil7:6",
            "--reps",
            "2",
            "--check",
            "--json",
            json.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(stdout.contains("check: ok"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for key in [
        "matrix",
        "backend",
        "device",
        "nprod",
        "nnz_c",
        "median_ms",
        "gflops",
    ] {
        assert!(rows[0].get(key).is_some(), "missing {key}");
    }
    assert_eq!(rows[0]["matrix"], "bcsstk08.mtx.gz");
    assert_eq!(rows[1]["matrix"], "stencil7:6");
}

#[test]
fn bench_without_files_uses_the_bundled_matrix() {
    let r = spgemm()
        .args(["bench", "--reps", "1", "--backend", "cpu"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("bcsstk16.mtx.gz"));
}

#[test]
fn info_and_gen() {
    for name in ["g.mtx", "g.npz"] {
        let out = tmp(name);
        let r = spgemm()
            .args(["gen", "rmat:8:4", "-o", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let r = spgemm()
            .args(["info", out.to_str().unwrap()])
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&r.stdout);
        assert!(
            r.status.success()
                && s.contains("size          256 x 256")
                && s.contains("compression"),
            "{s}"
        );
    }
}

#[test]
fn errors_are_one_line_with_nonzero_exit() {
    // A GPU backend is an error only where it cannot open.
    let missing = |kind| spgemm::Backend::select(kind).is_err();
    for args in [
        vec!["multiply", "/no/such.mtx", "-o", "/tmp/x.mtx"],
        vec!["multiply", "gen:er:10:2", "gen:er:11:2", "-o", "/tmp/x.mtx"],
        vec![
            "multiply",
            "gen:er:10:2",
            "-o",
            "/tmp/x.mtx",
            "--backend",
            "cuda",
        ],
        vec![
            "multiply",
            "gen:er:10:2",
            "-o",
            "/tmp/x.mtx",
            "--backend",
            "hip",
        ],
    ]
    .into_iter()
    .filter(|args| match args.last() {
        Some(&"cuda") => missing(spgemm::BackendKind::Cuda),
        Some(&"hip") => missing(spgemm::BackendKind::Hip),
        _ => true,
    }) {
        let r = spgemm().args(&args).output().unwrap();
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        let last = err.lines().last().unwrap_or("");
        assert!(last.starts_with("spgemm: error: "), "{args:?}: {err}");
    }
}

#[test]
fn a_closed_output_pipe_ends_the_program_without_a_panic() {
    use std::io::Read;
    let mut child = spgemm()
        .args(["gen", "rmat:10:4", "-o", tmp("p.mtx").to_str().unwrap()])
        .spawn()
        .unwrap();
    assert!(child.wait().unwrap().success());
    let mut child = spgemm()
        .args(["info", tmp("p.mtx").to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before any output
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn report_lines_up_bench_results_in_a_table_and_a_chart() {
    let (j1, j2) = (tmp("r1.json"), tmp("r2.json"));
    for (json, m) in [(&j1, "bcsstk08"), (&j2, "nos4")] {
        let path = common::matrices_dir().join(format!("{m}.mtx.gz"));
        let r = spgemm()
            .args([
                "bench",
                path.to_str().unwrap(),
                "--reps",
                "1",
                "--json",
                json.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let svg = tmp("report.svg");
    let r = spgemm()
        .args([
            "report",
            j1.to_str().unwrap(),
            j2.to_str().unwrap(),
            "-o",
            svg.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let table = String::from_utf8_lossy(&r.stdout);
    assert!(
        table.contains("bcsstk08.mtx.gz")
            && table.contains("nos4.mtx.gz")
            && table.contains("spgemm cpu"),
        "{table}"
    );
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.contains("<svg") && chart.contains("bcsstk08.mtx.gz"));
    let bad = tmp("bad.json");
    std::fs::write(&bad, "{}").unwrap();
    let r = spgemm()
        .args(["report", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("not a bench result array"));
}

#[test]
fn gpu_options_on_the_cpu_backend_say_they_do_not_apply() {
    // The product bench and the whole job (which on a GPU runs its product
    // within the budget) both say so.
    let product = ["--devices", "0,1"];
    let whole_job = ["--whole-job", "--warmup", "0"];
    for extra in [&product[..], &whole_job[..]] {
        let err = stderr_of_success(
            spgemm()
                .args(["bench", "gen:er:200:3", "--backend", "cpu", "--reps", "1"])
                .args(["--memory-budget", "1M"])
                .args(extra),
        );
        assert!(
            err.contains("--memory-budget applies to GPU backends only"),
            "{extra:?}: {err}"
        );
        assert_eq!(
            err.contains("--devices with several devices applies to GPU backends only"),
            extra == product,
            "{extra:?}: {err}"
        );
    }
    let out = tmp("budget.mtx");
    let r = spgemm()
        .args(["multiply", "gen:er:50:2", "-o", out.to_str().unwrap()])
        .args([
            "--backend",
            "cpu",
            "--memory-budget",
            "2G",
            "--devices",
            "0",
        ])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let r = spgemm()
        .args(["multiply", "gen:er:50:2", "-o", out.to_str().unwrap()])
        .args(["--memory-budget", "12Q"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("not a byte count"));
}

#[test]
fn kernel_table_long_row_and_accumulator_options_are_checked_by_name() {
    let out = tmp("table.mtx");
    let err = stderr_of_success(
        spgemm()
            .args(["multiply", "gen:er:50:2", "-o", out.to_str().unwrap()])
            .args(["--backend", "cpu", "--table", "dcu-paper"])
            .args(["--long-rows", "sorted-hash", "--accumulator", "hash"])
            .args(["--symbolic", "estimate", "--estimate-percent", "50"]),
    );
    assert!(
        err.contains("--symbolic applies to GPU backends only"),
        "{err}"
    );
    assert!(
        err.contains("--estimate-percent applies to GPU backends only"),
        "{err}"
    );
    assert!(
        err.contains("--table applies to GPU backends only"),
        "{err}"
    );
    assert!(
        err.contains("--long-rows applies to GPU backends only"),
        "{err}"
    );
    assert!(
        err.contains("--accumulator applies to GPU backends only"),
        "{err}"
    );
    for (option, value, names) in [
        (
            "--accumulator",
            "dense",
            "auto, unranked, dense-hash, hash, packed",
        ),
        ("--table", "v100", "device, derived, v100-paper, dcu-paper"),
        ("--symbolic", "sampled", "auto, exact, bound, estimate"),
        (
            "--long-rows",
            "sorted",
            "auto, dense, sorted-hash, in-place-hash, ranked",
        ),
    ] {
        let r = spgemm()
            .args(["multiply", "gen:er:50:2", "-o", out.to_str().unwrap()])
            .args([option, value])
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(2));
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            err.contains(&format!("'{value}' (one of: {names})")),
            "{err}"
        );
    }
}

#[test]
fn an_empty_device_list_is_an_error() {
    let options = spgemm::GpuConfig {
        devices: vec![],
        ..Default::default()
    };
    for kind in [spgemm::BackendKind::Cuda, spgemm::BackendKind::Hip] {
        let e = spgemm::Backend::select_with(kind, &options).unwrap_err();
        assert!(
            matches!(
                e,
                spgemm::Error::Core(spgemm_core::Error::NoDevices)
                    | spgemm::Error::BackendUnavailable { .. }
            ),
            "{e}"
        );
    }
}
