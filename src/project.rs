//! The cross-file index: every discovered file, its facts (parsed eagerly when the prefilter
//! says the file can matter, lazily when resolution needs it), and import resolution.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::config::Config;
use crate::discover::{normalize, SourceFile};
use crate::extract;
use crate::facts::{Export, Expr, FileFacts, ImportKind, Note, Span};

pub type FileId = usize;

/// How deep re-export chains and binding aliases are followed.
const MAX_RESOLVE_DEPTH: usize = 16;

pub struct Project {
    pub config: Config,
    pub sources: Vec<SourceFile>,
    facts: Vec<OnceLock<FileFacts>>,
    by_absolute: HashMap<PathBuf, FileId>,
    /// Each file's retry policies with their summaries, computed once for all rules.
    policies: Vec<OnceLock<Vec<crate::policy::Policy>>>,
    /// Effect's major version by directory, from the nearest `package.json`.
    effect_versions: Mutex<HashMap<PathBuf, u8>>,
    retry_modules: OnceLock<Vec<FileId>>,
    /// The nearest tsconfig.json's path aliases, by directory.
    tsconfigs: Mutex<HashMap<PathBuf, Option<std::sync::Arc<TsPaths>>>>,
    suppressions: Vec<OnceLock<Vec<crate::suppress::Suppression>>>,
    /// Texts that replace the disk's: editor buffers, fixes being applied.
    overlay: HashMap<PathBuf, Vec<u8>>,
}

/// What a name or member path refers to.
#[derive(Debug, Clone, Copy)]
pub enum Resolved<'p> {
    /// A top-level binding of a module, or a property of an object literal bound there.
    Value {
        file: FileId,
        name: &'p str,
        /// Where the value is defined, for labels.
        span: Span,
        value: &'p Expr,
    },
    /// A whole module, as `import * as X` or `export * as X` give it.
    Namespace(FileId),
    /// Not something the index can see: a parameter, a package, an unresolved path.
    Unknown,
}

impl Project {
    pub fn new(config: Config, sources: Vec<SourceFile>) -> Project {
        let by_absolute = sources
            .iter()
            .enumerate()
            .map(|(id, s)| (s.absolute.clone(), id))
            .collect();
        let facts = sources.iter().map(|_| OnceLock::new()).collect();
        let policies = sources.iter().map(|_| OnceLock::new()).collect();
        let suppressions = sources.iter().map(|_| OnceLock::new()).collect();
        Project {
            config,
            sources,
            facts,
            by_absolute,
            policies,
            effect_versions: Mutex::new(HashMap::new()),
            retry_modules: OnceLock::new(),
            tsconfigs: Mutex::new(HashMap::new()),
            suppressions,
            overlay: HashMap::new(),
        }
    }

    /// A project whose files are read from `overlay` (canonical path → text) where present.
    pub fn with_overlay(config: Config, sources: Vec<SourceFile>, overlay: HashMap<PathBuf, Vec<u8>>) -> Project {
        let mut project = Project::new(config, sources);
        project.overlay = overlay;
        project
    }

    /// A project over files already extracted in memory (editor buffers, tests).
    pub fn from_memory(config: Config, files: Vec<(SourceFile, FileFacts)>) -> Project {
        let (sources, facts): (Vec<SourceFile>, Vec<FileFacts>) = files.into_iter().unzip();
        let project = Project::new(config, sources);
        for (id, facts) in facts.into_iter().enumerate() {
            let _ = project.facts[id].set(facts);
        }
        project
    }

    /// Reads and extracts `file` now (the parallel parse phase calls this for every file the
    /// prefilter keeps). Returns whether the file was parsed. Suppression comments are
    /// recorded for every file, parsed or not.
    pub fn load(&self, file: FileId, prefilter: bool) -> bool {
        if self.facts[file].get().is_some() {
            return true;
        }
        let source = &self.sources[file];
        let text = match self.read(file) {
            Ok(text) => text,
            Err(facts) => {
                let _ = self.facts[file].set(*facts);
                return true;
            }
        };
        let _ = self.suppressions[file].set(crate::suppress::scan(&text));
        if prefilter && !self.is_retry_module(file) && !extract::is_relevant(source.language, &text) {
            return false;
        }
        let facts = extract_isolated(source, &text);
        let _ = self.facts[file].set(facts);
        true
    }

    /// The file's text: the overlay's (an unsaved editor buffer, a fix in progress) or the
    /// disk's. An unreadable file becomes facts holding a note.
    fn read(&self, file: FileId) -> Result<std::borrow::Cow<'_, [u8]>, Box<FileFacts>> {
        let source = &self.sources[file];
        if let Some(text) = self.overlay.get(&source.absolute) {
            return Ok(std::borrow::Cow::Borrowed(text));
        }
        std::fs::read(&source.absolute)
            .map(std::borrow::Cow::Owned)
            .map_err(|e| {
                let mut facts = FileFacts::new(source.path.clone(), source.language, b"");
                facts.notes.push(Note {
                    path: source.path.clone(),
                    line: None,
                    message: format!("skipped: cannot read: {e}"),
                });
                Box::new(facts)
            })
    }

    /// The current text of a file, as the analysis saw it (overlay first).
    pub fn text(&self, file: FileId) -> Option<Vec<u8>> {
        self.read(file).ok().map(|t| t.into_owned())
    }

    /// The suppression comments of a file (scanned when it was read).
    pub fn suppressions(&self, file: FileId) -> &[crate::suppress::Suppression] {
        self.suppressions[file].get_or_init(|| match self.read(file) {
            Ok(text) => crate::suppress::scan(&text),
            Err(_) => Vec::new(),
        })
    }

    /// The facts of a file, parsing it on first use.
    pub fn facts(&self, file: FileId) -> &FileFacts {
        self.facts[file].get_or_init(|| {
            let source = &self.sources[file];
            match self.read(file) {
                Ok(text) => extract_isolated(source, &text),
                Err(facts) => *facts,
            }
        })
    }

    /// Facts already parsed, without parsing.
    pub fn parsed(&self, file: FileId) -> Option<&FileFacts> {
        self.facts[file].get()
    }

    pub fn is_retry_module(&self, file: FileId) -> bool {
        self.config.is_retry_module(&self.sources[file].absolute)
    }

    /// The files the config names as retry modules.
    pub fn retry_modules(&self) -> &[FileId] {
        self.retry_modules
            .get_or_init(|| (0..self.sources.len()).filter(|&f| self.is_retry_module(f)).collect())
    }

    pub fn is_repository_path(&self, file: FileId) -> bool {
        self.config.is_repository_path(&self.sources[file].absolute)
    }

    pub fn path(&self, file: FileId) -> &Path {
        &self.sources[file].path
    }

    /// Resolves an import specifier from `from` to a discovered file: relative paths with or
    /// without extension (`./retry`, `./retry.js`), and directory barrels (`./infra` →
    /// `./infra/index.ts`). Package imports are not resolved.
    pub fn resolve_module(&self, from: FileId, specifier: &str) -> Option<FileId> {
        let dir = self.sources[from].absolute.parent()?;
        if specifier.starts_with('.') {
            return self.find_module(&normalize(&dir.join(specifier)));
        }
        // A `paths` alias or `baseUrl` of the nearest tsconfig.json (`@/infra/retry`).
        let aliases = self.tsconfig_paths(dir)?;
        aliases
            .targets(specifier)
            .into_iter()
            .find_map(|target| self.find_module(&target))
    }

    /// The discovered file a module path (without or with an extension) names.
    fn find_module(&self, base: &Path) -> Option<FileId> {
        let base_str = base.to_str()?;
        let mut candidates: Vec<PathBuf> = vec![base.to_path_buf()];
        // ESM TypeScript imports name the emitted `.js` file.
        for (js, ts) in [
            (".js", [".ts", ".tsx"]),
            (".mjs", [".mts", ".mts"]),
            (".cjs", [".cts", ".cts"]),
            (".jsx", [".tsx", ".tsx"]),
        ] {
            if let Some(stem) = base_str.strip_suffix(js) {
                candidates.extend(ts.iter().map(|ext| PathBuf::from(format!("{stem}{ext}"))));
            }
        }
        for ext in [".ts", ".tsx", ".mts", ".cts"] {
            candidates.push(PathBuf::from(format!("{base_str}{ext}")));
        }
        for index in ["index.ts", "index.tsx", "index.mts"] {
            candidates.push(base.join(index));
        }
        candidates.into_iter().find_map(|c| self.by_absolute.get(&c).copied())
    }

    /// The `compilerOptions.paths` / `baseUrl` of the tsconfig.json nearest to `dir`, cached
    /// per directory.
    fn tsconfig_paths(&self, dir: &Path) -> Option<std::sync::Arc<TsPaths>> {
        let mut cache = self.tsconfigs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = cache.get(dir) {
            return found.clone();
        }
        let mut visited = Vec::new();
        let mut current = Some(dir);
        let mut found = None;
        while let Some(d) = current {
            if let Some(known) = cache.get(d) {
                found = known.clone();
                break;
            }
            visited.push(d.to_path_buf());
            let config = d.join("tsconfig.json");
            if config.is_file() {
                found = TsPaths::read(&config).map(std::sync::Arc::new);
                break;
            }
            current = d.parent();
        }
        for d in visited {
            cache.insert(d, found.clone());
        }
        found
    }

    /// What `name`, exported by `file`, is.
    pub fn resolve_export(&self, file: FileId, name: &str) -> Resolved<'_> {
        self.resolve_export_at(file, name, 0)
    }

    fn resolve_export_at(&self, file: FileId, name: &str, depth: usize) -> Resolved<'_> {
        if depth > MAX_RESOLVE_DEPTH {
            return Resolved::Unknown;
        }
        let facts = self.facts(file);
        for export in &facts.exports {
            match export {
                Export::Local { name: exported, local } if exported == name => {
                    return self.resolve_name_at(file, local, depth + 1);
                }
                Export::Named {
                    name: exported,
                    imported,
                    source,
                } if exported == name => {
                    return match self.resolve_module(file, source) {
                        Some(target) => self.resolve_export_at(target, imported, depth + 1),
                        None => Resolved::Unknown,
                    };
                }
                Export::Namespace { name: exported, source } if exported == name => {
                    return match self.resolve_module(file, source) {
                        Some(target) => Resolved::Namespace(target),
                        None => Resolved::Unknown,
                    };
                }
                _ => {}
            }
        }
        // `export * from` re-exports every name the target exports.
        for export in &facts.exports {
            if let Export::Star { source } = export {
                if let Some(target) = self.resolve_module(file, source) {
                    if let resolved @ (Resolved::Value { .. } | Resolved::Namespace(_)) =
                        self.resolve_export_at(target, name, depth + 1)
                    {
                        return resolved;
                    }
                }
            }
        }
        Resolved::Unknown
    }

    /// What a top-level name of `file` is: its own binding, or what the import brings.
    pub fn resolve_name(&self, file: FileId, name: &str) -> Resolved<'_> {
        self.resolve_name_at(file, name, 0)
    }

    fn resolve_name_at(&self, file: FileId, name: &str, depth: usize) -> Resolved<'_> {
        if depth > MAX_RESOLVE_DEPTH {
            return Resolved::Unknown;
        }
        let facts = self.facts(file);
        if let Some(binding) = facts.binding(name) {
            // `export const Retry = Policies` style aliases are followed.
            if let Expr::Ident(alias, _) = &binding.value {
                if alias != name {
                    return self.resolve_name_at(file, alias, depth + 1);
                }
            }
            return Resolved::Value {
                file,
                name: &binding.name,
                span: binding.span,
                value: &binding.value,
            };
        }
        let Some(import) = facts.import(name) else {
            return Resolved::Unknown;
        };
        let Some(target) = self.resolve_module(file, &import.source) else {
            return Resolved::Unknown;
        };
        match &import.kind {
            ImportKind::Namespace => Resolved::Namespace(target),
            ImportKind::Named(imported) => self.resolve_export_at(target, imported, depth + 1),
            ImportKind::Default => self.resolve_export_at(target, "default", depth + 1),
        }
    }

    /// Resolves an identifier or member path (`transient`, `Retry.transient`,
    /// `Infra.Retry.transient`) used in `file`.
    pub fn resolve_path(&self, file: FileId, expr: &Expr) -> Resolved<'_> {
        let Some(path) = expr.path() else {
            return Resolved::Unknown;
        };
        let Some((first, rest)) = path.split_first() else {
            return Resolved::Unknown;
        };
        let mut current = self.resolve_name(file, first);
        for member in rest {
            current = match current {
                Resolved::Namespace(module) => self.resolve_export(module, member),
                // `export const Retry = { transient: … }`
                Resolved::Value { file, value, .. } => match value {
                    Expr::Object(props, _) => match props.iter().rev().find(|p| p.key == *member) {
                        Some(prop) => Resolved::Value {
                            file,
                            name: &prop.key,
                            span: prop.key_span,
                            value: &prop.value,
                        },
                        None => Resolved::Unknown,
                    },
                    _ => Resolved::Unknown,
                },
                Resolved::Unknown => Resolved::Unknown,
            };
        }
        current
    }

    /// The retry policies `file` defines or uses, evaluated once.
    pub fn policies(&self, file: FileId) -> &[crate::policy::Policy] {
        self.policies[file].get_or_init(|| crate::policy::collect(self, file))
    }

    /// Effect's version line for `file` as an [`crate::effect_version::EffectVersion::code`]:
    /// the `effect` of the nearest `package.json` that declares it (installed, locked or
    /// declared); 0, unknown, when none does (every line's names are understood then).
    pub fn effect_major(&self, file: FileId) -> u8 {
        let Some(dir) = self.sources[file].absolute.parent() else {
            return 0;
        };
        let mut cache = self.effect_versions.lock().unwrap_or_else(|e| e.into_inner());
        let mut visited = Vec::new();
        let mut current = Some(dir);
        let mut found = 0;
        while let Some(d) = current {
            if let Some(v) = cache.get(d) {
                found = *v;
                break;
            }
            visited.push(d.to_path_buf());
            if let Some(v) = crate::effect_version::package_effect_version(d, &self.config.root) {
                found = v.code();
                break;
            }
            current = d.parent();
        }
        for d in visited {
            cache.insert(d, found);
        }
        found
    }

    /// The queue consumer settings of the nearest Cloudflare `wrangler.toml` / `wrangler.json(c)`:
    /// the largest `max_retries` among its consumers (Cloudflare's default is 3).
    pub fn wrangler_max_retries(&self, file: FileId) -> Option<u64> {
        let mut dir = self.sources[file].absolute.parent();
        while let Some(d) = dir {
            for name in ["wrangler.toml", "wrangler.jsonc", "wrangler.json"] {
                if let Ok(text) = std::fs::read_to_string(d.join(name)) {
                    return queue_max_retries(name, &text);
                }
            }
            if d == self.config.root {
                break;
            }
            dir = d.parent();
        }
        None
    }

    /// Every file that the parse phase looked at, in path order.
    pub fn checked_files(&self) -> impl Iterator<Item = FileId> + '_ {
        (0..self.sources.len()).filter(|&id| self.parsed(id).is_some())
    }

    pub fn len(&self) -> usize {
        self.sources.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

/// Extracts one file with a panic in the extractor turned into a note naming the file.
fn extract_isolated(source: &SourceFile, text: &[u8]) -> FileFacts {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        extract::extract_file(&source.path, source.language, text)
    }));
    result.unwrap_or_else(|panic| {
        let reason = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        let mut facts = FileFacts::new(source.path.clone(), source.language, b"");
        facts.notes.push(Note {
            path: source.path.clone(),
            line: None,
            message: format!("skipped: internal error while analysing this file ({reason}); please report it"),
        });
        facts
    })
}

/// A tsconfig's module aliases: `baseUrl` and `paths` (`"@/*": ["src/*"]`). `extends` is not
/// followed: an alias defined only in a base config is unknown, and unknown is silent.
#[derive(Debug)]
struct TsPaths {
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
    fn targets(&self, specifier: &str) -> Vec<PathBuf> {
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
