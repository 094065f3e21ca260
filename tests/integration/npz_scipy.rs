//! `.npz` files against SciPy itself: files written by
//! `scipy.sparse.save_npz` in this test's setup (int32 and int64 indices,
//! float32 and float64 values, compressed or not, CSR and CSC, unsorted
//! rows) read back equal to what SciPy holds, and files we write load in
//! SciPy equal to ours. Needs python3 with SciPy (`.ci/run` installs it).

use crate::common;

use spgemm::CsrMatrix;
use std::process::Command;

fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs (CI installs it with SciPy)");
    assert!(
        out.status.success(),
        "python3 failed (is SciPy installed? pip install scipy): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn dir(test: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("spgemm-npz-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// SciPy writes a random matrix in each variant and its entries as a
/// Matrix Market file next to it; both read the same here.
#[test]
fn scipy_files_read_back_equal() {
    let d = dir("scipy");
    let script = r#"
import sys, numpy as np, scipy.sparse as sp, scipy.io as io
d = sys.argv[1]
rng = np.random.default_rng(7)
for idx in ("int32", "int64"):
    for dt in ("float32", "float64"):
        for comp in (0, 1):
            for fmt in ("csr", "csc"):
                m = sp.random(57, 41, density=0.1, format=fmt, dtype=dt, random_state=rng)
                m.indices = m.indices.astype(idx); m.indptr = m.indptr.astype(idx)
                name = f"{d}/m_{idx}_{dt}_{comp}_{fmt}"
                sp.save_npz(name + ".npz", m, compressed=bool(comp))
                io.mmwrite(name + ".mtx", m.astype("float64"), precision=17)
u = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 1]), np.array([0, 3])), shape=(1, 3))
sp.save_npz(f"{d}/unsorted.npz", u)
print("ok")
"#;
    python(script, &[d.to_str().unwrap()]);
    let mut n = 0;
    for e in std::fs::read_dir(&d).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "npz") && p.file_stem().unwrap() != "unsorted" {
            let ours: CsrMatrix<f64> = spgemm::npz::read_path(&p).unwrap();
            let want: CsrMatrix<f64> = spgemm::mtx::read_path(p.with_extension("mtx")).unwrap();
            assert_eq!(
                ours.clone().sort_and_sum_duplicates(),
                want,
                "{}",
                p.display()
            );
            n += 1;
        }
    }
    assert_eq!(n, 16);
    // Rows stay as SciPy stored them.
    let u: CsrMatrix<f64> = spgemm::npz::read_path(d.join("unsorted.npz")).unwrap();
    assert_eq!(u.col_indices(), &[2, 0, 1]);
    assert_eq!(u.values(), &[1.0, 2.0, 3.0]);
}

/// A real matrix written by us loads in SciPy with the same entries.
#[test]
fn our_files_load_in_scipy() {
    let d = dir("ours");
    let a: CsrMatrix<f64> =
        spgemm::mtx::read_path(common::matrices_dir().join("bcsstk08.mtx.gz")).unwrap();
    let plain = d.join("ours.npz");
    let packed = d.join("ours_compressed.npz");
    spgemm::npz::write_path(&plain, &a).unwrap();
    spgemm::npz::write_path_compressed(&packed, &a).unwrap();
    let mtx = d.join("ours.mtx");
    spgemm::mtx::write_path(&mtx, &a).unwrap();
    let script = r#"
import sys, numpy as np, scipy.sparse as sp, scipy.io as io
want = sp.csr_matrix(io.mmread(sys.argv[3]))
for p in sys.argv[1:3]:
    m = sp.load_npz(p)
    assert m.format == "csr" and m.dtype == np.float64 and m.indices.dtype == np.int32, (m.format, m.dtype)
    assert m.shape == want.shape and (m != want).nnz == 0, p
    assert np.array_equal(m.indptr, want.indptr) and np.array_equal(m.indices, want.indices)
print("ok")
"#;
    let out = python(
        script,
        &[
            plain.to_str().unwrap(),
            packed.to_str().unwrap(),
            mtx.to_str().unwrap(),
        ],
    );
    assert_eq!(out.trim(), "ok");
}

/// Malformed archives are errors naming the fault.
#[test]
fn bad_archives_name_the_fault() {
    let d = dir("bad");
    let p = d.join("not.npz");
    std::fs::write(&p, b"PK not really").unwrap();
    let e = spgemm::npz::read_path::<f64>(&p).unwrap_err().to_string();
    assert!(e.contains("not.npz") && e.contains("zip"), "{e}");
    let script = r#"
import sys, numpy as np
np.savez(sys.argv[1], indptr=np.array([0, 1]), indices=np.array([-1]), data=np.array([1.0]), shape=np.array([1, 2]), format=b"csr")
np.savez(sys.argv[2], indptr=np.array([0, 1]), indices=np.array([0]), data=np.array([1.0]), shape=np.array([1, 2]), format=b"coo")
np.savez(sys.argv[3], indptr=np.array([0, 1]), data=np.array([1.0]), shape=np.array([1, 2]), format=b"csr")
"#;
    let (neg, coo, missing) = (d.join("neg.npz"), d.join("coo.npz"), d.join("missing.npz"));
    python(
        script,
        &[
            neg.to_str().unwrap(),
            coo.to_str().unwrap(),
            missing.to_str().unwrap(),
        ],
    );
    let e = spgemm::npz::read_path::<f64>(&neg).unwrap_err().to_string();
    assert!(e.contains("indices[0] = -1 is negative"), "{e}");
    let e = spgemm::npz::read_path::<f64>(&coo).unwrap_err().to_string();
    assert!(e.contains("format 'coo'"), "{e}");
    let e = spgemm::npz::read_path::<f64>(&missing)
        .unwrap_err()
        .to_string();
    assert!(e.contains("indices.npy"), "{e}");
}

/// An archive written in parts, as the distributed writer writes it (an
/// empty part among them), loads in SciPy equal to the matrix, and a
/// flipped byte in a part's values fails our reader's checksum.
#[test]
fn archives_written_in_parts_load_in_scipy() {
    let d = dir("parts");
    let m = spgemm::generate::uniform::<f64>(200, 150, 6, 9).unwrap();
    let file = common::fuzz_checks::npz_in_parts(&m, &[0, 70, 70, 130, 200]);
    let path = d.join("parts.npz");
    std::fs::write(&path, &file).unwrap();
    let mtx = d.join("parts.mtx");
    spgemm::mtx::write_path(&mtx, &m).unwrap();
    let script = r#"
import sys, scipy.sparse as sp, scipy.io as io, zipfile
a = sp.load_npz(sys.argv[1]).tocsr()
b = io.mmread(sys.argv[2]).tocsr()
assert zipfile.ZipFile(sys.argv[1]).testzip() is None
print(a.shape == b.shape and (a != b).nnz == 0)
"#;
    let out = python(script, &[path.to_str().unwrap(), mtx.to_str().unwrap()]);
    assert_eq!(out.trim(), "True", "SciPy read another matrix");
    // 1,200 values of 8 bytes end where the directory's 500-odd bytes
    // start: 800 bytes from the end is a value.
    let mut bad = file.clone();
    let at = bad.len() - 800;
    bad[at] ^= 1;
    let e = spgemm::npz::read::<f64>(std::io::Cursor::new(&bad)).unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
}
