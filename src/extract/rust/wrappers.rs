//! The project's retry builders (issue 25): a free function returning a builder struct
//! (`pub fn with_retry(name: &str) -> Attempts`), whose methods set its fields (an attempt
//! count, a predicate of the result) and whose terminal method (`go(f)`) hands those fields to
//! the library's retry — `Retry::spawn(strategy(limit, ceiling), …)` with a strategy made by
//! a factory of the file, there or in a function of the file the terminal calls. The builder
//! is summarised once ([`RustWrapper`]: which method sets which field, which field feeds which
//! parameter of the factory, the factory's strategy with and without a count), and every call
//! chain of a function of the crate is kept with its methods' arguments
//! ([`RustWrapperCall`]). The index makes each chain that ends in the terminal method a retry
//! site of its own (`Index::expand_rust_helpers`): the factory evaluated with the count given
//! (`.attempts(5)`), or without one (`.unbounded()`), the predicate given (or the builder's
//! default: every error when the file answers it with `result.is_err()`), and the operation
//! as the unit. A count the analysis cannot know (a configuration field) leaves the schedule
//! unknown; the predicate is still judged.

use super::*;
use crate::facts::{
    RustWrapper, RustWrapperCall, RustWrapperMethod, RustWrapperParam, RustWrapperSchedule, RustWrapperStep,
};

/// Call chains kept per file, at most: a bound for generated code.
const MAX_WRAPPER_CALLS: usize = 256;
/// Builder types followed from the entry function's (the types its methods return).
const MAX_BUILDER_TYPES: usize = 4;
/// Methods of a chain, at most.
const MAX_STEPS: usize = 12;
/// The characters of an argument written in messages (a longer one is `…`).
const MAX_ARG_TEXT: usize = 40;

/// The file's retry builders: summarised after the walk, from its items and retry sites.
pub(super) fn summarise_wrappers(rx: &Rx, facts: &mut FileFacts) {
    let sites: Vec<Span> = facts
        .retry_sites
        .iter()
        .filter(|s| matches!(s.library, Library::TokioRetry | Library::TokioRetry2))
        .map(|s| s.span)
        .collect();
    if sites.is_empty() {
        return;
    }
    let mut caller_decides = Vec::new();
    for entry in rx.items.iter().filter(|i| !i.associated && i.body.is_some()) {
        if let Some((wrapper, site)) = summarise(rx, entry, &sites) {
            caller_decides.push((site, wrapper.schedule.is_some()));
            facts.rust_wrappers.push(wrapper);
        }
    }
    // The builder's retry applies the caller's predicate (or its default) inside its
    // operation, and runs the strategy the caller's count makes: both are judged at each
    // call, not here as a retry of every error with whichever count a field was last given.
    for site in facts.retry_sites.iter_mut() {
        let Some((_, scheduled)) = caller_decides.iter().find(|(s, _)| *s == site.span) else {
            continue;
        };
        if site.predicate == Predicate::None {
            site.predicate = Predicate::Unknown;
        }
        if *scheduled {
            site.policy = PolicyArg::Unknown;
        }
    }
}

/// The type a function returns, by its last segment (`RetryConfig<I, E>`: `RetryConfig`).
fn returned_type(rx: &Rx, function: Node) -> Option<String> {
    let ty = function.field("return_type")?;
    let ty = match ty.kind_str() {
        "generic_type" => ty.field("type")?,
        _ => ty,
    };
    matches!(ty.kind_str(), "type_identifier" | "scoped_type_identifier")
        .then(|| rx.segments(ty).last().cloned())
        .flatten()
}

fn summarise<'t>(rx: &Rx<'t>, entry: &Item<'t>, sites: &[Span]) -> Option<(RustWrapper, Span)> {
    let builder = returned_type(rx, entry.node)?;
    let literal = entry.value.filter(|v| v.kind_str() == "struct_expression")?;
    let named = literal.field("name").and_then(|n| rx.segments(n).last().cloned());
    if named.as_deref() != Some(builder.as_str()) {
        return None;
    }
    // The fields the entry sets, with their values where known.
    let mut defaults = Vec::new();
    let mut default_nodes: Vec<(String, Node<'t>)> = Vec::new();
    if let Some(body) = literal.field("body") {
        for field in named_children(body) {
            if field.kind_str() != "field_initializer" {
                continue;
            }
            let (Some(name), Some(value)) = (field.field("field"), field.field("value")) else {
                continue;
            };
            let arg = rx.arg(rx.eval(value, entry.scope(), None, 0));
            defaults.push((rx.text_of(name).to_string(), arg));
            default_nodes.push((rx.text_of(name).to_string(), value));
        }
    }
    // The builder's types: its own and those its methods return.
    let mut types = vec![builder];
    let mut at = 0;
    while at < types.len() && types.len() <= MAX_BUILDER_TYPES {
        let ty = types[at].clone();
        for item in methods_of(rx, entry, &ty) {
            if let Some(next) = returned_type(rx, item.node) {
                if next != "Self" && !types.contains(&next) && types.len() < MAX_BUILDER_TYPES {
                    types.push(next);
                }
            }
        }
        at += 1;
    }
    let mut methods = Vec::new();
    let mut predicate_field: Option<String> = None;
    let mut schedule = None;
    let mut site = None;
    for ty in &types {
        for item in methods_of(rx, entry, ty) {
            let Some(mut method) = method_roles(rx, item) else {
                continue;
            };
            // A parameter bound as a predicate of the result (`P: Fn(&Result<…>) -> bool`).
            if predicate_field.is_none() && method.predicate.is_some() {
                predicate_field = method.sets.first().map(|(f, _)| f.clone());
            }
            if method.run.is_some() {
                match retry_reached(rx, item, sites) {
                    Some((found, strategy)) => {
                        site = Some(found);
                        if schedule.is_none() {
                            schedule = strategy;
                        }
                    }
                    // A closure given to a method that does not run the retry, bound as
                    // no predicate: told of something (`on_retry(|e| …)`), deciding nothing.
                    None => {
                        method.run = None;
                        method.callback = true;
                    }
                }
            }
            // A method that neither continues the builder nor runs it is not part of it.
            let continues = returned_type(rx, item.node).is_some_and(|t| t == "Self" || types.contains(&t));
            if continues || method.run.is_some() {
                methods.push(method);
            }
        }
    }
    let site = site?;
    let default_every_error = predicate_field
        .as_ref()
        .and_then(|field| default_nodes.iter().find(|(f, _)| f == field))
        .is_some_and(|(_, value)| answers_every_error(rx, *value));
    Some((
        RustWrapper {
            name: entry.name.clone(),
            module: entry.module.clone(),
            name_span: entry.name_span,
            arity: entry.params.len(),
            library: Library::TokioRetry,
            methods,
            defaults,
            schedule,
            predicate_field,
            default_every_error,
        },
        site,
    ))
}

/// The methods of `impl ty` in the entry's module.
fn methods_of<'a, 't>(rx: &'a Rx<'t>, entry: &Item<'t>, ty: &str) -> impl Iterator<Item = &'a Item<'t>> {
    let scope = entry.module.clone();
    let ty = ty.to_string();
    rx.items.iter().filter(move |i| {
        i.associated
            && i.body.is_some()
            && i.module.len() == scope.len() + 1
            && i.module.starts_with(&scope)
            && i.module.last() == Some(&ty)
            && has_self(i.node)
    })
}

fn has_self(function: Node) -> bool {
    function
        .field("parameters")
        .is_some_and(|p| named_children(p).iter().any(|c| c.kind_str() == "self_parameter"))
}

/// What a method does to the builder: the fields it sets (from which parameter), whether a
/// parameter is a predicate of the result or the operation to run.
fn method_roles<'t>(rx: &Rx<'t>, item: &Item<'t>) -> Option<RustWrapperMethod> {
    let body = item.body?;
    let params: Vec<Node<'t>> = item
        .node
        .field("parameters")
        .map(|p| {
            named_children(p)
                .into_iter()
                .filter(|c| c.kind_str() == "parameter")
                .collect()
        })
        .unwrap_or_default();
    let mut method = RustWrapperMethod {
        name: item.name.clone(),
        arity: params.len(),
        sets: Vec::new(),
        predicate: None,
        run: None,
        callback: false,
        opaque: Vec::new(),
    };
    for (i, param) in params.iter().enumerate() {
        match callable(rx, item.node, *param) {
            Some(true) => method.predicate = Some(i),
            Some(false) if method.run.is_none() => method.run = Some(i),
            _ => {}
        }
    }
    // `self.field = value;` and `self.field.set(value);`.
    let mut cursor = body.walk();
    let mut steps = 0usize;
    loop {
        let node = cursor.node();
        steps += 1;
        if steps > 5_000 {
            break;
        }
        let (field, value): (Option<Node<'t>>, Vec<Node<'t>>) = match node.kind_str() {
            "assignment_expression" => (
                node.field("left").filter(|l| self_field(*l)),
                node.field("right").into_iter().collect(),
            ),
            "call_expression" => match node.field("function").filter(|f| f.kind_str() == "field_expression") {
                Some(function) => (function.field("value").filter(|v| self_field(*v)), rx.args(node)),
                None => (None, Vec::new()),
            },
            _ => (None, Vec::new()),
        };
        if let Some(name) = field.and_then(|f| f.field("field")) {
            let name = rx.text_of(name).to_string();
            let given = item
                .params
                .iter()
                .position(|p| value.iter().any(|v| mentions(rx, *v, p)));
            let literal = value.iter().any(|v| has_number(*v));
            match (given, literal) {
                (Some(i), _) => method.sets.push((name, Some(i))),
                (None, false) => method.sets.push((name, None)),
                (None, true) => method.opaque.push(name),
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, body) {
            break;
        }
    }
    Some(method)
}

/// `self.field` (not `self.field.more`).
fn self_field(node: Node) -> bool {
    node.kind_str() == "field_expression" && node.field("value").is_some_and(|v| v.kind_str() == "self")
}

/// Whether a parameter is a closure type: `Some(true)` for a predicate (`Fn(…) -> bool`),
/// `Some(false)` for an operation (`FnMut() -> Fut`), by its type or its generic's bounds.
fn callable<'t>(rx: &Rx<'t>, function: Node<'t>, param: Node<'t>) -> Option<bool> {
    let ty = param.field("type")?;
    let read = |text: &str| -> Option<bool> {
        let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let at = ["Fn(", "FnMut(", "FnOnce("].iter().filter_map(|f| text.find(f)).min()?;
        let rest = &text[at..];
        // The parenthesis closing the arguments (`Fn(&Result<u8, ()>)`: not the unit's).
        let open = rest.find('(')?;
        let mut depth = 0usize;
        let close = rest[open..].char_indices().find_map(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(open + i);
                    }
                }
                _ => {}
            }
            None
        })?;
        Some(rest[close..].starts_with(")->bool"))
    };
    match ty.kind_str() {
        "abstract_type" | "dynamic_type" => read(rx.text_of(ty)),
        "type_identifier" => {
            let name = rx.text_of(ty);
            // `<P: Fn(&Result<I, E>) -> bool>` or `where P: Fn(…) -> bool`.
            let mut bounds = Vec::new();
            for clause in ["type_parameters", "where_clause"] {
                let found = function
                    .field(clause)
                    .or_else(|| named_children(function).into_iter().find(|c| c.kind_str() == clause));
                if let Some(clause) = found {
                    for child in named_children(clause) {
                        let text = rx.text_of(child);
                        let head = text.split(':').next().unwrap_or("").trim();
                        if head == name {
                            bounds.push(text);
                        }
                    }
                }
            }
            bounds.into_iter().find_map(read)
        }
        _ => None,
    }
}

fn mentions(rx: &Rx, node: Node, name: &str) -> bool {
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        if n.kind_str() == "identifier" && rx.text_of(n) == name {
            return true;
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, node) {
            return false;
        }
    }
}

fn has_number(node: Node) -> bool {
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        if matches!(n.kind_str(), "integer_literal" | "float_literal") {
            return true;
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, node) {
            return false;
        }
    }
}

/// The retry site a terminal method reaches, in its body or in a function of the file it
/// calls (one call deep), and the strategy it is given as the builder's fields make it.
fn retry_reached<'t>(rx: &Rx<'t>, method: &Item<'t>, sites: &[Span]) -> Option<(Span, Option<RustWrapperSchedule>)> {
    let body = method.body?;
    let inside =
        |node: Node, site: &Span| node.start_byte() <= site.start as usize && site.end as usize <= node.end_byte();
    if let Some(site) = sites.iter().find(|s| inside(body, s)) {
        let strategy = strategy_of(rx, *site).and_then(|(call, factory)| {
            let sources = call_args(rx, call)
                .into_iter()
                .map(|a| source_in(rx, a, method, None))
                .collect();
            schedule(rx, factory, sources)
        });
        return Some((*site, strategy));
    }
    // A function of the file the method calls, whose body holds the retry.
    let mut cursor = body.walk();
    loop {
        let node = cursor.node();
        if node.kind_str() == "call_expression" {
            let callee = node
                .field("function")
                .filter(|f| f.kind_str() == "identifier")
                .and_then(|f| rx.item(method.scope(), rx.text_of(f)));
            if let Some(callee) = callee.filter(|c| c.body.is_some()) {
                let callee_body = callee.body?;
                if let Some(site) = sites.iter().find(|s| inside(callee_body, s)) {
                    let strategy = strategy_of(rx, *site).and_then(|(call, factory)| {
                        let sources = call_args(rx, call)
                            .into_iter()
                            .map(|a| source_in(rx, a, callee, Some((method, node))))
                            .collect();
                        schedule(rx, factory, sources)
                    });
                    return Some((*site, strategy));
                }
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, body) {
            return None;
        }
    }
}

fn call_args<'t>(rx: &Rx<'t>, call: Node<'t>) -> Vec<Node<'t>> {
    rx.args(call)
}

/// The retry call at `site`, its strategy argument when that is a call of a factory of the
/// file (`retry_strategy(limit_opt, max_delay)`), and the factory.
fn strategy_of<'a, 't>(rx: &'a Rx<'t>, site: Span) -> Option<(Node<'t>, &'a Item<'t>)> {
    let root = rx.parents.root();
    let node = root.descendant_for_byte_range(site.start as usize, site.end as usize)?;
    let call = std::iter::once(node)
        .chain(rx.parents.ancestors(node))
        .find(|n| n.kind_str() == "call_expression" && span(*n) == site)?;
    let strategy = *rx.args(call).first()?;
    if strategy.kind_str() != "call_expression" {
        return None;
    }
    let function = strategy.field("function").filter(|f| f.kind_str() == "identifier")?;
    let factory = rx
        .items
        .iter()
        .find(|i| !i.associated && i.body.is_some() && i.name == rx.text_of(function))?;
    (factory.params.len() == rx.args(strategy).len()).then_some((strategy, factory))
}

/// What an argument of the factory's call is, written in `function`: a field of the
/// builder (`self.inner.max_delay`, a `let` of one, or a parameter of `function` that
/// `caller`'s call of it gives one), or a value.
fn source_in<'t>(
    rx: &Rx<'t>,
    arg: Node<'t>,
    function: &Item<'t>,
    caller: Option<(&Item<'t>, Node<'t>)>,
) -> RustWrapperParam {
    if let Some(field) = builder_field(rx, arg) {
        return RustWrapperParam::Field(rx.text_of(field).to_string());
    }
    if arg.kind_str() == "identifier" {
        let name = rx.text_of(arg);
        match rx.local(arg, name) {
            Local::Let { value, .. } => {
                if let Some(field) = builder_field_within(rx, value) {
                    return RustWrapperParam::Field(rx.text_of(field).to_string());
                }
            }
            Local::Param => {
                if let (Some(index), Some((method, call))) = (function.params.iter().position(|p| p == name), caller) {
                    if let Some(given) = rx.args(call).get(index) {
                        return source_in(rx, *given, method, None);
                    }
                }
                return RustWrapperParam::Value(Arg::Unknown);
            }
            Local::None => {}
        }
    }
    RustWrapperParam::Value(rx.arg(rx.eval(arg, function.scope(), None, 0)))
}

/// `self.inner.limit`, `self.limit`: the last field of a chain of fields from `self` (not a
/// method called on one: `self.limit.unwrap` of `self.limit.unwrap(…)` is `limit`'s).
fn builder_field<'t>(rx: &Rx<'t>, node: Node<'t>) -> Option<Node<'t>> {
    if node.kind_str() != "field_expression" {
        return None;
    }
    let method = rx
        .parents
        .of(node)
        .is_some_and(|p| p.kind_str() == "call_expression" && p.field("function") == Some(node));
    if method {
        return builder_field(rx, node.field("value")?);
    }
    let mut value = node.field("value")?;
    while value.kind_str() == "field_expression" {
        value = value.field("value")?;
    }
    (value.kind_str() == "self").then(|| node.field("field")).flatten()
}

/// The outermost field chain from `self` inside `node` (`self.inner.limit.unwrap(…)`:
/// `limit`), when there is one only.
fn builder_field_within<'t>(rx: &Rx<'t>, node: Node<'t>) -> Option<Node<'t>> {
    let mut found = None;
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        if let Some(field) = builder_field(rx, n) {
            if found.is_some() {
                return None;
            }
            found = Some(field);
            // Not its inner fields.
            if !crate::extract::step_past(&mut cursor, node) {
                break;
            }
            continue;
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, node) {
            break;
        }
    }
    found
}

/// `Box::new(x)`, `Box::pin(x)`, `(x)`, `{ x }`: `x`.
fn unboxed<'t>(rx: &Rx<'t>, mut node: Node<'t>) -> Node<'t> {
    for _ in 0..4 {
        node = match node.kind_str() {
            "parenthesized_expression" => match named_children(node).first() {
                Some(inner) => *inner,
                None => break,
            },
            "block" => match tail(node) {
                Some(inner) => inner,
                None => break,
            },
            "call_expression" => {
                let boxed = node
                    .field("function")
                    .is_some_and(|f| matches!(rx.text_of(f), "Box::new" | "Box::pin"));
                match (boxed, rx.args(node).first()) {
                    (true, Some(inner)) => *inner,
                    _ => break,
                }
            }
            _ => break,
        };
    }
    node
}

/// The factory's strategy with its parameters standing for the builder's values: its tail
/// is `match limit { Some(n) => Box::new(backoff.take(n …)), None => Box::new(backoff) }`, or
/// a strategy with `.take(limit …)`.
fn schedule<'t>(rx: &Rx<'t>, factory: &Item<'t>, params: Vec<RustWrapperParam>) -> Option<RustWrapperSchedule> {
    // A block's closing `match` is a statement to the parser: its value all the same.
    let value = factory.value.or_else(|| {
        let last = *named_children(factory.body?).last()?;
        let inner = *named_children(last).first()?;
        (last.kind_str() == "expression_statement"
            && inner.kind_str() == "match_expression"
            && !rx.text_of(last).trim_end().ends_with(';'))
        .then_some(inner)
    })?;
    let env: HashMap<String, Val> = factory
        .params
        .iter()
        .enumerate()
        .map(|(i, name)| (name.clone(), Val::Arg(Arg::Param(i))))
        .collect();
    let taken_of = |node: Node<'t>, count: &str, env: &HashMap<String, Val>| -> Option<(RustChain, f64)> {
        let node = unboxed(rx, node);
        let function = node.field("function").filter(|f| f.kind_str() == "field_expression")?;
        if function.field("field").map(|f| rx.text_of(f)) != Some("take") {
            return None;
        }
        let offset = count_offset(rx, *rx.args(node).first()?, count)?;
        let receiver = function.field("value")?;
        let mut chain = rx.chain(rx.eval(receiver, factory.scope(), Some(env), 0))?;
        if !matches!(chain.base, RustBase::New { .. } | RustBase::Deferred { .. }) {
            return None;
        }
        chain.ops.push(RustOp {
            method: "take".into(),
            args: Vec::new(),
            span: span(node),
        });
        Some((chain, offset))
    };
    let (limit, optional, taken, offset, untaken) = if value.kind_str() == "match_expression" {
        let scrutinee = value.field("value")?;
        let limit = factory.params.iter().position(|p| p == rx.text_of(scrutinee))?;
        let mut taken = None;
        let mut untaken = None;
        for arm in value.field("body").map(named_children).unwrap_or_default() {
            if arm.kind_str() != "match_arm" {
                continue;
            }
            let (Some(pattern), Some(result)) = (arm.field("pattern"), arm.field("value")) else {
                continue;
            };
            let pattern_text = rx.text_of(pattern).trim();
            if pattern_text == "None" {
                untaken = rx
                    .chain(rx.eval(unboxed(rx, result), factory.scope(), Some(&env), 0))
                    .filter(|c| matches!(c.base, RustBase::New { .. } | RustBase::Deferred { .. }));
            } else if let Some(inner) = pattern_text
                .strip_prefix("Some(")
                .and_then(|p| p.strip_suffix(')'))
                .map(str::trim)
            {
                let mut arm_env = env.clone();
                arm_env.insert(inner.to_string(), Val::Arg(Arg::Param(limit)));
                taken = taken_of(result, inner, &arm_env);
            }
        }
        let (taken, offset) = taken?;
        (limit, true, taken, offset, Some(untaken?))
    } else {
        let (limit, found) = factory
            .params
            .iter()
            .enumerate()
            .find_map(|(i, p)| taken_of(value, p, &env).map(|t| (i, t)))?;
        (limit, false, found.0, found.1, None)
    };
    let mut taken = taken;
    if let Some(op) = taken.ops.last_mut() {
        op.args = vec![Arg::Param(limit)];
    }
    Some(RustWrapperSchedule {
        factory: factory.name.clone(),
        params,
        limit,
        offset,
        optional,
        taken,
        untaken,
    })
}

/// How a `.take(…)` argument is made from the count `name`: `n` (0), `n - 1` and
/// `n.saturating_sub(1)` (−1), `n + 1` (+1).
fn count_offset<'t>(rx: &Rx<'t>, arg: Node<'t>, name: &str) -> Option<f64> {
    let number = |n: Node| super::builders::parse_number(rx.text_of(n));
    match arg.kind_str() {
        "identifier" if rx.text_of(arg) == name => Some(0.0),
        "binary_expression" => {
            let (left, right, op) = (arg.field("left")?, arg.field("right")?, arg.field("operator")?);
            if rx.text_of(left) != name {
                return None;
            }
            match rx.text_of(op) {
                "-" => Some(-number(right)?),
                "+" => Some(number(right)?),
                _ => None,
            }
        }
        "call_expression" => {
            let function = arg.field("function").filter(|f| f.kind_str() == "field_expression")?;
            let receiver = function.field("value")?;
            let method = function.field("field").map(|f| rx.text_of(f))?;
            let by = number(*rx.args(arg).first()?)?;
            (rx.text_of(receiver) == name)
                .then_some(match method {
                    "saturating_sub" | "checked_sub" => Some(-by),
                    "saturating_add" | "checked_add" => Some(by),
                    _ => None,
                })
                .flatten()
        }
        _ => None,
    }
}

/// Whether the entry's default for the predicate field is a variant the file answers with
/// `result.is_err()` (or `true`): `RetryIf::Error` where `match self { RetryIf::Error =>
/// result.is_err(), … }`.
fn answers_every_error(rx: &Rx, value: Node) -> bool {
    if !matches!(value.kind_str(), "scoped_identifier" | "identifier") {
        return false;
    }
    let segments = rx.segments(value);
    let Some(variant) = segments.last() else { return false };
    let root = rx.parents.root();
    let mut cursor = root.walk();
    let mut steps = 0usize;
    loop {
        let node = cursor.node();
        steps += 1;
        if steps > 200_000 {
            return false;
        }
        if node.kind_str() == "match_arm" {
            let pattern = node.field("pattern").and_then(|p| named_children(p).first().copied());
            let same = pattern.is_some_and(|p| {
                matches!(p.kind_str(), "scoped_identifier" | "identifier") && {
                    let written = rx.segments(p);
                    written.last() == Some(variant)
                        && (written.len() == 1
                            || segments.len() == 1
                            || written[written.len() - 2] == segments[segments.len() - 2]
                            || written[written.len() - 2] == "Self")
                }
            });
            if same {
                if let Some(answer) = node.field("value") {
                    return every_error_answer(rx, answer);
                }
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, root) {
            return false;
        }
    }
}

/// `result.is_err()`, `!result.is_ok()`, `true`.
fn every_error_answer(rx: &Rx, node: Node) -> bool {
    let text: String = rx.text_of(node).chars().filter(|c| !c.is_whitespace()).collect();
    if text == "true" {
        return true;
    }
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    text.strip_suffix(".is_err()").is_some_and(ident)
        || text
            .strip_prefix('!')
            .and_then(|t| t.strip_suffix(".is_ok()"))
            .is_some_and(ident)
}

impl<'t> Walk<'_, 't, '_> {
    /// Keeps a call chain `name(args).m1(…)…` of a function of the crate, whose methods give
    /// an operation somewhere (`.go(f)`), in case the function is a retry builder. Only the
    /// chain's outermost call is kept, with every method: `node` is that call (not the
    /// receiver of a further method, which the walk tells).
    pub(super) fn wrapper_call(&mut self, node: Node<'t>) {
        let rx = self.rx;
        if self.facts.rust_wrapper_calls.len() >= MAX_WRAPPER_CALLS || node.has_error() {
            return;
        }
        let mut calls = Vec::new();
        let mut current = node;
        let root = loop {
            if current.kind_str() != "call_expression" || calls.len() > MAX_STEPS {
                return;
            }
            let Some(function) = current.field("function") else {
                return;
            };
            match function.kind_str() {
                "field_expression" => {
                    calls.push(current);
                    match function.field("value") {
                        Some(receiver) => current = receiver,
                        None => return,
                    }
                }
                "identifier" | "scoped_identifier" => break current,
                _ => return,
            }
        };
        if calls.is_empty() {
            return;
        }
        calls.reverse();
        let Some(function) = root.field("function") else { return };
        let segments = rx.segments(function);
        if segments
            .iter()
            .any(|s| s.starts_with(|c: char| c.is_ascii_uppercase()) || s.is_empty())
        {
            return;
        }
        let path = rx.expand(segments);
        let Some(first) = path.first() else { return };
        if EXTERN_ROOTS.contains(&first.as_str()) {
            return;
        }
        let operation = |a: &Node<'t>| matches!(strip_ref(rx, *a).kind_str(), "closure_expression" | "async_block");
        if !calls.iter().any(|c| rx.args(*c).iter().any(operation)) {
            return;
        }
        let path = RustPath {
            segments: path,
            module: self.module.clone(),
            span: span(function),
        };
        if self.unread {
            let call = RustWrapperCall::unread(
                path,
                rx.args(root).len(),
                span(function),
                collapse(rx.text_of(function)),
            );
            self.facts.rust_wrapper_calls.push(call);
            return;
        }
        let start = root.start_byte();
        let steps = calls
            .iter()
            .map(|call| {
                let method = call
                    .field("function")
                    .and_then(|f| f.field("field"))
                    .map(|f| rx.text_of(f).to_string())
                    .unwrap_or_default();
                let args = rx.args(*call);
                let values = args
                    .iter()
                    .map(|a| rx.arg(rx.eval(*a, &self.module, None, 0)))
                    .collect();
                let first = args.first().map(|a| strip_ref(rx, *a));
                let predicate = first.map_or(Predicate::Unknown, |a| result_predicate(rx, a));
                let unit = first
                    .filter(|a| matches!(a.kind_str(), "closure_expression" | "async_block" | "identifier"))
                    .and_then(|a| rx.unit_of(a, &self.module));
                let reconnects = unit.as_ref().is_some_and(|u| super::sites::reconnects(rx, u));
                let classifies = first.is_some_and(|a| turns_errors_into_success(rx, a));
                // `.attempts(5)`; a closure, or a long argument, is `…`.
                let written: Vec<String> = args
                    .iter()
                    .map(|a| {
                        let text = collapse(rx.text_of(*a));
                        let closure = matches!(strip_ref(rx, *a).kind_str(), "closure_expression" | "async_block");
                        if closure || text.chars().count() > MAX_ARG_TEXT {
                            "…".to_string()
                        } else {
                            text
                        }
                    })
                    .collect();
                let text = format!(".{method}({})", written.join(", "));
                let closure = first.is_some_and(|a| matches!(a.kind_str(), "closure_expression" | "async_block"));
                RustWrapperStep {
                    closure,
                    method,
                    span: Span::new(start, call.end_byte()),
                    text,
                    values,
                    predicate,
                    unit,
                    classifies,
                    reconnects,
                }
            })
            .collect();
        self.facts.rust_wrapper_calls.push(RustWrapperCall {
            path,
            arity: rx.args(root).len(),
            callee_span: span(function),
            callee: collapse(rx.text_of(function)),
            steps,
            containers: self.containers.clone(),
            unread: false,
        });
    }
}

fn strip_ref<'t>(_rx: &Rx<'t>, mut node: Node<'t>) -> Node<'t> {
    while matches!(node.kind_str(), "reference_expression" | "parenthesized_expression") {
        node = match node.kind_str() {
            "reference_expression" => match node.field("value") {
                Some(v) => v,
                None => break,
            },
            _ => match named_children(node).first() {
                Some(v) => *v,
                None => break,
            },
        };
    }
    node
}

/// A predicate of the result given to the builder: one that only asks whether it is an error
/// (`|result| result.is_err()`, `|_| true`) admits every error (none); another is a filter.
fn result_predicate<'t>(rx: &Rx<'t>, node: Node<'t>) -> Predicate {
    if node.kind_str() == "closure_expression" {
        if let Some(body) = node.field("body") {
            let value = match body.kind_str() {
                "block" => tail(body).filter(|_| named_children(body).len() == 1).unwrap_or(body),
                _ => body,
            };
            if every_error_answer(rx, value) {
                return Predicate::None;
            }
        }
    }
    match node.kind_str() {
        "closure_expression" | "identifier" | "scoped_identifier" | "field_expression" => Predicate::Filter {
            span: span(node),
            mentions: super::sites::predicate_mentions(rx, node),
            always: false,
        },
        _ => Predicate::Unknown,
    }
}

/// Whether an operation turns some of the errors it catches into a success: an `Err(…) =>`
/// arm whose value is not an `Err(…)` (nor a `return Err(…)`, nor a panic), as
/// `Err(err) => interpret_call_error(err)` that answers a revert with `Ok(Retval::Null)`.
fn turns_errors_into_success<'t>(rx: &Rx<'t>, node: Node<'t>) -> bool {
    if !matches!(node.kind_str(), "closure_expression" | "async_block") {
        return false;
    }
    let mut cursor = node.walk();
    let mut steps = 0usize;
    loop {
        let n = cursor.node();
        steps += 1;
        if steps > 20_000 {
            return false;
        }
        if n.kind_str() == "match_arm" {
            let caught = n
                .field("pattern")
                .is_some_and(|p| rx.text_of(p).trim_start().starts_with("Err("));
            let value = n.field("value").map(|v| {
                let v = match v.kind_str() {
                    "block" => tail(v).unwrap_or(v),
                    _ => v,
                };
                let text: String = rx.text_of(v).chars().filter(|c| !c.is_whitespace()).collect();
                text.trim_start_matches("return").to_string()
            });
            if caught
                && value.is_some_and(|v| {
                    !(v.starts_with("Err(")
                        || v.starts_with("Err::")
                        || v.starts_with("panic!")
                        || v.starts_with("unreachable!"))
                })
            {
                return true;
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, node) {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::facts::{FileFacts, Predicate, RustWrapperParam};
    use crate::schedule::rust::Arg;
    use crate::source::Language;

    fn facts(text: &str) -> FileFacts {
        crate::extract::extract_file(Language::Rust, text.as_bytes())
    }

    const BUILDER: &str = r#"
use std::time::Duration;
use tokio_retry::strategy::{jitter, ExponentialBackoff};
use tokio_retry::Retry;

pub struct Config { limit: Option<usize>, cap: Duration, when: When }
enum When { Any, Test(Box<dyn Fn(&Result<u8, ()>) -> bool>) }
impl When {
    fn check(&self, r: &Result<u8, ()>) -> bool {
        match self { When::Any => r.is_err(), When::Test(t) => t(r) }
    }
}
pub fn retry(name: &str) -> Config { Config { limit: None, cap: Duration::from_secs(8), when: When::Any } }
impl Config {
    pub fn when<P>(mut self, p: P) -> Self where P: Fn(&Result<u8, ()>) -> bool + 'static { self.when = When::Test(Box::new(p)); self }
    pub fn limit(mut self, n: usize) -> Self { self.limit = Some(n); self }
    pub fn no_limit(mut self) -> Self { self.limit = None; self }
    pub async fn run<F, Fut>(self, f: F) -> Result<u8, ()> where F: FnMut() -> Fut, Fut: std::future::Future<Output = Result<u8, ()>> {
        let limit = self.limit;
        let cap = self.cap;
        Retry::spawn(strategy(limit, cap), f).await
    }
}
fn strategy(limit: Option<usize>, cap: Duration) -> Box<dyn Iterator<Item = Duration>> {
    let b = ExponentialBackoff::from_millis(10).max_delay(cap).map(jitter);
    match limit { Some(n) => Box::new(b.take(n - 1)), None => Box::new(b) }
}
"#;

    #[test]
    fn a_builder_over_tokio_retry_is_summarised() {
        let f = facts(BUILDER);
        let [wrapper] = f.rust_wrappers.as_slice() else {
            panic!("{:?}", f.rust_wrappers)
        };
        assert_eq!((wrapper.name.as_str(), wrapper.arity), ("retry", 1));
        assert!(wrapper.default_every_error, "`When::Any` is answered with `r.is_err()`");
        assert_eq!(wrapper.predicate_field.as_deref(), Some("when"));
        let limit = wrapper.methods.iter().find(|m| m.name == "limit").unwrap();
        assert_eq!(limit.sets, vec![("limit".to_string(), Some(0))]);
        let no_limit = wrapper.methods.iter().find(|m| m.name == "no_limit").unwrap();
        assert_eq!(no_limit.sets, vec![("limit".to_string(), None)]);
        assert_eq!(wrapper.methods.iter().find(|m| m.name == "run").unwrap().run, Some(0));
        let schedule = wrapper.schedule.as_ref().expect("the factory is read");
        assert_eq!(schedule.factory, "strategy");
        assert!(
            matches!(&schedule.params[..], [RustWrapperParam::Field(l), RustWrapperParam::Field(c)] if l == "limit" && c == "cap")
        );
        assert_eq!((schedule.limit, schedule.offset, schedule.optional), (0, -1.0, true));
        assert_eq!(
            schedule.taken.ops.last().map(|op| op.args.clone()),
            Some(vec![Arg::Param(0)])
        );
        assert!(schedule
            .untaken
            .as_ref()
            .is_some_and(|u| u.ops.iter().all(|op| op.method != "take")));
        assert!(wrapper.defaults.contains(&("cap".to_string(), Arg::Ms(8000.0))));
        // Its own retry applies the caller's predicate with the caller's strategy.
        let [site] = f.retry_sites.as_slice() else { panic!() };
        assert_eq!(site.predicate, Predicate::Unknown);
        assert!(matches!(site.policy, crate::facts::PolicyArg::Unknown));
    }

    #[test]
    fn a_builder_whose_terminal_does_not_retry_is_none() {
        let f = facts(
            r#"
use tokio_retry::Retry;
pub struct Timed { n: usize }
pub fn timed() -> Timed { Timed { n: 1 } }
impl Timed {
    pub fn limit(mut self, n: usize) -> Self { self.n = n; self }
    pub async fn run<F, Fut>(self, mut f: F) -> Fut::Output where F: FnMut() -> Fut, Fut: std::future::Future { f().await }
}
pub async fn elsewhere() { let _ = Retry::spawn(std::iter::empty(), || async { Ok::<(), ()>(()) }).await; }
"#,
        );
        assert!(f.rust_wrappers.is_empty(), "{:?}", f.rust_wrappers);
    }

    #[test]
    fn chains_keep_their_methods_and_predicates() {
        let f = facts(
            r#"
use crate::util::retry;
pub async fn a() { retry("a").when(|r| r.is_err()).limit(5).run(|| async { Ok(1) }).await; }
pub async fn b() { retry("b").when(|r| matches!(r, Err(Error::Lost))).no_limit().run(|| async { Ok(1) }).await; }
"#,
        );
        let [a, b] = f.rust_wrapper_calls.as_slice() else {
            panic!("{:?}", f.rust_wrapper_calls)
        };
        assert_eq!(a.path.segments, ["crate", "util", "retry"]);
        let methods: Vec<&str> = a.steps.iter().map(|s| s.method.as_str()).collect();
        assert_eq!(methods, ["when", "limit", "run"]);
        assert_eq!(
            a.steps[0].predicate,
            Predicate::None,
            "only asks whether it is an error"
        );
        assert_eq!(a.steps[1].values, vec![Arg::Num(5.0)]);
        assert_eq!(a.steps[1].text, ".limit(5)");
        assert!(matches!(b.steps[0].predicate, Predicate::Filter { .. }));
        assert!(a.steps[2].unit.is_some());
    }
}
