//! `retrylint init`: writes a `retrylint.toml` holding what retrylint infers from the project —
//! the retry modules that exist, which of their exports are the contention and connection-loss
//! policies and predicates (see `analysis::names`), the lease tables its SQL declares or
//! claims, and the calls that register handlers under a durable retrier — with every other
//! setting listed, commented out, at its default; a default it did not confirm (a name the
//! retry module does not export, a registration it did not see) is commented out too. The
//! file is an ordinary config: `check` reads it back, and its help lines then name the
//! project's own exports.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use miette::{miette, Report};

use crate::analysis::names::{self, Role};
use crate::config::{Config, Vocabulary, CONFIG_FILE};
use crate::extract::Trigger;
use crate::facts::sql::StatementKind;
use crate::facts::ContainerKind;
use crate::render::slash_path;
use crate::rules;
use crate::source::printable;
use crate::source::Language;

/// What `init` found, each with the place it was first seen (`path:line`).
#[derive(Debug, Default)]
pub struct Inferred {
    /// Files, relative to the project root, with forward slashes.
    pub retry_modules: Vec<String>,
    /// Lowercase table names.
    pub lease_tables: BTreeMap<String, String>,
    /// Registration methods (`subscribe`) seen wrapping a retry in a durable path or named in
    /// the default vocabulary.
    pub durable_registrations: BTreeMap<String, String>,
    /// Per [`Role`] (in `Role::ALL` order), the retry-module exports that play it, each with
    /// where it is (`path:line`) and why it is taken for it.
    pub names: [Vec<Named>; 4],
    /// Per [`Role`], the code each retry module without such an export would add: path, code.
    pub missing: [Vec<(String, String)>; 4],
    /// Files looked at.
    pub files: usize,
}

/// An export of a retry module that plays a role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    /// `path:line`.
    pub at: String,
    pub why: String,
}

/// File names (without extension) that read as a retry module, besides the default globs.
const RETRY_MODULE_STEMS: &[&str] = &[
    "retry",
    "retries",
    "retry-policy",
    "retry-policies",
    "retry_policy",
    "retry_policies",
    "retryPolicy",
    "retryPolicies",
];

const LEASE_COLUMN: &str = "lease_until";

/// Looks at the project under `root` (its defaults, any existing config ignored).
pub fn infer(root: &Path) -> Result<Inferred, Report> {
    let root = std::fs::canonicalize(root).map_err(|e| miette!("cannot read {}: {e}", root.display()))?;
    let config = Config::defaults(root.clone());
    let triggers = [Trigger::Retries, Trigger::Jobs, Trigger::Leases];
    let (project, _) =
        crate::workspace::Workspace::discover(config, std::slice::from_ref(&root))?.load(Some(&triggers));
    let defaults = Vocabulary::default();
    let mut inferred = Inferred {
        files: project.len(),
        ..Inferred::default()
    };
    for id in 0..project.len() {
        let source = &project.files[id];
        let relative = slash_path(project.config.relative(&source.absolute));
        let by_name = source
            .absolute
            .file_stem()
            .and_then(|s| s.to_str())
            .is_some_and(|stem| RETRY_MODULE_STEMS.contains(&stem))
            && source.language != Language::Sql;
        let default_module = project.config.is_retry_module(&source.absolute);
        if default_module || by_name {
            // A retry module the prefilter ruled out is read here: `init` runs once.
            let read = match project.loaded(id) {
                Some(_) => None,
                None => Some(crate::workspace::read_in_full(&project, id)),
            };
            let facts = match (&read, project.loaded(id)) {
                (Some((facts, _)), _) | (None, Some(facts)) => facts,
                (None, None) => continue,
            };
            // A file merely named `retry.ts` counts when it is Effect code that exports something.
            let is_module = default_module
                || match source.language {
                    Language::Rust => !facts.rust_policies.is_empty(),
                    _ => facts.uses_effect && !facts.exports.is_empty(),
                };
            if is_module {
                inferred.retry_modules.push(relative.clone());
                let text = match &read {
                    Some((_, text)) => text.clone(),
                    None => project.text(id).map(<[u8]>::to_vec).unwrap_or_default(),
                };
                if let Some(module) = names::read_exports(&project, id, facts, &text, &defaults) {
                    for (at, role) in Role::ALL.into_iter().enumerate() {
                        match module.get(role) {
                            Some(found) => {
                                if !inferred.names[at].iter().any(|n| n.name == found.name) {
                                    inferred.names[at].push(Named {
                                        name: found.name.clone(),
                                        at: format!("{relative}:{}", found.line),
                                        why: found.why.clone(),
                                    });
                                }
                            }
                            None => inferred.missing[at].push((relative.clone(), module.code_to_add(role, &defaults))),
                        }
                    }
                }
            }
        }
        let Some(facts) = project.loaded(id) else { continue };
        let at = |offset: u32| format!("{relative}:{}", facts.position(offset).0);
        for text in &facts.sql {
            for statement in text.statements() {
                let Some(table) = &statement.table else { continue };
                let declares =
                    statement.kind == StatementKind::CreateTable && statement.columns.iter().any(|c| c == LEASE_COLUMN);
                let claims = matches!(statement.kind, StatementKind::Update | StatementKind::Insert)
                    && (statement.assignments.iter().any(|a| a.column == LEASE_COLUMN)
                        || statement.columns.iter().any(|c| c == LEASE_COLUMN));
                if declares || claims {
                    inferred
                        .lease_tables
                        .entry(table.clone())
                        .or_insert_with(|| at(statement.span.start));
                }
            }
        }
        let durable = project.config.is_durable_path(&source.absolute);
        for site in &facts.retry_sites {
            for container in site.containers.iter().filter(|c| c.kind == ContainerKind::Registration) {
                let method = container.name.rsplit('.').next().unwrap_or(&container.name);
                let known = defaults.durable_registrations.iter().any(|d| d == method);
                if durable || known {
                    inferred
                        .durable_registrations
                        .entry(method.to_string())
                        .or_insert_with(|| format!("{} ({})", at(site.span.start), container.name));
                }
            }
        }
    }
    inferred.retry_modules.sort();
    inferred.retry_modules.dedup();
    Ok(inferred)
}

fn toml_list(items: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let quoted: Vec<String> = items
        .into_iter()
        .map(|s| {
            let s = s.as_ref();
            let mut out = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        })
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// The config text for what was inferred.
pub fn render(inferred: &Inferred) -> String {
    let defaults = Vocabulary::default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# retrylint configuration, written by `retrylint init` from {} files.\n\
         # Globs are relative to this file's directory. Every key is optional.\n",
        inferred.files
    );

    out.push_str("# Where the team's named retry policies live.\n");
    if inferred.retry_modules.is_empty() {
        out.push_str("# None found: the defaults apply. Name yours, e.g.\n");
        let _ = writeln!(out, "# retry-modules = {}", toml_list(["src/infra/retry.ts"]));
    } else {
        let _ = writeln!(
            out,
            "retry-modules = {}",
            toml_list(inferred.retry_modules.iter().map(|p| globset::escape(p)))
        );
    }
    out.push('\n');

    out.push_str("# Tables that hold job leases (a table with a `lease_until` column always counts).\n");
    if inferred.lease_tables.is_empty() {
        out.push_str("# None found in SQL.\n");
        let _ = writeln!(out, "# lease-tables = {}", toml_list(["jobs_leases"]));
    } else {
        for (table, at) in &inferred.lease_tables {
            // A comment holds one line: a name from the project cannot add a setting.
            let _ = writeln!(out, "#   {}: {}", printable::line(table), printable::line(at));
        }
        let _ = writeln!(out, "lease-tables = {}", toml_list(inferred.lease_tables.keys()));
    }
    out.push_str("# Columns that hold a lease's expiry, when not `lease_until`.\n");
    let _ = writeln!(out, "# lease-columns = {}", toml_list(["locked_until"]));
    out.push('\n');

    out.push_str("# Calls that register a handler a durable retrier runs (an outbox, a queue consumer).\n");
    if inferred.durable_registrations.is_empty() {
        out.push_str("# None seen wrapping a retry: the defaults apply.\n");
        let _ = writeln!(
            out,
            "# durable-registrations = {}",
            toml_list(&defaults.durable_registrations)
        );
    } else {
        for (method, at) in &inferred.durable_registrations {
            let _ = writeln!(out, "#   {}: {}", printable::line(method), printable::line(at));
        }
        let _ = writeln!(
            out,
            "durable-registrations = {}",
            toml_list(inferred.durable_registrations.keys())
        );
        unconfirmed(
            &mut out,
            &defaults.durable_registrations,
            inferred.durable_registrations.keys(),
            "not seen",
        );
    }
    out.push('\n');

    render_names(&mut out, inferred, &defaults);

    out.push_str("# The defaults of the other settings:\n");
    let _ = writeln!(
        out,
        "# repositories = {}",
        toml_list(crate::config::DEFAULT_REPOSITORIES)
    );
    let _ = writeln!(
        out,
        "# durable-paths = {}",
        toml_list(crate::config::DEFAULT_DURABLE_PATHS)
    );
    out.push_str("# exclude = []\n");
    out.push_str("# budget = \"2 seconds\"\n");
    let _ = writeln!(out, "# max-file-size = {}", crate::config::DEFAULT_MAX_FILE_SIZE);
    out.push_str("# generated = \"skip\"\n");
    for (key, value) in [
        ("append-calls", &defaults.append_calls),
        ("create-calls", &defaults.create_calls),
        ("idempotency-keys", &defaults.idempotency_keys),
    ] {
        let _ = writeln!(out, "# {key} = {}", toml_list(value));
    }
    out.push_str("\n[rules]\n# Each rule at its default severity: \"error\", \"warn\" or \"off\".\n");
    for rule in rules::RULES {
        let severity = match rule.default_severity {
            rules::Severity::Warning => "warn",
            other => other.as_str(),
        };
        let _ = writeln!(out, "# {} = \"{severity}\"", rule.name);
    }
    out
}

/// The defaults of a list that were not confirmed, as a comment (the list written replaces
/// them): `# not seen, of the defaults: "consume", "consumer"`.
fn unconfirmed<'a>(
    out: &mut String,
    defaults: &[String],
    confirmed: impl Iterator<Item = &'a String> + Clone,
    why: &str,
) {
    let left: Vec<&String> = defaults
        .iter()
        .filter(|d| !confirmed.clone().any(|c| c == *d))
        .collect();
    if !left.is_empty() {
        let _ = writeln!(
            out,
            "# {why}, of the defaults: {}",
            toml_list(left).trim_matches(['[', ']'])
        );
    }
}

/// The policy and predicate names: what each retry module exports for each role, or, where
/// none does, what to add and the default, commented out.
fn render_names(out: &mut String, inferred: &Inferred, defaults: &Vocabulary) {
    out.push_str(
        "# The retry module's exports that help and fixes name (and that tell what a retry retries),\n\
         # read from their names and bodies.\n",
    );
    for (at, role) in Role::ALL.into_iter().enumerate() {
        let found = &inferred.names[at];
        let default = role.names(defaults);
        let _ = writeln!(out, "# The {}:", role.what());
        if found.is_empty() {
            match inferred.missing[at].first() {
                Some((path, code)) => {
                    let _ = writeln!(
                        out,
                        "#   none in {}; add one, e.g.\n#   {}",
                        printable::line(path),
                        printable::line(code)
                    );
                }
                None => out.push_str("#   no retry module found: the default applies.\n"),
            }
            let _ = writeln!(out, "# {} = {}", role.key(), toml_list(default));
            continue;
        }
        for named in found {
            let _ = writeln!(
                out,
                "#   {}: {} ({})",
                printable::line(&named.name),
                printable::line(&named.at),
                printable::line(&named.why)
            );
        }
        let _ = writeln!(out, "{} = {}", role.key(), toml_list(found.iter().map(|n| &n.name)));
        unconfirmed(out, default, found.iter().map(|n| &n.name), "not exported");
    }
    out.push('\n');
}

/// Writes `dir/retrylint.toml`; refuses to replace one unless `force`. Returns the path.
pub fn write(dir: &Path, inferred: &Inferred, force: bool) -> Result<PathBuf, Report> {
    let path = dir.join(CONFIG_FILE);
    if path.exists() && !force {
        return Err(miette!(
            help = "pass --force to replace it",
            "{} already exists",
            path.display()
        ));
    }
    let text = render(inferred);
    // Never write a file `check` would reject.
    Config::parse(&text, &path, dir.to_path_buf(), &rules::names())?;
    std::fs::write(&path, text).map_err(|e| miette!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rendered_config_parses_with_and_without_findings() {
        let empty = Inferred::default();
        let mut full = Inferred {
            retry_modules: vec!["src/infra/retry.ts".into(), "weird \"name\".ts".into()],
            files: 3,
            ..Inferred::default()
        };
        full.lease_tables.insert("jobs_leases".into(), "m.sql:2".into());
        full.durable_registrations
            .insert("onMessage".into(), "a.ts:3 (bus.onMessage)".into());
        full.names[2].push(Named {
            name: "isDeadlock".into(),
            at: "src/infra/retry.ts:9".into(),
            why: "its body tests `40P01`".into(),
        });
        full.missing[0].push((
            "src/infra/retry.ts".into(),
            "export const contention = Schedule.exponential(\"50 millis\")".into(),
        ));
        for inferred in [&empty, &full] {
            let text = render(inferred);
            let config = Config::parse(&text, Path::new("retrylint.toml"), PathBuf::from("/p"), &rules::names());
            assert!(config.is_ok(), "{text}\n{:?}", config.err());
        }
        let config = Config::parse(
            &render(&full),
            Path::new("retrylint.toml"),
            PathBuf::from("/p"),
            &rules::names(),
        )
        .unwrap();
        assert!(config.is_retry_module(Path::new("/p/src/infra/retry.ts")));
        // What was seen is written; the defaults not seen are a comment (the list replaces them).
        assert_eq!(config.vocabulary.durable_registrations, ["onMessage"]);
        assert!(render(&full).contains("\n# not seen, of the defaults: \"subscribe\", \"consumer\""));
        // Names found are set, the others left at their defaults, commented out, with the code to add.
        assert_eq!(config.vocabulary.contention_predicates, ["isDeadlock"]);
        assert_eq!(
            config.vocabulary.contention_policies,
            Vocabulary::default().contention_policies
        );
        let text = render(&full);
        assert!(text.contains("\n# contention-policies = [\"contention\"]\n"), "{text}");
        assert!(
            text.contains("#   none in src/infra/retry.ts; add one, e.g.\n#   export const contention = "),
            "{text}"
        );
        assert!(
            text.contains("\n# not exported, of the defaults: \"isContention\"\n"),
            "{text}"
        );
    }
}
