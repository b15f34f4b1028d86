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
    /// Relevant if the file also imports Effect.
    Effect,
    /// A `Ref`, `let` or `Map`: relevant with an Effect import and a clock read.
    Ref,
    /// A clock read: relevant with an Effect import and a `Ref`.
    Clock,
    /// An import from Effect (not inside a comment line).
    EffectImport,
    /// `retry`: relevant with an RS2 policy key.
    Rs2Retry,
    /// An RS2 policy key: relevant with `retry`.
    Rs2Key,
}

const EFFECT_IMPORT: &[&str] = &["from \"effect", "from 'effect", "from \"@effect/", "from '@effect/"];
/// Effect's modules in use: a file that imports them from a project module re-exporting
/// Effect (`@app/prelude`) has no Effect import of its own, and the index decides later
/// whether the names are Effect's.
const EFFECT_USE: &[&str] = &["Effect.", "Schedule."];
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
    automaton: Option<AhoCorasick>,
    needs: Vec<Needs>,
    /// SQL names (lease tables and columns), matched whatever their case: `UPDATE
    /// Scheduler_Locks` names the configured `scheduler_locks`.
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

    fn is_match(&self, text: &[u8]) -> bool {
        if self.names.as_ref().is_some_and(|names| names.is_match(text)) {
            return true;
        }
        let Some(automaton) = &self.automaton else {
            return false;
        };
        let (mut effect, mut names, mut reference, mut clock) = (false, false, false, false);
        let (mut retry, mut policy_key) = (false, false);
        // Overlapping: `Jobs` must not hide `Jobs.make`, which needs no Effect import.
        for found in automaton.find_overlapping_iter(text) {
            match self.needs[found.pattern().as_usize()] {
                Needs::Alone => return true,
                // Documentation examples (`* import { Effect } from "effect"`) import nothing.
                Needs::EffectImport => effect |= !in_comment_line(text, found.start()),
                Needs::Effect => names = true,
                Needs::Ref => reference = true,
                Needs::Clock => clock = true,
                Needs::Rs2Retry => retry = true,
                Needs::Rs2Key => policy_key = true,
            }
            if (effect && (names || (reference && clock))) || (retry && policy_key) {
                return true;
            }
        }
        false
    }
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
        if has(Trigger::Retries) || has(Trigger::Jobs) || has(Trigger::Polls) {
            typescript.extend(words(EFFECT_IMPORT, Needs::EffectImport));
            typescript.extend(words(EFFECT_USE, Needs::EffectImport));
        }
        if has(Trigger::Retries) {
            typescript.extend(words(&["retry"], Needs::Effect));
            rust.extend(words(RUST_RETRY_TOKENS, Needs::Alone));
        }
        if has(Trigger::Jobs) {
            typescript.extend(words(&["cron", "Jobs"], Needs::Effect));
            typescript.extend(words(&["Jobs.make"], Needs::Alone));
            // Where a cursor can live: a `Ref`, a module `let`, a `Map`.
            typescript.extend(words(&["Ref.", "let ", "new Map"], Needs::Ref));
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
        if has(Trigger::Suppressions) {
            for list in [&mut typescript, &mut rust, &mut sql, &mut config_files] {
                list.push(("retrylint-ignore".into(), Needs::Alone));
            }
        }
        // What the prefilter looks for, as one hash: a cached verdict of another is not reused.
        let mut described = String::new();
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
        described.push_str("names");
        for name in &names {
            described.push_str(&format!("\0{name}"));
        }
        Prefilter {
            typescript: Matcher::new(typescript, names.clone()),
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

    /// Whether `text` can hold a fact an enabled rule reads.
    pub fn is_relevant(&self, language: Language, text: &[u8]) -> bool {
        match language {
            Language::TypeScript | Language::Tsx | Language::JavaScript | Language::Svelte | Language::Vue => {
                self.typescript.is_match(text)
            }
            Language::Rust => self.rust.is_match(text),
            Language::Sql => self.sql.is_match(text),
            Language::Json | Language::Yaml => self.config.is_match(text),
        }
    }
}

/// Whether the line holding `offset` starts as a comment line (`//`, `*`, `/*`).
fn in_comment_line(text: &[u8], offset: usize) -> bool {
    let line_start = memchr::memrchr(b'\n', &text[..offset]).map_or(0, |i| i + 1);
    let line = text[line_start..offset].trim_ascii_start();
    line.starts_with(b"//") || line.starts_with(b"*") || line.starts_with(b"/*")
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
        // A cursor in a module `let` or a `Map`.
        assert!(ts("import { Effect } from \"effect\"\nlet last = 0\nlast = Date.now()"));
        assert!(ts(
            "import { Clock } from \"effect\"\nconst runs = new Map()\nClock.currentTimeMillis"
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
