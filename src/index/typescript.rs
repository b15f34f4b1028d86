//! TypeScript module resolution: import specifiers to files (as TypeScript resolves them,
//! `resolve.rs`, with the options of the file's project, `tsconfig.rs`), and names to what
//! they are (bindings, namespaces, re-exports). Resolution never parses: a file whose facts are
//! not loaded is a miss, recorded for the demand stage, and unknown until it is loaded.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::resolve::{self, Hit, Host, PackageJson, Resolution};
use super::tsconfig::{CompilerOptions, Project};
use super::{FileId, Index};
use crate::facts::{is_effect_source, EffectAlias, Export, Expr, Import, ImportKind};
use crate::source::{Note, Span};

/// How deep re-export chains and binding aliases are followed.
const MAX_RESOLVE_DEPTH: usize = 16;
/// The most modules followed to find out whether one re-exports Effect
/// (`Index::may_reexport_effect`); past it, it may.
const MAX_REEXPORT_GRAPH: usize = 20_000;

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

impl Index {
    /// Resolves an import specifier from `from` to a discovered file, as TypeScript resolves
    /// it with the options of the project that owns `from` (see `resolve.rs`).
    pub fn resolve_module(&self, from: FileId, specifier: &str) -> Option<FileId> {
        match self.resolution(from, specifier) {
            Resolution::File(id) => Some(id),
            _ => None,
        }
    }

    /// What an import specifier of `from` names: a file of the index, a file it does not
    /// read, a package outside the workspace, or nothing. Computed once per file and specifier.
    pub fn resolution(&self, from: FileId, specifier: &str) -> Resolution {
        // Effect's own packages are never project modules.
        if is_effect_source(specifier) {
            return Resolution::Package;
        }
        let key = (from, specifier.to_string());
        if let Some(known) = self.resolutions.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return known.clone();
        }
        let project = self.project_of(from);
        let defaults = CompilerOptions {
            allow_js: Some(true),
            ..CompilerOptions::default()
        };
        let options = project.as_deref().map_or(&defaults, |p| &p.options);
        let file = &self.files[from].absolute;
        let mut resolved = resolve::resolve(self, options, file, specifier);
        if resolved == Resolution::Missing && !specifier.starts_with('.') && !specifier.starts_with('#') {
            resolved = self.installed_or_missing(file, specifier, options);
        }
        self.resolutions
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, resolved.clone());
        resolved
    }

    /// A bare specifier nothing in the project resolves: a package of node_modules (not read:
    /// installed or not, a name npm could publish; a `paths` pattern without a prefix, such as
    /// `*`, falls back to node_modules), or missing — a workspace package, an alias with a
    /// prefix of its own (`@/`), or a name no package can have (`~/lib`), that names nothing.
    fn installed_or_missing(&self, file: &Path, specifier: &str, options: &CompilerOptions) -> Resolution {
        // `node:fs`, `bun:test`, a URL: not the project's.
        if specifier.contains(':') {
            return Resolution::Package;
        }
        let (name, _) = resolve::package_name(specifier);
        // A workspace package resolved by name: nothing at that path (its node_modules link,
        // if installed, leads to the same package).
        if self.workspace_packages().dir_of(name).is_some() {
            return Resolution::Missing;
        }
        let installed = || {
            let mut dir = file.parent();
            while let Some(d) = dir {
                if d.join("node_modules").join(name).exists() {
                    return true;
                }
                dir = d.parent();
            }
            false
        };
        match options.paths.as_ref().and_then(|paths| alias_of(paths, specifier)) {
            // An alias with a prefix of its own names the project's code, unless a package of
            // that name is installed (TypeScript falls back to node_modules).
            Some(pattern) if !pattern.starts_with('*') && !installed() => Resolution::Missing,
            _ if !is_package_name(name) => Resolution::Missing,
            _ => Resolution::Package,
        }
    }

    /// The TypeScript project that owns `file` (see [`super::ProjectFiles::project_for`]).
    pub fn project_of(&self, file: FileId) -> Option<Arc<Project>> {
        if let Some(known) = self.file_projects.read().unwrap_or_else(|e| e.into_inner()).get(&file) {
            return known.clone();
        }
        let project = self
            .project
            .project_for(&self.files[file].absolute, &[".vue", ".svelte"], &|name| {
                self.workspace_packages().dir_of(name).map(Path::to_path_buf)
            });
        self.file_projects
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(file, project.clone());
        project
    }

    /// The imports of `file` that name Effect through a project module that re-exports it,
    /// as the Effect imports they are. Only namespace imports and imports of the names the
    /// extractor reads as Effect's (`Effect`, `Schedule`, …) are looked at, so that a file's
    /// every import is not loaded to find out.
    pub fn effect_aliases(&self, file: FileId) -> Vec<EffectAlias> {
        let Some(facts) = self.loaded(file) else {
            return Vec::new();
        };
        if !self.files[file].language.is_script() {
            return Vec::new();
        }
        facts
            .imports
            .iter()
            .filter(|import| !import.type_only && !is_effect_source(import.written_source()))
            // As written: a file read with aliases is asked again whether they still hold.
            .filter(|import| match import.written_kind() {
                ImportKind::Named(imported) => crate::facts::EFFECT_MODULE_NAMES.contains(&imported.as_str()),
                ImportKind::Namespace => true,
                ImportKind::Default => false,
            })
            .filter_map(|import| {
                let (source, kind) = self.effect_equivalent(file, import)?;
                Some(EffectAlias {
                    local: import.local.clone(),
                    source,
                    kind,
                })
            })
            .collect()
    }

    /// Whether one of `sources`, modules that `file` imports (as written), is a project module
    /// that re-exports something of Effect's, directly or through other project modules: what
    /// a file the prefilter keeps only through its aliases needs to be read
    /// ([`crate::extract::Relevance::ThroughAliases`]). A superset of what [`Self::effect_aliases`]
    /// finds in it once read: any name re-exported from Effect counts, not only those it imports.
    /// A module that does not resolve counts too: the file is read, and the user hears why
    /// retries through it go unchecked ([`Self::unresolved_import_notes`]). Until the modules on
    /// the way are known, `false` with a miss recorded for each (the caller reads them and asks
    /// again).
    pub fn reexports_effect(&self, file: FileId, sources: &[String]) -> bool {
        sources.iter().any(|source| match self.resolution(file, source) {
            Resolution::File(target) => self.may_reexport_effect(target, true) == Some(true),
            Resolution::Missing => true,
            Resolution::Unread(_) | Resolution::Package => false,
        })
    }

    /// Whether module `file` can re-export something of Effect's: followed through every module
    /// it can re-export from, by the facts of the files read and the texts' summaries of those
    /// the prefilter ruled out ([`super::Index::reexport_summary`]). `None` when a file on the
    /// way is neither (with `ask`, a miss is recorded for it).
    fn may_reexport_effect(&self, file: FileId, ask: bool) -> Option<bool> {
        let known = |at: FileId| self.reach.read().unwrap_or_else(|e| e.into_inner()).get(&at).copied();
        if let Some(answer) = known(file) {
            return Some(answer);
        }
        let mut seen = std::collections::HashSet::new();
        let mut queue = vec![file];
        let mut unknown = false;
        let mut found = false;
        let mut owned: Vec<String>;
        'files: while let Some(at) = queue.pop() {
            if !seen.insert(at) {
                continue;
            }
            // A graph of barrels larger than any project's is not followed to its end: it may
            // re-export Effect (the caller reads the files it asks about).
            if seen.len() > MAX_REEXPORT_GRAPH {
                return Some(true);
            }
            match known(at) {
                Some(true) => {
                    found = true;
                    break;
                }
                Some(false) => continue,
                None => {}
            }
            let sources: Vec<&str> = if let Some(summary) = self.reexport_summary(at) {
                summary.iter().map(String::as_str).collect()
            } else if let Some(facts) = if ask { self.facts(at) } else { self.loaded(at) } {
                owned = facts.reexport_sources();
                owned.iter().map(String::as_str).collect()
            } else {
                unknown = true;
                continue;
            };
            for source in sources {
                if is_effect_source(source) {
                    found = true;
                    break 'files;
                }
                if let Some(target) = self.resolve_module(at, source) {
                    queue.push(target);
                }
            }
        }
        let mut reach = self.reach.write().unwrap_or_else(|e| e.into_inner());
        match (found, unknown) {
            (true, _) => {
                reach.insert(file, true);
                Some(true)
            }
            (false, true) => None,
            // What every module met reaches, this one reaches: none of them re-exports Effect.
            (false, false) => {
                reach.extend(seen.into_iter().map(|at| (at, false)));
                Some(false)
            }
        }
    }

    /// A file the prefilter ruled out that, as its text says, cannot re-export Effect: not read
    /// to ask what it re-exports.
    fn cannot_reexport_effect(&self, file: FileId) -> bool {
        self.reexport_summary(file).is_some() && self.may_reexport_effect(file, false) == Some(false)
    }

    /// What `import` of `file` is in Effect's packages, if the project module it names
    /// re-exports it.
    fn effect_equivalent(&self, file: FileId, import: &Import) -> Option<(String, ImportKind)> {
        let target = self.resolve_module(file, import.written_source())?;
        match import.written_kind() {
            ImportKind::Named(imported) => self.effect_export(target, imported, 0),
            ImportKind::Namespace => self
                .effect_namespace(target, 0)
                .map(|source| (source, ImportKind::Namespace)),
            ImportKind::Default => None,
        }
    }

    /// Where `name`, exported by `file`, comes from in Effect's packages.
    fn effect_export(&self, file: FileId, name: &str, depth: usize) -> Option<(String, ImportKind)> {
        if depth > MAX_RESOLVE_DEPTH || self.cannot_reexport_effect(file) {
            return None;
        }
        let facts = self.facts(file)?;
        for export in &facts.exports {
            match export {
                Export::Named {
                    name: exported,
                    imported,
                    source,
                } if exported == name => {
                    if is_effect_source(source) {
                        return Some((source.clone(), ImportKind::Named(imported.clone())));
                    }
                    let target = self.resolve_module(file, source)?;
                    return self.effect_export(target, imported, depth + 1);
                }
                Export::Namespace { name: exported, source } if exported == name => {
                    if is_effect_source(source) {
                        return Some((source.clone(), ImportKind::Namespace));
                    }
                    let target = self.resolve_module(file, source)?;
                    return self
                        .effect_namespace(target, depth + 1)
                        .map(|s| (s, ImportKind::Namespace));
                }
                // `import { Schedule } from "effect"; export { Schedule }`
                Export::Local { name: exported, local } if exported == name => {
                    let import = facts.import(local)?;
                    if is_effect_source(&import.source) {
                        return Some((import.source.clone(), import.kind.clone()));
                    }
                    return match &import.kind {
                        ImportKind::Named(imported) => {
                            let target = self.resolve_module(file, import.written_source())?;
                            self.effect_export(target, imported, depth + 1)
                        }
                        ImportKind::Namespace => {
                            let target = self.resolve_module(file, import.written_source())?;
                            self.effect_namespace(target, depth + 1)
                                .map(|s| (s, ImportKind::Namespace))
                        }
                        ImportKind::Default => None,
                    };
                }
                _ => {}
            }
        }
        // `export * from "effect"` brings every name the module does not define itself.
        if facts.binding(name).is_some() {
            return None;
        }
        for export in &facts.exports {
            if let Export::Star { source } = export {
                if is_effect_source(source) {
                    return Some((source.clone(), ImportKind::Named(name.to_string())));
                }
                if let Some(found) = self
                    .resolve_module(file, source)
                    .and_then(|target| self.effect_export(target, name, depth + 1))
                {
                    return Some(found);
                }
            }
        }
        None
    }

    /// The Effect module `file` as a whole stands for: it re-exports one with `export *`.
    fn effect_namespace(&self, file: FileId, depth: usize) -> Option<String> {
        if depth > MAX_RESOLVE_DEPTH || self.cannot_reexport_effect(file) {
            return None;
        }
        let facts = self.facts(file)?;
        facts.exports.iter().find_map(|export| match export {
            Export::Star { source } if is_effect_source(source) => Some(source.clone()),
            Export::Star { source } => {
                let target = self.resolve_module(file, source)?;
                self.effect_namespace(target, depth + 1)
            }
            _ => None,
        })
    }

    /// What `name`, exported by `file`, is.
    pub fn resolve_export(&self, file: FileId, name: &str) -> Resolved<'_> {
        self.resolve_export_at(file, name, 0)
    }

    fn resolve_export_at(&self, file: FileId, name: &str, depth: usize) -> Resolved<'_> {
        if depth > MAX_RESOLVE_DEPTH {
            return Resolved::Unknown;
        }
        let Some(facts) = self.facts(file) else {
            return Resolved::Unknown;
        };
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
        let Some(facts) = self.facts(file) else {
            return Resolved::Unknown;
        };
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
        // As written: a name the project adds beside a re-export of Effect's module
        // (`Schedule.backoff10s` of a prelude) is the project's, in the project's module.
        let Some(target) = self.resolve_module(file, import.written_source()) else {
            return Resolved::Unknown;
        };
        match import.written_kind() {
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
}

/// Whether `name` can be a package of the npm registry (`effect`, `@effect/platform`,
/// `JSONStream`): an alias such as `~/lib` or `@/lib` cannot, and names the project's own code.
fn is_package_name(name: &str) -> bool {
    let part = |p: &str| {
        !p.is_empty()
            && !p.starts_with(['.', '_', '~'])
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~'))
    };
    match name.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(scope, rest)| part(scope) && part(rest)),
        None => part(name),
    }
}

/// The `paths` pattern `specifier` matches, if any.
fn alias_of<'p>(paths: &'p [(String, Vec<String>)], specifier: &str) -> Option<&'p str> {
    let options = CompilerOptions {
        paths: Some(paths.to_vec()),
        ..CompilerOptions::default()
    };
    if !resolve::matches_paths(&options, specifier) {
        return None;
    }
    resolve::best_pattern(paths.iter().map(|(k, _)| k.as_str()), specifier).map(|(k, _)| k)
}

impl Host for Index {
    fn probe(&self, path: &Path) -> Option<Hit> {
        if let Some(id) = self.file_id(path) {
            return Some(Hit::File(id));
        }
        std::fs::metadata(path)
            .is_ok_and(|m| m.is_file())
            .then_some(Hit::Unread)
    }

    fn package_json(&self, dir: &Path) -> Option<Arc<PackageJson>> {
        self.project.package_json(dir)
    }

    fn workspace_package(&self, name: &str) -> Option<PathBuf> {
        self.workspace_packages().dir_of(name).map(Path::to_path_buf)
    }
}

/// What a project-local import that resolves to nothing went through: the pattern its note
/// is about, once.
struct Unresolved {
    /// Identifies the pattern (one note each).
    key: String,
    reason: String,
}

impl Index {
    /// One note per specifier pattern that resolves to nothing — a relative path, a tsconfig
    /// `paths` alias, a package.json `imports` entry (`#src/*`), a workspace package — naming
    /// the first file that uses it: what such imports bring is unknown, so a policy imported
    /// through one is never checked, and the user is told why. Packages outside the workspace
    /// are not looked up and never noted.
    pub fn unresolved_import_notes(&self) -> Vec<Note> {
        // key → (note, files, imports)
        let mut found: Vec<(String, Note, Vec<FileId>, usize)> = Vec::new();
        for file in 0..self.files.len() {
            let Some(facts) = self
                .loaded(file)
                .filter(|f| f.parsed && self.files[file].language.is_script())
            else {
                continue;
            };
            let mut specifiers: Vec<(&str, Option<usize>)> = facts
                .imports
                .iter()
                .map(|i| (i.written_source(), Some(facts.lines.line_of(i.span.start) + 1)))
                .collect();
            specifiers.extend(facts.exports.iter().filter_map(|e| match e {
                Export::Named { source, .. } | Export::Namespace { source, .. } | Export::Star { source } => {
                    Some((source.as_str(), None))
                }
                Export::Local { .. } => None,
            }));
            let mut seen = std::collections::HashSet::new();
            specifiers.retain(|(s, _)| seen.insert(*s));
            for (specifier, line) in specifiers {
                if self.resolution(file, specifier) != Resolution::Missing {
                    continue;
                }
                let unresolved = self.unresolved(file, specifier);
                match found.iter_mut().find(|(key, ..)| *key == unresolved.key) {
                    Some((_, _, files, imports)) => {
                        *imports += 1;
                        if !files.contains(&file) {
                            files.push(file);
                        }
                    }
                    None => found.push((
                        unresolved.key.clone(),
                        Note {
                            path: self.files[file].path.clone(),
                            line,
                            message: format!(
                                "`{specifier}` does not resolve: {}; what it imports is unknown, so retries through it go unchecked",
                                unresolved.reason
                            ),
                        },
                        vec![file],
                        1,
                    )),
                }
            }
        }
        found
            .into_iter()
            .map(|(_, mut note, files, imports)| {
                if imports > 1 {
                    note.message.push_str(&format!(
                        " ({imports} imports in {} {} resolve nothing this way)",
                        files.len(),
                        if files.len() == 1 { "file" } else { "files" }
                    ));
                }
                note
            })
            .collect()
    }

    /// Why `specifier` of `file` resolves to nothing, and the pattern it goes through.
    fn unresolved(&self, file: FileId, specifier: &str) -> Unresolved {
        let shown = |path: &Path| {
            path.strip_prefix(&self.config.root)
                .unwrap_or(path)
                .to_string_lossy()
                .replace('\\', "/")
        };
        let absolute = &self.files[file].absolute;
        let dir = absolute.parent().unwrap_or(Path::new("/"));
        if specifier.starts_with('.') || specifier.starts_with('/') {
            let target = crate::source::normalize(&dir.join(specifier));
            return Unresolved {
                key: format!("relative:{}", target.display()),
                reason: format!(
                    "no file {} (or with a TypeScript or JavaScript extension, or an index)",
                    shown(&target)
                ),
            };
        }
        if specifier.starts_with('#') {
            let mut scope = Some(dir);
            while let Some(d) = scope {
                if let Some(package) = self.project.package_json(d) {
                    let manifest = shown(&package.dir.join("package.json"));
                    let keys: Vec<String> = package
                        .json
                        .get("imports")
                        .and_then(|i| i.entries())
                        .map(|e| e.iter().map(|(k, _)| k.to_string()).collect())
                        .unwrap_or_default();
                    let pattern = resolve::best_pattern(keys.iter().map(String::as_str), specifier)
                        .map_or_else(|| specifier.to_string(), |(k, _)| k.to_string());
                    let reason = if keys.is_empty() {
                        format!("{manifest} has no `imports`")
                    } else if keys.contains(&pattern) {
                        format!("the `imports` entry `{pattern}` of {manifest} names no file")
                    } else {
                        format!("no `imports` entry of {manifest} matches it")
                    };
                    return Unresolved {
                        key: format!("imports:{}:{pattern}", package.dir.display()),
                        reason,
                    };
                }
                scope = d.parent();
            }
            return Unresolved {
                key: format!("imports::{specifier}"),
                reason: "no package.json above it has `imports`".into(),
            };
        }
        let (name, _) = resolve::package_name(specifier);
        if let Some(project) = self.project_of(file) {
            if let Some(pattern) = project.options.paths.as_ref().and_then(|p| alias_of(p, specifier)) {
                if !pattern.starts_with('*') {
                    let config = shown(&project.config);
                    return Unresolved {
                        key: format!("paths:{}:{pattern}", project.config.display()),
                        reason: format!("the `paths` alias `{pattern}` of {config} names no file for it"),
                    };
                }
            }
        }
        if !is_package_name(name) {
            let alias = format!("{}/*", specifier.split('/').next().unwrap_or(specifier));
            let reason = match self.project_of(file) {
                Some(project) => format!("no `paths` alias of {} matches it", shown(&project.config)),
                None => {
                    "no tsconfig.json or jsconfig.json includes this file, so no `paths` alias applies to it".into()
                }
            };
            return Unresolved {
                key: format!("alias:{alias}"),
                reason,
            };
        }
        Unresolved {
            key: format!("package:{name}"),
            reason: format!(
                "the workspace package `{name}` has no file at that path (its `exports`, `types` or `main`)"
            ),
        }
    }
}
