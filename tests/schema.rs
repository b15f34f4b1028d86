//! retrylint.schema.json, the JSON Schema of `retrylint.toml` for editors (Taplo, Even Better
//! TOML): its keys, rule names and defaults are what the binary accepts and uses, every config
//! in the repository and in the README's Configuration section validates against it, and on
//! configs the binary accepts or rejects, the schema agrees.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn schema_path() -> PathBuf {
    common::repo_root().join("retrylint.schema.json")
}

fn schema() -> Value {
    serde_json::from_slice(&std::fs::read(schema_path()).unwrap()).expect("the schema is JSON")
}

fn schema_keys(schema: &Value) -> BTreeSet<String> {
    schema["properties"].as_object().unwrap().keys().cloned().collect()
}

/// A TOML line `key = value` for a JSON scalar or array of scalars (whose JSON spelling is
/// TOML's too).
fn toml_entry(key: &str, value: &Value) -> String {
    format!("{key} = {value}\n")
}

/// A config of `entries` (top-level keys and values) and `rules`.
fn toml_config(entries: &[(String, Value)], rules: &[(String, String)]) -> String {
    let mut text: String = entries.iter().map(|(k, v)| toml_entry(k, v)).collect();
    if !rules.is_empty() {
        text.push_str("[rules]\n");
        for (rule, severity) in rules {
            text.push_str(&format!("{rule} = \"{severity}\"\n"));
        }
    }
    text
}

/// `retrylint check --show-settings src/a.ts` in a project whose retrylint.toml is `config`
/// (none for `None`): the exit code, and stdout and stderr.
fn show_settings(config: Option<&str>) -> (i32, String, String) {
    let dir = common::project(&[("src/a.ts", "export const a = 1\n"), ("base/retrylint.toml", "")]);
    if let Some(config) = config {
        std::fs::write(dir.path().join("retrylint.toml"), config).unwrap();
    }
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let output = common::bin()
        .current_dir(dir.path())
        .args(["check", "--show-settings", "src/a.ts"])
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The settings part of `--show-settings` (its TOML, without the commented header).
fn settings(stdout: &str) -> String {
    stdout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A value the schema allows for `key`: its default, else a sample.
fn sample(key: &str, property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    match key {
        "extend" => "base/retrylint.toml".into(),
        "include" => serde_json::json!(["src/**"]),
        other => panic!("a sample value for `{other}` (the schema gives no default)"),
    }
}

#[test]
fn the_schema_names_every_rule_with_its_default_severity() {
    let schema = schema();
    let rules = &schema["properties"]["rules"];
    assert_eq!(rules["additionalProperties"], false, "an unknown rule name is an error");
    let in_schema: BTreeMap<String, String> = rules["properties"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, p)| (name.clone(), p["default"].as_str().unwrap().to_string()))
        .collect();
    let output = common::bin().args(["rules", "--format", "json"]).output().unwrap();
    assert!(output.status.success());
    let catalogue: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let from_binary: BTreeMap<String, String> = catalogue
        .iter()
        .map(|r| {
            let severity = match r["severity"].as_str().unwrap() {
                "warning" => "warn",
                other => other,
            };
            (r["name"].as_str().unwrap().to_string(), severity.to_string())
        })
        .collect();
    assert_eq!(
        in_schema, from_binary,
        "rules and their default severities: `retrylint rules --format json`"
    );

    // Every severity the schema allows is accepted, for every rule at once.
    let enums: BTreeSet<Vec<String>> = rules["properties"]
        .as_object()
        .unwrap()
        .values()
        .map(|p| {
            p["enum"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    assert_eq!(enums.len(), 1, "every rule takes the same severities: {enums:?}");
    let severities = enums.into_iter().next().unwrap();
    for severity in &severities {
        let all: Vec<(String, String)> = from_binary.keys().map(|r| (r.clone(), severity.clone())).collect();
        let (code, _, stderr) = show_settings(Some(&toml_config(&[], &all)));
        assert_eq!(code, 0, "severity {severity}: {stderr}");
    }
    let (code, _, stderr) = show_settings(Some("[rules]\ninline-schedule = \"info\"\n"));
    assert_eq!(code, 2, "a severity outside the enum is rejected: {stderr}");
    assert!(!severities.contains(&"info".to_string()));
}

#[test]
fn the_schema_keys_are_the_keys_the_binary_accepts() {
    let schema = schema();
    assert_eq!(schema["additionalProperties"], false, "an unknown key is an error");
    let keys = schema_keys(&schema);

    // Each key alone, with its default or a sample value, is accepted.
    for key in &keys {
        let config = if key == "rules" {
            "[rules]\ninline-schedule = \"warn\"\n".to_string()
        } else {
            toml_entry(key, &sample(key, &schema["properties"][key]))
        };
        let (code, _, stderr) = show_settings(Some(&config));
        assert_eq!(code, 0, "`{key}` from the schema is accepted:\n{config}\n{stderr}");
    }

    // A key the schema does not have is rejected, and the error lists the keys the binary
    // knows (serde's, of the struct config.rs reads): the schema's, no more, no fewer.
    let (code, _, stderr) = show_settings(Some("retry-module = [\"src/retry.ts\"]\n"));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("unknown key `retry-module`; did you mean `retry-modules`?"),
        "{stderr}"
    );
    let joined: String = stderr
        .lines()
        .map(|l| l.trim_start_matches([' ', '│']))
        .collect::<Vec<_>>()
        .join("");
    let expected = &joined[joined.find("help: known keys:").expect("the keys the binary expects")..];
    let known: BTreeSet<String> = regex_lite::Regex::new(r"`([a-z-]+)`")
        .unwrap()
        .captures_iter(expected)
        .map(|c| c[1].to_string())
        .collect();
    assert_eq!(
        known, keys,
        "the binary's keys (its unknown-field error) are the schema's"
    );

    // Every setting --show-settings prints (above its `[rules]` table) is a schema key.
    let (code, stdout, _) = show_settings(None);
    assert_eq!(code, 0);
    let printed = settings(&stdout);
    let top = &printed[..printed.find("\n[rules]").expect("the rules table")];
    let printed_keys: Vec<&str> = top
        .lines()
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, _)| k)
        .collect();
    assert!(printed_keys.len() >= 15, "{printed}");
    for key in printed_keys {
        assert!(
            keys.contains(key),
            "--show-settings prints `{key}`, which the schema lacks"
        );
    }
}

/// A config that sets every key to the schema's default is the defaults: --show-settings prints
/// the same settings as with an empty config.
#[test]
fn the_schema_defaults_are_the_defaults() {
    let schema = schema();
    let mut entries = Vec::new();
    for (key, property) in schema["properties"].as_object().unwrap() {
        if let Some(default) = property.get("default") {
            entries.push((key.clone(), default.clone()));
        }
    }
    assert!(entries.len() >= 18, "the schema gives the defaults: {entries:?}");
    let rules: Vec<(String, String)> = schema["properties"]["rules"]["properties"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, p)| (name.clone(), p["default"].as_str().unwrap().to_string()))
        .collect();
    let config = toml_config(&entries, &rules);
    let (code, with_defaults, stderr) = show_settings(Some(&config));
    assert_eq!(code, 0, "{config}\n{stderr}");
    let (code, empty, _) = show_settings(Some(""));
    assert_eq!(code, 0);
    assert_eq!(
        settings(&with_defaults),
        settings(&empty),
        "the schema's defaults:\n{config}"
    );
}

/// Every retrylint.toml under `dir`.
fn configs_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "node_modules" && entry.file_name() != ".retrylint_cache" {
                configs_under(&path, out);
            }
        } else if entry.file_name() == "retrylint.toml" {
            out.push(path);
        }
    }
}

/// The ```toml blocks of the README's Configuration section (the Taplo config excepted).
fn readme_configs() -> Vec<String> {
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).unwrap();
    let start = readme.find("\n## Configuration\n").unwrap();
    let section = &readme[start + 1..];
    let section = &section[..section[1..].find("\n## ").unwrap()];
    section
        .split("```toml\n")
        .skip(1)
        .map(|block| block[..block.find("\n```").unwrap()].to_string())
        .filter(|block| !block.starts_with("# .taplo.toml"))
        .collect()
}

/// tests/tools/validate_config.py on `files`: file → errors (empty when valid).
fn validate(files: &[PathBuf]) -> BTreeMap<PathBuf, Vec<String>> {
    let output = Command::new(common::python_tools())
        .arg(common::repo_root().join("tests/tools/validate_config.py"))
        .arg(schema_path())
        .args(files)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .map(|line| {
            let result: Value = serde_json::from_str(line).unwrap();
            let errors = result["errors"].as_array().unwrap();
            assert_eq!(result["valid"], errors.is_empty());
            (
                PathBuf::from(result["file"].as_str().unwrap()),
                errors.iter().map(|e| e.as_str().unwrap().to_string()).collect(),
            )
        })
        .collect()
}

#[test]
#[ignore = "needs jsonschema from PyPI (a virtual environment under target/tmp); .ci/run runs it"]
fn every_config_in_the_repository_and_the_readme_validates() {
    let root = common::repo_root();
    let mut files = Vec::new();
    for dir in ["fixtures", "demo", "examples", "bench"] {
        configs_under(&root.join(dir), &mut files);
    }
    assert!(files.len() >= 13, "{files:?}");
    let scratch = tempfile::tempdir().unwrap();
    let blocks = readme_configs();
    assert!(blocks.len() >= 3, "the README's config examples: {blocks:#?}");
    for (i, block) in blocks.iter().enumerate() {
        let file = scratch.path().join(format!("readme-{i}.toml"));
        std::fs::write(&file, block).unwrap();
        files.push(file);
    }
    let results = validate(&files);
    assert_eq!(results.len(), files.len());
    let invalid: Vec<String> = results
        .iter()
        .filter(|(_, errors)| !errors.is_empty())
        .map(|(file, errors)| format!("{}: {}", file.display(), errors.join("; ")))
        .collect();
    assert!(invalid.is_empty(), "{}", invalid.join("\n"));
}

/// Configs the binary accepts are valid against the schema, and those it rejects for a bad key
/// or value are not: the schema is neither looser nor stricter than the binary on these.
#[test]
#[ignore = "needs jsonschema from PyPI (a virtual environment under target/tmp); .ci/run runs it"]
fn the_schema_accepts_what_the_binary_accepts() {
    let cases = [
        "budget = \"1.5 seconds\"\n",
        "budget = \"1 minute\"\n",
        "budget = \"1500 millis\"\n",
        "budget = \"0 millis\"\n",
        "budget = \"2s\"\n",
        "budget = \"2 parsecs\"\n",
        "budget = \"two seconds\"\n",
        "budget = 2000\n",
        "generated = \"check\"\n",
        "generated = \"yes\"\n",
        "max-file-size = 1\n",
        "max-file-size = 0\n",
        "max-file-size = \"1 MB\"\n",
        "lease-tables = [\"jobs.leases\", \"Job_Leases2\"]\n",
        "lease-tables = [\"job-leases\"]\n",
        "lease-columns = [\"locked_until\"]\n",
        "lease-columns = [\"t.locked_until\"]\n",
        "exclude = \"src/**\"\n",
        "exclude = [1]\n",
        "append-calls = []\n",
        "tests = []\n",
        "retry-modules = [\"src/infra/retry.ts\"]\n",
        "unknown-key = 1\n",
        "[rules]\ninline-schedule = \"warning\"\n",
        "[rules]\ninline-schedule = \"Error\"\n",
        "[rules]\nno-such-rule = \"off\"\n",
        "[rules]\ninline-schedule = 1\n",
        "rules = \"off\"\n",
    ];
    let scratch = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = cases
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let file = scratch.path().join(format!("case-{i}.toml"));
            std::fs::write(&file, text).unwrap();
            file
        })
        .collect();
    let results = validate(&files);
    let mut disagreements = Vec::new();
    let (mut accepted, mut rejected) = (0, 0);
    for (case, file) in cases.iter().zip(&files) {
        let (code, _, stderr) = show_settings(Some(case));
        assert!(code == 0 || code == 2, "{case}: {stderr}");
        let binary = code == 0;
        if binary {
            accepted += 1;
        } else {
            rejected += 1;
        }
        let schema = results[file].is_empty();
        if binary != schema {
            disagreements.push(format!(
                "{}: the binary {}, the schema {} ({})",
                case.trim_end().replace('\n', " "),
                if binary { "accepts" } else { "rejects" },
                if schema { "accepts" } else { "rejects" },
                results[file].join("; ")
            ));
        }
    }
    assert!(
        accepted >= 10 && rejected >= 10,
        "both kinds: {accepted} accepted, {rejected} rejected"
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
