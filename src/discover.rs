//! Discovery: which files to look at. The `ignore` crate walks in parallel, honours
//! `.gitignore` and `.ignore`, and skips hidden entries; we add `node_modules`, declaration
//! files, the size limit, the config's include/exclude globs and its `tests` globs (test code is
//! not held to the production policy; one note says how many files that skipped).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use miette::{miette, Report};

use crate::config::{Config, Configs, CONFIG_FILE};
use crate::source::{display_path, Language, Note, SourceFile};

/// What a walk found, before any config is applied: the candidate source files, the package
/// configs (`retrylint.toml` files) met on the way, and what was skipped and said.
#[derive(Debug, Default)]
pub struct Found {
    candidates: Vec<Candidate>,
    /// The `retrylint.toml` files found (canonical, sorted): the caller loads the package
    /// configs among them before [`select`] applies each file's.
    pub config_files: Vec<PathBuf>,
    notes: Vec<Note>,
}

#[derive(Debug, Default, Clone)]
pub struct Discovery {
    pub files: Vec<SourceFile>,
    pub notes: Vec<Note>,
    /// Test files skipped, sorted.
    pub tests: Vec<PathBuf>,
}

/// The note that says how many test files (the `tests` globs) were skipped, at `at`.
pub fn tests_note(tests: &[PathBuf], at: PathBuf) -> Option<Note> {
    let first = tests.first()?;
    let count = tests.len();
    Some(Note {
        path: at,
        line: None,
        message: format!(
            "skipped {count} test file{} (the `tests` globs), such as {}; set tests = [] to check them",
            if count == 1 { "" } else { "s" },
            first.display()
        ),
    })
}

/// A file the walk found, before the settings of its config are applied.
#[derive(Debug)]
struct Candidate {
    absolute: PathBuf,
    language: Language,
    size: u64,
    /// Named on the command line: checked even if an ignore file or `include` would skip it.
    explicit: bool,
}

/// Walks `paths` (in the project rooted at `root`): the source files under them and the
/// `retrylint.toml` files met on the way (and, for a file named, those between it and the
/// root). Nothing is loaded: the caller loads the package configs, then [`select`]s.
pub fn walk(paths: &[PathBuf], root: &Path) -> Result<Found, Report> {
    let cwd = std::env::current_dir().map_err(|e| miette!("cannot read the current directory: {e}"))?;
    let candidates = Mutex::new(Vec::new());
    let config_files = Mutex::new(Vec::new());
    // What the walk skipped and says so: unreadable directories, links, odd names.
    let notes: Mutex<Vec<Note>> = Mutex::new(Vec::new());
    let note = |note: Note| notes.lock().expect("no panics while locked").push(note);
    for path in paths {
        let metadata = std::fs::symlink_metadata(path).map_err(|e| {
            miette!(
                help = "check the path, or run from the project root",
                "cannot check {}: {e}",
                path.display()
            )
        })?;
        // A symbolic link is skipped with a note: `--fix` would write through it, its target
        // is checked where it lives, and a link is never followed out of the project.
        if metadata.file_type().is_symlink() {
            note(skipped_symlink(display_path(&cwd, &cwd.join(path))));
            continue;
        }
        let absolute = crate::config::canonical_path(path, "check the path, or run from the project root", "")?;
        if let Some(what) = crate::files::kind_of(metadata.file_type()).filter(|_| !metadata.is_dir()) {
            note(not_regular(display_path(&cwd, &absolute), what));
            continue;
        }
        if metadata.is_file() {
            if let Some(found) = odd_name(&cwd, &absolute) {
                note(found);
                continue;
            }
            config_files
                .lock()
                .expect("no panics while locked")
                .extend(crate::config::configs_above(root, &absolute));
            if let Some(language) = Language::from_path(&absolute) {
                candidates.lock().expect("no panics while locked").push(Candidate {
                    absolute,
                    language,
                    size: metadata.len(),
                    explicit: true,
                });
            }
            continue;
        }
        // A directory outside the root: the config of its own project applies to it.
        config_files
            .lock()
            .expect("no panics while locked")
            .extend(crate::config::configs_above(root, &absolute.join(CONFIG_FILE)));
        let ignores = Arc::new(IgnoreFiles::new(walk_boundary(&absolute, root), cwd.clone()));
        let filter = ignores.clone();
        // Ignore files are read here, through the bounded reader (a `.gitignore` that is a link
        // to `/dev/zero` or a FIFO is a note, not a hang), never by the walker itself.
        let walker = ignore::WalkBuilder::new(&absolute)
            .hidden(true)
            .parents(false)
            .git_ignore(false)
            .git_exclude(false)
            .git_global(false)
            .ignore(false)
            .require_git(false)
            .filter_entry(move |entry| {
                entry.file_name() != "node_modules"
                    && !filter.is_ignored(entry.path(), entry.file_type().is_some_and(|t| t.is_dir()))
            })
            .build_parallel();
        walker.run(|| {
            Box::new(|entry| {
                let entry = match entry {
                    Ok(entry) => entry,
                    // An unreadable directory (or file) is a skipped file: never silently.
                    Err(error) => {
                        let path = error_path(&error).map_or_else(|| cwd.clone(), |p| display_path(&cwd, p));
                        note(Note {
                            path,
                            line: None,
                            message: format!("skipped: cannot read: {}", error_message(&error)),
                        });
                        return ignore::WalkState::Continue;
                    }
                };
                let entry_path = entry.path();
                let Some(file_type) = entry.file_type() else {
                    return ignore::WalkState::Continue;
                };
                // A package config of any kind (a link to the project's shared one too) is
                // loaded, and loading says what is wrong with one that is not a regular file.
                if entry.file_name() == CONFIG_FILE && !file_type.is_dir() {
                    config_files
                        .lock()
                        .expect("no panics while locked")
                        .push(entry_path.to_path_buf());
                    return ignore::WalkState::Continue;
                }
                if file_type.is_symlink() {
                    if let Some(found) = walked_symlink(&cwd, entry_path) {
                        note(found);
                    }
                    return ignore::WalkState::Continue;
                }
                if !file_type.is_file() {
                    // A FIFO, a device or a socket with a source file's name: said, never read.
                    if let Some(what) = crate::files::kind_of(file_type).filter(|_| !file_type.is_dir()) {
                        if Language::from_path(entry_path).is_some() {
                            note(not_regular(display_path(&cwd, entry_path), what));
                        }
                    }
                    return ignore::WalkState::Continue;
                }
                if let Some(found) = odd_name(&cwd, entry_path) {
                    note(found);
                    return ignore::WalkState::Continue;
                }
                let Some(language) = Language::from_path(entry_path) else {
                    return ignore::WalkState::Continue;
                };
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                candidates.lock().expect("no panics while locked").push(Candidate {
                    absolute: entry_path.to_path_buf(),
                    language,
                    size,
                    explicit: false,
                });
                ignore::WalkState::Continue
            })
        });
        notes
            .lock()
            .expect("no panics while locked")
            .extend(ignores.take_notes());
    }
    // In a stable order, so the first malformed package config is always the one reported.
    let mut config_files = config_files.into_inner().expect("no panics while locked");
    config_files.sort();
    config_files.dedup();
    let mut candidates = candidates.into_inner().expect("no panics while locked");
    candidates.sort_by(|a, b| a.absolute.cmp(&b.absolute).then(b.explicit.cmp(&a.explicit)));
    candidates.dedup_by(|a, b| a.absolute == b.absolute);
    Ok(Found {
        candidates,
        config_files,
        notes: notes.into_inner().expect("no panics while locked"),
    })
}

/// The files to check among those `found`, each filtered by the settings of the config
/// nearest to it (`configs` holds the package configs among `found.config_files`).
pub fn select(found: Found, configs: &Configs) -> Result<Discovery, Report> {
    let cwd = std::env::current_dir().map_err(|e| miette!("cannot read the current directory: {e}"))?;
    let mut discovery = Discovery {
        notes: found.notes,
        ..Discovery::default()
    };
    for candidate in found.candidates {
        let Candidate {
            absolute,
            language,
            size,
            explicit,
        } = candidate;
        let config = configs.for_path(&absolute);
        let shown = display_path(&cwd, &absolute);
        // An explicitly named file is checked even if ignore files would skip it; test code
        // is still test code (lint-staged names every staged file).
        if !explicit && !config.is_included(&absolute) {
            continue;
        }
        if config.is_test(&absolute) {
            discovery.tests.push(shown);
            continue;
        }
        // The size limit holds for a file named on the command line too.
        if explicit && size > config.max_file_size {
            discovery.notes.push(over_size(shown, size, config));
            continue;
        }
        if explicit {
            discovery.files.push(SourceFile {
                path: shown,
                absolute,
                language,
            });
            continue;
        }
        // A large JSON or YAML file is a lockfile or a data dump, never RS2 configuration:
        // skipped without a note.
        if size > config.max_file_size && matches!(language, Language::Json | Language::Yaml) {
            continue;
        }
        if size > config.max_file_size {
            discovery.notes.push(over_size(shown, size, config));
        } else {
            discovery.files.push(SourceFile {
                path: shown,
                absolute,
                language,
            });
        }
    }
    discovery.tests.sort();
    discovery.tests.dedup();
    // Kept for the whole run: without the spare room a vector grown by pushing keeps (up to
    // half again its length; 4 MiB at 200,000 files).
    discovery.files.shrink_to_fit();
    Ok(discovery)
}

/// Adds a file that is not on disk but whose text is given (`check - --stdin-filename new.ts`,
/// canonical up to its missing part): checked as a file named on the command line is, with the
/// config of its directory (the caller loads the package configs above it first, see
/// [`crate::config::configs_above`]); a test file is left out as one on disk is.
pub fn add_unsaved(discovery: &mut Discovery, configs: &Configs, absolute: &Path) -> Result<(), Report> {
    let cwd = std::env::current_dir().map_err(|e| miette!("cannot read the current directory: {e}"))?;
    let Some(language) = Language::from_path(absolute) else {
        return Ok(());
    };
    if let Some(found) = odd_name(&cwd, absolute) {
        discovery.notes.push(found);
        return Ok(());
    }
    let shown = display_path(&cwd, absolute);
    if configs.for_path(absolute).is_test(absolute) {
        discovery.tests.push(shown);
        discovery.tests.sort();
        return Ok(());
    }
    if discovery.files.iter().all(|f| f.absolute != absolute) {
        let at = discovery.files.partition_point(|f| f.absolute.as_path() < absolute);
        discovery.files.insert(
            at,
            SourceFile {
                path: shown,
                absolute: absolute.to_path_buf(),
                language,
            },
        );
    }
    Ok(())
}

/// Notes for the paths named on the command line (canonical; a link as the link) that this
/// discovery checks nothing in and says nothing about yet: a path the user named and that is
/// not checked is always said, with why.
pub fn unchecked_named(named: &[PathBuf], discovery: &Discovery, configs: &Configs) -> Vec<Note> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let root = &configs.root.root;
    let ignores = IgnoreFiles::new(crate::files::boundary(root), cwd.clone());
    let mut notes = Vec::new();
    for path in named {
        let covered = discovery.files.iter().any(|f| f.absolute.starts_with(path))
            || discovery
                .tests
                .iter()
                .chain(discovery.notes.iter().map(|n| &n.path))
                .any(|shown| cwd.join(shown).starts_with(path));
        if covered {
            continue;
        }
        if let Some(message) = unchecked_reason(path, root, configs, &ignores) {
            notes.push(Note {
                path: display_path(&cwd, path),
                line: None,
                message,
            });
        }
    }
    notes
}

/// Why a named path holds nothing that is checked; `None` for a directory with nothing to
/// check (the summary's "0 files" says it).
fn unchecked_reason(path: &Path, root: &Path, configs: &Configs, ignores: &IgnoreFiles) -> Option<String> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    let file_type = metadata.file_type();
    if file_type.is_symlink() {
        return Some(skipped_symlink(PathBuf::new()).message);
    }
    if let Some(what) = crate::files::kind_of(file_type).filter(|_| !file_type.is_dir()) {
        return Some(not_regular(PathBuf::new(), what).message);
    }
    // What a walk of the root passes over: hidden entries, node_modules, ignored paths.
    if let Ok(below) = path.strip_prefix(root) {
        let mut at = root.to_path_buf();
        for part in below.components() {
            at.push(part);
            let name = part.as_os_str().to_string_lossy();
            if name.starts_with('.') {
                return Some(format!(
                    "skipped: `{name}` is hidden, and hidden files and directories are not checked"
                ));
            }
            if name == "node_modules" {
                return Some("skipped: inside node_modules, which is not checked".into());
            }
            if ignores.is_ignored(&at, at.is_dir()) {
                return Some(if at == path {
                    "skipped: an ignore file (.gitignore, .ignore) leaves it out".to_string()
                } else {
                    format!(
                        "skipped: an ignore file (.gitignore, .ignore) leaves out {}",
                        at.strip_prefix(root).unwrap_or(&at).display()
                    )
                });
            }
        }
    }
    if metadata.is_dir() {
        return None;
    }
    if Language::from_path(path).is_none() {
        return Some("skipped: not a kind of file retrylint reads (see Files in the README)".into());
    }
    let config = configs.for_path(path);
    if !config.is_included(path) {
        return Some("skipped: the config's `include` or `exclude` leaves it out".into());
    }
    if metadata.len() > config.max_file_size {
        return Some(over_size(PathBuf::new(), metadata.len(), config).message);
    }
    Some("skipped: not checked".into())
}

/// The directory whose ignore files apply to a walk of `dir`: the project root's git root
/// (else the root) for a directory inside the root, else the directory's own git root (else
/// the directory itself). Nothing above it is read.
fn walk_boundary(dir: &Path, root: &Path) -> PathBuf {
    if dir.starts_with(root) {
        crate::files::boundary(root)
    } else {
        crate::files::boundary(dir)
    }
}

/// The ignore files (`.ignore`, `.gitignore`, `.git/info/exclude`) of the directories inside a
/// boundary, read as every file is ([`crate::files::read_inside`]: regular, bounded, inside
/// the project), and matched as the `ignore` crate matches them: for each kind, the deepest
/// file with a matching pattern decides, and `.ignore` wins over `.gitignore`, which wins over
/// the exclude file. The user's global excludes are not read, so a run gives the same answer
/// on every machine.
struct IgnoreFiles {
    boundary: PathBuf,
    cwd: PathBuf,
    /// Per directory, the ignore files that apply in it: its own and those of the directories
    /// above it inside the boundary, deepest first (directories without any left out).
    chains: Mutex<HashMap<PathBuf, Chain>>,
    /// Ignore files that could not be read (a FIFO, a link out of the project, too large).
    notes: Mutex<Vec<Note>>,
}

type Chain = Arc<Vec<Arc<DirIgnores>>>;

struct DirIgnores {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

impl IgnoreFiles {
    fn new(boundary: PathBuf, cwd: PathBuf) -> IgnoreFiles {
        IgnoreFiles {
            boundary,
            cwd,
            chains: Mutex::new(HashMap::new()),
            notes: Mutex::new(Vec::new()),
        }
    }

    /// Whether an ignore file inside the boundary leaves out `path` (absolute).
    fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Some(dir) = path.parent() else { return false };
        let (mut ignore, mut gitignore, mut exclude) = (Match::None, Match::None, Match::None);
        for files in self.chain(dir).iter() {
            let matched = |matcher: &Option<Gitignore>| {
                matcher
                    .as_ref()
                    .map_or(Match::None, |m| m.matched(path, is_dir).map(|_| ()))
            };
            if ignore.is_none() {
                ignore = matched(&files.ignore);
            }
            if gitignore.is_none() {
                gitignore = matched(&files.gitignore);
            }
            if exclude.is_none() {
                exclude = matched(&files.exclude);
            }
        }
        ignore.or(gitignore).or(exclude).is_ignore()
    }

    fn chain(&self, dir: &Path) -> Chain {
        if let Some(known) = self.chains.lock().expect("no panics while locked").get(dir) {
            return known.clone();
        }
        if !dir.starts_with(&self.boundary) {
            return Chain::default();
        }
        let above = match dir.parent() {
            Some(parent) if dir != self.boundary => self.chain(parent),
            _ => Chain::default(),
        };
        let git = dir.join(".git");
        let own = DirIgnores {
            ignore: self.read(dir, &dir.join(".ignore")),
            gitignore: self.read(dir, &dir.join(".gitignore")),
            // A work tree's own `.git` directory; a linked worktree's lives elsewhere.
            exclude: git
                .is_dir()
                .then(|| self.read(dir, &git.join("info/exclude")))
                .flatten(),
        };
        let chain = if own.ignore.is_none() && own.gitignore.is_none() && own.exclude.is_none() {
            above
        } else {
            Arc::new(std::iter::once(Arc::new(own)).chain(above.iter().cloned()).collect())
        };
        self.chains
            .lock()
            .expect("no panics while locked")
            .entry(dir.to_path_buf())
            .or_insert(chain)
            .clone()
    }

    /// The patterns of one ignore file, relative to `dir`; `None` when there is none, or it
    /// cannot be read (with a note: its patterns do not apply, so more is checked, not less).
    /// Lines that are not patterns are passed over, never quoted.
    fn read(&self, dir: &Path, file: &Path) -> Option<Gitignore> {
        let bytes = match crate::files::read_inside(file, crate::files::MAX_CONFIG_SIZE, &self.boundary) {
            Ok(bytes) => bytes,
            Err(e) if e.is_not_found() => return None,
            Err(e) => {
                self.notes.lock().expect("no panics while locked").push(Note {
                    path: display_path(&self.cwd, file),
                    line: None,
                    message: format!("ignore file not read: {e}; the files it lists are checked"),
                });
                return None;
            }
        };
        let mut builder = GitignoreBuilder::new(dir);
        for (number, line) in bytes.split(|b| *b == b'\n').enumerate() {
            let Ok(line) = std::str::from_utf8(line) else { continue };
            let line = line.strip_suffix('\r').unwrap_or(line);
            let line = if number == 0 {
                line.trim_start_matches('\u{feff}')
            } else {
                line
            };
            let _ = builder.add_line(Some(file.to_path_buf()), line);
        }
        builder.build().ok()
    }

    /// The notes, each once (two walker threads may read a directory's files at once).
    fn take_notes(&self) -> Vec<Note> {
        let mut notes = std::mem::take(&mut *self.notes.lock().expect("no panics while locked"));
        notes.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.message.cmp(&b.message)));
        notes.dedup_by(|a, b| a.path == b.path && a.message == b.message);
        notes
    }
}

fn over_size(path: PathBuf, size: u64, config: &Config) -> Note {
    Note {
        path,
        line: None,
        message: format!(
            "skipped: {size} bytes is over the size limit of {} bytes (max-file-size)",
            config.max_file_size
        ),
    }
}

fn skipped_symlink(path: PathBuf) -> Note {
    Note {
        path,
        line: None,
        message:
            "skipped: a symbolic link (its target is checked where it lives, and --fix never writes through a link)"
                .into(),
    }
}

fn not_regular(path: PathBuf, what: &str) -> Note {
    Note {
        path,
        line: None,
        message: format!("skipped: not a regular file ({what})"),
    }
}

/// The note for a symbolic link the walk meets: one with a source file's name (whatever it
/// leads to: a file, nothing, a loop), one to a directory, and a loop of links.
fn walked_symlink(cwd: &Path, path: &Path) -> Option<Note> {
    let target = std::fs::metadata(path);
    #[cfg(unix)]
    let looped = target.as_ref().err().and_then(std::io::Error::raw_os_error) == Some(libc::ELOOP);
    #[cfg(not(unix))]
    let looped = false;
    let noted = Language::from_path(path).is_some() || target.is_ok_and(|m| m.is_dir()) || looped;
    noted.then(|| skipped_symlink(display_path(cwd, path)))
}

/// A file whose name is not UTF-8 but ends like a source file: skipped, with a note.
fn odd_name(cwd: &Path, path: &Path) -> Option<Note> {
    let name = path.file_name()?;
    if name.to_str().is_some() {
        return None;
    }
    let lossy = name.to_string_lossy();
    let extension = lossy.rsplit_once('.')?.1;
    let known = [
        "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "svelte", "vue", "rs", "sql",
    ];
    known.contains(&extension).then(|| Note {
        path: display_path(cwd, path),
        line: None,
        message: "skipped: the file name is not valid UTF-8".into(),
    })
}

/// The path an error of the walker is about, when it names one.
fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

/// The error without the path it names (the note names it).
fn error_message(error: &ignore::Error) -> String {
    match error {
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => error_message(err),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_files_match_as_the_walker_matched_them() {
        let dir = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap();
        let root = top.join("project");
        for (path, text) in [
            // Above the boundary: never read.
            (".gitignore", "*.ts\n"),
            ("project/.gitignore", "*.gen.ts\n/build/\n"),
            // The deepest match wins; `.ignore` wins over `.gitignore`.
            ("project/src/.gitignore", "!keep.gen.ts\n!skip.ts\n"),
            ("project/src/.ignore", "skip.ts\n"),
            ("project/.git/info/exclude", "local.ts\n"),
        ] {
            std::fs::create_dir_all(top.join(path).parent().unwrap()).unwrap();
            std::fs::write(top.join(path), text).unwrap();
        }
        let ignores = IgnoreFiles::new(root.clone(), top.clone());
        let ignored = |path: &str, is_dir: bool| ignores.is_ignored(&root.join(path), is_dir);
        assert!(!ignored("src/a.ts", false));
        assert!(ignored("src/a.gen.ts", false));
        assert!(!ignored("src/keep.gen.ts", false));
        assert!(ignored("src/skip.ts", false));
        assert!(ignored("build", true));
        assert!(!ignored("src/build", true), "anchored to its own directory");
        assert!(ignored("src/local.ts", false));
        assert!(ignores.take_notes().is_empty());
    }
}
