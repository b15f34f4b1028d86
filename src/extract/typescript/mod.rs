//! TypeScript / TSX extraction: imports, exports, top-level bindings, retry sites with their
//! units, jobs, cursors and SQL. One walk over the tree; the tree is dropped when it returns.

mod clients;
mod expr;
mod handlers;
mod jobs;
mod module;
mod polls;
mod query_builder;
mod recovery;
mod scopes;
mod services;
mod sites;
mod units;

use super::lineage::Lineage;
use super::step_past;
use super::FieldExt;
use tree_sitter::{Node, Tree};

pub(crate) use recovery::parse_with_recovery;

use super::{count_errors, parse};
use crate::facts::{
    is_effect_source, Binding, Container, ContainerKind, Export, Expr, FileFacts, Import, ImportKind, PolicyArg,
    Predicate, Property, Retried, RetrySite,
};
use crate::schedule::Library;
use crate::source::{Language, Span};

/// How deep an expression is converted before the rest becomes opaque. Policies are shallow;
/// this only bounds the work on pathological input.
const MAX_EXPR_DEPTH: usize = 40;

/// Tokens that make an unparsed region worth a note: a retry or schedule may hide there.
const ERROR_REGION_TOKENS: &[&[u8]] = &[b"retry", b"Schedule", b"lease", b"Jobs"];

/// Extracts the facts of `text`, read with `grammar` (TypeScript or TSX), with the imports
/// `aliases` names read as the Effect imports they are.
pub(super) fn extract(
    facts: &mut FileFacts,
    text: &[u8],
    grammar: crate::source::Language,
    aliases: &[crate::facts::EffectAlias],
    depth: super::Depth,
) {
    let Some(tree) = parse_with_recovery(grammar, text) else {
        facts.note(None, super::unparsed_note(grammar, text));
        return;
    };
    facts.syntax_errors = count_errors(&tree);
    let Ok(src) = std::str::from_utf8(text) else {
        return;
    };
    let walks = units::WalkBudget::start(text.len());
    let mut extractor = Extractor {
        text,
        src,
        budget: std::cell::Cell::new(0),
        truncated: std::cell::Cell::new(false),
        lineage: Lineage::new(),
        marks: Vec::new(),
        facts,
        scopes: scopes::Scopes::default(),
        blocks: services::EnclosingServices::default(),
        bindings: units::Bindings::default(),
        top_level: std::cell::OnceCell::new(),
        identifiers: std::cell::OnceCell::new(),
        containers: Vec::new(),
        frames: Vec::new(),
        shadowed: Default::default(),
        block_locals: Default::default(),
        module_state: Vec::new(),
    };
    let root = tree.root_node();
    extractor.module_items(root);
    if !aliases.is_empty() {
        extractor.facts.apply_effect_aliases(aliases);
    }
    extractor.marks = marks(text, &extractor.facts.imports, &extractor.module_state);
    extractor.bindings = units::Bindings::new(&extractor.facts.bindings);
    extractor.walk(root);
    super::unread::note_unread(extractor.facts, text, &tree);
    // Calls inside a retried unit are followed into the file's named units; a file that
    // retries nothing is read for its top-level helpers, which other files import — or, read
    // lazily, only when a call is followed into it.
    let top_level = extractor.facts.retry_sites.is_empty();
    if top_level && depth == super::Depth::Lazy {
        extractor.facts.units_deferred = true;
        note_walks(extractor.facts, &walks);
        return;
    }
    let bindings = &extractor.bindings;
    let units = units::named_units(text, root, bindings, top_level);
    let handlers = (!top_level).then(|| handlers::handlers(text, root, bindings));
    // A service's methods are what `yield* Service` callers reach: read where one is defined.
    let services = (extractor.facts.uses_effect && (src.contains(".Service<") || src.contains("Layer.")))
        .then(|| services::service_defs(text, root, bindings, extractor.top_level(root)));
    extractor.facts.units = units;
    if let Some(handlers) = handlers {
        extractor.facts.handlers = handlers;
    }
    if let Some(services) = services {
        extractor.facts.services = services;
    }
    note_walks(extractor.facts, &walks);
}

/// A file whose units stopped being read for want of budget (see [`units::WalkBudget`]) says
/// so: what its retries run is then only partly known.
fn note_walks(facts: &mut FileFacts, walks: &units::WalkBudget) {
    if walks.exhausted() {
        facts.note(
            None,
            "not analysed in full: what its retries and loops run nests deeper than retrylint follows",
        );
    }
}

/// Words every fact of the walk starts from (compared without letter case): a retry, a
/// schedule, a cron, a job, a clock read, a lease, an SQL tag, and the opening of a string that
/// reads as SQL. A subtree with none of them holds no fact, whatever else it holds.
const MARKS: &[&str] = &[
    "retry",
    // `ExecutionPlan.make({ provide, attempts })` steps retry without the word.
    "executionplan",
    // Requests through a named client (`api.execute(HttpClientRequest.post(…))`, `api.post(…)`):
    // the client may be a retrying one.
    "httpclientrequest",
    ".post(",
    ".patch(",
    "clock",
    "repeat",
    "forever",
    "setinterval",
    ".tick(",
    "schedule",
    "cron",
    "jobs",
    "ref.",
    "date",
    "lease",
    "sql",
    // drizzle's `db.update(table).set(…).where(…)` (see `query_builder`).
    ".update(",
    "\"select",
    "'select",
    "`select",
    "\"insert",
    "'insert",
    "`insert",
    "\"update",
    "'update",
    "`update",
    "\"delete",
    "'delete",
    "`delete",
    "\"replace",
    "'replace",
    "`replace",
    "\"with",
    "'with",
    "`with",
    "\"create",
    "'create",
    "`create",
    "\"alter",
    "'alter",
    "`alter",
    "` ",
    "`\n",
    "`\r",
    "`\t",
];

/// The offsets where a mark occurs, in order: the fixed words, this file's local names of
/// Effect's `Ref` modules (`import { Ref as R }`: `R.getAndSet(…)` names no `Ref`), and in a
/// file that builds a retrying client, its request calls.
fn marks(text: &[u8], imports: &[crate::facts::Import], module_state: &[(&str, bool)]) -> Vec<u32> {
    static MATCHER: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    let matcher = MATCHER.get_or_init(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(MARKS)
            .expect("literal patterns")
    });
    let mut out: Vec<u32> = matcher.find_overlapping_iter(text).map(|m| m.start() as u32).collect();
    // A request through a retrying client names neither: where the file builds one, every
    // request call is a mark.
    if memchr::memmem::find(text, b"retryTransient").is_some() {
        for method in [
            ".get(",
            ".post(",
            ".put(",
            ".patch(",
            ".del(",
            ".delete(",
            ".head(",
            ".options(",
            ".execute(",
        ] {
            out.extend(memchr::memmem::find_iter(text, method.as_bytes()).map(|at| at as u32));
        }
    }
    // A cursor in module state or a `Map` is read and written by name, where the file reads
    // a clock at all.
    let clock = ["Date.now", "new Date", "DateTime", "Clock"]
        .iter()
        .any(|w| memchr::memmem::find(text, w.as_bytes()).is_some());
    if clock {
        for (name, _) in module_state {
            out.extend(memchr::memmem::find_iter(text, name.as_bytes()).map(|at| at as u32));
        }
        // A window started from a clock read bound to a local (`now - 3_600_000`, the
        // subtraction written with spaces, as formatters write it).
        out.extend(memchr::memmem::find_iter(text, b" - ").map(|at| at as u32));
        if memchr::memmem::find(text, b"new Map").is_some() {
            for method in [".get(", ".set("] {
                out.extend(memchr::memmem::find_iter(text, method.as_bytes()).map(|at| at as u32));
            }
        }
    }
    for import in imports.iter().filter(|i| is_effect_source(&i.source)) {
        let imported = match &import.kind {
            ImportKind::Named(name) => name.as_str(),
            _ => import.source.rsplit('/').next().unwrap_or(""),
        };
        if imported.ends_with("Ref") && import.local != imported {
            let alias = format!("{}.", import.local);
            out.extend(memchr::memmem::find_iter(text, alias.as_bytes()).map(|at| at as u32));
        }
    }
    out.sort_unstable();
    out
}

/// What entering a node pushed, popped again when the walk leaves it.
#[derive(Default)]
struct Frame {
    scope: bool,
    container: bool,
}

/// A local name: `Some(node)` for a `const`/`let` with an initializer, `None` for a parameter
/// or anything else whose value the model does not know.
type ScopeEntry<'t> = (&'t str, Option<Node<'t>>, Span);

/// A named scope on the walk's stack, its name borrowed from the text: it becomes a
/// [`Container`] only when a fact is recorded inside it.
type Scope<'t> = (ContainerKind, std::borrow::Cow<'t, str>);

struct Extractor<'t, 'f> {
    text: &'t [u8],
    /// The same text, checked to be UTF-8 once.
    src: &'t str,
    facts: &'f mut FileFacts,
    /// The locals and parameters in scope where the walk is.
    scopes: scopes::Scopes<'t>,
    /// The services bound in the blocks around the walk (a retried unit's too).
    blocks: services::EnclosingServices<'t>,
    /// The module's top-level bindings by name (complete before the walk).
    bindings: units::Bindings,
    /// The module's top-level declarations by name, read on first use.
    top_level: std::cell::OnceCell<TopLevel<'t>>,
    /// Every identifier of the file by name, read on first use (see `uses_of`).
    identifiers: std::cell::OnceCell<std::collections::HashMap<&'t str, Vec<Node<'t>>>>,
    containers: Vec<Scope<'t>>,
    frames: Vec<Frame>,
    /// Parameter names shadowed while a function body is converted to an `Expr`.
    shadowed: std::cell::RefCell<Vec<Vec<String>>>,
    /// `const`s of a function body being converted (`const o = presets[preset]`), with the
    /// depth of `shadowed` they were declared at: `None` is a name bound to nothing the
    /// model follows.
    block_locals: std::cell::RefCell<Vec<BlockLocal>>,
    /// Nodes an expression conversion may still visit (see `expr`).
    budget: std::cell::Cell<usize>,
    /// Whether a conversion stopped at the depth or node limit (a retry policy cut short
    /// gets a note).
    truncated: std::cell::Cell<bool>,
    /// The nodes the walk is inside, innermost last: a node's parent without `Node::parent`,
    /// which tree-sitter answers by descending from the root (see `lineage`).
    lineage: Lineage<'t, 't>,
    /// Where the words a fact can start from occur in the text, in order (see `marks`): a
    /// subtree holding none of them is stepped over.
    marks: Vec<u32>,
    /// Module-level `let`s and `Map`s (`true`): where a "since the last run" cursor can live.
    module_state: Vec<(&'t str, bool)>,
}

impl<'t> Extractor<'t, '_> {
    fn text_of(&self, node: Node) -> &'t str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    /// The parent of the node being entered (the walk's own stack).
    fn walk_parent(&self) -> Option<Node<'t>> {
        self.lineage.up(1)
    }

    /// The parent of `node`, read off the walk's path (see `lineage`).
    fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        self.lineage.parent(node)
    }

    /// The module's top-level declarations by name (`root` is the tree's).
    fn top_level(&self, root: Node<'t>) -> &TopLevel<'t> {
        self.top_level.get_or_init(|| TopLevel::read(self.src, root))
    }

    /// The identifiers and shorthand properties named `name` that lie in `scope`, in source
    /// order: from an index of the file's identifiers, read once (a scan of the scope per
    /// look-up is quadratic on a large one).
    fn uses_of(&self, scope: Node<'t>, name: &str) -> &[Node<'t>] {
        let index = self.identifiers.get_or_init(|| {
            let mut index: std::collections::HashMap<&'t str, Vec<Node<'t>>> = std::collections::HashMap::new();
            let Some(root) = self.lineage.root_node() else {
                return index;
            };
            let mut cursor = root.walk();
            'walk: loop {
                let node = cursor.node();
                if matches!(node.kind_str(), "identifier" | "shorthand_property_identifier") {
                    index.entry(self.text_of(node)).or_default().push(node);
                }
                if cursor.goto_first_child() {
                    continue;
                }
                while !cursor.goto_next_sibling() {
                    if !cursor.goto_parent() {
                        break 'walk;
                    }
                }
            }
            index
        });
        crate::extract::work::step(1);
        let Some(all) = index.get(name) else {
            return &[];
        };
        let from = all.partition_point(|n| n.start_byte() < scope.start_byte());
        let to = all.partition_point(|n| n.end_byte() <= scope.end_byte() && n.start_byte() < scope.end_byte());
        all.get(from..to.max(from)).unwrap_or(&[])
    }

    fn span(node: Node) -> Span {
        Span::new(node.start_byte(), node.end_byte())
    }

    /// The scopes the walk is inside, outermost first, as facts hold them.
    fn containers(&self) -> Vec<Container> {
        self.containers
            .iter()
            .map(|(kind, name)| Container {
                kind: *kind,
                name: name.to_string(),
            })
            .collect()
    }
}

fn collect_pattern_names<'t>(pattern: Node<'t>, src: &'t str, out: &mut Vec<ScopeEntry<'t>>) {
    if pattern.kind_str() == "identifier" {
        let name = src.get(pattern.byte_range()).unwrap_or("");
        out.push((name, None, Extractor::span(pattern)));
        return;
    }
    let mut cursor = pattern.walk();
    for child in pattern.named_children(&mut cursor) {
        if matches!(
            child.kind_str(),
            "identifier"
                | "shorthand_property_identifier_pattern"
                | "object_pattern"
                | "array_pattern"
                | "pair_pattern"
                | "assignment_pattern"
                | "rest_pattern"
        ) {
            if child.kind_str() == "shorthand_property_identifier_pattern" {
                let name = src.get(child.byte_range()).unwrap_or("");
                out.push((name, None, Extractor::span(child)));
            } else {
                collect_pattern_names(child, src, out);
            }
        }
    }
}

fn has_token_child(node: Node, token: &str) -> bool {
    let mut cursor = node.walk();
    let found = node
        .children(&mut cursor)
        .any(|c| !c.is_named() && c.kind_str() == token);
    found
}

fn first_named_child_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    let found = node.named_children(&mut cursor).find(|c| c.kind_str() == kind);
    found
}

/// The value of a string literal's source text: quotes removed, common escapes decoded.
fn string_value(literal: &str) -> String {
    let inner = literal
        .strip_prefix(['"', '\'', '`'])
        .and_then(|s| s.strip_suffix(['"', '\'', '`']))
        .unwrap_or(literal);
    if !inner.contains('\\') {
        return inner.to_string();
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn parse_number(text: &str) -> Option<f64> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let clean = clean.trim_end_matches('n');
    if let Some(hex) = clean.strip_prefix("0x").or_else(|| clean.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok().map(|v| v as f64);
    }
    clean.parse::<f64>().ok()
}

/// The module's top-level declarations (`export`ed ones unwrapped) by name, read once: what a
/// name the walk cannot find among the locals, a service's `make` and a drizzle table's
/// `pgTable(…)` are looked up in (a scan of the module per look-up is quadratic on a large
/// file, and most for a name it never binds).
struct TopLevel<'t> {
    /// `function NAME` → the declaration, `const NAME = value` → the value (`None` without
    /// one): the first of each name.
    values: std::collections::HashMap<&'t str, Option<Node<'t>>>,
    /// Every declarator of a top-level `const`/`let`/`var`, by its name's text, in order.
    declarators: std::collections::HashMap<&'t str, Vec<Node<'t>>>,
}

impl<'t> TopLevel<'t> {
    fn read(src: &'t str, root: Node<'t>) -> Self {
        let text = |node: Node| src.get(node.byte_range()).unwrap_or("");
        let mut values = std::collections::HashMap::new();
        let mut declarators: std::collections::HashMap<&'t str, Vec<Node<'t>>> = std::collections::HashMap::new();
        let mut cursor = root.walk();
        for item in root.named_children(&mut cursor) {
            let item = if item.kind_str() == "export_statement" {
                match item.field("declaration") {
                    Some(declaration) => declaration,
                    None => continue,
                }
            } else {
                item
            };
            match item.kind_str() {
                "function_declaration" => {
                    if let Some(name) = item.field("name") {
                        values.entry(text(name)).or_insert(Some(item));
                    }
                }
                "lexical_declaration" | "variable_declaration" => {
                    let mut inner = item.walk();
                    for declarator in item.named_children(&mut inner) {
                        if let Some(name) = declarator.field("name") {
                            values.entry(text(name)).or_insert_with(|| declarator.field("value"));
                            declarators.entry(text(name)).or_default().push(declarator);
                        }
                    }
                }
                _ => {}
            }
        }
        TopLevel { values, declarators }
    }

    /// The value of a top-level `const NAME = …` or `function NAME`.
    fn value(&self, name: &str) -> Option<Node<'t>> {
        crate::extract::work::step(1);
        self.values.get(name).copied().flatten()
    }

    /// The declarators of top-level `const`/`let`/`var`s named `name`, in order.
    fn declarators(&self, name: &str) -> &[Node<'t>] {
        crate::extract::work::step(1);
        self.declarators.get(name).map_or(&[], Vec::as_slice)
    }
}

/// A `const` of a body being converted: its name, declarator, value (`None`: nothing the model
/// follows) and the depth of `shadowed` it was declared at.
type BlockLocal = (String, Span, Option<Expr>, usize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_values_decode_quotes_and_escapes() {
        assert_eq!(string_value("\"100 millis\""), "100 millis");
        assert_eq!(string_value("'a\\'b'"), "a'b");
    }
}
