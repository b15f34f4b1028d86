//! Analysis: everything rules need that takes resolution across files, computed once per
//! file before rules run — each file's retry policies evaluated in the schedule model, and
//! for each retry site what it names, where its policy is built, what it retries (its role),
//! what its unit does, and whether a durable retrier runs it.
//!
//! The language-specific parts live here, behind language-neutral results: `effect`
//! evaluates Effect `Schedule` expressions, `rust` the Rust libraries' builder chains,
//! `dialect` says how each library spells a remedy. Rules read [`Policy`] and
//! [`SiteAnalysis`] and never branch on the language.
//!
//! Analysis only reads the index. A resolution that needs a file the index has not loaded
//! is a miss (see `index`); the pipeline loads the missed files and analyses again.

pub mod dialect;
mod durable;
pub mod effect;
mod imports;
mod inline;
pub mod lease;
mod model;
pub mod names;
mod policy;
pub mod replay;
pub mod rs2;
pub mod rust;
pub mod store;

use std::sync::OnceLock;

use rayon::prelude::*;

pub use durable::Durable;
pub use inline::{Followed, How, Inline};
pub use model::{Insertion, Origin, Policy, Problem};
pub use policy::{bound_options, passed, rows, table, Passed, PolicyRow};

/// The `Schedule.*` builder `value` (an expression of `file`) is built with, through bindings
/// and helpers outside the retry module: `None` for a retry-module policy or an unknown value.
pub fn inline_builder(index: &Index, file: FileId, value: &Expr) -> Option<String> {
    inline::builder(index, file, value)
}
pub use replay::{Finding, Replays, Role, Stacked};

use crate::facts::{duration_millis, string_value, Expr, PolicyArg, PollKind, PollLoop, Predicate, RetrySite};
use crate::index::{FileId, Index, Resolved};
use crate::source::Span;

/// The cron wrapper a callback is passed to, and the handler of it the callback is: the callee
/// resolved (in this file or across files) to a function whose file records it as a wrapper
/// that hands that argument its slot.
pub fn cron_wrapper_of<'i>(
    index: &'i Index,
    file: FileId,
    since: &crate::facts::SinceFromNow,
) -> Option<(FileId, &'i crate::facts::CronWrapper, &'i crate::facts::CronHandler)> {
    let (file, value) = match &since.callee {
        Expr::Local { value, .. } => (file, value.as_ref()),
        callee => match index.resolve_path(file, callee) {
            Resolved::Value { file, value, .. } => (file, value),
            _ => return None,
        },
    };
    let value = match value {
        Expr::Local { value, .. } => value.as_ref(),
        other => other,
    };
    let Expr::Function { span, .. } = value else {
        return None;
    };
    let wrapper = index.facts(file)?.cron_wrappers.iter().find(|w| w.span == *span)?;
    let handler = wrapper
        .handlers
        .iter()
        .find(|h| h.param == since.arg && h.key == since.key)?;
    Some((file, wrapper, handler))
}

/// What analysis found about one retry site (same order as the file's `retry_sites`).
#[derive(Debug, Clone)]
pub struct SiteAnalysis {
    /// What the site retries, by the names its policy and predicate use.
    pub role: Role,
    /// The retry-module policy the site names unchanged: its file and definition.
    pub named: Option<(FileId, Span)>,
    /// The binding outside the retry module the site names as its whole policy
    /// (`schedule: storeRetry`): its defects are reported where it is defined.
    pub binding: Option<(FileId, Span)>,
    /// Where the site's policy is built, when it is not named in the retry module.
    pub inline: Option<Inline>,
    /// Which failures the site replays. The extractor's answer, except that a bare schedule
    /// the model cannot read may filter its input itself: unknown.
    pub predicate: Predicate,
    /// Whether the site replays connection loss (decision 2), by its role and predicate.
    pub replays: Replays,
    /// The durable retrier the site runs under, if any.
    pub durable: Option<Durable>,
    /// The first step of the retried unit that appends (replaying it applies it twice).
    pub appends: Option<Finding>,
    /// A retry the unit runs itself that retries the same failures: attempts multiply.
    pub stacked: Option<Stacked>,
    /// The unit's transaction and the first step that runs after it commits.
    pub after_commit: Option<(Span, Finding)>,
    /// The retry restarts long-running work (its result is forked, or the work never ends):
    /// a loop judged by decision 6, not a request retry within a budget.
    pub supervisor: bool,
}

/// What analysis found about one loop (same order as the file's `polls`).
#[derive(Debug, Clone, Default)]
pub struct PollAnalysis {
    /// The loop waits this long (milliseconds) after every tick, a failing one included:
    /// a constant interval that never grows.
    pub every_ms: Option<f64>,
}

/// What analysis found about one job definition (same order as the file's `jobs`).
#[derive(Debug, Clone, Default)]
pub struct JobAnalysis {
    /// The cron's text — a string literal, a local or an imported constant — and where it
    /// is written when that is elsewhere in this file.
    pub cron: Option<(String, Option<Span>)>,
}

/// A policy bound to a name outside the retry module (`const storeRetry = …`) that retry
/// sites name as their whole policy. One defect, one finding: at the definition, with the
/// sites as related locations.
#[derive(Debug, Clone)]
pub struct NamedPolicy {
    /// Where it is defined.
    pub file: FileId,
    /// The declarator.
    pub binding: Span,
    pub name: String,
    /// The sites that name it: file, site index, the name at the site.
    pub uses: Vec<(FileId, usize, Span)>,
}

impl NamedPolicy {
    /// The name where it is defined: where findings about it point.
    pub fn name_span(&self) -> Span {
        Span {
            start: self.binding.start,
            end: self.binding.start + self.name.len() as u32,
        }
    }

    /// [`Self::name_span`], past the keywords a declaration starts with (`function f(…)`, whose
    /// declarator is the whole declaration): the name itself.
    pub fn name_span_in(&self, index: &Index) -> Span {
        let plain = self.name_span();
        let Some(text) = index.text(self.file) else {
            return plain;
        };
        let start = self.binding.start as usize;
        let head = &text[start.min(text.len())..(start + 96).min(text.len()).min(self.binding.end as usize)];
        if head.starts_with(self.name.as_bytes()) {
            return plain;
        }
        let name = self.name.as_bytes();
        let found = head.windows(name.len()).position(|w| w == name).filter(|&at| {
            // A whole word: `function retry(` never matches inside `retrySchedule`.
            let before = at.checked_sub(1).map(|i| head[i]);
            let after = head.get(at + name.len()).copied();
            let word = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$');
            !word(before) && !word(after)
        });
        match found {
            Some(at) => Span {
                start: self.binding.start + at as u32,
                end: self.binding.start + (at + name.len()) as u32,
            },
            None => plain,
        }
    }
}

/// Analysis results per file, computed on first use and kept.
pub struct Analysis {
    /// What is known of each file, made on first use: most files of a large project are
    /// never asked about (the prefilter ruled them out), and cost a pointer.
    files: Vec<OnceLock<Box<FileAnalysis>>>,
    named: OnceLock<Vec<NamedPolicy>>,
}

/// What the analysis found about one file, each part on first use.
#[derive(Default)]
struct FileAnalysis {
    policies: OnceLock<Vec<Policy>>,
    sites: OnceLock<Vec<SiteAnalysis>>,
    jobs: OnceLock<Vec<JobAnalysis>>,
    polls: OnceLock<Vec<PollAnalysis>>,
    built: OnceLock<Vec<(NamedPolicy, String)>>,
    rs2: OnceLock<rs2::Rs2File>,
    supervisors: OnceLock<Supervisors>,
    /// For a retry module, what its exports are (see `names`); for any file, the names it
    /// sees.
    module_names: OnceLock<Option<names::ModuleNames>>,
    names: OnceLock<names::Names>,
    /// For a file that may hold a repository's retry, the store it reaches (see `store`).
    stores: OnceLock<Option<store::Store>>,
}

/// The spans of a file's supervisor retries, in order of their starts, each with the
/// furthest end among it and those before it: whether one holds a span is a bisection.
#[derive(Debug, Default)]
struct Supervisors(Vec<(Span, u32)>);

impl Supervisors {
    fn new(mut spans: Vec<Span>) -> Self {
        spans.sort_by_key(|s| s.start);
        let mut furthest = 0;
        Supervisors(
            spans
                .into_iter()
                .map(|span| {
                    furthest = furthest.max(span.end);
                    (span, furthest)
                })
                .collect(),
        )
    }

    /// Whether one of the spans holds `span`.
    fn hold(&self, span: Span) -> bool {
        let starting_before = self.0.partition_point(|(s, _)| s.start <= span.start);
        starting_before > 0 && self.0[starting_before - 1].1 >= span.end
    }
}

impl Analysis {
    pub fn new(index: &Index) -> Analysis {
        Analysis {
            files: (0..index.len()).map(|_| OnceLock::new()).collect(),
            named: OnceLock::new(),
        }
    }

    /// What is known of `file` so far.
    fn file(&self, file: FileId) -> &FileAnalysis {
        self.files[file].get_or_init(Box::default)
    }

    /// What a retry module's exports are, by the role each plays in remedies.
    pub fn module_names(&self, index: &Index, module: FileId) -> Option<&names::ModuleNames> {
        self.file(module)
            .module_names
            .get_or_init(|| names::read_module(index, module, &index.config_of(module).vocabulary))
            .as_ref()
    }

    /// The names `file`'s help lines and fixes use: its retry module's exports.
    pub fn names(&self, index: &Index, file: FileId) -> &names::Names {
        self.file(file)
            .names
            .get_or_init(|| names::Names::of_file(index, file, &|m| self.module_names(index, m).cloned()))
    }

    /// Whether `span` lies within a retry of `file` that restarts long-running work (see
    /// [`SiteAnalysis::supervisor`]).
    pub fn within_supervisor(&self, index: &Index, file: FileId, span: Span) -> bool {
        self.file(file)
            .supervisors
            .get_or_init(|| {
                let spans = index.facts(file).map_or(Vec::new(), |facts| {
                    facts
                        .retry_sites
                        .iter()
                        .zip(self.sites(index, file))
                        .filter(|(_, analysis)| analysis.supervisor)
                        .map(|(site, _)| site.span)
                        // A stepped policy re-made after a success: its steps restart work.
                        .chain(
                            facts
                                .rust_stepped
                                .iter()
                                .filter(|s| s.supervisor)
                                .flat_map(|s| s.uses.iter().copied()),
                        )
                        .collect()
                });
                Supervisors::new(spans)
            })
            .hold(span)
    }

    /// The named policies defined in `file` that are built there from `Schedule.*` (not named
    /// in the retry module), with the builder: `inline-schedule` reports each once.
    pub fn built_here(&self, index: &Index, file: FileId) -> &[(NamedPolicy, String)] {
        self.file(file).built.get_or_init(|| {
            let Some(facts) = index.facts(file) else {
                return Vec::new();
            };
            self.named_in(index, file)
                .filter_map(|named| {
                    if facts.language == crate::source::Language::Rust {
                        return rust::named_builder(index, file, named.binding).map(|b| (named.clone(), b));
                    }
                    let value = match policy::named_local_value(index, named) {
                        Some(value) => value,
                        None => &facts.binding_at(named.binding)?.value,
                    };
                    let builder = inline::builder(index, file, value)?;
                    Some((named.clone(), builder))
                })
                .collect()
        })
    }

    /// Every binding retry sites name as their whole policy, outside the retry module, with
    /// its uses (in path order of the files that use it).
    pub fn named_policies(&self, index: &Index) -> &[NamedPolicy] {
        self.named.get_or_init(|| {
            let mut named: Vec<NamedPolicy> = Vec::new();
            // Where each binding is in `named`.
            let mut known: std::collections::HashMap<(FileId, Span), usize> = std::collections::HashMap::new();
            for file in index.parsed_files() {
                let Some(facts) = index.facts(file) else { continue };
                for (position, site) in facts.retry_sites.iter().enumerate() {
                    let Some((target, binding, name)) =
                        policy::site_binding(index, file, site).or_else(|| policy::local_factory(index, file, site))
                    else {
                        continue;
                    };
                    let at = match &site.policy {
                        PolicyArg::Rust(arg) => arg.arg,
                        _ => site.schedule().map_or(site.span, Expr::span),
                    };
                    match known.get(&(target, binding)) {
                        Some(&existing) => named[existing].uses.push((file, position, at)),
                        None => {
                            known.insert((target, binding), named.len());
                            named.push(NamedPolicy {
                                file: target,
                                binding,
                                name,
                                uses: vec![(file, position, at)],
                            });
                        }
                    }
                }
            }
            named
        })
    }

    /// The named policies defined in `file`.
    pub fn named_in<'a>(&'a self, index: &'a Index, file: FileId) -> impl Iterator<Item = &'a NamedPolicy> + 'a {
        self.named_policies(index).iter().filter(move |n| n.file == file)
    }

    /// Analyses every parsed file now, in parallel (the pipeline's demand stage).
    pub fn force(&self, index: &Index) {
        let files: Vec<FileId> = index.parsed_files().collect();
        files.par_iter().for_each(|&file| {
            // A bug hit by one file must not take the others down: the rule stage reports it.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.named_policies(index);
                self.built_here(index, file);
                self.policies(index, file);
                self.sites(index, file);
                self.jobs(index, file);
                self.polls(index, file);
                self.rs2(index, file);
                if index
                    .loaded(file)
                    .is_some_and(|facts| store::may_hold_repository_retry(index, file, facts))
                {
                    self.store(index, file);
                }
            }));
        });
    }

    /// The retry policies `file` defines or builds: the retry module's exports, and every
    /// policy a site builds or changes itself.
    pub fn policies(&self, index: &Index, file: FileId) -> &[Policy] {
        self.file(file)
            .policies
            .get_or_init(|| policy::collect(self, index, file))
    }

    /// The store `file` reaches, directly or through a project module that wraps its client:
    /// what makes a repository-named unit a repository.
    pub fn store(&self, index: &Index, file: FileId) -> Option<&store::Store> {
        self.file(file)
            .stores
            .get_or_init(|| store::reached_store(index, file))
            .as_ref()
    }

    /// What analysis found about an RS2 document: its policies' levels, its calls' policies.
    pub fn rs2(&self, index: &Index, file: FileId) -> &rs2::Rs2File {
        self.file(file).rs2.get_or_init(|| rs2::analyse(index, file))
    }

    /// What analysis found about each job definition of `file`.
    pub fn jobs(&self, index: &Index, file: FileId) -> &[JobAnalysis] {
        self.file(file).jobs.get_or_init(|| {
            let Some(facts) = index.facts(file) else {
                return Vec::new();
            };
            facts
                .jobs
                .iter()
                .map(|job| JobAnalysis {
                    cron: job.cron.as_ref().and_then(|cron| cron_text(index, file, cron)),
                })
                .collect()
        })
    }

    /// What analysis found about each loop of `file`.
    pub fn polls(&self, index: &Index, file: FileId) -> &[PollAnalysis] {
        self.file(file).polls.get_or_init(|| {
            let Some(facts) = index.facts(file) else {
                return Vec::new();
            };
            // The first retry site of each call, for the supervisors among the loops.
            let mut sites: std::collections::HashMap<Span, &RetrySite> = std::collections::HashMap::new();
            for site in &facts.retry_sites {
                sites.entry(site.callee_span).or_insert(site);
            }
            facts
                .polls
                .iter()
                .map(|poll| PollAnalysis {
                    every_ms: every(index, file, poll, sites.get(&poll.span).copied()),
                })
                .collect()
        })
    }

    /// What analysis found about each retry site of `file`.
    pub fn sites(&self, index: &Index, file: FileId) -> &[SiteAnalysis] {
        self.file(file).sites.get_or_init(|| {
            let Some(facts) = index.facts(file) else {
                return Vec::new();
            };
            // Read once per file, not per site.
            let supervisors: std::collections::HashSet<Span> = facts
                .polls
                .iter()
                .filter(|p| matches!(p.kind, PollKind::Retry))
                .map(|p| p.span)
                .collect();
            let durable_module = std::cell::OnceCell::new();
            facts
                .retry_sites
                .iter()
                .map(|site| {
                    let role = replay::role(site, &index.config_of(file).vocabulary);
                    let predicate = predicate(index, file, site, role);
                    let replays = replay::replays(role, &predicate, &index.config_of(file).vocabulary);
                    let judge = |file: FileId, site: &RetrySite| judge(index, file, site);
                    SiteAnalysis {
                        role,
                        stacked: site
                            .unit
                            .as_ref()
                            .and_then(|unit| replay::stacked(index, file, site, unit, &replays, &judge)),
                        replays,
                        predicate,
                        named: policy::named_policy(index, file, site),
                        binding: policy::site_binding(index, file, site).map(|(file, span, _)| (file, span)),
                        inline: inline::find(self, index, file, site),
                        durable: durable::durable_retrier(index, file, site, &durable_module),
                        appends: site
                            .unit
                            .as_ref()
                            .and_then(|unit| replay::appends(index, file, unit, &index.config_of(file).vocabulary)),
                        after_commit: site
                            .unit
                            .as_ref()
                            .and_then(|unit| replay::after_commit(index, file, unit)),
                        supervisor: supervisors.contains(&site.callee_span),
                    }
                })
                .collect()
        })
    }
}

/// A site's predicate as the rules judge it. A bare Effect schedule the model cannot read (a
/// parameter, an unresolved import) may filter its input itself; the retry module's named
/// policies are known not to (predicates are named apart).
///
/// Options bound to a name (`const opts = { schedule, while }`, then `Effect.retry(opts)`)
/// are read as the inline object; a schedule that tests its input (`whileInput`, a 4.x
/// `while` over `input`), named or imported as well as inline, is the retry's predicate.
fn predicate(index: &Index, file: FileId, site: &RetrySite, role: Role) -> Predicate {
    if site.predicate != Predicate::None || site.library != crate::schedule::Library::Effect {
        return site.predicate.clone();
    }
    let bound = match (site.options(), policy::bound_options(index, file, site)) {
        (None, Some(options)) => Some(options),
        _ => None,
    };
    if let Some(options) = bound {
        let props = match options {
            Expr::Object(props, _) => props.as_slice(),
            _ => &[],
        };
        if props.iter().any(|p| p.key == "...") {
            return Predicate::Unknown;
        }
        if let Some(filter) = props
            .iter()
            .rev()
            .find(|p| matches!(p.key.as_str(), "while" | "until"))
            .map(|p| &p.value)
        {
            return Predicate::Filter {
                span: filter.span(),
                mentions: filter.mentions(),
                always: matches!(filter, Expr::Function { body: Some(body), .. } if matches!(**body, Expr::Bool(true, _))),
            };
        }
    }
    if let Some(schedule) = policy::input_filter(index, file, site) {
        return Predicate::Filter {
            span: schedule.span(),
            mentions: schedule.mentions(),
            always: false,
        };
    }
    let bare_schedule = matches!(site.policy, PolicyArg::Effect(_)) && site.options().is_none() && bound.is_none();
    if bare_schedule && role == Role::Other && !policy::is_known(index, file, site) {
        return Predicate::Unknown;
    }
    site.predicate.clone()
}

/// The constant wait of a loop after every tick, when it has one: a schedule whose delays are
/// all the same and that never stops, a duration, a supervisor retry's policy.
fn every(index: &Index, file: FileId, poll: &PollLoop, site: Option<&RetrySite>) -> Option<f64> {
    let version = index.effect_major(file);
    let constant = |sched: crate::schedule::Sched| {
        let summary = crate::schedule::summarize(&sched);
        let delays = summary.delays?;
        let first = *delays.first()?;
        (summary.attempts == crate::schedule::Attempts::Unbounded && delays.iter().all(|d| *d == first))
            .then_some(first)
    };
    match &poll.kind {
        PollKind::Schedule(expr) => constant(effect::evaluate_schedule(index, file, expr, version).0),
        PollKind::Retry => constant(effect::evaluate_policy(index, file, site?, version).0),
        // The wait inside a retried effect paces a poll only when the retry adds no delay and
        // never stops (`{ while }` with no schedule).
        PollKind::WaitInRetried(_) if constant(effect::evaluate_policy(index, file, site?, version).0) != Some(0.0) => {
            None
        }
        PollKind::Every(expr) | PollKind::SleepAfterFailure(expr) | PollKind::WaitInRetried(expr) => {
            duration_millis(expr).or_else(|| match index.resolve_path(file, expr) {
                Resolved::Value { value, .. } => duration_millis(value),
                _ => None,
            })
        }
    }
}

/// What a retry site replays and how many attempts it makes (1 + its retries, when bounded
/// and known): enough to tell two stacked retries apart without analysing the whole file.
fn judge(index: &Index, file: FileId, site: &RetrySite) -> (Replays, Option<u64>) {
    let vocabulary = &index.config_of(file).vocabulary;
    let role = replay::role(site, vocabulary);
    let replays = replay::replays(role, &predicate(index, file, site, role), vocabulary);
    let attempts = match site.library {
        crate::schedule::Library::Effect => {
            let (sched, _) = effect::evaluate_policy(index, file, site, index.effect_major(file));
            crate::schedule::summarize(&sched).attempts.bound().map(|n| n + 1)
        }
        _ => None,
    };
    (replays, attempts)
}

/// The cron a job property holds — a string literal, a local constant or an imported one,
/// or a constant parsed with Effect's `Cron.parse`/`Cron.parseUnsafe` — and where its text is
/// written when that is elsewhere in this file.
fn cron_text(index: &Index, file: FileId, expr: &Expr) -> Option<(String, Option<Span>)> {
    if let Some((text, span)) = parsed_cron(index, file, expr).or_else(|| string_value(expr)) {
        return Some((text.to_string(), (span != expr.span()).then_some(span)));
    }
    match index.resolve_path(file, expr) {
        Resolved::Value {
            file: target, value, ..
        } => parsed_cron(index, target, value)
            .or_else(|| string_value(value))
            .map(|(text, span)| (text.to_string(), (target == file).then_some(span))),
        _ => None,
    }
}

/// `Cron.parse("…")`, `Cron.parseUnsafe("…")` (and 3.x `Cron.unsafeParse`): the text parsed.
fn parsed_cron<'e>(index: &Index, file: FileId, expr: &'e Expr) -> Option<(&'e str, Span)> {
    let expr = match expr {
        Expr::Local { value, .. } => value,
        other => other,
    };
    let Expr::Call { callee, args, .. } = expr else {
        return None;
    };
    let facts = index.facts(file)?;
    match facts.effect_member(callee)? {
        ("Cron", "parse" | "parseUnsafe" | "unsafeParse") => string_value(args.first()?),
        _ => None,
    }
}
