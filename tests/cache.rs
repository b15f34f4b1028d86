//! The facts cache is invisible in results: a warm run reports exactly what a cold one does,
//! on every fixture, and a change to a file, to the config or to the enabled rules is seen.

mod common;

use std::path::Path;
use std::process::Command;

/// `retrylint check . --format json` in `dir` with the cache on, kept at the project root.
fn check_cached(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut command: Command = common::bin();
    command.env_remove("RETRYLINT_NO_CACHE").current_dir(dir);
    let output = command
        .args(["check", ".", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let mut report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&output.stderr)));
    report["summary"].as_object_mut().unwrap().remove("elapsed_ms");
    report
}

/// A report without the cache's own count, for comparing cold and warm runs.
fn findings(report: &serde_json::Value) -> serde_json::Value {
    let mut report = report.clone();
    report["summary"].as_object_mut().unwrap().remove("cached");
    report
}

fn fixture_copy(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture(name), dir.path());
    dir
}

#[test]
fn a_warm_run_reports_what_a_cold_run_does() {
    for name in [
        "effect-app",
        "rust-service",
        "configured-app",
        "effect-workspace",
        "web-app",
    ] {
        let dir = fixture_copy(name);
        let cold = check_cached(dir.path(), &[]);
        assert_eq!(cold["summary"]["cached"], 0, "{name}: nothing cached yet");
        assert!(
            dir.path().join(".retrylint_cache/.gitignore").is_file(),
            "{name}: the cache is written"
        );
        let warm = check_cached(dir.path(), &[]);
        assert_eq!(
            findings(&warm),
            findings(&cold),
            "{name}: the cache changed the results"
        );
        assert_eq!(
            warm["summary"]["cached"], warm["summary"]["files"],
            "{name}: every file's verdict or facts came from the cache"
        );
        // Without the prefilter, every file is parsed: the cache must not answer with the
        // prefilter's verdicts.
        let unfiltered = check_cached(dir.path(), &["--no-prefilter"]);
        let cold_unfiltered = common::check_json(dir.path(), &[".", "--no-prefilter"]).1;
        assert_eq!(
            findings(&unfiltered)["diagnostics"],
            findings(&cold_unfiltered)["diagnostics"],
            "{name}"
        );
    }
}

#[test]
fn an_edited_file_is_analysed_again() {
    let dir = fixture_copy("effect-app");
    let before = check_cached(dir.path(), &[]);
    // A file the prefilter ruled out becomes one with a finding.
    let path = dir.path().join("src/ui/OrdersTable.tsx");
    let original = std::fs::read_to_string(&path).unwrap();
    let edited = format!(
        "{original}\nimport {{ Effect as Fx, Schedule as S }} from \"effect\"\nexport const again = Fx.log(\"x\").pipe(Fx.retry(S.recurs(2)))\n"
    );
    std::fs::write(&path, &edited).unwrap();
    let after = check_cached(dir.path(), &[]);
    let count = |r: &serde_json::Value| r["diagnostics"].as_array().unwrap().len();
    assert!(count(&after) > count(&before), "the new retry is reported");
    std::fs::write(&path, &original).unwrap();
    let reverted = check_cached(dir.path(), &[]);
    assert_eq!(findings(&reverted)["diagnostics"], findings(&before)["diagnostics"]);
}

/// A file read as Effect code through a prelude is read again when the prelude changes what
/// it re-exports, though the file itself did not change.
#[test]
fn a_file_read_through_a_prelude_follows_the_prelude() {
    let dir = fixture_copy("effect-workspace");
    let orders = |report: &serde_json::Value| -> usize {
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["path"].as_str().unwrap().ends_with("Orders.ts"))
            .count()
    };
    assert_eq!(orders(&check_cached(dir.path(), &[])), 2);
    assert_eq!(orders(&check_cached(dir.path(), &[])), 2, "warm");
    let prelude = dir.path().join("packages/prelude/src/index.ts");
    std::fs::write(&prelude, "export const notEffect = 1\n").unwrap();
    assert_eq!(
        orders(&check_cached(dir.path(), &[])),
        0,
        "the prelude no longer re-exports effect: Orders.ts is not Effect code"
    );
}

#[test]
fn other_rules_or_config_are_not_answered_from_the_cache() {
    let dir = fixture_copy("configured-app");
    // Only the lease rules first: their prefilter rules out the files with retries, and a
    // run of every rule must not take those verdicts.
    let leases = check_cached(dir.path(), &["--select", "lease-release-unguarded"]);
    let cold = common::check_json(dir.path(), &[".", "--select", "lease-release-unguarded"]).1;
    assert_eq!(findings(&leases)["diagnostics"], findings(&cold)["diagnostics"]);
    let full = check_cached(dir.path(), &[]);
    let cold = common::check_json(dir.path(), &["."]).1;
    assert_eq!(findings(&full)["diagnostics"], findings(&cold)["diagnostics"]);
    // Without the configured lease table, its release is not a lease release.
    let config = dir.path().join("retrylint.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("lease-tables = [\"ops.scheduler_locks\"]\n", "")).unwrap();
    let unconfigured = check_cached(dir.path(), &[]);
    let cold = common::check_json(dir.path(), &["."]).1;
    assert_eq!(findings(&unconfigured)["diagnostics"], findings(&cold)["diagnostics"]);
    assert_ne!(unconfigured["diagnostics"], full["diagnostics"]);
    // Generated files were checked and their facts cached; skipped now, they are not reported.
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("generated = \"check\"\n", "")).unwrap();
    let skipping = check_cached(dir.path(), &[]);
    let cold = common::check_json(dir.path(), &["."]).1;
    assert_eq!(findings(&skipping)["diagnostics"], findings(&cold)["diagnostics"]);
    let sdk = |r: &serde_json::Value| r["diagnostics"].to_string().contains("Sdk.ts");
    assert!(
        sdk(&unconfigured) && !sdk(&skipping),
        "the generated file is skipped again"
    );
}

#[test]
fn no_cache_writes_nothing() {
    let dir = fixture_copy("rust-service");
    let mut command = common::bin();
    command.env_remove("RETRYLINT_NO_CACHE").current_dir(dir.path());
    let output = command.args(["check", ".", "--no-cache"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(!dir.path().join(".retrylint_cache").exists());
}

/// A file that retries nothing is cached as read lazily, without its units: when a call is
/// followed into it later, it is read again in full, not answered from the cache.
#[test]
fn a_file_cached_without_its_units_is_read_in_full_when_a_call_reaches_it() {
    let dir = fixture_copy("effect-services");
    // The repository names a retry without making one, so the prefilter keeps it.
    let repository = dir.path().join("src/orders/OrdersRepository.ts");
    let text = std::fs::read_to_string(&repository).unwrap();
    std::fs::write(&repository, format!("{text}\nexport const hint = \"retry later\"\n")).unwrap();
    let cold = common::check_json(dir.path(), &["."]).1;
    let place = dir.path().join("src/orders/PlaceOrder.ts");
    let original = std::fs::read_to_string(&place).unwrap();
    // Nothing calls into the repository: it is cached as read lazily.
    std::fs::write(
        &place,
        "import { Effect } from \"effect\"\nexport const nothing = Effect.log(\"retry later\")\n",
    )
    .unwrap();
    let alone = check_cached(dir.path(), &[]);
    assert_eq!(
        alone["summary"]["parsed"], cold["summary"]["parsed"],
        "the repository is parsed"
    );
    std::fs::write(&place, &original).unwrap();
    let warm = check_cached(dir.path(), &[]);
    assert_eq!(findings(&warm)["diagnostics"], findings(&cold)["diagnostics"]);
    let appends = |r: &serde_json::Value| r["diagnostics"].to_string().contains("transient-retry-on-append");
    assert!(appends(&warm), "the repository's insert is followed: {warm}");
}
