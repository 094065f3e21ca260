//! GPU-resident exchange through a library with NCCL's point-to-point API:
//! NCCL on NVIDIA GPUs (module `nccl`, feature `nccl`), RCCL, which
//! implements the same API, on AMD ones (module `rccl`, feature `rccl`). One communicator over the MPI
//! communicator's ranks, its unique id made by rank 0 and broadcast over
//! MPI; every send and receive of an exchange in one group on a stream of
//! the rank's device, left running until the exchange is finished.

use crate::comm::{agree, Traffic};
use crate::device_exchange::{check_peers, DeviceExchange, Piece, Started};
use crate::{Error, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use spgemm_core::device::Device;
use std::sync::Mutex;

/// One rank's communicator of a library with NCCL's API, on one kind of
/// device: the calls the exchange makes. Errors are messages naming the
/// call.
pub trait GroupLibrary: Sized {
    /// The devices it moves memory between.
    type Device: Device;
    /// Its name in reports (`"nccl"`, `"rccl"`).
    const NAME: &'static str;
    /// Where a user finds the library, for the error when it is missing.
    const MISSING: &'static str;

    /// Whether the library can be loaded.
    fn available() -> bool;

    /// A new unique id (on one rank, sent to the others).
    ///
    /// # Errors
    /// The library's failure.
    fn unique_id() -> std::result::Result<[u8; 128], String>;

    /// Rank `rank` of `ranks` of the communicator `id` names, on `device`.
    /// Collective over the ranks.
    ///
    /// # Errors
    /// The library's or the device's failure.
    fn init(
        device: &Self::Device,
        ranks: i32,
        id: [u8; 128],
        rank: i32,
    ) -> std::result::Result<Self, String>;

    /// Makes `device` current on the calling thread.
    ///
    /// # Errors
    /// The device's failure.
    fn make_current(device: &Self::Device) -> std::result::Result<(), String>;

    /// Starts a group of sends and receives.
    ///
    /// # Errors
    /// The library's failure.
    fn group_start(&self) -> std::result::Result<(), String>;

    /// Ends the group, enqueueing its sends and receives.
    ///
    /// # Errors
    /// The library's failure.
    fn group_end(&self) -> std::result::Result<(), String>;

    /// Sends (with `receive`, receives) `bytes` bytes at `ptr` to (from)
    /// rank `peer` on `stream`, inside a group.
    ///
    /// # Errors
    /// The library's failure.
    ///
    /// # Safety
    /// `ptr` addresses `bytes` bytes of the device's memory that stay
    /// allocated, and for a send unchanged, until the stream has passed
    /// the transfer.
    unsafe fn transfer(
        &self,
        ptr: u64,
        bytes: usize,
        peer: i32,
        stream: &<Self::Device as Device>::Stream,
        receive: bool,
    ) -> std::result::Result<(), String>;
}

/// A device event of `L`'s devices.
type Event<L> = <<L as GroupLibrary>::Device as Device>::Event;

/// The exchange over a [`GroupLibrary`] communicator.
pub struct Grouped<'c, L: GroupLibrary> {
    comm: &'c SimpleCommunicator,
    library: L,
    stream: <L::Device as Device>::Stream,
    /// Events before the moves of the first exchange started and after
    /// those of the last, until they are finished.
    under_way: Mutex<Option<[Event<L>; 2]>>,
}

// SAFETY: the communicator is used by one thread at a time (every use
// takes `&self` inside one exchange, which the caller does not run
// concurrently on one rank: the exchange is collective).
unsafe impl<L: GroupLibrary> Send for Grouped<'_, L> {}

impl<'c, L: GroupLibrary> Grouped<'c, L> {
    /// Whether the library can be loaded.
    pub fn available() -> bool {
        L::available()
    }

    /// The communicator over `comm`'s ranks, each on `device`. Collective
    /// over `comm`.
    ///
    /// # Errors
    /// On every rank: the library missing on some rank, or a failed call
    /// of it or of the device.
    pub fn new(comm: &'c SimpleCommunicator, device: &L::Device) -> Result<Self> {
        let present = if L::available() {
            Ok(())
        } else {
            Err(Error::Local(format!(
                "{}; use the host exchange",
                L::MISSING
            )))
        };
        agree(comm, present)?;
        let mut id = [0u8; 128];
        let made = if comm.rank() == 0 {
            L::unique_id().map(|u| id = u).map_err(Error::Local)
        } else {
            Ok(())
        };
        agree(comm, made)?;
        comm.process_at_rank(0).broadcast_into(&mut id[..]);
        let made = (|| {
            L::make_current(device).map_err(Error::Local)?;
            let stream = device
                .create_copy_stream()
                .map_err(spgemm_core::Error::from)?;
            let library = L::init(device, comm.size(), id, comm.rank()).map_err(Error::Local)?;
            Ok(Self {
                comm,
                library,
                stream,
                under_way: Mutex::new(None),
            })
        })();
        agree(comm, made)
    }
}

impl<L: GroupLibrary> DeviceExchange<L::Device> for Grouped<'_, L> {
    fn name(&self) -> &'static str {
        L::NAME
    }

    fn exchange(&self, device: &L::Device, sends: &[Piece], recvs: &[Piece]) -> Result<Traffic> {
        let started = self.start(device, sends, recvs)?;
        self.finish(device)?;
        Ok(started.traffic)
    }

    /// Posts every send and receive in one group on the exchange's stream
    /// and returns: the moves run beside the caller's kernels, after those
    /// of earlier starts.
    fn start(
        &self,
        device: &L::Device,
        sends: &[Piece],
        recvs: &[Piece],
    ) -> Result<Started<L::Device>> {
        let (rank, ranks) = (self.comm.rank() as usize, self.comm.size() as usize);
        agree(self.comm, check_peers(rank, ranks, &[sends, recvs]))?;
        let posted = (|| {
            L::make_current(device).map_err(Error::Local)?;
            let before = device
                .record(&self.stream)
                .map_err(spgemm_core::Error::from)?;
            self.library.group_start().map_err(Error::Local)?;
            let posted = (|| {
                let receives = recvs.iter().map(|p| (p, true));
                for (p, receive) in receives.chain(sends.iter().map(|p| (p, false))) {
                    if p.bytes > 0 {
                        // SAFETY: each piece addresses live device memory
                        // of this rank's GPU, `bytes` long (the caller's
                        // contract), kept until the exchange is finished.
                        unsafe {
                            self.library.transfer(
                                p.ptr,
                                p.bytes,
                                p.peer as i32,
                                &self.stream,
                                receive,
                            )
                        }
                        .map_err(Error::Local)?;
                    }
                }
                Ok(())
            })();
            let ended = self.library.group_end().map_err(Error::Local);
            posted.and(ended)?;
            let after = device
                .record(&self.stream)
                .map_err(spgemm_core::Error::from)?;
            let ready = device
                .record(&self.stream)
                .map_err(spgemm_core::Error::from)?;
            // After another start not yet finished, the moves are timed
            // from the first's start.
            let mut under_way = self.under_way.lock().unwrap_or_else(|e| e.into_inner());
            let first = match under_way.take() {
                Some([first, _]) => first,
                None => before,
            };
            *under_way = Some([first, after]);
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

    fn finish(&self, device: &L::Device) -> Result<Option<f64>> {
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
                Some([before, after]) => Some(f64::from(
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
