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

/// A file whose triggers count only through an import of a project module (`P.Effect.retry`
/// with `P` from `./prelude`) is read when that module re-exports Effect, directly or through
/// another module, and not when it is a module of the project's own; a module the prefilter
/// ruled out is not read to find out what it re-exports: its code says.
#[test]
fn a_file_kept_through_its_aliases_is_read_only_if_one_re_exports_effect() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let retried = "export const run = (x: any) => P.Effect.retry(x, { times: 3 })\n";
    write("src/prelude.ts", "export * from \"./barrel\"\n");
    write("src/barrel.ts", "export * as Effect from \"effect/Effect\"\n");
    write("src/own.ts", "export const Effect = { retry: (x: any) => x }\n");
    write("src/types.ts", "export { type Options } from \"./options\"\n");
    write("src/options.ts", "export type Options = { times: number }\n");
    write(
        "src/through.ts",
        &format!("import * as P from \"./prelude\"\n{retried}"),
    );
    write("src/mine.ts", &format!("import * as P from \"./own\"\n{retried}"));
    write("src/typed.ts", &format!("import * as P from \"./types\"\n{retried}"));
    write(
        "src/ownbarrel.ts",
        "/** import { Effect } from \"effect\"; export { Effect } */\nexport * from \"./own\"\n",
    );
    write(
        "src/barrelled.ts",
        &format!("import * as P from \"./ownbarrel\"\n{retried}"),
    );
    let recall = recall::measure(dir.path()).unwrap();
    let read = |name: &str| {
        let file = recall
            .files
            .iter()
            .find(|f| f.path.ends_with(name))
            .unwrap_or_else(|| panic!("{name} not discovered"));
        file.kept || file.read
    };
    assert!(recall.dropped().is_empty(), "{}", recall.line());
    assert!(read("through.ts"), "its prelude re-exports Effect");
    assert!(!read("mine.ts"), "its module is the project's own");
    assert!(!read("typed.ts"), "its module re-exports no Effect");
    assert!(
        !read("own.ts"),
        "a module that cannot re-export is not read to find out"
    );
    assert!(!read("barrelled.ts"), "its barrel re-exports the project's own module");
    assert!(
        !read("ownbarrel.ts"),
        "a barrel the prefilter ruled out is followed by what its code re-exports, not read (its doc comment is no code)"
    );
    assert!(read("prelude.ts") && read("barrel.ts"), "the re-exports are followed");
    assert!(
        !read("options.ts"),
        "nor the modules a re-export names, past one that cannot re-export"
    );
}
