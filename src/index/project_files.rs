//! What the index reads beside the source files, once per directory: the nearest
//! `package.json` (Effect's version), `tsconfig.json` (module aliases) and Cloudflare
//! `wrangler` config (queue redeliveries). Read during the index stage, never by rules.

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
}

impl ProjectFiles {
    /// Effect's version line for files in `dir`, as an
    /// [`crate::effect_version::EffectVersion::code`]: the `effect` of the nearest
    /// `package.json` that declares it (installed, locked or declared); 0, unknown, when none
    /// does (every line's names are understood then).
    pub fn effect_major(&self, dir: &Path, root: &Path) -> u8 {
        nearest(&self.effect_versions, dir, None, |d| {
            crate::effect_version::package_effect_version(d, root).map(|v| v.code())
        })
        .unwrap_or(0)
    }

    /// The `compilerOptions.paths` / `baseUrl` of the tsconfig.json nearest to `dir`.
    pub fn tsconfig_paths(&self, dir: &Path) -> Option<Arc<TsPaths>> {
        nearest(&self.tsconfigs, dir, None, |d| {
            let config = d.join("tsconfig.json");
            config.is_file().then(|| TsPaths::read(&config).map(Arc::new))
        })
        .flatten()
    }

    /// The queue consumer settings of the nearest Cloudflare `wrangler.toml` /
    /// `wrangler.json(c)` at or below `root`: the largest `max_retries` among its consumers
    /// (Cloudflare's default is 3).
    pub fn wrangler_max_retries(&self, dir: &Path, root: &Path) -> Option<u64> {
        nearest(&self.wrangler, dir, Some(root), |d| {
            ["wrangler.toml", "wrangler.jsonc", "wrangler.json"]
                .iter()
                .find_map(|name| {
                    let text = std::fs::read_to_string(d.join(name)).ok()?;
                    Some(queue_max_retries(name, &text))
                })
        })
        .flatten()
    }
}

/// The answer `read` gives for the nearest directory at or above `dir` (and at or below
/// `stop`) where it gives one, cached for every directory on the way.
fn nearest<T: Clone>(
    cache: &Mutex<HashMap<PathBuf, Option<T>>>,
    dir: &Path,
    stop: Option<&Path>,
    read: impl Fn(&Path) -> Option<T>,
) -> Option<T> {
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    let mut visited = Vec::new();
    let mut current = Some(dir);
    let mut found = None;
    while let Some(d) = current {
        if let Some(known) = cache.get(d) {
            found = known.clone();
            break;
        }
        visited.push(d.to_path_buf());
        if let Some(value) = read(d) {
            found = Some(value);
            break;
        }
        if stop == Some(d) {
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

/// A tsconfig's module aliases: `baseUrl` and `paths` (`"@/*": ["src/*"]`). `extends` is not
/// followed: an alias defined only in a base config is unknown, and unknown is silent.
#[derive(Debug)]
pub struct TsPaths {
    base: PathBuf,
    paths: Vec<(String, Vec<String>)>,
    has_base_url: bool,
}

impl TsPaths {
    fn read(path: &Path) -> Option<TsPaths> {
        let text = std::fs::read_to_string(path).ok()?;
        let json: serde_json::Value = serde_json::from_str(&strip_json_comments(&text)).ok()?;
        let options = json.get("compilerOptions")?;
        let dir = path.parent()?;
        let base_url = options.get("baseUrl").and_then(|b| b.as_str());
        let paths: Vec<(String, Vec<String>)> = options
            .get("paths")
            .and_then(|p| p.as_object())
            .map(|map| {
                map.iter()
                    .map(|(pattern, targets)| {
                        let targets = targets
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|t| t.as_str().map(String::from))
                            .collect();
                        (pattern.clone(), targets)
                    })
                    .collect()
            })
            .unwrap_or_default();
        if base_url.is_none() && paths.is_empty() {
            return None;
        }
        Some(TsPaths {
            base: normalize(&dir.join(base_url.unwrap_or("."))),
            paths,
            has_base_url: base_url.is_some(),
        })
    }

    /// The module paths `specifier` may name, most specific alias first.
    pub fn targets(&self, specifier: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for (pattern, targets) in &self.paths {
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
                        .map(|t| normalize(&self.base.join(t.replacen('*', captured, 1)))),
                );
            }
        }
        if self.has_base_url {
            out.push(normalize(&self.base.join(specifier)));
        }
        out
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
    use super::queue_max_retries;

    #[test]
    fn reads_queue_consumer_retries_from_wrangler_config() {
        let toml = "name = \"api\"\n[[queues.consumers]]\nqueue = \"orders\"\nmax_retries = 8\n";
        assert_eq!(queue_max_retries("wrangler.toml", toml), Some(8));
        let jsonc = "{\n  // comment\n  \"queues\": { \"consumers\": [ { \"queue\": \"a//b\", }, ], },\n}";
        assert_eq!(queue_max_retries("wrangler.jsonc", jsonc), Some(3));
        assert_eq!(queue_max_retries("wrangler.toml", "name = \"x\""), None);
    }
}
