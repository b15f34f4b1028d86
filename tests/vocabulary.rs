//! No configured name is ignored: `fixtures/configured-app` renames every word of the policy's
//! vocabulary in its `retrylint.toml`, and dropping any one key from that config must change
//! the findings — with the prefilter on, as users run it. The fixture harness checks the full
//! config's findings exactly (`tests/fixtures.rs`).

mod common;

use std::collections::BTreeSet;
use std::path::Path;

type Finding = (String, u64, String, String);

fn findings(dir: &Path) -> BTreeSet<Finding> {
    let (_, report) = common::check_json(dir, &["."]);
    report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["rule"].as_str().unwrap().to_string(),
                d["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Every key of the README's configuration example: what users are told they can set.
fn documented_keys() -> BTreeSet<String> {
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).unwrap();
    let block = readme
        .split("```toml\n")
        .skip(1)
        .find(|b| b.contains("retry-modules"))
        .and_then(|b| b.split("```").next())
        .expect("the README shows the config");
    let value: toml::Table = toml::from_str(block).expect("the README's config parses");
    value.keys().cloned().collect()
}

#[test]
fn every_configured_name_changes_a_finding() {
    let fixture = common::fixture("configured-app");
    let config_text = std::fs::read_to_string(fixture.join("retrylint.toml")).unwrap();
    let config: toml::Table = toml::from_str(&config_text).unwrap();
    let keys: BTreeSet<String> = config.keys().cloned().collect();
    let missing: Vec<_> = documented_keys().difference(&keys).cloned().collect();
    assert!(missing.is_empty(), "the fixture config does not set {missing:?}");

    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("configured-app");
    common::copy_dir(&fixture, &project);
    let full = findings(&project);
    for key in &keys {
        let mut without = config.clone();
        without.remove(key);
        std::fs::write(project.join("retrylint.toml"), toml::to_string(&without).unwrap()).unwrap();
        let changed = findings(&project);
        assert_ne!(changed, full, "dropping `{key}` from the config changes no finding");
    }
}
