//! The progress line of `retrylint check`: on stderr, once a check has taken longer than a
//! few seconds, redrawn in place and erased when the check ends — only when stderr is a
//! terminal, never in a CI log (`CI` set) or in piped output, and not with `--quiet`.

use std::ffi::OsStr;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use retrylint::check::Progress;

/// How long a check runs before the line appears (`RETRYLINT_PROGRESS_DELAY_MS` sets it, for
/// tests: at 0 the line is drawn from the start).
const DELAY: Duration = Duration::from_secs(2);
/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(250);

/// Whether a progress line is drawn: stderr is a terminal, `CI` is not set (to anything but
/// empty, `0` or `false`), and the run is not `--quiet`.
pub fn wanted(stderr_is_terminal: bool, ci: Option<&OsStr>, quiet: bool) -> bool {
    let in_ci = ci.is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
    stderr_is_terminal && !in_ci && !quiet
}

/// The delay before the line appears.
pub fn delay() -> Duration {
    std::env::var("RETRYLINT_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(DELAY, Duration::from_millis)
}

/// Draws `progress` on stderr from another thread until dropped, then erases the line.
pub struct Ticker {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    pub fn start(progress: Arc<Progress>, delay: Duration) -> Ticker {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = stop.clone();
        // Without a delay (tests), the first line is drawn before the check starts.
        if delay.is_zero() {
            let _ = write!(std::io::stderr(), "\r\x1b[2K{}", progress.line());
        }
        let thread = std::thread::spawn(move || {
            let (lock, wake) = &*signal;
            let stopped = |wait: Duration| {
                let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
                let (guard, _) = wake
                    .wait_timeout_while(guard, wait, |stop| !*stop)
                    .unwrap_or_else(|e| e.into_inner());
                *guard
            };
            if stopped(delay) {
                return;
            }
            let mut stderr = std::io::stderr();
            loop {
                let line = progress.line();
                if !line.is_empty() {
                    let _ = write!(stderr, "\r\x1b[2K{line}");
                    let _ = stderr.flush();
                }
                if stopped(TICK) {
                    let _ = write!(stderr, "\r\x1b[2K");
                    let _ = stderr.flush();
                    return;
                }
            }
        });
        Ticker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_terminal_outside_ci_gets_the_line() {
        assert!(wanted(true, None, false));
        assert!(wanted(true, Some(OsStr::new("")), false));
        assert!(wanted(true, Some(OsStr::new("false")), false));
        assert!(!wanted(true, Some(OsStr::new("true")), false), "a CI log");
        assert!(!wanted(true, Some(OsStr::new("1")), false), "a CI log");
        assert!(!wanted(false, None, false), "piped");
        assert!(!wanted(true, None, true), "--quiet");
    }
}
