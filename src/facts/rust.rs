//! Rust retry policies as the extractor sees them: builder chains of the retry libraries
//! (backon, tokio-retry, backoff, reqwest-retry), paths to named policies, and the policies a
//! module defines. The libraries' semantics live in `schedule::rust`.

use serde::{Deserialize, Serialize};

use crate::schedule::rust::{Arg, Backoff};
use crate::source::Span;

/// The policy argument of a Rust retry site.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustPolicyArg {
    /// The argument as written at the site.
    pub arg: Span,
    /// What the argument evaluates to (through a local `let`); `None` when it is not a
    /// builder the extractor can follow (a parameter, a field, a macro).
    pub chain: Option<RustChain>,
    /// The argument names a local `let` binding: its name and where it is defined.
    pub local: Option<(String, Span)>,
    /// The local is the policy of several sites (`let backoff = …;` then three
    /// `retry(backoff.clone(), …)`): one policy, reported once where it is built.
    #[serde(default)]
    pub shared: bool,
    /// The strategy of a project retry builder's factory with every value its callers give
    /// unknown (issue 25): what it says holds for every call, the factory's own (reported at
    /// its definition), so a call is judged for what its values decide.
    #[serde(default)]
    pub regardless: Option<Box<RustChain>>,
}

impl RustPolicyArg {
    /// Where the builder is built when that is apart from the site and not a local of its
    /// function used by this site alone — a struct field the constructor sets, a `let` that
    /// several sites share: one policy, reported there, whose sites are its uses.
    pub fn defined_apart(&self) -> Option<Span> {
        let chain = self.chain.as_ref()?;
        let inside = self.arg.start <= chain.span.start && chain.span.end <= self.arg.end;
        ((self.local.is_none() || self.shared) && !inside).then_some(chain.span)
    }

    /// [`Self::defined_apart`], and a field's builder that the site changes
    /// (`self.backoff.clone().take(7)`, the file's `text` tells): built where its own methods
    /// are, in the constructor (issue 25.3), reported there with the site as its use.
    pub fn defined_apart_in(&self, text: Option<&[u8]>) -> Option<Span> {
        if let Some(at) = self.defined_apart() {
            return Some(at);
        }
        let chain = self.chain.as_ref()?;
        let arg = text?.get(self.arg.start as usize..self.arg.end as usize)?;
        // `self.field…`, not a method's call `self.policy()`.
        let rest = arg.strip_prefix(b"self.")?;
        let field = rest
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        if self.local.is_some() || field == 0 || rest.get(field) == Some(&b'(') {
            return None;
        }
        let first = chain.ops.first()?.span;
        (first.end <= self.arg.start).then_some(first)
    }
}

/// A builder expression: a base (a library constructor with its defaults, or a named
/// policy) and the builder methods applied to it, in order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustChain {
    pub base: RustBase,
    pub ops: Vec<RustOp>,
    pub span: Span,
    /// The source text, whitespace collapsed, for messages.
    pub text: String,
    /// The same-file function with parameters whose call built it (`get_retry_strategy(config,
    /// op)`), the one the site called, and where its name is: the policy is that factory's, one
    /// however many call it.
    #[serde(default)]
    pub factory: Option<Box<(String, Span)>>,
}

impl RustChain {
    /// Whether it holds a parameter of the function it is built in ([`Arg::Param`]).
    pub fn has_param(&self) -> bool {
        use crate::schedule::rust::Arg;
        let base = match &self.base {
            RustBase::Deferred { args, .. } | RustBase::Call { args, .. } => args.iter().any(Arg::has_param),
            _ => false,
        };
        base || self.ops.iter().any(|op| op.args.iter().any(Arg::has_param))
    }

    /// The strategy with the arguments of a call for the parameters it is built from.
    pub fn given(&self, args: &[crate::schedule::rust::Arg]) -> RustChain {
        let mut out = self.clone();
        match &mut out.base {
            RustBase::Deferred { args: given, .. } | RustBase::Call { args: given, .. } => {
                *given = given.iter().map(|a| a.given(args)).collect();
            }
            _ => {}
        }
        for op in &mut out.ops {
            op.args = op.args.iter().map(|a| a.given(args)).collect();
        }
        out
    }

    /// Whether a value it is built from is not known here (unknown, or a parameter).
    pub fn not_known(&self) -> bool {
        use crate::schedule::rust::Arg;
        let base = match &self.base {
            RustBase::Deferred { args, .. } | RustBase::Call { args, .. } => args.iter().any(Arg::not_known),
            RustBase::Unknown => true,
            _ => false,
        };
        base || self.ops.iter().any(|op| op.args.iter().any(Arg::not_known))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum RustBase {
    /// `ExponentialBuilder::default()`, `ExponentialBackoff::from_millis(10)`, a `backoff`
    /// struct literal: the library's defaults. `ctor` is how messages name it. `via` names
    /// the same-file helper that built it, when the site called one.
    New {
        ctor: String,
        state: Backoff,
        via: Option<String>,
        /// Built by a method of a config type from its own fields
        /// (`RetryConfig::to_backoff(&self)`): the configuration names the policy, as the retry
        /// module would, so it is not an inline one; its defects are still judged.
        configured: bool,
    },
    /// A reference to a named policy: a `fn` called without arguments, a `const`, a `static`.
    Named(RustPath),
    /// A library constructor given values not known here (a factory's parameters, a
    /// config field): `path` with `use` declarations applied. What does not depend on them
    /// (jitter, a `take`, a cap) is still judged; with a call's arguments
    /// ([`crate::schedule::rust::Arg::Param`]) everything is.
    Deferred {
        path: Vec<String>,
        args: Vec<Arg>,
        ctor: String,
    },
    /// A call of a factory of the crate (or of a workspace crate) with arguments:
    /// `exponential_backoff(100, 5, Duration::from_secs(8))`.
    Call {
        path: RustPath,
        args: Vec<Arg>,
    },
    Unknown,
}

/// A Rust path as written, with `use` declarations applied: it starts with `crate`, `self`
/// (this module, or a child of it), `super`, or an external crate's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustOp {
    pub method: String,
    pub args: Vec<Arg>,
    pub span: Span,
}

/// A Rust item whose value is a retry builder: `pub fn transient() -> ExponentialBuilder {…}`,
/// `pub const CONTENTION: ExponentialBuilder = …;`.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// A factory's parameter count (`fn backoff(base: u64, times: usize) -> …`): its value
    /// holds [`crate::schedule::rust::Arg::Param`]s. 0 for a policy.
    #[serde(default)]
    pub params: usize,
    /// A config method taking only `self` (`RetryConfig::strategy(&self)`), evaluated with
    /// the values its type's `impl Default` or serde `default = "fn"` functions give: how the
    /// retry module's config policy is judged (issue 25.4). Elsewhere the configuration's
    /// own numbers are not known, and only what holds for every value is judged.
    #[serde(default)]
    pub with_defaults: Option<RustChain>,
}

/// A project function whose body retries with what its parameters give it (issue 25.3): the
/// strategy, the operation, the predicate. Each call of it is a retry site of its own
/// (`Index::expand_rust_helpers`), judged with the arguments of the call.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustHelper {
    pub name: String,
    /// The inline `mod`s of the file it is declared in.
    pub module: Vec<String>,
    pub name_span: Span,
    /// The library its own retry runs with.
    pub library: crate::schedule::Library,
    /// How many parameters it takes.
    pub arity: usize,
    /// The parameter that is the strategy (the builder or delay iterator) of its retry.
    pub strategy: Option<usize>,
    /// The parameter that is the retried operation.
    pub op: Option<usize>,
    /// The operation is the retry's action itself (not wrapped): what it returns classifies
    /// the errors (tokio-retry2's `RetryError::permanent`, backoff's `Error::permanent`).
    pub op_direct: bool,
    /// The parameter that is the predicate its retry applies (`should_retry: impl Fn(&E) -> bool`).
    pub predicate: Option<usize>,
    /// The strategy the helper builds in its body from its parameters
    /// (`ExponentialBackoff { max_elapsed_time: total, ..Default::default() }`), with
    /// [`crate::schedule::rust::Arg::Param`] for them: evaluated at each call with the call's
    /// arguments (issue 25).
    #[serde(default)]
    pub built: Option<RustChain>,
    /// A method (a trait's default body, an `impl`'s): its calls are `x.name(…)`, resolved by
    /// name when the project has one such helper.
    #[serde(default)]
    pub method: bool,
    /// Which errors its own retry replays when no parameter decides it (the operation wrapped
    /// in a closure that classifies them): what each call's retry replays too.
    #[serde(default)]
    pub replays: Option<super::Predicate>,
}

/// The function a [`RustHelperCall`] is written in: when the call hands the function's own
/// parameters through to a helper, the function is a helper too (`Index::derive_rust_helpers`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustWithin {
    pub name: String,
    pub module: Vec<String>,
    pub name_span: Span,
    /// Its parameters, `self` not counted.
    pub arity: usize,
    /// It takes `self`: a method.
    pub method: bool,
}

/// A call of a function of the crate (or of a workspace crate) that may be a retry helper:
/// kept with its arguments read as a strategy, an operation and a predicate, so that the
/// index makes it a retry site once the callee is known to be a [`RustHelper`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustHelperCall {
    pub path: RustPath,
    pub span: Span,
    pub callee_span: Span,
    pub callee: String,
    pub args: Vec<RustHelperArg>,
    pub containers: Vec<super::Container>,
    /// A method call `x.name(…)`: the method's name (`path` is then just it).
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub within: Option<RustWithin>,
    /// Read in two phases: in a file read lazily that names no retry library, the call is
    /// kept unread, with the number of its arguments only ([`RustHelperCall::unread`]); the
    /// index asks for the file again, read in full, once some file defines a helper of its
    /// name and arity (`Index::expand_rust_helpers`).
    #[serde(default)]
    pub unread: Option<usize>,
}

impl RustHelperCall {
    /// A call kept without reading its arguments: `arity` of them.
    pub fn unread(
        path: RustPath,
        span: Span,
        callee_span: Span,
        callee: String,
        arity: usize,
        method: Option<String>,
    ) -> Self {
        RustHelperCall {
            path,
            span,
            callee_span,
            callee,
            args: Vec::new(),
            containers: Vec::new(),
            method,
            within: None,
            unread: Some(arity),
        }
    }

    /// How many arguments the call is given.
    pub fn arity(&self) -> usize {
        self.unread.unwrap_or(self.args.len())
    }
}

/// One argument of a [`RustHelperCall`], read in each role it may have.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustHelperArg {
    pub span: Span,
    /// As a strategy: the builder it evaluates to.
    pub chain: Option<RustChain>,
    pub local: Option<(String, Span)>,
    /// As a predicate: `|_| true`, or a closure that ignores its error, is none.
    pub predicate: super::Predicate,
    /// As an operation: what it replays.
    pub unit: Option<super::Unit>,
    /// As an operation that is the retry's action: whether it classifies its errors, for
    /// tokio-retry2 (`RetryError::permanent` for some) and for backoff (`Error::permanent`).
    pub classifies: [super::Predicate; 2],
    /// As an operation: it only (re)establishes a connection or claims one from a pool, so
    /// its retry is a wait for the dependency (a reconnect supervisor), not a request retry.
    #[serde(default)]
    pub reconnects: bool,
    /// As a value: what it evaluates to, a parameter of the calling function as
    /// [`crate::schedule::rust::Arg::Param`] (`Some(total)` is `Some(Param(1))`).
    #[serde(default)]
    pub value: Option<crate::schedule::rust::Arg>,
    /// It is a parameter of the calling function, handed through as it is.
    #[serde(default)]
    pub param: Option<usize>,
}

/// A policy no retry site is given: a builder or strategy whose delays the code steps through
/// itself (`let mut backoff = ExponentialBuilder::default()…build();` then `backoff.next()` in
/// a loop), hands to a function, stores in a struct field, or a function returns for other
/// code to step (`fn latest_get_backoff() -> impl Iterator<Item = Duration>`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustStepped {
    /// The binding, field or function that holds it.
    pub name: String,
    /// Where that name is written: the finding's place.
    pub name_span: Span,
    pub value: RustChain,
    /// Where it is used: `backoff.next()`, a call it is handed to, a call of the function.
    pub uses: Vec<Span>,
    /// A function of the file's named policies ([`RustPolicy`]), which sites may name too.
    pub function: bool,
    /// Re-made or `reset()` after it was stepped (`backoff = Self::build_backoff();` once the
    /// connection is back): the loop stepping it restarts long-running work, a supervisor's,
    /// whose missing attempt cap is by design (decision 6 judges its pace).
    pub supervisor: bool,
}

/// A project's retry builder over a retry library (issue 25): a free function returning a
/// builder struct (`with_retry(name) -> Attempts`), whose methods set its fields (an attempt
/// count, a predicate) and whose terminal method (`go(f)`) hands them to the library's retry,
/// given a strategy made by a factory of the file from those fields. A call chain
/// `with_retry(…).attempts(n).only_if(p).go(f)` elsewhere is then a retry site of its own
/// (`Index::expand_rust_helpers`): the factory's strategy with the count given, the predicate
/// given (or the builder's default), and `f` as the unit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustWrapper {
    pub name: String,
    /// The inline `mod`s of the file it is declared in.
    pub module: Vec<String>,
    pub name_span: Span,
    pub arity: usize,
    pub library: crate::schedule::Library,
    /// The methods of the builder and of the types its methods return.
    pub methods: Vec<RustWrapperMethod>,
    /// The fields the entry function's struct literal sets, with their values where known.
    pub defaults: Vec<(String, Arg)>,
    /// The strategy its retry is given, as the builder's fields make it.
    pub schedule: Option<RustWrapperSchedule>,
    /// The field the predicate method sets.
    pub predicate_field: Option<String>,
    /// Without a predicate method called, every error is retried: the default the entry
    /// function gives that field is a variant the file answers with `result.is_err()`.
    pub default_every_error: bool,
}

/// One method of a [`RustWrapper`]'s builder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustWrapperMethod {
    pub name: String,
    /// Parameters besides `self`.
    pub arity: usize,
    /// The fields it sets, each from a parameter (its index) or, with `None`, cleared to a
    /// value no parameter gives (`self.limit = None`, `self.tries.clear()`).
    pub sets: Vec<(String, Option<usize>)>,
    /// The parameter that is a predicate of the result (`P: Fn(&Result<T, E>) -> bool`).
    pub predicate: Option<usize>,
    /// The terminal method: the parameter that is the retried operation.
    pub run: Option<usize>,
    /// A parameter bound as a closure that returns no `bool` (`F: Fn(&E)`), of a method that
    /// does not run the retry: a callback told of something, which decides nothing.
    #[serde(default)]
    pub callback: bool,
    /// It sets a field to something the analysis cannot read (a literal count): what
    /// depends on that field is not known after it.
    pub opaque: Vec<String>,
}

/// How a [`RustWrapper`]'s retry strategy is made: a factory of the file called with values
/// from the builder's fields (`retry_strategy(limit_opt, max_delay)`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustWrapperSchedule {
    /// The factory's name, for messages.
    pub factory: String,
    /// What each of the factory's parameters is given: a field of the builder, or a value.
    pub params: Vec<RustWrapperParam>,
    /// The parameter that is the attempt count, applied as `.take(count + offset)`.
    pub limit: usize,
    pub offset: f64,
    /// The count is an `Option`: `None` gives [`Self::untaken`].
    pub optional: bool,
    /// The strategy with the count taken (`Arg::Param(i)` for the factory's parameters).
    pub taken: RustChain,
    /// The strategy without a count (`None => Box::new(backoff)`).
    pub untaken: Option<RustChain>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum RustWrapperParam {
    Field(String),
    Value(Arg),
}

/// A call chain that may be of a [`RustWrapper`]: `name(args).m1(…).m2(…)…`, kept with each
/// method's arguments.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustWrapperCall {
    pub path: RustPath,
    pub arity: usize,
    pub callee_span: Span,
    pub callee: String,
    pub steps: Vec<RustWrapperStep>,
    pub containers: Vec<super::Container>,
    /// Kept unread, as a [`RustHelperCall`] can be: no steps; the index asks for the file
    /// again, read in full, once the chain's first call names a project's retry builder.
    #[serde(default)]
    pub unread: bool,
}

impl RustWrapperCall {
    /// A chain kept without reading its methods' arguments.
    pub fn unread(path: RustPath, arity: usize, callee_span: Span, callee: String) -> Self {
        RustWrapperCall {
            path,
            arity,
            callee_span,
            callee,
            steps: Vec::new(),
            containers: Vec::new(),
            unread: true,
        }
    }
}

/// One method call of a [`RustWrapperCall`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustWrapperStep {
    pub method: String,
    /// From the chain's start to the end of this call.
    pub span: Span,
    /// The call as messages write it: `.attempts(5)`, a closure as `…`.
    pub text: String,
    /// Each argument's value, where known.
    pub values: Vec<Arg>,
    /// The first argument read as a predicate of the result: `|r| r.is_err()` is none.
    pub predicate: super::Predicate,
    /// The first argument read as an operation: what it replays.
    pub unit: Option<super::Unit>,
    /// The first argument is a closure (or an `async` block).
    #[serde(default)]
    pub closure: bool,
    /// The operation turns some of its errors into a success (an `Err(e) =>` arm that does
    /// not give an `Err`): it classifies them itself.
    pub classifies: bool,
    pub reconnects: bool,
}
