//! The analysis' results about policies, as data: what a policy is ([`Policy`]), where it
//! comes from ([`Origin`]), what the model found wrong while evaluating it ([`Problem`]) and
//! how a fix inserts text ([`Insertion`]). Data only: the modules that evaluate policies
//! (`effect`, `rust`, `rs2`) and the one that collects them (`policy`) all depend on it, and it
//! on none of them.

use crate::effect_version::EffectVersion;
use crate::index::FileId;
use crate::schedule::{Library, Summary};
use crate::source::Span;

#[derive(Debug, Clone)]
pub enum Origin {
    /// `export const transient = …` in the retry module.
    Export { name: String, binding: Span },
    /// A binding outside the retry module that sites name as their policy
    /// (`const storeRetry = …`): reported where it is defined.
    Named { name: String, binding: Span },
    /// A retry site's own policy (inline, bound to a local name, or imported from elsewhere):
    /// `callee` is how messages name the site's call.
    Site { callee: String },
    /// A declarative policy in a configuration file (RS2): `name` is how messages name it,
    /// `` `retry` (tenant) ``.
    Config { name: String },
}

/// A problem the model found while evaluating, such as a duration string Effect rejects.
#[derive(Debug, Clone)]
pub struct Problem {
    pub file: FileId,
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct Policy {
    pub origin: Origin,
    /// Where a finding about the policy points: the export's name or the site's policy.
    pub span: Span,
    /// The schedule expression itself, when there is one (where a fix would edit).
    pub schedule: Option<Span>,
    /// The expression, rendered for messages.
    pub text: String,
    pub summary: Summary,
    pub problems: Vec<Problem>,
    /// Whose semantics the policy has: how a finding spells its remedies.
    pub library: Library,
    /// The `effect` version of the file (Effect policies): which combinators a remedy names.
    pub effect: EffectVersion,
    /// How a jitter fix is spelled: `.pipe(Schedule.jittered)`, `.with_jitter()`; one
    /// insertion for each branch of a conditional policy that needs it, applied together.
    /// Empty when there is none.
    pub jitter_fix: Vec<Insertion>,
    /// The sites that name the policy (a named policy): related locations of its findings.
    pub uses: Vec<(FileId, Span)>,
}

/// Text a fix inserts at one offset, with the fix's title.
#[derive(Debug, Clone)]
pub struct Insertion {
    pub at: u32,
    pub text: String,
    pub title: String,
}
