//! Path arithmetic that never touches the file system.

use std::path::{Component, Path, PathBuf};

/// Lexically normalises `a/b/../c` to `a/c`.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `path` relative to `cwd` when it is inside it, else as given.
pub fn display_path(cwd: &Path, path: &Path) -> PathBuf {
    match path.strip_prefix(cwd) {
        // The working directory itself: `.`, never an empty path in a message.
        Ok(rest) if rest.as_os_str().is_empty() => PathBuf::from("."),
        Ok(rest) => rest.to_path_buf(),
        Err(_) => path.to_path_buf(),
    }
}

/// An import specifier from directory `from` to file `to`: `../../infra/retry.ts`, `./retry.ts`.
pub fn relative_specifier(from: &Path, to: &Path) -> Option<String> {
    let from: Vec<_> = from.components().collect();
    let to_parts: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to_parts).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = Vec::new();
    for _ in common..from.len() {
        parts.push("..".into());
    }
    for part in &to_parts[common..] {
        parts.push(part.as_os_str().to_str()?.to_string());
    }
    let joined = parts.join("/");
    Some(if joined.starts_with("..") {
        joined
    } else {
        format!("./{joined}")
    })
}
