//! The block-style YAML that lockfiles and workspace files are written in (`pnpm-lock.yaml`,
//! `pnpm-workspace.yaml`, `.yarnrc.yml`): one key path of nested mappings, or one top-level
//! list, read line by line. Not a YAML parser, on purpose: a lookup reads one key of a lockfile
//! that may be megabytes long, for every package of a workspace, and must stay linear on
//! hostile input (no recursion, no document built); tree-sitter-yaml, which the RS2 configs are
//! read with, aborts on very deep indentation. What this does not understand (flow mappings,
//! anchors, multi-line scalars) answers nothing, and the version is then read from the next
//! source (the declared range).

/// The scalar at a key path of a block-style YAML document (the subset lockfiles and
/// workspace files use: nested mappings, quoted or plain keys and scalars, `#` comments).
pub(super) fn yaml_lookup(text: &str, path: &[&str]) -> Option<String> {
    let mut stack: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') || content.starts_with('-') {
            continue;
        }
        let indent = line.len() - content.len();
        let Some((key, value)) = yaml_key_value(content) else {
            continue;
        };
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        stack.push((indent, key));
        if stack.len() == path.len() && stack.iter().zip(path).all(|((_, k), p)| k == p) && !value.is_empty() {
            return Some(value);
        }
    }
    None
}

/// The items of a top-level block sequence: `packages:\n  - "apps/*"`.
pub(super) fn yaml_list(text: &str, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if line.len() == content.len() && !content.starts_with('-') {
            inside = yaml_key_value(content).is_some_and(|(k, _)| k == key);
            continue;
        }
        if inside {
            if let Some(item) = content.strip_prefix('-') {
                out.push(unquote(strip_comment(item.trim())).to_string());
            }
        }
    }
    out
}

/// `key: value` with the key and value unquoted (the value empty for a nested mapping).
pub(super) fn yaml_key_value(content: &str) -> Option<(String, String)> {
    let (key, rest) = if let Some(quote @ ('"' | '\'')) = content.chars().next() {
        let end = content[1..].find(quote)? + 1;
        (&content[1..end], content[end + 1..].strip_prefix(':')?)
    } else {
        let at = content
            .find(": ")
            .or_else(|| content.ends_with(':').then(|| content.len() - 1))?;
        (&content[..at], &content[at + 1..])
    };
    Some((key.trim().to_string(), unquote(strip_comment(rest.trim())).to_string()))
}

pub(super) fn strip_comment(value: &str) -> &str {
    if value.starts_with('"') || value.starts_with('\'') {
        return value;
    }
    value.split(" #").next().unwrap_or(value).trim()
}

pub(super) fn unquote(value: &str) -> &str {
    let value = value.trim();
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote).and_then(|v| v.strip_suffix(quote)) {
            return inner;
        }
    }
    value
}
