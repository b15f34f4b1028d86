//! Policies whose delays the code uses itself, with no retry site: a builder or strategy bound
//! to a `let` and stepped through by `next()` (greptimedb's `let mut backoff =
//! ExponentialBuilder::default()…build();` then `backoff.next()` in a `loop`) or handed to a
//! function; a builder stored in a struct field; a function returning one for other code to
//! step (`fn latest_get_backoff() -> impl Iterator<Item = Duration>`). A policy is a policy
//! however its delays are used: its defects are the same.
//!
//! A strategy iterated by a `for` loop is left alone: such a loop paces a poll and writes its
//! own stop (an elapsed-time check), which is not the strategy's. The exponential-backoff
//! crate's `Backoff` is the exception: a `for` loop is how it is used (it yields
//! `Option<Duration>`, `None` on the last attempt), so its loop is a step, and a loop over a
//! `Backoff` built in the `for` itself is a policy built there.

use super::*;
use crate::facts::RustStepped;

/// How much of a constructor's text names a policy built in a `for` loop.
const MAX_NAME_CHARS: usize = 120;

/// Uses kept per policy.
const MAX_USES: usize = 32;
/// Nodes looked at for the uses of one binding.
const MAX_SCAN: usize = 20_000;
/// Nodes looked at for the uses of all the file's bindings: a function of thousands of
/// builder `let`s stays linear (past it, a `let` no site is given is not judged).
const MAX_SCAN_PER_FILE: usize = 200_000;

impl<'t> Walk<'_, 't, '_> {
    /// `let [mut] name = <builder>;` stepped by `name.next()` or handed to a call.
    pub(super) fn stepped_let(&mut self, node: Node<'t>) {
        let rx = self.rx;
        let (Some(pattern), Some(value)) = (node.field("pattern"), node.field("value")) else {
            return;
        };
        let pattern = match pattern.kind_str() {
            "mut_pattern" => match named_children(pattern).first() {
                Some(inner) => *inner,
                None => return,
            },
            _ => pattern,
        };
        if pattern.kind_str() != "identifier" {
            return;
        }
        let Some(mut chain) = self.library_chain(value) else {
            return;
        };
        let Some(block) = rx.parents.of(node) else { return };
        let name = rx.text_of(pattern);
        let looped = iterated_by_design(&chain);
        let Some((uses, supervisor)) = self.uses_of(block, name, node.end_byte(), looped) else {
            return;
        };
        let Some(first) = uses.first() else {
            // `let backoff = <builder>; Self { backoff, … }` (or `Self { field: backoff }`): the
            // builder is stored for the type's methods, as one written in the field itself
            // (issue 25.2), reported at the `let`.
            if let Some(field) = stored_in_field(rx, block, name, node.end_byte()) {
                if !assigned_field(rx.text, &field) {
                    self.facts.rust_stepped.push(RustStepped {
                        name: field,
                        name_span: span(pattern),
                        value: chain,
                        uses: Vec::new(),
                        function: false,
                        supervisor,
                    });
                }
            }
            return;
        };
        // A builder used as a calculator (issue 25.7): stepped `attempt` times to compute a
        // delay a function returns for a durable retry to store; nothing waits or re-runs.
        if calculator(rx, block, &uses) {
            return;
        }
        // `let mut p = ExponentialBackoff::default(); p.max_elapsed_time = None;`: the
        // statements up to the first use change it (a call given `&mut p` may change anything).
        chain
            .ops
            .extend(rx.statement_ops(node, name, first.end as usize, None, &self.module, None, 0));
        // The value a factory returns (`fn retry_strategy(limit: Option<usize>, …) -> Box<dyn
        // Iterator<…>> { let backoff = …; match limit { … Box::new(backoff) } }`): the policy
        // is the function's, reported at its name (one policy, however many call it).
        if let Some(function) = self.returned_by_factory(block, name) {
            // A branch of its tail that changes it further (`match limit { Some(n) =>
            // Box::new(backoff.take(n)), None => Box::new(backoff) }`): what that method sets
            // is the caller's to choose, not known here.
            chain.ops.extend(branch_methods(rx, block, name));
            self.facts.rust_stepped.push(RustStepped {
                name: rx.text_of(function).to_string(),
                name_span: span(function),
                value: chain,
                uses: Vec::new(),
                function: false,
                supervisor,
            });
            return;
        }
        self.facts.rust_stepped.push(RustStepped {
            name: name.to_string(),
            name_span: span(pattern),
            value: chain,
            uses,
            function: false,
            supervisor,
        });
    }

    /// The name of the function with parameters whose body is `block` when its tail
    /// expression holds `name`: the `let` is what the factory returns.
    fn returned_by_factory(&self, block: Node<'t>, name: &str) -> Option<Node<'t>> {
        let rx = self.rx;
        let function = rx.parents.of(block).filter(|f| f.kind_str() == "function_item")?;
        // It returns a policy (`impl Iterator<Item = Duration>`, `ExponentialBuilder`, a
        // `Backoff`), not a result its loop steps a policy for (`Result<Header>`).
        let returns = rx.text_of(function.field("return_type")?);
        if !["Iterator", "Backoff", "Builder", "Interval", "Strategy", "Policy"]
            .iter()
            .any(|t| returns.contains(t))
        {
            return None;
        }
        let parameters = function.field("parameters")?;
        if named_children(parameters)
            .iter()
            .all(|p| p.kind_str() == "self_parameter")
        {
            return None;
        }
        let mut tail = named_children(block).into_iter().last()?;
        // A block-like tail (`match …`, `if …`) is an expression statement without its `;`.
        if tail.kind_str() == "expression_statement" && !rx.text_of(tail).ends_with(';') {
            tail = named_children(tail).into_iter().next()?;
        }
        if tail.kind_str().ends_with("_statement")
            || matches!(
                tail.kind_str(),
                "let_declaration" | "loop_expression" | "while_expression" | "for_expression"
            )
        {
            return None;
        }
        let mut cursor = tail.walk();
        let mut seen = 0;
        'walk: loop {
            let node = cursor.node();
            seen += 1;
            if seen > MAX_SCAN {
                return None;
            }
            if node.kind_str() == "identifier" && rx.text_of(node) == name {
                return function.field("name");
            }
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() || cursor.node() == tail {
                    break 'walk;
                }
            }
        }
        None
    }

    /// `for delay in Backoff::new(…)` (or `&Backoff::default()`, `….iter()`): a policy built in
    /// the loop that steps it, for a library iterated so by design.
    pub(super) fn stepped_for(&mut self, node: Node<'t>) {
        let Some(mut value) = node.field("value") else {
            return;
        };
        loop {
            value = match value.kind_str() {
                "reference_expression" | "parenthesized_expression" => match value.field("value") {
                    Some(inner) => inner,
                    None => named_children(value).first().copied().unwrap_or(value),
                },
                "call_expression" => {
                    let method = value
                        .field("function")
                        .filter(|f| f.kind_str() == "field_expression")
                        .and_then(|f| Some((f.field("field")?, f.field("value")?)));
                    match method {
                        Some((field, receiver)) if matches!(self.rx.text_of(field), "iter" | "into_iter") => receiver,
                        _ => break,
                    }
                }
                _ => break,
            };
        }
        let Some(chain) = self.library_chain(value) else {
            return;
        };
        // A helper's policy (`for d in &retry_backoff()`) is that helper's, called here.
        if !iterated_by_design(&chain) || matches!(&chain.base, RustBase::New { via: Some(_), .. }) {
            return;
        }
        // Named by its source text in messages, bounded as `Expr::render` is (a hostile file's
        // constructor may run for megabytes). Used where it is built: no other place to point at.
        let mut name: String = chain.text.chars().take(MAX_NAME_CHARS).collect();
        if name.len() < chain.text.len() {
            name.push('…');
        }
        self.facts.rust_stepped.push(RustStepped {
            name,
            name_span: span(value),
            value: chain,
            uses: Vec::new(),
            function: false,
            supervisor: false,
        });
    }

    /// `Runner { backoff: <builder>, … }`: a builder stored for the type's methods to use.
    pub(super) fn stepped_field(&mut self, node: Node<'t>) {
        let (Some(field), Some(value)) = (node.field("field"), node.field("value")) else {
            return;
        };
        let Some(chain) = self.library_chain(value) else {
            return;
        };
        // `self.backoff = set_backoff(…)` elsewhere in the file: which value the steps see is
        // not known here (the initializer may be a placeholder), so this one is not judged.
        let name = self.rx.text_of(field);
        if assigned_field(self.rx.text, name) {
            return;
        }
        self.facts.rust_stepped.push(RustStepped {
            name: name.to_string(),
            name_span: span(field),
            value: chain,
            uses: Vec::new(),
            function: false,
            supervisor: false,
        });
    }

    /// The builder chain `value` evaluates to when it starts at a retry library's constructor.
    /// Only a chain written in `value` itself: one read from a field or another binding is
    /// that one's policy.
    fn library_chain(&self, value: Node<'t>) -> Option<RustChain> {
        let chain = self.rx.chain(self.rx.eval(value, &self.module, None, 0))?;
        // A constructor given values not known here (`ExponentialBackoff::from_millis(
        // self.backoff_ms)`) is one too: what does not depend on them is still judged.
        let (ctor, via) = match &chain.base {
            RustBase::New { ctor, via, .. } => (ctor, via.as_deref()),
            RustBase::Deferred { ctor, .. } => (ctor, None),
            _ => return None,
        };
        // The constructor (`ExponentialBuilder::default`) or the helper is named here.
        let named = via.unwrap_or(ctor.split("::").next().unwrap_or(ctor));
        self.rx.text_of(value).contains(named).then_some(chain)
    }

    /// Where `name` is used after `from` in `block`: `name.next()` and calls it is handed to
    /// (`helper(name)`, `helper(name.clone())`, `helper(&mut name)`), and whether it is re-made
    /// or reset after a success (`name = <builder>`, `name.reset()`: a supervisor's). `None`
    /// when a `for` loop iterates it (a poll's pacing), unless `looped`: the library is
    /// iterated so by design, and the loop is a step.
    fn uses_of(&mut self, block: Node<'t>, name: &str, from: usize, looped: bool) -> Option<(Vec<Span>, bool)> {
        if self.scanned >= MAX_SCAN_PER_FILE {
            return None;
        }
        let rx = self.rx;
        let mut uses = Vec::new();
        let mut reset = false;
        let mut cursor = block.walk();
        let mut seen = 0;
        'walk: loop {
            let node = cursor.node();
            seen += 1;
            self.scanned += 1;
            if seen > MAX_SCAN || uses.len() >= MAX_USES || self.scanned >= MAX_SCAN_PER_FILE {
                break;
            }
            if node.start_byte() >= from && node.kind_str() == "identifier" && rx.text_of(node) == name {
                match self.use_kind(node) {
                    Use::Step(at) | Use::Handed(at) => uses.push(span(at)),
                    Use::Reset => reset = true,
                    Use::Loop(at) if looped => uses.push(span(at)),
                    Use::Loop(_) => return None,
                    Use::Other => {}
                }
            }
            if node.end_byte() > from && cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() || cursor.node() == block {
                    break 'walk;
                }
            }
        }
        Some((uses, reset))
    }

    fn use_kind(&self, ident: Node<'t>) -> Use<'t> {
        let rx = self.rx;
        let mut current = ident;
        for _ in 0..6 {
            let Some(parent) = rx.parents.of(current) else {
                return Use::Other;
            };
            match parent.kind_str() {
                "for_expression" if parent.field("value") == Some(current) => return Use::Loop(current),
                "assignment_expression" if parent.field("left") == Some(current) => return Use::Reset,
                "reference_expression" | "parenthesized_expression" => current = parent,
                "field_expression" if parent.field("value") == Some(current) => {
                    let method = parent.field("field").map(|f| rx.text_of(f));
                    let call = rx.parents.of(parent).filter(|c| c.kind_str() == "call_expression");
                    match (method, call) {
                        // `Iterator::next` (backon, tokio-retry); `Backoff::next_backoff` (the backoff crate).
                        (Some("next" | "next_backoff"), Some(call)) => return Use::Step(call),
                        (Some("clone" | "to_owned" | "iter" | "into_iter"), Some(call)) => current = call,
                        (Some("reset"), Some(_)) => return Use::Reset,
                        _ => return Use::Other,
                    }
                }
                "arguments" => {
                    return match rx.parents.of(parent) {
                        Some(call) if call.kind_str() == "call_expression" => Use::Handed(call),
                        _ => Use::Other,
                    }
                }
                _ => return Use::Other,
            }
        }
        Use::Other
    }
}

enum Use<'t> {
    /// `backoff.next()` / `backoff.next_backoff()`: the code steps through the delays.
    Step(Node<'t>),
    /// `helper(backoff)`: handed to a call.
    Handed(Node<'t>),
    /// `backoff = <builder>` or `backoff.reset()`: re-made for the next round.
    Reset,
    /// `for d in backoff`: what the loop iterates (`&backoff`, `backoff.iter()`).
    Loop(Node<'t>),
    Other,
}

/// Whether a builder `let` of `block`, stepped at `uses`, only computes a value: every use is
/// a step (`backoff.next()`, none handed to a call), and the function holding it is a plain
/// one returning a value, with no `.await` and no sleep in its body. Its delays are not
/// waited here; the caller gets the value (a durable retry's next delay, stored with the
/// attempt count).
fn calculator<'t>(rx: &Rx<'t>, block: Node<'t>, uses: &[Span]) -> bool {
    let steps = uses.iter().all(|u| {
        let text = rx.text.get(u.start as usize..u.end as usize).unwrap_or_default();
        text.ends_with(b".next()") || text.ends_with(b".next_backoff()")
    });
    if uses.is_empty() || !steps {
        return false;
    }
    let Some(function) = rx
        .parents
        .ancestors(block)
        .find(|n| matches!(n.kind_str(), "function_item" | "closure_expression" | "async_block"))
    else {
        return false;
    };
    if function.kind_str() != "function_item" || function.field("return_type").is_none() {
        return false;
    }
    let header_end = function.field("body").map_or(function.end_byte(), |b| b.start_byte());
    let header = rx.text.get(function.start_byte()..header_end).unwrap_or_default();
    if memchr::memmem::find(header, b"async").is_some() {
        return false;
    }
    let Some(body) = function.field("body") else {
        return false;
    };
    let text = rx.text.get(body.byte_range()).unwrap_or_default();
    // A wait (`.await`, `thread::sleep(d)`), a re-run (`loop {`, `while …`), or work spawned.
    let waits = [
        &b".await"[..],
        b"sleep(",
        b"delay_for(",
        b"loop {",
        b"while ",
        b"spawn(",
        b"retry(",
    ];
    !waits.iter().any(|w| memchr::memmem::find(text, w).is_some())
}

/// The field of a struct expression of `block` (after `from`) that stores the binding `name`
/// as it is: `Self { name, … }`, `Self { field: name }`, `Self { field: name.clone() }`.
fn stored_in_field<'t>(rx: &Rx<'t>, block: Node<'t>, name: &str, from: usize) -> Option<String> {
    let mut cursor = block.walk();
    let mut seen = 0;
    'walk: loop {
        let node = cursor.node();
        seen += 1;
        if seen > MAX_SCAN {
            return None;
        }
        if node.start_byte() >= from {
            match node.kind_str() {
                "shorthand_field_initializer"
                    if named_children(node).first().is_some_and(|n| rx.text_of(*n) == name) =>
                {
                    return Some(name.to_string());
                }
                "field_initializer" => {
                    let stored = node.field("value").map(|mut value| {
                        // `name.clone()`
                        while value.kind_str() == "call_expression" {
                            match value.field("function").filter(|f| {
                                f.kind_str() == "field_expression"
                                    && f.field("field").is_some_and(|m| rx.text_of(m) == "clone")
                            }) {
                                Some(f) => match f.field("value") {
                                    Some(inner) => value = inner,
                                    None => break,
                                },
                                None => break,
                            }
                        }
                        value
                    });
                    if let (Some(value), Some(field)) = (stored, node.field("field")) {
                        if value.kind_str() == "identifier" && rx.text_of(value) == name {
                            return Some(rx.text_of(field).to_string());
                        }
                    }
                }
                _ => {}
            }
        }
        if node.end_byte() > from && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() || cursor.node() == block {
                break 'walk;
            }
        }
    }
    None
}

/// Whether `text` assigns to a field `name` (`x.name = …`, `self.name=…`; not `==`).
fn assigned_field(text: &[u8], name: &str) -> bool {
    let needle = format!(".{name}");
    memchr::memmem::find_iter(text, needle.as_bytes()).any(|at| {
        let after = &text[at + needle.len()..];
        if after.first().is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
            return false;
        }
        let rest = after.trim_ascii_start();
        rest.first() == Some(&b'=') && !matches!(rest.get(1), Some(b'=' | b'>'))
    })
}

/// Whether `chain` is of a library whose policy a `for` loop steps by design
/// (exponential-backoff's `Backoff`).
fn iterated_by_design(chain: &RustChain) -> bool {
    match &chain.base {
        RustBase::New { state, .. } => state.lib() == Library::ExponentialBackoff,
        RustBase::Deferred { path, .. } => path.first().is_some_and(|c| c == "exponential_backoff"),
        _ => false,
    }
}

impl<'t> Rx<'t> {
    /// The file's functions without parameters that return a builder (its named policies),
    /// with the calls of each in the file: a function other code calls for its delays.
    pub(super) fn called_policies(&self, root: Node<'t>, policies: &[crate::facts::RustPolicy]) -> Vec<RustStepped> {
        let mut out: Vec<RustStepped> = policies
            .iter()
            // Built here from a library's constructor (a function naming the retry module's
            // policy is that policy).
            .filter(|p| matches!(p.value.base, RustBase::New { .. }))
            .filter(|p| {
                // A free function, or an associated one (`impl Actor { fn build_backoff() … }`,
                // whose module ends with its type).
                let free = self.item(&p.module, &p.name);
                let associated = || match p.module.split_last() {
                    Some((ty, module)) => self.associated(module, ty, &p.name),
                    None => None,
                };
                free.or_else(associated).is_some_and(|i| i.body.is_some())
            })
            .map(|p| RustStepped {
                name: p.name.clone(),
                name_span: p.name_span,
                value: p.value.clone(),
                uses: Vec::new(),
                function: true,
                supervisor: false,
            })
            .collect();
        if out.is_empty() {
            return out;
        }
        let mut cursor = root.walk();
        let mut seen = 0usize;
        'walk: loop {
            let node = cursor.node();
            seen += 1;
            if seen > MAX_SCAN * 10 {
                break;
            }
            if node.kind_str() == "call_expression" && self.args(node).is_empty() {
                if let Some((ty, name)) = node.field("function").and_then(|f| self.called_name(f)) {
                    let owner = |p: &RustStepped| {
                        let module = &policies.iter().find(|q| q.name_span == p.name_span)?.module;
                        Some(module.last().map(String::as_str))
                    };
                    let policy = out.iter_mut().find(|p| {
                        p.name == name
                            && match ty {
                                None => true,
                                // `Self::build_backoff()` in the impl, `Actor::build_backoff()`.
                                Some("Self") => true,
                                Some(ty) => owner(p) == Some(Some(ty)),
                            }
                    });
                    if let Some(policy) = policy {
                        if policy.uses.len() < MAX_USES {
                            policy.uses.push(span(node));
                        }
                        // `backoff = Self::build_backoff();` after a success: re-made for the
                        // next round, a supervisor's.
                        let remade = self
                            .parents
                            .of(node)
                            .is_some_and(|p| p.kind_str() == "assignment_expression" && p.field("right") == Some(node));
                        policy.supervisor |= remade;
                    }
                }
            }
            if is_test_item(node, self.text) {
                // Test code's calls are not uses.
            } else if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        out.retain(|p| !p.uses.is_empty());
        out
    }
}

impl<'t> Rx<'t> {
    /// The function a call names: `f` (no type), `Self::f` or `Type::f` (an associated
    /// function, with its type).
    fn called_name(&self, function: Node<'t>) -> Option<(Option<&'t str>, &'t str)> {
        match function.kind_str() {
            "identifier" => Some((None, self.text_of(function))),
            "scoped_identifier" => {
                let path = function.field("path")?;
                let name = function.field("name")?;
                matches!(path.kind_str(), "identifier" | "self" | "type_identifier")
                    .then(|| (Some(self.text_of(path)), self.text_of(name)))
            }
            _ => None,
        }
    }
}

/// Keeps the stepped policies no retry site already holds: a `let` a site is given, a field
/// a site's policy is read from, a function's calls inside a site's policy argument.
pub(super) fn without_sites(facts: &mut FileFacts) {
    let sites: Vec<(Span, Option<Span>, Option<Span>)> = facts
        .retry_sites
        .iter()
        .filter_map(|site| match &site.policy {
            PolicyArg::Rust(arg) => Some((
                arg.arg,
                arg.local.as_ref().map(|l| l.1),
                arg.chain.as_ref().map(|c| c.span),
            )),
            _ => None,
        })
        .collect();
    let inside = |at: Span| {
        sites
            .iter()
            .any(|(arg, _, _)| arg.start <= at.start && at.end <= arg.end)
    };
    if facts.rust_stepped.is_empty() {
        return;
    }
    // The `let`s and builders sites are given, looked up in one step each.
    let held: std::collections::HashSet<Span> = sites
        .iter()
        .flat_map(|(_, local, chain)| [*local, *chain])
        .flatten()
        .collect();
    facts.rust_stepped.retain_mut(|p| {
        if held.contains(&p.name_span) || held.contains(&p.value.span) || inside(p.value.span) {
            return false;
        }
        p.uses.retain(|u| !inside(*u));
        !(p.function && p.uses.is_empty())
    });
}

/// The methods called on `name` in a block-like tail of `block` (`match`, `if`) that returns
/// it in more than one way, each as given values not known here.
fn branch_methods<'t>(rx: &Rx<'t>, block: Node<'t>, name: &str) -> Vec<RustOp> {
    let Some(mut tail) = named_children(block).into_iter().last() else {
        return Vec::new();
    };
    if tail.kind_str() == "expression_statement" && !rx.text_of(tail).ends_with(';') {
        match named_children(tail).into_iter().next() {
            Some(inner) => tail = inner,
            None => return Vec::new(),
        }
    }
    if !matches!(tail.kind_str(), "match_expression" | "if_expression") {
        return Vec::new();
    }
    let mut ops: Vec<RustOp> = Vec::new();
    let mut cursor = tail.walk();
    let mut seen = 0;
    loop {
        let node = cursor.node();
        seen += 1;
        if seen > MAX_SCAN {
            return ops;
        }
        if node.kind_str() == "call_expression" {
            let function = node.field("function").filter(|f| f.kind_str() == "field_expression");
            let receiver = function.and_then(|f| f.field("value"));
            let method = function.and_then(|f| f.field("field")).map(|m| rx.text_of(m));
            if let (Some(receiver), Some(method)) = (receiver, method) {
                if receiver.kind_str() == "identifier"
                    && rx.text_of(receiver) == name
                    && !ops.iter().any(|op| op.method == method)
                {
                    ops.push(RustOp {
                        method: method.to_string(),
                        args: rx.args(node).iter().map(|_| Arg::Unknown).collect(),
                        span: span(node),
                    });
                }
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        if !crate::extract::step_past(&mut cursor, tail) {
            return ops;
        }
    }
}
