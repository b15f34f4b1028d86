//! The code blocks of `rules/*.md`, and projects made of them (see tests/rule_docs.rs).

pub struct Block {
    pub section: String,
    pub path: String,
    pub context: bool,
    /// A block under "## Fix" marked `after=N`: the text the doc's Nth example becomes with
    /// `--fix --unsafe-fixes`.
    pub after: Option<usize>,
    /// The `effect` version of the example's package.
    pub effect: Option<String>,
    pub code: String,
}

pub fn blocks(doc: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading.trim().to_string();
            continue;
        }
        let Some(info) = line.strip_prefix("```") else { continue };
        let mut words = info.split_whitespace();
        let language = words.next().unwrap_or("");
        let extension = match language {
            "tsx" | "json" | "yaml" | "js" | "jsx" | "svelte" | "vue" => language,
            _ => "ts",
        };
        let mut path = format!("src/example.{extension}");
        let mut context = false;
        let mut after = None;
        let mut effect = None;
        for word in words {
            if let Some(p) = word.strip_prefix("path=") {
                path = p.to_string();
            } else if let Some(v) = word.strip_prefix("effect=") {
                effect = Some(v.to_string());
            } else if word == "context" {
                context = true;
            } else if let Some(n) = word.strip_prefix("after=") {
                after = n.parse().ok();
            }
        }
        let code: Vec<&str> = lines.by_ref().take_while(|l| !l.starts_with("```")).collect();
        if matches!(
            language,
            "ts" | "tsx" | "js" | "jsx" | "svelte" | "vue" | "rust" | "sql" | "json" | "yaml"
        ) {
            out.push(Block {
                section: section.clone(),
                path,
                context,
                after,
                effect,
                code: code.join("\n") + "\n",
            });
        }
    }
    out
}

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
