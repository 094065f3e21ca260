//! The `spgemm` command's edges: output paths checked before any work,
//! a rectangular A alone, every error on one line naming what is at
//! fault, `info`'s field and symmetry, the CPU `bench` table.

use crate::common;
use std::process::{Command, Output};

fn spgemm(args: &[&str]) -> Output {
    common::spgemm_command().args(args).output().unwrap()
}

/// Standard error of a failed run, asserting the exit code and that the
/// error is the last line, alone, and the only line but progress.
fn one_line_error(r: &Output, code: i32) -> String {
    let err = String::from_utf8_lossy(&r.stderr).into_owned();
    assert_eq!(r.status.code(), Some(code), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("spgemm: error: "))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert_eq!(err.trim_end().lines().last(), Some(lines[0]), "{err}");
    lines[0].to_string()
}

#[test]
fn output_path_is_checked_before_any_work_and_named_as_the_output() {
    let karate = common::matrices_dir().join("karate.mtx.gz");
    let karate = karate.to_str().unwrap();
    // The output is checked before anything is read: with a missing input
    // too, the error is the output's.
    let r = spgemm(&["multiply", "no/such/A.mtx", "-o", "missing/dir/C.mtx"]);
    let e = one_line_error(&r, 1);
    assert!(
        e.contains("output missing/dir/C.mtx: folder missing/dir does not exist"),
        "{e}"
    );
    for out in ["C.txt", "C.csv", "C"] {
        let e = one_line_error(&spgemm(&["multiply", karate, "-o", out]), 1);
        assert!(
            e.contains(&format!(
                "output {out}: unknown extension: name it .mtx, .mtx.gz or .npz"
            )),
            "{e}"
        );
    }
    let dir = common::temp_file("cli_edges", "folder.mtx");
    std::fs::create_dir_all(&dir).unwrap();
    let e = one_line_error(&spgemm(&["gen", "er:10:2", "-o", dir.to_str().unwrap()]), 1);
    assert!(e.contains("is a folder"), "{e}");
    let e = one_line_error(
        &spgemm(&[
            "multiply",
            karate,
            "-o",
            "c.mtx",
            "--timings",
            "no/such/t.json",
        ]),
        1,
    );
    assert!(
        e.contains("output no/such/t.json: folder no/such does not exist"),
        "{e}"
    );
    let e = one_line_error(&spgemm(&["bench", karate, "--json", "no/such/b.json"]), 1);
    assert!(e.contains("output no/such/b.json"), "{e}");
    // Every extension named in the error is written, in its own format.
    for ext in ["mtx", "mtx.gz", "npz", "MTX"] {
        let out = common::temp_file("cli_edges", &format!("c.{ext}"));
        let r = spgemm(&["multiply", karate, "-o", out.to_str().unwrap()]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let c = spgemm::files::read::<f64>(&out, &Default::default()).unwrap();
        assert_eq!(c.shape(), (34, 34));
    }
}

#[test]
fn a_rectangular_a_alone_is_multiplied_by_its_transpose_and_says_so() {
    let ash = common::matrices_dir().join("ash219.mtx.gz");
    let out = common::temp_file("cli_edges", "aat.mtx");
    let r = spgemm(&[
        "multiply",
        ash.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    assert!(
        err.contains("A is 219x85, not square: computing C = A·Aᵀ"),
        "{err}"
    );
    assert!(err.contains("C = A·Aᵀ: 219x219"), "{err}");
    let a = spgemm::mtx::read_path::<f64>(&ash).unwrap();
    let c = spgemm::mtx::read_path::<f64>(&out).unwrap();
    let at = a.transpose().unwrap();
    spgemm::verify::check_product(&a, &at, &c).unwrap().unwrap();
}

#[test]
fn argument_file_and_format_errors_are_one_line_naming_what_is_at_fault() {
    let e = one_line_error(&spgemm(&["multiply"]), 2);
    assert!(e.contains("--output <OUTPUT>") && e.contains("<A>"), "{e}");
    let e = one_line_error(
        &spgemm(&["multiply", "a.mtx", "-o", "c.mtx", "--backend", "gpu"]),
        2,
    );
    assert!(
        e.contains("'gpu'") && e.contains("auto, cpu, cuda, hip"),
        "{e}"
    );
    let e = one_line_error(&spgemm(&["multiply", "--bogus"]), 2);
    assert!(e.contains("'--bogus'"), "{e}");
    let young = common::matrices_dir().join("young1c.mtx.gz");
    let e = one_line_error(&spgemm(&["info", young.to_str().unwrap()]), 1);
    assert!(
        e.contains("young1c.mtx.gz: line 1: complex values are not supported"),
        "{e}"
    );
    let e = one_line_error(&spgemm(&["gen", "stencil9:4", "-o", "x.mtx"]), 1);
    assert!(
        e.contains("unknown generator 'stencil9'") || e.contains("stencil9"),
        "{e}"
    );
    assert!(!e.contains("Matrix Market"), "{e}");
    let e = one_line_error(&spgemm(&["info", "no/such.mtx"]), 1);
    assert!(e.contains("no/such.mtx"), "{e}");
}

#[test]
fn info_prints_field_and_symmetry() {
    let dir = common::matrices_dir();
    for (name, field, symmetry) in [
        ("nos4", "real", "symmetric (347 entries stored)"),
        (
            "karate",
            "pattern (every entry 1)",
            "symmetric (78 entries stored)",
        ),
        ("west0067", "real", "general"),
    ] {
        let path = dir.join(format!("{name}.mtx.gz"));
        let r = spgemm(&["info", path.to_str().unwrap()]);
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        assert!(out.contains(&format!("field         {field}\n")), "{out}");
        assert!(
            out.contains(&format!("symmetry      {symmetry}\n")),
            "{out}"
        );
    }
}

#[test]
fn cpu_bench_shows_only_what_applies_to_the_cpu() {
    let nos4 = common::matrices_dir().join("nos4.mtx.gz");
    let r = Command::new(env!("CARGO_BIN_EXE_spgemm"))
        .args([
            "bench",
            nos4.to_str().unwrap(),
            "--backend",
            "cpu",
            "--check",
            "--reps",
            "2",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(out.contains("our product on the CPU"), "{out}");
    for absent in ["device", "kernels only", "floor", "other ms", "speedup"] {
        assert!(!out.contains(absent), "'{absent}' in: {out}");
    }
    let row = out.lines().find(|l| l.starts_with("nos4.mtx.gz")).unwrap();
    assert!(!row.contains(" - "), "{row}");
    assert!(out.contains("check: ok"), "{out}");
}
