//! The code blocks of a rule's doc (`rules/<name>.md`): the examples its tests execute, in
//! the crate's rule tester (`cargo test <rule>`) and in tests/rule_docs.rs. Each block says
//! its section, the path it is checked at (`path=`, else `src/example.<ext>`), whether it is
//! `context` written beside every example, which example an `after=N` block shows fixed, and
//! the `effect` version of its package (`effect=`).

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
