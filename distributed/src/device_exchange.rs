//! Moving pieces of device memory between the ranks' GPUs: the
//! [`DeviceExchange`] trait, and [`HostStaged`], which stages them through
//! page-locked host memory and MPI (any GPU, any MPI; MPI here is not
//! CUDA-aware). NCCL's and RCCL's are `nccl::Nccl` and `rccl::Rccl`
//! (features `nccl` and `rccl`).

use crate::comm::{agree, Traffic};
use crate::{Error, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use spgemm_core::device::{Device, PinnedBuffer};
use std::sync::Mutex;

/// `bytes` bytes of device memory at address `ptr` (0 when `bytes` is 0)
/// sent to or received from rank `peer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The other rank.
    pub peer: usize,
    /// Device address on this rank's GPU.
    pub ptr: u64,
    /// Length in bytes.
    pub bytes: usize,
}

/// A way to move device memory between ranks, one GPU per rank.
pub trait DeviceExchange<D: Device> {
    /// What it is, for reports (`"nccl"`, `"host"`).
    fn name(&self) -> &'static str;

    /// Sends each of `sends` to its peer and receives each of `recvs`
    /// from its peer; the pieces between two ranks are matched in the
    /// order given (the k-th piece rank p sends to q is the k-th piece q
    /// receives from p, of the same length). Returns when every received
    /// piece is in place on `device`, with the bytes moved. Collective
    /// over the exchange's communicator; no piece goes to this rank.
    ///
    /// # Errors
    /// Device or transport errors, agreed by every rank where the
    /// transport allows (MPI); a piece addressed to this rank or out of
    /// the communicator.
    fn exchange(&self, device: &D, sends: &[Piece], recvs: &[Piece]) -> Result<Traffic>;

    /// As [`DeviceExchange::exchange`], but may return while the pieces
    /// are still moving: they are in place once [`Started::ready`] has
    /// completed on the device (at once when `None`). Starts may follow
    /// one another, their moves in order; [`DeviceExchange::finish`]
    /// follows them before the received pieces are read by the host,
    /// freed or reused, or [`DeviceExchange::exchange`] is called. This
    /// one waits for the moves: exchanges that can leave them running
    /// override it.
    ///
    /// # Errors
    /// As [`DeviceExchange::exchange`] for what fails before the moves
    /// are under way.
    fn start(&self, device: &D, sends: &[Piece], recvs: &[Piece]) -> Result<Started<D>> {
        let traffic = self.exchange(device, sends, recvs)?;
        Ok(Started {
            traffic,
            ready: None,
        })
    }

    /// Waits for the moves of every [`DeviceExchange::start`] since the
    /// last finish: the device milliseconds from the first's start to the
    /// last's end, where the exchange measures them. Collective.
    ///
    /// # Errors
    /// Device or transport errors of the moves, on every rank.
    fn finish(&self, device: &D) -> Result<Option<f64>> {
        let _ = device;
        Ok(None)
    }
}

/// An exchange under way ([`DeviceExchange::start`]).
pub struct Started<D: Device> {
    /// The bytes it moves.
    pub traffic: Traffic,
    /// Completes on the device once every received piece is in place;
    /// `None`: they already are.
    pub ready: Option<D::Event>,
}

/// The check every exchange makes before it moves anything: each piece's
/// peer is another rank of `ranks`.
pub(crate) fn check_peers(rank: usize, ranks: usize, pieces: &[&[Piece]]) -> Result<()> {
    match pieces
        .iter()
        .flat_map(|p| p.iter())
        .find(|p| p.peer == rank || p.peer >= ranks)
    {
        Some(p) => Err(Error::Argument(format!(
            "a device exchange piece for rank {} on rank {rank} of {ranks}",
            p.peer
        ))),
        None => Ok(()),
    }
}

/// Bytes of `pieces` per peer rank, of `ranks`.
fn per_peer(pieces: &[Piece], ranks: usize) -> Vec<usize> {
    let mut bytes = vec![0usize; ranks];
    for p in pieces {
        bytes[p.peer] += p.bytes;
    }
    bytes
}

/// The tag of the staged messages.
const STAGED_TAG: i32 = 0x5348;

/// Device memory staged through page-locked host buffers (kept between
/// exchanges, since they are slow to allocate) and sent by MPI
/// point-to-point: the device copies every piece for a peer into one
/// buffer, MPI moves one message per peer, the device copies the received
/// buffer's pieces into place.
pub struct HostStaged<'c, D: Device> {
    comm: &'c SimpleCommunicator,
    buffers: Mutex<Vec<D::Pinned>>,
}

impl<'c, D: Device> HostStaged<'c, D> {
    /// Staging over `comm`.
    pub fn new(comm: &'c SimpleCommunicator) -> Self {
        Self {
            comm,
            buffers: Mutex::new(Vec::new()),
        }
    }

    /// A kept buffer of at least `bytes` bytes, or a new one.
    fn buffer(&self, device: &D, bytes: usize) -> Result<D::Pinned> {
        let mut kept = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = kept.iter().position(|b| b.as_slice().len() >= bytes) {
            return Ok(kept.swap_remove(i));
        }
        Ok(device
            .alloc_pinned(bytes.max(1))
            .map_err(spgemm_core::Error::from)?)
    }

    /// Copies between `pieces` (of one peer, in order) and `pinned`, on
    /// `stream`: to the host when `to_host`.
    fn copy(
        device: &D,
        stream: &D::Stream,
        pieces: &[&Piece],
        pinned: &mut D::Pinned,
        to_host: bool,
    ) -> Result<()> {
        let mut at = 0;
        let mut borrowed = Vec::with_capacity(pieces.len());
        for p in pieces.iter().filter(|p| p.bytes > 0) {
            // SAFETY: the caller's pieces address live device memory of
            // this device; the borrows outlive the copies (the stream is
            // synchronised before they are dropped).
            let buf = unsafe { device.borrow(p.ptr, p.bytes) };
            // SAFETY: `pinned` is neither read nor written by the host
            // until the stream is synchronised below.
            unsafe {
                if to_host {
                    device.copy_to_host_async(stream, &buf, 0, pinned, at, p.bytes)
                } else {
                    device.copy_to_device_async(stream, pinned, at, p.bytes, &buf, 0)
                }
            }
            .map_err(spgemm_core::Error::from)?;
            borrowed.push(buf);
            at += p.bytes;
        }
        device
            .synchronize(stream)
            .map_err(spgemm_core::Error::from)?;
        Ok(())
    }
}

impl<D: Device> DeviceExchange<D> for HostStaged<'_, D> {
    fn name(&self) -> &'static str {
        "host"
    }

    fn exchange(&self, device: &D, sends: &[Piece], recvs: &[Piece]) -> Result<Traffic> {
        let (rank, ranks) = (self.comm.rank() as usize, self.comm.size() as usize);
        let checked = check_peers(rank, ranks, &[sends, recvs])
            .map(|()| (per_peer(sends, ranks), per_peer(recvs, ranks)));
        let checked = checked.and_then(|(out, inc)| {
            match out.iter().chain(&inc).find(|&&b| b > i32::MAX as usize) {
                Some(&bytes) => Err(Error::TooLarge {
                    what: "a staged device exchange",
                    words: bytes.div_ceil(8) as u64,
                    limit: i32::MAX as u64 / 8,
                }),
                None => Ok((out, inc)),
            }
        });
        let (out, inc) = agree(self.comm, checked)?;
        let staged = (|| {
            let stream = device
                .create_copy_stream()
                .map_err(spgemm_core::Error::from)?;
            let mut outgoing = Vec::new();
            for (q, &bytes) in out.iter().enumerate().filter(|(_, &b)| b > 0) {
                let mut pinned = self.buffer(device, bytes)?;
                let mine: Vec<&Piece> = sends.iter().filter(|p| p.peer == q).collect();
                Self::copy(device, &stream, &mine, &mut pinned, true)?;
                outgoing.push((q, pinned, bytes));
            }
            let mut incoming = Vec::new();
            for (q, &bytes) in inc.iter().enumerate().filter(|(_, &b)| b > 0) {
                incoming.push((q, self.buffer(device, bytes)?, bytes));
            }
            Ok((stream, outgoing, incoming))
        })();
        let (stream, outgoing, mut incoming) = agree(self.comm, staged)?;
        mpi::request::scope(|scope| {
            let mut requests = Vec::new();
            for (q, pinned, bytes) in incoming.iter_mut() {
                let peer = self.comm.process_at_rank(*q as i32);
                let buf = &mut pinned.as_mut_slice()[..*bytes];
                requests.push(peer.immediate_receive_into_with_tag(scope, buf, STAGED_TAG));
            }
            for (q, pinned, bytes) in &outgoing {
                let peer = self.comm.process_at_rank(*q as i32);
                let buf = &pinned.as_slice()[..*bytes];
                requests.push(peer.immediate_send_with_tag(scope, buf, STAGED_TAG));
            }
            for r in requests {
                r.wait();
            }
        });
        let placed = (|| {
            for (q, pinned, _) in incoming.iter_mut() {
                let theirs: Vec<&Piece> = recvs.iter().filter(|p| p.peer == *q).collect();
                Self::copy(device, &stream, &theirs, pinned, false)?;
            }
            Ok(())
        })();
        let mut kept = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        kept.extend(outgoing.into_iter().chain(incoming).map(|(_, b, _)| b));
        drop(kept);
        agree(self.comm, placed)?;
        Ok(Traffic {
            sent: out.iter().sum::<usize>() as u64,
            received: inc.iter().sum::<usize>() as u64,
        })
    }
}
