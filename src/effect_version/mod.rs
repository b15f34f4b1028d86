//! Which `effect` a package uses, and so which `Schedule` API its code is written against.
//!
//! A package is a directory whose `package.json` declares `effect` (in `dependencies`,
//! `devDependencies` or `peerDependencies`). Its version is read from the most precise source
//! first:
//!
//! 1. the installed package: `node_modules/effect/package.json`, looked up from the package
//!    directory upwards as Node resolves it;
//! 2. the lockfile of the package's workspace: `pnpm-lock.yaml` (its importer for the package),
//!    `bun.lock` (text), `package-lock.json` (v1–v3) or `yarn.lock` (classic and berry);
//! 3. the declared range itself, with `catalog:` resolved through the catalogs of
//!    `pnpm-workspace.yaml`, a root `package.json` (bun) or `.yarnrc.yml` (yarn), `workspace:`
//!    through the workspace package named `effect`, and `npm:effect@…` aliases unwrapped.
//!
//! Everything here is a pure function of the files it reads; callers cache.
//!
//! The search goes up from the package directory to the repository boundary: the first
//! directory holding `.git`, or else the project's `boundary` (its git root, else its root;
//! see [`crate::files::boundary`]). Nothing outside the boundary is read, links resolved: a
//! `link:` version, a workspace pattern or a symlinked `node_modules/effect` that leads out
//! of the project is unknown.

use std::path::{Path, PathBuf};

mod lockfiles;
mod yaml;

use lockfiles::{bun_locked, npm_locked, pnpm_locked, yarn_locked};
use yaml::{yaml_list, yaml_lookup};

/// The `Schedule` API lines of `effect`, as far as their code differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EffectVersion {
    /// No `effect` dependency found, or a range that spans lines: the model accepts the names
    /// of every line (the behaviour before versions were read).
    #[default]
    Unknown,
    /// 3.x.
    V3,
    /// `4.0.0-beta.N`: the betas have `both`/`either`/`take`/`andThen` where 4.x has
    /// `max`/`min`/`upTo`/`concat`, and changed along the way (see `schedule::api`).
    V4Beta(u32),
    /// 4.x releases and release candidates; `minor` when the source pins it (`4.0.3`,
    /// `~4.0.1`, a lockfile), not for a range such as `^4.0.0`.
    V4 { minor: Option<u32> },
}

impl EffectVersion {
    /// An exact version, as a lockfile or an installed `package.json` gives it:
    /// `3.19.2`, `4.0.0-beta.66`, `4.0.0-rc.110`, `4.1.0`. pnpm's peer suffixes
    /// (`4.1.0(typescript@5.8.2)`, `3.19.2_typescript@5.8.2`) are ignored.
    pub fn parse_exact(version: &str) -> Option<EffectVersion> {
        let version = version.trim().trim_start_matches(['v', '=']);
        let version = version.split(['(', '_', '+']).next()?.trim();
        let (core, pre) = match version.split_once('-') {
            Some((core, pre)) => (core, Some(pre)),
            None => (version, None),
        };
        let mut parts = core.split('.');
        let major: u32 = parts.next()?.parse().ok()?;
        let minor: u32 = parts.next()?.parse().ok()?;
        let patch: u32 = parts.next()?.parse().ok()?;
        if parts.next().is_some() {
            return None;
        }
        Some(match (major, pre) {
            (3, _) => EffectVersion::V3,
            (4, None) => EffectVersion::V4 { minor: Some(minor) },
            (4, Some(pre)) => {
                let (tag, n) = pre.split_once('.').unwrap_or((pre, ""));
                match (tag, n.parse::<u32>(), minor, patch) {
                    ("beta", Ok(n), 0, 0) => EffectVersion::V4Beta(n),
                    // 4.0.0-rc.N has the 4.0 API.
                    ("rc", Ok(_), 0, 0) => EffectVersion::V4 { minor: Some(0) },
                    _ => EffectVersion::Unknown,
                }
            }
            _ => EffectVersion::Unknown,
        })
    }

    /// The line a declared range allows. A range that can resolve to two lines
    /// (`>=3.0.0`, `^3.0.0 || ^4.0.0`, `^4.0.0-beta.50`, which a 4.x release also satisfies)
    /// is unknown.
    pub fn from_range(spec: &str) -> EffectVersion {
        let spec = spec.trim();
        let spec = spec.strip_prefix("npm:effect@").unwrap_or(spec);
        let mut line = None;
        for alternative in spec.split("||") {
            let Some(this) = alternative_line(alternative) else {
                return EffectVersion::Unknown;
            };
            match line {
                None => line = Some(this),
                Some(previous) if previous == this => {}
                Some(_) => return EffectVersion::Unknown,
            }
        }
        line.unwrap_or(EffectVersion::Unknown)
    }

    /// A one-byte form of the version for the schedule evaluator's `version: u8` parameter,
    /// kept so that the evaluator's signatures stay as they were: `0` unknown, `3` = 3.x,
    /// `4` = 4.x from 4.1 on (or a 4.x range), `40` = 4.0.x releases and candidates,
    /// `100 + N` = `4.0.0-beta.N` (N up to 155; the betas ended at 107).
    pub fn code(self) -> u8 {
        match self {
            EffectVersion::Unknown => 0,
            EffectVersion::V3 => 3,
            EffectVersion::V4 { minor: Some(0) } => 40,
            EffectVersion::V4 { .. } => 4,
            EffectVersion::V4Beta(n) => 100 + n.min(155) as u8,
        }
    }

    /// The inverse of [`EffectVersion::code`] (a 4.x minor other than 0 comes back as `None`).
    pub fn from_code(code: u8) -> EffectVersion {
        match code {
            3 => EffectVersion::V3,
            4 => EffectVersion::V4 { minor: None },
            40 => EffectVersion::V4 { minor: Some(0) },
            100.. => EffectVersion::V4Beta(u32::from(code - 100)),
            _ => EffectVersion::Unknown,
        }
    }

    /// For messages: `effect 3.x`, `effect 4.0.0-beta.66`, `effect 4.x`.
    pub fn label(self) -> String {
        match self {
            EffectVersion::Unknown => "effect (version unknown)".into(),
            EffectVersion::V3 => "effect 3.x".into(),
            EffectVersion::V4Beta(n) => format!("effect 4.0.0-beta.{n}"),
            EffectVersion::V4 { minor: Some(m) } => format!("effect 4.{m}.x"),
            EffectVersion::V4 { minor: None } => "effect 4.x".into(),
        }
    }
}

/// One `||` alternative of a range: its comparators must agree on a line.
fn alternative_line(alternative: &str) -> Option<EffectVersion> {
    // `3.0.0 - 3.9.0` (a hyphen range) is two comparators.
    let tokens: Vec<&str> = alternative.split_whitespace().filter(|t| *t != "-").collect();
    let (mut lower, mut upper) = (None, None);
    let mut decided = None;
    for token in &tokens {
        let (op, version) = split_operator(token);
        let partial = Partial::parse(version)?;
        match op {
            ">=" | ">" => lower = Some(partial),
            "<" | "<=" => upper = Some((partial, op)),
            // `^`, `~`, `=`, or a bare version.
            _ => {
                let line = partial.line(op)?;
                if decided.is_some_and(|d| d != line) {
                    return None;
                }
                decided = Some(line);
            }
        }
    }
    if decided.is_some() {
        return if lower.is_none() && upper.is_none() {
            decided
        } else {
            None
        };
    }
    // `>=3.10.0 <4.0.0`: both bounds in the same line.
    let (lower, (upper, op)) = (lower?, upper?);
    if lower.pre.is_some() {
        return None;
    }
    let lower_line = lower.line("^")?;
    let same = match op {
        "<" => {
            upper.major == lower.major + 1 && upper.minor.unwrap_or(0) == 0 && upper.patch.unwrap_or(0) == 0
                || upper.major == lower.major
        }
        _ => upper.major == lower.major,
    };
    same.then_some(lower_line)
}

fn split_operator(token: &str) -> (&str, &str) {
    for op in [">=", "<=", ">", "<", "^", "~", "="] {
        if let Some(rest) = token.strip_prefix(op) {
            return (op, rest.trim_start_matches('v'));
        }
    }
    ("", token.trim_start_matches('v'))
}

/// `3`, `3.x`, `3.10`, `3.10.2`, `4.0.0-beta.66`.
struct Partial {
    major: u32,
    minor: Option<u32>,
    patch: Option<u32>,
    pre: Option<String>,
}

impl Partial {
    fn parse(text: &str) -> Option<Partial> {
        let (core, pre) = match text.split_once('-') {
            Some((core, pre)) => (core, Some(pre.to_string())),
            None => (text, None),
        };
        let mut parts = core.split('.');
        let number = |p: Option<&str>| -> Option<Option<u32>> {
            match p {
                None | Some("x" | "X" | "*") => Some(None),
                Some(n) => n.parse().ok().map(Some),
            }
        };
        let major = number(parts.next())??;
        let minor = number(parts.next())?;
        let patch = number(parts.next())?;
        Some(Partial {
            major,
            minor,
            patch,
            pre,
        })
    }

    /// The line `op version` allows, if one.
    fn line(&self, op: &str) -> Option<EffectVersion> {
        match self.major {
            3 => Some(EffectVersion::V3),
            4 => {
                if let Some(pre) = &self.pre {
                    // Only an exact prerelease pins the line: `^4.0.0-beta.66` admits 4.x.
                    if !matches!(op, "" | "=") {
                        return None;
                    }
                    let version = format!("4.{}.{}-{pre}", self.minor.unwrap_or(0), self.patch.unwrap_or(0));
                    return EffectVersion::parse_exact(&version);
                }
                let minor = match op {
                    "^" => None,
                    _ => self.minor,
                };
                Some(EffectVersion::V4 { minor })
            }
            _ => None,
        }
    }
}

/// The version of `effect` for code in `dir`: the nearest `package.json` that declares
/// `effect`, resolved as [`package_effect_version`] does. Unknown when none does.
pub fn effect_version_for(dir: &Path, boundary: &Path) -> EffectVersion {
    search_dirs(dir, boundary)
        .iter()
        .find_map(|d| package_effect_version(d, boundary))
        .unwrap_or_default()
}

/// The version of `effect` the package in `pkg_dir` uses, or `None` when its `package.json`
/// (if any) does not declare `effect`.
pub fn package_effect_version(pkg_dir: &Path, boundary: &Path) -> Option<EffectVersion> {
    let manifest = read_json(&pkg_dir.join("package.json"), boundary)?;
    let spec = declared_spec(&manifest)?;
    let dirs = search_dirs(pkg_dir, boundary);
    if let Some(version) = installed(&dirs, boundary) {
        return Some(version);
    }
    for dir in &dirs {
        if let Some(version) = locked(dir, pkg_dir, &manifest, &spec, boundary) {
            return Some(version);
        }
    }
    Some(from_spec(&spec, &dirs, boundary))
}

/// The `effect` entry of a manifest: `dependencies`, then `devDependencies`, then
/// `peerDependencies` (often a broad range).
fn declared_spec(manifest: &serde_json::Value) -> Option<String> {
    ["dependencies", "devDependencies", "peerDependencies"]
        .iter()
        .find_map(|section| Some(manifest.get(section)?.get("effect")?.as_str()?.to_string()))
}

/// `start` and its ancestors inside `boundary`, up to the first holding `.git`.
fn search_dirs(start: &Path, boundary: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in start.ancestors().take_while(|d| d.starts_with(boundary)) {
        dirs.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            break;
        }
    }
    dirs
}

fn installed(dirs: &[PathBuf], boundary: &Path) -> Option<EffectVersion> {
    dirs.iter().find_map(|d| {
        let manifest = read_json(&d.join("node_modules/effect/package.json"), boundary)?;
        let version = manifest.get("version")?.as_str()?;
        Some(EffectVersion::parse_exact(version).unwrap_or_default())
    })
}

/// What the lockfiles in `lock_dir` say the package in `pkg_dir` resolved `effect` to.
fn locked(
    lock_dir: &Path,
    pkg_dir: &Path,
    manifest: &serde_json::Value,
    spec: &str,
    boundary: &Path,
) -> Option<EffectVersion> {
    let rel = relative(lock_dir, pkg_dir)?;
    let read = |name: &str| {
        crate::files::read_text_inside(&lock_dir.join(name), crate::files::MAX_LOCKFILE_SIZE, boundary).ok()
    };
    let version = read("pnpm-lock.yaml")
        .and_then(|text| pnpm_locked(&text, &rel))
        .map(|v| linked_or(v, "link:", &lock_dir.join(&rel), boundary))
        .or_else(|| read("bun.lock").and_then(|text| bun_locked(&text, &rel, manifest, lock_dir, boundary)))
        .or_else(|| read("package-lock.json").and_then(|text| npm_locked(&text, &rel, lock_dir, boundary)))
        .or_else(|| read("yarn.lock").and_then(|text| yarn_locked(&text, spec)))?;
    Some(EffectVersion::parse_exact(&version).unwrap_or_default())
}

/// `pkg_dir` relative to `lock_dir` with `/` separators: `.` for the same directory.
fn relative(lock_dir: &Path, pkg_dir: &Path) -> Option<String> {
    let rel = pkg_dir.strip_prefix(lock_dir).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(if parts.is_empty() { ".".into() } else { parts.join("/") })
}

/// A `link:` / `workspace:` / `file:` version is a path to the package: its own version.
fn linked_or(version: String, prefix: &str, base: &Path, boundary: &Path) -> String {
    match version.strip_prefix(prefix) {
        Some(path) => read_json(&base.join(path).join("package.json"), boundary)
            .and_then(|m| m.get("version")?.as_str().map(String::from))
            .unwrap_or_default(),
        None => version,
    }
}

/// The declared range, with `catalog:` and `workspace:` resolved.
fn from_spec(spec: &str, dirs: &[PathBuf], boundary: &Path) -> EffectVersion {
    if let Some(name) = spec.strip_prefix("catalog:") {
        return match catalog_entry(name.trim(), dirs, boundary) {
            Some(range) => EffectVersion::from_range(&range),
            None => EffectVersion::Unknown,
        };
    }
    if let Some(rest) = spec.strip_prefix("workspace:") {
        if let Some(version) = workspace_effect(dirs, boundary) {
            return EffectVersion::parse_exact(&version).unwrap_or_default();
        }
        // `workspace:^3.10.0` carries a range; `workspace:*`/`^`/`~` do not.
        return match rest {
            "*" | "^" | "~" => EffectVersion::Unknown,
            range => EffectVersion::from_range(range),
        };
    }
    EffectVersion::from_range(spec)
}

/// The range a catalog gives `effect`: `""`/`default` is the default catalog.
fn catalog_entry(name: &str, dirs: &[PathBuf], boundary: &Path) -> Option<String> {
    let default = name.is_empty() || name == "default";
    for dir in dirs {
        // pnpm-workspace.yaml and yarn's .yarnrc.yml share the shape.
        for file in ["pnpm-workspace.yaml", ".yarnrc.yml"] {
            if let Some(text) = read_text(&dir.join(file), boundary) {
                let found = if default {
                    yaml_lookup(&text, &["catalog", "effect"])
                        .or_else(|| yaml_lookup(&text, &["catalogs", "default", "effect"]))
                } else {
                    yaml_lookup(&text, &["catalogs", name, "effect"])
                };
                if found.is_some() {
                    return found;
                }
            }
        }
        // bun: `catalog`/`catalogs` at the top of the root package.json or in `workspaces`.
        if let Some(manifest) = read_json(&dir.join("package.json"), boundary) {
            for holder in [Some(&manifest), manifest.get("workspaces")].into_iter().flatten() {
                let found = if default {
                    holder.get("catalog").and_then(|c| c.get("effect"))
                } else {
                    holder
                        .get("catalogs")
                        .and_then(|c| c.get(name))
                        .and_then(|c| c.get("effect"))
                };
                if let Some(range) = found.and_then(|f| f.as_str()) {
                    return Some(range.to_string());
                }
            }
        }
    }
    None
}

/// The version of the workspace package named `effect` (the `workspace:` protocol).
fn workspace_effect(dirs: &[PathBuf], boundary: &Path) -> Option<String> {
    for dir in dirs {
        let mut patterns: Vec<String> = Vec::new();
        if let Some(text) = read_text(&dir.join("pnpm-workspace.yaml"), boundary) {
            patterns.extend(yaml_list(&text, "packages"));
        }
        if let Some(manifest) = read_json(&dir.join("package.json"), boundary) {
            let list = match manifest.get("workspaces") {
                Some(serde_json::Value::Array(items)) => Some(items.clone()),
                Some(other) => other.get("packages").and_then(|p| p.as_array()).cloned(),
                None => None,
            };
            patterns.extend(list.into_iter().flatten().filter_map(|p| p.as_str().map(String::from)));
        }
        for pattern in &patterns {
            for candidate in expand_workspace_pattern(dir, pattern, boundary) {
                if let Some(manifest) = read_json(&candidate.join("package.json"), boundary) {
                    if manifest.get("name").and_then(|n| n.as_str()) == Some("effect") {
                        return manifest.get("version")?.as_str().map(String::from);
                    }
                }
            }
        }
    }
    None
}

/// `packages/*`, `packages/**` (two levels) or a literal directory; only directories inside
/// `boundary` are listed (`../../*` names none).
fn expand_workspace_pattern(dir: &Path, pattern: &str, boundary: &Path) -> Vec<PathBuf> {
    let pattern = pattern.trim_start_matches("./");
    if pattern.starts_with('!') {
        return Vec::new();
    }
    let subdirs = |d: &Path| -> Vec<PathBuf> {
        let Ok(d) = crate::files::inside(d, boundary) else {
            return Vec::new();
        };
        std::fs::read_dir(d)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n != "node_modules"))
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(base) = pattern.strip_suffix("/**") {
        let first = subdirs(&dir.join(base));
        let mut out = first.clone();
        for d in &first {
            out.extend(subdirs(d));
        }
        return out;
    }
    if let Some(base) = pattern.strip_suffix("/*") {
        return subdirs(&dir.join(base));
    }
    if pattern.contains('*') {
        return Vec::new();
    }
    vec![dir.join(pattern)]
}

/// A manifest or workspace file inside `boundary`, if it reads (see [`crate::files::read_inside`]).
fn read_text(path: &Path, boundary: &Path) -> Option<String> {
    crate::files::read_text_inside(path, crate::files::MAX_CONFIG_SIZE, boundary).ok()
}

fn read_json(path: &Path, boundary: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&read_text(path, boundary)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use EffectVersion::*;

    #[test]
    fn exact_versions() {
        assert_eq!(EffectVersion::parse_exact("3.19.2"), Some(V3));
        assert_eq!(EffectVersion::parse_exact("4.0.0-beta.66"), Some(V4Beta(66)));
        assert_eq!(
            EffectVersion::parse_exact("4.0.0-beta.66(typescript@5.8.2)"),
            Some(V4Beta(66))
        );
        assert_eq!(EffectVersion::parse_exact("4.0.0-rc.110"), Some(V4 { minor: Some(0) }));
        assert_eq!(EffectVersion::parse_exact("4.1.0"), Some(V4 { minor: Some(1) }));
        assert_eq!(EffectVersion::parse_exact("2.4.0"), Some(Unknown));
        assert_eq!(EffectVersion::parse_exact("link:../effect"), None);
    }

    #[test]
    fn ranges() {
        assert_eq!(EffectVersion::from_range("^3.10.0"), V3);
        assert_eq!(EffectVersion::from_range("~3.19"), V3);
        assert_eq!(EffectVersion::from_range("3.x"), V3);
        assert_eq!(EffectVersion::from_range(">=3.10.0 <4.0.0"), V3);
        assert_eq!(EffectVersion::from_range(">=3.10.0"), Unknown);
        assert_eq!(EffectVersion::from_range("^3.0.0 || ^4.0.0"), Unknown);
        assert_eq!(EffectVersion::from_range("4.0.0-beta.66"), V4Beta(66));
        assert_eq!(EffectVersion::from_range("npm:effect@4.0.0-beta.66"), V4Beta(66));
        assert_eq!(EffectVersion::from_range("^4.0.0-beta.66"), Unknown);
        assert_eq!(EffectVersion::from_range("^4.0.0"), V4 { minor: None });
        assert_eq!(EffectVersion::from_range("~4.0.3"), V4 { minor: Some(0) });
        assert_eq!(EffectVersion::from_range("4.1.0"), V4 { minor: Some(1) });
        assert_eq!(EffectVersion::from_range("latest"), Unknown);
        assert_eq!(EffectVersion::from_range("*"), Unknown);
    }

    #[test]
    fn codes_round_trip() {
        for v in [
            Unknown,
            V3,
            V4Beta(66),
            V4Beta(107),
            V4 { minor: Some(0) },
            V4 { minor: None },
        ] {
            assert_eq!(EffectVersion::from_code(v.code()), v);
        }
        assert_eq!(
            EffectVersion::from_code(V4 { minor: Some(1) }.code()),
            V4 { minor: None }
        );
    }

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let full = dir.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
    }

    fn version_in(files: &[(&str, &str)], package: &str) -> EffectVersion {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), files);
        let package = if package == "." {
            dir.path().to_path_buf()
        } else {
            dir.path().join(package)
        };
        let root = dir.path().canonicalize().unwrap();
        let package = root.join(package.strip_prefix(dir.path()).unwrap());
        effect_version_for(&package.join("src"), &root)
    }

    #[test]
    fn package_json_ranges() {
        assert_eq!(
            version_in(&[("package.json", r#"{"dependencies":{"effect":"^3.10.0"}}"#)], "."),
            V3
        );
        assert_eq!(
            version_in(
                &[("package.json", r#"{"peerDependencies":{"effect":"4.0.0-beta.66"}}"#)],
                "."
            ),
            V4Beta(66)
        );
        assert_eq!(version_in(&[("package.json", r#"{"name":"x"}"#)], "."), Unknown);
    }

    #[test]
    fn installed_package_beats_lockfile_and_range() {
        let files = [
            ("package.json", r#"{"dependencies":{"effect":"^4.0.0-beta.50"}}"#),
            (
                "package-lock.json",
                r#"{"packages":{"node_modules/effect":{"version":"4.0.0-beta.60"}}}"#,
            ),
            (
                "node_modules/effect/package.json",
                r#"{"name":"effect","version":"4.0.0-beta.66"}"#,
            ),
        ];
        assert_eq!(version_in(&files, "."), V4Beta(66));
        assert_eq!(version_in(&files[..2], "."), V4Beta(60));
        assert_eq!(version_in(&files[..1], "."), Unknown);
    }

    const PNPM_WORKSPACE: &str = "packages:\n  - 'packages/*'\ncatalog:\n  effect: ^3.10.0\ncatalogs:\n  next:\n    effect: 4.0.0-beta.60 # pinned\n";

    #[test]
    fn pnpm_lockfile_importers_and_catalogs() {
        let lock = "lockfileVersion: '9.0'\n\ncatalogs:\n  default:\n    effect:\n      specifier: ^3.10.0\n      version: 3.19.2\n\nimporters:\n\n  .:\n    devDependencies:\n      typescript:\n        specifier: ^5.8.0\n        version: 5.8.2\n\n  packages/api:\n    dependencies:\n      '@effect/platform':\n        specifier: ^0.90.0\n        version: 0.90.0(effect@3.19.2)\n      effect:\n        specifier: 'catalog:next'\n        version: 4.0.0-beta.66(typescript@5.8.2)\n\n  packages/web:\n    dependencies:\n      effect:\n        specifier: 'catalog:'\n        version: 3.19.2\n\npackages:\n\n  effect@3.19.2:\n    resolution: {integrity: sha512-x}\n";
        let api = (
            "packages/api/package.json",
            r#"{"name":"api","dependencies":{"effect":"catalog:next"}}"#,
        );
        let web = (
            "packages/web/package.json",
            r#"{"name":"web","dependencies":{"effect":"catalog:"}}"#,
        );
        let files = [
            ("pnpm-workspace.yaml", PNPM_WORKSPACE),
            api,
            web,
            ("pnpm-lock.yaml", lock),
        ];
        assert_eq!(version_in(&files, "packages/api"), V4Beta(66));
        assert_eq!(version_in(&files, "packages/web"), V3);
        // Without the lockfile, the catalogs decide.
        assert_eq!(version_in(&files[..3], "packages/api"), V4Beta(60));
        assert_eq!(version_in(&files[..3], "packages/web"), V3);
        // A v5 lockfile keeps the version inline.
        let v5 = "lockfileVersion: 5.4\nimporters:\n  packages/api:\n    specifiers:\n      effect: catalog:next\n    dependencies:\n      effect: 4.0.0-beta.64\n";
        assert_eq!(version_in(&[api, ("pnpm-lock.yaml", v5)], "packages/api"), V4Beta(64));
    }

    #[test]
    fn bun_lockfile_and_catalog() {
        let root = r#"{"name":"root","workspaces":{"packages":["apps/*"],"catalog":{"effect":"^3.12.0"},"catalogs":{"v4":{"effect":"4.1.0"}}}}"#;
        let lock = r#"{
  // bun.lock is JSONC
  "lockfileVersion": 1,
  "workspaces": { "": { "name": "root" }, "apps/api": { "name": "api", "dependencies": { "effect": "catalog:v4" } }, },
  "packages": {
    "effect": ["effect@3.19.2", "", {}, "sha512-a"],
    "api/effect": ["effect@4.0.0-beta.66", "", {}, "sha512-b"],
  },
}"#;
        let api = (
            "apps/api/package.json",
            r#"{"name":"api","dependencies":{"effect":"catalog:v4"}}"#,
        );
        let web = (
            "apps/web/package.json",
            r#"{"name":"web","dependencies":{"effect":"catalog:"}}"#,
        );
        let files = [("package.json", root), api, web, ("bun.lock", lock)];
        assert_eq!(version_in(&files, "apps/api"), V4Beta(66));
        assert_eq!(version_in(&files, "apps/web"), V3);
        assert_eq!(version_in(&files[..3], "apps/api"), V4 { minor: Some(1) });
        assert_eq!(version_in(&files[..3], "apps/web"), V3);
    }

    #[test]
    fn npm_lockfile_nested_and_hoisted() {
        let lock = r#"{"lockfileVersion":3,"packages":{"":{"workspaces":["packages/*"]},
            "node_modules/effect":{"version":"3.19.2"},
            "packages/api/node_modules/effect":{"version":"4.0.0-beta.66"}}}"#;
        let api = (
            "packages/api/package.json",
            r#"{"dependencies":{"effect":"4.0.0-beta.66"}}"#,
        );
        let web = ("packages/web/package.json", r#"{"dependencies":{"effect":"^3.0.0"}}"#);
        let files = [("package-lock.json", lock), api, web];
        assert_eq!(version_in(&files, "packages/api"), V4Beta(66));
        assert_eq!(version_in(&files, "packages/web"), V3);
    }

    #[test]
    fn yarn_lockfiles() {
        let classic = "# yarn lockfile v1\n\n\"@effect/platform@^0.90.0\":\n  version \"0.90.0\"\n\neffect@^3.10.0, effect@^3.12.0:\n  version \"3.19.2\"\n  resolved \"https://x\"\n\neffect@4.0.0-beta.66:\n  version \"4.0.0-beta.66\"\n";
        let berry = "__metadata:\n  version: 8\n\n\"effect@npm:^4.0.0-beta.60\":\n  version: 4.0.0-beta.66\n  resolution: \"effect@npm:4.0.0-beta.66\"\n";
        let pkg = |spec: &str| format!(r#"{{"dependencies":{{"effect":"{spec}"}}}}"#);
        assert_eq!(
            version_in(&[("package.json", &pkg("^3.12.0")), ("yarn.lock", classic)], "."),
            V3
        );
        assert_eq!(
            version_in(&[("package.json", &pkg("4.0.0-beta.66")), ("yarn.lock", classic)], "."),
            V4Beta(66)
        );
        assert_eq!(
            version_in(&[("package.json", &pkg("^4.0.0-beta.60")), ("yarn.lock", berry)], "."),
            V4Beta(66)
        );
        // yarn catalogs live in .yarnrc.yml.
        let rc = "nodeLinker: node-modules\ncatalog:\n  effect: ^3.14.0\n";
        assert_eq!(
            version_in(&[("package.json", &pkg("catalog:")), (".yarnrc.yml", rc)], "."),
            V3
        );
    }

    #[test]
    fn workspace_protocol_reads_the_workspace_package() {
        let files = [
            ("pnpm-workspace.yaml", "packages:\n  - packages/*\n"),
            (
                "packages/effect/package.json",
                r#"{"name":"effect","version":"4.0.0-beta.66"}"#,
            ),
            (
                "packages/app/package.json",
                r#"{"dependencies":{"effect":"workspace:^"}}"#,
            ),
        ];
        assert_eq!(version_in(&files, "packages/app"), V4Beta(66));
        let lock = "lockfileVersion: '9.0'\nimporters:\n  packages/app:\n    dependencies:\n      effect:\n        specifier: workspace:^\n        version: link:../effect\n";
        let mut with_lock = files.to_vec();
        with_lock[0] = ("pnpm-lock.yaml", lock);
        assert_eq!(version_in(&with_lock, "packages/app"), V4Beta(66));
    }
}
