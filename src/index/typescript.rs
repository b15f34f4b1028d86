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
use crate::source::Span;

/// How deep re-export chains and binding aliases are followed.
const MAX_RESOLVE_DEPTH: usize = 16;

/// Effect's modules the extractor reads names of: an import of one of these names from a
/// project module is worth resolving to find out whether it is Effect's.
const EFFECT_MODULE_NAMES: &[&str] = &[
    "Effect",
    "Schedule",
    "Stream",
    "Layer",
    "Cron",
    "Duration",
    "Clock",
    "Ref",
    "HttpClient",
    "HttpClientRequest",
    "SqlClient",
    "Activity",
    "Workflow",
];

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

    /// A bare specifier nothing in the project resolves: a package installed in a
    /// `node_modules` above (not read), one that looks like an npm package (a `paths` pattern
    /// without a prefix, such as `*`, falls back to `node_modules`), or missing — a workspace
    /// package, or an alias with a prefix of its own (`~/`, `@/`), that names nothing.
    fn installed_or_missing(&self, file: &Path, specifier: &str, options: &CompilerOptions) -> Resolution {
        let (name, _) = resolve::package_name(specifier);
        let mut dir = file.parent();
        while let Some(d) = dir {
            if d.join("node_modules").join(name).exists() {
                return Resolution::Package;
            }
            dir = d.parent();
        }
        if self.workspace_packages().dir_of(name).is_some() {
            return Resolution::Missing;
        }
        match options.paths.as_ref().and_then(|paths| alias_of(paths, specifier)) {
            Some(pattern) if !pattern.starts_with('*') => Resolution::Missing,
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
            .project_for(&self.files[file].absolute, &[".vue", ".svelte"]);
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
                ImportKind::Named(imported) => EFFECT_MODULE_NAMES.contains(&imported.as_str()),
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
        if depth > MAX_RESOLVE_DEPTH {
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
        if depth > MAX_RESOLVE_DEPTH {
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
        if let Some(&id) = self.by_absolute.get(path) {
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
