//! Units of work: what a retried effect does, read off its syntax tree while the tree is
//! alive. A unit is a list of operations in source order — calls (classified later by the
//! rules, whose verbs are configurable), SQL statements, HTTP requests and transactions.

use super::FieldExt;
use super::Lineage;
use tree_sitter::Node;

use super::clients::{chain_sets_idempotency_key, mentions_idempotency_key};
use super::handlers::is_unit_value;
use super::services::{block_services, service_local, EnclosingServices, MAX_SERVICES};

use crate::extract::sql::classify_sql;
use crate::facts::{ArgKey, ArgKeys, Binding, OpKind, SqlClass, Unit, UnitOp};
use crate::source::Span;

/// Operations kept per unit: enough for any real unit, bounded for generated code.
const MAX_OPS: usize = 256;
/// Named units kept per file.
const MAX_UNITS: usize = 512;

/// Nodes the walks of one file's units and loops (`unit`, and the scan of what a loop runs)
/// may visit in all: so many per byte of the file, and a floor for small files. A unit is
/// walked once per retry, loop or name that reaches it, far below this in real code; in a nest
/// of retries each retrying the ones inside it (`Effect.retry(Effect.retry(…), …)`), every
/// level walked the levels inside it, quadratic in the nest's depth. Past the budget the
/// walks stop and the file gets a note.
const WALK_NODES_PER_BYTE: u64 = 16;
const WALK_NODES_FLOOR: u64 = 100_000;

#[derive(Clone, Copy)]
struct Walks {
    left: u64,
    exhausted: bool,
}

thread_local! {
    static WALKS: std::cell::Cell<Walks> = const {
        std::cell::Cell::new(Walks {
            left: u64::MAX,
            exhausted: false,
        })
    };
}

/// The walks' budget of one file's extraction, while it lives (the one before is restored).
pub(super) struct WalkBudget(Walks);

impl WalkBudget {
    pub(super) fn start(file_len: usize) -> WalkBudget {
        let left = WALK_NODES_FLOOR.saturating_add(WALK_NODES_PER_BYTE.saturating_mul(file_len as u64));
        WalkBudget(WALKS.replace(Walks { left, exhausted: false }))
    }

    /// Whether a walk stopped for want of budget.
    pub(super) fn exhausted(&self) -> bool {
        WALKS.get().exhausted
    }
}

impl Drop for WalkBudget {
    fn drop(&mut self) {
        WALKS.set(self.0);
    }
}

/// Takes one node of the file's walk budget: false when none is left.
pub(super) fn walk_step() -> bool {
    let mut walks = WALKS.get();
    let ok = walks.left > 0;
    if ok {
        walks.left -= 1;
    } else {
        walks.exhausted = true;
    }
    WALKS.set(walks);
    ok
}

pub(super) const HTTP_METHODS: &[&str] = &["get", "post", "put", "patch", "del", "delete", "head", "options"];

pub(super) fn text<'t>(source: &'t [u8], node: Node) -> &'t str {
    std::str::from_utf8(&source[node.byte_range()]).unwrap_or("")
}

pub(super) fn span(node: Node) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// The module's top-level bindings by name, for what a unit looks up by name (a GraphQL
/// document in a constant): one index per file instead of a scan of the bindings per call.
#[derive(Default)]
pub struct Bindings {
    /// The span of the first binding of each name.
    spans: std::collections::HashMap<String, Span>,
}

impl Bindings {
    pub fn new(bindings: &[Binding]) -> Self {
        let mut spans = std::collections::HashMap::with_capacity(bindings.len());
        for binding in bindings {
            spans.entry(binding.name.clone()).or_insert(binding.span);
        }
        Bindings { spans }
    }

    fn span(&self, name: &str) -> Option<Span> {
        crate::extract::work::step(1);
        self.spans.get(name).copied()
    }
}

/// The unit `roots` stand for: every operation in their subtrees, in source order. `bindings`
/// are the file's top-level bindings (a GraphQL mutation's text is often a constant);
/// `outer` is the path (from the tree's root) of the walk that found the unit. With
/// `enclosing` (a retried unit, a service's method: the services bound in the blocks around
/// the walk, see [`EnclosingServices::around`]), the services bound in the blocks around the
/// unit are the unit's too (`const orders = yield* Orders` in a layer's `Effect.gen`, then a
/// retried `Effect.fn` that uses `orders`).
pub fn unit<'t>(
    source: &[u8],
    roots: &[Node<'t>],
    name: Option<String>,
    bindings: &Bindings,
    outer: &[Node<'t>],
    enclosing: Option<&[(String, String)]>,
) -> Unit {
    // Locals bound to a freshly made id, collected by the same walk (in source order: a
    // local is declared before the calls that use it).
    let reader = Reader {
        source,
        bindings,
        fresh: std::cell::RefCell::new(Vec::new()),
        commands: std::cell::RefCell::new(Vec::new()),
    };
    let mut ops = Vec::new();
    let mut services: Vec<(String, String)> = Vec::new();
    // Blocks between the walk's path and the first root: theirs come before `enclosing`.
    let mut blocks_between: Vec<Node<'t>> = Vec::new();
    'roots: for (index, &node) in roots.iter().enumerate() {
        let mut lineage = Lineage::below(outer, node);
        if index == 0 && enclosing.is_some() {
            let path = lineage.path();
            blocks_between = path[..path.len() - 1]
                .iter()
                .rev()
                .filter(|n| n.kind_str() == "statement_block")
                .copied()
                .collect();
        }
        let mut cursor = node.walk();
        loop {
            if !walk_step() {
                break 'roots;
            }
            let current = cursor.node();
            let descend = match current.kind_str() {
                "comment" | "string" | "type_annotation" | "type_arguments" => false,
                "call_expression" => {
                    if let Some(op) = reader.operation(current, &lineage) {
                        ops.push(op);
                        if ops.len() >= MAX_OPS {
                            break 'roots;
                        }
                    }
                    true
                }
                "variable_declarator" => {
                    if let (Some(name), Some(value)) = (
                        current.field("name").filter(|n| n.kind_str() == "identifier"),
                        current.field("value"),
                    ) {
                        if makes_id(source, value) {
                            reader.fresh.borrow_mut().push(text(source, name));
                        }
                        if let Some((operation, input)) = reader.sdk_command(value) {
                            reader
                                .commands
                                .borrow_mut()
                                .push((text(source, name), operation, input));
                        }
                    }
                    if let Some(bound) = service_local(source, current) {
                        if services.len() < MAX_SERVICES && !services.contains(&bound) {
                            services.push(bound);
                        }
                    }
                    true
                }
                _ => true,
            };
            if descend && lineage.first_child(&mut cursor) {
                continue;
            }
            if !lineage.step_past(&mut cursor, node) {
                break;
            }
        }
    }
    if let Some(enclosing) = enclosing.filter(|_| !roots.is_empty()) {
        let between = blocks_between.iter().flat_map(|block| block_services(source, *block));
        for bound in between.chain(enclosing.iter().cloned()) {
            if services.len() < MAX_SERVICES && !services.iter().any(|(l, _)| *l == bound.0) {
                services.push(bound);
            }
        }
    }
    let span = match (roots.first(), roots.last()) {
        (Some(first), Some(last)) => Span::new(first.start_byte(), last.end_byte().max(first.end_byte())),
        _ => Span::default(),
    };
    Unit {
        name,
        span,
        ops,
        services,
        handled: Vec::new(),
    }
}

/// A query builder's insert, read like the SQL it writes: drizzle's
/// `db.insert(table).values(…)` and kysely's `db.insertInto("t").values(…)` are an `INSERT`,
/// an upsert when the chain goes on with `.onConflictDoNothing()`, `.onConflictDoUpdate(…)`,
/// `.onConflict(…)` or `.onDuplicateKeyUpdate(…)`.
fn query_builder_insert<'t>(
    source: &[u8],
    call: Node<'t>,
    callee: Node<'t>,
    method: &str,
    lineage: &Lineage<'_, 't>,
) -> Option<SqlClass> {
    if method != "values" || callee.kind_str() != "member_expression" {
        return None;
    }
    let inner = callee.field("object").filter(|o| o.kind_str() == "call_expression")?;
    let inner_callee = inner
        .field("function")
        .filter(|f| f.kind_str() == "member_expression")?;
    let verb = inner_callee.field("property").map(|p| text(source, p))?;
    if verb != "insert" && verb != "insertInto" {
        return None;
    }
    // Up the chain: `….values(…).onConflictDoNothing().returning()`.
    for parent in lineage.ancestors(call) {
        match parent.kind_str() {
            "member_expression" => {
                let property = parent.field("property").map(|p| text(source, p)).unwrap_or("");
                if property.starts_with("onConflict") || property.starts_with("onDuplicateKey") {
                    return Some(SqlClass::Upsert);
                }
            }
            "call_expression" | "await_expression" | "parenthesized_expression" => {}
            _ => break,
        }
    }
    Some(SqlClass::Insert)
}

/// What one unit's operations are read with.
struct Reader<'a> {
    source: &'a [u8],
    bindings: &'a Bindings,
    /// Locals of the unit bound to a freshly made id, as the walk meets them.
    fresh: std::cell::RefCell<Vec<&'a str>>,
    /// Locals of the unit bound to an AWS SDK command (`const put = new PutObjectCommand({…})`),
    /// as the walk meets them: the operation it names and the keys of its input.
    commands: std::cell::RefCell<Vec<(&'a str, String, Option<ArgKeys>)>>,
}

impl Reader<'_> {
    /// One call as a unit operation (`lineage`: the unit walk's, at the call).
    fn operation<'t>(&self, call: Node<'t>, lineage: &Lineage<'_, 't>) -> Option<UnitOp> {
        let source = self.source;
        let callee = call.field("function")?;
        let arguments = call.field("arguments")?;
        if arguments.kind_str() == "template_string" {
            // sql`…`, this.sql`…`, tx.sql`…`
            let tag = text(source, callee);
            if tag == "sql" || tag.ends_with(".sql") {
                return Some(UnitOp {
                    span: span(call),
                    kind: OpKind::Sql(classify_sql(text(source, arguments))),
                });
            }
            return None;
        }
        let (receiver, method) = match callee.kind_str() {
            "member_expression" => (
                Some(text(source, callee.field("object")?)),
                text(source, callee.field("property")?),
            ),
            "identifier" => (None, text(source, callee)),
            _ => return None,
        };
        let kind = if method == "withTransaction" && receiver.is_some() {
            OpKind::Transaction
        } else if let Some(class) = query_builder_insert(source, call, callee, method, lineage) {
            OpKind::Sql(class)
        } else if let Some(method) = self.request_method(receiver, method, arguments) {
            OpKind::Http {
                method,
                idempotency_key: mentions_idempotency_key(&source[call.byte_range()])
                    || chain_sets_idempotency_key(source, call, lineage),
            }
        } else if let Some((mutation, names)) = self.graphql(arguments) {
            OpKind::GraphQl {
                mutation,
                names,
                variables: self.arg_keys(arguments),
            }
        } else if let Some((operation, input)) = (method == "send" && receiver.is_some())
            .then(|| self.sent_command(arguments))
            .flatten()
        {
            // AWS SDK v3: `client.send(new PutObjectCommand(input))` is v2's
            // `client.putObject(input)`, and is judged as that call.
            OpKind::Call {
                receiver: receiver
                    .filter(|r| r.len() <= 80 && !r.contains('\n'))
                    .map(str::to_string),
                method: operation,
                client_id: input,
            }
        } else {
            OpKind::Call {
                receiver: receiver
                    .filter(|r| r.len() <= 80 && !r.contains('\n'))
                    .map(str::to_string),
                method: method.to_string(),
                client_id: self.arg_keys(arguments),
            }
        };
        Some(UnitOp { span: span(call), kind })
    }

    /// An AWS SDK command made with `new`: `new PutObjectCommand({ … })` names the operation
    /// `putObject`, with the keys of its input.
    fn sdk_command(&self, value: Node) -> Option<(String, Option<ArgKeys>)> {
        if value.kind_str() != "new_expression" {
            return None;
        }
        let class = value.field("constructor").filter(|c| c.kind_str() == "identifier")?;
        let name = text(self.source, class).strip_suffix("Command")?;
        let mut chars = name.chars();
        let first = chars.next().filter(char::is_ascii_uppercase)?;
        let operation = first.to_ascii_lowercase().to_string() + chars.as_str();
        let input = value.field("arguments").and_then(|a| self.arg_keys(a));
        Some((operation, input))
    }

    /// The command `send(…)`'s first argument is: made there, or a local bound to one.
    fn sent_command(&self, arguments: Node) -> Option<(String, Option<ArgKeys>)> {
        let mut cursor = arguments.walk();
        let first = arguments.named_children(&mut cursor).next()?;
        match first.kind_str() {
            "new_expression" => self.sdk_command(first),
            "identifier" => {
                let name = text(self.source, first);
                let commands = self.commands.borrow();
                let (_, operation, input) = commands.iter().rev().find(|(local, _, _)| *local == name)?;
                Some((operation.clone(), input.clone()))
            }
            _ => None,
        }
    }

    /// The HTTP method a call sends, when it says so: `HttpClientRequest.post(…)`,
    /// `client.post(…)` / `.patch(…)`, a literal method argument (`call("POST", "/items")`,
    /// `HttpClientRequest.make("PATCH")`), or `{ method: "POST" }` (`fetch(url, { method })`).
    fn request_method(&self, receiver: Option<&str>, method: &str, arguments: Node) -> Option<String> {
        if receiver == Some("HttpClientRequest") && HTTP_METHODS.contains(&method) {
            return Some(method.to_string());
        }
        if receiver.is_some() && matches!(method, "post" | "patch") {
            return Some(method.to_string());
        }
        // Logs and span attributes name methods too; they send nothing.
        let root = receiver.map(|r| r.split('.').next().unwrap_or(r));
        if root.is_some_and(|r| matches!(r, "Effect" | "Console" | "console" | "Metric" | "span" | "logger"))
            || [
                "log",
                "annotate",
                "setAttribute",
                "withSpan",
                "info",
                "debug",
                "warn",
                "error",
                "trace",
            ]
            .iter()
            .any(|p| method.starts_with(p))
        {
            return None;
        }
        let literal = |node: Node| -> Option<String> {
            if node.kind_str() != "string" {
                return None;
            }
            let value = text(self.source, node).trim_matches(['"', '\'', '`']);
            LITERAL_METHODS
                .iter()
                .find(|m| m.eq_ignore_ascii_case(value))
                .map(|m| m.to_ascii_lowercase())
        };
        let mut cursor = arguments.walk();
        for argument in arguments.named_children(&mut cursor) {
            if let Some(method) = literal(argument) {
                return Some(method);
            }
            if argument.kind_str() == "object" {
                let mut inner = argument.walk();
                for pair in argument.named_children(&mut inner) {
                    let is_method = pair.kind_str() == "pair"
                        && pair
                            .field("key")
                            .is_some_and(|k| text(self.source, k).trim_matches(['"', '\'']) == "method");
                    if let Some(method) = pair.field("value").filter(|_| is_method).and_then(literal) {
                        return Some(method);
                    }
                }
            }
        }
        None
    }

    /// A GraphQL document among the arguments — a literal, or a top-level constant of this
    /// file (`const CREATE_ISSUE = gql`mutation CreateIssue(…) { issueCreate(…) }``):
    /// whether it is a mutation, and its operation name and first field.
    fn graphql(&self, arguments: Node) -> Option<(bool, Vec<String>)> {
        let mut cursor = arguments.walk();
        for argument in arguments.named_children(&mut cursor) {
            let document = match argument.kind_str() {
                "string" | "template_string" => Some(text(self.source, argument)),
                "identifier" => {
                    let name = text(self.source, argument);
                    self.bindings
                        .span(name)
                        .and_then(|span| std::str::from_utf8(&self.source[span.start as usize..span.end as usize]).ok())
                        .and_then(|declarator| declarator.split_once('=').map(|(_, value)| value))
                }
                _ => None,
            };
            if let Some(found) = document.and_then(graphql_names) {
                return Some(found);
            }
        }
        None
    }

    /// The keys of the object-literal arguments (one level of nested objects included).
    fn arg_keys(&self, arguments: Node) -> Option<ArgKeys> {
        let mut keys = ArgKeys::default();
        let mut seen_object = false;
        let mut cursor = arguments.walk();
        for argument in arguments.named_children(&mut cursor) {
            if argument.kind_str() == "object" {
                seen_object = true;
                self.object_keys(argument, 0, &mut keys);
            }
        }
        seen_object.then_some(keys)
    }

    fn object_keys(&self, object: Node, depth: usize, out: &mut ArgKeys) {
        let mut cursor = object.walk();
        for property in object.named_children(&mut cursor) {
            let (key, value) = match property.kind_str() {
                "pair" => (property.field("key"), property.field("value")),
                "shorthand_property_identifier" => (Some(property), Some(property)),
                "spread_element" => {
                    out.open = true;
                    continue;
                }
                _ => continue,
            };
            let key = key.filter(|k| {
                matches!(
                    k.kind_str(),
                    "property_identifier" | "string" | "shorthand_property_identifier"
                )
            });
            let Some(key) = key else {
                out.open = true;
                continue;
            };
            if out.keys.len() >= MAX_KEYS {
                out.open = true;
                return;
            }
            out.keys.push(ArgKey {
                name: text(self.source, key).trim_matches(['"', '\'', '`']).to_string(),
                fresh: value.is_some_and(|v| self.is_fresh(v)),
            });
            if let Some(value) = value.filter(|v| v.kind_str() == "object" && depth < 1) {
                self.object_keys(value, depth + 1, out);
            }
        }
    }

    /// A value made fresh inside the unit: an id generator's call, or a local bound to one.
    fn is_fresh(&self, value: Node) -> bool {
        match value.kind_str() {
            "identifier" | "shorthand_property_identifier" => self.fresh.borrow().contains(&text(self.source, value)),
            _ => makes_id(self.source, value),
        }
    }
}

/// Methods a request helper may be given as a literal argument.
const LITERAL_METHODS: &[&str] = &["POST", "PATCH", "PUT", "GET", "DELETE"];

/// Object keys kept per call.
const MAX_KEYS: usize = 32;

/// Whether `node` calls an id generator: `crypto.randomUUID()`, `uuid()`, `nanoid()`,
/// `ulid()`, `createId()`, `yield* newId(OrderId)`.
fn makes_id(source: &[u8], node: Node) -> bool {
    let mut cursor = node.walk();
    loop {
        let current = cursor.node();
        if current.kind_str() == "call_expression" {
            let callee = current.field("function").map(|c| text(source, c)).unwrap_or("");
            let last = callee.rsplit('.').next().unwrap_or(callee).to_ascii_lowercase();
            if ID_MAKERS.iter().any(|m| last.contains(m)) {
                return true;
            }
        }
        if matches!(current.kind_str(), "arrow_function" | "function_expression") {
            // A function made here runs later, if at all.
        } else if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == node {
                return false;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return false;
            }
        }
    }
}

const ID_MAKERS: &[&str] = &[
    "uuid",
    "nanoid",
    "ulid",
    "cuid",
    "newid",
    "generateid",
    "createid",
    "randomid",
    "makeid",
    "nextid",
    "objectid",
];

/// Whether a GraphQL document (quotes and a `gql` tag around it allowed) is a mutation, with
/// its operation name and first field: `mutation CreateIssue($t: String!) { issueCreate(…) }`
/// → `(true, ["CreateIssue", "issueCreate"])`. `None` when the text is not a GraphQL
/// operation.
fn graphql_names(document: &str) -> Option<(bool, Vec<String>)> {
    let trimmed = document.trim_start();
    let trimmed = trimmed
        .strip_prefix("gql")
        .or_else(|| trimmed.strip_prefix("graphql"))
        .unwrap_or(trimmed);
    let body = trimmed
        .trim_start()
        .trim_start_matches(['"', '\'', '`', '('])
        .trim_start();
    let (mutation, rest) = if let Some(rest) = body.strip_prefix("mutation") {
        (true, rest)
    } else if let Some(rest) = body.strip_prefix("query").or_else(|| body.strip_prefix("subscription")) {
        (false, rest)
    } else {
        return None;
    };
    if !rest.starts_with(|c: char| c.is_whitespace() || c == '{' || c == '(') {
        return None;
    }
    let word = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut names = Vec::new();
    let operation = word(rest.trim_start());
    if !operation.is_empty() {
        names.push(operation);
    }
    if let Some((_, selection)) = rest.split_once('{') {
        let field = word(selection.trim_start());
        if !field.is_empty() {
            names.push(field);
        }
    }
    Some((mutation, names))
}

/// What a retry (or a repeat) call replays — the expression it is applied to and the pipe
/// steps before it (`x.pipe(Effect.flatMap(…), Effect.retry(…))` replays the `flatMap` too) —
/// and the unit name it carries when it is an `Effect.fn` pipeable. `policy_index` says which
/// argument is the policy (1: data-first).
pub fn retried_target<'t>(
    source: &[u8],
    call: Node<'t>,
    args: &[Node<'t>],
    policy_index: Option<usize>,
    lineage: &Lineage<'_, 't>,
) -> Option<(Vec<Node<'t>>, Option<String>)> {
    if policy_index == Some(1) && args.len() >= 2 {
        return Some((vec![args[0]], None));
    }
    let arguments = lineage.parent(call).filter(|p| p.kind_str() == "arguments")?;
    let outer = lineage
        .parent(arguments)
        .filter(|p| p.kind_str() == "call_expression")?;
    let callee = outer.field("function")?;
    // The pipe steps written before the call.
    let before = |skip_first: bool| -> Vec<Node<'t>> {
        let mut cursor = arguments.walk();
        arguments
            .named_children(&mut cursor)
            .filter(|a| a.kind_str() != "comment")
            .skip(usize::from(skip_first))
            .take_while(|a| *a != call)
            .collect()
    };
    match callee.kind_str() {
        // x.pipe(…, Effect.retry(…))
        "member_expression" if callee.field("property").is_some_and(|p| text(source, p) == "pipe") => {
            let mut roots = vec![callee.field("object")?];
            roots.extend(before(false));
            Some((roots, None))
        }
        // pipe(x, …, Effect.retry(…))
        "identifier" if text(source, callee) == "pipe" => {
            let first = arguments.named_child(0)?;
            if first == call {
                return None;
            }
            let mut roots = vec![first];
            roots.extend(before(true));
            Some((roots, None))
        }
        // Effect.fn("name")(function* () {…}, …, Effect.retry(…))
        "call_expression" => {
            let inner = callee.field("function")?;
            let inner_text = text(source, inner);
            if !(inner_text.ends_with(".fn") || inner_text == "fn" || inner_text.ends_with(".fnUntraced")) {
                return None;
            }
            let name = callee
                .field("arguments")
                .and_then(|a| a.named_child(0))
                .filter(|n| n.kind_str() == "string")
                .map(|n| text(source, n).trim_matches(['"', '\'', '`']).to_string());
            let body = arguments.named_child(0)?;
            if body == call {
                return None;
            }
            let mut roots = vec![body];
            roots.extend(before(true));
            Some((roots, name))
        }
        _ => None,
    }
}

/// Every named function-like value of the file: what calls inside a retried unit can reach.
/// With `top_level`, only the module's own declarations (a file that retries nothing is read
/// for the helpers other files import).
pub fn named_units(source: &[u8], root: Node, bindings: &Bindings, top_level: bool) -> Vec<Unit> {
    named_units_with(source, Lineage::root(root), bindings, top_level, false)
}

/// [`named_units`] of the subtree at the end of `lineage`'s path, with the services bound
/// around each unit when `enclosing` (a service's methods).
pub(super) fn named_units_with<'t>(
    source: &[u8],
    mut lineage: Lineage<'_, 't>,
    bindings: &Bindings,
    top_level: bool,
    enclosing: bool,
) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    let mut names: std::collections::HashSet<String> = std::collections::HashSet::new();
    let Some(root) = lineage.top() else {
        return units;
    };
    let mut blocks = EnclosingServices::default();
    if enclosing {
        blocks.visit_all(lineage.path());
    }
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if enclosing {
            blocks.visit(lineage.path());
        }
        let named = match node.kind_str() {
            "variable_declarator" => node
                .field("name")
                .filter(|n| n.kind_str() == "identifier")
                .zip(node.field("value").filter(|v| is_unit_value(source, *v))),
            "pair" if !top_level => node
                .field("key")
                .filter(|k| k.kind_str() == "property_identifier")
                .zip(node.field("value").filter(|v| is_unit_value(source, *v))),
            "function_declaration" | "generator_function_declaration" => node.field("name").zip(node.field("body")),
            "method_definition" if !top_level => node.field("name").zip(node.field("body")),
            _ => None,
        };
        if let Some((name, body)) = named {
            let name = text(source, name).to_string();
            if !names.contains(&name) {
                let around = enclosing.then(|| blocks.around(source, body));
                let around = around.as_deref().map(Vec::as_slice);
                units.push(unit(
                    source,
                    &[body],
                    Some(name.clone()),
                    bindings,
                    lineage.path(),
                    around,
                ));
                names.insert(name);
                if units.len() >= MAX_UNITS {
                    break;
                }
            }
        }
        // At the top level, only declarations (and `export` around them) are entered.
        let enter = if top_level {
            matches!(
                node.kind_str(),
                "program" | "export_statement" | "lexical_declaration" | "variable_declaration"
            )
        } else {
            node.kind_str() != "comment" && node.kind_str() != "string"
        };
        if enter && lineage.first_child(&mut cursor) {
            continue;
        }
        if !lineage.step_past(&mut cursor, root) {
            break;
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::SqlClass;

    #[test]
    fn graphql_documents_by_their_operation() {
        assert_eq!(
            graphql_names("`\n  mutation CreateIssue($t: String!) {\n issueCreate(input: {}) { ok } }`"),
            Some((true, vec!["CreateIssue".to_string(), "issueCreate".to_string()]))
        );
        assert_eq!(
            graphql_names("gql`query Issue { issue { id } }`").map(|(m, _)| m),
            Some(false)
        );
        assert_eq!(graphql_names("\"mutations are fun\""), None);
    }

    #[test]
    fn classifies_sql_by_what_a_replay_does() {
        assert_eq!(
            classify_sql("`INSERT INTO orders (id) VALUES (${id})`"),
            SqlClass::Insert
        );
        assert_eq!(
            classify_sql("`INSERT INTO orders (id) VALUES (${id}) ON CONFLICT (id) DO NOTHING`"),
            SqlClass::Upsert
        );
        assert_eq!(
            classify_sql("`\n  update rules set active = 1 where id = ${id}`"),
            SqlClass::Update
        );
        assert_eq!(classify_sql("`SELECT * FROM orders`"), SqlClass::Select);
        assert_eq!(
            classify_sql("`DELETE FROM sessions WHERE expires_at < now()`"),
            SqlClass::Delete
        );
    }
}
