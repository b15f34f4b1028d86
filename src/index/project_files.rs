//! What the index reads beside the source files, once per directory: the nearest
//! `package.json` (Effect's version), `tsconfig.json` (module aliases) and Cloudflare
//! `wrangler` config (queue redeliveries). Read during the index stage, never by rules, and
//! only inside the project's boundary (its git root, else its root; links resolved): a
//! tsconfig `extends` or a package.json that leads elsewhere is not read, and unknown.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::resolve::PackageJson;
use super::tsconfig::{Project, Workspace, CONFIG_NAMES};

/// Per-directory answers, cached: the nearest file of each kind above a directory.
#[derive(Default)]
pub struct ProjectFiles {
    effect_versions: Mutex<HashMap<PathBuf, Option<u8>>>,
    /// Each tsconfig.json / jsconfig.json read, by path.
    projects: Mutex<HashMap<PathBuf, Option<Arc<Project>>>>,
    /// The config file of each directory (tsconfig.json, else jsconfig.json).
    config_files: Mutex<HashMap<PathBuf, Option<PathBuf>>>,
    /// Each directory's package.json.
    packages: Mutex<HashMap<PathBuf, Option<Arc<PackageJson>>>>,
    wrangler: Mutex<HashMap<PathBuf, Option<Option<u64>>>>,
    /// The crate names each directory's `Cargo.toml` gives its library, by directory.
    cargo_names: Mutex<HashMap<PathBuf, Vec<String>>>,
    /// Every package.json above the files is read to find them: kept with the rest.
    workspace: std::sync::OnceLock<WorkspacePackages>,
    /// Where project JSON may be read: the boundaries of the run's configs (their git roots,
    /// else their roots), links resolved.
    boundaries: std::sync::RwLock<Vec<PathBuf>>,
}

impl ProjectFiles {
    /// Lets project JSON be read inside these boundaries too.
    pub fn allow(&self, boundaries: &[PathBuf]) {
        let mut allowed = self.boundaries.write().unwrap_or_else(|e| e.into_inner());
        for boundary in boundaries {
            let boundary = std::fs::canonicalize(boundary).unwrap_or_else(|_| boundary.clone());
            if !allowed.contains(&boundary) {
                allowed.push(boundary);
            }
        }
    }

    fn boundaries(&self) -> Vec<PathBuf> {
        self.boundaries.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Effect's version line for files in `dir`, as an
    /// [`crate::effect_version::EffectVersion::code`]: the `effect` of the nearest
    /// `package.json` that declares it (installed, locked or declared); 0, unknown, when none
    /// does (every line's names are understood then).
    pub fn effect_major(&self, dir: &Path, boundary: &Path) -> u8 {
        nearest(&self.effect_versions, dir, boundary, |d| {
            crate::effect_version::package_effect_version(d, boundary).map(|v| v.code())
        })
        .unwrap_or(0)
    }

    /// The workspace's packages, found by `find` on first use.
    pub fn workspace_packages(&self, find: impl FnOnce() -> WorkspacePackages) -> &WorkspacePackages {
        self.workspace.get_or_init(find)
    }

    /// The project that owns `file`, as the editor's TypeScript finds it: the nearest
    /// tsconfig.json (or jsconfig.json) whose files include it, or a project it references
    /// (solution-style configs, depth first), else the same one directory up. `None`: no
    /// project has it (TypeScript's defaults apply). `extra` are the extensions beyond
    /// TypeScript's that a project includes (`.vue`, `.svelte`, as their tooling does).
    pub fn project_for(&self, file: &Path, extra: &[&str], workspace: Workspace) -> Option<Arc<Project>> {
        let mut dir = file.parent();
        while let Some(d) = dir {
            if let Some(config) = self.config_file(d) {
                let mut visited = Vec::new();
                if let Some(project) = self.including(&config, file, extra, workspace, &mut visited) {
                    return Some(project);
                }
            }
            if d.file_name().is_some_and(|n| n == "node_modules") {
                break;
            }
            dir = d.parent();
        }
        None
    }

    fn including(
        &self,
        config: &Path,
        file: &Path,
        extra: &[&str],
        workspace: Workspace,
        visited: &mut Vec<PathBuf>,
    ) -> Option<Arc<Project>> {
        if visited.len() > 64 || visited.iter().any(|v| v == config) {
            return None;
        }
        visited.push(config.to_path_buf());
        let project = self.project(config, workspace)?;
        if project.includes(file, extra) {
            return Some(project);
        }
        project
            .references
            .iter()
            .find_map(|reference| self.including(reference, file, extra, workspace, visited))
    }

    /// The project of one config file, read once.
    fn project(&self, config: &Path, workspace: Workspace) -> Option<Arc<Project>> {
        if let Some(known) = self.projects.lock().unwrap_or_else(|e| e.into_inner()).get(config) {
            return known.clone();
        }
        let project = Project::read(config, workspace, &self.boundaries()).map(Arc::new);
        self.projects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(config.to_path_buf(), project.clone());
        project
    }

    fn config_file(&self, dir: &Path) -> Option<PathBuf> {
        if let Some(known) = self.config_files.lock().unwrap_or_else(|e| e.into_inner()).get(dir) {
            return known.clone();
        }
        let found = CONFIG_NAMES.iter().map(|n| dir.join(n)).find(|p| p.is_file());
        self.config_files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), found.clone());
        found
    }

    /// The package.json of `dir` itself, read once.
    pub fn package_json(&self, dir: &Path) -> Option<Arc<PackageJson>> {
        if let Some(known) = self.packages.lock().unwrap_or_else(|e| e.into_inner()).get(dir) {
            return known.clone();
        }
        let package = super::json::read(&dir.join("package.json"), &self.boundaries()).map(|json| {
            Arc::new(PackageJson {
                dir: dir.to_path_buf(),
                json,
            })
        });
        self.packages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), package.clone());
        package
    }

    /// The queue consumer settings of the nearest Cloudflare `wrangler.toml` /
    /// `wrangler.json(c)` at or below `root`: the largest `max_retries` among its consumers
    /// (Cloudflare's default is 3).
    pub fn wrangler_max_retries(&self, dir: &Path, root: &Path, boundary: &Path) -> Option<u64> {
        nearest(&self.wrangler, dir, root, |d| {
            ["wrangler.toml", "wrangler.jsonc", "wrangler.json"]
                .iter()
                .find_map(|name| {
                    let text =
                        crate::files::read_text_inside(&d.join(name), crate::files::MAX_CONFIG_SIZE, boundary).ok()?;
                    Some(queue_max_retries(name, &text))
                })
        })
        .flatten()
    }
}

impl ProjectFiles {
    /// The names other crates of the workspace write for the library of the Cargo package in
    /// `dir` (its `Cargo.toml` itself, read once): the package's name with `-` as `_`
    /// (`omicron-common` is `omicron_common`) and a `[lib] name` when one is given. None when
    /// there is no `Cargo.toml` there, or it is outside `boundary`.
    pub fn cargo_crate_names(&self, dir: &Path, boundary: &Path) -> Vec<String> {
        if let Some(known) = self.cargo_names.lock().unwrap_or_else(|e| e.into_inner()).get(dir) {
            return known.clone();
        }
        let names = crate::files::read_text_inside(&dir.join("Cargo.toml"), crate::files::MAX_CONFIG_SIZE, boundary)
            .ok()
            .map(|text| cargo_names(&text))
            .unwrap_or_default();
        self.cargo_names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), names.clone());
        names
    }
}

/// The library names a `Cargo.toml` gives: `[lib] name`, and `[package] name` with `-` as `_`.
fn cargo_names(text: &str) -> Vec<String> {
    let Ok(value) = toml::from_str::<toml::Value>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for table in ["lib", "package"] {
        if let Some(name) = value.get(table).and_then(|t| t.get("name")).and_then(|n| n.as_str()) {
            let name = name.replace('-', "_");
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The answer `read` gives for the nearest directory at or above `dir` (and inside `within`)
/// where it gives one, cached for every directory on the way.
fn nearest<T: Clone>(
    cache: &Mutex<HashMap<PathBuf, Option<T>>>,
    dir: &Path,
    within: &Path,
    read: impl Fn(&Path) -> Option<T>,
) -> Option<T> {
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    let mut visited = Vec::new();
    let mut current = Some(dir);
    let mut found = None;
    while let Some(d) = current.filter(|d| d.starts_with(within)) {
        if let Some(known) = cache.get(d) {
            found = known.clone();
            break;
        }
        visited.push(d.to_path_buf());
        if let Some(value) = read(d) {
            found = Some(value);
            break;
        }
        current = d.parent();
    }
    // Directories on the way share the answer, "none" included: a monorepo whose package.json
    // files name no `effect` dependency must not be read again for every file.
    for d in visited {
        cache.insert(d, found.clone());
    }
    found
}

/// The workspace's own packages by name, found from the package.json files above the
/// discovered files (the packages that matter are those holding files the index has), so
/// that `import … from "@app/shared"` resolves into the workspace as the `node_modules` link
/// a package manager makes to it would.
#[derive(Debug, Default)]
pub struct WorkspacePackages {
    packages: HashMap<String, PathBuf>,
}

impl WorkspacePackages {
    /// Reads the package.json of every directory from each file's up to `root` (each inside
    /// `boundary`, links resolved).
    pub fn find<'a>(files: impl Iterator<Item = &'a Path>, root: &Path, boundary: &Path) -> WorkspacePackages {
        let mut seen: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
        let mut packages = HashMap::new();
        for file in files {
            let mut dir = file.parent();
            while let Some(d) = dir {
                if !d.starts_with(root) || !seen.insert(d.to_path_buf()) {
                    break;
                }
                if let Some(json) = super::json::read(&d.join("package.json"), &[boundary.to_path_buf()]) {
                    if let Some(name) = json.get("name").and_then(super::json::Json::as_str) {
                        // Of two packages of one name, the outermost is taken (the other
                        // is a copy inside it: a fixture, a template).
                        let depth = d.components().count();
                        let keep = packages
                            .get(name)
                            .is_some_and(|known: &PathBuf| known.components().count() <= depth);
                        if !keep {
                            packages.insert(name.to_string(), d.to_path_buf());
                        }
                    }
                }
                dir = d.parent();
            }
        }
        WorkspacePackages { packages }
    }

    /// The directory of the innermost named package holding `file`.
    pub fn package_dir(&self, file: &Path) -> Option<&Path> {
        self.packages
            .values()
            .map(PathBuf::as_path)
            .filter(|dir| file.starts_with(dir))
            .max_by_key(|dir| dir.components().count())
    }

    /// The directory of the package named `name`.
    pub fn dir_of(&self, name: &str) -> Option<&Path> {
        self.packages.get(name).map(PathBuf::as_path)
    }
}

/// `max_retries` of the `queues.consumers` in a wrangler config; 3 for a consumer without one.
fn queue_max_retries(name: &str, text: &str) -> Option<u64> {
    let consumers: Vec<serde_json::Value> = if name.ends_with(".toml") {
        let value: toml::Value = toml::from_str(text).ok()?;
        let json = serde_json::to_value(value).ok()?;
        json.get("queues")?.get("consumers")?.as_array()?.clone()
    } else {
        let json: serde_json::Value = serde_json::from_str(&strip_json_comments(text)).ok()?;
        json.get("queues")?.get("consumers")?.as_array()?.clone()
    };
    consumers
        .iter()
        .map(|c| c.get("max_retries").and_then(|m| m.as_u64()).unwrap_or(3))
        .max()
}

/// JSONC to JSON: `//` and `/* */` comments and trailing commas removed, strings kept.
pub(crate) fn strip_json_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            out.push(c);
            if c == b'\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1]);
                i += 2;
                continue;
            }
            in_string = c != b'"';
            i += 1;
        } else if c == b'"' {
            in_string = true;
            out.push(c);
            i += 1;
        } else if bytes[i..].starts_with(b"//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if bytes[i..].starts_with(b"/*") {
            i += 2;
            while i < bytes.len() && !bytes[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if c == b',' {
            // A trailing comma before `}` or `]` is not JSON.
            let next = bytes[i + 1..].iter().find(|b| !b.is_ascii_whitespace());
            if !matches!(next, Some(b'}') | Some(b']')) {
                out.push(c);
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_queue_consumer_retries_from_wrangler_config() {
        let toml = "name = \"api\"\n[[queues.consumers]]\nqueue = \"orders\"\nmax_retries = 8\n";
        assert_eq!(queue_max_retries("wrangler.toml", toml), Some(8));
        let jsonc = "{\n  // comment\n  \"queues\": { \"consumers\": [ { \"queue\": \"a//b\", }, ], },\n}";
        assert_eq!(queue_max_retries("wrangler.jsonc", jsonc), Some(3));
        assert_eq!(queue_max_retries("wrangler.toml", "name = \"x\""), None);
    }

    #[test]
    fn cargo_names_are_the_library_names() {
        assert_eq!(
            cargo_names("[package]\nname = \"omicron-common\"\n"),
            ["omicron_common"]
        );
        assert_eq!(
            cargo_names("[package]\nname = \"svc-common\"\n[lib]\nname = \"common\"\n"),
            ["common", "svc_common"]
        );
        assert!(cargo_names("[workspace]\nmembers = []\n").is_empty());
        assert!(cargo_names("not toml [").is_empty());
    }
}
