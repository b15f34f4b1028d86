//! Bad input never panics: random bytes, truncated real files, invalid UTF-8 and syntax errors
//! become notes or partial analysis, and the exit code stays 0 or 1.

mod common;

use std::path::Path;

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn fixture_sources(root: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && name != "node_modules" && name != "dist" {
            fixture_sources(&path, out);
        } else if name.ends_with(".ts") || name.ends_with(".tsx") {
            out.push((name, std::fs::read(&path).unwrap()));
        }
    }
}

fn assert_survives(dir: &Path) {
    let output = common::check(dir, &[".", "--format", "json"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "exit {:?}: {stderr}",
        output.status.code()
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    for note in report["notes"].as_array().unwrap() {
        let message = note["message"].as_str().unwrap();
        assert!(!message.contains("internal error"), "a panic was caught: {message}");
    }
}

#[test]
fn random_bytes_and_truncated_files_do_not_crash() {
    let mut sources = Vec::new();
    fixture_sources(&common::fixture("effect-app"), &mut sources);
    assert!(sources.len() > 10);
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for (i, (name, text)) in sources.iter().enumerate() {
        // Every prefix length class: empty, mid-token, mid-string, nearly whole.
        for cut in [0, 1, text.len() / 3, text.len() / 2, text.len().saturating_sub(1)] {
            let cut = cut.min(text.len());
            std::fs::write(dir.path().join(format!("t{i}_{cut}_{name}")), &text[..cut]).unwrap();
        }
        // The same file with random bytes spliced in.
        let mut spliced = text.clone();
        for _ in 0..8 {
            let at = (rng.next() as usize) % spliced.len().max(1);
            let byte = (rng.next() & 0xff) as u8;
            if at < spliced.len() {
                spliced[at] = byte;
            }
        }
        std::fs::write(dir.path().join(format!("s{i}_{name}")), &spliced).unwrap();
    }
    for i in 0..40 {
        let len = (rng.next() % 4096) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| (rng.next() & 0xff) as u8).collect();
        std::fs::write(dir.path().join(format!("random{i}.ts")), bytes).unwrap();
    }
    assert_survives(dir.path());
}

#[test]
fn invalid_utf8_is_skipped_with_a_note() {
    let dir = common::project(&[("src/ok.ts", "export const a = 1\n")]);
    std::fs::write(
        dir.path().join("src/latin1.ts"),
        b"// caf\xe9\nimport { Effect, Schedule } from \"effect\"\nEffect.retry(Schedule.recurs(1))\n",
    )
    .unwrap();
    let (code, report) = common::check_json(dir.path(), &["."]);
    assert_eq!(code, 0);
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n["path"] == "src/latin1.ts" && n["message"] == "skipped: not valid UTF-8"),
        "{notes:?}"
    );
}

#[test]
fn a_retry_inside_a_parse_error_is_a_note_not_a_silent_miss() {
    let broken = "import { Effect, Schedule } from \"effect\"\n\
                  export const ok = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(1)))\n\
                  export const broken = Effect.retry(Schedule.recurs(2), @@ #)\n\
                  export const after = Effect.succeed(1).pipe(Effect.retry(Schedule.recurs(3)))\n";
    let dir = common::project(&[("src/broken.ts", broken)]);
    let (_, report) = common::check_json(dir.path(), &[".", "--select", "inline-schedule"]);
    let found = common::findings(&report);
    assert_eq!(
        found,
        [
            ("src/broken.ts".to_string(), 2, "inline-schedule".to_string()),
            ("src/broken.ts".to_string(), 4, "inline-schedule".to_string())
        ],
        "code before and after the error is analysed"
    );
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["path"] == "src/broken.ts"
            && n["message"]
                .as_str()
                .unwrap()
                .starts_with("not analysed: parse error at 3:")),
        "{notes:?}"
    );
}
