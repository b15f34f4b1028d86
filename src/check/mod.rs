//! The pipeline after discovery: load + extract (parallel; the prefilter decides what is
//! parsed) → index → the demand stage (analyse; load what resolution missed; again, until
//! nothing is missed) → rules (parallel, read-only) → suppressions, baseline, changed lines →
//! sorted. Only the front door ([`crate::workspace`]) runs it: it finds the project, discovers
//! its files and owns what is kept between runs (the facts cache, the project files).

mod again;
mod load;
mod progress;
mod suppress;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

pub use again::{run_again, Carry};
pub use load::{Filter, Loader};
pub use progress::{Progress, Stage};

use crate::analysis::Analysis;
use crate::config::{Config, Configs};
use crate::diagnostic::{Diagnostic, Severity};
use crate::extract::{Prefilter, Trigger};
use crate::index::{FileId, Index};
use crate::rules::{self, Context, Rule};
use crate::source::Note;

pub struct CheckOptions {
    pub paths: Vec<PathBuf>,
    /// Parse only files whose bytes can hold a fact (on by default; off to verify it).
    pub prefilter: bool,
    /// Run only these rules (`--select`).
    pub select: Option<Vec<&'static Rule>>,
    /// Never run these rules (`--ignore`).
    pub ignore: Vec<&'static Rule>,
    /// Report only findings on these lines (`--changed-since`); the whole project is analysed.
    pub changed: Option<crate::changed::ChangedLines>,
    /// Report only findings not recorded in this baseline (`--baseline`).
    pub baseline: Option<crate::baseline::Baseline>,
    /// Texts that replace the files on disk (canonical path → text): editor buffers, fixes
    /// in progress.
    pub overlay: HashMap<PathBuf, Arc<[u8]>>,
    /// Report only the findings in (or naming) these canonical files and directories; the
    /// rest of `paths` is analysed as their context (`check FILE` in a larger project).
    pub only: Option<Vec<PathBuf>>,
    /// Counted as the check goes, for a progress line.
    pub progress: Option<Arc<Progress>>,
    /// Keep what an incremental check of the same files starts from ([`Outcome::carry`]): the
    /// language server's. A copy of the first load's table and of every file's findings.
    pub keep: bool,
}

/// What a workspace keeps between runs, handed to the pipeline.
#[derive(Default)]
pub struct Kept<'a> {
    /// Facts kept from earlier runs (`cache`): on disk for the CLI, in memory for the editor.
    pub cache: Option<&'a crate::cache::FactsCache>,
    /// What was read beside the sources (`package.json`, `tsconfig.json`, `wrangler`), kept
    /// between runs by the language server until one of those files changes.
    pub project: Option<Arc<crate::index::ProjectFiles>>,
    /// `cache` hears of every change on disk (see [`Loader::trust_cache`]).
    pub trust_cache: bool,
}

impl CheckOptions {
    pub fn new(paths: Vec<PathBuf>) -> CheckOptions {
        CheckOptions {
            paths,
            prefilter: true,
            select: None,
            ignore: Vec::new(),
            changed: None,
            baseline: None,
            overlay: HashMap::new(),
            only: None,
            progress: None,
            keep: false,
        }
    }
}

pub struct Outcome {
    pub index: Index,
    /// Files whose rules ran in this check (every file checked, but in an incremental one).
    pub rechecked: usize,
    /// What the next check can start from, when `CheckOptions::keep` asked for it.
    pub carry: Option<Box<again::Carry>>,
    pub analysis: Analysis,
    pub diagnostics: Vec<Diagnostic>,
    pub notes: Vec<Note>,
    /// Files discovered (parsed or ruled out by the prefilter).
    pub files: usize,
    /// Files parsed (or whose facts came from the cache).
    pub parsed: usize,
    /// Files whose prefilter verdict or facts came from the facts cache.
    pub cached: usize,
    /// Baseline entries that matched no finding.
    pub stale: Vec<crate::baseline::Entry>,
    pub elapsed: Duration,
}

impl Outcome {
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == severity).count()
    }
}

/// The rules that run in any config of the run (selected, not ignored, not turned off
/// everywhere), with the root config's severity; each file's own is applied in `check_file`.
pub fn enabled_rules(configs: &Configs, options: &CheckOptions) -> Vec<(&'static Rule, Severity)> {
    rules::RULES
        .iter()
        .copied()
        .filter(|rule| {
            options
                .select
                .as_ref()
                .is_none_or(|s| s.iter().any(|r| r.name == rule.name))
        })
        .filter(|rule| !options.ignore.iter().any(|r| r.name == rule.name))
        .filter(|rule| {
            configs
                .all()
                .any(|config| config.severity(rule.name, rule.default_severity) != Severity::Off)
        })
        .map(|rule| (rule, configs.root.severity(rule.name, rule.default_severity)))
        .collect()
}

/// The prefilter for these rules and this config; `None` when every file is parsed.
pub fn prefilter_for(config: &Config, enabled: &[(&Rule, Severity)], on: bool) -> Option<Prefilter> {
    if !on {
        return None;
    }
    let mut triggers: Vec<Trigger> = enabled
        .iter()
        .flat_map(|(rule, _)| rule.triggers.iter().copied())
        .collect();
    triggers.sort_by_key(|t| *t as u8);
    triggers.dedup();
    Some(Prefilter::new(&triggers, config))
}

/// Loads the index: every discovered file the prefilter keeps, then — the demand stage —
/// every file that resolution asked for, until nothing is missed. Returns the complete
/// index with its analysis.
pub fn load_index(
    configs: impl Into<Configs>,
    files: Vec<crate::source::SourceFile>,
    loader: &Loader,
) -> (Index, Analysis) {
    load_into(Index::new(configs, files), loader, None)
}

/// Reads the files the prefilter kept only through their aliases (`X.retry` with `X` imported
/// from a project module: [`crate::extract::Relevance::ThroughAliases`]) whose modules the
/// index finds re-export Effect; the others stay ruled out, as nothing in them can be
/// Effect's. The modules asked about are read as the demand stage reads them, a round for
/// each level of re-exports.
fn load_through_aliases(index: &mut Index, loader: &Loader) {
    loop {
        let pending: Vec<FileId> = (0..index.len())
            .filter(|&file| through_aliases(index, file).is_some())
            .collect();
        if pending.is_empty() {
            return;
        }
        let aliased: Vec<FileId> = pending
            .par_iter()
            .copied()
            .filter(|&file| {
                let sources = through_aliases(index, file).unwrap_or_default();
                index.reexports_effect(file, &sources)
            })
            .collect();
        let misses = index.take_misses();
        // Each round reads files not read before, so the rounds end.
        let (read, filter) = match misses.is_empty() {
            true => (aliased, Filter::Aliased),
            false => (misses, Filter::Off),
        };
        let loaded: Vec<_> = read
            .par_iter()
            .map(|&file| (file, loader.load(&index.files[file], filter, false)))
            .collect();
        for (file, loaded) in loaded {
            index.set(file, loaded);
        }
        if filter == Filter::Aliased {
            // Ruled out for good: not asked again.
            for file in pending {
                index.forget_aliases(file);
            }
            return;
        }
    }
}

fn through_aliases(index: &Index, file: FileId) -> Option<std::sync::Arc<[String]>> {
    index.loaded_entry(file).ruled_out.as_ref()?.through_aliases.clone()
}

/// [`load_index`] into an index made by the caller, counting the files read in `progress`.
fn load_into(mut index: Index, loader: &Loader, progress: Option<&Progress>) -> (Index, Analysis) {
    load_first(&mut index, loader, progress);
    settle(index, loader, progress)
}

/// How the first load reads `file`: a retry module in full, whatever the prefilter says (its
/// text kept), any other file as the prefilter says.
fn first_load(index: &Index, loader: &Loader, file: FileId) -> crate::index::Loaded {
    let retry_module = index.is_retry_module(file);
    let filter = if retry_module { Filter::Off } else { Filter::On };
    loader.load(&index.files[file], filter, retry_module)
}

/// The first load: every file, as the prefilter says.
fn load_first(index: &mut Index, loader: &Loader, progress: Option<&Progress>) {
    let retry_modules: Vec<bool> = (0..index.len()).map(|f| index.is_retry_module(f)).collect();
    if let Some(progress) = progress {
        progress.start_reading(index.len());
    }
    index.load_each(|file, source| {
        let filter = if retry_modules[file] { Filter::Off } else { Filter::On };
        let loaded = loader.load(source, filter, retry_modules[file]);
        if let Some(progress) = progress {
            progress.file_read();
        }
        loaded
    });
}

/// After the first load, the demand stage: the files kept through their aliases, then rounds
/// of analysis and of loading what it missed, until nothing is missed.
fn settle(mut index: Index, loader: &Loader, progress: Option<&Progress>) -> (Index, Analysis) {
    load_through_aliases(&mut index, loader);
    if let Some(progress) = progress {
        progress.set_stage(Stage::Analysing);
    }
    // Rounds of reading files again with the Effect aliases the index found: a prelude that
    // re-exports another prelude takes one more. A bound, so a pathological chain ends.
    let mut alias_rounds = 0;
    let mut inferred = false;
    loop {
        // Calls of the project's Rust retry helpers are retry sites (issue 25.3).
        index.expand_rust_helpers();
        let analysis = Analysis::new(&index);
        analysis.force(&index);
        let mut misses = index.take_misses();
        if misses.is_empty() && alias_rounds < 4 {
            // Files that import Effect through a project module (`@app/prelude` re-exports
            // `effect`) are read again as the Effect code they are.
            // In parallel: following every file's imports through barrels was the largest
            // share of a language server's check after an edit.
            let stale: Vec<(FileId, Vec<crate::facts::EffectAlias>)> = (0..index.len())
                .into_par_iter()
                .filter(|&file| index.loaded(file).is_some_and(|f| f.parsed))
                .filter_map(|file| {
                    let aliases = index.effect_aliases(file);
                    (aliases != index.loaded(file)?.effect_aliases()).then_some((file, aliases))
                })
                .collect();
            misses = index.take_misses();
            if misses.is_empty() && !stale.is_empty() {
                alias_rounds += 1;
                let reloaded: Vec<_> = stale
                    .par_iter()
                    .map(|(file, aliases)| {
                        let previous = index.loaded_entry(*file);
                        (
                            *file,
                            loader.reload_with_aliases(&index.files[*file], previous, aliases),
                        )
                    })
                    .collect();
                for (file, loaded) in reloaded {
                    index.set(file, loaded);
                }
                continue;
            }
        }
        if misses.is_empty() && !inferred {
            // Packages the config names no retry module for get the one their code uses,
            // and everything is analysed again with it.
            let modules = index.infer_retry_modules();
            misses = index.take_misses();
            if misses.is_empty() {
                inferred = true;
                if !modules.is_empty() {
                    index.set_inferred_retry_modules(modules);
                    continue;
                }
            }
        }
        if misses.is_empty() {
            return (index, analysis);
        }
        let loaded: Vec<_> = misses
            .par_iter()
            .map(|&file| (file, loader.load(&index.files[file], Filter::Off, false)))
            .collect();
        for (file, loaded) in loaded {
            // A file the demand stage loads is read in full: a miss is never missed again,
            // so the rounds end.
            debug_assert!(!loaded.facts.as_ref().is_some_and(|f| f.units_deferred));
            index.set(file, loaded);
        }
    }
}

/// Loads the index of `files` as `check` builds it, for what `triggers` look for (`None`:
/// every file is parsed): what `retrylint policies`, `init` and `resolve-imports` read.
pub fn load_for(
    configs: Configs,
    files: Vec<crate::source::SourceFile>,
    triggers: Option<&[Trigger]>,
) -> (Index, Analysis) {
    let overlay = HashMap::new();
    let prefilter = triggers.map(|triggers| Prefilter::new(triggers, &prefilter_config(&configs)));
    let root = configs.root.root.clone();
    let skip_generated = |path: &std::path::Path| !configs.for_path(path).check_generated;
    let loader = Loader {
        prefilter_key: prefilter.as_ref().map_or(0, Prefilter::key),
        prefilter,
        overlay: &overlay,
        cache: None,
        root: &root,
        skip_generated: &skip_generated,
        trust_cache: false,
        max_file_size: max_file_size(&configs),
        keep_facts: None,
    };
    load_index(configs.clone(), files, &loader)
}

/// The largest `max-file-size` of the run's configs: what a source file is read to at most.
fn max_file_size(configs: &Configs) -> u64 {
    configs
        .all()
        .map(|c| c.max_file_size)
        .max()
        .unwrap_or(crate::config::DEFAULT_MAX_FILE_SIZE)
}

/// The config the prefilter is built from: the root's, with the lease tables and columns of
/// every package config (a package's own lease table must not be filtered out).
fn prefilter_config(configs: &Configs) -> Config {
    let mut config = configs.root.clone();
    for other in configs.all().skip(1) {
        config.lease_tables.extend(other.lease_tables.iter().cloned());
        config.lease_columns.extend(other.lease_columns.iter().cloned());
    }
    config.lease_tables.sort();
    config.lease_tables.dedup();
    config.lease_columns.sort();
    config.lease_columns.dedup();
    config
}

/// Where the notes that sum up skipped files stand: the one path reported on, else the
/// project root (as the user sees it).
pub(crate) fn scope_path(root: &std::path::Path, only: Option<&[PathBuf]>) -> PathBuf {
    let at = match only {
        Some([one]) => one.as_path(),
        _ => root,
    };
    std::env::current_dir().map_or_else(|_| at.to_path_buf(), |cwd| crate::source::display_path(&cwd, at))
}

/// Whether a path (as shown, or absolute) is among those reported on.
pub(crate) fn in_scope(path: &std::path::Path, only: Option<&[PathBuf]>) -> bool {
    only.is_none_or(|only| std::fs::canonicalize(path).is_ok_and(|p| only.iter().any(|o| p.starts_with(o))))
}

/// Keeps the findings and notes of the files in `only` (files, or directories holding them):
/// the rest was analysed as their context. Baseline entries of files outside are not stale.
pub fn keep_within(outcome: &mut Outcome, only: &[PathBuf]) {
    let index = &outcome.index;
    let inside = |absolute: &std::path::Path| only.iter().any(|p| absolute.starts_with(p));
    let kept: std::collections::HashSet<usize> = (0..index.len())
        .filter(|&id| inside(&index.files[id].absolute))
        .collect();
    // A finding whose primary location is elsewhere still belongs to these files when it
    // points into them: a policy defined in one file is reported once, where it is built,
    // with its uses as labels; the file that starts using it must see that finding.
    outcome
        .diagnostics
        .retain(|d| kept.contains(&d.file) || d.labels.iter().any(|l| kept.contains(&l.file)));
    // The summaries of skipped files stand at the scope (counted within it already).
    let scope = scope_path(&index.config.root, Some(only));
    outcome
        .notes
        .retain(|n| n.path == scope || crate::files::as_given(&n.path).is_ok_and(|p| inside(&p)));
    let root = &index.config.root;
    outcome.stale.retain(|entry| inside(&root.join(&entry.path)));
    outcome.parsed = kept
        .iter()
        .filter(|&&file| {
            index.loaded(file).is_some_and(|facts| facts.parsed)
                && !index.is_test_code(file)
                && !index.config_of(file).is_test(&index.files[file].absolute)
        })
        .count();
    outcome.files = kept.len();
}

/// Checks these files (texts from `options.overlay` where given, else from disk).
pub fn run_files(
    configs: impl Into<Configs>,
    files: Vec<crate::source::SourceFile>,
    options: &CheckOptions,
    kept: &Kept,
) -> Outcome {
    let started = Instant::now();
    let configs: Configs = configs.into();
    let enabled = enabled_rules(&configs, options);
    let root = configs.root.root.clone();
    // Each file's config says whether its generated files are checked.
    let skip_generated = |path: &std::path::Path| !configs.for_path(path).check_generated;
    let loader = make_loader(&configs, &enabled, options, kept, &root, &skip_generated);
    let mut index = Index::new(configs.clone(), files);
    if let Some(project) = &kept.project {
        index.share_project_files(project.clone());
    }
    let progress = options.progress.as_deref();
    load_first(&mut index, &loader, progress);
    let base = options.keep.then(|| index.loaded_table());
    let (index, analysis) = settle(index, &loader, progress);
    if let Some(progress) = progress {
        progress.set_stage(Stage::Checking);
    }
    let carry = base.map(|base| again::Carry::new(base, &index, &enabled, loader.prefilter_key));
    finish(index, analysis, &enabled, options, started, None, carry)
}

/// The loader of a run: the prefilter of its rules, the overlay and what is kept.
fn make_loader<'a>(
    configs: &Configs,
    enabled: &[(&Rule, Severity)],
    options: &'a CheckOptions,
    kept: &Kept<'a>,
    root: &'a std::path::Path,
    skip_generated: &'a (dyn Fn(&std::path::Path) -> bool + Sync),
) -> Loader<'a> {
    let prefilter = prefilter_for(&prefilter_config(configs), enabled, options.prefilter);
    // Every file parsed: the files that hold nothing are kept as the prefilter keeps them.
    let keep_facts = prefilter_for(&prefilter_config(configs), enabled, !options.prefilter);
    Loader {
        // A verdict of a run that parsed every file differs from the prefilter's own.
        prefilter_key: prefilter
            .as_ref()
            .map(Prefilter::key)
            .or_else(|| keep_facts.as_ref().map(|p| p.key().rotate_left(17) ^ 0x5bd1_e995))
            .unwrap_or(0),
        prefilter,
        keep_facts,
        overlay: &options.overlay,
        cache: kept.cache,
        root,
        skip_generated,
        trust_cache: kept.trust_cache && kept.cache.is_some(),
        max_file_size: max_file_size(configs),
    }
}

/// The rule stage and what follows it, on a settled index. With `previous` (an incremental
/// check), the rules run only on the files it marks affected; every other file's findings
/// are what its rules found last time.
fn finish(
    index: Index,
    analysis: Analysis,
    enabled: &[(&'static Rule, Severity)],
    options: &CheckOptions,
    started: Instant,
    previous: Option<again::Previous>,
    mut carry: Option<again::Carry>,
) -> Outcome {
    // Test code is not held to the production policy. Discovery leaves out what the `tests`
    // globs match (an open editor buffer of such a file is left out here); a file that imports
    // a test framework is test code wherever it lives (`integration/base.ts` of a Playwright
    // suite), unless `tests = []` asks for test code to be checked.
    // In parallel: matching every path against the globs was a visible share of the work
    // left on one thread when every file is parsed.
    let parsed: Vec<FileId> = index.parsed_files().collect();
    let (tests, checked): (Vec<FileId>, Vec<FileId>) = parsed
        .into_par_iter()
        .filter(|&file| !index.config_of(file).is_test(&index.files[file].absolute))
        .partition(|&file| index.is_test_code(file));
    let results: Vec<(FileId, bool, again::Found)> = checked
        .par_iter()
        .map(|&file| match previous.as_ref().and_then(|p| p.reuse(file)) {
            Some(found) => (file, false, found.clone()),
            None => (file, true, check_file(&index, &analysis, file, enabled)),
        })
        .collect();
    let rechecked = results.iter().filter(|(_, fresh, _)| *fresh).count();
    let mut notes = Vec::new();
    let mut diagnostics = Vec::new();
    for (file, _, (found, file_notes)) in results {
        if let Some(carry) = carry.as_mut() {
            carry.produced.insert(file, (found.clone(), file_notes.clone()));
        }
        diagnostics.extend(found);
        notes.extend(file_notes);
    }
    // Code that is not production (examples, scripts, vendored copies) is checked at low
    // severity: its findings are warnings.
    let mut not_production: HashMap<FileId, bool> = HashMap::new();
    for diagnostic in diagnostics.iter_mut().filter(|d| d.severity == Severity::Error) {
        let file = diagnostic.file;
        let low = *not_production
            .entry(file)
            .or_insert_with(|| index.config_of(file).is_not_production(&index.files[file].absolute));
        if low {
            diagnostic.severity = Severity::Warning;
        }
    }
    notes.extend(index.notes());
    // Generated files are skipped quietly, but never silently: one note says how many (of
    // those reported on).
    let only = options.only.as_deref();
    let scope = scope_path(&index.config.root, only);
    let generated: Vec<FileId> = index
        .generated_files()
        .filter(|&file| in_scope(&index.files[file].absolute, only))
        .collect();
    if let Some(&first) = generated.first() {
        notes.push(Note {
            path: scope.clone(),
            line: None,
            message: format!(
                "skipped {} generated file{} (marked as generated, under a generated/ directory, or compiled JavaScript), such as {}; set generated = \"check\" to check them",
                generated.len(),
                if generated.len() == 1 { "" } else { "s" },
                index.path(first).display()
            ),
        });
    }
    let tests: Vec<FileId> = tests
        .into_iter()
        .filter(|&file| in_scope(&index.files[file].absolute, only))
        .collect();
    if let Some(&first) = tests.first() {
        notes.push(Note {
            path: scope,
            line: None,
            message: format!(
                "skipped {} file{} that import{} a test framework, such as {}; set tests = [] to check test code",
                tests.len(),
                if tests.len() == 1 { "" } else { "s" },
                if tests.len() == 1 { "s" } else { "" },
                index.path(first).display()
            ),
        });
    }
    sort(&index, &mut diagnostics);
    diagnostics.dedup_by(|a, b| a.file == b.file && a.span == b.span && a.rule == b.rule && a.message == b.message);
    let mut diagnostics = suppress::apply(&index, diagnostics, enabled);
    sort(&index, &mut diagnostics);
    let stale = match &options.baseline {
        Some(baseline) => crate::baseline::filter(baseline, &index, &mut diagnostics),
        None => Vec::new(),
    };
    if let Some(changed) = &options.changed {
        // A finding is the change's when the change touches it, or a location it names: a
        // new site that uses an old, defective policy brings that policy's finding along.
        let touches = |file: FileId, span: crate::source::Span| {
            crate::changed::touches_finding(changed, &index, &analysis, file, span)
        };
        diagnostics.retain(|d| touches(d.file, d.span) || d.labels.iter().any(|l| touches(l.file, l.span)));
    }
    sort_notes(&mut notes);

    Outcome {
        files: index.len(),
        parsed: checked.len(),
        rechecked,
        carry: carry.map(Box::new),
        cached: index.cached_files(),
        index,
        analysis,
        diagnostics,
        notes,
        stale,
        elapsed: started.elapsed(),
    }
}

pub(crate) fn sort_notes(notes: &mut Vec<Note>) {
    notes.sort_by(|a, b| (&a.path, a.line, &a.message).cmp(&(&b.path, b.line, &b.message)));
    notes.dedup_by(|a, b| a.path == b.path && a.line == b.line && a.message == b.message);
}

/// Output order: path, position, rule.
fn sort(index: &Index, diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        let pa = &index.files[a.file].path;
        let pb = &index.files[b.file].path;
        (pa, a.span.start, a.rule, a.span.end).cmp(&(pb, b.span.start, b.rule, b.span.end))
    });
}

/// Runs every enabled rule on one file. A panic in a rule becomes a note naming the file and
/// the rule; the other rules' findings on the file are kept.
fn check_file(
    index: &Index,
    analysis: &Analysis,
    file: FileId,
    enabled: &[(&Rule, Severity)],
) -> (Vec<Diagnostic>, Vec<Note>) {
    let Some(facts) = index.loaded(file) else {
        return (Vec::new(), Vec::new());
    };
    let ctx = Context {
        index,
        analysis,
        file,
        facts,
    };
    let mut diagnostics = Vec::new();
    let mut notes = Vec::new();
    let config = index.config_of(file);
    crate::crash::within(index.path(file), "-", || {
        for (rule, _) in enabled {
            // The file's own config decides (a package may turn a rule off, or on).
            let severity = config.severity(rule.name, rule.default_severity);
            if severity == Severity::Off {
                continue;
            }
            let mut found = Vec::new();
            crate::crash::set_rule(rule.name);
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                crate::crash::test_hook(rule.name);
                (rule.check)(&ctx, &mut found)
            }));
            match outcome {
                Ok(()) => diagnostics.extend(found.into_iter().map(|mut d| {
                    d.severity = severity;
                    // Remedies in the file's project's own policy and predicate names.
                    d.help = d
                        .help
                        .map(|help| crate::analysis::names::spell(&help, analysis.names(index, file)));
                    d
                })),
                Err(_) => notes.push(Note {
                    path: index.path(file).to_path_buf(),
                    line: None,
                    message: format!(
                        "rule {} failed on this file (internal error); please report it",
                        rule.name
                    ),
                }),
            }
        }
    });
    (diagnostics, notes)
}
