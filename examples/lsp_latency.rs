//! How long the language server takes from an edit to the diagnostics it publishes, on a real
//! project (bench/run.sh --lsp).
//!
//! `cargo run --release --example lsp_latency -- DIR FILE [EDITS]` starts `retrylint lsp`
//! (the release binary beside this example), opens FILE of the workspace DIR, then edits it
//! EDITS times (default 20), each edit adding or removing an inline retry policy so the
//! findings change, and prints the median and worst time from `didChange` to the file's
//! `publishDiagnostics`, the 50 ms debounce taken off, and the server's own check times.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The server waits this long after a change before it checks (see `lsp::DEBOUNCE`).
const DEBOUNCE: Duration = Duration::from_millis(50);

fn send(stdin: &mut impl Write, message: &Value) {
    let body = message.to_string();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    stdin.flush().unwrap();
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::fs::canonicalize(PathBuf::from(args.next().expect("usage: lsp_latency DIR FILE [EDITS]"))).unwrap();
    let file = std::fs::canonicalize(PathBuf::from(args.next().expect("usage: lsp_latency DIR FILE [EDITS]"))).unwrap();
    let edits: usize = args.next().map_or(20, |n| n.parse().unwrap());
    let exe = std::env::current_exe().unwrap();
    let binary = exe.parent().unwrap().parent().unwrap().join("retrylint");
    let mut child = Command::new(&binary)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<(Instant, Value)>();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(n) = line.strip_prefix("Content-Length: ") {
                    length = n.parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let _ = tx.send((Instant::now(), serde_json::from_slice(&body).unwrap()));
        }
    });
    let uri = format!("file://{}", file.display());
    let root = format!("file://{}", dir.display());
    let text = std::fs::read_to_string(&file).unwrap();
    let mut check_times: Vec<f64> = Vec::new();
    // Waits for the file's diagnostics, collecting the server's own check times.
    let wait = |since: Instant, check_times: &mut Vec<f64>| -> Duration {
        loop {
            let (at, message) = rx.recv_timeout(Duration::from_secs(120)).expect("the server answers");
            if message["method"] == "window/logMessage" {
                let log = message["params"]["message"].as_str().unwrap_or("");
                if let Some(ms) = log.rsplit(" in ").next().and_then(|t| t.strip_suffix(" ms")) {
                    check_times.push(ms.parse().unwrap_or(0.0));
                }
            }
            if message["method"] == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri {
                return at - since;
            }
        }
    };
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"processId": null, "rootUri": root, "capabilities": {},
                           "workspaceFolders": [{"uri": root, "name": "bench"}]}}),
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
    let started = Instant::now();
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "typescript", "version": 1, "text": text}}}),
    );
    let first = wait(started, &mut check_times);
    check_times.clear();
    let edited = format!(
        "{text}\nimport {{ Effect as LatencyEffect, Schedule as LatencySchedule }} from \"effect\"\n\
         export const latencyProbe = LatencyEffect.log(\"x\").pipe(LatencyEffect.retry(LatencySchedule.recurs(2)))\n"
    );
    let mut latencies = Vec::new();
    for version in 0..edits {
        let body = if version % 2 == 0 { &edited } else { &text };
        let sent = Instant::now();
        send(
            &mut stdin,
            &json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
                    "params": {"textDocument": {"uri": uri, "version": version + 2},
                               "contentChanges": [{"text": body}]}}),
        );
        latencies.push(wait(sent, &mut check_times).saturating_sub(DEBOUNCE));
    }
    send(&mut stdin, &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    send(&mut stdin, &json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = child.wait();
    latencies.sort();
    check_times.sort_by(f64::total_cmp);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "first diagnostics {:.0} ms; edit -> diagnostics (debounce off): median {:.1} ms, worst {:.1} ms; server check median {:.1} ms over {} edits",
        ms(first),
        ms(latencies[latencies.len() / 2]),
        ms(*latencies.last().unwrap()),
        check_times.get(check_times.len() / 2).copied().unwrap_or(f64::NAN),
        edits
    );
}
