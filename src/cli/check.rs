//! `retrylint check`: the flags weighed against each other, the project and its config found
//! (through the front door), stdin read, fixes applied, and the report written.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

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
use retrylint::workspace::{self, ConfigChoice};

use super::stdout;
use crate::{CheckArgs, Color};

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

/// How `args` pick the config.
fn choice(args: &CheckArgs) -> ConfigChoice<'_> {
    ConfigChoice {
        given: args.config.as_deref(),
        none: args.no_config,
    }
}

fn load_config(args: &CheckArgs) -> Result<Config, Report> {
    match &args.project {
        Some(dir) => workspace::project_config(choice(args), dir),
        None => workspace::find_config(choice(args), &args.paths),
    }
}

/// The config of the project around `paths` (see [`workspace::find_config`]).
fn find_config(args: &CheckArgs, paths: &[PathBuf]) -> Result<Config, Report> {
    workspace::find_config(choice(args), paths)
}

pub fn run(mut args: CheckArgs) -> Result<ExitCode, Report> {
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
        stdout(&workspace::show_settings(choice(&args), file)?)?;
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
        let (only, paths) = super::project_paths(dir, &args.paths)?;
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
                    None => find_config(&args, &args.paths)?.root,
                };
                let (absolute, dir) = super::new_stdin_file(name, &project)?;
                if retrylint::source::Language::from_path(&absolute).is_none() {
                    return Err(miette!(
                        help = "name it with the extension of its language (.ts, .tsx, .rs, .json, .yaml, …)",
                        "cannot check {} from stdin: not a kind of file retrylint reads",
                        name.display()
                    ));
                }
                let config = find_config(&args, &[dir])?;
                (Some(absolute), config)
            } else {
                let config = find_config(&args, std::slice::from_ref(name))?;
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
                // Not on disk: the analysis adds it (see `Workspace::check`).
                Some(absolute) => (absolute, super::context_paths(&args.paths, &config)),
                None => super::stdin_paths(name, &args.paths, &config)?,
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
        let (only, mut paths) = super::project_paths(&config.root, &args.paths)?;
        // A path in another project (lint-staged names files of every package) brings that
        // project along as its context, where that config applies. Only a file or a
        // directory does: a link, a FIFO or a device is skipped with a note, and its directory
        // (`/dev` for `/dev/null`) is no project.
        let outside: Vec<PathBuf> = paths
            .iter()
            .skip(1)
            .filter(|path| std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() || m.is_dir()))
            .filter_map(|path| workspace::locate(path).ok())
            .map(|located| located.root)
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
    let (cache, foreign) = workspace::facts_cache(&config.root, args.no_cache);
    if let Some(own_cache) = foreign.filter(|_| !args.quiet) {
        say!(
            "note: {}: not a directory (a symbolic link?), so no facts cache is read or written",
            printable::path(&own_cache)
        );
    }
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
        let mut report = workspace::fix(&|| load_config(&args), &options, cache.clone(), applicability)?;
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
            return print_fixed_stdin(&args, &report, absolute, text, options, cache);
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
    let config = if args.fix { load_config(&args)? } else { config };
    // A check that takes a while says how far it is, on a terminal.
    let ticker = super::progress::wanted(
        std::io::stderr().is_terminal(),
        std::env::var_os("CI").as_deref(),
        args.quiet,
    )
    .then(|| {
        let progress = std::sync::Arc::new(check::Progress::default());
        options.progress = Some(progress.clone());
        super::progress::Ticker::start(progress, super::progress::delay())
    });
    let outcome = workspace::check(config, &options, cache.clone());
    // A cache that cannot be written (a read-only checkout) only costs the next run time.
    if let (Some(cache), Ok(_)) = (&cache, &outcome) {
        let _ = cache.save();
    }
    drop(ticker);
    let outcome = outcome?;
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
    let mut out = super::Output::open(args.output_file.as_deref(), color)?;
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
    cache: Option<std::sync::Arc<retrylint::cache::FactsCache>>,
) -> Result<ExitCode, Report> {
    let fixed = report
        .files
        .iter()
        .find(|f| f.absolute == absolute)
        .map_or(text, |f| f.fixed.as_slice());
    let mut out = super::Output::open(args.output_file.as_deref(), ColorChoice::Never)?;
    match out.write_all(fixed).and_then(|_| out.finish()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(miette!("cannot write output: {e}")),
    }
    options.overlay.insert(absolute.to_path_buf(), fixed.into());
    let outcome = workspace::check(load_config(args)?, &options, cache)?;
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
        say!("{:?}", super::printable(report));
    }
}
