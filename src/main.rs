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
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => {
            use clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand as Bare;
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            if matches!(e.kind(), DisplayHelp | DisplayVersion | Bare) {
                e.exit();
            }
            // clap's first paragraph (the error, with any list of missing
            // arguments), on one line like every other error.
            let text = e.to_string();
            let first = text.split("\n\n").next().unwrap_or_default();
            let first = first.trim_start_matches("error: ");
            eprintln!("spgemm: error: {}; see spgemm --help", one_line(first));
            std::process::exit(2);
        }
    };
    if let Err(e) = cli::run(args) {
        eprintln!("spgemm: error: {}", one_line(&e.to_string()));
        std::process::exit(1);
    }
}

/// `text`'s non-empty lines, trimmed and joined (by a space after a colon,
/// else by "; "): a compiler's log in a device error or a list of missing
/// arguments, so that every error is one line.
fn one_line(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !out.is_empty() {
            out += if out.ends_with(':') { " " } else { "; " };
        }
        out += line;
    }
    out
}
