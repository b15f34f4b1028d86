//! Issue 24.3: policies built by functions. A retry-module factory is judged on what holds for
//! every argument, once, at the factory (its calls as related places); what an argument decides
//! is judged at the call that passes it; a retry inside a retry-module helper is judged too.
//! The binary runs on small projects; `fixtures/effect-v3` (infra/retry.ts, features/
//! Factories.ts) holds the same shapes with their look-alikes.

mod common;

const PACKAGE: &str = r#"{ "name": "app", "private": true, "dependencies": { "effect": "3.19.0" } }"#;
const CONFIG: &str = "# the project root\n";

const RETRY: &str = r#"import { Duration, Effect, Schedule } from "effect"

const presets = {
  quick: { base: "100 millis", cap: "1 second", maxAttempts: 3 },
  patient: { base: "1 second", maxAttempts: 8 },
}

type Tuning = { base: Duration.DurationInput; cap?: Duration.DurationInput; maxAttempts: number }

export const schedule = (preset: keyof typeof presets | Tuning) => {
  const o = typeof preset === "string" ? presets[preset] : preset
  if (o.cap) {
    return Schedule.exponential(o.base).pipe(Schedule.union(Schedule.spaced(o.cap)), Schedule.intersect(Schedule.recurs(o.maxAttempts)))
  }
  return Schedule.exponential(o.base).pipe(Schedule.intersect(Schedule.recurs(o.maxAttempts)))
}

export const backoff = (retries = 3, base: Duration.DurationInput = "100 millis") =>
  Schedule.exponential(base).pipe(Schedule.union(Schedule.spaced("1 second")), Schedule.intersect(Schedule.recurs(retries)), Schedule.jittered)

export const isTransient = (error: unknown): boolean => error instanceof Error

export const withRetry = <A, E, R>(effect: Effect.Effect<A, E, R>, { base, times }: { base: Duration.DurationInput; times: number }) =>
  effect.pipe(Effect.retry({ schedule: Schedule.exponential(base).pipe(Schedule.intersect(Schedule.recurs(times))), while: isTransient }))
"#;

const CALLS: &str = r#"import { Effect } from "effect"
import * as Retry from "../infra/retry.js"

declare const fetchRates: Effect.Effect<number, Error>

export const patient = fetchRates.pipe(Effect.retry({ schedule: Retry.schedule("patient"), while: Retry.isTransient }))
export const quick = fetchRates.pipe(Effect.retry({ schedule: Retry.schedule("quick"), while: Retry.isTransient }))
export const few = fetchRates.pipe(Effect.retry({ schedule: Retry.backoff(), while: Retry.isTransient }))
export const many = fetchRates.pipe(Effect.retry({ schedule: Retry.backoff(10), while: Retry.isTransient }))
export const hardened = Retry.withRetry(fetchRates, { base: "100 millis", times: 5 })
"#;

fn report() -> serde_json::Value {
    let dir = common::project(&[
        ("package.json", PACKAGE),
        ("retrylint.toml", CONFIG),
        ("src/infra/retry.ts", RETRY),
        ("src/features/Rates.ts", CALLS),
    ]);
    common::check_json(dir.path(), &["."]).1
}

/// (rule, path, line) of every finding.
fn findings(report: &serde_json::Value) -> Vec<(String, String, u64)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_string(),
                d["path"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn has(found: &[(String, String, u64)], rule: &str, path: &str, line: u64) -> bool {
    found
        .iter()
        .any(|(r, p, l)| r == rule && p.ends_with(path) && *l == line)
}

#[test]
fn a_preset_looked_up_in_a_table_is_judged_at_the_call_that_names_it() {
    let found = findings(&report());
    // `patient` has no cap: its gap grows, 4.3 minutes in all.
    assert!(has(&found, "uncapped-schedule", "Rates.ts", 6), "{found:?}");
    assert!(has(&found, "policy-over-budget", "Rates.ts", 6), "{found:?}");
    // `quick` is capped and in budget.
    assert!(
        !found.iter().any(|(_, p, l)| p.ends_with("Rates.ts") && *l == 7),
        "{found:?}"
    );
}

#[test]
fn a_defect_of_every_argument_is_reported_once_at_the_factory() {
    let report = report();
    let found = findings(&report);
    // No preset and no caller's numbers are jittered: once, at `schedule`, not at each call.
    assert!(has(&found, "unjittered-schedule", "retry.ts", 10), "{found:?}");
    let at_calls = found
        .iter()
        .filter(|(r, p, _)| r == "unjittered-schedule" && p.ends_with("Rates.ts"))
        .count();
    assert_eq!(at_calls, 0, "{found:?}");
    let diagnostic = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "unjittered-schedule" && d["line"] == 10)
        .unwrap();
    let related: Vec<u64> = diagnostic["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(related, [6, 7], "{diagnostic}");
}

#[test]
fn default_parameters_are_the_arguments_a_call_leaves_out() {
    let found = findings(&report());
    assert!(
        !found.iter().any(|(_, p, l)| p.ends_with("Rates.ts") && *l == 8),
        "{found:?}"
    );
    assert!(has(&found, "policy-over-budget", "Rates.ts", 9), "{found:?}");
}

#[test]
fn a_hardening_helper_in_the_retry_module_is_judged_for_every_argument() {
    let found = findings(&report());
    assert!(has(&found, "uncapped-schedule", "retry.ts", 24), "{found:?}");
    assert!(has(&found, "unjittered-schedule", "retry.ts", 24), "{found:?}");
}

#[test]
fn policies_lists_a_factorys_presets_and_the_arguments_it_is_called_with() {
    let dir = common::project(&[
        ("package.json", PACKAGE),
        ("retrylint.toml", CONFIG),
        ("src/infra/retry.ts", RETRY),
        ("src/features/Rates.ts", CALLS),
    ]);
    let output = common::bin()
        .args(["policies", "."])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    let table = String::from_utf8(output.stdout).unwrap();
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name} in\n{table}"))
            .to_string()
    };
    assert!(row("schedule(\"patient\")").contains("none (grows)"), "{table}");
    assert!(row("schedule(\"quick\")").contains("1 s"), "{table}");
    assert!(row("schedule(…)").contains("no"), "{table}");
    let calls = table
        .split("arguments each factory is called with:")
        .nth(1)
        .unwrap_or_else(|| panic!("no factory calls in\n{table}"));
    assert!(calls.contains("Retry.schedule(\"patient\")"), "{table}");
    assert!(calls.contains("Retry.backoff(10)"), "{table}");

    let output = common::bin()
        .args(["policies", "--format", "json", "."])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let factory = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "backoff(…)")
        .unwrap();
    assert_eq!(factory["factory"], "backoff");
    assert_eq!(factory["called_with"].as_array().unwrap().len(), 2, "{factory}");
}

#[test]
fn a_wrapper_that_rebuilds_a_schedule_from_a_list_of_delays_is_read_at_its_call() {
    let dir = common::project(&[
        ("package.json", PACKAGE),
        ("retrylint.toml", CONFIG),
        (
            "src/infra/retry.ts",
            r#"import { Duration, Schedule } from "effect"

export const fromDelays = (delays: ReadonlyArray<Duration.DurationInput>) =>
  Schedule.forever.pipe(Schedule.addDelay((n) => delays[Math.min(n, delays.length - 1)]), Schedule.intersect(Schedule.recurs(delays.length)))

export const isTransient = (error: unknown): boolean => error instanceof Error
"#,
        ),
        (
            "src/features/Rates.ts",
            r#"import { Effect } from "effect"
import * as Retry from "../infra/retry.js"

declare const fetchRates: Effect.Effect<number, Error>

export const listed = fetchRates.pipe(Effect.retry({ schedule: Retry.fromDelays(["1 second", "5 seconds", "30 seconds"]), while: Retry.isTransient }))
"#,
        ),
    ]);
    let report = common::check_json(dir.path(), &["."]).1;
    let found = findings(&report);
    assert!(has(&found, "unjittered-schedule", "Rates.ts", 6), "{found:?}");
    let budget = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "policy-over-budget")
        .unwrap_or_else(|| panic!("no policy-over-budget in {found:?}"));
    assert!(
        budget["message"].as_str().unwrap().contains("(1 s, 5 s, 30 s)"),
        "{budget}"
    );
}
