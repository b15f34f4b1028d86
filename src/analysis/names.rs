//! The project's own names for what remedies name: which export of a retry module is the
//! contention policy, the connection-loss policy, the contention predicate and the
//! connection-loss predicate — the configured name when the module exports it, else the
//! export whose body reads as one — and how a file names the module's exports (its import of
//! the module). Help lines and fixes are written with these names, so following them
//! compiles; where the module has no such export, the help says what to add, with the code.
//! `retrylint init` writes what is found here into the config it writes.

use crate::config::Vocabulary;
use crate::effect_version::EffectVersion;
use crate::facts::{Export, Expr, FileFacts, ImportKind};
use crate::index::{FileId, Index, Resolved};
use crate::schedule::{self, Attempts};
use crate::source::Language;

/// What a remedy names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    ContentionPolicy,
    TransientPolicy,
    ContentionPredicate,
    TransientPredicate,
}

impl Role {
    pub const ALL: [Role; 4] = [
        Role::ContentionPolicy,
        Role::TransientPolicy,
        Role::ContentionPredicate,
        Role::TransientPredicate,
    ];

    fn at(self) -> usize {
        self as usize
    }

    /// The name remedies are written with before they are spelled in the project's names.
    pub fn placeholder(self) -> &'static str {
        match self {
            Role::ContentionPolicy => "Retry.contention",
            Role::TransientPolicy => "Retry.transient",
            Role::ContentionPredicate => "Retry.isContention",
            Role::TransientPredicate => "Retry.isConnectionLost",
        }
    }

    /// The config key that names it.
    pub fn key(self) -> &'static str {
        match self {
            Role::ContentionPolicy => "contention-policies",
            Role::TransientPolicy => "transient-policies",
            Role::ContentionPredicate => "contention-predicates",
            Role::TransientPredicate => "transient-predicates",
        }
    }

    /// In plain words.
    pub fn what(self) -> &'static str {
        match self {
            Role::ContentionPolicy => "contention policy",
            Role::TransientPolicy => "connection-loss policy",
            Role::ContentionPredicate => "contention predicate",
            Role::TransientPredicate => "connection-loss predicate",
        }
    }

    /// What it is for, in plain words.
    fn purpose(self) -> &'static str {
        match self {
            Role::ContentionPolicy => "the short policy for deadlocks and serialization failures",
            Role::TransientPolicy => "the policy for a lost connection",
            Role::ContentionPredicate => "the test for deadlocks and serialization failures",
            Role::TransientPredicate => "the test for a lost connection",
        }
    }

    /// The names the config gives it (the defaults when it gives none).
    pub fn names(self, vocabulary: &Vocabulary) -> &[String] {
        match self {
            Role::ContentionPolicy => &vocabulary.contention_policies,
            Role::TransientPolicy => &vocabulary.transient_policies,
            Role::ContentionPredicate => &vocabulary.contention_predicates,
            Role::TransientPredicate => &vocabulary.transient_predicates,
        }
    }

    /// The name to give a new export: the config's first, else the default.
    pub fn new_name(self, vocabulary: &Vocabulary) -> String {
        self.names(vocabulary)
            .first()
            .cloned()
            .unwrap_or_else(|| self.placeholder().trim_start_matches("Retry.").to_string())
    }
}

/// An export of a retry module that plays a role, and why retrylint thinks so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub name: String,
    /// 1-based line of its definition.
    pub line: usize,
    /// Why it is taken for the role: "configured", "its body tests `40001`", "its name".
    pub why: String,
    /// Named by the config (or, without a config, by the defaults).
    pub configured: bool,
}

/// What a retry module exports, per [`Role`].
#[derive(Debug, Clone)]
pub struct ModuleNames {
    pub file: FileId,
    /// Relative to the project root, with forward slashes.
    pub path: String,
    pub found: [Option<Found>; 4],
    /// The module's own name for Effect's `Schedule` (`Schedule` when it imports none).
    schedule: String,
    effect: EffectVersion,
}

impl ModuleNames {
    pub fn get(&self, role: Role) -> Option<&Found> {
        self.found[role.at()].as_ref()
    }

    /// The code to add to the module for a role it has no export for, in its own style.
    pub fn code_to_add(&self, role: Role, vocabulary: &Vocabulary) -> String {
        let name = role.new_name(vocabulary);
        let capped = |base: &str, cap: &str| {
            crate::schedule::api::cap_snippet(self.effect)
                .trim_matches('`')
                .replace("Schedule.", &format!("{}.", self.schedule))
                .replace("(base)", &format!("(\"{base}\")"))
                .replace("(cap)", &format!("(\"{cap}\")"))
                .replace("(retries)", "(3)")
        };
        // The driver's error, or the one an Effect `SqlError` holds as its cause.
        let code = |codes: &str| {
            format!(
                "(error: unknown): boolean => {{ const e = error as {{ code?: unknown; cause?: {{ code?: unknown }} }} | null; return [{codes}].includes(String(e?.code ?? e?.cause?.code)) }}"
            )
        };
        let value = match role {
            Role::ContentionPolicy => capped("50 millis", "200 millis"),
            Role::TransientPolicy => capped("200 millis", "2 seconds"),
            // SQLSTATE serialization failure and deadlock (PostgreSQL, MySQL's `40001` too).
            Role::ContentionPredicate => code("\"40001\", \"40P01\""),
            Role::TransientPredicate => code("\"ECONNRESET\", \"ECONNREFUSED\", \"EPIPE\""),
        };
        format!("export const {name} = {value}")
    }
}

/// Lowercase words of a camelCase or snake_case name: `isNetworkError` → is, network, error.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

const CONTENTION_NAME_WORDS: &[&str] = &[
    "contention",
    "conflict",
    "conflicts",
    "deadlock",
    "deadlocks",
    "lock",
    "locked",
    "serialization",
    "serializable",
    "busy",
    "db",
    "database",
    "sql",
    "tx",
    "transaction",
];
const TRANSIENT_NAME_WORDS: &[&str] = &[
    "transient",
    "network",
    "net",
    "connection",
    "connectivity",
    "disconnect",
    "disconnected",
    "offline",
    "socket",
    "http",
    "io",
    "remote",
    "request",
];
/// What a predicate's body tests (lowercase): contention errors.
const CONTENTION_BODY: &[&str] = &[
    "deadlock",
    "serializ",
    "40001",
    "40p01",
    "locktimeout",
    "lock_timeout",
    "sqlite_busy",
    "contention",
    "conflict",
    "55p03",
];
/// What a predicate's body tests (lowercase): connection loss and network failures.
const TRANSIENT_BODY: &[&str] = &[
    "econnreset",
    "econnrefused",
    "econnaborted",
    "epipe",
    "etimedout",
    "enotfound",
    "eai_again",
    "connection",
    "network",
    "socket",
    "offline",
    "transport",
    "unavailable",
];

/// Which of the two sides `name` says: `Some(true)` contention, `Some(false)` connection loss.
fn by_name(name: &str) -> Option<bool> {
    let words = words(name);
    let contention = words.iter().any(|w| CONTENTION_NAME_WORDS.contains(&w.as_str()));
    let transient = words.iter().any(|w| TRANSIENT_NAME_WORDS.contains(&w.as_str()));
    (contention != transient).then_some(contention)
}

/// Which side a predicate's source tests, and the first word that says so.
fn by_body(text: &str) -> Option<(bool, &str)> {
    let lower = text.to_ascii_lowercase();
    // As written (ASCII lowercasing keeps every offset).
    let first = |list: &[&str]| {
        list.iter()
            .find_map(|w| lower.find(w).map(|at| &text[at..at + w.len()]))
    };
    match (first(CONTENTION_BODY), first(TRANSIENT_BODY)) {
        (Some(w), None) => Some((true, w)),
        (None, Some(w)) => Some((false, w)),
        _ => None,
    }
}

/// The source of `span` in `text` without its comments (a word in a comment is no test).
fn code_of(text: &[u8], span: crate::source::Span) -> String {
    let raw = text.get(span.start as usize..span.end as usize).unwrap_or_default();
    let raw = String::from_utf8_lossy(raw);
    raw.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains("://") => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An export of the module, with its value.
struct Candidate<'f> {
    name: &'f str,
    value: &'f Expr,
    span: crate::source::Span,
}

fn candidates(facts: &FileFacts) -> Vec<Candidate<'_>> {
    let mut out: Vec<Candidate> = facts
        .exports
        .iter()
        .filter_map(|export| match export {
            Export::Local { name, local } => {
                let binding = facts.binding(local)?;
                Some(Candidate {
                    name,
                    value: &binding.value,
                    span: binding.span,
                })
            }
            _ => None,
        })
        .collect();
    out.sort_by_key(|c| c.span.start);
    out.dedup_by_key(|c| c.name);
    out
}

/// Reads a retry module's exports. `None` for a module that is not TypeScript or not loaded.
pub fn read_module(index: &Index, file: FileId, vocabulary: &Vocabulary) -> Option<ModuleNames> {
    let facts = index.loaded(file)?;
    read_exports(index, file, facts, index.text(file).unwrap_or_default(), vocabulary)
}

/// Reads the exports of `file`, whose facts and text are given (`init` reads a module the
/// prefilter passed over itself).
pub fn read_exports(
    index: &Index,
    file: FileId,
    facts: &FileFacts,
    text: &[u8],
    vocabulary: &Vocabulary,
) -> Option<ModuleNames> {
    if matches!(
        facts.language,
        Language::Rust | Language::Sql | Language::Json | Language::Yaml
    ) {
        return None;
    }
    let version = index.effect_major(file);
    let schedule_local = facts.effect_module_local("Schedule").unwrap_or("Schedule").to_string();
    let is_schedule = |expr: &Expr| {
        let mut found = false;
        expr.walk(&mut |e| found |= matches!(facts.effect_member(e), Some(("Schedule", _))));
        found
    };
    let exports = candidates(facts);
    let line = |c: &Candidate| facts.position(c.span.start).0;
    let mut found: [Option<Found>; 4] = Default::default();
    // The configured names first.
    let defaults = Vocabulary::default();
    for role in Role::ALL {
        let names = role.names(vocabulary);
        let why = if names == role.names(&defaults) {
            "the default name"
        } else {
            "named in the config"
        };
        found[role.at()] = names.iter().find_map(|n| {
            let c = exports.iter().find(|c| c.name == n)?;
            Some(Found {
                name: c.name.to_string(),
                line: line(c),
                why: why.into(),
                configured: true,
            })
        });
    }
    // Then what the bodies say: predicates are functions (or calls that are not schedules)
    // named `is…`; policies are schedules that stop after a few attempts.
    let mut inferred: [Vec<(u8, &Candidate, String)>; 4] = Default::default();
    for c in &exports {
        let function = matches!(c.value, Expr::Function { .. });
        let schedule = !function && is_schedule(c.value);
        if function
            || (!schedule && matches!(c.value, Expr::Call { .. }) && words(c.name).first().is_some_and(|w| w == "is"))
        {
            let code = code_of(text, c.value.span());
            let body = by_body(&code);
            let named = by_name(c.name);
            let (side, rank, why) = match (body, named) {
                (Some((side, word)), _) => (side, 0, format!("its body tests `{word}`")),
                (None, Some(side)) => (side, 1, "its name".to_string()),
                _ => continue,
            };
            let role = if side {
                Role::ContentionPredicate
            } else {
                Role::TransientPredicate
            };
            inferred[role.at()].push((rank, c, why));
            continue;
        }
        let (sched, _) = super::effect::evaluate_schedule(index, file, c.value, version);
        if matches!(sched, crate::schedule::Sched::Unknown) {
            continue;
        }
        let summary = schedule::summarize(&sched);
        let few = matches!(summary.attempts, Attempts::Exact(n) | Attempts::AtMost(n) if (1..=10).contains(&n));
        if !few {
            continue;
        }
        let first = summary.delays.as_ref().and_then(|d| d.first().copied());
        let (side, rank, why) = match (by_name(c.name), first) {
            (Some(side), _) => (side, 0, "its name".to_string()),
            (None, Some(ms)) if ms < 100.0 => (
                true,
                1,
                format!("its body: a first gap of {}", schedule::duration::format_ms(ms)),
            ),
            (None, Some(ms)) if ms <= 2000.0 => (
                false,
                1,
                format!("its body: a first gap of {}", schedule::duration::format_ms(ms)),
            ),
            _ => continue,
        };
        let role = if side {
            Role::ContentionPolicy
        } else {
            Role::TransientPolicy
        };
        inferred[role.at()].push((rank, c, why));
    }
    for role in Role::ALL {
        if found[role.at()].is_some() {
            continue;
        }
        // An export the config names for another role is not this one.
        let taken = |name: &str| found.iter().flatten().any(|f| f.name == name);
        let best = inferred[role.at()]
            .iter()
            .filter(|(_, c, _)| !taken(c.name))
            .min_by_key(|(rank, c, _)| (*rank, c.span.start));
        if let Some((_, c, why)) = best {
            found[role.at()] = Some(Found {
                name: c.name.to_string(),
                line: line(c),
                why: why.clone(),
                configured: false,
            });
        }
    }
    Some(ModuleNames {
        file,
        path: index
            .config
            .relative(&index.files[file].absolute)
            .to_string_lossy()
            .replace('\\', "/"),
        found,
        schedule: schedule_local,
        effect: EffectVersion::from_code(version),
    })
}

/// How a file names a retry module's exports.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Prefix {
    /// `import * as Retry from …`: `Retry.name`.
    Namespace(String),
    /// `import { name } from …`: `name`.
    Bare,
}

/// The names a file's remedies use.
#[derive(Debug, Clone)]
pub struct Names {
    /// The retry modules the file uses (or the nearest one), each with how the file names it:
    /// the first that has a role's export names it; the first is told what to add.
    modules: Vec<(ModuleNames, Prefix)>,
    /// The file imports the first module (or is it): its names can be written into the file.
    imported: bool,
    /// The config's names, for a file with no retry module in view.
    vocabulary: Vocabulary,
}

impl Names {
    /// The names for a file with no retry module in view: the config's.
    pub fn configured(vocabulary: &Vocabulary) -> Names {
        Names {
            modules: Vec::new(),
            imported: false,
            vocabulary: vocabulary.clone(),
        }
    }

    /// The names `file` sees: the retry modules it imports, else the nearest TypeScript one.
    pub fn of_file(index: &Index, file: FileId, read: &dyn Fn(FileId) -> Option<ModuleNames>) -> Names {
        let vocabulary = &index.config_of(file).vocabulary;
        let mut names = Names::configured(vocabulary);
        let Some(facts) = index.loaded(file) else { return names };
        if matches!(
            facts.language,
            Language::Rust | Language::Sql | Language::Json | Language::Yaml
        ) {
            return names;
        }
        let modules = index.retry_modules();
        let mut seen: Vec<FileId> = Vec::new();
        // The retry module itself names its exports bare.
        if modules.contains(&file) {
            seen.push(file);
            if let Some(module) = read(file) {
                names.modules.push((module, Prefix::Bare));
            }
        }
        for import in &facts.imports {
            let (target, prefix) = match (&import.kind, index.resolve_name(file, &import.local)) {
                (_, Resolved::Namespace(target)) => (target, Prefix::Namespace(import.local.clone())),
                (ImportKind::Named(_), Resolved::Value { file: target, .. }) => (target, Prefix::Bare),
                _ => continue,
            };
            if target == file || !modules.contains(&target) || seen.contains(&target) {
                continue;
            }
            seen.push(target);
            if let Some(module) = read(target) {
                names.modules.push((module, prefix));
            }
        }
        names.imported = !names.modules.is_empty();
        if names.modules.is_empty() {
            let here = &index.files[file].absolute;
            let shared = |m: FileId| {
                here.components()
                    .zip(index.files[m].absolute.components())
                    .take_while(|(a, b)| a == b)
                    .count()
            };
            let mut nearest: Vec<FileId> = modules.iter().copied().filter(|&m| m != file).collect();
            nearest.sort_by_key(|&m| (std::cmp::Reverse(shared(m)), index.files[m].path.clone()));
            if let Some(module) = nearest.into_iter().find_map(read) {
                names.modules.push((module, Prefix::Namespace("Retry".into())));
            }
        }
        names
    }

    /// Whether a retry module is in view: else the names are the config's.
    pub fn sees_a_module(&self) -> bool {
        !self.modules.is_empty()
    }

    /// Whether the file imports the retry module its names come from (or is it): a fix may
    /// write them there.
    pub fn imports_its_module(&self) -> bool {
        self.imported
    }

    /// The export that plays `role`, and how this file writes it (`Retry.dbConflict`).
    pub fn reference(&self, role: Role) -> Option<String> {
        self.modules.iter().find_map(|(module, prefix)| {
            let found = module.get(role)?;
            Some(match prefix {
                Prefix::Namespace(local) => format!("{local}.{}", found.name),
                Prefix::Bare => found.name.clone(),
            })
        })
    }

    /// The bare name of the export that plays `role` (`dbConflict`), when a module has one;
    /// with no module in view, the config's first name.
    pub fn name(&self, role: Role) -> Option<String> {
        if self.modules.is_empty() {
            return role.names(&self.vocabulary).first().cloned();
        }
        self.modules
            .iter()
            .find_map(|(module, _)| module.get(role).map(|f| f.name.clone()))
    }

    /// How the help writes `role`: the export, or, when the module has none, the name to give
    /// the one to add (and whether it is missing).
    fn spelled(&self, role: Role) -> (String, bool) {
        let Some((_, prefix)) = self.modules.first() else {
            return (format!("Retry.{}", role.new_name(&self.vocabulary)), false);
        };
        match self.reference(role) {
            Some(reference) => (reference, false),
            None => {
                let name = role.new_name(&self.vocabulary);
                let written = match prefix {
                    Prefix::Namespace(local) => format!("{local}.{name}"),
                    Prefix::Bare => name,
                };
                (written, true)
            }
        }
    }

    /// What to add for `role`, in plain words and code, when the module has no such export.
    fn missing(&self, role: Role) -> Option<String> {
        let (module, _) = self.modules.first()?;
        Some(format!(
            "the retry module ({}) exports no {} ({}): add `{}`",
            module.path,
            role.what(),
            role.purpose(),
            module.code_to_add(role, &self.vocabulary)
        ))
    }
}

/// How a help line writes "a named policy, such as the connection-loss one" (an example of
/// referencing a policy of the retry module): its connection-loss policy, else the name to
/// give one, never with what to add.
pub const EXAMPLE_POLICY: &str = "Retry.aNamedPolicy";

/// A help line in the project's names: the placeholders remedies are written with
/// (`Retry.contention`, `Retry.isContention`, `Retry.transient`, `Retry.isConnectionLost`)
/// become the exports of the file's retry module that play those roles, as the file names
/// them; for a role the module has no export for, the help ends saying what to add.
pub fn spell(help: &str, names: &Names) -> String {
    let spelled: Vec<(Role, String, bool)> = Role::ALL
        .iter()
        .map(|&role| {
            let (text, missing) = names.spelled(role);
            (role, text, missing)
        })
        .collect();
    let mut out = String::with_capacity(help.len());
    let mut missing: Vec<Role> = Vec::new();
    let mut rest = help;
    'scan: while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix(EXAMPLE_POLICY) {
            out.push_str(&names.spelled(Role::TransientPolicy).0);
            rest = after;
            continue 'scan;
        }
        for (role, text, is_missing) in &spelled {
            if let Some(after) = rest.strip_prefix(role.placeholder()) {
                if !after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                    out.push_str(text);
                    if *is_missing && !missing.contains(role) {
                        missing.push(*role);
                    }
                    rest = after;
                    continue 'scan;
                }
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    for role in missing {
        if let Some(add) = names.missing(role) {
            out.push_str("; ");
            out.push_str(&add);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_camel_and_snake_case() {
        assert_eq!(words("isNetworkError"), ["is", "network", "error"]);
        assert_eq!(words("dbConflict"), ["db", "conflict"]);
        assert_eq!(words("is_connection_lost"), ["is", "connection", "lost"]);
        assert_eq!(words("HTTPRetry"), ["httpretry"]);
    }

    #[test]
    fn names_and_bodies_say_which_side() {
        assert_eq!(by_name("dbConflict"), Some(true));
        assert_eq!(by_name("network"), Some(false));
        assert_eq!(by_name("isDeadlock"), Some(true));
        assert_eq!(by_name("isNetworkError"), Some(false));
        assert_eq!(by_name("standard"), None);
        assert_eq!(by_name("dbConnection"), None);
        assert_eq!(by_body("e.code === \"40P01\"").map(|b| b.0), Some(true));
        assert_eq!(by_body("e._tag === \"Deadlock\"").map(|b| b.0), Some(true));
        assert_eq!(by_body("e.reason === \"ECONNRESET\"").map(|b| b.0), Some(false));
        assert_eq!(by_body("e instanceof ConnectionError").map(|b| b.0), Some(false));
        assert_eq!(by_body("e.status >= 500"), None);
    }

    #[test]
    fn comments_are_not_read_as_tests() {
        let text = b"(e) => // not a deadlock\n  e.code === \"ECONNRESET\"";
        let code = code_of(text, crate::source::Span::new(0, text.len()));
        assert_eq!(by_body(&code).map(|b| b.0), Some(false));
    }
}
