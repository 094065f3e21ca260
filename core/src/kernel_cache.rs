//! The on-disk cache of compiled kernels, shared by the GPU backends.
//!
//! Key: whatever the backend hashes in (program source, target
//! architecture, options, compiler version). Location:
//! `$SPGEMM_KERNEL_CACHE`, else `$XDG_CACHE_HOME/spgemm/kernels`, else
//! `$HOME/.cache/spgemm/kernels`. A cache that cannot be read or written is
//! skipped, never an error; entries are written to a temporary file and
//! renamed, so concurrent processes never read a partial one.

use crate::device::DeviceResult;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

/// The cache folder, if any can be named.
pub fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SPGEMM_KERNEL_CACHE") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("spgemm/kernels"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/spgemm/kernels"))
}

/// The binary cached under `name` and `key` (file
/// `{name}-{hash of key}.{extension}`), or `compile()`'s result, stored.
///
/// # Errors
/// Those of `compile` (the cache itself never fails).
pub fn cached(
    name: &str,
    key: impl Hash,
    extension: &str,
    compile: impl FnOnce() -> DeviceResult<Vec<u8>>,
) -> DeviceResult<Vec<u8>> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    let file = dir().map(|d| d.join(format!("{name}-{:016x}.{extension}", h.finish())));
    if let Some(Ok(bytes)) = file.as_ref().map(std::fs::read) {
        if !bytes.is_empty() {
            return Ok(bytes);
        }
    }
    let binary = compile()?;
    if let Some(f) = file {
        let tmp = f.with_extension(format!(
            "tmp{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let stored = f
            .parent()
            .is_some_and(|d| std::fs::create_dir_all(d).is_ok())
            && std::fs::write(&tmp, &binary).is_ok()
            && std::fs::rename(&tmp, &f).is_ok();
        if !stored {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok(binary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lookup_reads_the_stored_binary_without_compiling() {
        let d = std::env::temp_dir().join(format!("spgemm-cache-test-{}", std::process::id()));
        std::env::set_var("SPGEMM_KERNEL_CACHE", &d);
        let first = cached("unit", ("src", "arch"), "bin", || Ok(vec![1, 2, 3])).unwrap();
        let second = cached("unit", ("src", "arch"), "bin", || {
            panic!("compiled although cached")
        })
        .unwrap();
        assert_eq!(first, second);
        let other = cached("unit", ("src2", "arch"), "bin", || Ok(vec![9])).unwrap();
        assert_eq!(other, vec![9]);
        std::env::remove_var("SPGEMM_KERNEL_CACHE");
        let _ = std::fs::remove_dir_all(d);
    }
}
