//! GPU-resident exchange between NVIDIA GPUs through NCCL (cudarc's
//! `nccl` module, loaded at run time like the rest of CUDA): one NCCL
//! communicator over the MPI communicator's ranks, its unique id made by
//! rank 0 and broadcast over MPI, point-to-point sends and receives in
//! one group per exchange on a stream of the rank's device.

use crate::comm::{agree, Traffic};
use crate::device_exchange::{check_peers, DeviceExchange, Piece, Started};
use crate::{Error, Result};
use cudarc::nccl::{result, sys};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use spgemm_core::device::Device;
use spgemm_cuda::{CudaDevice, Event, Stream};
use std::ffi::c_void;
use std::sync::Mutex;

/// An NCCL communicator over an MPI communicator's ranks, one GPU each.
pub struct Nccl<'c> {
    comm: &'c SimpleCommunicator,
    nccl: sys::ncclComm_t,
    stream: Stream,
    /// Events before and after the moves of the exchange started last,
    /// until it is finished.
    under_way: Mutex<Option<(Event, Event)>>,
}

// SAFETY: the NCCL communicator is used by one thread at a time (every
// use takes `&self` inside one exchange, which the caller does not run
// concurrently on one rank: the exchange is collective).
unsafe impl Send for Nccl<'_> {}

/// A message naming the NCCL call that failed.
fn failed(call: &str, e: impl std::fmt::Debug) -> Error {
    Error::Local(format!("NCCL {call} failed: {e:?}"))
}

impl<'c> Nccl<'c> {
    /// Whether NCCL's library (`libnccl.so`) can be loaded.
    pub fn available() -> bool {
        // SAFETY: only tries to load the library.
        unsafe { sys::is_culib_present() }
    }

    /// The NCCL communicator over `comm`'s ranks, each on `device`.
    /// Collective over `comm`.
    ///
    /// # Errors
    /// On every rank: NCCL missing on some rank (its library is loaded as
    /// `libnccl.so` from the library path), or a failed NCCL or driver
    /// call.
    pub fn new(comm: &'c SimpleCommunicator, device: &CudaDevice) -> Result<Self> {
        let present = if Self::available() {
            Ok(())
        } else {
            Err(Error::Local(
                "NCCL's library (libnccl.so) was not found on the library path; use the host exchange".into(),
            ))
        };
        agree(comm, present)?;
        let mut id = [0u8; 128];
        if comm.rank() == 0 {
            let made = result::get_uniqueid().map_err(|e| failed("ncclGetUniqueId", e));
            let made = made.map(|u| {
                for (b, c) in id.iter_mut().zip(u.internal) {
                    *b = c as u8;
                }
            });
            agree(comm, made)?;
        } else {
            agree(comm, Ok(()))?;
        }
        comm.process_at_rank(0).broadcast_into(&mut id[..]);
        let made = (|| {
            device.make_current().map_err(spgemm_core::Error::from)?;
            let stream = device
                .create_copy_stream()
                .map_err(spgemm_core::Error::from)?;
            let mut unique = sys::ncclUniqueId { internal: [0; 128] };
            for (c, b) in unique.internal.iter_mut().zip(id) {
                *c = b as std::ffi::c_char;
            }
            let mut nccl = std::ptr::null_mut();
            // SAFETY: `nccl` receives the communicator; the id is rank 0's.
            unsafe { result::comm_init_rank(&mut nccl, comm.size(), unique, comm.rank()) }
                .map_err(|e| failed("ncclCommInitRank", e))?;
            Ok(Self {
                comm,
                nccl,
                stream,
                under_way: Mutex::new(None),
            })
        })();
        agree(comm, made)
    }
}

impl Drop for Nccl<'_> {
    fn drop(&mut self) {
        // SAFETY: the communicator was initialised and is not used again.
        unsafe {
            let _ = result::comm_destroy(self.nccl);
        }
    }
}

impl DeviceExchange<CudaDevice> for Nccl<'_> {
    fn name(&self) -> &'static str {
        "nccl"
    }

    fn exchange(&self, device: &CudaDevice, sends: &[Piece], recvs: &[Piece]) -> Result<Traffic> {
        let started = self.start(device, sends, recvs)?;
        self.finish(device)?;
        Ok(started.traffic)
    }

    /// Posts every send and receive in one NCCL group on the exchange's
    /// stream and returns: the moves run beside the caller's kernels.
    fn start(
        &self,
        device: &CudaDevice,
        sends: &[Piece],
        recvs: &[Piece],
    ) -> Result<Started<CudaDevice>> {
        let (rank, ranks) = (self.comm.rank() as usize, self.comm.size() as usize);
        agree(self.comm, check_peers(rank, ranks, &[sends, recvs]))?;
        let stream = self.stream.raw() as sys::cudaStream_t;
        let posted = (|| {
            device.make_current().map_err(spgemm_core::Error::from)?;
            let before = device
                .record(&self.stream)
                .map_err(spgemm_core::Error::from)?;
            result::group_start().map_err(|e| failed("ncclGroupStart", e))?;
            let posted = (|| {
                let post = |p: &Piece, receive: bool| {
                    let (ptr, count, int8) =
                        (p.ptr as *mut c_void, p.bytes, sys::ncclDataType_t::ncclInt8);
                    // SAFETY: each piece addresses live device memory of
                    // this rank's GPU, `bytes` long (the caller's
                    // contract), kept until the exchange is finished.
                    unsafe {
                        if receive {
                            result::recv(ptr, count, int8, p.peer as i32, self.nccl, stream)
                        } else {
                            result::send(ptr, count, int8, p.peer as i32, self.nccl, stream)
                        }
                    }
                    .map_err(|e| failed(if receive { "ncclRecv" } else { "ncclSend" }, e))
                };
                let receives = recvs.iter().map(|p| (p, true));
                for (p, receive) in receives.chain(sends.iter().map(|p| (p, false))) {
                    if p.bytes > 0 {
                        post(p, receive)?;
                    }
                }
                Ok(())
            })();
            let ended = result::group_end().map_err(|e| failed("ncclGroupEnd", e));
            posted.and(ended)?;
            let after = device
                .record(&self.stream)
                .map_err(spgemm_core::Error::from)?;
            let ready = device
                .record(&self.stream)
                .map_err(spgemm_core::Error::from)?;
            *self.under_way.lock().unwrap_or_else(|e| e.into_inner()) = Some((before, after));
            Ok(ready)
        })();
        let ready = agree(self.comm, posted)?;
        let bytes = |pieces: &[Piece]| pieces.iter().map(|p| p.bytes as u64).sum();
        Ok(Started {
            traffic: Traffic {
                sent: bytes(sends),
                received: bytes(recvs),
            },
            ready: Some(ready),
        })
    }

    fn finish(&self, device: &CudaDevice) -> Result<Option<f64>> {
        let events = self
            .under_way
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let waited = (|| {
            device
                .synchronize(&self.stream)
                .map_err(spgemm_core::Error::from)?;
            Ok(match events {
                Some((before, after)) => Some(f64::from(
                    device
                        .elapsed_ms(&before, &after)
                        .map_err(spgemm_core::Error::from)?,
                )),
                None => None,
            })
        })();
        agree(self.comm, waited)
    }
}
