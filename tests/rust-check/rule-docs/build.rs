//! Writes every ```rust block of `rules/*.md` to `OUT_DIR/blocks/` as a module of its own, and
//! `OUT_DIR/blocks.rs` declaring them. A block's file is named after its doc and the doc's line
//! of the block's first line (`retry-in-repository.md.42.rs`), and holds the block verbatim, so
//! a compiler error at line N of it is line 42 + N - 1 of the doc. The stubs a snippet takes
//! from the rest of a service come from `src/prelude.rs`, glob-imported after the block's own
//! text (a block's own items and `use`s win over a glob).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // The manifest directory of this run, not of the build that compiled the script (a target
    // directory copied from another checkout would read that checkout's docs).
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let rules = Path::new(&manifest).join("../../../rules");
    println!("cargo:rerun-if-changed={}", rules.display());
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dir = out.join("blocks");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("OUT_DIR is writable");
    let mut docs: Vec<_> = std::fs::read_dir(&rules)
        .unwrap_or_else(|e| panic!("{}: {e}", rules.display()))
        .map(|entry| entry.expect("a readable directory").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    let mut declarations = String::new();
    let mut count = 0;
    for doc in &docs {
        let name = doc.file_name().unwrap().to_str().expect("a UTF-8 name");
        let text = std::fs::read_to_string(doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        let mut lines = text.lines().enumerate();
        while let Some((_, line)) = lines.next() {
            let Some(info) = line.strip_prefix("```") else { continue };
            let rust = info.split_whitespace().next() == Some("rust");
            let mut first = None;
            let mut code = String::new();
            for (at, line) in lines.by_ref() {
                if line.starts_with("```") {
                    break;
                }
                first.get_or_insert(at + 1);
                code.push_str(line);
                code.push('\n');
            }
            let (true, Some(first)) = (rust, first) else { continue };
            code.push_str("\n#[allow(unused_imports)]\nuse crate::prelude::*;\n");
            let file = dir.join(format!("{name}.{first}.rs"));
            std::fs::write(&file, code).expect("OUT_DIR is writable");
            let module = format!("{}_{first}", name.trim_end_matches(".md").replace('-', "_"));
            writeln!(declarations, "/// rules/{name}, the block from line {first}: `{info}`").unwrap();
            writeln!(
                declarations,
                "#[path = {:?}]\nmod {module};",
                file.display().to_string()
            )
            .unwrap();
            count += 1;
        }
    }
    assert!(count > 0, "no ```rust block in {}", rules.display());
    std::fs::write(out.join("blocks.rs"), declarations).expect("OUT_DIR is writable");
}
