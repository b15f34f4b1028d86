//! The front door: the one place the pipeline is assembled. A [`Workspace`] owns the project
//! root and its configs (found by [`locate`], the one finder the command line and the editor
//! share), the files discovery found, the facts cache and the project files read beside the
//! sources (the dependency index: `package.json`, `tsconfig.json`, lockfiles). `check`,
//! `--fix`, `--show-settings`, `init`, `policies`, `resolve-imports` and the language server
//! all come in here; no other module runs discovery, loading or the rules.
//!
//! Discovery only reports what it walked past (source files, `retrylint.toml` files); the
//! workspace loads the package configs among them and then has discovery pick each file by
//! its own config.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::{miette, Report};

use crate::analysis::Analysis;
use crate::cache::FactsCache;
use crate::check::{self, CheckOptions, Kept, Outcome};
use crate::config::{Config, Configs};
use crate::discover::{self, Discovery};
use crate::extract::Trigger;
use crate::facts::FileFacts;
use crate::fix::{Applicability, FixReport};
use crate::index::{FileId, Index, ProjectFiles};
use crate::source::{Language, SourceFile};

/// Where a path's project is: its root, and the config file that marks it (none: the git
/// root, else the path itself, with the defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub root: PathBuf,
    pub config: Option<PathBuf>,
}

/// The project around `path`, as `retrylint check` and the language server both find it: the
/// nearest `retrylint.toml` from the path upwards — or, when that one `extend`s a config in a
/// directory above it (a monorepo package's), that one's, and so on —, else the git root, else
/// the path itself (its directory, for a file). See [`crate::config::project_root`].
pub fn locate(path: &Path) -> Result<Located, Report> {
    let (root, config) = crate::config::project_root(path)?;
    Ok(Located { root, config })
}

/// How a run picks its config: `--config FILE`, `--no-config`, or found ([`locate`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ConfigChoice<'a> {
    pub given: Option<&'a Path>,
    pub none: bool,
}

/// `--config FILE`, else the config of the first path's project root (see [`locate`]), else
/// the defaults rooted there. Found this way (not with `--config` or `--no-config`), package
/// configs below the root apply to their files.
pub fn find_config(choice: ConfigChoice, paths: &[PathBuf]) -> Result<Config, Report> {
    let first = paths.first().cloned().unwrap_or_else(|| PathBuf::from("."));
    let Located { root, config: found } = locate(&first)?;
    if let Some(path) = choice.given {
        // The file's globs stay relative to its own directory; the project is the paths'.
        let mut config = Config::load_given(path, &crate::rules::names())?;
        config.root = root;
        return Ok(config);
    }
    let mut config = match found.filter(|_| !choice.none) {
        Some(found) => Config::load(&found, &crate::rules::names())?,
        None => Config::defaults(root),
    };
    config.discovered = !choice.none;
    Ok(config)
}

/// `--project DIR`: DIR is the project root; its config is the nearest `retrylint.toml` from
/// DIR upwards (else the defaults, rooted at DIR).
pub fn project_config(choice: ConfigChoice, dir: &Path) -> Result<Config, Report> {
    if let Some(path) = choice.given {
        let mut config = Config::load_given(path, &crate::rules::names())?;
        config.root = std::fs::canonicalize(dir).map_err(|e| miette!("cannot check project {}: {e}", dir.display()))?;
        return Ok(config);
    }
    if !choice.none {
        if let Some(found) = Config::discover(dir) {
            let mut config = Config::load(&found, &crate::rules::names())?;
            config.discovered = true;
            return Ok(config);
        }
    }
    let root = std::fs::canonicalize(dir)
        .map(|p| {
            if p.is_dir() {
                p
            } else {
                p.parent().map(PathBuf::from).unwrap_or(p)
            }
        })
        .or_else(|_| std::env::current_dir())
        .map_err(|e| miette!("cannot read the current directory: {e}"))?;
    let mut config = Config::defaults(root);
    config.discovered = !choice.none;
    Ok(config)
}

/// The settings in force for `file` (`--show-settings`): its package's config, else its
/// project root's (or the defaults, rooted where `check` roots them).
pub fn show_settings(choice: ConfigChoice, file: &Path) -> Result<String, Report> {
    let root = find_config(choice, &[file.to_path_buf()])?;
    let mut configs = Configs::from(root);
    let absolute = crate::files::as_given(file).map_err(|e| miette!("cannot read {}: {e}", file.display()))?;
    let above = configs.configs_above(&absolute);
    configs.add_nested(above, &crate::rules::names())?;
    crate::settings::show(configs.for_path(&absolute), file)
}

/// One project: its configs, the files discovered in it, and what is kept between runs.
pub struct Workspace {
    /// The root's config and those of its packages.
    pub configs: Configs,
    pub discovery: Discovery,
    /// Facts kept from earlier runs: on disk for the CLI, in memory for the editor.
    pub cache: Option<Arc<FactsCache>>,
    /// The cache hears of every change on disk (the editor's file watcher).
    pub trust_cache: bool,
    /// What was read beside the sources, kept between the editor's runs until one of those
    /// files changes.
    pub project: Option<Arc<ProjectFiles>>,
}

impl Workspace {
    /// A workspace of `configs` with nothing discovered yet.
    pub fn new(configs: impl Into<Configs>) -> Workspace {
        Workspace {
            configs: configs.into(),
            discovery: Discovery::default(),
            cache: None,
            trust_cache: false,
            project: None,
        }
    }

    /// Discovers `paths` under `configs`: the walk, then the package configs it met (when
    /// the root config was found, not given), then the files each one's config keeps.
    pub fn discover(configs: impl Into<Configs>, paths: &[PathBuf]) -> Result<Workspace, Report> {
        let mut workspace = Workspace::new(configs);
        workspace.rediscover(paths)?;
        Ok(workspace)
    }

    /// Discovers `paths` again, with the package configs the walk meets now.
    pub fn rediscover(&mut self, paths: &[PathBuf]) -> Result<(), Report> {
        let found = discover::walk(paths, &self.configs.root.root)?;
        let mut configs = Configs::from(self.configs.root.clone());
        configs.add_nested(found.config_files.iter().cloned(), &crate::rules::names())?;
        self.discovery = discover::select(found, &configs)?;
        self.configs = configs;
        Ok(())
    }

    /// Adds a file that is not on disk but whose text is given (stdin for a new file), with
    /// the package configs above it.
    pub fn add_unsaved(&mut self, absolute: &Path) -> Result<(), Report> {
        let above = self.configs.configs_above(absolute);
        self.configs.add_nested(above, &crate::rules::names())?;
        discover::add_unsaved(&mut self.discovery, &self.configs, absolute)
    }

    /// The note that says how many test files (the `tests` globs) discovery skipped, at `at`.
    pub fn tests_note(&self, at: PathBuf) -> Option<crate::source::Note> {
        discover::tests_note(&self.discovery.tests, at)
    }

    fn kept(&self) -> Kept<'_> {
        Kept {
            cache: self.cache.as_deref(),
            project: self.project.clone(),
            trust_cache: self.trust_cache,
        }
    }

    /// Checks `files` (the discovered ones, and any the caller adds, such as unsaved
    /// buffers), texts from `options.overlay` where given.
    pub fn check_files(&self, files: Vec<SourceFile>, options: &CheckOptions) -> Outcome {
        check::run_files(self.configs.clone(), files, options, &self.kept())
    }

    /// Checks the files of `previous` (a check of this workspace that kept what the next one
    /// starts from, `CheckOptions::keep`) again after the files at `changed` changed: the
    /// rules run only where the change can reach (see [`check::run_again`]). Gives `previous`
    /// back when it cannot start from it; the caller then checks in full.
    pub fn check_again(
        &self,
        previous: Outcome,
        changed: &[PathBuf],
        options: &CheckOptions,
    ) -> Result<Outcome, Box<Outcome>> {
        check::run_again(previous, changed, options, &self.kept())
    }

    /// Checks what was discovered, as `retrylint check` does: files given only as texts are
    /// added, a path named that holds nothing checked is said, and only the findings in
    /// `options.only` are kept.
    pub fn check(mut self, options: &CheckOptions) -> Result<Outcome, Report> {
        let started = std::time::Instant::now();
        // A text given for a file not on disk yet (stdin for a new file) is checked as if it were.
        for absolute in options.overlay.keys() {
            if std::fs::symlink_metadata(absolute).is_err() {
                self.add_unsaved(absolute)?;
            }
        }
        // A path named on the command line that holds nothing checked is said, with why.
        if let Some(only) = &options.only {
            let unchecked = discover::unchecked_named(only, &self.discovery, &self.configs);
            self.discovery.notes.extend(unchecked);
        }
        let scope = check::scope_path(&self.configs.root.root, options.only.as_deref());
        let tests: Vec<PathBuf> = self
            .discovery
            .tests
            .iter()
            .filter(|path| check::in_scope(path, options.only.as_deref()))
            .cloned()
            .collect();
        let discovery = std::mem::take(&mut self.discovery);
        let mut outcome = self.check_files(discovery.files, options);
        outcome.notes.extend(discovery.notes);
        outcome.notes.extend(discover::tests_note(&tests, scope));
        check::sort_notes(&mut outcome.notes);
        if let Some(only) = &options.only {
            check::keep_within(&mut outcome, only);
        }
        outcome.elapsed = started.elapsed();
        Ok(outcome)
    }

    /// The index of what was discovered and its analysis, loaded for what `triggers` look
    /// for (`None`: every file is parsed, as `check --no-prefilter` parses them).
    pub fn load(self, triggers: Option<&[Trigger]>) -> (Index, Analysis) {
        check::load_for(self.configs, self.discovery.files, triggers)
    }
}

/// `retrylint check`: discovers `options.paths` under `config` and checks them, with `cache`.
pub fn check(config: Config, options: &CheckOptions, cache: Option<Arc<FactsCache>>) -> Result<Outcome, Report> {
    let mut workspace = Workspace::discover(config, &options.paths)?;
    workspace.cache = cache;
    workspace.check(options)
}

/// `retrylint check --fix` / `--diff`: rounds of [`check`] (the config read by `config` each
/// round) and fixes, in memory (see [`crate::fix::fix_project`]).
pub fn fix(
    config: &dyn Fn() -> Result<Config, Report>,
    options: &CheckOptions,
    cache: Option<Arc<FactsCache>>,
    applicability: Applicability,
) -> Result<FixReport, Report> {
    crate::fix::fix_project(&|round| check(config()?, round, cache.clone()), options, applicability)
}

/// Checks files held in memory: `(path, text)` pairs under the config's root, as if on disk
/// (tests, the differential oracle).
pub fn check_texts(config: Config, files: &[(&str, &str)]) -> Outcome {
    check_texts_with(config, files, &CheckOptions::new(Vec::new()))
}

/// [`check_texts`] with `options` (`--select`, `--ignore`, …); a text in `options.overlay`
/// (a fix in progress) stands for the file's own.
pub fn check_texts_with(config: Config, files: &[(&str, &str)], options: &CheckOptions) -> Outcome {
    let root = config.root.clone();
    let mut options = CheckOptions {
        paths: Vec::new(),
        prefilter: options.prefilter,
        select: options.select.clone(),
        ignore: options.ignore.clone(),
        changed: None,
        baseline: None,
        overlay: options.overlay.clone(),
        only: None,
        progress: None,
        keep: false,
    };
    let sources = files
        .iter()
        .filter_map(|(path, text)| {
            let absolute = root.join(path);
            let language = Language::from_path(&absolute)?;
            options
                .overlay
                .entry(absolute.clone())
                .or_insert_with(|| text.as_bytes().into());
            Some(SourceFile {
                path: PathBuf::from(path),
                absolute,
                language,
            })
        })
        .collect();
    Workspace::new(config).check_files(sources, &options)
}

/// `--fix` on files held in memory (see [`check_texts_with`]): rounds of checks and fixes,
/// nothing written.
pub fn fix_texts(
    config: &dyn Fn() -> Config,
    files: &[(&str, &str)],
    options: &CheckOptions,
    applicability: Applicability,
) -> Result<FixReport, Report> {
    let round = |round: &CheckOptions| Ok(check_texts_with(config(), files, round));
    crate::fix::fix_project(&round, options, applicability)
}

/// The facts of an editor buffer (the language server hands them to the cache, where the
/// check finds them by the text's hash).
pub fn extract_buffer(language: Language, text: &[u8]) -> FileFacts {
    crate::extract::extract_file(language, text)
}

/// A file of `index` read and extracted in full, with its text, when the load left it out
/// (`init` looks at every retry module, even one the prefilter ruled out).
pub fn read_in_full(index: &Index, file: FileId) -> (FileFacts, Vec<u8>) {
    let source = &index.files[file];
    let limit = index.config_of(file).max_file_size;
    let text = crate::files::read_file(&source.absolute, limit, false).unwrap_or_default();
    (crate::extract::extract_file(source.language, &text), text)
}

/// The facts cache of the project at `root` (`.retrylint_cache/` there, or
/// `RETRYLINT_CACHE_DIR`), unless `no_cache` or `RETRYLINT_NO_CACHE` says not to. The cache at
/// the root must be the project's own directory: one that is a symbolic link (a checkout can
/// hold one) would be read, written and pruned where it points, so none is used, and its path
/// is returned to be said.
pub fn facts_cache(root: &Path, no_cache: bool) -> (Option<Arc<FactsCache>>, Option<PathBuf>) {
    let no_cache = no_cache || std::env::var_os("RETRYLINT_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0");
    let cache_dir = std::env::var_os("RETRYLINT_CACHE_DIR").map(PathBuf::from);
    let own_cache = root.join(crate::cache::CACHE_DIR);
    let foreign = cache_dir.is_none() && std::fs::symlink_metadata(&own_cache).is_ok_and(|m| !m.file_type().is_dir());
    let cache = (!no_cache && !foreign).then(|| Arc::new(FactsCache::open(root, cache_dir.as_deref())));
    (cache, (foreign && !no_cache).then_some(own_cache))
}
