//! Facts kept between runs, per file, so an unchanged file is neither parsed nor — when the
//! prefilter ruled it out — even read again.
//!
//! An entry is keyed by the file's canonical path and holds its size and modification time,
//! the hash of its content, and what the last run made of it: the prefilter's verdict (with
//! the prefilter it came from: the enabled rules' triggers and the configured names), or the
//! extracted facts. A file whose size and time are unchanged is trusted by them, as ruff's
//! cache does, unless it was modified within [`RACY_WINDOW`] of being read: an edit right
//! after might have kept both (git's "racily clean" entries), so its text is read and hashed.
//! A file whose bytes read the same as a cached hash is trusted too (a `touch`, a checkout
//! that rewrote it). Facts do not depend on the configuration or on where the file is, so
//! nothing else keys them.
//!
//! On disk each entry is a frame of its own with a checksum: a damaged one (a flipped bit, a
//! file cut short) is dropped, its file read and extracted again, and never written back.
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

/// A list of module names to keep with a file: most files the prefilter rules out re-export
/// nothing, and share one empty list rather than allocate one each.
pub fn shared(sources: Vec<String>) -> Arc<[String]> {
    static EMPTY: std::sync::LazyLock<Arc<[String]>> = std::sync::LazyLock::new(|| Arc::from(Vec::new()));
    match sources.is_empty() {
        true => EMPTY.clone(),
        false => sources.into(),
    }
}

/// What the prefilter left of a file it ruled out, beyond its verdict. Most such files
/// re-export nothing and need nothing of their aliases: they share one value, so a file the
/// prefilter rules out costs a pointer ([`RuledOut::new`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuledOut {
    /// The modules its code can re-export from (`None`: not known without reading it): see
    /// `extract::prefilter::Script::reexports`. The index follows barrels through these.
    pub reexports: Option<Arc<[String]>>,
    /// Ruled out unless one of these modules (as its imports name them) re-exports Effect:
    /// [`crate::extract::Relevance::ThroughAliases`]. The pipeline asks the index and reads it
    /// if one does.
    pub through_aliases: Option<Arc<[String]>>,
}

impl RuledOut {
    pub fn new(reexports: Option<Arc<[String]>>, through_aliases: Option<Arc<[String]>>) -> Arc<RuledOut> {
        static NOTHING: std::sync::LazyLock<Arc<RuledOut>> = std::sync::LazyLock::new(|| {
            Arc::new(RuledOut {
                reexports: Some(shared(Vec::new())),
                through_aliases: None,
            })
        });
        match (&reexports, &through_aliases) {
            (Some(list), None) if list.is_empty() => NOTHING.clone(),
            _ => Arc::new(RuledOut {
                reexports,
                through_aliases,
            }),
        }
    }
}

fn shared_ruled_out<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Arc<RuledOut>>, D::Error> {
    #[derive(Deserialize)]
    struct Read {
        reexports: Option<Vec<String>>,
        through_aliases: Option<Vec<String>>,
    }
    Ok(Option::<Read>::deserialize(deserializer)?
        .map(|read| RuledOut::new(read.reexports.map(shared), read.through_aliases.map(Into::into))))
}

/// What a run made of a file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Verdict {
    /// The prefilter identified by this key ruled the file out (`generated`: as generated
    /// code), and what it left of it (`None`: nothing known).
    Skipped {
        prefilter: u64,
        generated: bool,
        #[serde(deserialize_with = "shared_ruled_out")]
        ruled_out: Option<Arc<RuledOut>>,
    },
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
    /// The file was modified within [`RACY_WINDOW`] of when it was read: an edit right after
    /// may have kept its size and time, so they do not vouch for it (git's "racily clean").
    racy: bool,
    hash: u64,
    verdict: Verdict,
}

/// How close to its reading a file's modification time leaves the time unable to tell a later
/// edit: the coarsest timestamps in common use (FAT's 2 s; HFS+ and many network file systems
/// keep whole seconds, Linux's clock ticks every few milliseconds).
const RACY_WINDOW: u128 = 2_000_000_000;

/// Whether a file modified at `modified` (ns since the epoch), read now, is racy; a time in
/// the future (a clock skewed against the file server's) is too.
fn racy(modified: u128) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    modified.saturating_add(RACY_WINDOW) >= now
}

#[derive(Default)]
pub struct FactsCache {
    /// By [`path_key`]: a word per file where the path itself was a copy of every path.
    entries: Mutex<HashMap<u64, Entry>>,
    /// Where the cache is written; `None` in memory.
    file: Option<PathBuf>,
    keep_texts: bool,
    changed: AtomicBool,
}

/// The content hash the cache compares texts by.
pub fn content_hash(text: &[u8]) -> u64 {
    fnv1a64(text)
}

/// A cache file larger than this is not one of ours (a facts cache of a 200,000-file monorepo
/// is a few hundred megabytes).
const MAX_CACHE_SIZE: u64 = 4 * 1024 * 1024 * 1024;

/// A directory that is missing (it will be created) or a directory itself, not a link to one.
fn own_directory(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata.file_type().is_dir(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
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
        let build_dir = dir.join(build_id());
        // The cache's directories must be its own: one that a checkout holds as a symbolic
        // link would be read, written and pruned where it points. Such a cache is not used.
        if !own_directory(&dir) || !own_directory(&build_dir) {
            return FactsCache::default();
        }
        let file = build_dir.join("facts.bin");
        // Read a frame at a time: the file is never held in memory whole.
        let opened = crate::files::open_regular(&file, MAX_CACHE_SIZE, false)
            .and_then(|opened| Ok((opened.metadata()?.len(), opened)));
        let (entries, damaged) = match opened {
            Ok((size, opened)) => decode_from(std::io::BufReader::with_capacity(1 << 16, opened), size),
            Err(_) => (HashMap::new(), false),
        };
        FactsCache {
            entries: Mutex::new(entries),
            file: Some(file),
            keep_texts: false,
            // A damaged cache is written again, without what was dropped.
            changed: AtomicBool::new(damaged),
        }
    }

    /// Whether the cached texts can be used without reading the files.
    pub fn keeps_texts(&self) -> bool {
        self.keep_texts
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The verdict on `path` if the file is as it was (same size and modification time, and
    /// not modified so close to its reading that an edit could have kept them), with the hash
    /// of its text. A racy entry is answered by [`FactsCache::by_hash`] only, once the text is
    /// read.
    pub fn by_stat(&self, path: &Path, stat: Stat) -> Option<(Verdict, u64)> {
        let entries = self.entries();
        let entry = entries.get(&path_key(path))?;
        (entry.stat == Some(stat) && !entry.racy).then(|| (entry.verdict.clone(), entry.hash))
    }

    /// The verdict on `path` as last read from disk (not an editor buffer's), with the hash of
    /// its text, for a caller that hears of every change ([`FactsCache::forget`]).
    pub fn on_disk(&self, path: &Path) -> Option<(Verdict, u64)> {
        let entries = self.entries();
        let entry = entries.get(&path_key(path))?;
        entry.stat.is_some().then(|| (entry.verdict.clone(), entry.hash))
    }

    /// The facts of `path` if its text hashes as cached.
    pub fn by_hash(&self, path: &Path, hash: u64) -> Option<(Arc<FileFacts>, bool)> {
        let entries = self.entries();
        let entry = entries.get(&path_key(path))?;
        match &entry.verdict {
            Verdict::Extracted { facts, generated, .. } if entry.hash == hash => Some((facts.clone(), *generated)),
            _ => None,
        }
    }

    /// The verdict that ruled `path` out ([`Verdict::Skipped`]), if its text hashes as cached.
    pub fn skipped_by_hash(&self, path: &Path, hash: u64) -> Option<Verdict> {
        let entries = self.entries();
        let entry = entries.get(&path_key(path))?;
        match &entry.verdict {
            skipped @ Verdict::Skipped { .. } if entry.hash == hash => Some(skipped.clone()),
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
        let racy = stat.is_some_and(|stat| racy(stat.modified));
        self.entries().insert(
            path_key(path),
            Entry {
                stat,
                racy,
                hash,
                verdict,
            },
        );
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
        if !own_directory(root) || !own_directory(build_dir) {
            return Ok(());
        }
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
        let entries = self.entries();
        crate::files::write_atomically_streamed(file, |out| encode_to(&entries, out))
    }

    /// Forgets what the cache knows of `path`: a watcher said it changed, and its size and
    /// modification time may not show it (a copy that keeps the time, a clock too coarse).
    pub fn forget(&self, path: &Path) {
        if self.entries().remove(&path_key(path)).is_some() {
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

/// The first bytes of a cache file: its layout.
const MAGIC: &[u8] = b"retrylint facts 3\n";

/// What an entry is keyed by: a hash of the file's canonical path. Two paths that hash alike
/// (once in 2^64 per pair) share an entry, and the second file is read and hashed again: its
/// size and time must match the entry to be trusted by them, and facts found by the text's
/// hash are that text's wherever it lies.
fn path_key(path: &Path) -> u64 {
    fnv1a64(path.as_os_str().as_encoded_bytes())
}

/// The cache file: [`MAGIC`], then one frame per entry: its length (`u32`, little-endian),
/// a checksum of its bytes (`u64`, [`frame_checksum`]), and the entry ([`path_key`] and
/// [`Entry`], postcard). Each entry is checked on its own, so a damaged one (a flipped bit, a file cut
/// short) is dropped, and its file read and extracted again, while the rest still answer.
/// Written a frame at a time: the file is never held in memory whole.
fn encode_to(entries: &HashMap<u64, Entry>, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    out.write_all(MAGIC)?;
    let mut body = Vec::new();
    for (path, entry) in entries {
        body.clear();
        body = postcard::to_io(&(path, entry), body).map_err(std::io::Error::other)?;
        let Ok(len) = u32::try_from(body.len()) else { continue };
        out.write_all(&len.to_le_bytes())?;
        out.write_all(&frame_checksum(&body).to_le_bytes())?;
        out.write_all(&body)?;
    }
    Ok(())
}

#[cfg(test)]
fn encode(entries: &HashMap<u64, Entry>) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    encode_to(entries, &mut out)?;
    Ok(out)
}

/// The entries of a cache file whose checksums hold, and whether any was dropped (or the
/// file is not a cache of this layout at all).
#[cfg(test)]
fn decode(bytes: &[u8]) -> (HashMap<u64, Entry>, bool) {
    decode_from(bytes, bytes.len() as u64)
}

/// [`decode`] of a cache file of `size` bytes read from `input`, a frame at a time.
fn decode_from(mut input: impl std::io::Read, size: u64) -> (HashMap<u64, Entry>, bool) {
    let mut entries = HashMap::new();
    let mut magic = [0; MAGIC.len()];
    if input.read_exact(&mut magic).is_err() || magic != MAGIC {
        return (entries, true);
    }
    let mut left = size.saturating_sub(MAGIC.len() as u64);
    let mut damaged = false;
    let mut body = Vec::new();
    while left > 0 {
        let mut header = [0; 12];
        if left < 12 || input.read_exact(&mut header).is_err() {
            damaged = true;
            break;
        }
        left -= 12;
        let len = u64::from(u32::from_le_bytes(header[..4].try_into().unwrap_or_default()));
        let checksum = u64::from_le_bytes(header[4..].try_into().unwrap_or_default());
        // A length past the end is a file cut short (or a damaged length): nothing after it
        // can be told apart.
        if len > left {
            damaged = true;
            break;
        }
        left -= len;
        body.resize(len as usize, 0);
        if input.read_exact(&mut body).is_err() {
            damaged = true;
            break;
        }
        if frame_checksum(&body) != checksum {
            damaged = true;
            continue;
        }
        match postcard::from_bytes::<(u64, Entry)>(&body) {
            Ok((path, entry)) => {
                entries.insert(path, entry);
            }
            Err(_) => damaged = true,
        }
    }
    (entries, damaged)
}

/// A frame's checksum, FNV-1a-like but a word at a time (eight times FNV-1a's speed on a
/// warm run's megabyte): each step `(h ^ word) × odd` is a bijection of the state and of the
/// word, so a change to any one word (any bit flip) always changes it; other damage is
/// missed once in 2^64.
fn frame_checksum(body: &[u8]) -> u64 {
    const ODD: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut hash = 0xcbf2_9ce4_8422_2325 ^ body.len() as u64;
    let mut words = body.chunks_exact(8);
    for word in &mut words {
        let word: [u8; 8] = word.try_into().unwrap_or_default();
        hash = (hash ^ u64::from_le_bytes(word)).wrapping_mul(ODD);
    }
    for &byte in words.remainder() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(ODD);
    }
    hash
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

    #[cfg(unix)]
    #[test]
    fn a_cache_directory_that_is_a_link_is_neither_read_nor_written_nor_pruned() {
        let project = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let precious = elsewhere.path().join("precious");
        std::fs::create_dir_all(&precious).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), project.path().join(CACHE_DIR)).unwrap();
        let cache = FactsCache::open(project.path(), None);
        cache.changed.store(true, Ordering::Relaxed);
        cache.save().unwrap();
        assert!(precious.is_dir(), "the link's target was pruned");
        let left: Vec<_> = std::fs::read_dir(elsewhere.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("precious")],
            "nothing written through the link"
        );
    }

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
                ruled_out: None,
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

    /// Entries of real facts, as a run stores them.
    fn sample_entries() -> HashMap<u64, Entry> {
        let texts = [
            "import { Effect, Schedule } from \"effect\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.spaced(\"1 second\"), times: 3 }))\n",
            "export const b = 2\n",
        ];
        let mut entries = HashMap::new();
        for (at, text) in texts.iter().enumerate() {
            let facts = Arc::new(crate::extract::extract_file(Language::TypeScript, text.as_bytes()));
            entries.insert(
                path_key(Path::new(&format!("/project/src/{at}.ts"))),
                Entry {
                    stat: Some(Stat {
                        size: text.len() as u64,
                        modified: 1_700_000_000_000_000_000 + at as u128,
                    }),
                    racy: false,
                    hash: content_hash(text.as_bytes()),
                    verdict: Verdict::Extracted {
                        facts,
                        text: None,
                        generated: false,
                    },
                },
            );
        }
        entries.insert(
            path_key(Path::new("/project/src/skipped.ts")),
            Entry {
                stat: Some(Stat { size: 9, modified: 5 }),
                racy: false,
                hash: 77,
                verdict: Verdict::Skipped {
                    prefilter: 3,
                    generated: false,
                    ruled_out: None,
                },
            },
        );
        entries
    }

    /// Each decoded entry must be one of the originals, byte for byte.
    fn assert_only_originals(decoded: &HashMap<u64, Entry>, originals: &HashMap<u64, Entry>, what: &str) {
        for (path, entry) in decoded {
            let original = originals
                .get(path)
                .unwrap_or_else(|| panic!("{what}: an entry for {path:?}, which was not cached"));
            assert_eq!(
                postcard::to_allocvec(entry).unwrap(),
                postcard::to_allocvec(original).unwrap(),
                "{what}: {path:?} read back changed"
            );
        }
    }

    #[test]
    fn a_damaged_entry_is_dropped_and_the_others_kept() {
        let entries = sample_entries();
        let bytes = encode(&entries).unwrap();
        let (decoded, damaged) = decode(&bytes);
        assert!(!damaged);
        assert_eq!(decoded.len(), entries.len());
        assert_only_originals(&decoded, &entries, "intact");
        // Every byte flipped, in every bit, and the file cut at every length.
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[at] ^= 1 << bit;
                let (decoded, damaged) = decode(&flipped);
                assert!(damaged, "a flip of bit {bit} at {at} goes unnoticed");
                assert_only_originals(&decoded, &entries, &format!("bit {bit} at {at}"));
            }
        }
        // Cut between two frames, the file reads as a cache of fewer files.
        for len in 0..bytes.len() {
            let (decoded, _) = decode(&bytes[..len]);
            assert!(decoded.len() < entries.len(), "cut at {len}");
            assert_only_originals(&decoded, &entries, &format!("cut at {len}"));
        }
        // A flip in one entry's frame loses that entry alone.
        let first_body = MAGIC.len() + 12;
        let mut flipped = bytes.clone();
        flipped[first_body] ^= 0x10;
        assert_eq!(decode(&flipped).0.len(), entries.len() - 1);
    }

    #[test]
    fn an_entry_modified_close_to_its_reading_is_not_trusted_by_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FactsCache::open(dir.path(), None);
        let skipped = Verdict::Skipped {
            prefilter: 1,
            generated: false,
            ruled_out: None,
        };
        let now = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let (fresh, old) = (dir.path().join("fresh.ts"), dir.path().join("old.ts"));
        let (recent, long_ago) = (
            Stat { size: 3, modified: now },
            Stat {
                size: 3,
                modified: now - 60_000_000_000,
            },
        );
        cache.store(&fresh, Some(recent), 9, skipped.clone());
        cache.store(&old, Some(long_ago), 9, skipped);
        assert!(cache.by_stat(&fresh, recent).is_none(), "racy: read again");
        assert!(
            matches!(
                cache.skipped_by_hash(&fresh, 9),
                Some(Verdict::Skipped { prefilter: 1, .. })
            ),
            "and answered by its hash"
        );
        assert!(cache.skipped_by_hash(&fresh, 8).is_none());
        assert!(cache.by_stat(&old, long_ago).is_some());
    }
}
