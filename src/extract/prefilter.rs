//! Parse less: a byte-level test of whether a file can hold a fact any enabled rule reads.
//!
//! Rules declare their triggers ([`Trigger`]); the prefilter is built from the triggers of
//! the enabled rules and the configuration's own names (lease tables), so a configured name
//! is never ignored because the prefilter did not know it. A file that fails the test is
//! not parsed unless the index needs it to resolve a name (the demand stage), so findings
//! never depend on the prefilter — a test runs every fixture both ways.

use aho_corasick::AhoCorasick;

use crate::config::Config;
use crate::facts::rs2::POLICY_KEYS;
use crate::source::Language;

/// What a file must hold for a rule to find anything in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trigger {
    /// Retry calls: `retry` in a file that imports Effect; a Rust retry library's names.
    Retries,
    /// Recurring work: `Jobs.make`; `cron` or `Jobs` in a file that imports Effect; a `Ref`,
    /// a `let` or a `Map` and a clock read in one (an in-memory "since the last run" cursor).
    Jobs,
    /// Lease SQL: the lease columns and tables, and the configured lease tables.
    Leases,
    /// Loops on an interval: `Effect.repeat`/`forever`/`schedule`, `Stream.tick`, a
    /// supervisor's retry or `setInterval`, in a file that imports Effect.
    Polls,
    /// `retrylint-ignore` comments.
    Suppressions,
    /// RS2 configuration (JSON, YAML): `retry` and a policy key, or `$_retry`.
    Rs2,
}

/// What a pattern says when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// The file is relevant.
    Alone,
    /// A member of Effect's modules (`retry`): relevant if the file also imports Effect, or
    /// reads it as a member (`X.retry`) and imports a module that can re-export Effect.
    Effect,
    /// A name (`cron`, also an option's key): relevant if the file also imports Effect, or a
    /// module that can re-export it.
    EffectName,
    /// A clock read: relevant with an Effect import and a [`Needs::Window`].
    Clock,
    /// Where a clock read can be kept or start a window: a `Ref`, a module `let`, a `Map` (a
    /// cursor), or a subtraction from it (`Date.now() - interval`, `now - interval`,
    /// `DateTime.subtract`: a job's window started from the wall clock).
    Window,
    /// `retry`: relevant with an RS2 policy key.
    Rs2Retry,
    /// An RS2 policy key: relevant with `retry`.
    Rs2Key,
}

const LEASE_TOKENS: &[&str] = &["lease_until", "jobs_leases", "last_slot"];
const RUST_RETRY_TOKENS: &[&str] = &[
    "retry",
    "Retry",
    "backoff",
    "Backoff",
    "backon",
    "ExponentialBuilder",
    "ConstantBuilder",
    "FibonacciBuilder",
];

/// One automaton per language, with what each pattern means.
struct Matcher {
    /// Read in a script's code only (not in its comments, strings or regular expressions),
    /// each at the start of an identifier; in other languages, anywhere.
    automaton: Option<AhoCorasick>,
    needs: Vec<Needs>,
    /// Read anywhere, whatever their case: SQL names (lease tables and columns: `UPDATE
    /// Scheduler_Locks` names the configured `scheduler_locks`, in a string), and
    /// `retrylint-ignore` (in a comment).
    names: Option<AhoCorasick>,
}

impl Matcher {
    fn new(patterns: Vec<(String, Needs)>, names: Vec<String>) -> Matcher {
        let (texts, needs): (Vec<String>, Vec<Needs>) = patterns.into_iter().unzip();
        let automaton = (!texts.is_empty()).then(|| AhoCorasick::new(&texts).expect("literal patterns"));
        let names = (!names.is_empty()).then(|| {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(&names)
                .expect("literal patterns")
        });
        Matcher {
            automaton,
            needs,
            names,
        }
    }

    /// Why `text` (a script's when `script`) holds a trigger, if it does; with `aliases`,
    /// also a trigger that counts only if an import of the script's is Effect's through a
    /// project module re-exporting it.
    fn why(&self, text: &[u8], script: Option<&Script>, aliases: bool) -> Option<Kept> {
        if let Some(found) = self.names.as_ref().and_then(|names| names.find(text)) {
            return Some(Kept {
                word: String::from_utf8_lossy(&text[found.range()]).into_owned(),
                because: Because::NameAnywhere,
            });
        }
        let automaton = self.automaton.as_ref()?;
        // A script's words count in code only, and its imports say whether Effect's names
        // can be in scope: an import from Effect, or one a project module re-exporting Effect
        // can stand behind (the index reads those as Effect's, `Index::effect_aliases`).
        let (text, effect, alias) = match script {
            Some(script) => (&script.code[..], script.effect_import, aliases && script.alias_import),
            None => (text, false, false),
        };
        // Where an Effect word can be Effect's: read through a name the file imports
        // (`Effect.retry`, `S.repeat`, `P.Effect.retry`, a bare `retry` imported from
        // `effect/Effect`), as extraction resolves them (`FileFacts::effect_member_path`):
        // `scheduler.schedule(…)`, `options.retry` and `self.repeat` in a file that imports
        // Effect are not. Only a script's imports are known; elsewhere no word needs them.
        let mut brackets = Brackets::default();
        let mut through = |start: usize| -> Option<Because> {
            let script = script?;
            let name: &[u8] = if is_member(text, start) {
                member_root(text, start)?
            } else {
                let end = text[start..]
                    .iter()
                    .position(|&b| !is_ident(b))
                    .map_or(text.len(), |e| start + e);
                &text[start..end]
            };
            if script.effect_names.iter().any(|n| n == name) || (effect && script.effect_unnamed) {
                Some(Because::EffectImport)
            } else if (effect || alias)
                && !is_member(text, start)
                && is_value_key(text, start, start + name.len())
                && brackets.in_braces(text, start)
            {
                Some(Because::OptionKey)
            } else if alias && script.alias_names.iter().any(|n| n == name) && is_member(text, start) {
                // A project module re-exports modules, not their members: through it a
                // member is read as one (`Effect.retry`, `P.Effect.retry`), never bare.
                Some(Because::AliasMember)
            } else {
                None
            }
        };
        let (mut clock, mut window) = (false, false);
        let (mut retry, mut policy_key) = (false, false);
        let kept = |found: &aho_corasick::Match, because| Kept {
            word: String::from_utf8_lossy(&text[found.range()]).into_owned(),
            because,
        };
        // Overlapping: `Jobs` must not hide `Jobs.make`, which needs no Effect import.
        for found in automaton.find_overlapping_iter(text) {
            // In code, a word counts where an identifier starts: `maxRetries` is no `retry`.
            if script.is_some() && found.start() > 0 && is_ident(text[found.start() - 1]) {
                continue;
            }
            let because = match self.needs[found.pattern().as_usize()] {
                Needs::Alone => Some(Because::Alone),
                Needs::Effect => through(found.start()),
                Needs::EffectName if effect => Some(Because::EffectImport),
                Needs::EffectName if alias => Some(Because::AliasImport),
                Needs::EffectName => None,
                Needs::Clock => {
                    clock = true;
                    None
                }
                Needs::Window => {
                    window = true;
                    None
                }
                Needs::Rs2Retry => {
                    retry = true;
                    None
                }
                Needs::Rs2Key => {
                    policy_key = true;
                    None
                }
            };
            // A clock read in an Effect file may be a cursor's (kept in a `Ref`, a `let`, a
            // `Map`) or start a job's window (`Date.now() - interval` in the handler a cron
            // wrapper is given).
            let because = because
                .or_else(|| ((effect || alias) && clock && window).then_some(Because::EffectClock))
                .or_else(|| (retry && policy_key).then_some(Because::Rs2RetryAndKey));
            if let Some(because) = because {
                return Some(kept(&found, because));
            }
        }
        None
    }
}

/// Why the prefilter keeps a file: the word that decided it (the last one, when it takes
/// two), and what made that word count (`Prefilter::why`, for the keep-rate statistics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub word: String,
    pub because: Because,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Because {
    /// A word that is relevant by itself (`Jobs.make`, `setInterval`, a Rust retry crate's name).
    Alone,
    /// A lease table or column, or `retrylint-ignore`, read anywhere.
    NameAnywhere,
    /// A word of Effect's in a file that imports Effect.
    EffectImport,
    /// A member (`X.retry`) in a file whose imports a project module re-exporting Effect can
    /// stand behind.
    AliasMember,
    /// A name (`cron`) in such a file.
    AliasImport,
    /// A clock read kept or subtracted from, with an import that can bring Effect.
    EffectClock,
    /// `retry…` or `…schedule` as an object's key (`{ retryTransientErrors: schedule }`) in a
    /// file that imports Effect: a schedule handed to a helper that retries with it.
    OptionKey,
    /// RS2: `retry` and a policy key.
    Rs2RetryAndKey,
}

/// The test, for one set of enabled rules and one configuration.
pub struct Prefilter {
    typescript: Matcher,
    rust: Matcher,
    sql: Matcher,
    /// JSON and YAML.
    config: Matcher,
    key: u64,
}

impl Prefilter {
    pub fn new(triggers: &[Trigger], config: &Config) -> Prefilter {
        let mut typescript: Vec<(String, Needs)> = Vec::new();
        let mut rust: Vec<(String, Needs)> = Vec::new();
        let mut sql: Vec<(String, Needs)> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut config_files: Vec<(String, Needs)> = Vec::new();
        let words = |list: &[&str], needs: Needs| -> Vec<(String, Needs)> {
            list.iter().map(|w| (w.to_string(), needs)).collect()
        };
        let has = |t: Trigger| triggers.contains(&t);
        if has(Trigger::Retries) {
            // `ExecutionPlan.make` steps retry with `attempts` and `schedule`, no `retry` word.
            typescript.extend(words(&["retry", "ExecutionPlan"], Needs::Effect));
            rust.extend(words(RUST_RETRY_TOKENS, Needs::Alone));
        }
        if has(Trigger::Jobs) {
            typescript.extend(words(&["cron", "Jobs"], Needs::EffectName));
            typescript.extend(words(&["Jobs.make"], Needs::Alone));
            typescript.extend(words(
                &[
                    "Ref.",
                    "SynchronizedRef.",
                    "SubscriptionRef.",
                    "let ",
                    "new Map",
                    "Date.now() - ",
                    "now - ",
                    "DateTime.subtract",
                ],
                Needs::Window,
            ));
            typescript.extend(words(
                &[
                    "currentTimeMillis",
                    "currentTimeNanos",
                    "Date.now",
                    "new Date",
                    "DateTime.now",
                    "DateTime.unsafeNow",
                ],
                Needs::Clock,
            ));
        }
        if has(Trigger::Polls) {
            typescript.extend(words(
                &["repeat", "forever", "schedule", "tick", "retry"],
                Needs::Effect,
            ));
            typescript.extend(words(&["setInterval"], Needs::Alone));
        }
        if has(Trigger::Leases) {
            // Every configured name: a configured table or column the prefilter did not know
            // would leave its statements unread.
            names.extend(LEASE_TOKENS.iter().map(|t| t.to_string()));
            names.extend(config.lease_tables.iter().cloned());
            names.extend(config.lease_columns.iter().cloned());
            // An ORM names them in camelCase (`leaseUntil` for `lease_until`), which the lease
            // rules match without the underscores.
            let unders: Vec<String> = names
                .iter()
                .filter(|n| n.contains('_'))
                .map(|n| n.replace('_', ""))
                .collect();
            names.extend(unders);
        }
        if has(Trigger::Rs2) {
            config_files.extend(words(&["$_retry"], Needs::Alone));
            config_files.extend(words(&["retry"], Needs::Rs2Retry));
            config_files.extend(words(POLICY_KEYS, Needs::Rs2Key));
        }
        // A script's suppressions are in its comments, which its code automaton does not read.
        let mut script_names = names.clone();
        if has(Trigger::Suppressions) {
            for list in [&mut rust, &mut sql, &mut config_files] {
                list.push(("retrylint-ignore".into(), Needs::Alone));
            }
            script_names.push("retrylint-ignore".into());
        }
        // What the prefilter looks for, as one hash: a cached verdict of another is not reused.
        // Its version: what a pattern means changes with how the text is read (scripts: code
        // only, with their imports; 3: Effect's words only read through an imported name).
        let mut described = String::from("prefilter 3");
        for (name, list) in [
            ("ts", &typescript),
            ("rs", &rust),
            ("sql", &sql),
            ("config", &config_files),
        ] {
            described.push_str(name);
            for (pattern, needs) in list.iter() {
                described.push_str(&format!("\0{pattern}\0{needs:?}"));
            }
        }
        for (list, names) in [("names", &names), ("script names", &script_names)] {
            described.push_str(list);
            for name in names {
                described.push_str(&format!("\0{name}"));
            }
        }
        Prefilter {
            typescript: Matcher::new(typescript, script_names),
            rust: Matcher::new(rust, names.clone()),
            sql: Matcher::new(sql, names),
            config: Matcher::new(config_files, Vec::new()),
            key: crate::source::fnv1a64(described.as_bytes()),
        }
    }

    /// Identifies what this prefilter looks for.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Whether `text` can hold a fact an enabled rule reads (a file kept only
    /// [`Relevance::ThroughAliases`] counts: it can).
    pub fn is_relevant(&self, language: Language, text: &[u8]) -> bool {
        self.why(language, text).is_some()
    }

    /// Why the prefilter keeps `text`, if it does (`examples/prefilter_recall --list-kept`),
    /// counting the triggers that need an import to be Effect's through a project module.
    pub fn why(&self, language: Language, text: &[u8]) -> Option<Kept> {
        match language {
            Language::Rust => self.rust.why(text, None, false),
            Language::Sql => self.sql.why(text, None, false),
            Language::Json | Language::Yaml => self.config.why(text, None, false),
            _ => self.typescript.why(text, Some(&Self::script(language, text)), true),
        }
    }

    /// Whether `text` can hold a fact an enabled rule reads, and on what; and (when it is not
    /// kept) the modules it can re-export from (see `Script::reexports`).
    pub fn relevance(&self, language: Language, text: &[u8]) -> (Relevance, Option<Vec<String>>) {
        let script = match language {
            Language::Rust | Language::Sql | Language::Json | Language::Yaml => {
                let relevance = match self.is_relevant(language, text) {
                    true => Relevance::Kept,
                    false => Relevance::Irrelevant,
                };
                // Nothing but a script re-exports a script's names.
                return (relevance, Some(Vec::new()));
            }
            _ => Self::script(language, text),
        };
        let relevance = if self.typescript.why(text, Some(&script), false).is_some() {
            Relevance::Kept
        } else if script.alias_import && self.typescript.why(text, Some(&script), true).is_some() {
            let mut sources = script.alias_sources.clone();
            sources.sort_unstable();
            sources.dedup();
            Relevance::ThroughAliases(sources)
        } else {
            Relevance::Irrelevant
        };
        let reexports = (relevance != Relevance::Kept).then(|| script.reexports());
        (relevance, reexports)
    }

    fn script(language: Language, text: &[u8]) -> Script {
        match language {
            // Their scripts, as extraction reads them (the template masked out).
            Language::Svelte | Language::Vue => Script::scan(&super::component::scripts(text).1),
            _ => Script::scan(text),
        }
    }
}

/// The prefilter's verdict on a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Relevance {
    /// It can hold a fact.
    Kept,
    /// It can hold a fact only if one of these modules (as its imports name them) is a project
    /// module that re-exports Effect (`@app/prelude`): its triggers are Effect's words read
    /// through names imported from them. Which they are is the index's to say
    /// ([`crate::index::Index::reexports_effect`]); until then the file is ruled out.
    ThroughAliases(Vec<String>),
    /// It holds no trigger.
    Irrelevant,
}

/// A script as the prefilter reads it: its code with comments, the text of string and
/// template literals and regular expressions blanked to spaces (same offsets; a template's
/// `${…}` stays code), and what its imports can bring in.
struct Script {
    code: Vec<u8>,
    /// An import (or re-export) from an Effect package, in code.
    effect_import: bool,
    /// An import that a project module re-exporting Effect (`@app/prelude`) can make Effect's
    /// (as the index reads aliases): not type-only, and a namespace or a named import of one
    /// of Effect's modules.
    alias_import: bool,
    /// The names an import from an Effect package binds, and the names it imports (`retry`
    /// of `import { retry as r }`: a superset is safe).
    effect_names: Vec<Vec<u8>>,
    /// An import from an Effect package whose names are not read here: `import("effect")`,
    /// `require("effect")`, `import "effect"`. Any name can be Effect's then.
    effect_unnamed: bool,
    /// The names such an aliasable import binds (and imports).
    alias_names: Vec<Vec<u8>>,
    /// The modules such imports name, as written.
    alias_sources: Vec<String>,
    /// The modules its `export … from` statements name, and its `import … from` statements.
    export_sources: Vec<String>,
    import_sources: Vec<String>,
}

/// Effect's modules a named import can alias beyond the index's
/// [`crate::facts::EFFECT_MODULE_NAMES`]: the modules whose members the extractor reads.
const ALIASABLE_MORE: &[&str] = &["SynchronizedRef", "SubscriptionRef", "ClusterCron", "DateTime"];

/// Words after which a `/` starts a regular expression, not a division.
const REGEX_AFTER: &[&[u8]] = &[
    b"return",
    b"typeof",
    b"case",
    b"do",
    b"else",
    b"in",
    b"of",
    b"new",
    b"delete",
    b"void",
    b"throw",
    b"yield",
    b"await",
    b"instanceof",
];

/// Whether the word at `start..end` is an object literal's key: a `:` follows (spaces
/// between, not `::`), and it is not a type's member (`readonly retry: …`, `retry?: …`: a
/// type holds no schedule handed to a helper).
fn is_value_key(code: &[u8], start: usize, end: usize) -> bool {
    let rest = code.get(end..).unwrap_or_default();
    let rest = &rest[rest.iter().take_while(|b| matches!(b, b' ' | b'\t')).count()..];
    let before = code[..start].trim_ascii_end();
    let readonly = before
        .strip_suffix(b"readonly")
        .is_some_and(|b| !b.last().copied().is_some_and(is_ident));
    rest.first() == Some(&b':') && rest.get(1) != Some(&b':') && !readonly
}

/// The brackets open at a point of a script's code, read forwards once however many points
/// are asked about (a point before the last one asked is answered only when no bracket lies
/// between them).
#[derive(Default)]
struct Brackets {
    at: usize,
    open: Vec<u8>,
}

impl Brackets {
    /// Whether the innermost bracket open at `point` is a `{` (an object literal's key, not a
    /// parameter's `(schedule: Schedule<…>)` or a tuple's label), or the answer is not known.
    fn in_braces(&mut self, code: &[u8], point: usize) -> bool {
        if point < self.at {
            if code[point..self.at].iter().any(|b| b"()[]{}".contains(b)) {
                return true;
            }
        } else {
            for &b in &code[self.at..point] {
                match b {
                    b'(' | b'[' | b'{' => self.open.push(b),
                    b')' | b']' | b'}' => {
                        self.open.pop();
                    }
                    _ => {}
                }
            }
            self.at = point;
        }
        self.open.last() == Some(&b'{')
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

impl Script {
    fn scan(text: &[u8]) -> Script {
        let mut code = text.to_vec();
        let mut script = Script {
            code: Vec::new(),
            effect_import: false,
            alias_import: false,
            effect_names: Vec::new(),
            effect_unnamed: false,
            alias_names: Vec::new(),
            alias_sources: Vec::new(),
            export_sources: Vec::new(),
            import_sources: Vec::new(),
        };
        // Open template literals: the brace depth of each one's current `${…}`.
        let mut templates: Vec<usize> = Vec::new();
        // Inside a template's text (not its `${…}`).
        let mut in_template = false;
        // The last byte of code that is not white space, for telling a regex from a division.
        let mut last: Option<usize> = None;
        let mut i = 0;
        let n = text.len();
        let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
            for b in &mut code[from..to] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        };
        while i < n {
            if in_template {
                // Template text up to its end or to a `${`.
                let start = i;
                while i < n && text[i] != b'`' && !(text[i] == b'$' && text.get(i + 1) == Some(&b'{')) {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                let end = i.min(n);
                blank(&mut code, start, end);
                if i >= n {
                    break;
                }
                if text[i] == b'`' {
                    templates.pop();
                    in_template = false;
                    last = Some(i);
                    i += 1;
                } else {
                    i += 2;
                    in_template = false;
                    last = Some(i - 1);
                }
                continue;
            }
            let b = text[i];
            match b {
                b'/' if text.get(i + 1) == Some(&b'/') => {
                    let end = memchr::memchr(b'\n', &text[i..]).map_or(n, |e| i + e);
                    blank(&mut code, i, end);
                    i = end;
                }
                b'/' if text.get(i + 1) == Some(&b'*') => {
                    let end = memchr::memmem::find(&text[i + 2..], b"*/").map_or(n, |e| i + 2 + e + 2);
                    blank(&mut code, i, end);
                    i = end;
                }
                b'/' if regex_can_start(text, last) => match regex_end(text, i) {
                    Some(end) => {
                        blank(&mut code, i + 1, end - 1);
                        last = Some(end - 1);
                        i = end;
                    }
                    None => {
                        last = Some(i);
                        i += 1;
                    }
                },
                b'\'' | b'"' => {
                    let mut j = i + 1;
                    while j < n && text[j] != b && text[j] != b'\n' {
                        j += if text[j] == b'\\' { 2 } else { 1 };
                    }
                    let end = j.min(n);
                    script.specifier(text, &code, i, &text[i + 1..end]);
                    blank(&mut code, i + 1, end);
                    last = Some(end.min(n - 1));
                    i = end + 1;
                }
                b'`' => {
                    templates.push(0);
                    in_template = true;
                    i += 1;
                }
                b'{' => {
                    if let Some(depth) = templates.last_mut() {
                        *depth += 1;
                    }
                    last = Some(i);
                    i += 1;
                }
                b'}' => {
                    match templates.last_mut() {
                        Some(0) => in_template = true,
                        Some(depth) => *depth -= 1,
                        None => {}
                    }
                    last = Some(i);
                    i += 1;
                }
                _ => {
                    if !b.is_ascii_whitespace() {
                        last = Some(i);
                    }
                    i += 1;
                }
            }
        }
        script.code = code;
        script
    }

    /// Reads a string literal at `quote` (its text `value`) as the module an import names,
    /// if `from`, `import` or `import(`/`require(` comes before it in `code`.
    fn specifier(&mut self, text: &[u8], code: &[u8], quote: usize, value: &[u8]) {
        let before = code[..quote].trim_ascii_end();
        let before = before.strip_suffix(b"(").map_or(before, |b| b.trim_ascii_end());
        let word_start = before.iter().rposition(|&b| !is_ident(b)).map_or(0, |p| p + 1);
        let word = &before[word_start..];
        if !matches!(word, b"from" | b"import" | b"require") {
            return;
        }
        let source = std::str::from_utf8(value).unwrap_or("");
        let effect = crate::facts::is_effect_source(source);
        if word != b"from" {
            // `import("effect")`, `require("effect")`, `import "effect"`: what they bind is
            // not read here.
            if effect {
                self.effect_import = true;
                self.effect_unnamed = true;
            }
            return;
        }
        // The clause: from the `import` (or `export`) before this `from`.
        let head = &code[..word_start];
        let Some(start) = last_word(head, b"import").max(last_word(head, b"export")) else {
            if effect {
                self.effect_import = true;
                self.effect_unnamed = true;
            }
            return;
        };
        let keyword = &text[start..start + 6];
        let clause = head[start + 6..].trim_ascii();
        match keyword {
            b"export" => self.export_sources.push(source.to_string()),
            _ => self.import_sources.push(source.to_string()),
        }
        if effect {
            self.effect_import = true;
            // A re-export binds nothing here; an import binds every name of its clause
            // (type-only ones too: a superset is safe).
            if keyword == b"import" {
                self.effect_names.extend(clause_names(clause));
            }
            return;
        }
        if keyword == b"export" {
            // A re-export (`export { Effect } from "./prelude"`) is the index's to follow.
            return;
        }
        if clause.starts_with(b"type") && clause.get(4).is_some_and(|&b| !is_ident(b) && b != b',') {
            return;
        }
        // `import * as P from "./prelude"` (or `import D, * as P`).
        if let Some(star) = memchr::memchr(b'*', clause) {
            self.alias_import = true;
            self.alias_names.extend(clause_names(&clause[star..]));
            self.alias_sources.push(source.to_string());
        }
        let Some(open) = memchr::memchr(b'{', clause) else {
            return;
        };
        let close = memchr::memchr(b'}', clause).unwrap_or(clause.len());
        for element in clause[open + 1..close.max(open + 1)].split(|&b| b == b',') {
            let element = element.trim_ascii();
            if element.starts_with(b"type") && element.get(4).is_some_and(|b| b.is_ascii_whitespace()) {
                // `type Layer`: a type brings no value.
                continue;
            }
            let end = element.iter().position(|&b| !is_ident(b)).unwrap_or(element.len());
            if crate::facts::EFFECT_MODULE_NAMES
                .iter()
                .chain(ALIASABLE_MORE)
                .any(|m| m.as_bytes() == &element[..end])
            {
                self.alias_import = true;
                self.alias_names.extend(clause_names(element));
                if self.alias_sources.last().is_none_or(|last| last != source) {
                    self.alias_sources.push(source.to_string());
                }
            }
        }
    }
}

/// Every identifier of an import clause but its keywords: the names it binds and imports.
fn clause_names(clause: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    clause
        .split(|&b| !is_ident(b))
        .filter(|w| !w.is_empty() && !matches!(*w, b"type" | b"as"))
        .map(<[u8]>::to_vec)
}

/// The name a member read at `start` is read through: `Effect` of `Effect.retry`, `P` of
/// `P.Effect.retry` (across lines and `?.`); `None` when it is read off anything else (a
/// call's result, `this`: not a name an import binds).
fn member_root(code: &[u8], start: usize) -> Option<&[u8]> {
    let mut at = start;
    loop {
        // At a name that follows a `.`: step over the `.` (or `?.`) to the name before.
        let before = code[..at].trim_ascii_end();
        let before = before.strip_suffix(b".")?;
        let before = before.strip_suffix(b"?").unwrap_or(before).trim_ascii_end();
        let end = before.len();
        let begin = before.iter().rposition(|&b| !is_ident(b)).map_or(0, |p| p + 1);
        if begin == end || code[begin].is_ascii_digit() {
            return None;
        }
        if !code[..begin].trim_ascii_end().ends_with(b".") {
            return Some(&code[begin..end]);
        }
        at = begin;
    }
}

/// Whether the word at `start` of `code` follows a `.` (`Effect.retry`, `Effect\n  .retry`),
/// not a spread's `...`.
fn is_member(code: &[u8], start: usize) -> bool {
    let before = code[..start].trim_ascii_end();
    before.ends_with(b".") && !before.ends_with(b"...")
}

/// The start of the last whole word `word` in `code`.
fn last_word(code: &[u8], word: &[u8]) -> Option<usize> {
    let mut end = code.len();
    while let Some(at) = memchr::memmem::rfind(&code[..end], word) {
        let before = at.checked_sub(1).map(|p| code[p]);
        let after = code.get(at + word.len()).copied();
        if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
            return Some(at);
        }
        end = at;
    }
    None
}

/// Whether a `/` after the code byte at `last` starts a regular expression.
fn regex_can_start(text: &[u8], last: Option<usize>) -> bool {
    let Some(last) = last else {
        return true;
    };
    let b = text[last];
    if b"(,=:[!&|?{};+-*%<>~^".contains(&b) {
        return true;
    }
    if !is_ident(b) {
        return false;
    }
    let start = text[..=last].iter().rposition(|&c| !is_ident(c)).map_or(0, |p| p + 1);
    REGEX_AFTER.contains(&&text[start..=last])
}

/// The end (past the closing `/` and flags) of a regular expression starting at `start`;
/// `None` when the line ends first (it was a division).
fn regex_end(text: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    let mut class = false;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 1,
            b'\n' | b'\r' => return None,
            b'[' => class = true,
            b']' => class = false,
            b'/' if !class => {
                i += 1;
                while i < text.len() && is_ident(text[i]) {
                    i += 1;
                }
                return Some(i);
            }
            _ => {}
        }
        i += 1;
    }
    None
}

impl Script {
    /// The modules the script can re-export from, as written: those its `export … from`
    /// statements name, and when it has an export clause of its own (`export { Schedule }`,
    /// which can re-export an import) those its imports name too. A module re-exports only so
    /// ([`crate::facts::Export`] from a declaration binds its own value), so the index answers
    /// whether a file the prefilter ruled out re-exports Effect from this, without reading it
    /// again ([`crate::index::Index::reexport_summary`]). Read in code only: Effect's own
    /// modules show `import … from "effect"` in every doc comment.
    fn reexports(&self) -> Vec<String> {
        let code = &self.code;
        let spaces = |at: usize| {
            at + code[at.min(code.len())..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count()
        };
        let word_at = |at: usize, word: &[u8]| {
            code.get(at..).is_some_and(|rest| rest.starts_with(word))
                && !code.get(at + word.len()).copied().is_some_and(is_ident)
                && !(at > 0 && is_ident(code[at - 1]))
        };
        // The next `}` found, kept: clauses that do not close until far on find the same one
        // without reading the text again (a file of `export {` a thousand times stays linear).
        let mut close: Option<usize> = None;
        let own_clause = memchr::memmem::find_iter(code, b"export").any(|at| {
            if !word_at(at, b"export") {
                return false;
            }
            let mut next = spaces(at + 6);
            if word_at(next, b"type") {
                next = spaces(next + 4);
            }
            if code.get(next) != Some(&b'{') {
                return false;
            }
            if close.is_none_or(|c| c < next) {
                close = memchr::memchr(b'}', &code[next..]).map(|c| next + c);
            }
            // An unclosed clause counts as one: a superset is safe.
            close.is_none_or(|c| !word_at(spaces(c + 1), b"from"))
        });
        let mut sources = self.export_sources.clone();
        if own_clause {
            sources.extend(self.import_sources.iter().cloned());
        }
        sources.sort_unstable();
        sources.dedup();
        sources
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const ALL: &[Trigger] = &[
        Trigger::Retries,
        Trigger::Jobs,
        Trigger::Leases,
        Trigger::Suppressions,
        Trigger::Rs2,
    ];

    #[test]
    fn each_trigger_keeps_its_files() {
        let config = Config::defaults(PathBuf::from("/"));
        let all = Prefilter::new(ALL, &config);
        let ts = |text: &str| all.is_relevant(Language::TypeScript, text.as_bytes());
        assert!(ts("import { Effect } from \"effect\"\nEffect.retry(x)"));
        assert!(
            !ts("// import { Effect } from \"effect\"\nretry()"),
            "a commented import imports nothing"
        );
        assert!(!ts("const retry = 1"), "no Effect import");
        assert!(ts("export const job = Jobs.make({})"));
        assert!(ts("import { Ref } from \"effect\"\nRef.set(r, Date.now())"));
        assert!(!ts("import { Ref } from \"effect\"\nRef.set(r, 1)"));
        // A clock read alone is no cursor and starts no window.
        assert!(!ts("import { Effect } from \"effect\"\nconst stamp = Date.now()"));
        // A schedule handed to a helper as an option's value.
        assert!(ts(
            "import { Schedule } from \"effect\"\nmakeClient({ retryTransientErrors: Schedule.exponential(\"1 second\") })"
        ));
        assert!(!ts(
            "import { Schedule } from \"effect\"\nconst ok = options.retryTransientErrors"
        ));
        assert!(!ts("makeClient({ retryTransientErrors: policy })"), "no Effect import");
        // A cursor in a module `let` or a `Map`.
        assert!(ts("import { Effect } from \"effect\"\nlet last = 0\nlast = Date.now()"));
        assert!(ts(
            "import { Clock } from \"effect\"\nconst runs = new Map()\nClock.currentTimeMillis"
        ));
        // A job's window started from the wall clock, in a handler a cron wrapper is given.
        assert!(ts(
            "import { Effect } from \"effect\"\nconst since = Date.now() - 60_000"
        ));
        assert!(!ts("const since = Date.now() - 60_000"), "no Effect import");
        assert!(ts(
            "import { ExecutionPlan } from \"effect\"\nExecutionPlan.make({ provide: L, attempts: 3 })"
        ));
        assert!(ts("// retrylint-ignore inline-schedule -- why"));
        assert!(all.is_relevant(Language::Sql, b"UPDATE jobs_leases SET x = 1"));
        assert!(!all.is_relevant(Language::Sql, b"SELECT 1"));
        let json = |text: &str| all.is_relevant(Language::Json, text.as_bytes());
        assert!(json(r#"{ "retry": { "maxAttempts": 3 } }"#));
        assert!(json(r#"{ "set": "$_retry = 2" }"#));
        assert!(!json(r#"{ "dependencies": { "p-retry": "^6" } }"#), "no policy key");
        assert!(!json(r#"{ "compilerOptions": { "strict": true } }"#));
        assert!(all.is_relevant(Language::Yaml, b"retry:\n  enabled: false\n"));
        assert!(all.is_relevant(Language::Yaml, b"# retrylint-ignore imperative-retry -- why\n"));
        // Only the triggers of enabled rules count.
        let leases = Prefilter::new(&[Trigger::Leases], &config);
        assert!(!leases.is_relevant(
            Language::TypeScript,
            b"import { Effect } from \"effect\"\nEffect.retry(x)"
        ));
    }

    #[test]
    fn script_words_count_in_code_only() {
        let config = Config::defaults(PathBuf::from("/"));
        let all = Prefilter::new(ALL, &config);
        let ts = |text: &str| all.is_relevant(Language::TypeScript, text.as_bytes());
        let import = "import { Effect, Schedule } from \"effect\"\n";
        let with = |body: &str| format!("{import}{body}");
        assert!(ts(&with("Effect.retry(x)")));
        // Documentation, messages and unrelated names mention retries without one.
        assert!(!ts(&with("/** Use `Effect.retry` to retry. */\nexport const a = 1")));
        assert!(!ts(&with("// Effect.retry(x)\nconst a = 1")));
        assert!(!ts(&with("const message = \"will retry\"; const b = 'repeat'")));
        assert!(!ts(&with("const t = `retry ${a} forever`")));
        assert!(!ts(&with("const maxRetries = 3; scheduler.run(); sticky()")));
        assert!(!ts(&with("const r = /retry|repeat/g")));
        // Code inside a template, after a regular expression or a division, is code.
        assert!(ts(&with("const t = `${Effect.retry(x)}`")));
        assert!(ts(&with("const t = `a ${`b ${c}`} d`; Effect.retry(x)")));
        assert!(ts(&with("const r = /[\"'`/]/; Effect.retry(x)")));
        assert!(ts(&with("const half = a / 2; const s = \"/\"; Effect.retry(x)")));
        assert!(ts(&with("const s = \"it's\"; // don't\nEffect.retry(x)")));
        // Strings hold SQL and comments hold suppressions: those are read anywhere.
        assert!(ts("const q = sql`UPDATE jobs_leases SET holder = ${h}`"));
        assert!(ts("/* retrylint-ignore-file uncapped-schedule -- why */"));
        // An import in a string or a comment imports nothing.
        assert!(!ts("const s = 'import { Effect } from \"effect\"'\nEffect.retry(x)"));
        assert!(!ts("/*\nimport { Effect } from \"effect\"\n*/\nEffect.retry(x)"));
    }

    #[test]
    fn imports_that_can_bring_effect() {
        let config = Config::defaults(PathBuf::from("/"));
        let all = Prefilter::new(ALL, &config);
        let ts = |text: &str| all.is_relevant(Language::TypeScript, text.as_bytes());
        assert!(ts("import * as Effect from \"effect/Effect\"\nEffect.retry(x)"));
        assert!(ts("const { Effect } = await import(\"effect\")\nEffect.retry(x)"));
        // A project module can re-export Effect's modules (`@app/prelude`): the index decides.
        assert!(ts("import { Effect } from \"@app/prelude\"\nEffect.retry(x)"));
        assert!(ts(
            "import { type Layer, Schedule as S } from \"../prelude\"\nx.pipe(S.retry)"
        ));
        assert!(ts("import * as P from \"./prelude\"\nP.Effect.retry(x)"));
        assert!(ts(
            "import { a } from \"./a\"\nimport * as P from \"./p\"\nP.Effect.retry(x)"
        ));
        // Type-only imports bring no values; other names are not Effect's modules.
        assert!(!ts("import type { Effect } from \"@app/prelude\"\nEffect.retry(x)"));
        assert!(!ts("import type * as P from \"./prelude\"\nP.Effect.retry(x)"));
        assert!(!ts("import { client } from \"./client\"\nclient.retry(x)"));
        assert!(!ts("import retry from \"p-retry\"\nretry(x)"));
        assert!(!ts("export { Effect } from \"./prelude\"\nretry(x)"));
        // A component's script is read, its template is not.
        let vue = |text: &str| all.is_relevant(Language::Vue, text.as_bytes());
        assert!(vue(
            "<script setup lang=\"ts\">\nimport { Effect } from \"effect\"\nEffect.retry(x)\n</script>"
        ));
        assert!(!vue(
            "<template>Effect.retry(x) it's</template>\n<script>\nimport { Effect } from \"effect\"\n</script>"
        ));
    }

    #[test]
    fn effect_words_count_read_through_an_imported_name() {
        let config = Config::defaults(PathBuf::from("/"));
        let all = Prefilter::new(&[Trigger::Retries, Trigger::Polls], &config);
        let why = |text: &str| all.why(Language::TypeScript, text.as_bytes()).map(|k| k.because);
        let ts = |text: &str| why(text).is_some();
        let import = "import { Effect, Schedule as S } from \"effect\"\n";
        let with = |body: &str| format!("{import}{body}");
        // Through a name the import binds, as extraction resolves them: a member, across
        // lines, renamed, a bare name imported from a module.
        assert_eq!(
            why(&with("x.pipe(Effect.retry({ times: 3 }))")),
            Some(Because::EffectImport)
        );
        assert!(ts(&with("x.pipe(\n  Effect\n    .repeat(S.spaced(\"1 second\")))")));
        assert!(ts(&with("const p = S.forever")));
        assert!(ts(
            "import { retry } from \"effect/Effect\"\npipe(x, retry({ times: 3 }))"
        ));
        assert!(ts(
            "import { retry as r } from \"effect/Effect\"\npipe(x, r({ times: 3 }))"
        ));
        assert!(ts("import * as E from \"effect/Effect\"\nE.retry(x, policy)"));
        assert!(ts("import * as Fx from \"effect\"\nFx.Effect?.retry(x)"));
        // What a file that imports Effect reads off anything else is not Effect's: its own
        // scheduler, an option, a method of an object, a spread.
        assert!(!ts(&with("scheduler.schedule(task); options.retry; self.repeat(1)")));
        assert!(!ts(&with("const retry = 3; if (retry > 0) tick()")));
        assert!(!ts(&with(
            "makeClient().retry(); items[0].schedule(); const o = { ...retry }"
        )));
        assert!(!ts(&with("this.forever = true")));
        // An import whose names are not read here: any name can be Effect's.
        assert!(ts(
            "const { Effect } = await import(\"effect\")\nconst E = Effect\nE.retry(x)"
        ));
        assert!(ts("const E = require(\"effect/Effect\")\nE.retry(x)"));
        // Through a project module that can re-export Effect: a member of a name it binds.
        assert_eq!(
            why("import * as P from \"./prelude\"\nP.Effect.retry(x)"),
            Some(Because::AliasMember)
        );
        assert!(ts(
            "import { type Layer, Schedule } from \"@app/prelude\"\nx.pipe(Schedule.repeat)"
        ));
        assert!(!ts("import * as P from \"./prelude\"\nclient.retry(x)"));
        assert!(!ts("import { Schedule } from \"@app/prelude\"\nrunner.schedule(x)"));
    }

    #[test]
    fn a_file_kept_only_through_its_aliases_names_the_modules_the_index_is_asked_about() {
        let config = Config::defaults(PathBuf::from("/"));
        let all = Prefilter::new(ALL, &config);
        let relevance = |text: &str| all.relevance(Language::TypeScript, text.as_bytes()).0;
        let through = |sources: &[&str]| Relevance::ThroughAliases(sources.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            relevance("import * as P from \"./prelude\"\nP.Effect.retry(x)"),
            through(&["./prelude"])
        );
        assert_eq!(
            relevance(
                "import { Effect } from \"@app/prelude\"\nimport * as S from \"../schedule\"\nimport { Schedule } from \"@app/prelude\"\nEffect.retry(x)"
            ),
            through(&["../schedule", "@app/prelude"])
        );
        // An import from Effect's packages, or a trigger that needs none, keeps it outright.
        assert_eq!(
            relevance("import { Effect } from \"effect\"\nimport * as P from \"./prelude\"\nEffect.retry(x)"),
            Relevance::Kept
        );
        assert_eq!(
            relevance("import * as P from \"./prelude\"\nP.Effect.retry(x)\nJobs.make(job)"),
            Relevance::Kept
        );
        assert_eq!(
            relevance("import * as P from \"./prelude\"\nclient.retry(x)"),
            Relevance::Irrelevant
        );
        // `why` still says why such a file can be kept.
        assert!(all.is_relevant(
            Language::TypeScript,
            b"import * as P from \"./prelude\"\nP.Effect.retry(x)"
        ));
    }

    #[test]
    fn an_option_key_is_an_object_literals_not_a_parameters_or_a_types() {
        let config = Config::defaults(PathBuf::from("/"));
        let all = Prefilter::new(&[Trigger::Retries, Trigger::Polls], &config);
        let why = |text: &str| all.why(Language::TypeScript, text.as_bytes()).map(|k| k.because);
        let import = "import * as Effect from \"effect/Effect\"\n";
        let with = |body: &str| format!("{import}{body}");
        assert_eq!(why(&with("call({ retrySchedule: policy })")), Some(Because::OptionKey));
        assert_eq!(
            why(&with("call(a, {\n  schedule : policy\n})")),
            Some(Because::OptionKey)
        );
        assert_eq!(
            why(&with("const f = (x = `${{ retry: p }}`) => x")),
            Some(Because::OptionKey)
        );
        // A parameter's type, a type's member, a tuple's label, a label.
        assert_eq!(why(&with("function f(self: X, schedule: Sched) {}")), None);
        assert_eq!(
            why(&with("interface O { readonly schedule: Sched; retry?: Sched }")),
            None
        );
        assert_eq!(why(&with("type T = [schedule: Sched]")), None);
        assert_eq!(why(&with("retry: for (;;) { break retry }")), None);
        // Many points asked about, out of order by a pattern that overlaps: each answered.
        let many = with(&"f(retry: a) ".repeat(2000));
        assert_eq!(why(&many), None);
        assert_eq!(why(&format!("{many} g({{ retry: p }})")), Some(Because::OptionKey));
    }

    #[test]
    fn the_modules_a_script_can_re_export_from_are_read_off_its_code() {
        let sources = |text: &str| Script::scan(text.as_bytes()).reexports();
        let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(sources("export { Schedule } from \"effect\""), list(&["effect"]));
        assert_eq!(
            sources("export * from './prelude'\nexport * as Fx from \"effect\"\nexport type { T } from \"./t\""),
            list(&["./prelude", "./t", "effect"])
        );
        assert_eq!(sources("export type * from \"effect\""), list(&["effect"]));
        // An own clause can re-export an import: every module an import names.
        assert_eq!(
            sources("import { Schedule } from \"effect\"\nimport * as A from './a'\nexport /* x */ {\n  Schedule\n}"),
            list(&["./a", "effect"])
        );
        assert_eq!(
            sources("import * as A from './a'\nexport { A"),
            list(&["./a"]),
            "unclosed: a clause"
        );
        for none in [
            "export const Schedule = 1",
            "export default function retry() {}",
            "import { Schedule } from \"effect\"\nexport type Schedule = number",
            "export interface Options { retry: number }",
            "import { Schedule } from \"effect\"\nconst exported = { a: 1 }",
            // Doc comments and strings are not code.
            "/**\n * import { Effect } from \"effect\"\n * export { Effect }\n */\nexport const a = 1",
            "const s = 'export * from \"effect\"'",
        ] {
            assert_eq!(sources(none), list(&[]), "{none}");
        }
    }

    #[test]
    fn configured_lease_tables_are_triggers() {
        let mut config = Config::defaults(PathBuf::from("/"));
        let text = b"UPDATE scheduler_locks SET owner = NULL WHERE job = $1";
        assert!(!Prefilter::new(ALL, &config).is_relevant(Language::Sql, text));
        config.lease_tables.push("scheduler_locks".into());
        assert!(Prefilter::new(ALL, &config).is_relevant(Language::Sql, text));
        // Whatever the case the SQL spells it in.
        let upper = b"UPDATE Scheduler_Locks SET owner = NULL WHERE job = $1";
        assert!(Prefilter::new(ALL, &config).is_relevant(Language::Sql, upper));
        // A configured lease column.
        let column = b"UPDATE locks SET locked_until = $1 WHERE job = $2";
        assert!(!Prefilter::new(ALL, &config).is_relevant(Language::Sql, column));
        config.lease_columns.push("locked_until".into());
        assert!(Prefilter::new(ALL, &config).is_relevant(Language::Sql, column));
        // An ORM's camelCase name of it (drizzle's `db.update(locks).set({ lockedUntil })`).
        let camel = b"db.update(locks).set({ lockedUntil: now }).where(eq(locks.job, job))";
        assert!(Prefilter::new(&[Trigger::Leases], &config).is_relevant(Language::TypeScript, camel));
    }
}
