//! Runs the real binary on every project under `fixtures/` and requires exactly the findings
//! marked inline with `expect: <rule>[, <rule>]`: a miss and a false alarm both fail.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

type Finding = (String, u64, String);

/// Every `expect:` marker in the fixture's source files, as `(path, line, rule)`.
fn expected(root: &Path) -> BTreeSet<Finding> {
    let marker = regex_lite::Regex::new(r"expect: *([a-z0-9-]+(?: *, *[a-z0-9-]+)*)").unwrap();
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                // What discovery skips cannot carry expectations.
                if name != "node_modules" && name != "dist" && !name.starts_with('.') {
                    stack.push(path);
                }
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            for (index, line) in text.lines().enumerate() {
                if let Some(captures) = marker.captures(line) {
                    for rule in captures[1].split(',') {
                        out.insert((rel.clone(), index as u64 + 1, rule.trim().to_string()));
                    }
                }
            }
        }
    }
    out
}

fn assert_fixture(name: &str, extra: &[&str]) {
    let root = common::fixture(name);
    let expected = expected(&root);
    assert!(!expected.is_empty(), "fixture {name} marks no expected finding");
    let mut args = vec!["."];
    args.extend_from_slice(extra);
    let (code, report) = common::check_json(&root, &args);
    let actual: BTreeSet<Finding> = common::findings(&report).into_iter().collect();
    let missed: Vec<_> = expected.difference(&actual).collect();
    let unexpected: Vec<_> = actual.difference(&expected).collect();
    assert!(
        missed.is_empty() && unexpected.is_empty(),
        "fixture {name} {extra:?}\nmissed (expected, not reported):\n{missed:#?}\nunexpected (reported, not expected):\n{unexpected:#?}"
    );
    assert_eq!(code, 1, "error findings exit 1");
    // Each fix is of the safety its rule declares.
    let declared = declared_fixes();
    for d in report["diagnostics"].as_array().unwrap() {
        let rule = d["rule"].as_str().unwrap();
        if let Some(applicability) = d["fix"]["applicability"].as_str() {
            assert_eq!(
                declared.get(rule).map(String::as_str),
                Some(applicability),
                "{rule} emits a fix of a safety it does not declare: {d:#}"
            );
        }
    }
}

/// Each rule's declared fix safety (`none`, `safe`, `unsafe`), from `retrylint rules`.
fn declared_fixes() -> std::collections::BTreeMap<String, String> {
    let output = common::bin().args(["rules", "--format", "json"]).output().unwrap();
    let listing: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    listing
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["fix"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_fixable_rule_shows_its_fix_in_a_fixture() {
    let mut shown = std::collections::BTreeSet::new();
    for name in fixtures() {
        let (_, report) = common::check_json(&common::fixture(&name), &["."]);
        for d in report["diagnostics"].as_array().unwrap() {
            if !d["fix"].is_null() {
                shown.insert(d["rule"].as_str().unwrap().to_string());
            }
        }
    }
    for (rule, fix) in declared_fixes() {
        if fix != "none" {
            assert!(
                shown.contains(&rule),
                "{rule} declares a {fix} fix that no fixture shows"
            );
        }
    }
}

/// Every project under `fixtures/`, so a new fixture is checked without being listed here.
fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(common::repo_root().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    names
}

#[test]
fn every_fixture_reports_exactly_its_expected_findings() {
    for name in fixtures() {
        assert_fixture(&name, &[]);
    }
}

#[test]
fn findings_do_not_depend_on_the_prefilter() {
    for name in fixtures() {
        assert_fixture(&name, &["--no-prefilter"]);
    }
}

#[test]
fn effect_app_skips_ignored_and_vendored_files() {
    let (_, report) = common::check_json(&common::fixture("effect-app"), &["."]);
    for (path, _, _) in common::findings(&report) {
        assert!(
            !path.starts_with("dist/") && !path.contains("node_modules"),
            "{path} should be skipped"
        );
    }
    let files = report["summary"]["files"].as_u64().unwrap();
    assert!(files >= 20, "the fixture's sources are discovered ({files})");
}

#[test]
fn effect_v4_beta_is_judged_with_the_betas_schedule_api() {
    // package.json says `^4.0.0-beta.60`; pnpm-lock.yaml pins 4.0.0-beta.66.
    assert_fixture("effect-v4-beta", &[]);
    assert_fixture("effect-v4-beta", &["--no-prefilter"]);
    let (_, report) = common::check_json(&common::fixture("effect-v4-beta"), &["."]);
    let helps = helps_of(&report, "uncapped-schedule");
    assert!(!helps.is_empty());
    for help in helps {
        assert!(
            help.contains("Schedule.both") && help.contains("Schedule.either"),
            "{help}"
        );
        assert!(
            !help.contains("Schedule.max") && !help.contains("Schedule.min"),
            "{help}"
        );
    }
    // `Activity.retry` has no `schedule` option on 4.x: its burst's help says so, and where a
    // backoff can go; an `Effect.retry` burst's help names the options' schedule.
    let bursts: Vec<(String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "unjittered-schedule" && d["message"].as_str().unwrap().contains("at once"))
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["help"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let activity: Vec<&(String, String)> = bursts
        .iter()
        .filter(|(path, _)| path.ends_with("workflows/Charge.ts"))
        .collect();
    assert_eq!(activity.len(), 1, "{bursts:#?}");
    assert!(
        activity[0].1.contains("takes no `schedule`") && activity[0].1.contains("execute"),
        "{}",
        activity[0].1
    );
    for (path, help) in bursts.iter().filter(|(path, _)| !path.ends_with("workflows/Charge.ts")) {
        assert!(!help.contains("takes no `schedule`"), "{path}: {help}");
    }
}

#[test]
fn effect_v3_help_suggests_only_v3_combinators() {
    // A pnpm workspace whose package takes `effect` from the catalog (`^3.14.0`).
    assert_fixture("effect-v3", &[]);
    let (_, report) = common::check_json(&common::fixture("effect-v3"), &["."]);
    let helps = helps_of(&report, "uncapped-schedule");
    assert!(!helps.is_empty());
    for help in helps {
        assert!(
            !help.contains("Schedule.max") && !help.contains("Schedule.min"),
            "{help}"
        );
        assert!(
            help.contains("Schedule.union") && help.contains("Schedule.intersect"),
            "{help}"
        );
    }
}

fn helps_of(report: &serde_json::Value, rule: &str) -> Vec<String> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == rule)
        .map(|d| d["help"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Every fixture, fixed with `--fix` and with `--fix --unsafe-fixes` (each on a copy): the
/// fixes clear their findings, the fixed files parse, and a second run changes nothing.
#[test]
fn every_fixture_converges_under_every_fix() {
    let mut fixed = 0;
    for name in fixtures() {
        let copy = || {
            let dir = tempfile::tempdir().unwrap();
            common::copy_dir(&common::fixture(&name), dir.path());
            dir
        };
        fixed += common::assert_fixes_converge(&name, &copy, &[]);
    }
    assert!(fixed >= 10, "only {fixed} fixes in the fixtures");
}
