//! GPU-resident exchange between NVIDIA GPUs through NCCL (cudarc's
//! `nccl` module, loaded at run time like the rest of CUDA): the
//! [`GroupLibrary`] calls of [`crate::grouped`] on CUDA devices.

use crate::grouped::{GroupLibrary, Grouped};
use cudarc::nccl::{result, sys};
use spgemm_core::device::Device;
use spgemm_cuda::{CudaDevice, Stream};
use std::ffi::c_void;

/// An NCCL exchange over an MPI communicator's ranks, one GPU each
/// ([`Grouped::new`]).
pub type Nccl<'c> = Grouped<'c, NcclComm>;

/// One rank's NCCL communicator (destroyed on drop).
pub struct NcclComm(sys::ncclComm_t);

/// A message naming the NCCL call that failed, NCCL's text for its result
/// and NCCL's last error message when it left one.
fn failed(call: &str, e: result::NcclError) -> String {
    let text = |p: *const std::ffi::c_char| {
        // SAFETY: NCCL returns null or a NUL-terminated string it owns.
        (!p.is_null()).then(|| {
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        })
    };
    // SAFETY: both only read NCCL's static or thread-local messages.
    let (what, last) = unsafe {
        (
            text(sys::ncclGetErrorString(e.0)),
            text(sys::ncclGetLastError(std::ptr::null_mut())),
        )
    };
    let mut message = format!("NCCL {call} failed: {:?}", e.0);
    for part in [what, last].into_iter().flatten().filter(|t| !t.is_empty()) {
        message.push_str(": ");
        message.push_str(&part);
    }
    message
}

impl GroupLibrary for NcclComm {
    type Device = CudaDevice;
    const NAME: &'static str = "nccl";
    const MISSING: &'static str = "NCCL's library (libnccl.so) was not found on the library path";

    fn available() -> bool {
        // SAFETY: only tries to load the library.
        unsafe { sys::is_culib_present() }
    }

    fn unique_id() -> Result<[u8; 128], String> {
        let u = result::get_uniqueid().map_err(|e| failed("ncclGetUniqueId", e))?;
        Ok(u.internal.map(|c| c as u8))
    }

    fn init(device: &CudaDevice, ranks: i32, id: [u8; 128], rank: i32) -> Result<Self, String> {
        let unique = sys::ncclUniqueId {
            internal: id.map(|b| b as std::ffi::c_char),
        };
        // The configuration's layout as far as the library knows it: an
        // older NCCL reads the fields of its own version, which come first.
        let version = result::get_nccl_version().map_err(|e| failed("ncclGetVersion", e))?;
        let mut config = config(device.properties().multiprocessor_count, version);
        let mut comm = std::ptr::null_mut();
        // SAFETY: `comm` receives the communicator; the id is rank 0's;
        // `config` is a complete configuration that outlives the call.
        unsafe { sys::ncclCommInitRankConfig(&mut comm, ranks, unique, rank, &mut config) }
            .result()
            .map_err(|e| failed("ncclCommInitRankConfig", e))?;
        Ok(Self(comm))
    }

    fn make_current(device: &CudaDevice) -> Result<(), String> {
        device.make_current().map_err(|e| e.to_string())
    }

    fn group_start(&self) -> Result<(), String> {
        result::group_start()
            .map(drop)
            .map_err(|e| failed("ncclGroupStart", e))
    }

    fn group_end(&self) -> Result<(), String> {
        result::group_end()
            .map(drop)
            .map_err(|e| failed("ncclGroupEnd", e))
    }

    unsafe fn transfer(
        &self,
        ptr: u64,
        bytes: usize,
        peer: i32,
        stream: &Stream,
        receive: bool,
    ) -> Result<(), String> {
        let (ptr, int8) = (ptr as *mut c_void, sys::ncclDataType_t::ncclInt8);
        let stream = stream.raw() as sys::cudaStream_t;
        // SAFETY: the caller's guarantee.
        unsafe {
            if receive {
                result::recv(ptr, bytes, int8, peer, self.0, stream)
            } else {
                result::send(ptr, bytes, int8, peer, self.0, stream)
            }
        }
        .map(drop)
        .map_err(|e| failed(if receive { "ncclRecv" } else { "ncclSend" }, e))
    }
}

/// NCCL's most channels (`MAXCHANNELS`), the most thread blocks a kernel
/// of its takes.
const MAX_CTAS: i32 = 64;

/// NCCL's value for a field of its configuration left to its default
/// (`NCCL_CONFIG_UNDEF_INT`).
const UNDEF: i32 = i32::MIN;

/// The fewest thread blocks NCCL may give a communicator's kernels on a GPU
/// of `multiprocessors` multiprocessors: half of them, rounded down to a
/// power of two, from 8 to NCCL's 64 channels. Point-to-point transfers
/// use as many channels as the communicator has (at least these): on 2
/// H200s (132 multiprocessors, NVLink) NCCL's own choice of 24, so 32
/// channels a peer, moved Erdős–Rényi 2²² × 8's fetched rows (218 MB a
/// rank) in 1.20–1.23 ms of device time, 64 in 0.89–0.92 ms
/// (`docs/benchmarks/nccl-channels-h200x2-2026-11-29.md`).
fn min_ctas(multiprocessors: u32) -> i32 {
    let half = (multiprocessors / 2).max(1);
    (1i32 << half.ilog2()).clamp(8, MAX_CTAS)
}

/// A configuration of NCCL's (`NCCL_CONFIG_INITIALIZER` with
/// [`min_ctas`] and [`MAX_CTAS`] set) for a library of `version`
/// (`NCCL_VERSION` of it); NCCL's environment variables still override it.
fn config(multiprocessors: u32, version: i32) -> sys::ncclConfig_t {
    sys::ncclConfig_t {
        size: std::mem::size_of::<sys::ncclConfig_t>(),
        magic: 0xcafe_beef,
        // The layout of cudarc's binding is NCCL_VERSION(2, 28, 0)'s.
        version: version.clamp(0, 22800) as u32,
        blocking: UNDEF,
        cgaClusterSize: UNDEF,
        minCTAs: min_ctas(multiprocessors),
        // NCCL checks the pair before it fills a default in.
        maxCTAs: MAX_CTAS,
        netName: std::ptr::null(),
        splitShare: UNDEF,
        trafficClass: UNDEF,
        commName: std::ptr::null(),
        collnetEnable: UNDEF,
        CTAPolicy: UNDEF,
        shrinkShare: UNDEF,
        nvlsCTAs: UNDEF,
        nChannelsPerNetPeer: UNDEF,
        nvlinkCentricSched: UNDEF,
    }
}

impl Drop for NcclComm {
    fn drop(&mut self) {
        // SAFETY: the communicator was initialised and is not used again.
        let _ = unsafe { result::comm_destroy(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::min_ctas;

    #[test]
    fn min_ctas_is_half_the_multiprocessors_as_a_power_of_two() {
        assert_eq!(min_ctas(132), 64);
        assert_eq!(min_ctas(108), 32);
        assert_eq!(min_ctas(80), 32);
        assert_eq!(min_ctas(256), 64);
        assert_eq!(min_ctas(20), 8);
        assert_eq!(min_ctas(0), 8);
    }
}
