//! Issue 24: Effect code on first contact. What a finding says when the model knows part of a
//! policy, when a retry has no schedule, and how its numbers read. The binary runs on small
//! projects; which rules fire where is the fixtures' job (`fixtures/effect-v3`, `effect-app`).

mod common;

fn messages(files: &[(&str, &str)]) -> Vec<(String, u64, String)> {
    let dir = common::project(files);
    let (_, report) = common::check_json(dir.path(), &["."]);
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const PACKAGE: &str = r#"{ "name": "app", "private": true, "dependencies": { "effect": "3.19.0" } }"#;
const CONFIG: &str = "# the project root\n";

#[test]
fn a_huge_worst_case_reads_as_more_than_a_year() {
    let found = messages(&[
        ("package.json", PACKAGE),
        ("retrylint.toml", CONFIG),
        (
            "src/Sync.ts",
            r#"import { Effect, Schedule } from "effect"

declare const pull: Effect.Effect<void, Error>
declare const isTransient: (e: Error) => boolean

export const sync = pull.pipe(
  Effect.retry({
    schedule: Schedule.exponential("1 second").pipe(Schedule.intersect(Schedule.recurs(120)), Schedule.jittered),
    while: isTransient,
  }),
)
"#,
        ),
    ]);
    let budget = found
        .iter()
        .find(|(rule, _, _)| rule == "policy-over-budget")
        .unwrap_or_else(|| panic!("no policy-over-budget in {found:?}"));
    assert!(budget.2.contains("can wait more than a year in total"), "{}", budget.2);
    for (_, _, message) in &found {
        assert!(
            !message.contains("e+") && !message.contains("000000"),
            "a number no one says: {message}"
        );
    }
}

#[test]
fn an_unknown_base_still_says_what_is_known() {
    let found = messages(&[
        ("package.json", PACKAGE),
        ("retrylint.toml", CONFIG),
        (
            "src/Mail.ts",
            r#"import { Duration, Effect, Schedule } from "effect"

declare const send: Effect.Effect<void, Error>

export class Mailer {
  constructor(private readonly backoff: Duration.DurationInput) {}

  send = () => send.pipe(Effect.retry(Schedule.exponential(this.backoff).pipe(Schedule.intersect(Schedule.recurs(3)))))
}
"#,
        ),
    ]);
    let rules: Vec<&str> = found.iter().map(|(rule, _, _)| rule.as_str()).collect();
    for rule in ["uncapped-schedule", "unjittered-schedule", "retry-without-predicate"] {
        assert!(rules.contains(&rule), "{rule} missing from {found:?}");
    }
    // The delays are unknown, so none is printed, and no budget is judged.
    let uncapped = found.iter().find(|(rule, _, _)| rule == "uncapped-schedule").unwrap();
    assert!(
        uncapped.2.ends_with("has no per-gap cap: each gap grows"),
        "{}",
        uncapped.2
    );
    assert!(!rules.contains(&"policy-over-budget"), "{found:?}");
}

#[test]
fn immediate_retries_are_a_burst_and_a_wait_inside_is_a_poll() {
    let found = messages(&[
        ("package.json", PACKAGE),
        ("retrylint.toml", CONFIG),
        (
            "src/Jobs.ts",
            r#"import { Effect } from "effect"

declare const charge: Effect.Effect<void, { readonly _tag: "Declined" | "Unavailable" }>
declare const status: Effect.Effect<"done", { readonly _tag: "Pending" }>

export const pay = charge.pipe(Effect.retry({ times: 10, while: (e) => e._tag === "Unavailable" }))

export const awaitDone = Effect.sleep("1 second").pipe(
  Effect.andThen(status),
  Effect.retry({ while: (e) => e._tag === "Pending" }),
)
"#,
        ),
    ]);
    let burst = found
        .iter()
        .find(|(rule, line, _)| rule == "unjittered-schedule" && *line == 6)
        .unwrap_or_else(|| panic!("no burst finding in {found:?}"));
    assert!(
        burst
            .2
            .contains("retries 10 times at once, with no delay: a burst of 11 attempts"),
        "{}",
        burst.2
    );
    let poll = found
        .iter()
        .find(|(rule, line, _)| rule == "poll-without-backoff" && *line == 10)
        .unwrap_or_else(|| panic!("no poll finding in {found:?}"));
    assert!(
        poll.2
            .contains("this is a poll: the retried effect waits a fixed 1 s itself"),
        "{}",
        poll.2
    );
    // Not "retried forever with no delay".
    assert!(
        !found
            .iter()
            .any(|(_, _, m)| m.contains("with no delay") && m.contains("forever")),
        "{found:?}"
    );
}
