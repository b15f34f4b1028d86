//! `retrylint lsp`: a language server over stdio.
//!
//! Every change checks the workspace it belongs to again, with the open buffers as the overlay
//! (`CheckOptions::overlay`), and publishes diagnostics for every file whose set changed,
//! clearing those that became clean. When only buffers changed (the same files, configs and
//! project files as the last check), the check is incremental ([`crate::check::run_again`]):
//! the last check's first load with the changed buffers loaded again, and the rules only for
//! the files an import index says the change can reach (the edited file, what it imports and
//! every file that imports one of those, through barrels); the other files keep their
//! findings. A config change, a file created or deleted, a changed `package.json` or what the
//! index cannot follow (Rust, a retry module) is a whole check. Changes are coalesced for
//! [`DEBOUNCE`]; a request (a code action, a hover) first brings the analysis up to date.
//!
//! A buffer whose parse has more errors than its last good version (the user is mid-edit) is
//! analysed as that last good version: its facts, its findings and what other files resolve
//! through it stay as they were until it parses again.
//!
//! Robustness: a frame that is not JSON gets a `ParseError` (id `null`), JSON that is no
//! message an `InvalidRequest`, an unknown request `MethodNotFound`, bad parameters
//! `InvalidParams`; unknown notifications are ignored, and a panic in a handler becomes an
//! `InternalError` response.

mod features;
mod text;
mod transport;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{notification, request, Url};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, DiagnosticSeverity, HoverProviderCapability,
    InitializeParams, InitializeResult, MessageType, NumberOrString, OneOf, PublishDiagnosticsParams, SaveOptions,
    ServerCapabilities, ServerInfo, ShowMessageParams, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, WorkspaceFoldersServerCapabilities,
    WorkspaceServerCapabilities,
};
use miette::Report;
use serde_json::Value;

use crate::check::{CheckOptions, Outcome};
use crate::config::{Config, CONFIG_FILE};
use crate::diagnostic::Severity;
use crate::facts::FileFacts;
use crate::index::FileId;
use crate::source::Language;

use text::LineIndex;
use transport::{Incoming, Output};

/// How long changes are coalesced before the workspace is checked again.
const DEBOUNCE: Duration = Duration::from_millis(50);

/// Without a file watcher, how long the files on disk are taken as they were at the last
/// check that looked (a `stat` of every file: 3 µs each here, most of an edit's check in a
/// 5,000-file workspace). A change on disk while the user types shows at most this late.
const DISK_TRUST: Duration = Duration::from_secs(1);

/// Serves the protocol on stdin/stdout until `exit` (or the end of input).
pub fn run_stdio() -> Result<ExitCode, Report> {
    let clean = serve(std::io::stdin(), std::io::stdout());
    Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Serves the protocol on any pair of streams. Returns whether the client shut the server
/// down properly (`shutdown`, then `exit`).
pub fn serve<R: std::io::Read + Send + 'static, W: Write>(input: R, output: W) -> bool {
    let incoming = transport::spawn_reader(input);
    let mut server = Server::new(Output::new(output));
    server.main_loop(incoming)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Uninitialized,
    Running,
    ShuttingDown,
}

/// An open buffer.
struct Document {
    text: String,
    /// The client's version of `text`.
    version: i32,
    /// Canonical path (the key of the analysis); the plain path when the file is not on disk.
    path: Option<PathBuf>,
    language: Option<Language>,
    /// `text` changed since it was last weighed against the last good version. Weighing
    /// takes a parse, so it waits for the end of a burst of changes ([`Document::settle`]),
    /// not each keystroke.
    pending: bool,
    /// The last version whose parse had no more errors than the one before: what is analysed.
    good_text: String,
    /// Its parse errors; `None` until the first version is weighed (it is good whatever it has).
    good_errors: Option<usize>,
    good_version: i32,
}

impl Document {
    fn new(text: String, version: i32, path: Option<PathBuf>, language: Option<Language>) -> Document {
        Document {
            good_text: text.clone(),
            good_errors: None,
            good_version: version,
            pending: language.is_some(),
            text,
            version,
            path,
            language,
        }
    }

    fn update(&mut self, text: String, version: i32) {
        self.text = text;
        self.version = version;
        if self.language.is_some() {
            self.pending = true;
        } else {
            // Nothing is parsed: what the editor has is what there is.
            self.good_text.clone_from(&self.text);
            self.good_version = version;
        }
    }

    /// Weighs the text against the last good version: with no more parse errors, it becomes
    /// the version analysed. TypeScript and Rust are extracted here (the facts carry the
    /// error count), and the facts are returned so the check reuses them instead of parsing
    /// the buffer again.
    fn settle(&mut self) -> Option<Arc<FileFacts>> {
        if !std::mem::take(&mut self.pending) {
            return None;
        }
        let language = self.language?;
        let (errors, facts) = if language.is_script() || language == Language::Rust {
            let facts = Arc::new(crate::workspace::extract_buffer(language, self.text.as_bytes()));
            (facts.syntax_errors, Some(facts))
        } else {
            (text::parse_errors(language, &self.text), None)
        };
        if self.good_errors.is_some_and(|good| errors > good) {
            return None;
        }
        self.good_text.clone_from(&self.text);
        self.good_errors = Some(errors);
        self.good_version = self.version;
        facts
    }

    /// Whether the analysis sees this buffer as it is now.
    fn is_current(&self) -> bool {
        self.good_text == self.text
    }
}

/// Where a workspace's config comes from: the last good one is kept when the file breaks.
enum ConfigSource {
    Defaults(PathBuf),
    File { path: PathBuf, root: PathBuf, text: String },
}

impl ConfigSource {
    fn build(&self) -> Result<Config, Report> {
        match self {
            ConfigSource::Defaults(root) => Ok(Config::defaults(root.clone())),
            ConfigSource::File { path, root, text } => Config::parse(text, path, root.clone(), &crate::rules::names()),
        }
    }
}

/// A report as plain text, as an editor shows a message (no miette box art): `file:line:col:
/// message` at its first label, then `help: …`.
fn plain_report(report: &Report) -> String {
    let diagnostic: &dyn miette::Diagnostic = report.as_ref();
    let mut text = String::new();
    let label = diagnostic.labels().and_then(|mut labels| labels.next());
    if let (Some(source), Some(label)) = (diagnostic.source_code(), label) {
        if let Ok(contents) = source.read_span(label.inner(), 0, 0) {
            if let Some(name) = contents.name() {
                text.push_str(&format!("{name}:{}:{}: ", contents.line() + 1, contents.column() + 1));
            }
        }
    }
    text.push_str(&report.to_string());
    if let Some(help) = diagnostic.help() {
        text.push_str(&format!("\nhelp: {help}"));
    }
    text
}

/// A broken config: where, its text, and the report.
struct ConfigError {
    path: PathBuf,
    text: String,
    report: Report,
}

/// Finds and reads the config for `start` as `retrylint check` does (the front door's
/// [`crate::workspace::locate`]): the project root's `retrylint.toml` (the top of a chain of
/// package configs that `extend` one above), else the defaults rooted at the project root.
fn find_config(start: &Path) -> Result<ConfigSource, Box<ConfigError>> {
    let located = crate::workspace::locate(start).ok();
    match located.as_ref().and_then(|l| l.config.clone()) {
        Some(path) => {
            let boundary = crate::config::config_boundary(&path);
            let text = crate::config::read_config(&path, Some(&boundary)).map_err(|e| {
                Box::new(ConfigError {
                    report: miette::miette!("cannot read config {}: {e}", path.display()),
                    path: path.clone(),
                    text: String::new(),
                })
            })?;
            let root = path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("/"));
            match Config::parse(&text, &path, root.clone(), &crate::rules::names()) {
                Ok(_) => Ok(ConfigSource::File { path, root, text }),
                Err(report) => Err(Box::new(ConfigError { path, text, report })),
            }
        }
        None => {
            let root = match located {
                Some(located) => located.root,
                None if start.is_dir() => start.to_path_buf(),
                None => start
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| start.to_path_buf()),
            };
            Ok(ConfigSource::Defaults(root))
        }
    }
}

/// The root a workspace folder is analysed from: its project's, as `retrylint check FOLDER`
/// finds it (a package folder whose config `extend`s its monorepo's is analysed with the
/// monorepo, and reported on as the command line reports on it).
fn project_root_of(folder: &Path) -> PathBuf {
    crate::workspace::locate(folder).map_or_else(|_| folder.to_path_buf(), |located| located.root)
}

/// One analysed root: a workspace folder, or the project around a file opened outside them.
struct Folder {
    root: PathBuf,
    paths: Vec<PathBuf>,
    /// The buffer this workspace was made for, when it is not a workspace folder.
    lone: Option<Url>,
    /// The workspace folders it serves (none for a lone buffer's). Folders below the project
    /// root are reported on as `retrylint check FOLDER` reports: their files' findings (and
    /// those of open buffers), with the rest of the project analysed as their context.
    folders: Vec<PathBuf>,
    config: ConfigSource,
    dirty: bool,
    analysis: Option<features::Analysis>,
    /// What the last check found, per document.
    diagnostics: HashMap<Url, Vec<lsp_types::Diagnostic>>,
    /// Facts of every file, kept between checks: an edit re-extracts the edited buffer only.
    cache: Arc<crate::cache::FactsCache>,
    /// The front door's workspace: the configs and the discovered files, kept until a file is
    /// created or removed, or the config changes.
    front: Option<crate::workspace::Workspace>,
    /// What was read beside the sources (`package.json`, lock files, `tsconfig.json`), kept
    /// until one of them may have changed: reading them took most of a check.
    project: Arc<crate::index::ProjectFiles>,
    /// When a check last looked at every file on disk (see [`DISK_TRUST`]); `None` after a
    /// save or a change the client reported, so the next check looks.
    disk_seen: Option<Instant>,
    /// The open buffers (path, language) the last check read: with the same ones, the same
    /// discovery and project files, the next check is incremental
    /// ([`crate::check::run_again`]).
    open: Vec<(PathBuf, Option<Language>)>,
    /// The hash of each open buffer's text the last check read.
    texts: HashMap<PathBuf, u64>,
    /// Files the client's watcher said changed on disk since the last check.
    disk_changed: Vec<PathBuf>,
}

impl Folder {
    fn contains(&self, path: &Path) -> bool {
        path.starts_with(&self.root) || self.paths.iter().any(|p| p == path)
    }
}

struct Server<W: Write> {
    out: Output<W>,
    phase: Phase,
    workspaces: Vec<Folder>,
    docs: HashMap<Url, Document>,
    /// What the client was last sent, per document.
    published: HashMap<Url, Vec<lsp_types::Diagnostic>>,
    /// Documents to publish even when unchanged (just opened).
    force_publish: HashSet<Url>,
    /// Errors of config files, shown on the file itself.
    config_diagnostics: HashMap<Url, Vec<lsp_types::Diagnostic>>,
    /// When the oldest unchecked change came in.
    dirty_since: Option<Instant>,
    watch_files: bool,
    /// The request that asked the client to watch files, until it answers.
    watch_request: Option<RequestId>,
    /// The client watches files for the server (it accepted the registration): the facts
    /// cache is told of every change, so it is trusted without a `stat` per file per check.
    watching: bool,
    next_request: i32,
}

impl<W: Write> Server<W> {
    fn new(out: Output<W>) -> Server<W> {
        Server {
            out,
            phase: Phase::Uninitialized,
            workspaces: Vec::new(),
            docs: HashMap::new(),
            published: HashMap::new(),
            force_publish: HashSet::new(),
            config_diagnostics: HashMap::new(),
            dirty_since: None,
            watch_files: false,
            watch_request: None,
            watching: false,
            next_request: 0,
        }
    }

    fn main_loop(&mut self, incoming: Receiver<Incoming>) -> bool {
        loop {
            let next = match self.dirty_since {
                Some(since) => {
                    let wait = (since + DEBOUNCE).saturating_duration_since(Instant::now());
                    match incoming.recv_timeout(wait) {
                        Ok(next) => next,
                        Err(RecvTimeoutError::Timeout) => {
                            self.guarded_flush();
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => return false,
                    }
                }
                None => match incoming.recv() {
                    Ok(next) => next,
                    Err(_) => return false,
                },
            };
            match next {
                Incoming::Invalid { id, code, message } => {
                    self.log(&format!("bad message: {message}"));
                    let _ = self.out.send_error(id, code, &message);
                }
                Incoming::Ignored(message) => self.log(&format!("ignored message: {message}")),
                Incoming::Message(Message::Request(request)) => self.on_request(request),
                Incoming::Message(Message::Response(response)) => {
                    if self.watch_request.as_ref() == Some(&response.id) {
                        self.watch_request = None;
                        self.watching = response.error.is_none();
                    }
                }
                Incoming::Message(Message::Notification(notification)) => {
                    if notification.method == notification::Exit::METHOD {
                        return self.phase == Phase::ShuttingDown;
                    }
                    self.on_notification(notification);
                }
            }
        }
    }

    fn send(&mut self, message: impl Into<Message>) {
        // A client that went away is noticed by the reader (end of input).
        let _ = self.out.send(message.into());
    }

    fn notify<N: lsp_types::notification::Notification>(&mut self, params: N::Params) {
        self.send(Notification::new(N::METHOD.to_string(), params));
    }

    fn log(&mut self, message: &str) {
        if self.phase != Phase::Uninitialized {
            self.notify::<notification::LogMessage>(lsp_types::LogMessageParams {
                typ: MessageType::LOG,
                message: format!("retrylint: {message}"),
            });
        }
    }

    fn show(&mut self, typ: MessageType, message: String) {
        self.notify::<notification::ShowMessage>(ShowMessageParams { typ, message });
    }

    fn on_request(&mut self, request: Request) {
        let id = request.id.clone();
        match self.phase {
            Phase::Uninitialized if request.method != request::Initialize::METHOD => {
                return self.send(Response::new_err(
                    id,
                    ErrorCode::ServerNotInitialized as i32,
                    "the server is not initialized yet".into(),
                ));
            }
            Phase::Running | Phase::ShuttingDown if request.method == request::Initialize::METHOD => {
                return self.send(Response::new_err(
                    id,
                    ErrorCode::InvalidRequest as i32,
                    "the server is already initialized".into(),
                ));
            }
            Phase::ShuttingDown => {
                return self.send(Response::new_err(
                    id,
                    ErrorCode::InvalidRequest as i32,
                    "the server is shutting down".into(),
                ));
            }
            _ => {}
        }
        let method = request.method.clone();
        // Every answer sees the buffers as they are now.
        if self.phase == Phase::Running {
            self.guarded_flush();
        }
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.dispatch(request)));
        let response = match outcome {
            Ok(Ok(result)) => Response::new_ok(id, result),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(_) => {
                self.log(&format!("internal error while answering {method}; please report it"));
                Response::new_err(
                    id,
                    ErrorCode::InternalError as i32,
                    format!("retrylint failed while answering {method} (internal error)"),
                )
            }
        };
        self.send(response);
    }

    fn dispatch(&mut self, request: Request) -> Result<Value, (ErrorCode, String)> {
        fn params<P: serde::de::DeserializeOwned>(request: Request) -> Result<P, (ErrorCode, String)> {
            serde_json::from_value(request.params).map_err(|e| {
                (
                    ErrorCode::InvalidParams,
                    format!("invalid params for {}: {e}", request.method),
                )
            })
        }
        let json =
            |value: Result<Value, serde_json::Error>| value.map_err(|e| (ErrorCode::InternalError, e.to_string()));
        match request.method.as_str() {
            request::Initialize::METHOD => {
                let params: InitializeParams = params(request)?;
                json(serde_json::to_value(self.initialize(params)))
            }
            request::Shutdown::METHOD => {
                self.phase = Phase::ShuttingDown;
                Ok(Value::Null)
            }
            request::HoverRequest::METHOD => {
                let params: lsp_types::HoverParams = params(request)?;
                json(serde_json::to_value(self.hover(params)))
            }
            request::CodeActionRequest::METHOD => {
                let params: lsp_types::CodeActionParams = params(request)?;
                json(serde_json::to_value(self.code_actions(params)))
            }
            method => Err((ErrorCode::MethodNotFound, format!("unknown method `{method}`"))),
        }
    }

    fn on_notification(&mut self, notification: Notification) {
        if self.phase == Phase::Uninitialized {
            // Before `initialize`, notifications other than `exit` are dropped.
            return;
        }
        let method = notification.method.clone();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.handle_notification(notification)));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(message)) => self.log(&message),
            Err(_) => self.log(&format!("internal error while handling {method}; please report it")),
        }
    }

    fn handle_notification(&mut self, notification: Notification) -> Result<(), String> {
        fn params<P: serde::de::DeserializeOwned>(notification: Notification) -> Result<P, String> {
            serde_json::from_value(notification.params)
                .map_err(|e| format!("invalid params for {}: {e}", notification.method))
        }
        match notification.method.as_str() {
            notification::Initialized::METHOD => {
                self.register_watchers();
                self.workspaces.iter_mut().for_each(|w| w.dirty = true);
                self.flush();
            }
            notification::DidOpenTextDocument::METHOD => {
                let params: lsp_types::DidOpenTextDocumentParams = params(notification)?;
                let document = params.text_document;
                self.did_open(document.uri, document.text, document.version);
            }
            notification::DidChangeTextDocument::METHOD => {
                let params: lsp_types::DidChangeTextDocumentParams = params(notification)?;
                let uri = params.text_document.uri;
                let Some(doc) = self.docs.get_mut(&uri) else {
                    return Err(format!("didChange for {uri}, which is not open"));
                };
                let mut text = std::mem::take(&mut doc.text);
                text::apply_changes(&mut text, params.content_changes);
                doc.update(text, params.text_document.version);
                let path = doc.path.clone();
                self.touch(path.as_deref());
            }
            notification::DidSaveTextDocument::METHOD => {
                let params: lsp_types::DidSaveTextDocumentParams = params(notification)?;
                if is_config(&params.text_document.uri) {
                    self.reload_configs();
                } else if let Ok(path) = params.text_document.uri.to_file_path() {
                    let path = canonical(&path);
                    // A save is a moment the disk changed: the next check looks at it.
                    for workspace in self.workspaces.iter_mut().filter(|w| w.contains(&path)) {
                        workspace.disk_seen = None;
                    }
                    if is_project_file(&path) {
                        for workspace in self.workspaces.iter_mut().filter(|w| w.contains(&path)) {
                            workspace.project = Arc::default();
                        }
                        self.touch(Some(&path));
                    }
                }
            }
            notification::DidCloseTextDocument::METHOD => {
                let params: lsp_types::DidCloseTextDocumentParams = params(notification)?;
                self.did_close(params.text_document.uri);
            }
            notification::DidChangeWatchedFiles::METHOD => {
                let params: lsp_types::DidChangeWatchedFilesParams = params(notification)?;
                let mut config = false;
                for change in params.changes {
                    if is_config(&change.uri) {
                        config = true;
                    } else if let Ok(path) = change.uri.to_file_path() {
                        let path = canonical(&path);
                        let came_or_went = change.typ != lsp_types::FileChangeType::CHANGED;
                        let project_file = is_project_file(&path);
                        for workspace in self.workspaces.iter_mut().filter(|w| w.contains(&path)) {
                            if came_or_went {
                                // Discover again.
                                workspace.front = None;
                            }
                            if came_or_went || project_file {
                                // A package.json, lock file or tsconfig.json may be another.
                                workspace.project = Arc::default();
                            }
                            // The watcher's word is taken over the file's size and time.
                            workspace.cache.forget(&path);
                            workspace.disk_changed.push(path.clone());
                        }
                        self.touch(Some(&path));
                    }
                }
                if config {
                    self.reload_configs();
                }
            }
            notification::DidChangeWorkspaceFolders::METHOD => {
                let params: lsp_types::DidChangeWorkspaceFoldersParams = params(notification)?;
                for removed in params.event.removed {
                    if let Ok(path) = removed.uri.to_file_path() {
                        let folder = canonical(&path);
                        for workspace in self.workspaces.iter_mut() {
                            workspace.folders.retain(|f| *f != folder);
                            workspace.dirty = true;
                        }
                        self.workspaces.retain(|w| w.lone.is_some() || !w.folders.is_empty());
                    }
                }
                for added in params.event.added {
                    if let Ok(path) = added.uri.to_file_path() {
                        self.add_folder(canonical(&path));
                    }
                }
                self.dirty_since.get_or_insert_with(Instant::now);
                if self.workspaces.iter().all(|w| !w.dirty) {
                    // Only removals: publish what is left (and clear what went away).
                    self.publish();
                }
            }
            // `$/cancelRequest`, `$/setTrace`, `workspace/didChangeConfiguration`, and any
            // notification this server does not know: nothing to do.
            _ => {}
        }
        Ok(())
    }

    fn initialize(&mut self, params: InitializeParams) -> InitializeResult {
        self.watch_files = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|w| w.dynamic_registration)
            .unwrap_or(false);
        #[allow(deprecated)] // `rootPath` is what old clients send.
        let roots: Vec<PathBuf> = match (&params.workspace_folders, &params.root_uri, &params.root_path) {
            (Some(folders), _, _) if !folders.is_empty() => {
                folders.iter().filter_map(|f| f.uri.to_file_path().ok()).collect()
            }
            (_, Some(uri), _) => uri.to_file_path().ok().into_iter().collect(),
            (_, _, Some(path)) => vec![PathBuf::from(path)],
            _ => Vec::new(),
        };
        self.phase = Phase::Running;
        for root in roots {
            self.add_folder(canonical(&root));
        }
        InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                        include_text: Some(false),
                    })),
                    ..Default::default()
                })),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::new(features::FIX_ALL)]),
                    resolve_provider: Some(false),
                    ..Default::default()
                })),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "retrylint".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        }
    }

    /// Asks the client to report changes to configs and sources made outside the editor.
    fn register_watchers(&mut self) {
        if !self.watch_files {
            return;
        }
        let watchers = WATCHED
            .iter()
            .map(|glob| glob.to_string())
            .chain([format!("**/{CONFIG_FILE}")])
            .map(|glob| lsp_types::FileSystemWatcher {
                glob_pattern: lsp_types::GlobPattern::String(glob),
                kind: None,
            })
            .collect();
        let options = lsp_types::DidChangeWatchedFilesRegistrationOptions { watchers };
        let params = lsp_types::RegistrationParams {
            registrations: vec![lsp_types::Registration {
                id: "retrylint-watched-files".into(),
                method: notification::DidChangeWatchedFiles::METHOD.into(),
                register_options: serde_json::to_value(options).ok(),
            }],
        };
        self.next_request += 1;
        let id = RequestId::from(format!("retrylint-{}", self.next_request));
        self.watch_request = Some(id.clone());
        self.send(Request::new(id, request::RegisterCapability::METHOD.into(), params));
    }

    /// Adds a workspace folder, analysed from its project root; a folder whose project another
    /// workspace analyses already is served by it.
    fn add_folder(&mut self, folder: PathBuf) {
        let root = project_root_of(&folder);
        if let Some(covering) = self
            .workspaces
            .iter_mut()
            .find(|w| w.lone.is_none() && root.starts_with(&w.root))
        {
            if !covering.folders.contains(&folder) {
                covering.folders.push(folder);
                covering.dirty = true;
                self.dirty_since.get_or_insert_with(Instant::now);
            }
            return;
        }
        let mut folders = vec![folder];
        for inside in self
            .workspaces
            .iter()
            .filter(|w| w.lone.is_none() && w.root.starts_with(&root))
        {
            folders.extend(inside.folders.iter().cloned());
        }
        self.workspaces
            .retain(|w| !(w.lone.is_none() && w.root.starts_with(&root)));
        let mut workspace = self.new_workspace(root.clone(), vec![root], None);
        workspace.folders = folders;
        self.workspaces.push(workspace);
        self.dirty_since.get_or_insert_with(Instant::now);
    }

    fn new_workspace(&mut self, root: PathBuf, paths: Vec<PathBuf>, lone: Option<Url>) -> Folder {
        let start = paths.first().cloned().unwrap_or_else(|| root.clone());
        let config = match find_config(&start) {
            Ok(config) => config,
            Err(error) => {
                self.config_failed(&error, "using the defaults");
                ConfigSource::Defaults(root.clone())
            }
        };
        Folder {
            root,
            paths,
            lone,
            folders: Vec::new(),
            config,
            dirty: true,
            analysis: None,
            diagnostics: HashMap::new(),
            cache: Arc::new(crate::cache::FactsCache::in_memory()),
            front: None,
            project: Arc::default(),
            disk_seen: None,
            open: Vec::new(),
            texts: HashMap::new(),
            disk_changed: Vec::new(),
        }
    }

    /// Tells the user about a broken config, and shows its errors on the file itself.
    fn config_failed(&mut self, error: &ConfigError, fallback: &str) {
        let diagnostic: &dyn miette::Diagnostic = error.report.as_ref();
        let index = LineIndex::new(&error.text);
        self.show(
            MessageType::ERROR,
            format!(
                "retrylint: {} is invalid, {fallback}:\n{}",
                crate::source::printable::path(&error.path),
                plain_report(&error.report)
            ),
        );
        let Ok(uri) = Url::from_file_path(&error.path) else {
            return;
        };
        let mut found: Vec<lsp_types::Diagnostic> = diagnostic
            .labels()
            .into_iter()
            .flatten()
            .map(|label| lsp_types::Diagnostic {
                range: index.range(label.offset(), label.offset() + label.len()),
                severity: Some(DiagnosticSeverity::ERROR),
                code: Some(NumberOrString::String("config".into())),
                source: Some("retrylint".into()),
                message: match diagnostic.help() {
                    Some(help) => format!("{}\nhelp: {help}", error.report),
                    None => error.report.to_string(),
                },
                ..Default::default()
            })
            .collect();
        if found.is_empty() {
            found.push(lsp_types::Diagnostic {
                range: index.range(0, 0),
                severity: Some(DiagnosticSeverity::ERROR),
                code: Some(NumberOrString::String("config".into())),
                source: Some("retrylint".into()),
                message: error.report.to_string(),
                ..Default::default()
            });
        }
        self.config_diagnostics.insert(uri, found);
    }

    /// Reads every workspace's config again; a broken one keeps the last good config.
    fn reload_configs(&mut self) {
        self.config_diagnostics.clear();
        for index in 0..self.workspaces.len() {
            let start = self.workspaces[index].paths.first().cloned();
            let start = start.unwrap_or_else(|| self.workspaces[index].root.clone());
            match find_config(&start) {
                Ok(config) => self.workspaces[index].config = config,
                Err(error) => self.config_failed(&error, "keeping the last good config"),
            }
            self.workspaces[index].dirty = true;
            // Include and exclude globs may have changed.
            self.workspaces[index].front = None;
            self.workspaces[index].project = Arc::default();
        }
        self.dirty_since.get_or_insert_with(Instant::now);
        if self.workspaces.is_empty() {
            self.publish();
        }
    }

    fn did_open(&mut self, uri: Url, text: String, version: i32) {
        let path = uri.to_file_path().ok().map(|p| canonical(&p));
        let language = path.as_deref().and_then(Language::from_path);
        self.docs
            .insert(uri.clone(), Document::new(text, version, path.clone(), language));
        self.force_publish.insert(uri.clone());
        let Some(path) = path else { return };
        if language.is_none() {
            return;
        }
        if !self.workspaces.iter().any(|w| w.contains(&path)) {
            // A file outside every folder: the project of its config, or the file alone.
            let located = crate::workspace::locate(&path).ok();
            let (root, paths) = match located.filter(|l| l.config.is_some()).map(|l| l.root) {
                Some(root) => (root.clone(), vec![root]),
                // Rooted at the file itself, so that it holds no other buffer.
                None => (path.clone(), vec![path.clone()]),
            };
            let workspace = self.new_workspace(root, paths, Some(uri));
            self.workspaces.push(workspace);
        }
        if !path.exists() {
            // A buffer not on disk joins the file list: its directory may be a package (or
            // hold a tsconfig.json) that no file showed before.
            for workspace in self.workspaces.iter_mut().filter(|w| w.contains(&path)) {
                workspace.project = Arc::default();
            }
        }
        self.touch(Some(&path));
    }

    fn did_close(&mut self, uri: Url) {
        let Some(doc) = self.docs.remove(&uri) else { return };
        let before = self.workspaces.len();
        self.workspaces.retain(|w| w.lone.as_ref() != Some(&uri));
        self.touch(doc.path.as_deref());
        if self.workspaces.len() != before {
            self.dirty_since.get_or_insert_with(Instant::now);
        }
    }

    /// Marks the workspaces holding `path` for a check.
    fn touch(&mut self, path: Option<&Path>) {
        let Some(path) = path else { return };
        let mut any = false;
        for workspace in self.workspaces.iter_mut().filter(|w| w.contains(path)) {
            workspace.dirty = true;
            any = true;
        }
        if any {
            self.dirty_since.get_or_insert_with(Instant::now);
        }
    }

    fn guarded_flush(&mut self) {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.flush()));
        if outcome.is_err() {
            self.dirty_since = None;
            self.workspaces.iter_mut().for_each(|w| w.dirty = false);
            self.log("internal error while checking; please report it");
        }
    }

    /// Checks every workspace with unchecked changes and publishes what changed.
    fn flush(&mut self) {
        let pending = self.dirty_since.take().is_some();
        if !pending && self.workspaces.iter().all(|w| !w.dirty) {
            return;
        }
        self.settle_documents();
        for index in 0..self.workspaces.len() {
            if self.workspaces[index].dirty {
                self.check(index);
            }
        }
        self.publish();
    }

    /// Weighs every buffer changed since the last check (see [`Document::settle`]); the facts
    /// of a buffer taken as good go into the caches of the workspaces holding it, where the
    /// check finds them by the text's hash: an edit is parsed once, not twice.
    fn settle_documents(&mut self) {
        for doc in self.docs.values_mut().filter(|d| d.pending) {
            let Some(facts) = doc.settle() else { continue };
            let Some(path) = &doc.path else { continue };
            let text: Arc<[u8]> = doc.good_text.as_bytes().into();
            let hash = crate::cache::content_hash(&text);
            for workspace in self.workspaces.iter().filter(|w| w.contains(path)) {
                let verdict = crate::cache::Verdict::Extracted {
                    facts: facts.clone(),
                    text: Some(text.clone()),
                    generated: false,
                };
                workspace.cache.store(path, None, hash, verdict);
            }
        }
    }

    fn check(&mut self, index: usize) {
        let started = Instant::now();
        let workspace = &mut self.workspaces[index];
        workspace.dirty = false;
        let config = workspace.config.build().unwrap_or_else(|_| {
            let dir = if workspace.root.is_dir() {
                workspace.root.as_path()
            } else {
                workspace.root.parent().unwrap_or(&workspace.root)
            };
            Config::defaults(dir.to_path_buf())
        });
        let mut options = CheckOptions::new(workspace.paths.clone());
        options.keep = true;
        // Without a watcher, the disk is looked at again once it may have changed unseen.
        let recently_seen = workspace.disk_seen.is_some_and(|seen| seen.elapsed() < DISK_TRUST);
        let trust_cache = self.watching || recently_seen;
        if !recently_seen {
            workspace.disk_seen = Some(Instant::now());
        }
        // The open buffers of this workspace, and what changed in them since the last check.
        let mut uris: HashMap<PathBuf, Url> = HashMap::new();
        let mut open: Vec<(PathBuf, Option<Language>)> = Vec::new();
        let mut texts: HashMap<PathBuf, u64> = HashMap::new();
        for (uri, doc) in &self.docs {
            let Some(path) = &doc.path else { continue };
            if workspace.contains(path) {
                let text: Arc<[u8]> = doc.good_text.as_bytes().into();
                texts.insert(path.clone(), crate::source::fnv1a64(&text));
                options.overlay.insert(path.clone(), text);
                uris.insert(path.clone(), uri.clone());
                open.push((path.clone(), doc.language));
            }
        }
        open.sort_by(|a, b| a.0.cmp(&b.0));
        let changed: Vec<PathBuf> = texts
            .iter()
            .filter(|(path, hash)| workspace.texts.get(*path) != Some(hash))
            .map(|(path, _)| path.clone())
            .chain(workspace.texts.keys().filter(|p| !texts.contains_key(*p)).cloned())
            .chain(std::mem::take(&mut workspace.disk_changed))
            .collect();
        // Folders below the project root: their findings and the open buffers'.
        let only: Option<Vec<PathBuf>> = (!workspace.folders.is_empty()
            && !workspace.folders.contains(&workspace.root))
        .then(|| workspace.folders.iter().chain(uris.keys()).cloned().collect());
        // The same files as last time (nothing discovered again, the same buffers open, the
        // same project files): only what the changes reach is checked again.
        let same_files = workspace.front.is_some() && workspace.open == open;
        let previous = workspace
            .analysis
            .take_if(|_| same_files)
            .map(|analysis| analysis.outcome);
        workspace.open = open;
        workspace.texts = texts;
        let mut package_error = None;
        let (result, notes) = match previous {
            Some(previous) => {
                let front = workspace.front.as_mut().expect("kept");
                front.cache = Some(workspace.cache.clone());
                front.project = Some(workspace.project.clone());
                front.trust_cache = trust_cache;
                let front = &*front;
                let mut notes = front.discovery.notes.clone();
                notes.extend(front.tests_note(shown_root(&config)));
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    match front.check_again(previous, &changed, &options) {
                        Ok(outcome) => outcome,
                        // Nothing to start from: the whole check.
                        Err(_) => front.check_files(workspace_files(front, &options, &uris), &options),
                    }
                }));
                (result, notes)
            }
            None => {
                // Package configs (a `retrylint.toml` below the workspace's) apply to their
                // files, as they do on the command line.
                let mut found = config.clone();
                found.discovered = true;
                let mut front = match workspace.front.take() {
                    Some(front) => front,
                    // A buffer not saved yet has nothing on disk to discover (it is added below).
                    None if workspace.paths.iter().all(|p| !p.exists()) => crate::workspace::Workspace::new(found),
                    None => match crate::workspace::Workspace::discover(found, &workspace.paths) {
                        Ok(front) => front,
                        Err(report) => {
                            // A broken package config: said, and its files judged by the workspace's.
                            package_error = Some(format!(
                                "retrylint: a package config in {} is invalid, using the workspace's config for its files:\n{}",
                                crate::source::printable::path(&workspace.root),
                                plain_report(&report)
                            ));
                            match crate::workspace::Workspace::discover(config.clone(), &workspace.paths) {
                                Ok(front) => front,
                                Err(report) => {
                                    let message = format!("cannot check {}: {report}", workspace.root.display());
                                    workspace.open.clear();
                                    self.log(&message);
                                    return;
                                }
                            }
                        }
                    },
                };
                front.cache = Some(workspace.cache.clone());
                front.project = Some(workspace.project.clone());
                front.trust_cache = trust_cache;
                let files = workspace_files(&front, &options, &uris);
                let mut notes = front.discovery.notes.clone();
                notes.extend(front.tests_note(shown_root(&config)));
                let result =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| front.check_files(files, &options)));
                workspace.front = Some(front);
                (result, notes)
            }
        };
        if let Some(message) = package_error {
            self.show(MessageType::ERROR, message);
        }
        let workspace = &mut self.workspaces[index];
        let outcome: Outcome = match result {
            Ok(mut outcome) => {
                outcome.notes.extend(notes);
                if let Some(only) = &only {
                    crate::check::keep_within(&mut outcome, only);
                }
                outcome
            }
            Err(_) => {
                // Nothing is known to start from: the next check is a whole one.
                workspace.open.clear();
                let message = format!(
                    "internal error while checking {}; please report it",
                    workspace.root.display()
                );
                self.log(&message);
                return;
            }
        };
        let analysis = features::Analysis::new(outcome, &uris);
        workspace.diagnostics = analysis.published();
        let message = format!(
            "checked {} ({} files, {} findings, rules run on {}) in {} ms",
            workspace.root.display(),
            analysis.outcome.files,
            analysis.outcome.diagnostics.len(),
            analysis.outcome.rechecked,
            started.elapsed().as_millis()
        );
        workspace.analysis = Some(analysis);
        self.log(&message);
    }

    /// Sends `publishDiagnostics` for every document whose findings changed since last sent.
    fn publish(&mut self) {
        let mut all: HashMap<Url, Vec<lsp_types::Diagnostic>> = HashMap::new();
        for workspace in &self.workspaces {
            for (uri, found) in &workspace.diagnostics {
                all.entry(uri.clone()).or_default().extend(found.iter().cloned());
            }
        }
        for (uri, found) in &self.config_diagnostics {
            all.entry(uri.clone()).or_default().extend(found.iter().cloned());
        }
        let mut uris: Vec<Url> = all
            .keys()
            .chain(self.published.keys())
            .chain(self.force_publish.iter().filter(|u| self.docs.contains_key(*u)))
            .cloned()
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        uris.sort();
        for uri in uris {
            let found = all.remove(&uri).unwrap_or_default();
            let forced = self.force_publish.contains(&uri) && self.docs.contains_key(&uri);
            let before = self.published.get(&uri).map_or(&[][..], Vec::as_slice);
            if before == found.as_slice() && !forced {
                continue;
            }
            if found.is_empty() {
                self.published.remove(&uri);
            } else {
                self.published.insert(uri.clone(), found.clone());
            }
            // Versioned: the findings are of the text last analysed, which a client can tell
            // from what it has now.
            let version = self.docs.get(&uri).map(|d| d.good_version);
            self.notify::<notification::PublishDiagnostics>(PublishDiagnosticsParams {
                uri,
                diagnostics: found,
                version,
            });
        }
        self.force_publish.clear();
    }

    /// The workspace analysing `path`, and the path's file there.
    fn analysis_of(&self, uri: &Url) -> Option<(&Document, &features::Analysis, FileId)> {
        let doc = self.docs.get(uri)?;
        let path = doc.path.as_ref()?;
        self.workspaces.iter().filter(|w| w.contains(path)).find_map(|w| {
            let analysis = w.analysis.as_ref()?;
            let file = analysis.file(path)?;
            Some((doc, analysis, file))
        })
    }

    fn hover(&self, params: lsp_types::HoverParams) -> Option<lsp_types::Hover> {
        let position = params.text_document_position_params;
        let (doc, analysis, file) = self.analysis_of(&position.text_document.uri)?;
        analysis.hover(file, &doc.text, doc.is_current(), position.position)
    }

    fn code_actions(&self, params: lsp_types::CodeActionParams) -> Vec<lsp_types::CodeActionOrCommand> {
        // A kind is wanted when it is asked for, or under a kind asked for (`source` covers
        // `source.fixAll.retrylint`). Without `only`, quick fixes: the fix-all is a source
        // action, which clients ask for by kind (on save, or from a menu).
        let wanted = |kind: &str| match &params.context.only {
            None => kind == CodeActionKind::QUICKFIX.as_str(),
            Some(only) => only
                .iter()
                .any(|k| kind == k.as_str() || kind.starts_with(&format!("{}.", k.as_str()))),
        };
        let Some((_, analysis, file)) = self.analysis_of(&params.text_document.uri) else {
            return Vec::new();
        };
        // Edits are only offered on files the analysis sees as the editor has them.
        let current = |path: &Path| {
            self.docs
                .values()
                .filter(|d| d.path.as_deref() == Some(path))
                .all(Document::is_current)
        };
        let mut actions = Vec::new();
        if wanted(CodeActionKind::QUICKFIX.as_str()) {
            actions = analysis.code_actions(file, params.range, &current);
        }
        if wanted(features::FIX_ALL) {
            actions.extend(
                analysis
                    .fix_all(file, &current)
                    .map(lsp_types::CodeActionOrCommand::CodeAction),
            );
        }
        actions
    }
}

/// The files a workspace's check reads: those discovered, and every open buffer of the
/// workspace that discovery did not find (one not saved yet is analysed as if it were on
/// disk), in path order.
fn workspace_files(
    front: &crate::workspace::Workspace,
    options: &CheckOptions,
    uris: &HashMap<PathBuf, Url>,
) -> Vec<crate::source::SourceFile> {
    let mut files = front.discovery.files.clone();
    let mut paths: Vec<&PathBuf> = uris.keys().filter(|p| options.overlay.contains_key(*p)).collect();
    paths.sort();
    for path in paths {
        if let (Some(language), false) = (Language::from_path(path), files.iter().any(|f| &f.absolute == path)) {
            let shown = std::env::current_dir()
                .map(|cwd| crate::source::display_path(&cwd, path))
                .unwrap_or_else(|_| path.clone());
            files.push(crate::source::SourceFile {
                path: shown,
                absolute: path.clone(),
                language,
            });
        }
    }
    files.sort_by(|a, b| a.absolute.cmp(&b.absolute));
    files
}

/// The project root as notes name it (relative to the working directory).
fn shown_root(config: &Config) -> PathBuf {
    std::env::current_dir()
        .map(|cwd| crate::source::display_path(&cwd, &config.root))
        .unwrap_or_else(|_| config.root.clone())
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| crate::source::normalize(path))
}

/// What the client is asked to watch besides the config: every file retrylint reads (the
/// sources of every language, Rust's included), and the files read beside them
/// ([`is_project_file`]).
const WATCHED: &[&str] = &[
    "**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs,svelte,vue,rs,sql,json,yaml,yml}",
    "**/{bun.lock,yarn.lock,wrangler.toml}",
];

/// Whether `path` may be a file the index reads beside the sources (`package.json`, a lock
/// file, `tsconfig.json`, `wrangler.toml`, `pnpm-workspace.yaml`): anything but code.
fn is_project_file(path: &Path) -> bool {
    matches!(
        Language::from_path(path),
        None | Some(Language::Json) | Some(Language::Yaml)
    )
}

fn is_config(uri: &Url) -> bool {
    uri.path().rsplit('/').next() == Some(CONFIG_FILE)
}

fn severity(severity: Severity) -> DiagnosticSeverity {
    match severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Off => DiagnosticSeverity::HINT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_is_weighed_once_per_burst_and_its_facts_handed_on() {
        let good = "import { Effect } from \"effect\"\nexport const a = Effect.succeed(1)\n";
        let mut doc = Document::new(
            good.into(),
            1,
            Some(PathBuf::from("/p/a.ts")),
            Some(Language::TypeScript),
        );
        let facts = doc.settle().expect("the first version is extracted");
        assert_eq!(facts.syntax_errors, 0);
        assert!(facts.imports.iter().any(|i| i.written_source() == "effect"));
        assert!(doc.settle().is_none(), "nothing changed since");

        // A burst of keystrokes parses nothing until it is settled, once.
        let broken = good.replace("succeed(1)", "succeed((1");
        doc.update(broken.clone(), 2);
        doc.update(format!("{broken} +"), 3);
        assert!(doc.pending && doc.good_version == 1);
        assert!(doc.settle().is_none(), "more errors: the last good version stays");
        assert_eq!((doc.good_text.as_str(), doc.good_version), (good, 1));
        assert!(!doc.is_current());

        doc.update(good.replace("1)", "2)"), 4);
        let facts = doc.settle().expect("parses again");
        assert_eq!(facts.syntax_errors, 0);
        assert_eq!(doc.good_version, 4);
        assert!(doc.is_current());
    }

    #[test]
    fn project_files_are_those_the_index_reads_beside_code() {
        for (path, project) in [
            ("/p/package.json", true),
            ("/p/pnpm-lock.yaml", true),
            ("/p/yarn.lock", true),
            ("/p/tsconfig.json", true),
            ("/p/src/a.ts", false),
            ("/p/src/lib.rs", false),
        ] {
            assert_eq!(is_project_file(Path::new(path)), project, "{path}");
        }
    }
}
