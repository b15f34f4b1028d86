//! One workspace's analysis as the editor sees it: findings as LSP diagnostics, fixes and
//! suppressions as code actions, and policy summaries on hover.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity,
    Hover, HoverContents, Location, MarkupContent, MarkupKind, NumberOrString, Position, Range, TextEdit, Url,
    WorkspaceEdit,
};

use super::text::{self, LineIndex};
use crate::analysis::Origin;
use crate::check::Outcome;
use crate::diagnostic::FixSafety;
use crate::facts::{Expr, PolicyArg};
use crate::index::{FileId, Resolved};
use crate::rules;
use crate::schedule::duration::format_ms;
use crate::schedule::{self, Attempts, Gap, Jitter, Sched, Summary};
use crate::source::{snippet, Language, Span};

/// The code action kind of applying every safe fix of a document.
pub const FIX_ALL: &str = "source.fixAll.retrylint";

/// The placeholder reason of a suppression added from the editor.
pub const SUPPRESSION_REASON: &str = "TODO: why this exception holds";

pub struct Analysis {
    pub outcome: Outcome,
    uris: HashMap<FileId, Url>,
    /// The analysed text of every file a finding, a label or a fix points into.
    texts: HashMap<FileId, String>,
    /// Per file: (index into `outcome.diagnostics`, the LSP diagnostic), and notes.
    findings: HashMap<FileId, Vec<(Option<usize>, lsp_types::Diagnostic)>>,
}

impl Analysis {
    /// Converts an outcome; `open` maps the canonical paths of open buffers to the URIs the
    /// client uses for them.
    pub fn new(outcome: Outcome, open: &HashMap<PathBuf, Url>) -> Analysis {
        let project = &outcome.index;
        let mut uris = HashMap::new();
        let mut texts = HashMap::new();
        let mut needed: Vec<FileId> = Vec::new();
        for d in &outcome.diagnostics {
            needed.push(d.file);
            needed.extend(d.labels.iter().map(|l| l.file));
            needed.extend(d.fix.iter().flat_map(|f| f.edits.iter().map(|e| e.file)));
        }
        // The files notes on a line are about, by the path they show (only those are looked
        // for: a map of every file's path was a visible share of an edit at 50,000 files).
        let shown: HashSet<&Path> = outcome
            .notes
            .iter()
            .filter(|n| n.line.is_some())
            .map(|n| n.path.as_path())
            .collect();
        let by_display: HashMap<&Path, FileId> = match shown.is_empty() {
            true => HashMap::new(),
            false => project
                .files
                .iter()
                .enumerate()
                .filter(|(_, s)| shown.contains(s.path.as_path()))
                .map(|(id, s)| (s.path.as_path(), id))
                .collect(),
        };
        let notes: Vec<(FileId, usize, &str)> = outcome
            .notes
            .iter()
            .filter_map(|n| Some((*by_display.get(n.path.as_path())?, n.line?, n.message.as_str())))
            .collect();
        needed.extend(notes.iter().map(|(file, _, _)| *file));
        for file in needed {
            if texts.contains_key(&file) {
                continue;
            }
            let absolute = &project.files[file].absolute;
            let uri = open
                .get(absolute)
                .cloned()
                .or_else(|| Url::from_file_path(absolute).ok());
            if let Some(uri) = uri {
                uris.insert(file, uri);
            }
            let text = project.text(file).unwrap_or_default();
            texts.insert(file, String::from_utf8_lossy(text).into_owned());
        }

        let indices: HashMap<FileId, LineIndex> = texts.iter().map(|(f, t)| (*f, LineIndex::new(t))).collect();
        let range = |file: FileId, span: Span| indices[&file].range(span.start as usize, span.end as usize);
        let mut findings: HashMap<FileId, Vec<(Option<usize>, lsp_types::Diagnostic)>> = HashMap::new();
        for (index, d) in outcome.diagnostics.iter().enumerate() {
            let related: Vec<DiagnosticRelatedInformation> = d
                .labels
                .iter()
                .filter_map(|label| {
                    Some(DiagnosticRelatedInformation {
                        location: Location::new(uris.get(&label.file)?.clone(), range(label.file, label.span)),
                        message: label.message.clone(),
                    })
                })
                .collect();
            let diagnostic = lsp_types::Diagnostic {
                range: range(d.file, d.span),
                severity: Some(super::severity(d.severity)),
                code: Some(NumberOrString::String(d.rule.to_string())),
                code_description: Url::parse(&crate::render::rule_doc_url(d.rule))
                    .ok()
                    .map(|href| CodeDescription { href }),
                source: Some("retrylint".into()),
                message: match &d.help {
                    Some(help) => format!("{}\nhelp: {help}", d.message),
                    None => d.message.clone(),
                },
                related_information: (!related.is_empty()).then_some(related),
                tags: None,
                data: None,
            };
            findings.entry(d.file).or_default().push((Some(index), diagnostic));
        }
        // What could not be analysed, on the line it concerns.
        for (file, line, message) in notes {
            let index = &indices[&file];
            let line = line.saturating_sub(1) as u32;
            let start = index.offset(Position::new(line, 0));
            let end = index.offset(Position::new(line, u32::MAX));
            findings.entry(file).or_default().push((
                None,
                lsp_types::Diagnostic {
                    range: index.range(start, end),
                    severity: Some(DiagnosticSeverity::INFORMATION),
                    source: Some("retrylint".into()),
                    message: message.to_string(),
                    ..Default::default()
                },
            ));
        }
        drop(indices);
        Analysis {
            outcome,
            uris,
            texts,
            findings,
        }
    }

    /// The diagnostics to publish, per document.
    pub fn published(&self) -> HashMap<Url, Vec<lsp_types::Diagnostic>> {
        let mut out: HashMap<Url, Vec<lsp_types::Diagnostic>> = HashMap::new();
        for (file, found) in &self.findings {
            if let Some(uri) = self.uris.get(file) {
                out.entry(uri.clone())
                    .or_default()
                    .extend(found.iter().map(|(_, d)| d.clone()));
            }
        }
        out
    }

    pub fn file(&self, path: &Path) -> Option<FileId> {
        self.outcome.index.file_id(path)
    }

    /// Quick fixes for the findings that touch `range`: each fix, and a suppression comment.
    /// `current` tells whether the editor's text of a file is the analysed one.
    pub fn code_actions(
        &self,
        file: FileId,
        range: Range,
        current: &dyn Fn(&Path) -> bool,
    ) -> Vec<CodeActionOrCommand> {
        let project = &self.outcome.index;
        let fresh = |f: FileId| current(&project.files[f].absolute);
        let mut actions = Vec::new();
        let mut suppressed: HashSet<(&str, u32)> = HashSet::new();
        for (index, diagnostic) in self.findings.get(&file).into_iter().flatten() {
            let Some(index) = index else { continue };
            if !touches(diagnostic.range, range) {
                continue;
            }
            let finding = &self.outcome.diagnostics[*index];
            if let Some(fix) = finding.fix.as_ref().filter(|f| f.safety != FixSafety::None) {
                if fix.edits.iter().all(|e| fresh(e.file)) {
                    let mut changes: HashMap<Url, Vec<TextEdit>> = HashMap::new();
                    for edit in &fix.edits {
                        let (Some(uri), Some(text)) = (self.uris.get(&edit.file), self.texts.get(&edit.file)) else {
                            continue;
                        };
                        let index = LineIndex::new(text);
                        changes.entry(uri.clone()).or_default().push(TextEdit {
                            range: index.range(edit.span.start as usize, edit.span.end as usize),
                            new_text: edit.replacement.clone(),
                        });
                    }
                    let safe = fix.safety == FixSafety::Safe;
                    actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: if safe {
                            fix.title.clone()
                        } else {
                            format!("{} (unsafe)", fix.title)
                        },
                        kind: Some(CodeActionKind::QUICKFIX),
                        diagnostics: Some(vec![diagnostic.clone()]),
                        edit: Some(WorkspaceEdit {
                            changes: Some(changes),
                            ..Default::default()
                        }),
                        is_preferred: Some(safe),
                        ..Default::default()
                    }));
                }
            }
            let line = diagnostic.range.start.line;
            if rules::SUPPRESSION_RULES.contains(&finding.rule)
                || !fresh(file)
                || !suppressed.insert((finding.rule, line))
            {
                continue;
            }
            if let Some(action) = self.suppression(file, finding.rule, finding.span.start as usize, diagnostic) {
                actions.push(CodeActionOrCommand::CodeAction(action));
            }
        }
        actions
    }

    /// Every safe fix of the document's findings in one edit (`source.fixAll.retrylint`, what
    /// editors run on save). A fix that also edits another file, or overlaps one taken
    /// before it, is left for its own quick fix; `None` when there is nothing to apply.
    pub fn fix_all(&self, file: FileId, current: &dyn Fn(&Path) -> bool) -> Option<CodeAction> {
        let project = &self.outcome.index;
        if !current(&project.files[file].absolute) {
            return None;
        }
        let text = self.texts.get(&file)?;
        let uri = self.uris.get(&file)?;
        let mut taken: Vec<(u32, u32, &str)> = Vec::new();
        for (index, _) in self.findings.get(&file).into_iter().flatten() {
            let Some(index) = index else { continue };
            let Some(fix) = self.outcome.diagnostics[*index]
                .fix
                .as_ref()
                .filter(|f| f.safety == FixSafety::Safe && f.edits.iter().all(|e| e.file == file))
            else {
                continue;
            };
            let edits: Vec<(u32, u32, &str)> = fix
                .edits
                .iter()
                .map(|e| (e.span.start, e.span.end, e.replacement.as_str()))
                // Two findings may carry the same edit (an import both fixes add).
                .filter(|edit| !taken.contains(edit))
                .collect();
            let overlaps = |a: &(u32, u32, &str), b: &(u32, u32, &str)| {
                a.0 < b.1 && b.0 < a.1 || (a.0 == a.1 && a.0 == b.0) || (b.0 == b.1 && b.0 == a.0)
            };
            if edits.iter().any(|e| taken.iter().any(|t| overlaps(e, t))) {
                continue;
            }
            taken.extend(edits);
        }
        if taken.is_empty() {
            return None;
        }
        taken.sort();
        let index = LineIndex::new(text);
        let edits = taken
            .into_iter()
            .map(|(start, end, new_text)| TextEdit {
                range: index.range(start as usize, end as usize),
                new_text: new_text.to_string(),
            })
            .collect();
        Some(CodeAction {
            title: "Fix all retrylint findings with a safe fix".into(),
            kind: Some(CodeActionKind::new(FIX_ALL)),
            edit: Some(WorkspaceEdit {
                changes: Some(HashMap::from([(uri.clone(), edits)])),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    /// `// retrylint-ignore <rule> -- <reason>` on the line before the finding, indented like
    /// it; added to the rule list of a suppression comment already there.
    fn suppression(
        &self,
        file: FileId,
        rule: &str,
        offset: usize,
        diagnostic: &lsp_types::Diagnostic,
    ) -> Option<CodeAction> {
        let project = &self.outcome.index;
        let text = self.texts.get(&file)?;
        let uri = self.uris.get(&file)?;
        let index = LineIndex::new(text);
        let line_start = index.line_start(offset);
        let line = diagnostic.range.start.line as usize;
        let existing = project.loaded(file)?.suppressions.iter().find(|s| {
            s.line == Some(line) && line > 0 && index.position(s.span.start as usize).line as usize == line - 1
        });
        let edit = match existing {
            Some(s) => {
                let comment = text.get(s.span.range())?;
                let marker = comment.find("retrylint-ignore")? + "retrylint-ignore".len();
                let at = s.span.start as usize + marker;
                TextEdit {
                    range: index.range(at, at),
                    new_text: format!(" {rule},"),
                }
            }
            None => {
                let indent: String = text[line_start..]
                    .chars()
                    .take_while(|c| *c == ' ' || *c == '\t')
                    .collect();
                let opener = project.files[file].language.line_comment();
                TextEdit {
                    range: index.range(line_start, line_start),
                    new_text: format!("{indent}{opener} retrylint-ignore {rule} -- {SUPPRESSION_REASON}\n"),
                }
            }
        };
        Some(CodeAction {
            title: format!("Suppress {rule} with a reason"),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diagnostic.clone()]),
            edit: Some(WorkspaceEdit {
                changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                ..Default::default()
            }),
            is_preferred: Some(false),
            ..Default::default()
        })
    }

    /// The summary of the retry policy under the cursor: a reference such as
    /// `Retry.transient`, an export of the retry module, or an inline policy at a retry site.
    pub fn hover(&self, file: FileId, text: &str, current: bool, position: Position) -> Option<Hover> {
        let project = &self.outcome.index;
        let analysis = &self.outcome.analysis;
        let index = LineIndex::new(text);
        let offset = index.offset(position);
        if let Some((path, start, end)) = text::path_at(text, offset) {
            let mut segments = path.iter();
            let first = segments.next()?;
            let mut expr = Expr::Ident(first.clone(), Span::default());
            for segment in segments {
                expr = Expr::Member(Box::new(expr), segment.clone(), Span::default());
            }
            if let Resolved::Value {
                file: target,
                name,
                span,
                value,
            } = project.resolve_path(file, &expr)
            {
                let export = analysis.policies(project, target).iter().find(|p| match &p.origin {
                    Origin::Export { binding, .. } | Origin::Named { binding, .. } => *binding == span,
                    Origin::Site { .. } | Origin::Config { .. } => false,
                });
                let summary = match export {
                    Some(policy) => Some(policy.summary.clone()),
                    None if matches!(value, Expr::Function { .. } | Expr::Opaque(_)) => None,
                    None => {
                        let (sched, _) = crate::analysis::effect::evaluate_policy_expr(
                            project,
                            target,
                            value,
                            project.effect_major(target),
                        );
                        (!matches!(sched, Sched::Unknown)).then(|| schedule::summarize(&sched))
                    }
                };
                if let Some(summary) = summary {
                    let line = project.loaded(target)?.position(span.start).0;
                    let title = format!("retry policy `{}`", path.join("."));
                    let place = format!("`{}`, defined at {}:{line}", name, self.display(target));
                    return Some(hover(&title, &place, &summary, index.range(start, end)));
                }
            }
        }
        // An inline policy: only while the analysis has the buffer as it is.
        if !current {
            return None;
        }
        let offset = offset as u32;
        if project.files[file].language == Language::Rust {
            if let Some(found) = self.rust_hover(file, offset, &index) {
                return Some(found);
            }
        }
        analysis.policies(project, file).iter().find_map(|policy| {
            let Origin::Site { callee } = &policy.origin else {
                return None;
            };
            (policy.span.start <= offset && offset <= policy.span.end).then(|| {
                let title = format!("retry policy of `{callee}`");
                let place = format!("`{}`", snippet(&policy.text, 60));
                hover(
                    &title,
                    &place,
                    &policy.summary,
                    index.range(policy.span.start as usize, policy.span.end as usize),
                )
            })
        })
    }

    /// Rust: a site that names a retry-module policy (`.retry(retry::transient())`), or a
    /// policy's own name in the retry module. Rust paths are resolved by the index's crate
    /// paths, not the TypeScript member paths `hover` starts from.
    fn rust_hover(&self, file: FileId, offset: u32, index: &LineIndex) -> Option<Hover> {
        let project = &self.outcome.index;
        let analysis = &self.outcome.analysis;
        let on = |span: Span| span.start <= offset && offset <= span.end;
        let export = |target: FileId, item: Span| {
            analysis
                .policies(project, target)
                .iter()
                .find(|p| matches!(&p.origin, Origin::Export { binding, .. } if *binding == item))
        };
        let facts = project.loaded(file)?;
        for site in &facts.retry_sites {
            let PolicyArg::Rust(rust) = &site.policy else { continue };
            if !on(rust.arg) {
                continue;
            }
            let chain = rust.chain.as_ref()?;
            let (target, item) = crate::analysis::rust::named_policy(project, file, chain)?;
            let policy = export(target, item)?;
            let Origin::Export { name, .. } = &policy.origin else {
                return None;
            };
            let line = project.loaded(target)?.position(policy.span.start).0;
            let written = self.texts.get(&file).and_then(|t| t.get(rust.arg.range()));
            let written = written.map_or_else(|| name.clone(), |w| snippet(w, 60));
            let title = format!("retry policy `{written}`");
            let place = format!("`{name}`, defined at {}:{line}", self.display(target));
            let range = index.range(rust.arg.start as usize, rust.arg.end as usize);
            return Some(hover(&title, &place, &policy.summary, range));
        }
        let policy = analysis
            .policies(project, file)
            .iter()
            .find(|p| matches!(p.origin, Origin::Export { .. }) && on(p.span))?;
        let Origin::Export { name, .. } = &policy.origin else {
            return None;
        };
        let line = facts.position(policy.span.start).0;
        let title = format!("retry policy `{name}`");
        let place = format!("`{name}`, defined at {}:{line}", self.display(file));
        let range = index.range(policy.span.start as usize, policy.span.end as usize);
        Some(hover(&title, &place, &policy.summary, range))
    }

    /// A path for people: relative to the project's config root.
    fn display(&self, file: FileId) -> String {
        let project = &self.outcome.index;
        let absolute = &project.files[file].absolute;
        crate::render::slash_path(project.config.relative(absolute))
    }
}

/// Whether two ranges overlap or touch (a cursor at either end of a finding is on it).
fn touches(a: Range, b: Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

fn hover(title: &str, place: &str, summary: &Summary, range: Range) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: summary_markdown(title, place, summary),
        }),
        range: Some(range),
    }
}

/// A policy's summary, as `retrylint policies` tabulates it.
pub fn summary_markdown(title: &str, place: &str, s: &Summary) -> String {
    let attempts = match s.attempts {
        Attempts::Exact(1) => "1 retry".to_string(),
        Attempts::Exact(n) => format!("{n} retries"),
        Attempts::AtMost(n) => format!("at most {n} retries (a predicate may stop sooner)"),
        Attempts::TimeLimited => "limited by elapsed time only".into(),
        Attempts::Unbounded => "unbounded: never stops by itself".into(),
        Attempts::Unknown => "unknown".into(),
    };
    let gap = match s.gap {
        Gap::Capped(ms) => format_ms(ms),
        Gap::Growing => "none: each gap grows".into(),
        Gap::Unknown => "unknown".into(),
    };
    let jitter = match s.jitter {
        Jitter::Yes => "yes",
        Jitter::No => "no",
        Jitter::Unknown => "unknown",
    };
    const SHOWN: usize = 8;
    let delays = match &s.delays {
        Some(d) if d.is_empty() => "none".to_string(),
        Some(d) => {
            let shown: Vec<String> = d.iter().take(SHOWN).map(|x| format_ms(*x)).collect();
            let more = d.len() > SHOWN || matches!(s.attempts, Attempts::Unbounded | Attempts::TimeLimited);
            format!("{}{}", shown.join(", "), if more { ", …" } else { "" })
        }
        None => "unknown".into(),
    };
    let total = |ms: Option<f64>| match (ms, s.attempts) {
        (Some(ms), _) => format_ms(ms),
        (None, Attempts::Unbounded) => "unbounded".into(),
        (None, _) => "unknown".into(),
    };
    format!(
        "**{title}** · {place}\n\n\
         - attempts: {attempts}\n\
         - gap cap: {gap}\n\
         - jitter: {jitter}\n\
         - nominal delays: {delays}\n\
         - total: {} nominal, {} worst case\n",
        total(s.total_ms),
        total(s.worst_total_ms)
    )
}
