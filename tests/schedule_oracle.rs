//! Differential test of the schedule model against Effect itself: 3.x, a late 4.0 beta and
//! 4.x, installed side by side (`tests/oracle/package.json`).
//!
//! A seeded generator (`tests/oracle/generate.mjs`) enumerates every `Schedule` export of each
//! installed version and writes expressions over all of them; the real `effect` packages
//! evaluate them on a virtual clock (`tests/oracle/evaluate.mjs`), and `retrylint schedule-eval`
//! evaluates them with the model, told the exact version. For everything the model claims to
//! know, the attempt count (over 64 retries), the jitter flag and the first 20 nominal delays
//! must agree exactly.
//! What it does not know is counted per export and printed as a coverage table.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use retrylint::effect_version::EffectVersion;
use retrylint::schedule::api;

/// Mixed expressions (every part drawn from every export) per seed.
const COUNT: &str = "600";
/// Expressions per export, version and seed with that export on top.
const PER_EXPORT: &str = "5";
const SEEDS: &str = "42 7";
/// For a deeper run: `ORACLE_SEEDS="1 2 3" ORACLE_COUNT=3000 ORACLE_PER_EXPORT=20 cargo test --test schedule_oracle`.
fn setting(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}
/// Retries Effect is asked for: the model decides jitter over its first 64 steps, so Effect
/// runs as many (a jittered branch may decide a delay only after the first 20).
const N: usize = 64;

/// Exports the model does not claim anything about, with the reason. An export that becomes
/// unknown without being listed here fails the test; one that becomes known is only printed.
const UNMODELLED: &[(&str, &str)] = &[
    ("makeWithState", "a hand-written step function"),
    ("fromStep", "a hand-written step function"),
    ("toStep", "only meets a schedule through fromStep"),
    ("fromStepWithMetadata", "a hand-written step function"),
    ("isSchedule", "a predicate: the conditional around it is not evaluated"),
    (
        "resetAfter",
        "restarts the schedule when a gap reaches the limit: not modelled",
    ),
    (
        "resetWhen",
        "restarts the schedule on an output predicate: not modelled",
    ),
    ("intersectWith", "merges the delay intervals with a function of its own"),
    ("unionWith", "merges the delay intervals with a function of its own"),
    (
        "eitherWith",
        "3.x: merges the delay intervals with a function of its own",
    ),
    (
        "bothInOut",
        "splits its input in two: Effect's retry input is one error",
    ),
    ("recurWhile", "continues on a predicate over the error"),
    ("recurUntil", "continues on a predicate over the error"),
    ("recurWhileEffect", "continues on a predicate over the error"),
    ("recurUntilEffect", "continues on a predicate over the error"),
    ("recurUntilOption", "continues on a function of the error"),
    ("collectWhile", "3.x: continues on a predicate over the error"),
    ("collectUntil", "continues on a predicate over the error"),
    ("collectWhileEffect", "continues on a predicate over the error"),
    ("collectUntilEffect", "continues on a predicate over the error"),
];

/// Runs `command` on `input` in a thread of its own, so that Effect and the model evaluate a
/// batch at the same time.
fn spawn_with_stdin(mut command: Command, input: &[u8]) -> std::thread::JoinHandle<Vec<u8>> {
    let input = input.to_vec();
    std::thread::spawn(move || {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e} (Node.js is needed: .ci/run installs it)"));
        let mut stdin = child.stdin.take().unwrap();
        // Feed stdin from a thread: both sides stream, so a large batch cannot deadlock.
        let feeder = std::thread::spawn(move || stdin.write_all(&input));
        let output = child.wait_with_output().unwrap();
        feeder.join().unwrap().unwrap();
        assert!(output.status.success(), "{command:?} failed");
        output.stdout
    })
}

/// A request line with Effect asked for `N` retries.
fn with_n(mut request: serde_json::Value) -> Vec<u8> {
    request["n"] = serde_json::json!(N);
    format!("{request}\n").into_bytes()
}

fn ensure_node_packages(dir: &Path) {
    let installed = ["effect", "effect-v3", "effect-v4-beta"]
        .iter()
        .all(|p| dir.join("node_modules").join(p).is_dir());
    if installed {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .status()
        .expect("npm is needed for the differential test (.ci/run installs it)");
    assert!(status.success(), "npm ci failed in {}", dir.display());
}

fn lines(bytes: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0),
        (None, None) => a.is_null() && b.is_null(),
        _ => false,
    }
}

/// What the model claims about one expression that the oracle contradicts.
fn disagreements(model: &serde_json::Value, oracle: &serde_json::Value) -> (bool, Vec<String>) {
    let mut problems = Vec::new();
    let mut claimed = false;
    let oracle_delays = oracle["delaysMs"].as_array().unwrap();
    let terminated = oracle["terminated"].as_bool().unwrap();
    let retries = oracle_delays.len() as u64;
    match model["attempts"].as_str().unwrap() {
        "exact" => {
            claimed = true;
            let k = model["retries"].as_u64().unwrap();
            let agrees = if k as usize <= N {
                terminated && retries == k
            } else {
                !terminated
            };
            if !agrees {
                problems.push(format!(
                    "attempts: model exactly {k}, Effect terminated={terminated} after {retries}"
                ));
            }
        }
        "at-most" => {
            claimed = true;
            let k = model["retries"].as_u64().unwrap();
            if terminated && retries > k {
                problems.push(format!("attempts: model at most {k}, Effect {retries}"));
            }
        }
        "unbounded" => {
            claimed = true;
            if terminated {
                problems.push(format!("attempts: model unbounded, Effect stopped after {retries}"));
            }
        }
        _ => {}
    }
    if let Some(delays) = model["delaysMs"].as_array() {
        claimed = true;
        let k = delays.len().min(oracle_delays.len()).min(N);
        if !delays[..k].iter().zip(&oracle_delays[..k]).all(|(a, b)| close(a, b)) {
            problems.push(format!(
                "delays: model {:?}, Effect {:?}",
                &delays[..k],
                &oracle_delays[..k]
            ));
        }
    }
    let any_positive = oracle_delays.iter().any(|d| d.as_f64().is_none_or(|x| x > 0.0));
    if let (Some(jittered), true) = (model["jittered"].as_bool(), any_positive) {
        claimed = true;
        if jittered != oracle["jittered"].as_bool().unwrap() {
            problems.push(format!("jitter: model {jittered}, Effect {}", oracle["jittered"]));
        }
    }
    (claimed, problems)
}

/// How the model did on the expressions with one export on top.
#[derive(Default)]
struct Tally {
    agree: usize,
    unknown: usize,
    disagree: usize,
    rejected: usize,
}

impl Tally {
    fn status(&self) -> &'static str {
        if self.disagree > 0 {
            "disagreeing"
        } else if self.agree + self.unknown == 0 {
            "rejected by Effect"
        } else if self.unknown == 0 {
            "modelled"
        } else if self.agree == 0 {
            "unknown"
        } else {
            "partly modelled"
        }
    }
}

#[test]
#[ignore = "needs Node.js 18+, npm and the npm registry (npm ci in tests/oracle); .ci/run runs it"]
fn schedule_model_agrees_with_effect() {
    common::require("node", "Node.js 18 or later");
    common::require("npm", "npm");
    let dir = common::repo_root().join("tests/oracle");
    ensure_node_packages(&dir);
    let (mut total, mut claimed, mut unknown, mut oracle_errors) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    // version → its exports, and the exports that are not schedules (with why).
    let mut exports: BTreeMap<String, (Vec<String>, BTreeMap<String, String>)> = BTreeMap::new();
    // (version, export) → tally of its focus expressions.
    let mut coverage: BTreeMap<(String, String), Tally> = BTreeMap::new();
    // Generated expressions for each seed, then the hand-written cases (`cases.jsonl`).
    let mut batches: Vec<(String, Vec<u8>)> = Vec::new();
    let (seeds, count, per_export) = (
        setting("ORACLE_SEEDS", SEEDS),
        setting("ORACLE_COUNT", COUNT),
        setting("ORACLE_PER_EXPORT", PER_EXPORT),
    );
    for seed in seeds.split_whitespace() {
        let generated = Command::new("node")
            .args([
                "generate.mjs",
                "--seed",
                seed,
                "--count",
                &count,
                "--per-export",
                &per_export,
            ])
            .current_dir(&dir)
            .stderr(Stdio::inherit())
            .output()
            .expect("node runs the generator");
        assert!(generated.status.success(), "the generator failed");
        let mut requests = Vec::new();
        for line in lines(&generated.stdout) {
            if let Some(list) = line["exports"].as_array() {
                let names = list.iter().map(|n| n.as_str().unwrap().to_string()).collect();
                let not_schedules = line["notSchedules"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                    .collect();
                exports.insert(line["version"].as_str().unwrap().to_string(), (names, not_schedules));
            } else {
                requests.extend(with_n(line));
            }
        }
        batches.push((format!("seed {seed}"), requests));
    }
    let cases = lines(&std::fs::read(dir.join("cases.jsonl")).unwrap());
    batches.push(("cases.jsonl".into(), cases.into_iter().flat_map(with_n).collect()));
    for (seed, input) in &batches {
        let requests = lines(input);
        let mut evaluate = Command::new("node");
        evaluate.arg("evaluate.mjs").current_dir(&dir);
        let mut model_command = common::bin();
        model_command.arg("schedule-eval");
        let (oracle, model) = (
            spawn_with_stdin(evaluate, input),
            spawn_with_stdin(model_command, input),
        );
        let oracle: HashMap<String, serde_json::Value> = lines(&oracle.join().unwrap())
            .into_iter()
            .map(|a| (a["id"].to_string(), a))
            .collect();
        let model = lines(&model.join().unwrap());
        assert_eq!(model.len(), requests.len(), "one model answer per request");
        for (request, answer) in requests.iter().zip(&model) {
            total += 1;
            let focus = request["export"].as_str().map(|e| {
                (
                    request["version"].as_str().unwrap_or_default().to_string(),
                    e.to_string(),
                )
            });
            let mut tally = focus.map(|key| coverage.entry(key).or_default());
            let expected = &oracle[&request["id"].to_string()];
            if expected.get("error").is_some() {
                oracle_errors += 1;
                if let Some(t) = tally.as_mut() {
                    t.rejected += 1;
                }
                continue;
            }
            let (was_claimed, problems) = disagreements(answer, expected);
            // A policy factory called with its arguments (issue 24.3) is a schedule the model
            // must read, not one it may leave unknown.
            if !was_claimed && request["id"].as_str().is_some_and(|id| id.contains("-factory-")) {
                failures.push(format!(
                    "{seed} {}: the model claims nothing about a factory call",
                    request["id"]
                ));
            }
            if !was_claimed {
                unknown += 1;
                if let Some(t) = tally.as_mut() {
                    t.unknown += 1;
                }
                continue;
            }
            claimed += 1;
            if problems.is_empty() {
                if let Some(t) = tally.as_mut() {
                    t.agree += 1;
                }
            } else {
                if let Some(t) = tally.as_mut() {
                    t.disagree += 1;
                }
                failures.push(format!(
                    "{seed} {} [{}] {}\n  {}",
                    request["version"],
                    request["export"].as_str().unwrap_or("mixed"),
                    request["expr"],
                    problems.join("\n  ")
                ));
            }
        }
    }

    // The model's table of exports must be the packages' own.
    let mut table_problems = Vec::new();
    for (version, (names, _)) in &exports {
        let parsed = EffectVersion::parse_exact(version).expect("an exact version");
        let mut mine: Vec<String> = api::exports(parsed).into_iter().map(String::from).collect();
        let mut theirs = names.clone();
        mine.sort();
        theirs.sort();
        if mine != theirs {
            let missing: Vec<_> = theirs.iter().filter(|n| !mine.contains(n)).collect();
            let extra: Vec<_> = mine.iter().filter(|n| !theirs.contains(n)).collect();
            table_problems.push(format!(
                "effect {version}: src/schedule/api.rs lacks {missing:?} and has {extra:?}"
            ));
        }
    }

    // Coverage: for each version, each export.
    let mut unexpected_unknown = Vec::new();
    println!("schedule model coverage, per Schedule export (expressions with that export on top):");
    for (version, (names, not_schedules)) in &exports {
        let mut by_status: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for name in names {
            if let Some(why) = not_schedules.get(name) {
                by_status
                    .entry("not a schedule")
                    .or_default()
                    .push(format!("{name} ({why})"));
                continue;
            }
            let tally = coverage.get(&(version.clone(), name.clone()));
            let Some(tally) = tally else {
                by_status.entry("not drawn").or_default().push(name.clone());
                continue;
            };
            let status = tally.status();
            let shown = match status {
                "partly modelled" => format!("{name} {}/{}", tally.agree, tally.agree + tally.unknown),
                _ => name.clone(),
            };
            if status == "unknown" && !UNMODELLED.iter().any(|(n, _)| n == name) {
                unexpected_unknown.push(format!("effect {version}: Schedule.{name}"));
            }
            by_status.entry(status).or_default().push(shown);
        }
        let counts: Vec<String> = by_status
            .iter()
            .map(|(s, names)| format!("{} {s}", names.len()))
            .collect();
        println!("  effect {version}: {} exports: {}", names.len(), counts.join(", "));
        for (status, names) in &by_status {
            println!("    {status}: {}", names.join(", "));
        }
    }
    let agreeing = claimed - failures.len();
    println!(
        "schedule model vs Effect: {total} expressions, {claimed} with claims, {agreeing} agree ({:.2}%), {unknown} unknown, {oracle_errors} rejected by Effect",
        100.0 * agreeing as f64 / claimed.max(1) as f64
    );
    assert!(table_problems.is_empty(), "{}", table_problems.join("\n"));
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        unexpected_unknown.is_empty(),
        "the model knows nothing about these exports (list them in UNMODELLED with the reason, or model them):\n{}",
        unexpected_unknown.join("\n")
    );
}

/// Schedules with one value the model cannot read (`partial.jsonl`, `$` in `expr`): a
/// parameter, `Config.*`, a template literal. The model is given the expression with `$` an
/// unresolved name; Effect runs it with each of `values` in its place. What the model still
/// claims (the attempt count, jitter, whether the gap grows) must hold for every value, and
/// every case must claim something: partial knowledge is still knowledge.
#[test]
fn partial_schedules_agree_with_effect_for_every_value() {
    let dir = common::repo_root().join("tests/oracle");
    ensure_node_packages(&dir);
    let cases = lines(&std::fs::read(dir.join("partial.jsonl")).unwrap());
    let (mut model_input, mut oracle_input) = (Vec::new(), Vec::new());
    for case in &cases {
        let expr = case["expr"].as_str().unwrap();
        assert!(expr.contains('$'), "{}: no `$` to leave unread", case["id"]);
        let mut request = serde_json::json!({ "id": case["id"], "version": case["version"] });
        request["expr"] = serde_json::json!(expr.replace('$', "opts.unread"));
        model_input.extend(with_n(request.clone()));
        for (i, value) in case["values"].as_array().unwrap().iter().enumerate() {
            request["id"] = serde_json::json!(format!("{}#{i}", case["id"].as_str().unwrap()));
            request["expr"] = serde_json::json!(expr.replace('$', value.as_str().unwrap()));
            oracle_input.extend(with_n(request.clone()));
        }
    }
    let mut evaluate = Command::new("node");
    evaluate.arg("evaluate.mjs").current_dir(&dir);
    let mut model_command = common::bin();
    model_command.arg("schedule-eval");
    let (oracle, model) = (
        spawn_with_stdin(evaluate, &oracle_input),
        spawn_with_stdin(model_command, &model_input),
    );
    let oracle: HashMap<String, serde_json::Value> = lines(&oracle.join().unwrap())
        .into_iter()
        .map(|a| (a["id"].as_str().unwrap().to_string(), a))
        .collect();
    let model = lines(&model.join().unwrap());
    assert_eq!(model.len(), cases.len(), "one model answer per case");
    let mut failures = Vec::new();
    for (case, answer) in cases.iter().zip(&model) {
        let id = case["id"].as_str().unwrap();
        let grows = answer["gapGrows"].as_bool();
        let mut claimed = grows.is_some();
        for (i, value) in case["values"].as_array().unwrap().iter().enumerate() {
            let expected = &oracle[&format!("{id}#{i}")];
            assert!(
                expected.get("error").is_none(),
                "{id} with {value}: Effect rejects it: {expected}"
            );
            let (was_claimed, problems) = disagreements(answer, expected);
            claimed |= was_claimed;
            for problem in problems {
                failures.push(format!("{id} with {value}: {problem}"));
            }
            // A growing gap: later delays longer than the first (while the schedule runs).
            let delays: Vec<f64> = expected["delaysMs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_f64().unwrap_or(f64::INFINITY))
                .collect();
            if let (Some(grows), true) = (grows, delays.len() >= 4) {
                let (first, last) = (delays[0], delays[delays.len() - 1]);
                if grows != (last > first) {
                    failures.push(format!("{id} with {value}: model gap grows={grows}, Effect {delays:?}"));
                }
            }
        }
        if !claimed {
            failures.push(format!("{id}: the model claims nothing about it"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
