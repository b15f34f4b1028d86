//! Reading one file for the index: the overlay's text (an editor buffer, a fix in progress)
//! or the disk's, the prefilter's verdict, and extraction — each skipped when the facts cache
//! already knows the answer. The text of a parsed file is kept with its facts; the text of a
//! file the prefilter rules out is dropped at once.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::cache::{content_hash, shared, FactsCache, RuledOut, Stat, Verdict};
use crate::extract::{self, Prefilter};
use crate::index::Loaded;
use crate::source::{Note, SourceFile};

pub struct Loader<'o> {
    /// `None`: every file is parsed.
    pub prefilter: Option<Prefilter>,
    /// Identifies the prefilter in the cache: a verdict of another prefilter is not reused
    /// (whether the file's generated code is skipped is mixed in per file).
    pub prefilter_key: u64,
    pub overlay: &'o HashMap<PathBuf, Arc<[u8]>>,
    pub cache: Option<&'o FactsCache>,
    /// Where paths are relative to (the config's root), for telling generated files.
    pub root: &'o std::path::Path,
    /// Whether a file's generated code is skipped (its config's `generated`), as the
    /// prefilter skips files without a trigger.
    pub skip_generated: &'o (dyn Fn(&std::path::Path) -> bool + Sync),
    /// The cache hears of every change on disk (the language server's file watcher, which
    /// forgets changed files): what it knows of a file is used without asking the file
    /// system for its size and time — thousands of `stat`s per check otherwise.
    pub trust_cache: bool,
    /// The most a source file is read to: the largest `max-file-size` of the run's configs
    /// (discovery held each file to its own; a file that grew since is skipped with a note).
    pub max_file_size: u64,
    /// When every file is parsed (`prefilter` is `None`: `check --no-prefilter`), the
    /// prefilter of the run's rules: a parsed file that holds nothing a finding can be about
    /// ([`crate::facts::FileFacts::holds_findings`]) and that it rules out is kept as a file
    /// it ruled out — its facts dropped, read again if resolution asks for it —, as a check
    /// with the prefilter keeps it. Memory stays that of a check with the prefilter, and the
    /// files the prefilter would miss (those with findings) are still found. `None`: every
    /// parsed file's facts are kept (`policies`, `init`, the recall measurement).
    pub keep_facts: Option<Prefilter>,
}

/// How a load heeds the prefilter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Loaded in full whatever it holds (the demand stage, retry modules).
    Off,
    /// Only if the prefilter keeps it, lazily.
    On,
    /// As `On`, and also if it keeps it only through its aliases
    /// ([`crate::extract::Relevance::ThroughAliases`]): the index found that one holds.
    Aliased,
}

impl Loader<'_> {
    /// The cache key of this loader's verdicts for `file`: the prefilter's, and whether the
    /// file's generated code is skipped (that changes the verdicts too).
    fn key(&self, file: &SourceFile) -> u64 {
        self.prefilter_key ^ u64::from((self.skip_generated)(&file.absolute))
    }

    /// Loads `file` as `filter` says: heeding the prefilter (lazily, and not if it is generated
    /// code, unless generated files are checked), or in full whatever it holds. The text of a
    /// file that can hold no finding is dropped (memory stays flat when every file is parsed)
    /// unless `keep_text`.
    pub fn load(&self, file: &SourceFile, filter: Filter, keep_text: bool) -> Loaded {
        let mut loaded = self.load_kept(file, filter);
        let holds_findings = loaded.facts.as_ref().is_some_and(|f| f.holds_findings());
        if !keep_text && !holds_findings && !self.overlay.contains_key(&file.absolute) {
            if let Some(text) = loaded.text.take() {
                // A cached file's hash is known: hashing every kept text on every check was
                // most of the language server's time after an edit.
                loaded.hash = Some(loaded.hash.unwrap_or_else(|| crate::source::fnv1a64(&text)));
            }
        }
        loaded
    }

    /// Extracts `file` again with `aliases` (imports of project modules that re-export
    /// Effect, which the index found), replacing what the cache holds for it.
    pub fn reload_with_aliases(
        &self,
        file: &SourceFile,
        previous: &Loaded,
        aliases: &[crate::facts::EffectAlias],
    ) -> Loaded {
        let text: Option<Arc<[u8]>> = match (self.overlay.get(&file.absolute), &previous.text) {
            (Some(text), _) | (None, Some(text)) => Some(text.clone()),
            (None, None) => crate::files::read_file(&file.absolute, self.max_file_size, false)
                .ok()
                .map(Into::into),
        };
        let Some(text) = text else {
            return previous.clone();
        };
        let stat = std::fs::metadata(&file.absolute).ok().and_then(|m| Stat::of(&m));
        // Read as deep as before: a file read lazily is read in full when a call is followed
        // into it, by the demand stage.
        let depth = if previous.facts.as_ref().is_some_and(|f| f.units_deferred) {
            extract::Depth::Lazy
        } else {
            extract::Depth::Full
        };
        let facts = Arc::new(crate::crash::within(&file.path, "extract", || {
            extract::extract_file_with(file.language, &text, aliases, depth)
        }));
        if let Some(cache) = self.cache {
            let hash = content_hash(&text);
            let verdict = Verdict::Extracted {
                facts: facts.clone(),
                text: Some(text.clone()),
                generated: previous.generated,
            };
            cache.store(
                &file.absolute,
                stat.filter(|_| !self.overlay.contains_key(&file.absolute)),
                hash,
                verdict,
            );
        }
        let holds_findings = facts.holds_findings();
        Loaded {
            facts: Some(facts),
            text: (holds_findings || previous.text.is_some()).then(|| text.clone()),
            hash: (!holds_findings && previous.text.is_none()).then(|| crate::source::fnv1a64(&text)),
            notes: previous.notes.clone(),
            ..Loaded::default()
        }
    }

    /// What the cache's verdict on an unchanged file answers, if it answers this load.
    fn answer_from_cache(&self, file: &SourceFile, verdict: Verdict, hash: u64, filter: Filter) -> Option<Loaded> {
        let filtered = filter != Filter::Off;
        match verdict {
            Verdict::Skipped {
                prefilter,
                generated,
                ruled_out,
            } if filtered
                && prefilter == self.key(file)
                && (filter == Filter::On || ruled_out.as_ref().is_none_or(|r| r.through_aliases.is_none())) =>
            {
                Some(Loaded {
                    prefiltered: true,
                    ruled_out,
                    cached: true,
                    generated,
                    ..Loaded::default()
                })
            }
            Verdict::Extracted { generated: true, .. } if filtered && (self.skip_generated)(&file.absolute) => {
                Some(Loaded {
                    prefiltered: true,
                    cached: true,
                    generated: true,
                    ..Loaded::default()
                })
            }
            // Facts read lazily answer only a lazy load.
            Verdict::Extracted {
                facts,
                text: Some(text),
                ..
            } if filtered || !facts.units_deferred => Some(Loaded {
                facts: Some(facts),
                text: Some(text),
                hash: Some(hash),
                cached: true,
                ..Loaded::default()
            }),
            _ => None,
        }
    }

    fn load_kept(&self, file: &SourceFile, filter: Filter) -> Loaded {
        if let Some(text) = self.overlay.get(&file.absolute) {
            return self.load_text(file, text.clone(), None, filter);
        }
        if let (Some(cache), true) = (self.cache, self.trust_cache) {
            let cached = cache.on_disk(&file.absolute);
            if let Some(loaded) = cached.and_then(|(verdict, hash)| self.answer_from_cache(file, verdict, hash, filter))
            {
                return loaded;
            }
        }
        let stat = std::fs::metadata(&file.absolute).ok().and_then(|m| Stat::of(&m));
        if let (Some(cache), Some(stat)) = (self.cache, stat) {
            let cached = cache.by_stat(&file.absolute, stat);
            if let Some(loaded) = cached.and_then(|(verdict, hash)| self.answer_from_cache(file, verdict, hash, filter))
            {
                return loaded;
            }
        }
        match crate::files::read_file(&file.absolute, self.max_file_size, false) {
            Ok(bytes) => self.load_text(file, bytes.into(), stat, filter),
            Err(e) => Loaded {
                notes: vec![Note {
                    path: file.path.clone(),
                    line: None,
                    message: match e {
                        crate::files::ReadError::TooLarge { limit } => {
                            format!("skipped: over the size limit of {limit} bytes (max-file-size)")
                        }
                        crate::files::ReadError::NotRegular(what) => format!("skipped: not a regular file ({what})"),
                        other => format!("skipped: cannot read: {other}"),
                    },
                }],
                ..Loaded::default()
            },
        }
    }

    fn load_text(&self, file: &SourceFile, text: Arc<[u8]>, stat: Option<Stat>, filter: Filter) -> Loaded {
        let filtered = filter != Filter::Off;
        let relative = file.absolute.strip_prefix(self.root).unwrap_or(&file.absolute);
        // `a.js` beside `a.ts` is the compiler's output of it, whatever it looks like.
        let compiled = || {
            file.language == crate::source::Language::JavaScript
                && ["ts", "tsx", "mts", "cts"]
                    .iter()
                    .any(|ext| file.absolute.with_extension(ext).is_file())
        };
        let generated = extract::is_generated(relative, &text) || compiled();
        let skip_generated = filtered && generated && (self.skip_generated)(&file.absolute);
        let hash = self.cache.map(|_| content_hash(&text));
        if let (Some(cache), Some(hash)) = (self.cache, hash) {
            let answers = |facts: &Arc<crate::facts::FileFacts>| filtered || !facts.units_deferred;
            if let Some((facts, _)) = cache
                .by_hash(&file.absolute, hash)
                .filter(|(facts, _)| !skip_generated && answers(facts))
            {
                if stat.is_some() || cache.keeps_texts() {
                    let verdict = Verdict::Extracted {
                        facts: facts.clone(),
                        text: Some(text.clone()),
                        generated,
                    };
                    cache.store(&file.absolute, stat, hash, verdict);
                }
                return Loaded {
                    facts: Some(facts),
                    text: Some(text),
                    hash: Some(hash),
                    cached: true,
                    ..Loaded::default()
                };
            }
        }
        // The same text was ruled out by the same prefilter (a racy or touched file): the verdict
        // is its. Else the prefilter's: `None` when it keeps the file; else the modules that
        // would keep it if one re-exported Effect, and those it can re-export from.
        let cached_verdict = filtered
            .then(|| self.cache.zip(hash))
            .flatten()
            .and_then(|(cache, hash)| cache.skipped_by_hash(&file.absolute, hash))
            .filter(|verdict| matches!(verdict, Verdict::Skipped { prefilter, .. } if *prefilter == self.key(file)));
        let from_cache = cached_verdict.is_some();
        let sifted = || -> (extract::Relevance, Option<Arc<[String]>>) {
            match &cached_verdict {
                Some(Verdict::Skipped { ruled_out, .. }) => (
                    ruled_out
                        .as_ref()
                        .and_then(|r| r.through_aliases.as_ref())
                        .map_or(extract::Relevance::Irrelevant, |sources| {
                            extract::Relevance::ThroughAliases(sources.to_vec())
                        }),
                    ruled_out.as_ref().and_then(|r| r.reexports.clone()),
                ),
                _ => match self.prefilter.as_ref() {
                    Some(prefilter) => {
                        let (relevance, reexports) = prefilter.relevance(file.language, &text);
                        (relevance, reexports.map(shared))
                    }
                    None => (extract::Relevance::Kept, None),
                },
            }
        };
        let ruled = match filtered {
            false => None,
            true if skip_generated => Some((None, None)),
            true => match sifted() {
                (extract::Relevance::Kept, _) => None,
                (extract::Relevance::ThroughAliases(_), _) if filter == Filter::Aliased => None,
                (extract::Relevance::ThroughAliases(sources), reexports) => Some((Some(sources.into()), reexports)),
                (extract::Relevance::Irrelevant, reexports) => Some((None, reexports)),
            },
        };
        if let Some((through_aliases, reexports)) = ruled {
            let ruled_out = Some(RuledOut::new(reexports, through_aliases));
            if let (Some(cache), Some(hash)) = (self.cache, hash) {
                let verdict = Verdict::Skipped {
                    prefilter: self.key(file),
                    generated: skip_generated,
                    ruled_out: ruled_out.clone(),
                };
                cache.store(&file.absolute, stat, hash, verdict);
            }
            return Loaded {
                prefiltered: true,
                ruled_out,
                generated: skip_generated,
                cached: from_cache,
                ..Loaded::default()
            };
        }
        let depth = if filtered {
            extract::Depth::Lazy
        } else {
            extract::Depth::Full
        };
        let facts = Arc::new(crate::crash::within(&file.path, "extract", || {
            compact(extract::extract_file_with(file.language, &text, &[], depth))
        }));
        let emptied = filtered
            && !facts.holds_findings()
            && self
                .keep_facts
                .as_ref()
                .is_some_and(|prefilter| !prefilter.is_relevant(file.language, &text));
        if emptied {
            let ruled_out = Some(RuledOut::new(Some(shared(facts.reexport_sources())), None));
            if let (Some(cache), Some(hash)) = (self.cache, hash) {
                let verdict = Verdict::Skipped {
                    prefilter: self.key(file),
                    generated: false,
                    ruled_out: ruled_out.clone(),
                };
                cache.store(&file.absolute, stat, hash, verdict);
            }
            return Loaded {
                prefiltered: true,
                ruled_out,
                ..Loaded::default()
            };
        }
        if let (Some(cache), Some(hash)) = (self.cache, hash) {
            let verdict = Verdict::Extracted {
                facts: facts.clone(),
                text: Some(text.clone()),
                generated,
            };
            cache.store(&file.absolute, stat, hash, verdict);
        }
        Loaded {
            facts: Some(facts),
            text: Some(text),
            hash,
            ..Loaded::default()
        }
    }
}

/// Facts as the cache gives them back: every vector exactly as long as what it holds. Built by
/// pushing, a fact's vectors keep up to as much again in spare room, and a parsed file's facts
/// live until the run ends: on a 200,000-file monorepo the copy is 40 MiB less at the peak,
/// for about 1% more CPU. The facts a warm run reads from the cache are the same copy, so a
/// cold and a warm run hold the same facts. SQL statements stay as they are: their model
/// nests one level per operator (up to 500), deeper than a worker's stack can encode.
fn compact(mut facts: crate::facts::FileFacts) -> crate::facts::FileFacts {
    let mut sql = std::mem::take(&mut facts.sql);
    let mut compacted = postcard::to_allocvec(&facts)
        .ok()
        .and_then(|bytes| postcard::from_bytes::<crate::facts::FileFacts>(&bytes).ok())
        .unwrap_or(facts);
    sql.shrink_to_fit();
    compacted.sql = sql;
    compacted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Trigger;

    /// With every file parsed, a file that holds nothing and that the prefilter rules out is
    /// kept as one it ruled out (read again on demand); a file that holds something is kept,
    /// whatever the prefilter says of it.
    #[test]
    fn every_file_parsed_keeps_the_facts_of_files_that_hold_something() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = |name: &str, text: &str| {
            let absolute = root.join(name);
            std::fs::write(&absolute, text).unwrap();
            SourceFile {
                path: PathBuf::from(name),
                absolute,
                language: crate::source::Language::TypeScript,
            }
        };
        let plain = file(
            "plain.ts",
            "import { Effect } from \"effect\"\nexport const a = Effect.succeed(1)\n",
        );
        // A clock read alone: the prefilter rules it out (no `Ref` beside it), yet it is a fact.
        let clock = file("clock.ts", "export const startedAt = Date.now()\n");
        let retried = file(
            "retried.ts",
            "import { Effect } from \"effect\"\nexport const b = Effect.retry(Effect.succeed(1), { times: 3 })\n",
        );
        let overlay = HashMap::new();
        let triggers = [
            Trigger::Retries,
            Trigger::Jobs,
            Trigger::Leases,
            Trigger::Polls,
            Trigger::Suppressions,
            Trigger::Rs2,
        ];
        let config = crate::config::Config::defaults(root.clone());
        let prefilter = Prefilter::new(&triggers, &config);
        assert!(!prefilter.is_relevant(clock.language, b"export const startedAt = Date.now()\n"));
        let loader = |keep_facts: Option<Prefilter>| Loader {
            prefilter: None,
            prefilter_key: 1,
            overlay: &overlay,
            cache: None,
            root: &root,
            skip_generated: &|_: &std::path::Path| true,
            trust_cache: false,
            max_file_size: crate::config::DEFAULT_MAX_FILE_SIZE,
            keep_facts,
        };
        let emptying = loader(Some(Prefilter::new(&triggers, &config)));
        let dropped = emptying.load(&plain, Filter::On, false);
        assert!(dropped.facts.is_none() && dropped.prefiltered, "{dropped:?}");
        assert!(emptying.load(&clock, Filter::On, false).facts.is_some_and(|f| f.parsed));
        assert!(emptying
            .load(&retried, Filter::On, false)
            .facts
            .is_some_and(|f| f.parsed));
        // Asked for by resolution (the demand stage), a file is read in full whatever it holds.
        assert!(emptying
            .load(&plain, Filter::Off, false)
            .facts
            .is_some_and(|f| f.parsed));
        // Without the prefilter to keep them as, every parsed file's facts are kept.
        assert!(loader(None)
            .load(&plain, Filter::On, false)
            .facts
            .is_some_and(|f| f.parsed));
    }

    #[test]
    fn a_trusted_cache_answers_without_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("a.ts");
        std::fs::write(&path, "export const a = f.retry(1)\n").unwrap();
        let file = SourceFile {
            path: PathBuf::from("a.ts"),
            absolute: path.clone(),
            language: crate::source::Language::TypeScript,
        };
        let overlay = HashMap::new();
        let cache = FactsCache::in_memory();
        let loader = |trust_cache| Loader {
            prefilter: None,
            prefilter_key: 0,
            overlay: &overlay,
            cache: Some(&cache),
            root: &root,
            skip_generated: &|_: &std::path::Path| true,
            trust_cache,
            max_file_size: crate::config::DEFAULT_MAX_FILE_SIZE,
            keep_facts: None,
        };
        let first = loader(false).load(&file, Filter::On, true);
        assert!(!first.cached);
        // Changed on disk, and no watcher said so: a trusted cache still answers with what it
        // read; an untrusted one sees the new size and reads the file again.
        std::fs::write(&path, "export const a = f.retry(1, 2, 3)\n").unwrap();
        let trusted = loader(true).load(&file, Filter::On, true);
        assert!(trusted.cached);
        assert_eq!(trusted.text.as_deref(), Some(&b"export const a = f.retry(1)\n"[..]));
        let checked = loader(false).load(&file, Filter::On, true);
        assert!(!checked.cached);
        assert_eq!(
            checked.text.as_deref(),
            Some(&b"export const a = f.retry(1, 2, 3)\n"[..])
        );
        // Told of the change, the trusted cache reads it too.
        cache.forget(&path);
        std::fs::write(&path, "export const a = f.retry(4)\n").unwrap();
        let told = loader(true).load(&file, Filter::On, true);
        assert_eq!(told.text.as_deref(), Some(&b"export const a = f.retry(4)\n"[..]));
    }
}
