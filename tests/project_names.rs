//! Help lines and fixes in the project's own names (issue 26.1): a service whose retry module
//! exports `network`, `dbConflict`, `isNetworkError` and `isDeadlock` is told to write
//! `Retry.isDeadlock`, never `Retry.isContention`, which it does not have; `retrylint init`
//! writes those names into the config, and `check` reads them back; an export the module
//! lacks is said in plain words, with the code to add.

mod common;

use common::{bin, check, check_json, project};

const RETRY_MODULE: &str = r#"import { Schedule } from "effect"
import { DbError, HttpError } from "./errors.js"

// Network hiccups: a few jittered, capped exponential attempts.
export const network = Schedule.exponential("100 millis").pipe(
  Schedule.union(Schedule.spaced("1 second")),
  Schedule.intersect(Schedule.recurs(3)),
  Schedule.jittered,
)

// Database conflicts: quick retries.
export const dbConflict = Schedule.exponential("20 millis").pipe(
  Schedule.union(Schedule.spaced("200 millis")),
  Schedule.intersect(Schedule.recurs(5)),
  Schedule.jittered,
)

export const isNetworkError = (error: unknown): boolean =>
  error instanceof HttpError && (error.reason === "ECONNRESET" || error.reason === "ETIMEDOUT")

export const isDeadlock = (error: unknown): boolean =>
  error instanceof DbError && (error.code === "40001" || error.code === "40P01")
"#;

const ERRORS: &str = r#"import { Data } from "effect"

export class DbError extends Data.TaggedError("DbError")<{ readonly code: string }> {}
export class HttpError extends Data.TaggedError("HttpError")<{ readonly reason: string }> {}
"#;

const REPOSITORY: &str = r#"import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export class OrdersRepository extends Effect.Service<OrdersRepository>()("OrdersRepository", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = (customerId: string, total: number) =>
      sql`INSERT INTO orders (customer_id, total) VALUES (${customerId}, ${total})`

    const markCancelled = (id: string) => sql`UPDATE orders SET status = 'cancelled' WHERE id = ${id}`

    return { insert, markCancelled } as const
  }),
}) {}
"#;

/// A connection-loss retry of an INSERT, a retry with no predicate at all, and the contention
/// policy without its predicate.
const PLACE_ORDER: &str = r#"import { Effect } from "effect"
import * as Retry from "../infra/retry.js"
import { OrdersRepository } from "./OrdersRepository.js"

export const placeOrder = Effect.fn("PlaceOrder")(
  function* (customerId: string, total: number) {
    const orders = yield* OrdersRepository
    yield* orders.insert(customerId, total)
  },
  Effect.retry({ schedule: Retry.network, while: Retry.isNetworkError }),
)

export const cancelOrder = Effect.fn("CancelOrder")(
  function* (orderId: string) {
    const orders = yield* OrdersRepository
    yield* orders.markCancelled(orderId)
  },
  Effect.retry(Retry.network),
)

export const refundOrder = Effect.fn("RefundOrder")(
  function* (orderId: string) {
    const orders = yield* OrdersRepository
    yield* orders.markCancelled(orderId)
  },
  Effect.retry({ schedule: Retry.dbConflict }),
)
"#;

fn shop(retry_module: &str, place_order: &str) -> tempfile::TempDir {
    project(&[
        (
            "package.json",
            r#"{ "name": "shop", "private": true, "dependencies": { "effect": "^3.10.0" } }"#,
        ),
        ("src/infra/retry.ts", retry_module),
        ("src/infra/errors.ts", ERRORS),
        ("src/orders/OrdersRepository.ts", REPOSITORY),
        ("src/orders/PlaceOrder.ts", place_order),
    ])
}

fn init(dir: &std::path::Path) -> String {
    let output = bin().current_dir(dir).arg("init").output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(dir.join("retrylint.toml")).unwrap()
}

/// Every help line and fix of a report: `(rule, help, fix replacements)`.
fn remedies_of(report: &serde_json::Value) -> Vec<(String, String, Vec<String>)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let edits = d["fix"]["edits"].as_array().cloned().unwrap_or_default();
            (
                d["rule"].as_str().unwrap().to_string(),
                d["help"].as_str().unwrap_or_default().to_string(),
                edits
                    .iter()
                    .map(|e| e["replacement"].as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

/// The `Retry.name` references of a text.
fn references(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("Retry.") {
        let name: String = text[at + 6..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        out.push(name);
    }
    out
}

/// Every `Retry.x` a remedy names is an export of the retry module: following it compiles.
fn assert_names_exist(remedies: &[(String, String, Vec<String>)], module: &str) {
    for (rule, help, fixes) in remedies {
        for text in std::iter::once(help).chain(fixes) {
            for name in references(text) {
                assert!(
                    module.contains(&format!("export const {name} ")),
                    "{rule} names `Retry.{name}`, which the retry module does not export: {text}"
                );
            }
        }
    }
}

fn help_of<'r>(remedies: &'r [(String, String, Vec<String>)], rule: &str) -> Vec<&'r str> {
    remedies
        .iter()
        .filter(|(r, _, _)| r == rule)
        .map(|(_, help, _)| help.as_str())
        .collect()
}

#[test]
fn help_names_the_retry_modules_own_exports_without_a_config() {
    let dir = shop(RETRY_MODULE, PLACE_ORDER);
    let (_, report) = check_json(dir.path(), &["."]);
    let remedies = remedies_of(&report);
    assert_names_exist(&remedies, RETRY_MODULE);
    let unguarded = help_of(&remedies, "retry-without-predicate");
    assert_eq!(unguarded.len(), 2, "{remedies:?}");
    for help in unguarded {
        assert!(
            help.contains(
                "`while: Retry.isDeadlock` (any atomic unit) or `while: Retry.isNetworkError` (idempotent units only)"
            ),
            "{help}"
        );
    }
    let append = help_of(&remedies, "transient-retry-on-append");
    assert_eq!(append.len(), 1, "{remedies:?}");
    assert!(append[0].contains("(`while: Retry.isDeadlock`)"), "{}", append[0]);
}

#[test]
fn init_writes_the_inferred_names_and_check_speaks_them() {
    let dir = shop(RETRY_MODULE, PLACE_ORDER);
    let written = init(dir.path());
    for line in [
        "\ncontention-policies = [\"dbConflict\"]\n",
        "\ntransient-policies = [\"network\"]\n",
        "\ncontention-predicates = [\"isDeadlock\"]\n",
        "\ntransient-predicates = [\"isNetworkError\"]\n",
        "#   isDeadlock: src/infra/retry.ts:21 (its body tests `40001`)\n",
        "#   isNetworkError: src/infra/retry.ts:18 (its body tests `ECONNRESET`)\n",
        // Defaults the module does not confirm are a comment, not a setting.
        "\n# not exported, of the defaults: \"isContention\"\n",
        "\n# durable-registrations = ",
    ] {
        assert!(written.contains(line), "no {line:?} in\n{written}");
    }

    let (_, report) = check_json(dir.path(), &["."]);
    let remedies = remedies_of(&report);
    assert_names_exist(&remedies, RETRY_MODULE);
    // The connection-loss policy is now known by its name: the contention pair is the remedy,
    // and its fix is written with the module's names.
    let append: Vec<_> = remedies
        .iter()
        .filter(|(rule, _, _)| rule == "transient-retry-on-append")
        .collect();
    assert_eq!(append.len(), 1, "{remedies:?}");
    assert!(
        append[0]
            .1
            .contains("`{ schedule: Retry.dbConflict, while: Retry.isDeadlock }`"),
        "{}",
        append[0].1
    );
    assert_eq!(append[0].2, ["{ schedule: Retry.dbConflict, while: Retry.isDeadlock }"]);
    let predicate_fixes: Vec<_> = remedies
        .iter()
        .filter(|(rule, _, fix)| rule == "retry-without-predicate" && !fix.is_empty())
        .map(|(_, _, fix)| fix.clone())
        .collect();
    assert_eq!(predicate_fixes, [vec![", while: Retry.isDeadlock".to_string()]]);

    // The fixes applied compile against the module, and clear their findings.
    let output = check(dir.path(), &[".", "--fix", "--unsafe-fixes"]);
    // `cancelOrder` keeps its finding: no contention remedy for a unit that needs connection loss.
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let fixed = std::fs::read_to_string(dir.path().join("src/orders/PlaceOrder.ts")).unwrap();
    assert!(
        fixed.contains(
            "Effect.retry({ schedule: Retry.dbConflict, while: Retry.isDeadlock }),\n)\n\nexport const cancelOrder"
        ),
        "{fixed}"
    );
    assert!(
        fixed.ends_with("Effect.retry({ schedule: Retry.dbConflict, while: Retry.isDeadlock }),\n)\n"),
        "{fixed}"
    );
    for name in references(&fixed) {
        assert!(
            RETRY_MODULE.contains(&format!("export const {name} ")),
            "{name}: {fixed}"
        );
    }
    let (_, after) = check_json(dir.path(), &["."]);
    let rules: Vec<String> = remedies_rules(&after);
    assert_eq!(rules, ["retry-without-predicate"], "{after}");
}

fn remedies_rules(report: &serde_json::Value) -> Vec<String> {
    remedies_of(report).into_iter().map(|(rule, _, _)| rule).collect()
}

#[test]
fn a_missing_export_is_said_with_the_code_to_add_and_no_fix_names_it() {
    // Only the connection-loss pair: no contention policy or predicate to point to.
    let module = RETRY_MODULE
        .split("// Database conflicts")
        .next()
        .unwrap()
        .to_string()
        + "export const isNetworkError = (error: unknown): boolean =>\n  error instanceof HttpError && error.reason === \"ECONNRESET\"\n";
    let place_order = PLACE_ORDER.replace("Retry.dbConflict", "Retry.network");
    let dir = shop(&module, &place_order);
    let (_, report) = check_json(dir.path(), &["."]);
    let remedies = remedies_of(&report);
    let unguarded = help_of(&remedies, "retry-without-predicate");
    assert!(!unguarded.is_empty(), "{remedies:?}");
    for help in unguarded {
        assert!(
            help.contains("`while: Retry.isContention` (any atomic unit) or `while: Retry.isNetworkError` (idempotent units only); the retry module (src/infra/retry.ts) exports no contention predicate (the test for deadlocks and serialization failures): add `export const isContention = (error: unknown): boolean => "),
            "{help}"
        );
    }

    let written = init(dir.path());
    assert!(written.contains("\ntransient-policies = [\"network\"]\n"), "{written}");
    assert!(
        written.contains("\n# contention-predicates = [\"isContention\"]\n"),
        "{written}"
    );
    assert!(
        written.contains("#   none in src/infra/retry.ts; add one, e.g.\n#   export const contention = Schedule.exponential(\"50 millis\").pipe("),
        "{written}"
    );
    // With the connection-loss policy named, the append's remedy is the contention pair the
    // module lacks: said, with the code, and no fix naming what does not exist.
    let (_, report) = check_json(dir.path(), &["."]);
    let remedies = remedies_of(&report);
    let append: Vec<_> = remedies
        .iter()
        .filter(|(rule, _, _)| rule == "transient-retry-on-append")
        .collect();
    assert_eq!(append.len(), 1, "{remedies:?}");
    assert!(append[0].1.contains("exports no contention policy (the short policy for deadlocks and serialization failures): add `export const contention = Schedule.exponential(\"50 millis\")"), "{}", append[0].1);
    assert!(
        append[0].1.contains("exports no contention predicate"),
        "{}",
        append[0].1
    );
    assert!(append[0].2.is_empty(), "{:?}", append[0].2);
}

#[test]
fn help_follows_how_the_file_imports_the_module() {
    // Named imports: bare names; a namespace of another name: that name.
    let named = PLACE_ORDER
        .replace(
            "import * as Retry from \"../infra/retry.js\"",
            "import { network, dbConflict, isNetworkError } from \"../infra/retry.js\"",
        )
        .replace("Retry.", "");
    let dir = shop(RETRY_MODULE, &named);
    let (_, report) = check_json(dir.path(), &["."]);
    let remedies = remedies_of(&report);
    let unguarded = help_of(&remedies, "retry-without-predicate");
    assert_eq!(unguarded.len(), 2, "{remedies:?}");
    for help in unguarded {
        assert!(
            help.contains("`while: isDeadlock` (any atomic unit) or `while: isNetworkError` (idempotent units only)"),
            "{help}"
        );
    }

    let aliased = PLACE_ORDER.replace("Retry", "Policies");
    let dir = shop(RETRY_MODULE, &aliased);
    init(dir.path());
    let (_, report) = check_json(dir.path(), &["."]);
    let remedies = remedies_of(&report);
    let append: Vec<_> = remedies
        .iter()
        .filter(|(rule, _, _)| rule == "transient-retry-on-append")
        .collect();
    assert_eq!(append.len(), 1, "{remedies:?}");
    assert_eq!(
        append[0].2,
        ["{ schedule: Policies.dbConflict, while: Policies.isDeadlock }"]
    );
}

#[test]
fn no_fix_names_a_retry_module_the_file_does_not_import() {
    // `Net` is a module of its own, not the retry module: a fix writing `Retry.dbConflict`
    // there would name a module the file never imports.
    let legacy = r#"import { Effect } from "effect"
import * as Net from "../lib/net.js"
import { OrdersRepository } from "./OrdersRepository.js"

export const importOrder = Effect.fn("ImportOrder")(
  function* (customerId: string, total: number) {
    const orders = yield* OrdersRepository
    yield* orders.insert(customerId, total)
  },
  Effect.retry({ schedule: Net.network, while: Net.isOffline }),
)
"#;
    let net = "import { Schedule } from \"effect\"\nexport const network = Schedule.recurs(2)\nexport const isOffline = (e: unknown) => e === \"offline\"\n";
    let dir = shop(RETRY_MODULE, PLACE_ORDER);
    std::fs::create_dir_all(dir.path().join("src/lib")).unwrap();
    std::fs::write(dir.path().join("src/lib/net.ts"), net).unwrap();
    std::fs::write(dir.path().join("src/orders/Legacy.ts"), legacy).unwrap();
    init(dir.path());
    let (_, report) = check_json(dir.path(), &["src/orders/Legacy.ts"]);
    let append: Vec<_> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "transient-retry-on-append")
        .collect();
    assert_eq!(append.len(), 1, "{report}");
    // The help still names the retry module's pair; no edit writes it into this file.
    assert!(
        append[0]["help"]
            .as_str()
            .unwrap()
            .contains("`{ schedule: Retry.dbConflict, while: Retry.isDeadlock }`"),
        "{}",
        append[0]
    );
    assert!(append[0]["fix"].is_null(), "{}", append[0]);
}
