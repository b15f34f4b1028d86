//! The prefilter's keep rate and recall (bench/prefilter_recall.sh); see `recall.rs` for what
//! counts as a file with facts.
//!
//! `cargo run --release --example prefilter_recall -- DIR [--list-dropped] [--list-kept]`
//! Prints `files=N kept=N keep_rate=R kept_without_facts=N with_facts=N parsed=N
//! read_on_demand=N dropped_with_facts=N` (`parsed`: files a check with the prefilter parses,
//! the kept ones and those the demand stage reads; `read_on_demand`: files with facts the
//! prefilter drops and the demand stage reads) and `kept_by: REASON=N ...` (what made the
//! prefilter keep its files: `extract::Because`), with `--list-dropped` each dropped file that
//! holds facts (`dropped: PATH: WHAT`), with `--list-kept` each kept file with the word that
//! kept it and why (`kept: PATH: WORD REASON: WHAT`), with `--list-read` each file the demand
//! stage parses though the prefilter drops it (`read: PATH: WHAT`). Exits 1 when a file with
//! facts is dropped and not read.

mod recall;

use std::path::PathBuf;

fn main() {
    let (mut list_dropped, mut list_kept, mut list_read) = (false, false, false);
    let mut dirs = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--list-dropped" => list_dropped = true,
            "--list-kept" => list_kept = true,
            "--list-read" => list_read = true,
            _ => dirs.push(PathBuf::from(arg)),
        }
    }
    let [dir] = dirs.as_slice() else {
        eprintln!("usage: prefilter_recall DIR [--list-dropped] [--list-kept] [--list-read]");
        std::process::exit(2);
    };
    let recall = recall::measure(dir).unwrap_or_else(|e| {
        eprintln!("prefilter_recall: {e}");
        std::process::exit(2)
    });
    println!("{}", recall.line());
    println!("kept_by: {}", recall.reasons());
    let shown = |path: &std::path::Path| retrylint::source::printable::path(path);
    if list_dropped {
        for file in recall.dropped() {
            println!("dropped: {}: {}", shown(&file.path), file.holds.join(", "));
        }
    }
    if list_kept {
        for file in recall.files.iter().filter(|f| f.kept) {
            let why = file
                .why
                .as_ref()
                .map_or(String::new(), |w| format!("{:?} {:?}", w.word, w.because));
            println!("kept: {}: {why}: {}", shown(&file.path), file.holds.join(", "));
        }
    }
    if list_read {
        for file in recall.files.iter().filter(|f| !f.kept && f.read) {
            println!("read: {}: {}", shown(&file.path), file.holds.join(", "));
        }
    }
    if !recall.dropped().is_empty() {
        std::process::exit(1);
    }
}
