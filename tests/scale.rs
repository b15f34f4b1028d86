//! Work grows with the input's size, not faster: deep nesting and large files.
//!
//! Extraction counts its steps in debug builds (`retrylint::extract::work`: every node looked
//! at, every step a parent look-up takes through the tree, every name looked up), so growth is
//! checked deterministically: the same shape at N and 4N must take about four times the
//! steps, where a walk up the tree per level or a scan of the file per look-up takes sixteen.
//! The real binary is also run on inputs that took minutes before, killed if it hangs.
//!
//! The shapes are those of `bench/gen_scale.py`, which measures them on the release build.

use std::path::Path;
use std::time::{Duration, Instant};

use retrylint::extract::{extract_file, work};
use retrylint::source::Language;

mod common;

const HEADER: &str = "import { Effect, Schedule } from \"effect\"\nimport { OrdersRepository } from \"./orders\"\n\n";
const RETRY: &str = "Effect.retry(task, { schedule: Schedule.exponential(\"1 second\"), times: 3 })\n";

/// `n` nested blocks around a retry.
fn nested_blocks(n: usize) -> String {
    format!(
        "{HEADER}export const run = (task: Effect.Effect<void>) => {{\n{}{RETRY}{}}}\n",
        "{\n".repeat(n),
        "}\n".repeat(n)
    )
}

/// `n` nested arrows around a retry.
fn nested_arrows(n: usize) -> String {
    format!("{HEADER}export const run = {}{RETRY}", "() =>\n".repeat(n))
}

/// `n` nested function bodies around a retry.
fn nested_functions(n: usize) -> String {
    format!(
        "{HEADER}export const run = {}{RETRY}{}",
        "function () {\nreturn ".repeat(n),
        "}\n".repeat(n)
    )
}

/// `n` nested retries, each retrying the ones inside it: `Effect.retry(Effect.retry(…), …)`.
fn nested_retry_calls(n: usize) -> String {
    format!(
        "{HEADER}export const run = {}task{}\n",
        "Effect.retry(\n".repeat(n),
        ", { schedule: Schedule.spaced(\"1 second\"), times: 3 })".repeat(n)
    )
}

/// A retry at every level of `n` nested arrows with blocks, each level binding a service and
/// a local the retry looks up.
fn nested_retries(n: usize) -> String {
    let mut out = String::from(HEADER);
    out.push_str("export const run = Effect.gen(function* () {\n");
    for i in 0..n {
        out.push_str(&format!(
            "const orders{i} = yield* OrdersRepository\nconst policy{i} = {{ times: {i} }}\n\
             yield* Effect.retry(orders{i}.place({i}), {{ schedule: Schedule.spaced(\"1 second\"), while: (e) => e.status === {i}, ...policy{i} }})\n\
             yield* Effect.gen(function* () {{\n"
        ));
    }
    out.push_str(&"})\n".repeat(n));
    out.push_str("})\n");
    out
}

/// `n` top-level retries of a name the file never binds, with a predicate it never binds.
fn unbound_retries(n: usize) -> String {
    let mut out = String::from(HEADER);
    for i in 0..n {
        out.push_str(&format!(
            "export const retried{i} = Effect.retry(x, {{ schedule: Schedule.exponential(\"{} millis\"), while: isRetryable }})\n",
            100 + i % 900
        ));
    }
    out
}

/// `n` named policies with the units they retry: services bound around them, SQL, requests,
/// predicates bound at the top level.
fn policies(n: usize) -> String {
    let mut out = String::from(HEADER);
    out.push_str("import { HttpClient } from \"@effect/platform\"\n\n");
    for i in 0..n {
        let (ms, r, m) = (100 + i % 900, 1 + i % 7, i % 13);
        out.push_str(&format!(
            r#"export const policy{i} = Schedule.exponential("{ms} millis").pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs({r})),
)

const isRetryable{i} = (e: {{ _tag: string }}) => e._tag === "Timeout{i}"

export const place{i} = Effect.fn("place{i}")(function* (id: string) {{
  const orders = yield* OrdersRepository
  const key = crypto.randomUUID()
  yield* orders.insert({{ id, key, total: {i} }})
  yield* sql`INSERT INTO orders_{m} (id) VALUES (${{id}}) ON CONFLICT DO NOTHING`
  yield* client.post("/orders/{i}", {{ body: {{ id, key }} }})
}}, Effect.retry({{ schedule: policy{i}, while: isRetryable{i} }}))

export const sync{i} = (id: string) =>
  OrdersRepository.pipe(
    Effect.flatMap((orders) => orders.update(id, {{ seen: true }})),
    Effect.retry({{ schedule: Schedule.spaced("{ms} millis"), times: {r} }}),
  )

"#
        ));
    }
    out
}

/// Services implemented in layers, each with methods that retry and a Ref cursor.
fn services(n: usize) -> String {
    let mut out = String::from("import { Effect, Layer, Ref, Schedule, Clock } from \"effect\"\n\n");
    for i in 0..n {
        out.push_str(&format!(
            r#"export const Live{i} = Layer.effect(Orders{i}, Effect.gen(function* () {{
  const orders = yield* OrdersRepository
  const lastRun = yield* Ref.make(0)
  const since = yield* Ref.get(lastRun)
  yield* orders.closeSince(since)
  return {{
    place: (id: string) => orders.insert(id).pipe(Effect.retry({{ schedule: Schedule.spaced("1 second"), times: 3 }})),
    tick: Effect.gen(function* () {{ yield* Ref.set(lastRun, yield* Clock.currentTimeMillis) }}),
  }}
}}))

"#
        ));
    }
    out
}

/// `n` backon and tokio-retry sites.
fn rust_retries(n: usize) -> String {
    let mut out = String::from(
        "use backon::{ExponentialBuilder, Retryable};\nuse tokio_retry::{Retry, strategy::{ExponentialBackoff, jitter}};\nuse std::time::Duration;\n\n",
    );
    for i in 0..n {
        let (ms, r, m) = (100 + i % 900, 1 + i % 7, i % 13);
        out.push_str(&format!(
            r#"pub async fn fetch_{i}(client: &Client, id: u64) -> Result<Order, Error> {{
    let policy = ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis({ms}))
        .with_max_times({r});
    (|| async {{ client.get(format!("/orders/{{id}}")).send().await?.json().await }})
        .retry(policy)
        .when(|e: &Error| e.is_timeout())
        .await
}}

pub async fn insert_{i}(pool: &PgPool, id: u64) -> Result<(), Error> {{
    let strategy = ExponentialBackoff::from_millis({ms}).map(jitter).take({r});
    Retry::spawn(strategy, || async {{
        sqlx::query("INSERT INTO orders_{m} (id) VALUES ($1)").bind(id as i64).execute(pool).await
    }})
    .await?;
    Ok(())
}}

"#
        ));
    }
    out
}

/// `n` `let` policies and their retries in one function body.
fn rust_block(n: usize) -> String {
    let mut out = String::from(
        "use backon::{ExponentialBuilder, Retryable};\nuse std::time::Duration;\n\nimpl Client {\n    pub async fn run(&self) -> Result<(), Error> {\n",
    );
    for i in 0..n {
        let (ms, r) = (100 + i % 900, 1 + i % 7);
        out.push_str(&format!(
            "        let policy{i} = ExponentialBuilder::default().with_min_delay(Duration::from_millis({ms})).with_max_times({r});\n        (|| async {{ self.fetch({i}).await }}).retry(policy{i}).when(|e: &Error| e.is_timeout()).await?;\n"
        ));
    }
    out.push_str("        Ok(())\n    }\n}\n");
    out
}

/// Extraction's steps on `text`, and what it found (a shape that finds nothing tests nothing).
fn steps(language: Language, text: &str) -> (u64, usize) {
    let (facts, steps) = work::counted(|| extract_file(language, text.as_bytes()));
    (steps, facts.retry_sites.len())
}

/// The steps at `n` and at `4n` grow about fourfold (a sixteenfold growth is quadratic).
fn assert_linear(language: Language, shape: fn(usize) -> String, n: usize) {
    let (small, sites) = steps(language, &shape(n));
    let (large, _) = steps(language, &shape(4 * n));
    assert!(sites > 0, "the shape retries nothing");
    assert!(small > 0, "no steps counted: run the tests in a debug build");
    let growth = large as f64 / small as f64;
    eprintln!("{n} → {}: {small} → {large} steps ({growth:.2}×)", 4 * n);
    assert!(
        growth < 5.0,
        "{n} → {}: {small} → {large} steps, {growth:.1}× for 4× the input",
        4 * n
    );
}

#[test]
fn nested_blocks_take_linear_work() {
    assert_linear(Language::TypeScript, nested_blocks, 2_000);
}

#[test]
fn nested_arrows_take_linear_work() {
    assert_linear(Language::TypeScript, nested_arrows, 1_000);
}

#[test]
fn nested_functions_take_linear_work() {
    assert_linear(Language::TypeScript, nested_functions, 500);
}

#[test]
fn nested_retry_calls_take_linear_work() {
    assert_linear(Language::TypeScript, nested_retry_calls, 300);
}

#[test]
fn a_retry_at_every_level_of_a_nest_takes_linear_work() {
    assert_linear(Language::TypeScript, nested_retries, 200);
}

#[test]
fn retries_of_unbound_names_take_linear_work() {
    assert_linear(Language::TypeScript, unbound_retries, 1_000);
}

#[test]
fn a_large_file_of_policies_takes_linear_work() {
    assert_linear(Language::TypeScript, policies, 200);
}

#[test]
fn a_large_file_of_services_takes_linear_work() {
    assert_linear(Language::TypeScript, services, 200);
}

#[test]
fn a_large_rust_file_of_retries_takes_linear_work() {
    assert_linear(Language::Rust, rust_retries, 200);
}

#[test]
fn a_rust_function_of_thousands_of_retries_takes_linear_work() {
    assert_linear(Language::Rust, rust_block, 500);
}

/// Runs `retrylint check . --format json` in `dir`, killed after `limit`: its exit code and
/// report, or a panic naming how long it ran.
fn check_within(dir: &Path, limit: Duration) -> (i32, serde_json::Value) {
    let out = dir.join(".out.json");
    let mut child = common::bin()
        .current_dir(dir)
        .args(["check", "src", "--format", "json"])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the binary runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no answer within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let report = serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("a JSON report");
    (status.code().expect("exited"), report)
}

/// A project of one large source file, `max-file-size` raised to take it.
fn large_project(path: &str, text: &str) -> tempfile::TempDir {
    let config = format!("max-file-size = {}\n", text.len() + 1);
    common::project(&[("retrylint.toml", &config), (path, text)])
}

#[test]
fn sixteen_thousand_nested_blocks_get_an_answer() {
    // 64 KB; a walk up the tree per level took minutes in a debug build.
    let dir = large_project("src/nested.ts", &nested_blocks(16_000));
    let (code, report) = check_within(dir.path(), Duration::from_secs(120));
    assert_eq!(code, 1, "{report:#}");
    assert!(
        common::findings(&report)
            .iter()
            .any(|(_, _, rule)| rule == "retry-without-predicate"),
        "{report:#}"
    );
}

#[test]
fn eight_thousand_nested_functions_get_an_answer() {
    // 48 KB; a walk up the tree per level took minutes in a debug build.
    let dir = large_project("src/fns.ts", &nested_functions(8_000));
    let (code, report) = check_within(dir.path(), Duration::from_secs(120));
    assert_eq!(code, 1, "{report:#}");
}

#[test]
fn a_rust_function_of_five_thousand_retries_gets_an_answer() {
    // 1 MB; a scan of the function's statements per local looked up took minutes.
    let text = rust_block(5_000);
    assert!(text.len() > 1_000_000);
    let dir = large_project("src/block.rs", &text);
    let (code, report) = check_within(dir.path(), Duration::from_secs(120));
    assert_eq!(code, 1, "{report:#}");
    assert!(
        common::findings(&report).len() >= 5_000,
        "{}",
        common::findings(&report).len()
    );
}

#[test]
fn a_megabyte_of_retries_of_unbound_names_gets_an_answer() {
    // 1 MB; a scan of the module per look-up of a name it never binds took minutes.
    let text = unbound_retries(9_000);
    assert!(text.len() > 1_000_000);
    let dir = large_project("src/unbound.ts", &text);
    let (code, report) = check_within(dir.path(), Duration::from_secs(120));
    assert_eq!(code, 1, "{report:#}");
    assert!(
        common::findings(&report).len() >= 9_000,
        "{}",
        common::findings(&report).len()
    );
}

#[test]
fn three_thousand_nested_retries_get_an_answer() {
    // 200 KB; each level walked the levels inside it (what the retry runs, and whether it
    // loops forever): 1,500 levels took 12 s of CPU in a release build, 3,000 levels 30 s.
    let text = nested_retry_calls(3_000);
    let dir = large_project("src/nested.ts", &text);
    let (code, report) = check_within(dir.path(), Duration::from_secs(120));
    assert_eq!(code, 1, "{report:#}");
    assert!(
        common::findings(&report).len() >= 3_000,
        "{}",
        common::findings(&report).len()
    );
}

#[test]
fn deep_mismatched_brackets_are_a_note_not_minutes_of_parse() {
    // A fuzzer's 40 KB input (seed 1796178883952985579): 7,000 levels of brackets that do not
    // match. tree-sitter's error recovery took 18 s and 3.9 GB on it in a release build.
    let text = include_str!("data/deep-broken-brackets.ts");
    let dir = common::project(&[("src/f23.ts", text)]);
    let (code, report) = check_within(dir.path(), Duration::from_secs(20));
    assert_eq!(code, 0, "{report:#}");
    let notes = report["notes"].as_array().expect("notes");
    assert!(
        notes.iter().any(|n| n["path"] == "src/f23.ts"
            && n["message"]
                .as_str()
                .is_some_and(|m| m.contains("nest more than 256 deep and do not match"))),
        "{notes:#?}"
    );
}

#[test]
fn thousands_of_tags_in_a_row_are_a_note_not_a_quadratic_parse() {
    // A fuzzer's 20 KB `.vue` input (seed 1796183598401595682): 3,990 `<div>` in a row in a
    // TypeScript script. tree-sitter's error recovery is quadratic in the run: 2 s here, 29 s at
    // four times the length, in a release build.
    let text = include_str!("data/deep-tag-run.vue");
    let dir = common::project(&[("src/f13.vue", text)]);
    let (code, report) = check_within(dir.path(), Duration::from_secs(20));
    assert_eq!(code, 0, "{report:#}");
    let notes = report["notes"].as_array().expect("notes");
    assert!(
        notes
            .iter()
            .any(|n| n["path"] == "src/f13.vue" && n["message"].as_str().is_some_and(|m| m.contains("tags in a row"))),
        "{notes:#?}"
    );
}

/// Broken prefix chains on which tree-sitter's error recovery is super-linear: each unit is
/// an operator whose operand is missing (`&,`), or a closer of another kind (`[)`), so every
/// error is recovered inside all the ones before it. `examples/deep_prefix.rs` measures them:
/// in a release build, `&,` took 9.6 s at 1 KB, `!}` 10 s at 1 KB, `void ,` over 10 s at 16 KB,
/// `json [,` 4 s at 256 KB, `` `x( +: `` 28 s at 4 KB. The sizes here take seconds each before
/// the guard.
const BROKEN_CHAINS: &[(&str, &str, &str, usize)] = &[
    ("src/and_comma.rs", "fn f() { let x = ", "&,", 1_000),
    ("src/deref_paren.rs", "fn f() { let x = ", "*)", 1_000),
    ("src/neg_brace.rs", "fn f() { let x = ", "-}", 1_000),
    ("src/ref_mut.rs", "fn f() { let x = ", "&mut ,", 2_000),
    ("src/and_try.rs", "fn f() { let x = ", "&?", 3_000),
    ("src/crossed.rs", "fn f() { let x = ", "[)", 32_000),
    ("src/macro_crossed.rs", "fn f() { ", "m!(]", 32_000),
    ("src/not_brace.ts", "export const x = ", "!}", 1_000),
    ("src/not_comma.ts", "export const x = ", "!,", 4_000),
    ("src/typeof.ts", "export const x = ", "typeof }", 2_000),
    ("src/void.ts", "export const x = ", "void ,", 12_000),
    ("src/await.ts", "export const x = ", "await }", 2_000),
    ("src/delete.ts", "export const x = ", "delete }", 2_000),
    ("src/assign.ts", "export const x = ", "a = }", 2_000),
    ("src/pow.ts", "export const x = ", "a ** }", 2_000),
    ("src/arrow.ts", "export const x = ", "() => ;", 8_000),
    ("src/not_brace.tsx", "export const x = ", "!}", 1_000),
    // A template literal that never closes: recovery reads what follows as code (a fuzz find,
    // `\` new await Schedule.intersect( +:+:…`, 4 KB took minutes).
    ("src/open_template.ts", "export const x = `x( ", "+:", 4_000),
    // A substitution of a closed template is code too.
    ("src/template_substitution.ts", "export const x = `${ ", "+:", 4_000),
    (
        "src/arrays.json",
        "{\"retry\": {\"maxAttempts\": 3}, \"x\": ",
        "[,",
        256_000,
    ),
    ("src/flow.yaml", "retry:\n  maxAttempts: 3\nx: ", "[a: ", 256_000),
];

/// The chain's file text, about `bytes` long, after what makes retrylint read the file (a
/// retry library imported).
fn broken_chain(head: &str, unit: &str, bytes: usize) -> String {
    let import = if head.starts_with("fn") {
        "use backon::Retryable;\n"
    } else if head.starts_with("export") {
        &format!("{HEADER}{RETRY}")
    } else {
        ""
    };
    let close = if head.contains("`${") { " }`" } else { "" };
    format!("{import}{head}{}{close}", unit.repeat(bytes / unit.len()))
}

#[test]
fn broken_prefix_chains_are_a_note_not_seconds_of_parse() {
    let texts: Vec<(&str, String)> = BROKEN_CHAINS
        .iter()
        .map(|(path, head, unit, bytes)| (*path, broken_chain(head, unit, *bytes)))
        .collect();
    let mut files: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (*p, t.as_str())).collect();
    files.push(("retrylint.toml", "max-file-size = 1000000\n"));
    let dir = common::project(&files);
    let started = Instant::now();
    let (code, report) = check_within(dir.path(), Duration::from_secs(30));
    eprintln!("{} files in {:?}", texts.len(), started.elapsed());
    assert_eq!(code, 0, "{report:#}");
    let notes = report["notes"].as_array().expect("notes");
    for (path, _) in &texts {
        assert!(
            notes.iter().any(|n| n["path"] == *path
                && n["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("skipped:")
                        && (m.contains("miss their operands") || m.contains("do not match")))),
            "{path}: {notes:#?}"
        );
    }
}

#[test]
fn the_language_server_answers_on_broken_prefix_chains() {
    use std::io::{BufRead, BufReader, Read, Write};
    let dir = common::project(&[("retrylint.toml", "")]);
    let mut child = common::bin()
        .arg("lsp")
        .current_dir(dir.path())
        .env("RETRYLINT_NO_CACHE", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("retrylint lsp starts");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, answers) = std::sync::mpsc::channel::<serde_json::Value>();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                match line.trim_end() {
                    "" => break,
                    header => {
                        if let Some(value) = header.strip_prefix("Content-Length: ") {
                            length = value.parse().unwrap_or(0);
                        }
                    }
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            let Ok(value) = serde_json::from_slice(&body) else {
                return;
            };
            if sender.send(value).is_err() {
                return;
            }
        }
    });
    let mut send = |message: serde_json::Value| {
        let body = message.to_string();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        stdin.flush().unwrap();
    };
    let root = format!("file://{}", dir.path().display());
    send(serde_json::json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "processId": null, "rootUri": root, "capabilities": {} } }));
    send(serde_json::json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    let started = Instant::now();
    let mut id = 0;
    for (path, head, unit, bytes) in BROKEN_CHAINS
        .iter()
        .filter(|(p, ..)| p.ends_with(".rs") || p.ends_with(".ts"))
    {
        // The sizes that took seconds each; the editor sees them half-typed, as they are.
        let uri = format!("file://{}", dir.path().join(path).display());
        let language = if path.ends_with(".rs") { "rust" } else { "typescript" };
        let text = broken_chain(head, unit, (*bytes).min(4_000));
        send(serde_json::json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": { "textDocument": { "uri": uri, "languageId": language, "version": 1, "text": text } } }));
        id += 1;
        let position = serde_json::json!({ "line": 0, "character": 3 });
        send(
            serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": "textDocument/codeAction",
            "params": { "textDocument": { "uri": uri }, "range": { "start": position, "end": position },
                        "context": { "diagnostics": [] } } }),
        );
    }
    let deadline = started + Duration::from_secs(30);
    let answered = loop {
        match answers.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(message) if message.get("method").is_none() && message["id"] == id => break true,
            Ok(_) => {}
            Err(_) => break false,
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(answered, "no answer to the last request within 30 s");
    eprintln!("{id} files opened and answered in {:?}", started.elapsed());
}
