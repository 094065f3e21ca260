//! GPU-resident exchange between NVIDIA GPUs through NCCL (cudarc's
//! `nccl` module, loaded at run time like the rest of CUDA): the
//! [`GroupLibrary`] calls of [`crate::grouped`] on CUDA devices.

use crate::grouped::{GroupLibrary, Grouped};
use cudarc::nccl::{result, sys};
use spgemm_cuda::{CudaDevice, Stream};
use std::ffi::c_void;

/// An NCCL exchange over an MPI communicator's ranks, one GPU each
/// ([`Grouped::new`]).
pub type Nccl<'c> = Grouped<'c, NcclComm>;

/// One rank's NCCL communicator (destroyed on drop).
pub struct NcclComm(sys::ncclComm_t);

/// A message naming the NCCL call that failed.
fn failed(call: &str, e: impl std::fmt::Debug) -> String {
    format!("NCCL {call} failed: {e:?}")
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

    fn init(_: &CudaDevice, ranks: i32, id: [u8; 128], rank: i32) -> Result<Self, String> {
        let unique = sys::ncclUniqueId {
            internal: id.map(|b| b as std::ffi::c_char),
        };
        let mut comm = std::ptr::null_mut();
        // SAFETY: `comm` receives the communicator; the id is rank 0's.
        unsafe { result::comm_init_rank(&mut comm, ranks, unique, rank) }
            .map_err(|e| failed("ncclCommInitRank", e))?;
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

impl Drop for NcclComm {
    fn drop(&mut self) {
        // SAFETY: the communicator was initialised and is not used again.
        let _ = unsafe { result::comm_destroy(self.0) };
    }
}
