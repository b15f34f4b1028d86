//! Fuzzers, seeded and dependency-free: token soup for TypeScript (Effect, `Schedule`, retry
//! options), Rust (backon, tokio-retry, the unfolded macros), SQL (lease statements) and
//! JSON/YAML (RS2 keys, anchors and aliases, deep nesting), broken prefix chains in each (`&,&,…`,
//! `typeof }typeof }…`, `[,[,…`), and mutations of the files under
//! `fixtures/` (byte flips, truncation, splicing, duplicated lines, nesting).
//!
//! Inputs go in batches through the real binary (`check` on a temporary project of many
//! files, killed if it does not answer in time: a hang); a crash, an exit other than 0 or 1, a
//! panic or an "internal error" note fails, and the failing input is found alone, saved under
//! the target directory and printed with the seed. A sample of each batch goes through the
//! language server too (`didOpen`, `didChange` to a mutation, then a ranged edit, requests
//! after each): it must keep answering.
//!
//! `RETRYLINT_FUZZ_SECONDS` is the time all fuzzers share (default 4, so `cargo test` stays
//! quick; `.ci/run` gives them a minute); `RETRYLINT_FUZZ_SEED` replays a run (a fresh seed
//! otherwise, printed); `RETRYLINT_FUZZ_LSP_LOG=FILE` appends every message sent to the language
//! server to `FILE`, one per line. The reproducers of what they found are the tests at the end.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The fuzzers below, which share the budget.
const FUZZERS: u32 = 5;

/// How long one `check` of a batch may take before it counts as a hang (a batch takes well
/// under a second), and one of a single input.
const BATCH_TIMEOUT: Duration = Duration::from_secs(90);
const SINGLE_TIMEOUT: Duration = Duration::from_secs(45);
/// How long the language server may take to answer one request.
const LSP_TIMEOUT: Duration = Duration::from_secs(45);

// ---------------------------------------------------------------------------- harness

/// splitmix64: small, fast, and the same on every platform.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// A number in `low..=high`.
    fn range(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// One of `words`.
    fn word<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len())]
    }
}

fn seed() -> u64 {
    let seed = match std::env::var("RETRYLINT_FUZZ_SEED") {
        Ok(value) => value.trim().parse().expect("RETRYLINT_FUZZ_SEED is a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    };
    eprintln!("fuzz seed {seed} (RETRYLINT_FUZZ_SEED={seed} replays it)");
    seed
}

/// One fuzzer's share of `RETRYLINT_FUZZ_SECONDS`.
fn budget() -> Duration {
    let total: f64 = std::env::var("RETRYLINT_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(4.0);
    Duration::from_secs_f64(total.max(0.0) / FUZZERS as f64)
}

/// One generated file: where it goes in the project, and its bytes.
#[derive(Clone)]
struct Input {
    path: String,
    bytes: Vec<u8>,
}

/// One run's files: a fixture to start from (copied whole), and the inputs written over it.
struct Batch {
    base: Option<PathBuf>,
    inputs: Vec<Input>,
}

impl Batch {
    fn new() -> Batch {
        Batch {
            base: None,
            inputs: Vec::new(),
        }
    }

    fn add(&mut self, path: String, bytes: impl Into<Vec<u8>>) {
        self.inputs.push(Input {
            path,
            bytes: bytes.into(),
        });
    }

    /// A project holding the base and `inputs`, in a fresh temporary directory.
    fn write(&self, inputs: &[Input]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        if let Some(base) = &self.base {
            common::copy_dir(base, dir.path());
        }
        for input in inputs {
            let path = dir.path().join(&input.path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, &input.bytes).unwrap();
        }
        dir
    }
}

/// `retrylint check` on `dir`, within `timeout`: its JSON report, or what went wrong.
fn check(dir: &Path, timeout: Duration) -> Result<Value, String> {
    let logs = tempfile::tempdir().expect("temp dir");
    let (out, err) = (logs.path().join("stdout"), logs.path().join("stderr"));
    let mut child = common::bin()
        .current_dir(dir)
        .args(["check", ".", "--format", "json", "--no-prefilter"])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("the binary runs");
    let status = wait(&mut child, timeout).ok_or_else(|| format!("no answer within {timeout:?}: a hang"))?;
    let stdout = std::fs::read(&out).unwrap();
    let stderr = String::from_utf8_lossy(&std::fs::read(&err).unwrap()).into_owned();
    let tail = || {
        stderr
            .chars()
            .rev()
            .take(2000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<String>()
    };
    match status.code() {
        Some(0 | 1) => {}
        Some(code) => return Err(format!("exit {code}: {}", tail())),
        None => return Err(format!("killed ({status}): {}", tail())),
    }
    for bad in ["panicked", "internal error", "crashed", "overflow"] {
        if stderr.contains(bad) {
            return Err(format!("`{bad}` on stderr: {}", tail()));
        }
    }
    let report: Value = serde_json::from_slice(&stdout).map_err(|e| format!("stdout is not JSON ({e})"))?;
    let notes = report["notes"].as_array().cloned().unwrap_or_default();
    match notes
        .iter()
        .find(|n| n["message"].as_str().unwrap_or("").contains("internal error"))
    {
        Some(note) => Err(format!("a panic was caught: {note}")),
        None => Ok(report),
    }
}

fn wait(child: &mut Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Control characters and non-ASCII escaped, cut at `limit` bytes: an input, printable.
fn preview(bytes: &[u8], limit: usize) -> String {
    let mut out: String = bytes[..bytes.len().min(limit)]
        .escape_ascii()
        .to_string()
        .replace("\\n", "\n")
        .replace("\\'", "'")
        .replace("\\\"", "\"");
    if bytes.len() > limit {
        out.push_str(&format!("… ({} bytes in all)", bytes.len()));
    }
    out
}

/// Saves `inputs` where a failure can be read after the run, and says where.
fn save(name: &str, inputs: &[Input]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures").join(name);
    for input in inputs {
        let path = dir.join(&input.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &input.bytes).unwrap();
    }
    dir
}

/// Runs `generate` batch after batch until the fuzzer's budget is spent (one batch at least),
/// each batch through `check` and a sample through the language server. Batch `k` of seed
/// `s` is the same on every run, so a failure replays.
fn fuzz(name: &str, generate: impl Fn(&mut Rng, &mut Batch)) {
    let seed = seed();
    let budget = budget();
    let start = Instant::now();
    let mut batches = 0u64;
    let mut inputs = 0;
    while batches == 0 || start.elapsed() < budget {
        let batch_seed = seed ^ fnv(name) ^ batches.wrapping_mul(0x2545_f491_4f6c_dd1d);
        let mut rng = Rng::new(batch_seed);
        let mut batch = Batch::new();
        generate(&mut rng, &mut batch);
        inputs += batch.inputs.len();
        let project = batch.write(&batch.inputs);
        if let Err(reason) = check(project.path(), BATCH_TIMEOUT) {
            fail(name, seed, batches, &batch, &reason);
        }
        // The language server, on the same project: two of the batch's inputs opened, each
        // changed to a mutation of itself.
        let sample: Vec<&Input> = (0..2).map(|_| rng.pick(&batch.inputs)).collect();
        if let Err((input, reason)) = lsp_session(project.path(), &sample, &mut rng) {
            // The whole project: the server checks every file, not only the one it was editing.
            let dir = save(&format!("{name}-{seed}-{batches}-lsp"), &batch.inputs);
            panic!(
                "fuzz {name}: the language server failed on {} ({reason})\n  seed {seed}, batch {batches} \
                 (RETRYLINT_FUZZ_SEED={seed}); saved in {}\n{}",
                input.path,
                dir.display(),
                preview(&input.bytes, 1500)
            );
        }
        batches += 1;
    }
    eprintln!(
        "fuzz {name}: {inputs} inputs in {batches} batches, {:?}",
        start.elapsed()
    );
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Trivial files beside an input tried alone: with them, files are read on worker threads
/// (2 MB stacks) as in a batch, not on the main thread (8 MB), where a deep input can pass.
fn fillers() -> Vec<Input> {
    (0..8)
        .map(|i| Input {
            path: format!("fuzz-fillers/{i}.sql"),
            bytes: b"SELECT 1;\n".to_vec(),
        })
        .collect()
}

/// Finds which input of a failed batch fails alone, saves it, and panics with it.
fn fail(name: &str, seed: u64, index: u64, batch: &Batch, reason: &str) -> ! {
    let culprits: Vec<(&Input, String)> = batch
        .inputs
        .iter()
        .filter_map(|input| {
            let mut alone = fillers();
            alone.push(input.clone());
            let project = batch.write(&alone);
            check(project.path(), SINGLE_TIMEOUT).err().map(|why| (input, why))
        })
        .collect();
    let label = format!("{name}-{seed}-{index}");
    let Some((input, why)) = culprits.first() else {
        let dir = save(&label, &batch.inputs);
        panic!(
            "fuzz {name}: the batch failed ({reason}) but no input fails alone\n  seed {seed}, batch {index} \
             (RETRYLINT_FUZZ_SEED={seed}); its {} inputs are saved in {}",
            batch.inputs.len(),
            dir.display()
        );
    };
    let dir = save(&label, std::slice::from_ref(*input));
    panic!(
        "fuzz {name}: {why}\n  input {} ({} bytes; {} of the batch's {} inputs fail alone)\n  seed {seed}, batch \
         {index} (RETRYLINT_FUZZ_SEED={seed}); saved in {}{}\n{}",
        input.path,
        input.bytes.len(),
        culprits.len(),
        batch.inputs.len(),
        dir.display(),
        batch
            .base
            .as_ref()
            .map_or(String::new(), |b| format!(" (over a copy of {})", b.display())),
        preview(&input.bytes, 1500)
    );
}

// ---------------------------------------------------------------------------- language server

/// A language server client with a deadline on every answer.
struct Lsp {
    child: Child,
    stdin: ChildStdin,
    incoming: mpsc::Receiver<Value>,
    next_id: i64,
}

impl Lsp {
    fn start(root: &Path) -> Result<Lsp, String> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_retrylint"))
            .arg("lsp")
            .env("RETRYLINT_NO_CACHE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("retrylint lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(value) = line.strip_prefix("Content-Length: ") {
                        length = value.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.unwrap_or(0)];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let Ok(value) = serde_json::from_slice::<Value>(&body) else {
                    return;
                };
                if sender.send(value).is_err() {
                    return;
                }
            }
        });
        let mut lsp = Lsp {
            child,
            stdin,
            incoming,
            next_id: 0,
        };
        let root = format!("file://{}", root.display());
        lsp.request(
            "initialize",
            json!({ "processId": null, "rootUri": root, "capabilities": {} }),
        )?;
        lsp.notify("initialized", json!({}))?;
        Ok(lsp)
    }

    fn send(&mut self, message: Value) -> Result<(), String> {
        let body = message.to_string();
        // A transcript of what the client sent, to replay a session by hand.
        if let Some(log) = std::env::var_os("RETRYLINT_FUZZ_LSP_LOG") {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .expect("the log opens");
            writeln!(file, "{body}").expect("the log takes a line");
        }
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len())
            .and_then(|_| self.stdin.flush())
            .map_err(|e| format!("the server stopped reading ({e})"))
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    /// Sends a request and waits for its answer (a result or an error, either will do).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        let deadline = Instant::now() + LSP_TIMEOUT;
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(wait) {
                Ok(message) if message.get("method").is_none() && message["id"] == id => return Ok(message),
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Timeout) => return Err(format!("no answer to `{method}` in time")),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
                    return Err(format!("the server died before answering `{method}` ({status})"));
                }
            }
        }
    }

    /// `shutdown`, `exit`, and a clean exit.
    fn stop(mut self) -> Result<(), String> {
        self.request("shutdown", Value::Null)?;
        self.notify("exit", Value::Null)?;
        match wait(&mut self.child, LSP_TIMEOUT) {
            Some(status) if status.success() => Ok(()),
            Some(status) => Err(format!("exit after shutdown: {status}")),
            None => Err("no exit after `exit`".into()),
        }
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn language_id(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "rs" => "rust",
        "sql" => "sql",
        "json" => "json",
        "yaml" | "yml" => "yaml",
        "svelte" => "svelte",
        "vue" => "vue",
        _ => "plaintext",
    }
}

/// Opens each of `inputs` in a server on `root`, then changes it to a mutation of itself and
/// edits a random range (past the end now and then), with requests after each step; `Err`
/// names the input the server failed on.
fn lsp_session<'i>(root: &Path, inputs: &[&'i Input], rng: &mut Rng) -> Result<(), (&'i Input, String)> {
    let first = inputs[0];
    let mut lsp = Lsp::start(root).map_err(|e| (first, e))?;
    for input in inputs {
        let uri = format!("file://{}", root.join(&input.path).display());
        let text = String::from_utf8_lossy(&input.bytes).into_owned();
        let lines = text.lines().count() + 1;
        let opened = json!({ "textDocument": { "uri": uri, "languageId": language_id(&input.path), "version": 1, "text": text } });
        let changed = String::from_utf8_lossy(&mutate(rng, &input.bytes, &[])).into_owned();
        let mut position = || json!({ "line": rng.below(lines + 2), "character": rng.below(120) });
        let (start, end) = (position(), position());
        let edits = [
            json!([{ "text": changed }]),
            json!([{ "range": { "start": start, "end": end }, "text": "Effect.retry(Schedule.spaced(\"1 second\"))\n{" }]),
        ];
        let mut step = |lsp: &mut Lsp, notification: Result<(), String>| -> Result<(), String> {
            notification?;
            let position = json!({ "line": rng.below(lines), "character": rng.below(80) });
            lsp.request(
                "textDocument/hover",
                json!({ "textDocument": { "uri": uri }, "position": position }),
            )?;
            let range = json!({ "start": position, "end": position });
            lsp.request(
                "textDocument/codeAction",
                json!({ "textDocument": { "uri": uri }, "range": range, "context": { "diagnostics": [] } }),
            )?;
            Ok(())
        };
        let open = lsp.notify("textDocument/didOpen", opened);
        step(&mut lsp, open).map_err(|e| (*input, e))?;
        for (version, changes) in edits.into_iter().enumerate() {
            let change = lsp.notify(
                "textDocument/didChange",
                json!({ "textDocument": { "uri": uri, "version": version + 2 }, "contentChanges": changes }),
            );
            step(&mut lsp, change).map_err(|e| (*input, e))?;
        }
    }
    lsp.stop().map_err(|e| (first, e))
}

// ---------------------------------------------------------------------------- generators

/// The size of a generated file, at most (about): big enough for deep nesting, small enough
/// for many files a second.
const MAX_SOUP: usize = 40_000;

/// `count` tokens of `tokens`, with now and then a run of one opener (deep nesting), and the
/// text cut short now and then (half-typed code).
fn soup(rng: &mut Rng, tokens: &[&str], openers: &[&str], count: usize) -> String {
    soup_with(rng, tokens, openers, &[], count)
}

/// [`soup`], with now and then a broken prefix chain too: a run of one operator of `prefixes`
/// followed each time by one of [`BREAKERS`] (`&,&,&,…`, `typeof }typeof }…`), the shapes on
/// which tree-sitter's error recovery is super-linear (`examples/deep_prefix.rs`).
fn soup_with(rng: &mut Rng, tokens: &[&str], openers: &[&str], prefixes: &[&str], count: usize) -> String {
    let mut out = String::new();
    for _ in 0..count {
        if out.len() > MAX_SOUP {
            break;
        }
        if !prefixes.is_empty() && rng.chance(2) {
            let unit = format!("{}{}", rng.word(prefixes), rng.word(BREAKERS));
            let room = (MAX_SOUP - out.len()) / unit.len();
            let run = (*rng.pick(&[3, 40, 300, 2000])).min(room.max(1));
            out.push_str(&unit.repeat(run));
        } else if rng.chance(2) {
            let opener = rng.pick(openers);
            let room = (MAX_SOUP - out.len()) / (2 * opener.len());
            let depth = (*rng.pick(&[50, 300, 1500, 4000])).min(room.max(1));
            out.push_str(&opener.repeat(depth));
            if rng.chance(50) {
                let closer: String = opener.chars().rev().filter_map(closing).collect();
                out.push_str(&closer.repeat(depth));
            }
        } else {
            out.push_str(rng.word(tokens));
            if rng.chance(30) {
                out.push(' ');
            }
        }
    }
    if rng.chance(20) {
        let mut cut = rng.below(out.len() + 1);
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

/// What breaks a prefix chain: a token no operand starts with, or a closer of another kind.
const BREAKERS: &[&str] = &[",", ";", ")", "]", "}", "?", ":", "=", " "];

/// Operators that want an operand, in TypeScript.
const TS_PREFIXES: &[&str] = &[
    "!", "-", "+", "~", "typeof ", "void ", "await ", "delete ", "new ", "a = ", "a ** ", "() => ", "x += ", "(", "[",
    "<a>", "`${",
];

/// Operators that want an operand, in Rust.
const RUST_PREFIXES: &[&str] = &[
    "&", "*", "-", "!", "&mut ", "&&", "|| ", "move || ", "a = ", "(", "[", "m!(", "Vec<",
];

fn closing(c: char) -> Option<char> {
    Some(match c {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        '<' => '>',
        _ => return None,
    })
}

const TS_TOKENS: &[&str] = &[
    "import { Effect, Schedule, Duration, Layer, Context } from \"effect\"\n",
    "import * as Retry from \"./retry\"\n",
    "import { HttpClient, HttpClientRequest } from \"@effect/platform\"\n",
    "export const ",
    "const ",
    "let ",
    "function ",
    "function* ",
    "async ",
    "await ",
    "yield* ",
    "return ",
    "class OrdersRepository ",
    "extends Context.Tag(\"Orders\")<Orders, {}>() {}",
    "if (",
    "for (const x of xs) ",
    "new ",
    "Effect.retry(",
    "Effect.retryOrElse(",
    "Effect.repeat(",
    "Effect.gen(function* () {",
    "Effect.tryPromise(() => fetch(url, { method: \"POST\" }))",
    "Schedule.exponential(\"100 millis\")",
    "Schedule.exponential(base, 2)",
    "Schedule.spaced(\"1 second\")",
    "Schedule.fixed(Duration.seconds(1))",
    "Schedule.fibonacci(\"10 millis\")",
    "Schedule.recurs(3)",
    "Schedule.forever",
    "Schedule.jittered",
    "Schedule.upTo(\"5 seconds\")",
    "Schedule.during(\"1 minute\")",
    "Schedule.intersect(",
    "Schedule.union(",
    "Schedule.compose(",
    "Schedule.cron(\"*/5 * * * *\")",
    ".pipe(",
    "{ times: 3 }",
    "{ schedule: ",
    "while: (e) => e._tag === \"Conflict\"",
    "until: Retry.isContention",
    "Retry.transient",
    "Retry.contention",
    "Layer.effect(",
    "Layer.scoped(",
    "HttpClient.retryTransient({ times: 3 })",
    "HttpClientRequest.post(\"/orders\")",
    "HttpClient.transformResponse(",
    "db.insert(orders).values(row)",
    "db.transaction(async (tx) => {",
    "outbox.append(event)",
    "queue.send(message)",
    "sql`INSERT INTO orders (id) VALUES (${id})`",
    "sql`UPDATE job_leases SET holder = ${me} WHERE name = ${name}`",
    "// retrylint-ignore unjittered-schedule -- tested\n",
    "// retrylint-ignore-file\n",
    "/* a comment */",
    "=>",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    ".",
    ":",
    "?",
    "?.",
    "!",
    "<",
    ">",
    "=",
    "+",
    "`",
    "${",
    "'",
    "\"",
    "\n",
    " ",
    "x",
    "e",
    "1",
    "0x1F",
    "\"1 second\"",
    "<div>",
    "</div>",
    "@decorator ",
    " as const",
    " satisfies Schedule.Schedule<unknown>",
    "#private",
    "\\u{1F600}",
    "é",
];

const TS_OPENERS: &[&str] = &[
    "(",
    "[",
    "{",
    ".pipe(",
    "Effect.retry(",
    "Schedule.union(",
    "f(",
    "<div>",
    "`${",
];

fn typescript(rng: &mut Rng, batch: &mut Batch) {
    for i in 0..24 {
        let count = *rng.pick(&[10, 60, 300, 1200]);
        let mut text = String::new();
        if rng.chance(80) {
            text.push_str(TS_TOKENS[0]);
        }
        text.push_str(&soup_with(rng, TS_TOKENS, TS_OPENERS, TS_PREFIXES, count));
        let (dir, ext) = *rng.pick(&[
            ("src", "ts"),
            ("src", "ts"),
            ("src/retry", "ts"),
            ("src/repositories", "ts"),
            ("src", "tsx"),
            ("src", "js"),
            ("src", "svelte"),
            ("src", "vue"),
        ]);
        if matches!(ext, "svelte" | "vue") {
            text = format!("<script lang=\"ts\">\n{text}\n</script>\n<div>{{x}}</div>\n");
        }
        batch.add(format!("{dir}/f{i}.{ext}"), text);
    }
}

const RUST_TOKENS: &[&str] = &[
    "use backon::{ExponentialBuilder, ConstantBuilder, Retryable, BlockingRetryable};\n",
    "use tokio_retry::{Retry, RetryIf, strategy::{ExponentialBackoff, FixedInterval, jitter}};\n",
    "use reqwest_retry::{RetryTransientMiddleware, policies::ExponentialBackoff};\n",
    "use backoff::future::retry;\n",
    "fn f() {",
    "async fn g(pool: &PgPool) -> Result<(), Error> {",
    "impl Worker {",
    "struct S;",
    "pub ",
    "let ",
    "let mut ",
    "match x {",
    "if let Some(y) = z {",
    "loop {",
    "return ",
    "=> ",
    "|e| ",
    "async move {",
    ".await",
    "?",
    "ExponentialBuilder::default()",
    "ExponentialBuilder::new()",
    ".with_max_times(3)",
    ".with_min_delay(Duration::from_millis(50))",
    ".with_max_delay(Duration::from_secs(1))",
    ".with_jitter()",
    ".retry(",
    ".retry(&ExponentialBuilder::default())",
    ".when(|e| e.is_conflict())",
    ".notify(|e, d| tracing::warn!(?e, ?d))",
    "Retry::spawn(",
    "RetryIf::spawn(",
    "ExponentialBackoff::from_millis(10).map(jitter).take(3)",
    "FixedInterval::from_millis(100)",
    "RetryTransientMiddleware::new_with_policy(policy)",
    "ExponentialBackoff::builder().build_with_max_retries(3)",
    "client.post(url).send()",
    "tokio::select! {",
    "join!(",
    "tokio::try_join!(",
    "futures::join!(",
    "tracing::info!(",
    "tracing::info_span!(",
    "tracing::event!(Level::INFO, ",
    "target: \"t\", ",
    "id = ?op.retry(p), ",
    "%x, ",
    "r = a.retry(b) => ",
    "else => ",
    "biased; ",
    ", if ready ",
    "macro_rules! m { ($x:expr) => { $x }; }",
    "sqlx::query!(\"UPDATE job_leases SET holder = $1 WHERE name = $2\")",
    "r#\"INSERT INTO jobs_leases (name) VALUES ($1)\"#",
    "#[derive(Debug)]",
    "#[tokio::main]",
    "'a",
    "'x'",
    "b\"bytes\"",
    "::",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    ",",
    ";",
    ".",
    "!",
    "=",
    "&",
    "*",
    "\"",
    "//",
    "/*",
    "*/",
    "\n",
    " ",
    "x",
    "1",
    "\"s\"",
    "é",
];

const RUST_OPENERS: &[&str] = &["(", "{", "[", "join!(", "tokio::select! { r = ", ".retry(", "Box::new("];

fn rust(rng: &mut Rng, batch: &mut Batch) {
    for i in 0..24 {
        let count = *rng.pick(&[10, 60, 300, 1200]);
        let mut text = String::new();
        if rng.chance(80) {
            text.push_str(RUST_TOKENS[0]);
        }
        text.push_str(&soup_with(rng, RUST_TOKENS, RUST_OPENERS, RUST_PREFIXES, count));
        // A half-typed macro at the very end, as an editor sees it.
        if rng.chance(25) {
            text.push_str(rng.word(&[
                "join!(x.retry(b)",
                "tokio::select! { r = a.retry(b) =>",
                "tracing::info!(id = ?op.retry(p)",
            ]));
        }
        batch.add(format!("src/f{i}.rs"), text);
    }
}

const SQL_TOKENS: &[&str] = &[
    "UPDATE job_leases SET ",
    "UPDATE jobs_leases SET holder = $1, lease_until = now() + interval '30 seconds', last_slot = $2 ",
    "INSERT INTO job_leases (name, last_slot, lease_until, holder) VALUES ($1, $2, $3, $4) ",
    "ON CONFLICT (name) DO UPDATE SET ",
    "ON CONFLICT (name) DO NOTHING",
    "DELETE FROM job_leases ",
    "SELECT name FROM job_leases ",
    "WITH claimed AS (",
    "WHERE ",
    "name = $1 ",
    "holder = $2 ",
    "last_slot < $2 ",
    "last_slot < excluded.last_slot ",
    "lease_until < now() ",
    "lease_until IS NULL ",
    "holder = excluded.holder ",
    "AND ",
    "OR ",
    "NOT ",
    "RETURNING name",
    "RETURNING *",
    "CASE WHEN a THEN b ELSE c END ",
    "EXISTS (SELECT 1) ",
    "UNION ALL ",
    "-- name: ClaimJobLease :one\n",
    "-- comment\n",
    "/* block */",
    "$$ body $$",
    "'it''s'",
    "\"quoted id\"",
    "E'\\n'",
    "(",
    ")",
    ",",
    ";",
    ";\n",
    "=",
    "<",
    ">",
    "<=",
    "::bigint",
    "'",
    "\"",
    "$",
    "\n",
    " ",
    "x",
    "1",
];

const SQL_OPENERS: &[&str] = &["(", "(SELECT ", "NOT ("];

fn sql(rng: &mut Rng, batch: &mut Batch) {
    for i in 0..24 {
        let count = *rng.pick(&[10, 60, 300, 1200]);
        let mut text = soup(rng, SQL_TOKENS, SQL_OPENERS, count);
        if rng.chance(10) {
            // A long flat chain of conditions, past the analyser's bound now and then.
            let terms: Vec<String> = (0..rng.range(10, 800)).map(|n| format!("id = {n}")).collect();
            text.push_str(&format!(
                "UPDATE job_leases SET holder = $1 WHERE {};\n",
                terms.join(rng.word(&[" OR ", " AND "]))
            ));
        }
        batch.add(format!("db/q{i}.sql"), text);
    }
}

const RS2_KEYS: &[&str] = &[
    "retry",
    "retry",
    "maxAttempts",
    "baseDelayMs",
    "maxDelayMs",
    "backoffMultiplier",
    "jitter",
    "retryStatuses",
    "retryOnNetworkError",
    "respectRetryAfter",
    "enabled",
    "call",
    "method",
    "effect",
    "url",
    "mount",
    "tenant",
    "mounts",
    "calls",
    "flows",
    "steps",
    "$_retry",
    "<<",
    "apiVersion",
    "kind",
    "x",
    "é",
];

const RS2_SCALARS: &[&str] = &[
    "3",
    "0",
    "-1",
    "1e309",
    "0x1F4",
    "2.5",
    "true",
    "false",
    "null",
    "\"full\"",
    "\"none\"",
    "\"equal\"",
    "\"decorrelated\"",
    "\"POST\"",
    "\"unsafe\"",
    "\"idempotent\"",
    "\"${ATTEMPTS}\"",
    "\"$_retry\"",
    "\"\\u00e9\\n\"",
    "[429, 500, 503]",
    "[]",
    "{}",
];

/// A random RS2-looking value `depth` levels deep at most, as a small tree.
enum Tree {
    Map(Vec<(String, Tree)>),
    Seq(Vec<Tree>),
    Scalar(String),
}

fn tree(rng: &mut Rng, depth: usize) -> Tree {
    if depth == 0 || rng.chance(25) {
        return Tree::Scalar(rng.pick(RS2_SCALARS).to_string());
    }
    // Mostly one child, so deep trees stay small.
    let children = if rng.chance(70) { 1 } else { rng.range(0, 4) };
    if rng.chance(70) {
        Tree::Map(
            (0..children)
                .map(|_| (rng.pick(RS2_KEYS).to_string(), tree(rng, depth - 1)))
                .collect(),
        )
    } else {
        Tree::Seq((0..children).map(|_| tree(rng, depth - 1)).collect())
    }
}

fn to_json(tree: &Tree, out: &mut String) {
    match tree {
        Tree::Map(entries) => {
            out.push('{');
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&format!("{key:?}: "));
                to_json(value, out);
            }
            out.push('}');
        }
        Tree::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                to_json(item, out);
            }
            out.push(']');
        }
        Tree::Scalar(text) => out.push_str(text),
    }
}

/// Block YAML, with anchors and aliases sprinkled in (`&a0`… and `*a0`…).
fn to_yaml(rng: &mut Rng, tree: &Tree, indent: usize, out: &mut String, anchors: &mut usize) {
    let pad = " ".repeat(indent);
    match tree {
        Tree::Map(entries) if !entries.is_empty() => {
            for (key, value) in entries {
                out.push_str(&format!("{pad}{key}:"));
                if *anchors > 0 && rng.chance(10) {
                    out.push_str(&format!(" *a{}\n", rng.below(*anchors)));
                    continue;
                }
                if rng.chance(10) {
                    out.push_str(&format!(" &a{anchors}"));
                    *anchors += 1;
                }
                match value {
                    Tree::Scalar(text) => out.push_str(&format!(" {text}\n")),
                    _ => {
                        out.push('\n');
                        let deeper = indent + rng.range(1, 4);
                        to_yaml(rng, value, deeper, out, anchors);
                    }
                }
            }
        }
        Tree::Seq(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&format!("{pad}-"));
                match item {
                    Tree::Scalar(text) => out.push_str(&format!(" {text}\n")),
                    _ => {
                        out.push('\n');
                        to_yaml(rng, item, indent + 2, out, anchors);
                    }
                }
            }
        }
        other => {
            let mut flow = String::new();
            to_json(other, &mut flow);
            out.push_str(&format!("{pad}{flow}\n"));
        }
    }
}

const YAML_TOKENS: &[&str] = &[
    "- ",
    "? ",
    ": ",
    "retry: ",
    "maxAttempts: 3",
    "- call:",
    "<<: *a",
    "&a ",
    "*a ",
    "!!str ",
    "|",
    ">-",
    "|2+",
    "[",
    "]",
    "{",
    "}",
    ", ",
    "\"q: - x\"",
    "'it''s'",
    "# c",
    "---",
    "...",
    "%YAML 1.2",
    "\t",
    "  ",
    "x",
    "é",
    "\r",
];

fn json_yaml(rng: &mut Rng, batch: &mut Batch) {
    for i in 0..24 {
        let form = rng.below(7);
        let (ext, text) = match form {
            // RS2-looking JSON, now and then nested very deep.
            0 => {
                let depth = *rng.pick(&[3, 8, 30, 70]);
                let mut text = String::new();
                to_json(&tree(rng, depth), &mut text);
                if rng.chance(20) {
                    let n = *rng.pick(&[100, 2000, 12000]);
                    text = format!(
                        "{{\"retry\": {{\"maxAttempts\": 3, \"x\": {}{}}}}}",
                        "[".repeat(n),
                        "]".repeat(n)
                    );
                } else if rng.chance(10) {
                    // Flow collections that never close, broken at every level (`[,[,[,…`).
                    let unit = format!("{}{}", rng.word(&["[", "{", "{\"a\": ", "[1 "]), rng.word(BREAKERS));
                    let n = *rng.pick(&[100, 2000, 12000]);
                    text = format!("{{\"retry\": {{\"maxAttempts\": 3, \"x\": {}", unit.repeat(n));
                }
                ("json", text)
            }
            // RS2-looking block YAML, with anchors and aliases.
            1 | 2 => {
                let mut text = String::new();
                let depth = *rng.pick(&[3, 8, 30, 70]);
                let value = tree(rng, depth);
                to_yaml(rng, &value, 0, &mut text, &mut 0);
                ("yaml", text)
            }
            // Deep indentation, around the scanner's limit, in every block form.
            3 => {
                let levels = *rng.pick(&[90, 120, 200, 253, 254, 260, 400]);
                let step = rng.range(1, 3);
                let line = |rng: &mut Rng, i: usize| -> String {
                    let pad = " ".repeat(step * i);
                    match rng.below(4) {
                        0 => format!("{pad}k{i}:\n"),
                        1 => format!("{pad}-\n"),
                        2 => format!("{pad}- k{i}:\n"),
                        _ => format!("{pad}? k{i}\n{pad}:\n"),
                    }
                };
                let text = format!("retry:\n{}", (1..levels).map(|i| line(rng, i)).collect::<String>());
                ("yaml", text)
            }
            // Flow nesting and compact sequences on one line.
            4 => {
                let n = *rng.pick(&[100, 1000, 6000]);
                let text = match rng.below(3) {
                    0 => format!("retry:\n  maxAttempts: 3\n  x: {}{}\n", "[".repeat(n), "]".repeat(n)),
                    1 => format!("retry: {}1{}\n", "{a: ".repeat(n), "}".repeat(n)),
                    _ => format!("retry: {}x\n", "- ".repeat(n / 10)),
                };
                ("yaml", text)
            }
            // An alias bomb: each anchor aliases the one before several times.
            5 => {
                let mut text = String::from("retry: {maxAttempts: 3}\na0: &a0 [{retry: {maxAttempts: 1}}]\n");
                let width = rng.range(2, 12);
                for level in 1..rng.range(3, 14) {
                    let aliases = vec![format!("*a{}", level - 1); width].join(", ");
                    text.push_str(&format!("a{level}: &a{level} [{aliases}]\n"));
                }
                ("yaml", text)
            }
            // YAML token soup.
            _ => {
                let mut text = String::new();
                let mut indent = 0usize;
                for _ in 0..rng.range(5, 300) {
                    indent = match rng.below(5) {
                        0 | 1 => indent + rng.range(1, 3),
                        2 => indent.saturating_sub(rng.range(1, 8)),
                        3 => 0,
                        _ => indent,
                    };
                    text.push_str(&" ".repeat(indent));
                    for _ in 0..rng.range(1, 6) {
                        text.push_str(rng.word(YAML_TOKENS));
                    }
                    text.push('\n');
                }
                ("yaml", text)
            }
        };
        let text = if rng.chance(15) {
            String::from_utf8_lossy(&mutate(rng, text.as_bytes(), &[])).into_owned()
        } else {
            text
        };
        let dir = rng.pick(&["mounts", "tenants/acme", "config", "."]);
        let ext = if ext == "yaml" && rng.chance(30) { "yml" } else { ext };
        batch.add(format!("{dir}/c{i}.{ext}"), text);
    }
}

/// A mutation of `bytes`: a few byte flips, a cut, a splice of `other`, duplicated lines, a
/// run of openers (deep nesting), or a deleted range.
fn mutate(rng: &mut Rng, bytes: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..rng.range(1, 4) {
        let at = rng.below(out.len() + 1);
        match rng.below(7) {
            0 => {
                for _ in 0..rng.range(1, 8) {
                    let i = rng.below(out.len());
                    if let Some(byte) = out.get_mut(i) {
                        *byte = *rng.pick(b"(){}[]<>;:,.'\"`\\$!#-?|&*\n\t \x00\xff\xc3");
                    }
                }
            }
            1 => out.truncate(at),
            2 if !other.is_empty() => {
                let from = rng.below(other.len());
                let to = (from + rng.range(1, 400)).min(other.len());
                out.splice(at..at, other[from..to].iter().copied());
            }
            3 => {
                // Lines `at..` repeated.
                let start = out[..at].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
                let end = (start + rng.range(1, 300)).min(out.len());
                let lines = out[start..end].to_vec();
                for _ in 0..rng.range(1, 50) {
                    out.splice(start..start, lines.iter().copied());
                }
            }
            4 => {
                let opener = rng.pick(&[
                    "(", "[", "{", "  ", "- ", ".pipe(", "join!(", "&,", "!}", "typeof ;", "[)",
                ]);
                let run = opener.repeat(*rng.pick(&[10, 200, 3000]));
                out.splice(at..at, run.bytes());
            }
            5 => {
                let end = (at + rng.range(1, 200)).min(out.len());
                out.drain(at..end);
            }
            _ => {
                let token = rng.pick(&[TS_TOKENS, RUST_TOKENS, SQL_TOKENS, YAML_TOKENS]);
                out.splice(at..at, rng.pick(token).bytes());
            }
        }
    }
    out
}

/// The source files of a fixture (relative paths), its configuration left out: a broken
/// `retrylint.toml` is an error by design.
fn fixture_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            fixture_files(root, &path, out);
        } else if !path.ends_with("retrylint.toml") {
            out.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
}

fn fixtures(rng: &mut Rng, batch: &mut Batch) {
    let mut names: Vec<PathBuf> = std::fs::read_dir(common::repo_root().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    names.sort();
    let base = rng.pick(&names).clone();
    let mut files = Vec::new();
    fixture_files(&base, &base, &mut files);
    files.sort();
    for i in 0..rng.range(6, 16) {
        let file = rng.pick(&files).clone();
        let other = rng.pick(&files).clone();
        let bytes = std::fs::read(base.join(&file)).unwrap();
        let other = std::fs::read(base.join(&other)).unwrap();
        let mutated = mutate(rng, &bytes, &other);
        // In place of the fixture's file, or beside it (the original stays).
        let path = match (rng.chance(50), file.rsplit_once('.')) {
            (true, Some((stem, ext))) => format!("{stem}.fuzz{i}.{ext}"),
            _ => file,
        };
        batch.add(path, mutated);
    }
    batch.base = Some(base);
}

#[test]
fn fuzz_typescript() {
    fuzz("typescript", typescript);
}

#[test]
fn fuzz_rust() {
    fuzz("rust", rust);
}

#[test]
fn fuzz_sql() {
    fuzz("sql", sql);
}

#[test]
fn fuzz_json_yaml() {
    fuzz("json-yaml", json_yaml);
}

#[test]
fn fuzz_fixture_mutations() {
    fuzz("fixtures", fixtures);
}

// ---------------------------------------------------------------------------- reproducers

/// `check --format json` on `files`, which must survive (as the fuzzers require); the notes.
fn survives(files: &[(&str, String)]) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().expect("temp dir");
    for input in fillers() {
        let path = dir.path().join(&input.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &input.bytes).unwrap();
    }
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let report = check(dir.path(), SINGLE_TIMEOUT).unwrap_or_else(|reason| panic!("{reason}"));
    report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["path"].as_str().unwrap().to_string(),
                n["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Every file of `files`, opened in the language server and changed (a mutation, a ranged
/// edit), with requests after each: the server answers them all and shuts down cleanly.
fn server_survives(files: &[(&str, String)]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let inputs: Vec<Input> = files
        .iter()
        .map(|(path, text)| Input {
            path: path.to_string(),
            bytes: text.clone().into_bytes(),
        })
        .collect();
    let sample: Vec<&Input> = inputs.iter().collect();
    if let Err((input, reason)) = lsp_session(dir.path(), &sample, &mut Rng::new(1)) {
        panic!("the language server failed on {}: {reason}", input.path);
    }
}

fn nested_arrays(depth: usize) -> String {
    format!(
        "{{\"retry\": {{\"maxAttempts\": 3, \"x\": {}{}}}}}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

fn indented_yaml(levels: usize) -> String {
    let mut text = String::from("retry:\n");
    for i in 1..levels {
        text.push_str(&format!("{}k{i}:\n", "  ".repeat(i)));
    }
    text.push_str(&format!("{}maxAttempts: 3\n", "  ".repeat(levels)));
    text
}

/// Issue 22.1: 10,000 nested arrays under `retry` (20 KB) overflowed the stack; so did 5,000
/// nested YAML flow sequences.
#[test]
fn nested_json_and_yaml_are_a_note_not_a_stack_overflow() {
    let flow = format!(
        "retry:\n  maxAttempts: 3\n  x: {}{}\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let files = [("config/deep.json", nested_arrays(10_000)), ("config/flow.yaml", flow)];
    let notes = survives(&files);
    for (file, _) in &files {
        assert!(
            notes
                .iter()
                .any(|(path, message)| path == file
                    && message.contains("nests deeper than retrylint follows (64 levels)")),
            "{file}: {notes:?}"
        );
    }
    server_survives(&files);
}

/// Issue 22.2: tree-sitter-yaml aborted (`ts_parser__external_scanner_serialize: length <=
/// 1024`) on YAML indented 260 levels deep, and on one line of 260 dashes.
#[test]
fn yaml_indented_past_the_parser_limit_is_skipped_with_a_note() {
    let files = [
        ("config/indented.yaml", indented_yaml(260)),
        ("config/dashes.yaml", format!("retry: {}x\n", "- ".repeat(260))),
    ];
    let notes = survives(&files);
    for (file, _) in &files {
        assert!(
            notes.iter().any(|(path, message)| path == file
                && message == "skipped: YAML indented deeper than its parser can read (about 100 levels)"),
            "{file}: {notes:?}"
        );
    }
    // 60 levels are read: the policy at the bottom is not a note.
    let notes = survives(&[("config/ok.yaml", indented_yaml(60))]);
    assert!(notes.is_empty(), "{notes:?}");
    server_survives(&files);
}

/// Issue 22.3: a half-typed macro at the end of a Rust file panicked in the macro reader.
#[test]
fn a_half_typed_macro_at_the_end_of_a_rust_file_is_no_panic() {
    let files = [
        ("src/join.rs", "fn f() { join!(x.retry(b)".to_string()),
        (
            "src/select.rs",
            "async fn f() { tokio::select! { r = a.retry(b) => { x }".to_string(),
        ),
        ("src/info.rs", "fn f() { tracing::info!(id = ?op.retry(p)".to_string()),
    ];
    survives(&files);
    server_survives(&files);
}

/// A "billion laughs": each anchor aliases the one before ten times (10¹¹ nodes in 700 bytes).
#[test]
fn a_yaml_alias_bomb_is_bounded() {
    let mut text = String::from("retry: {maxAttempts: 3}\na0: &a0 [{retry: {maxAttempts: 1}}, x]\n");
    for i in 1..12 {
        text.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    let files = [("config/bomb.yaml", text)];
    let notes = survives(&files);
    assert!(
        notes
            .iter()
            .any(|(_, m)| m.contains("copy more than retrylint follows (100000 nodes)")),
        "{notes:?}"
    );
    server_survives(&files);
}

/// Found by the SQL fuzzer: 400 `OR`s in a 4 KB statement (under the 500 that make it too large
/// to analyse, and the 16 KB that got a big stack) overflowed a worker's stack in a debug build.
#[test]
fn a_long_flat_sql_condition_parses_on_a_big_stack() {
    let terms: Vec<String> = (0..499).map(|i| format!("id = {i}")).collect();
    let statement = format!("UPDATE job_leases SET holder = $1 WHERE {};\n", terms.join(" OR "));
    assert!(statement.len() < 16 * 1024);
    let notes = survives(&[("db/or.sql", statement)]);
    assert!(notes.is_empty(), "{notes:?}");
}

/// Issue 22: a FIFO named like a project file (package.json, tsconfig.json) that discovery
/// reaches on its own — the project's, a source directory's, an installed package's, a
/// workspace package's — is passed over by `check` and by the language server alike: neither
/// waits for a writer that never comes.
#[test]
fn fifos_named_like_project_files_hang_neither_check_nor_the_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let uses =
        "import { Effect, Schedule } from \"effect\"\nimport { helper } from \"a\"\nimport { local } from \"./lib\"\n\
                declare const task: Effect.Effect<void>\n\
                export const run = task.pipe(Effect.retry({ schedule: Schedule.spaced(\"1 second\"), times: 3 }))\n";
    let files = [
        ("pnpm-workspace.yaml", "packages:\n  - \"packages/*\"\n".to_string()),
        ("src/a.ts", uses.to_string()),
        ("src/lib/index.ts", "export const local = 1\n".to_string()),
        ("packages/a/src/index.ts", uses.replace("\"a\"", "\"effect\"")),
        ("node_modules/a/index.js", "export const helper = 1\n".to_string()),
    ];
    for (path, text) in &files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    for fifo in [
        "package.json",
        "tsconfig.json",
        "src/package.json",
        "src/tsconfig.json",
        "src/lib/package.json",
        "node_modules/effect/package.json",
        "node_modules/a/package.json",
        "packages/a/package.json",
        "packages/a/tsconfig.json",
    ] {
        let path = root.join(fifo);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let status = Command::new("mkfifo").arg(&path).status().expect("mkfifo runs");
        assert!(status.success(), "mkfifo {fifo}");
    }
    let report = check(root, SINGLE_TIMEOUT).unwrap_or_else(|reason| panic!("check: {reason}"));
    let findings = common::findings(&report);
    assert!(findings.len() >= 2, "{report:#}");
    let inputs: Vec<Input> = ["src/a.ts", "packages/a/src/index.ts"]
        .iter()
        .map(|path| Input {
            path: path.to_string(),
            bytes: std::fs::read(root.join(path)).unwrap(),
        })
        .collect();
    let sample: Vec<&Input> = inputs.iter().collect();
    if let Err((input, reason)) = lsp_session(root, &sample, &mut Rng::new(1)) {
        panic!("the language server failed on {}: {reason}", input.path);
    }
}

/// Error chains the recovery-cost scan once read as keys (`delete :`), types (`void ,`) or
/// nothing (`++ :`, `- >`): each took seconds to a minute to parse, in gaps between tree-sitter's
/// progress callbacks that the work budget never saw (the CI fuzzer found `delete :` timing
/// the language server out). Each is now skipped by the scan, with its note, at once.
#[test]
fn error_chains_of_keywords_and_operators_are_skipped_by_the_scan() {
    let shapes = [
        "delete :",
        "typeof ?",
        "await :",
        "new ?",
        "void :",
        "void ,",
        "++ :",
        "-- ,",
        "- >",
        "typeof ==",
    ];
    let files: Vec<(String, String)> = shapes
        .iter()
        .enumerate()
        .map(|(i, unit)| {
            (
                format!("src/chain{i}.ts"),
                format!("x = f(,{}\n", format!("{unit} ").repeat(2000)),
            )
        })
        .collect();
    let files: Vec<(&str, String)> = files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
    let notes = survives(&files);
    for (path, _) in &files {
        assert!(
            notes
                .iter()
                .any(|(p, m)| p == path && m.contains("miss their operands")),
            "{path}: {notes:?}"
        );
    }
}
