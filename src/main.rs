use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use miette::{miette, Report};

use retrylint::check::{self, CheckOptions};
use retrylint::config::Config;
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
    /// Evaluate schedule expressions read as JSON lines (for differential tests).
    #[command(hide = true)]
    ScheduleEval,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Files or directories to check.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
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
    let options = CheckOptions {
        paths: args.paths.clone(),
        prefilter: !args.no_prefilter,
        select: (!select.is_empty()).then_some(select),
        ignore,
    };
    let outcome = check::run(config, &options)?;

    let stdout = std::io::stdout();
    let written = match args.format {
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
        let version = request["version"].as_u64().unwrap_or(4) as u8;
        let summary = evaluate_text(expr, version);
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
            "id": request["id"], "version": version, "attempts": attempts, "retries": retries,
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
