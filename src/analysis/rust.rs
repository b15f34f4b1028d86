//! Rust policies: the retry module's named policies (`pub fn transient() -> ExponentialBuilder`,
//! `pub const CONTENTION: …`) and every policy a retry site builds or changes itself,
//! evaluated with the libraries' semantics (`schedule::rust`). Paths to named policies are
//! resolved by the index (`index::rust`); a path it cannot explain is unknown, and silent.

use super::model::{Insertion, Origin, Policy, Problem};
use crate::facts::{PolicyArg, RustBase, RustChain, RustPolicyArg};
use crate::index::{FileId, Index};
use crate::schedule::rust::{self as model, Applied, Backoff};
use crate::schedule::{self, Library, Sched};
use crate::source::Span;

/// How many named policies are followed from a site to a builder.
const MAX_FOLLOW: usize = 8;

pub(super) fn collect(analysis: &super::Analysis, index: &Index, file: FileId) -> Vec<Policy> {
    let Some(facts) = index.facts(file) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if index.is_retry_module(file) {
        for policy in facts.rust_policies.iter().filter(|p| p.public) {
            // A factory is judged on what holds for every argument (issue 25.3).
            let mut mask = Mask::default();
            // A config method of the retry module: judged with its type's default values.
            let value = policy.with_defaults.as_ref().unwrap_or(&policy.value);
            let (state, problems) = if policy.params > 0 {
                state_with(index, file, value, 0, Some(&mut mask))
            } else {
                state(index, file, value, 0)
            };
            let Some(mut found) = evaluated(value, state, problems) else {
                continue;
            };
            found.0 = mask.apply(found.0);
            // Named as a caller writes it after the module: `Policies::CONTENTION` for an
            // associated item, `jobs::nightly` in an inline `mod`.
            let mut name = policy.module.join("::");
            if !name.is_empty() {
                name.push_str("::");
            }
            name.push_str(&policy.name);
            let origin = Origin::Export {
                name,
                binding: policy.item,
            };
            out.push(named(
                index,
                file,
                origin,
                policy.name_span,
                &policy.value,
                found,
                Vec::new(),
            ));
        }
        // The module's own policies that no export hands out but its code steps by hand
        // (`Self { backoff: FibonacciBackoff::from_millis(900).map(jitter) }` stepped by
        // `self.backoff.next()`): judged like its exports (issue 25.4); built here, they are
        // no inline schedule.
        for (stepped, found) in judged_stepped(analysis, index, file) {
            // A function of the module's policies (called here, or a factory's `let`) is a
            // policy or a private base of one, judged as its export is.
            let function = stepped.function
                || facts
                    .rust_policies
                    .iter()
                    .any(|p| p.name_span == stepped.name_span || p.item.contains(stepped.name_span));
            if !function {
                out.push(stepped_policy(index, file, stepped, found));
            }
        }
        return out;
    }
    // Functions and methods of this file that sites name as their whole policy, outside the
    // retry module (`fn with_policy() -> ExponentialBuilder`): one policy each, reported at
    // its definition with its sites as related locations.
    for named in analysis.named_in(index, file) {
        let Some(policy) = facts.rust_policies.iter().find(|p| p.name_span == named.binding) else {
            continue;
        };
        let mut mask = Mask::default();
        let (state, problems) = state_with(index, file, &policy.value, 0, Some(&mut mask));
        let Some(mut found) = evaluated(&policy.value, state, problems) else {
            continue;
        };
        found.0 = mask.apply(found.0);
        let origin = Origin::Named {
            name: named.name.clone(),
            binding: named.binding,
        };
        let uses = named.uses.iter().map(|(f, _, span)| (*f, *span)).collect();
        out.push(self::named(
            index,
            file,
            origin,
            named.binding,
            &policy.value,
            found,
            uses,
        ));
    }
    for site in &facts.retry_sites {
        let PolicyArg::Rust(rust) = &site.policy else { continue };
        let Some(chain) = &rust.chain else { continue };
        if named_policy(index, file, chain).is_some() || site_binding(index, file, rust).is_some() {
            continue;
        }
        // A builder defined elsewhere in the file (a struct field set by the constructor) is
        // one policy, reported where it is built, with every site using it as a related
        // location — as a named policy outside the retry module is.
        let apart = rust.defined_apart_in(index.text(file));
        if let Some(built) = apart {
            if let Some(policy) = out
                .iter_mut()
                .find(|p| matches!(p.origin, Origin::Named { binding, .. } if binding == built) && p.text == chain.text)
            {
                policy.uses.push((file, rust.arg));
                continue;
            }
        }
        let mut mask = Mask::default();
        let (state, problems) = state_with(index, file, chain, 0, Some(&mut mask));
        let Some(mut found) = evaluated(chain, state, problems) else {
            continue;
        };
        found.0 = mask.apply(found.0);
        // A factory's call: what holds for every argument is the factory's, reported once
        // where it is defined; the call is judged for what its arguments decide.
        if let Some(regardless) = factory_regardless(index, file, chain) {
            found.0 = without(found.0, &regardless);
        } else if let Some(regardless) = rust.regardless.as_deref() {
            // A project retry builder's call: likewise, its factory's.
            let mut mask = Mask::default();
            let (state, problems) = state_with(index, file, regardless, 0, Some(&mut mask));
            if let Some(known) = evaluated(regardless, state, problems) {
                found.0 = without(found.0, &mask.apply(known.0));
            }
        }
        if let Some(built) = apart {
            let name = match &rust.local {
                // A `let` several sites share is named by its binding.
                Some((local, _)) => local.clone(),
                None => index
                    .text(file)
                    .and_then(|text| text.get(rust.arg.start as usize..rust.arg.end as usize))
                    .map(|t| crate::source::snippet(&String::from_utf8_lossy(t), 48))
                    .unwrap_or_else(|| chain.text.clone()),
            };
            out.push(Policy {
                origin: Origin::Named { name, binding: built },
                span: built,
                schedule: Some(chain.span),
                text: chain.text.clone(),
                summary: found.0,
                problems: found.1,
                library: found.2,
                effect: Default::default(),
                jitter_fix: found
                    .3
                    .map(|fix| own_line(index.text(file), chain, fix))
                    .into_iter()
                    .collect(),
                uses: vec![(file, rust.arg)],
            });
            continue;
        }
        out.push(Policy {
            origin: Origin::Site {
                callee: site.callee.clone(),
            },
            span: rust.arg,
            schedule: Some(chain.span),
            // A builder bound to a local is named by it, as written at the site.
            text: rust
                .local
                .as_ref()
                .map_or_else(|| chain.text.clone(), |(name, _)| name.clone()),
            summary: found.0,
            problems: found.1,
            library: found.2,
            effect: Default::default(),
            jitter_fix: found
                .3
                .map(|fix| own_line(index.text(file), chain, fix))
                .into_iter()
                .collect(),
            uses: Vec::new(),
        });
    }
    for (stepped, found) in stepped_policies(analysis, index, file) {
        out.push(stepped_policy(index, file, stepped, found));
    }
    out
}

fn stepped_policy(
    index: &Index,
    file: FileId,
    stepped: &crate::facts::RustStepped,
    found: (schedule::Summary, Vec<Problem>, Library, Option<Insertion>),
) -> Policy {
    Policy {
        origin: Origin::Named {
            name: stepped.name.clone(),
            binding: stepped.name_span,
        },
        span: stepped.name_span,
        schedule: Some(stepped.value.span),
        text: stepped.value.text.clone(),
        summary: found.0,
        problems: found.1,
        library: found.2,
        effect: Default::default(),
        jitter_fix: found
            .3
            .map(|fix| own_line(index.text(file), &stepped.value, fix))
            .into_iter()
            .collect(),
        uses: stepped.uses.iter().map(|u| (file, *u)).collect(),
    }
}

/// The file's policies no retry site is given (`facts::RustStepped`), outside the retry
/// module, evaluated; a function sites name as their policy is reported as theirs.
#[allow(clippy::type_complexity)]
pub fn stepped_policies<'a>(
    analysis: &super::Analysis,
    index: &'a Index,
    file: FileId,
) -> Vec<(
    &'a crate::facts::RustStepped,
    (schedule::Summary, Vec<Problem>, Library, Option<Insertion>),
)> {
    if index.is_retry_module(file) {
        return Vec::new();
    }
    judged_stepped(analysis, index, file)
}

/// The file's policies no retry site is given, evaluated, in the retry module too.
#[allow(clippy::type_complexity)]
fn judged_stepped<'a>(
    analysis: &super::Analysis,
    index: &'a Index,
    file: FileId,
) -> Vec<(
    &'a crate::facts::RustStepped,
    (schedule::Summary, Vec<Problem>, Library, Option<Insertion>),
)> {
    let Some(facts) = index.facts(file) else {
        return Vec::new();
    };
    if facts.rust_stepped.is_empty() {
        return Vec::new();
    }
    let named: Vec<Span> = analysis.named_in(index, file).map(|n| n.binding).collect();
    // A builder stored in a field that a retry site of the file reads (`Retry::spawn(
    // self.backoff.clone().take(7), …)`): the site's policy, judged there with its changes
    // (a site's chain holds the builder's own methods).
    let at_sites: Vec<&RustChain> = facts
        .retry_sites
        .iter()
        .filter_map(|site| match &site.policy {
            PolicyArg::Rust(rust) => rust.chain.as_ref(),
            _ => None,
        })
        .collect();
    let read_by_site = |stepped: &crate::facts::RustStepped| {
        let built = stepped.value.span;
        at_sites.iter().any(|chain| {
            chain.span == built
                || (!stepped.value.ops.is_empty()
                    && chain
                        .ops
                        .iter()
                        .any(|op| built.contains(op.span) && stepped.value.ops.iter().any(|o| o.span == op.span)))
        })
    };
    facts
        .rust_stepped
        .iter()
        .filter(|s| !(s.function && named.contains(&s.name_span)))
        .filter(|s| s.function || !read_by_site(s))
        .filter_map(|stepped| {
            let mut mask = Mask::default();
            let (state, problems) = state_with(index, file, &stepped.value, 0, Some(&mut mask));
            let mut found = evaluated(&stepped.value, state, problems)?;
            found.0 = mask.apply(found.0);
            Some((stepped, found))
        })
        .collect()
}

/// A builder written one method per line gets the new method on a line of its own, indented
/// as its last one.
fn own_line(text: Option<&[u8]>, chain: &crate::facts::RustChain, mut fix: Insertion) -> Insertion {
    let Some(text) = text.filter(|_| !chain.ops.is_empty()) else {
        return fix;
    };
    // The chain's last line: `        .with_max_times(3)`.
    let end = (chain.span.end as usize).min(text.len());
    let line_start = text[..end].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    if line_start <= chain.span.start as usize {
        return fix;
    }
    let line = &text[line_start..];
    let indent = line.iter().take_while(|b| **b == b' ' || **b == b'\t').count();
    if line_start > 0 && line.get(indent) == Some(&b'.') && fix.text.starts_with('.') {
        let indent = String::from_utf8_lossy(&line[..indent]).into_owned();
        fix.text = format!("\n{indent}{}", fix.text);
    }
    fix
}

/// A policy with a name (a retry-module export, or a function sites name as their policy),
/// reported at `span`, its value's evaluation `found`.
fn named(
    index: &Index,
    file: FileId,
    origin: Origin,
    span: Span,
    value: &RustChain,
    found: (schedule::Summary, Vec<Problem>, Library, Option<Insertion>),
    uses: Vec<(FileId, Span)>,
) -> Policy {
    Policy {
        origin,
        span,
        schedule: Some(value.span),
        text: value.text.clone(),
        summary: found.0,
        problems: found.1,
        library: found.2,
        effect: Default::default(),
        jitter_fix: found
            .3
            .map(|fix| own_line(index.text(file), value, fix))
            .into_iter()
            .collect(),
        uses,
    }
}

/// The summary, problems, library and jitter fix of an evaluated builder; `None` when unknown.
#[allow(clippy::type_complexity)]
fn evaluated(
    chain: &RustChain,
    state: Option<Backoff>,
    problems: Vec<Problem>,
) -> Option<(schedule::Summary, Vec<Problem>, Library, Option<Insertion>)> {
    let sched = state.as_ref().map(model::sched).unwrap_or(Sched::Unknown);
    if matches!(sched, Sched::Unknown) && problems.is_empty() {
        return None;
    }
    // Which library a builder is of is known from its constructor; an unknown base leaves
    // backon's wording, the most common library.
    let lib = state.as_ref().map_or(Library::Backon, Backoff::lib);
    // backon's builders take `.with_jitter()` as their last method; after `.build()` the
    // value is an iterator and has no such method.
    let builder = chain.ops.last().is_none_or(|op| op.method != "build");
    let jitter_fix = (matches!(state, Some(Backoff::Backon { .. })) && builder).then(|| Insertion {
        at: chain.span.end,
        text: ".with_jitter()".into(),
        title: "add `.with_jitter()` to the builder".into(),
    });
    let summary = match &state {
        Some(state) => model::summary(state),
        None => schedule::summarize(&sched),
    };
    Some((summary, problems, lib, jitter_fix))
}

/// The configuration a chain ends with: its base's (a constructor's defaults, or a named
/// policy's, followed across files) with the chain's methods applied.
pub fn state(index: &Index, file: FileId, chain: &RustChain, depth: usize) -> (Option<Backoff>, Vec<Problem>) {
    state_with(index, file, chain, depth, None)
}

/// [`state`]; with `partial`, a method given a value the analysis cannot know
/// (`.with_max_times(self.max_retries)` of a config struct) is passed over and `partial` set,
/// unless the method may touch jitter: the state then tells only whether the policy jitters.
fn state_with(
    index: &Index,
    file: FileId,
    chain: &RustChain,
    depth: usize,
    mut partial: Option<&mut Mask>,
) -> (Option<Backoff>, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut current = match &chain.base {
        RustBase::New { state, .. } => state.clone(),
        RustBase::Deferred { path, args, .. } => match model::constructor(path, args) {
            Some((_, state)) => state,
            // Values not known here: the delays depend on them, the rest does not.
            None => match (partial.as_deref_mut(), model::constructor_with_placeholders(path, args)) {
                (Some(mask), Some((_, state))) => {
                    mask.delays = true;
                    state
                }
                _ => return (None, problems),
            },
        },
        RustBase::Call { path, args } if depth < MAX_FOLLOW => match index.resolve_rust_factory(file, path, args.len())
        {
            Some((target, policy)) => {
                let value = substitute(&policy.value, args);
                let (state, inner) = state_with(index, target, &value, depth + 1, partial.as_deref_mut());
                problems.extend(inner);
                match state {
                    Some(state) => state,
                    None => return (None, problems),
                }
            }
            None => return (None, problems),
        },
        RustBase::Named(path) if depth < MAX_FOLLOW => match index.resolve_rust(file, path) {
            Some((target, policy)) => {
                let (state, inner) = state_with(index, target, &policy.value, depth + 1, partial.as_deref_mut());
                problems.extend(inner);
                match state {
                    Some(state) => state,
                    None => return (None, problems),
                }
            }
            None => return (None, problems),
        },
        _ => return (None, problems),
    };
    for op in &chain.ops {
        match model::apply(&mut current, &op.method, &op.args) {
            Applied::Ok => {}
            Applied::Unknown if partial.is_some() && passes_over(op) => {
                if let Some(mask) = partial.as_deref_mut() {
                    mask.jitter_only = true;
                }
            }
            Applied::Unknown => return (None, problems),
            Applied::Problem(message) => {
                problems.push(Problem {
                    file,
                    span: op.span,
                    message,
                });
                return (None, problems);
            }
        }
    }
    (Some(current), problems)
}

/// Whether a method whose value is unknown can be passed over when only the jitter is asked
/// for: it is given an unknown value, and no library's jitter is set through a method of its
/// name (backon's `with_jitter`, backoff's `randomization_factor`, reqwest-retry's `jitter`).
fn passes_over(op: &crate::facts::RustOp) -> bool {
    let method = op.method.to_ascii_lowercase();
    // A statement that may change anything (`configure(&mut b)`) leaves nothing known.
    op.method != model::OPAQUE
        && op.args.iter().any(model::Arg::not_known)
        && !method.contains("jitter")
        && !method.contains("random")
}

/// What of a partly known policy is not known: everything but the jitter (a method given an
/// unknown value was passed over), or the delays (a constructor given unknown values; its
/// methods, the attempts and the cap are still known).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Mask {
    jitter_only: bool,
    delays: bool,
}

impl Mask {
    fn apply(self, summary: schedule::Summary) -> schedule::Summary {
        if self.jitter_only {
            only_jitter(summary)
        } else if self.delays {
            schedule::Summary {
                delays: None,
                total_ms: None,
                worst_total_ms: None,
                ..summary
            }
        } else {
            summary
        }
    }
}

/// A factory's value with the arguments of a call for its parameters.
fn substitute(value: &RustChain, args: &[model::Arg]) -> RustChain {
    value.given(args)
}

/// For a chain that is a call of a factory: the factory's summary with its parameters
/// unknown (what holds for every argument).
fn factory_regardless(index: &Index, file: FileId, chain: &RustChain) -> Option<schedule::Summary> {
    let RustBase::Call { path, args } = &chain.base else {
        return None;
    };
    let (target, policy) = index.resolve_rust_factory(file, path, args.len())?;
    let mut mask = Mask::default();
    let (state, problems) = state_with(index, target, &policy.value, 1, Some(&mut mask));
    let found = evaluated(&policy.value, state, problems)?;
    Some(mask.apply(found.0))
}

/// `summary` without what `known` already says (reported where `known` is).
fn without(summary: schedule::Summary, known: &schedule::Summary) -> schedule::Summary {
    let mut out = summary;
    if known.jitter != schedule::Jitter::Unknown {
        out.jitter = schedule::Jitter::Unknown;
    }
    if known.attempts != schedule::Attempts::Unknown {
        out.attempts = schedule::Attempts::Unknown;
    }
    if known.gap != schedule::Gap::Unknown {
        out.gap = schedule::Gap::Unknown;
    }
    out
}

/// A summary of which only the jitter is known: attempts, gaps and delays are not.
fn only_jitter(summary: schedule::Summary) -> schedule::Summary {
    schedule::Summary {
        attempts: schedule::Attempts::Unknown,
        gap: schedule::Gap::Unknown,
        jitter: summary.jitter,
        delays: None,
        total_ms: None,
        worst_total_ms: None,
    }
}

/// The retry-module policy a chain names unchanged (`retry::transient()`): its file and
/// item. Such a site has no policy of its own: its findings belong to the policy it names.
pub fn named_policy(index: &Index, file: FileId, chain: &RustChain) -> Option<(FileId, Span)> {
    let RustBase::Named(path) = &chain.base else {
        return None;
    };
    if !chain.ops.is_empty() {
        return None;
    }
    let (target, policy) = index.resolve_rust(file, path)?;
    index.is_retry_module(target).then_some((target, policy.item))
}

/// The function or method outside the retry module a site names unchanged as its policy
/// (`.retry(with_policy())`, `.retry(Config::strategy())`, through a `let` too): its file, its
/// name's span and its name. Its defects are reported once, where it is defined.
pub fn site_binding(index: &Index, file: FileId, arg: &RustPolicyArg) -> Option<(FileId, Span, String)> {
    let chain = arg.chain.as_ref()?;
    let RustBase::Named(path) = &chain.base else {
        return None;
    };
    if !chain.ops.is_empty() || index.is_retry_module(file) {
        return None;
    }
    let (target, policy) = index.resolve_rust(file, path)?;
    if index.is_retry_module(target) {
        return None;
    }
    Some((target, policy.name_span, policy.name.clone()))
}

/// How the named policy defined at `name_span` of `file` is built, for `inline-schedule`.
pub(super) fn named_builder(index: &Index, file: FileId, name_span: Span) -> Option<String> {
    let facts = index.facts(file)?;
    let policy = facts.rust_policies.iter().find(|p| p.name_span == name_span)?;
    let found = built(index, file, &policy.value, 0)?;
    Some(match found.changed {
        Some(methods) => format!("{}` changed with `{methods}", found.builder),
        None => found.builder,
    })
}

/// How a site's policy is built, when it is built outside the retry module.
#[derive(Debug)]
pub struct Built {
    /// The constructor (`ExponentialBuilder::default`), the helper (`capped(…)`), or the
    /// named policy changed (`retry::transient()`).
    pub builder: String,
    /// The methods that change a retry-module policy (`.with_max_times(…)`), when that is how.
    pub changed: Option<String>,
    /// Named policies followed from the site to the builder, nearest first.
    pub via: Vec<(FileId, String, Span)>,
}

/// Looks for where a chain builds a policy, following named policies but never into the
/// retry module (its policies are named). `None` when the chain names a retry-module policy
/// unchanged, or when it cannot be followed.
pub fn built(index: &Index, file: FileId, chain: &RustChain, depth: usize) -> Option<Built> {
    if depth > MAX_FOLLOW {
        return None;
    }
    match &chain.base {
        // A config type's builder: named by the configuration.
        RustBase::New { configured: true, .. } => None,
        RustBase::Deferred { ctor, .. } => Some(Built {
            builder: ctor.clone(),
            changed: None,
            via: Vec::new(),
        }),
        // A factory called with arguments names the policy.
        RustBase::Call { .. } => None,
        RustBase::New { ctor, via, .. } => Some(Built {
            builder: via.as_ref().map(|h| format!("{h}(…)")).unwrap_or_else(|| ctor.clone()),
            changed: None,
            via: Vec::new(),
        }),
        RustBase::Named(path) => {
            let (target, policy) = index.resolve_rust(file, path)?;
            if index.is_retry_module(target) {
                if chain.ops.is_empty() {
                    return None;
                }
                let methods: Vec<String> = chain
                    .ops
                    .iter()
                    .map(|op| format!(".{}(…)", op.method.trim_start_matches('=')))
                    .collect();
                return Some(Built {
                    builder: format!("{}()", path.render()),
                    changed: Some(methods.join("")),
                    via: Vec::new(),
                });
            }
            let mut found = built(index, target, &policy.value, depth + 1)?;
            found.via.insert(0, (target, policy.name.clone(), policy.name_span));
            Some(found)
        }
        RustBase::Unknown => None,
    }
}
