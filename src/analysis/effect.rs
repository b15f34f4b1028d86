//! From [`Expr`] to the schedule IR: names resolved through the index, same-file helpers
//! called with their arguments substituted, `pipe` and method forms, v4 and v3 combinators.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::model::Problem;
use crate::effect_version::EffectVersion;
use crate::facts::{Expr, FileFacts, ImportKind, PolicyArg, Retried, RetrySite};
use crate::index::{FileId, Index, Resolved};
use crate::schedule::api::Api;
use crate::schedule::duration::{parse as parse_duration, unit_millis};
use crate::schedule::{BinOp, Callback, Lambda, Param, Sched, Term};
use crate::source::Span;

/// Evaluation steps allowed per expression: bounds the work on recursive helpers.
const FUEL: u32 = 4000;
const MAX_DEPTH: u32 = 48;

/// A value during evaluation.
#[derive(Debug, Clone)]
enum Val<'p> {
    Sched(Sched),
    Num(f64),
    /// A duration in milliseconds.
    Dur(f64),
    Str(String, FileId, Span),
    Func(Func<'p>),
    /// A data-last combinator waiting for its schedule: `Schedule.jittered`, `Schedule.upTo({…})`.
    Op(Op),
    Obj(Vec<(String, Val<'p>)>),
    Arr(Vec<Val<'p>>),
    Bool(bool),
    /// A data-last `Duration` comparison waiting for its operand, `Duration.lessThanOrEqualTo(d)`
    /// as a `whileOutput` test: `output <op> d`, with `d` when the model knows it.
    Compare(BinOp, Option<f64>),
    /// `undefined`: a field a preset does not set, an argument not passed.
    Undefined,
    Unknown,
}

impl<'p> Val<'p> {
    /// JavaScript's truthiness, when the model knows the value.
    fn truthy(&self) -> Option<bool> {
        match self {
            Val::Bool(b) => Some(*b),
            Val::Undefined => Some(false),
            Val::Num(n) => Some(*n != 0.0 && !n.is_nan()),
            Val::Str(s, ..) => Some(!s.is_empty()),
            Val::Sched(_) | Val::Dur(_) | Val::Func(_) | Val::Op(_) | Val::Obj(_) | Val::Arr(_) | Val::Compare(..) => {
                Some(true)
            }
            Val::Unknown => None,
        }
    }

    /// What `typeof` says of the value.
    fn type_name(&self) -> Option<&'static str> {
        Some(match self {
            Val::Str(..) => "string",
            Val::Num(_) => "number",
            Val::Bool(_) => "boolean",
            Val::Undefined => "undefined",
            Val::Func(_) | Val::Op(_) | Val::Compare(..) => "function",
            Val::Sched(_) | Val::Dur(_) | Val::Obj(_) | Val::Arr(_) => "object",
            Val::Unknown => return None,
        })
    }

    /// `a === b` for values the model knows whole (strings, numbers, booleans, `undefined`).
    fn strict_equals(&self, other: &Val) -> Option<bool> {
        match (self, other) {
            (Val::Str(a, ..), Val::Str(b, ..)) => Some(a == b),
            (Val::Num(a), Val::Num(b)) => Some(a == b),
            (Val::Bool(a), Val::Bool(b)) => Some(a == b),
            (Val::Undefined, Val::Undefined) => Some(true),
            (a, b) if a.is_primitive() && b.is_primitive() => Some(false),
            (Val::Undefined, b) | (b, Val::Undefined) if b.type_name().is_some() => Some(false),
            _ => None,
        }
    }

    fn is_primitive(&self) -> bool {
        matches!(self, Val::Str(..) | Val::Num(_) | Val::Bool(_) | Val::Undefined)
    }

    /// A field of an object literal the model reads whole: `undefined` when it is not set.
    fn field(&self, key: &str) -> Val<'p> {
        match self {
            Val::Obj(fields) if !fields.iter().any(|(k, _)| k == "...") => fields
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map_or(Val::Undefined, |(_, v)| v.clone()),
            Val::Arr(items) if key == "length" => Val::Num(items.len() as f64),
            Val::Str(text, ..) if key == "length" => Val::Num(text.chars().count() as f64),
            _ => Val::Unknown,
        }
    }
}

#[derive(Debug, Clone)]
struct Func<'p> {
    file: FileId,
    params: &'p [String],
    defaults: &'p [Option<Expr>],
    body: Option<&'p Expr>,
    env: Rc<Env<'p>>,
}

type Env<'p> = HashMap<String, Val<'p>>;

#[derive(Debug, Clone)]
enum Op {
    Jittered {
        min: f64,
        max: f64,
    },
    Times(u64),
    /// v4 `upTo({ times, duration })`.
    TimesWithin {
        times: u64,
        limit: f64,
    },
    During {
        limit: f64,
        strict: bool,
    },
    While(Callback),
    AddDelay(Callback),
    ModifyDelay(Callback),
    Max(Sched),
    Min(Sched),
    Concat(Sched),
    /// Leaves the timing unchanged and replaces the output (`map`, `passthrough`, `delays`).
    Output(Callback),
    /// Several in turn.
    Chain(Vec<Op>),
    /// One of several, picked at run time: a delay callback `(e) => test(e) ? a : b` whose
    /// test reads the failure.
    Either(Vec<Op>),
    /// Leaves timing and output unchanged (`tapOutput`, `mapInput`, …).
    Identity,
    /// v3 `whileOutput(f)` with a test the model cannot read: a predicate on the failure when
    /// the output is the input passed through, else an unknown bound.
    WhileOutputOpaque,
    /// `whileOutput(Duration.lessThan(limit))` with a limit the model cannot read (a
    /// parameter): over the elapsed time (`compose(Schedule.elapsed)`), a time window of some
    /// length; over another output, an unknown bound.
    WhileOutputBelowSome,
    Unknown,
}

/// Which positional callback argument means which metadata field, per combinator.
#[derive(Clone, Copy)]
enum CallbackShape {
    /// v4: one metadata object `{ attempt, elapsed, duration, output, input }`.
    Metadata,
    /// v3 `modifyDelay((out, duration) => …)`.
    OutputDuration,
    /// v3 `delayed((duration) => …)`.
    Duration,
    /// v3 `addDelay((out) => …)`, `whileOutput((out) => …)`.
    Output,
}

pub struct Evaluator<'p> {
    index: &'p Index,
    /// The file's `effect` version as an [`EffectVersion::code`]: which `Schedule` exports
    /// exist and how they behave.
    version: u8,
    fuel: Cell<u32>,
    depth: Cell<u32>,
    pub problems: RefCell<Vec<Problem>>,
    /// Expressions of the evaluated file read as if piped through `Schedule.jittered`: what a
    /// jitter fix would make of the policy.
    jittered_at: Vec<(FileId, Span)>,
}

/// Evaluates a schedule expression written in `file`.
pub fn evaluate_schedule(index: &Index, file: FileId, expr: &Expr, version: u8) -> (Sched, Vec<Problem>) {
    let evaluator = Evaluator::new(index, version);
    let sched = evaluator.schedule(file, expr);
    (sched, evaluator.problems.into_inner())
}

/// The schedule a retry site runs: its options (`schedule`, `times`) or bare schedule, with
/// Effect's defaults (`Effect.retry({})` and `retryTransient()` without limits retry forever,
/// with no delay).
pub fn evaluate_policy(index: &Index, file: FileId, site: &RetrySite, version: u8) -> (Sched, Vec<Problem>) {
    let evaluator = Evaluator::new(index, version);
    let sched = match &site.policy {
        PolicyArg::Default if site.retried == Retried::Client => Sched::Forever,
        PolicyArg::Effect(policy) => evaluator.policy(file, policy),
        _ => Sched::Unknown,
    };
    (sched, evaluator.problems.into_inner())
}

/// What `expr` (a schedule, or `Effect.retry` options) would be with each expression of
/// `file` spanning one of `at` piped through `Schedule.jittered`: how a jitter fix is checked
/// to clear its finding before it is offered.
pub fn evaluate_jittered(index: &Index, file: FileId, expr: &Expr, version: u8, at: &[Span]) -> Sched {
    let mut evaluator = Evaluator::new(index, version);
    evaluator.jittered_at = at.iter().map(|span| (file, *span)).collect();
    evaluator.policy(file, expr)
}

/// What a policy factory of `file` (`(preset) => …`, a function value) builds: called with
/// every argument unknown when `presets` is `None` (what holds for every argument), else with
/// those strings (`schedule("patient")`). A factory returning retry options is read as them.
pub fn evaluate_factory(
    index: &Index,
    file: FileId,
    factory: &Expr,
    version: u8,
    presets: Option<&[String]>,
) -> (Sched, Vec<Problem>) {
    let evaluator = Evaluator::new(index, version);
    let sched = match evaluator.eval(file, factory, &Env::new()) {
        Val::Func(func) => {
            let args = match presets {
                None => vec![Val::Unknown; func.params.len()],
                Some(presets) => presets
                    .iter()
                    .map(|p| Val::Str(p.clone(), file, factory.span()))
                    .collect(),
            };
            let value = evaluator.apply_func(&func, args);
            evaluator.options_or_schedule(value)
        }
        _ => Sched::Unknown,
    };
    (sched, evaluator.problems.into_inner())
}

/// The policy a project helper's retry runs when the helper is called with `args` (written in
/// `caller`): `policy` (the retry's schedule or options, written in `helper_file`) read with the
/// helper's parameters bound to the arguments. Only the argument `options` (the options
/// object that passes the policy) is read; the others are unknown.
#[allow(clippy::too_many_arguments)]
pub fn evaluate_passed(
    index: &Index,
    caller: FileId,
    args: &[Expr],
    options: usize,
    helper_file: FileId,
    helper: &Expr,
    policy: &Expr,
    version: u8,
) -> (Sched, Vec<Problem>) {
    let evaluator = Evaluator::new(index, version);
    let sched = match evaluator.eval(helper_file, helper, &Env::new()) {
        Val::Func(func) => {
            let values = (0..args.len())
                .map(|i| match i == options {
                    true => evaluator.eval(caller, &args[i], &Env::new()),
                    false => Val::Unknown,
                })
                .collect();
            let env = evaluator.bind_params(&func, values);
            let value = evaluator.eval(helper_file, policy, &env);
            evaluator.options_or_schedule(value)
        }
        _ => Sched::Unknown,
    };
    (sched, evaluator.problems.into_inner())
}

/// Evaluates an expression that is either a schedule or `Effect.retry` options.
pub fn evaluate_policy_expr(index: &Index, file: FileId, expr: &Expr, version: u8) -> (Sched, Vec<Problem>) {
    let evaluator = Evaluator::new(index, version);
    let sched = evaluator.policy(file, expr);
    (sched, evaluator.problems.into_inner())
}

impl<'p> Evaluator<'p> {
    pub fn new(index: &'p Index, version: u8) -> Evaluator<'p> {
        Evaluator {
            index,
            version,
            fuel: Cell::new(FUEL),
            depth: Cell::new(0),
            problems: RefCell::new(Vec::new()),
            jittered_at: Vec::new(),
        }
    }

    fn schedule(&self, file: FileId, expr: &'p Expr) -> Sched {
        let value = self.eval(file, expr, &Env::new());
        self.to_sched(value)
    }

    /// An `Effect.retry` argument: an options object or a schedule.
    fn policy(&self, file: FileId, expr: &'p Expr) -> Sched {
        let value = self.eval(file, expr, &Env::new());
        self.options_or_schedule(value)
    }

    fn options_or_schedule(&self, value: Val<'p>) -> Sched {
        let Val::Obj(fields) = value else {
            return self.to_sched(value);
        };
        if fields.iter().any(|(k, _)| k == "...") {
            return Sched::Unknown;
        }
        let field = |name: &str| fields.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let schedule = match field("schedule") {
            Some(value) => self.to_sched(value),
            None => Sched::Forever,
        };
        match field("times") {
            Some(Val::Num(n)) if n >= 0.0 => Sched::Times(Box::new(schedule), n as u64),
            // `times: config.retries`: some count.
            Some(_) => Sched::Max(vec![schedule, Sched::RecursSome]),
            // An `ExecutionPlan` step's `attempts` count its first try: `attempts - 1` retries.
            None => match field("attempts") {
                None => schedule,
                Some(Val::Num(n)) if n >= 1.0 => Sched::Times(Box::new(schedule), n as u64 - 1),
                Some(_) => Sched::Max(vec![schedule, Sched::RecursSome]),
            },
        }
    }

    fn to_sched(&self, value: Val<'p>) -> Sched {
        match value {
            Val::Sched(s) => s,
            _ => Sched::Unknown,
        }
    }

    fn eval(&self, file: FileId, expr: &'p Expr, env: &Env<'p>) -> Val<'p> {
        let fuel = self.fuel.get();
        if fuel == 0 || self.depth.get() > MAX_DEPTH {
            return Val::Unknown;
        }
        self.fuel.set(fuel - 1);
        self.depth.set(self.depth.get() + 1);
        let mut value = self.eval_inner(file, expr, env);
        self.depth.set(self.depth.get() - 1);
        if !self.jittered_at.is_empty() && self.jittered_at.contains(&(file, expr.span())) {
            if let Val::Sched(s) = value {
                value = Val::Sched(apply_op(s, Op::Jittered { min: 0.8, max: 1.2 }));
            }
        }
        value
    }

    fn eval_inner(&self, file: FileId, expr: &'p Expr, env: &Env<'p>) -> Val<'p> {
        let Some(facts) = self.index.facts(file) else {
            return Val::Unknown;
        };
        match expr {
            Expr::Num(n, _) => Val::Num(*n),
            Expr::Str(s, span) => Val::Str(s.clone(), file, *span),
            Expr::Bool(b, _) => Val::Bool(*b),
            Expr::Unary { op, arg, .. } => {
                let value = self.eval(file, arg, env);
                match op.as_str() {
                    "typeof" => match value.type_name() {
                        Some(name) => Val::Str(name.to_string(), file, expr.span()),
                        None => Val::Unknown,
                    },
                    "!" => value.truthy().map_or(Val::Unknown, |b| Val::Bool(!b)),
                    _ => Val::Unknown,
                }
            }
            Expr::Index { object, index, .. } => {
                let object = self.eval(file, object, env);
                match (object, self.eval(file, index, env)) {
                    (object @ Val::Obj(_), Val::Str(key, ..)) => object.field(&key),
                    (Val::Arr(items), Val::Num(i)) if i >= 0.0 && i.fract() == 0.0 => {
                        items.into_iter().nth(i as usize).unwrap_or(Val::Undefined)
                    }
                    _ => Val::Unknown,
                }
            }
            // `a ?? b`, `a || b`, `a && b`: the operand the value is, when the left one is known.
            Expr::Binary { op, left, right, .. } if matches!(op.as_str(), "??" | "||" | "&&") => {
                let first = self.eval(file, left, env);
                let take_left = match op.as_str() {
                    "??" => match first {
                        Val::Undefined => Some(false),
                        Val::Unknown => None,
                        _ => Some(true),
                    },
                    "||" => first.truthy(),
                    _ => first.truthy().map(|b| !b),
                };
                match take_left {
                    Some(true) => first,
                    Some(false) => self.eval(file, right, env),
                    None => Val::Unknown,
                }
            }
            Expr::Opaque(_) | Expr::Binary { .. } => match expr {
                Expr::Binary { op, left, right, .. } => {
                    let (a, b) = (self.eval(file, left, env), self.eval(file, right, env));
                    if let "===" | "!==" | "==" | "!=" = op.as_str() {
                        let negated = op.starts_with('!');
                        return a
                            .strict_equals(&b)
                            .map_or(Val::Unknown, |equal| Val::Bool(equal != negated));
                    }
                    match (a, b) {
                        (Val::Num(a), Val::Num(b)) => match op.as_str() {
                            "+" => Val::Num(a + b),
                            "-" => Val::Num(a - b),
                            "*" => Val::Num(a * b),
                            "/" => Val::Num(a / b),
                            "**" => Val::Num(a.powf(b)),
                            "<" => Val::Bool(a < b),
                            "<=" => Val::Bool(a <= b),
                            ">" => Val::Bool(a > b),
                            ">=" => Val::Bool(a >= b),
                            _ => Val::Unknown,
                        },
                        _ => Val::Unknown,
                    }
                }
                _ => Val::Unknown,
            },
            Expr::Ident(name, _) => {
                if let Some(value) = env.get(name) {
                    return value.clone();
                }
                if name == "undefined" {
                    return Val::Undefined;
                }
                if let Some(value) = self.effect_value(facts, expr) {
                    return value;
                }
                self.resolved(file, expr)
            }
            Expr::Member(..) => {
                if let Some(value) = self.effect_value(facts, expr) {
                    return value;
                }
                // `meta.duration` inside a callback body is handled by the callback compiler.
                match self.resolved(file, expr) {
                    // A field of an object the model holds (`o.base` of a preset).
                    Val::Unknown => match expr {
                        Expr::Member(object, field, _) => self.eval(file, object, env).field(field),
                        _ => Val::Unknown,
                    },
                    value => value,
                }
            }
            Expr::Param(name, _) => env.get(name).cloned().unwrap_or(Val::Unknown),
            // Either branch may run: each schedule is judged (options objects too).
            Expr::Cond {
                test, then, otherwise, ..
            } if self.condition(file, test, env).is_some() => {
                let taken = if self.condition(file, test, env) == Some(true) {
                    then
                } else {
                    otherwise
                };
                self.eval(file, taken, env)
            }
            Expr::Cond { then, otherwise, .. } => match (self.eval(file, then, env), self.eval(file, otherwise, env)) {
                (Val::Sched(a), Val::Sched(b)) => Val::Sched(Sched::Choice(vec![a, b])),
                // A branch the model cannot see stays unknown, but a defect of the other
                // branch is still the policy's: `cond ? Schedule.spaced(…) : imported`.
                (a @ (Val::Obj(_) | Val::Sched(_)), b) | (a, b @ (Val::Obj(_) | Val::Sched(_)))
                    if matches!(a, Val::Obj(_) | Val::Sched(_) | Val::Unknown)
                        && matches!(b, Val::Obj(_) | Val::Sched(_) | Val::Unknown) =>
                {
                    Val::Sched(Sched::Choice(vec![
                        self.options_or_schedule(a),
                        self.options_or_schedule(b),
                    ]))
                }
                (Val::Num(a), Val::Num(b)) if a == b => Val::Num(a),
                _ => Val::Unknown,
            },
            Expr::Local { value, .. } => self.eval(file, value, env),
            Expr::Function {
                params, body, defaults, ..
            } => Val::Func(Func {
                file,
                params,
                defaults,
                body: body.as_deref(),
                env: Rc::new(env.clone()),
            }),
            Expr::Object(props, _) => Val::Obj(
                props
                    .iter()
                    .map(|p| {
                        let value = if p.key == "..." {
                            Val::Unknown
                        } else {
                            self.eval(file, &p.value, env)
                        };
                        (p.key.clone(), value)
                    })
                    .collect(),
            ),
            Expr::Array(items, _) => Val::Arr(items.iter().map(|i| self.eval(file, i, env)).collect()),
            Expr::Call { callee, args, .. } => self.call(file, callee, args, env),
        }
    }

    /// A condition known without running the program: `true`, `!false`,
    /// `Schedule.isSchedule(<a schedule>)`. Anything else is `None`, and both branches are judged.
    fn condition(&self, file: FileId, test: &'p Expr, env: &Env<'p>) -> Option<bool> {
        match test {
            Expr::Bool(b, _) => Some(*b),
            Expr::Call { callee, args, .. } => {
                let facts = self.index.facts(file)?;
                let shadowed = matches!(callee.as_ref(), Expr::Ident(name, _) if env.contains_key(name));
                match facts.effect_member(callee) {
                    Some(("Schedule", "isSchedule")) if !shadowed && args.len() == 1 => {
                        // A schedule the model cannot run is still a schedule.
                        let built_by_schedule = |e: &Expr| match e {
                            Expr::Call { callee, .. } => {
                                matches!(facts.effect_member(callee), Some(("Schedule", _)))
                            }
                            _ => matches!(facts.effect_member(e), Some(("Schedule", _))),
                        };
                        (built_by_schedule(&args[0]) || matches!(self.eval(file, &args[0], env), Val::Sched(_)))
                            .then_some(true)
                    }
                    _ => self.eval(file, test, env).truthy(),
                }
            }
            _ => self.eval(file, test, env).truthy(),
        }
    }

    /// A name resolved through the index to a binding's value, evaluated where it is defined.
    fn resolved(&self, file: FileId, expr: &'p Expr) -> Val<'p> {
        match self.index.resolve_path(file, expr) {
            Resolved::Value {
                file: target, value, ..
            } => self.eval(target, value, &Env::new()),
            _ => Val::Unknown,
        }
    }

    /// `Schedule.forever`, `Schedule.jittered` (as a value), `Duration.zero`, ….
    fn effect_value(&self, facts: &'p FileFacts, expr: &'p Expr) -> Option<Val<'p>> {
        let (module, member) = facts.effect_member(expr)?;
        let api = Api::new(EffectVersion::from_code(self.version));
        Some(match (module, member) {
            ("Schedule", member) if !api.has(member) => Val::Unknown,
            // 3.x `count` is `unfold(0, n => n + 1)`, and the public `repeatForever` is
            // `forever` itself: `forever`.
            ("Schedule", "forever" | "count" | "repeatForever") => Val::Sched(Sched::Forever),
            ("Schedule", "elapsed") => Val::Sched(Sched::Output(
                Box::new(Sched::Forever),
                Callback::Known(Rc::new(Lambda {
                    params: Vec::new(),
                    body: Term::Var("elapsed".into()),
                })),
            )),
            ("Schedule", "once") => Val::Sched(Sched::Recurs(1)),
            ("Schedule", "stop") => Val::Sched(Sched::Recurs(0)),
            ("Schedule", "jittered") => Val::Op(Op::Jittered { min: 0.8, max: 1.2 }),
            // Unary combinators passed to `pipe`: the same timing, another output.
            (
                "Schedule",
                "asVoid" | "passthrough" | "collectAllOutputs" | "collectOutputs" | "collectInputs" | "repetitions",
            ) => Val::Op(Op::Output(Callback::Unknown)),
            ("Schedule", "delays") => Val::Op(Op::Output(Callback::Known(Rc::new(Lambda {
                params: Vec::new(),
                body: Term::Var("duration".into()),
            })))),
            ("Schedule", "delayedSchedule") => Val::Op(Op::AddDelay(Callback::Known(Rc::new(Lambda {
                params: Vec::new(),
                body: Term::Var("output".into()),
            })))),
            ("Duration", "zero") => Val::Dur(0.0),
            ("Duration", "infinity") => Val::Dur(f64::INFINITY),
            // A function of the module used as a value (`.pipe(Schedule.upTo)` is not a thing),
            // or a member the model does not know.
            _ => Val::Unknown,
        })
    }

    fn call(&self, file: FileId, callee: &'p Expr, args: &'p [Expr], env: &Env<'p>) -> Val<'p> {
        let Some(facts) = self.index.facts(file) else {
            return Val::Unknown;
        };
        let callee_is_shadowed =
            matches!(callee, Expr::Param(..)) || matches!(callee, Expr::Ident(name, _) if env.contains_key(name));
        if !callee_is_shadowed {
            if let Some((module, member)) = facts.effect_member(callee) {
                let values: Vec<Val<'p>> = args.iter().map(|a| self.eval(file, a, env)).collect();
                return match module {
                    "Schedule" => self.schedule_call(member, values),
                    "Duration" => match data_last_comparison(member, &values) {
                        Some(compare) => compare,
                        None => duration_call(member, &values).map(Val::Dur).unwrap_or(Val::Unknown),
                    },
                    "Effect" if member == "succeed" => values.into_iter().next().unwrap_or(Val::Unknown),
                    "Function" if member == "pipe" => self.pipe(values),
                    _ => Val::Unknown,
                };
            }
            if is_effect_pipe(facts, callee) {
                let values: Vec<Val<'p>> = args.iter().map(|a| self.eval(file, a, env)).collect();
                return self.pipe(values);
            }
        }
        // `x.pipe(f, g)`
        if let Expr::Member(object, method, _) = callee {
            if method == "pipe" {
                let mut values = vec![self.eval(file, object, env)];
                values.extend(args.iter().map(|a| self.eval(file, a, env)));
                return self.pipe(values);
            }
        }
        match self.eval(file, callee, env) {
            Val::Func(func) => {
                let values: Vec<Val<'p>> = args.iter().map(|a| self.eval(file, a, env)).collect();
                self.apply_func(&func, values)
            }
            _ => Val::Unknown,
        }
    }

    fn apply_func(&self, func: &Func<'p>, args: Vec<Val<'p>>) -> Val<'p> {
        let Some(body) = func.body else { return Val::Unknown };
        let env = self.bind_params(func, args);
        self.eval(func.file, body, &env)
    }

    /// The environment of `func`'s body called with `args`: its parameters bound to them.
    fn bind_params(&self, func: &Func<'p>, args: Vec<Val<'p>>) -> Env<'p> {
        let mut env = (*func.env).clone();
        for (i, param) in func.params.iter().enumerate() {
            // An argument not passed (or `undefined`) takes the parameter's default; with
            // none, it is unknown.
            let mut value = args.get(i).cloned().unwrap_or(Val::Undefined);
            if let Val::Undefined = value {
                value = match func.defaults.get(i) {
                    Some(Some(default)) => self.eval(func.file, default, &env),
                    _ if i >= args.len() => Val::Unknown,
                    _ => Val::Undefined,
                };
            }
            // `{ base, cap: limit }`: the fields of an object argument; any other pattern binds
            // nothing the model can follow.
            if let Some(fields) = param.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                if fields.contains(['{', '[', '=']) {
                    continue;
                }
                for field in fields.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                    let (key, name) = match field.split_once(':') {
                        Some((key, name)) => (key.trim(), name.trim()),
                        None => (field, field),
                    };
                    if key.starts_with("...") {
                        continue;
                    }
                    env.insert(name.to_string(), value.field(key));
                }
                continue;
            }
            if param.starts_with('[') {
                continue;
            }
            if let Some(rest) = param.strip_prefix("...") {
                env.insert(rest.to_string(), Val::Unknown);
                continue;
            }
            env.insert(param.clone(), value);
        }
        env
    }

    fn pipe(&self, values: Vec<Val<'p>>) -> Val<'p> {
        let mut iter = values.into_iter();
        let Some(mut current) = iter.next() else {
            return Val::Unknown;
        };
        for f in iter {
            current = match f {
                Val::Op(op) => match current {
                    Val::Sched(s) => Val::Sched(apply_op(s, op)),
                    _ => Val::Unknown,
                },
                Val::Func(func) => self.apply_func(&func, vec![current]),
                _ => Val::Unknown,
            };
        }
        current
    }

    fn duration(&self, value: &Val<'p>) -> Option<f64> {
        match value {
            Val::Num(n) => Some(*n),
            Val::Dur(ms) => Some(*ms),
            Val::Str(text, file, span) => {
                let parsed = parse_duration(text);
                if parsed.is_none() {
                    self.problems.borrow_mut().push(Problem {
                        file: *file,
                        span: *span,
                        message: format!("invalid duration \"{text}\": Effect throws when it builds this schedule"),
                    });
                }
                parsed
            }
            _ => None,
        }
    }

    fn count(&self, value: &Val<'p>) -> Option<u64> {
        match value {
            Val::Num(n) if *n >= 0.0 && n.fract() == 0.0 => Some(*n as u64),
            _ => None,
        }
    }

    /// `Schedule.<name>(args)`: constructors, and combinators in data-first or data-last form,
    /// as the file's `effect` version defines them. A name the version does not export is
    /// unknown.
    fn schedule_call(&self, name: &str, args: Vec<Val<'p>>) -> Val<'p> {
        let api = Api::new(EffectVersion::from_code(self.version));
        if !api.has(name) {
            return Val::Unknown;
        }
        let v3 = api.is_v3();
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Val::Unknown);
        let dur = |i: usize| self.duration(&arg(i));
        let sched = |s: Option<Sched>| Val::Sched(s.unwrap_or(Sched::Unknown));
        // A value the model cannot read (a parameter, `Config.*`, a template literal): only
        // what depends on it is unknown. An invalid literal stays wholly unknown.
        let unread = |i: usize| matches!(args.get(i), Some(Val::Unknown));
        // `sched`, or `some` when argument `i` is a value the model cannot read.
        let or_some = |s: Option<Sched>, i: usize, some: Sched| match s {
            None if unread(i) => Val::Sched(some),
            s => sched(s),
        };
        let first_is_schedule = matches!(args.first(), Some(Val::Sched(_)));
        // A dual combinator: data-first when the schedule comes first, else a pipeable.
        let dual = |op: Op, data_first_arity: usize| -> Val<'p> {
            if first_is_schedule && args.len() >= data_first_arity {
                match arg(0) {
                    Val::Sched(s) => Val::Sched(apply_op(s, op)),
                    _ => Val::Unknown,
                }
            } else {
                Val::Op(op)
            }
        };
        // The argument after the schedule (data-first) or the first (data-last).
        let operand = |i: usize| if first_is_schedule { arg(i + 1) } else { arg(i) };
        // A unary combinator called on its schedule (`Schedule.passthrough(s)`).
        let unary = |op: Op| match arg(0) {
            Val::Sched(s) if args.len() == 1 => Val::Sched(apply_op(s, op)),
            _ => Val::Unknown,
        };
        // A schedule that never stops, with no delay and an output the model does not follow
        // (`identity()`, `unfold`, `fromFunction`, …).
        let opaque_output_forever = || Sched::Output(Box::new(Sched::Forever), Callback::Unknown);
        // A constructor whose recurrence depends on the input (the error): `recurWhile(f)`.
        let input_predicate = || Val::Sched(Sched::While(Box::new(opaque_output_forever()), Callback::OnInput));
        let delay_shape = if api.positional_delay_callbacks() {
            CallbackShape::OutputDuration
        } else {
            CallbackShape::Metadata
        };
        let add_delay_shape = if api.positional_delay_callbacks() {
            CallbackShape::Output
        } else {
            CallbackShape::Metadata
        };
        match name {
            "exponential" => {
                let factor = match args.get(1) {
                    None => Some(2.0),
                    Some(Val::Num(f)) => Some(*f),
                    Some(_) => None,
                };
                // An unknown base with a known factor still grows (or stays constant).
                let some = match factor {
                    Some(f) if f > 1.0 => Sched::GrowingSome,
                    Some(1.0) => Sched::SpacedSome,
                    _ => Sched::Unknown,
                };
                or_some(
                    dur(0)
                        .zip(factor)
                        .map(|(base, factor)| Sched::Exponential { base, factor }),
                    0,
                    some,
                )
            }
            "fibonacci" => or_some(
                dur(0).map(|base| Sched::Fibonacci {
                    base,
                    skip_first: api.fibonacci_skips_first(),
                }),
                0,
                Sched::GrowingSome,
            ),
            "spaced" => or_some(dur(0).map(Sched::Spaced), 0, Sched::SpacedSome),
            "fixed" => or_some(dur(0).map(Sched::Fixed), 0, Sched::SpacedSome),
            "windowed" => or_some(dur(0).map(Sched::Windowed), 0, Sched::SpacedSome),
            "linear" => or_some(dur(0).map(Sched::Linear), 0, Sched::GrowingSome),
            "recurs" => match self.count(&arg(0)) {
                Some(n) => Val::Sched(Sched::Recurs(n)),
                // A count from configuration: unknown, but a count.
                None if args.len() == 1 && matches!(arg(0), Val::Unknown) => Val::Sched(Sched::RecursSome),
                None => Val::Unknown,
            },
            "duration" | "fromDelay" => sched(dur(0).map(|d| Sched::FromDelays(vec![d]))),
            "during" if api.during_is_inverted() => Val::Unknown,
            "during" => or_some(
                dur(0).map(|limit| Sched::During { limit, strict: false }),
                0,
                Sched::DuringSome,
            ),
            "fromDelays" => {
                let delays: Option<Vec<f64>> = args.iter().map(|a| self.duration(a)).collect();
                sched(delays.map(Sched::FromDelays))
            }
            // Wall-clock schedules: the delays depend on when the retry starts.
            "cron" | "dayOfMonth" | "dayOfWeek" | "hourOfDay" | "minuteOfHour" | "secondOfMinute" => {
                Val::Sched(Sched::Cron)
            }
            "identity" | "fromFunction" | "succeed" | "sync" | "unfold" | "collectAllInputs" => {
                Val::Sched(opaque_output_forever())
            }
            "recurWhile" | "recurUntil" | "recurWhileEffect" | "recurUntilEffect" | "recurUntilOption"
            | "collectUntil" | "collectUntilEffect" | "collectWhileEffect" => input_predicate(),
            // 3.x `collectWhile(f)` builds a schedule over the input; the betas'
            // `collectWhile(self, f)` is `while` with the outputs collected.
            "collectWhile" if v3 || (api.version == EffectVersion::Unknown && args.len() == 1) => input_predicate(),
            "collectWhile" if api.version == EffectVersion::Unknown && !first_is_schedule => Val::Unknown,
            "collectWhile" => {
                let f = operand(0);
                // As for `while`: a test that reads the input (the failure) is a predicate.
                let test = if reads_input(&f) {
                    Callback::OnInput
                } else {
                    self.callback(f, CallbackShape::Metadata)
                };
                dual(Op::Chain(vec![Op::While(test), Op::Output(Callback::Unknown)]), 2)
            }
            // 4.x: max([...]) / min([...])
            "max" | "min" if matches!(args.first(), Some(Val::Arr(_))) => {
                let Some(Val::Arr(items)) = args.into_iter().next() else {
                    return Val::Unknown;
                };
                let children: Vec<Sched> = items.into_iter().map(|i| self.to_sched(i)).collect();
                Val::Sched(if name == "max" {
                    Sched::Max(children)
                } else {
                    Sched::Min(children)
                })
            }
            // Both must continue, with the larger delay; the extra argument of `bothWith`,
            // `zipWith` only combines the outputs.
            // `compose(s, Schedule.elapsed)`: s's timing with the elapsed time as its output (the
            // idiom for a time window, `whileOutput(Duration.lessThanOrEqualTo(limit))` after it).
            "compose" => self.pair(
                args,
                2,
                |a, b| match clock_output(&b) {
                    Some(clock) => Sched::Output(Box::new(a), clock),
                    None => Sched::Max(vec![a, b]),
                },
                |b| match clock_output(&b) {
                    Some(clock) => Op::Output(clock),
                    None => Op::Max(b),
                },
            ),
            "intersect" | "zipLeft" | "zipRight" | "both" | "bothLeft" | "bothRight" => {
                self.pair(args, 2, |a, b| Sched::Max(vec![a, b]), Op::Max)
            }
            "zipWith" | "bothWith" => self.pair(args, 3, |a, b| Sched::Max(vec![a, b]), Op::Max),
            "union" | "either" | "eitherLeft" | "eitherRight" => {
                self.pair(args, 2, |a, b| Sched::Min(vec![a, b]), Op::Min)
            }
            // The betas' `eitherWith` combines outputs; 3.x's merges the delay intervals with a
            // function of its own.
            "eitherWith" if matches!(api.version, EffectVersion::V4Beta(_)) => {
                self.pair(args, 3, |a, b| Sched::Min(vec![a, b]), Op::Min)
            }
            "andThen" | "andThenEither" | "andThenResult" | "concat" | "concatResult" => {
                if api.concat_has_extra_step() {
                    return Val::Unknown;
                }
                self.pair(args, 2, |a, b| Sched::Concat(Box::new(a), Box::new(b)), Op::Concat)
            }
            "jittered" => match arg(0) {
                Val::Sched(s) => Val::Sched(apply_op(s, Op::Jittered { min: 0.8, max: 1.2 })),
                _ => Val::Unknown,
            },
            "jitteredWith" => {
                let options = operand(0);
                let bound = |key: &str, default: f64| match &options {
                    Val::Obj(fields) => match fields.iter().find(|(k, _)| k == key).map(|(_, v)| v) {
                        Some(Val::Num(n)) => Some(*n),
                        None => Some(default),
                        Some(_) => None,
                    },
                    _ => None,
                };
                match bound("min", 0.8).zip(bound("max", 1.2)) {
                    Some((min, max)) => dual(Op::Jittered { min, max }, 2),
                    None => dual(Op::Unknown, 2),
                }
            }
            "upTo" => {
                let op = match operand(0) {
                    // 4.x: upTo({ times, duration })
                    Val::Obj(fields) if !v3 => {
                        let field = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
                        let times = field("times").map(|v| (self.count(v), matches!(v, Val::Unknown)));
                        let limit = field("duration").map(|v| (self.duration(v), matches!(v, Val::Unknown)));
                        match (times, limit) {
                            // A count or limit the model cannot read still bounds the schedule.
                            (Some((None, true)), None) => Op::Max(Sched::RecursSome),
                            (None, Some((None, true))) => Op::Max(Sched::DuringSome),
                            (Some((None, true)), Some((None, true))) => {
                                Op::Chain(vec![Op::Max(Sched::RecursSome), Op::Max(Sched::DuringSome)])
                            }
                            (Some((Some(times), _)), Some((None, true))) => {
                                Op::Chain(vec![Op::Times(times), Op::Max(Sched::DuringSome)])
                            }
                            (Some((None, true)), Some((Some(limit), _))) => {
                                Op::Chain(vec![Op::During { limit, strict: false }, Op::Max(Sched::RecursSome)])
                            }
                            (Some((None, _)), _) | (_, Some((None, _))) => Op::Unknown,
                            (Some((Some(times), _)), None) => Op::Times(times),
                            (None, Some((Some(limit), _))) => Op::During { limit, strict: false },
                            (Some((Some(times), _)), Some((Some(limit), _))) => Op::TimesWithin { times, limit },
                            (None, None) => Op::Identity,
                        }
                    }
                    // 3.x: upTo(duration): continues while elapsed < duration.
                    other => match self.duration(&other) {
                        Some(limit) => Op::During { limit, strict: v3 },
                        None if matches!(other, Val::Unknown) => Op::Max(Sched::DuringSome),
                        None => Op::Unknown,
                    },
                };
                dual(op, 2)
            }
            "take" => match self.count(&operand(0)) {
                Some(n) => dual(Op::Times(n), 2),
                None if matches!(operand(0), Val::Unknown) => dual(Op::Max(Sched::RecursSome), 2),
                None => dual(Op::Unknown, 2),
            },
            "recurUpTo" => or_some(
                dur(0).map(|limit| Sched::During { limit, strict: true }),
                0,
                Sched::DuringSome,
            ),
            "addDelay" | "addDelayEffect" => dual(self.delay_op(operand(0), add_delay_shape, Op::AddDelay), 2),
            "modifyDelay" | "modifyDelayEffect" => dual(self.delay_op(operand(0), delay_shape, Op::ModifyDelay), 2),
            "delayed" | "delayedEffect" => dual(Op::ModifyDelay(self.callback(operand(0), CallbackShape::Duration)), 2),
            // 3.x `delayedSchedule(s)`: each delay plus the schedule's output, a duration.
            "delayedSchedule" => unary(Op::AddDelay(Callback::Known(Rc::new(Lambda {
                params: Vec::new(),
                body: Term::Var("output".into()),
            })))),
            // A 4.x `while` that reads the input (the failure) decides which failures are
            // retried, as `whileInput` does: a predicate, not a bound on the gaps.
            "while" if reads_input(&operand(0)) => dual(Op::While(Callback::OnInput), 2),
            "while" => dual(Op::While(self.callback(operand(0), CallbackShape::Metadata)), 2),
            "whileOutput" | "untilOutput" | "whileOutputEffect" | "untilOutputEffect" => {
                let test = match operand(0) {
                    // `whileOutput(Duration.lessThanOrEqualTo(limit))`: a bound on a duration
                    // output (`compose(Schedule.elapsed)`: a time window), never a test of the
                    // failure, even when the limit is a caller's.
                    Val::Compare(op, Some(limit)) => Callback::Known(Rc::new(Lambda {
                        params: vec![Param::Positional("output".into())],
                        body: Term::Bin(op, Box::new(Term::Var("output".into())), Box::new(Term::Num(limit))),
                    })),
                    Val::Compare(BinOp::Lt | BinOp::Le, None) if !name.starts_with("until") => {
                        return dual(Op::WhileOutputBelowSome, 2)
                    }
                    Val::Compare(_, None) => return dual(Op::While(Callback::Unknown), 2),
                    other => self.callback(other, CallbackShape::Output),
                };
                let callback = match test {
                    // A test the model cannot read over the output of a schedule that passes
                    // its input through (`identity`, `passthrough`): a predicate on the failure.
                    Callback::Unknown => return dual(Op::WhileOutputOpaque, 2),
                    Callback::Known(lambda) if name.starts_with("until") => Callback::Known(Rc::new(Lambda {
                        params: lambda.params.clone(),
                        // until p == while !p, expressed as p < 0.5 on a 0/1 truth value.
                        body: Term::Bin(BinOp::Lt, Box::new(lambda.body.clone()), Box::new(Term::Num(0.5))),
                    })),
                    other => other,
                };
                dual(Op::While(callback), 2)
            }
            // Predicates on the error: whether they stop the retry depends on the failure.
            "whileInput" | "untilInput" | "whileInputEffect" | "untilInputEffect" | "check" | "checkEffect" => {
                dual(Op::While(Callback::OnInput), 2)
            }
            // The same timing, another output.
            "delays" => unary(Op::Output(Callback::Known(Rc::new(Lambda {
                params: Vec::new(),
                body: Term::Var("duration".into()),
            })))),
            "passthrough" | "asVoid" | "collectAllOutputs" | "collectOutputs" | "collectInputs" | "repetitions" => {
                unary(Op::Output(Callback::Unknown))
            }
            "map" | "mapEffect" | "as" | "mapBoth" | "mapBothEffect" => dual(Op::Output(Callback::Unknown), 2),
            "reduce" | "reduceEffect" => dual(Op::Output(Callback::Unknown), 3),
            // The same timing and output.
            "tap" | "tapInput" | "tapOutput" | "onDecision" | "ensuring" | "mapInput" | "mapInputEffect"
            | "mapInputContext" | "provideContext" => dual(Op::Identity, 2),
            "provideService" => dual(Op::Identity, 3),
            // `Schedule.satisfiesInputType<E>()` and `setInputType<E>()` return the identity.
            "satisfiesInputType"
            | "satisfiesOutputType"
            | "satisfiesErrorType"
            | "satisfiesServicesType"
            | "setInputType"
                if args.is_empty() =>
            {
                Val::Op(Op::Identity)
            }
            // Not modelled: `resetAfter`/`resetWhen` restart the schedule,
            // `intersectWith`/`unionWith`/3.x `eitherWith` merge delays with a function,
            // `bothInOut` splits its input, `makeWithState`/`fromStep*` are hand-written steps.
            _ => Val::Unknown,
        }
    }

    /// A binary combinator: `f(a, b, …)` data-first (`arity` arguments, the first two
    /// schedules) or `f(b, …)` data-last.
    fn pair(
        &self,
        args: Vec<Val<'p>>,
        arity: usize,
        both: impl Fn(Sched, Sched) -> Sched,
        op: impl Fn(Sched) -> Op,
    ) -> Val<'p> {
        let len = args.len();
        let mut iter = args.into_iter();
        match (iter.next(), iter.next()) {
            (Some(Val::Sched(a)), Some(Val::Sched(b))) if len == arity => Val::Sched(both(a, b)),
            (Some(Val::Sched(b)), _) if len == arity - 1 => Val::Op(op(b)),
            _ => Val::Unknown,
        }
    }

    /// Compiles a callback into a [`Lambda`] when its body is in the model's small language.
    /// A delay combinator's operation. A callback whose body is `test ? a : b`, the test
    /// reading what the model cannot know (`e.status === 429`), gives each branch as a possible
    /// delay — each judged, as the branches of a conditional policy are: fixed durations add
    /// no jitter, and the longer one is the worst case.
    fn delay_op(&self, value: Val<'p>, shape: CallbackShape, make: fn(Callback) -> Op) -> Op {
        let mut callbacks = Vec::new();
        self.delay_branches(value, shape, 0, &mut callbacks);
        // A branch the model cannot read (a delay computed from the response) stays unknown,
        // but a defect of another branch is the policy's, as with a conditional policy: a
        // fixed 1 s after a 5xx is unjittered whatever a 429 waits.
        let known = callbacks.iter().any(|c| !matches!(c, Callback::Unknown));
        if callbacks.len() > 1 && known {
            Op::Either(callbacks.into_iter().map(make).collect())
        } else {
            make(callbacks.into_iter().next().unwrap_or(Callback::Unknown))
        }
    }

    /// The callbacks `value` can act as: itself when the model reads it whole, else one per
    /// branch of its conditional body (nested up to a small depth). False when a branch is
    /// unknown.
    fn delay_branches(&self, value: Val<'p>, shape: CallbackShape, depth: usize, out: &mut Vec<Callback>) -> bool {
        let whole = self.callback(value.clone(), shape);
        if !matches!(whole, Callback::Unknown) {
            out.push(whole);
            return true;
        }
        let Val::Func(func) = value else {
            out.push(Callback::Unknown);
            return false;
        };
        let Some(Expr::Cond { then, otherwise, .. }) = func.body else {
            out.push(Callback::Unknown);
            return false;
        };
        if depth >= 3 {
            out.push(Callback::Unknown);
            return false;
        }
        let mut known = true;
        for branch in [then.as_ref(), otherwise.as_ref()] {
            let branch = Val::Func(Func {
                body: Some(branch),
                ..func.clone()
            });
            known &= self.delay_branches(branch, shape, depth + 1, out);
        }
        known
    }

    fn callback(&self, value: Val<'p>, shape: CallbackShape) -> Callback {
        let Val::Func(func) = value else {
            return Callback::Unknown;
        };
        let Some(body) = func.body else {
            return Callback::Unknown;
        };
        let positional: &[&str] = match shape {
            CallbackShape::Metadata => &["<meta>"],
            CallbackShape::OutputDuration => &["output", "duration"],
            CallbackShape::Duration => &["duration"],
            CallbackShape::Output => &["output"],
        };
        let mut params = Vec::new();
        let mut names: HashMap<String, String> = HashMap::new();
        for (i, param) in func.params.iter().enumerate() {
            let meaning = positional.get(i).copied().unwrap_or("<none>");
            if let Some(inner) = param.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                if meaning != "<meta>" {
                    return Callback::Unknown;
                }
                let fields: Vec<String> = inner
                    .split(',')
                    .map(|f| f.trim().to_string())
                    .filter(|f| !f.is_empty())
                    .collect();
                if fields
                    .iter()
                    .any(|f| f.contains(':') || f.contains('=') || f.starts_with("..."))
                {
                    return Callback::Unknown;
                }
                for field in &fields {
                    names.insert(field.clone(), field.clone());
                }
                params.push(Param::Fields(fields));
            } else if meaning == "<meta>" {
                names.insert(param.clone(), "<meta>".into());
                params.push(Param::Positional(param.clone()));
            } else if meaning == "<none>" {
                params.push(Param::Ignored);
            } else {
                names.insert(param.clone(), meaning.into());
                params.push(Param::Positional(param.clone()));
            }
        }
        match self.term(func.file, body, &names, &func.env) {
            Some(body) => Callback::Known(Rc::new(Lambda { params, body })),
            None => Callback::Unknown,
        }
    }

    /// A callback body as a [`Term`]; metadata fields become variables.
    fn term(&self, file: FileId, expr: &'p Expr, names: &HashMap<String, String>, env: &Env<'p>) -> Option<Term> {
        let facts = self.index.facts(file)?;
        match expr {
            Expr::Num(n, _) => Some(Term::Num(*n)),
            Expr::Str(s, _) => parse_duration(s).map(Term::Num),
            Expr::Ident(name, _) | Expr::Param(name, _) => match names.get(name) {
                Some(field) if field != "<meta>" => Some(Term::Var(field.clone())),
                Some(_) => None,
                None => match env
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| self.eval(file, expr, &Env::new()))
                {
                    Val::Num(n) | Val::Dur(n) => Some(Term::Num(n)),
                    Val::Str(s, _, _) => parse_duration(&s).map(Term::Num),
                    _ => None,
                },
            },
            // `meta.duration` on a positional metadata parameter.
            Expr::Member(object, field, _) => match object.as_ref() {
                Expr::Ident(name, _) | Expr::Param(name, _)
                    if names.get(name).map(String::as_str) == Some("<meta>") =>
                {
                    Some(Term::Var(field.clone()))
                }
                // `delays.length` of a list the model holds.
                _ if field == "length" && !self.is_callback_param(object, names) => {
                    match self.eval(file, object, env) {
                        Val::Arr(items) => Some(Term::Num(items.len() as f64)),
                        _ => None,
                    }
                }
                _ => match self.effect_value(facts, expr) {
                    Some(Val::Dur(ms)) => Some(Term::Num(ms)),
                    _ => None,
                },
            },
            Expr::Binary { op, left, right, .. } => {
                let op = match op.as_str() {
                    "+" => BinOp::Add,
                    "-" => BinOp::Sub,
                    "*" => BinOp::Mul,
                    "/" => BinOp::Div,
                    "<" => BinOp::Lt,
                    "<=" => BinOp::Le,
                    ">" => BinOp::Gt,
                    ">=" => BinOp::Ge,
                    "&&" => BinOp::And,
                    "||" => BinOp::Or,
                    _ => return None,
                };
                Some(Term::Bin(
                    op,
                    Box::new(self.term(file, left, names, env)?),
                    Box::new(self.term(file, right, names, env)?),
                ))
            }
            // `delays[n]`: a factory's list of delays, read by the callback's index.
            Expr::Index { object, index, .. } if !self.is_callback_param(object, names) => {
                let Val::Arr(items) = self.eval(file, object, env) else {
                    return None;
                };
                let values: Option<Vec<f64>> = items
                    .iter()
                    .map(|item| match item {
                        Val::Num(n) | Val::Dur(n) => Some(*n),
                        Val::Str(s, ..) => parse_duration(s),
                        _ => None,
                    })
                    .collect();
                Some(Term::Index(values?, Box::new(self.term(file, index, names, env)?)))
            }
            Expr::Call { callee, args, .. }
                if args.len() == 2 && matches!(callee.path().as_deref(), Some(["Math", "min" | "max"])) =>
            {
                let (a, b) = (
                    self.term(file, &args[0], names, env)?,
                    self.term(file, &args[1], names, env)?,
                );
                Some(if callee.last_name() == Some("min") {
                    Term::Min(Box::new(a), Box::new(b))
                } else {
                    Term::Max(Box::new(a), Box::new(b))
                })
            }
            Expr::Call { callee, args, .. } => {
                let (module, member) = facts.effect_member(callee)?;
                let mut terms = args.iter().map(|a| self.term(file, a, names, env));
                let mut next = || terms.next().flatten();
                match (module, member) {
                    ("Effect", "succeed") => next(),
                    ("Duration", "millis")
                    | ("Duration", "toMillis")
                    | ("Duration", "decode")
                    | ("Duration", "fromInputUnsafe") => next(),
                    ("Duration", unit @ ("seconds" | "minutes" | "hours" | "days" | "weeks" | "nanos" | "micros")) => {
                        let factor = unit_millis(unit)?;
                        Some(Term::Bin(BinOp::Mul, Box::new(next()?), Box::new(Term::Num(factor))))
                    }
                    ("Duration", "times") => Some(Term::Bin(BinOp::Mul, Box::new(next()?), Box::new(next()?))),
                    ("Duration", "sum") => Some(Term::Bin(BinOp::Add, Box::new(next()?), Box::new(next()?))),
                    ("Duration", "subtract") => Some(Term::Bin(BinOp::Sub, Box::new(next()?), Box::new(next()?))),
                    ("Duration", "min") => Some(Term::Min(Box::new(next()?), Box::new(next()?))),
                    ("Duration", "toSeconds") => {
                        Some(Term::Bin(BinOp::Div, Box::new(next()?), Box::new(Term::Num(1000.0))))
                    }
                    ("Duration", "toMinutes") => {
                        Some(Term::Bin(BinOp::Div, Box::new(next()?), Box::new(Term::Num(60_000.0))))
                    }
                    // Comparisons, data-first (`lessThan(self, that)`; 4.x names them `is…`).
                    (
                        "Duration",
                        compare @ ("lessThan"
                        | "isLessThan"
                        | "lessThanOrEqualTo"
                        | "isLessThanOrEqualTo"
                        | "greaterThan"
                        | "isGreaterThan"
                        | "greaterThanOrEqualTo"
                        | "isGreaterThanOrEqualTo"),
                    ) if args.len() == 2 => {
                        let op = comparison_op(compare)?;
                        Some(Term::Bin(op, Box::new(next()?), Box::new(next()?)))
                    }
                    ("Duration", "max") => Some(Term::Max(Box::new(next()?), Box::new(next()?))),
                    _ => None,
                }
            }
            Expr::Local { value, .. } => self.term(file, value, names, env),
            _ => None,
        }
    }
}

impl Evaluator<'_> {
    /// Whether `expr` names one of a callback's own parameters (what the step passes in).
    fn is_callback_param(&self, expr: &Expr, names: &HashMap<String, String>) -> bool {
        matches!(expr, Expr::Ident(name, _) | Expr::Param(name, _) if names.contains_key(name))
    }
}

fn is_effect_pipe(facts: &FileFacts, callee: &Expr) -> bool {
    let Expr::Ident(name, _) = callee else { return false };
    facts.import(name).is_some_and(|import| {
        crate::facts::is_effect_source(&import.source) && import.kind == ImportKind::Named("pipe".into())
    })
}

fn apply_op(s: Sched, op: Op) -> Sched {
    let inner = Box::new(s);
    match op {
        Op::Jittered { min, max } => Sched::Jittered { inner, min, max },
        Op::Times(n) => Sched::Times(inner, n),
        Op::TimesWithin { times, limit } => Sched::Times(
            Box::new(Sched::Max(vec![*inner, Sched::During { limit, strict: false }])),
            times,
        ),
        Op::During { limit, strict } => Sched::Max(vec![*inner, Sched::During { limit, strict }]),
        Op::While(cb) => Sched::While(inner, cb),
        Op::AddDelay(cb) => Sched::AddDelay(inner, cb),
        Op::ModifyDelay(cb) => Sched::ModifyDelay(inner, cb),
        Op::Max(other) => Sched::Max(vec![*inner, other]),
        Op::Min(other) => Sched::Min(vec![*inner, other]),
        Op::Concat(other) => Sched::Concat(inner, Box::new(other)),
        Op::Output(cb) => Sched::Output(inner, cb),
        Op::Chain(ops) => ops.into_iter().fold(*inner, apply_op),
        Op::Either(ops) => Sched::Choice(ops.into_iter().map(|op| apply_op((*inner).clone(), op)).collect()),
        Op::Identity => *inner,
        Op::WhileOutputBelowSome => match clock_of(&inner) {
            Some(_) => Sched::Max(vec![*inner, Sched::DuringSome]),
            None => Sched::While(inner, Callback::Unknown),
        },
        Op::WhileOutputOpaque => {
            let callback = if passes_input(&inner) {
                Callback::OnInput
            } else {
                Callback::Unknown
            };
            Sched::While(inner, callback)
        }
        Op::Unknown => Sched::Unknown,
    }
}

/// Whether a schedule's output may be its input: `identity()`, `passthrough(s)` (whose
/// output the model does not follow), through combinators that keep the output.
fn passes_input(sched: &Sched) -> bool {
    match sched {
        Sched::Output(_, Callback::Unknown) => true,
        Sched::Times(inner, _)
        | Sched::While(inner, _)
        | Sched::Jittered { inner, .. }
        | Sched::JitteredAdd { inner, .. }
        | Sched::ModifyDelay(inner, _)
        | Sched::AddDelay(inner, _) => passes_input(inner),
        _ => false,
    }
}

/// Whether a 4.x metadata callback reads `input`, the failure: `({ input }) => …`,
/// `(meta) => isRetryable(meta.input)`.
fn reads_input(value: &Val) -> bool {
    let Val::Func(func) = value else { return false };
    let Some(first) = func.params.first() else { return false };
    if let Some(fields) = first.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
        return fields
            .split(',')
            .any(|f| f.split(':').next().map(str::trim) == Some("input"));
    }
    let Some(body) = func.body else { return false };
    let mut reads = false;
    body.walk(&mut |e| {
        if let Expr::Member(object, field, _) = e {
            reads |= field == "input"
                && matches!(object.as_ref(), Expr::Ident(name, _) | Expr::Param(name, _) if name == first);
        }
    });
    reads
}

/// The output of a schedule that never waits nor stops and outputs only what the clock says
/// (`Schedule.elapsed`): composed after another, it keeps that one's timing.
fn clock_output(sched: &Sched) -> Option<Callback> {
    match sched {
        Sched::Output(inner, Callback::Known(lambda))
            if matches!(**inner, Sched::Forever) && term_reads_only_clock(&lambda.body) =>
        {
            Some(Callback::Known(lambda.clone()))
        }
        _ => None,
    }
}

/// The clock output of a schedule whose output is the elapsed time (`compose(s,
/// Schedule.elapsed)`), through combinators that keep the output.
fn clock_of(sched: &Sched) -> Option<&Callback> {
    match sched {
        Sched::Output(_, callback @ Callback::Known(lambda)) if term_reads_only_clock(&lambda.body) => Some(callback),
        Sched::Times(inner, _)
        | Sched::While(inner, _)
        | Sched::Jittered { inner, .. }
        | Sched::JitteredAdd { inner, .. }
        | Sched::ModifyDelay(inner, _)
        | Sched::AddDelay(inner, _) => clock_of(inner),
        _ => None,
    }
}

fn term_reads_only_clock(term: &Term) -> bool {
    match term {
        Term::Var(name) => name == "elapsed" || name == "attempt",
        Term::Num(_) => true,
        _ => false,
    }
}

/// The comparison a `Duration` member makes (`lessThan`, 4.x's `isLessThan`, …).
fn comparison_op(member: &str) -> Option<BinOp> {
    Some(match member.trim_start_matches("is") {
        "lessThan" | "LessThan" => BinOp::Lt,
        "lessThanOrEqualTo" | "LessThanOrEqualTo" => BinOp::Le,
        "greaterThan" | "GreaterThan" => BinOp::Gt,
        "greaterThanOrEqualTo" | "GreaterThanOrEqualTo" => BinOp::Ge,
        _ => return None,
    })
}

/// `Duration.lessThan(that)` and its kin with one argument (data-last): the test
/// `self <op> that`, for a `whileOutput`.
fn data_last_comparison<'p>(member: &str, args: &[Val<'p>]) -> Option<Val<'p>> {
    let op = comparison_op(member)?;
    let [that] = args else { return None };
    let limit = match that {
        Val::Dur(ms) | Val::Num(ms) => Some(*ms),
        Val::Str(s, _, _) => parse_duration(s),
        _ => None,
    };
    Some(Val::Compare(op, limit))
}

fn duration_call(member: &str, args: &[Val]) -> Option<f64> {
    let number = |i: usize| match args.get(i) {
        Some(Val::Num(n)) => Some(*n),
        Some(Val::Dur(ms)) => Some(*ms),
        Some(Val::Str(s, _, _)) => parse_duration(s),
        _ => None,
    };
    match member {
        "millis" | "decode" | "fromInputUnsafe" => number(0),
        "times" => Some(number(0)? * number(1)?),
        "sum" => Some(number(0)? + number(1)?),
        "subtract" => Some(number(0)? - number(1)?),
        "min" => Some(number(0)?.min(number(1)?)),
        "max" => Some(number(0)?.max(number(1)?)),
        unit => Some(number(0)? * unit_millis(unit)?),
    }
}

/// Evaluates a standalone expression (a schedule or retry options) the way the differential
/// test asks: as if written in a file importing `Schedule`, `Duration` and `Effect` from Effect.
pub fn evaluate_text(expr: &str, version: u8) -> crate::schedule::Summary {
    use crate::config::Config;
    use crate::source::{Language, SourceFile};
    use std::path::PathBuf;

    let text =
        format!("import {{ Schedule, Duration, Effect, pipe }} from \"effect\"\nexport const policy = ({expr})\n");
    let facts = crate::extract::extract_file(Language::TypeScript, text.as_bytes());
    let source = SourceFile {
        path: PathBuf::from("policy.ts"),
        absolute: PathBuf::from("/policy.ts"),
        language: Language::TypeScript,
    };
    let mut index = Index::new(Config::defaults(PathBuf::from("/")), vec![source]);
    index.set(
        0,
        crate::index::Loaded {
            facts: Some(std::sync::Arc::new(facts)),
            ..Default::default()
        },
    );
    let Some(binding) = index.facts(0).and_then(|f| f.binding("policy")) else {
        return crate::schedule::summarize(&Sched::Unknown);
    };
    let (sched, _) = evaluate_policy_expr(&index, 0, &binding.value, version);
    crate::schedule::summarize(&sched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_follows_the_version() {
        use crate::schedule::Attempts;
        let (v3, beta, v4_1) = (
            EffectVersion::V3.code(),
            EffectVersion::V4Beta(66).code(),
            EffectVersion::V4 { minor: Some(1) }.code(),
        );
        let unknown = EffectVersion::Unknown.code();
        let both = r#"Schedule.both(Schedule.exponential("100 millis"), Schedule.recurs(3))"#;
        assert_eq!(evaluate_text(both, beta).attempts, Attempts::Exact(3));
        assert_eq!(evaluate_text(both, v4_1).attempts, Attempts::Unknown);
        assert_eq!(evaluate_text(both, unknown).attempts, Attempts::Exact(3));
        let max = r#"Schedule.max([Schedule.spaced("1 second"), Schedule.recurs(2)])"#;
        assert_eq!(evaluate_text(max, v4_1).attempts, Attempts::Exact(2));
        assert_eq!(evaluate_text(max, v3).attempts, Attempts::Unknown);
        assert_eq!(evaluate_text(max, beta).attempts, Attempts::Unknown);
        // The betas' fibonacci skips the first term; their delay callbacks are positional.
        let fib = r#"Schedule.fibonacci("100 millis").pipe(Schedule.take(4))"#;
        assert_eq!(evaluate_text(fib, beta).delays.unwrap(), [100.0, 200.0, 300.0, 500.0]);
        let fib = r#"Schedule.fibonacci("100 millis").pipe(Schedule.upTo({ times: 4 }))"#;
        assert_eq!(evaluate_text(fib, v4_1).delays.unwrap(), [100.0, 100.0, 200.0, 300.0]);
        let doubled = r#"Schedule.spaced("100 millis").pipe(Schedule.take(2), Schedule.modifyDelay((_, delay) => Effect.succeed(Duration.times(delay, 2))))"#;
        assert_eq!(evaluate_text(doubled, beta).delays.unwrap(), [200.0, 200.0]);
    }
}
