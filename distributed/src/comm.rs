//! The MPI operations the algorithms use, with the bytes they move
//! counted and every rank's failure agreed on by all.

use crate::{Error, Result};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use rayon::prelude::*;

/// Bytes sent to and received from other ranks, counted by the exchanges
/// ([`crate::model`] says what counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Traffic {
    /// Bytes sent.
    pub sent: u64,
    /// Bytes received.
    pub received: u64,
}

/// Which of `r`'s results every rank returns: `r` itself when no rank
/// failed, otherwise the lowest failing rank's error as
/// [`Error::Rank`] on every rank. Collective: every rank of `comm` calls
/// it at the same point.
pub fn agree<T>(comm: &SimpleCommunicator, r: Result<T>) -> Result<T> {
    let size = comm.size();
    let mine = if r.is_err() { comm.rank() } else { size };
    let mut first = size;
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    if first == size {
        return r;
    }
    let message = match &r {
        Err(Error::Rank { message, .. }) if comm.rank() == first => message.clone(),
        Err(e) if comm.rank() == first => e.to_string(),
        _ => String::new(),
    };
    let root = comm.process_at_rank(first);
    let mut len = message.len() as u64;
    root.broadcast_into(&mut len);
    let mut bytes = if comm.rank() == first {
        message.into_bytes()
    } else {
        vec![0u8; len as usize]
    };
    root.broadcast_into(&mut bytes[..]);
    Err(Error::Rank {
        rank: first as usize,
        ranks: size as usize,
        message: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

/// `n` as an MPI count.
fn count(n: usize, what: &'static str) -> Result<Count> {
    Count::try_from(n).map_err(|_| Error::TooLarge {
        what,
        words: n as u64,
        limit: Count::MAX as u64,
    })
}

/// The tag of the messages of [`exchange_while`].
const EXCHANGE_TAG: i32 = 0x5347;

/// Sends `messages[q]` to rank `q` and returns what each rank sent this
/// one, running `work` while the messages are in flight (an
/// `MPI_Alltoall` of their sizes, then non-blocking sends and receives
/// between the ranks that have something to say, as PETSc's scatters do).
/// `messages.len()` is the communicator's size; the message to itself is
/// handed over without MPI and not counted.
///
/// # Errors
/// [`Error::TooLarge`] (agreed by all) when a message exceeds MPI's 32-bit
/// counts; `work`'s error, agreed by all.
pub fn exchange_while<R>(
    comm: &SimpleCommunicator,
    mut messages: Vec<Vec<u64>>,
    traffic: &mut Traffic,
    work: impl FnOnce() -> Result<R>,
) -> Result<(Vec<Vec<u64>>, R)> {
    let size = comm.size() as usize;
    let rank = comm.rank() as usize;
    let own = std::mem::take(&mut messages[rank]);
    let sizes: Vec<u64> = messages.iter().map(|m| m.len() as u64).collect();
    let mut incoming = vec![0u64; size];
    comm.all_to_all_into(&sizes[..], &mut incoming[..]);
    let others = (size as u64 - 1) * crate::wire::COUNT_BYTES;
    traffic.sent += others + sizes.iter().sum::<u64>() * 8;
    traffic.received += others + incoming.iter().sum::<u64>() * 8;
    let checked = sizes
        .iter()
        .chain(&incoming)
        .try_for_each(|&s| count(s as usize, "an exchange").map(drop));
    agree(comm, checked)?;
    // Receive buffers touched on all cores first: a large fresh buffer's
    // page faults, taken one by one inside MPI's copy, cost more than the
    // copy itself (200 MB between two ranks of one host: about 110 ms of
    // faults against 40 ms of copying).
    let mut received: Vec<Vec<u64>> = incoming
        .iter()
        .map(|&n| {
            let mut buf = Vec::new();
            (0..n as usize)
                .into_par_iter()
                .map(|_| 0u64)
                .collect_into_vec(&mut buf);
            buf
        })
        .collect();
    let result = mpi::request::scope(|scope| {
        let mut requests = Vec::new();
        for (q, buf) in received.iter_mut().enumerate() {
            if !buf.is_empty() {
                let peer = comm.process_at_rank(q as i32);
                requests.push(peer.immediate_receive_into_with_tag(
                    scope,
                    &mut buf[..],
                    EXCHANGE_TAG,
                ));
            }
        }
        let mut sends = Vec::new();
        for (q, msg) in messages.iter().enumerate() {
            if !msg.is_empty() {
                let peer = comm.process_at_rank(q as i32);
                sends.push(peer.immediate_send_with_tag(scope, &msg[..], EXCHANGE_TAG));
            }
        }
        let result = work();
        for r in requests {
            r.wait();
        }
        for s in sends {
            s.wait();
        }
        result
    });
    let result = agree(comm, result)?;
    received[rank] = own;
    Ok((received, result))
}

/// [`exchange_while`] with nothing to do meanwhile.
///
/// # Errors
/// As [`exchange_while`].
pub fn exchange(
    comm: &SimpleCommunicator,
    messages: Vec<Vec<u64>>,
    traffic: &mut Traffic,
) -> Result<Vec<Vec<u64>>> {
    exchange_while(comm, messages, traffic, || Ok(())).map(|(m, ())| m)
}

/// Broadcasts `words` from rank `root` of `comm` (its length first) and
/// returns them on every rank. The root counts `size − 1` sends of the
/// header and words, each other rank one receipt.
///
/// # Errors
/// [`Error::TooLarge`] on every rank when the words exceed MPI's 32-bit
/// count.
pub fn broadcast(
    comm: &SimpleCommunicator,
    root: usize,
    words: Vec<u64>,
    traffic: &mut Traffic,
) -> Result<Vec<u64>> {
    let process = comm.process_at_rank(root as i32);
    let mut len = words.len() as u64;
    process.broadcast_into(&mut len);
    count(len as usize, "a broadcast block")?;
    let bytes = crate::wire::HEADER_BYTES + len * 8;
    let mut words = if comm.rank() as usize == root {
        traffic.sent += bytes * (comm.size() as u64 - 1);
        words
    } else {
        traffic.received += bytes;
        vec![0u64; len as usize]
    };
    if len > 0 {
        process.broadcast_into(&mut words[..]);
    }
    Ok(words)
}

/// Sum of `v` over the ranks of `comm`.
pub fn sum(comm: &SimpleCommunicator, v: u64) -> u64 {
    let mut total = 0u64;
    comm.all_reduce_into(&v, &mut total, SystemOperation::sum());
    total
}

/// `v` of every rank, in rank order.
pub fn all_gather(comm: &SimpleCommunicator, v: u64) -> Vec<u64> {
    let mut all = vec![0u64; comm.size() as usize];
    comm.all_gather_into(&v, &mut all[..]);
    all
}
