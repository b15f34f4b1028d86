//! Differential test of the schedule model against Effect itself (v4.1.0 and v3.22.4).
//!
//! A seeded generator (`tests/oracle/generate.mjs`) writes schedule expressions over the
//! grammar the model supports; the real `effect` packages evaluate them on a virtual clock
//! (`tests/oracle/evaluate.mjs`), and `retrylint schedule-eval` evaluates them with the model.
//! For everything the model claims to know, the attempt count, the jitter flag and the first
//! 20 nominal delays must agree exactly.

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const COUNT: &str = "1000";
const SEEDS: &[&str] = &["42", "7"];
const N: usize = 20;

fn run_with_stdin(mut command: Command, input: &[u8]) -> Vec<u8> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e} (Node.js is needed: .ci/run installs it)"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{command:?} failed");
    output.stdout
}

fn ensure_node_packages(dir: &Path) {
    if dir.join("node_modules/effect").is_dir() && dir.join("node_modules/effect-v3").is_dir() {
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

#[test]
fn schedule_model_agrees_with_effect() {
    let dir = common::repo_root().join("tests/oracle");
    ensure_node_packages(&dir);
    let (mut total, mut claimed, mut unknown, mut oracle_errors) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    // Generated expressions for each seed, then the hand-written cases (`cases.jsonl`).
    let mut batches: Vec<(String, Vec<u8>)> = SEEDS
        .iter()
        .map(|seed| {
            let generated = Command::new("node")
                .args(["generate.mjs", "--seed", seed, "--count", COUNT])
                .current_dir(&dir)
                .output()
                .expect("node runs the generator");
            assert!(generated.status.success());
            (format!("seed {seed}"), generated.stdout)
        })
        .collect();
    batches.push(("cases.jsonl".into(), std::fs::read(dir.join("cases.jsonl")).unwrap()));
    for (seed, input) in &batches {
        let requests = lines(input);
        let mut evaluate = Command::new("node");
        evaluate.arg("evaluate.mjs").current_dir(&dir);
        let oracle: HashMap<String, serde_json::Value> = lines(&run_with_stdin(evaluate, input))
            .into_iter()
            .map(|a| (a["id"].to_string(), a))
            .collect();
        let mut model_command = common::bin();
        model_command.arg("schedule-eval");
        let model = lines(&run_with_stdin(model_command, input));
        assert_eq!(model.len(), requests.len(), "one model answer per request");
        for (request, answer) in requests.iter().zip(&model) {
            total += 1;
            let expected = &oracle[&request["id"].to_string()];
            if expected.get("error").is_some() {
                oracle_errors += 1;
                continue;
            }
            let (was_claimed, problems) = disagreements(answer, expected);
            if !was_claimed {
                unknown += 1;
                continue;
            }
            claimed += 1;
            if !problems.is_empty() {
                failures.push(format!(
                    "{seed} v{} {}\n  {}",
                    request["version"],
                    request["expr"],
                    problems.join("\n  ")
                ));
            }
        }
    }
    let agreeing = claimed - failures.len();
    println!(
        "schedule model vs Effect: {total} expressions, {claimed} with claims, {agreeing} agree ({:.2}%), {unknown} unknown, {oracle_errors} rejected by Effect",
        100.0 * agreeing as f64 / claimed.max(1) as f64
    );
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        claimed * 10 >= total * 9,
        "the model must know at least 90% of the grammar: {claimed} of {total}"
    );
}
