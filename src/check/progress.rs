//! How far a check has come, counted by the pipeline for whoever shows it (the command
//! line's progress line on a terminal): the stage, and the files read of those discovered.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// A stage of a check, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Stage {
    /// Discovery: walking the tree.
    Walking = 0,
    /// Reading, prefiltering and extracting the files discovered.
    Reading = 1,
    /// Resolution and analysis, with the files they ask for.
    Analysing = 2,
    /// The rules.
    Checking = 3,
    /// The report.
    Done = 4,
}

/// Counters the pipeline updates as it goes, read from another thread.
#[derive(Debug, Default)]
pub struct Progress {
    stage: AtomicU8,
    files: AtomicUsize,
    read: AtomicUsize,
}

impl Progress {
    pub fn stage(&self) -> Stage {
        match self.stage.load(Ordering::Relaxed) {
            0 => Stage::Walking,
            1 => Stage::Reading,
            2 => Stage::Analysing,
            3 => Stage::Checking,
            _ => Stage::Done,
        }
    }

    pub fn set_stage(&self, stage: Stage) {
        self.stage.store(stage as u8, Ordering::Relaxed);
    }

    /// Starts reading `files` files.
    pub fn start_reading(&self, files: usize) {
        self.files.store(files, Ordering::Relaxed);
        self.read.store(0, Ordering::Relaxed);
        self.set_stage(Stage::Reading);
    }

    /// One more file read.
    pub fn file_read(&self) {
        self.read.fetch_add(1, Ordering::Relaxed);
    }

    /// Files read, of those discovered.
    pub fn files(&self) -> (usize, usize) {
        (self.read.load(Ordering::Relaxed), self.files.load(Ordering::Relaxed))
    }

    /// The line that says where a check is.
    pub fn line(&self) -> String {
        let (read, files) = self.files();
        match self.stage() {
            Stage::Walking => "retrylint: finding files…".to_string(),
            Stage::Reading => format!(
                "retrylint: reading files: {} of {} ({}%)",
                thousands(read),
                thousands(files),
                (read * 100).checked_div(files).unwrap_or(100)
            ),
            Stage::Analysing => format!("retrylint: analysing {} files…", thousands(files)),
            Stage::Checking => format!("retrylint: checking {} files…", thousands(files)),
            Stage::Done => String::new(),
        }
    }
}

/// `12345` as `12,345`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_follows_the_stages() {
        let progress = Progress::default();
        assert_eq!(progress.line(), "retrylint: finding files…");
        progress.start_reading(200_000);
        for _ in 0..50_000 {
            progress.file_read();
        }
        assert_eq!(progress.line(), "retrylint: reading files: 50,000 of 200,000 (25%)");
        progress.set_stage(Stage::Analysing);
        assert_eq!(progress.line(), "retrylint: analysing 200,000 files…");
        progress.set_stage(Stage::Done);
        assert_eq!(progress.line(), "");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(999), "999");
        progress.start_reading(0);
        assert_eq!(progress.line(), "retrylint: reading files: 0 of 0 (100%)");
    }
}
