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
    // The repository names Effect's retry in code without making one (a type reads it), so
    // the prefilter keeps it.
    let repository = dir.path().join("src/orders/OrdersRepository.ts");
    let text = std::fs::read_to_string(&repository).unwrap();
    std::fs::write(
        &repository,
        format!("{text}\nexport type RetryHint = typeof Effect.retry\n"),
    )
    .unwrap();
    let cold = common::check_json(dir.path(), &["."]).1;
    let place = dir.path().join("src/orders/PlaceOrder.ts");
    let original = std::fs::read_to_string(&place).unwrap();
    // Nothing calls into the repository: it is cached as read lazily (the file still names
    // Effect's retry, so that it is parsed as before).
    std::fs::write(
        &place,
        "import { Effect } from \"effect\"\nexport type RetryNothing = typeof Effect.retry\n",
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

/// Sets the modification time of every file under `dir` (the cache's excepted) to `time`.
fn set_times(dir: &Path, time: std::time::SystemTime) {
    for path in common::snapshot(dir).into_keys() {
        let file = std::fs::File::options().write(true).open(dir.join(path)).unwrap();
        file.set_modified(time).unwrap();
    }
}

/// The cache file of the project at `dir` (one build's).
fn cache_file(dir: &Path) -> std::path::PathBuf {
    let builds: Vec<_> = std::fs::read_dir(dir.join(".retrylint_cache"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_dir())
        .collect();
    assert_eq!(builds.len(), 1);
    builds[0].path().join("facts.bin")
}

/// A damaged cache (a flipped bit, a file cut short) never changes the findings, neither of
/// the run that reads it nor of the next, which reads what that run wrote: 300 variants of a
/// real cache, 250 bit flips and 50 cuts spread over it. (A cache read whole, unchecked, gave
/// other findings in 5 of them: a flipped letter of a name or a duration still decodes.)
#[test]
fn a_damaged_cache_never_changes_the_findings() {
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let cold = {
        let dir = fixture_copy("effect-services");
        common::check_json(dir.path(), &["."]).1
    };
    // The variants of a project's own cache (its entries are keyed by its paths).
    let variant = |good: &[u8], at: usize| -> Vec<u8> {
        if at < 250 {
            let mut flipped = good.to_vec();
            flipped[(at * good.len() / 250 + at % 11).min(good.len() - 1)] ^= 1 << (at * 3 % 8);
            flipped
        } else {
            let at = at - 250;
            good[..at * good.len() / 50 + at % 5].to_vec()
        }
    };
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                let dir = fixture_copy("effect-services");
                set_times(dir.path(), hour_ago);
                check_cached(dir.path(), &[]);
                let file = cache_file(dir.path());
                let good = std::fs::read(&file).unwrap();
                loop {
                    let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if at >= 300 {
                        break;
                    }
                    std::fs::write(&file, variant(&good, at)).unwrap();
                    for run in ["damaged", "next"] {
                        let report = check_cached(dir.path(), &[]);
                        if report["diagnostics"] != cold["diagnostics"] {
                            failures.lock().unwrap().push(format!("variant {at}, {run} run"));
                        }
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of 600 runs differ from a cold run: {failures:?}",
        failures.len()
    );
}

/// An edit that keeps the file's size and modification time (a second save within the
/// clock's granularity, faked here by setting the time back) is seen by the next run: a file
/// modified so close to its reading is checked by its content.
#[test]
fn an_edit_that_keeps_the_size_and_time_is_seen() {
    let dir = fixture_copy("effect-services");
    let retry = "import { Effect as Fx, Schedule as S } from \"effect\"\nexport const again = Fx.log(\"x\").pipe(Fx.retry(S.recurs(2)))\n";
    // A file the prefilter rules out, as long as the retry that replaces it.
    let quiet = format!("// {}\n", "x".repeat(retry.len() - 4));
    assert_eq!(quiet.len(), retry.len());
    let path = dir.path().join("src/late.ts");
    std::fs::write(&path, &quiet).unwrap();
    let before = check_cached(dir.path(), &[]);
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, retry).unwrap();
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(modified).unwrap();
    drop(file);
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified);
    let after = check_cached(dir.path(), &[]);
    let cold = common::check_json(dir.path(), &["."]).1;
    assert_eq!(findings(&after)["diagnostics"], findings(&cold)["diagnostics"]);
    let late = |r: &serde_json::Value| r["diagnostics"].to_string().contains("src/late.ts");
    assert!(!late(&before) && late(&after), "the new retry is reported: {after:#}");
}
