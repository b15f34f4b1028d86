//! Facts kept between runs, per file, so an unchanged file is neither parsed nor — when the
//! prefilter ruled it out — even read again.
//!
//! An entry is keyed by the file's canonical path and holds its size and modification time,
//! the hash of its content, and what the last run made of it: the prefilter's verdict (with
//! the prefilter it came from: the enabled rules' triggers and the configured names), or the
//! extracted facts. A file whose size and time are unchanged is trusted by them, as ruff's
//! cache does; a file whose bytes read the same as a cached hash is too (a `touch`, a checkout
//! that rewrote it). Facts do not depend on the configuration or on where the file is, so
//! nothing else keys them.
//!
//! The CLI keeps the cache on disk, in `.retrylint_cache/` at the project root (with a
//! `.gitignore` of its own), under a directory named for the retrylint build that wrote it:
//! another build never reads it. The language server keeps one in memory for each workspace,
//! with the texts too, so an edit re-extracts the edited buffer and nothing else.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::facts::FileFacts;
use crate::source::fnv1a64;

/// The cache directory's name at the project root.
pub const CACHE_DIR: &str = ".retrylint_cache";

/// A file's size and modification time, as the file system reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    pub size: u64,
    /// Nanoseconds since the Unix epoch.
    pub modified: u128,
}

impl Stat {
    pub fn of(metadata: &std::fs::Metadata) -> Option<Stat> {
        let modified = metadata.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
        Some(Stat {
            size: metadata.len(),
            modified,
        })
    }
}

/// What a run made of a file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Verdict {
    /// The prefilter identified by this key ruled the file out (`generated`: as generated
    /// code).
    Skipped { prefilter: u64, generated: bool },
    /// The file was parsed into these facts. The text is kept in memory only (the language
    /// server), never written to disk.
    Extracted {
        facts: Arc<FileFacts>,
        #[serde(skip)]
        text: Option<Arc<[u8]>>,
        /// The file is generated code: a run that skips generated files skips it.
        generated: bool,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// `None` for a text that is not the file on disk (an editor buffer).
    stat: Option<Stat>,
    hash: u64,
    verdict: Verdict,
}

#[derive(Default)]
pub struct FactsCache {
    entries: Mutex<HashMap<PathBuf, Entry>>,
    /// Where the cache is written; `None` in memory.
    file: Option<PathBuf>,
    keep_texts: bool,
    changed: AtomicBool,
}

/// The content hash the cache compares texts by.
pub fn content_hash(text: &[u8]) -> u64 {
    fnv1a64(text)
}

impl FactsCache {
    /// A cache that lives as long as the process (the language server), texts included.
    pub fn in_memory() -> FactsCache {
        FactsCache {
            keep_texts: true,
            ..FactsCache::default()
        }
    }

    /// The cache of the project at `root`, under `dir` (default `root/.retrylint_cache`). A
    /// missing, unreadable or foreign cache is an empty one.
    pub fn open(root: &Path, dir: Option<&Path>) -> FactsCache {
        let dir = dir.map_or_else(|| root.join(CACHE_DIR), Path::to_path_buf);
        let file = dir.join(build_id()).join("facts.bin");
        let entries = std::fs::read(&file)
            .ok()
            .and_then(|bytes| postcard::from_bytes::<HashMap<PathBuf, Entry>>(&bytes).ok())
            .unwrap_or_default();
        FactsCache {
            entries: Mutex::new(entries),
            file: Some(file),
            keep_texts: false,
            changed: AtomicBool::new(false),
        }
    }

    /// Whether the cached texts can be used without reading the files.
    pub fn keeps_texts(&self) -> bool {
        self.keep_texts
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The verdict on `path` if the file is as it was (same size and modification time),
    /// with the hash of its text.
    pub fn by_stat(&self, path: &Path, stat: Stat) -> Option<(Verdict, u64)> {
        let entries = self.entries();
        let entry = entries.get(path)?;
        (entry.stat == Some(stat)).then(|| (entry.verdict.clone(), entry.hash))
    }

    /// The verdict on `path` as last read from disk (not an editor buffer's), with the hash of
    /// its text, for a caller that hears of every change ([`FactsCache::forget`]).
    pub fn on_disk(&self, path: &Path) -> Option<(Verdict, u64)> {
        let entries = self.entries();
        let entry = entries.get(path)?;
        entry.stat.is_some().then(|| (entry.verdict.clone(), entry.hash))
    }

    /// The facts of `path` if its text hashes as cached.
    pub fn by_hash(&self, path: &Path, hash: u64) -> Option<(Arc<FileFacts>, bool)> {
        let entries = self.entries();
        let entry = entries.get(path)?;
        match &entry.verdict {
            Verdict::Extracted { facts, generated, .. } if entry.hash == hash => Some((facts.clone(), *generated)),
            _ => None,
        }
    }

    /// Records what this run made of `path`.
    pub fn store(&self, path: &Path, stat: Option<Stat>, hash: u64, verdict: Verdict) {
        let verdict = match verdict {
            Verdict::Extracted { facts, text, generated } => Verdict::Extracted {
                facts,
                text: text.filter(|_| self.keep_texts),
                generated,
            },
            skipped => skipped,
        };
        self.entries().insert(path.to_path_buf(), Entry { stat, hash, verdict });
        self.changed.store(true, Ordering::Relaxed);
    }

    /// Writes the cache if this run changed it, atomically, with a `.gitignore` beside it;
    /// caches of other builds are removed. A cache in memory is not written.
    pub fn save(&self) -> std::io::Result<()> {
        let Some(file) = &self.file else { return Ok(()) };
        if !self.changed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let (Some(build_dir), Some(root)) = (file.parent(), file.parent().and_then(Path::parent)) else {
            return Ok(());
        };
        std::fs::create_dir_all(build_dir)?;
        let ignore = root.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(
                &ignore,
                "# Created by retrylint: its cache, never to be committed.\n*\n",
            )?;
        }
        for entry in std::fs::read_dir(root)?.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) && entry.path() != build_dir {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let bytes = postcard::to_allocvec(&*self.entries()).map_err(std::io::Error::other)?;
        crate::files::write_atomically(file, &bytes)
    }

    /// Forgets what the cache knows of `path`: a watcher said it changed, and its size and
    /// modification time may not show it (a copy that keeps the time, a clock too coarse).
    pub fn forget(&self, path: &Path) {
        if self.entries().remove(path).is_some() {
            self.changed.store(true, Ordering::Relaxed);
        }
    }

    /// How many files the cache knows.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The build that writes a cache: its version, the facts' version, and the executable itself
/// (its size and time), so a rebuilt binary never reads facts of another layout.
fn build_id() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|path| std::fs::metadata(path).ok())
        .and_then(|m| Stat::of(&m))
        .map_or(0, |stat| fnv1a64(format!("{}:{}", stat.size, stat.modified).as_bytes()));
    format!(
        "v{}-{}-{:08x}",
        env!("CARGO_PKG_VERSION"),
        crate::extract::FACTS_VERSION,
        exe as u32
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Language;

    #[test]
    fn a_saved_cache_is_read_back_by_the_same_build() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FactsCache::open(dir.path(), None);
        let facts = Arc::new(crate::extract::extract_file(
            Language::TypeScript,
            b"export const a = 1\n",
        ));
        let stat = Stat { size: 19, modified: 7 };
        let path = dir.path().join("a.ts");
        let verdict = Verdict::Extracted {
            facts,
            text: None,
            generated: false,
        };
        cache.store(&path, Some(stat), 42, verdict);
        cache.store(
            &dir.path().join("b.ts"),
            Some(stat),
            1,
            Verdict::Skipped {
                prefilter: 9,
                generated: false,
            },
        );
        cache.save().unwrap();
        let again = FactsCache::open(dir.path(), None);
        assert_eq!(again.len(), 2);
        assert!(matches!(
            again.by_stat(&path, stat),
            Some((Verdict::Extracted { .. }, 42))
        ));
        assert!(
            again.by_stat(&path, Stat { size: 19, modified: 8 }).is_none(),
            "a newer file is not trusted"
        );
        assert!(again.by_hash(&path, 42).is_some() && again.by_hash(&path, 43).is_none());
        let ignore = std::fs::read_to_string(dir.path().join(CACHE_DIR).join(".gitignore")).unwrap();
        assert!(ignore.lines().any(|l| l == "*"));
    }

    #[test]
    fn a_damaged_cache_is_an_empty_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CACHE_DIR).join(build_id()).join("facts.bin");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, b"\xff\x00 not a cache").unwrap();
        assert!(FactsCache::open(dir.path(), None).is_empty());
    }
}
