//! Discovery: which files to look at. The `ignore` crate walks in parallel, honours
//! `.gitignore` and `.ignore`, and skips hidden entries; we add `node_modules`, declaration
//! files, the size limit, the config's include/exclude globs and its `tests` globs (test code is
//! not held to the production policy; one note says how many files that skipped).

use std::path::PathBuf;
use std::sync::Mutex;

use miette::{miette, Report};

use crate::config::{Config, Configs, CONFIG_FILE};
use crate::source::{display_path, Language, Note, SourceFile};

#[derive(Debug, Default)]
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
struct Candidate {
    absolute: PathBuf,
    language: Language,
    size: u64,
    /// Named on the command line: checked even if an ignore file or `include` would skip it.
    explicit: bool,
}

/// Finds the files to check under `paths`. Package configs (`retrylint.toml` files below the
/// root, when the root config was found by the project-root rule) are loaded into `configs`
/// as the walk meets them; each file is filtered by the settings of the config nearest to it.
pub fn discover(paths: &[PathBuf], configs: &mut Configs) -> Result<Discovery, Report> {
    let cwd = std::env::current_dir().map_err(|e| miette!("cannot read the current directory: {e}"))?;
    let candidates = Mutex::new(Vec::new());
    let config_files = Mutex::new(Vec::new());
    // What the walk skipped and says so: unreadable directories, links, odd names.
    let notes: Mutex<Vec<Note>> = Mutex::new(Vec::new());
    for path in paths {
        let absolute = crate::config::canonical_path(path, "check the path, or run from the project root", "")?;
        // A symbolic link is skipped with a note: `--fix` would write through it, and its
        // target is checked where it lives.
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) && absolute.is_file() {
            let note = skipped_symlink(display_path(&cwd, &cwd.join(path)));
            notes.lock().expect("no panics while locked").push(note);
            continue;
        }
        if absolute.is_file() {
            if let Some(note) = odd_name(&cwd, &absolute) {
                notes.lock().expect("no panics while locked").push(note);
                continue;
            }
            config_files
                .lock()
                .expect("no panics while locked")
                .extend(configs.configs_above(&absolute));
            if let Some(language) = Language::from_path(&absolute) {
                let size = std::fs::metadata(&absolute).map(|m| m.len()).unwrap_or(0);
                candidates.lock().expect("no panics while locked").push(Candidate {
                    absolute,
                    language,
                    size,
                    explicit: true,
                });
            }
            continue;
        }
        // A directory outside the root: the config of its own project applies to it.
        config_files
            .lock()
            .expect("no panics while locked")
            .extend(configs.configs_above(&absolute.join(CONFIG_FILE)));
        let walker = ignore::WalkBuilder::new(&absolute)
            .hidden(true)
            .git_ignore(true)
            .git_exclude(true)
            .ignore(true)
            .require_git(false)
            .filter_entry(|entry| entry.file_name() != "node_modules")
            .build_parallel();
        walker.run(|| {
            Box::new(|entry| {
                let entry = match entry {
                    Ok(entry) => entry,
                    // An unreadable directory (or file) is a skipped file: never silently.
                    Err(error) => {
                        let path = error_path(&error).map_or_else(|| cwd.clone(), |p| display_path(&cwd, p));
                        notes.lock().expect("no panics while locked").push(Note {
                            path,
                            line: None,
                            message: format!("skipped: cannot read: {}", error_message(&error)),
                        });
                        return ignore::WalkState::Continue;
                    }
                };
                let entry_path = entry.path();
                if entry.file_type().is_some_and(|t| t.is_symlink()) {
                    if (entry_path.is_file() && Language::from_path(entry_path).is_some()) || entry_path.is_dir() {
                        let note = skipped_symlink(display_path(&cwd, entry_path));
                        notes.lock().expect("no panics while locked").push(note);
                    }
                    return ignore::WalkState::Continue;
                }
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return ignore::WalkState::Continue;
                }
                if let Some(note) = odd_name(&cwd, entry_path) {
                    notes.lock().expect("no panics while locked").push(note);
                    return ignore::WalkState::Continue;
                }
                if entry.file_name() == CONFIG_FILE {
                    config_files
                        .lock()
                        .expect("no panics while locked")
                        .push(entry_path.to_path_buf());
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
    }
    // Package configs first (in a stable order, so the first malformed one is always the one
    // reported), then each file with the settings of its own.
    let mut config_files = config_files.into_inner().expect("no panics while locked");
    config_files.sort();
    config_files.dedup();
    configs.add_nested(config_files, &crate::rules::names())?;
    let mut candidates = candidates.into_inner().expect("no panics while locked");
    candidates.sort_by(|a, b| a.absolute.cmp(&b.absolute).then(b.explicit.cmp(&a.explicit)));
    candidates.dedup_by(|a, b| a.absolute == b.absolute);
    let mut discovery = Discovery {
        notes: notes.into_inner().expect("no panics while locked"),
        ..Discovery::default()
    };
    for candidate in candidates {
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
    Ok(discovery)
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

/// A file whose name is not UTF-8 but ends like a source file: skipped, with a note.
fn odd_name(cwd: &std::path::Path, path: &std::path::Path) -> Option<Note> {
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
fn error_path(error: &ignore::Error) -> Option<&std::path::Path> {
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
