//! Progress bars that appear only when a step takes over a second, so that
//! quick runs print nothing but their result.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::{Duration, Instant};

/// A bar (or a spinner when the total is unknown) on standard error,
/// hidden for its first second.
pub struct Step {
    bar: ProgressBar,
    start: Instant,
}

impl Step {
    /// A bar of `total` units (`bytes`: shown as bytes), or a spinner when
    /// `total` is `None`, for `message`.
    pub fn new(message: impl Into<String>, total: Option<u64>, bytes: bool) -> Self {
        let template = match (total, bytes) {
            (None, _) => "{spinner} {msg} ({elapsed})",
            (Some(_), true) => "{msg} {bar:40} {bytes}/{total_bytes} ({eta})",
            (Some(_), false) => "{msg} {bar:40} {human_pos}/{human_len} ({eta})",
        };
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden())
            .with_message(message.into());
        bar.set_style(
            ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Self {
            bar,
            start: Instant::now(),
        }
    }

    /// Sets the position; draws once the step has taken over a second.
    pub fn set(&self, position: u64) {
        self.show_if_slow();
        self.bar.set_position(position);
    }

    fn show_if_slow(&self) {
        if self.bar.is_hidden() && self.start.elapsed() > Duration::from_secs(1) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Runs `f`, a step without progress reports, with a spinner that
    /// appears after a second.
    pub fn spin<R: Send>(self, f: impl FnOnce() -> R + Send) -> R {
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let ticker = s.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    self.show_if_slow();
                    self.bar.tick();
                }
            });
            let r = f();
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = ticker.join();
            self.bar.finish_and_clear();
            r
        })
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
