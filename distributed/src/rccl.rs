//! GPU-resident exchange between AMD GPUs through RCCL (AMD's
//! implementation of NCCL's API, loaded at run time by the HIP backend):
//! the [`GroupLibrary`] calls of [`crate::grouped`] on HIP devices.
//! Compiled, not run: no AMD GPU and no RCCL were at hand.

use crate::grouped::{GroupLibrary, Grouped};
use spgemm_hip::rccl::{self, Communicator, UniqueId};
use spgemm_hip::{HipDevice, Stream};

/// An RCCL exchange over an MPI communicator's ranks, one GPU each
/// ([`Grouped::new`]).
pub type Rccl<'c> = Grouped<'c, Communicator>;

impl GroupLibrary for Communicator {
    type Device = HipDevice;
    const NAME: &'static str = "rccl";
    const MISSING: &'static str =
        "RCCL's library (librccl.so, installed with ROCm) was not found on the library path";

    fn available() -> bool {
        rccl::available()
    }

    fn unique_id() -> Result<[u8; 128], String> {
        Ok(rccl::unique_id()?.internal.map(|c| c as u8))
    }

    fn init(device: &HipDevice, ranks: i32, id: [u8; 128], rank: i32) -> Result<Self, String> {
        let id = UniqueId {
            internal: id.map(|b| b as std::ffi::c_char),
        };
        Communicator::new(device, ranks, id, rank)
    }

    fn make_current(device: &HipDevice) -> Result<(), String> {
        device.make_current().map_err(|e| e.to_string())
    }

    fn group_start(&self) -> Result<(), String> {
        Communicator::group_start(self)
    }

    fn group_end(&self) -> Result<(), String> {
        Communicator::group_end(self)
    }

    unsafe fn transfer(
        &self,
        ptr: u64,
        bytes: usize,
        peer: i32,
        stream: &Stream,
        receive: bool,
    ) -> Result<(), String> {
        // SAFETY: the caller's guarantee.
        unsafe { Communicator::transfer(self, ptr, bytes, peer, stream, receive) }
    }
}
