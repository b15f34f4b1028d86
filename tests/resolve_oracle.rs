//! Differential test of TypeScript module resolution against TypeScript itself (the
//! `typescript` package pinned in `tests/oracle/package.json`).
//!
//! For every import and re-export retrylint records, in every fixture and in generated
//! layouts of every tricky kind (`tests/oracle/layouts.mjs`, seeded: extends chains, published
//! bases, solution-style references, `paths` patterns with and without `baseUrl`, `rootDirs`,
//! each `moduleResolution`, `.js` specifiers naming `.ts` files, directory imports, package
//! `exports` and `imports` with conditions and patterns, `typesVersions`, workspaces of each
//! package manager, declarations, case), `retrylint resolve-imports` must name the file
//! `ts.resolveModuleName` names (`tests/oracle/resolve.mjs`, with the importing file's own
//! project and mode), after the two mappings retrylint documents (a workspace's build output
//! stands for its source; a declaration for the implementation beside it):
//!
//! - `file` / `unread` (a file retrylint reads / one on disk it does not read): the same path;
//! - `package` (a package outside the workspace, not looked up): TypeScript names nothing, or
//!   a file inside node_modules;
//! - `missing`: TypeScript names nothing.
//!
//! TypeScript is shown an installed and built workspace (links in node_modules, declaration
//! stubs of the build output); retrylint must answer the same without them. The agreement is
//! printed per category; a disagreement fails, unless `EXCLUDED` lists it with the reason.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

const SEEDS: &str = "42 7";
/// Layouts per category and seed.
const COUNT: &str = "12";
/// For a deeper run: `RESOLVE_SEEDS="1 2 3" RESOLVE_COUNT=60 cargo test --test resolve_oracle`.
fn setting(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// Disagreements that are known and justified: (category, specifier, why). None today; an
/// entry here must say why retrylint is right to differ, and every entry must still match.
const EXCLUDED: &[(&str, &str, &str)] = &[];

fn oracle_dir() -> PathBuf {
    common::repo_root().join("tests/oracle")
}

fn ensure_node_packages(dir: &Path) {
    if dir.join("node_modules/typescript/package.json").is_file() {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .status()
        .expect("npm is needed for the differential test (.ci/run installs it)");
    assert!(status.success(), "npm ci failed in {}", dir.display());
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// `retrylint resolve-imports` on the project at `root`.
fn retrylint(root: &Path) -> Vec<Value> {
    let output = common::bin()
        .arg("resolve-imports")
        .arg(root)
        .current_dir(root)
        .output()
        .expect("the binary runs");
    assert!(
        output.status.success(),
        "resolve-imports failed on {}: {}",
        root.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    lines(&output.stdout)
}

/// TypeScript's answers to `requests` (`{id, root, file, specifier}`), by id.
fn typescript(requests: &[Value]) -> BTreeMap<u64, Value> {
    let input: Vec<u8> = requests.iter().flat_map(|r| format!("{r}\n").into_bytes()).collect();
    let mut child = Command::new("node")
        .arg("resolve.mjs")
        .current_dir(oracle_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("Node.js is needed (.ci/run installs it)");
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(output.status.success(), "resolve.mjs failed");
    lines(&output.stdout)
        .into_iter()
        .map(|a| (a["id"].as_u64().unwrap(), a))
        .collect()
}

/// Whether retrylint's answer is TypeScript's.
fn agrees(mine: &Value, theirs: &Value) -> bool {
    let mapped = theirs["mapped"].as_str();
    match mine["kind"].as_str().unwrap() {
        "file" | "unread" => mine["resolved"].as_str() == mapped,
        "package" => mapped.is_none_or(|p| format!("/{p}").contains("/node_modules/")),
        "missing" => mapped.is_none(),
        other => panic!("unknown kind {other}"),
    }
}

/// Answers keyed by (file, specifier).
fn keyed(answers: &[Value]) -> BTreeMap<(String, String), (String, Value)> {
    answers
        .iter()
        .map(|a| {
            (
                (
                    a["file"].as_str().unwrap().to_string(),
                    a["specifier"].as_str().unwrap().to_string(),
                ),
                (a["kind"].as_str().unwrap().to_string(), a["resolved"].clone()),
            )
        })
        .collect()
}

/// Removes what `layouts.mjs` and `install.mjs` add for TypeScript (links in node_modules,
/// files marked `// built`), leaving the workspace as a fresh checkout has it; whether there
/// was any.
fn uninstall(dir: &Path) -> bool {
    let mut removed = false;
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            if path.components().any(|c| c.as_os_str() == "node_modules") {
                std::fs::remove_file(&path).unwrap();
                removed = true;
            }
        } else if kind.is_dir() {
            removed |= uninstall(&path);
        } else if std::fs::read(&path).is_ok_and(|b| b.starts_with(b"// built")) {
            std::fs::remove_file(&path).unwrap();
            removed = true;
        }
    }
    removed
}

/// Copies a tree, links as links.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// One project to compare: retrylint's answers on it (installed and built), the root TypeScript
/// reads, and its category.
struct Case {
    category: String,
    root: PathBuf,
    answers: Vec<Value>,
}

#[derive(Default)]
struct Tally {
    agree: usize,
    total: usize,
}

#[test]
#[ignore = "needs Node.js 18+, npm and the npm registry (npm ci in tests/oracle); .ci/run runs it"]
fn module_resolution_agrees_with_typescript() {
    common::require("node", "Node.js 18 or later");
    common::require("npm", "npm");
    let dir = oracle_dir();
    ensure_node_packages(&dir);
    let scratch = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    let mut unbuilt_problems = Vec::new();

    // The fixtures, installed and built in a copy; retrylint must answer the same on the
    // fixture as it is.
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(common::repo_root().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    fixtures.sort();
    for fixture in fixtures {
        let name = fixture.file_name().unwrap().to_string_lossy().to_string();
        let copy = scratch.path().join("fixtures").join(&name);
        copy_tree(&fixture, &copy);
        let status = Command::new("node")
            .arg(dir.join("install.mjs"))
            .arg(&copy)
            .status()
            .expect("node runs install.mjs");
        assert!(status.success(), "install.mjs failed on {name}");
        let installed = retrylint(&copy);
        let as_is = keyed(&retrylint(&fixture));
        if as_is != keyed(&installed) {
            unbuilt_problems.push(format!("fixtures/{name}: answers change once installed and built"));
        }
        cases.push(Case {
            category: format!("fixtures/{name}"),
            root: copy,
            answers: installed,
        });
    }

    // The generated layouts, each seed.
    for seed in setting("RESOLVE_SEEDS", SEEDS).split_whitespace() {
        let out = scratch.path().join(format!("seed-{seed}"));
        let generated = Command::new("node")
            .arg("layouts.mjs")
            .args(["--seed", seed, "--count", &setting("RESOLVE_COUNT", COUNT), "--out"])
            .arg(&out)
            .current_dir(&dir)
            .stderr(Stdio::inherit())
            .output()
            .expect("node runs the generator");
        assert!(generated.status.success(), "the generator failed");
        for layout in lines(&generated.stdout) {
            let root = PathBuf::from(layout["dir"].as_str().unwrap());
            let answers = retrylint(&root);
            // Without the links and the build, what resolved to a file still does.
            let bare = scratch
                .path()
                .join("bare")
                .join(root.strip_prefix(scratch.path()).unwrap());
            copy_tree(&root, &bare);
            if !uninstall(&bare) {
                cases.push(Case {
                    category: layout["category"].as_str().unwrap().to_string(),
                    root,
                    answers,
                });
                continue;
            }
            let without = keyed(&retrylint(&bare));
            for (key, (kind, resolved)) in keyed(&answers) {
                if kind == "file" && without.get(&key) != Some(&(kind.clone(), resolved.clone())) {
                    unbuilt_problems.push(format!(
                        "{} {} imports {:?}: {} installed and built, {:?} without",
                        root.display(),
                        key.0,
                        key.1,
                        resolved,
                        without.get(&key)
                    ));
                }
            }
            cases.push(Case {
                category: layout["category"].as_str().unwrap().to_string(),
                root,
                answers,
            });
        }
    }

    // Every request to TypeScript at once.
    let mut requests = Vec::new();
    for (c, case) in cases.iter().enumerate() {
        for (i, answer) in case.answers.iter().enumerate() {
            requests.push(serde_json::json!({
                "id": (c as u64) << 20 | i as u64,
                "root": case.root, "file": answer["file"], "specifier": answer["specifier"],
            }));
        }
    }
    let theirs = typescript(&requests);

    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut mappings: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut excluded_used = vec![0usize; EXCLUDED.len()];
    for (c, case) in cases.iter().enumerate() {
        let tally = tallies.entry(case.category.clone()).or_default();
        for (i, mine) in case.answers.iter().enumerate() {
            let answer = &theirs[&((c as u64) << 20 | i as u64)];
            tally.total += 1;
            *kinds.entry(mine["kind"].as_str().unwrap().to_string()).or_default() += 1;
            if let Some(mapping) = answer["mapping"].as_str() {
                *mappings.entry(mapping.to_string()).or_default() += 1;
            }
            if let Some(error) = answer.get("error") {
                failures.push(format!("{}: TypeScript failed on {mine}: {error}", case.root.display()));
                continue;
            }
            if agrees(mine, answer) {
                tally.agree += 1;
                continue;
            }
            let specifier = mine["specifier"].as_str().unwrap();
            if let Some(k) = EXCLUDED
                .iter()
                .position(|(category, spec, _)| *category == case.category && *spec == specifier)
            {
                excluded_used[k] += 1;
                continue;
            }
            failures.push(format!(
                "[{}] {} {} imports {:?}: retrylint {} {}, TypeScript {} (mapped {}, project {}, mode {})",
                case.category,
                case.root.display(),
                mine["file"].as_str().unwrap(),
                specifier,
                mine["kind"].as_str().unwrap(),
                mine["resolved"],
                answer["resolved"],
                answer["mapped"],
                answer["project"],
                answer["mode"],
            ));
        }
    }

    println!("module resolution vs TypeScript {}:", typescript_version(&dir));
    let (mut agree, mut total) = (0, 0);
    for (category, tally) in &tallies {
        println!("  {category}: agree {} / {}", tally.agree, tally.total);
        agree += tally.agree;
        total += tally.total;
    }
    println!("  retrylint's answers: {kinds:?}; mappings applied to TypeScript's: {mappings:?}");
    println!("agree {agree} / {total}");
    assert!(
        unbuilt_problems.is_empty(),
        "retrylint's answers depend on the install or the build:\n{}",
        unbuilt_problems.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} disagreements with TypeScript:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for ((category, spec, _), used) in EXCLUDED.iter().zip(excluded_used) {
        assert!(
            used > 0,
            "the exclusion of {spec:?} in {category} matches nothing: remove it"
        );
    }
    assert!(total > 1500, "only {total} imports compared");
}

fn typescript_version(dir: &Path) -> String {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("node_modules/typescript/package.json")).unwrap()).unwrap();
    manifest["version"].as_str().unwrap_or("?").to_string()
}

/// The findings of `fixtures/resolution-app` hang on its tricky imports: each one broken
/// (the specifier pointed at nothing) silences its file's findings, and the note says why.
#[test]
fn the_resolution_fixture_depends_on_each_tricky_import() {
    let fixture = common::fixture("resolution-app");
    let (_, report) = common::check_json(&fixture, &["."]);
    let all = common::findings(&report);
    for (file, specifier) in [
        ("src/features/Alias.ts", "~/lib/effect.js"),
        ("src/features/Hash.ts", "#src/lib/effect.js"),
        ("src/features/Workspace.ts", "@app/retry"),
    ] {
        assert!(all.iter().any(|(p, _, _)| p == file), "{file} has findings: {all:?}");
        let copy = tempfile::tempdir().unwrap();
        common::copy_dir(&fixture, copy.path());
        let path = copy.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let broken = specifier
            .replace("effect", "efect")
            .replace("@app/retry", "@app/retry/nothing");
        std::fs::write(
            &path,
            text.replace(&format!("\"{specifier}\""), &format!("\"{broken}\"")),
        )
        .unwrap();
        let (_, report) = common::check_json(copy.path(), &["."]);
        let left: Vec<_> = common::findings(&report)
            .into_iter()
            .filter(|(p, _, _)| p == file)
            .collect();
        assert!(left.is_empty(), "{file} still has findings with {broken:?}: {left:?}");
        let notes = report["notes"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| n["path"] == file
                && n["message"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("`{broken}` does not resolve"))),
            "no note on {broken:?}: {notes:?}"
        );
    }
}

/// An import that resolves to nothing gets one note per specifier pattern (a relative path, a
/// `paths` alias, an `imports` entry, a workspace package), naming a file that uses it and
/// why; packages of node_modules never do.
#[test]
fn an_unresolved_project_import_gets_one_note_per_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, text: &str| {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), text).unwrap();
    };
    write("retrylint.toml", "");
    write(
        "package.json",
        r##"{ "name": "app", "type": "module", "workspaces": ["packages/*"], "imports": { "#src/*": "./src/*" } }"##,
    );
    write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "module": "NodeNext", "paths": { "@/*": ["./src/*"] } }, "include": ["src"] }"#,
    );
    write(
        "packages/db/package.json",
        r#"{ "name": "@app/db", "exports": { ".": "./src/index.ts" } }"#,
    );
    write("packages/db/src/index.ts", "export const db = 1\n");
    write("src/lib/retry.ts", "export const transient = 1\n");
    let retrying =
        "declare const task: Effect.Effect<void, Error>\nexport const run = task.pipe(Effect.retry({ times: 3 }))\n";
    for name in ["features/a", "jobs/b"] {
        write(
            &format!("src/{name}.ts"),
            &format!(
                "import {{ Effect }} from \"effect\"\nimport * as z from \"zod\"\nimport * as fs from \"node:fs\"\n\
                 import * as R from \"@/lib/retryy.js\"\nimport * as S from \"#src/lib/gone.js\"\n\
                 import * as D from \"@app/db/internal\"\nimport * as L from \"./nope.js\"\n\
                 import * as ok from \"@/lib/retry.js\"\n{retrying}"
            ),
        );
    }
    let (_, report) = common::check_json(root, &["."]);
    let notes: Vec<String> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            format!(
                "{}:{} {}",
                n["path"].as_str().unwrap(),
                n["line"],
                n["message"].as_str().unwrap()
            )
        })
        .filter(|n| n.contains("does not resolve"))
        .collect();
    let expect = [
        (
            "src/features/a.ts:4",
            "`@/lib/retryy.js`",
            "the `paths` alias `@/*` of tsconfig.json",
        ),
        (
            "src/features/a.ts:5",
            "`#src/lib/gone.js`",
            "the `imports` entry `#src/*` of package.json",
        ),
        (
            "src/features/a.ts:6",
            "`@app/db/internal`",
            "the workspace package `@app/db`",
        ),
        ("src/features/a.ts:7", "`./nope.js`", "no file src/features/nope.js"),
        ("src/jobs/b.ts:7", "`./nope.js`", "no file src/jobs/nope.js"),
    ];
    for (at, specifier, why) in expect {
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with(at) && n.contains(specifier) && n.contains(why)),
            "no note {at} {specifier} ({why}) in {notes:#?}"
        );
    }
    // Once per pattern: the alias, the imports entry and the package say how many imports.
    assert_eq!(notes.len(), expect.len(), "{notes:#?}");
    assert!(notes[0].contains("2 imports in 2 files"), "{notes:#?}");
    assert!(!notes
        .iter()
        .any(|n| n.contains("zod") || n.contains("node:fs") || n.contains("`effect`")));
}

/// Installed, a workspace package still gets its note: its node_modules link is the package
/// itself, not another copy that could have the path.
#[test]
fn an_installed_workspace_package_that_lacks_the_path_is_noted() {
    let copy = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("resolution-app"), copy.path());
    std::fs::create_dir_all(copy.path().join("node_modules/@app")).unwrap();
    std::os::unix::fs::symlink("../../packages/retry", copy.path().join("node_modules/@app/retry")).unwrap();
    let path = copy.path().join("src/features/Workspace.ts");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"@app/retry\"", "\"@app/retry/nothing\"")).unwrap();
    let (_, report) = common::check_json(copy.path(), &["."]);
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["message"]
            .as_str()
            .unwrap()
            .starts_with("`@app/retry/nothing` does not resolve")),
        "{notes:?}"
    );
}

/// Hostile project files: a tsconfig that extends itself (and a device), and a FIFO named
/// package.json in a directory an import names but discovery skips (hidden): resolution reads
/// neither FIFO nor device, and the run ends normally.
#[test]
fn hostile_configs_neither_hang_nor_crash() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("retrylint.toml"), "").unwrap();
    std::fs::write(
        root.join("tsconfig.json"),
        r#"{ "extends": ["./tsconfig.json", "./a.json", "/dev/zero"], "compilerOptions": { "paths": { "~/*": ["./src/*"] } } }"#,
    )
    .unwrap();
    std::fs::write(root.join("a.json"), r#"{ "extends": "./tsconfig.json" }"#).unwrap();
    std::fs::create_dir_all(root.join("src/lib")).unwrap();
    std::fs::create_dir_all(root.join("src/.cfg")).unwrap();
    let status = Command::new("mkfifo").arg(root.join("src/.cfg/package.json")).status();
    assert!(status.is_ok_and(|s| s.success()), "mkfifo runs");
    std::fs::write(root.join("src/lib/index.ts"), "export const transient = 1\n").unwrap();
    std::fs::write(
        root.join("src/main.ts"),
        "import { Effect } from \"effect\"\nimport * as R from \"~/lib\"\nimport * as C from \"./.cfg\"\n\
         declare const t: Effect.Effect<void>\nexport const x = t.pipe(Effect.retry({ times: 3 }))\n",
    )
    .unwrap();
    let mut child = common::bin()
        .args(["resolve-imports", "."])
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("resolve-imports hangs on a FIFO named package.json");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let answers = lines(&output.stdout);
    assert!(
        answers
            .iter()
            .any(|a| a["specifier"] == "~/lib" && a["resolved"] == "src/lib/index.ts"),
        "{answers:?}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["specifier"] == "./.cfg" && a["kind"] == "missing"),
        "{answers:?}"
    );
}

/// A workspace as checked out (not installed, not built): a tsconfig that extends a config
/// package of the workspace by name, and a package whose build is rooted at the package
/// (`dist/src/x.d.ts` ← `src/x.ts`) — the layout of a real Effect v4 app.
#[test]
fn an_uninstalled_workspace_extends_its_config_package_and_maps_a_rooted_build() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, text: &str| {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), text).unwrap();
    };
    write("retrylint.toml", "");
    write(
        "package.json",
        r#"{ "name": "mono", "private": true, "workspaces": ["apps/*", "packages/*", "tooling/*"] }"#,
    );
    write(
        "tooling/typescript-config/package.json",
        r#"{ "name": "@mono/typescript-config" }"#,
    );
    write(
        "tooling/typescript-config/node.json",
        r#"{ "compilerOptions": { "module": "NodeNext", "moduleResolution": "NodeNext" } }"#,
    );
    write(
        "apps/api/package.json",
        r##"{ "name": "@mono/api", "type": "module", "imports": { "#src/*": "./src/*" } }"##,
    );
    write(
        "apps/api/tsconfig.json",
        r#"{ "extends": ["@mono/typescript-config/node"], "include": ["src"] }"#,
    );
    write("apps/api/src/lib/retry.ts", "export const transient = 1\n");
    write(
        "packages/schema/package.json",
        r#"{ "name": "@mono/schema", "type": "module", "exports": { "./api": { "types": "./dist/src/api.d.ts", "default": "./dist/src/api.js" } } }"#,
    );
    write("packages/schema/src/api.ts", "export const api = 1\n");
    write(
        "apps/api/src/main.ts",
        "import * as R from \"#src/lib/retry.js\"\nimport * as A from \"@mono/schema/api\"\n",
    );
    let answers = retrylint(root);
    let of = |specifier: &str| {
        answers
            .iter()
            .find(|a| a["specifier"] == specifier)
            .unwrap_or_else(|| panic!("{specifier} in {answers:?}"))["resolved"]
            .clone()
    };
    assert_eq!(of("#src/lib/retry.js"), "apps/api/src/lib/retry.ts", "{answers:?}");
    assert_eq!(of("@mono/schema/api"), "packages/schema/src/api.ts", "{answers:?}");
}
