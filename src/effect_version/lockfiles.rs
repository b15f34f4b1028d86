//! The lockfiles that say which `effect` a package resolved: `pnpm-lock.yaml` (its importer
//! for the package), `bun.lock` (JSONC text), `package-lock.json` (v1–v3) and `yarn.lock`
//! (classic and berry). Each reader is a pure function of the lockfile's text; reading the
//! files (inside the project's boundary, size-bounded) is the caller's.

use std::path::Path;

use super::linked_or;
use super::yaml::yaml_lookup;

/// pnpm-lock.yaml: `importers.<rel>.<section>.effect.version` (lockfile v6+),
/// `importers.<rel>.<section>.effect` (v5), or the same at the top level for a
/// single-package lockfile.
pub(super) fn pnpm_locked(text: &str, rel: &str) -> Option<String> {
    let sections = ["dependencies", "devDependencies", "optionalDependencies"];
    let mut prefixes: Vec<Vec<&str>> = vec![vec!["importers", rel]];
    if rel == "." {
        prefixes.push(Vec::new());
    }
    for prefix in &prefixes {
        for section in sections {
            let mut path = prefix.clone();
            path.extend([section, "effect"]);
            let mut nested = path.clone();
            nested.push("version");
            if let Some(v) = yaml_lookup(text, &nested).or_else(|| yaml_lookup(text, &path)) {
                return Some(v);
            }
        }
    }
    None
}

/// bun.lock: `packages["<workspace name>/effect"]` (a version only that workspace uses) or
/// `packages.effect`, whose first element is `effect@<version>`.
pub(super) fn bun_locked(
    text: &str,
    rel: &str,
    manifest: &serde_json::Value,
    lock_dir: &Path,
    boundary: &Path,
) -> Option<String> {
    let json: serde_json::Value = serde_json::from_str(&strip_jsonc(text)).ok()?;
    let packages = json.get("packages")?;
    let name = manifest.get("name").and_then(|n| n.as_str());
    let entry = name
        .filter(|_| rel != ".")
        .and_then(|n| packages.get(format!("{n}/effect")))
        .or_else(|| packages.get("effect"))?;
    let resolved = entry.get(0)?.as_str()?;
    let version = resolved.strip_prefix("effect@")?;
    let version = version.strip_prefix("npm:").unwrap_or(version);
    Some(linked_or(version.to_string(), "workspace:", lock_dir, boundary))
}

/// package-lock.json: the `node_modules/effect` Node would find from the package (v2/v3
/// `packages`), or the top-level `dependencies.effect` of a v1 lockfile.
pub(super) fn npm_locked(text: &str, rel: &str, lock_dir: &Path, boundary: &Path) -> Option<String> {
    let json: serde_json::Value = serde_json::from_str(text).ok()?;
    if let Some(packages) = json.get("packages") {
        let mut dir = if rel == "." { String::new() } else { rel.to_string() };
        loop {
            let key = if dir.is_empty() {
                "node_modules/effect".to_string()
            } else {
                format!("{dir}/node_modules/effect")
            };
            if let Some(entry) = packages.get(&key) {
                if entry.get("link").and_then(|l| l.as_bool()) == Some(true) {
                    let target = entry.get("resolved")?.as_str()?;
                    return Some(linked_or(format!("link:{target}"), "link:", lock_dir, boundary));
                }
                return entry.get("version")?.as_str().map(String::from);
            }
            if dir.is_empty() {
                break;
            }
            dir = match dir.rsplit_once('/') {
                Some((parent, _)) => parent.to_string(),
                None => String::new(),
            };
        }
    }
    Some(
        json.get("dependencies")?
            .get("effect")?
            .get("version")?
            .as_str()?
            .to_string(),
    )
}

/// yarn.lock (classic `effect@^3.10.0:` / berry `"effect@npm:^3.10.0":` entries): the entry
/// whose descriptors include the declared range, or the only `effect` entry.
pub(super) fn yarn_locked(text: &str, spec: &str) -> Option<String> {
    let spec = spec.strip_prefix("npm:").unwrap_or(spec);
    let mut entries: Vec<(bool, String)> = Vec::new();
    let mut current: Option<bool> = None;
    for line in text.lines() {
        if !line.starts_with(' ') && !line.starts_with('#') && line.trim_end().ends_with(':') {
            let header = line.trim_end().trim_end_matches(':');
            let mut matches_spec = false;
            let mut is_effect = false;
            for descriptor in header.split(',') {
                let descriptor = descriptor.trim().trim_matches('"');
                let Some(range) = descriptor.strip_prefix("effect@") else {
                    continue;
                };
                is_effect = true;
                let range = range.strip_prefix("npm:").unwrap_or(range);
                matches_spec |= range == spec;
            }
            current = is_effect.then_some(matches_spec);
            continue;
        }
        if let Some(matches_spec) = current {
            let trimmed = line.trim();
            if let Some(version) = trimmed
                .strip_prefix("version:")
                .or_else(|| trimmed.strip_prefix("version "))
            {
                entries.push((matches_spec, version.trim().trim_matches('"').to_string()));
                current = None;
            }
        }
    }
    if let Some((_, version)) = entries.iter().find(|(m, _)| *m) {
        return Some(version.clone());
    }
    match entries.as_slice() {
        [(_, only)] => Some(only.clone()),
        _ => None,
    }
}

/// JSONC (bun.lock) to JSON: comments and trailing commas removed, strings kept.
pub(super) fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            in_string = c != '"';
            i += 1;
        } else if c == '"' {
            in_string = true;
            out.push(c);
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if !matches!(next, Some('}') | Some(']')) {
                out.push(c);
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}
