//! Job and SQL facts from TypeScript (decisions 4 and 5): `Jobs.make` definitions, Effect
//! `Schedule.cron` repeats, `Ref` cursors holding a last-run time, `Date.now()` /
//! `new Date()`, and SQL texts (`sql` templates, SQL-looking literals).
//!
//! A child module of the extractor: it reads the walk's scopes and expression conversion.

use tree_sitter::Node;

use crate::extract::FieldExt;

use super::{Extractor, MAX_EXPR_DEPTH};
use crate::extract::sql::{looks_like_sql, SqlSource};
use crate::extract::sql_text;
use crate::facts::sql::SqlOrigin;
use crate::facts::{ClockRead, CronRepeat, CursorAccess, CursorKind, Expr, JobDef, JobRun, SlotUse};

/// How far up the tree a `Schedule.cron` call looks for its repeat, fork and layer.
const MAX_ANCESTORS: usize = 48;

/// Calls that repeat an effect on a schedule.
const REPEAT_DRIVERS: &[(&str, &str)] = &[
    ("Effect", "repeat"),
    ("Effect", "repeatOrElse"),
    ("Effect", "schedule"),
    ("Effect", "scheduleForked"),
    ("Effect", "scheduleFrom"),
    ("Stream", "repeat"),
    ("Stream", "schedule"),
    ("Stream", "fromSchedule"),
];

/// Callees whose arguments are only logged or traced: a value passed there is not a bound.
const LOG_CALLEES: &[&str] = &[
    "log",
    "logInfo",
    "logDebug",
    "logWarning",
    "logError",
    "logTrace",
    "logFatal",
    "annotateLogs",
    "annotateCurrentSpan",
    "annotateSpans",
    "withSpan",
    "info",
    "debug",
    "warn",
    "error",
    "trace",
];

impl<'t> Extractor<'t, '_> {
    /// Called by `enter` for every node.
    pub(super) fn job_and_sql_facts(&mut self, node: Node<'t>) {
        match node.kind_str() {
            "new_expression" if self.is_new_date_now(node) && !self.is_timestamp_field(node) => {
                self.facts.clock_reads.push(ClockRead {
                    span: Self::span(node),
                    call: "new Date()".into(),
                });
            }
            "string" | "template_string" => self.sql_literal(node),
            "call_expression" => {
                self.query_builder_update(node);
                self.since_from_now(node);
            }
            "binary_expression" => self.since_from_now(node),
            "assignment_expression" => self.module_cursor_write(node),
            "identifier" => self.module_cursor_read(node),
            _ => {}
        }
    }

    /// `updatedAt: new Date()`: the current time written as a record's timestamp, which says
    /// when the work happened, not what is due.
    fn is_timestamp_field(&self, node: Node<'t>) -> bool {
        let Some(pair) = self.parent(node).filter(|p| p.kind_str() == "pair") else {
            return false;
        };
        if pair.field("value") != Some(node) {
            return false;
        }
        pair.field("key").is_some_and(|key| {
            let key = super::string_value(self.text_of(key));
            key.ends_with("At") || key.ends_with("_at")
        })
    }

    /// The module `let` named `name`, unless a local shadows it.
    fn module_let(&self, name: &str) -> bool {
        self.module_state.iter().any(|(n, map)| *n == name && !map) && self.lookup_local(name).is_none()
    }

    /// `lastRun = Date.now()` on a module-level `let`.
    fn module_cursor_write(&mut self, node: Node<'t>) {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            return;
        };
        if left.kind_str() != "identifier" || !self.module_let(self.text_of(left)) || !self.is_clock_read(right, 0) {
            return;
        }
        self.facts.cursors.push(CursorAccess {
            kind: CursorKind::SetNow,
            span: Self::span(node),
            reference: self.text_of(left).to_string(),
            binding: None,
            passed_on: false,
        });
    }

    /// A read of a module-level `let` that is passed on as a bound.
    fn module_cursor_read(&mut self, node: Node<'t>) {
        let name = self.text_of(node);
        if !self.module_let(name) {
            return;
        }
        // Not the target of an assignment, nor its own declaration.
        let parent = self.walk_parent();
        let written = parent.is_some_and(|p| {
            (p.kind_str() == "assignment_expression" && p.field("left") == Some(node))
                || (p.kind_str() == "variable_declarator" && p.field("name") == Some(node))
                || p.kind_str() == "augmented_assignment_expression"
        });
        if written {
            return;
        }
        let (binding, passed_on) = self.read_use(node);
        if passed_on {
            self.facts.cursors.push(CursorAccess {
                kind: CursorKind::Get,
                span: Self::span(node),
                reference: name.to_string(),
                binding,
                passed_on,
            });
        }
    }

    /// `lastRuns.set(key, Date.now())` and `lastRuns.get(key)` on a `Map` (module-level or
    /// local): a cursor kept per key.
    pub(super) fn map_cursor(&mut self, node: Node<'t>, callee: Node<'t>, arguments: Node<'t>) {
        let Some(receiver) = callee.field("object").filter(|o| o.kind_str() == "identifier") else {
            return;
        };
        let name = self.text_of(receiver);
        let is_map = match self.lookup_local(name) {
            Some((_, Some(value))) => super::module::is_new_map(self, value),
            Some((_, None)) => false,
            None => self.module_state.iter().any(|(n, map)| *n == name && *map),
        };
        if !is_map {
            return;
        }
        let mut cursor = arguments.walk();
        let args: Vec<Node<'t>> = arguments
            .named_children(&mut cursor)
            .filter(|a| a.kind_str() != "comment")
            .collect();
        let method = callee.field("property").map(|p| self.text_of(p));
        let (kind, binding, passed_on) = match (method, args.as_slice()) {
            (Some("set"), [_, value]) if self.is_clock_read(*value, 0) => (CursorKind::SetNow, None, false),
            (Some("get"), [_]) => {
                let (binding, passed_on) = self.read_use(node);
                (CursorKind::Get, binding, passed_on)
            }
            _ => return,
        };
        self.facts.cursors.push(CursorAccess {
            kind,
            span: Self::span(node),
            reference: name.to_string(),
            binding,
            passed_on,
        });
    }

    /// The job facts of a call whose callee is the name path `path` (Effect's `effect`).
    pub(super) fn job_call(
        &mut self,
        node: Node<'t>,
        arguments: Node<'t>,
        path: &[&str],
        effect: Option<(&str, &str)>,
    ) {
        let interesting = path.ends_with(&["Jobs", "make"])
            || path == ["Date", "now"]
            || matches!(
                effect,
                Some(
                    ("Schedule", "cron") | ("ClusterCron", "make") | ("Ref" | "SynchronizedRef" | "SubscriptionRef", _)
                )
            );
        if !interesting || arguments.kind_str() != "arguments" {
            return;
        }
        let mut cursor = arguments.walk();
        let args: Vec<Node<'t>> = arguments
            .named_children(&mut cursor)
            .filter(|a| a.kind_str() != "comment")
            .collect();
        if effect == Some(("ClusterCron", "make")) {
            self.cron_wrapper(node);
        }
        if path.ends_with(&["Jobs", "make"]) || effect == Some(("ClusterCron", "make")) {
            self.job_def(node, &args);
            return;
        }
        if path == ["Date", "now"] {
            if args.is_empty() && !self.is_timestamp_field(node) {
                self.facts.clock_reads.push(ClockRead {
                    span: Self::span(node),
                    call: "Date.now()".into(),
                });
            }
            return;
        }
        match effect {
            Some(("Schedule", "cron")) => {
                self.cron_wrapper(node);
                self.cron_repeat(node)
            }
            Some(("Ref" | "SynchronizedRef" | "SubscriptionRef", member)) => {
                let member = member.to_string();
                self.cursor_access(node, &member, &args);
            }
            _ => {}
        }
    }

    // ---------------------------------------------------------------- Jobs.make

    fn job_def(&mut self, node: Node<'t>, args: &[Node<'t>]) {
        let Some(object) = args.first().filter(|a| a.kind_str() == "object") else {
            return;
        };
        let value = self.expr(*object, 0);
        let property = |key: &str| value.property(key).cloned();
        let name = match value.property("name") {
            Some(Expr::Str(name, _)) => Some(name.clone()),
            _ => None,
        };
        let job = JobDef {
            span: Self::span(node),
            name,
            cron: property("cron"),
            timezone: property("timezone")
                .or_else(|| property("timeZone"))
                .or_else(|| property("tz")),
            exclusive: property("exclusive"),
            timeout: property("timeout"),
            run: self.job_run(*object).or_else(|| self.job_execute(*object)),
        };
        self.facts.jobs.push(job);
    }

    fn job_run(&self, object: Node<'t>) -> Option<JobRun> {
        let mut cursor = object.walk();
        for child in object.named_children(&mut cursor) {
            match child.kind_str() {
                "pair" => {
                    let key = child.field("key")?;
                    if super::string_value(self.text_of(key)) != "run" {
                        continue;
                    }
                    let value = child.field("value")?;
                    return Some(match value.kind_str() {
                        "arrow_function" | "function_expression" | "function" | "generator_function" => {
                            self.run_function(value)
                        }
                        _ => JobRun {
                            span: Self::span(value),
                            body: None,
                            slot: SlotUse::Unknown,
                        },
                    });
                }
                "method_definition" => {
                    let is_run = child.field("name").is_some_and(|n| self.text_of(n) == "run");
                    if is_run {
                        return Some(self.run_function(child));
                    }
                }
                "shorthand_property_identifier" if self.text_of(child) == "run" => {
                    return Some(JobRun {
                        span: Self::span(child),
                        body: None,
                        slot: SlotUse::Unknown,
                    });
                }
                _ => {}
            }
        }
        None
    }

    /// `ClusterCron.make({ execute: Effect.gen(…) })`: the job's code is an effect, with no
    /// slot parameter to read (so none is reported as ignored).
    fn job_execute(&self, object: Node<'t>) -> Option<JobRun> {
        let mut cursor = object.walk();
        let pair = object.named_children(&mut cursor).find(|child| {
            child.kind_str() == "pair"
                && child
                    .field("key")
                    .is_some_and(|k| super::string_value(self.text_of(k)) == "execute")
        })?;
        let value = pair.field("value")?;
        Some(JobRun {
            span: Self::span(value),
            body: Some(Self::span(value)),
            slot: SlotUse::Unknown,
        })
    }

    /// Whether a `run` function reads its slot parameter.
    fn run_function(&self, function: Node<'t>) -> JobRun {
        let span = Self::span(function);
        let first_param = match function.field("parameter") {
            Some(param) => Some(param),
            None => function.field("parameters").and_then(|list| {
                let mut cursor = list.walk();
                let first = list.named_children(&mut cursor).find(|p| p.kind_str() != "comment");
                first.map(|p| p.field("pattern").unwrap_or(p))
            }),
        };
        let slot = match first_param {
            None => SlotUse::Ignored { param: None },
            Some(param) if param.kind_str() == "identifier" => {
                let name = self.text_of(param);
                let body = function.field("body");
                if body.is_some_and(|b| mentions_identifier(b, name, self.text)) {
                    SlotUse::Used
                } else {
                    SlotUse::Ignored {
                        param: Some(name.to_string()),
                    }
                }
            }
            Some(_) => SlotUse::Unknown,
        };
        JobRun {
            span,
            body: Some(span),
            slot,
        }
    }

    // ---------------------------------------------------------------- cron wrappers

    /// A `ClusterCron.make` or `Schedule.cron` call inside a project function (the outermost
    /// function a top-level declaration binds): when that function calls a handler it is given
    /// (a parameter, or a parameter's property) with an argument, or hands it on to a call, it
    /// is a cron wrapper that passes its jobs their slot.
    fn cron_wrapper(&mut self, node: Node<'t>) {
        let mut function = None;
        let mut current = node;
        for _ in 0..MAX_ANCESTORS {
            let Some(parent) = self.parent(current) else { break };
            if is_function(parent) {
                function = Some(parent);
            }
            current = parent;
        }
        let Some(function) = function else { return };
        let span = Self::span(function);
        if self.facts.cron_wrappers.iter().any(|w| w.span == span) {
            return;
        }
        let name = if function.kind_str().ends_with("_declaration") {
            function.field("name")
        } else {
            self.parent(function)
                .filter(|p| p.kind_str() == "variable_declarator")
                .and_then(|p| p.field("name"))
        };
        let Some(name) = name.filter(|n| n.kind_str() == "identifier") else {
            return;
        };
        // Each parameter: its name, or the keys a pattern binds (key, local name).
        let mut params: Vec<WrapperParam<'t>> = Vec::new();
        if let Some(param) = function.field("parameter") {
            params.push((Some(self.text_of(param)), Vec::new()));
        }
        if let Some(list) = function.field("parameters") {
            let mut cursor = list.walk();
            for param in list.named_children(&mut cursor).filter(|p| p.kind_str() != "comment") {
                let pattern = param.field("pattern").unwrap_or(param);
                params.push(match pattern.kind_str() {
                    "identifier" => (Some(self.text_of(pattern)), Vec::new()),
                    "object_pattern" => (None, self.pattern_keys(pattern)),
                    _ => (None, Vec::new()),
                });
            }
        }
        let Some(body) = function.field("body") else { return };
        // Which handler an expression names: `run`, `options.run`, a pattern's `run`.
        let handler_of = |node: Node<'t>| -> Option<(usize, Option<String>)> {
            match node.kind_str() {
                "identifier" => {
                    let text = self.text_of(node);
                    params.iter().enumerate().find_map(|(i, (name, keys))| {
                        if *name == Some(text) {
                            return Some((i, None));
                        }
                        keys.iter()
                            .find(|(_, local)| *local == text)
                            .map(|(key, _)| (i, Some(key.clone())))
                    })
                }
                "member_expression" => {
                    let object = node.field("object").filter(|o| o.kind_str() == "identifier")?;
                    let key = self.text_of(node.field("property")?).to_string();
                    let text = self.text_of(object);
                    params
                        .iter()
                        .position(|(name, _)| *name == Some(text))
                        .map(|i| (i, Some(key)))
                }
                _ => None,
            }
        };
        let mut handlers: Vec<crate::facts::CronHandler> = Vec::new();
        let mut cursor = body.walk();
        loop {
            let node = cursor.node();
            if node.kind_str() == "call_expression" {
                let args: Vec<Node<'t>> = node.field("arguments").map_or(Vec::new(), |a| {
                    let mut inner = a.walk();
                    a.named_children(&mut inner)
                        .filter(|c| c.kind_str() != "comment")
                        .collect()
                });
                // Called with the slot, or handed on to run with it (`Effect.flatMap(slot,
                // run)`); a value only read (`Cron.prev(options.cron, now)`) is no handler.
                let callee = node.field("function");
                let called = callee.and_then(handler_of).filter(|_| !args.is_empty());
                let chains = callee.is_some_and(|c| {
                    let text = self.text_of(c);
                    ["flatMap", "andThen", "tap"].iter().any(|m| text.ends_with(m))
                });
                let handed = args.iter().filter(|_| chains).find_map(|a| handler_of(*a));
                if let Some((param, key)) = called.or(handed) {
                    if !handlers.iter().any(|h| h.param == param && h.key == key) {
                        handlers.push(crate::facts::CronHandler {
                            param,
                            key,
                            span: Self::span(node),
                        });
                    }
                }
            }
            if cursor.goto_first_child() {
                continue;
            }
            if !super::step_past(&mut cursor, body) {
                break;
            }
        }
        if handlers.is_empty() {
            return;
        }
        self.facts.cron_wrappers.push(crate::facts::CronWrapper {
            span,
            name: self.text_of(name).to_string(),
            handlers,
        });
    }

    /// The keys an object pattern binds, with their local names: `{ run, name: label }`.
    fn pattern_keys(&self, pattern: Node<'t>) -> Vec<(String, &'t str)> {
        let mut cursor = pattern.walk();
        let mut out = Vec::new();
        for child in pattern.named_children(&mut cursor) {
            match child.kind_str() {
                "shorthand_property_identifier_pattern" => {
                    out.push((self.text_of(child).to_string(), self.text_of(child)));
                }
                "pair_pattern" => {
                    let (Some(key), Some(value)) = (child.field("key"), child.field("value")) else {
                        continue;
                    };
                    if value.kind_str() == "identifier" {
                        out.push((super::string_value(self.text_of(key)), self.text_of(value)));
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The current time, also as a number or a `Date` (`DateTime.toEpochMillis(now)`,
    /// `now.getTime()`).
    fn is_now_value(&self, node: Node<'t>) -> bool {
        if self.is_clock_read(node, 0) {
            return true;
        }
        if node.kind_str() != "call_expression" {
            return false;
        }
        let Some(callee) = node.field("function") else {
            return false;
        };
        let first = node.field("arguments").and_then(|a| {
            let mut cursor = a.walk();
            let first = a.named_children(&mut cursor).find(|c| c.kind_str() != "comment");
            first
        });
        let expr = self.expr(callee, MAX_EXPR_DEPTH - 3);
        if matches!(
            self.facts.effect_member(&expr),
            Some(("DateTime", "toEpochMillis" | "toDate" | "toDateUtc"))
        ) {
            return first.is_some_and(|f| self.is_clock_read(f, 0));
        }
        callee.kind_str() == "member_expression"
            && callee
                .field("property")
                .is_some_and(|p| matches!(self.text_of(p), "getTime" | "valueOf"))
            && callee.field("object").is_some_and(|o| self.is_clock_read(o, 0))
    }

    /// `Date.now() - 3_600_000`, `DateTime.subtract(now, { hours: 1 })`: a window's start
    /// computed from the wall clock. Recorded when it sits in a callback passed to a call that
    /// is not Effect's (a cron wrapper's job, say): analysis decides whether the callee hands
    /// the callback a slot.
    pub(super) fn since_from_now(&mut self, node: Node<'t>) {
        let since = match node.kind_str() {
            "binary_expression" => {
                let minus = node.field("operator").is_some_and(|o| self.text_of(o) == "-");
                let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
                    return;
                };
                minus && self.is_now_value(left) && !self.is_now_value(right)
            }
            "call_expression" => {
                let Some(callee) = node.field("function") else { return };
                if !matches!(callee.kind_str(), "member_expression" | "identifier") {
                    return;
                }
                let expr = self.expr(callee, MAX_EXPR_DEPTH - 3);
                let subtracts = matches!(
                    self.facts.effect_member(&expr),
                    Some(("DateTime", "subtract" | "subtractDuration"))
                );
                subtracts
                    && node.field("arguments").is_some_and(|a| {
                        let mut cursor = a.walk();
                        let args: Vec<Node<'t>> = a
                            .named_children(&mut cursor)
                            .filter(|c| c.kind_str() != "comment")
                            .collect();
                        args.len() == 2 && self.is_now_value(args[0])
                    })
            }
            _ => false,
        };
        if !since {
            return;
        }
        let mut current = node;
        for _ in 0..MAX_ANCESTORS {
            let Some(parent) = self.parent(current) else { return };
            current = parent;
            if !is_function(parent) {
                continue;
            }
            let Some(holder) = self.parent(parent) else { return };
            let (arguments, key, argument) = match holder.kind_str() {
                "arguments" => (holder, None, parent),
                "pair" => {
                    let Some(object) = self.parent(holder).filter(|o| o.kind_str() == "object") else {
                        return;
                    };
                    let Some(arguments) = self.parent(object).filter(|a| a.kind_str() == "arguments") else {
                        return;
                    };
                    let key = holder.field("key").map(|k| super::string_value(self.text_of(k)));
                    (arguments, key, object)
                }
                // A function bound to a name, a method: not a callback handed to a call.
                _ => return,
            };
            let Some(call) = self.parent(arguments).filter(|c| c.kind_str() == "call_expression") else {
                return;
            };
            let Some(callee) = call.field("function") else { return };
            let callee_expr = self.expr(callee, 0);
            // `Effect.gen(function* () { … })`, `Effect.flatMap(…)`: Effect's own callbacks;
            // the job's callback is further out.
            if self.facts.effect_member(&callee_expr).is_some() {
                continue;
            }
            // A `Jobs.make` run is judged as a job.
            if callee_expr.path().is_some_and(|p| p.ends_with(&["Jobs", "make"])) {
                return;
            }
            let mut cursor = arguments.walk();
            let Some(arg) = arguments
                .named_children(&mut cursor)
                .filter(|c| c.kind_str() != "comment")
                .position(|c| c == argument)
            else {
                return;
            };
            let text = self.text_of(node);
            let text = match text.char_indices().nth(60) {
                Some((at, _)) => format!("{}…", &text[..at]),
                None => text.to_string(),
            };
            let slot = self.run_function(parent).slot;
            self.facts.since_from_now.push(crate::facts::SinceFromNow {
                span: Self::span(node),
                text,
                call: Self::span(call),
                callee: callee_expr,
                arg,
                key,
                slot,
            });
            return;
        }
    }

    // ---------------------------------------------------------------- Schedule.cron

    fn cron_repeat(&mut self, node: Node<'t>) {
        let schedule = self.expr(node, 0).render();
        let (driver, forked, layer) = self.cron_context(node);
        if driver.is_some() || forked || layer.is_some() {
            self.facts.cron_repeats.push(CronRepeat {
                span: Self::span(node),
                schedule,
                driver,
                layer,
                forked,
                containers: self.containers(),
            });
            return;
        }
        // `const nightly = Schedule.cron(…)`: the repeat is where the name is used, in the
        // scope the constant is declared in.
        let declarator = self.parent(node).filter(|p| p.kind_str() == "variable_declarator");
        let Some(name) = declarator
            .and_then(|d| d.field("name"))
            .filter(|n| n.kind_str() == "identifier")
        else {
            self.facts.cron_repeats.push(CronRepeat {
                span: Self::span(node),
                schedule,
                driver,
                layer,
                forked,
                containers: self.containers(),
            });
            return;
        };
        let name_text = self.text_of(name);
        let mut scope = node;
        for up in self.lineage.ancestors(node) {
            scope = up;
            if matches!(scope.kind_str(), "statement_block" | "program") {
                break;
            }
        }
        let uses: Vec<Node<'t>> = self
            .uses_of(scope, name_text)
            .iter()
            .filter(|n| n.kind_str() == "identifier" && **n != name)
            .copied()
            .collect();
        let mut reported = false;
        for reference in uses {
            let (driver, forked, layer) = self.cron_context(reference);
            if driver.is_some() || forked || layer.is_some() {
                reported = true;
                self.facts.cron_repeats.push(CronRepeat {
                    span: Self::span(reference),
                    schedule: name_text.to_string(),
                    driver,
                    layer,
                    forked,
                    containers: self.containers(),
                });
            }
        }
        if !reported {
            self.facts.cron_repeats.push(CronRepeat {
                span: Self::span(node),
                schedule,
                driver: None,
                layer: None,
                forked: false,
                containers: self.containers(),
            });
        }
    }

    /// The repeat, fork and layer around a cron schedule (or a name bound to one).
    fn cron_context(&self, node: Node<'t>) -> (Option<String>, bool, Option<String>) {
        let mut driver = None;
        let mut forked = false;
        let mut layer = None;
        let mut current = node;
        for _ in 0..MAX_ANCESTORS {
            let Some(parent) = self.parent(current) else { break };
            current = parent;
            if parent.kind_str() != "call_expression" {
                continue;
            }
            let Some(callee) = parent.field("function") else {
                continue;
            };
            let callee_expr = self.expr(callee, MAX_EXPR_DEPTH - 3);
            match self.facts.effect_member(&callee_expr) {
                Some((module, member)) if driver.is_none() && REPEAT_DRIVERS.contains(&(module, member)) => {
                    driver = Some(format!("{module}.{member}"));
                }
                Some(("Effect", member)) if member.starts_with("fork") => forked = true,
                Some(("Layer", member)) if layer.is_none() => {
                    layer = Some(self.layer_name(parent, member));
                }
                _ => {}
            }
            // `….pipe(Effect.repeat(…), Effect.forkScoped)`: a fork among the pipe's steps.
            if let Some(arguments) = parent.field("arguments") {
                let mut cursor = arguments.walk();
                let steps: Vec<Node<'t>> = arguments.named_children(&mut cursor).collect();
                forked |= steps.iter().any(|step| {
                    let step = self.expr(*step, MAX_EXPR_DEPTH - 3);
                    let head = match &step {
                        Expr::Call { callee, .. } => callee.as_ref(),
                        other => other,
                    };
                    matches!(self.facts.effect_member(head), Some(("Effect", m)) if m.starts_with("fork"))
                });
            }
        }
        (driver, forked, layer)
    }

    /// A layer by its tag (`Layer.effect(Tag, …)`), the variable it is bound to, or its
    /// constructor.
    fn layer_name(&self, call: Node<'t>, member: &str) -> String {
        let tag = call
            .field("arguments")
            .and_then(|a| a.named_child(0))
            .filter(|a| matches!(a.kind_str(), "identifier" | "member_expression"))
            .map(|a| self.text_of(a).to_string());
        let mut up = self.parent(call);
        while let Some(node) = up.filter(|n| n.kind_str() != "variable_declarator") {
            up = self.parent(node);
        }
        let variable = up
            .and_then(|d| d.field("name"))
            .filter(|n| n.kind_str() == "identifier")
            .map(|n| self.text_of(n).to_string());
        tag.or(variable).unwrap_or_else(|| format!("Layer.{member}"))
    }

    // ---------------------------------------------------------------- Ref cursors

    fn cursor_access(&mut self, node: Node<'t>, member: &str, args: &[Node<'t>]) {
        let Some(reference) = args.first() else { return };
        let kind = match (member, args.len()) {
            ("getAndSet", 2) if self.is_clock_read(args[1], 0) => CursorKind::GetAndSetNow,
            ("getAndUpdate", 2) if self.returns_clock_read(args[1]) => CursorKind::GetAndSetNow,
            ("get", 1) => CursorKind::Get,
            ("set", 2) if self.is_clock_store(args[1]) => CursorKind::SetNow,
            // `Ref.update(cursors, HashMap.set(feed, now))`: a data-last setter.
            ("update", 2)
                if self.returns_clock_store(args[1])
                    || (args[1].kind_str() == "call_expression" && self.is_clock_store(args[1])) =>
            {
                CursorKind::SetNow
            }
            _ => return,
        };
        let (binding, passed_on) = match kind {
            CursorKind::SetNow => (None, false),
            _ => self.read_use(node),
        };
        self.facts.cursors.push(CursorAccess {
            kind,
            span: Self::span(node),
            reference: self.text_of(*reference).split_whitespace().collect(),
            binding,
            passed_on,
        });
    }

    /// Where a read value goes: the local it is bound to, and whether it is passed on.
    fn read_use(&self, read: Node<'t>) -> (Option<String>, bool) {
        self.read_use_at(read, 0)
    }

    fn read_use_at(&self, read: Node<'t>, depth: usize) -> (Option<String>, bool) {
        let mut top = read;
        while let Some(parent) = self.parent(top) {
            if matches!(
                parent.kind_str(),
                "yield_expression" | "await_expression" | "parenthesized_expression" | "as_expression"
            ) || (parent.kind_str() == "binary_expression"
                && parent.field("left") == Some(top)
                && parent
                    .field("operator")
                    .is_some_and(|o| matches!(self.text_of(o), "??" | "||")))
            {
                top = parent;
            } else {
                break;
            }
        }
        let Some(parent) = self.parent(top) else {
            return (None, false);
        };
        if parent.kind_str() != "variable_declarator" {
            return (None, self.is_passed_on(top, depth));
        }
        let Some(name) = parent.field("name").filter(|n| n.kind_str() == "identifier") else {
            return (None, false);
        };
        let name_text = self.text_of(name);
        // Uses after the declaration, in the enclosing block.
        let mut scope = parent;
        for up in self.lineage.ancestors(parent) {
            scope = up;
            if matches!(scope.kind_str(), "statement_block" | "program") {
                break;
            }
        }
        let declared_end = parent.end_byte();
        let passed_on = self
            .uses_of(scope, name_text)
            .iter()
            .filter(|n| n.start_byte() >= declared_end)
            .any(|n| self.is_passed_on(*n, depth));
        (Some(name_text.to_string()), passed_on)
    }

    /// Whether the value at `node` flows into a call that is not a log, or into a `sql` hole.
    fn is_passed_on(&self, node: Node<'t>, depth: usize) -> bool {
        let Some(parent) = self.parent(node) else { return false };
        if depth > 6 {
            return false;
        }
        match parent.kind_str() {
            "arguments" => {
                let Some(call) = self.parent(parent) else { return false };
                if call.kind_str() == "new_expression" {
                    return self.is_passed_on(call, depth + 1);
                }
                let callee = call.field("function").map(|c| self.text_of(c)).unwrap_or("");
                let last = callee.rsplit('.').next().unwrap_or(callee);
                !(LOG_CALLEES.contains(&last) || callee.starts_with("console."))
            }
            "template_substitution" => self
                .parent(parent)
                .and_then(|template| self.parent(template).map(|call| (template, call)))
                .is_some_and(|(template, call)| {
                    call.kind_str() == "call_expression"
                        && call.field("arguments") == Some(template)
                        && call.field("function").is_some_and(|tag| is_sql_tag(self.text_of(tag)))
                }),
            "pair" => self
                .parent(parent)
                .is_some_and(|object| self.is_passed_on(object, depth + 1)),
            "object" => self.is_passed_on(parent, depth + 1),
            "parenthesized_expression" | "as_expression" | "non_null_expression" | "satisfies_expression" => {
                self.is_passed_on(parent, depth + 1)
            }
            // `cursors.get(feed)` on a map of times read from a `Ref`: the entry read goes on.
            "member_expression"
                if parent.field("object") == Some(node)
                    && parent.field("property").is_some_and(|p| self.text_of(p) == "get") =>
            {
                self.parent(parent)
                    .filter(|call| call.kind_str() == "call_expression" && call.field("function") == Some(parent))
                    .is_some_and(|call| self.read_use_at(call, depth + 1).1)
            }
            _ => false,
        }
    }

    /// `Clock.currentTimeMillis`, `DateTime.now`, `Date.now()`, `new Date()`, or a local
    /// bound to one, behind `yield*` / `await`.
    pub(super) fn is_clock_read(&self, node: Node<'t>, depth: usize) -> bool {
        if depth > 4 {
            return false;
        }
        match node.kind_str() {
            "yield_expression" | "await_expression" | "parenthesized_expression" => {
                let mut cursor = node.walk();
                let inner = node.named_children(&mut cursor).last();
                inner.is_some_and(|inner| self.is_clock_read(inner, depth + 1))
            }
            "new_expression" => self.is_new_date_now(node),
            "identifier" => match self.lookup_local(self.text_of(node)) {
                Some((_, Some(value))) => self.is_clock_read(value, depth + 1),
                _ => false,
            },
            "member_expression" | "call_expression" => {
                let target = match node.kind_str() {
                    "call_expression" => match node.field("function") {
                        Some(callee) => callee,
                        None => return false,
                    },
                    _ => node,
                };
                let expr = self.expr(target, MAX_EXPR_DEPTH - 3);
                if expr.path().is_some_and(|p| p == ["Date", "now"]) {
                    return true;
                }
                matches!(
                    self.facts.effect_member(&expr),
                    Some(
                        ("Clock", "currentTimeMillis" | "currentTimeNanos")
                            | ("DateTime", "now" | "nowUnsafe" | "unsafeNow" | "nowInCurrentZone")
                    )
                )
            }
            _ => false,
        }
    }

    /// The current time, or a map of times that stores it under a key: `new Map(m).set(feed,
    /// now)`, `HashMap.set(m, feed, now)`, `{ ...m, [feed]: now }`.
    fn is_clock_store(&self, node: Node<'t>) -> bool {
        if self.is_clock_read(node, 0) {
            return true;
        }
        let mut cursor = node.walk();
        match node.kind_str() {
            "call_expression" => {
                let sets = node
                    .field("function")
                    .and_then(|f| f.field("property"))
                    .is_some_and(|p| self.text_of(p) == "set");
                let last = node.field("arguments").and_then(|a| {
                    let mut inner = a.walk();
                    let args: Vec<Node<'t>> = a
                        .named_children(&mut inner)
                        .filter(|c| c.kind_str() != "comment")
                        .collect();
                    (args.len() >= 2).then(|| args[args.len() - 1])
                });
                sets && last.is_some_and(|value| self.is_clock_read(value, 0))
            }
            "object" => node
                .named_children(&mut cursor)
                .any(|pair| pair.kind_str() == "pair" && pair.field("value").is_some_and(|v| self.is_clock_read(v, 0))),
            "parenthesized_expression" => node.named_children(&mut cursor).any(|inner| self.is_clock_store(inner)),
            _ => false,
        }
    }

    /// An update function that stores the current time: `() => Date.now()`, `(m) => new
    /// Map(m).set(feed, now)`, `(m) => { m.set(feed, now); return m }`.
    fn returns_clock_store(&self, function: Node<'t>) -> bool {
        if !matches!(function.kind_str(), "arrow_function" | "function_expression") {
            return false;
        }
        let Some(body) = function.field("body") else {
            return false;
        };
        if body.kind_str() != "statement_block" {
            return self.is_clock_store(body);
        }
        let mut cursor = body.walk();
        let stores = body.named_children(&mut cursor).any(|statement| {
            matches!(statement.kind_str(), "expression_statement" | "return_statement")
                && statement.named_child(0).is_some_and(|e| self.is_clock_store(e))
        });
        stores
    }

    /// `() => Date.now()` and friends: an update that stores the current time.
    fn returns_clock_read(&self, function: Node<'t>) -> bool {
        if !matches!(function.kind_str(), "arrow_function" | "function_expression") {
            return false;
        }
        function.field("body").is_some_and(|body| self.is_clock_read(body, 0))
    }

    /// `new Date()` with no arguments, `Date` being the global.
    fn is_new_date_now(&self, node: Node<'t>) -> bool {
        let Some(constructor) = node.field("constructor") else {
            return false;
        };
        let no_args = node.field("arguments").is_none_or(|a| a.named_child_count() == 0);
        no_args
            && self.text_of(constructor) == "Date"
            && self.lookup_local("Date").is_none()
            && self.facts.import("Date").is_none()
    }

    // ---------------------------------------------------------------- SQL texts

    fn sql_literal(&mut self, node: Node<'t>) {
        let tagged = self.walk_parent().is_some_and(|call| {
            call.kind_str() == "call_expression"
                && call.field("arguments") == Some(node)
                && call.field("function").is_some_and(|tag| is_sql_tag(self.text_of(tag)))
        });
        let (start, end) = (node.start_byte() + 1, node.end_byte().saturating_sub(1));
        // Most strings are not SQL: decide on the raw text before building anything.
        if start > end || !tagged && !looks_like_sql(self.slice(start, end)) {
            return;
        }
        let mut source = SqlSource::new();
        let mut pos = start;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if !matches!(child.kind_str(), "template_substitution" | "escape_sequence") {
                continue;
            }
            source.push_str(self.slice(pos, child.start_byte()), pos);
            let span = Self::span(child);
            if child.kind_str() == "template_substitution" {
                let mut inner = child.walk();
                let hole = child
                    .named_children(&mut inner)
                    .find(|c| c.kind_str() != "comment")
                    .map_or("", |e| self.text_of(e));
                source.push_hole(hole, span);
            } else if let Some(c) = crate::extract::decode_escape(self.text_of(child)) {
                source.push_decoded(c, span);
            }
            pos = child.end_byte();
        }
        source.push_str(self.slice(pos, end), pos);
        let origin = if tagged {
            SqlOrigin::TaggedTemplate
        } else {
            SqlOrigin::Literal
        };
        let sql = source.finish(Self::span(node), origin);
        sql_text::push(self.facts, sql);
    }

    fn slice(&self, start: usize, end: usize) -> &'t str {
        std::str::from_utf8(&self.text[start..end.max(start)]).unwrap_or("")
    }
}

/// `sql`, `db.sql`, `this.sql`: a template tag that builds a statement.
/// A cron wrapper's parameter: its name, or the keys a pattern binds (key, local name).
type WrapperParam<'t> = (Option<&'t str>, Vec<(String, &'t str)>);

fn is_function(node: Node) -> bool {
    matches!(
        node.kind_str(),
        "arrow_function"
            | "function_expression"
            | "function"
            | "function_declaration"
            | "generator_function"
            | "generator_function_declaration"
    )
}

fn is_sql_tag(tag: &str) -> bool {
    let last = tag.rsplit('.').next().unwrap_or(tag).trim();
    last.eq_ignore_ascii_case("sql")
}

/// Whether `name` is read anywhere under `node` (as an identifier or a shorthand property).
fn mentions_identifier(node: Node, name: &str, text: &[u8]) -> bool {
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        if matches!(n.kind_str(), "identifier" | "shorthand_property_identifier")
            && &text[n.byte_range()] == name.as_bytes()
        {
            return true;
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() || cursor.node() == node {
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {

    use crate::facts::sql::{SqlOrigin, StatementKind};
    use crate::facts::{CursorKind, FileFacts, SlotUse};
    use crate::source::Language;

    fn extract(text: &str) -> FileFacts {
        crate::extract::extract_file(Language::TypeScript, text.as_bytes())
    }

    #[test]
    fn jobs_and_their_slot() {
        let facts = extract(
            r#"
import { Effect } from "effect"
import { Jobs } from "../infra/jobs.js"
export const a = Jobs.make({ name: "a", cron: "0 3 * * *", exclusive: true, timeout: "5 minutes", run: (slot: Date) => trials.closeDueAt(slot) })
export const b = Jobs.make({ name: "b", cron: "0 3 * * *", run: () => trials.closeExpired() })
export const c = Jobs.make({ name: "c", cron: "0 3 * * *", run: (_slot) => Effect.log("closing") })
export const d = Jobs.make({ name: "d", cron: "0 3 * * *", run: closeAll })
export const e = Jobs.make({ name: "e", cron: "0 3 * * *", run(slot) { return Effect.gen(function* () { yield* x({ slot }) }) } })
"#,
        );
        let slots: Vec<(Option<&str>, &SlotUse)> = facts
            .jobs
            .iter()
            .map(|j| (j.name.as_deref(), &j.run.as_ref().unwrap().slot))
            .collect();
        assert_eq!(
            slots,
            [
                (Some("a"), &SlotUse::Used),
                (Some("b"), &SlotUse::Ignored { param: None }),
                (
                    Some("c"),
                    &SlotUse::Ignored {
                        param: Some("_slot".into())
                    }
                ),
                (Some("d"), &SlotUse::Unknown),
                (Some("e"), &SlotUse::Used),
            ]
        );
    }

    #[test]
    fn cron_wrappers_know_their_handlers_and_jobs_their_windows() {
        let facts = extract(
            r#"
import * as ClusterCron from "effect/unstable/cluster/ClusterCron"
import { Clock, Cron, DateTime, Effect } from "effect"
export const makeCronJob = (options: { name: string; cron: Cron.Cron; run: (slot: DateTime.Utc) => Effect.Effect<void> }) =>
  ClusterCron.make({ name: options.name, cron: options.cron, execute: Effect.gen(function* () {
    const now = yield* DateTime.now
    yield* options.run(DateTime.fromDateUnsafe(Cron.prev(options.cron, now)))
  }) })
export function cronJob(name: string, { run }: { run: (slot: Date) => Effect.Effect<void> }) {
  return ClusterCron.make({ name, cron: Cron.parseUnsafe("0 * * * *"), execute: Effect.flatMap(ClusterCron.CurrentScheduledTime, run) })
}
export const describe = (cron: string) => Schedule.cron(cron)
export const a = makeCronJob({ name: "a", cron: c, run: () => Effect.gen(function* () {
  const now = yield* Clock.currentTimeMillis
  yield* digests.sendSince(now - 3_600_000)
}) })
export const b = cronJob("b", { run: (slot) => digests.sendWindow(DateTime.subtract(slot, { hours: 1 })) })
export const c = helper((_slot) => Effect.gen(function* () { return DateTime.subtract(yield* DateTime.now, { days: 7 }) }))
export const d = later.then(() => Date.now() - 1000 > start)
"#,
        );
        let wrappers: Vec<String> = facts
            .cron_wrappers
            .iter()
            .map(|w| {
                let handlers: Vec<String> = w
                    .handlers
                    .iter()
                    .map(|h| format!("{}.{}", h.param, h.key.as_deref().unwrap_or("")))
                    .collect();
                format!("{}({})", w.name, handlers.join(", "))
            })
            .collect();
        // `options.cron` is only read, `cron` of `describe` is no handler: neither is called.
        assert_eq!(wrappers, ["makeCronJob(0.run)", "cronJob(1.run)"]);
        let windows: Vec<(&str, usize, Option<&str>, &SlotUse)> = facts
            .since_from_now
            .iter()
            .map(|s| (s.text.as_str(), s.arg, s.key.as_deref(), &s.slot))
            .collect();
        // `slot` minus an hour is no wall-clock window.
        assert_eq!(
            windows,
            [
                ("now - 3_600_000", 0, Some("run"), &SlotUse::Ignored { param: None }),
                (
                    "DateTime.subtract(yield* DateTime.now, { days: 7 })",
                    0,
                    None,
                    &SlotUse::Ignored {
                        param: Some("_slot".into())
                    }
                ),
                ("Date.now() - 1000", 0, None, &SlotUse::Ignored { param: None }),
            ]
        );
    }

    #[test]
    fn cron_repeats_know_their_driver_fork_and_layer() {
        let facts = extract(
            r#"
import { Effect, Layer, Ref, Clock, Schedule } from "effect"
export const NightlyLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const lastRun = yield* Ref.make(0)
    yield* Effect.gen(function* () {
      const since = yield* Ref.getAndSet(lastRun, yield* Clock.currentTimeMillis)
      yield* trials.closeExpiredSince(since)
    }).pipe(Effect.repeat(Schedule.cron("0 3 * * *")), Effect.forkScoped)
  }),
)
"#,
        );
        let [repeat] = facts.cron_repeats.as_slice() else {
            panic!("{:?}", facts.cron_repeats)
        };
        assert_eq!(repeat.driver.as_deref(), Some("Effect.repeat"));
        assert!(repeat.forked);
        assert_eq!(repeat.layer.as_deref(), Some("NightlyLive"));
        assert_eq!(repeat.schedule, "Schedule.cron(\"0 3 * * *\")");
        let [cursor] = facts.cursors.as_slice() else {
            panic!("{:?}", facts.cursors)
        };
        assert_eq!(cursor.kind, CursorKind::GetAndSetNow);
        assert_eq!(cursor.reference, "lastRun");
        assert_eq!(cursor.binding.as_deref(), Some("since"));
        assert!(cursor.passed_on);
    }

    #[test]
    fn a_last_run_time_that_is_only_logged_is_not_passed_on() {
        let facts = extract(
            r#"
import { Effect, Ref, Clock } from "effect"
const tick = (lastRun: Ref.Ref<number>) => Effect.gen(function* () {
  const previous = yield* Ref.getAndSet(lastRun, Date.now())
  yield* Effect.logInfo("previous run", previous)
  const last = yield* Ref.get(lastRun)
  yield* Effect.log(`last run at ${last}`)
})
"#,
        );
        let kinds: Vec<(CursorKind, bool)> = facts.cursors.iter().map(|c| (c.kind, c.passed_on)).collect();
        assert_eq!(kinds, [(CursorKind::GetAndSetNow, false), (CursorKind::Get, false)]);
        assert_eq!(facts.clock_reads.len(), 1, "Date.now()");
    }

    #[test]
    fn sql_templates_and_literals() {
        let facts = extract(
            r#"
const claim = (now: number) => sql`UPDATE jobs_leases SET lease_until = ${now + 60_000} WHERE lease_until < ${now}`
const text = "SELECT name FROM jobs_leases WHERE name = 'a\'b'"
const label = "Update your settings"
const fragment = sql`AND holder = ${runId}`
"#,
        );
        let origins: Vec<SqlOrigin> = facts.sql.iter().map(|s| s.origin).collect();
        assert_eq!(
            origins,
            [SqlOrigin::TaggedTemplate, SqlOrigin::Literal, SqlOrigin::TaggedTemplate]
        );
        assert_eq!(
            facts.sql[0].text,
            "UPDATE jobs_leases SET lease_until = $1 WHERE lease_until < $2"
        );
        assert_eq!(facts.sql[0].holes, ["now + 60_000", "now"]);
        assert_eq!(facts.sql[0].statements()[0].kind, StatementKind::Update);
        assert_eq!(facts.sql[1].text, "SELECT name FROM jobs_leases WHERE name = 'a'b'");
        assert!(facts.sql[2].statements().is_empty(), "a fragment does not parse");
        assert!(
            facts.notes.is_empty(),
            "a fragment is not a lease write: {:?}",
            facts.notes
        );
    }
}
