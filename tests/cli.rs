//! The command line: exit codes, config, rule selection and output formats, on the real binary.

mod common;

use common::{check, check_json, findings, project};

const INLINE: &str = r#"import { Effect, Schedule } from "effect"
export const run = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(3), while: (e) => e === "busy" }))
"#;

const REPOSITORY: &str = r#"import { Effect } from "effect"
import { SqlClient } from "effect/unstable/sql"
import { Retry } from "../infra/index.js"
export const find = SqlClient.SqlClient.pipe(Effect.retry({ schedule: Retry.contention, while: Retry.isContention }))
"#;

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).to_string()
}

#[test]
fn clean_project_exits_0() {
    let dir = project(&[(
        "src/a.ts",
        "import { Effect } from \"effect\"\nexport const a = Effect.succeed(1)\n",
    )]);
    let output = check(dir.path(), &["."]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("no findings in 1 file"));
}

#[test]
fn error_findings_exit_1_and_warnings_do_not() {
    let dir = project(&[("src/a.ts", INLINE)]);
    assert_eq!(check(dir.path(), &["."]).status.code(), Some(1));
    std::fs::write(
        dir.path().join("retrylint.toml"),
        "[rules]\ninline-schedule = \"warn\"\n",
    )
    .unwrap();
    let (code, report) = check_json(dir.path(), &["."]);
    assert_eq!(code, 0);
    assert_eq!(report["diagnostics"][0]["severity"], "warning");
    assert_eq!(check(dir.path(), &[".", "--deny-warnings"]).status.code(), Some(1));
    assert_eq!(
        check(dir.path(), &[".", "--no-config"]).status.code(),
        Some(1),
        "--no-config ignores the file"
    );
    std::fs::write(
        dir.path().join("retrylint.toml"),
        "[rules]\ninline-schedule = \"off\"\n",
    )
    .unwrap();
    assert_eq!(check(dir.path(), &["."]).status.code(), Some(0));
}

#[test]
fn config_is_found_from_the_checked_path_upwards() {
    let dir = project(&[
        ("retrylint.toml", "[rules]\ninline-schedule = \"off\"\n"),
        ("services/api/src/a.ts", INLINE),
    ]);
    let (code, _) = check_json(dir.path(), &["services/api"]);
    assert_eq!(code, 0, "the config two levels up applies");
}

#[test]
fn select_and_ignore_choose_rules() {
    let dir = project(&[("src/repositories/orders.ts", REPOSITORY), ("src/a.ts", INLINE)]);
    let rules = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["."];
        all.extend_from_slice(args);
        let (_, report) = check_json(dir.path(), &all);
        findings(&report).into_iter().map(|f| f.2).collect()
    };
    assert_eq!(rules(&[]), ["inline-schedule", "retry-in-repository"]);
    assert_eq!(rules(&["--select", "retry-in-repository"]), ["retry-in-repository"]);
    assert_eq!(rules(&["--ignore", "retry-in-repository"]), ["inline-schedule"]);
    let output = check(dir.path(), &[".", "--select", "inline-schedul"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unknown rule `inline-schedul` in --select"));
}

#[test]
fn config_errors_exit_2_and_point_at_the_line() {
    let cases = [
        (
            "retry-modulez = []\n",
            "unknown key `retry-modulez`; did you mean `retry-modules`?",
            1,
        ),
        ("retries = 3\n", "unknown key `retries`\n", 1),
        (
            "[rules]\ninline-schedule = \"error\"\nno-such-rule = \"warn\"\n",
            "unknown rule `no-such-rule`",
            3,
        ),
        ("[rules]\ninline-schedule = \"loud\"\n", "invalid severity `loud`", 2),
        ("repositories = [\"src/[\"]\n", "invalid glob", 1),
        ("max-file-size = -1\n", "max-file-size must be a positive", 1),
        ("retry-modules = \n", "invalid config", 1),
    ];
    for (config, message, line) in cases {
        let dir = project(&[("retrylint.toml", config), ("src/a.ts", INLINE)]);
        let output = check(dir.path(), &["."]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{config}: {err}");
        assert!(err.contains(message), "{config}: expected `{message}` in\n{err}");
        assert!(
            err.contains(&format!("retrylint.toml:{line}:")),
            "{config}: expected line {line} in\n{err}"
        );
    }
}

#[test]
fn missing_path_exits_2() {
    let dir = project(&[("src/a.ts", INLINE)]);
    let output = check(dir.path(), &["does-not-exist"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("cannot check does-not-exist"));
}

#[test]
fn retry_modules_and_repositories_are_configurable() {
    let dir = project(&[
        (
            "retrylint.toml",
            "retry-modules = [\"**/platform/policies.ts\"]\nrepositories = [\"**/data/**\"]\n",
        ),
        ("src/platform/policies.ts", INLINE),
        ("src/data/orders.ts", REPOSITORY),
        ("src/repositories/orders.ts", REPOSITORY),
    ]);
    let (_, report) = check_json(dir.path(), &["."]);
    let found = findings(&report);
    assert_eq!(
        found,
        [("src/data/orders.ts".to_string(), 4, "retry-in-repository".to_string())]
    );
}

#[test]
fn include_exclude_and_size_limit_filter_files() {
    let big = format!("{INLINE}// {}\n", "x".repeat(2000));
    let dir = project(&[
        (
            "retrylint.toml",
            "exclude = [\"**/generated/**\"]\nmax-file-size = 1000\n",
        ),
        ("src/generated/a.ts", INLINE),
        ("src/big.ts", &big),
        ("src/small.ts", INLINE),
    ]);
    let (_, report) = check_json(dir.path(), &["."]);
    let paths: Vec<String> = findings(&report).into_iter().map(|f| f.0).collect();
    assert_eq!(paths, ["src/small.ts"]);
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n["path"] == "src/big.ts" && n["message"].as_str().unwrap().contains("over the size limit")),
        "{notes:?}"
    );
    let dir = project(&[
        ("retrylint.toml", "include = [\"src/keep/**\"]\n"),
        ("src/keep/a.ts", INLINE),
        ("src/drop/a.ts", INLINE),
    ]);
    let (_, report) = check_json(dir.path(), &["."]);
    let paths: Vec<String> = findings(&report).into_iter().map(|f| f.0).collect();
    assert_eq!(paths, ["src/keep/a.ts"]);
}

#[test]
fn an_explicit_file_is_checked() {
    let dir = project(&[("src/a.ts", INLINE), ("src/b.ts", INLINE)]);
    let (_, report) = check_json(dir.path(), &["src/b.ts"]);
    let paths: Vec<String> = findings(&report).into_iter().map(|f| f.0).collect();
    assert_eq!(paths, ["src/b.ts"]);
}

/// Output formats, snapshotted on the fixture (timings are masked).
fn masked(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let elapsed = regex_lite::Regex::new(r#"(\(\d+ ms\)|"elapsed_ms": \d+)"#).unwrap();
    elapsed.replace_all(&text, "<elapsed>").to_string()
}

#[test]
fn short_format_snapshot() {
    let output = check(&common::fixture("effect-app"), &[".", "--format", "short"]);
    insta::assert_snapshot!(masked(&output.stdout));
}

#[test]
fn json_format_snapshot() {
    let output = check(
        &common::fixture("effect-app"),
        &["src/features/rules", "--format", "json"],
    );
    insta::assert_snapshot!(masked(&output.stdout));
}

#[test]
fn human_format_snapshot() {
    let output = check(
        &common::fixture("effect-app"),
        &["src/features/billing", "--color", "never"],
    );
    insta::assert_snapshot!(masked(&output.stdout));
}

/// 26.7: the findings of several rules at one place (an inline schedule that is also uncapped,
/// unjittered and over budget) are one diagnostic in the human format, the headline the first
/// rule, the others notes with their rule, message and help; JSON keeps one result per rule, and
/// the summary counts the sites the human format prints.
#[test]
fn one_site_is_one_diagnostic_with_the_other_rules_as_notes() {
    let fixture = common::fixture("effect-app");
    let (_, report) = check_json(&fixture, &["src/features/billing/policies.ts"]);
    let at_line_5: Vec<String> = findings(&report)
        .into_iter()
        .filter(|f| f.1 == 5)
        .map(|f| f.2)
        .collect();
    assert_eq!(
        at_line_5,
        [
            "inline-schedule",
            "policy-over-budget",
            "uncapped-schedule",
            "unjittered-schedule"
        ],
        "one result per rule in JSON"
    );
    let output = check(&fixture, &["src/features/billing/policies.ts", "--color", "never"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let headers: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("error[") || l.starts_with("warning["))
        .collect();
    assert_eq!(headers.len(), 1, "{stdout}");
    assert!(headers[0].starts_with("error[inline-schedule]: "), "{stdout}");
    assert_eq!(
        stdout.matches("┌─ src/features/billing/policies.ts:5:14").count(),
        1,
        "{stdout}"
    );
    for rule in ["policy-over-budget", "uncapped-schedule", "unjittered-schedule"] {
        assert_eq!(
            stdout.matches(&format!("= also error[{rule}]: ")).count(),
            1,
            "{stdout}"
        );
    }
    assert!(
        stdout.contains("help: pipe the schedule through `Schedule.jittered`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("fix (--fix --unsafe-fixes): pipe the schedule"),
        "{stdout}"
    );
    assert!(
        stdout.contains("4 findings at 1 site (4 errors, 0 warnings) in 1 file"),
        "{stdout}"
    );

    // The whole fixture: the summary's sites are the diagnostics printed, and JSON's.
    let (_, report) = check_json(&fixture, &["."]);
    let output = check(&fixture, &[".", "--color", "never"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let printed = stdout
        .lines()
        .filter(|l| l.starts_with("error[") || l.starts_with("warning["))
        .count();
    let total = report["diagnostics"].as_array().unwrap().len();
    assert!(printed < total, "{printed} diagnostics for {total} findings");
    assert_eq!(report["summary"]["sites"].as_u64(), Some(printed as u64));
    assert!(
        stdout.contains(&format!("{total} findings at {printed} sites (")),
        "{stdout}"
    );
}

#[test]
fn messages_follow_the_convention() {
    // Lowercase first letter (or a code span), no trailing period, a help line on every finding.
    let (_, report) = check_json(&common::fixture("effect-app"), &["."]);
    for d in report["diagnostics"].as_array().unwrap() {
        let message = d["message"].as_str().unwrap();
        let first = message.chars().next().unwrap();
        assert!(
            first.is_lowercase() || first == '`',
            "message starts lowercase: {message}"
        );
        assert!(!message.ends_with('.'), "no trailing period: {message}");
        let help = d["help"].as_str().expect("every finding has help");
        assert!(!help.ends_with('.'), "no trailing period: {help}");
    }
}

#[test]
fn gitignored_hidden_vendored_and_declaration_files_are_skipped() {
    let dir = project(&[
        (".gitignore", "build/\n"),
        ("build/a.ts", INLINE),
        (".cache/a.ts", INLINE),
        ("node_modules/lib/a.ts", INLINE),
        ("src/types.d.ts", INLINE),
        ("src/kept.mts", INLINE),
    ]);
    let (_, report) = check_json(dir.path(), &["."]);
    let paths: Vec<String> = findings(&report).into_iter().map(|f| f.0).collect();
    assert_eq!(paths, ["src/kept.mts"]);
}

#[test]
fn policies_lists_named_policies_with_their_summaries() {
    let output = common::bin()
        .current_dir(common::fixture("effect-app"))
        .args(["policies", "."])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let table = String::from_utf8(output.stdout).unwrap();
    let line = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in\n{table}"))
            .to_string()
    };
    let contention = line("contention");
    for cell in [
        "src/infra/retry.ts:12",
        "200 ms",
        "yes",
        "50 ms, 100 ms, 200 ms",
        "350 ms",
        "420 ms",
    ] {
        assert!(contention.contains(cell), "contention row lacks `{cell}`: {contention}");
    }
    let transient = line("transient");
    for cell in ["2 s", "200 ms, 400 ms, 800 ms", "1.4 s", "1.68 s"] {
        assert!(transient.contains(cell), "transient row lacks `{cell}`: {transient}");
    }
    insta::assert_snapshot!(table);

    let output = common::bin()
        .current_dir(common::fixture("effect-app"))
        .args(["policies", ".", "--format", "json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let contention = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "contention")
        .unwrap();
    assert_eq!(contention["retries"], 3);
    assert_eq!(contention["total_ms"], 350.0);
    assert_eq!(
        contention["sites"], 12,
        "retry sites naming `Retry.contention` in the fixture"
    );
}

#[test]
fn tsconfig_path_aliases_resolve_policies() {
    let dir = project(&[
        (
            "tsconfig.json",
            "{\n  // comments and trailing commas are fine\n  \"compilerOptions\": { \"baseUrl\": \".\", \"paths\": { \"@app/*\": [\"src/*\"], }, },\n}\n",
        ),
        ("src/policies.ts", "import { Schedule } from \"effect\"\nexport const slow = Schedule.spaced(\"1 second\")\n"),
        (
            "src/features/a.ts",
            "import { Effect } from \"effect\"\nimport { slow } from \"@app/policies.js\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: slow, while: (e) => e === 1 }))\n",
        ),
    ]);
    let (_, report) = check_json(dir.path(), &[".", "--select", "inline-schedule"]);
    // Reported once, where the policy is built; the use resolves through the
    // alias, so it is the related location.
    let diagnostics = report["diagnostics"].as_array().unwrap();
    let found: Vec<(&str, &str)> = diagnostics
        .iter()
        .map(|d| (d["path"].as_str().unwrap(), d["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        [(
            "src/policies.ts",
            "retry policy `slow` is built with `Schedule.spaced` here instead of in the retry module: copies of a policy drift from the team's budget"
        )]
    );
    let related: Vec<(&str, u64)> = diagnostics[0]["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["path"].as_str().unwrap(), r["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(related, [("src/features/a.ts", 3)]);
}

const INLINE_ONE: &str = "import { Effect, Schedule } from \"effect\"\nexport const a = Effect.succeed(1).pipe(Effect.retry({ schedule: Schedule.recurs(1), while: (e) => e === 1 }))\n";

#[test]
fn a_suppression_naming_no_rule_is_reported_and_suppresses_nothing() {
    let text = format!(
        "// retrylint-ignore -- we know\n{}",
        INLINE_ONE.replace("import { Effect, Schedule } from \"effect\"\n", "")
    );
    let dir = common::project(&[(
        "src/a.ts",
        &format!("import {{ Effect, Schedule }} from \"effect\"\n{text}"),
    )]);
    let (code, report) = common::check_json(dir.path(), &["."]);
    assert_eq!(code, 1);
    let found = common::findings(&report);
    assert!(
        found.contains(&("src/a.ts".into(), 3, "inline-schedule".into())),
        "{found:?}"
    );
    assert!(
        found.contains(&("src/a.ts".into(), 2, "unused-suppression".into())),
        "{found:?}"
    );
    let message = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "unused-suppression")
        .unwrap()["message"]
        .clone();
    assert!(message.as_str().unwrap().contains("names no rule"), "{message}");
}

/// `retrylint ARGS` in the effect-app fixture, with both output streams piped.
fn spawn_piped(args: &[&str]) -> std::process::Child {
    common::bin()
        .current_dir(common::fixture("effect-app"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    for args in [
        &["check", "."][..],
        &["check", ".", "--format", "json"],
        &["rules"],
        &["policies", "."],
    ] {
        let mut child = spawn_piped(args);
        // `| head -0`: the reader is gone before the first write.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{args:?}: {:?} {stderr}",
            output.status
        );
        assert!(
            !stderr.contains("Broken pipe") && !stderr.contains("crashed") && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn usage_mistakes_are_named_with_a_suggestion() {
    let dir = common::project(&[
        ("src/a.ts", INLINE_ONE),
        ("retrylint.toml", "[rules]\ninline-schedule = \"off\"\n"),
    ]);
    // --select of a rule the config turns off says so.
    let output = common::check(dir.path(), &[".", "--select", "inline-schedule"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("note: --select inline-schedule: the rule is turned off in"),
        "{stderr}"
    );
    // --unsafe-fixes needs --fix or --diff.
    let output = common::check(dir.path(), &[".", "--unsafe-fixes"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--unsafe-fixes only applies with --fix or --diff"));
    // Did you mean, on the command line, in `rule` and in the config.
    let output = common::check(dir.path(), &[".", "--select", "inline-schedul"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("did you mean `inline-schedule`?"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = common::bin().args(["rule", "stacked-retries"]).output().unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("did you mean `stacked-retry`?"));
    std::fs::write(
        dir.path().join("retrylint.toml"),
        "[rules]\nunjitered-schedule = \"off\"\n",
    )
    .unwrap();
    let output = common::check(dir.path(), &["."]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("did you mean `unjittered-schedule`?"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn help_uses_the_configured_names_and_the_library_of_the_site() {
    let (_, report) = common::check_json(&common::fixture("configured-app"), &["."]);
    let helps: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["help"].as_str())
        .collect();
    assert!(
        helps
            .iter()
            .any(|h| h.contains("(src/shared/policies.ts)") && h.contains("`Retry.networkRetry`")),
        "{helps:#?}"
    );
    assert!(
        !helps
            .iter()
            .any(|h| h.contains("Retry.isContention") || h.contains("Retry.transient`")),
        "the defaults' names are not the project's: {helps:#?}"
    );
    let (_, report) = common::check_json(&common::fixture("rust-service"), &["src/sync/mod.rs"]);
    let help = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "inline-schedule" && d["line"] == 20)
        .unwrap()["help"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        help.contains("Retry::spawn(retry::transient(), action)"),
        "tokio-retry code: {help}"
    );
    // A backon site is told backon code, not Effect's options object.
    let (_, report) = common::check_json(&common::fixture("rust-service"), &["src/orders/payments.rs"]);
    let help = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "transient-retry-on-append")
        .unwrap()["help"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        help.contains(".when(retry::is_contention)") && !help.contains("schedule:"),
        "{help}"
    );
}

const CHARGE_RETRY: &str = r#"import { Schedule } from "effect"
export const transient = Schedule.exponential("100 millis").pipe(Schedule.either(Schedule.spaced("1 second")), Schedule.intersect(Schedule.recurs(3)), Schedule.jittered)
export const contention = Schedule.exponential("50 millis").pipe(Schedule.either(Schedule.spaced("200 millis")), Schedule.intersect(Schedule.recurs(3)), Schedule.jittered)
export const isConnectionLost = (e: { _tag: string }) => e._tag === "ConnectionLost"
export const isContention = (e: { _tag: string }) => e._tag === "Contention"
"#;

/// A POST retried on connection loss: the same retry, of an HTTP call and of an INSERT.
const CHARGE: &str = r#"import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/unstable/http"
import { SqlClient } from "effect/unstable/sql"
import * as Retry from "../infra/retry.js"

export const charge = (amount: number) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    return yield* client.execute(HttpClientRequest.post("/charges").pipe(HttpClientRequest.bodyUnsafeJson({ amount })))
  }).pipe(Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }))

export const record = (amount: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql`INSERT INTO charges (amount) VALUES (${amount})`
  }).pipe(Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }))
"#;

#[test]
fn a_post_replayed_on_connection_loss_is_told_about_its_response_not_a_commit() {
    let dir = project(&[("src/infra/retry.ts", CHARGE_RETRY), ("src/features/Charge.ts", CHARGE)]);
    let (_, report) = check_json(dir.path(), &[".", "--select", "transient-retry-on-append"]);
    let diagnostics = report["diagnostics"].as_array().unwrap();
    let at = |line: u64| {
        diagnostics
            .iter()
            .find(|d| d["line"] == line)
            .unwrap_or_else(|| panic!("a finding on line {line}: {report:#}"))
    };
    let http = at(10);
    let message = http["message"].as_str().unwrap();
    assert!(message.contains("a `POST` request"), "{message}");
    assert!(message.contains("after a lost response"), "{message}");
    assert!(!message.contains("COMMIT"), "HTTP has no COMMIT: {message}");
    let help = http["help"].as_str().unwrap();
    assert!(help.contains("Idempotency-Key"), "{help}");
    assert!(help.contains("before the request was sent"), "{help}");
    assert!(!help.contains("Retry.contention"), "{help}");
    assert!(http["fix"].is_null(), "no contention fix for a request: {http:#}");
    // The database write keeps its COMMIT and its contention fix.
    let sql = at(16);
    assert!(
        sql["message"].as_str().unwrap().contains("lost COMMIT acknowledgement"),
        "{sql:#}"
    );
    assert!(sql["help"].as_str().unwrap().contains("Retry.contention"), "{sql:#}");
    assert_eq!(sql["fix"]["applicability"], "unsafe", "{sql:#}");
}

/// A nightly repeat forked in a layer, in a project with no `Jobs.make`.
const NIGHTLY_LAYER: &str = r#"import { Effect, Layer, Schedule } from "effect"

declare const closeExpired: () => Effect.Effect<void>

export const TrialsLive = Layer.effectDiscard(
  closeExpired().pipe(Effect.repeat(Schedule.cron("0 3 * * *")), Effect.forkScoped),
)
"#;

#[test]
fn cron_messages_speak_effects_terms_unless_the_project_defines_jobs_make() {
    let cron_finding = |files: &[(&str, &str)]| {
        let dir = project(files);
        let (_, report) = check_json(dir.path(), &[".", "--select", "since-last-run-cursor"]);
        let finding = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["path"] == "src/features/Trials.ts")
            .unwrap_or_else(|| panic!("{report:#}"))
            .clone();
        let text = |key: &str| finding[key].as_str().unwrap().to_string();
        (text("message"), text("help"))
    };
    let (message, help) = cron_finding(&[("src/features/Trials.ts", NIGHTLY_LAYER)]);
    assert!(message.contains("runs on every replica"), "{message}");
    for jargon in ["Worker profile", "Jobs.make", "slice"] {
        assert!(!message.contains(jargon), "{jargon}: {message}");
        assert!(!help.contains(jargon), "{jargon}: {help}");
    }
    assert!(help.contains("key the work by its slot"), "{help}");
    // A project with a jobs runtime of its own is told of it.
    let jobs = "export const Jobs = { make: (job: unknown) => job }\n";
    let (message, help) = cron_finding(&[("src/features/Trials.ts", NIGHTLY_LAYER), ("src/infra/jobs.ts", jobs)]);
    assert!(message.contains("Worker profile"), "{message}");
    assert!(help.contains("Jobs.make"), "{help}");
}

#[test]
fn policies_say_retries_and_attempts() {
    let output = common::bin()
        .current_dir(common::fixture("effect-app"))
        .args(["policies", "."])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&output.stdout);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(&header[..4], ["policy", "defined at", "retries", "attempts"], "{table}");
    let contention: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with("contention "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        &contention[..4],
        ["contention", "src/infra/retry.ts:12", "3", "4"],
        "{table}"
    );
}

#[test]
fn closed_stdout_and_stderr_end_quietly() {
    // `check --diff 2>&1 | head -0`: both streams are gone before the first write.
    for args in [
        &["check", "."][..],
        &["check", ".", "--diff"],
        &["check", ".", "--select", "stacked-retries"],
    ] {
        let mut child = spawn_piped(args);
        drop(child.stdout.take());
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        let expected: &[i32] = if args.len() == 4 { &[2] } else { &[0, 1] };
        assert!(
            status.code().is_some_and(|c| expected.contains(&c)),
            "{args:?}: {status:?}"
        );
    }
}

/// A Rust function outside the retry module that sites name as their policy is one policy:
/// each defect once, at the function, with every site (through a `let` too) as a related
/// location — not once per site.
#[test]
fn a_rust_policy_function_is_reported_once_with_its_uses() {
    let (_, report) = common::check_json(&common::fixture("rust-service"), &["src/postings.rs"]);
    let diagnostics = report["diagnostics"].as_array().unwrap();
    let found: Vec<(String, u64, Vec<u64>)> = diagnostics
        .iter()
        .map(|d| {
            let uses = d["related"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["message"] == "used here")
                .map(|r| r["line"].as_u64().unwrap())
                .collect();
            (
                d["rule"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                uses,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("inline-schedule".to_string(), 13, vec![21, 22, 24]),
            ("unjittered-schedule".to_string(), 13, vec![21, 22, 24]),
        ],
        "{diagnostics:#?}"
    );
}
