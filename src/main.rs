//! `retrylint`: the command line's arguments, parsed, and each command handed to its
//! implementation in [`cli`] (which goes through the front door, [`retrylint::workspace`]).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use retrylint::render::Format;

/// `eprintln!` that never panics: stderr closed with stdout (`check 2>&1 | head`) ends the
/// run quietly, as a closed stdout does.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cli;

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
    Check(Box<CheckArgs>),
    /// List every rule: name, default severity, summary.
    Rules {
        /// `table` (one line per rule) or `json` (name, severity, fix, decision, summary).
        #[arg(long, value_enum, default_value = "table")]
        format: PoliciesFormat,
    },
    /// Print one rule's documentation.
    Rule {
        /// The rule's name, e.g. inline-schedule.
        name: String,
    },
    /// List every retry policy: where it is defined, retries and attempts, gap cap, jitter,
    /// delays, totals.
    Policies(PoliciesArgs),
    /// Write a retrylint.toml with what retrylint infers: retry modules, lease tables, durable
    /// registrations.
    Init(InitArgs),
    /// Run the language server on stdin/stdout (for editors).
    Lsp {
        /// Accepted for clients that pass it; stdio is the only transport.
        #[arg(long, hide = true)]
        stdio: bool,
    },
    /// Evaluate schedule expressions read as JSON lines (for differential tests).
    #[command(hide = true)]
    ScheduleEval,
    /// Print how every import of the project resolves, as JSON lines (for differential tests).
    #[command(hide = true)]
    ResolveImports {
        /// Files or directories to look at.
        #[arg(default_value = ".")]
        paths: Vec<PathBuf>,
    },
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Files or directories to check [default: .]. Their project (the nearest retrylint.toml
    /// upwards, else the git root) is analysed; the findings in them are reported.
    paths: Vec<PathBuf>,
    /// Output format [default: human; github when GITHUB_ACTIONS=true].
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Read the source from stdin (PATH `-`, or no PATH) and check it as this file, in its
    /// project; the file need not exist. Only its findings are reported; with --fix, the fixed
    /// source is printed instead.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["write_baseline"])]
    stdin_filename: Option<PathBuf>,
    /// Take DIR as the project root instead of the one found (imports and policies resolve
    /// across it) and report only the findings in PATHS.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Write the report to FILE instead of stdout (never coloured).
    #[arg(long, short = 'o', value_name = "FILE")]
    output_file: Option<PathBuf>,
    /// Print how many findings each rule reported instead of the findings (human, short, json).
    #[arg(long)]
    statistics: bool,
    /// Print the findings only: no summary, no notes.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Exit 0 even when findings would fail the run (usage and I/O errors still exit 2).
    #[arg(long)]
    exit_zero: bool,
    /// Print the settings in force for FILE (config, globs, severities) and exit.
    #[arg(long, value_name = "FILE")]
    show_settings: Option<PathBuf>,
    /// Report only findings the change since REV touches (git diff REV, plus untracked files):
    /// lines added, changed or deleted inside them; the whole project is still analysed.
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
    /// When to colour human and short output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Parse every file instead of only those that can hold a fact (for verifying the
    /// prefilter: a file that holds nothing is then kept as the prefilter keeps it).
    #[arg(long, hide = true)]
    no_prefilter: bool,
    /// Neither read nor write the facts cache (.retrylint_cache/ at the project root, or
    /// RETRYLINT_CACHE_DIR); RETRYLINT_NO_CACHE=1 does the same.
    #[arg(long)]
    no_cache: bool,
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

#[derive(clap::Args)]
struct InitArgs {
    /// The project directory to look at and write retrylint.toml into.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Replace an existing retrylint.toml.
    #[arg(long)]
    force: bool,
}

/// How `policies` and `rules` print: a table for people, JSON for tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
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
    // A panic prints a report (file, rule, version) and the run exits 2: never silently.
    retrylint::crash::install_hook();
    let cli = Cli::parse();
    let run = std::panic::catch_unwind(move || {
        retrylint::crash::test_hook("main");
        match cli.command {
            Command::Check(args) => cli::check::run(*args),
            Command::Rules { format } => cli::commands::list_rules(format),
            Command::Rule { name } => cli::commands::show_rule(&name),
            Command::ScheduleEval => cli::commands::schedule_eval(),
            Command::ResolveImports { paths } => cli::commands::resolve_imports(&paths),
            Command::Policies(args) => cli::commands::list_policies(args),
            Command::Init(args) => cli::init(&args.dir, args.force),
            Command::Lsp { .. } => retrylint::lsp::run_stdio(),
        }
    });
    let code = match run {
        // The hook printed the report.
        Err(_) => return ExitCode::from(2),
        Ok(Ok(code)) => code,
        Ok(Err(report)) => {
            say!("{:?}", cli::printable(report));
            ExitCode::from(2)
        }
    };
    // A panic caught while checking a file left the answer incomplete.
    if retrylint::crash::panicked() {
        return ExitCode::from(2);
    }
    code
}
