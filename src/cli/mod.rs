//! The commands' implementations, kept out of `main` (which parses and dispatches): `check`
//! ([`check`]), the others ([`commands`]), and their plumbing: where the report goes
//! (`--output-file`), the project around `--stdin-filename`, and `retrylint init`.

pub mod check;
pub mod commands;
mod progress;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use codespan_reporting::term::termcolor::{BufferedStandardStream, ColorChoice, ColorSpec, NoColor, WriteColor};
use miette::{miette, Report};

use retrylint::config::Config;
use retrylint::source::printable;

/// The report's destination: stdout (coloured as asked) or a file (never coloured).
pub enum Output {
    Stdout(BufferedStandardStream),
    File(NoColor<BufWriter<File>>, PathBuf),
}

impl Output {
    pub fn open(file: Option<&Path>, color: ColorChoice) -> Result<Output, Report> {
        match file {
            None => Ok(Output::Stdout(BufferedStandardStream::stdout(color))),
            Some(path) => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(|e| miette!("cannot create {}: {e}", parent.display()))?;
                }
                let file = File::create(path).map_err(|e| miette!("cannot write {}: {e}", path.display()))?;
                Ok(Output::File(NoColor::new(BufWriter::new(file)), path.to_path_buf()))
            }
        }
    }

    /// Flushes what is buffered.
    pub fn finish(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(out) => out.flush(),
            Output::File(out, path) => out
                .get_mut()
                .flush()
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(out) => out.write(buf),
            Output::File(out, _) => out.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(out) => out.flush(),
            Output::File(out, _) => out.flush(),
        }
    }
}

impl WriteColor for Output {
    fn supports_color(&self) -> bool {
        match self {
            Output::Stdout(out) => out.supports_color(),
            Output::File(out, _) => out.supports_color(),
        }
    }

    fn set_color(&mut self, spec: &ColorSpec) -> io::Result<()> {
        match self {
            Output::Stdout(out) => out.set_color(spec),
            Output::File(out, _) => out.set_color(spec),
        }
    }

    fn reset(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(out) => out.reset(),
            Output::File(out, _) => out.reset(),
        }
    }
}

/// The paths checked around stdin's file: those given (when not just the default `.`), else
/// its project root.
pub fn context_paths(given: &[PathBuf], config: &Config) -> Vec<PathBuf> {
    if given != [PathBuf::from(".")] {
        given.to_vec()
    } else {
        vec![config.root.clone()]
    }
}

/// `--stdin-filename NAME`: the canonical path of the file stdin stands in for, and the paths
/// to check so that its imports resolve: the paths given (when not just the default `.`), else
/// its project root, with the file itself added when none of them holds it.
pub fn stdin_paths(name: &Path, given: &[PathBuf], config: &Config) -> Result<(PathBuf, Vec<PathBuf>), Report> {
    let absolute = retrylint::config::canonical_path(
        name,
        "--stdin-filename names an existing file whose text stdin replaces",
        " from stdin",
    )?;
    if !absolute.is_file() {
        return Err(miette!("--stdin-filename {} is not a file", name.display()));
    }
    let mut paths = context_paths(given, config);
    let covered = paths
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .any(|p| absolute.starts_with(p));
    if !covered {
        paths.push(absolute.clone());
    }
    Ok((absolute, paths))
}

/// `--stdin-filename NAME` for a file that does not exist yet: its absolute path (its nearest
/// existing directory resolved, links and `..` included; the missing rest plain names only) and
/// that directory. The file must lie inside `project` (the project checked): a name never leads
/// the run out of it.
pub fn new_stdin_file(name: &Path, project: &Path) -> Result<(PathBuf, PathBuf), Report> {
    let help = "--stdin-filename names the file stdin holds: a path inside the project, existing or not";
    let joined = std::env::current_dir()
        .map_err(|e| miette!("cannot read the current directory: {e}"))?
        .join(name);
    // The longest part that exists, then plain names: `..` below a directory that does not
    // exist cannot be resolved.
    let mut existing = PathBuf::new();
    let mut missing = Vec::new();
    for part in joined.components() {
        if missing.is_empty() {
            let next = existing.join(part);
            if std::fs::symlink_metadata(&next).is_ok() {
                existing = next;
                continue;
            }
        }
        match part {
            std::path::Component::Normal(plain) => missing.push(plain),
            _ => {
                return Err(miette!(
                    help = help,
                    "cannot check {} from stdin: `..` below a directory that does not exist",
                    name.display()
                ))
            }
        }
    }
    let base = std::fs::canonicalize(&existing)
        .map_err(|e| miette!(help = help, "cannot check {} from stdin: {e}", name.display()))?;
    if !base.is_dir() {
        return Err(miette!(
            help = help,
            "cannot check {} from stdin: {} is not a directory",
            name.display(),
            existing.display()
        ));
    }
    let absolute = missing.iter().fold(base.clone(), |path, part| path.join(part));
    if !absolute.starts_with(project) {
        return Err(miette!(
            help = "run from the project the file belongs to, or name it with --project DIR",
            "cannot check {} from stdin: it is outside the project ({})",
            name.display(),
            project.display()
        ));
    }
    Ok((absolute, base))
}

/// `--project DIR PATHS…`: the canonical PATHS (what to report) and the paths to analyse: DIR,
/// and any of PATHS outside it. A path that is a symbolic link is taken as the link (its
/// directory resolved, not the link): it is reported on where it is, and never moves the
/// project. A path that cannot be read is an error, as a missing one is: the run could not
/// say anything about it.
pub fn project_paths(dir: &Path, given: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Report> {
    let root = std::fs::canonicalize(dir).map_err(|e| miette!("cannot check project {}: {e}", dir.display()))?;
    if !root.is_dir() {
        return Err(miette!("--project {} is not a directory", dir.display()));
    }
    let mut only = Vec::new();
    let mut paths = vec![dir.to_path_buf()];
    for path in given {
        let absolute = retrylint::config::given_path(path, "check the path, or run from the project root")?;
        readable(path)?;
        if !absolute.starts_with(&root) {
            paths.push(path.clone());
        }
        only.push(absolute);
    }
    Ok((only, paths))
}

/// An error when `path` (named on the command line) is a directory that cannot be listed or
/// a regular file that cannot be opened: exit 2, never a run that looks clean. Anything else
/// (a link, a FIFO, a device) is not opened here; the run skips it with a note.
fn readable(path: &Path) -> Result<(), Report> {
    let Ok(metadata) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let result = if metadata.is_dir() {
        std::fs::read_dir(path).map(drop).map_err(|e| e.to_string())
    } else if metadata.is_file() {
        retrylint::files::open_regular(path, u64::MAX, false)
            .map(drop)
            .map_err(|e| e.to_string())
    } else {
        Ok(())
    };
    result.map_err(|e| {
        miette!(
            help = "a path named on the command line must be readable: fix its permissions, or leave it out",
            "cannot read {}: {e}",
            path.display()
        )
    })
}

/// `retrylint init [DIR] [--force]`.
pub fn init(dir: &Path, force: bool) -> Result<ExitCode, Report> {
    if !dir.is_dir() {
        return Err(miette!("{} is not a directory", dir.display()));
    }
    let target = dir.join(retrylint::config::CONFIG_FILE);
    if target.exists() && !force {
        return Err(miette!(
            help = "pass --force to replace it",
            "{} already exists",
            printable::path(&target)
        ));
    }
    let inferred = retrylint::init::infer(dir)?;
    let path = retrylint::init::write(dir, &inferred, force)?;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    eprintln!(
        "wrote {}: {} ({}), {} ({}), {} ({})",
        printable::path(&path),
        plural(inferred.retry_modules.len(), "retry module"),
        join_or_none(inferred.retry_modules.iter()),
        plural(inferred.lease_tables.len(), "lease table"),
        join_or_none(inferred.lease_tables.keys()),
        plural(inferred.durable_registrations.len(), "durable registration"),
        join_or_none(inferred.durable_registrations.keys()),
    );
    Ok(ExitCode::SUCCESS)
}

fn join_or_none<'a>(items: impl Iterator<Item = &'a String>) -> String {
    let all: Vec<String> = items.map(|item| printable::line(item).into_owned()).collect();
    if all.is_empty() {
        "none found".to_string()
    } else {
        all.join(", ")
    }
}

/// The tool's own error (a config error, an unreadable path), as printed: its message, help
/// and labels quote paths and config text from the project, so they are escaped as every other
/// project text is (`printable`); the config's source lines were made safe where the report was
/// built (`Config::parse`).
pub fn printable(report: Report) -> Report {
    let message = printable::line(&report.to_string()).into_owned();
    let help = report.help().map(|h| printable::lines(&h.to_string()).into_owned());
    let labels: Vec<miette::LabeledSpan> = report
        .labels()
        .map(|labels| {
            labels
                .map(|l| {
                    let text = l.label().map(|t| printable::line(t).into_owned());
                    miette::LabeledSpan::new_with_span(text, *l.inner())
                })
                .collect()
        })
        .unwrap_or_default();
    Report::new(Printable {
        inner: report,
        message,
        help,
        labels,
    })
}

struct Printable {
    inner: Report,
    message: String,
    help: Option<String>,
    labels: Vec<miette::LabeledSpan>,
}

impl std::fmt::Display for Printable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::fmt::Debug for Printable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Printable {}

impl miette::Diagnostic for Printable {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.inner.code()
    }

    fn severity(&self) -> Option<miette::Severity> {
        self.inner.severity()
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.inner.source_code()
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        (!self.labels.is_empty()).then(|| Box::new(self.labels.iter().cloned()) as Box<dyn Iterator<Item = _>>)
    }
}

/// Writes to stdout; a reader that stopped reading (`retrylint rules | head`) is not an error.
pub fn stdout(text: &str) -> Result<(), Report> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(miette!("cannot write output: {e}")),
    }
}
