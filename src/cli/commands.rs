//! The commands besides `check`: `rules`, `rule`, `policies`, and the hidden ones the
//! differential tests run (`schedule-eval`, `resolve-imports`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use miette::{miette, Report};

use retrylint::rules;
use retrylint::workspace::{self, ConfigChoice, Workspace};

use super::stdout;
use crate::{PoliciesArgs, PoliciesFormat};

pub fn list_rules(format: PoliciesFormat) -> Result<ExitCode, Report> {
    if format == PoliciesFormat::Json {
        let listing: Vec<serde_json::Value> = rules::RULES
            .iter()
            .map(|rule| {
                serde_json::json!({
                    "name": rule.name,
                    "severity": rule.default_severity.as_str(),
                    "fix": match rule.fix {
                        retrylint::diagnostic::FixSafety::None => "none",
                        retrylint::diagnostic::FixSafety::Safe => "safe",
                        retrylint::diagnostic::FixSafety::Unsafe => "unsafe",
                    },
                    "decision": rule.decision,
                    "summary": rule.summary,
                })
            })
            .collect();
        stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&listing).map_err(|e| miette!("cannot write JSON: {e}"))?
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = rules::RULES.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let mut listing = String::new();
    for rule in rules::RULES {
        listing.push_str(&format!(
            "{:width$}  {:7}  {}\n",
            rule.name,
            rule.default_severity.as_str(),
            rule.summary
        ));
    }
    stdout(&listing)?;
    Ok(ExitCode::SUCCESS)
}

pub fn show_rule(name: &str) -> Result<ExitCode, Report> {
    let rule = rules::by_name(name).ok_or_else(|| {
        miette!(
            help = format!("known rules: {}", rules::names().join(", ")),
            "unknown rule `{name}`{}",
            retrylint::diagnostic::did_you_mean_suffix(name, &rules::names())
        )
    })?;
    stdout(rule.doc)?;
    Ok(ExitCode::SUCCESS)
}

/// Reads `{"id", "version", "expr"}` lines and prints the model's summary of each: the
/// differential test compares these with what Effect itself does.
pub fn schedule_eval() -> Result<ExitCode, Report> {
    use retrylint::analysis::effect::evaluate_text;
    use retrylint::effect_version::EffectVersion;
    use retrylint::schedule::{Attempts, Jitter};
    use std::io::BufRead;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| miette!("cannot read stdin: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let request: serde_json::Value = serde_json::from_str(&line).map_err(|e| miette!("bad request line: {e}"))?;
        let expr = request["expr"].as_str().unwrap_or("");
        // `"3.22.4"`, `"4.0.0-beta.66"`, `"4.1.0"`, or a major (3, 4); none: unknown.
        let version = match &request["version"] {
            serde_json::Value::String(text) => EffectVersion::parse_exact(text).unwrap_or_default(),
            serde_json::Value::Number(n) if n.as_u64() == Some(3) => EffectVersion::V3,
            serde_json::Value::Number(n) if n.as_u64() == Some(4) => EffectVersion::V4 { minor: None },
            _ => EffectVersion::Unknown,
        };
        let summary = evaluate_text(expr, version.code());
        let (attempts, retries) = match summary.attempts {
            Attempts::Exact(n) => ("exact", Some(n)),
            Attempts::AtMost(n) => ("at-most", Some(n)),
            Attempts::TimeLimited => ("time-limited", None),
            Attempts::Unbounded => ("unbounded", None),
            Attempts::Unknown => ("unknown", None),
        };
        let jittered = match summary.jitter {
            Jitter::Yes => Some(true),
            Jitter::No => Some(false),
            Jitter::Unknown => None,
        };
        let delays = summary.delays.map(|d| {
            d.into_iter()
                .map(|x| if x.is_finite() { Some(x) } else { None })
                .collect::<Vec<_>>()
        });
        let answer = serde_json::json!({
            "id": request["id"], "version": request["version"], "attempts": attempts, "retries": retries,
            "delaysMs": delays, "jittered": jittered,
            "gapGrows": match summary.gap {
                retrylint::schedule::Gap::Growing => Some(true),
                retrylint::schedule::Gap::Capped(_) => Some(false),
                retrylint::schedule::Gap::Unknown => None,
            },
        });
        writeln!(out, "{answer}").map_err(|e| miette!("cannot write: {e}"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints `{"file", "specifier", "resolved", "kind"}` for every import and re-export of every
/// script file (each file and specifier once), resolved as the analysis resolves them:
/// `kind` is `file` (a file retrylint reads), `unread` (a file on disk it does not read),
/// `package` (a package outside the workspace) or `missing`. Paths are relative to the root.
pub fn resolve_imports(paths: &[PathBuf]) -> Result<ExitCode, Report> {
    use retrylint::index::resolve::Resolution;
    let config = workspace::find_config(ConfigChoice::default(), paths)?;
    let (index, _) = Workspace::discover(config, paths)?.load(None);
    let root = index.config.root.clone();
    let shown = |path: &std::path::Path| {
        path.strip_prefix(&root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let mut out = String::new();
    for file in 0..index.len() {
        let Some(facts) = index
            .loaded(file)
            .filter(|f| f.parsed && index.files[file].language.is_script())
        else {
            continue;
        };
        let mut specifiers: Vec<&str> = facts.imports.iter().map(|i| i.written_source()).collect();
        specifiers.extend(facts.exports.iter().filter_map(|e| match e {
            retrylint::facts::Export::Named { source, .. }
            | retrylint::facts::Export::Namespace { source, .. }
            | retrylint::facts::Export::Star { source } => Some(source.as_str()),
            retrylint::facts::Export::Local { .. } => None,
        }));
        let mut seen = std::collections::HashSet::new();
        specifiers.retain(|s| seen.insert(*s));
        for specifier in specifiers {
            let (resolved, kind) = match index.resolution(file, specifier) {
                Resolution::File(target) => (Some(shown(&index.files[target].absolute)), "file"),
                Resolution::Unread(path) => (Some(shown(&path)), "unread"),
                Resolution::Package => (None, "package"),
                Resolution::Missing => (None, "missing"),
            };
            let line = serde_json::json!({
                "file": shown(&index.files[file].absolute), "specifier": specifier,
                "resolved": resolved, "kind": kind,
            });
            out.push_str(&format!("{line}\n"));
        }
    }
    stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

pub fn list_policies(args: PoliciesArgs) -> Result<ExitCode, Report> {
    let choice = ConfigChoice {
        given: args.config.as_deref(),
        none: args.no_config,
    };
    let config = workspace::find_config(choice, &args.paths)?;
    let triggers = [retrylint::extract::Trigger::Retries, retrylint::extract::Trigger::Rs2];
    let (index, analysis) = Workspace::discover(config, &args.paths)?.load(Some(&triggers));
    let rows = retrylint::analysis::rows(&index, &analysis);
    match args.format {
        PoliciesFormat::Table => stdout(&retrylint::analysis::table(&rows))?,
        PoliciesFormat::Json => stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&rows).map_err(|e| miette!("cannot write JSON: {e}"))?
        ))?,
    }
    Ok(ExitCode::SUCCESS)
}
