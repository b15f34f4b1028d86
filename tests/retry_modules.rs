//! Zero-config retry modules (issue 13.6): a workspace package that configures none gets the
//! module its retry sites take two or more named policies from; the config always wins.

mod common;

fn policies_json(dir: &std::path::Path, args: &[&str]) -> Vec<serde_json::Value> {
    let output = common::bin()
        .current_dir(dir)
        .args(["policies", ".", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    rows.as_array().cloned().expect("a JSON list of policies")
}

#[test]
fn a_package_without_a_configured_module_gets_the_one_its_sites_use() {
    let dir = common::fixture("effect-monorepo");
    let (_, report) = common::check_json(&dir, &["."]);
    let notes: Vec<String> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["message"].as_str().unwrap().contains("retry module"))
        .map(|n| n["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        notes,
        ["packages/billing/src/lib/policies.ts"],
        "one package infers one module"
    );

    let rows = policies_json(&dir, &[]);
    let module_of = |path: &str, name: &str| {
        rows.iter()
            .find(|r| r["path"].as_str().unwrap().ends_with(path) && r["name"] == name)
            .unwrap_or_else(|| panic!("{path} {name} in {rows:#?}"))["retry_module"]
            .clone()
    };
    assert_eq!(module_of("billing/src/lib/policies.ts", "transient"), "inferred");
    assert_eq!(module_of("notify/src/infra/retry.ts", "transient"), "configured");
    // A second module beside a configured one, and a module of one policy, stay outside.
    assert!(module_of("notify/src/util/backoff.ts", "quick").is_null());
    assert!(module_of("search/src/retrying.ts", "patient").is_null());
}

#[test]
fn a_configured_retry_module_turns_inference_off_for_its_package() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("effect-monorepo"), dir.path());
    std::fs::write(
        dir.path().join("retrylint.toml"),
        "retry-modules = [\"**/infra/retry.ts\", \"packages/billing/src/infra/retry.ts\"]\n",
    )
    .unwrap();
    let (_, before) = common::check_json(dir.path(), &["."]);
    assert!(!common::findings(&before)
        .iter()
        .any(|(p, _, r)| p.ends_with("lib/policies.ts") && r == "inline-schedule"));

    // The billing package now names a module (that it does not use): its policies module is
    // a second home for policies, reported where each is built.
    std::fs::create_dir_all(dir.path().join("packages/billing/src/infra")).unwrap();
    std::fs::write(
        dir.path().join("packages/billing/src/infra/retry.ts"),
        "import { Schedule } from \"effect\"\n\nexport const spare = Schedule.recurs(1)\n",
    )
    .unwrap();
    let (_, after) = common::check_json(dir.path(), &["."]);
    let inline: Vec<u64> = common::findings(&after)
        .into_iter()
        .filter(|(p, _, r)| p.ends_with("lib/policies.ts") && r == "inline-schedule")
        .map(|(_, line, _)| line)
        .collect();
    assert_eq!(inline, [5, 12], "{after:#?}");
    assert!(!after["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["message"].as_str().unwrap().contains("taken as")));
}
