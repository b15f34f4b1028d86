//! `retrylint.toml`: parsed into a raw serde struct, then validated into typed settings.
//! Every error points at the line of the config that caused it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use miette::{miette, LabeledSpan, NamedSource, Report};
use serde::Deserialize;
use toml::Spanned;

use crate::diagnostic::Severity;

pub const CONFIG_FILE: &str = "retrylint.toml";

/// Defaults that fit the layout the policy describes.
/// Rust: the crate's `retry` module (`src/retry.rs` or `src/retry/mod.rs`, at any depth).
pub const DEFAULT_RETRY_MODULES: &[&str] = &[
    "**/infra/retry.ts",
    "**/infra/retry/index.ts",
    "**/infra/retry.js",
    "**/infra/retry/index.js",
    "**/retry.rs",
    "**/retry/mod.rs",
    "**/retries.rs",
    "**/retries/mod.rs",
];
pub const DEFAULT_REPOSITORIES: &[&str] = &[
    "**/repositories/**",
    "**/repository/**",
    "**/*Repository.ts",
    "**/*Repo.ts",
    "**/*.repository.ts",
    "**/*.repo.ts",
    "**/repository.rs",
    "**/*_repository.rs",
    "**/*_repo.rs",
];
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1024 * 1024;
pub const DEFAULT_DURABLE_PATHS: &[&str] = &["**/subscribers/**", "**/consumers/**"];
/// Test code: not held to the production policy (a test retries a flaky fake on purpose).
pub const DEFAULT_TESTS: &[&str] = &[
    "**/*.test.*",
    "**/*.spec.*",
    "**/test/**",
    "**/tests/**",
    "**/__tests__/**",
    // Test support a crate or package exports for its tests (`#[cfg(feature = "test-util")]
    // pub mod test_util;`): fixtures, ephemeral databases, fakes.
    "**/test_util.rs",
    "**/test_utils.rs",
    "**/test_util/**",
    "**/test_utils/**",
    "**/test-utils/**",
];

/// Code that is not production, checked at low severity (its findings are warnings):
/// integration harnesses, vendored copies, examples, one-off scripts, benchmarks, a crate's
/// extra binaries and TypeScript/JavaScript command-line entry points (`bin/`, `cli/`,
/// `cli.ts`: a main a person runs once, who sees its failure). `not-production = []` holds
/// it to the production policy.
pub const DEFAULT_NOT_PRODUCTION: &[&str] = &[
    "**/*.integration.*",
    "**/integration/**",
    "**/vendor/**",
    "**/repos/**",
    "**/.repos/**",
    "**/examples/**",
    "**/scripts/**",
    "**/benches/**",
    "**/src/bin/**",
    "**/bin/**/*.{ts,mts,cts,js,mjs,cjs}",
    "**/cli/**/*.{ts,mts,cts,tsx,js,mjs,cjs}",
    "**/cli.{ts,mts,cts,js,mjs,cjs}",
];

/// The words the unit rules know, from the policy's vocabulary; every list is configurable.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    /// Retry-module exports that retry contention (deadlocks, serialization failures).
    pub contention_policies: Vec<String>,
    /// Retry-module exports that retry connection loss.
    pub transient_policies: Vec<String>,
    pub contention_predicates: Vec<String>,
    pub transient_predicates: Vec<String>,
    /// Method prefixes that append (`send`, `sendEmail`): replaying them adds a second copy
    /// unless the call carries an idempotency key or a client id.
    pub append_calls: Vec<String>,
    /// Method prefixes that create (`insertOrder`, `videos.create`): appending when the
    /// object they are given is visible and carries no client id or idempotency key.
    pub create_calls: Vec<String>,
    /// Object keys that carry an idempotency key (`{ idempotencyKey }`, a header): a call
    /// sending one is safe to replay. Compared without case, `-` or `_`, as key suffixes.
    pub idempotency_keys: Vec<String>,
    /// Methods that register a handler run under a durable retrier.
    pub durable_registrations: Vec<String>,
}

impl Default for Vocabulary {
    fn default() -> Vocabulary {
        let words = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        Vocabulary {
            contention_policies: words(&["contention"]),
            transient_policies: words(&["transient"]),
            contention_predicates: words(&["isContention"]),
            transient_predicates: words(&["isConnectionLost", "isTransient"]),
            append_calls: words(&[
                "append", "publish", "send", "enqueue", "emit", "dispatch", "post", "charge",
            ]),
            create_calls: words(&["insert", "create"]),
            idempotency_keys: words(&[
                "idempotencyKey",
                "requestId",
                "dedupeKey",
                "deduplicationId",
                "clientRequestId",
            ]),
            durable_registrations: words(&["subscribe", "consumer", "consume", "registerConsumer"]),
        }
    }
}
/// How many configs an `extend` chain may hold: a cycle ends here.
const MAX_EXTEND_DEPTH: usize = 8;

/// The key and the known keys of serde's unknown-field error (`RawConfig` denies unknown
/// fields): "unknown field `x`, expected one of `a`, `b`" (or "expected `a` or `b`").
fn unknown_key(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (key, rest) = rest.split_once("`, expected ")?;
    let known: Vec<String> = rest.split('`').skip(1).step_by(2).map(String::from).collect();
    (!known.is_empty()).then(|| (key.to_string(), known))
}

/// Decision 3: anything longer than the transient policy's ~1.4 s is the relay's job.
const DEFAULT_BUDGET_MS: f64 = 2000.0;

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    extend: Option<Spanned<String>>,
    retry_modules: Option<Vec<Spanned<String>>>,
    repositories: Option<Vec<Spanned<String>>>,
    include: Option<Vec<Spanned<String>>>,
    exclude: Option<Vec<Spanned<String>>>,
    max_file_size: Option<Spanned<i64>>,
    generated: Option<Spanned<String>>,
    tests: Option<Vec<Spanned<String>>>,
    not_production: Option<Vec<Spanned<String>>>,
    nested_checkouts: Option<Spanned<String>>,
    budget: Option<Spanned<String>>,
    lease_tables: Option<Vec<Spanned<String>>>,
    lease_columns: Option<Vec<Spanned<String>>>,
    contention_policies: Option<Vec<String>>,
    transient_policies: Option<Vec<String>>,
    contention_predicates: Option<Vec<String>>,
    transient_predicates: Option<Vec<String>>,
    append_calls: Option<Vec<String>>,
    create_calls: Option<Vec<String>>,
    idempotency_keys: Option<Vec<String>>,
    durable_paths: Option<Vec<Spanned<String>>>,
    durable_registrations: Option<Vec<String>>,
    rules: Option<BTreeMap<Spanned<String>, Spanned<String>>>,
}

/// A compiled glob list and the directory its globs are relative to: the directory of the
/// config file that wrote them (an `extend`ed config's globs keep their own directory).
#[derive(Debug, Clone)]
pub struct Globs {
    pub set: GlobSet,
    pub base: PathBuf,
}

impl Globs {
    fn new(set: GlobSet, base: &Path) -> Globs {
        Globs {
            set,
            base: base.to_path_buf(),
        }
    }

    /// Whether a canonical path matches, taken relative to the globs' directory (a path
    /// outside it is matched as given).
    pub fn is_match(&self, absolute: &Path) -> bool {
        self.set.is_match(absolute.strip_prefix(&self.base).unwrap_or(absolute))
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

/// Validated settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// The config file, when one was found.
    pub path: Option<PathBuf>,
    /// The config file this one `extend`s, canonical, when it names one.
    pub extends: Option<PathBuf>,
    /// Found by the project-root rule (not `--config` or `--no-config`): the configs of
    /// packages below the root apply to their files.
    pub discovered: bool,
    /// The directory globs are matched relative to.
    pub root: PathBuf,
    pub retry_modules: Globs,
    pub repositories: Globs,
    pub include: Option<Globs>,
    pub exclude: Globs,
    pub max_file_size: u64,
    /// Check generated files too (`generated = "check"`); by default they are skipped.
    pub check_generated: bool,
    /// Test code, skipped (`tests = []` checks it).
    pub tests: Globs,
    /// Code that is not production, checked at low severity (`not-production = []` holds it
    /// to the production policy).
    pub not_production: Globs,
    /// A nested checkout — a directory below the root with its own `.git`, a vendored copy of
    /// a package — is not production either (`nested-checkouts = "check"` holds it to it).
    pub nested_checkouts_low: bool,
    /// The longest an in-process policy may wait in total, worst case (milliseconds).
    pub budget_ms: f64,
    /// Tables that hold job leases (lowercase), besides any table with a `lease_until` column.
    pub lease_tables: Vec<String>,
    /// Columns that hold a lease's expiry (lowercase): `lease_until` by default; a table with
    /// one of them holds leases.
    pub lease_columns: Vec<String>,
    /// Names of policies, predicates and calls the unit rules reason about.
    pub vocabulary: Vocabulary,
    /// Files whose code runs under a durable retrier (outbox subscribers, queue consumers).
    pub durable_paths: Globs,
    /// `durable-paths` was configured other than the defaults: a match needs no corroboration
    /// from the code (the default globs do: a folder named `consumers/` is not a consumer).
    pub durable_paths_configured: bool,
    /// `repositories` was configured other than the defaults: a match needs no corroboration
    /// from the code.
    pub repositories_configured: bool,
    severities: HashMap<String, Severity>,
}

impl Config {
    /// The zero-config defaults, rooted at `root`.
    pub fn defaults(root: PathBuf) -> Config {
        Config {
            path: None,
            extends: None,
            discovered: false,
            retry_modules: Globs::new(globs_of(DEFAULT_RETRY_MODULES), &root),
            repositories: Globs::new(globs_of(DEFAULT_REPOSITORIES), &root),
            include: None,
            exclude: Globs::new(GlobSet::empty(), &root),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            check_generated: false,
            tests: Globs::new(globs_of(DEFAULT_TESTS), &root),
            not_production: Globs::new(globs_of(DEFAULT_NOT_PRODUCTION), &root),
            nested_checkouts_low: true,
            budget_ms: DEFAULT_BUDGET_MS,
            lease_tables: vec!["jobs_leases".to_string()],
            lease_columns: vec!["lease_until".to_string()],
            vocabulary: Vocabulary::default(),
            durable_paths: Globs::new(globs_of(DEFAULT_DURABLE_PATHS), &root),
            durable_paths_configured: false,
            repositories_configured: false,
            severities: HashMap::new(),
            root,
        }
    }

    /// Finds `retrylint.toml` from `start` upwards: the nearest entry of that name that is not
    /// a directory (a FIFO or a link there is the config too, and loading it says what is wrong).
    pub fn discover(start: &Path) -> Option<PathBuf> {
        let start = std::fs::canonicalize(start).ok()?;
        let mut dir = if start.is_dir() {
            Some(start.as_path())
        } else {
            start.parent()
        };
        while let Some(current) = dir {
            let candidate = current.join(CONFIG_FILE);
            if is_config_entry(&candidate) {
                return Some(candidate);
            }
            dir = current.parent();
        }
        None
    }

    /// Reads and validates a config file that was found (the project root's, a package's): a
    /// regular `.toml` file inside its project or git root, links resolved (see
    /// [`read_config`]). `rules` are the names `[rules]` may set.
    pub fn load(path: &Path, rules: &[&str]) -> Result<Config, Report> {
        Config::load_from(path, rules, Some(&config_boundary(path)))
    }

    /// [`Config::load`] for a config named on the command line (`--config FILE`): any regular
    /// `.toml` file, wherever it is.
    pub fn load_given(path: &Path, rules: &[&str]) -> Result<Config, Report> {
        Config::load_from(path, rules, None)
    }

    fn load_from(path: &Path, rules: &[&str], boundary: Option<&Path>) -> Result<Config, Report> {
        let text = read_config(path, boundary).map_err(|e| miette!("cannot read config {}: {e}", path.display()))?;
        // The directory the config is in as named: a `retrylint.toml` that is a link keeps the
        // project (and its globs) where the link is.
        let root = crate::files::as_given(path)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from("."));
        Config::parse_at(&text, path, root, rules, 0, boundary)
    }

    /// Validates a config's text. `rules` are the names `[rules]` may set.
    pub fn parse(text: &str, path: &Path, root: PathBuf, rules: &[&str]) -> Result<Config, Report> {
        Config::parse_at(text, path, root, rules, 0, None)
    }

    /// `parse`, `depth` configs down an `extend` chain whose configs must lie inside `boundary`
    /// (`None`: the first config's [`config_boundary`], found when it extends one).
    fn parse_at(
        text: &str,
        path: &Path,
        root: PathBuf,
        rules: &[&str],
        depth: usize,
        boundary: Option<&Path>,
    ) -> Result<Config, Report> {
        // The config's lines are shown with its control characters as symbols (a config is
        // the pull request's too), and the labels moved with them.
        let shown = crate::source::printable::Shown::of(text);
        let place = |span: std::ops::Range<usize>| shown.as_ref().map_or(span.clone(), |s| s.range(span));
        let source = || {
            let text = shown.as_ref().map_or_else(|| text.to_string(), |s| s.text.clone());
            NamedSource::new(crate::source::printable::path(path), text)
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let labels = e
                .span()
                .map(|s| vec![LabeledSpan::at(place(s), "here")])
                .unwrap_or_default();
            match unknown_key(e.message()) {
                Some((key, known)) => {
                    let candidates: Vec<&str> = known.iter().map(String::as_str).collect();
                    let suggestion = crate::diagnostic::did_you_mean_suffix(&key, &candidates);
                    let list: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                    miette!(
                        labels = labels,
                        help = format!("known keys: {}", list.join(", ")),
                        "invalid config: unknown key `{}`{suggestion}",
                        crate::source::printable::line(&key)
                    )
                }
                None => miette!(labels = labels, "invalid config: {}", e.message()),
            }
            .with_source_code(source())
        })?;
        let at = |span: std::ops::Range<usize>, message: String, help: &str| {
            miette!(
                labels = vec![LabeledSpan::at(place(span), "here")],
                help = help.to_string(),
                "{message}"
            )
            .with_source_code(source())
        };

        let mut config = match &raw.extend {
            None => Config::defaults(root),
            Some(extend) => {
                // Relative to this config's directory, as a glob is. Only a config of the
                // project is read: what it says is quoted in an error, and nothing else may be.
                let boundary = boundary.map_or_else(|| config_boundary(path), Path::to_path_buf);
                let cannot = |reason: String| {
                    at(
                        extend.span(),
                        format!("cannot read the config `{}` extends: {reason}", extend.get_ref()),
                        "extend names another retrylint.toml inside the project (or its git root), relative to this one: extend = \"../retrylint.toml\"",
                    )
                };
                let canonical =
                    std::fs::canonicalize(root.join(extend.get_ref())).map_err(|e| cannot(e.to_string()))?;
                if depth >= MAX_EXTEND_DEPTH {
                    return Err(at(
                        extend.span(),
                        format!("`extend` chain deeper than {MAX_EXTEND_DEPTH} configs (a cycle?)"),
                        "a package's config extends its project's; the project's extends nothing",
                    ));
                }
                let base_text = read_config(&canonical, Some(&boundary)).map_err(cannot)?;
                let base_root = canonical.parent().map_or_else(|| root.clone(), Path::to_path_buf);
                let mut base = Config::parse_at(&base_text, &canonical, base_root, rules, depth + 1, Some(&boundary))?;
                base.extends = Some(canonical);
                base.root = root;
                base
            }
        };
        config.path = Some(path.to_path_buf());
        let root = config.root.clone();
        let compile = |globs: &[Spanned<String>]| -> Result<Globs, Report> {
            let mut builder = GlobSetBuilder::new();
            for glob in globs {
                let compiled = glob_of(glob.get_ref()).map_err(|e| {
                    at(
                        glob.span(),
                        format!("invalid glob `{}`: {}", glob.get_ref(), e.kind()),
                        "globs use `**/` for any directory, `*` within a name",
                    )
                })?;
                builder.add(compiled);
            }
            let set = builder.build().map_err(|e| miette!("invalid globs: {e}"))?;
            Ok(Globs::new(set, &root))
        };
        if let Some(globs) = &raw.retry_modules {
            config.retry_modules = compile(globs)?;
        }
        if let Some(globs) = &raw.repositories {
            config.repositories = compile(globs)?;
            config.repositories_configured = !same_globs(globs, DEFAULT_REPOSITORIES);
        }
        if let Some(globs) = &raw.include {
            config.include = Some(compile(globs)?);
        }
        if let Some(globs) = &raw.exclude {
            config.exclude = compile(globs)?;
        }
        if let Some(globs) = &raw.tests {
            config.tests = compile(globs)?;
        }
        if let Some(globs) = &raw.not_production {
            config.not_production = compile(globs)?;
        }
        if let Some(nested) = &raw.nested_checkouts {
            config.nested_checkouts_low = match nested.get_ref().as_str() {
                "low" => true,
                "check" => false,
                other => {
                    return Err(at(
                        nested.span(),
                        format!("invalid value `{other}` for nested-checkouts"),
                        "use \"low\" (the default) or \"check\"",
                    ))
                }
            };
        }
        if let Some(generated) = &raw.generated {
            config.check_generated = match generated.get_ref().as_str() {
                "skip" => false,
                "check" => true,
                other => {
                    return Err(at(
                        generated.span(),
                        format!("invalid value `{other}` for generated"),
                        "use \"skip\" (the default) or \"check\"",
                    ))
                }
            };
        }
        if let Some(size) = &raw.max_file_size {
            let bytes = *size.get_ref();
            if bytes <= 0 {
                return Err(at(
                    size.span(),
                    "max-file-size must be a positive number of bytes".into(),
                    "for example max-file-size = 1048576",
                ));
            }
            config.max_file_size = bytes as u64;
        }
        let vocabulary = &mut config.vocabulary;
        for (target, value) in [
            (&mut vocabulary.contention_policies, &raw.contention_policies),
            (&mut vocabulary.transient_policies, &raw.transient_policies),
            (&mut vocabulary.contention_predicates, &raw.contention_predicates),
            (&mut vocabulary.transient_predicates, &raw.transient_predicates),
            (&mut vocabulary.append_calls, &raw.append_calls),
            (&mut vocabulary.create_calls, &raw.create_calls),
            (&mut vocabulary.idempotency_keys, &raw.idempotency_keys),
            (&mut vocabulary.durable_registrations, &raw.durable_registrations),
        ] {
            if let Some(value) = value {
                *target = value.clone();
            }
        }
        if let Some(globs) = &raw.durable_paths {
            config.durable_paths = compile(globs)?;
            config.durable_paths_configured = !same_globs(globs, DEFAULT_DURABLE_PATHS);
        }
        if let Some(tables) = &raw.lease_tables {
            config.lease_tables = Vec::new();
            for table in tables {
                let name = table.get_ref();
                let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
                if !valid {
                    return Err(at(
                        table.span(),
                        format!("invalid lease table `{name}`"),
                        "a table name such as \"jobs_leases\"",
                    ));
                }
                // `schema.table`: statements are matched on the table's own name.
                let own = name.rsplit('.').next().unwrap_or(name);
                config.lease_tables.push(own.to_ascii_lowercase());
            }
        }
        if let Some(columns) = &raw.lease_columns {
            config.lease_columns = Vec::new();
            for column in columns {
                let name = column.get_ref();
                let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !valid {
                    return Err(at(
                        column.span(),
                        format!("invalid lease column `{name}`"),
                        "a column name such as \"lease_until\" or \"locked_until\"",
                    ));
                }
                config.lease_columns.push(name.to_ascii_lowercase());
            }
        }
        if let Some(budget) = &raw.budget {
            config.budget_ms = crate::schedule::duration::parse(budget.get_ref()).ok_or_else(|| {
                at(
                    budget.span(),
                    format!("invalid budget `{}`", budget.get_ref()),
                    "a duration such as \"2 seconds\" or \"1500 millis\"",
                )
            })?;
        }
        for (name, severity) in raw.rules.iter().flatten() {
            let Some(rule) = rules.iter().find(|r| **r == name.get_ref()) else {
                return Err(at(
                    name.span(),
                    format!(
                        "unknown rule `{}`{}",
                        name.get_ref(),
                        crate::diagnostic::did_you_mean_suffix(name.get_ref(), rules)
                    ),
                    &format!("known rules: {}", rules.join(", ")),
                ));
            };
            let Some(parsed) = Severity::parse(severity.get_ref()) else {
                return Err(at(
                    severity.span(),
                    format!("invalid severity `{}` for `{rule}`", severity.get_ref()),
                    "use \"error\", \"warn\" or \"off\"",
                ));
            };
            config.severities.insert(rule.to_string(), parsed);
        }
        Ok(config)
    }

    /// The severity a rule runs at: configured, or its default.
    pub fn severity(&self, rule: &str, default: Severity) -> Severity {
        self.severities.get(rule).copied().unwrap_or(default)
    }

    pub fn set_severity(&mut self, rule: &str, severity: Severity) {
        self.severities.insert(rule.to_string(), severity);
    }

    /// The path as globs see it: relative to the config root. `absolute` is canonical.
    pub fn relative<'p>(&self, absolute: &'p Path) -> &'p Path {
        absolute.strip_prefix(&self.root).unwrap_or(absolute)
    }

    pub fn is_retry_module(&self, path: &Path) -> bool {
        self.retry_modules.is_match(path)
    }

    pub fn is_durable_path(&self, path: &Path) -> bool {
        self.durable_paths.is_match(path)
    }

    pub fn is_repository_path(&self, path: &Path) -> bool {
        self.repositories.is_match(path)
    }

    /// Whether `path` is test code, which is not checked.
    pub fn is_test(&self, path: &Path) -> bool {
        self.tests.is_match(path)
    }

    /// Whether `path` (canonical) is not production code: matched by `not-production`, or
    /// inside a nested checkout (a directory below the root, up to the file's own, that holds
    /// a `.git`). Its findings are warnings.
    pub fn is_not_production(&self, path: &Path) -> bool {
        self.not_production.is_match(path) || (self.nested_checkouts_low && self.nested_checkout(path).is_some())
    }

    /// The directory of the nested checkout `path` lies in: below the root, with its own
    /// `.git` (a directory, or the file a submodule has).
    pub fn nested_checkout<'a>(&self, path: &'a Path) -> Option<&'a Path> {
        let mut dir = path.parent()?;
        while dir != self.root && dir.starts_with(&self.root) {
            if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
                return Some(dir);
            }
            dir = dir.parent()?;
        }
        None
    }

    /// Whether `exclude` matches `path` (canonical).
    pub fn is_excluded(&self, path: &Path) -> bool {
        self.exclude.is_match(path)
    }

    /// Whether `include`, when set, leaves `path` (canonical) out.
    pub fn is_not_included(&self, path: &Path) -> bool {
        self.include.as_ref().is_some_and(|include| !include.is_match(path))
    }

    /// Include/exclude filters for discovery.
    pub fn is_included(&self, path: &Path) -> bool {
        !self.is_excluded(path) && !self.is_not_included(path)
    }
}

/// `path` made absolute with links resolved, or an error that names it ("cannot check PATH",
/// with `what` before the reason when given) and says what to do.
pub fn canonical_path(path: &Path, help: &str, what: &str) -> Result<PathBuf, Report> {
    std::fs::canonicalize(path)
        .map_err(|e| miette!(help = help.to_string(), "cannot check {}{what}: {e}", path.display()))
}

/// [`canonical_path`], except that a path that is itself a symbolic link stays the link (see
/// [`crate::files::as_given`]): the project is where the user's path is, not where it points.
pub fn given_path(path: &Path, help: &str) -> Result<PathBuf, Report> {
    crate::files::as_given(path).map_err(|e| miette!(help = help.to_string(), "cannot check {}: {e}", path.display()))
}

/// Whether `path` is a config's place: an entry that is not a directory.
fn is_config_entry(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir())
}

/// A config's text: a regular `.toml` file (its name as given and, links resolved, the file it
/// is), of at most [`crate::files::MAX_CONFIG_SIZE`] bytes, read without blocking. With a
/// `boundary`, the file (links resolved) must lie inside it; `None` is for a config the user
/// named. A config is the only file whose lines an error quotes, so nothing else passes.
/// The error is the reason, without the file's text.
pub fn read_config(path: &Path, boundary: Option<&Path>) -> Result<String, String> {
    let target = match boundary {
        Some(boundary) => crate::files::inside(path, boundary).map_err(|e| match e {
            crate::files::ReadError::Outside(dir) => format!(
                "it leads outside the project ({}): a config is read only from inside its project or git root",
                dir.display()
            ),
            other => other.to_string(),
        })?,
        None => path.to_path_buf(),
    };
    let metadata = std::fs::metadata(&target).map_err(|e| e.to_string())?;
    if let Some(what) = crate::files::kind_of(metadata.file_type()) {
        return Err(format!("not a regular file ({what})"));
    }
    let toml = |p: &Path| p.extension().is_some_and(|e| e == "toml");
    if !toml(path) || !toml(&target) {
        return Err("not a `.toml` file (a config is a retrylint.toml, or another `.toml` file)".into());
    }
    crate::files::read_text(&target, crate::files::MAX_CONFIG_SIZE, boundary.is_none()).map_err(|e| e.to_string())
}

/// What a config may `extend` (and, found, what it may be a link to): its git root, else its
/// project root — the top of its chain of configs extending one in a directory above, as
/// [`project_root`] finds it.
pub fn config_boundary(config: &Path) -> PathBuf {
    let dir = config
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if let Some(git) = crate::files::git_root(&dir) {
        return git.to_path_buf();
    }
    let own = dir.join(config.file_name().unwrap_or(CONFIG_FILE.as_ref()));
    let top = chain_top(&own);
    top.parent().map_or(dir, Path::to_path_buf)
}

/// The last config of the chain that `found` starts, each extending one in a directory above.
fn chain_top(found: &Path) -> PathBuf {
    let git = found.parent().and_then(crate::files::git_root).map(Path::to_path_buf);
    let mut found = found.to_path_buf();
    for _ in 0..MAX_EXTEND_DEPTH {
        let Some(base) = extended_above(&found, git.as_deref()) else {
            break;
        };
        found = base;
    }
    found
}

/// The project root for a checked path, and the config file that marks it: the nearest
/// `retrylint.toml` from the path upwards — or, when that one `extend`s a config in a directory
/// above it (a monorepo package's), that one's, and so on —, else the git root (the nearest
/// directory holding `.git`), else the path itself (its directory, for a file).
///
/// The path counts as given: a symbolic link named on the command line (a staged link that
/// pre-commit passes) is looked at where it is, never from where it points.
pub fn project_root(path: &Path) -> Result<(PathBuf, Option<PathBuf>), Report> {
    let absolute = given_path(path, "check the path, or run from the project root")?;
    // A directory starts at itself; a file or a link (to anything) in its directory.
    let start = if std::fs::symlink_metadata(&absolute).is_ok_and(|m| m.is_dir()) {
        absolute.clone()
    } else {
        absolute.parent().map_or_else(|| absolute.clone(), Path::to_path_buf)
    };
    if let Some(found) = Config::discover(&start) {
        let found = chain_top(&found);
        let root = found.parent().map_or_else(|| start.clone(), Path::to_path_buf);
        return Ok((root, Some(found)));
    }
    Ok((crate::files::boundary(&start), None))
}

/// The config `config` extends when it lies in a directory above `config`'s (inside the git
/// root `git`, when there is one); `None` when it extends nothing, or something that cannot be
/// read (loading it says why).
fn extended_above(config: &Path, git: Option<&Path>) -> Option<PathBuf> {
    let dir = config.parent()?;
    let text = read_config(config, Some(git.unwrap_or(dir))).ok()?;
    let table: toml::Table = text.parse().ok()?;
    let extend = table.get("extend")?.as_str()?;
    let base = std::fs::canonicalize(dir.join(extend)).ok()?;
    let base_dir = base.parent()?;
    let inside = git.is_none_or(|git| base_dir.starts_with(git));
    (base_dir != dir && dir.starts_with(base_dir) && inside).then_some(base)
}

/// The configs of one run: the project root's, and those of packages below it (each file
/// takes the nearest one).
#[derive(Debug, Clone)]
pub struct Configs {
    pub root: Config,
    /// Package configs, deepest directory first.
    nested: Vec<Config>,
}

impl From<Config> for Configs {
    fn from(root: Config) -> Configs {
        Configs {
            root,
            nested: Vec::new(),
        }
    }
}

impl Configs {
    /// The config that applies to a canonical path: the nearest package config above it, else
    /// the root's.
    pub fn for_path(&self, absolute: &Path) -> &Config {
        self.nested
            .iter()
            .find(|c| absolute.starts_with(&c.root))
            .unwrap_or(&self.root)
    }

    /// The position of the config for `absolute`: 0 for the root's, `n + 1` for the nth
    /// package config.
    pub fn position(&self, absolute: &Path) -> usize {
        self.nested
            .iter()
            .position(|c| absolute.starts_with(&c.root))
            .map_or(0, |p| p + 1)
    }

    /// The config at a position given by [`Configs::position`].
    pub fn at(&self, position: usize) -> &Config {
        position
            .checked_sub(1)
            .and_then(|p| self.nested.get(p))
            .unwrap_or(&self.root)
    }

    /// Every config, the root's first.
    pub fn all(&self) -> impl Iterator<Item = &Config> {
        std::iter::once(&self.root).chain(&self.nested)
    }

    /// Loads the package configs among `found` (canonical `retrylint.toml` paths), when the
    /// root config was found by the project-root rule: any below the root's directory (or
    /// beside it, for a path given outside the root), never the root's own or one above it.
    /// A malformed one is an error, with its location.
    pub fn add_nested(&mut self, found: impl IntoIterator<Item = PathBuf>, rules: &[&str]) -> Result<(), Report> {
        if !self.root.discovered {
            return Ok(());
        }
        for path in found {
            let Some(dir) = path.parent() else { continue };
            let own = self.root.path.as_deref().is_some_and(|p| p == path);
            // A config at or above the root would take the root's files from the root's config.
            if own || self.root.root.starts_with(dir) || self.nested.iter().any(|c| c.root == dir) {
                continue;
            }
            let mut config = Config::load(&path, rules)?;
            config.discovered = true;
            self.nested.push(config);
        }
        self.nested.sort_by(|a, b| {
            b.root
                .components()
                .count()
                .cmp(&a.root.components().count())
                .then(a.root.cmp(&b.root))
        });
        Ok(())
    }

    /// The `retrylint.toml` files between a canonical path and the root (for a file named on the
    /// command line, which a directory walk may not pass); for a path outside the root, the
    /// nearest one above it (its own project's).
    pub fn configs_above(&self, absolute: &Path) -> Vec<PathBuf> {
        configs_above(&self.root.root, absolute)
    }
}

/// The `retrylint.toml` files between a canonical path and the project `root` (for a file named
/// on the command line, which a directory walk may not pass); for a path outside the root, the
/// nearest one above it (its own project's).
pub fn configs_above(root: &Path, absolute: &Path) -> Vec<PathBuf> {
    if !absolute.starts_with(root) {
        return absolute.parent().and_then(Config::discover).into_iter().collect();
    }
    absolute
        .ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(root) && *dir != root)
        .map(|dir| dir.join(CONFIG_FILE))
        .filter(|p| is_config_entry(p))
        .collect()
}

/// Whether configured globs are the defaults, written out (as `--show-settings` writes them).
fn same_globs(globs: &[Spanned<String>], defaults: &[&str]) -> bool {
    globs.len() == defaults.len() && globs.iter().zip(defaults).all(|(g, d)| g.get_ref() == d)
}

/// A config glob: `*` and `?` stay within one path component (`src/*.ts` is not
/// `src/a/b.ts`); `**/` crosses directories.
pub fn glob_of(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern).literal_separator(true).build()
}

/// Compiles globs that are known to be valid (the defaults, a rule's own).
pub fn globs_of(patterns: &[&str]) -> GlobSet {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        builder.add(glob_of(pattern).expect("default globs are valid"));
    }
    builder.build().expect("default globs are valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_stays_within_one_directory() {
        let config = Config::parse(
            "exclude = [\"src/*.ts\"]\ntests = [\"**/*.test.*\"]",
            Path::new("retrylint.toml"),
            "/project".into(),
            &[],
        )
        .unwrap();
        assert!(!config.is_included(Path::new("/project/src/a.ts")));
        assert!(config.is_included(Path::new("/project/src/deep/b.ts")));
        assert!(
            config.is_test(Path::new("/project/src/deep/b.test.ts")),
            "`**/` still crosses"
        );
    }

    #[test]
    fn invalid_lease_tables_point_at_the_line() {
        let error = Config::parse(
            "lease-tables = [\"jobs leases\"]",
            Path::new("retrylint.toml"),
            "/project".into(),
            &[],
        )
        .expect_err("a table name with a space is rejected");
        assert!(
            error.to_string().contains("invalid lease table `jobs leases`"),
            "{error}"
        );
        let config = Config::parse(
            "lease-tables = [\"ops.Scheduler_Locks\"]",
            Path::new("retrylint.toml"),
            "/project".into(),
            &[],
        )
        .unwrap();
        assert_eq!(
            config.lease_tables,
            ["scheduler_locks"],
            "matched on the table's own name"
        );
    }

    #[test]
    fn lease_columns_are_validated_and_lowercased() {
        let error = Config::parse(
            "lease-columns = [\"locks.until\"]",
            Path::new("retrylint.toml"),
            "/project".into(),
            &[],
        )
        .expect_err("a qualified column is rejected");
        assert!(
            error.to_string().contains("invalid lease column `locks.until`"),
            "{error}"
        );
        let config = Config::parse(
            "lease-columns = [\"Locked_Until\", \"expires_at\"]",
            Path::new("retrylint.toml"),
            "/project".into(),
            &[],
        )
        .unwrap();
        assert_eq!(config.lease_columns, ["locked_until", "expires_at"]);
        let defaults = Config::defaults("/project".into());
        assert_eq!(defaults.lease_columns, ["lease_until"]);
    }
}
