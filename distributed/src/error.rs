//! Errors of the distributed layer.

/// Errors of distributed products. Under MPI every rank returns the same
/// error: one rank's failure is agreed on by all before any of them goes
/// on, so none waits forever in a collective.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error of the core library (I/O, parsing, shapes, memory).
    #[error(transparent)]
    Core(#[from] spgemm_core::Error),
    /// A malformed argument (partition, grid, algorithm).
    #[error("{0}")]
    Argument(String),
    /// The local product failed on this rank (the backend's message).
    #[error("local product: {0}")]
    Local(String),
    /// A message between ranks was not what the protocol expects (a bug,
    /// or ranks running different builds).
    #[error("protocol: {0}")]
    Protocol(String),
    /// An exchange too large for MPI's 32-bit counts.
    #[error("{what}: {words} words for one rank exceed MPI's limit of {limit} per message")]
    TooLarge {
        /// The exchange.
        what: &'static str,
        /// Its size in 8-byte words.
        words: u64,
        /// The limit.
        limit: u64,
    },
    /// Rank `rank` failed with `message`; every rank of the communicator
    /// returns this same error.
    #[error("rank {rank} of {ranks}: {message}")]
    Rank {
        /// The lowest rank that failed.
        rank: usize,
        /// Ranks in the communicator.
        ranks: usize,
        /// Its error.
        message: String,
    },
}

impl Error {
    /// The 2D algorithm's error for a number of ranks that is not a square.
    pub(crate) fn not_square(ranks: usize) -> Self {
        let q = (ranks as f64).sqrt() as usize;
        Error::Argument(format!(
            "2D SUMMA needs a square number of ranks (a q×q grid); {ranks} is not (nearest: {} or {}); use --algorithm 1d",
            q * q,
            (q + 1) * (q + 1)
        ))
    }
}

/// Result alias of the distributed layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;
