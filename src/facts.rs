//! Compact, language-neutral facts extracted from one file.
//!
//! A parse tree lives only while its file is being extracted; everything later phases need
//! is copied into these types. Expressions the rules reason about (retry policies, schedule
//! builders, helper functions) are kept as a small owned [`Expr`] tree: lossy on purpose,
//! anything the model does not know becomes [`Expr::Opaque`], which the analysis treats as
//! unknown (and unknown is silent).

use std::path::PathBuf;

pub use crate::jobs::{ClockRead, CronRepeat, CursorAccess, CursorKind, JobDef, JobRun, SlotUse};
pub use crate::sql::{SqlOrigin, SqlText};

/// A byte range into the file's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    TypeScript,
    Tsx,
    Rust,
    /// `.sql` files: read for their SQL texts only.
    Sql,
}

impl Language {
    pub fn from_path(path: &std::path::Path) -> Option<Language> {
        let name = path.file_name()?.to_str()?;
        if name.ends_with(".d.ts") || name.ends_with(".d.mts") || name.ends_with(".d.cts") {
            return None;
        }
        match path.extension()?.to_str()? {
            "ts" | "mts" | "cts" => Some(Language::TypeScript),
            "tsx" => Some(Language::Tsx),
            "rs" => Some(Language::Rust),
            "sql" => Some(Language::Sql),
            _ => None,
        }
    }
}

/// A small owned expression tree: the subset of TypeScript expressions that policies are
/// built from. Spans point into the file the expression was extracted from.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Ident(String, Span),
    Member(Box<Expr>, String, Span),
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
        span: Span,
    },
    Str(String, Span),
    Num(f64, Span),
    Bool(bool, Span),
    Object(Vec<Property>, Span),
    Array(Vec<Expr>, Span),
    /// An arrow function or function expression. `body` is the returned expression when
    /// the body is an expression or a block whose only statement is `return expr`.
    Function {
        params: Vec<String>,
        body: Option<Box<Expr>>,
        span: Span,
    },
    Binary {
        op: String,
        left: Box<Expr>,
        right: Box<Expr>,
        span: Span,
    },
    /// An identifier resolved lexically to a local `const` in an enclosing block of the
    /// same file, with the binding's initializer.
    Local {
        name: String,
        def: Span,
        value: Box<Expr>,
        span: Span,
    },
    /// An identifier bound to a parameter of an enclosing function (or a local without a
    /// known value): it shadows imports and top-level names.
    Param(String, Span),
    /// Anything the model does not represent: treated as unknown.
    Opaque(Span),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    pub key: String,
    pub key_span: Span,
    pub value: Expr,
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Ident(_, s)
            | Expr::Member(_, _, s)
            | Expr::Str(_, s)
            | Expr::Num(_, s)
            | Expr::Bool(_, s)
            | Expr::Object(_, s)
            | Expr::Array(_, s)
            | Expr::Param(_, s)
            | Expr::Opaque(s) => *s,
            Expr::Call { span, .. }
            | Expr::Function { span, .. }
            | Expr::Binary { span, .. }
            | Expr::Local { span, .. } => *span,
        }
    }

    /// The value of property `key` of an object literal.
    pub fn property(&self, key: &str) -> Option<&Expr> {
        match self {
            Expr::Object(props, _) => props.iter().rev().find(|p| p.key == key).map(|p| &p.value),
            _ => None,
        }
    }

    /// `a.b.c` as `["a", "b", "c"]`, for identifiers and member chains only.
    pub fn path(&self) -> Option<Vec<&str>> {
        match self {
            Expr::Ident(name, _) => Some(vec![name.as_str()]),
            Expr::Member(object, name, _) => {
                let mut path = object.path()?;
                path.push(name.as_str());
                Some(path)
            }
            _ => None,
        }
    }

    /// Calls `visit` on this expression and every sub-expression, following local
    /// bindings into their values.
    pub fn walk<'a>(&'a self, visit: &mut dyn FnMut(&'a Expr)) {
        visit(self);
        match self {
            Expr::Member(object, _, _) => object.walk(visit),
            Expr::Call { callee, args, .. } => {
                callee.walk(visit);
                args.iter().for_each(|a| a.walk(visit));
            }
            Expr::Object(props, _) => props.iter().for_each(|p| p.value.walk(visit)),
            Expr::Array(items, _) => items.iter().for_each(|a| a.walk(visit)),
            Expr::Function { body, .. } => {
                if let Some(body) = body {
                    body.walk(visit)
                }
            }
            Expr::Binary { left, right, .. } => {
                left.walk(visit);
                right.walk(visit);
            }
            Expr::Local { value, .. } => value.walk(visit),
            Expr::Ident(..) | Expr::Param(..) | Expr::Str(..) | Expr::Num(..) | Expr::Bool(..) | Expr::Opaque(_) => {}
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportKind {
    /// `import { imported as local } from "source"`
    Named(String),
    /// `import * as local from "source"`
    Namespace,
    /// `import local from "source"`
    Default,
}

#[derive(Debug, Clone)]
pub struct Import {
    pub local: String,
    pub kind: ImportKind,
    pub source: String,
    pub type_only: bool,
    pub span: Span,
}

#[derive(Debug, Clone)]
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
#[derive(Debug, Clone)]
pub struct Binding {
    pub name: String,
    pub span: Span,
    pub value: Expr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryKind {
    /// `Effect.retry`
    EffectRetry,
    /// `Effect.retryOrElse`
    EffectRetryOrElse,
    /// `Stream.retry`
    StreamRetry,
    /// `HttpClient.retryTransient`
    HttpRetryTransient,
    /// A Rust retry (backon, tokio-retry, backoff, reqwest-retry); [`RetrySite::rust`] says which.
    Rust,
}

impl RetryKind {
    pub fn callee(self) -> &'static str {
        match self {
            RetryKind::EffectRetry => "Effect.retry",
            RetryKind::EffectRetryOrElse => "Effect.retryOrElse",
            RetryKind::StreamRetry => "Stream.retry",
            RetryKind::HttpRetryTransient => "HttpClient.retryTransient",
            RetryKind::Rust => "retry",
        }
    }
}

/// A named scope around a fact: what a reader would say the code is "inside".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    pub kind: ContainerKind,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// One call that retries: `Effect.retry(…)`, `Stream.retry(…)`, ….
#[derive(Debug, Clone)]
pub struct RetrySite {
    pub kind: RetryKind,
    /// The whole call.
    pub span: Span,
    /// The callee, e.g. `Effect.retry`.
    pub callee_span: Span,
    /// The policy argument: an options object or a bare schedule.
    pub policy: Option<Expr>,
    /// Enclosing named scopes, outermost first.
    pub containers: Vec<Container>,
    /// What the retry replays, when the extractor can see it: the generator of the
    /// `Effect.fn` it is a pipeable of, the receiver of `.pipe(…)`, the first argument of
    /// `pipe(…)` or of data-first `Effect.retry(effect, …)`.
    pub target: Option<Unit>,
    /// The Rust part of a Rust retry site: library, builder chain, predicate.
    pub rust: Option<RustRetry>,
}

/// What a unit of work does, in source order: enough to tell whether replaying it can apply
/// something twice, and what runs after its transaction commits.
#[derive(Debug, Clone, Default)]
pub struct Unit {
    /// `Effect.fn("ActivateRule.persist")`'s name, or the called unit's name.
    pub name: Option<String>,
    pub span: Span,
    pub ops: Vec<UnitOp>,
}

#[derive(Debug, Clone)]
pub struct UnitOp {
    pub span: Span,
    pub kind: OpKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    /// `receiver.method(…)` or `method(…)`: classified by the rules (verbs are configurable).
    Call {
        receiver: Option<String>,
        method: String,
        /// Whether the first argument, an object literal, carries an `id` / `…Id` key (a
        /// client id); `None` when the first argument is not an object literal.
        client_id: Option<bool>,
    },
    /// An SQL statement in a `sql` tagged template.
    Sql(SqlClass),
    /// An HTTP request built with `HttpClientRequest.<method>` or `client.<method>(…)`.
    Http { method: String, idempotency_key: bool },
    /// `….withTransaction(…)`: the span covers what runs inside it.
    Transaction,
}

#[derive(Debug, Clone)]
pub struct ClientRequest {
    /// The client's local name.
    pub client: String,
    /// `post`, `patch`, `get`, …; `None` when `execute` is given a request the extractor
    /// cannot see.
    pub method: Option<String>,
    /// An `Idempotency-Key` header is set on the request.
    pub idempotency_key: bool,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlClass {
    Select,
    /// `INSERT` without `ON CONFLICT` / `OR IGNORE` / `OR REPLACE`.
    Insert,
    /// `INSERT … ON CONFLICT` and friends: a create that a replay cannot duplicate.
    Upsert,
    /// `UPDATE … SET`.
    Update,
    Delete,
    Other,
}

impl RetrySite {
    /// The options object, when the policy is one.
    pub fn options(&self) -> Option<&Expr> {
        match &self.policy {
            Some(e @ Expr::Object(..)) => Some(e),
            _ => None,
        }
    }

    /// The schedule: the `schedule` option, or the bare policy argument.
    pub fn schedule(&self) -> Option<&Expr> {
        match &self.policy {
            Some(Expr::Object(..)) => self.options()?.property("schedule"),
            other => other.as_ref(),
        }
    }

    pub fn times(&self) -> Option<&Expr> {
        self.options()?.property("times")
    }

    /// The callee as messages name it: `Effect.retry`, or for Rust `.retry`, `Retry::spawn`, ….
    pub fn callee(&self) -> &str {
        match &self.rust {
            Some(rust) => &rust.callee,
            None => self.kind.callee(),
        }
    }
}

/// Something the analysis could not look at, said to the user rather than silently missed.
#[derive(Debug, Clone)]
pub struct Note {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

/// Everything later phases know about one file.
#[derive(Debug, Clone)]
pub struct FileFacts {
    /// The path as discovered (relative to the current directory where possible).
    pub path: PathBuf,
    pub language: Language,
    /// Byte offset of each line start, for turning spans into lines without the text.
    pub line_starts: Vec<u32>,
    /// Imports from an Effect package (`effect`, `effect/*`, `@effect/*`).
    pub uses_effect: bool,
    pub imports: Vec<Import>,
    pub exports: Vec<Export>,
    pub bindings: Vec<Binding>,
    pub retry_sites: Vec<RetrySite>,
    /// Named units of this file (functions, `Effect.fn`s, object methods), so a retried unit's
    /// calls to them are followed. Collected only when the file retries something.
    pub units: Vec<Unit>,
    /// Local names bound to a client built with `HttpClient.retryTransient`.
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
    pub notes: Vec<Note>,
    /// Rust: every `fn` without parameters, `const` and `static` whose value is a retry
    /// builder or strategy (top level and inline `mod`s). The retry module's `pub` ones are
    /// its named policies.
    pub rust_policies: Vec<RustPolicy>,
}

impl FileFacts {
    pub fn new(path: PathBuf, language: Language, text: &[u8]) -> FileFacts {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i as u32 + 1));
        FileFacts {
            path,
            language,
            line_starts,
            uses_effect: false,
            imports: Vec::new(),
            exports: Vec::new(),
            bindings: Vec::new(),
            retry_sites: Vec::new(),
            units: Vec::new(),
            retrying_clients: Vec::new(),
            client_requests: Vec::new(),
            sql: Vec::new(),
            jobs: Vec::new(),
            cron_repeats: Vec::new(),
            cursors: Vec::new(),
            clock_reads: Vec::new(),
            notes: Vec::new(),
            rust_policies: Vec::new(),
        }
    }

    /// 0-based line of a byte offset.
    pub fn line_of(&self, offset: u32) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// 1-based (line, column in bytes) of a byte offset.
    pub fn position(&self, offset: u32) -> (usize, usize) {
        let line = self.line_of(offset);
        (line + 1, (offset - self.line_starts[line]) as usize + 1)
    }

    pub fn binding(&self, name: &str) -> Option<&Binding> {
        self.bindings.iter().find(|b| b.name == name)
    }

    pub fn import(&self, local: &str) -> Option<&Import> {
        self.imports.iter().find(|i| i.local == local)
    }
}

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
    /// `("Schedule", "exponential")` when, and only when, the names come from Effect.
    pub fn effect_member<'a>(&'a self, expr: &'a Expr) -> Option<(&'a str, &'a str)> {
        match expr {
            Expr::Ident(name, _) => {
                let import = self.import(name)?;
                if !is_effect_source(&import.source) {
                    return None;
                }
                match &import.kind {
                    ImportKind::Named(imported) => Some((effect_module_of_source(&import.source)?, imported.as_str())),
                    _ => None,
                }
            }
            Expr::Member(object, member, _) => {
                let module = self.effect_module(object)?;
                Some((module, member.as_str()))
            }
            _ => None,
        }
    }

    /// Resolves an expression naming an Effect module (`Schedule`, `S`, `Effect.Schedule`).
    pub fn effect_module<'a>(&'a self, expr: &'a Expr) -> Option<&'a str> {
        match expr {
            Expr::Ident(name, _) => {
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
            Expr::Member(object, member, _) => {
                // `import * as Fx from "effect"` then `Fx.Schedule`.
                let Expr::Ident(name, _) = object.as_ref() else {
                    return None;
                };
                let import = self.import(name)?;
                let root = is_effect_source(&import.source)
                    && effect_module_of_source(&import.source).is_none()
                    && matches!(import.kind, ImportKind::Namespace);
                root.then_some(member.as_str())
            }
            _ => None,
        }
    }
}

impl Expr {
    /// A compact source-like rendering for messages: `Schedule.exponential("100 millis")`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out, 0);
        out
    }

    fn render_into(&self, out: &mut String, depth: usize) {
        if depth > 6 || out.len() > 120 {
            out.push('…');
            return;
        }
        match self {
            Expr::Ident(name, _) | Expr::Param(name, _) | Expr::Local { name, .. } => out.push_str(name),
            Expr::Member(object, name, _) => {
                object.render_into(out, depth + 1);
                out.push('.');
                out.push_str(name);
            }
            Expr::Call { callee, args, .. } => {
                callee.render_into(out, depth + 1);
                out.push('(');
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    arg.render_into(out, depth + 1);
                }
                out.push(')');
            }
            Expr::Str(s, _) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            Expr::Num(n, _) => out.push_str(&format_number(*n)),
            Expr::Bool(b, _) => out.push_str(if *b { "true" } else { "false" }),
            Expr::Object(props, _) => {
                out.push_str("{ ");
                for (i, prop) in props.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&prop.key);
                    out.push_str(": ");
                    prop.value.render_into(out, depth + 1);
                }
                out.push_str(" }");
            }
            Expr::Array(items, _) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.render_into(out, depth + 1);
                }
                out.push(']');
            }
            Expr::Function { .. } => out.push_str("(…) => …"),
            Expr::Binary { op, left, right, .. } => {
                left.render_into(out, depth + 1);
                out.push(' ');
                out.push_str(op);
                out.push(' ');
                right.render_into(out, depth + 1);
            }
            Expr::Opaque(_) => out.push('…'),
        }
    }
}

pub fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

impl FileFacts {
    /// The local name under which this file imports Effect's `module` (`Schedule`, `S`).
    pub fn effect_module_local(&self, module: &str) -> Option<&str> {
        self.imports.iter().find_map(|import| {
            let local = Expr::Ident(import.local.clone(), Span::default());
            (self.effect_module(&local) == Some(module)).then_some(import.local.as_str())
        })
    }
}

// ------------------------------------------------------------------ Rust retry libraries

/// The Rust retry library a site calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RustLib {
    /// `backon`: `.retry(builder)` on a closure or future, `.when(…)` filters.
    Backon,
    /// `tokio-retry`: `Retry::spawn(strategy, action)`, `RetryIf::spawn(…, condition)`.
    TokioRetry,
    /// `backoff`: `backoff::retry(policy, op)`, `backoff::future::retry(policy, op)`.
    Backoff,
    /// `reqwest-retry`: `RetryTransientMiddleware::new_with_policy(policy)`.
    ReqwestRetry,
}

/// The Rust part of a retry site.
#[derive(Debug, Clone)]
pub struct RustRetry {
    pub lib: RustLib,
    /// The callee as written for messages: `.retry`, `Retry::spawn`, `backoff::future::retry`.
    pub callee: String,
    /// The policy argument as written at the site.
    pub arg: Span,
    /// What the argument evaluates to (through a local `let`); `None` when it is not a
    /// builder the extractor can follow (a parameter, a field, a macro).
    pub policy: Option<RustChain>,
    /// The policy argument names a local `let` binding: its name and where it is defined.
    pub local: Option<(String, Span)>,
    /// Whether the retry filters errors: backon `.when(…)`, `RetryIf`, a backoff operation
    /// that returns `backoff::Error::permanent`, reqwest-retry's transient classification.
    /// `None` when the extractor cannot see (an operation passed by name).
    pub has_predicate: Option<bool>,
}

/// A builder expression: a base (a library constructor with its defaults, or a named
/// policy) and the builder methods applied to it, in order.
#[derive(Debug, Clone)]
pub struct RustChain {
    pub base: RustBase,
    pub ops: Vec<RustOp>,
    pub span: Span,
    /// The source text, whitespace collapsed, for messages.
    pub text: String,
}

#[derive(Debug, Clone)]
pub enum RustBase {
    /// `ExponentialBuilder::default()`, `ExponentialBackoff::from_millis(10)`, a `backoff`
    /// struct literal: the library's defaults. `ctor` is how messages name it. `via` names
    /// the same-file helper that built it, when the site called one.
    New {
        ctor: String,
        state: RustBackoff,
        via: Option<String>,
    },
    /// A reference to a named policy: a `fn` called without arguments, a `const`, a `static`.
    Named(RustPath),
    Unknown,
}

/// A Rust path as written, with `use` declarations applied: it starts with `crate`, `self`
/// (this module, or a child of it), `super`, or an external crate's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustPath {
    pub segments: Vec<String>,
    /// The inline `mod`s of this file the path is written in.
    pub module: Vec<String>,
    pub span: Span,
}

impl RustPath {
    /// `retry::transient`, for messages.
    pub fn render(&self) -> String {
        let skip = usize::from(self.segments.first().is_some_and(|s| s == "self" || s == "crate"));
        self.segments[skip..].join("::")
    }
}

/// One builder method call (`.with_max_times(3)`) or struct field (`=max_elapsed_time`).
#[derive(Debug, Clone)]
pub struct RustOp {
    pub method: String,
    pub args: Vec<RustArg>,
    pub span: Span,
}

/// An argument value, as far as the extractor can evaluate it.
#[derive(Debug, Clone, PartialEq)]
pub enum RustArg {
    Num(f64),
    /// A `Duration`, in milliseconds.
    Ms(f64),
    Some(Box<RustArg>),
    None,
    Bool(bool),
    /// A path such as `Jitter::Full` or `jitter` (`use` declarations applied).
    Path(Vec<String>),
    Unknown,
}

/// The configuration a Rust retry library's builder holds: what its methods change, and
/// what the schedule model runs (`schedule::rust`). Durations are milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub enum RustBackoff {
    /// backon's `ExponentialBuilder`, `ConstantBuilder` (`min_delay` is its delay) and
    /// `FibonacciBuilder`.
    Backon {
        shape: BackonShape,
        jitter: bool,
        factor: f64,
        min_delay: f64,
        max_delay: Option<f64>,
        max_times: Option<u64>,
        total_delay: Option<f64>,
    },
    /// tokio-retry's strategies (iterators of delays), with `.map(jitter)` and `.take(n)`.
    TokioRetry {
        shape: TokioShape,
        factor: f64,
        max_delay: Option<f64>,
        jitter: bool,
        take: Option<u64>,
    },
    /// backoff's `ExponentialBackoff` (struct or `ExponentialBackoffBuilder`), `Constant`,
    /// `Zero`, `Stop`.
    Backoff {
        shape: BackoffShape,
        initial: f64,
        randomization: f64,
        multiplier: f64,
        max_interval: f64,
        max_elapsed: Option<f64>,
    },
    /// reqwest-retry's (retry-policies') `ExponentialBackoff`: `builder()` until one of the
    /// `build_with_*` methods makes it a policy.
    Reqwest {
        min: f64,
        max: f64,
        jitter: ReqwestJitter,
        base: f64,
        max_retries: Option<u64>,
        total: Option<f64>,
        built: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackonShape {
    Exponential,
    Constant,
    Fibonacci,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TokioShape {
    /// `ExponentialBackoff::from_millis(base)`: `base^n` milliseconds (times `factor`).
    Exponential {
        base: f64,
    },
    Fibonacci {
        base: f64,
    },
    Fixed {
        ms: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BackoffShape {
    Exponential,
    Constant(f64),
    Zero,
    Stop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReqwestJitter {
    None,
    Full,
    Bounded,
}

impl RustBackoff {
    pub fn lib(&self) -> RustLib {
        match self {
            RustBackoff::Backon { .. } => RustLib::Backon,
            RustBackoff::TokioRetry { .. } => RustLib::TokioRetry,
            RustBackoff::Backoff { .. } => RustLib::Backoff,
            RustBackoff::Reqwest { .. } => RustLib::ReqwestRetry,
        }
    }
}

/// A Rust item whose value is a retry builder: `pub fn transient() -> ExponentialBuilder {…}`,
/// `pub const CONTENTION: ExponentialBuilder = …;`.
#[derive(Debug, Clone)]
pub struct RustPolicy {
    pub name: String,
    /// The inline `mod`s of the file it is declared in.
    pub module: Vec<String>,
    /// Declared with a visibility (`pub`, `pub(crate)`).
    pub public: bool,
    /// The item's name.
    pub name_span: Span,
    /// The whole item.
    pub item: Span,
    pub value: RustChain,
}
