//! The rule catalogue: a flat list of rules, each data plus one check function.
//! A rule's documentation lives in `rules/<name>.md` and is embedded here.

mod cron_expression;
mod exclusive_job_timeout;
mod inline_schedule;
mod lease_release_unguarded;
mod lease_without_slot;
mod policy_over_budget;
mod retry_after_commit;
mod retry_in_repository;
mod retry_without_predicate;
mod retrying_client_unsafe_method;
mod since_last_run_cursor;
mod stacked_retry;
mod suppression_without_reason;
mod transient_retry_on_append;
mod uncapped_schedule;
mod unjittered_schedule;
mod unused_suppression;

use std::fmt;

use crate::facts::{FileFacts, Span};
use crate::project::{FileId, Project};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Off,
    Warning,
    Error,
}

impl Severity {
    pub fn parse(text: &str) -> Option<Severity> {
        match text {
            "error" => Some(Severity::Error),
            "warn" | "warning" => Some(Severity::Warning),
            "off" => Some(Severity::Off),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Off => "off",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a rule's fix may do, with the meaning written down once:
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixSafety {
    /// The rule offers no fix; its help line says what to do.
    None,
    /// Behaviour-preserving; `--fix` applies it.
    Safe,
    /// Changes behaviour (timing, what is retried); needs `--unsafe-fixes`.
    Unsafe,
}

/// One rule: its metadata and its check.
pub struct Rule {
    /// Stable kebab-case name used in output, config and suppressions.
    pub name: &'static str,
    pub summary: &'static str,
    /// The policy decision the rule enforces (see `rules/<name>.md`).
    pub decision: &'static str,
    pub default_severity: Severity,
    pub fix: FixSafety,
    /// `rules/<name>.md`.
    pub doc: &'static str,
    pub check: fn(&Context, &mut Vec<Diagnostic>),
}

/// What a check sees: one file's facts and the whole project.
pub struct Context<'p> {
    pub project: &'p Project,
    pub file: FileId,
    pub facts: &'p FileFacts,
}

pub const RULES: &[&Rule] = &[
    &inline_schedule::RULE,
    &retry_in_repository::RULE,
    &uncapped_schedule::RULE,
    &unjittered_schedule::RULE,
    &policy_over_budget::RULE,
    &transient_retry_on_append::RULE,
    &retry_without_predicate::RULE,
    &retry_after_commit::RULE,
    &stacked_retry::RULE,
    &retrying_client_unsafe_method::RULE,
    &since_last_run_cursor::RULE,
    &lease_without_slot::RULE,
    &lease_release_unguarded::RULE,
    &cron_expression::RULE,
    &exclusive_job_timeout::RULE,
    &suppression_without_reason::RULE,
    &unused_suppression::RULE,
];

/// The rules computed by the pipeline from suppression comments, not per file.
pub const SUPPRESSION_RULES: [&str; 2] = ["suppression-without-reason", "unused-suppression"];

pub fn by_name(name: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.name == name)
}

pub fn names() -> Vec<&'static str> {
    RULES.iter().map(|r| r.name).collect()
}

/// A secondary location that explains a finding.
#[derive(Debug, Clone)]
pub struct Label {
    pub file: FileId,
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct Edit {
    pub file: FileId,
    pub span: Span,
    pub replacement: String,
}

#[derive(Debug, Clone)]
pub struct Fix {
    pub safety: FixSafety,
    pub title: String,
    pub edits: Vec<Edit>,
}

/// One finding. Messages are lowercase without a trailing period and say what goes wrong
/// in the user's terms; `help` says what to do instead.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub rule: &'static str,
    pub severity: Severity,
    pub file: FileId,
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
    pub labels: Vec<Label>,
    pub fix: Option<Fix>,
}

impl Diagnostic {
    pub fn new(rule: &Rule, ctx: &Context, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            rule: rule.name,
            severity: rule.default_severity,
            file: ctx.file,
            span,
            message: message.into(),
            help: None,
            labels: Vec::new(),
            fix: None,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn with_label(mut self, file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            file,
            span,
            message: message.into(),
        });
        self
    }
}

/// Shortens source text for a message: first line, at most `max` characters.
pub fn snippet(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    if first.chars().count() <= max && !text.trim().contains('\n') {
        return first.to_string();
    }
    let cut: String = first.chars().take(max).collect();
    format!("{cut}…")
}

/// How a message names a policy: `` `transient` `` for an export, the expression otherwise.
pub fn policy_name(policy: &crate::policy::Policy) -> String {
    match &policy.origin {
        crate::policy::Origin::Export { name, .. } => format!("`{name}`"),
        crate::policy::Origin::Site { kind } if policy.schedule.is_none() => {
            format!("`{}({})`", kind.callee(), snippet(&policy.text, 50))
        }
        crate::policy::Origin::Site { .. } => format!("`{}`", snippet(&policy.text, 60)),
    }
}
