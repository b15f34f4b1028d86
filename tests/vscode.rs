//! The VS Code extension (editors/vscode): type-checked with tsc, the unit tests of its binary
//! resolution (resolve.ts, plain Node, no VS Code), and packaged with @vscode/vsce — a .vsix
//! without a binary, and a platform-specific one with the binary bundled, as the release builds
//! them. The packages come from editors/vscode/package-lock.json (`npm ci`, which .ci/run runs).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn extension_dir() -> PathBuf {
    common::repo_root().join("editors/vscode")
}

fn node_available() {
    common::require("node", "Node.js 18 or later");
    common::require("npm", "npm");
}

fn ensure_node_packages(dir: &Path) {
    if dir.join("node_modules/@vscode/vsce").is_dir() && dir.join("node_modules/vscode-languageclient").is_dir() {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir)
        .status()
        .expect("npm runs");
    assert!(status.success(), "npm ci failed in {}", dir.display());
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn npm(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new("npm")
        .args(args)
        .current_dir(dir)
        .env("npm_config_update_notifier", "false")
        .output()
        .expect("npm runs");
    assert!(
        output.status.success(),
        "npm {args:?} failed:\n{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    output
}

/// The entries of a .vsix (a zip), listed by Python's zipfile.
fn vsix_entries(vsix: &Path) -> Vec<String> {
    let output = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
        ])
        .arg(vsix)
        .output()
        .expect("python3 runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout).lines().map(String::from).collect()
}

fn vsix_file(vsix: &Path, name: &str) -> String {
    let output = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())",
        ])
        .arg(vsix)
        .arg(name)
        .output()
        .expect("python3 runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
}

#[test]
#[ignore = "needs Node.js 18+, npm and the npm registry (npm ci in editors/vscode); .ci/run runs it"]
fn the_extension_type_checks_passes_its_tests_and_packages() {
    node_available();
    let dir = extension_dir();
    ensure_node_packages(&dir);

    // `npm test` compiles with tsc (strict: the type check) and runs the unit tests.
    let tests = npm(&dir, &["test"]);
    let report = text(&tests.stdout);
    assert!(report.contains("# fail 0"), "{report}");
    assert!(!report.contains("# pass 0"), "{report}");

    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("package.json")).unwrap()).unwrap();
    let out = tempfile::tempdir().unwrap();

    // The universal package: no binary (the workspace's or PATH's runs).
    let vsix = out.path().join("retrylint.vsix");
    npm(
        &dir,
        &["exec", "--", "vsce", "package", "--out", vsix.to_str().unwrap()],
    );
    let entries = vsix_entries(&vsix);
    for expected in [
        "extension.vsixmanifest",
        "extension/package.json",
        "extension/out/extension.js",
        "extension/out/resolve.js",
        "extension/node_modules/vscode-languageclient/package.json",
        "extension/LICENSE.txt",
    ] {
        assert!(entries.iter().any(|e| e == expected), "{expected} in {entries:#?}");
    }
    for absent in [
        "extension/src/",
        "extension/out/test/",
        "extension/node_modules/typescript/",
        "extension/bin/",
    ] {
        assert!(!entries.iter().any(|e| e.starts_with(absent)), "{absent} is left out");
    }
    let packaged: serde_json::Value = serde_json::from_str(&vsix_file(&vsix, "extension/package.json")).unwrap();
    assert_eq!(packaged["version"], manifest["version"]);
    assert_eq!(packaged["main"], "./out/extension.js");
    let xml = vsix_file(&vsix, "extension.vsixmanifest");
    assert!(
        xml.contains(&format!("Version=\"{}\"", manifest["version"].as_str().unwrap())),
        "{xml}"
    );

    // A platform-specific package with the binary bundled in bin/, as the release makes one.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_retrylint"), bin.join("retrylint")).unwrap();
    let _ = Command::new("strip").arg(bin.join("retrylint")).status();
    let vsix = out.path().join("retrylint-linux-x64.vsix");
    let packaged = Command::new("npm")
        .args(["exec", "--", "vsce", "package", "--target", "linux-x64", "--out"])
        .arg(&vsix)
        .current_dir(&dir)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&bin).unwrap();
    assert!(
        packaged.status.success(),
        "{}\n{}",
        text(&packaged.stdout),
        text(&packaged.stderr)
    );
    let entries = vsix_entries(&vsix);
    assert!(entries.iter().any(|e| e == "extension/bin/retrylint"), "{entries:#?}");
    let xml = vsix_file(&vsix, "extension.vsixmanifest");
    assert!(xml.contains("TargetPlatform=\"linux-x64\""), "{xml}");
}

#[test]
fn the_extension_and_the_npm_launcher_agree_on_platform_packages() {
    // resolve.ts looks for the binaries of the npm platform packages: same names, same table.
    let resolve = std::fs::read_to_string(extension_dir().join("src/resolve.ts")).unwrap();
    for platform in std::fs::read_dir(common::repo_root().join("npm/platforms")).unwrap() {
        let platform = platform.unwrap().file_name().to_string_lossy().into_owned();
        let line = format!("\"{platform}\": \"@retrylint/{platform}\",");
        assert!(resolve.contains(&line), "resolve.ts lacks {line}");
    }
}

/// VS Code's language ids for each extension retrylint reads (its built-in languages, and the
/// Vue and Svelte extensions'). An extension the binary reads that is missing here fails the
/// test below: add its language id, and the extension's `LANGUAGES` and activation events.
const LANGUAGE_IDS: &[(&str, &[&str])] = &[
    ("ts", &["typescript"]),
    ("mts", &["typescript"]),
    ("cts", &["typescript"]),
    ("tsx", &["typescriptreact"]),
    ("js", &["javascript"]),
    ("mjs", &["javascript"]),
    ("cjs", &["javascript"]),
    ("jsx", &["javascriptreact"]),
    ("vue", &["vue"]),
    ("svelte", &["svelte"]),
    ("rs", &["rust"]),
    ("sql", &["sql"]),
    // tsconfig.json and other JSON-with-comments files are "jsonc" in VS Code.
    ("json", &["json", "jsonc"]),
    ("yaml", &["yaml"]),
    ("yml", &["yaml"]),
];

/// The extension activates on, and sends the server, every language retrylint reads (as the
/// binary says, `check --show-settings`), and no other: package.json's `onLanguage` events and
/// extension.ts's `LANGUAGES` (the document selector) are the same set.
#[test]
fn the_extension_activates_on_every_language_retrylint_reads() {
    let dir = extension_dir();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("package.json")).unwrap()).unwrap();
    let events: Vec<&str> = manifest["activationEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(events.contains(&"workspaceContains:**/retrylint.toml"), "{events:?}");
    let activation: std::collections::BTreeSet<String> = events
        .iter()
        .filter_map(|e| e.strip_prefix("onLanguage:"))
        .map(String::from)
        .collect();

    let source = std::fs::read_to_string(dir.join("src/extension.ts")).unwrap();
    let start = source.find("const LANGUAGES = [").expect("extension.ts's LANGUAGES");
    let list = &source[start..start + source[start..].find("];").unwrap()];
    let selector: std::collections::BTreeSet<String> = list.split('"').skip(1).step_by(2).map(String::from).collect();
    assert!(
        source.contains("documentSelector: LANGUAGES.map("),
        "the selector is LANGUAGES"
    );

    let extra: Vec<String> = LANGUAGE_IDS.iter().map(|(e, _)| e.to_string()).collect();
    let mut wanted = std::collections::BTreeSet::new();
    for name in common::candidate_names(&extra) {
        let Some(extension) = name.strip_prefix("src/a.").filter(|e| !e.contains('.')) else {
            continue;
        };
        if !common::reads(&name) {
            continue;
        }
        let ids = LANGUAGE_IDS
            .iter()
            .find(|(e, _)| *e == extension)
            .unwrap_or_else(|| panic!("retrylint reads .{extension}: give it its VS Code language id in LANGUAGE_IDS"))
            .1;
        wanted.extend(ids.iter().map(|id| id.to_string()));
    }
    assert_eq!(selector, wanted, "extension.ts's LANGUAGES");
    assert_eq!(activation, wanted, "package.json's onLanguage activation events");
}
