//! The cross-file index: every discovered file with its facts, and the resolution of names
//! across files (TypeScript modules, Rust crate paths).
//!
//! The index is filled by the pipeline (`check`): first every file the prefilter keeps, then,
//! in a demand-driven stage, every further file a resolution needed — resolution itself
//! never parses or reads a source file. Asking for the facts of a file that is not loaded
//! records a *miss*; the pipeline loads the missed files and analyses again, until nothing
//! is missed. After that the index is read-only, and rules see a complete picture.

mod json;
mod project_files;
pub mod resolve;
mod retry_modules;
mod rs2;
mod rust;
pub mod tsconfig;
mod typescript;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use project_files::{ProjectFiles, WorkspacePackages};
pub use retry_modules::InferredModule;
pub use typescript::Resolved;

use crate::config::{Config, Configs};
use crate::facts::FileFacts;
use crate::source::{Note, SourceFile};

pub use crate::source::FileId;

/// What the pipeline loaded for one file.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub facts: Option<Arc<FileFacts>>,
    /// The text the facts were extracted from, kept for parsed files that can hold a finding:
    /// findings and fixes are rendered from it.
    pub text: Option<Arc<[u8]>>,
    /// For a parsed file whose text was not kept (it only names what others resolve), the
    /// text's hash: read again when a label points into it, and used only if unchanged.
    pub hash: Option<u64>,
    /// The file could not be read or was skipped: said to the user.
    pub notes: Vec<Note>,
    /// The prefilter ruled the file out: it is loaded in full if resolution asks for it.
    pub prefiltered: bool,
    /// Ruled out: what the prefilter left of it (what it can re-export, the aliases that would
    /// keep it); `None`: nothing known.
    pub ruled_out: Option<Arc<crate::cache::RuledOut>>,
    /// The verdict or the facts came from the facts cache, not from this run.
    pub cached: bool,
    /// Skipped as generated code (it is loaded in full if resolution asks for it).
    pub generated: bool,
}

impl Loaded {
    /// Whether this load gave what `other` gave, as far as the pipeline can tell: the same
    /// facts (the same shared value, or facts extracted the same way from the same text), the
    /// same verdict of the prefilter and the same notes.
    pub fn same_as(&self, other: &Loaded) -> bool {
        let facts = match (&self.facts, &other.facts) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                Arc::ptr_eq(a, b)
                    || (self.same_text(other)
                        && a.units_deferred == b.units_deferred
                        && a.parsed == b.parsed
                        && a.effect_aliases() == b.effect_aliases())
            }
            _ => false,
        };
        let ruled_out = match (&self.ruled_out, &other.ruled_out) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
            _ => false,
        };
        facts
            && ruled_out
            && self.prefiltered == other.prefiltered
            && self.generated == other.generated
            && self.notes == other.notes
    }

    /// Whether both were loaded from the same text (kept, or known by its hash).
    fn same_text(&self, other: &Loaded) -> bool {
        match (&self.text, &other.text, self.hash, other.hash) {
            (Some(a), Some(b), _, _) => Arc::ptr_eq(a, b) || a == b,
            (_, _, Some(a), Some(b)) => a == b,
            (Some(text), None, _, Some(hash)) | (None, Some(text), Some(hash), _) => {
                crate::source::fnv1a64(text) == hash
            }
            _ => false,
        }
    }
}

pub struct Index {
    /// The project root's config.
    pub config: Config,
    /// Every config of the run (the root's and the packages'), for `config_of`.
    configs: Configs,
    /// Each file's config, as a [`Configs::position`].
    file_configs: Vec<usize>,
    /// What may be read beside the sources for each config's files (by position): its root's
    /// git root, else its root ([`crate::files::boundary`]).
    boundaries: Vec<PathBuf>,
    pub files: Vec<SourceFile>,
    loaded: Vec<Loaded>,
    /// Texts read again for rendering (see `Loaded::hash`).
    reread: Vec<std::sync::OnceLock<Option<Arc<[u8]>>>>,
    /// The files in the byte order of their absolute paths: a file's id by its path is a
    /// bisection, a word per file where a map by path held a copy of every path.
    by_absolute: Vec<FileId>,
    /// The configured retry modules, then the inferred ones.
    retry_modules: Vec<FileId>,
    /// The configured ones alone, in file order: matched against the globs once.
    configured_retry_modules: Vec<FileId>,
    inferred_retry_modules: Vec<InferredModule>,
    /// Shared with later runs by the language server: reading them is a large share of a
    /// check (Effect's own `pnpm-lock.yaml` is parsed for its version).
    project: Arc<ProjectFiles>,
    misses: Mutex<Vec<FileId>>,
    /// The Rust helper and retry-builder names already looked for in the files the prefilter
    /// ruled out (`Index::ask_for_ruled_out_callers`).
    looked_for: Mutex<std::collections::HashSet<String>>,
    /// JSON and YAML files by directory (RS2 tenants), built on first use.
    config_dirs: std::sync::OnceLock<HashMap<PathBuf, Vec<FileId>>>,
    /// Each import specifier of each file, resolved once (see `typescript.rs`).
    resolutions: std::sync::RwLock<HashMap<(FileId, String), resolve::Resolution>>,
    /// Whether a module can re-export Effect (`Index::may_reexport_effect`), once known.
    reach: std::sync::RwLock<HashMap<FileId, bool>>,
    /// The TypeScript project of each file that resolved an import.
    file_projects: std::sync::RwLock<HashMap<FileId, Option<Arc<tsconfig::Project>>>>,
    /// The workspace's Rust library crates by the name other crates write, built on first use
    /// (see `rust.rs`).
    rust_crates: std::sync::OnceLock<HashMap<String, PathBuf>>,
}

impl Index {
    pub fn new(configs: impl Into<Configs>, files: Vec<SourceFile>) -> Index {
        let configs: Configs = configs.into();
        let config = configs.root.clone();
        let file_configs: Vec<usize> = files.iter().map(|f| configs.position(&f.absolute)).collect();
        let boundaries: Vec<PathBuf> = configs.all().map(|c| crate::files::boundary(&c.root)).collect();
        let key = |id: FileId| files[id].absolute.as_os_str().as_encoded_bytes();
        let mut by_absolute: Vec<FileId> = (0..files.len()).collect();
        by_absolute.sort_by(|&a, &b| key(a).cmp(key(b)));
        let retry_modules: Vec<FileId> = (0..files.len())
            .filter(|&f| configs.at(file_configs[f]).is_retry_module(&files[f].absolute))
            .collect();
        Index {
            project: {
                let project = Arc::<ProjectFiles>::default();
                project.allow(&boundaries);
                project
            },
            configs,
            file_configs,
            boundaries,
            loaded: vec![Loaded::default(); files.len()],
            reread: (0..files.len()).map(|_| std::sync::OnceLock::new()).collect(),
            config,
            files,
            by_absolute,
            configured_retry_modules: retry_modules.clone(),
            retry_modules,
            inferred_retry_modules: Vec::new(),
            misses: Mutex::new(Vec::new()),
            looked_for: Default::default(),
            config_dirs: std::sync::OnceLock::new(),
            resolutions: Default::default(),
            reach: Default::default(),
            file_projects: Default::default(),
            rust_crates: std::sync::OnceLock::new(),
        }
    }

    /// The same files, configs and import resolutions as this index, with `loaded` as what was
    /// loaded (an incremental check's start: the first load of the last check, with the
    /// changed files loaded again). What depends on the facts (the inferred retry modules,
    /// what can re-export Effect, the texts read again) starts afresh; what depends only on
    /// the file list and the project files (each import's resolution, each file's TypeScript
    /// project, the directories of config files) is kept. Returns it with what was loaded
    /// here.
    pub fn renew(self, loaded: Vec<Loaded>) -> (Index, Vec<Loaded>) {
        assert_eq!(loaded.len(), self.files.len(), "one entry per file");
        let resolutions = self.resolutions.into_inner().unwrap_or_else(|e| e.into_inner());
        let file_projects = self.file_projects.into_inner().unwrap_or_else(|e| e.into_inner());
        let renewed = Index {
            config: self.config,
            configs: self.configs,
            file_configs: self.file_configs,
            boundaries: self.boundaries,
            reread: (0..self.files.len()).map(|_| std::sync::OnceLock::new()).collect(),
            files: self.files,
            loaded,
            by_absolute: self.by_absolute,
            retry_modules: self.configured_retry_modules.clone(),
            configured_retry_modules: self.configured_retry_modules,
            inferred_retry_modules: Vec::new(),
            project: self.project,
            misses: Mutex::new(Vec::new()),
            looked_for: Default::default(),
            config_dirs: self.config_dirs,
            resolutions: std::sync::RwLock::new(resolutions),
            reach: Default::default(),
            file_projects: std::sync::RwLock::new(file_projects),
            rust_crates: std::sync::OnceLock::new(),
        };
        (renewed, self.loaded)
    }

    /// A copy of what was loaded for every file.
    pub fn loaded_table(&self) -> Vec<Loaded> {
        self.loaded.clone()
    }

    /// The project files this index answers from (the language server keeps them).
    pub fn project_files(&self) -> &Arc<ProjectFiles> {
        &self.project
    }

    /// Every import (or re-export) resolution made so far that found a file of the index, as
    /// `(from, to)`: who depends on whom, as far as TypeScript modules go.
    pub fn import_edges(&self) -> Vec<(FileId, FileId)> {
        let resolutions = self.resolutions.read().unwrap_or_else(|e| e.into_inner());
        let mut edges: Vec<(FileId, FileId)> = resolutions
            .iter()
            .filter_map(|((from, _), resolution)| match resolution {
                resolve::Resolution::File(to) => Some((*from, *to)),
                _ => None,
            })
            .collect();
        edges.sort_unstable();
        edges.dedup();
        edges
    }

    /// Forgets every import resolution (the disk may have changed under them).
    pub fn forget_resolutions(&mut self) {
        self.resolutions.get_mut().unwrap_or_else(|e| e.into_inner()).clear();
        self.file_projects.get_mut().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Answers from `package.json`, `tsconfig.json` and `wrangler` files kept from an earlier
    /// run (the language server's), to be used while those files are unchanged.
    pub fn share_project_files(&mut self, project: Arc<ProjectFiles>) {
        project.allow(&self.boundaries);
        self.project = project;
    }

    /// The workspace's packages, found on first use (and kept with the project files: the
    /// language server keeps them until a file comes or goes, or a package.json changes).
    pub fn workspace_packages(&self) -> &WorkspacePackages {
        self.project.workspace_packages(|| {
            WorkspacePackages::find(
                self.files.iter().map(|f| f.absolute.as_path()),
                &self.config.root,
                &self.boundaries[0],
            )
        })
    }

    /// What may be read beside the sources for `file`: its config root's git root, else that
    /// root.
    pub fn boundary(&self, file: FileId) -> &std::path::Path {
        &self.boundaries[self.file_configs[file]]
    }

    /// The settings for `file`: its package's config, else the project root's.
    pub fn config_of(&self, file: FileId) -> &Config {
        self.configs.at(self.file_configs[file])
    }

    /// Every config of the run, the root's first.
    pub fn configs(&self) -> &Configs {
        &self.configs
    }

    /// Records what was loaded for `file`.
    pub fn set(&mut self, file: FileId, loaded: Loaded) {
        self.loaded[file] = loaded;
        let reach = self.reach.get_mut().unwrap_or_else(|e| e.into_inner());
        if !reach.is_empty() {
            reach.clear();
        }
    }

    /// Loads every file in place, in parallel: `load(file, source)` gives what was loaded for
    /// it. Written into the index's own table, so what is loaded is never held twice (a second
    /// table as long as the file list, at 200,000 files 14 MiB at the peak).
    pub fn load_each(&mut self, load: impl Fn(FileId, &SourceFile) -> Loaded + Sync + Send) {
        use rayon::prelude::*;
        let files = &self.files;
        self.loaded
            .par_iter_mut()
            .enumerate()
            .for_each(|(file, slot)| *slot = load(file, &files[file]));
        self.reach.get_mut().unwrap_or_else(|e| e.into_inner()).clear();
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The facts of a file; `None` (and a recorded miss) when it is not loaded.
    pub fn facts(&self, file: FileId) -> Option<&FileFacts> {
        let facts = self.loaded[file].facts.as_deref();
        if facts.is_none() {
            self.misses.lock().unwrap_or_else(|e| e.into_inner()).push(file);
        }
        facts
    }

    /// The facts of a file with its named units and services: `None` (and a recorded miss)
    /// when it is not loaded, or was loaded lazily without them.
    pub fn facts_with_units(&self, file: FileId) -> Option<&FileFacts> {
        match self.loaded[file].facts.as_deref() {
            Some(facts) if !facts.units_deferred => Some(facts),
            _ => {
                self.misses.lock().unwrap_or_else(|e| e.into_inner()).push(file);
                None
            }
        }
    }

    /// What `file`, ruled out by the prefilter and not loaded, can re-export from, as its text
    /// says; `None` if it is loaded or its text did not say.
    pub fn reexport_summary(&self, file: FileId) -> Option<&[String]> {
        let loaded = &self.loaded[file];
        match loaded.facts {
            None if loaded.prefiltered => loaded.ruled_out.as_deref()?.reexports.as_deref(),
            _ => None,
        }
    }

    /// `file` stays ruled out whatever its aliases are ([`crate::cache::RuledOut::through_aliases`]).
    pub fn forget_aliases(&mut self, file: FileId) {
        let loaded = &mut self.loaded[file];
        if let Some(ruled_out) = &loaded.ruled_out {
            loaded.ruled_out = Some(crate::cache::RuledOut::new(ruled_out.reexports.clone(), None));
        }
    }

    /// What was loaded for `file`.
    pub fn loaded_entry(&self, file: FileId) -> &Loaded {
        &self.loaded[file]
    }

    /// The facts of a file if loaded, without recording a miss.
    pub fn loaded(&self, file: FileId) -> Option<&FileFacts> {
        self.loaded[file].facts.as_deref()
    }

    /// The shared facts of a file, for caches that outlive this index.
    pub fn shared_facts(&self, file: FileId) -> Option<&Arc<FileFacts>> {
        self.loaded[file].facts.as_ref()
    }

    /// The text a parsed file's facts were extracted from: kept, or read again and used only
    /// when it is byte for byte what was analysed.
    pub fn text(&self, file: FileId) -> Option<&[u8]> {
        let loaded = &self.loaded[file];
        if let Some(text) = &loaded.text {
            return Some(text);
        }
        let hash = loaded.hash?;
        self.reread[file]
            .get_or_init(|| {
                let limit = self.config_of(file).max_file_size;
                let bytes = crate::files::read_file(&self.files[file].absolute, limit, false).ok()?;
                (crate::source::fnv1a64(&bytes) == hash).then(|| bytes.into())
            })
            .as_deref()
    }

    /// The text kept with a file's facts (a file that can hold a finding, a retry module, an
    /// editor buffer), never read from the disk: what rules read (see `rules::Context::text`).
    pub fn kept_text(&self, file: FileId) -> Option<&[u8]> {
        self.loaded[file].text.as_deref()
    }

    pub fn shared_text(&self, file: FileId) -> Option<&Arc<[u8]>> {
        self.loaded[file].text.as_ref()
    }

    /// The files resolution asked for since the last call, each once.
    pub fn take_misses(&self) -> Vec<FileId> {
        let mut misses = std::mem::take(&mut *self.misses.lock().unwrap_or_else(|e| e.into_inner()));
        misses.sort_unstable();
        misses.dedup();
        misses.retain(|&f| match &self.loaded[f].facts {
            Some(facts) => facts.units_deferred,
            None => self.loaded[f].prefiltered,
        });
        misses
    }

    /// Files skipped as generated code.
    pub fn generated_files(&self) -> impl Iterator<Item = FileId> + '_ {
        (0..self.files.len()).filter(|&id| self.loaded[id].generated && self.loaded[id].facts.is_none())
    }

    /// Files whose verdict or facts came from the facts cache.
    pub fn cached_files(&self) -> usize {
        self.loaded.iter().filter(|l| l.cached).count()
    }

    /// Whether `file` is test code: the `tests` globs match it, or it imports a test framework
    /// (a Playwright suite's `integration/base.ts`), unless `tests = []` asks for test code to
    /// be checked.
    pub fn is_test_code(&self, file: FileId) -> bool {
        let config = self.config_of(file);
        if config.tests.is_empty() {
            return false;
        }
        config.is_test(&self.files[file].absolute)
            || self.loaded(file).is_some_and(|facts| {
                facts.imports.iter().any(|import| {
                    TEST_FRAMEWORKS.contains(&import.source.as_str()) || import.source.starts_with("@testing-library/")
                })
            })
    }

    /// Files whose facts came from a parse: what rules run on.
    pub fn parsed_files(&self) -> impl Iterator<Item = FileId> + '_ {
        (0..self.files.len()).filter(|&id| self.loaded[id].facts.as_ref().is_some_and(|f| f.parsed))
    }

    /// Every note of every loaded file, with its path.
    pub fn notes(&self) -> Vec<Note> {
        let mut notes: Vec<Note> = self
            .inferred_retry_modules
            .iter()
            .map(|m| Note {
                path: self.files[m.file].path.clone(),
                line: None,
                message: format!(
                    "taken as its package's retry module: it exports {} named policies that {} retry {} in other files {}; name it in `retry-modules` to make this explicit",
                    m.policies,
                    m.sites,
                    if m.sites == 1 { "site" } else { "sites" },
                    if m.sites == 1 { "uses" } else { "use" },
                ),
            })
            .collect();
        notes.extend(self.unresolved_import_notes());
        for (id, loaded) in self.loaded.iter().enumerate() {
            notes.extend(loaded.notes.iter().cloned());
            if let Some(facts) = &loaded.facts {
                notes.extend(facts.notes.iter().map(|n| Note {
                    path: self.files[id].path.clone(),
                    line: n.line,
                    message: n.message.clone(),
                }));
                if facts.notes_dropped > 0 {
                    notes.push(Note {
                        path: self.files[id].path.clone(),
                        line: None,
                        message: format!(
                            "{} more {} of this file not shown (the first {} are)",
                            facts.notes_dropped,
                            if facts.notes_dropped == 1 { "note" } else { "notes" },
                            crate::facts::MAX_NOTES_PER_FILE,
                        ),
                    });
                }
            }
        }
        notes
    }

    pub fn path(&self, file: FileId) -> &Path {
        &self.files[file].path
    }

    /// The file's path relative to the project root, with `/` separators (the absolute path
    /// for a file outside it): the same from any working directory, for identities that
    /// outlive a run (baselines, SARIF fingerprints).
    pub fn root_relative(&self, file: FileId) -> String {
        let absolute = &self.files[file].absolute;
        absolute
            .strip_prefix(&self.config.root)
            .unwrap_or(absolute)
            .to_string_lossy()
            .replace('\\', "/")
    }

    pub fn file_id(&self, absolute: &Path) -> Option<FileId> {
        // The last of the files with that path, as a map by path kept it.
        let wanted = absolute.as_os_str().as_encoded_bytes();
        let after = self
            .by_absolute
            .partition_point(|&id| self.files[id].absolute.as_os_str().as_encoded_bytes() <= wanted);
        let id = *self.by_absolute.get(after.checked_sub(1)?)?;
        (self.files[id].absolute == absolute).then_some(id)
    }

    pub fn is_retry_module(&self, file: FileId) -> bool {
        self.configured_retry_modules.binary_search(&file).is_ok()
            || self.inferred_retry_modules.iter().any(|m| m.file == file)
    }

    /// The files the config names as retry modules, then those inferred for packages the
    /// config says nothing about.
    pub fn retry_modules(&self) -> &[FileId] {
        &self.retry_modules
    }

    /// The retry modules the config names, in file order.
    pub fn configured_retry_modules(&self) -> &[FileId] {
        &self.configured_retry_modules
    }

    /// Retry modules inferred from the code (see `retry_modules.rs`).
    pub fn inferred_retry_modules(&self) -> &[InferredModule] {
        &self.inferred_retry_modules
    }

    /// Makes `inferred` retry modules (the pipeline analyses again afterwards).
    pub fn set_inferred_retry_modules(&mut self, inferred: Vec<InferredModule>) {
        for module in &inferred {
            if !self.retry_modules.contains(&module.file) {
                self.retry_modules.push(module.file);
            }
        }
        self.inferred_retry_modules = inferred;
    }

    pub fn is_repository_path(&self, file: FileId) -> bool {
        self.config_of(file).is_repository_path(&self.files[file].absolute)
    }

    pub fn is_durable_path(&self, file: FileId) -> bool {
        self.config_of(file).is_durable_path(&self.files[file].absolute)
    }

    /// Effect's version line for `file` (see `effect_version`), from the nearest
    /// `package.json` that uses Effect; 0 when unknown.
    pub fn effect_major(&self, file: FileId) -> u8 {
        match self.files[file].absolute.parent() {
            Some(dir) => self.project.effect_major(dir, self.boundary(file)),
            None => 0,
        }
    }

    /// The largest `max_retries` of the queue consumers in the nearest wrangler config.
    pub fn wrangler_max_retries(&self, file: FileId) -> Option<u64> {
        let dir = self.files[file].absolute.parent()?;
        self.project
            .wrangler_max_retries(dir, &self.config.root, self.boundary(file))
    }
}

/// Modules only test code imports: runners, their assertion libraries and helpers.
const TEST_FRAMEWORKS: &[&str] = &[
    "vitest",
    "@effect/vitest",
    "@playwright/test",
    "@jest/globals",
    "node:test",
    "bun:test",
    "ava",
    "mocha",
    "chai",
    "supertest",
];
