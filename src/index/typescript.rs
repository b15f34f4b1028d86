//! TypeScript module resolution: import specifiers to files (relative paths, `.js`
//! specifiers, `index` barrels, tsconfig `paths` and `baseUrl`), and names to what they
//! are (bindings, namespaces, re-exports). Resolution never parses: a file whose facts are
//! not loaded is a miss, recorded for the demand stage, and unknown until it is loaded.

use std::path::{Path, PathBuf};

use super::{FileId, Index};
use crate::facts::{is_effect_source, EffectAlias, Export, Expr, Import, ImportKind};
use crate::source::{normalize, Span};

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
    /// Resolves an import specifier from `from` to a discovered file: relative paths with or
    /// without extension (`./retry`, `./retry.js`), and directory barrels (`./infra` →
    /// `./infra/index.ts`). Package imports are not resolved.
    pub fn resolve_module(&self, from: FileId, specifier: &str) -> Option<FileId> {
        let dir = self.files[from].absolute.parent()?;
        if specifier.starts_with('.') {
            return self.find_module(&normalize(&dir.join(specifier)));
        }
        // Effect's own packages are never project modules.
        if is_effect_source(specifier) {
            return None;
        }
        // A `paths` alias or `baseUrl` of the nearest tsconfig.json (`@/infra/retry`).
        if let Some(aliases) = self.project.tsconfig_paths(dir, self.boundary(from)) {
            if let Some(found) = aliases
                .targets(specifier)
                .into_iter()
                .find_map(|target| self.find_module(&target))
            {
                return Some(found);
            }
        }
        // A package of the workspace (`@app/shared`), through its package.json.
        self.workspace_packages()
            .entry_candidates(specifier)
            .into_iter()
            .find_map(|target| self.find_module(&target))
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
        for ext in [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"] {
            candidates.push(PathBuf::from(format!("{base_str}{ext}")));
        }
        for index in [
            "index.ts",
            "index.tsx",
            "index.mts",
            "index.js",
            "index.jsx",
            "index.mjs",
        ] {
            candidates.push(base.join(index));
        }
        candidates.into_iter().find_map(|c| self.by_absolute.get(&c).copied())
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
