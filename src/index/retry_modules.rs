//! Zero-config retry modules. Where no configured `retry-modules` glob matches a file of a
//! workspace package, the module that package's retry sites take their named policies from is
//! its retry module: a file exporting two or more named policies that retry sites in other
//! files import. Per package (the nearest `package.json` with a name, else the project root),
//! never per repository: one package's `lib/retry.ts` says nothing about another's.
//!
//! TypeScript and Rust are apart: a crate's `retry.rs` says nothing about the TypeScript package
//! in the same directory.
//!
//! Inference only ever adds a retry module where the configuration names none. It is what a
//! reader of the code would conclude, and it is said out loud: a note names the inferred
//! module, and `retrylint policies` marks it.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::{FileId, Index, Resolved};
use crate::facts::{Expr, PolicyArg, RustBase};

/// A retry module found from the code, and the evidence for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InferredModule {
    pub file: FileId,
    /// Named policies it exports (at least two).
    pub policies: usize,
    /// Retry sites in other files that name one of them.
    pub sites: usize,
}

#[derive(Default)]
struct Evidence {
    names: BTreeSet<String>,
    sites: usize,
}

impl Index {
    /// The retry module of each package that configures none, from the facts loaded so far.
    pub fn infer_retry_modules(&self) -> Vec<InferredModule> {
        let package_of = |file: FileId| -> &Path {
            let absolute = &self.files[file].absolute;
            self.workspace_packages()
                .package_dir(absolute)
                .unwrap_or(self.config.root.as_path())
        };
        // A Rust crate's retry module says nothing about the TypeScript beside it.
        let is_rust = |file: FileId| self.files[file].language == crate::source::Language::Rust;
        let configured: BTreeSet<(&Path, bool)> = self
            .configured_retry_modules()
            .iter()
            .map(|&f| (package_of(f), is_rust(f)))
            .collect();
        let mut evidence: HashMap<FileId, Evidence> = HashMap::new();
        for file in 0..self.len() {
            let Some(facts) = self.loaded(file) else { continue };
            if facts.retry_sites.is_empty() || self.is_test_code(file) {
                continue;
            }
            for site in &facts.retry_sites {
                let Some((target, name)) = self.named_elsewhere(file, &site.policy, site.schedule()) else {
                    continue;
                };
                if target == file || self.is_test_code(target) {
                    continue;
                }
                let entry = evidence.entry(target).or_default();
                entry.names.insert(name);
                entry.sites += 1;
            }
        }
        let mut best: HashMap<(&Path, bool), InferredModule> = HashMap::new();
        for (file, found) in evidence {
            let package = package_of(file);
            if configured.contains(&(package, is_rust(file))) {
                continue;
            }
            let policies = found.names.len().max(self.exported_schedules(file));
            if policies < 2 {
                continue;
            }
            let candidate = InferredModule {
                file,
                policies,
                sites: found.sites,
            };
            let key = |m: &InferredModule| (m.sites, m.policies, std::cmp::Reverse(self.files[m.file].path.clone()));
            match best.get(&(package, is_rust(file))) {
                Some(current) if key(current) >= key(&candidate) => {}
                _ => {
                    best.insert((package, is_rust(file)), candidate);
                }
            }
        }
        let mut out: Vec<InferredModule> = best.into_values().collect();
        out.sort_by_key(|m| m.file);
        out
    }

    /// The file and name of the named policy a site uses, when it is a binding of another
    /// module: `Retry.transient`, `transientRetry`, `crate::retry::transient()`.
    fn named_elsewhere(&self, file: FileId, policy: &PolicyArg, schedule: Option<&Expr>) -> Option<(FileId, String)> {
        match policy {
            PolicyArg::Effect(_) => match self.resolve_path(file, schedule?) {
                Resolved::Value {
                    file: target,
                    name,
                    value,
                    ..
                } if !matches!(value, Expr::Function { .. } | Expr::Opaque(_)) => Some((target, name.to_string())),
                _ => None,
            },
            PolicyArg::Rust(arg) => match &arg.chain.as_ref()?.base {
                RustBase::Named(path) => {
                    let (target, policy) = self.resolve_rust(file, path)?;
                    policy.public.then(|| (target, policy.name.clone()))
                }
                _ => None,
            },
            PolicyArg::Default | PolicyArg::Unknown => None,
        }
    }

    /// How many of a module's exports are built from `Schedule` (a property of an exported
    /// object counts apart: `export const Retry = { transient: …, contention: … }`).
    fn exported_schedules(&self, file: FileId) -> usize {
        let Some(facts) = self.loaded(file) else { return 0 };
        if !facts.rust_policies.is_empty() {
            return facts.rust_policies.iter().filter(|p| p.public).count();
        }
        let built_by_schedule = |expr: &Expr| {
            let mut found = false;
            expr.walk(&mut |e| found |= matches!(facts.effect_member(e), Some(("Schedule", _))));
            found
        };
        facts
            .exports
            .iter()
            .filter_map(|export| match export {
                crate::facts::Export::Local { local, .. } => facts.binding(local),
                _ => None,
            })
            .map(|binding| match &binding.value {
                Expr::Object(props, _) => props.iter().filter(|p| built_by_schedule(&p.value)).count(),
                value => usize::from(built_by_schedule(value)),
            })
            .sum()
    }
}
