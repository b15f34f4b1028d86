//! The progress line of `retrylint check` (issue 27.5): drawn on stderr when it is a terminal,
//! never in piped output or in a CI log. `RETRYLINT_PROGRESS_DELAY_MS=0` draws it from the
//! start, so even a check of a small fixture would show it.

use std::process::Command;

mod common;

const LINE: &str = "retrylint: ";

#[test]
fn piped_stderr_gets_no_progress_line() {
    let output = common::bin()
        .current_dir(common::fixture("effect-app"))
        .env_remove("CI")
        .env("RETRYLINT_PROGRESS_DELAY_MS", "0")
        .args(["check", ".", "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains(LINE) && !stderr.contains('\r'), "{stderr}");
    // The report is intact.
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(!report["diagnostics"].as_array().unwrap().is_empty());
}

/// `script` runs the check on a pseudo-terminal: what it prints is what a terminal shows.
fn on_a_terminal(ci: Option<&str>) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` (util-linux) to give the check a terminal");
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_retrylint");
    let mut command = Command::new("script");
    command
        .current_dir(common::fixture("effect-app"))
        .env("NO_COLOR", "1")
        .env("RETRYLINT_NO_CACHE", "1")
        .env("RETRYLINT_PROGRESS_DELAY_MS", "0")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("CI")
        .args(["-qec", &format!("{bin} check . --format short >/dev/null"), "/dev/null"]);
    if let Some(ci) = ci {
        command.env("CI", ci);
    }
    let output = command.output().unwrap();
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn a_terminal_gets_the_progress_line_and_it_is_erased() {
    let Some(shown) = on_a_terminal(None) else { return };
    assert!(
        shown.contains("retrylint: finding files…") || shown.contains("retrylint: reading files"),
        "{shown:?}"
    );
    // Erased before anything else is said: what follows the last erase is no progress line.
    let after = shown.rsplit("\r\x1b[2K").next().unwrap();
    assert!(!after.contains(LINE), "{shown:?}");
    assert!(shown.matches("\r\x1b[2K").count() >= 2, "{shown:?}");
}

#[test]
fn a_ci_log_gets_no_progress_line_even_on_a_terminal() {
    let Some(shown) = on_a_terminal(Some("true")) else {
        return;
    };
    assert!(!shown.contains(LINE), "{shown:?}");
}
