//! What the index reads beside the source files, once per directory: the nearest
//! `package.json` (Effect's version), `tsconfig.json` (module aliases) and Cloudflare
//! `wrangler` config (queue redeliveries). Read during the index stage, never by rules, and
//! only inside the project's boundary (its git root, else its root; links resolved): a
//! tsconfig `extends` or a package.json that leads elsewhere is not read, and unknown.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::source::normalize;

/// Per-directory answers, cached: the nearest file of each kind above a directory.
#[derive(Default)]
pub struct ProjectFiles {
    effect_versions: Mutex<HashMap<PathBuf, Option<u8>>>,
    tsconfigs: Mutex<HashMap<PathBuf, Option<Option<Arc<TsPaths>>>>>,
    wrangler: Mutex<HashMap<PathBuf, Option<Option<u64>>>>,
    /// Every package.json above the files is read to find them: kept with the rest.
    workspace: std::sync::OnceLock<WorkspacePackages>,
}

impl ProjectFiles {
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

    /// The `compilerOptions.paths` / `baseUrl` of the tsconfig.json nearest to `dir`, inside
    /// `boundary`.
    pub fn tsconfig_paths(&self, dir: &Path, boundary: &Path) -> Option<Arc<TsPaths>> {
        nearest(&self.tsconfigs, dir, boundary, |d| {
            let config = d.join("tsconfig.json");
            config.is_file().then(|| TsPaths::read(&config, boundary).map(Arc::new))
        })
        .flatten()
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

/// A tsconfig's module aliases: `baseUrl` and `paths` (`"@/*": ["src/*"]`), as TypeScript
/// reads them: a config without its own takes them from what it `extends` (relative paths; a
/// published base such as `@tsconfig/node20` is not read), and a solution config
/// (`"files": [], "references": [...]`, the layout Effect's own templates use) takes those of
/// every project it references, in order. What cannot be read is unknown, and unknown is silent.
#[derive(Debug, Default)]
pub struct TsPaths {
    groups: Vec<PathGroup>,
}

/// The aliases of one config: `paths` relative to `base`, which is `baseUrl` when set.
#[derive(Debug)]
struct PathGroup {
    base: PathBuf,
    paths: Vec<(String, Vec<String>)>,
    has_base_url: bool,
}

/// How deep `extends` and `references` are followed: a cycle or an absurd chain stops here.
const MAX_TSCONFIG_DEPTH: usize = 8;

impl TsPaths {
    fn read(path: &Path, boundary: &Path) -> Option<TsPaths> {
        let mut groups = Vec::new();
        read_tsconfig(path, 0, &mut groups, boundary);
        (!groups.is_empty()).then_some(TsPaths { groups })
    }

    /// The module paths `specifier` may name, most specific alias first.
    pub fn targets(&self, specifier: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for group in &self.groups {
            for (pattern, targets) in &group.paths {
                let captured = match pattern.split_once('*') {
                    None => (pattern == specifier).then_some(""),
                    Some((prefix, suffix)) => specifier
                        .strip_prefix(prefix)
                        .and_then(|rest| rest.strip_suffix(suffix))
                        .filter(|_| specifier.len() >= prefix.len() + suffix.len()),
                };
                if let Some(captured) = captured {
                    out.extend(
                        targets
                            .iter()
                            .map(|t| normalize(&group.base.join(t.replacen('*', captured, 1)))),
                    );
                }
            }
        }
        for group in self.groups.iter().filter(|g| g.has_base_url) {
            out.push(normalize(&group.base.join(specifier)));
        }
        out
    }
}

/// Adds the alias groups `path` defines or inherits to `groups` (configs inside `boundary`).
fn read_tsconfig(path: &Path, depth: usize, groups: &mut Vec<PathGroup>, boundary: &Path) {
    if depth > MAX_TSCONFIG_DEPTH {
        return;
    }
    let Some(json) = read_json(path, boundary) else { return };
    let Some(dir) = path.parent() else { return };
    let options = json.get("compilerOptions");
    let base_url = options.and_then(|o| o.get("baseUrl")).and_then(|b| b.as_str());
    let paths = options.and_then(|o| o.get("paths")).and_then(|p| p.as_object());
    if base_url.is_some() || paths.is_some() {
        let paths = paths
            .into_iter()
            .flatten()
            .map(|(pattern, targets)| {
                let targets = targets
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.as_str().map(String::from))
                    .collect();
                (pattern.clone(), targets)
            })
            .collect();
        groups.push(PathGroup {
            base: normalize(&dir.join(base_url.unwrap_or("."))),
            paths,
            has_base_url: base_url.is_some(),
        });
        return;
    }
    // `extends`: a string or (TypeScript 5) a list; the last one wins, so it is read first.
    let extends: Vec<&str> = match json.get("extends") {
        Some(serde_json::Value::String(one)) => vec![one.as_str()],
        Some(serde_json::Value::Array(many)) => many.iter().rev().filter_map(|v| v.as_str()).collect(),
        _ => Vec::new(),
    };
    for base in extends.into_iter().filter(|b| b.starts_with('.')) {
        let mut target = normalize(&dir.join(base));
        if target.extension().is_none_or(|e| e != "json") {
            target.set_extension("json");
        }
        let before = groups.len();
        read_tsconfig(&target, depth + 1, groups, boundary);
        if groups.len() > before {
            return;
        }
    }
    for reference in json.get("references").and_then(|r| r.as_array()).into_iter().flatten() {
        let Some(referenced) = reference.get("path").and_then(|p| p.as_str()) else {
            continue;
        };
        let target = normalize(&dir.join(referenced));
        let target = if target.extension().is_some_and(|e| e == "json") {
            target
        } else {
            target.join("tsconfig.json")
        };
        read_tsconfig(&target, depth + 1, groups, boundary);
    }
}

/// A JSON or JSONC file inside `boundary`, if it reads and parses.
pub(crate) fn read_json(path: &Path, boundary: &Path) -> Option<serde_json::Value> {
    let text = crate::files::read_text_inside(path, crate::files::MAX_CONFIG_SIZE, boundary).ok()?;
    serde_json::from_str(&strip_json_comments(&text)).ok()
}

/// The workspace's own packages by name, found from the package.json files above the
/// discovered files (the packages that matter are those holding files the index has), so
/// that `import … from "@app/shared"` resolves into the workspace like a relative import.
#[derive(Debug, Default)]
pub struct WorkspacePackages {
    packages: HashMap<String, Package>,
}

#[derive(Debug)]
struct Package {
    dir: PathBuf,
    exports: Option<serde_json::Value>,
    /// `main`, `module`, `types`, `source`: the entry without `exports`.
    entries: Vec<String>,
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
                if let Some(json) = read_json(&d.join("package.json"), boundary) {
                    if let Some(name) = json.get("name").and_then(|n| n.as_str()) {
                        let entries = ["source", "types", "typings", "module", "main"]
                            .iter()
                            .filter_map(|key| json.get(key).and_then(|v| v.as_str()).map(String::from))
                            .collect();
                        packages.insert(
                            name.to_string(),
                            Package {
                                dir: d.to_path_buf(),
                                exports: json.get("exports").cloned(),
                                entries,
                            },
                        );
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
            .map(|p| p.dir.as_path())
            .filter(|dir| file.starts_with(dir))
            .max_by_key(|dir| dir.components().count())
    }

    /// The module paths a bare specifier (`@app/shared`, `@app/shared/retry`) may name, best
    /// first: the targets of its package's `exports` (or `main`/`types`, then `src/index`),
    /// each also as the source a build output was compiled from (`dist/x.js` → `src/x`).
    pub fn entry_candidates(&self, specifier: &str) -> Vec<PathBuf> {
        let Some((package, subpath)) = self.packages.iter().find_map(|(name, package)| {
            let rest = specifier.strip_prefix(name.as_str())?;
            match rest.strip_prefix('/') {
                Some(sub) => Some((package, sub)),
                None if rest.is_empty() => Some((package, "")),
                None => None,
            }
        }) else {
            return Vec::new();
        };
        let mut targets: Vec<String> = Vec::new();
        match &package.exports {
            Some(exports) => export_targets(exports, subpath, &mut targets),
            None if subpath.is_empty() => targets.extend(package.entries.iter().cloned()),
            None => targets.push(subpath.to_string()),
        }
        if subpath.is_empty() {
            targets.extend(["src/index", "index"].map(String::from));
        } else {
            targets.push(format!("src/{subpath}"));
        }
        let mut out = Vec::new();
        for target in targets {
            let path = normalize(&package.dir.join(target.trim_start_matches("./")));
            out.push(path.clone());
            if let Some(source) = compiled_from(&package.dir, &path) {
                out.push(source);
            }
        }
        out
    }
}

/// The string targets `exports` gives for `subpath` ("" for the package itself), in the
/// order of the conditions a bundler tries, source-like conditions first.
fn export_targets(exports: &serde_json::Value, subpath: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    let key = if subpath.is_empty() {
        ".".to_string()
    } else {
        format!("./{subpath}")
    };
    match exports {
        Value::String(_) | Value::Array(_) if subpath.is_empty() => leaves(exports, out),
        Value::Object(map) if map.keys().any(|k| k.starts_with('.')) => {
            if let Some(value) = map.get(&key) {
                return leaves(value, out);
            }
            // `"./*": "./src/*.ts"`: the longest matching pattern.
            let mut best: Option<(&str, &Value, usize)> = None;
            for (pattern, value) in map {
                let Some((prefix, suffix)) = pattern.split_once('*') else {
                    continue;
                };
                let matches =
                    key.starts_with(prefix) && key.ends_with(suffix) && key.len() >= prefix.len() + suffix.len();
                if matches && best.is_none_or(|(_, _, len)| prefix.len() > len) {
                    let captured = &key[prefix.len()..key.len() - suffix.len()];
                    best = Some((captured, value, prefix.len()));
                }
            }
            if let Some((captured, value, _)) = best {
                let mut found = Vec::new();
                leaves(value, &mut found);
                out.extend(found.into_iter().map(|t| t.replace('*', captured)));
            }
        }
        // Conditions for the package itself: `{ "import": "./dist/index.js", … }`.
        Value::Object(_) if subpath.is_empty() => leaves(exports, out),
        _ => {}
    }
}

/// Every string in a conditional export, source-like conditions first.
fn leaves(value: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
        Value::Object(map) => {
            const ORDER: &[&str] = &[
                "source",
                "development",
                "types",
                "import",
                "module",
                "default",
                "require",
            ];
            for key in ORDER {
                if let Some(v) = map.get(*key) {
                    leaves(v, out);
                }
            }
            for (key, v) in map {
                if !ORDER.contains(&key.as_str()) {
                    leaves(v, out);
                }
            }
        }
        _ => {}
    }
}

/// The source file a build output was compiled from, by the usual layout: `dist/`, `build/`,
/// `lib/` or `out/` mirror `src/`, and a declaration file `x.d.ts` stands for `x.ts`.
fn compiled_from(package: &Path, output: &Path) -> Option<PathBuf> {
    let relative = output.strip_prefix(package).ok()?;
    let mut components = relative.components();
    let first = components.next()?.as_os_str().to_str()?;
    let rest = components.as_path();
    let mut source = if matches!(first, "dist" | "build" | "lib" | "out") {
        package.join("src").join(rest)
    } else {
        output.to_path_buf()
    };
    let name = source.file_name()?.to_str()?.to_string();
    for declaration in [".d.ts", ".d.mts", ".d.cts"] {
        if let Some(stem) = name.strip_suffix(declaration) {
            source.set_file_name(format!("{stem}.ts"));
        }
    }
    (source != output).then_some(source)
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
fn strip_json_comments(text: &str) -> String {
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
    fn package_exports_give_their_targets_and_sources() {
        let exports: serde_json::Value = serde_json::from_str(
            r#"{ ".": { "types": "./dist/index.d.ts", "import": "./dist/index.js" },
                 "./retry": "./src/retry.ts",
                 "./*": { "import": "./dist/*.js" } }"#,
        )
        .unwrap();
        let mut out = Vec::new();
        export_targets(&exports, "", &mut out);
        assert_eq!(out, ["./dist/index.d.ts", "./dist/index.js"]);
        out.clear();
        export_targets(&exports, "retry", &mut out);
        assert_eq!(out, ["./src/retry.ts"]);
        out.clear();
        export_targets(&exports, "infra/policies", &mut out);
        assert_eq!(out, ["./dist/infra/policies.js"]);
        let package = Path::new("/w/packages/shared");
        assert_eq!(
            compiled_from(package, &package.join("dist/index.d.ts")),
            Some(package.join("src/index.ts"))
        );
        assert_eq!(
            compiled_from(package, &package.join("dist/x.js")),
            Some(package.join("src/x.js"))
        );
        assert_eq!(compiled_from(package, &package.join("src/x.ts")), None);
    }

    #[test]
    fn reads_queue_consumer_retries_from_wrangler_config() {
        let toml = "name = \"api\"\n[[queues.consumers]]\nqueue = \"orders\"\nmax_retries = 8\n";
        assert_eq!(queue_max_retries("wrangler.toml", toml), Some(8));
        let jsonc = "{\n  // comment\n  \"queues\": { \"consumers\": [ { \"queue\": \"a//b\", }, ], },\n}";
        assert_eq!(queue_max_retries("wrangler.jsonc", jsonc), Some(3));
        assert_eq!(queue_max_retries("wrangler.toml", "name = \"x\""), None);
    }
}
