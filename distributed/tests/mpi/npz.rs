//! One `.npz` file read by every rank at once (stored arrays: each rank
//! its own rows; compressed: rank 0 reads and scatters), against the
//! sequential reader: the same matrices, and the same error for a file
//! with one fault in any rank's rows.

use super::{read, run_dir, uneven, Case};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use spgemm_core::CsrMatrix;
use spgemm_distributed::{DistCsr, Partition};
use std::io::{Read, Write};
use std::path::Path;

/// The `.npz` cases.
pub const CASES: &[(&str, Case)] = &[
    ("parallel_npz_read_matches_sequential", npz_reads),
    ("parallel_npz_read_errors_match_sequential", npz_errors),
];

fn npz_reads(comm: &SimpleCommunicator) -> Result<(), String> {
    let p = comm.size() as usize;
    let dir = run_dir()?;
    let names = ["west0067", "bcsstk08", "lp_afiro", "Goodwin_010"];
    if comm.rank() == 0 {
        for name in names {
            let m = read(name);
            let e = |e: spgemm_core::Error| e.to_string();
            spgemm_core::npz::write_path(dir.join(format!("{name}.npz")), &m).map_err(e)?;
            spgemm_core::npz::write_path_compressed(dir.join(format!("{name}.z.npz")), &m)
                .map_err(e)?;
        }
    }
    comm.barrier();
    for name in names {
        let want = read(name);
        let stored = dir.join(format!("{name}.npz"));
        for (path, rows) in [
            (stored.clone(), None),
            (stored, Some(uneven(want.nrows() as u64, p, 8))),
            (dir.join(format!("{name}.z.npz")), None),
        ] {
            let d = DistCsr::<f64>::read(comm, &path, rows.as_ref()).map_err(|e| e.to_string())?;
            if let Some(rows) = &rows {
                if d.row_partition() != rows {
                    return Err(format!("{}: not split as asked", path.display()));
                }
            }
            if let Some(got) = d.gather(comm, 0).map_err(|e| e.to_string())? {
                if got != want {
                    return Err(format!(
                        "{}: differs from the sequential read",
                        path.display()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Copies the archive `src` to `dst` (members stored), with `patch`
/// applied to each member's elements (the bytes after its `.npy` header).
fn patched(src: &Path, dst: &Path, patch: &dyn Fn(&str, &mut [u8])) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let mut zip =
        zip::ZipArchive::new(std::fs::File::open(src).map_err(|x| e(&x))?).map_err(|x| e(&x))?;
    let mut out = zip::ZipWriter::new(std::fs::File::create(dst).map_err(|x| e(&x))?);
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..zip.len() {
        let mut member = zip.by_index(i).map_err(|x| e(&x))?;
        let name = member.name().to_string();
        let mut bytes = Vec::new();
        member.read_to_end(&mut bytes).map_err(|x| e(&x))?;
        let start = match bytes[6] {
            1 => 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize,
            _ => 12 + u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
        };
        patch(&name, &mut bytes[start..]);
        out.start_file(name, options).map_err(|x| e(&x))?;
        out.write_all(&bytes).map_err(|x| e(&x))?;
    }
    out.finish().map_err(|x| e(&x))?;
    Ok(())
}

/// Sets 32-bit element `i` of `bytes` to `v`.
fn set(bytes: &mut [u8], i: usize, v: i32) {
    bytes[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

fn npz_errors(comm: &SimpleCommunicator) -> Result<(), String> {
    let dir = run_dir()?;
    // 40 rows of 3 entries over 30 columns: int32 offsets and columns.
    let m: CsrMatrix<f64> = spgemm_core::generate::uniform(40, 30, 3, 9).unwrap();
    let good = dir.join("good.npz");
    type Patch = fn(&str, &mut [u8]);
    let cases: [(&str, Patch); 4] = [
        ("decrease", |name, b| {
            if name == "indptr.npy" {
                set(b, 21, 68); // row 20 ends past row 21's end (66)
            }
        }),
        ("column", |name, b| {
            if name == "indices.npy" {
                set(b, 76, 30); // row 25
            }
        }),
        ("negative", |name, b| {
            if name == "indices.npy" {
                set(b, 10, -1); // row 3
            }
        }),
        ("end", |name, b| {
            if name == "indptr.npy" {
                set(b, 40, 119);
            }
        }),
    ];
    if comm.rank() == 0 {
        spgemm_core::npz::write_path(&good, &m).map_err(|e| e.to_string())?;
        for (name, patch) in &cases {
            patched(&good, &dir.join(format!("{name}.npz")), patch)?;
        }
    }
    comm.barrier();
    for (name, _) in &cases {
        let path = dir.join(format!("{name}.npz"));
        let want = match spgemm_core::files::read::<f64>(&path, &Default::default()) {
            Err(e) => e.to_string(),
            Ok(_) => return Err(format!("{name}: the sequential reader accepted it")),
        };
        let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
        let layout = spgemm_core::npz::StoredCsr::find(&bytes).map_err(|e| e.to_string())?;
        if layout.is_none() {
            return Err(format!("{name}: not read in parts"));
        }
        for rows in [
            None,
            Some(Partition::even(40, comm.size() as usize).unwrap()),
        ] {
            match DistCsr::<f64>::read(comm, &path, rows.as_ref()) {
                Err(e) if e.to_string().ends_with(&want) => {}
                Err(e) => return Err(format!("{name}: {e}; the sequential reader: {want}")),
                Ok(_) => return Err(format!("{name}: read without error ({want})")),
            }
        }
    }
    Ok(())
}
