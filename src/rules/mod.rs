//! The rule catalogue: a flat list of rules, each data plus one check function.
//! A rule's documentation lives in `rules/<name>.md` and is embedded here.

mod cron_expression;
pub mod doc_blocks;
mod exclusive_job_timeout;
mod imperative_retry;
mod inline_schedule;
mod lease_release_unguarded;
mod lease_without_slot;
mod policy_over_budget;
mod poll_without_backoff;
mod retry_after_commit;
mod retry_in_repository;
mod retry_on_permanent_status;
mod retry_on_unsafe_call;
mod retry_without_predicate;
mod retrying_client_unsafe_method;
mod since_last_run_cursor;
mod stacked_retry;
mod suppression_without_reason;
mod transient_retry_on_append;
mod uncapped_schedule;
mod unjittered_schedule;
mod unused_suppression;

pub(crate) mod tester;

use crate::analysis::{Analysis, Origin, Policy, SiteAnalysis};
pub use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Label, Severity};
pub use crate::extract::Trigger;
use crate::facts::FileFacts;
use crate::index::{FileId, Index};
use crate::source::{snippet, Span};

/// One rule: its metadata and its check.
pub struct Rule {
    /// Stable kebab-case name used in output, config and suppressions.
    pub name: &'static str,
    pub summary: &'static str,
    /// The policy decision the rule enforces (see `rules/<name>.md`).
    pub decision: &'static str,
    pub default_severity: Severity,
    pub fix: FixSafety,
    /// What a file must hold for the rule to find anything in it: the prefilter parses only
    /// files that hold a trigger of an enabled rule.
    pub triggers: &'static [Trigger],
    /// `rules/<name>.md`.
    pub doc: &'static str,
    pub check: fn(&Context, &mut Vec<Diagnostic>),
}

/// What a check sees: one file's facts and analysis, and the whole index. Rules only read:
/// resolution and evaluation happened in `analysis`.
pub struct Context<'p> {
    pub index: &'p Index,
    pub analysis: &'p Analysis,
    pub file: FileId,
    pub facts: &'p FileFacts,
}

impl<'p> Context<'p> {
    /// This file's text, as extraction kept it (or as the editor holds it): rules never read
    /// the disk. `None` for a file kept without its text (one that can hold no finding).
    pub fn text(&self) -> Option<&'p [u8]> {
        self.index.kept_text(self.file)
    }

    /// What analysis found about each retry site of this file, in order.
    pub fn sites(&self) -> &'p [SiteAnalysis] {
        self.analysis.sites(self.index, self.file)
    }

    /// The retry policies this file defines or builds.
    pub fn policies(&self) -> &'p [Policy] {
        self.analysis.policies(self.index, self.file)
    }

    /// What analysis found about the file as RS2 configuration (levels, calls' policies).
    pub fn rs2(&self) -> &'p crate::analysis::rs2::Rs2File {
        self.analysis.rs2(self.index, self.file)
    }

    /// The file's retry sites with their analysis.
    pub fn retry_sites(&self) -> impl Iterator<Item = (&'p crate::facts::RetrySite, &'p SiteAnalysis)> {
        self.facts.retry_sites.iter().zip(self.sites())
    }

    pub fn config(&self) -> &'p crate::config::Config {
        self.index.config_of(self.file)
    }

    pub fn is_retry_module(&self) -> bool {
        self.index.is_retry_module(self.file)
    }

    /// Whether a policy of this file is a supervisor's own: the policy of a retry that
    /// restarts long-running work, judged by decision 6 rather than as a request retry.
    /// A named policy (`fn retry_policy()` outside the retry module) is a supervisor's when
    /// every site that names it is one.
    pub fn is_supervisor_policy(&self, policy: &Policy) -> bool {
        match policy.origin {
            Origin::Site { .. } => self.analysis.within_supervisor(self.index, self.file, policy.span),
            Origin::Named { .. } => {
                !policy.uses.is_empty()
                    && policy
                        .uses
                        .iter()
                        .all(|(file, span)| self.analysis.within_supervisor(self.index, *file, *span))
            }
            _ => false,
        }
    }
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
    &poll_without_backoff::RULE,
    &retry_on_unsafe_call::RULE,
    &retry_on_permanent_status::RULE,
    &imperative_retry::RULE,
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

impl Rule {
    /// A finding of this rule in the context's file.
    pub fn report(&self, ctx: &Context, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            rule: self.name,
            severity: self.default_severity,
            file: ctx.file,
            span,
            message: message.into(),
            help: None,
            labels: Vec::new(),
            fix: None,
        }
    }
}

/// A named policy's finding lists the sites that name it, as related locations.
pub fn with_uses(diagnostic: Diagnostic, policy: &Policy) -> Diagnostic {
    policy
        .uses
        .iter()
        .fold(diagnostic, |d, (file, span)| d.with_label(*file, *span, "used here"))
}

/// How a message names a policy: `` `transient` `` for an export, the expression otherwise.
pub fn policy_name(policy: &Policy) -> String {
    match &policy.origin {
        Origin::Export { name, .. } | Origin::Named { name, .. } => format!("`{name}`"),
        Origin::Site { callee } if policy.schedule.is_none() => {
            format!("`{callee}({})`", snippet(&policy.text, 50))
        }
        Origin::Site { .. } => format!("`{}`", snippet(&policy.text, 60)),
        Origin::Config { name } => name.clone(),
    }
}
