//! The prefilter's recall: every file that holds facts when every file is parsed
//! (`--no-prefilter`) is one the prefilter keeps, in every fixture project and in a generated
//! corpus (bench/gen_corpus.py).
//! bench/prefilter_recall.sh measures the same on the generated corpus and
//! on real repositories, with the keep rate.

#[path = "../examples/prefilter_recall/recall.rs"]
mod recall;

mod common;

fn projects(under: &str) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(common::repo_root().join(under))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn the_prefilter_keeps_every_fixture_file_with_facts() {
    let (mut files, mut with_facts, mut kept) = (0, 0, 0);
    for dir in projects("fixtures") {
        let recall = recall::measure(&dir).unwrap();
        let dropped: Vec<String> = recall
            .dropped()
            .iter()
            .map(|f| format!("{}: {}", f.path.display(), f.holds.join(", ")))
            .collect();
        assert!(
            dropped.is_empty(),
            "{}: {}; dropped files with facts: {dropped:#?}",
            dir.display(),
            recall.line()
        );
        files += recall.files.len();
        with_facts += recall.with_facts();
        kept += recall.kept();
    }
    // Not vacuous: the fixtures hold facts, and files without any.
    assert!(with_facts >= 50, "{with_facts} of {files} fixture files hold facts");
    assert!(kept < files, "the prefilter keeps all {files} fixture files");
}

#[test]
fn the_prefilter_keeps_every_generated_file_with_facts_and_few_others() {
    let out = tempfile::tempdir().unwrap();
    let corpus = out.path().join("corpus");
    let status = std::process::Command::new("python3")
        .arg(common::repo_root().join("bench/gen_corpus.py"))
        .arg(&corpus)
        .args(["--seed", "7", "--files", "800"])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("python3 runs bench/gen_corpus.py");
    assert!(status.success());
    let recall = recall::measure(&corpus).unwrap();
    let dropped: Vec<String> = recall
        .dropped()
        .iter()
        .map(|f| format!("{}: {}", f.path.display(), f.holds.join(", ")))
        .collect();
    let line = format!("{}; kept by {}", recall.line(), recall.reasons());
    assert!(dropped.is_empty(), "{line}; dropped files with facts: {dropped:#?}");
    // Not vacuous, and precise: the corpus plants retry code in about 2% of its files, and
    // every other file imports Effect and uses it.
    assert!(recall.with_facts() >= 5, "{line}");
    assert!(
        recall.kept_without_facts() * 20 <= recall.files.len(),
        "the prefilter keeps more than 5% of the files for nothing: {line}"
    );
}
