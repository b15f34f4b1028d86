//! The code blocks of `rules/*.md` (parsed by the crate, `retrylint::rules::doc_blocks`), and
//! projects made of them (see tests/rule_docs.rs).

#[allow(unused_imports)]
pub use retrylint::rules::doc_blocks::{blocks, Block};

/// A project of the doc's context blocks and `block`, with a package.json naming the Effect
/// version the block asks for.
pub fn project_of(context: &[&Block], block: &Block) -> tempfile::TempDir {
    let mut files: Vec<(&str, &str)> = context.iter().map(|c| (c.path.as_str(), c.code.as_str())).collect();
    files.push((&block.path, &block.code));
    let manifest = block
        .effect
        .as_ref()
        .map(|version| format!("{{\"dependencies\": {{\"effect\": \"{version}\"}}}}\n"));
    if let Some(manifest) = &manifest {
        files.push(("package.json", manifest));
    }
    super::project(&files)
}
