//! Rust policies: the retry module's named policies (`pub fn transient() -> ExponentialBuilder`,
//! `pub const CONTENTION: …`), every policy a retry site builds or changes itself, and the
//! resolution of paths (`crate::retry::transient`, `retry::TRANSIENT`, `self::policy`) to the
//! crate's files.
//!
//! Modules are found the way rustc lays them out: below the nearest `src` directory,
//! `a/b.rs` or `a/b/mod.rs` is `crate::a::b` and `lib.rs`/`main.rs` the crate root; inline
//! `mod`s are looked up inside the file. A path that leaves the crate, or that the layout does
//! not explain, is unknown — and unknown is silent.

use std::path::{Path, PathBuf};

use super::{Origin, Policy, RustInfo};
use crate::facts::{RetryKind, RetrySite, RustBackoff, RustBase, RustChain, RustPath, RustPolicy, Span};
use crate::project::{FileId, Project};
use crate::schedule::rust::{self as model, Applied};
use crate::schedule::{self, Problem, Sched};

/// How many named policies are followed from a site to a builder.
const MAX_FOLLOW: usize = 8;

pub(super) fn collect(project: &Project, file: FileId) -> Vec<Policy> {
    let facts = project.facts(file);
    let mut out = Vec::new();
    if project.is_retry_module(file) {
        for policy in facts.rust_policies.iter().filter(|p| p.public) {
            let (state, problems) = state(project, file, &policy.value, 0);
            let Some(found) = evaluated(&policy.value, state, problems) else {
                continue;
            };
            out.push(Policy {
                origin: Origin::Export {
                    name: policy.name.clone(),
                    binding: policy.item,
                },
                span: policy.name_span,
                schedule: Some(policy.value.span),
                text: policy.value.text.clone(),
                summary: found.0,
                problems: found.1,
                rust: Some(found.2),
            });
        }
        return out;
    }
    for site in &facts.retry_sites {
        let Some(rust) = &site.rust else { continue };
        let Some(chain) = &rust.policy else { continue };
        if names_retry_module_policy(project, file, chain) {
            continue;
        }
        let (state, problems) = state(project, file, chain, 0);
        let Some(found) = evaluated(chain, state, problems) else {
            continue;
        };
        out.push(Policy {
            origin: Origin::Site { kind: RetryKind::Rust },
            span: rust.arg,
            schedule: Some(chain.span),
            // A builder bound to a local is named by it, as written at the site.
            text: rust
                .local
                .as_ref()
                .map_or_else(|| chain.text.clone(), |(name, _)| name.clone()),
            summary: found.0,
            problems: found.1,
            rust: Some(found.2),
        });
    }
    out
}

/// The summary, problems and Rust details of an evaluated builder; `None` when unknown.
fn evaluated(
    chain: &RustChain,
    state: Option<RustBackoff>,
    problems: Vec<Problem>,
) -> Option<(schedule::Summary, Vec<Problem>, RustInfo)> {
    let sched = state.as_ref().map(model::sched).unwrap_or(Sched::Unknown);
    if matches!(sched, Sched::Unknown) && problems.is_empty() {
        return None;
    }
    let lib = state.as_ref().map(RustBackoff::lib);
    // backon's builders take `.with_jitter()` as their last method; after `.build()` the
    // value is an iterator and has no such method.
    let builder = chain.ops.last().is_none_or(|op| op.method != "build");
    let jitter_fix = (matches!(state, Some(RustBackoff::Backon { .. })) && builder).then_some(chain.span.end);
    let mut summary = schedule::summarize(&sched);
    // Nominal delays are the configured ones, before jitter; the worst case keeps it.
    if let Some(state) = &state {
        let plain = schedule::summarize(&model::sched(&model::without_jitter(state)));
        summary.delays = plain.delays;
        summary.total_ms = plain.total_ms.filter(|_| summary.total_ms.is_some());
        // Under a total-time limit, jitter decides how many delays fit: the run at either
        // end of the jitter range is not the worst case. The wait stays within the limit,
        // and within what the attempt cap allows without it.
        // The attempts likewise: a count taken at one point of the range is no bound.
        if let Some((limit, unlimited)) = model::time_limit(state) {
            let free = schedule::summarize(&model::sched(&unlimited));
            if summary.jitter == schedule::Jitter::Yes {
                summary.attempts = match free.attempts.bound() {
                    Some(n) => schedule::Attempts::AtMost(n),
                    None => schedule::Attempts::TimeLimited,
                };
            }
            if summary.worst_total_ms.is_some() {
                summary.worst_total_ms = Some(free.worst_total_ms.map_or(limit, |w| w.min(limit)));
            }
        }
    }
    Some((summary, problems, RustInfo { lib, jitter_fix }))
}

/// The configuration a chain ends with: its base's (a constructor's defaults, or a named
/// policy's, followed across files) with the chain's methods applied.
pub fn state(project: &Project, file: FileId, chain: &RustChain, depth: usize) -> (Option<RustBackoff>, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut current = match &chain.base {
        RustBase::New { state, .. } => state.clone(),
        RustBase::Named(path) if depth < MAX_FOLLOW => match resolve(project, file, path) {
            Some((target, policy)) => {
                let (state, inner) = state(project, target, &policy.value, depth + 1);
                problems.extend(inner);
                match state {
                    Some(state) => state,
                    None => return (None, problems),
                }
            }
            None => return (None, problems),
        },
        _ => return (None, problems),
    };
    for op in &chain.ops {
        match model::apply(&mut current, op) {
            Applied::Ok => {}
            Applied::Unknown => return (None, problems),
            Applied::Problem(message) => {
                problems.push(Problem {
                    file,
                    span: op.span,
                    message,
                });
                return (None, problems);
            }
        }
    }
    (Some(current), problems)
}

/// Whether the chain is a plain reference to a policy of a retry module: not a policy of its
/// own, its findings belong to the policy it names.
pub fn names_retry_module_policy(project: &Project, file: FileId, chain: &RustChain) -> bool {
    let RustBase::Named(path) = &chain.base else {
        return false;
    };
    chain.ops.is_empty() && resolve(project, file, path).is_some_and(|(target, _)| project.is_retry_module(target))
}

/// The retry-module policy a site names unchanged, for `retrylint policies`' site counts.
pub fn named_policy(project: &Project, file: FileId, site: &RetrySite) -> Option<(FileId, Span)> {
    let chain = site.rust.as_ref()?.policy.as_ref()?;
    let RustBase::Named(path) = &chain.base else {
        return None;
    };
    if !chain.ops.is_empty() {
        return None;
    }
    resolve(project, file, path).map(|(target, policy)| (target, policy.item))
}

/// How a site's policy is built, when it is built outside the retry module.
#[derive(Debug)]
pub struct Built {
    /// The constructor (`ExponentialBuilder::default`), the helper (`capped(…)`), or the
    /// named policy changed (`retry::transient()`).
    pub builder: String,
    /// The methods that change a retry-module policy (`.with_max_times(…)`), when that is how.
    pub changed: Option<String>,
    /// Named policies followed from the site to the builder, nearest first.
    pub via: Vec<(FileId, String, Span)>,
}

/// Looks for where a chain builds a policy, following named policies but never into the
/// retry module (its policies are named). `None` when the chain names a retry-module policy
/// unchanged, or when it cannot be followed.
pub fn built(project: &Project, file: FileId, chain: &RustChain, depth: usize) -> Option<Built> {
    if depth > MAX_FOLLOW {
        return None;
    }
    match &chain.base {
        RustBase::New { ctor, via, .. } => Some(Built {
            builder: via.as_ref().map(|h| format!("{h}(…)")).unwrap_or_else(|| ctor.clone()),
            changed: None,
            via: Vec::new(),
        }),
        RustBase::Named(path) => {
            let (target, policy) = resolve(project, file, path)?;
            if project.is_retry_module(target) {
                if chain.ops.is_empty() {
                    return None;
                }
                let methods: Vec<String> = chain
                    .ops
                    .iter()
                    .map(|op| format!(".{}(…)", op.method.trim_start_matches('=')))
                    .collect();
                return Some(Built {
                    builder: format!("{}()", path.render()),
                    changed: Some(methods.join("")),
                    via: Vec::new(),
                });
            }
            let mut found = built(project, target, &policy.value, depth + 1)?;
            found.via.insert(0, (target, policy.name.clone(), policy.name_span));
            Some(found)
        }
        RustBase::Unknown => None,
    }
}

/// The policy a path names: a `fn` without parameters, a `const` or a `static` of this crate.
pub fn resolve<'p>(project: &'p Project, file: FileId, path: &RustPath) -> Option<(FileId, &'p RustPolicy)> {
    let (root, file_module) = crate_module(&project.sources[file].absolute)?;
    let mut here = file_module;
    here.extend(path.module.iter().cloned());
    let segments = &path.segments;
    let full: Vec<String> = match segments.first()?.as_str() {
        "crate" => segments[1..].to_vec(),
        "self" => {
            let mut full = here;
            full.extend(segments[1..].iter().cloned());
            full
        }
        "super" => {
            let supers = segments.iter().take_while(|s| *s == "super").count();
            for _ in 0..supers {
                here.pop()?;
            }
            here.extend(segments[supers..].iter().cloned());
            here
        }
        _ => return None,
    };
    let (name, module) = full.split_last()?;
    for split in (0..=module.len()).rev() {
        for candidate in module_files(&root, &module[..split]) {
            let Some(target) = project.sources.iter().position(|s| s.absolute == candidate) else {
                continue;
            };
            let facts = project.facts(target);
            if let Some(policy) = facts
                .rust_policies
                .iter()
                .find(|p| p.module == module[split..] && &p.name == name)
            {
                return Some((target, policy));
            }
        }
    }
    None
}

/// The crate's source root (the nearest `src` directory above the file, else the file's own
/// directory) and the file's module path below it.
fn crate_module(absolute: &Path) -> Option<(PathBuf, Vec<String>)> {
    let root = absolute
        .ancestors()
        .skip(1)
        .find(|a| a.file_name().is_some_and(|n| n == "src"))
        .or_else(|| absolute.parent())?
        .to_path_buf();
    let relative = absolute.strip_prefix(&root).ok()?;
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?.to_string();
    let module = match stem.as_str() {
        "lib" | "main" if parts.is_empty() => Vec::new(),
        "mod" => parts,
        _ => {
            parts.push(stem);
            parts
        }
    };
    Some((root, module))
}

/// Where a module's file can be: `a/b.rs`, `a/b/mod.rs`; the root is `lib.rs` or `main.rs`.
fn module_files(root: &Path, module: &[String]) -> Vec<PathBuf> {
    if module.is_empty() {
        return vec![root.join("lib.rs"), root.join("main.rs")];
    }
    let dir: PathBuf = module.iter().collect();
    let mut file = root.join(&dir);
    file.set_extension("rs");
    vec![file, root.join(dir).join("mod.rs")]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_follow_the_layout() {
        let m = |p: &str| crate_module(Path::new(p)).map(|(root, m)| (root.display().to_string(), m.join("::")));
        assert_eq!(m("/x/src/lib.rs"), Some(("/x/src".into(), "".into())));
        assert_eq!(m("/x/src/retry.rs"), Some(("/x/src".into(), "retry".into())));
        assert_eq!(
            m("/x/src/infra/retry/mod.rs"),
            Some(("/x/src".into(), "infra::retry".into()))
        );
        assert_eq!(
            m("/x/src/orders/repository.rs"),
            Some(("/x/src".into(), "orders::repository".into()))
        );
        assert_eq!(m("/x/tests/it.rs"), Some(("/x/tests".into(), "it".into())));
    }
}
