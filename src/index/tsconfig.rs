//! tsconfig.json as TypeScript reads it for module resolution: the compiler options that
//! decide how an import resolves (`moduleResolution`, `module`, `target`, `baseUrl`, `paths`,
//! `rootDirs`, package.json `exports`/`imports` switches, `customConditions`, `outDir`), merged
//! across `extends` chains (relative configs and published bases in `node_modules` such as
//! `@tsconfig/node20`), and which files the project holds (`files`, `include`, `exclude`), so
//! that each file is resolved with the options of the project that owns it, the way the
//! editor's TypeScript picks it: the nearest tsconfig.json (or jsconfig.json) whose files
//! include it, or one of the projects it references (solution-style configs), else the nearest
//! one above that. Mirrors TypeScript 5.9's `parseJsonConfigFileContent`; what it does not
//! model is listed in `tests/oracle/README.md`.

use std::path::{Component, Path, PathBuf};

use super::json::{self, Json};
use crate::source::normalize;

/// How deep `extends` and `references` are followed: a cycle or an absurd chain stops here.
const MAX_DEPTH: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleResolution {
    Classic,
    Node10,
    Node16,
    NodeNext,
    Bundler,
}

/// `module`, as far as module resolution cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleKind {
    None,
    CommonJs,
    Amd,
    Umd,
    System,
    /// es2015 to esnext: plain ESM.
    Es(u32),
    Node16,
    Node18,
    Node20,
    NodeNext,
    Preserve,
}

/// The compiler options module resolution reads, with paths made absolute against the config
/// that set them.
#[derive(Debug, Clone, Default)]
pub struct CompilerOptions {
    pub module: Option<ModuleKind>,
    /// `target` as a year (5 for ES5, 2015…, 9999 for esnext; 3 for ES3).
    pub target: Option<u32>,
    pub module_resolution: Option<ModuleResolution>,
    pub base_url: Option<PathBuf>,
    /// Pattern → targets, in the order written.
    pub paths: Option<Vec<(String, Vec<String>)>>,
    /// The directory of the config that set `paths` (their base without `baseUrl`).
    pub paths_base: Option<PathBuf>,
    pub root_dirs: Option<Vec<PathBuf>>,
    pub allow_js: Option<bool>,
    pub check_js: Option<bool>,
    pub resolve_json_module: Option<bool>,
    pub resolve_package_json_exports: Option<bool>,
    pub resolve_package_json_imports: Option<bool>,
    pub custom_conditions: Option<Vec<String>>,
    pub no_dts_resolution: Option<bool>,
    pub out_dir: Option<PathBuf>,
    pub declaration_dir: Option<PathBuf>,
    pub root_dir: Option<PathBuf>,
    pub composite: Option<bool>,
    pub preserve_symlinks: Option<bool>,
    /// `moduleSuffixes` (React Native): not modelled; a project that sets it resolves as if
    /// it did not, and says so nowhere (it is rare and only adds candidates).
    pub module_suffixes: Option<Vec<String>>,
}

impl CompilerOptions {
    /// `other` over `self`, key by key, as `extends` merges options.
    fn overlay(&mut self, other: &CompilerOptions) {
        macro_rules! take {
            ($($field:ident),*) => { $( if other.$field.is_some() { self.$field = other.$field.clone(); } )* };
        }
        take!(
            module,
            target,
            module_resolution,
            base_url,
            paths,
            paths_base,
            root_dirs,
            allow_js,
            check_js,
            resolve_json_module,
            resolve_package_json_exports,
            resolve_package_json_imports,
            custom_conditions,
            no_dts_resolution,
            out_dir,
            declaration_dir,
            root_dir,
            composite,
            preserve_symlinks,
            module_suffixes
        );
    }

    /// The `target` TypeScript computes: the set one, else what `module` implies, else ES5.
    fn effective_target(&self) -> u32 {
        match self.target.filter(|&t| t != 3) {
            Some(t) => t,
            None => match self.module {
                Some(ModuleKind::Node16) | Some(ModuleKind::Node18) => 2022,
                Some(ModuleKind::Node20) => 2023,
                Some(ModuleKind::NodeNext) => 9999,
                _ => 5,
            },
        }
    }

    /// The `module` TypeScript computes: the set one, else ES2015 for a target from ES2015
    /// on, else CommonJS.
    pub fn effective_module(&self) -> ModuleKind {
        self.module.unwrap_or(if self.effective_target() >= 2015 {
            ModuleKind::Es(2015)
        } else {
            ModuleKind::CommonJs
        })
    }

    /// The `moduleResolution` TypeScript computes from `module` when it is not set.
    pub fn effective_resolution(&self) -> ModuleResolution {
        self.module_resolution.unwrap_or(match self.effective_module() {
            ModuleKind::CommonJs => ModuleResolution::Node10,
            ModuleKind::Node16 | ModuleKind::Node18 | ModuleKind::Node20 => ModuleResolution::Node16,
            ModuleKind::NodeNext => ModuleResolution::NodeNext,
            ModuleKind::Preserve => ModuleResolution::Bundler,
            _ => ModuleResolution::Classic,
        })
    }

    fn supports_exports_and_imports(&self) -> bool {
        matches!(
            self.effective_resolution(),
            ModuleResolution::Node16 | ModuleResolution::NodeNext | ModuleResolution::Bundler
        )
    }

    pub fn effective_resolve_exports(&self) -> bool {
        self.supports_exports_and_imports() && self.resolve_package_json_exports.unwrap_or(true)
    }

    pub fn effective_resolve_imports(&self) -> bool {
        self.supports_exports_and_imports() && self.resolve_package_json_imports.unwrap_or(true)
    }

    pub fn effective_resolve_json(&self) -> bool {
        self.resolve_json_module.unwrap_or(
            matches!(self.effective_module(), ModuleKind::Node20 | ModuleKind::NodeNext)
                || self.effective_resolution() == ModuleResolution::Bundler,
        )
    }

    pub fn effective_allow_js(&self) -> bool {
        self.allow_js.unwrap_or(self.check_js.unwrap_or(false))
    }

    /// Whether the syntax of an import (ESM or `require`) decides how it resolves.
    pub fn import_syntax_matters(&self) -> bool {
        matches!(
            self.effective_resolution(),
            ModuleResolution::Node16 | ModuleResolution::NodeNext
        ) || self.effective_resolve_exports()
            || self.effective_resolve_imports()
    }
}

/// One tsconfig.json (or jsconfig.json) with what it extends applied.
#[derive(Debug)]
pub struct Project {
    pub config: PathBuf,
    pub options: CompilerOptions,
    files: Option<Vec<PathBuf>>,
    include: Option<Vec<Spec>>,
    exclude: Vec<Spec>,
    /// The config files of `references`, resolved.
    pub references: Vec<PathBuf>,
}

/// What a config file reads as, before its `extends` are applied: options, and
/// `files`/`include`/`exclude` with absolute bases.
#[derive(Debug, Default, Clone)]
struct Raw {
    options: CompilerOptions,
    files: Option<Vec<String>>,
    include: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
}

impl Project {
    /// Reads the project of `config`, or `None` when it does not read or parse (TypeScript
    /// reports an error then, and resolves nothing with it).
    pub fn read(config: &Path, workspace: Workspace, boundaries: &[PathBuf]) -> Option<Project> {
        let json = json::read(config, boundaries)?;
        let dir = config.parent()?.to_path_buf();
        let jsconfig = config.file_name().is_some_and(|n| n == "jsconfig.json");
        let mut stack = vec![config.to_path_buf()];
        let mut raw = read_raw(&json, config, &dir, &dir, &mut stack, workspace, boundaries)?;
        if jsconfig && raw.options.allow_js.is_none() {
            raw.options.allow_js = Some(true);
        }
        let exclude = match raw.exclude {
            Some(specs) => specs,
            // Without `exclude`, the output directories are excluded.
            None => [&raw.options.out_dir, &raw.options.declaration_dir]
                .into_iter()
                .flatten()
                .map(|d| d.to_string_lossy().into_owned())
                .collect(),
        };
        let include = match (&raw.files, raw.include) {
            (None, None) => Some(vec![dir.join("**/*").to_string_lossy().into_owned()]),
            (_, include) => include,
        };
        let references = json
            .get("references")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("path")?.as_str())
            .map(|p| {
                let target = normalize(&dir.join(p));
                if target.extension().is_some_and(|e| e == "json") {
                    target
                } else {
                    target.join("tsconfig.json")
                }
            })
            .collect();
        Some(Project {
            config: config.to_path_buf(),
            files: raw
                .files
                .map(|files| files.iter().map(|f| normalize(&dir.join(f))).collect()),
            include: include.map(|specs| specs.iter().filter_map(|s| Spec::new(&dir, s, false)).collect()),
            exclude: exclude.iter().filter_map(|s| Spec::new(&dir, s, true)).collect(),
            options: raw.options,
            references,
        })
    }

    /// Whether `file` is one of the project's files (its `fileNames`). `extra` are extensions
    /// beyond TypeScript's that the project's tooling includes (`.vue`, `.svelte`).
    pub fn includes(&self, file: &Path, extra: &[&str]) -> bool {
        if self.files.as_ref().is_some_and(|files| files.iter().any(|f| f == file)) {
            return true;
        }
        let Some(include) = &self.include else { return false };
        let Some(name) = file.file_name().and_then(|n| n.to_str()) else {
            return false;
        };
        let allow_js = self.options.effective_allow_js();
        if !supported(name, allow_js, extra) {
            return false;
        }
        let matched =
            |path: &Path| include.iter().any(|s| s.matches(path)) && !self.exclude.iter().any(|s| s.matches(path));
        if !matched(file) {
            return false;
        }
        // A file with a sibling of a higher-priority extension (`a.js` beside `a.ts`) is left
        // out for that sibling.
        let dir = file.parent().unwrap_or(Path::new(""));
        higher_priority_siblings(name, allow_js).into_iter().all(|sibling| {
            let path = dir.join(sibling);
            !(matched(&path) && path.is_file())
        })
    }
}

/// What `compilerOptions` of `json` say, made absolute against `dir`, with `extends` applied.
/// `leaf` is the directory of the config being read (`${configDir}`).
fn read_raw(
    json: &Json,
    config: &Path,
    dir: &Path,
    leaf: &Path,
    stack: &mut Vec<PathBuf>,
    workspace: Workspace,
    boundaries: &[PathBuf],
) -> Option<Raw> {
    if stack.len() > MAX_DEPTH {
        return None;
    }
    let mut own = Raw {
        options: options(json.get("compilerOptions"), dir, leaf),
        files: specs(json.get("files"), dir, leaf),
        include: specs(json.get("include"), dir, leaf),
        exclude: specs(json.get("exclude"), dir, leaf),
    };
    let extends: Vec<&str> = match json.get("extends") {
        Some(Json::String(one)) => vec![one.as_str()],
        Some(Json::Array(many)) => many.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    if extends.is_empty() {
        return Some(own);
    }
    let mut merged = Raw::default();
    for base in extends {
        let Some(path) = extends_path(base, dir, workspace, boundaries) else {
            continue;
        };
        if stack.contains(&path) {
            continue;
        }
        let Some(base_json) = json::read(&path, boundaries) else {
            continue;
        };
        let Some(base_dir) = path.parent().map(Path::to_path_buf) else {
            continue;
        };
        stack.push(path.clone());
        let base_raw = read_raw(&base_json, &path, &base_dir, leaf, stack, workspace, boundaries);
        stack.pop();
        let Some(base_raw) = base_raw else { continue };
        // `include`, `exclude` and `files` come from the base when the config has none
        // (already absolute against the base's directory).
        if own.include.is_none() && base_raw.include.is_some() {
            merged.include = base_raw.include.clone();
        }
        if own.exclude.is_none() && base_raw.exclude.is_some() {
            merged.exclude = base_raw.exclude.clone();
        }
        if own.files.is_none() && base_raw.files.is_some() {
            merged.files = base_raw.files.clone();
        }
        merged.options.overlay(&base_raw.options);
    }
    let _ = config;
    merged.options.overlay(&own.options);
    own.options = merged.options;
    own.include = own.include.or(merged.include);
    own.exclude = own.exclude.or(merged.exclude);
    own.files = own.files.or(merged.files);
    Some(own)
}

/// The config an `extends` entry names: a path relative to `dir` (`.json` added when the
/// file without it does not exist), or a package's config found in `node_modules` above
/// (`@tsconfig/node20/tsconfig.json`, `@tsconfig/node20`: its package.json `tsconfig` field,
/// else its `tsconfig.json`), else in a package of the workspace by that name.
fn extends_path(name: &str, dir: &Path, workspace: Workspace, boundaries: &[PathBuf]) -> Option<PathBuf> {
    let name = name.replace('\\', "/");
    if name.starts_with("./") || name.starts_with("../") || name.starts_with('/') {
        let path = normalize(&dir.join(&name));
        if path.is_file() || name.ends_with(".json") {
            return Some(path);
        }
        let with_json = PathBuf::from(format!("{}.json", path.display()));
        return with_json.is_file().then_some(with_json);
    }
    if name.is_empty() {
        return None;
    }
    let mut current = Some(dir);
    while let Some(d) = current {
        if d.file_name().is_some_and(|n| n != "node_modules") || d.parent().is_none() {
            if let Some(found) = package_config(&normalize(&d.join("node_modules").join(&name)), &name, boundaries) {
                return Some(found);
            }
        }
        current = d.parent();
    }
    // A package of the workspace, by name, as its node_modules link would find it installed.
    let (package, rest) = super::resolve::package_name(&name);
    let dir = workspace(package)?;
    let candidate = if rest.is_empty() {
        dir
    } else {
        normalize(&dir.join(rest))
    };
    package_config(&candidate, &name, boundaries)
}

/// The config `candidate` (a path in a package) names: the file, the file with `.json`, or
/// a directory's package.json `tsconfig` field, else its `tsconfig.json`.
fn package_config(candidate: &Path, name: &str, boundaries: &[PathBuf]) -> Option<PathBuf> {
    if candidate.is_file() && name.ends_with(".json") {
        return Some(candidate.to_path_buf());
    }
    let with_json = PathBuf::from(format!("{}.json", candidate.display()));
    if with_json.is_file() {
        return Some(with_json);
    }
    if candidate.is_dir() {
        let field = json::read(&candidate.join("package.json"), boundaries)
            .and_then(|p| p.get("tsconfig").and_then(Json::as_str).map(String::from));
        if let Some(field) = field {
            let path = normalize(&candidate.join(field));
            if path.is_file() {
                return Some(path);
            }
        }
        let index = candidate.join("tsconfig.json");
        if index.is_file() {
            return Some(index);
        }
    }
    None
}

/// The directory of a workspace package by name.
pub type Workspace<'w> = &'w dyn Fn(&str) -> Option<PathBuf>;

/// `${configDir}` replaced by the directory of the config being read, else `value` made
/// absolute against `dir`.
fn config_path(value: &str, dir: &Path, leaf: &Path) -> PathBuf {
    match value.strip_prefix("${configDir}") {
        Some(rest) => normalize(&leaf.join(format!(".{rest}"))),
        None => normalize(&dir.join(value)),
    }
}

fn specs(value: Option<&Json>, dir: &Path, leaf: &Path) -> Option<Vec<String>> {
    let items = value?.as_array()?;
    Some(
        items
            .iter()
            .filter_map(Json::as_str)
            .map(|s| config_path(s, dir, leaf).to_string_lossy().into_owned())
            .collect(),
    )
}

fn options(json: Option<&Json>, dir: &Path, leaf: &Path) -> CompilerOptions {
    let mut out = CompilerOptions::default();
    let Some(json) = json else { return out };
    let text = |key: &str| json.get(key).and_then(Json::as_str).map(str::to_ascii_lowercase);
    let flag = |key: &str| json.get(key).and_then(Json::as_bool);
    let path = |key: &str| json.get(key).and_then(Json::as_str).map(|p| config_path(p, dir, leaf));
    out.module_resolution = text("moduleResolution").and_then(|v| match v.as_str() {
        "classic" => Some(ModuleResolution::Classic),
        "node" | "node10" => Some(ModuleResolution::Node10),
        "node16" => Some(ModuleResolution::Node16),
        "nodenext" => Some(ModuleResolution::NodeNext),
        "bundler" => Some(ModuleResolution::Bundler),
        _ => None,
    });
    out.module = text("module").and_then(|v| match v.as_str() {
        "none" => Some(ModuleKind::None),
        "commonjs" => Some(ModuleKind::CommonJs),
        "amd" => Some(ModuleKind::Amd),
        "umd" => Some(ModuleKind::Umd),
        "system" => Some(ModuleKind::System),
        "es6" | "es2015" => Some(ModuleKind::Es(2015)),
        "es2020" => Some(ModuleKind::Es(2020)),
        "es2022" => Some(ModuleKind::Es(2022)),
        "esnext" => Some(ModuleKind::Es(9999)),
        "node16" => Some(ModuleKind::Node16),
        "node18" => Some(ModuleKind::Node18),
        "node20" => Some(ModuleKind::Node20),
        "nodenext" => Some(ModuleKind::NodeNext),
        "preserve" => Some(ModuleKind::Preserve),
        _ => None,
    });
    out.target = text("target").and_then(|v| match v.as_str() {
        "es3" => Some(3),
        "es5" => Some(5),
        "es6" => Some(2015),
        "esnext" => Some(9999),
        other => other
            .strip_prefix("es")
            .and_then(|y| y.parse::<u32>().ok())
            .filter(|y| (2015..=2030).contains(y)),
    });
    out.base_url = path("baseUrl");
    if let Some(entries) = json.get("paths").and_then(Json::entries) {
        out.paths = Some(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let targets =
                        v.strings()
                            .unwrap_or_default()
                            .into_iter()
                            .map(|t| match t.strip_prefix("${configDir}") {
                                Some(rest) => format!("{}{rest}", leaf.display()),
                                None => t.to_string(),
                            });
                    (k.to_string(), targets.collect())
                })
                .collect(),
        );
        out.paths_base = Some(dir.to_path_buf());
    }
    out.root_dirs = json
        .get("rootDirs")
        .and_then(Json::strings)
        .map(|dirs| dirs.into_iter().map(|d| config_path(d, dir, leaf)).collect());
    out.allow_js = flag("allowJs");
    out.check_js = flag("checkJs");
    out.resolve_json_module = flag("resolveJsonModule");
    out.resolve_package_json_exports = flag("resolvePackageJsonExports");
    out.resolve_package_json_imports = flag("resolvePackageJsonImports");
    out.no_dts_resolution = flag("noDtsResolution");
    out.composite = flag("composite");
    out.preserve_symlinks = flag("preserveSymlinks");
    out.custom_conditions = json
        .get("customConditions")
        .and_then(Json::strings)
        .map(|c| c.into_iter().map(String::from).collect());
    out.module_suffixes = json
        .get("moduleSuffixes")
        .and_then(Json::strings)
        .map(|c| c.into_iter().map(String::from).collect());
    out.out_dir = path("outDir");
    out.declaration_dir = path("declarationDir");
    out.root_dir = path("rootDir");
    out
}

/// Whether a file name is one a project takes in through `include`.
fn supported(name: &str, allow_js: bool, extra: &[&str]) -> bool {
    const TS: &[&str] = &[".ts", ".tsx", ".mts", ".cts"];
    const JS: &[&str] = &[".js", ".jsx", ".mjs", ".cjs"];
    TS.iter().any(|e| name.ends_with(e))
        || (allow_js && JS.iter().any(|e| name.ends_with(e)))
        || extra.iter().any(|e| name.ends_with(e))
}

/// The names that, beside `name`, take its place in a project: within each group of
/// TypeScript's supported extensions, an earlier one wins.
fn higher_priority_siblings(name: &str, allow_js: bool) -> Vec<String> {
    let groups: &[&[&str]] = if allow_js {
        &[
            &[".ts", ".tsx", ".d.ts", ".js", ".jsx"],
            &[".cts", ".d.cts", ".cjs"],
            &[".mts", ".d.mts", ".mjs"],
        ]
    } else {
        &[&[".ts", ".tsx", ".d.ts"], &[".cts", ".d.cts"], &[".mts", ".d.mts"]]
    };
    for group in groups {
        // The longest matching extension (`.d.ts` before `.ts`).
        let found = group
            .iter()
            .enumerate()
            .filter(|(_, e)| name.ends_with(**e))
            .max_by_key(|(_, e)| e.len());
        if let Some((index, ext)) = found {
            let stem = &name[..name.len() - ext.len()];
            return group[..index].iter().map(|e| format!("{stem}{e}")).collect();
        }
    }
    Vec::new()
}

/// An `include` or `exclude` pattern, as TypeScript's wildcard matcher reads it.
#[derive(Debug, Clone)]
struct Spec {
    components: Vec<String>,
    exclude: bool,
}

impl Spec {
    /// `spec` is absolute already (made so against its config).
    fn new(_dir: &Path, spec: &str, exclude: bool) -> Option<Spec> {
        let mut components: Vec<String> = Path::new(spec)
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => s.to_str().map(String::from),
                _ => None,
            })
            .collect();
        let last = components.last()?.clone();
        if !exclude && last == "**" {
            return None;
        }
        // A last component without `.`, `*` or `?` is a directory: everything below it.
        if !last.contains(['.', '*', '?']) {
            components.push("**".into());
            components.push("*".into());
        }
        Some(Spec { components, exclude })
    }

    fn matches(&self, path: &Path) -> bool {
        let parts: Vec<&str> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => s.to_str(),
                _ => None,
            })
            .collect();
        match_components(&self.components, &parts, self.exclude)
    }
}

const PACKAGE_FOLDERS: &[&str] = &["node_modules", "bower_components", "jspm_packages"];

fn match_components(spec: &[String], parts: &[&str], exclude: bool) -> bool {
    let Some((first, rest)) = spec.split_first() else {
        // An exclude pattern matches a directory and everything below it.
        return parts.is_empty() || exclude;
    };
    if first == "**" {
        // Zero or more directories; for `include`, none hidden and none a package folder.
        for skip in 0..=parts.len() {
            if skip > 0 && !exclude {
                let dir = parts[skip - 1];
                if dir.starts_with('.') || PACKAGE_FOLDERS.contains(&dir) {
                    return false;
                }
            }
            if match_components(rest, &parts[skip..], exclude) {
                return true;
            }
        }
        return false;
    }
    let Some((part, remaining)) = parts.split_first() else {
        return false;
    };
    let wild = first.contains(['*', '?']);
    if !wild {
        return first == part && match_components(rest, remaining, exclude);
    }
    if !exclude && PACKAGE_FOLDERS.contains(part) {
        return false;
    }
    let is_last = remaining.is_empty();
    glob(first, part, exclude, is_last) && match_components(rest, remaining, exclude)
}

/// One path component against one pattern component (`*`, `?`). For `include`, a leading
/// wildcard never matches a leading `.`, and `*` never takes the `.` of a final `.min.js`.
fn glob(pattern: &str, name: &str, exclude: bool, is_last: bool) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    if !exclude && matches!(p.first(), Some('*') | Some('?')) && n.first() == Some(&'.') {
        return false;
    }
    fn go(p: &[char], n: &[char], at: usize, all: &[char], exclude: bool, is_last: bool) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*', rest)) => {
                for take in 0..=n.len() {
                    if take > 0 {
                        let c = n[take - 1];
                        if !exclude && c == '.' {
                            let after: String = all[at + take..].iter().collect();
                            if is_last && after == "min.js" {
                                return false;
                            }
                        }
                    }
                    if go(rest, &n[take..], at + take, all, exclude, is_last) {
                        return true;
                    }
                }
                false
            }
            Some(('?', rest)) => !n.is_empty() && go(rest, &n[1..], at + 1, all, exclude, is_last),
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..], at + 1, all, exclude, is_last),
        }
    }
    go(&p, &n, 0, &n, exclude, is_last)
}

/// The config files of `dir` TypeScript looks for, in order.
pub const CONFIG_NAMES: [&str; 2] = ["tsconfig.json", "jsconfig.json"];

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Spec {
        Spec::new(Path::new("/p"), s, false).unwrap()
    }

    #[test]
    fn include_patterns_match_as_typescript_reads_them() {
        assert!(spec("/p/src").matches(Path::new("/p/src/a/b.ts")));
        assert!(!spec("/p/src").matches(Path::new("/p/src/.hidden/b.ts")));
        assert!(!spec("/p/src").matches(Path::new("/p/src/node_modules/b.ts")));
        assert!(spec("/p/src/**/*.ts").matches(Path::new("/p/src/b.ts")));
        assert!(!spec("/p/src/*.ts").matches(Path::new("/p/src/x/b.ts")));
        assert!(!spec("/p/src/*").matches(Path::new("/p/src/b.min.js")));
        assert!(spec("/p/src/main.ts").matches(Path::new("/p/src/main.ts")));
        let exclude = Spec::new(Path::new("/p"), "/p/dist", true).unwrap();
        assert!(exclude.matches(Path::new("/p/dist/a/b.ts")));
        assert!(!exclude.matches(Path::new("/p/src/b.ts")));
        assert_eq!(higher_priority_siblings("a.js", true), ["a.ts", "a.tsx", "a.d.ts"]);
        assert_eq!(higher_priority_siblings("a.tsx", false), ["a.ts"]);
    }
}
