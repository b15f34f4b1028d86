//! Compact, language-neutral facts extracted from one file.
//!
//! A parse tree lives only while its file is being extracted; everything later stages need
//! is copied into these types, each carrying byte spans into the file. Retry sites, units,
//! SQL, jobs and suppressions look the same whichever language they came from; the parts
//! that are a language's own (a TypeScript module's imports and bindings, a Rust retry
//! builder) are kept in that language's terms for `index` and `analysis` to read.
//!
//! Facts are plain data (`serde`), so they can be cached by the file's content.

mod expr;
mod jobs;
mod lookup;
mod module;
mod retry;
pub mod rs2;
pub mod rust;
pub mod sql;
mod unit;

use serde::{Deserialize, Serialize};

pub use expr::{duration_millis, format_number, string_value, Expr, Property};
pub use jobs::{
    ClockRead, CronHandler, CronRepeat, CronWrapper, CursorAccess, CursorKind, JobDef, JobRun, PollKind, PollLoop,
    SinceFromNow, SlotUse,
};
pub use module::{is_effect_source, Binding, EffectAlias, Export, Import, ImportKind, EFFECT_MODULE_NAMES};
pub use retry::{PassedPolicy, PolicyArg, Predicate, Retried, RetrySite};
pub use rs2::{EffectClass, Rs2Call, Rs2Facts, Rs2Policy};
pub use rust::{
    RustBase, RustChain, RustHelper, RustHelperArg, RustHelperCall, RustOp, RustPath, RustPolicy, RustPolicyArg,
    RustStepped, RustWithin, RustWrapper, RustWrapperCall, RustWrapperMethod, RustWrapperParam, RustWrapperSchedule,
    RustWrapperStep,
};
pub use sql::{SqlOrigin, SqlText};
pub use unit::{ArgKey, ArgKeys, ClientRequest, Handler, OpKind, ServiceDef, SqlClass, Unit, UnitOp};

use crate::source::{Language, LineIndex, Span};

/// A named scope around a fact: what a reader would say the code is "inside".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Container {
    pub kind: ContainerKind,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ContainerKind {
    Class,
    Function,
    Variable,
    /// `Layer.effect(Tag, …)` and friends: the tag the layer provides.
    Layer,
    /// `Effect.fn("span name")`
    EffectFn,
    /// A Rust `impl` block: its self type, and (pushed before it) the trait it implements.
    Impl,
    /// A Rust `mod name { … }`.
    Module,
    /// A call that registers a handler, named by its callee: `Outbox.subscribe`, `queue.consumer`.
    Registration,
}

/// A `retrylint-ignore` comment: `// retrylint-ignore <rule>[, <rule>] -- <reason>` on the
/// line before a finding or at the end of its line, `retrylint-ignore-file` for the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suppression {
    /// The comment itself.
    pub span: Span,
    /// 0-based line the suppression applies to; `None` for the whole file.
    pub line: Option<usize>,
    pub rules: Vec<String>,
    pub reason: Option<String>,
}

/// The notes a file keeps; the rest are counted ([`FileFacts::notes_dropped`]) and said in
/// one note.
pub const MAX_NOTES_PER_FILE: usize = 20;

/// Something the extractor could not look at in this file, said to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileNote {
    /// 1-based line, when the note is about a place.
    pub line: Option<usize>,
    pub message: String,
}

/// Everything later stages know about one file. Nothing here depends on where the file is
/// or on the configuration: the same bytes give the same facts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileFacts {
    pub language: Language,
    pub lines: LineIndex,
    /// Whether the file was parsed (a file the prefilter rules out holds only suppressions).
    pub parsed: bool,
    /// Imports from an Effect package (`effect`, `effect/*`, `@effect/*`).
    pub uses_effect: bool,
    pub imports: Vec<Import>,
    pub exports: Vec<Export>,
    pub bindings: Vec<Binding>,
    pub retry_sites: Vec<RetrySite>,
    /// Calls that pass a policy in an options object, to a function that may retry with it.
    pub passed_policies: Vec<PassedPolicy>,
    /// Named units of this file (functions, `Effect.fn`s, object methods), so a retried unit's
    /// calls to them are followed. Collected only when the file retries something.
    pub units: Vec<Unit>,
    /// Functions handed to something that runs them later (handler registrations, queue
    /// processors, job tasks). Collected only when the file retries something.
    pub handlers: Vec<Handler>,
    /// Services this file implements, with their methods as units (Effect files only).
    pub services: Vec<ServiceDef>,
    /// The file retries nothing and was read lazily ([`crate::extract::Depth::Lazy`]): its
    /// named units and services were not read. A file's own units are read only for its retry
    /// sites; whoever follows a call into another file asks the index
    /// (`Index::facts_with_units`), which loads it again in full before rules run. A Rust
    /// file read lazily whose helper calls were kept unread ([`RustHelperCall::unread`]) is
    /// such a file too: resolution asks for it again when one of them may be a helper's.
    pub units_deferred: bool,
    /// Local names bound to a retrying client (`HttpClient.retryTransient`).
    pub retrying_clients: Vec<(String, Span)>,
    /// Requests sent through a named client: `client.execute(HttpClientRequest.post(…))`,
    /// `client.post(…)`.
    pub client_requests: Vec<ClientRequest>,
    /// Every SQL text: `sql` templates, SQL-looking literals, `.sql` files, Rust strings.
    pub sql: Vec<SqlText>,
    /// `Jobs.make({…})` definitions.
    pub jobs: Vec<JobDef>,
    /// Effect `Schedule.cron(…)` calls: recurring work outside a `Jobs.make` value.
    pub cron_repeats: Vec<CronRepeat>,
    /// `Ref` reads and writes of a last-run time.
    pub cursors: Vec<CursorAccess>,
    /// `Date.now()` / `new Date()`.
    pub clock_reads: Vec<ClockRead>,
    /// Functions of this file that run a cron job and hand their handler its slot.
    pub cron_wrappers: Vec<CronWrapper>,
    /// "Now minus an interval" in callbacks passed to calls (a cron wrapper's jobs).
    pub since_from_now: Vec<SinceFromNow>,
    /// Loops that poll or restart on an interval.
    pub polls: Vec<PollLoop>,
    /// Rust: every `fn` without parameters, `const` and `static` whose value is a retry
    /// builder or strategy (top level and inline `mod`s). The retry module's `pub` ones are
    /// its named policies.
    pub rust_policies: Vec<RustPolicy>,
    /// Rust: the file's `const`s and `static`s whose value is a number or a `Duration`
    /// (`pub const DEFAULT_RETRY_TIMEOUT: Duration = Duration::from_secs(120);`), for a call of
    /// a retry helper in another file that passes one.
    #[serde(default)]
    pub rust_consts: Vec<(String, Vec<String>, crate::schedule::rust::Arg)>,
    /// Rust: functions whose retry takes its strategy, operation or predicate from their
    /// parameters, and the calls of the crate's functions that may be calls of one.
    pub rust_helpers: Vec<RustHelper>,
    pub rust_helper_calls: Vec<RustHelperCall>,
    /// Rust: the project's retry builders (issue 25) and the call chains that may use one.
    #[serde(default)]
    pub rust_wrappers: Vec<RustWrapper>,
    #[serde(default)]
    pub rust_wrapper_calls: Vec<RustWrapperCall>,
    /// Rust: policies no retry site is given, stepped or handed on by the code itself.
    #[serde(default)]
    pub rust_stepped: Vec<RustStepped>,
    /// JSON/YAML: the RS2 retry policies, calls and `$_retry` references of the document.
    pub rs2: Rs2Facts,
    pub suppressions: Vec<Suppression>,
    pub notes: Vec<FileNote>,
    /// Notes past the first [`MAX_NOTES_PER_FILE`], counted, not kept: a generated or hostile
    /// file can hold thousands of the same note (one per retry nested too deep), which would
    /// flood the log and make the editor convert every one of them to a range.
    pub notes_dropped: usize,
    /// Error and missing nodes left in the tree after recovery (TypeScript and Rust): the
    /// language server tells a buffer in mid-edit by them without parsing it a second time.
    pub syntax_errors: usize,
    /// Look-up tables over the lists above, read on first use (not stored: the same facts
    /// give the same tables).
    #[serde(skip)]
    pub(crate) lookups: lookup::Lookups,
}

impl FileFacts {
    pub fn new(language: Language, text: &[u8]) -> FileFacts {
        FileFacts {
            language,
            lines: LineIndex::new(text),
            parsed: false,
            uses_effect: false,
            imports: Vec::new(),
            exports: Vec::new(),
            bindings: Vec::new(),
            retry_sites: Vec::new(),
            passed_policies: Vec::new(),
            units: Vec::new(),
            handlers: Vec::new(),
            services: Vec::new(),
            units_deferred: false,
            retrying_clients: Vec::new(),
            client_requests: Vec::new(),
            sql: Vec::new(),
            jobs: Vec::new(),
            cron_repeats: Vec::new(),
            cursors: Vec::new(),
            clock_reads: Vec::new(),
            cron_wrappers: Vec::new(),
            since_from_now: Vec::new(),
            polls: Vec::new(),
            rust_policies: Vec::new(),
            rust_consts: Vec::new(),
            rust_helpers: Vec::new(),
            rust_helper_calls: Vec::new(),
            rust_wrappers: Vec::new(),
            rust_wrapper_calls: Vec::new(),
            rust_stepped: Vec::new(),
            rs2: Rs2Facts::default(),
            suppressions: Vec::new(),
            notes: Vec::new(),
            notes_dropped: 0,
            syntax_errors: 0,
            lookups: lookup::Lookups::default(),
        }
    }

    /// Whether the file holds anything a finding can be about (rather than only names other
    /// files resolve through): its text is then worth keeping for rendering.
    pub fn holds_findings(&self) -> bool {
        !(self.retry_sites.is_empty()
            && self.sql.is_empty()
            && self.jobs.is_empty()
            && self.cron_repeats.is_empty()
            && self.cursors.is_empty()
            && self.clock_reads.is_empty()
            && self.since_from_now.is_empty()
            && self.cron_wrappers.is_empty()
            && self.passed_policies.is_empty()
            && self.polls.is_empty()
            && self.client_requests.is_empty()
            && self.retrying_clients.is_empty()
            && self.rust_policies.is_empty()
            && self.rust_helper_calls.is_empty()
            && self.rust_wrapper_calls.is_empty()
            && self.rust_stepped.is_empty()
            && self.rs2.is_empty()
            && self.suppressions.is_empty()
            && self.notes.is_empty())
    }

    /// 0-based line of a byte offset.
    pub fn line_of(&self, offset: u32) -> usize {
        self.lines.line_of(offset)
    }

    /// 1-based (line, column in bytes) of a byte offset.
    pub fn position(&self, offset: u32) -> (usize, usize) {
        self.lines.position(offset)
    }

    pub fn note(&mut self, line: Option<usize>, message: impl Into<String>) {
        if self.notes.len() >= MAX_NOTES_PER_FILE {
            self.notes_dropped += 1;
            return;
        }
        self.notes.push(FileNote {
            line,
            message: message.into(),
        });
    }
}
