//! Counts files whose tree still has error nodes after retrylint's recovery, and shows the
//! first error of each: `cargo run --release --example parse_errors -- DIR [--raw]`.
//! `--raw` parses without recovery, to measure what recovery buys.

use retrylint::extract::{parse, parse_recovering};
use retrylint::source::Language;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: parse_errors DIR [--raw]");
    let raw = args.next().as_deref() == Some("--raw");
    let (mut files, mut with_errors) = (0, 0);
    for entry in ignore::WalkBuilder::new(&dir).build().flatten() {
        let path = entry.path();
        let Some(language) = Language::from_path(path) else {
            continue;
        };
        let Ok(text) = std::fs::read(path) else { continue };
        files += 1;
        let tree = if raw {
            parse(language, &text)
        } else {
            parse_recovering(language, &text)
        };
        let Some(tree) = tree else { continue };
        if !tree.root_node().has_error() {
            continue;
        }
        with_errors += 1;
        let mut cursor = tree.walk();
        'walk: loop {
            let node = cursor.node();
            if node.is_error() || node.is_missing() {
                let start = node.start_byte();
                let line_start = text[..start].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
                let line_end = text[start..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(text.len(), |i| start + i);
                println!(
                    "{}:{}: {} ({} bytes): {}",
                    path.display(),
                    node.start_position().row + 1,
                    if node.is_missing() { "missing" } else { "error" },
                    node.end_byte() - start,
                    String::from_utf8_lossy(&text[line_start..line_end]).trim()
                );
                break 'walk;
            }
            if node.has_error() && cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
    }
    println!(
        "{with_errors} of {files} files have parse errors{}",
        if raw { " (no recovery)" } else { "" }
    );
}
