//! Benchmark baseline (bench/run.sh): discovers files as `retrylint check` does, then reads and
//! parses every one of them with the same tree-sitter grammars on a rayon pool, and nothing else
//! (`.sql` files, which retrylint scans as text, are read but not parsed).
//!
//! `cargo run --release --example parse_only -- DIR... [--read-only]`
//! `--read-only` reads every file without parsing it; `--list` prints the discovered paths.
//! Prints one line: `files=N bytes=N parsed=N error_trees=N`.

use std::path::PathBuf;
use std::sync::Mutex;

use rayon::prelude::*;
use retrylint::extract::parse;
use retrylint::source::Language;

/// retrylint's default `max-file-size`: larger files are skipped there, so here too.
const MAX_FILE_SIZE: u64 = 1_048_576;

fn main() {
    let (mut read_only, mut list) = (false, false);
    let mut dirs = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--read-only" => read_only = true,
            "--list" => list = true,
            _ => dirs.push(PathBuf::from(arg)),
        }
    }
    if dirs.is_empty() {
        eprintln!("usage: parse_only DIR... [--read-only] [--list]");
        std::process::exit(2);
    }

    // The walk of retrylint's discovery: ignore files, hidden entries, node_modules,
    // declaration files (Language::from_path) and the size limit.
    let found: Mutex<Vec<(PathBuf, Language)>> = Mutex::new(Vec::new());
    for dir in &dirs {
        ignore::WalkBuilder::new(dir)
            .hidden(true)
            .git_ignore(true)
            .git_exclude(true)
            .ignore(true)
            .require_git(false)
            .filter_entry(|entry| entry.file_name() != "node_modules")
            .build_parallel()
            .run(|| {
                Box::new(|entry| {
                    let Ok(entry) = entry else {
                        return ignore::WalkState::Continue;
                    };
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        return ignore::WalkState::Continue;
                    }
                    let Some(language) = Language::from_path(entry.path()) else {
                        return ignore::WalkState::Continue;
                    };
                    if entry.metadata().map(|m| m.len()).unwrap_or(0) <= MAX_FILE_SIZE {
                        found.lock().unwrap().push((entry.path().to_path_buf(), language));
                    }
                    ignore::WalkState::Continue
                })
            });
    }
    let mut files = found.into_inner().unwrap();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    if list {
        for (path, _) in &files {
            println!("{}", path.display());
        }
    }

    // (bytes, parsed, trees with errors) per file, summed.
    let (bytes, parsed, error_trees) = files
        .par_iter()
        .map(|(path, language)| {
            let Ok(text) = std::fs::read(path) else {
                return (0, 0, 0);
            };
            if read_only {
                return (text.len(), 0, 0);
            }
            match parse(*language, &text) {
                Some(tree) => (text.len(), 1, usize::from(tree.root_node().has_error())),
                None => (text.len(), 0, 0),
            }
        })
        .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    println!(
        "files={} bytes={bytes} parsed={parsed} error_trees={error_trees}",
        files.len()
    );
}
