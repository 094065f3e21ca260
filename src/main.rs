//! The `spgemm` command: multiply, benchmark and inspect sparse matrices.

mod cli;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    if let Err(e) = cli::run(args) {
        eprintln!("spgemm: error: {e}");
        std::process::exit(1);
    }
}
