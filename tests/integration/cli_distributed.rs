//! `spgemm plan-distributed` and, with the `mpi` feature,
//! `mpirun -n P spgemm multiply --distributed` against one process.

use crate::common;

#[test]
fn plan_distributed_predicts_both_algorithms_and_writes_json() {
    let json = common::temp_file("cli", "plan.json");
    let r = common::spgemm_command()
        .args([
            "plan-distributed",
            "gen:stencil27:12",
            "--ranks",
            "2,4,9",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // 1D at 2, 4 and 9 ranks, 2D at the squares 4 and 9.
    assert_eq!(
        out.lines().filter(|l| l.contains(" 1d")).count(),
        3,
        "{out}"
    );
    assert_eq!(
        out.lines().filter(|l| l.contains(" 2d")).count(),
        2,
        "{out}"
    );
    let text = std::fs::read_to_string(&json).unwrap();
    assert_eq!(text.matches("\"auto_picks\"").count(), 5, "{text}");
    let r = common::spgemm_command()
        .args(["plan-distributed", "gen:stencil7:4", "--ranks", "0"])
        .output()
        .unwrap();
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("at least 1"));
}

/// bcsstk08, as the readers give it.
#[cfg(feature = "mpi")]
fn expected_a() -> spgemm::CsrMatrix<f64> {
    spgemm::mtx::read_path(common::matrices_dir().join("bcsstk08.mtx.gz")).unwrap()
}

/// `spgemm multiply --backend cpu --distributed <flags> input -o out` run by
/// `mpirun --oversubscribe -n ranks` (as root too, as in containers and CI).
#[cfg(feature = "mpi")]
fn mpirun(
    ranks: usize,
    flags: &[&str],
    input: &std::path::Path,
    out: &std::path::Path,
) -> std::process::Output {
    std::process::Command::new("mpirun")
        .args(["--oversubscribe", "-n", &ranks.to_string()])
        .arg(env!("CARGO_BIN_EXE_spgemm"))
        .args(["multiply", "--backend", "cpu", "--distributed"])
        .args(flags)
        .arg(input)
        .arg("-o")
        .arg(out)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap()
}

#[cfg(feature = "mpi")]
#[test]
fn mpirun_multiply_distributed_matches_one_process() {
    let a = common::matrices_dir().join("bcsstk08.mtx.gz");
    let one = common::temp_file("cli", "dist_one.mtx");
    let r = common::spgemm_command()
        .args(["multiply", "--backend", "cpu"])
        .arg(&a)
        .arg("-o")
        .arg(&one)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let expected = spgemm::mtx::read_path::<f64>(&one).unwrap();
    // A plain .mtx is read by every rank at once, a .mtx.gz by rank 0;
    // .mtx, .mtx.gz and .npz written by every rank into one file.
    let plain = common::temp_file("cli", "bcsstk08.mtx");
    spgemm::mtx::write_path(&plain, &expected_a()).unwrap();
    for (ranks, algorithm, ext, input) in [
        (2, "1d", "mtx", &plain),
        (3, "auto", "mtx.gz", &a),
        (4, "2d", "npz", &plain),
    ] {
        let out = common::temp_file("cli", &format!("dist_{ranks}.{ext}"));
        let r = mpirun(ranks, &["--algorithm", algorithm], input, &out);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.success(), "{ranks} ranks: {err}");
        assert!(err.contains(&format!("on {ranks} ranks")), "{err}");
        let got = spgemm::files::read::<f64>(&out, &Default::default()).unwrap();
        assert_eq!(got.col_indices(), expected.col_indices());
        // Sums in another order: checked against the reference with its
        // error bound (entries that cancel to about 0 included).
        let m = spgemm::mtx::read_path::<f64>(&a).unwrap();
        spgemm::verify::check_product(&m, &m, &got)
            .unwrap()
            .unwrap();
    }
    // 2D on 3 ranks: one clear error, from rank 0 only.
    let bad = common::temp_file("cli", "dist_bad.mtx");
    let r = mpirun(3, &["--algorithm", "2d"], &a, &bad);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success());
    assert!(
        err.contains("2D SUMMA needs a square number of ranks"),
        "{err}"
    );
}

#[cfg(all(feature = "mpi", any(feature = "cuda", feature = "hip")))]
#[test]
fn mpirun_resident_on_the_cpu_is_one_clear_error_on_every_rank() {
    let (a, out) = (
        common::matrices_dir().join("bcsstk08.mtx.gz"),
        common::temp_file("cli", "dist_resident_cpu.mtx"),
    );
    let r = mpirun(2, &["--resident"], &a, &out);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success());
    assert!(
        err.contains("--resident needs a GPU backend (cuda or hip)"),
        "{err}"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn distributed_products_refuse_semiring_options() {
    let out = common::temp_file("cli", "refused.mtx");
    for extra in [&["--semiring", "min_plus"][..], &["--keep", "3"][..]] {
        let r = common::spgemm_command()
            .args(["multiply", "gen:er:50:3", "-o"])
            .arg(&out)
            .arg("--distributed")
            .args(extra)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{extra:?}");
        assert!(
            e.contains("do not run with --distributed"),
            "{extra:?}: {e}"
        );
        assert_eq!(e.trim_end().lines().count(), 1, "{extra:?}: {e}");
    }
}
