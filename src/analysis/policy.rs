//! A file's retry policies, as the schedule rules and `retrylint policies` see them: the
//! schedules the retry module exports, and every policy a retry site builds or changes
//! itself. A site that names a retry-module policy unchanged is not a policy of its own: its
//! findings belong to the export it names.
//!
//! Language-neutral: [`Policy`] is a summary in the schedule model plus where a finding
//! points and how a jitter fix is spelled; `effect` and `rust` evaluate the expressions.

use super::model::{Insertion, Origin, Policy};
use super::{effect, rs2, rust};
use crate::effect_version::EffectVersion;
use crate::facts::{Export, Expr, PassedPolicy, PolicyArg, Retried, RetrySite};
use crate::index::{FileId, Index, Resolved};
use crate::schedule::api;
use crate::schedule::duration::format_ms;
use crate::schedule::{self, Gap, Jitter, Library, Sched, Summary};
use crate::source::{Language, Span};

pub(super) fn collect(analysis: &super::Analysis, index: &Index, file: FileId) -> Vec<Policy> {
    let Some(facts) = index.facts(file) else {
        return Vec::new();
    };
    match facts.language {
        Language::Rust => return rust::collect(analysis, index, file),
        Language::Json | Language::Yaml => return rs2::policies(index, file),
        _ => {}
    }
    let version = index.effect_major(file);
    let effect = EffectVersion::from_code(version);
    // `.pipe(Schedule.jittered)`, with the file's own name for `Schedule`, when the file's
    // version has the combinator, after the schedule or after each branch of a conditional
    // one that needs it (`policy` is the policy the schedule is part of: the schedule itself,
    // or a site's options). Offered only when the model reads the fixed policy as jittered: a
    // fix whose result retrylint still flags is never applied until it clears, ten times over.
    let jitter = |value: &Expr, policy: &Expr| -> Vec<Insertion> {
        let (Some(_), Some(module)) = (api::jitter_snippet(effect), facts.effect_module_local("Schedule")) else {
            return Vec::new();
        };
        let mut points = Vec::new();
        jitter_points(index, file, version, value, 0, &mut points);
        let spans: Vec<Span> = points.iter().map(|p| p.span()).collect();
        let fixed = effect::evaluate_jittered(index, file, policy, version, &spans);
        if points.is_empty() || schedule::summarize(&fixed).jitter == Jitter::No {
            return Vec::new();
        }
        points
            .into_iter()
            .map(|point| jitter_insertion(point, module, index.text(file)))
            .collect()
    };
    let mut out = Vec::new();
    let in_module = index.is_retry_module(file);
    if in_module {
        for export in &facts.exports {
            let Export::Local { name, local } = export else {
                continue;
            };
            let Some(binding) = facts.binding(local) else { continue };
            // A factory (`schedule(preset)`, `backoff(retries = 5)`) is judged on what holds
            // for every argument; predicates (`isContention`) build no schedule.
            if matches!(binding.value, Expr::Function { .. }) {
                let (sched, problems) = effect::evaluate_factory(index, file, &binding.value, version, None);
                if matches!(sched, Sched::Unknown) {
                    continue;
                }
                out.push(Policy {
                    origin: Origin::Export {
                        name: format!("{name}(…)"),
                        binding: binding.span,
                    },
                    span: Span {
                        start: binding.span.start,
                        end: binding.span.start + local.len() as u32,
                    },
                    schedule: None,
                    text: format!("{name}(…)"),
                    summary: schedule::summarize_for_all(&sched),
                    problems,
                    library: Library::Effect,
                    effect,
                    jitter_fix: Vec::new(),
                    uses: factory_uses(index, file, binding.span),
                });
                continue;
            }
            if matches!(binding.value, Expr::Opaque(_)) {
                continue;
            }
            let (sched, problems) = effect::evaluate_schedule(index, file, &binding.value, version);
            if matches!(sched, Sched::Unknown) {
                continue;
            }
            out.push(Policy {
                origin: Origin::Export {
                    name: name.clone(),
                    binding: binding.span,
                },
                span: Span {
                    start: binding.span.start,
                    end: binding.span.start + local.len() as u32,
                },
                schedule: Some(binding.value.span()),
                text: binding.value.render(),
                summary: schedule::summarize(&sched),
                problems,
                library: Library::Effect,
                effect,
                jitter_fix: jitter(&binding.value, &binding.value),
                uses: Vec::new(),
            });
        }
    }
    // Named policies defined here, once each, whatever file names them.
    for named in analysis.named_in(index, file).filter(|_| !in_module) {
        let value = if named.uses.iter().any(|(f, _, _)| *f == file) && named_local(index, named).is_some() {
            named_local(index, named)
        } else {
            facts
                .bindings
                .iter()
                .find(|b| b.span == named.binding)
                .map(|b| &b.value)
        };
        let Some(value) = value else { continue };
        // A factory outside the retry module: judged on what holds for every argument.
        if let Expr::Function { .. } = value {
            let (sched, problems) = effect::evaluate_factory(index, file, value, version, None);
            if matches!(sched, Sched::Unknown) {
                continue;
            }
            out.push(Policy {
                origin: Origin::Named {
                    name: format!("{}(…)", named.name),
                    binding: named.binding,
                },
                span: named.name_span_in(index),
                schedule: None,
                text: format!("{}(…)", named.name),
                summary: schedule::summarize_for_all(&sched),
                problems,
                library: Library::Effect,
                effect,
                jitter_fix: Vec::new(),
                uses: named.uses.iter().map(|(f, _, span)| (*f, *span)).collect(),
            });
            continue;
        }
        // A schedule, or retry options bound to a name (`const opts = { schedule, times }`).
        let (sched, problems) = effect::evaluate_policy_expr(index, file, value, version);
        if matches!(sched, Sched::Unknown) && problems.is_empty() {
            continue;
        }
        let mut summary = schedule::summarize(&sched);
        without_factory_defects(index, file, value, &mut summary);
        let inner = match value {
            Expr::Local { value, .. } => value.as_ref(),
            other => other,
        };
        let value_span = inner.span();
        out.push(Policy {
            origin: Origin::Named {
                name: named.name.clone(),
                binding: named.binding,
            },
            span: named.name_span(),
            schedule: Some(value_span),
            text: value.render(),
            summary,
            problems,
            library: Library::Effect,
            effect,
            // Bound options are jittered in their `schedule`.
            jitter_fix: jitter(inner.property("schedule").unwrap_or(inner), value),
            uses: named.uses.iter().map(|(f, _, span)| (*f, *span)).collect(),
        });
    }
    for site in &facts.retry_sites {
        if site.times().is_none() && names_retry_module_policy(index, file, site.schedule()) {
            continue;
        }
        // A site naming a binding has that binding's policy, reported where it is defined.
        if site_binding(index, file, site).is_some() {
            continue;
        }
        let Some(span) = site.policy_span().or_else(|| {
            // `retryTransient()` with no options still retries: point at the call.
            (site.retried == Retried::Client && matches!(site.policy, PolicyArg::Default)).then_some(site.span)
        }) else {
            continue;
        };
        let (sched, problems) = effect::evaluate_policy(index, file, site, version);
        if matches!(sched, Sched::Unknown) && problems.is_empty() {
            continue;
        }
        // A retry in the retry module is a hardening helper's (`withRetry(effect, { base,
        // times })`): what its parameters leave unknown is judged for every argument, once,
        // here. Elsewhere a factory's defects for every argument are the factory's.
        let mut summary = if in_module && has_choice(&sched) {
            schedule::summarize_for_all(&sched)
        } else {
            schedule::summarize(&sched)
        };
        if let Some(schedule) = site.schedule() {
            without_factory_defects(index, file, schedule, &mut summary);
        }
        // Point at the schedule when there is one: that is what a fix edits.
        let schedule = site.schedule();
        let policy_expr = match &site.policy {
            PolicyArg::Effect(e) => Some(e),
            _ => None,
        };
        out.push(Policy {
            origin: Origin::Site {
                callee: site.callee.clone(),
            },
            span: schedule.map(Expr::span).unwrap_or(span),
            schedule: schedule.map(Expr::span),
            text: schedule
                .or(policy_expr)
                .map(Expr::render)
                .unwrap_or_else(|| "()".into()),
            summary,
            problems,
            library: Library::Effect,
            effect,
            jitter_fix: match (schedule, policy_expr) {
                (Some(schedule), Some(policy)) => jitter(schedule, policy),
                _ => Vec::new(),
            },
            uses: Vec::new(),
        });
    }
    // Policies passed to a project helper that retries with them: judged here, at the call,
    // as the helper's retry runs them (its parameters bound to this call's arguments).
    for passed in passed(analysis, index, file) {
        let PolicyArg::Effect(policy) = &passed.site.policy else {
            continue;
        };
        let (sched, problems) = effect::evaluate_passed(
            index,
            file,
            &passed.fact.args,
            passed.fact.arg,
            passed.helper_file,
            passed.function,
            policy,
            version,
        );
        if matches!(sched, Sched::Unknown) && problems.is_empty() {
            continue;
        }
        out.push(Policy {
            origin: Origin::Site {
                callee: passed.helper.clone(),
            },
            span: passed.value.span(),
            schedule: Some(passed.value.span()),
            text: passed.value.render(),
            summary: schedule::summarize(&sched),
            problems,
            library: Library::Effect,
            effect,
            jitter_fix: Vec::new(),
            uses: vec![(passed.helper_file, passed.site.span)],
        });
    }
    out
}

/// A policy passed in an options object to a project helper that retries with it
/// (`retryTransientErrors(effect, { schedule: backoff })`, the helper's body doing
/// `Effect.retry(opts.schedule)` or `HttpClient.retryTransient({ schedule })`).
pub struct Passed<'i> {
    pub fact: &'i PassedPolicy,
    /// The passed policy, as written at the call.
    pub value: &'i Expr,
    /// How messages name the helper.
    pub helper: String,
    /// The helper's retry that runs the passed policy.
    pub helper_file: FileId,
    pub site: &'i RetrySite,
    /// The helper, a function value.
    pub function: &'i Expr,
}

/// The calls of `file` that pass a policy to a project helper retrying with it. A policy
/// named in the retry module is named (silent here), and one bound to a name that retry sites
/// use directly is reported where it is bound.
pub fn passed<'i>(analysis: &super::Analysis, index: &'i Index, file: FileId) -> Vec<Passed<'i>> {
    let Some(facts) = index.facts(file) else {
        return Vec::new();
    };
    if facts.passed_policies.is_empty() || index.is_retry_module(file) {
        return Vec::new();
    }
    facts
        .passed_policies
        .iter()
        .filter_map(|fact| {
            let value = fact.value()?;
            if names_retry_module_policy(index, file, Some(value)) {
                return None;
            }
            let bound = match value {
                Expr::Local { def, .. } => Some((file, *def)),
                Expr::Ident(..) | Expr::Member(..) => match index.resolve_path(file, value) {
                    Resolved::Value { file, span, .. } => Some((file, span)),
                    _ => None,
                },
                _ => None,
            };
            if bound.is_some_and(|(f, span)| {
                analysis
                    .named_policies(index)
                    .iter()
                    .any(|n| n.file == f && n.binding == span)
            }) {
                return None;
            }
            let (helper_file, function, site) = passed_helper(index, file, fact)?;
            let helper = match &fact.callee {
                Expr::Local { name, .. } => name.clone(),
                other => other.path().map(|p| p.join("."))?,
            };
            Some(Passed {
                fact,
                value,
                helper,
                helper_file,
                site,
                function,
            })
        })
        .collect()
}

/// The helper a call passes its policy to, and the helper's retry that runs it: a function
/// (same file, or resolved across files) with an Effect retry in its body whose schedule reads
/// the option, through the parameter the options object is bound to (`opts.schedule`) or a
/// pattern that names its key (`{ schedule }`, `{ retryTransientErrors: schedule }`).
fn passed_helper<'i>(
    index: &'i Index,
    file: FileId,
    fact: &'i PassedPolicy,
) -> Option<(FileId, &'i Expr, &'i RetrySite)> {
    let (target, function) = match &fact.callee {
        Expr::Local { value, .. } => (file, value.as_ref()),
        callee => match index.resolve_path(file, callee) {
            Resolved::Value {
                file: target, value, ..
            } => (target, value),
            _ => return None,
        },
    };
    let function = match function {
        Expr::Local { value, .. } => value.as_ref(),
        other => other,
    };
    let Expr::Function { params, span, .. } = function else {
        return None;
    };
    let param = params.get(fact.arg)?;
    // The name the option is bound to in the body, when the parameter is a pattern.
    let bound_name = match param.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
        Some(fields) if !fields.contains(['{', '[', '=']) => fields.split(',').map(str::trim).find_map(|field| {
            let (key, name) = field
                .split_once(':')
                .map_or((field, field), |(k, n)| (k.trim(), n.trim()));
            (key == fact.key).then(|| name.to_string())
        }),
        _ => None,
    };
    let reads_option = |e: &Expr| {
        let mut found = false;
        e.walk(&mut |e| match e {
            Expr::Member(object, key, _) if *key == fact.key => {
                found |= matches!(object.as_ref(), Expr::Param(p, _) if p == param);
            }
            Expr::Param(name, _) => found |= bound_name.as_deref() == Some(name.as_str()),
            _ => {}
        });
        found
    };
    let facts = index.facts(target)?;
    let site = facts.retry_sites.iter().find(|site| {
        site.library == Library::Effect
            && span.start <= site.span.start
            && site.span.end <= span.end
            // The option is the schedule (or part of it): a predicate passed so is no policy.
            && matches!(&site.policy, PolicyArg::Effect(_))
            && site.schedule().is_some_and(reads_option)
    })?;
    Some((target, function, site))
}

fn has_choice(sched: &Sched) -> bool {
    let mut found = false;
    schedule::sim::visit_all(sched, &mut |s| found |= matches!(s, Sched::Choice(_)));
    found
}

/// The retry-module factory `call` calls (`Retry.schedule("patient")`), directly or through
/// local wrappers (`const patiently = (n) => Retry.schedule({ …, maxAttempts: n })`): its file
/// and binding.
fn called_factory<'i>(index: &'i Index, file: FileId, call: &'i Expr) -> Option<(FileId, Span, &'i Expr)> {
    called_factory_within(index, file, call, 0)
}

fn called_factory_within<'i>(
    index: &'i Index,
    file: FileId,
    call: &'i Expr,
    depth: usize,
) -> Option<(FileId, Span, &'i Expr)> {
    let call = match call {
        Expr::Local { value, .. } => value.as_ref(),
        other => other,
    };
    let Expr::Call { callee, .. } = call else { return None };
    if depth > 3 {
        return None;
    }
    let (target, span, value) = match callee.as_ref() {
        Expr::Local { def, value, .. } => (file, *def, value.as_ref()),
        _ => match index.resolve_path(file, callee) {
            Resolved::Value {
                file: target,
                span,
                value,
                ..
            } => (target, span, value),
            _ => return None,
        },
    };
    let value = match value {
        Expr::Local { value, .. } => value.as_ref(),
        other => other,
    };
    let Expr::Function { body: Some(body), .. } = value else {
        return None;
    };
    if index.is_retry_module(target) {
        return Some((target, span, value));
    }
    // A wrapper of a retry-module factory, or a factory of its own outside the retry module
    // (`function retrySchedule(label, limit) { return Schedule.exponential(…)… }`).
    called_factory_within(index, target, body, depth + 1).or_else(|| {
        (depth == 0 && super::inline::builder(index, target, value).is_some()).then_some((target, span, value))
    })
}

/// The factory outside the retry module a site's schedule is a call of, the site passing its
/// own arguments (`Effect.retry(retrySchedule("publish", Duration.minutes(1)))`): its file,
/// declarator and name. Like a named policy, it is one policy, reported where it is defined
/// for what holds whatever the arguments; what depends on them is the call's.
pub(super) fn local_factory(index: &Index, file: FileId, site: &RetrySite) -> Option<(FileId, Span, String)> {
    if site.times().is_some() || index.is_retry_module(file) {
        return None;
    }
    let PolicyArg::Effect(_) = &site.policy else {
        return None;
    };
    let call @ Expr::Call { callee, .. } = site.schedule()? else {
        return None;
    };
    let (target, binding, _) = called_factory(index, file, call)?;
    if index.is_retry_module(target) {
        return None;
    }
    let name = match callee.as_ref() {
        Expr::Local { name, .. } => name.clone(),
        other => other.last_name()?.to_string(),
    };
    Some((target, binding, name))
}

/// Leaves out of a factory call's summary the defects its factory has for every argument:
/// those are reported once, at the factory.
fn without_factory_defects(index: &Index, file: FileId, call: &Expr, summary: &mut Summary) {
    use crate::schedule::Attempts;
    let Some((target, _, factory)) = called_factory(index, file, call) else {
        return;
    };
    let (sched, _) = effect::evaluate_factory(index, target, factory, index.effect_major(target), None);
    let every = schedule::summarize_for_all(&sched);
    if every.jitter == Jitter::No {
        summary.jitter = Jitter::Unknown;
    }
    if every.gap == Gap::Growing {
        summary.gap = Gap::Unknown;
    }
    if every.attempts == Attempts::Unbounded {
        summary.attempts = Attempts::Unknown;
    }
}

/// The retry sites whose schedule is a call of the factory bound at `binding` in `file`.
fn factory_uses(index: &Index, file: FileId, binding: Span) -> Vec<(FileId, Span)> {
    let mut uses = Vec::new();
    for other in index.parsed_files() {
        let Some(facts) = index.loaded(other) else { continue };
        for site in &facts.retry_sites {
            let Some(schedule) = site.schedule() else { continue };
            if let Some((target, span, _)) = called_factory(index, other, schedule) {
                if target == file && span == binding {
                    uses.push((other, schedule.span()));
                }
            }
        }
    }
    uses
}

/// The expressions `Schedule.jittered` is piped after for `value` to jitter: `value` itself or,
/// for `c ? a : b` (where a `.pipe(…)` after the whole would bind to `b` alone), each branch
/// that waits and is not jittered, itself or its own branches.
fn jitter_points<'e>(index: &Index, file: FileId, version: u8, value: &'e Expr, depth: usize, out: &mut Vec<&'e Expr>) {
    let Expr::Cond { then, otherwise, .. } = value else {
        out.push(value);
        return;
    };
    if depth >= 4 {
        return;
    }
    for branch in [then.as_ref(), otherwise.as_ref()] {
        let summary = schedule::summarize(&effect::evaluate_schedule(index, file, branch, version).0);
        let waits = !matches!(summary.gap, Gap::Capped(ms) if ms == 0.0);
        if summary.jitter == Jitter::No && waits {
            jitter_points(index, file, version, branch, depth + 1, out);
        }
    }
}

/// `, Schedule.jittered` as one more argument of a schedule that ends in `.pipe(…)` (never a
/// second `.pipe(`), on a line of its own when the arguments are written one per line, else
/// `.pipe(Schedule.jittered)` after it; `module` is the file's name for `Schedule`.
fn jitter_insertion(value: &Expr, module: &str, text: Option<&[u8]>) -> Insertion {
    let piped = match value {
        Expr::Call { callee, args, .. } => match (callee.as_ref(), args.last()) {
            (Expr::Member(_, method, _), Some(last)) if method == "pipe" => Some(last.span().end),
            (Expr::Ident(name, _), Some(last)) if name == "pipe" => Some(last.span().end),
            _ => None,
        },
        _ => None,
    };
    let title = "pipe the schedule through `Schedule.jittered`".to_string();
    match piped {
        Some(end) => match text.and_then(|text| super::dialect::own_line(text, end as usize)) {
            Some((at, indent, comma)) => Insertion {
                at: at as u32,
                text: if comma {
                    format!("{indent}{module}.jittered,\n")
                } else {
                    format!(",\n{indent}{module}.jittered")
                },
                title,
            },
            None => Insertion {
                at: end,
                text: format!(", {module}.jittered"),
                title,
            },
        },
        None => Insertion {
            at: value.span().end,
            text: format!(".pipe({module}.jittered)"),
            title,
        },
    }
}

/// The binding outside the retry module a site names as its whole policy: `schedule:
/// storeRetry` (a module-level binding of any file, or a local `const`), with no `times` to
/// change it. Its file, its declarator and its name.
pub(super) fn site_binding(index: &Index, file: FileId, site: &RetrySite) -> Option<(FileId, Span, String)> {
    if site.times().is_some() || index.is_retry_module(file) {
        return None;
    }
    if let PolicyArg::Rust(arg) = &site.policy {
        return rust::site_binding(index, file, arg);
    }
    let schedule = site.schedule()?;
    match schedule {
        Expr::Local { name, def, value, .. } => {
            (!matches!(**value, Expr::Function { .. } | Expr::Opaque(_))).then(|| (file, *def, name.clone()))
        }
        Expr::Ident(..) | Expr::Member(..) => match index.resolve_path(file, schedule) {
            Resolved::Value {
                file: target,
                name,
                span,
                value,
            } if !index.is_retry_module(target) && !matches!(value, Expr::Function { .. } | Expr::Opaque(_)) => {
                Some((target, span, name.to_string()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// A local named policy's value, as one of its uses holds it (`Expr::Local`).
pub(super) fn named_local_value<'i>(index: &'i Index, named: &super::NamedPolicy) -> Option<&'i Expr> {
    match named_local(index, named)? {
        Expr::Local { value, .. } => Some(value),
        _ => None,
    }
}

/// A local named policy as one of its uses holds it (`Expr::Local`).
fn named_local<'i>(index: &'i Index, named: &super::NamedPolicy) -> Option<&'i Expr> {
    named.uses.iter().find_map(|(file, position, _)| {
        let site = index.loaded(*file)?.retry_sites.get(*position)?;
        match site.schedule()? {
            local @ Expr::Local { def, .. } if *def == named.binding => Some(local),
            _ => None,
        }
    })
}

/// Whether `schedule` is a plain reference to a policy exported by a retry module.
fn names_retry_module_policy(index: &Index, file: FileId, schedule: Option<&Expr>) -> bool {
    let Some(schedule) = schedule else { return false };
    matches!(index.resolve_path(file, schedule), Resolved::Value { file: target, .. } if index.is_retry_module(target))
}

/// The retry-module policy a site names unchanged: its file and the definition's span.
pub(super) fn named_policy(index: &Index, file: FileId, site: &RetrySite) -> Option<(FileId, Span)> {
    match &site.policy {
        PolicyArg::Rust(arg) => rust::named_policy(index, file, arg.chain.as_ref()?),
        PolicyArg::Effect(_) if site.times().is_none() => match index.resolve_path(file, site.schedule()?) {
            Resolved::Value { file: target, span, .. } if index.is_retry_module(target) => Some((target, span)),
            _ => None,
        },
        _ => None,
    }
}

/// Retry options bound to a name the site passes whole (`const opts = { schedule, while }`,
/// `Effect.retry(opts)`): a local, a module-level binding, an import.
pub fn bound_options<'i>(index: &'i Index, file: FileId, site: &'i RetrySite) -> Option<&'i Expr> {
    let PolicyArg::Effect(expr) = &site.policy else {
        return None;
    };
    let value = match expr {
        Expr::Local { value, .. } => value.as_ref(),
        Expr::Ident(..) | Expr::Member(..) => match index.resolve_path(file, expr) {
            Resolved::Value { value, .. } => value,
            _ => return None,
        },
        _ => return None,
    };
    let value = match value {
        Expr::Local { value, .. } => value.as_ref(),
        other => other,
    };
    matches!(value, Expr::Object(..)).then_some(value)
}

/// The schedule of an Effect site when it decides on the failure itself
/// (`Schedule.whileInput(isRetryable)`, a 4.x `Schedule.while(({ input }) => …)`), inline,
/// named or imported: that is the retry's predicate.
pub(super) fn input_filter<'i>(index: &'i Index, file: FileId, site: &'i RetrySite) -> Option<&'i Expr> {
    let PolicyArg::Effect(expr) = &site.policy else {
        return None;
    };
    let version = index.effect_major(file);
    let (sched, _) = effect::evaluate_policy_expr(index, file, expr, version);
    let mut filters = false;
    schedule::sim::visit_all(&sched, &mut |s| {
        filters |= matches!(s, Sched::While(_, crate::schedule::Callback::OnInput));
    });
    filters.then(|| site.schedule().unwrap_or(expr))
}

/// Whether the schedule model knows what the site's policy does.
pub(super) fn is_known(index: &Index, file: FileId, site: &RetrySite) -> bool {
    match &site.policy {
        PolicyArg::Effect(expr) => {
            let version = index.effect_major(file);
            let (sched, _) = effect::evaluate_policy_expr(index, file, expr, version);
            !matches!(sched, Sched::Unknown)
        }
        PolicyArg::Rust(arg) => arg
            .chain
            .as_ref()
            .is_some_and(|chain| rust::state(index, file, chain, 0).0.is_some()),
        PolicyArg::Default => true,
        PolicyArg::Unknown => false,
    }
}

/// One line of `retrylint policies`.
#[derive(Debug, serde::Serialize)]
pub struct PolicyRow {
    pub name: String,
    pub path: String,
    pub line: usize,
    /// `exact`, `at-most`, `time-limited`, `unbounded` or `unknown`.
    pub attempts: String,
    pub retries: Option<u64>,
    pub gap_cap_ms: Option<f64>,
    pub gap_grows: bool,
    pub jitter: Option<bool>,
    pub delays_ms: Option<Vec<f64>>,
    pub total_ms: Option<f64>,
    pub worst_total_ms: Option<f64>,
    /// Retry sites that name this policy (exports), or 1 for a site's own policy; for an RS2
    /// policy, the calls that resolve to it.
    pub sites: usize,
    /// RS2: whose policy it is (`call`, `mount`, `tenant`, `unplaced`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<&'static str>,
    /// RS2: `false` for `"enabled": false` (retry off at that level); `null` when unreadable.
    #[serde(skip_serializing_if = "is_rs2_enabled")]
    pub enabled: Option<bool>,
    /// RS2: the calls that resolve to the policy.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallRow>,
    /// Defined in a retry module the config names (`configured`) or one retrylint took as
    /// its package's retry module (`inferred`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_module: Option<&'static str>,
    /// A factory's row (`schedule(…)`, what holds for every argument) and its presets'
    /// (`schedule("patient")`): the factory's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub factory: Option<String>,
    /// A factory's calls at retry sites, with the arguments each passes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub called_with: Vec<FactoryCall>,
}

/// A retry site that calls a policy factory.
#[derive(Debug, serde::Serialize)]
pub struct FactoryCall {
    pub path: String,
    pub line: usize,
    /// The call as written: `Retry.schedule("patient")`.
    pub call: String,
}

/// Keeps `enabled` out of the JSON rows that are not RS2 (and of the enabled ones).
fn is_rs2_enabled(enabled: &Option<bool>) -> bool {
    *enabled == Some(true)
}

/// A call that resolves to an RS2 policy.
#[derive(Debug, serde::Serialize)]
pub struct CallRow {
    pub path: String,
    pub line: usize,
    pub method: Option<String>,
    /// Its effect class (`pure`, `idempotent`, `keyed`, `unsafe`), when known.
    pub effect: Option<&'static str>,
}

/// Every policy in the checked files: the retry modules' exports with how many retry sites
/// name each, then the policies sites build themselves, then the RS2 policies.
pub fn rows(index: &Index, analysis: &super::Analysis) -> Vec<PolicyRow> {
    use std::collections::HashMap;

    let files: Vec<FileId> = index.parsed_files().filter(|&f| !index.is_test_code(f)).collect();
    // Which export each site names.
    let mut uses: HashMap<(FileId, Span), usize> = HashMap::new();
    for &file in &files {
        for site in analysis.sites(index, file) {
            if let Some(named) = site.named {
                *uses.entry(named).or_default() += 1;
            }
        }
    }
    let mut rows = Vec::new();
    // The retry modules' named policies first: they are what a reviewer of the module reads.
    let (modules, others): (Vec<FileId>, Vec<FileId>) = files.iter().partition(|&&f| index.is_retry_module(f));
    for file in modules.into_iter().chain(others) {
        let Some(facts) = index.loaded(file) else { continue };
        for policy in analysis.policies(index, file) {
            let (name, sites) = match &policy.origin {
                Origin::Export { name, binding } => (name.clone(), uses.get(&(file, *binding)).copied().unwrap_or(0)),
                Origin::Named { name, .. } => (name.clone(), policy.uses.len()),
                Origin::Site { .. } => (format!("(inline) {}", crate::source::snippet(&policy.text, 48)), 1),
                // Listed below with their level and calls, the disabled ones too.
                Origin::Config { .. } => continue,
            };
            let mut row = summary_row(
                name,
                index.path(file).display().to_string(),
                facts.position(policy.span.start).0,
                &policy.summary,
                sites,
            );
            if index.is_retry_module(file) {
                let inferred = index.inferred_retry_modules().iter().any(|m| m.file == file);
                row.retry_module = Some(if inferred { "inferred" } else { "configured" });
            }
            let factory = factory_binding(index, file, &policy.origin);
            if let Some((name, _)) = &factory {
                row.factory = Some(name.clone());
                row.sites = policy.uses.len();
                row.called_with = policy
                    .uses
                    .iter()
                    .filter_map(|&(at, span)| {
                        let facts = index.loaded(at)?;
                        let call = analysis.policies(index, at).iter().find(|p| p.span == span)?;
                        Some(FactoryCall {
                            path: index.path(at).display().to_string(),
                            line: facts.position(span.start).0,
                            call: call.text.clone(),
                        })
                    })
                    .collect();
            }
            let retry_module = row.retry_module;
            rows.push(row);
            // Its presets, each as the factory builds it.
            let Some((name, value)) = factory else { continue };
            let version = index.effect_major(file);
            for preset in factory_presets(index, file, value) {
                let (sched, _) =
                    effect::evaluate_factory(index, file, value, version, Some(std::slice::from_ref(&preset)));
                if matches!(sched, Sched::Unknown) {
                    continue;
                }
                let mut row = summary_row(
                    format!("{name}({preset:?})"),
                    index.path(file).display().to_string(),
                    facts.position(policy.span.start).0,
                    &schedule::summarize(&sched),
                    0,
                );
                row.retry_module = retry_module;
                row.factory = Some(name.clone());
                rows.push(row);
            }
        }
    }
    rows.extend(rs2_rows(index, analysis, &files));
    rows
}

fn summary_row(name: String, path: String, line: usize, s: &Summary, sites: usize) -> PolicyRow {
    use crate::schedule::{Attempts, Gap, Jitter};
    let (attempts, retries) = match s.attempts {
        Attempts::Exact(n) => ("exact", Some(n)),
        Attempts::AtMost(n) => ("at-most", Some(n)),
        Attempts::TimeLimited => ("time-limited", None),
        Attempts::Unbounded => ("unbounded", None),
        Attempts::Unknown => ("unknown", None),
    };
    PolicyRow {
        name,
        path,
        line,
        attempts: attempts.into(),
        retries,
        gap_cap_ms: match s.gap {
            Gap::Capped(ms) => Some(ms),
            _ => None,
        },
        gap_grows: s.gap == Gap::Growing,
        jitter: match s.jitter {
            Jitter::Yes => Some(true),
            Jitter::No => Some(false),
            Jitter::Unknown => None,
        },
        delays_ms: s.delays.clone(),
        total_ms: s.total_ms,
        worst_total_ms: s.worst_total_ms,
        sites,
        level: None,
        enabled: Some(true),
        calls: Vec::new(),
        retry_module: None,
        factory: None,
        called_with: Vec::new(),
    }
}

/// The factory a retry-module policy is (`schedule(…)`): its name and function.
fn factory_binding<'i>(index: &'i Index, file: FileId, origin: &Origin) -> Option<(String, &'i Expr)> {
    let Origin::Export { name, binding } = origin else {
        return None;
    };
    let name = name.strip_suffix("(…)")?;
    let facts = index.facts(file)?;
    let value = &facts.bindings.iter().find(|b| b.span == *binding)?.value;
    matches!(value, Expr::Function { .. }).then(|| (name.to_string(), value))
}

/// Presets a factory looks its argument up in (`presets[preset]`, `table[name]`): the keys
/// of each object table indexed by one of its parameters.
fn factory_presets(index: &Index, file: FileId, factory: &Expr) -> Vec<String> {
    let Expr::Function {
        params,
        body: Some(body),
        ..
    } = factory
    else {
        return Vec::new();
    };
    let mut keys: Vec<String> = Vec::new();
    body.walk(&mut |e| {
        let Expr::Index { object, index: key, .. } = e else {
            return;
        };
        if !matches!(key.as_ref(), Expr::Param(name, _) if params.contains(name)) {
            return;
        }
        let table = match object.as_ref() {
            Expr::Local { value, .. } => Some(value.as_ref()),
            Expr::Ident(..) => match index.resolve_path(file, object) {
                Resolved::Value { value, .. } => Some(value),
                _ => None,
            },
            _ => None,
        };
        if let Some(Expr::Object(props, _)) = table {
            for prop in props {
                if prop.key != "..." && !keys.contains(&prop.key) && keys.len() < 32 {
                    keys.push(prop.key.clone());
                }
            }
        }
    });
    keys
}

/// Every RS2 policy with its level and the calls that resolve to it; a disabled one says
/// `off` and nothing more.
fn rs2_rows(index: &Index, analysis: &super::Analysis, files: &[FileId]) -> Vec<PolicyRow> {
    use std::collections::HashMap;
    let mut calls: HashMap<(FileId, usize), Vec<CallRow>> = HashMap::new();
    for &file in files {
        let Some(facts) = index.loaded(file) else { continue };
        for (call, info) in facts.rs2.calls.iter().zip(&analysis.rs2(index, file).calls) {
            let Some(effective) = info.effective else { continue };
            calls
                .entry((effective.file, effective.policy))
                .or_default()
                .push(CallRow {
                    path: index.path(file).display().to_string(),
                    line: facts.position(call.class_span().start).0,
                    method: call.method.as_ref().map(|(method, _)| method.clone()),
                    effect: info.class.map(|class| class.as_str()),
                });
        }
    }
    let mut rows = Vec::new();
    for &file in files {
        let Some(facts) = index.loaded(file) else { continue };
        for (at, (policy, info)) in facts
            .rs2
            .policies
            .iter()
            .zip(&analysis.rs2(index, file).policies)
            .enumerate()
        {
            let resolving = calls.remove(&(file, at)).unwrap_or_default();
            let mut row = summary_row(
                rs2::policy_label(policy, info.level),
                index.path(file).display().to_string(),
                facts.position(policy.retry.start).0,
                &info.summary,
                resolving.len(),
            );
            if info.enabled == Some(false) {
                row = PolicyRow {
                    attempts: "off".into(),
                    retries: None,
                    gap_cap_ms: None,
                    gap_grows: false,
                    jitter: None,
                    delays_ms: None,
                    total_ms: None,
                    worst_total_ms: None,
                    ..row
                };
            }
            row.level = Some(info.level.as_str());
            row.enabled = info.enabled;
            row.calls = resolving;
            rows.push(row);
        }
    }
    rows
}

/// The human table of `retrylint policies`.
pub fn table(rows: &[PolicyRow]) -> String {
    let header = [
        "policy",
        "defined at",
        "retries",
        "attempts",
        "gap cap",
        "jitter",
        "nominal delays",
        "total",
        "worst",
        "sites",
    ];
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for row in rows {
        // Retries after the first call, and attempts counting it: `recurs(3)` is 3 and 4.
        let (retries, attempts) = match (row.attempts.as_str(), row.retries) {
            ("exact", Some(n)) => (n.to_string(), (n + 1).to_string()),
            ("at-most", Some(n)) => (format!("≤ {n}"), format!("≤ {}", n + 1)),
            ("time-limited", _) => ("time-limited".into(), "time-limited".into()),
            ("unbounded", _) => ("unbounded".into(), "unbounded".into()),
            ("off", _) => ("off".into(), "1".into()),
            _ => ("?".into(), "?".into()),
        };
        let gap = match (row.gap_cap_ms, row.gap_grows) {
            (Some(ms), _) => format_ms(ms),
            (None, true) => "none (grows)".into(),
            _ => "?".into(),
        };
        let jitter = match row.jitter {
            Some(true) => "yes",
            Some(false) => "no",
            None => "?",
        };
        let delays = match &row.delays_ms {
            Some(d) if d.is_empty() => "none".into(),
            Some(d) => {
                let shown: Vec<String> = d.iter().take(5).map(|x| format_ms(*x)).collect();
                format!("{}{}", shown.join(", "), if d.len() > 5 { ", …" } else { "" })
            }
            None => "?".into(),
        };
        // Retry off at that level: nothing to show but that.
        let (gap, jitter, delays) = if row.attempts == "off" {
            ("-".into(), "-", "-".into())
        } else {
            (gap, jitter, delays)
        };
        let total = row.total_ms.map(format_ms).unwrap_or_else(|| "-".into());
        let worst = row.worst_total_ms.map(format_ms).unwrap_or_else(|| "-".into());
        cells.push(vec![
            // Names and paths are the project's: one line each, nothing a terminal acts on.
            crate::source::printable::line(&row.name).into_owned(),
            format!("{}:{}", crate::source::printable::line(&row.path), row.line),
            retries,
            attempts,
            gap,
            jitter.into(),
            delays,
            total,
            worst,
            row.sites.to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| cells.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in cells {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell}{}", " ".repeat(width - cell.chars().count())))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    // Retry modules taken from the code rather than the config are said so.
    let mut inferred: Vec<&str> = rows
        .iter()
        .filter(|r| r.retry_module == Some("inferred"))
        .map(|r| r.path.as_str())
        .collect();
    inferred.dedup();
    for path in inferred {
        out.push_str(&format!(
            "\n{path}: inferred retry module (name it in `retry-modules` to make it explicit)\n"
        ));
    }
    // Factories: the arguments each is called with.
    let factories: Vec<&PolicyRow> = rows.iter().filter(|r| !r.called_with.is_empty()).collect();
    if !factories.is_empty() {
        out.push_str("\narguments each factory is called with:\n");
        for row in factories {
            out.push_str(&format!(
                "{}  {}:{}\n",
                crate::source::printable::line(&row.name),
                crate::source::printable::line(&row.path),
                row.line
            ));
            for call in &row.called_with {
                out.push_str(&format!(
                    "  {}:{}  {}\n",
                    crate::source::printable::line(&call.path),
                    call.line,
                    crate::source::printable::line(&crate::source::snippet(&call.call, 72))
                ));
            }
        }
    }
    // RS2: which calls each policy governs.
    let governing: Vec<&PolicyRow> = rows.iter().filter(|r| !r.calls.is_empty()).collect();
    if !governing.is_empty() {
        out.push_str("\ncalls resolving to each RS2 policy:\n");
        for row in governing {
            out.push_str(&format!("{}  {}:{}\n", row.name, row.path, row.line));
            for call in &row.calls {
                let method = call.method.as_deref().unwrap_or("-");
                let effect = call.effect.unwrap_or("?");
                out.push_str(&format!("  {}:{}  {method}  {effect}\n", call.path, call.line));
            }
        }
    }
    out
}
