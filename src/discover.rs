//! Discovery: which files to look at. The `ignore` crate walks in parallel, honours
//! `.gitignore` and `.ignore`, and skips hidden entries; we add `node_modules`, declaration
//! files, the size limit, the config's include/exclude globs and its `tests` globs (test code is
//! not held to the production policy; one note says how many files that skipped).

use std::path::PathBuf;
use std::sync::Mutex;

use miette::{miette, Report};

use crate::config::Config;
use crate::source::{display_path, Language, Note, SourceFile};

#[derive(Debug, Default)]
pub struct Discovery {
    pub files: Vec<SourceFile>,
    pub notes: Vec<Note>,
    /// Test files skipped, in no particular order.
    pub tests: Vec<PathBuf>,
}

pub fn discover(paths: &[PathBuf], config: &Config) -> Result<Discovery, Report> {
    let cwd = std::env::current_dir().map_err(|e| miette!("cannot read the current directory: {e}"))?;
    let found = Mutex::new(Discovery::default());
    for path in paths {
        let absolute = std::fs::canonicalize(path).map_err(|e| {
            miette!(
                help = "check the path, or run from the project root",
                "cannot check {}: {e}",
                path.display()
            )
        })?;
        // A symbolic link is skipped with a note: `--fix` would write through it, and its
        // target is checked where it lives.
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) && absolute.is_file() {
            let mut found = found.lock().expect("no panics while locked");
            found.notes.push(skipped_symlink(display_path(&cwd, &cwd.join(path))));
            continue;
        }
        if absolute.is_file() {
            // An explicitly named file is checked even if ignore files would skip it; test code
            // is still test code (lint-staged names every staged file).
            if config.is_test(&absolute) {
                found
                    .lock()
                    .expect("no panics while locked")
                    .tests
                    .push(display_path(&cwd, &absolute));
                continue;
            }
            // The size limit holds for a file named on the command line too.
            let size = std::fs::metadata(&absolute).map(|m| m.len()).unwrap_or(0);
            if size > config.max_file_size && Language::from_path(&absolute).is_some() {
                found.lock().expect("no panics while locked").notes.push(over_size(
                    display_path(&cwd, &absolute),
                    size,
                    config,
                ));
                continue;
            }
            if let Some(note) = odd_name(&cwd, &absolute) {
                found.lock().expect("no panics while locked").notes.push(note);
                continue;
            }
            if let Some(language) = Language::from_path(&absolute) {
                let file = SourceFile {
                    path: display_path(&cwd, &absolute),
                    absolute,
                    language,
                };
                found.lock().expect("no panics while locked").files.push(file);
            }
            continue;
        }
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
                        found.lock().expect("no panics while locked").notes.push(Note {
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
                        found.lock().expect("no panics while locked").notes.push(note);
                    }
                    return ignore::WalkState::Continue;
                }
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return ignore::WalkState::Continue;
                }
                if let Some(note) = odd_name(&cwd, entry_path) {
                    found.lock().expect("no panics while locked").notes.push(note);
                    return ignore::WalkState::Continue;
                }
                let Some(language) = Language::from_path(entry_path) else {
                    return ignore::WalkState::Continue;
                };
                if !config.is_included(entry_path) {
                    return ignore::WalkState::Continue;
                }
                let shown = display_path(&cwd, entry_path);
                if config.is_test(entry_path) {
                    found.lock().expect("no panics while locked").tests.push(shown);
                    return ignore::WalkState::Continue;
                }
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                let mut found = found.lock().expect("no panics while locked");
                // A large JSON or YAML file is a lockfile or a data dump, never RS2 configuration:
                // skipped without a note.
                if size > config.max_file_size && matches!(language, Language::Json | Language::Yaml) {
                    return ignore::WalkState::Continue;
                }
                if size > config.max_file_size {
                    found.notes.push(over_size(shown, size, config));
                } else {
                    found.files.push(SourceFile {
                        path: shown,
                        absolute: entry_path.to_path_buf(),
                        language,
                    });
                }
                ignore::WalkState::Continue
            })
        });
    }
    let mut discovery = found.into_inner().expect("no panics while locked");
    discovery.files.sort_by(|a, b| a.absolute.cmp(&b.absolute));
    discovery.files.dedup_by(|a, b| a.absolute == b.absolute);
    discovery.tests.sort();
    discovery.tests.dedup();
    if let Some(first) = discovery.tests.first() {
        let count = discovery.tests.len();
        discovery.notes.push(Note {
            path: display_path(&cwd, &config.root),
            line: None,
            message: format!(
                "skipped {count} test file{} (the `tests` globs), such as {}; set tests = [] to check them",
                if count == 1 { "" } else { "s" },
                first.display()
            ),
        });
    }
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
