use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use miette::{miette, Report};

use retrylint::baseline;
use retrylint::changed::ChangedLines;
use retrylint::check::{self, CheckOptions};
use retrylint::config::Config;
use retrylint::fix::{self, Applicability};
use retrylint::render::github::GithubEnv;
use retrylint::render::{self, Format};
use retrylint::rules::{self, Rule, Severity};

#[derive(Parser)]
#[command(
    name = "retrylint",
    version,
    about = "Lints retry and scheduling code against a retry policy"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check files and directories (default: the current directory).
    Check(CheckArgs),
    /// List every rule: name, default severity, summary.
    Rules,
    /// Print one rule's documentation.
    Rule {
        /// The rule's name, e.g. inline-schedule.
        name: String,
    },
    /// List every retry policy: where it is defined, attempts, gap cap, jitter, delays, totals.
    Policies(PoliciesArgs),
    /// Run the language server on stdin/stdout (for editors).
    Lsp {
        /// Accepted for clients that pass it; stdio is the only transport.
        #[arg(long, hide = true)]
        stdio: bool,
    },
    /// Evaluate schedule expressions read as JSON lines (for differential tests).
    #[command(hide = true)]
    ScheduleEval,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Files or directories to check.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Output format [default: human; github when GITHUB_ACTIONS=true].
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Report only findings on lines added or changed since REV (git diff REV, plus untracked
    /// files); the whole project is still analysed.
    #[arg(long, value_name = "REV")]
    changed_since: Option<String>,
    /// Apply safe fixes (written atomically; a fix that would break parsing is skipped).
    #[arg(long)]
    fix: bool,
    /// With --fix or --diff, apply unsafe fixes too (they change behaviour, e.g. timing).
    #[arg(long)]
    unsafe_fixes: bool,
    /// Print the fixes as a unified diff and write nothing (exit 1 when there is a diff).
    #[arg(long, conflicts_with = "fix")]
    diff: bool,
    /// Report only findings not recorded in this baseline file; stale entries are listed.
    #[arg(long, value_name = "FILE", conflicts_with = "write_baseline")]
    baseline: Option<PathBuf>,
    /// Record the current findings in this baseline file and exit 0.
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// Use this config file instead of searching for retrylint.toml.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    config: Option<PathBuf>,
    /// Ignore any retrylint.toml and use the defaults.
    #[arg(long)]
    no_config: bool,
    /// Run only these rules (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "RULE,...")]
    select: Vec<String>,
    /// Do not run these rules (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "RULE,...")]
    ignore: Vec<String>,
    /// Exit 1 on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    /// When to colour human output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Parse every file instead of only those that can hold a fact (for verifying the prefilter).
    #[arg(long, hide = true)]
    no_prefilter: bool,
}

#[derive(clap::Args)]
struct PoliciesArgs {
    /// Files or directories to look at.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// `table` or `json`.
    #[arg(long, value_enum, default_value_t = PoliciesFormat::Table)]
    format: PoliciesFormat,
    /// Use this config file instead of searching for retrylint.toml.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    config: Option<PathBuf>,
    /// Ignore any retrylint.toml and use the defaults.
    #[arg(long)]
    no_config: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum PoliciesFormat {
    Table,
    Json,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

fn main() -> ExitCode {
    // Panics inside a file's analysis are caught and reported as notes; keep the default
    // hook's backtrace noise for debugging only.
    if std::env::var_os("RETRYLINT_DEBUG").is_none() {
        std::panic::set_hook(Box::new(|_| {}));
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => run_check(args),
        Command::Rules => list_rules(),
        Command::Rule { name } => show_rule(&name),
        Command::ScheduleEval => schedule_eval(),
        Command::Policies(args) => list_policies(args),
        Command::Lsp { .. } => retrylint::lsp::run_stdio(),
    };
    match result {
        Ok(code) => code,
        Err(report) => {
            eprintln!("{report:?}");
            ExitCode::from(2)
        }
    }
}

fn parse_rules(names: &[String], flag: &str) -> Result<Vec<&'static Rule>, Report> {
    names
        .iter()
        .filter(|n| !n.is_empty())
        .map(|name| {
            rules::by_name(name).ok_or_else(|| {
                miette!(
                    help = format!("known rules: {}", rules::names().join(", ")),
                    "unknown rule `{name}` in {flag}"
                )
            })
        })
        .collect()
}

fn load_config(args: &CheckArgs) -> Result<Config, Report> {
    find_config(args.config.as_deref(), args.no_config, &args.paths)
}

/// `--config FILE`, else `retrylint.toml` from the first path upwards, else the defaults.
fn find_config(explicit: Option<&std::path::Path>, no_config: bool, paths: &[PathBuf]) -> Result<Config, Report> {
    if let Some(path) = explicit {
        return Config::load(path);
    }
    let first = paths.first().cloned().unwrap_or_else(|| PathBuf::from("."));
    if !no_config {
        if let Some(found) = Config::discover(&first) {
            return Config::load(&found);
        }
    }
    let root = std::fs::canonicalize(&first)
        .map(|p| {
            if p.is_dir() {
                p
            } else {
                p.parent().map(PathBuf::from).unwrap_or(p)
            }
        })
        .or_else(|_| std::env::current_dir())
        .map_err(|e| miette!("cannot read the current directory: {e}"))?;
    Ok(Config::defaults(root))
}

fn run_check(args: CheckArgs) -> Result<ExitCode, Report> {
    let select = parse_rules(&args.select, "--select")?;
    let ignore = parse_rules(&args.ignore, "--ignore")?;
    let config = load_config(&args)?;
    let changed = match &args.changed_since {
        Some(rev) => {
            let first = args.paths.first().cloned().unwrap_or_else(|| PathBuf::from("."));
            Some(ChangedLines::since(rev, &first)?)
        }
        None => None,
    };
    let mut options = CheckOptions::new(args.paths.clone());
    options.prefilter = !args.no_prefilter;
    options.select = (!select.is_empty()).then_some(select);
    options.ignore = ignore;

    if args.fix || args.diff {
        let applicability = if args.unsafe_fixes {
            Applicability::All
        } else {
            Applicability::Safe
        };
        let report = fix::fix_project(&|| load_config(&args), &options, applicability)?;
        for note in &report.notes {
            eprintln!("note: {}: {}", note.path.display(), note.message);
        }
        if args.diff {
            let mut out = std::io::stdout().lock();
            for file in &report.files {
                let _ = write!(out, "{}", fix::unified_diff(file));
            }
            eprintln!(
                "{} fix{} in {} file{} (not written)",
                report.applied,
                if report.applied == 1 { "" } else { "es" },
                report.files.len(),
                if report.files.len() == 1 { "" } else { "s" }
            );
            return Ok(if report.files.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        for file in &report.files {
            fix::write_atomically(&file.absolute, &file.fixed)
                .map_err(|e| miette!("cannot write {}: {e}", file.path.display()))?;
        }
        if !report.files.is_empty() {
            eprintln!(
                "fixed {} finding{} in {} file{}",
                report.applied,
                if report.applied == 1 { "" } else { "s" },
                report.files.len(),
                if report.files.len() == 1 { "" } else { "s" }
            );
        }
    }

    options.changed = changed;
    if let Some(path) = &args.baseline {
        options.baseline = Some(baseline::read(path)?);
    }
    // After fixes, the config is read again: a fix never edits it, but the files it names changed.
    let outcome = check::run(if args.fix { load_config(&args)? } else { config }, &options)?;
    if let Some(path) = &args.write_baseline {
        let count = baseline::write(path, &outcome.project, &outcome.diagnostics)?;
        eprintln!(
            "wrote {count} finding{} to {}",
            if count == 1 { "" } else { "s" },
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for entry in &outcome.stale {
        eprintln!(
            "note: {}: baseline entry for {} no longer matches a finding; regenerate the baseline so it only shrinks",
            entry.path, entry.rule
        );
    }
    // On a GitHub runner, annotations unless a format is asked for (as oxlint and biome do).
    let on_github = std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true");
    let format = args
        .format
        .unwrap_or(if on_github { Format::Github } else { Format::Human });

    let stdout = std::io::stdout();
    let written = match format {
        Format::Human => {
            let choice = match args.color {
                Color::Always => ColorChoice::Always,
                Color::Never => ColorChoice::Never,
                Color::Auto if stdout.is_terminal() => ColorChoice::Auto,
                Color::Auto => ColorChoice::Never,
            };
            let mut out = StandardStream::stdout(choice);
            render::human(&mut out, &outcome).and_then(|_| render::notes(&mut std::io::stderr(), &outcome))
        }
        Format::Short => {
            render::short(&mut stdout.lock(), &outcome).and_then(|_| render::notes(&mut std::io::stderr(), &outcome))
        }
        Format::Json => render::json(&mut stdout.lock(), &outcome),
        Format::Sarif => render::sarif::sarif(&mut stdout.lock(), &outcome),
        Format::Github => {
            let env = GithubEnv::from_env();
            write_step_summary(&outcome, &env, args.changed_since.as_deref());
            render::github::annotations(&mut stdout.lock(), &outcome, &env)
                .and_then(|_| render::notes(&mut std::io::stderr(), &outcome))
        }
    };
    match written {
        Ok(()) => {}
        // `retrylint check | head` closes the pipe early: not an error worth a report.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(miette!("cannot write output: {e}")),
    }
    let _ = std::io::stdout().flush();

    let failing = outcome.count(Severity::Error) > 0 || (args.deny_warnings && outcome.count(Severity::Warning) > 0);
    Ok(if failing { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Appends the Markdown job summary to `GITHUB_STEP_SUMMARY` when the runner set it. A summary
/// that cannot be written is a warning: the annotations and the exit code still stand.
fn write_step_summary(outcome: &check::Outcome, env: &GithubEnv, changed_since: Option<&str>) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return;
    };
    let markdown = render::github::step_summary(outcome, env, changed_since);
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(markdown.as_bytes()));
    if let Err(e) = written {
        let report = miette!(
            severity = miette::Severity::Warning,
            "cannot write the job summary to {}: {e}",
            PathBuf::from(path).display()
        );
        eprintln!("{report:?}");
    }
}

fn list_rules() -> Result<ExitCode, Report> {
    let width = rules::RULES.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for rule in rules::RULES {
        println!(
            "{:width$}  {:7}  {}",
            rule.name,
            rule.default_severity.as_str(),
            rule.summary
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn show_rule(name: &str) -> Result<ExitCode, Report> {
    let rule = rules::by_name(name).ok_or_else(|| {
        miette!(
            help = format!("known rules: {}", rules::names().join(", ")),
            "unknown rule `{name}`"
        )
    })?;
    print!("{}", rule.doc);
    Ok(ExitCode::SUCCESS)
}

/// Reads `{"id", "version", "expr"}` lines and prints the model's summary of each: the
/// differential test compares these with what Effect itself does.
fn schedule_eval() -> Result<ExitCode, Report> {
    use retrylint::effect_version::EffectVersion;
    use retrylint::schedule::{evaluate_text, Attempts, Jitter};
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
        });
        writeln!(out, "{answer}").map_err(|e| miette!("cannot write: {e}"))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn list_policies(args: PoliciesArgs) -> Result<ExitCode, Report> {
    let config = find_config(args.config.as_deref(), args.no_config, &args.paths)?;
    let (project, _, _) = check::load_project(config, &args.paths, true)?;
    let rows = retrylint::policy::rows(&project);
    match args.format {
        PoliciesFormat::Table => print!("{}", retrylint::policy::table(&rows)),
        PoliciesFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&rows).map_err(|e| miette!("cannot write JSON: {e}"))?
        ),
    }
    Ok(ExitCode::SUCCESS)
}
