mod cli;

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use codespan_reporting::term::termcolor::ColorChoice;
use miette::{miette, Report};

use retrylint::baseline;
use retrylint::changed::ChangedLines;
use retrylint::check::{self, CheckOptions};
use retrylint::config::Config;
use retrylint::fix::{self, Applicability};
use retrylint::render::github::GithubEnv;
use retrylint::render::{self, Format};
use retrylint::rules::{self, Rule, Severity};
use retrylint::source::printable;

/// `eprintln!` that never panics: stderr closed with stdout (`check 2>&1 | head`) ends the
/// run quietly, as a closed stdout does.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

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
    /// Parse every file instead of only those that can hold a fact (for verifying the prefilter).
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
            Command::Check(args) => run_check(*args),
            Command::Rules { format } => list_rules(format),
            Command::Rule { name } => show_rule(&name),
            Command::ScheduleEval => schedule_eval(),
            Command::ResolveImports { paths } => resolve_imports(&paths),
            Command::Policies(args) => list_policies(args),
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

/// Writes to stdout; a reader that stopped reading (`retrylint rules | head`) is not an error.
fn stdout(text: &str) -> Result<(), Report> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(miette!("cannot write output: {e}")),
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
                    "unknown rule `{name}` in {flag}{}",
                    retrylint::diagnostic::did_you_mean_suffix(name, &rules::names())
                )
            })
        })
        .collect()
}

fn load_config(args: &CheckArgs) -> Result<Config, Report> {
    match &args.project {
        Some(dir) => project_config(args, dir),
        None => find_config(args.config.as_deref(), args.no_config, &args.paths),
    }
}

/// `--config FILE`, else the config of the first path's project root (see
/// [`retrylint::config::project_root`]), else the defaults rooted there. Found this way (not
/// with `--config` or `--no-config`), package configs below the root apply to their files.
fn find_config(explicit: Option<&std::path::Path>, no_config: bool, paths: &[PathBuf]) -> Result<Config, Report> {
    let first = paths.first().cloned().unwrap_or_else(|| PathBuf::from("."));
    let (root, found) = retrylint::config::project_root(&first)?;
    if let Some(path) = explicit {
        // The file's globs stay relative to its own directory; the project is the paths'.
        let mut config = Config::load_given(path, &rules::names())?;
        config.root = root;
        return Ok(config);
    }
    let mut config = match found.filter(|_| !no_config) {
        Some(found) => Config::load(&found, &rules::names())?,
        None => Config::defaults(root),
    };
    config.discovered = !no_config;
    Ok(config)
}

/// `--project DIR`: DIR is the project root; its config is the nearest `retrylint.toml` from
/// DIR upwards (else the defaults, rooted at DIR).
fn project_config(args: &CheckArgs, dir: &std::path::Path) -> Result<Config, Report> {
    if let Some(path) = &args.config {
        let mut config = Config::load_given(path, &rules::names())?;
        config.root = std::fs::canonicalize(dir).map_err(|e| miette!("cannot check project {}: {e}", dir.display()))?;
        return Ok(config);
    }
    if !args.no_config {
        if let Some(found) = Config::discover(dir) {
            let mut config = Config::load(&found, &rules::names())?;
            config.discovered = true;
            return Ok(config);
        }
    }
    let root = std::fs::canonicalize(dir)
        .map(|p| {
            if p.is_dir() {
                p
            } else {
                p.parent().map(PathBuf::from).unwrap_or(p)
            }
        })
        .or_else(|_| std::env::current_dir())
        .map_err(|e| miette!("cannot read the current directory: {e}"))?;
    let mut config = Config::defaults(root);
    config.discovered = !args.no_config;
    Ok(config)
}

fn run_check(mut args: CheckArgs) -> Result<ExitCode, Report> {
    // `check - --stdin-filename NAME`: `-` is stdin, which NAME names.
    if args.paths.iter().any(|p| p.as_os_str() == "-") {
        if args.stdin_filename.is_none() {
            return Err(miette!(
                help = "name the file stdin holds, e.g. `retrylint check - --stdin-filename src/a.ts`: its name gives the language and the config",
                "`-` reads the source from stdin, and needs --stdin-filename"
            ));
        }
        args.paths.retain(|p| p.as_os_str() != "-");
    }
    if args.stdin_filename.is_some() && args.fix {
        // The fixed source is the output: no report goes with it.
        let report = args
            .format
            .filter(|f| *f != Format::Human)
            .and_then(|f| clap::ValueEnum::to_possible_value(&f))
            .map(|v| format!("--format {}", v.get_name()))
            .or_else(|| args.statistics.then(|| "--statistics".to_string()));
        if let Some(flag) = report {
            return Err(miette!(
                help = "leave out --fix to get the findings, or the report flag to get the fixed source",
                "--fix with --stdin-filename prints the fixed source, not a report: {flag} does not combine with it"
            ));
        }
    }
    if args.paths.is_empty() {
        args.paths.push(PathBuf::from("."));
    }
    if args.unsafe_fixes && !(args.fix || args.diff) {
        return Err(miette!(
            help = "add --fix to apply them, or --diff to print them",
            "--unsafe-fixes only applies with --fix or --diff"
        ));
    }
    let select = parse_rules(&args.select, "--select")?;
    let ignore = parse_rules(&args.ignore, "--ignore")?;
    if let Some(file) = &args.show_settings {
        // The file's config: its package's, else its project root's (or the defaults, rooted
        // where `check` roots them).
        let root = find_config(args.config.as_deref(), args.no_config, std::slice::from_ref(file))?;
        let mut configs = retrylint::config::Configs::from(root);
        let absolute = retrylint::files::as_given(file).map_err(|e| miette!("cannot read {}: {e}", file.display()))?;
        let above = configs.configs_above(&absolute);
        configs.add_nested(above, &rules::names())?;
        stdout(&retrylint::settings::show(configs.for_path(&absolute), file)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let on_github = std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true");
    let format = args
        .format
        .unwrap_or(if on_github { Format::Github } else { Format::Human });
    if args.statistics && !matches!(format, Format::Human | Format::Short | Format::Json) {
        let name = clap::ValueEnum::to_possible_value(&format).map_or_else(String::new, |v| v.get_name().to_string());
        let given = if args.format.is_some() {
            format!("`--format {name}`")
        } else {
            format!("`{name}`, the default format under GitHub Actions (GITHUB_ACTIONS=true)")
        };
        return Err(miette!(
            help = "pass --format human, short or json with --statistics",
            "--statistics prints counts in the human, short or json format, not {given}"
        ));
    }
    // `--project DIR`: DIR is checked, and the findings in the paths given are reported.
    let mut report_only: Option<Vec<PathBuf>> = None;
    if let Some(dir) = &args.project {
        let (only, paths) = cli::project_paths(dir, &args.paths)?;
        report_only = Some(only);
        args.paths = paths;
    }
    // `--stdin-filename`: the config is the file's, and the project around it is checked with
    // stdin in place of the file's text.
    let stdin_file = match &args.stdin_filename {
        Some(name) => {
            // A file that does not exist yet (a new buffer) is named inside the project checked
            // (`--project DIR`, else that of the paths), and takes its directory's config.
            let (new_file, config) = if std::fs::symlink_metadata(name).is_err() {
                let project = match &args.project {
                    Some(dir) => std::fs::canonicalize(dir)
                        .map_err(|e| miette!("cannot check project {}: {e}", dir.display()))?,
                    None => find_config(args.config.as_deref(), args.no_config, &args.paths)?.root,
                };
                let (absolute, dir) = cli::new_stdin_file(name, &project)?;
                if retrylint::source::Language::from_path(&absolute).is_none() {
                    return Err(miette!(
                        help = "name it with the extension of its language (.ts, .tsx, .rs, .json, .yaml, …)",
                        "cannot check {} from stdin: not a kind of file retrylint reads",
                        name.display()
                    ));
                }
                let config = find_config(args.config.as_deref(), args.no_config, &[dir])?;
                (Some(absolute), config)
            } else {
                let config = find_config(args.config.as_deref(), args.no_config, std::slice::from_ref(name))?;
                (None, config)
            };
            // Bounded: stdin is a file's text, held to the file size limit.
            let limit = config.max_file_size;
            let mut text = Vec::new();
            std::io::stdin()
                .take(limit + 1)
                .read_to_end(&mut text)
                .map_err(|e| miette!("cannot read stdin: {e}"))?;
            if text.len() as u64 > limit {
                return Err(miette!(
                    help = "raise max-file-size in retrylint.toml to check a larger file",
                    "stdin is over the size limit of {limit} bytes (max-file-size)"
                ));
            }
            let (absolute, paths) = match new_file {
                // Not on disk: the analysis adds it (see `check::run`).
                Some(absolute) => (absolute, cli::context_paths(&args.paths, &config)),
                None => cli::stdin_paths(name, &args.paths, &config)?,
            };
            args.paths = paths;
            report_only = Some(vec![absolute.clone()]);
            Some((absolute, text))
        }
        None => None,
    };
    let config = load_config(&args)?;
    // `check PATH…`: the project around them is analysed (imports resolve into it), and the
    // findings in them are reported: what `check .` at the root reports for them.
    if report_only.is_none() {
        let (only, mut paths) = cli::project_paths(&config.root, &args.paths)?;
        // A path in another project (lint-staged names files of every package) brings that
        // project along as its context, where that config applies. Only a file or a
        // directory does: a link, a FIFO or a device is skipped with a note, and its directory
        // (`/dev` for `/dev/null`) is no project.
        let outside: Vec<PathBuf> = paths
            .iter()
            .skip(1)
            .filter(|path| std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() || m.is_dir()))
            .filter_map(|path| retrylint::config::project_root(path).ok())
            .map(|(root, _)| root)
            .filter(|root| !config.root.starts_with(root))
            .collect();
        paths.extend(outside);
        if only.iter().any(|p| *p != config.root) {
            report_only = Some(only);
        }
        args.paths = paths;
    }
    // `--select` of a rule the config turns off runs nothing for it: say so.
    for rule in select.iter().filter(|_| !args.quiet) {
        if config.severity(rule.name, rule.default_severity) == Severity::Off {
            let place = config
                .path
                .as_ref()
                .map_or_else(|| "the config".to_string(), |p| printable::path(p));
            say!(
                "note: --select {}: the rule is turned off in {place} (`{} = \"off\"`), so it does not run",
                rule.name,
                rule.name
            );
        }
    }
    let changed = match &args.changed_since {
        Some(rev) => {
            let first = args.paths.first().cloned().unwrap_or_else(|| PathBuf::from("."));
            Some(ChangedLines::since(rev, &first)?)
        }
        None => None,
    };
    let mut options = CheckOptions::new(args.paths.clone());
    if let Some((absolute, text)) = &stdin_file {
        options.overlay.insert(absolute.clone(), text.as_slice().into());
    }
    options.prefilter = !args.no_prefilter;
    let no_cache = args.no_cache || std::env::var_os("RETRYLINT_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0");
    let cache_dir = std::env::var_os("RETRYLINT_CACHE_DIR").map(PathBuf::from);
    let own_cache = config.root.join(retrylint::cache::CACHE_DIR);
    // The cache at the root must be the project's own directory: one that is a symbolic link
    // (a checkout can hold one) would be read, written and pruned where it points.
    let foreign = cache_dir.is_none() && std::fs::symlink_metadata(&own_cache).is_ok_and(|m| !m.file_type().is_dir());
    if foreign && !no_cache && !args.quiet {
        say!(
            "note: {}: not a directory (a symbolic link?), so no facts cache is read or written",
            printable::path(&own_cache)
        );
    }
    options.cache = (!no_cache && !foreign)
        .then(|| std::sync::Arc::new(retrylint::cache::FactsCache::open(&config.root, cache_dir.as_deref())));
    options.select = (!select.is_empty()).then_some(select);
    options.ignore = ignore;
    options.only = report_only;
    // Fixes are those of the findings reported: the same changed lines and baseline.
    options.changed = changed;
    if let Some(path) = &args.baseline {
        options.baseline = Some(baseline::read(path)?);
    }

    if args.fix || args.diff {
        let applicability = if args.unsafe_fixes {
            Applicability::All
        } else {
            Applicability::Safe
        };
        let mut report = fix::fix_project(&|| load_config(&args), &options, applicability)?;
        // Only the files asked for are edited; the rest of the project was context.
        if let Some(only) = &options.only {
            report
                .files
                .retain(|file| only.iter().any(|p| file.absolute.starts_with(p)));
        }
        for note in report.notes.iter().filter(|_| !args.quiet) {
            say!(
                "note: {}: {}",
                printable::path(&note.path),
                printable::line(&note.message)
            );
        }
        if args.diff {
            print_diff(&report.files);
            if !args.quiet {
                say!(
                    "{} fix{} in {} file{} (not written)",
                    report.applied(),
                    if report.applied() == 1 { "" } else { "es" },
                    report.files.len(),
                    if report.files.len() == 1 { "" } else { "s" }
                );
            }
            return Ok(if report.files.is_empty() || args.exit_zero {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        if let Some((absolute, text)) = &stdin_file {
            return print_fixed_stdin(&args, &report, absolute, text, options);
        }
        let written = fix::write(&report)?;
        for (path, reason, _) in &written.skipped {
            say!(
                "note: {}: {}",
                printable::path(path),
                printable::line(&reason.to_string())
            );
        }
        if let Some(summary) = written.summary().filter(|_| !args.quiet) {
            say!("{summary}");
        }
        if let Some(skipped) = written.skipped_summary().filter(|_| !args.quiet) {
            say!("note: {skipped}");
        }
    }

    // After fixes, the config is read again: a fix never edits it, but the files it names changed.
    let outcome = check::run(if args.fix { load_config(&args)? } else { config }, &options)?;
    // A cache that cannot be written (a read-only checkout) only costs the next run time.
    if let Some(cache) = &options.cache {
        let _ = cache.save();
    }
    if let Some(path) = &args.write_baseline {
        let count = baseline::write(path, &outcome.index, &outcome.diagnostics)?;
        say!(
            "wrote {count} finding{} to {}",
            if count == 1 { "" } else { "s" },
            printable::path(path)
        );
        return Ok(ExitCode::SUCCESS);
    }
    for entry in outcome.stale.iter().filter(|_| !args.quiet) {
        say!(
            "note: {}: baseline entry for {} no longer matches a finding; regenerate the baseline so it only shrinks",
            printable::line(&entry.path),
            printable::line(&entry.rule)
        );
    }
    let color = match args.color {
        Color::Always => ColorChoice::Always,
        Color::Never => ColorChoice::Never,
        Color::Auto => auto_color(args.output_file.is_none(), std::io::stdout().is_terminal(), |name| {
            std::env::var_os(name)
        }),
    };
    let mut out = cli::Output::open(args.output_file.as_deref(), color)?;
    let mut stderr = std::io::stderr();
    let mut sink = std::io::sink();
    // Notes go to stderr in the formats read by people; `--quiet` drops them.
    let notes_out: &mut dyn Write = if args.quiet { &mut sink } else { &mut stderr };
    let written = if args.statistics {
        match format {
            Format::Json => render::statistics::json(&mut out, &outcome),
            _ => render::statistics::text(&mut out, &outcome).and_then(|_| {
                if args.quiet {
                    Ok(())
                } else {
                    render::summary(&mut out, &outcome)
                }
            }),
        }
    } else {
        match format {
            Format::Human if args.quiet => render::human_findings(&mut out, &outcome),
            Format::Human => render::human(&mut out, &outcome).and_then(|_| render::notes(notes_out, &outcome)),
            Format::Short if args.quiet => render::short_findings(&mut out, &outcome),
            Format::Short => render::short(&mut out, &outcome).and_then(|_| render::notes(notes_out, &outcome)),
            Format::Json => render::json(&mut out, &outcome),
            Format::Sarif => render::sarif::sarif(&mut out, &outcome),
            Format::Gitlab => {
                render::gitlab::gitlab(&mut out, &outcome, render::gitlab::project_dir_from_env().as_deref())
            }
            Format::Junit => render::junit::junit(&mut out, &outcome),
            Format::Github => {
                let env = GithubEnv::from_env();
                write_step_summary(&outcome, &env, args.changed_since.as_deref());
                render::github::annotations(&mut out, &outcome, &env).and_then(|_| render::notes(notes_out, &outcome))
            }
        }
    };
    match written.and_then(|_| out.finish()) {
        Ok(()) => {}
        // `retrylint check | head` closes the pipe early: not an error worth a report.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(miette!("cannot write output: {e}")),
    }

    let failing = !args.exit_zero
        && (outcome.count(Severity::Error) > 0 || (args.deny_warnings && outcome.count(Severity::Warning) > 0));
    // The process ends here: freeing every file's facts one by one was the largest part of
    // the work left on one thread after the parallel stages (2% of a check that parses every
    // file). The operating system takes the memory back at once.
    std::mem::forget(outcome);
    Ok(if failing { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `--fix` of stdin: the fixed source (stdin's text when nothing is fixed) goes to stdout or
/// `--output-file`, and nothing else; no file is written. The exit code is the check's of the
/// fixed text: 1 when findings that fail the run remain.
fn print_fixed_stdin(
    args: &CheckArgs,
    report: &fix::FixReport,
    absolute: &std::path::Path,
    text: &[u8],
    mut options: CheckOptions,
) -> Result<ExitCode, Report> {
    let fixed = report
        .files
        .iter()
        .find(|f| f.absolute == absolute)
        .map_or(text, |f| f.fixed.as_slice());
    let mut out = cli::Output::open(args.output_file.as_deref(), ColorChoice::Never)?;
    match out.write_all(fixed).and_then(|_| out.finish()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(miette!("cannot write output: {e}")),
    }
    options.overlay.insert(absolute.to_path_buf(), fixed.into());
    let outcome = check::run(load_config(args)?, &options)?;
    let failing = !args.exit_zero
        && (outcome.count(Severity::Error) > 0 || (args.deny_warnings && outcome.count(Severity::Warning) > 0));
    std::mem::forget(outcome);
    Ok(if failing { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `--color auto`: `NO_COLOR` (set, not empty) turns colour off; else `FORCE_COLOR` or
/// `CLICOLOR_FORCE` (set, not empty, not `0`/`false`) turns it on where stdout is not a terminal
/// (a CI log), though never into `--output-file`; else colour on a terminal.
fn auto_color(to_stdout: bool, terminal: bool, var: impl Fn(&str) -> Option<std::ffi::OsString>) -> ColorChoice {
    let set = |name: &str| var(name).is_some_and(|v| !v.is_empty());
    let forced = |name: &str| var(name).is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
    if set("NO_COLOR") || !to_stdout {
        ColorChoice::Never
    } else if forced("FORCE_COLOR") || forced("CLICOLOR_FORCE") {
        ColorChoice::Always
    } else if terminal {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    }
}

/// Prints `--diff`. The diff holds the project's own lines, so it is printed as a patch only
/// where a patch is read: on a terminal every control character but newlines and tabs is
/// escaped (`\u{1b}`), and in a GitHub Actions log the runner is told to read no workflow
/// command until the diff ends (`::stop-commands::`), since a context line of the project's
/// (` ::error::…`) would otherwise be read as one.
fn print_diff(files: &[fix::FixedFile]) {
    let mut out = std::io::stdout().lock();
    let terminal = std::io::stdout().is_terminal();
    let actions = std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true");
    let token = actions.then(|| {
        use std::hash::{BuildHasher, Hasher};
        format!(
            "retrylint-{:016x}",
            std::collections::hash_map::RandomState::new().build_hasher().finish()
        )
    });
    if let Some(token) = &token {
        let _ = writeln!(out, "::stop-commands::{token}");
    }
    for file in files {
        let diff = fix::unified_diff(file);
        let _ = if terminal {
            write!(out, "{}", printable::lines(&diff))
        } else {
            write!(out, "{diff}")
        };
    }
    if let Some(token) = &token {
        let _ = writeln!(out, "::{token}::");
    }
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
        say!("{:?}", cli::printable(report));
    }
}

fn list_rules(format: PoliciesFormat) -> Result<ExitCode, Report> {
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

fn show_rule(name: &str) -> Result<ExitCode, Report> {
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
fn schedule_eval() -> Result<ExitCode, Report> {
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
fn resolve_imports(paths: &[PathBuf]) -> Result<ExitCode, Report> {
    use retrylint::index::resolve::Resolution;
    let config = find_config(None, false, paths)?;
    let (index, _) = check::load_every_file(config, paths)?;
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

fn list_policies(args: PoliciesArgs) -> Result<ExitCode, Report> {
    let config = find_config(args.config.as_deref(), args.no_config, &args.paths)?;
    let triggers = [retrylint::extract::Trigger::Retries, retrylint::extract::Trigger::Rs2];
    let (index, analysis) = check::load_paths(config, &args.paths, &triggers)?;
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
