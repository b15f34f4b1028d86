//! Rust extraction: the retry sites of backon, tokio-retry, backoff and reqwest-retry, the
//! builder chains they are given (followed through local `let`s and same-file helper
//! functions), the file's named policies (`fn`/`const`/`static` items whose value is a
//! builder), and the scopes around each site (impl blocks, traits, modules, functions).
//!
//! A site is recognised only when its names come from the library: `use` declarations (and
//! glob imports of the library) are applied to every path, so a home-grown `Retry` enum, a
//! `retry` field or a `.retry()` method of another type is not a retry. A builder chain is
//! kept as its base (a library constructor, or a path naming a policy) plus the methods
//! applied to it; `schedule::rust` gives them meaning and the index resolves paths across
//! the crate's files.

mod builders;
mod clients;
mod handlers;
mod helpers;
mod items;
mod macros;
mod mutations;
mod paths;
mod shared;
mod sites;
mod stepped;
mod units;
mod wrappers;

use builders::tail;
pub(super) use macros::unfold;
use sites::Walk;

use std::collections::HashMap;

use super::lineage::Parents;
use super::FieldExt;
use tree_sitter::{Node, Tree};

use crate::facts::{
    Container, ContainerKind, FileFacts, PolicyArg, Predicate, Retried, RetrySite, RustBase, RustChain, RustOp,
    RustPath, RustPolicy, RustPolicyArg,
};
use crate::schedule::rust::{self as model, Arg};
use crate::schedule::Library;
use crate::source::Span;

/// How deep expressions and helper calls are followed.
const MAX_DEPTH: usize = 24;

/// Tokens that make an unparsed region worth a note: a retry may hide there.
const ERROR_REGION_TOKENS: &[&[u8]] = &[b"retry", b"Retry", b"backoff", b"Backoff", b"backon"];

/// Whether `text` can invoke a macro whose name starts with `prefix` (`query!`, `query_as!`,
/// `select_biased !`): the prefix, more identifier bytes, spaces, then a `!` that is no `!=`.
/// A byte test before a walk over every node; a superset is safe.
pub(in crate::extract) fn may_invoke_macro(text: &[u8], prefix: &[u8]) -> bool {
    // Where the identifier and the spaces after the last occurrence end: an occurrence inside
    // them ends there too, and is not read again (`queryqueryquery…` stays linear).
    let mut read_to = 0;
    memchr::memmem::find_iter(text, prefix).any(|at| {
        if at < read_to {
            return false;
        }
        let mut end = at + prefix.len();
        end += text[end..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        end += text[end..].iter().take_while(|b| b.is_ascii_whitespace()).count();
        read_to = end;
        text.get(end) == Some(&b'!') && text.get(end + 1) != Some(&b'=')
    })
}

/// First path segments that name a crate, not a child module of the current one.
const EXTERN_ROOTS: &[&str] = &[
    "backon",
    "tokio_retry",
    "tokio_retry2",
    "backoff",
    "reqwest_retry",
    "retry_policies",
    "exponential_backoff",
    "reqwest_middleware",
    "std",
    "core",
    "alloc",
    "tokio",
    "reqwest",
    "aws_lambda_events",
    "lambda_runtime",
    "lapin",
    "apalis",
    "apalis_core",
    "apalis_sql",
    "apalis_redis",
    "futures",
    "tracing",
];

/// backon's retry traits: `.retry(builder)` is theirs only when one is in scope.
const BACKON_TRAITS: &[&str] = &[
    "Retryable",
    "BlockingRetryable",
    "RetryableWithContext",
    "BlockingRetryableWithContext",
];

/// The names a glob import of a library path brings into scope.
fn glob_names(prefix: &[String]) -> &'static [&'static str] {
    let prefix: Vec<&str> = prefix.iter().map(String::as_str).collect();
    match prefix.as_slice() {
        ["backon"] => &[
            "ExponentialBuilder",
            "ConstantBuilder",
            "FibonacciBuilder",
            "Retryable",
            "BlockingRetryable",
            "RetryableWithContext",
            "BlockingRetryableWithContext",
        ],
        ["tokio_retry", "strategy"] => &["ExponentialBackoff", "FibonacciBackoff", "FixedInterval", "jitter"],
        ["tokio_retry"] => &["Retry", "RetryIf", "strategy"],
        // tokio-retry2 0.9.1 src/strategy/mod.rs (`jitter*` with its `jitter` feature), src/lib.rs.
        ["tokio_retry2", "strategy"] => &[
            "ExponentialBackoff",
            "ExponentialFactorBackoff",
            "FibonacciBackoff",
            "FixedInterval",
            "LinearBackoff",
            "MaxInterval",
            "jitter",
            "jitter_range",
            "jitter_with_bounds",
        ],
        ["tokio_retry2"] => &["Retry", "RetryIf", "RetryError", "MapErr", "strategy"],
        ["backoff"] => &[
            "ExponentialBackoff",
            "ExponentialBackoffBuilder",
            "retry",
            "retry_notify",
            "future",
            "Error",
        ],
        ["backoff", "backoff"] => &["Constant", "Zero", "Stop"],
        ["backoff", "future"] => &["retry", "retry_notify"],
        ["reqwest_retry"] => &["RetryTransientMiddleware", "Jitter", "policies"],
        // apalis's handler arguments and builder, for `use apalis::prelude::*`.
        ["apalis", "prelude"] => &["Data", "Attempt", "TaskId", "Worker", "WorkerId", "WorkerBuilder"],
        ["lapin"] => &["Channel", "Consumer"],
        ["lapin", "message"] => &["Delivery", "DeliveryResult"],
        ["reqwest_retry", "policies"] | ["retry_policies", "policies"] => &["ExponentialBackoff"],
        ["retry_policies"] => &["ExponentialBackoff", "Jitter", "policies"],
        ["exponential_backoff"] => &["Backoff", "IntoIter"],
        _ => &[],
    }
}

pub(super) fn extract(facts: &mut FileFacts, text: &[u8], tree: &Tree, logged: &[(usize, usize)], depth: super::Depth) {
    let root = tree.root_node();
    if is_test_file(root, text) {
        return;
    }
    let mut rx = Rx {
        text,
        logged,
        uses: HashMap::new(),
        globs: Vec::new(),
        items: Vec::new(),
        modules: Vec::new(),
        parents: Parents::new(root),
        lets: Default::default(),
        file_items: Default::default(),
        structs: Default::default(),
        items_by_name: Default::default(),
    };
    rx.collect_uses(root);
    rx.collect_items(root, &mut Vec::new());
    // A retry library's constructor is written through its crate's name (`backon::…`,
    // `tokio_retry::…`, `backoff::…`, `reqwest_retry::…`, `retry_policies::…`, each
    // holding one of these words) or a same-file helper that is; a file without them
    // builds no policy of its own (see `Walk::library`), and retries nothing itself.
    let library = ERROR_REGION_TOKENS
        .iter()
        .any(|token| memchr::memmem::find(text, token).is_some());
    let mut walk = Walk {
        rx: &rx,
        facts,
        containers: Vec::new(),
        module: Vec::new(),
        scanned: 0,
        library,
        // Read lazily, a file that names no retry library keeps its calls of possible
        // helpers unread: most such files call none (see `Walk::unread`).
        unread: depth == super::Depth::Lazy && !library,
    };
    walk.walk(root);
    helpers::reexported_retries(&rx, root, facts);
    wrappers::summarise_wrappers(&rx, facts);
    shared::mark_shared_locals(&mut facts.retry_sites);
    // Unread calls are read again, with the file's units, when one may be a helper's
    // (`Index::expand_rust_helpers`): until then the file's units are deferred too.
    let unread =
        facts.rust_helper_calls.iter().any(|c| c.unread.is_some()) || facts.rust_wrapper_calls.iter().any(|c| c.unread);
    facts.units_deferred = unread;
    // Calls inside a retried unit are followed into the file's functions; a file that
    // retries nothing needs none.
    let calls = !facts.rust_helper_calls.is_empty() || !facts.rust_wrapper_calls.is_empty();
    if !facts.retry_sites.is_empty() || (calls && !facts.units_deferred) {
        facts.units = rx.named_units();
        // Queue consumers and job handlers around (or calling) the retries.
        facts.handlers = rx.handlers(root);
        // reqwest-retry clients and the requests sent through them.
        rx.retrying_clients(facts, root);
    }
    // Named policies: items without parameters whose value is a builder, and methods taking
    // only `self` (a config struct's `to_backoff(&self)`, reached from other files).
    for item in &rx.items {
        let Some(value) = item.value else { continue };
        if item.body.is_none() && !item.associated && facts.rust_consts.len() < 256 {
            if let Val::Arg(arg @ (model::Arg::Num(_) | model::Arg::Ms(_))) = rx.eval(value, &item.module, None, 0) {
                facts.rust_consts.push((item.name.clone(), item.module.clone(), arg));
            }
        }
        // A factory: a free function whose parameters are values (issue 25.3), evaluated
        // with each parameter standing for the argument of a call.
        let factory = item.has_params && !item.associated && !item.params.is_empty() && item.params.len() <= 8;
        if item.has_params && !(item.associated && item.params.is_empty()) && !factory {
            continue;
        }
        // A config method taking only `self` (`RetryConfig::strategy(&self)`): judged with the
        // values the type's `impl Default` (or its fields' serde defaults) gives.
        let defaults = item.associated && item.has_params && item.params.is_empty();
        let with_defaults = match item.module.last().filter(|_| defaults) {
            Some(ty) => {
                let fields = rx.default_fields(ty, item.scope(), 0);
                (!fields.is_empty())
                    .then(|| rx.chain(rx.eval(value, item.scope(), Some(&fields), 0)))
                    .flatten()
                    .filter(|c| !matches!(c.base, RustBase::Unknown))
            }
            None => None,
        };
        let params: HashMap<String, Val> = if factory {
            item.params
                .iter()
                .enumerate()
                .map(|(i, name)| (name.clone(), Val::Arg(model::Arg::Param(i))))
                .collect()
        } else {
            HashMap::new()
        };
        let env = factory.then_some(&params);
        let Some(mut chain) = rx.chain(rx.eval(value, item.scope(), env, 0)) else {
            continue;
        };
        if factory && !matches!(chain.base, RustBase::Deferred { .. } | RustBase::New { .. }) {
            continue;
        }
        if matches!(chain.base, RustBase::Unknown) {
            continue;
        }
        if let (true, RustBase::New { configured, .. }) = (item.has_params, &mut chain.base) {
            *configured = true;
        }
        facts.rust_policies.push(RustPolicy {
            name: item.name.clone(),
            module: item.module.clone(),
            public: item.public,
            name_span: item.name_span,
            item: span(item.node),
            value: chain,
            params: if factory { item.params.len() } else { 0 },
            with_defaults,
        });
    }
    let called = rx.called_policies(root, &facts.rust_policies);
    facts.rust_stepped.extend(called);
    stepped::without_sites(facts);
}

/// Whether an item is test code, which is not held to the policy (a test retries a flaky
/// fake on purpose): `#[cfg(test)]`, `#[test]`, `#[tokio::test]` and the like among the
/// attributes right before it.
fn is_test_item(node: Node, text: &[u8]) -> bool {
    if !matches!(
        node.kind_str(),
        "function_item" | "mod_item" | "impl_item" | "const_item" | "static_item"
    ) {
        return false;
    }
    let mut current = node.prev_sibling();
    while let Some(sibling) = current {
        match sibling.kind_str() {
            "attribute_item" => {
                if is_test_attribute(sibling, text) {
                    return true;
                }
            }
            "line_comment" | "block_comment" => {}
            _ => return false,
        }
        current = sibling.prev_sibling();
    }
    false
}

/// `#[cfg(test)]`, `#[cfg(all(test, …))]`, `#[cfg(any(test, …))]`, `#[test]`,
/// `#[tokio::test]`, `#[sqlx::test]`, and test support behind a feature:
/// `#[cfg(feature = "test-util")]` (`testing`, `test-utils`, `test_support`…).
fn is_test_attribute(attribute: Node, text: &[u8]) -> bool {
    let raw = std::str::from_utf8(&text[attribute.byte_range()]).unwrap_or("");
    let inner: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
    let inner = inner
        .trim_start_matches("#!")
        .trim_start_matches('#')
        .trim_start_matches('[')
        .trim_end_matches(']');
    let path = inner.split('(').next().unwrap_or(inner);
    let test_feature = inner.starts_with("cfg(") && !inner.contains("not(") && inner.contains("feature=\"test");
    inner == "cfg(test)"
        || inner.starts_with("cfg(all(test,")
        || inner.starts_with("cfg(any(test,")
        || test_feature
        || path == "test"
        || path.ends_with("::test")
}

/// A `const` or `static` of debug builds only (`#[cfg(debug_assertions)]` before it): the
/// value a release build runs with is the other definition of its name
/// (`#[cfg(not(debug_assertions))]`), so a look-up by name finds that one.
fn is_debug_only_value(node: Node, text: &[u8]) -> bool {
    if !matches!(node.kind_str(), "const_item" | "static_item") {
        return false;
    }
    let mut current = node.prev_sibling();
    while let Some(sibling) = current {
        match sibling.kind_str() {
            "attribute_item" => {
                let raw = std::str::from_utf8(&text[sibling.byte_range()]).unwrap_or("");
                let inner: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
                if inner == "#[cfg(debug_assertions)]" {
                    return true;
                }
            }
            "line_comment" | "block_comment" => {}
            _ => return false,
        }
        current = sibling.prev_sibling();
    }
    false
}

/// A file that declares itself test code (`#![cfg(test)]`).
fn is_test_file(root: Node, text: &[u8]) -> bool {
    let mut cursor = root.walk();
    let found = root
        .named_children(&mut cursor)
        .take_while(|c| matches!(c.kind_str(), "inner_attribute_item" | "line_comment" | "block_comment"))
        .any(|c| c.kind_str() == "inner_attribute_item" && is_test_attribute(c, text));
    found
}

fn span(node: Node) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// Source text with whitespace collapsed, for messages: `ExponentialBuilder::default().with_jitter()`.
fn collapse(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(joined.len());
    let mut chars = joined.chars().peekable();
    while let Some(c) = chars.next() {
        // A method on its own line: `builder\n    .with_jitter()` reads `builder.with_jitter()`.
        let method_dot = c == ' ' && chars.peek() == Some(&'.') && !out.ends_with(',') && !out.ends_with('{');
        let inside_parens = c == ' ' && (out.ends_with('(') || chars.peek() == Some(&')'));
        if !(method_dot || inside_parens) {
            out.push(c);
        }
    }
    out
}

/// The named children of `node` that are not comments or attributes.
fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| !matches!(c.kind_str(), "line_comment" | "block_comment" | "attribute_item"))
        .collect()
}

/// A top-level (or inline-`mod`) `fn`, `const` or `static`.
struct Item<'t> {
    name: String,
    name_span: Span,
    module: Vec<String>,
    node: Node<'t>,
    /// The value: a const's initializer, a function body's tail expression.
    value: Option<Node<'t>>,
    /// The function's body, for searching (the predicate of a `backoff` operation).
    body: Option<Node<'t>>,
    params: Vec<String>,
    has_params: bool,
    public: bool,
    /// An associated item of `impl Type { … }` (its `module` ends with `Type`).
    associated: bool,
    /// A method: it takes `self`.
    has_params_self: bool,
}

impl Item<'_> {
    /// The module the item's code is written in: an associated item's paths are relative to
    /// the module of its `impl`, not to the type.
    fn scope(&self) -> &[String] {
        if self.associated {
            &self.module[..self.module.len().saturating_sub(1)]
        } else {
            &self.module
        }
    }
}

/// A value during evaluation.
#[derive(Debug, Clone)]
enum Val {
    Arg(Arg),
    /// A path that is not a local: a policy when a builder is expected, a plain path
    /// (`Jitter::Full`, `jitter`) when an argument is.
    Path(RustPath, String),
    Chain(RustChain),
    Unknown,
}

enum Local<'t> {
    /// `let name = value;` before the use, in an enclosing block.
    Let {
        value: Node<'t>,
        pattern: Span,
    },
    /// A parameter of the enclosing function or closure, or a pattern binding.
    Param,
    None,
}

struct Rx<'t> {
    text: &'t [u8],
    /// The byte ranges of the log events and spans unfolded from their macros (`macros`).
    logged: &'t [(usize, usize)],
    /// `use` declarations: local name → full path.
    uses: HashMap<String, Vec<String>>,
    /// `use path::*` prefixes.
    globs: Vec<Vec<String>>,
    items: Vec<Item<'t>>,
    /// Modules this file declares (`mod retry;`, `mod jobs { … }`): a path through one of
    /// them stays in the crate.
    modules: Vec<String>,
    /// Parents without `Node::parent`, whose cost grows with the depth and the width of the
    /// tree above a node (see `lineage`).
    parents: Parents<'t>,
    /// Each block's `let`s by name, read when a local is first looked up in it.
    lets: std::cell::RefCell<HashMap<usize, std::rc::Rc<items::Lets<'t>>>>,
    /// The file's top-level items and those of its inline `mod`s, read on first use.
    file_items: std::cell::OnceCell<builders::FileItems<'t>>,
    /// The file's struct expressions by the name they build, read on first use.
    structs: std::cell::OnceCell<builders::StructExpressions<'t>>,
    /// Where each name's items are in `items` (read on first use, once `items` is complete).
    items_by_name: std::cell::OnceCell<HashMap<String, Vec<usize>>>,
}

impl<'t> Rx<'t> {
    fn text_of(&self, node: Node) -> &'t str {
        std::str::from_utf8(&self.text[node.byte_range()]).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A predicate's negation counts as a negated test of the error only when it tests the
    /// closure's parameter: `!EXIT.load(…) && e.eq(&Database)` names the errors it replays,
    /// `!is_permanent(e)` replays every failure it does not name.
    #[test]
    fn a_negated_flag_is_no_negated_test_of_the_error() {
        let site = |predicate: &str| {
            let text = format!(
                "use tokio_retry::{{strategy::FixedInterval, RetryIf}};\n\
                 async fn run() {{\n    \
                 let _ = RetryIf::spawn(FixedInterval::from_millis(10).take(3), || work(), {predicate}).await;\n}}\n"
            );
            let facts = crate::extract::extract_file(crate::source::Language::Rust, text.as_bytes());
            match &facts.retry_sites.first().expect("one retry site").predicate {
                crate::facts::Predicate::Filter { mentions, .. } => mentions.clone(),
                other => panic!("{predicate}: {other:?}"),
            }
        };
        let flag = site("|e: &Error| !EXIT.load(Ordering::Relaxed) && e.eq(&Error::Database)");
        assert!(!flag.contains(&"!".to_string()), "{flag:?}");
        assert!(flag.contains(&"Database".to_string()), "{flag:?}");
        let negated = site("|e: &Error| !is_permanent(e)");
        assert!(negated.contains(&"!".to_string()), "{negated:?}");
    }

    #[test]
    fn a_macro_invocation_is_told_by_its_bytes() {
        for yes in [
            "sqlx::query!(\"x\")",
            "query_as!(Row, \"x\")",
            "tokio::select! {",
            "select_biased !{",
            "futures::try_join!(a, b)",
        ] {
            let prefix: &[u8] = if yes.contains("query") {
                b"query"
            } else if yes.contains("join") {
                b"join"
            } else {
                b"select"
            };
            assert!(may_invoke_macro(yes.as_bytes(), prefix), "{yes}");
        }
        for no in [
            "path.join(\"a\")",
            "let query = q; if query != x {}",
            "fn select(x: u8)",
            "query_builder.build()",
        ] {
            assert!(
                !may_invoke_macro(no.as_bytes(), b"query")
                    && !may_invoke_macro(no.as_bytes(), b"join")
                    && !may_invoke_macro(no.as_bytes(), b"select"),
                "{no}"
            );
        }
    }
    use crate::facts::OpKind;
    use crate::schedule::rust::Backoff;
    use crate::source::Language;

    fn facts(text: &str) -> FileFacts {
        crate::extract::extract_file(Language::Rust, text.as_bytes())
    }

    fn rust(site: &RetrySite) -> &RustPolicyArg {
        match &site.policy {
            PolicyArg::Rust(arg) => arg,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn backon_site_with_inline_builder() {
        let f = facts(
            "use backon::{ExponentialBuilder, Retryable};\nuse std::time::Duration;\n\
             async fn run() { let r = fetch.retry(ExponentialBuilder::default().with_min_delay(Duration::from_millis(1_00)).with_jitter()).when(|e| e.is_x()).await; }\n",
        );
        assert_eq!(f.retry_sites.len(), 1);
        assert_eq!(f.retry_sites[0].library, Library::Backon);
        assert!(matches!(f.retry_sites[0].predicate, Predicate::Filter { .. }));
        let chain = rust(&f.retry_sites[0]).chain.as_ref().unwrap();
        assert!(matches!(&chain.base, RustBase::New { ctor, .. } if ctor == "ExponentialBuilder::default"));
        assert_eq!(chain.ops.len(), 2);
        assert_eq!(chain.ops[0].args, vec![Arg::Ms(100.0)]);
    }

    #[test]
    fn traps_are_not_sites() {
        let f = facts(
            "enum Retry { Now }\nstruct Job { retry: u32 }\n\
             fn f(job: Job) { let n = job.retry; job.retry(); Retry::spawn(1, 2); let v: Vec<_> = [1, 2].iter().take(1).collect(); }\n",
        );
        assert!(f.retry_sites.is_empty(), "{:?}", f.retry_sites);
        // `.retry(x)` without backon's trait in scope is some other method.
        let f = facts("use backon::ExponentialBuilder;\nfn f() { job.retry(ExponentialBuilder::default()); }\n");
        assert!(f.retry_sites.is_empty());
        let f = facts("use backon::Retryable;\nfn f() { job.retry(3); }\n");
        assert!(f.retry_sites.is_empty());
        let f = facts(
            "use backon::Retryable;\nfn f(job: Job, n: u32) { job.retry(n); let op = || async { 1 }; op.retry(n); }\n",
        );
        assert_eq!(f.retry_sites.len(), 1, "only the closure is retried");
    }

    #[test]
    fn public_reexports_of_backoffs_retry_functions_are_helpers() {
        let helpers = |text: &str| -> Vec<(String, usize)> {
            facts(text)
                .rust_helpers
                .iter()
                .filter(|h| h.library == Library::Backoff && h.strategy == Some(0) && h.op == Some(1) && h.op_direct)
                .map(|h| (h.name.clone(), h.arity))
                .collect()
        };
        assert_eq!(
            helpers("pub use ::backoff::future::{retry, retry_notify as notify_retry};\npub use backoff::Error;\n"),
            [("retry".to_string(), 2), ("notify_retry".to_string(), 3)]
        );
        assert_eq!(
            helpers("pub use backoff::future::*;\n"),
            [("retry".to_string(), 2), ("retry_notify".to_string(), 3)]
        );
        // A private `use`, one of an inline module, and another crate's `retry` are not.
        assert!(helpers("use backoff::future::retry;\n").is_empty());
        assert!(helpers("mod inner { pub use backoff::future::retry; }\n").is_empty());
        assert!(helpers("pub use other::future::retry;\n").is_empty());
    }

    #[test]
    fn named_policies_and_helpers() {
        let f = facts(
            "use backon::ExponentialBuilder;\nuse std::time::Duration;\n\
             fn capped(base_ms: u64, retries: usize) -> ExponentialBuilder {\n  ExponentialBuilder::default().with_min_delay(Duration::from_millis(base_ms)).with_max_times(retries).with_jitter()\n}\n\
             pub fn transient() -> ExponentialBuilder { capped(200, 3) }\n\
             pub const CONTENTION: ExponentialBuilder = ExponentialBuilder::new().with_max_times(3);\n",
        );
        let names: Vec<(&str, usize)> = f.rust_policies.iter().map(|p| (p.name.as_str(), p.params)).collect();
        // `capped` is a factory: its parameters stand for a call's arguments.
        assert_eq!(names, [("capped", 2), ("transient", 0), ("CONTENTION", 0)]);
        assert_eq!(
            f.rust_policies[0].value.ops[0].args,
            vec![Arg::Call(
                vec!["Duration".into(), "from_millis".into()],
                vec![Arg::Param(0)]
            )]
        );
        assert_eq!(f.rust_policies[0].value.ops[1].args, vec![Arg::Param(1)]);
        let RustBase::New { state, via, .. } = &f.rust_policies[1].value.base else {
            panic!("{:?}", f.rust_policies[1].value)
        };
        assert_eq!(via.as_deref(), Some("capped"));
        assert!(matches!(state, Backoff::Backon { .. }));
        assert_eq!(f.rust_policies[1].value.ops[0].args, vec![Arg::Ms(200.0)]);
    }

    #[test]
    fn statements_change_a_let_mut_policy() {
        let f = facts(
            "use backoff::ExponentialBackoffBuilder;\n\
             async fn f(urgent: bool) {\n\
               let mut b = ExponentialBackoffBuilder::new();\n\
               b.with_multiplier(2.0).with_max_elapsed_time(None);\n\
               if urgent { b.with_initial_interval(Duration::from_millis(10)); }\n\
               let label = format!(\"{b:?}\");\n\
               backoff::future::retry(b.build(), op).await;\n\
               configure(&mut b);\n\
               b.max_elapsed_time = Some(Duration::from_secs(1));\n\
               backoff::future::retry(b.build(), op).await;\n\
               let fixed = ExponentialBackoffBuilder::new();\n\
               backoff::future::retry(fixed.build(), op).await;\n\
             }\n",
        );
        let ops: Vec<Vec<(String, Vec<Arg>)>> = f
            .retry_sites
            .iter()
            .map(|s| {
                let chain = rust(s).chain.as_ref().expect("followed");
                chain.ops.iter().map(|o| (o.method.clone(), o.args.clone())).collect()
            })
            .collect();
        let op = |m: &str, args: Vec<Arg>| (m.to_string(), args);
        let first = vec![
            op("mut:with_multiplier", vec![Arg::Num(2.0)]),
            op("mut:with_max_elapsed_time", vec![Arg::None]),
            // In a branch: the property it sets is unknown.
            op("mut:with_initial_interval", vec![Arg::Unknown]),
            op("build", vec![]),
        ];
        assert_eq!(ops[0], first);
        // After a call given `&mut b`, anything may have changed; the field set is read.
        let mut second = first[..3].to_vec();
        second.push(op(model::OPAQUE, vec![Arg::Unknown]));
        second.push(op("=max_elapsed_time", vec![Arg::Some(Box::new(Arg::Ms(1000.0)))]));
        second.push(op("build", vec![]));
        assert_eq!(ops[1], second);
        // A `let` without `mut` is not changed by statements.
        assert_eq!(ops[2], vec![op("build", vec![])]);
    }

    #[test]
    fn tokio_retry_and_local_bindings() {
        let f = facts(
            "use tokio_retry::{Retry, strategy::{ExponentialBackoff, jitter}};\n\
             async fn f() { let s = ExponentialBackoff::from_millis(10).map(jitter).take(3);\n  Retry::spawn(s.clone(), action).await; }\n",
        );
        assert_eq!(f.retry_sites.len(), 1);
        let arg = rust(&f.retry_sites[0]);
        assert_eq!(arg.local.as_ref().map(|l| l.0.as_str()), Some("s"));
        assert_eq!(f.retry_sites[0].predicate, Predicate::None);
        let chain = arg.chain.as_ref().unwrap();
        assert_eq!(
            chain.ops[0].args,
            vec![Arg::Path(vec![
                "tokio_retry".into(),
                "strategy".into(),
                "jitter".into()
            ])]
        );
    }

    #[test]
    fn tokio_retry2_sites_leave_the_classification_to_the_action() {
        let f = facts(
            "use tokio_retry2::{Retry, RetryIf, strategy::{FixedInterval, jitter}};\n\
             async fn f() {\n  Retry::spawn(FixedInterval::from_millis(10).map(jitter).take(3), action).await;\n\
               RetryIf::spawn(FixedInterval::from_millis(10), action, is_contention, notify).await;\n\
               Retry::spawn_notify(FixedInterval::from_millis(10), action, notify).await; }\n",
        );
        let libraries: Vec<Library> = f.retry_sites.iter().map(|s| s.library).collect();
        assert_eq!(libraries, [Library::TokioRetry2; 3]);
        // `Retry::spawn`'s action returns `RetryError::transient` or `permanent`: unknown here.
        assert_eq!(f.retry_sites[0].predicate, Predicate::Unknown);
        assert!(matches!(f.retry_sites[1].predicate, Predicate::Filter { .. }));
        assert_eq!(f.retry_sites[2].predicate, Predicate::Unknown);
        let chain = rust(&f.retry_sites[0]).chain.as_ref().unwrap();
        let RustBase::New { state, .. } = &chain.base else {
            panic!("{chain:?}")
        };
        assert_eq!(state.lib(), Library::TokioRetry2);
    }

    #[test]
    fn backoff_operation_classification() {
        let f = facts(
            "use crate::retry;\nasync fn f() {\n  backoff::future::retry(backoff::ExponentialBackoff::default(), || async { Ok(op().await?) }).await;\n\
             backoff::future::retry(backoff::ExponentialBackoff::default(), || async { op().await.map_err(retry::classify) }).await;\n\
             backoff::future::retry(backoff::ExponentialBackoff::default(), || async { op().await.map_err(|e| if e.fatal() { backoff::Error::permanent(e) } else { backoff::Error::transient(e) }) }).await;\n}\n",
        );
        let predicates: Vec<&str> = f
            .retry_sites
            .iter()
            .map(|s| match s.predicate {
                Predicate::None => "none",
                Predicate::Unknown => "unknown",
                Predicate::Filter { .. } => "filter",
                Predicate::Transient => "transient",
            })
            .collect();
        assert_eq!(predicates, ["none", "unknown", "filter"]);
    }

    #[test]
    fn policies_through_self_fields_and_associated_items() {
        let f = facts(
            "use backon::{ExponentialBuilder, Retryable};\n\
             pub struct Policies;\nimpl Policies { pub const FAST: ExponentialBuilder = ExponentialBuilder::new().with_jitter(); fn slow(&self) -> ExponentialBuilder { ExponentialBuilder::new() } }\n\
             struct S { b: ExponentialBuilder }\n\
             impl S {\n  fn new() -> Self { Self { b: ExponentialBuilder::default().with_max_times(2) } }\n  fn p(&self) -> ExponentialBuilder { ExponentialBuilder::default().with_max_times(4) }\n  fn q() -> ExponentialBuilder { ExponentialBuilder::default().with_max_times(6) }\n\
               async fn run(&self) { op.retry(self.b.clone()).await; op.retry(self.p()).await; op.retry(Self::q()).await; }\n}\n",
        );
        // The associated const is a policy of the module `Policies`; a method taking only
        // `self` is one too, built from its type's configuration.
        let policies: Vec<(String, bool, bool)> = f
            .rust_policies
            .iter()
            .map(|p| {
                let configured = matches!(p.value.base, RustBase::New { configured: true, .. });
                (format!("{}::{}", p.module.join("::"), p.name), p.public, configured)
            })
            .collect();
        assert!(
            policies.contains(&("Policies::FAST".to_string(), true, false)),
            "{policies:?}"
        );
        assert!(
            policies.contains(&("Policies::slow".to_string(), false, true)),
            "{policies:?}"
        );
        let times: Vec<Vec<Arg>> = f
            .retry_sites
            .iter()
            .map(|s| {
                let chain = rust(s).chain.as_ref().expect("followed");
                chain
                    .ops
                    .iter()
                    .filter(|o| o.method == "with_max_times")
                    .flat_map(|o| o.args.clone())
                    .collect()
            })
            .collect();
        assert_eq!(times, [vec![Arg::Num(2.0)], vec![Arg::Num(4.0)], vec![]]);
        // `Self::q()` names the associated function, resolved by the index.
        let chain = rust(&f.retry_sites[2]).chain.as_ref().unwrap();
        assert!(
            matches!(&chain.base, RustBase::Named(p) if p.segments == ["self", "S", "q"]),
            "{chain:?}"
        );
    }

    #[test]
    fn test_code_is_not_extracted() {
        let retry = "(|| async { 1 }).retry(ExponentialBuilder::default()).await;";
        let f = facts(&format!(
            "use backon::ExponentialBuilder;\n\
             #[cfg(test)]\nmod tests {{\n  use backon::Retryable;\n  use super::*;\n  #[tokio::test]\n  async fn t() {{ {retry} }}\n}}\n\
             #[test]\nfn unit() {{ {retry} }}\n\
             #[cfg(test)]\npub fn policy() -> ExponentialBuilder {{ ExponentialBuilder::default() }}\n"
        ));
        assert!(f.retry_sites.is_empty(), "{:?}", f.retry_sites);
        assert!(f.rust_policies.is_empty(), "{:?}", f.rust_policies);
        // The test module's `use backon::Retryable` does not bring the trait into the file.
        let f = facts(&format!(
            "use backon::ExponentialBuilder;\n#[cfg(test)]\nmod tests {{ use backon::Retryable; }}\nasync fn f() {{ {retry} }}\n"
        ));
        assert!(f.retry_sites.is_empty());
        let f = facts(&format!(
            "#![cfg(test)]\nuse backon::{{ExponentialBuilder, Retryable}};\nasync fn f() {{ {retry} }}\n"
        ));
        assert!(f.retry_sites.is_empty());
        // Production code beside it still counts.
        let f = facts(&format!(
            "use backon::{{ExponentialBuilder, Retryable}};\n#[cfg(not(test))]\nasync fn f() {{ {retry} }}\n"
        ));
        assert_eq!(f.retry_sites.len(), 1);
    }

    #[test]
    fn retried_closures_are_units() {
        let f = facts(
            "use backon::{ExponentialBuilder, Retryable};\n\
             async fn place(pool: &Pool, client: &Client) {\n\
               (|| async {\n\
                 let mut tx = pool.begin().await?;\n\
                 sqlx::query(\"INSERT INTO orders (id) VALUES ($1)\").bind(1).execute(&mut *tx).await?;\n\
                 tx.commit().await?;\n\
                 client.post(url).json(&body).send().await?;\n\
                 client.get(url).send().await?;\n\
                 notify(1).await\n\
               }).retry(ExponentialBuilder::default()).await;\n\
             }\n\
             async fn notify(n: u32) { events.publish(n).await }\n",
        );
        let unit = f.retry_sites[0].unit.as_ref().expect("the closure is the unit");
        let kinds: Vec<String> = unit
            .ops
            .iter()
            .map(|op| match &op.kind {
                OpKind::Call { receiver, method, .. } => format!("{}.{method}", receiver.as_deref().unwrap_or("")),
                OpKind::Sql(class) => format!("sql {class:?}"),
                OpKind::Http { method, .. } => format!("http {method}"),
                OpKind::Transaction => "transaction".into(),
                OpKind::GraphQl { .. } => "graphql".into(),
            })
            .collect();
        assert!(kinds.contains(&"sql Insert".to_string()), "{kinds:?}");
        assert!(kinds.contains(&"transaction".to_string()), "{kinds:?}");
        assert!(
            kinds.contains(&"http post".to_string()) && kinds.contains(&"http get".to_string()),
            "{kinds:?}"
        );
        assert!(
            !kinds.iter().any(|k| k.ends_with(".send")),
            "reqwest's send is the request: {kinds:?}"
        );
        assert!(kinds.contains(&".notify".to_string()), "{kinds:?}");
        let named: Vec<_> = f.units.iter().filter_map(|u| u.name.as_deref()).collect();
        assert_eq!(named, ["place", "notify"], "the file's functions, for following calls");
    }

    #[test]
    fn steps_whose_failure_the_unit_handles() {
        let f = facts(
            "use backon::Retryable;\n\
             async fn f(pool: &Pool, events: &Sender) {\n\
               (|| async {\n\
                 let mut tx = pool.begin().await?;\n\
                 tx.commit().await?;\n\
                 let _ = events.send(1).await;\n\
                 if let Err(e) = notify(2).await { warn(e); }\n\
                 events.publish(3).await.map_err(Error::from)?;\n\
                 tracing::info!(\"done\");\n\
                 Ok(audit(4).await)\n\
               }).retry(retry::CONTENTION).await;\n\
             }\n",
        );
        let unit = f.retry_sites[0].unit.as_ref().unwrap();
        let called: Vec<(String, bool)> = unit
            .ops
            .iter()
            .filter_map(|op| match &op.kind {
                OpKind::Call { method, .. } => Some((method.clone(), unit.handled.contains(&op.span))),
                _ => None,
            })
            .collect();
        let handled = |m: &str| called.iter().find(|(n, _)| n == m).map(|(_, h)| *h);
        assert_eq!(handled("send"), Some(true), "{called:?}");
        assert_eq!(handled("notify"), Some(true), "{called:?}");
        assert_eq!(handled("warn"), Some(true), "{called:?}");
        assert_eq!(handled("publish"), Some(false), "{called:?}");
        assert_eq!(handled("audit"), Some(false), "the unit's value: {called:?}");
        assert_eq!(handled("Ok"), None, "a variant built is no operation: {called:?}");
    }

    #[test]
    fn a_retry_method_of_a_value_is_not_backons() {
        let f = facts(
            "use backon::Retryable;\n\
             struct Charge;\n\
             async fn f<F: FnMut() -> Fut, Fut>(charge: &Charge, op: F, all: Vec<Charge>) {\n\
               charge.retry(Setting::Smart).await;\n\
               let next = Charge { id: 2 };\n\
               next.retry(Setting::Smart).await;\n\
               let found = Charge::find(1).await?;\n\
               found.retry(Setting::Smart).await;\n\
               for c in &all { c.retry(Setting::Smart).await; }\n\
               self.charge.retry(Setting::Smart).await;\n\
               op.retry(retry::CONTENTION).await;\n\
               let boxed = Box::new(|| async { 1 });\n\
               boxed.retry(retry::CONTENTION).await;\n\
               fetch.retry(retry::CONTENTION).await;\n\
             }\n",
        );
        let receivers: Vec<&str> = f
            .retry_sites
            .iter()
            .map(|s| {
                let PolicyArg::Rust(arg) = &s.policy else { panic!() };
                arg.chain.as_ref().map_or("?", |c| c.text.as_str())
            })
            .collect();
        assert_eq!(
            receivers.len(),
            3,
            "the generic, the boxed closure, the function: {receivers:?}"
        );
    }

    #[test]
    fn struct_literal_arguments_carry_their_keys() {
        let f = facts(
            "use backon::Retryable;\n\
             async fn f(mailbox: &Mailbox, id: u64) {\n\
               let msg = Message::Leave { id }.encode();\n\
               match msg {\n\
                 Ok(msg) => { (|| async { let m = msg.clone(); mailbox.send_proposal(m).await }).retry(retry::transient()).await; }\n\
                 Err(_) => {}\n\
               }\n\
               (|| async { mailbox.send_proposal(Message::Join { node: Uuid::new_v4(), ..base }).await }).retry(retry::transient()).await;\n\
               (|| async { mailbox.send_proposal(payload()).await }).retry(retry::transient()).await;\n\
             }\n",
        );
        let keys: Vec<Option<ArgKeysView>> = f
            .retry_sites
            .iter()
            .map(|s| {
                s.unit.as_ref().unwrap().ops.iter().find_map(|op| match &op.kind {
                    OpKind::Call { method, client_id, .. } if method == "send_proposal" => {
                        Some(client_id.as_ref().map(|k| ArgKeysView {
                            names: k.keys.iter().map(|k| (k.name.clone(), k.fresh)).collect(),
                            open: k.open,
                        }))
                    }
                    _ => None,
                })?
            })
            .collect();
        assert_eq!(
            keys,
            [
                Some(ArgKeysView {
                    names: vec![("id".into(), false)],
                    open: false
                }),
                Some(ArgKeysView {
                    names: vec![("node".into(), true)],
                    open: true
                }),
                None,
            ]
        );
    }

    #[derive(Debug, PartialEq)]
    struct ArgKeysView {
        names: Vec<(String, bool)>,
        open: bool,
    }
}
