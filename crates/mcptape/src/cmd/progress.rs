//! Progress for `crawl`, the `bench` phases, `verify` and `check`. On a terminal: bars (indicatif) on
//! stderr. Off a terminal (pipes, CI logs): no bar frames, but one status line every
//! [`STATUS_EVERY`] (`mcptape bench: 20s: single requests: sent 1234, ok 1200, errors 34`), as
//! k6 prints its progress in CI, so a long run is seen to be alive and how it goes.

use std::io::IsTerminal as _;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How often a status line is printed when stderr is not a terminal (10 s, as k6 in CI).
pub const STATUS_EVERY: Duration = Duration::from_secs(10);

/// Environment variable that sets another status interval (a duration: `500ms`, `2s`), for
/// tests and impatient CI logs; at least [`MIN_STATUS_EVERY_US`] µs and at most 3600 s.
pub const STATUS_EVERY_ENV: &str = "MCPTAPE_STATUS_EVERY";

/// Shortest status interval [`STATUS_EVERY_ENV`] may set: 100 ms, µs.
pub const MIN_STATUS_EVERY_US: u64 = 100_000;

/// A bar of `len` steps with the indicatif template `template` (e.g. `"{bar:40} {pos}/{len}
/// reads"`), hidden when stderr is not a terminal. A template indicatif refuses falls back to
/// the default bar style.
pub fn bar(len: u64, template: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb
}

/// The status interval: [`STATUS_EVERY_ENV`] when set, else [`STATUS_EVERY`].
///
/// # Errors
/// The variable is not a duration, or is below [`MIN_STATUS_EVERY_US`] or above 3600 s.
pub fn status_every() -> anyhow::Result<Duration> {
    let Ok(v) = std::env::var(STATUS_EVERY_ENV) else {
        return Ok(STATUS_EVERY);
    };
    let d = super::flag_duration(STATUS_EVERY_ENV, &v, 3_600_000_000)?;
    anyhow::ensure!(
        d.as_micros() >= u128::from(MIN_STATUS_EVERY_US),
        "{STATUS_EVERY_ENV}={v}: at least 100ms"
    );
    Ok(d)
}

/// Prints `mcptape CMD: ELAPSED: STATUS` on stderr every [`status_every`] until dropped, from a
/// thread of its own; `status` gives the rest of the line (phase, sent, ok, errors). Nothing is
/// printed when stderr is a terminal (the bar shows it) or the run ends before the first
/// interval.
pub struct StatusLines {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StatusLines {
    /// Starts the lines of `cmd` (`bench`, `crawl`, `verify`).
    ///
    /// # Errors
    /// A bad [`STATUS_EVERY_ENV`].
    pub fn start(
        cmd: &'static str,
        status: impl Fn() -> String + Send + 'static,
    ) -> anyhow::Result<StatusLines> {
        let every = status_every()?;
        if std::io::stderr().is_terminal() {
            return Ok(StatusLines {
                stop: Arc::new((Mutex::new(false), Condvar::new())),
                thread: None,
            });
        }
        Ok(Self::start_every(cmd, every, status))
    }

    /// [`StatusLines::start`] every `every`, whatever stderr is.
    fn start_every(
        cmd: &'static str,
        every: Duration,
        status: impl Fn() -> String + Send + 'static,
    ) -> StatusLines {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let s = stop.clone();
        let start = Instant::now();
        let thread = std::thread::Builder::new()
            .name(format!("mcptape-{cmd}-status"))
            .spawn(move || {
                let (lock, cv) = &*s;
                let mut stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
                let mut next = start + every;
                loop {
                    // Checked before every wait: a stop that came before this thread first
                    // took the lock was notified to no one.
                    if *stopped {
                        return;
                    }
                    let now = Instant::now();
                    if now < next {
                        stopped = cv
                            .wait_timeout(stopped, next - now)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                        continue;
                    }
                    eprintln!(
                        "mcptape {cmd}: {}: {}",
                        elapsed_text(start.elapsed()),
                        status()
                    );
                    next += every;
                }
            })
            .ok();
        StatusLines { stop, thread }
    }
}

impl Drop for StatusLines {
    fn drop(&mut self) {
        let (lock, cv) = &*self.stop;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `7.5s`, `20s`, `2m05s`: the elapsed time of a status line.
pub fn elapsed_text(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..10 => format!("{:.1}s", d.as_secs_f64()),
        10..60 => format!("{s}s"),
        _ => format!("{}m{:02}s", s / 60, s % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a run that ended before the status thread first waited left it waiting out
    /// the whole interval (the stop was notified to no one), and `verify` against a closed
    /// port took 10 s. Dropped at once, the lines end at once (the interval is an hour).
    #[test]
    fn status_lines_dropped_at_once_do_not_wait_out_the_interval() {
        for _ in 0..50 {
            let s = StatusLines::start_every("test", Duration::from_secs(3600), String::new);
            drop(s);
        }
    }

    #[test]
    fn elapsed_text_is_short_and_in_its_unit() {
        assert_eq!(elapsed_text(Duration::from_millis(7_500)), "7.5s");
        assert_eq!(elapsed_text(Duration::from_secs(20)), "20s");
        assert_eq!(elapsed_text(Duration::from_secs(125)), "2m05s");
    }
}
