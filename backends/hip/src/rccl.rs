//! RCCL, AMD's implementation of NCCL's API, loaded at run time and
//! declared by hand like the rest of this backend's libraries: the
//! point-to-point calls of one communicator (unique id, init, grouped
//! sends and receives on a HIP stream, destroy), for the distributed
//! layer's GPU-resident exchange on AMD GPUs. The signatures are those of
//! `rccl.h` (NCCL's `nccl.h`); Debian packages no RCCL, so they are not
//! checked against a library in CI, and no AMD GPU ran them.

use crate::device::{HipDevice, Stream};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

/// `ncclComm_t`.
type Comm = *mut c_void;
/// `ncclResult_t` (a C enum: an `int`; 0 is success).
type Status = c_int;
/// `ncclInt8`, the element type every piece is sent as.
const INT8: c_int = 0;

/// `ncclUniqueId`: 128 opaque bytes, made by one rank and passed by value
/// to every rank's init.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct UniqueId {
    /// The bytes.
    pub internal: [c_char; 128],
}

/// The library names tried, in order.
pub const LIBRARIES: [&str; 2] = ["librccl.so.1", "librccl.so"];

crate::library::dynamic_library! {
    /// RCCL's entry points the exchange calls.
    struct Lib from LIBRARIES;
    get_unique_id = "ncclGetUniqueId": fn(*mut UniqueId) -> Status;
    comm_init_rank = "ncclCommInitRank": fn(*mut Comm, c_int, UniqueId, c_int) -> Status;
    comm_destroy = "ncclCommDestroy": fn(Comm) -> Status;
    group_start = "ncclGroupStart": fn() -> Status;
    group_end = "ncclGroupEnd": fn() -> Status;
    send = "ncclSend": fn(*const c_void, usize, c_int, c_int, Comm, *mut c_void) -> Status;
    recv = "ncclRecv": fn(*mut c_void, usize, c_int, c_int, Comm, *mut c_void) -> Status;
    error_string = "ncclGetErrorString": fn(Status) -> *const c_char;
}

/// Every symbol loaded.
pub const SYMBOLS: &[&str] = Lib::SYMBOLS;

fn lib() -> Result<&'static Lib, String> {
    static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();
    LIB.get_or_init(Lib::load).as_ref().map_err(Clone::clone)
}

/// `call`'s status as a result naming the call and RCCL's message.
fn check(lib: &Lib, call: &str, s: Status) -> Result<(), String> {
    if s == 0 {
        return Ok(());
    }
    // SAFETY: RCCL returns a static string for any status.
    let text = unsafe { (lib.error_string)(s) };
    let text = if text.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated static string.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    };
    Err(format!("RCCL {call} failed: {text} ({s})"))
}

/// Whether RCCL's library loads.
pub fn available() -> bool {
    lib().is_ok()
}

/// A new unique id (made on one rank, sent to the others).
///
/// # Errors
/// RCCL missing or failing, as a message.
pub fn unique_id() -> Result<UniqueId, String> {
    let lib = lib()?;
    let mut id = UniqueId { internal: [0; 128] };
    // SAFETY: writes 128 bytes into `id`.
    check(lib, "ncclGetUniqueId", unsafe {
        (lib.get_unique_id)(&mut id)
    })?;
    Ok(id)
}

/// One rank's RCCL communicator (destroyed on drop).
pub struct Communicator {
    lib: &'static Lib,
    comm: Comm,
}

// SAFETY: the communicator is used by one thread at a time (the
// distributed layer's exchanges are collective, one at a time a rank).
unsafe impl Send for Communicator {}
// SAFETY: as above.
unsafe impl Sync for Communicator {}

impl Communicator {
    /// Rank `rank` of `ranks` of the communicator `id` names, on
    /// `device` (made current first). Collective over the ranks.
    ///
    /// # Errors
    /// RCCL missing or failing, as a message.
    pub fn new(device: &HipDevice, ranks: i32, id: UniqueId, rank: i32) -> Result<Self, String> {
        let lib = lib()?;
        device.make_current().map_err(|e| e.to_string())?;
        let mut comm = std::ptr::null_mut();
        // SAFETY: `comm` receives the new communicator.
        check(lib, "ncclCommInitRank", unsafe {
            (lib.comm_init_rank)(&mut comm, ranks, id, rank)
        })?;
        Ok(Self { lib, comm })
    }

    /// Starts a group of sends and receives.
    ///
    /// # Errors
    /// RCCL's failure, as a message.
    pub fn group_start(&self) -> Result<(), String> {
        // SAFETY: no arguments.
        check(self.lib, "ncclGroupStart", unsafe {
            (self.lib.group_start)()
        })
    }

    /// Ends the group: its sends and receives are enqueued on their
    /// streams.
    ///
    /// # Errors
    /// RCCL's failure, as a message.
    pub fn group_end(&self) -> Result<(), String> {
        // SAFETY: no arguments.
        check(self.lib, "ncclGroupEnd", unsafe { (self.lib.group_end)() })
    }

    /// Sends (or with `receive`, receives) `bytes` bytes at device address
    /// `ptr` to (from) rank `peer`, on `stream`.
    ///
    /// # Errors
    /// RCCL's failure, as a message.
    ///
    /// # Safety
    /// `ptr` addresses `bytes` bytes of this device's memory that stay
    /// allocated (and, for a send, unchanged) until the stream has passed
    /// the transfer.
    pub unsafe fn transfer(
        &self,
        ptr: u64,
        bytes: usize,
        peer: i32,
        stream: &Stream,
        receive: bool,
    ) -> Result<(), String> {
        let p = ptr as *mut c_void;
        // SAFETY: the caller's guarantee.
        unsafe {
            if receive {
                check(
                    self.lib,
                    "ncclRecv",
                    (self.lib.recv)(p, bytes, INT8, peer, self.comm, stream.raw()),
                )
            } else {
                check(
                    self.lib,
                    "ncclSend",
                    (self.lib.send)(p, bytes, INT8, peer, self.comm, stream.raw()),
                )
            }
        }
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // SAFETY: made by ncclCommInitRank, destroyed once.
        let _ = unsafe { (self.lib.comm_destroy)(self.comm) };
    }
}
