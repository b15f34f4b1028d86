//! The pipeline: discover → load + extract (parallel; the prefilter decides what is parsed)
//! → index → the demand stage (analyse; load what resolution missed; again, until nothing is
//! missed) → rules (parallel, read-only) → suppressions, baseline, changed lines → sorted.

mod load;
mod suppress;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use miette::Report;
use rayon::prelude::*;

pub use load::Loader;

use crate::analysis::Analysis;
use crate::config::Config;
use crate::diagnostic::{Diagnostic, Severity};
use crate::discover;
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
    /// Facts kept from earlier runs (`cache`): on disk for the CLI, in memory for the editor.
    pub cache: Option<Arc<crate::cache::FactsCache>>,
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
            cache: None,
            project: None,
            trust_cache: false,
        }
    }
}

pub struct Outcome {
    pub index: Index,
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

/// The rules that run, with their severity: selected, not ignored, not turned off.
pub fn enabled_rules(config: &Config, options: &CheckOptions) -> Vec<(&'static Rule, Severity)> {
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
        .map(|rule| (rule, config.severity(rule.name, rule.default_severity)))
        .filter(|(_, severity)| *severity != Severity::Off)
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
pub fn load_index(config: Config, files: Vec<crate::source::SourceFile>, loader: &Loader) -> (Index, Analysis) {
    load_into(Index::new(config, files), loader)
}

/// [`load_index`] into an index made by the caller.
fn load_into(mut index: Index, loader: &Loader) -> (Index, Analysis) {
    let retry_modules: Vec<bool> = (0..index.len()).map(|f| index.is_retry_module(f)).collect();
    let loaded: Vec<_> = (0..index.len())
        .into_par_iter()
        .map(|file| loader.load(&index.files[file], !retry_modules[file], retry_modules[file]))
        .collect();
    for (file, loaded) in loaded.into_iter().enumerate() {
        index.set(file, loaded);
    }
    // Rounds of reading files again with the Effect aliases the index found: a prelude that
    // re-exports another prelude takes one more. A bound, so a pathological chain ends.
    let mut alias_rounds = 0;
    let mut inferred = false;
    loop {
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
            .map(|&file| (file, loader.load(&index.files[file], false, false)))
            .collect();
        for (file, loaded) in loaded {
            index.set(file, loaded);
        }
    }
}

/// Discovers `paths` and loads the index for what `triggers` look for (`retrylint policies`).
pub fn load_paths(config: Config, paths: &[PathBuf], triggers: &[Trigger]) -> Result<(Index, Analysis), Report> {
    let discovery = discover::discover(paths, &config)?;
    let overlay = HashMap::new();
    let prefilter = Prefilter::new(triggers, &config);
    let root = config.root.clone();
    let loader = Loader {
        prefilter_key: prefilter.key(),
        prefilter: Some(prefilter),
        overlay: &overlay,
        cache: None,
        root: &root,
        skip_generated: !config.check_generated,
        trust_cache: false,
    };
    Ok(load_index(config, discovery.files, &loader))
}

pub fn run(config: Config, options: &CheckOptions) -> Result<Outcome, Report> {
    let started = Instant::now();
    let discovery = discover::discover(&options.paths, &config)?;
    let mut outcome = run_files(config, discovery.files, options);
    outcome.notes.extend(discovery.notes);
    sort_notes(&mut outcome.notes);
    outcome.elapsed = started.elapsed();
    Ok(outcome)
}

/// Checks these files (texts from `options.overlay` where given, else from disk).
pub fn run_files(config: Config, files: Vec<crate::source::SourceFile>, options: &CheckOptions) -> Outcome {
    let started = Instant::now();
    let enabled = enabled_rules(&config, options);
    let prefilter = prefilter_for(&config, &enabled, options.prefilter);
    let root = config.root.clone();
    let skip_generated = !config.check_generated;
    let loader = Loader {
        // Whether generated files are skipped changes the verdicts too.
        prefilter_key: prefilter.as_ref().map_or(0, Prefilter::key) ^ u64::from(skip_generated),
        prefilter,
        overlay: &options.overlay,
        cache: options.cache.as_deref(),
        root: &root,
        skip_generated,
        trust_cache: options.trust_cache && options.cache.is_some(),
    };
    let mut index = Index::new(config, files);
    if let Some(project) = &options.project {
        index.share_project_files(project.clone());
    }
    let (index, analysis) = load_into(index, &loader);

    // Test code is not held to the production policy. Discovery leaves out what the `tests`
    // globs match (an open editor buffer of such a file is left out here); a file that imports
    // a test framework is test code wherever it lives (`integration/base.ts` of a Playwright
    // suite), unless `tests = []` asks for test code to be checked.
    let (tests, checked): (Vec<FileId>, Vec<FileId>) = index
        .parsed_files()
        .filter(|&file| !index.config.is_test(&index.files[file].absolute))
        .partition(|&file| index.is_test_code(file));
    let results: Vec<(Vec<Diagnostic>, Vec<Note>)> = checked
        .par_iter()
        .map(|&file| check_file(&index, &analysis, file, &enabled))
        .collect();
    let mut notes = Vec::new();
    let mut diagnostics = Vec::new();
    for (found, file_notes) in results {
        diagnostics.extend(found);
        notes.extend(file_notes);
    }
    notes.extend(index.notes());
    // Generated files are skipped quietly, but never silently: one note says how many.
    let generated: Vec<FileId> = index.generated_files().collect();
    if let Some(&first) = generated.first() {
        let root = &index.config.root;
        notes.push(Note {
            path: std::env::current_dir().map_or_else(|_| root.clone(), |cwd| crate::source::display_path(&cwd, root)),
            line: None,
            message: format!(
                "skipped {} generated file{} (marked as generated, under a generated/ directory, or compiled JavaScript), such as {}; set generated = \"check\" to check them",
                generated.len(),
                if generated.len() == 1 { "" } else { "s" },
                index.path(first).display()
            ),
        });
    }
    if let Some(&first) = tests.first() {
        let root = &index.config.root;
        notes.push(Note {
            path: std::env::current_dir().map_or_else(|_| root.clone(), |cwd| crate::source::display_path(&cwd, root)),
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
    let mut diagnostics = suppress::apply(&index, diagnostics, &enabled);
    sort(&index, &mut diagnostics);
    let stale = match &options.baseline {
        Some(baseline) => crate::baseline::filter(baseline, &index, &mut diagnostics),
        None => Vec::new(),
    };
    if let Some(changed) = &options.changed {
        // A finding is the change's when the change touches it, or a location it names: a
        // new site that uses an old, defective policy brings that policy's finding along.
        // A finding on a retry call or a job definition spans the whole call, so deleting
        // its `while:` line (which changes no line that is left) counts.
        let touches = |file: FileId, span: crate::source::Span| {
            let Some(facts) = index.loaded(file) else { return false };
            let extent = facts
                .retry_sites
                .iter()
                .map(|site| site.span)
                .chain(facts.jobs.iter().map(|job| job.span))
                .filter(|outer| outer.start <= span.start && span.end <= outer.end)
                .min_by_key(|outer| outer.end - outer.start)
                .unwrap_or(span);
            let first = facts.position(extent.start).0;
            let last = facts.position(extent.end.max(extent.start)).0;
            changed.touches(&index.files[file].absolute, first, last)
        };
        diagnostics.retain(|d| touches(d.file, d.span) || d.labels.iter().any(|l| touches(l.file, l.span)));
    }
    sort_notes(&mut notes);

    Outcome {
        files: index.len(),
        parsed: checked.len(),
        cached: index.cached_files(),
        index,
        analysis,
        diagnostics,
        notes,
        stale,
        elapsed: started.elapsed(),
    }
}

fn sort_notes(notes: &mut Vec<Note>) {
    notes.sort_by(|a, b| (&a.path, a.line, &a.message).cmp(&(&b.path, b.line, &b.message)));
    notes.dedup_by(|a, b| a.path == b.path && a.line == b.line && a.message == b.message);
}

/// Checks files held in memory: `(path, text)` pairs under `root`, as if on disk (tests,
/// the differential oracle).
pub fn run_texts(config: Config, files: &[(&str, &str)]) -> Outcome {
    let root = config.root.clone();
    let mut options = CheckOptions::new(Vec::new());
    let sources = files
        .iter()
        .filter_map(|(path, text)| {
            let absolute = root.join(path);
            let language = crate::source::Language::from_path(&absolute)?;
            options.overlay.insert(absolute.clone(), text.as_bytes().into());
            Some(crate::source::SourceFile {
                path: PathBuf::from(path),
                absolute,
                language,
            })
        })
        .collect();
    run_files(config, sources, &options)
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
    for (rule, severity) in enabled {
        let mut found = Vec::new();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (rule.check)(&ctx, &mut found)));
        match outcome {
            Ok(()) => diagnostics.extend(found.into_iter().map(|mut d| {
                d.severity = *severity;
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
    (diagnostics, notes)
}
