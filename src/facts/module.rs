//! A TypeScript module's interface: its imports, exports and top-level bindings, and which
//! of its names come from Effect. What the index resolves names across files with.

use serde::{Deserialize, Serialize};

use super::{Expr, FileFacts};
use crate::source::Span;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ImportKind {
    /// `import { imported as local } from "source"`
    Named(String),
    /// `import * as local from "source"`
    Namespace,
    /// `import local from "source"`
    Default,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Import {
    pub local: String,
    pub kind: ImportKind,
    pub source: String,
    pub type_only: bool,
    pub span: Span,
    /// The source as written, when the index found that this project module re-exports Effect
    /// and the file was read as if it imported `source` (Effect's) directly.
    pub via: Option<String>,
    /// The kind as written, when `via` is set and the kind changed with it: a named import
    /// of a project module (`import { Effect } from "./prelude"`, which does
    /// `export * as Effect from "./Effect"`) stands for a namespace of Effect's.
    pub via_kind: Option<ImportKind>,
}

impl Import {
    /// The source as written in the file.
    pub fn written_source(&self) -> &str {
        self.via.as_deref().unwrap_or(&self.source)
    }

    /// The kind as written in the file.
    pub fn written_kind(&self) -> &ImportKind {
        self.via_kind.as_ref().unwrap_or(&self.kind)
    }
}

/// An import of a project module that re-exports Effect, and what it is in Effect's terms:
/// `import { Schedule } from "@app/prelude"`, where the prelude does `export * from "effect"`,
/// is `import { Schedule } from "effect"`. The index finds these; extraction reads the file
/// with them, so that everything it knows about Effect's names applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EffectAlias {
    pub local: String,
    /// Effect's module the import names (`effect`, `effect/Schedule`).
    pub source: String,
    pub kind: ImportKind,
}

impl FileFacts {
    /// The aliases this file was read with.
    pub fn effect_aliases(&self) -> Vec<EffectAlias> {
        self.imports
            .iter()
            .filter(|import| import.via.is_some())
            .map(|import| EffectAlias {
                local: import.local.clone(),
                source: import.source.clone(),
                kind: import.kind.clone(),
            })
            .collect()
    }

    /// Reads the imports `aliases` name as the Effect imports they are.
    pub fn apply_effect_aliases(&mut self, aliases: &[EffectAlias]) {
        for alias in aliases {
            if let Some(import) = self
                .imports
                .iter_mut()
                .find(|i| i.local == alias.local && i.via.is_none())
            {
                import.via = Some(std::mem::replace(&mut import.source, alias.source.clone()));
                let written = std::mem::replace(&mut import.kind, alias.kind.clone());
                import.via_kind = (written != import.kind).then_some(written);
            }
        }
        self.uses_effect = self.imports.iter().any(|i| is_effect_source(&i.source));
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Export {
    /// `export const name = …`, `export { local as name }`, `export default …`.
    Local { name: String, local: String },
    /// `export { imported as name } from "source"`.
    Named {
        name: String,
        imported: String,
        source: String,
    },
    /// `export * as name from "source"`.
    Namespace { name: String, source: String },
    /// `export * from "source"`.
    Star { source: String },
}

/// A top-level `const`, `let`, function or class of a module.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Binding {
    pub name: String,
    pub span: Span,
    pub value: Expr,
}

/// Effect's modules the extractor reads names of: an import of one of these names from a
/// project module is worth resolving to find out whether it is Effect's (the index), and can
/// bring Effect's names into a file (the prefilter, which must keep every such file).
pub const EFFECT_MODULE_NAMES: &[&str] = &[
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

/// Whether an import source is one of Effect's packages.
pub fn is_effect_source(source: &str) -> bool {
    source == "effect" || source.starts_with("effect/") || source.starts_with("@effect/")
}

/// The Effect module a source path names by itself: `effect/Schedule` → `Schedule`,
/// `@effect/platform/HttpClient` → `HttpClient`. Package roots name no module.
fn effect_module_of_source(source: &str) -> Option<&str> {
    let last = source.rsplit('/').next()?;
    let is_module = last.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    is_module.then_some(last)
}

impl FileFacts {
    /// Resolves `Schedule.exponential`, `S.exponential` (aliased), `exponential` (imported from
    /// `effect/Schedule`) or `Effect.Schedule.exponential` (namespace of the package root) to
    /// `("Schedule", "exponential")` when, and only when, the names come from Effect. A local
    /// or a parameter shadows any import: not Effect's.
    pub fn effect_member<'a>(&'a self, expr: &'a Expr) -> Option<(&'a str, &'a str)> {
        self.effect_member_path(&expr.path()?)
    }

    /// [`FileFacts::effect_member`] of a name path as written: `["Schedule", "exponential"]`.
    pub fn effect_member_path<'a>(&'a self, path: &[&'a str]) -> Option<(&'a str, &'a str)> {
        match path {
            [name] => {
                let import = self.import(name)?;
                if !is_effect_source(&import.source) {
                    return None;
                }
                match &import.kind {
                    ImportKind::Named(imported) => Some((effect_module_of_source(&import.source)?, imported.as_str())),
                    _ => None,
                }
            }
            [prefix @ .., member] => {
                let module = self.effect_module_path(prefix)?;
                // A project module that re-exports Effect's `Schedule` and adds its own
                // policies: a name Effect's `Schedule` does not have is the project's.
                let aliased = prefix
                    .first()
                    .and_then(|root| self.import(root))
                    .is_some_and(|i| i.via.is_some());
                if aliased && module == "Schedule" && !crate::schedule::api::exists(Default::default(), member) {
                    return None;
                }
                Some((module, member))
            }
            [] => None,
        }
    }

    /// Resolves an expression naming an Effect module (`Schedule`, `S`, `Effect.Schedule`).
    pub fn effect_module<'a>(&'a self, expr: &'a Expr) -> Option<&'a str> {
        self.effect_module_path(&expr.path()?)
    }

    /// [`FileFacts::effect_module`] of a name path as written.
    pub fn effect_module_path<'a>(&'a self, path: &[&'a str]) -> Option<&'a str> {
        match path {
            [name] => {
                let import = self.import(name)?;
                if !is_effect_source(&import.source) {
                    return None;
                }
                match &import.kind {
                    ImportKind::Named(imported) => {
                        let is_module = imported.chars().next().is_some_and(|c| c.is_ascii_uppercase());
                        // `import { Schedule } from "effect"`, but not `{ Schedule }` from `effect/Schedule`.
                        (is_module && effect_module_of_source(&import.source).is_none()).then_some(imported.as_str())
                    }
                    ImportKind::Namespace | ImportKind::Default => effect_module_of_source(&import.source),
                }
            }
            // `import * as Fx from "effect"` then `Fx.Schedule`.
            [name, member] => {
                let import = self.import(name)?;
                let root = is_effect_source(&import.source)
                    && effect_module_of_source(&import.source).is_none()
                    && matches!(import.kind, ImportKind::Namespace);
                root.then_some(*member)
            }
            _ => None,
        }
    }
}

impl FileFacts {
    /// The local name under which this file imports Effect's `module` (`Schedule`, `S`).
    pub fn effect_module_local(&self, module: &str) -> Option<&str> {
        self.imports
            .iter()
            .find(|import| self.effect_module_path(&[import.local.as_str()]) == Some(module))
            .map(|import| import.local.as_str())
    }
}
