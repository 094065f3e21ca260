//! The `spgemm` command: multiply, benchmark and inspect sparse matrices.

mod cli;

use clap::Parser;

fn main() {
    // Like other Unix tools, end quietly when the reader of our output goes
    // away (`spgemm info big.mtx | head`) instead of failing to print.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any
    // thread is started has no other effect on the program.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = cli::Cli::parse();
    if let Err(e) = cli::run(args) {
        eprintln!("spgemm: error: {e}");
        std::process::exit(1);
    }
}
