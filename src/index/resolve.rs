//! Module resolution as TypeScript 5.9 does it (`ts.resolveModuleName`), over the files the
//! index has and the disk: classic, node10, node16/nodenext and bundler; `paths` (exact keys,
//! then the longest `*` prefix, targets in order) with or without `baseUrl`, `baseUrl` alone,
//! `rootDirs`; `.js`/`.mjs`/`.cjs`/`.jsx` specifiers naming `.ts`/`.mts`/`.cts`/`.tsx` files,
//! extensionless and directory imports (not in node16/nodenext ESM files); package.json
//! `exports` and `imports` with conditions (`import`/`require`, `types`, `node`, `default`,
//! custom ones, nested, arrays, subpath patterns), `typesVersions` and `types`/`main`; package
//! self-names. The one departure: a package of the workspace is found by its name, as the
//! `node_modules` link every package manager makes to it would find it, and a build output
//! it names (`dist/index.d.ts`) stands for the source it is built from (`src/index.ts`).
//! The differential test (`tests/resolve_oracle.rs`) holds this to TypeScript's own answers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::json::Json;
use super::tsconfig::{CompilerOptions, ModuleKind, ModuleResolution};
use super::FileId;
use crate::source::normalize;

/// What an import specifier names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// A file the index has.
    File(FileId),
    /// A file on disk the index does not read: a declaration file, one in `node_modules`, an
    /// ignored or excluded one. Resolved, but nothing retrylint sees.
    Unread(PathBuf),
    /// A package outside the workspace: not looked up (node_modules sources are not read).
    Package,
    /// Nothing there. (A bare specifier the caller may still find installed in node_modules.)
    Missing,
}

/// A file a candidate path found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    File(FileId),
    Unread,
}

/// What resolution reads: the index's files, the disk, package.json files.
pub trait Host {
    fn probe(&self, path: &Path) -> Option<Hit>;
    fn package_json(&self, dir: &Path) -> Option<Arc<PackageJson>>;
    /// The directory of the workspace package named `name`.
    fn workspace_package(&self, name: &str) -> Option<PathBuf>;
}

/// A package.json, as resolution reads it.
#[derive(Debug)]
pub struct PackageJson {
    pub dir: PathBuf,
    pub json: Json,
}

impl PackageJson {
    fn field(&self, key: &str) -> Option<&Json> {
        self.json.get(key).filter(|v| !matches!(v, Json::Null))
    }

    fn path_field(&self, key: &str) -> Option<PathBuf> {
        let value = self.json.get(key)?.as_str().filter(|s| !s.is_empty())?;
        Some(normalize(&self.dir.join(value)))
    }

    pub fn is_module(&self) -> bool {
        self.json.get("type").and_then(Json::as_str) == Some("module")
    }

    pub fn name(&self) -> Option<&str> {
        self.json.get("name").and_then(Json::as_str)
    }
}

const TS: u8 = 1;
const JS: u8 = 2;
const DTS: u8 = 4;
const JSON: u8 = 8;

const IMPORTS: u8 = 2;
const SELF_NAME: u8 = 4;
const EXPORTS: u8 = 8;
const TRAILERS: u8 = 16;
const ESM: u8 = 32;
const ALL_FEATURES: u8 = IMPORTS | SELF_NAME | EXPORTS | TRAILERS;

/// A resolved module file.
#[derive(Debug, Clone)]
struct Found {
    path: PathBuf,
    hit: Hit,
}

/// How a file's static imports resolve: ESM (`import` conditions; no extensionless or
/// directory imports under node16/nodenext), CommonJS, or neither (node10, classic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Esm,
    Cjs,
}

struct State<'a> {
    host: &'a dyn Host,
    options: &'a CompilerOptions,
    features: u8,
    conditions: Vec<String>,
    /// The package scope containing the importing project's config (for `outDir` → source).
    resolution: ModuleResolution,
}

/// The mode of `file`'s `import` declarations, as `ts.getModeForUsageLocation` gives it.
pub fn import_mode(host: &dyn Host, options: &CompilerOptions, file: &Path) -> Option<Mode> {
    if !options.import_syntax_matters() {
        return None;
    }
    let name = file.file_name()?.to_str()?;
    let resolution = options.effective_resolution();
    let by_extension = if [".d.mts", ".mts", ".mjs"].iter().any(|e| name.ends_with(e)) {
        Some(Mode::Esm)
    } else if [".d.cts", ".cts", ".cjs"].iter().any(|e| name.ends_with(e)) {
        Some(Mode::Cjs)
    } else {
        None
    };
    let looks_up = matches!(resolution, ModuleResolution::Node16 | ModuleResolution::NodeNext)
        || file.to_string_lossy().contains("/node_modules/");
    let scope = || package_scope(host, file.parent()?);
    // `impliedNodeFormat`.
    let implied = by_extension.or_else(|| {
        let ts_like = [".d.ts", ".ts", ".tsx", ".js", ".jsx"]
            .iter()
            .any(|e| name.ends_with(e));
        (looks_up && ts_like).then(|| match scope() {
            Some(p) if p.is_module() => Mode::Esm,
            _ => Mode::Cjs,
        })
    });
    let module = options.effective_module();
    if matches!(
        module,
        ModuleKind::Node16 | ModuleKind::Node18 | ModuleKind::Node20 | ModuleKind::NodeNext
    ) {
        return implied;
    }
    // Other module kinds: the implied format only where the extension or `type` says so.
    let scope_type = || scope().and_then(|p| p.json.get("type").and_then(Json::as_str).map(String::from));
    let emit = match implied {
        Some(Mode::Cjs) if by_extension == Some(Mode::Cjs) || scope_type().as_deref() == Some("commonjs") => {
            Some(Mode::Cjs)
        }
        Some(Mode::Esm) if by_extension == Some(Mode::Esm) || scope_type().as_deref() == Some("module") => {
            Some(Mode::Esm)
        }
        _ => None,
    };
    match emit {
        Some(mode) => Some(mode),
        None => match module {
            ModuleKind::CommonJs => Some(Mode::Cjs),
            ModuleKind::Es(_) | ModuleKind::Preserve => Some(Mode::Esm),
            _ => None,
        },
    }
}

/// The nearest package.json at or above `dir`.
fn package_scope(host: &dyn Host, dir: &Path) -> Option<Arc<PackageJson>> {
    let mut current = Some(dir);
    while let Some(d) = current {
        if let Some(p) = host.package_json(d) {
            return Some(p);
        }
        current = d.parent();
    }
    None
}

fn conditions(options: &CompilerOptions, mode: Option<Mode>) -> Vec<String> {
    let resolution = options.effective_resolution();
    let mode = match mode {
        Some(m) => m,
        None if resolution == ModuleResolution::Bundler => Mode::Esm,
        None if resolution == ModuleResolution::Node10 => return Vec::new(),
        None => Mode::Cjs,
    };
    let mut out = vec![if mode == Mode::Esm { "import" } else { "require" }.to_string()];
    if !options.no_dts_resolution.unwrap_or(false) {
        out.push("types".into());
    }
    if resolution != ModuleResolution::Bundler {
        out.push("node".into());
    }
    out.extend(options.custom_conditions.iter().flatten().cloned());
    out
}

fn is_relative(spec: &str) -> bool {
    spec == "." || spec == ".." || spec.starts_with("./") || spec.starts_with("../") || spec.starts_with('/')
}

/// Resolves `spec` imported by `file` (an `import` declaration) with `options`.
pub fn resolve(host: &dyn Host, options: &CompilerOptions, file: &Path, spec: &str) -> Resolution {
    let Some(dir) = file.parent() else {
        return Resolution::Missing;
    };
    let resolution = options.effective_resolution();
    let mode = import_mode(host, options, file);
    let mut extensions = if options.no_dts_resolution.unwrap_or(false) {
        TS | JS
    } else {
        TS | JS | DTS
    };
    let found = if resolution == ModuleResolution::Classic {
        classic(host, options, dir, spec)
    } else {
        let (features, conditions) = match resolution {
            ModuleResolution::Node16 | ModuleResolution::NodeNext => {
                let esm = if mode == Some(Mode::Esm) { ESM } else { 0 };
                (ALL_FEATURES | esm, conditions(options, Some(mode.unwrap_or(Mode::Cjs))))
            }
            ModuleResolution::Bundler => {
                let mut features = ALL_FEATURES;
                if options.resolve_package_json_exports == Some(false) {
                    features &= !EXPORTS;
                }
                if options.resolve_package_json_imports == Some(false) {
                    features &= !IMPORTS;
                }
                (features, conditions(options, mode))
            }
            _ => match mode {
                Some(m) => (ALL_FEATURES, conditions(options, Some(m))),
                None => (0, Vec::new()),
            },
        };
        if options.effective_resolve_json() {
            extensions |= JSON;
        }
        let state = State {
            host,
            options,
            features,
            conditions,
            resolution,
        };
        if resolution == ModuleResolution::Node10 {
            let priority = extensions & (TS | DTS);
            let secondary = extensions & !(TS | DTS);
            try_resolve(&state, priority, spec, dir).or_else(|| try_resolve(&state, secondary, spec, dir))
        } else {
            try_resolve(&state, extensions, spec, dir)
        }
    };
    match found {
        Some(found) => match found.hit {
            Hit::File(id) => Resolution::File(id),
            Hit::Unread => built_from(host, &found.path)
                .or_else(|| implementation_of_declaration(host, &found.path))
                .map(Resolution::File)
                .unwrap_or(Resolution::Unread(found.path)),
        },
        None => Resolution::Missing,
    }
}

/// Whether a `paths` pattern of `options` matches `spec`.
pub fn matches_paths(options: &CompilerOptions, spec: &str) -> bool {
    options
        .paths
        .as_ref()
        .is_some_and(|paths| best_pattern(paths.iter().map(|(k, _)| k.as_str()), spec).is_some())
}

/// The source a build output is compiled from (see [`workspace_source`]), for an output that
/// was resolved to.
fn built_from(host: &dyn Host, path: &Path) -> Option<FileId> {
    let options = CompilerOptions::default();
    let state = State {
        host,
        options: &options,
        features: 0,
        conditions: Vec::new(),
        resolution: ModuleResolution::Node10,
    };
    match workspace_source(&state, TS, path)?.hit {
        Hit::File(id) => Some(id),
        Hit::Unread => None,
    }
}

/// A declaration file `x.d.ts` beside the implementation `x.js` the index has: that file.
fn implementation_of_declaration(host: &dyn Host, path: &Path) -> Option<FileId> {
    let name = path.file_name()?.to_str()?;
    for (decl, js) in [(".d.ts", ".js"), (".d.mts", ".mjs"), (".d.cts", ".cjs")] {
        if let Some(stem) = name.strip_suffix(decl) {
            if let Some(Hit::File(id)) = host.probe(&path.with_file_name(format!("{stem}{js}"))) {
                return Some(id);
            }
        }
    }
    None
}

/// The pattern `spec` matches best: an exact key, else the `*` pattern with the longest prefix.
pub fn best_pattern<'k>(keys: impl Iterator<Item = &'k str> + Clone, spec: &str) -> Option<(&'k str, Option<&str>)> {
    if let Some(exact) = keys.clone().find(|k| !k.contains('*') && *k == spec) {
        return Some((exact, None));
    }
    let mut best: Option<(&str, &str, usize)> = None;
    for key in keys {
        let Some((prefix, suffix)) = key.split_once('*') else {
            continue;
        };
        if suffix.contains('*') {
            continue;
        }
        let matches = spec.len() >= prefix.len() + suffix.len() && spec.starts_with(prefix) && spec.ends_with(suffix);
        if matches && best.is_none_or(|(_, _, len)| prefix.len() > len) {
            best = Some((key, &spec[prefix.len()..spec.len() - suffix.len()], prefix.len()));
        }
    }
    best.map(|(k, star, _)| (k, Some(star)))
}

fn try_resolve(state: &State, ext: u8, spec: &str, dir: &Path) -> Option<Found> {
    if ext == 0 {
        return None;
    }
    if let Some(found) = optional_settings(state, ext, spec, dir, &mut |e, c| {
        load_by_relative_name(state, e, c, true)
    }) {
        return Some(found);
    }
    if !is_relative(spec) {
        if state.features & IMPORTS != 0 && spec.starts_with('#') {
            if let Some(found) = load_from_imports(state, ext, spec, dir) {
                return Some(found);
            }
        }
        if state.features & SELF_NAME != 0 {
            if let Some(found) = load_from_self_name(state, ext, spec, dir) {
                return Some(found);
            }
        }
        if spec.contains(':') {
            return None;
        }
        return load_from_workspace(state, ext, spec);
    }
    let candidate = normalize(&dir.join(spec));
    let trailing = spec == "." || spec == ".." || spec.ends_with("/.") || spec.ends_with("/..") || spec.ends_with('/');
    load_by_relative_name_trailing(state, ext, &candidate, trailing)
}

type Loader<'l> = dyn FnMut(u8, &Path) -> Option<Found> + 'l;

/// `paths`, then `baseUrl` (bare specifiers) or `rootDirs` (relative ones).
fn optional_settings(state: &State, ext: u8, spec: &str, dir: &Path, loader: &mut Loader) -> Option<Found> {
    let options = state.options;
    if let (Some(paths), false) = (
        &options.paths,
        spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == "..",
    ) {
        let base = options.base_url.clone().or_else(|| options.paths_base.clone())?;
        if let Some(result) = load_using_paths(state, ext, spec, &base, paths, loader) {
            return result;
        }
    }
    if !is_relative(spec) {
        let base = options.base_url.as_ref()?;
        loader(ext, &normalize(&base.join(spec)))
    } else {
        root_dirs(state, ext, spec, dir, loader)
    }
}

fn root_dirs(state: &State, ext: u8, spec: &str, dir: &Path, loader: &mut Loader) -> Option<Found> {
    let roots = state.options.root_dirs.as_ref()?;
    let candidate = normalize(&dir.join(spec));
    let matched = roots
        .iter()
        .filter(|r| candidate.starts_with(r) && candidate != **r)
        .max_by_key(|r| r.as_os_str().len())?;
    if let Some(found) = loader(ext, &candidate) {
        return Some(found);
    }
    let suffix = candidate.strip_prefix(matched).ok()?.to_path_buf();
    roots
        .iter()
        .filter(|r| *r != matched)
        .find_map(|root| loader(ext, &normalize(&root.join(&suffix))))
}

/// `Some(result)` when a pattern matched (the result is final for `paths`), `None` when none did.
fn load_using_paths(
    state: &State,
    ext: u8,
    spec: &str,
    base: &Path,
    paths: &[(String, Vec<String>)],
    loader: &mut Loader,
) -> Option<Option<Found>> {
    let (key, star) = best_pattern(paths.iter().map(|(k, _)| k.as_str()), spec)?;
    let targets = paths.iter().rev().find(|(k, _)| k == key).map(|(_, t)| t.clone())?;
    for target in targets {
        let path = match star {
            Some(star) => target.replacen('*', star, 1),
            None => target.clone(),
        };
        let candidate = normalize(&base.join(&path));
        if has_known_extension(&target) {
            if let Some(hit) = state.host.probe(&candidate) {
                return Some(Some(Found { path: candidate, hit }));
            }
        }
        if let Some(found) = loader(ext, &candidate) {
            return Some(Some(found));
        }
    }
    Some(None)
}

const EXTENSIONS_TO_REMOVE: &[&str] = &[
    ".d.ts", ".d.mts", ".d.cts", ".mjs", ".mts", ".cjs", ".cts", ".ts", ".js", ".tsx", ".jsx", ".json",
];

fn has_known_extension(path: &str) -> bool {
    EXTENSIONS_TO_REMOVE.iter().any(|e| path.ends_with(e))
}

fn load_by_relative_name(state: &State, ext: u8, candidate: &Path, _consider_package_json: bool) -> Option<Found> {
    load_by_relative_name_trailing(state, ext, candidate, false)
}

fn load_by_relative_name_trailing(state: &State, ext: u8, candidate: &Path, trailing: bool) -> Option<Found> {
    if !trailing {
        if let Some(found) = load_from_file(state, ext, candidate) {
            return Some(found);
        }
    }
    if state.features & ESM == 0 {
        return load_from_directory(state, ext, candidate);
    }
    None
}

fn load_from_file(state: &State, ext: u8, candidate: &Path) -> Option<Found> {
    let found = load_from_file_no_implicit_extensions(state, ext, candidate).or_else(|| {
        (state.features & ESM == 0)
            .then(|| try_adding_extensions(state, candidate, ext, ""))
            .flatten()
    });
    or_source(state, ext, candidate, found)
}

/// `found`, unless `candidate` lies in a package's build output and `found` is not a
/// TypeScript file the index has: then the source the output is built from, when the index
/// has it ([`workspace_source`]) — whether the package was built or not.
fn or_source(state: &State, ext: u8, candidate: &Path, found: Option<Found>) -> Option<Found> {
    let is_source = |f: &Found| {
        matches!(f.hit, Hit::File(_))
            && [".ts", ".tsx", ".mts", ".cts"]
                .iter()
                .any(|e| f.path.to_string_lossy().ends_with(e))
    };
    if found.as_ref().is_some_and(is_source) {
        return found;
    }
    let in_output = candidate
        .components()
        .any(|c| matches!(c.as_os_str().to_str(), Some("dist" | "build" | "lib" | "out")));
    if !in_output {
        return found;
    }
    workspace_source(state, ext, candidate).or(found)
}

fn load_from_file_no_implicit_extensions(state: &State, ext: u8, candidate: &Path) -> Option<Found> {
    let name = candidate.file_name()?.to_str()?;
    if !name.contains('.') {
        return None;
    }
    let text = candidate.to_str()?;
    let extensionless = EXTENSIONS_TO_REMOVE
        .iter()
        .find_map(|e| text.strip_suffix(e))
        .unwrap_or_else(|| &text[..text.rfind('.').unwrap_or(text.len())]);
    let original = &text[extensionless.len()..];
    try_adding_extensions(state, Path::new(extensionless), ext, original)
}

fn try_adding_extensions(state: &State, candidate: &Path, ext: u8, original: &str) -> Option<Found> {
    let base = candidate.to_str()?;
    let try_ext = |e: &str| -> Option<Found> {
        let path = PathBuf::from(format!("{base}{e}"));
        let hit = state.host.probe(&path)?;
        Some(Found { path, hit })
    };
    let ts = ext & TS != 0;
    let dts = ext & DTS != 0;
    let js = ext & JS != 0;
    let json = ext & JSON != 0;
    match original {
        ".mjs" | ".mts" | ".d.mts" => ts
            .then(|| try_ext(".mts"))
            .flatten()
            .or_else(|| dts.then(|| try_ext(".d.mts")).flatten())
            .or_else(|| js.then(|| try_ext(".mjs")).flatten()),
        ".cjs" | ".cts" | ".d.cts" => ts
            .then(|| try_ext(".cts"))
            .flatten()
            .or_else(|| dts.then(|| try_ext(".d.cts")).flatten())
            .or_else(|| js.then(|| try_ext(".cjs")).flatten()),
        ".json" => dts
            .then(|| try_ext(".d.json.ts"))
            .flatten()
            .or_else(|| json.then(|| try_ext(".json")).flatten()),
        ".tsx" | ".jsx" => ts
            .then(|| try_ext(".tsx").or_else(|| try_ext(".ts")))
            .flatten()
            .or_else(|| dts.then(|| try_ext(".d.ts")).flatten())
            .or_else(|| js.then(|| try_ext(".jsx").or_else(|| try_ext(".js"))).flatten()),
        ".ts" | ".d.ts" | ".js" | "" => ts
            .then(|| try_ext(".ts").or_else(|| try_ext(".tsx")))
            .flatten()
            .or_else(|| dts.then(|| try_ext(".d.ts")).flatten())
            .or_else(|| js.then(|| try_ext(".js").or_else(|| try_ext(".jsx"))).flatten()),
        other => {
            let declaration = format!("{base}{other}");
            (dts && !declaration.ends_with(".d.ts") && !declaration.contains(".d."))
                .then(|| try_ext(&format!(".d{other}.ts")))
                .flatten()
        }
    }
}

/// A path named by a package.json field or an `exports`/`imports` target.
fn load_from_package_json_field(state: &State, ext: u8, candidate: &Path) -> Option<Found> {
    let text = candidate.to_str()?;
    let ts_impl = [".ts", ".tsx", ".mts", ".cts"].iter().any(|e| text.ends_with(e)) && !is_declaration(text);
    if (ext & TS != 0 && ts_impl) || (ext & DTS != 0 && is_declaration(text)) {
        let found = state.host.probe(candidate).map(|hit| Found {
            path: candidate.to_path_buf(),
            hit,
        });
        return or_source(state, ext, candidate, found);
    }
    let found = load_from_file_no_implicit_extensions(state, ext, candidate);
    or_source(state, ext, candidate, found)
}

fn is_declaration(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".d.ts")
        || name.ends_with(".d.mts")
        || name.ends_with(".d.cts")
        || (name.ends_with(".ts") && name.contains(".d."))
}

fn load_from_directory(state: &State, ext: u8, candidate: &Path) -> Option<Found> {
    let package = state.host.package_json(candidate);
    load_from_directory_worker(state, ext, candidate, package.as_deref())
}

fn load_from_directory_worker(
    state: &State,
    ext: u8,
    candidate: &Path,
    package: Option<&PackageJson>,
) -> Option<Found> {
    let package = package.filter(|p| p.dir == candidate);
    let versions = package.and_then(types_versions_paths);
    let package_file = package.and_then(|p| {
        let types = if ext & DTS != 0 {
            p.path_field("typings").or_else(|| p.path_field("types"))
        } else {
            None
        };
        types.or_else(|| (ext & (TS | JS | DTS) != 0).then(|| p.path_field("main")).flatten())
    });
    let is_module = package.is_some_and(PackageJson::is_module);
    let mut loader = |e: u8, c: &Path| -> Option<Found> {
        if let Some(found) = load_from_package_json_field(state, e, c) {
            return Some(found);
        }
        let expanded = if e == DTS { TS | DTS } else { e };
        let inner = State {
            host: state.host,
            options: state.options,
            features: if is_module {
                state.features
            } else {
                state.features & !ESM
            },
            conditions: state.conditions.clone(),
            resolution: state.resolution,
        };
        load_by_relative_name(&inner, expanded, c, false)
    };
    let index = candidate.join("index");
    if let Some(paths) = versions {
        if package_file.as_ref().is_none_or(|f| f.starts_with(candidate)) {
            let target = package_file.clone().unwrap_or_else(|| index.clone());
            if let Ok(relative) = target.strip_prefix(candidate) {
                let module_name = relative.to_string_lossy().into_owned();
                // A matching pattern decides, found or not.
                if let Some(result) = load_using_paths(state, ext, &module_name, candidate, &paths, &mut loader) {
                    return result;
                }
            }
        }
    }
    if let Some(file) = &package_file {
        if let Some(found) = loader(ext, file) {
            return Some(found);
        }
    }
    if state.features & ESM == 0 {
        return load_from_file(state, ext, &index);
    }
    None
}

/// The `typesVersions` paths that apply to TypeScript 5.9: the first key whose range it
/// satisfies (`*`, `>=4.1`, `>=5`, `<6`…).
fn types_versions_paths(package: &PackageJson) -> Option<Vec<(String, Vec<String>)>> {
    let entries = package.field("typesVersions")?.entries()?;
    let (_, paths) = entries.into_iter().find(|(range, _)| version_range_holds(range))?;
    Some(
        paths
            .entries()?
            .into_iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    v.strings().unwrap_or_default().into_iter().map(String::from).collect(),
                )
            })
            .collect(),
    )
}

/// Whether TypeScript 5.9.3 satisfies a `typesVersions` range: `*`, or space-separated
/// comparators (`>=4.2`, `<5`, `5.x`); `||` alternatives.
fn version_range_holds(range: &str) -> bool {
    const VERSION: [u64; 3] = [5, 9, 3];
    let parse = |v: &str| -> Option<Vec<u64>> {
        v.split('.')
            .filter(|p| !p.is_empty() && *p != "x" && *p != "*")
            .map(|p| p.parse().ok())
            .collect()
    };
    let cmp = |v: &[u64]| -> std::cmp::Ordering {
        for (i, want) in v.iter().enumerate() {
            match VERSION[i.min(2)].cmp(want) {
                std::cmp::Ordering::Equal => continue,
                other => return other,
            }
        }
        std::cmp::Ordering::Equal
    };
    range.split("||").any(|alternative| {
        alternative.split_whitespace().all(|comparator| {
            if comparator == "*" {
                return true;
            }
            let (op, version) = ["<=", ">=", "<", ">", "="]
                .iter()
                .find_map(|op| comparator.strip_prefix(op).map(|v| (*op, v)))
                .unwrap_or(("=", comparator));
            let Some(v) = parse(version) else { return false };
            if v.is_empty() {
                return true;
            }
            let ord = cmp(&v);
            match op {
                "<=" => ord != std::cmp::Ordering::Greater,
                ">=" => ord != std::cmp::Ordering::Less,
                "<" => ord == std::cmp::Ordering::Less,
                ">" => ord == std::cmp::Ordering::Greater,
                _ => ord == std::cmp::Ordering::Equal,
            }
        }) && !alternative.trim().is_empty()
    })
}

/// `@scope/name/rest` → (`@scope/name`, `rest`).
pub fn package_name(spec: &str) -> (&str, &str) {
    let mut idx = spec.find('/');
    if spec.starts_with('@') {
        idx = idx.and_then(|i| spec[i + 1..].find('/').map(|j| i + 1 + j));
    }
    match idx {
        Some(i) => (&spec[..i], &spec[i + 1..]),
        None => (spec, ""),
    }
}

/// A package of the workspace by name, as the `node_modules` link to it resolves:
/// TypeScript's extensions first, then JavaScript.
fn load_from_workspace(state: &State, ext: u8, spec: &str) -> Option<Found> {
    let (name, rest) = package_name(spec);
    let dir = state.host.workspace_package(name)?;
    let priority = ext & (TS | DTS);
    let secondary = ext & !(TS | DTS);
    (priority != 0)
        .then(|| load_from_package_dir(state, priority, &dir, rest))
        .flatten()
        .or_else(|| {
            (secondary != 0)
                .then(|| load_from_package_dir(state, secondary, &dir, rest))
                .flatten()
        })
}

fn load_from_package_dir(state: &State, ext: u8, package_dir: &Path, rest: &str) -> Option<Found> {
    let candidate = if rest.is_empty() {
        package_dir.to_path_buf()
    } else {
        normalize(&package_dir.join(rest))
    };
    let root = state.host.package_json(package_dir);
    if !rest.is_empty() {
        let sub = state.host.package_json(&candidate);
        if sub.is_some()
            && (state.features & EXPORTS == 0 || root.as_ref().is_none_or(|r| r.field("exports").is_none()))
        {
            if let Some(found) = load_from_file(state, ext, &candidate) {
                return Some(found);
            }
            return load_from_directory_worker(state, ext, &candidate, sub.as_deref());
        }
    }
    let package = root;
    if let Some(p) = &package {
        if p.field("exports").is_some() && state.features & EXPORTS != 0 {
            let subpath = if rest.is_empty() {
                ".".to_string()
            } else {
                format!("./{rest}")
            };
            return load_from_exports(state, ext, p, &subpath);
        }
    }
    let mut loader = |e: u8, c: &Path| -> Option<Found> {
        let from_file = if !rest.is_empty() || state.features & ESM == 0 {
            load_from_file(state, e, c)
        } else {
            None
        };
        let mut found = from_file.or_else(|| load_from_directory_worker(state, e, c, package.as_deref()));
        if found.is_none()
            && rest.is_empty()
            && package.as_ref().is_some_and(|p| p.field("exports").is_none())
            && state.features & ESM != 0
        {
            found = load_from_file(state, e, &c.join("index.js"));
        }
        found
    };
    if !rest.is_empty() {
        if let Some(paths) = package.as_deref().and_then(types_versions_paths) {
            if let Some(result) = load_using_paths(state, ext, rest, package_dir, &paths, &mut loader) {
                return result;
            }
        }
    }
    loader(ext, &candidate)
}

fn load_from_self_name(state: &State, ext: u8, spec: &str, dir: &Path) -> Option<Found> {
    let scope = package_scope(state.host, dir)?;
    scope.field("exports")?;
    let name = scope.name()?;
    let parts: Vec<&str> = spec.split('/').filter(|p| !p.is_empty()).collect();
    let name_parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
    if parts.len() < name_parts.len() || parts[..name_parts.len()] != name_parts[..] {
        return None;
    }
    let trailing = &parts[name_parts.len()..];
    let subpath = if trailing.is_empty() {
        ".".to_string()
    } else {
        format!("./{}", trailing.join("/"))
    };
    if state.options.effective_allow_js() && !dir.to_string_lossy().contains("/node_modules/") {
        return load_from_exports(state, ext, &scope, &subpath);
    }
    let priority = ext & (TS | DTS);
    let secondary = ext & !(TS | DTS);
    (priority != 0)
        .then(|| load_from_exports(state, priority, &scope, &subpath))
        .flatten()
        .or_else(|| {
            (secondary != 0)
                .then(|| load_from_exports(state, secondary, &scope, &subpath))
                .flatten()
        })
}

fn load_from_exports(state: &State, ext: u8, scope: &PackageJson, subpath: &str) -> Option<Found> {
    let exports = scope.field("exports")?;
    let all_dot = |v: &Json| v.entries().is_some_and(|e| e.iter().all(|(k, _)| k.starts_with('.')));
    let no_dot = |v: &Json| v.entries().is_some_and(|e| !e.iter().any(|(k, _)| k.starts_with('.')));
    if subpath == "." {
        let main = match exports {
            Json::String(_) | Json::Array(_) => Some(exports),
            Json::Object(_) if no_dot(exports) => Some(exports),
            Json::Object(_) => exports.get("."),
            _ => None,
        }?;
        return load_target(state, ext, scope, main, "", false, false);
    }
    if all_dot(exports) {
        return load_from_exports_or_imports(state, ext, scope, subpath, exports, false);
    }
    None
}

fn load_from_imports(state: &State, ext: u8, spec: &str, dir: &Path) -> Option<Found> {
    if spec == "#" || spec.starts_with("#/") {
        return None;
    }
    let scope = package_scope(state.host, dir)?;
    let imports = scope.field("imports")?;
    load_from_exports_or_imports(state, ext, &scope, spec, imports, true)
}

fn load_from_exports_or_imports(
    state: &State,
    ext: u8,
    scope: &PackageJson,
    name: &str,
    table: &Json,
    is_imports: bool,
) -> Option<Found> {
    let entries = table.entries()?;
    if !name.ends_with('/') && !name.contains('*') {
        if let Some((_, target)) = entries.iter().find(|(k, _)| *k == name) {
            return load_target(state, ext, scope, target, "", false, is_imports);
        }
    }
    let mut expanding: Vec<(&str, &Json)> = entries
        .iter()
        .filter(|(k, _)| {
            let first = k.find('*');
            (first.is_some() && first == k.rfind('*')) || k.ends_with('/')
        })
        .copied()
        .collect();
    expanding.sort_by(|(a, _), (b, _)| compare_pattern_keys(a, b));
    for (key, target) in expanding {
        if state.features & TRAILERS != 0 && matches_with_trailer(key, name) {
            let star = key.find('*').unwrap_or(0);
            let sub = &name[star..name.len() - (key.len() - 1 - star)];
            return load_target(state, ext, scope, target, sub, true, is_imports);
        } else if key.ends_with('*') && name.starts_with(&key[..key.len() - 1]) {
            let sub = &name[key.len() - 1..];
            return load_target(state, ext, scope, target, sub, true, is_imports);
        } else if let Some(sub) = name.strip_prefix(key) {
            return load_target(state, ext, scope, target, sub, false, is_imports);
        }
    }
    None
}

fn matches_with_trailer(key: &str, name: &str) -> bool {
    if key.ends_with('*') {
        return false;
    }
    let Some(star) = key.find('*') else { return false };
    name.starts_with(&key[..star]) && name.ends_with(&key[star + 1..])
}

fn compare_pattern_keys(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    let a_star = a.find('*');
    let b_star = b.find('*');
    let base_a = a_star.map_or(a.len(), |i| i + 1);
    let base_b = b_star.map_or(b.len(), |i| i + 1);
    if base_a > base_b {
        return Less;
    }
    if base_b > base_a {
        return Greater;
    }
    if a_star.is_none() {
        return Greater;
    }
    if b_star.is_none() {
        return Less;
    }
    if a.len() > b.len() {
        return Less;
    }
    if b.len() > a.len() {
        return Greater;
    }
    Equal
}

fn load_target(
    state: &State,
    ext: u8,
    scope: &PackageJson,
    target: &Json,
    subpath: &str,
    pattern: bool,
    is_imports: bool,
) -> Option<Found> {
    match target {
        Json::String(target) => {
            if !pattern && !subpath.is_empty() && !target.ends_with('/') {
                return None;
            }
            if !target.starts_with("./") {
                if is_imports && !target.starts_with("../") && !target.starts_with('/') {
                    // `"#db": "@app/db"`: a bare specifier, resolved from the package.
                    let lookup = if pattern {
                        target.replace('*', subpath)
                    } else {
                        format!("{target}{subpath}")
                    };
                    let dir = scope.dir.clone();
                    return if state.resolution == ModuleResolution::Node10 {
                        try_resolve(state, ext & (TS | DTS), &lookup, &dir)
                            .or_else(|| try_resolve(state, ext & !(TS | DTS), &lookup, &dir))
                    } else {
                        try_resolve(state, ext, &lookup, &dir)
                    };
                }
                return None;
            }
            if target
                .split('/')
                .skip(1)
                .any(|p| p == ".." || p == "." || p == "node_modules")
            {
                return None;
            }
            if subpath.split('/').any(|p| p == ".." || p == "." || p == "node_modules") {
                return None;
            }
            let resolved = if pattern {
                target.replace('*', subpath)
            } else {
                format!("{target}{subpath}")
            };
            let final_path = normalize(&scope.dir.join(&resolved));
            load_from_package_json_field(state, ext, &final_path)
        }
        Json::Object(_) => {
            for (condition, sub) in target.entries()? {
                if condition == "default"
                    || state.conditions.iter().any(|c| c == condition)
                    || versioned_types_key(&state.conditions, condition)
                {
                    if let Some(found) = load_target(state, ext, scope, sub, subpath, pattern, is_imports) {
                        return Some(found);
                    }
                }
            }
            None
        }
        Json::Array(items) => items
            .iter()
            .find_map(|item| load_target(state, ext, scope, item, subpath, pattern, is_imports)),
        _ => None,
    }
}

/// `types@>=5.0`-style conditions, for TypeScript 5.9.
fn versioned_types_key(conditions: &[String], key: &str) -> bool {
    conditions.iter().any(|c| c == "types")
        && key
            .strip_prefix("types@")
            .is_some_and(|range| !range.is_empty() && version_range_holds(range))
}

/// The source a workspace package's build output is compiled from (`dist/x.js`, `lib/x.d.ts`
/// → `src/x.ts`; `dist/src/x.js` → `src/x.ts`), when the index has it: retrylint reads the source, which a checkout that was
/// never built has too.
fn workspace_source(state: &State, ext: u8, output: &Path) -> Option<Found> {
    if ext & TS == 0 {
        return None;
    }
    let package = package_scope(state.host, output.parent()?)?;
    let relative = output.strip_prefix(&package.dir).ok()?;
    let mut components = relative.components();
    let first = components.next()?.as_os_str().to_str()?;
    if !matches!(first, "dist" | "build" | "lib" | "out") {
        return None;
    }
    let rest = components.as_path().to_str()?;
    let (stem, original) = [".d.ts", ".d.mts", ".d.cts", ".js", ".mjs", ".cjs", ".jsx"]
        .iter()
        .find_map(|e| rest.strip_suffix(e).map(|s| (s, *e)))
        .unwrap_or((rest, ""));
    // An ESM import names its file with the extension.
    if original.is_empty() && state.features & ESM != 0 {
        return None;
    }
    let original = match original {
        ".d.mts" => ".mjs",
        ".d.cts" => ".cjs",
        ".d.ts" => ".js",
        other => other,
    };
    // The output mirrors src/ (`dist/x.js` ← `src/x.ts`), or the package itself, for a build
    // rooted there (`dist/src/x.js` ← `src/x.ts`).
    [package.dir.join("src").join(stem), package.dir.join(stem)]
        .iter()
        .filter_map(|source| try_adding_extensions(state, source, TS, original))
        .find(|found| matches!(found.hit, Hit::File(_)))
}

/// Classic resolution: relative files (no directories), then each ancestor directory for a
/// bare name; TypeScript's extensions first, then JavaScript.
fn classic(host: &dyn Host, options: &CompilerOptions, dir: &Path, spec: &str) -> Option<Found> {
    let state = State {
        host,
        options,
        features: 0,
        conditions: Vec::new(),
        resolution: ModuleResolution::Classic,
    };
    let json = if options.resolve_json_module.unwrap_or(false) {
        JSON
    } else {
        0
    };
    [TS | DTS, JS | json].into_iter().find_map(|ext| {
        if let Some(found) = optional_settings(&state, ext, spec, dir, &mut |e, c| load_from_file(&state, e, c)) {
            return Some(found);
        }
        if !is_relative(spec) {
            let mut current = Some(dir);
            while let Some(d) = current {
                if let Some(found) = load_from_file(&state, ext, &normalize(&d.join(spec))) {
                    return Some(found);
                }
                current = d.parent();
            }
            None
        } else {
            load_from_file(&state, ext, &normalize(&dir.join(spec)))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_keys_and_versions() {
        let keys = ["@/*", "@/lib/*", "exact"];
        assert_eq!(
            best_pattern(keys.iter().copied(), "@/lib/x"),
            Some(("@/lib/*", Some("x")))
        );
        assert_eq!(best_pattern(keys.iter().copied(), "@/x"), Some(("@/*", Some("x"))));
        assert_eq!(best_pattern(keys.iter().copied(), "exact"), Some(("exact", None)));
        assert!(version_range_holds("*"));
        assert!(version_range_holds(">=4.1"));
        assert!(!version_range_holds("<4.0"));
        assert!(version_range_holds(">=5 <6"));
        assert_eq!(package_name("@app/db/x/y"), ("@app/db", "x/y"));
        assert_eq!(package_name("lodash"), ("lodash", ""));
        let mut keys = vec!["./*", "./lib/*", "./lib/x.js", "./*.js"];
        keys.sort_by(|a, b| compare_pattern_keys(a, b));
        assert_eq!(keys, ["./lib/x.js", "./lib/*", "./*.js", "./*"]);
    }
}
