//! RS2 configuration end to end: exact places in JSON and YAML, levels across directories,
//! `retrylint policies` with levels and calls, suppressions in YAML, files that are not RS2.

mod common;

use serde_json::Value;

/// `(path, line, column, rule)` of every finding.
fn places(report: &Value) -> Vec<(String, u64, u64, String)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn has(found: &[(String, u64, u64, String)], path: &str, line: u64, column: u64, rule: &str) -> bool {
    found
        .iter()
        .any(|(p, l, c, r)| p == path && *l == line && *c == column && r == rule)
}

#[test]
fn findings_sit_on_the_exact_key_in_json_and_yaml() {
    let (_, report) = common::check_json(&common::fixture("rs2-runtime"), &["."]);
    let found = places(&report);
    // Policy findings on the `retry` key, call findings on `method` / `effect`.
    for (path, line, column, rule) in [
        ("mounts/catalog.yaml", 5, 1, "unjittered-schedule"),
        ("mounts/orders.json", 7, 21, "retry-on-unsafe-call"),
        ("mounts/payments.yaml", 14, 11, "retry-on-unsafe-call"),
        ("mounts/payments.yaml", 15, 9, "retry-on-permanent-status"),
        ("flows/checkout.json", 4, 17, "imperative-retry"),
        ("flows/checkout.json", 6, 7, "uncapped-schedule"),
        ("tenants/beta/tenant.yaml", 3, 1, "policy-over-budget"),
    ] {
        assert!(
            has(&found, path, line, column, rule),
            "{path}:{line}:{column} {rule} in {found:#?}"
        );
    }
    // The tenant a call resolves to is named, and pointed at.
    let unsafe_call = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == "tenants/delta/mounts/reports.json")
        .unwrap();
    assert!(
        unsafe_call["message"]
            .as_str()
            .unwrap()
            .contains("the tenant's `retry` (tenant.json)"),
        "delta has no policy of its own: acme's applies\n{unsafe_call:#}"
    );
    assert_eq!(
        report["notes"].as_array().map_or(0, Vec::len),
        0,
        "{:#}",
        report["notes"]
    );
}

#[test]
fn policies_lists_levels_and_the_calls_resolving_to_each() {
    let output = common::bin()
        .current_dir(common::fixture("rs2-runtime"))
        .args(["policies", ".", "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let rows: Value = serde_json::from_slice(&output.stdout).unwrap();
    let row = |path: &str, name: &str| -> Value {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["path"] == path && r["name"] == name)
            .unwrap_or_else(|| panic!("{path} {name} in {rows:#}"))
            .clone()
    };
    let acme = row("tenant.json", "`retry` (tenant)");
    assert_eq!(acme["level"], "tenant");
    assert_eq!(acme["retries"], 3);
    assert_eq!(acme["delays_ms"], serde_json::json!([250.0, 500.0, 1000.0]));
    assert_eq!(acme["worst_total_ms"], 1750.0);
    let calls: Vec<(String, String)> = acme["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["effect"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The mounts without a policy of their own, under acme and not under another tenant.
    for (path, effect) in [
        ("mounts/orders.json", "pure"),
        ("mounts/orders.json", "unsafe"),
        ("mounts/orders.json", "keyed"),
        ("mounts/orders.json", "idempotent"),
        ("tenants/delta/mounts/reports.json", "unsafe"),
    ] {
        assert!(
            calls.contains(&(path.into(), effect.into())),
            "{path} {effect} in {calls:?}"
        );
    }
    assert!(
        !calls
            .iter()
            .any(|(p, _)| p.starts_with("tenants/beta/") || p.starts_with("mounts/payments")),
        "{calls:?}"
    );
    let payments = row("mounts/payments.yaml", "`retry` (mount)");
    assert_eq!(payments["attempts"], "off");
    assert_eq!(payments["enabled"], false);
    assert_eq!(payments["sites"], 1, "the capture call");
    let gamma = row("tenants/gamma/tenant.json", "`retry` (tenant)");
    assert_eq!(gamma["attempts"], "off");
    let beta = row("tenants/beta/tenant.yaml", "`retry` (tenant)");
    assert_eq!(beta["calls"].as_array().unwrap().len(), 2, "{beta:#}");
    let call = row("mounts/orders.json", "`flows.create.steps[3].retry` (call)");
    assert_eq!(call["level"], "call");
    assert_eq!(call["calls"][0]["method"], "PATCH");

    let output = common::bin()
        .current_dir(common::fixture("rs2-runtime"))
        .args(["policies", "."])
        .output()
        .unwrap();
    let table = String::from_utf8(output.stdout).unwrap();
    let line = table
        .lines()
        .find(|l| l.starts_with("`retry` (tenant) ") && l.contains(" tenant.json:3 "))
        .unwrap_or_else(|| panic!("{table}"));
    for cell in ["5 s", "yes", "250 ms, 500 ms, 1 s", "1.75 s"] {
        assert!(line.contains(cell), "{line}");
    }
    assert!(table.contains("calls resolving to each RS2 policy:"), "{table}");
    assert!(
        table.contains("  tenants/delta/mounts/reports.json:6  PATCH  unsafe"),
        "{table}"
    );
}

#[test]
fn yaml_findings_are_suppressed_with_hash_comments() {
    let dir = common::project(&[
        (
            "flows/legacy.yaml",
            "steps:\n  # retrylint-ignore imperative-retry -- removed with the v1 runner in PLAT-412\n  - set: $_retry\n  - set: $_retry  # retrylint-ignore imperative-retry\n",
        ),
        ("flows/other.yaml", "steps:\n  - set: $_retry\n"),
    ]);
    let (_, report) = common::check_json(dir.path(), &["."]);
    let found = places(&report);
    assert!(has(&found, "flows/other.yaml", 2, 10, "imperative-retry"), "{found:#?}");
    assert!(
        has(&found, "flows/legacy.yaml", 4, 19, "suppression-without-reason"),
        "{found:#?}"
    );
    assert_eq!(found.len(), 2, "{found:#?}");
}

#[test]
fn lockfiles_and_other_json_are_read_silently() {
    let big = format!(
        "{{ \"packages\": {{ {} }} }}\n",
        (0..30_000)
            .map(|i| format!("\"retry-{i}\": {{ \"enabled\": true }}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let dir = common::project(&[
        ("package-lock.json", big.as_str()),
        (
            "tsconfig.json",
            "{\n  // comments are fine\n  \"compilerOptions\": {},\n}\n",
        ),
        ("broken.yaml", "a: [1, 2\nb: {\n"),
        (
            "mounts/orders.json",
            "{ \"mount\": \"/orders\", \"retry\": { \"maxAttempts\": 3, \"jitter\": \"full\" } }\n",
        ),
    ]);
    for args in [&["."][..], &[".", "--no-prefilter"]] {
        let (code, report) = common::check_json(dir.path(), args);
        assert_eq!(code, 0, "{report:#}");
        assert!(report["diagnostics"].as_array().unwrap().is_empty(), "{report:#}");
        assert!(
            report["notes"].as_array().unwrap().is_empty(),
            "{args:?}: {:#}",
            report["notes"]
        );
    }
}
