//! RS2 configuration: which level each declarative policy sets, the policy each call
//! resolves to, and each policy evaluated in the schedule model.
//!
//! Levels: a `retry` in or beside a `call` object is the call's; a top-level `retry` is the
//! mount's in a document with a top-level `mount` key or under a `mounts/` directory, and the
//! tenant's in `tenant.json`/`tenant.yaml` or a document with a top-level `tenant` key — for
//! every document in that directory and below, the nearest tenant winning. A call's effective
//! policy is the nearest of call → its mount (its own document) → nearest tenant → none; a
//! level whose policy says `"enabled": false` turns retry off there.
//!
//! The model: delay n = min(baseDelayMs × backoffMultiplier^n, maxDelayMs) for n = 0, 1, …,
//! over maxAttempts − 1 gaps. Full jitter draws each delay from 0 to its nominal value, so its
//! worst case is the nominal delay; "equal" jitter from half to all of it.

use std::path::Path;

use super::model::{Origin, Policy};
use crate::facts::rs2::{EffectClass, Place, Rs2Facts, Rs2Policy, Setting};
use crate::facts::FileFacts;
use crate::index::{FileId, Index};
use crate::schedule::{self, Attempts, Gap, Jitter, Library, Sched, Summary};
use crate::source::Language;

/// Whose policy it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Call,
    Mount,
    Tenant,
    /// Nested elsewhere, or top-level in a document that is neither a mount nor a tenant: a
    /// policy no call resolves to.
    Unplaced,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Call => "call",
            Level::Mount => "mount",
            Level::Tenant => "tenant",
            Level::Unplaced => "unplaced",
        }
    }
}

/// What a document is, by its keys, its name and its directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    Mount,
    Tenant,
    Other,
}

#[derive(Debug, Clone)]
pub struct PolicyInfo {
    pub level: Level,
    /// `None` when `enabled` is not a boolean: the rules stay silent.
    pub enabled: Option<bool>,
    pub summary: Summary,
}

/// A policy of some document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyRef {
    pub file: FileId,
    /// Index into that document's `rs2.policies`.
    pub policy: usize,
    pub level: Level,
    pub enabled: Option<bool>,
}

#[derive(Debug, Clone)]
pub struct CallInfo {
    pub class: Option<EffectClass>,
    /// The policy the call resolves to; `None`: the runtime default, no retry.
    pub effective: Option<PolicyRef>,
}

/// What analysis found about one document (same order as its `rs2.policies` and `rs2.calls`).
#[derive(Debug, Clone, Default)]
pub struct Rs2File {
    pub document: Option<Document>,
    pub policies: Vec<PolicyInfo>,
    pub calls: Vec<CallInfo>,
}

/// `tenant.json`, `tenant.yaml`, `tenant.yml`.
const TENANT_FILES: &[&str] = &["tenant.json", "tenant.yaml", "tenant.yml"];

pub(super) fn analyse(index: &Index, file: FileId) -> Rs2File {
    let Some(facts) = index.facts(file) else {
        return Rs2File::default();
    };
    if !is_config(facts) {
        return Rs2File::default();
    }
    let rs2 = &facts.rs2;
    let document = document(index, file, rs2);
    let policies: Vec<PolicyInfo> = rs2
        .policies
        .iter()
        .map(|policy| PolicyInfo {
            level: level(policy, document),
            enabled: enabled(policy),
            summary: summarize(policy),
        })
        .collect();
    let top = rs2.top_level();
    if document == Document::Tenant && top.is_some() {
        // Every document the tenant covers is loaded (the demand stage), so the calls that
        // resolve to its policy are found whatever the prefilter kept.
        if let Some(dir) = index.files[file].absolute.parent() {
            for other in index.config_files_under(dir) {
                let _ = index.facts(other);
            }
        }
    }
    let own = |policy: usize| PolicyRef {
        file,
        policy,
        level: policies[policy].level,
        enabled: policies[policy].enabled,
    };
    let calls = rs2
        .calls
        .iter()
        .map(|call| CallInfo {
            class: call.class(),
            effective: call
                .policy
                .map(own)
                .or_else(|| top.filter(|_| document == Document::Mount).map(own))
                .or_else(|| nearest_tenant(index, file)),
        })
        .collect();
    Rs2File {
        document: Some(document),
        policies,
        calls,
    }
}

fn is_config(facts: &FileFacts) -> bool {
    matches!(facts.language, Language::Json | Language::Yaml)
}

/// Whether `file` is a mount, a tenant or another document.
pub fn document(index: &Index, file: FileId, rs2: &Rs2Facts) -> Document {
    if rs2.mount_key {
        return Document::Mount;
    }
    let absolute = &index.files[file].absolute;
    let name = absolute.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if rs2.tenant_key || TENANT_FILES.contains(&name) {
        return Document::Tenant;
    }
    let relative = index.config_of(file).relative(absolute);
    if relative
        .parent()
        .is_some_and(|dir| dir.components().any(|c| c.as_os_str() == "mounts"))
    {
        return Document::Mount;
    }
    Document::Other
}

fn level(policy: &Rs2Policy, document: Document) -> Level {
    match (policy.place, document) {
        (Place::Call(_), _) => Level::Call,
        (Place::TopLevel, Document::Mount) => Level::Mount,
        (Place::TopLevel, Document::Tenant) => Level::Tenant,
        _ => Level::Unplaced,
    }
}

fn enabled(policy: &Rs2Policy) -> Option<bool> {
    match policy.enabled {
        Setting::Absent => Some(true),
        Setting::Known(enabled, _) => Some(enabled),
        Setting::Unknown(_) => None,
    }
}

/// The top-level policy of the nearest tenant document at or above `file`'s directory that
/// has one. Only loaded documents are looked at: a tenant's policy always passes the
/// prefilter, and a tenant document without a policy leaves the level to the tenant above.
fn nearest_tenant(index: &Index, file: FileId) -> Option<PolicyRef> {
    let mut dir: Option<&Path> = index.files[file].absolute.parent();
    while let Some(here) = dir {
        for &candidate in index.config_files_in(here) {
            let Some(facts) = index.loaded(candidate) else { continue };
            let Some(policy) = facts.rs2.top_level() else { continue };
            if document(index, candidate, &facts.rs2) != Document::Tenant {
                continue;
            }
            return Some(PolicyRef {
                file: candidate,
                policy,
                level: Level::Tenant,
                enabled: enabled(&facts.rs2.policies[policy]),
            });
        }
        dir = here.parent();
    }
    None
}

/// How the policy's jitter draws each delay.
enum Draw {
    None,
    /// A factor of the nominal delay, drawn from [min, max].
    Factor(f64, f64),
    /// Jittered, in a way the model does not follow ("decorrelated").
    Other,
    Unknown,
}

/// The policy in the schedule model. What it cannot read (a string where a number belongs, a
/// missing base delay or multiplier) leaves the answers that depend on it unknown.
pub fn summarize(policy: &Rs2Policy) -> Summary {
    let number = |setting: &Setting<f64>| setting.known().copied().filter(|n| n.is_finite() && *n >= 0.0);
    // Retries: `None` unknown, `Some(None)` no `maxAttempts` (never stops).
    let retries: Option<Option<u64>> = match &policy.max_attempts {
        Setting::Absent => Some(None),
        Setting::Known(n, _) if n.is_finite() && *n >= 0.0 && n.fract() == 0.0 => {
            Some(Some((*n as u64).saturating_sub(1)))
        }
        _ => None,
    };
    let draw = match &policy.jitter {
        Setting::Absent => Draw::None,
        Setting::Known(mode, _) => match mode.as_str() {
            "none" => Draw::None,
            "full" => Draw::Factor(0.0, 1.0),
            "equal" => Draw::Factor(0.5, 1.0),
            "decorrelated" => Draw::Other,
            _ => Draw::Unknown,
        },
        Setting::Unknown(_) => Draw::Unknown,
    };
    let jitter = match draw {
        Draw::None => Jitter::No,
        Draw::Factor(..) | Draw::Other => Jitter::Yes,
        Draw::Unknown => Jitter::Unknown,
    };
    let attempts = match retries {
        Some(Some(n)) => Attempts::Exact(n),
        Some(None) => Attempts::Unbounded,
        None => Attempts::Unknown,
    };
    if retries == Some(Some(0)) {
        // One attempt: nothing is retried, there is no gap to cap or spread.
        return Summary {
            attempts,
            gap: Gap::Capped(0.0),
            jitter,
            delays: Some(Vec::new()),
            total_ms: Some(0.0),
            worst_total_ms: Some(0.0),
        };
    }
    let (base, multiplier) = (number(&policy.base_delay_ms), number(&policy.backoff_multiplier));
    // The gap cap: `None` unknown, `Some(None)` absent.
    let cap: Option<Option<f64>> = match &policy.max_delay_ms {
        Setting::Absent => Some(None),
        setting => number(setting).map(Some),
    };
    if let (Some(base), Some(multiplier), Some(cap), Some(retries)) = (base, multiplier, cap, retries) {
        let mut core = Sched::Exponential {
            base,
            factor: multiplier,
        };
        if let Some(cap) = cap {
            core = Sched::Min(vec![core, Sched::Spaced(cap)]);
        }
        let limited = |sched: Sched| match retries {
            Some(n) => Sched::Times(Box::new(sched), n),
            None => sched,
        };
        // Nominal delays and total are the formula's; the worst case draws the largest factor.
        let nominal = schedule::summarize(&limited(core.clone()));
        let worst_total_ms = match draw {
            Draw::None => nominal.worst_total_ms,
            Draw::Factor(min, max) => {
                schedule::summarize(&limited(Sched::Jittered {
                    inner: Box::new(core),
                    min,
                    max,
                }))
                .worst_total_ms
            }
            Draw::Other | Draw::Unknown => None,
        };
        return Summary {
            jitter,
            worst_total_ms,
            ..nominal
        };
    }
    let gap = match cap {
        Some(Some(cap)) => Gap::Capped(cap),
        Some(None) => match (multiplier, base) {
            (Some(m), Some(b)) if m > 1.0 && b > 0.0 => Gap::Growing,
            (Some(m), None) if m > 1.0 => Gap::Growing,
            (Some(_), Some(b)) => Gap::Capped(b),
            _ => Gap::Unknown,
        },
        None => Gap::Unknown,
    };
    Summary {
        attempts,
        gap,
        jitter,
        delays: None,
        total_ms: None,
        worst_total_ms: None,
    }
}

/// How messages name a policy: its key path and level, `` `retry` (tenant) ``.
pub fn policy_label(policy: &Rs2Policy, level: Level) -> String {
    format!("`{}` ({})", policy.path, level.as_str())
}

/// The enabled policies of a document, for the schedule rules.
pub(super) fn policies(index: &Index, file: FileId) -> Vec<Policy> {
    let Some(facts) = index.facts(file) else {
        return Vec::new();
    };
    let document = document(index, file, &facts.rs2);
    facts
        .rs2
        .policies
        .iter()
        .filter(|policy| enabled(policy) == Some(true))
        .map(|policy| Policy {
            origin: Origin::Config {
                name: policy_label(policy, level(policy, document)),
            },
            span: policy.retry,
            schedule: None,
            text: policy.path.clone(),
            summary: summarize(policy),
            problems: Vec::new(),
            library: Library::Rs2,
            effect: Default::default(),
            jitter_fix: Vec::new(),
            uses: Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::extract_file;

    fn summary(policy: &str) -> Summary {
        let facts = extract_file(Language::Json, format!("{{ \"retry\": {policy} }}").as_bytes());
        summarize(&facts.rs2.policies[0])
    }

    #[test]
    fn the_manuals_policy_waits_the_nominal_delays_at_worst() {
        let s = summary(
            r#"{ "enabled": true, "maxAttempts": 4, "baseDelayMs": 250, "maxDelayMs": 5000,
                 "backoffMultiplier": 2, "jitter": "full", "retryStatuses": [408, 429, 500, 502, 503, 504],
                 "retryOnNetworkError": true, "respectRetryAfter": true }"#,
        );
        assert_eq!(s.attempts, Attempts::Exact(3), "maxAttempts counts the first call");
        assert_eq!(s.gap, Gap::Capped(5000.0));
        assert_eq!(s.jitter, Jitter::Yes);
        assert_eq!(s.delays.as_deref(), Some(&[250.0, 500.0, 1000.0][..]));
        assert_eq!(s.total_ms, Some(1750.0));
        assert_eq!(
            s.worst_total_ms,
            Some(1750.0),
            "full jitter's worst case is the nominal delay"
        );
    }

    #[test]
    fn delays_are_capped_by_max_delay() {
        let s = summary(
            r#"{ "maxAttempts": 5, "baseDelayMs": 1000, "backoffMultiplier": 3, "maxDelayMs": 2000, "jitter": "equal" }"#,
        );
        assert_eq!(s.delays.as_deref(), Some(&[1000.0, 2000.0, 2000.0, 2000.0][..]));
        assert_eq!(s.total_ms, Some(7000.0));
        assert_eq!(s.worst_total_ms, Some(7000.0));
        assert_eq!(s.jitter, Jitter::Yes);
    }

    #[test]
    fn what_is_missing_decides_what_is_uncapped() {
        let s = summary(r#"{ "baseDelayMs": 100, "backoffMultiplier": 2, "jitter": "full" }"#);
        assert_eq!(s.attempts, Attempts::Unbounded);
        assert_eq!(s.gap, Gap::Growing);
        assert_eq!(s.total_ms, None);
        let s = summary(r#"{ "maxAttempts": 3, "baseDelayMs": 100, "backoffMultiplier": 1 }"#);
        assert_eq!(s.gap, Gap::Capped(100.0), "a constant gap needs no cap");
        assert_eq!(s.jitter, Jitter::No, "no `jitter` is no jitter");
        let s = summary(r#"{ "maxAttempts": 3, "jitter": "none" }"#);
        assert_eq!(s.attempts, Attempts::Exact(2));
        assert_eq!(s.gap, Gap::Unknown, "no base delay, no multiplier: the gap is unknown");
        assert_eq!(s.jitter, Jitter::No);
        let s = summary(r#"{ "maxAttempts": 3, "backoffMultiplier": 2 }"#);
        assert_eq!(s.gap, Gap::Growing);
        assert_eq!(s.delays, None);
    }

    #[test]
    fn one_attempt_retries_nothing() {
        let s = summary(r#"{ "maxAttempts": 1, "baseDelayMs": 100, "backoffMultiplier": 2 }"#);
        assert_eq!(s.attempts, Attempts::Exact(0));
        assert_eq!(s.gap, Gap::Capped(0.0));
        assert_eq!(s.total_ms, Some(0.0));
    }

    #[test]
    fn unreadable_values_are_unknown() {
        let s = summary(r#"{ "maxAttempts": "${N}", "baseDelayMs": 100, "backoffMultiplier": 2, "maxDelayMs": 400 }"#);
        assert_eq!(s.attempts, Attempts::Unknown);
        assert_eq!(s.gap, Gap::Capped(400.0));
        let s = summary(
            r#"{ "maxAttempts": 3, "baseDelayMs": 100, "backoffMultiplier": 2, "maxDelayMs": 400, "jitter": "decorrelated" }"#,
        );
        assert_eq!(s.jitter, Jitter::Yes);
        assert_eq!(s.worst_total_ms, None, "decorrelated jitter is not modelled");
        let s = summary(r#"{ "maxAttempts": 3, "jitter": "sometimes" }"#);
        assert_eq!(s.jitter, Jitter::Unknown);
    }
}
