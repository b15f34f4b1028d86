//! `retrylint check --show-settings FILE`: the settings in force for one file — which config
//! file applies (or the defaults), what the globs make of the file (checked, retry module,
//! repository, durable path), and every setting as TOML, rule severities included.

use std::fmt::Write as _;
use std::path::Path;

use miette::{miette, Report};

use crate::config::{self, Config, Vocabulary};
use crate::rules::{self, Severity};
use crate::source::Language;

fn list<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| toml::Value::String(s.as_ref().to_string()).to_string())
        .collect();
    format!("[{}]", quoted.join(", "))
}

fn yes(value: bool) -> &'static str {
    if value {
        "yes"
    } else {
        "no"
    }
}

/// The glob lists as written in the config file (what the compiled sets do not keep).
fn written_globs(config: &Config, key: &str) -> Option<Vec<String>> {
    let text = config::read_config(config.path.as_ref()?, None).ok()?;
    let table: toml::Table = text.parse().ok()?;
    let values = table.get(key)?.as_array()?;
    Some(values.iter().filter_map(|v| v.as_str().map(String::from)).collect())
}

pub fn show(config: &Config, file: &Path) -> Result<String, Report> {
    // A link is shown as the link: it is what `check` skips.
    let absolute = crate::files::as_given(file).map_err(|e| miette!("cannot read {}: {e}", file.display()))?;
    let file_type = std::fs::symlink_metadata(&absolute).map(|m| m.file_type()).ok();
    let mut out = String::new();
    let _ = writeln!(out, "# settings for {}", crate::source::printable::path(file));
    match &config.path {
        Some(path) => {
            let _ = writeln!(out, "# config: {}", crate::source::printable::path(path));
        }
        None => out.push_str("# config: none found, the defaults apply\n"),
    }
    if let Some(base) = &config.extends {
        let _ = writeln!(out, "# extends: {}", crate::source::printable::path(base));
    }
    let _ = writeln!(out, "# root: {}", crate::source::printable::path(&config.root));
    let language = match Language::from_path(&absolute) {
        Some(Language::TypeScript) => "typescript",
        Some(Language::Tsx) => "tsx",
        Some(Language::JavaScript) => "javascript",
        Some(Language::Svelte) => "svelte (its <script> blocks)",
        Some(Language::Vue) => "vue (its <script> blocks)",
        Some(Language::Rust) => "rust",
        Some(Language::Sql) => "sql (read for lease statements)",
        Some(Language::Json) => "json (read for RS2 retry policies)",
        Some(Language::Yaml) => "yaml (read for RS2 retry policies)",
        None => "none: retrylint does not read this file",
    };
    let _ = writeln!(out, "# language: {language}");
    let size = std::fs::metadata(&absolute).map(|m| m.len()).unwrap_or(0);
    let checked = if let Some(what) = file_type.and_then(crate::files::kind_of) {
        format!("no: {what}")
    } else if Language::from_path(&absolute).is_none() {
        "no: not a file retrylint reads".to_string()
    } else if config.is_excluded(&absolute) {
        "no: matched by `exclude`".to_string()
    } else if config.is_not_included(&absolute) {
        "no: not matched by `include`".to_string()
    } else if size > config.max_file_size {
        format!("no: {size} bytes, over max-file-size")
    } else {
        "yes (unless an ignore file or a hidden directory hides it from a directory walk)".to_string()
    };
    let _ = writeln!(out, "# checked: {checked}");
    let _ = writeln!(out, "# retry module: {}", yes(config.is_retry_module(&absolute)));
    let _ = writeln!(
        out,
        "# repository by path: {} (a class or service named *Repository/*Repo is one anywhere)",
        yes(config.is_repository_path(&absolute))
    );
    let _ = writeln!(
        out,
        "# durable path (runs under a durable retrier): {}",
        yes(config.is_durable_path(&absolute))
    );
    let production = if config.not_production.is_match(&absolute) {
        "no: matched by `not-production`, its findings are warnings".to_string()
    } else if let Some(checkout) = config
        .nested_checkout(&absolute)
        .filter(|_| config.nested_checkouts_low)
    {
        format!(
            "no: inside the nested checkout {} (it has its own .git), its findings are warnings",
            crate::source::printable::path(checkout)
        )
    } else {
        "yes".to_string()
    };
    let _ = writeln!(out, "# production code: {production}");
    out.push('\n');

    let globs = |key: &str, defaults: &[&str]| -> String {
        match written_globs(config, key) {
            Some(written) => list(&written),
            None => list(defaults),
        }
    };
    let _ = writeln!(
        out,
        "retry-modules = {}",
        globs("retry-modules", config::DEFAULT_RETRY_MODULES)
    );
    let _ = writeln!(
        out,
        "repositories = {}",
        globs("repositories", config::DEFAULT_REPOSITORIES)
    );
    if config.include.is_some() {
        let _ = writeln!(out, "include = {}", globs("include", &[]));
    }
    let _ = writeln!(out, "exclude = {}", globs("exclude", &[]));
    let _ = writeln!(
        out,
        "durable-paths = {}",
        globs("durable-paths", config::DEFAULT_DURABLE_PATHS)
    );
    let _ = writeln!(
        out,
        "not-production = {}",
        globs("not-production", config::DEFAULT_NOT_PRODUCTION)
    );
    let _ = writeln!(
        out,
        "nested-checkouts = \"{}\"",
        if config.nested_checkouts_low { "low" } else { "check" }
    );
    let _ = writeln!(out, "max-file-size = {}", config.max_file_size);
    let _ = writeln!(
        out,
        "generated = \"{}\"",
        if config.check_generated { "check" } else { "skip" }
    );
    let _ = writeln!(out, "budget = \"{} millis\"", config.budget_ms);
    let _ = writeln!(out, "lease-tables = {}", list(&config.lease_tables));
    let _ = writeln!(out, "lease-columns = {}", list(&config.lease_columns));
    let Vocabulary {
        contention_policies,
        transient_policies,
        contention_predicates,
        transient_predicates,
        append_calls,
        create_calls,
        idempotency_keys,
        durable_registrations,
    } = &config.vocabulary;
    for (key, value) in [
        ("contention-policies", contention_policies),
        ("transient-policies", transient_policies),
        ("contention-predicates", contention_predicates),
        ("transient-predicates", transient_predicates),
        ("append-calls", append_calls),
        ("create-calls", create_calls),
        ("idempotency-keys", idempotency_keys),
        ("durable-registrations", durable_registrations),
    ] {
        let _ = writeln!(out, "{key} = {}", list(value));
    }
    out.push_str("\n[rules]\n");
    for rule in rules::RULES {
        let severity = match config.severity(rule.name, rule.default_severity) {
            Severity::Warning => "warn",
            other => other.as_str(),
        };
        let _ = writeln!(out, "{} = \"{severity}\"", rule.name);
    }
    Ok(out)
}
