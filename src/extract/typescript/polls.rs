//! Loops that poll or restart on an interval (decision 6): `Effect.repeat` / `Effect.schedule`
//! of a schedule, `Effect.forever` with a wait, `Stream.tick`, `setInterval`, and retries
//! that restart long-running work (supervisors). What each loop runs is read for a catch (a
//! failing tick goes on), a retry (it may back off on its own), and whether it ever ends.
//!
//! A child module of the extractor: it reads the walk's scopes and expression conversion.

use tree_sitter::Node;

use crate::extract::FieldExt;

use super::{units, Extractor, MAX_EXPR_DEPTH};
use crate::facts::{Expr, PollKind, PollLoop};

/// Methods that recover from a failure: the loop goes on after a failing tick.
const CATCHES: &[&str] = &[
    "catch",
    "catchAll",
    "catchAllCause",
    "catchCause",
    "catchTag",
    "catchTags",
    "catchIf",
    "catchSome",
    "catchAllDefect",
    "orElse",
    "orElseSucceed",
    "ignore",
    "ignoreLogged",
];
/// `Effect` members that turn a failure into a value (other modules have members so named).
const EFFECT_CATCHES: &[&str] = &[
    "either",
    "result",
    "exit",
    "option",
    "match",
    "matchCause",
    "matchEffect",
    "matchCauseEffect",
];
/// Calls that never end by themselves.
const ENDLESS: &[&str] = &["forever", "never", "runDrain", "runForEach"];
/// How far up the tree a loop looks for a fork or a layer.
const MAX_ANCESTORS: usize = 24;
/// Nodes a scan visits at most.
const MAX_SCAN: usize = 20_000;

/// What a scan of the repeated work found.
#[derive(Default)]
struct Scan<'t> {
    caught: bool,
    retries: bool,
    endless: bool,
    /// The duration of an `Effect.sleep(…)` in a catch handler, else anywhere.
    sleep_in_catch: Option<Node<'t>>,
    sleep: Option<Node<'t>>,
}

impl<'t> Extractor<'t, '_> {
    /// The loop facts of a call: `effect` is its Effect member, `path` its name path.
    pub(super) fn poll_call(&mut self, node: Node<'t>, callee: Node<'t>, effect: Option<(&str, &str)>, global: bool) {
        let Some(arguments) = node.field("arguments").filter(|a| a.kind_str() == "arguments") else {
            return;
        };
        let mut cursor = arguments.walk();
        let args: Vec<Node<'t>> = arguments
            .named_children(&mut cursor)
            .filter(|a| a.kind_str() != "comment")
            .collect();
        let (call, kind, roots) = match effect {
            Some(("Effect", member @ ("repeat" | "schedule" | "repeatOrElse"))) => {
                // Data-last `repeat(schedule)` in a pipe, or data-first `repeat(effect, schedule)`.
                let (schedule, roots) = match args.as_slice() {
                    [schedule] => (
                        *schedule,
                        units::retried_target(self.text, node, &args, Some(0), &self.lineage).map(|(roots, _)| roots),
                    ),
                    [effect, schedule, ..] => (*schedule, Some(vec![*effect])),
                    _ => return,
                };
                let mut schedule = self.expr(schedule, 0);
                if let Some(inner) = schedule.property("schedule") {
                    schedule = inner.clone();
                }
                (
                    format!("Effect.{member}"),
                    PollKind::Schedule(schedule),
                    roots.unwrap_or_default(),
                )
            }
            Some(("Effect", "forever")) => {
                let [effect] = args.as_slice() else { return };
                let roots = vec![*effect];
                let scan = self.scan(&roots);
                let Some(sleep) = scan.sleep_in_catch.or(scan.sleep) else {
                    return;
                };
                let duration = self.expr(sleep, 0);
                self.facts.polls.push(PollLoop {
                    span: Self::span(callee),
                    call: "Effect.forever".into(),
                    kind: PollKind::SleepAfterFailure(duration),
                    caught: scan.caught,
                    retries: scan.retries,
                    forked: self.forked_around(node),
                    endless: true,
                });
                return;
            }
            Some(("Stream", "tick")) => {
                let [every] = args.as_slice() else { return };
                let every = self.expr(*every, 0);
                (
                    "Stream.tick".to_string(),
                    PollKind::Every(every),
                    later_steps(self, node),
                )
            }
            None if global => {
                let [tick, every, ..] = args.as_slice() else { return };
                if self.is_heartbeat(node, *tick) {
                    return;
                }
                (
                    "setInterval".to_string(),
                    PollKind::Every(self.expr(*every, 0)),
                    vec![*tick],
                )
            }
            _ => return,
        };
        let scan = self.scan(&roots);
        self.facts.polls.push(PollLoop {
            span: Self::span(callee),
            call,
            kind,
            caught: scan.caught,
            retries: scan.retries,
            forked: self.forked_around(node),
            endless: scan.endless,
        });
    }

    /// `setInterval(sendHeartbeat, …)`, `heartbeat = setInterval(…)`: a heartbeat or
    /// keepalive, whose fixed interval is its contract with the other side (a heartbeat that
    /// backed off would read as gone).
    fn is_heartbeat(&self, call: Node<'t>, tick: Node<'t>) -> bool {
        let named = |node: Node<'t>| {
            let text = self.text_of(node).to_ascii_lowercase();
            text.contains("heartbeat") || text.contains("keepalive") || text.contains("keep_alive")
        };
        let assigned_to = self.parent(call).and_then(|parent| match parent.kind_str() {
            "assignment_expression" => parent.field("left"),
            "variable_declarator" => parent.field("name"),
            _ => None,
        });
        (tick.kind_str() == "identifier" && named(tick)) || assigned_to.is_some_and(named)
    }

    /// A retry whose result is forked, or whose work never ends: a supervisor that restarts
    /// long-running work, judged as a loop (decision 6) rather than as a request retry.
    /// A retried effect that waits itself (`Effect.sleep`) is noted too: when the retry adds
    /// no delay of its own, that wait is the pace of a poll.
    pub(super) fn supervisor(&mut self, node: Node<'t>, callee: Node<'t>, roots: &[Node<'t>]) {
        let forked = self.forked_around(node);
        let scan = self.scan(roots);
        let endless = scan.endless;
        {
            if let Some(sleep) = scan.sleep_in_catch.or(scan.sleep) {
                let duration = self.expr(sleep, 0);
                self.facts.polls.push(PollLoop {
                    span: Self::span(callee),
                    call: "Effect.retry".into(),
                    kind: PollKind::WaitInRetried(duration),
                    caught: true,
                    retries: false,
                    forked,
                    endless,
                });
            }
        }
        if forked || endless {
            self.facts.polls.push(PollLoop {
                span: Self::span(callee),
                call: "Effect.retry".into(),
                kind: PollKind::Retry,
                caught: true,
                retries: false,
                forked,
                endless,
            });
        }
    }

    /// Reads what a loop runs: the roots, and the values of identifiers among them (one
    /// level: `const tick = Effect.gen(…)` then `tick.pipe(Effect.repeat(…))`).
    fn scan(&self, roots: &[Node<'t>]) -> Scan<'t> {
        let mut scan = Scan::default();
        let mut all: Vec<Node<'t>> = roots.to_vec();
        for root in roots {
            if root.kind_str() == "identifier" {
                let name = self.text_of(*root);
                let value = match self.lookup_local(name) {
                    Some((_, value)) => value,
                    None => self.top_level_value(name),
                };
                all.extend(value);
            }
        }
        let mut budget = MAX_SCAN;
        for root in all {
            let mut cursor = root.walk();
            loop {
                if !units::walk_step() {
                    break;
                }
                let node = cursor.node();
                budget = budget.saturating_sub(1);
                match node.kind_str() {
                    "call_expression" => {
                        let callee = node.field("function").map(|c| self.text_of(c)).unwrap_or("");
                        let last = callee.rsplit('.').next().unwrap_or(callee);
                        let effect_catch = EFFECT_CATCHES.contains(&last) && callee.starts_with("Effect.");
                        let handler = node.field("arguments");
                        if (CATCHES.contains(&last) || effect_catch) && !handler.is_some_and(|h| self.stops_loop(h)) {
                            scan.caught = true;
                            if scan.sleep_in_catch.is_none() {
                                scan.sleep_in_catch = node.field("arguments").and_then(|a| self.find_sleep(a));
                            }
                        } else if last == "retry" || last == "retryOrElse" {
                            scan.retries = true;
                        } else if ENDLESS.contains(&last) {
                            scan.endless = true;
                        } else if last == "sleep" && scan.sleep.is_none() {
                            scan.sleep = node.field("arguments").and_then(|a| a.named_child(0));
                        }
                    }
                    "member_expression" => {
                        // `Effect.forever` as a pipe step.
                        let property = node.field("property").map(|p| self.text_of(p));
                        if property.is_some_and(|p| ENDLESS.contains(&p)) {
                            scan.endless = true;
                        }
                    }
                    "try_statement" if node.field("handler").is_some_and(|h| !self.stops_loop(h)) => {
                        scan.caught = true;
                    }
                    "while_statement" => {
                        let condition = node.field("condition").map(|c| self.text_of(c));
                        if condition.is_some_and(|c| c.trim_matches(['(', ')', ' ']) == "true") {
                            scan.endless = true;
                        }
                    }
                    "for_statement" if node.field("condition").is_none() => scan.endless = true,
                    _ => {}
                }
                if budget > 0 && !matches!(node.kind_str(), "comment" | "string") && cursor.goto_first_child() {
                    continue;
                }
                if !super::step_past(&mut cursor, root) {
                    break;
                }
            }
        }
        scan
    }

    /// A catch handler that ends the loop instead of letting it go on: it clears the interval,
    /// fails or ends the stream it feeds (`emit.fail(e)`, `emit.end()`), aborts, or exits.
    fn stops_loop(&self, handler: Node<'t>) -> bool {
        let text = self.text_of(handler);
        ["clearInterval(", ".fail(", ".end(", ".abort(", "process.exit("]
            .iter()
            .any(|stop| text.contains(stop))
    }

    /// The duration of the first `sleep(…)` under `node`.
    fn find_sleep(&self, node: Node<'t>) -> Option<Node<'t>> {
        let mut cursor = node.walk();
        loop {
            let current = cursor.node();
            if current.kind_str() == "call_expression" {
                let callee = current.field("function").map(|c| self.text_of(c)).unwrap_or("");
                if callee.rsplit('.').next() == Some("sleep") {
                    return current.field("arguments").and_then(|a| a.named_child(0));
                }
            }
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.node() == node {
                    return None;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return None;
                }
            }
        }
    }

    /// Whether the loop at `node` is forked (`Effect.fork*`, `Effect.runFork`, a fork among
    /// the steps of the pipe it is in) or runs as a layer (`Layer.scopedDiscard`): looked for
    /// in the few calls right around it, not anywhere up the tree (a request retried inside a
    /// forked program is still a request).
    pub(super) fn forked_around(&self, node: Node<'t>) -> bool {
        let is_fork = |expr: &Expr| -> bool {
            let head = match expr {
                Expr::Call { callee, .. } => callee.as_ref(),
                other => other,
            };
            match self.facts.effect_member(head) {
                Some(("Effect", member)) => member.starts_with("fork") || member == "runFork",
                Some(("Layer", member)) => member.ends_with("Discard") || member.starts_with("scoped"),
                _ => false,
            }
        };
        let mut current = node;
        let mut calls = 0;
        for _ in 0..MAX_ANCESTORS {
            let Some(parent) = self.parent(current) else { break };
            if !matches!(
                parent.kind_str(),
                "arguments" | "call_expression" | "member_expression" | "parenthesized_expression"
            ) {
                break;
            }
            current = parent;
            if parent.kind_str() != "call_expression" {
                continue;
            }
            calls += 1;
            if calls > 3 {
                break;
            }
            if let Some(callee) = parent.field("function") {
                if is_fork(&self.expr(callee, MAX_EXPR_DEPTH - 3)) {
                    return true;
                }
            }
            if let Some(arguments) = parent.field("arguments") {
                let mut cursor = arguments.walk();
                let steps: Vec<Node<'t>> = arguments.named_children(&mut cursor).collect();
                if steps.iter().any(|step| is_fork(&self.expr(*step, MAX_EXPR_DEPTH - 3))) {
                    return true;
                }
            }
        }
        false
    }
}

/// The pipe steps after `node`: `node.pipe(a, b)` or `pipe(node, a, b)`.
fn later_steps<'t>(extractor: &Extractor<'t, '_>, node: Node<'t>) -> Vec<Node<'t>> {
    let Some(parent) = extractor.parent(node) else {
        return Vec::new();
    };
    let call = match parent.kind_str() {
        "member_expression" if parent.field("property").is_some_and(|p| extractor.text_of(p) == "pipe") => {
            extractor.parent(parent).filter(|c| c.kind_str() == "call_expression")
        }
        "arguments" => extractor
            .parent(parent)
            .filter(|c| c.field("function").is_some_and(|f| extractor.text_of(f) == "pipe")),
        _ => None,
    };
    let Some(arguments) = call.and_then(|c| c.field("arguments")) else {
        return Vec::new();
    };
    let mut cursor = arguments.walk();
    arguments
        .named_children(&mut cursor)
        .filter(|a| *a != node && a.kind_str() != "comment")
        .collect()
}
