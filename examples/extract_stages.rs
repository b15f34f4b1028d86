//! Where extraction's time goes, per stage, over every file of a directory (single-threaded,
//! so the numbers are CPU time): read, parse, parse with recovery, full extraction.
//!
//! `cargo run --release --example extract_stages -- DIR [parse|recover|extract]`: with a stage,
//! only that stage runs (for `valgrind --tool=callgrind`, whose instruction counts are steady
//! when the machine is not).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use retrylint::extract::{extract_file, parse, parse_recovering};
use retrylint::source::Language;

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).expect("usage: extract_stages DIR [STAGE]"));
    let only = std::env::args().nth(2);
    let mut files = Vec::new();
    for entry in ignore::WalkBuilder::new(&dir)
        .filter_entry(|e| e.file_name() != "node_modules")
        .build()
        .flatten()
    {
        if let Some(language) = Language::from_path(entry.path()) {
            if let Ok(text) = std::fs::read(entry.path()) {
                if text.len() <= 1_048_576 {
                    files.push((language, text));
                }
            }
        }
    }
    let time = |f: &dyn Fn(Language, &[u8])| {
        let started = Instant::now();
        for (language, text) in &files {
            f(*language, text);
        }
        started.elapsed()
    };
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    if let Some(stage) = only {
        let took = match stage.as_str() {
            "parse" => time(&|l, t| drop(parse(l, t))),
            "recover" => time(&|l, t| drop(parse_recovering(l, t))),
            "extract" => time(&|l, t| drop(extract_file(l, t))),
            other => panic!("unknown stage {other}"),
        };
        println!("{stage}={:.0}ms", ms(took));
        return;
    }
    let parse_ms = time(&|l, t| drop(parse(l, t)));
    let recover_ms = time(&|l, t| drop(parse_recovering(l, t)));
    let extract_ms = time(&|l, t| drop(extract_file(l, t)));
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    println!(
        "files={} bytes={bytes} parse={:.0}ms parse+recovery={:.0}ms extract={:.0}ms extract/parse={:.2}",
        files.len(),
        ms(parse_ms),
        ms(recover_ms),
        ms(extract_ms),
        ms(extract_ms) / ms(parse_ms)
    );
}
