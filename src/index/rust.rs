//! Rust crate paths: a path to a named policy (`crate::retry::transient`, `super::retry::X`,
//! through inline `mod`s) to the file and item that define it, by the crate's module layout;
//! and calls of the project's retry helpers made retry sites of their own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{FileId, Index};
use crate::facts::{
    FileFacts, PolicyArg, Predicate, Retried, RetrySite, RustBase, RustChain, RustHelper, RustHelperCall, RustPath,
    RustPolicy, RustPolicyArg, RustWrapper, RustWrapperCall, RustWrapperParam, RustWrapperSchedule, RustWrapperStep,
};
use crate::schedule::rust::Arg;
use crate::schedule::Library;

/// Rounds of the fixed point that makes helpers of the functions handing their parameters to
/// one, and how many it may add: bounds for generated or hostile code.
const MAX_DERIVE_ROUNDS: usize = 6;
const MAX_DERIVED: usize = 256;

/// Helper methods by `(name, arity)`: the file and position of the one, `None` when ambiguous.
type MethodHelpers = HashMap<(String, usize), Option<(FileId, usize)>>;

impl Index {
    /// The policy a path names: a `fn` without parameters, a `const` or a `static` of this crate.
    pub fn resolve_rust(&self, file: FileId, path: &RustPath) -> Option<(FileId, &RustPolicy)> {
        self.resolve_rust_item(file, path, false, |facts, module, name| {
            facts
                .rust_policies
                .iter()
                .find(|p| p.params == 0 && p.module == module && p.name == name)
        })
    }

    /// The factory a call names with `arity` arguments: in this crate or a workspace crate.
    pub fn resolve_rust_factory(&self, file: FileId, path: &RustPath, arity: usize) -> Option<(FileId, &RustPolicy)> {
        self.resolve_rust_item(file, path, true, |facts, module, name| {
            facts
                .rust_policies
                .iter()
                .find(|p| p.params == arity && p.module == module && p.name == name)
        })
    }

    /// The retry helper a path names: in this crate, or in a crate of the workspace
    /// (`jstz_utils::retry::retry_async` in `crates/jstz_utils/src/retry.rs`).
    pub fn resolve_rust_helper(&self, file: FileId, path: &RustPath) -> Option<(FileId, &RustHelper)> {
        self.resolve_rust_item(file, path, true, |facts, module, name| {
            facts
                .rust_helpers
                .iter()
                .find(|h| !h.method && h.module == module && h.name == name)
        })
    }

    fn resolve_rust_item<T>(
        &self,
        file: FileId,
        path: &RustPath,
        workspace: bool,
        find: impl for<'a> Fn(&'a FileFacts, &[String], &str) -> Option<&'a T>,
    ) -> Option<(FileId, &T)> {
        let (mut root, file_module) = crate_module(&self.files[file].absolute)?;
        let mut here = file_module;
        here.extend(path.module.iter().cloned());
        let segments = &path.segments;
        let full: Vec<String> = match segments.first()?.as_str() {
            "crate" => segments[1..].to_vec(),
            "self" => {
                let mut full = here;
                full.extend(segments[1..].iter().cloned());
                full
            }
            "super" => {
                let supers = segments.iter().take_while(|s| *s == "super").count();
                for _ in 0..supers {
                    here.pop()?;
                }
                here.extend(segments[supers..].iter().cloned());
                here
            }
            other if workspace && segments.len() >= 2 => {
                root = self.workspace_crate(other)?;
                segments[1..].to_vec()
            }
            _ => return None,
        };
        let (name, module) = full.split_last()?;
        for split in (0..=module.len()).rev() {
            for candidate in module_files(&root, &module[..split]) {
                let Some(target) = self.file_id(&candidate) else {
                    continue;
                };
                let Some(facts) = self.facts(target) else {
                    continue;
                };
                if let Some(found) = find(facts, &module[split..], name) {
                    return Some((target, found));
                }
            }
        }
        None
    }

    /// The source root of the workspace crate named `name` (`jstz_utils`): a `src/lib.rs` of
    /// the project under a directory of that name (or with `-` for `_`), else of the Cargo
    /// package whose `Cargo.toml` names its library so (`omicron_common`: the package
    /// `omicron-common` in `common/`).
    fn workspace_crate(&self, name: &str) -> Option<PathBuf> {
        self.rust_crates
            .get_or_init(|| {
                let libraries: Vec<(FileId, &Path)> = self
                    .files
                    .iter()
                    .enumerate()
                    .filter_map(|(id, f)| {
                        let src = f.absolute.parent()?;
                        let library = f.absolute.file_name().is_some_and(|n| n == "lib.rs")
                            && src.file_name().is_some_and(|n| n == "src");
                        library.then_some((id, src))
                    })
                    .collect();
                let mut crates = std::collections::HashMap::new();
                // By directory first, in file order: the first of a name is the one.
                for (_, src) in &libraries {
                    if let Some(dir) = src.parent().and_then(|d| d.file_name()).and_then(|d| d.to_str()) {
                        crates.entry(dir.replace('-', "_")).or_insert_with(|| src.to_path_buf());
                    }
                }
                for (id, src) in &libraries {
                    let Some(package) = src.parent() else { continue };
                    for crate_name in self.project.cargo_crate_names(package, self.boundary(*id)) {
                        crates.entry(crate_name).or_insert_with(|| src.to_path_buf());
                    }
                }
                crates
            })
            .get(name)
            .cloned()
    }

    /// The retry builder a call chain's first call names: by the crate's layout, else (a name
    /// re-exported through a `pub use`, as a crate's prelude does) the one builder of that
    /// name among the project's loaded files, when there is exactly one.
    pub fn resolve_rust_wrapper(&self, file: FileId, path: &RustPath) -> Option<(FileId, &RustWrapper)> {
        let found = self.resolve_rust_item(file, path, true, |facts, module, name| {
            facts
                .rust_wrappers
                .iter()
                .find(|w| w.module == module && w.name == name)
        });
        if found.is_some() {
            return found;
        }
        let name = path.segments.last()?;
        let boundary = self.boundary(file);
        let mut named = (0..self.len()).filter_map(|target| {
            let facts = self.loaded(target)?;
            let wrapper = facts.rust_wrappers.iter().find(|w| &w.name == name)?;
            (self.boundary(target) == boundary).then_some((target, wrapper))
        });
        let first = named.next()?;
        named.next().is_none().then_some(first)
    }

    /// Makes each call chain of a project retry builder that ends in its terminal method
    /// (`with_retry(…).attempts(5).go(f)`) a retry site of the calling file (issue 25).
    fn expand_rust_wrappers(&mut self) {
        let mut added: Vec<(FileId, Vec<RetrySite>, Vec<crate::facts::PollLoop>)> = Vec::new();
        for file in 0..self.len() {
            let Some(facts) = self.loaded(file) else { continue };
            if facts.rust_wrapper_calls.is_empty() {
                continue;
            }
            let mut sites = Vec::new();
            let mut polls = Vec::new();
            for call in &facts.rust_wrapper_calls {
                let Some((_, wrapper)) = self.resolve_rust_wrapper(file, &call.path) else {
                    continue;
                };
                if wrapper.arity != call.arity {
                    continue;
                }
                if call.unread {
                    self.ask_again(file);
                    continue;
                }
                let Some((site, reconnects)) = wrapper_site(call, wrapper) else {
                    continue;
                };
                if facts.retry_sites.iter().any(|s| s.span == site.span) {
                    continue;
                }
                if reconnects {
                    polls.push(reconnect_loop(&site));
                }
                sites.push(site);
            }
            if !sites.is_empty() {
                added.push((file, sites, polls));
            }
        }
        self.add_expanded_sites(added);
    }

    /// The helper a call calls: the one its path names, or for a method call `x.name(…)`, the
    /// project's one helper method of that name and arity among the loaded files (none when
    /// two are: precision first), found in `methods` ([`Index::method_helpers`]).
    fn helper_of_call(
        &self,
        file: FileId,
        call: &RustHelperCall,
        methods: &MethodHelpers,
    ) -> Option<(FileId, &RustHelper)> {
        let Some(name) = &call.method else {
            return self.resolve_rust_helper(file, &call.path);
        };
        let (target, at) = (*methods.get(&(name.clone(), call.arity()))?)?;
        Some((target, self.loaded(target)?.rust_helpers.get(at)?))
    }

    /// A call's arguments as values, a `const` of another file of the crate (`use
    /// super::retry::DEFAULT_TIMEOUT`) read where it is defined.
    fn call_values(&self, file: FileId, call: &RustHelperCall) -> Vec<Arg> {
        let value = |arg: &Arg| -> Arg {
            let Arg::Path(segments) = arg else {
                return arg.clone();
            };
            let path = RustPath {
                segments: segments.clone(),
                module: call.path.module.clone(),
                span: call.span,
            };
            let found = self.resolve_rust_item(file, &path, true, |facts, module, name| {
                facts
                    .rust_consts
                    .iter()
                    .find(|(n, m, _)| n == name && m.as_slice() == module)
                    .map(|(_, _, v)| v)
            });
            found.map_or(Arg::Unknown, |(_, v)| v.clone())
        };
        call.args
            .iter()
            .map(|a| match &a.value {
                Some(Arg::Some(inner)) => Arg::Some(Box::new(value(inner))),
                Some(v) => value(v),
                None => Arg::Unknown,
            })
            .collect()
    }

    /// Asks for the Rust files the prefilter ruled out that name one of the project's retry
    /// helpers or retry builders, to be read in full: the prefilter keeps a file by the words
    /// of the retry libraries, and a caller of `resilient(op)` need not have any. Each name is
    /// looked for once per index, by a byte search for it as a whole word in the file's text
    /// (a file it matches without calling it is only parsed for nothing).
    fn ask_for_ruled_out_callers(&self) {
        use rayon::prelude::*;
        let mut names: Vec<String> = Vec::new();
        {
            let mut looked_for = self.looked_for.lock().unwrap_or_else(|e| e.into_inner());
            for file in 0..self.len() {
                let Some(facts) = self.loaded(file) else { continue };
                let defined = facts.rust_helpers.iter().map(|h| &h.name);
                for name in defined.chain(facts.rust_wrappers.iter().map(|w| &w.name)) {
                    if !name.is_empty() && looked_for.insert(name.clone()) {
                        names.push(name.clone());
                    }
                }
            }
        }
        if names.is_empty() {
            return;
        }
        let finders: Vec<memchr::memmem::Finder> = names
            .iter()
            .map(|n| memchr::memmem::Finder::new(n.as_bytes()))
            .collect();
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        (0..self.len()).into_par_iter().for_each(|file| {
            let loaded = &self.loaded[file];
            if !loaded.prefiltered
                || loaded.facts.is_some()
                || loaded.generated
                || self.files[file].language != crate::source::Language::Rust
            {
                return;
            }
            let limit = self.config_of(file).max_file_size;
            let Ok(text) = crate::files::read_file(&self.files[file].absolute, limit, false) else {
                return;
            };
            let names_one = finders.iter().any(|finder| {
                let len = finder.needle().len();
                finder.find_iter(&text).any(|at| {
                    let before = at.checked_sub(1).map(|i| text[i]);
                    let after = text.get(at + len).copied();
                    !before.is_some_and(ident) && !after.is_some_and(ident)
                })
            });
            if names_one {
                self.ask_again(file);
            }
        });
    }

    /// Asks for `file` again, read in full: a call it keeps unread may be a helper's (the
    /// demand stage reads it as it reads the files resolution misses).
    fn ask_again(&self, file: FileId) {
        self.misses.lock().unwrap_or_else(|e| e.into_inner()).push(file);
    }

    /// The loaded files' helper methods by name and arity: `None` for a name two of them have.
    fn method_helpers(&self) -> MethodHelpers {
        let mut out: MethodHelpers = HashMap::new();
        for file in 0..self.len() {
            let Some(facts) = self.loaded(file) else { continue };
            for (at, helper) in facts.rust_helpers.iter().enumerate() {
                if !helper.method {
                    continue;
                }
                out.entry((helper.name.clone(), helper.arity))
                    .and_modify(|found| *found = None)
                    .or_insert(Some((file, at)));
            }
        }
        out
    }

    /// Helpers that compose (issue 25): a function whose body calls a helper handing its own
    /// operation parameter through (`with_retry(op, what)` calling
    /// `self.with_retry_timeout(op, DEFAULT_TIMEOUT, what)` calling `run(op, Some(t))`) is a
    /// helper too, its strategy, predicate and built strategy those of the call in terms of
    /// its own parameters. A fixed point over the loaded files, bounded in rounds and size.
    fn derive_rust_helpers(&mut self) {
        let mut total = 0usize;
        for _ in 0..MAX_DERIVE_ROUNDS {
            let methods = self.method_helpers();
            let mut new: Vec<(FileId, RustHelper)> = Vec::new();
            for file in 0..self.len() {
                let Some(facts) = self.loaded(file) else { continue };
                for call in &facts.rust_helper_calls {
                    if call.unread.is_some() {
                        if self
                            .helper_of_call(file, call, &methods)
                            .is_some_and(|(_, helper)| helper.arity == call.arity())
                        {
                            self.ask_again(file);
                        }
                        continue;
                    }
                    let Some(within) = &call.within else { continue };
                    if within.arity == 0 {
                        continue;
                    }
                    let known = |f: FileId, span: crate::source::Span| {
                        new.iter().any(|(g, h)| *g == f && h.name_span == span)
                            || facts.rust_helpers.iter().any(|h| h.name_span == span)
                    };
                    if known(file, within.name_span) {
                        continue;
                    }
                    let Some((target, helper)) = self.helper_of_call(file, call, &methods) else {
                        continue;
                    };
                    if helper.arity != call.args.len() || (target == file && helper.name_span == within.name_span) {
                        continue;
                    }
                    let through = |i: Option<usize>| i.and_then(|i| call.args.get(i)).and_then(|a| a.param);
                    // The operation must be the caller's: else the function retries a unit of
                    // its own, a retry of its own and no helper.
                    let Some(op) = through(helper.op) else { continue };
                    let values = self.call_values(file, call);
                    // A strategy no longer depending on the caller's parameters is decided at
                    // this call, judged here once: the function's callers are not judged for it.
                    let built = helper
                        .built
                        .as_ref()
                        .map(|b| b.given(&values))
                        .filter(RustChain::has_param);
                    new.push((
                        file,
                        RustHelper {
                            name: within.name.clone(),
                            module: within.module.clone(),
                            name_span: within.name_span,
                            library: helper.library,
                            arity: within.arity,
                            strategy: through(helper.strategy),
                            op: Some(op),
                            op_direct: helper.op_direct,
                            predicate: through(helper.predicate),
                            built,
                            method: within.method,
                            replays: helper.replays.clone(),
                        },
                    ));
                }
            }
            if new.is_empty() {
                return;
            }
            for (file, helper) in new {
                if total >= MAX_DERIVED {
                    return;
                }
                let Some(shared) = self.loaded[file].facts.as_mut() else {
                    continue;
                };
                let facts = Arc::make_mut(shared);
                if !facts.rust_helpers.iter().any(|h| h.name_span == helper.name_span) {
                    facts.rust_helpers.push(helper);
                    total += 1;
                }
            }
        }
    }

    /// Adds the retry sites (and the reconnect loops) that calls of the project's helpers and
    /// wrappers are, to the files that make them.
    fn add_expanded_sites(&mut self, added: Vec<(FileId, Vec<RetrySite>, Vec<crate::facts::PollLoop>)>) {
        for (file, sites, polls) in added {
            let Some(shared) = self.loaded[file].facts.as_mut() else {
                continue;
            };
            let facts = Arc::make_mut(shared);
            facts.retry_sites.extend(sites);
            for poll in polls {
                if !facts.polls.iter().any(|p| p.span == poll.span) {
                    facts.polls.push(poll);
                }
            }
            facts.retry_sites.sort_by_key(|s| s.span.start);
            facts.lookups = Default::default();
        }
    }

    /// Makes each call of a Rust retry helper whose callee is loaded a retry site of the
    /// calling file, judged with the call's arguments: the strategy given, the predicate given
    /// (`|_| true` is none), the operation as the retried unit. Idempotent; the pipeline calls
    /// it each round, so calls of helpers in files loaded on demand are expanded later.
    pub fn expand_rust_helpers(&mut self) {
        // A builder wrapper's terminal call (`with_retry(…).attempts(5).go(op)`) is read by
        // the wrapper's summary first: a method helper of its name does not take it over.
        self.ask_for_ruled_out_callers();
        self.expand_rust_wrappers();
        self.derive_rust_helpers();
        let methods = self.method_helpers();
        let mut added: Vec<(FileId, Vec<RetrySite>, Vec<crate::facts::PollLoop>)> = Vec::new();
        for file in 0..self.len() {
            let Some(facts) = self.loaded(file) else { continue };
            if facts.rust_helper_calls.is_empty() {
                continue;
            }
            let mut sites = Vec::new();
            let mut polls = Vec::new();
            for call in &facts.rust_helper_calls {
                if facts.retry_sites.iter().any(|s| s.span == call.span) {
                    continue;
                }
                let Some((target, helper)) = self.helper_of_call(file, call, &methods) else {
                    continue;
                };
                if helper.arity != call.arity() {
                    continue;
                }
                if call.unread.is_some() {
                    self.ask_again(file);
                    continue;
                }
                // A helper calling itself is its own retry, not one of its callers.
                if target == file && call.containers.iter().any(|c| c.name == helper.name) {
                    continue;
                }
                let site = helper_site(call, helper, &self.call_values(file, call));
                // An operation that only (re)connects: a wait for the dependency, judged as a
                // loop, as a direct retry of it is (`extract::rust::sites`).
                if helper.op.and_then(|i| call.args.get(i)).is_some_and(|op| op.reconnects) {
                    polls.push(reconnect_loop(&site));
                }
                sites.push(site);
            }
            if !sites.is_empty() {
                added.push((file, sites, polls));
            }
        }
        self.add_expanded_sites(added);
    }
}

/// The loop a retry of an operation that only (re)connects is: a wait for the dependency.
fn reconnect_loop(site: &RetrySite) -> crate::facts::PollLoop {
    crate::facts::PollLoop {
        span: site.callee_span,
        call: site.callee.clone(),
        kind: crate::facts::PollKind::Retry,
        caught: true,
        retries: false,
        forked: false,
        endless: true,
    }
}

/// The retry site a call chain of `wrapper` is, and whether its operation only (re)connects:
/// up to its terminal method, each method read by the builder's summary. A method the
/// summary does not know leaves nothing known (`None`).
fn wrapper_site(call: &RustWrapperCall, wrapper: &RustWrapper) -> Option<(RetrySite, bool)> {
    // The fields the chain sets: a value, `None` for one cleared, unknown otherwise.
    let mut fields: Vec<(String, Option<Arg>)> = wrapper
        .defaults
        .iter()
        .map(|(f, v)| (f.clone(), Some(v.clone())))
        .collect();
    let set = |fields: &mut Vec<(String, Option<Arg>)>, field: &str, value: Option<Arg>| match fields
        .iter_mut()
        .find(|(f, _)| f == field)
    {
        Some(entry) => entry.1 = value,
        None => fields.push((field.to_string(), value)),
    };
    let mut predicate = None;
    let mut unread_closure = false;
    let mut limit_step = None;
    // The methods that shape the strategy, which messages name it by.
    let mut scheduling: Vec<&RustWrapperStep> = Vec::new();
    for step in &call.steps {
        let method = wrapper
            .methods
            .iter()
            .find(|m| m.name == step.method && m.arity == step.values.len())?;
        for (field, param) in &method.sets {
            if Some(field) == wrapper.predicate_field.as_ref() && method.predicate.is_some() {
                continue;
            }
            let value = match param {
                Some(i) => step.values.get(*i).cloned(),
                None => None,
            };
            // A count given (`Some(n)`) or cleared (`None`): an attempt cap or none.
            let value = match value {
                Some(v) => Some(v),
                None if param.is_none() => Some(Arg::None),
                None => Some(Arg::Unknown),
            };
            if let Some(schedule) = &wrapper.schedule {
                if matches!(schedule.params.get(schedule.limit), Some(RustWrapperParam::Field(f)) if f == field) {
                    limit_step = Some(step);
                }
                let shapes = schedule
                    .params
                    .iter()
                    .any(|p| matches!(p, RustWrapperParam::Field(f) if f == field));
                if shapes && !scheduling.iter().any(|s| std::ptr::eq(*s, step)) {
                    scheduling.push(step);
                }
            }
            set(&mut fields, field, value);
        }
        for field in &method.opaque {
            set(&mut fields, field, Some(Arg::Unknown));
        }
        if method.predicate.is_some() {
            predicate = Some(step);
        } else if method.run.is_none() && !method.callback && step.closure {
            // A closure given to a method whose parameter the summary does not read: it may
            // decide what is retried.
            unread_closure = true;
        }
        if method.run.is_some() {
            // How messages name the policy: the call and the methods that shape it.
            let text = std::iter::once(format!("{}(…)", call.callee))
                .chain(scheduling.iter().map(|s| s.text.clone()))
                .collect::<String>();
            let chain = wrapper
                .schedule
                .as_ref()
                .and_then(|s| wrapper_chain(s, &fields, limit_step.unwrap_or(step), text));
            let policy = match chain {
                Some(chain) => PolicyArg::Rust(Box::new(RustPolicyArg {
                    arg: step.span,
                    regardless: wrapper.schedule.as_ref().map(|s| Box::new(regardless(s, &chain))),
                    chain: Some(chain),
                    local: None,
                    shared: false,
                })),
                None => PolicyArg::Unknown,
            };
            let predicate = match predicate {
                Some(given) => given.predicate.clone(),
                None if wrapper.default_every_error && !unread_closure => Predicate::None,
                None => Predicate::Unknown,
            };
            // An operation that answers some of its errors with a success classifies them.
            let predicate = match predicate {
                Predicate::None if step.classifies => Predicate::Unknown,
                other => other,
            };
            let site = RetrySite {
                span: step.span,
                callee_span: call.callee_span,
                callee: call.callee.clone(),
                library: wrapper.library,
                retried: Retried::Operation,
                policy,
                predicate,
                containers: call.containers.clone(),
                unit: step.unit.clone(),
            };
            return Some((site, step.reconnects));
        }
    }
    None
}

/// The factory's strategy with every value a call gives unknown, placed where `chain` is.
fn regardless(schedule: &RustWrapperSchedule, chain: &RustChain) -> RustChain {
    let mut out = schedule.taken.clone();
    let unknown = |a: &Arg| a.given(&[]);
    if let RustBase::Deferred { args, .. } = &mut out.base {
        *args = args.iter().map(unknown).collect();
    }
    for op in &mut out.ops {
        op.args = op.args.iter().map(unknown).collect();
        op.span = chain.span;
    }
    out.span = chain.span;
    out.text = chain.text.clone();
    out.factory = None;
    out
}

/// The strategy a chain's fields make: the factory's with the count given (`.take(n + offset)`)
/// or, for a cleared count, without one; `None` when a value it needs is not known.
fn wrapper_chain(
    schedule: &RustWrapperSchedule,
    fields: &[(String, Option<Arg>)],
    limit_step: &RustWrapperStep,
    text: String,
) -> Option<RustChain> {
    let value_of = |param: &RustWrapperParam| -> Arg {
        match param {
            RustWrapperParam::Value(v) => v.clone(),
            RustWrapperParam::Field(f) => fields
                .iter()
                .find(|(name, _)| name == f)
                .and_then(|(_, v)| v.clone())
                .unwrap_or(Arg::Unknown),
        }
    };
    let mut args: Vec<Arg> = schedule.params.iter().map(value_of).collect();
    let count = args.get(schedule.limit)?.clone();
    let count = match count {
        Arg::Some(inner) if schedule.optional => Some(*inner),
        Arg::Num(n) => Some(Arg::Num(n)),
        Arg::None if schedule.optional => None,
        _ => return None,
    };
    let mut chain = match count {
        Some(Arg::Num(n)) => {
            args[schedule.limit] = Arg::Num((n + schedule.offset).max(0.0));
            schedule.taken.clone()
        }
        Some(_) => return None,
        None => schedule.untaken.clone()?,
    };
    // Every value the strategy is built from must be known here.
    let given = |a: &Arg| a.given(&args);
    if let RustBase::Deferred { args: built, .. } = &mut chain.base {
        *built = built.iter().map(given).collect();
    }
    for op in &mut chain.ops {
        op.args = op.args.iter().map(given).collect();
        op.span = limit_step.span;
    }
    let known = chain.ops.iter().all(|op| op.args.iter().all(|a| !a.not_known()));
    if !known {
        return None;
    }
    if let RustBase::Deferred { path, args: built, .. } = &chain.base {
        let (ctor, state) = crate::schedule::rust::constructor(path, built)?;
        chain.base = RustBase::New {
            ctor,
            state,
            via: None,
            configured: true,
        };
    }
    match &mut chain.base {
        // The builder names the policy, as a config type's method does: its defects are
        // judged at each call, and it is no inline policy of the call.
        RustBase::New { configured, via, .. } => {
            *configured = true;
            *via = Some(schedule.factory.clone());
        }
        _ => return None,
    }
    chain.span = limit_step.span;
    chain.text = text;
    chain.factory = None;
    Some(chain)
}

/// The retry site a call of `helper` is.
fn helper_site(call: &RustHelperCall, helper: &RustHelper, values: &[Arg]) -> RetrySite {
    let arg = |i: Option<usize>| i.and_then(|i| call.args.get(i));
    let policy = match arg(helper.strategy) {
        Some(strategy) => PolicyArg::Rust(Box::new(RustPolicyArg {
            arg: strategy.span,
            chain: strategy.chain.clone(),
            local: strategy.local.clone(),
            shared: false,
            regardless: None,
        })),
        None => match &helper.built {
            Some(built) => built_policy(call, helper, built, values),
            // The helper builds its strategy itself: judged there, once.
            None => PolicyArg::Unknown,
        },
    };
    let predicate = match (arg(helper.predicate), arg(helper.op)) {
        (Some(predicate), _) => predicate.predicate.clone(),
        // The operation is the action: what it returns classifies the errors.
        (None, Some(op)) if helper.op_direct => match helper.library {
            Library::TokioRetry2 => op.classifies[0].clone(),
            Library::Backoff => op.classifies[1].clone(),
            _ => Predicate::Unknown,
        },
        // The helper's own retry says which errors it replays (and is judged there): the
        // call replays the same, read where the call is.
        _ => match &helper.replays {
            Some(Predicate::Filter { mentions, always, .. }) => Predicate::Filter {
                span: call.span,
                mentions: mentions.clone(),
                always: *always,
            },
            _ => Predicate::Unknown,
        },
    };
    RetrySite {
        span: call.span,
        callee_span: call.callee_span,
        callee: call.callee.clone(),
        library: helper.library,
        retried: Retried::Operation,
        policy,
        predicate,
        containers: call.containers.clone(),
        unit: arg(helper.op).and_then(|op| op.unit.clone()),
    }
}

/// The strategy a helper builds from its parameters, with a call's arguments: judged at the
/// call for what they decide (what holds for every argument is judged at the helper's own
/// retry); unknown when an argument it depends on is not known here.
fn built_policy(call: &RustHelperCall, helper: &RustHelper, built: &RustChain, values: &[Arg]) -> PolicyArg {
    let mut chain = built.given(values);
    if chain.not_known() {
        return PolicyArg::Unknown;
    }
    if let RustBase::Deferred { path, args, .. } = &chain.base {
        let Some((ctor, state)) = crate::schedule::rust::constructor(path, args) else {
            return PolicyArg::Unknown;
        };
        chain.base = RustBase::New {
            ctor,
            state,
            via: None,
            configured: true,
        };
    }
    // The helper names the policy: no inline one of the call.
    if let RustBase::New { configured, via, .. } = &mut chain.base {
        *configured = true;
        *via = Some(helper.name.clone());
    }
    let text = format!("{}(…)", call.callee);
    for op in &mut chain.ops {
        op.span = call.span;
    }
    chain.span = call.span;
    chain.text = text.clone();
    chain.factory = None;
    let mut regardless = built.given(&[]);
    for op in &mut regardless.ops {
        op.span = call.span;
    }
    regardless.span = call.span;
    regardless.text = text;
    regardless.factory = None;
    PolicyArg::Rust(Box::new(RustPolicyArg {
        arg: call.span,
        chain: Some(chain),
        local: None,
        shared: false,
        regardless: Some(Box::new(regardless)),
    }))
}

/// The crate's source root (the nearest `src` directory above the file, else the file's own
/// directory) and the file's module path below it.
fn crate_module(absolute: &Path) -> Option<(PathBuf, Vec<String>)> {
    let root = absolute
        .ancestors()
        .skip(1)
        .find(|a| a.file_name().is_some_and(|n| n == "src"))
        .or_else(|| absolute.parent())?
        .to_path_buf();
    let relative = absolute.strip_prefix(&root).ok()?;
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?.to_string();
    let module = match stem.as_str() {
        "lib" | "main" if parts.is_empty() => Vec::new(),
        "mod" => parts,
        _ => {
            parts.push(stem);
            parts
        }
    };
    Some((root, module))
}

/// Where a module's file can be: `a/b.rs`, `a/b/mod.rs`; the root is `lib.rs` or `main.rs`.
fn module_files(root: &Path, module: &[String]) -> Vec<PathBuf> {
    if module.is_empty() {
        return vec![root.join("lib.rs"), root.join("main.rs")];
    }
    let dir: PathBuf = module.iter().collect();
    let mut file = root.join(&dir);
    file.set_extension("rs");
    vec![file, root.join(dir).join("mod.rs")]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_follow_the_layout() {
        let m = |p: &str| crate_module(Path::new(p)).map(|(root, m)| (root.display().to_string(), m.join("::")));
        assert_eq!(m("/x/src/lib.rs"), Some(("/x/src".into(), "".into())));
        assert_eq!(m("/x/src/retry.rs"), Some(("/x/src".into(), "retry".into())));
        assert_eq!(
            m("/x/src/infra/retry/mod.rs"),
            Some(("/x/src".into(), "infra::retry".into()))
        );
        assert_eq!(
            m("/x/src/orders/repository.rs"),
            Some(("/x/src".into(), "orders::repository".into()))
        );
        assert_eq!(m("/x/tests/it.rs"), Some(("/x/tests".into(), "it".into())));
    }
}
