//! `--changed-since REV`: the lines added or changed since a revision, from
//! `git diff --unified=0 REV` (the working tree against REV, so uncommitted edits count) plus
//! untracked files, which are new throughout. The whole project is still analysed — facts cross
//! files — and only findings the change touches are reported: a line of the finding (or of a
//! location it names) was added or changed, or lines were deleted from inside it — deleting the
//! `while:` line of a multi-line `Effect.retry({…})` changes no remaining line, yet makes the
//! finding. A finding about a named policy covers the policy's whole definition: raising its
//! `recurs(4)` to `recurs(6)`, or deleting its `Schedule.jittered,` line, reports it, and so
//! does deleting a last `.with_jitter()` line that continued it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use miette::{miette, Report};

use crate::analysis::{Analysis, Origin};
use crate::index::{FileId, Index};
use crate::source::Span;

/// Changed lines per file, keyed by canonical absolute path.
#[derive(Debug, Clone, Default)]
pub struct ChangedLines {
    files: HashMap<PathBuf, Lines>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Lines {
    /// A file git does not track yet: every line is new.
    All,
    /// Lines added or changed, and where lines were deleted.
    Hunks(Hunks),
}

/// What a diff did to one file, in the new file's line numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunks {
    /// 1-based inclusive ranges of added or changed lines, in order.
    pub changed: Vec<(usize, usize)>,
    /// Pure deletions: lines were removed right after this line (0: before the first line).
    pub deleted_after: Vec<usize>,
    /// The first line of each pure deletion, as in `deleted_after`: whether a definition
    /// that ends on the line above lost its tail.
    pub tails: Vec<Tail>,
}

/// The first deleted line of a pure deletion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tail {
    /// Lines were deleted right after this line.
    pub after: usize,
    /// The deleted line's indentation, in bytes.
    pub indent: usize,
    /// It began by continuing the expression above it: a method call, a closing bracket, a
    /// separator or an operator (`.with_jitter()`, `)`, `,`, `|| x`).
    pub continues: bool,
}

impl ChangedLines {
    /// Asks git, in the directory of `path` (a file's parent), what changed since `rev`.
    pub fn since(rev: &str, path: &Path) -> Result<ChangedLines, Report> {
        let dir = if path.is_dir() {
            path
        } else {
            path.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
        };
        if rev.is_empty() || rev.starts_with('-') {
            return Err(miette!(
                help = "give a commit, branch or tag, e.g. --changed-since origin/main",
                "invalid revision `{rev}` for --changed-since"
            ));
        }
        let top = git(dir, &["rev-parse", "--show-toplevel"]).map_err(|e| {
            miette!(
                help = "--changed-since reads the changes from git: run it inside a git work tree",
                "cannot list the lines changed since `{rev}`: {e}"
            )
        })?;
        let top = PathBuf::from(top.trim_end_matches(['\n', '\r']));
        let top = std::fs::canonicalize(&top).unwrap_or(top);
        let commit = git(
            &top,
            &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")],
        )
        .map_err(|_| {
            miette!(
                help = "on a shallow clone, fetch it first: git fetch --depth=1 origin <commit>",
                "unknown revision `{rev}` for --changed-since: git cannot find that commit in {}",
                top.display()
            )
        })?;
        let commit = commit.trim();
        let diff = git(
            &top,
            &[
                "-c",
                "core.quotePath=false",
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--ignore-submodules",
                "--find-renames",
                "--unified=0",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                commit,
                "--",
            ],
        )
        .map_err(|e| miette!("cannot list the lines changed since `{rev}`: {e}"))?;
        let untracked = git(&top, &["ls-files", "--others", "--exclude-standard", "-z"])
            .map_err(|e| miette!("cannot list the files git does not track: {e}"))?;

        let mut files: HashMap<PathBuf, Lines> = parse_diff(&diff)
            .into_iter()
            .map(|(path, hunks)| (top.join(path), Lines::Hunks(hunks)))
            .collect();
        for path in untracked.split('\0').filter(|p| !p.is_empty()) {
            files.insert(top.join(path), Lines::All);
        }
        Ok(ChangedLines { files })
    }

    /// Whether the change touches lines `first..=last` (1-based) of the file at `absolute`
    /// (canonical): one of them is new or changed, or lines were deleted between two of them.
    /// A deletion at either edge leaves the span's own text as it was, so it does not count.
    pub fn touches(&self, absolute: &Path, first: usize, last: usize) -> bool {
        match self.files.get(absolute) {
            Some(Lines::All) => true,
            Some(Lines::Hunks(hunks)) => {
                hunks.changed.iter().any(|&(from, to)| from <= last && first <= to)
                    || hunks.deleted_after.iter().any(|&line| first <= line && line < last)
            }
            None => false,
        }
    }

    /// [`ChangedLines::touches`] for a definition (a named policy) on lines `first..=last`
    /// whose first line is indented by `indent` bytes: lines deleted right after it count too
    /// when the first of them continued its expression or was indented deeper — deleting the
    /// last `.with_jitter()` line of a builder chain changes the policy.
    pub fn touches_definition(&self, absolute: &Path, first: usize, last: usize, indent: usize) -> bool {
        self.touches(absolute, first, last)
            || matches!(self.files.get(absolute), Some(Lines::Hunks(hunks))
                if hunks.tails.iter().any(|tail| tail.after == last && (tail.continues || tail.indent > indent)))
    }
}

/// Whether the change touches the finding at `span` of `file`. A finding on a retry call or a
/// job definition spans the whole call, so deleting its `while:` line (which changes no line
/// that is left) counts; a finding about a named policy (at its name, or inside its value)
/// spans the policy's definition, so raising its `recurs(4)` or deleting its
/// `Schedule.jittered,` line counts, and so do deleted lines that continued its last line.
pub fn touches_finding(changed: &ChangedLines, index: &Index, analysis: &Analysis, file: FileId, span: Span) -> bool {
    let Some(facts) = index.loaded(file) else { return false };
    let holds = |outer: &Span| outer.start <= span.start && span.end <= outer.end;
    let calls = facts
        .retry_sites
        .iter()
        .map(|site| site.span)
        .chain(facts.jobs.iter().map(|job| job.span))
        .filter(holds)
        .map(|outer| (outer, false));
    let definitions = analysis
        .policies(index, file)
        .iter()
        .filter_map(|policy| match &policy.origin {
            Origin::Export { binding, .. } | Origin::Named { binding, .. } => Some(*binding),
            Origin::Site { .. } | Origin::Config { .. } => None,
        })
        .chain(facts.rs2.policies.iter().map(|policy| policy.span))
        .filter(holds)
        .map(|outer| (outer, true));
    let (extent, definition) = calls
        .chain(definitions)
        .min_by_key(|(outer, _)| outer.end - outer.start)
        .unwrap_or((span, false));
    let (first, column) = facts.position(extent.start);
    let last = facts.position(extent.end.max(extent.start)).0;
    let absolute = &index.files[file].absolute;
    if definition {
        changed.touches_definition(absolute, first, last, column.saturating_sub(1))
    } else {
        changed.touches(absolute, first, last)
    }
}

/// Runs git in `dir` and returns its stdout, or its stderr as the error.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message = stderr.trim();
        return Err(if message.is_empty() {
            format!("git {} failed ({})", args.join(" "), output.status)
        } else {
            message.to_string()
        });
    }
    String::from_utf8(output.stdout).map_err(|_| "git printed something that is not UTF-8".to_string())
}

/// The hunks of each file in a `git diff --unified=0` with `a/` and `b/` prefixes: from every
/// `@@ -a,b +c,d @@` hunk, lines `c..c+d` changed, or, when `d` is 0, lines deleted after line
/// `c`. Deleted files add nothing. Hunk bodies are skipped by count, so an added line that
/// reads `++ x` is never taken for a file header.
pub fn parse_diff(diff: &str) -> Vec<(String, Hunks)> {
    let mut files: Vec<(String, Hunks)> = Vec::new();
    let mut current: Option<usize> = None;
    let (mut old_left, mut new_left) = (0usize, 0usize);
    // A pure deletion whose first deleted line is still to be read: (file, after line).
    let mut deletion: Option<(usize, usize)> = None;
    for line in diff.lines() {
        if old_left > 0 || new_left > 0 {
            match line.as_bytes().first() {
                Some(b'-') => {
                    old_left = old_left.saturating_sub(1);
                    if let Some((file, after)) = deletion.take() {
                        let text = &line[1..];
                        let code = text.trim_start();
                        if !code.is_empty() {
                            files[file].1.tails.push(Tail {
                                after,
                                indent: text.len() - code.len(),
                                continues: continues(code),
                            });
                        }
                    }
                }
                Some(b'+') => new_left = new_left.saturating_sub(1),
                Some(b' ') => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                }
                // `\ No newline at end of file`
                _ => {}
            }
            continue;
        }
        if line.starts_with("diff --git ") {
            current = None;
        } else if let Some(name) = line.strip_prefix("+++ ") {
            let name = unquote(name.strip_suffix('\t').unwrap_or(name));
            current = name.strip_prefix("b/").map(|path| {
                files.push((path.to_string(), Hunks::default()));
                files.len() - 1
            });
        } else if let Some(hunk) = line.strip_prefix("@@ ") {
            let Some((old, new)) = parse_hunk(hunk) else {
                continue;
            };
            old_left = old.1;
            new_left = new.1;
            deletion = None;
            let Some(file) = current else { continue };
            if new.1 > 0 {
                files[file].1.changed.push((new.0, new.0 + new.1 - 1));
            } else if old.1 > 0 {
                files[file].1.deleted_after.push(new.0);
                deletion = Some((file, new.0));
            }
        }
    }
    files.retain(|(_, hunks)| hunks != &Hunks::default());
    files
}

/// Whether a line (its indentation off) continues the expression of the line before it: it
/// starts with a method call, a closing bracket, a separator or a binary operator. Not `-` or
/// `*`: they open a YAML or Markdown list item as often.
fn continues(code: &str) -> bool {
    // `//` and `/*` open a comment, not a division.
    if code.starts_with("//") || code.starts_with("/*") {
        return false;
    }
    code.starts_with(['.', ')', ']', '}', ',', '?', ':', '|', '&', '+', '/', '%'])
}

/// `-a,b +c,d @@ …` → `((a, b), (c, d))`; a missing count is 1.
fn parse_hunk(hunk: &str) -> Option<((usize, usize), (usize, usize))> {
    let mut parts = hunk.split(' ');
    let range = |text: Option<&str>, sign: char| -> Option<(usize, usize)> {
        let text = text?.strip_prefix(sign)?;
        match text.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((text.parse().ok()?, 1)),
        }
    };
    let old = range(parts.next(), '-')?;
    let new = range(parts.next(), '+')?;
    Some((old, new))
}

/// Undoes git's C-style quoting of an unusual path (`"b/a\"b\303\251.ts"`).
fn unquote(name: &str) -> String {
    let Some(inner) = name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) else {
        return name.to_string();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'a') => bytes.push(7),
            Some(b'b') => bytes.push(8),
            Some(b'f') => bytes.push(12),
            Some(b'v') => bytes.push(11),
            Some(d @ b'0'..=b'3') => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&o @ b'0'..=b'7') = chars.peek() {
                        value = value * 8 + u32::from(o - b'0');
                        chars.next();
                    }
                }
                bytes.push(value as u8);
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_give_added_and_changed_lines() {
        let diff = "\
diff --git a/src/a.ts b/src/a.ts
index 1..2 100644
--- a/src/a.ts
+++ b/src/a.ts
@@ -3 +3 @@ export
-old
+new
@@ -10,0 +11,2 @@
+++ not a header
+added
@@ -20,2 +21,0 @@
-gone
-gone
diff --git a/src/gone.ts b/src/gone.ts
deleted file mode 100644
--- a/src/gone.ts
+++ /dev/null
@@ -1,2 +0,0 @@
-x
-y
diff --git a/new.ts b/new.ts
new file mode 100644
--- /dev/null
+++ b/new.ts
@@ -0,0 +1,3 @@
+a
+b
+c
\\ No newline at end of file
";
        let hunks = |changed: &[(usize, usize)], deleted_after: &[usize], tails: &[Tail]| Hunks {
            changed: changed.to_vec(),
            deleted_after: deleted_after.to_vec(),
            tails: tails.to_vec(),
        };
        let gone = Tail {
            after: 21,
            indent: 0,
            continues: false,
        };
        assert_eq!(
            parse_diff(diff),
            vec![
                ("src/a.ts".to_string(), hunks(&[(3, 3), (11, 12)], &[21], &[gone])),
                ("new.ts".to_string(), hunks(&[(1, 3)], &[], &[])),
            ]
        );
    }

    #[test]
    fn a_deletion_that_continued_the_line_above_is_a_tail_of_its_definition() {
        let diff = "\
--- a/src/retry.rs
+++ b/src/retry.rs
@@ -4 +3,0 @@
-    .with_jitter();
@@ -9 +7,0 @@
-pub const OTHER: u32 = 1;
";
        let files = parse_diff(diff);
        let tails = &files[0].1.tails;
        assert_eq!(
            tails,
            &[
                Tail {
                    after: 3,
                    indent: 4,
                    continues: true
                },
                Tail {
                    after: 7,
                    indent: 0,
                    continues: false
                }
            ]
        );
        let mut changed = ChangedLines::default();
        changed
            .files
            .insert(PathBuf::from("/r/retry.rs"), Lines::Hunks(files[0].1.clone()));
        let file = Path::new("/r/retry.rs");
        // `pub const TRANSIENT … = …` on lines 1..=3 lost its `.with_jitter()` tail.
        assert!(changed.touches_definition(file, 1, 3, 0));
        assert!(!changed.touches(file, 1, 3), "a plain span is not touched at its edge");
        // The definition on lines 5..=7 is followed by a deleted statement of its own.
        assert!(!changed.touches_definition(file, 5, 7, 0));
        // Indented deeper than the definition's first line: its tail too (`  jitter: full`).
        let yaml = "--- a/r.yaml\n+++ b/r.yaml\n@@ -4 +3,0 @@\n-  jitter: full\n";
        let mut changed = ChangedLines::default();
        changed
            .files
            .insert(PathBuf::from("/r/r.yaml"), Lines::Hunks(parse_diff(yaml)[0].1.clone()));
        assert!(changed.touches_definition(Path::new("/r/r.yaml"), 1, 3, 0));
        assert!(!changed.touches_definition(Path::new("/r/r.yaml"), 2, 3, 2));
    }

    #[test]
    fn quoted_and_spaced_paths_are_read() {
        assert_eq!(unquote("\"b/a\\\"b\\303\\251.ts\""), "b/a\"bé.ts");
        assert_eq!(unquote("b/plain.ts"), "b/plain.ts");
        let diff = "--- a/a b.ts\t\n+++ b/a b.ts\t\n@@ -1 +1 @@\n-a\n+b\n";
        let changed = Hunks {
            changed: vec![(1, 1)],
            deleted_after: vec![],
            tails: vec![],
        };
        assert_eq!(parse_diff(diff), vec![("a b.ts".to_string(), changed)]);
    }

    #[test]
    fn touches_checks_changed_lines_deletions_inside_and_new_files() {
        let mut changed = ChangedLines::default();
        let hunks = Hunks {
            changed: vec![(3, 3), (10, 12)],
            deleted_after: vec![20],
            tails: vec![],
        };
        changed.files.insert(PathBuf::from("/r/a.ts"), Lines::Hunks(hunks));
        changed.files.insert(PathBuf::from("/r/new.ts"), Lines::All);
        let a = Path::new("/r/a.ts");
        assert!(changed.touches(a, 11, 11));
        assert!(changed.touches(a, 12, 14), "overlaps the end of a changed range");
        assert!(!changed.touches(a, 4, 9));
        // Lines deleted after line 20: inside 19..=21, at the edge of 20..=20 and 21..=22.
        assert!(changed.touches(a, 19, 21));
        assert!(changed.touches(a, 20, 21));
        assert!(!changed.touches(a, 20, 20));
        assert!(!changed.touches(a, 21, 22));
        assert!(!changed.touches(a, 15, 20));
        assert!(changed.touches(Path::new("/r/new.ts"), 400, 400));
        assert!(!changed.touches(Path::new("/r/other.ts"), 1, 1));
    }
}
