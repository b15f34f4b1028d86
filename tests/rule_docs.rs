//! Every code block in `rules/*.md` is executed: each block under "## Example" must produce
//! exactly one finding of its rule, each block under "## Use instead" none. A block whose info
//! string says `context` is written beside every example of that doc and is not asserted. A
//! block whose info string says `effect=<version>` is checked in a package that depends on that
//! version of `effect` (a `package.json` is written beside it); without it the version is
//! unknown and every line's names are understood.

mod common;

struct Block {
    section: String,
    path: String,
    context: bool,
    /// The `effect` version of the example's package.
    effect: Option<String>,
    code: String,
}

fn blocks(doc: &str) -> Vec<Block> {
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
        let mut effect = None;
        for word in words {
            if let Some(p) = word.strip_prefix("path=") {
                path = p.to_string();
            } else if let Some(v) = word.strip_prefix("effect=") {
                effect = Some(v.to_string());
            } else if word == "context" {
                context = true;
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
                effect,
                code: code.join("\n") + "\n",
            });
        }
    }
    out
}

const REQUIRED_SECTIONS: &[&str] = &[
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Fix",
    "Options",
];

#[test]
fn every_rule_doc_example_is_executed() {
    let output = common::bin().arg("rules").output().unwrap();
    let listing = String::from_utf8(output.stdout).unwrap();
    let names: Vec<&str> = listing.lines().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert!(names.len() >= 2, "rules lists the catalogue");
    let mut executed = 0;
    for name in names {
        let path = common::repo_root().join("rules").join(format!("{name}.md"));
        let doc = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{name} has no rules/{name}.md"));
        assert!(
            doc.starts_with(&format!("# {name}\n")),
            "{name}: the doc opens with its name"
        );
        for section in REQUIRED_SECTIONS {
            assert!(
                doc.contains(&format!("\n## {section}\n")),
                "{name}: missing section `## {section}`"
            );
        }
        let all = blocks(&doc);
        let context: Vec<&Block> = all.iter().filter(|b| b.context).collect();
        let incorrect: Vec<&Block> = all.iter().filter(|b| !b.context && b.section == "Example").collect();
        let correct: Vec<&Block> = all
            .iter()
            .filter(|b| !b.context && b.section == "Use instead")
            .collect();
        assert!(!incorrect.is_empty(), "{name}: no incorrect example");
        assert!(!correct.is_empty(), "{name}: no correct example");
        for (block, want) in incorrect.iter().map(|b| (b, 1)).chain(correct.iter().map(|b| (b, 0))) {
            let mut files: Vec<(&str, &str)> = context.iter().map(|c| (c.path.as_str(), c.code.as_str())).collect();
            files.push((&block.path, &block.code));
            let manifest = block
                .effect
                .as_ref()
                .map(|version| format!("{{\"dependencies\": {{\"effect\": \"{version}\"}}}}\n"));
            if let Some(manifest) = &manifest {
                files.push(("package.json", manifest));
            }
            let dir = common::project(&files);
            let (_, report) = common::check_json(dir.path(), &[".", "--no-config", "--select", name]);
            let found = common::findings(&report);
            let found_in_block: Vec<_> = found.iter().filter(|(p, _, _)| *p == block.path).collect();
            assert_eq!(
                found_in_block.len(),
                want,
                "{name}: the `{}` block at {} should produce {want} finding(s), got {found:#?}\n{}",
                block.section,
                block.path,
                block.code
            );
            assert_eq!(found.len(), want, "{name}: findings outside the example: {found:#?}");
            executed += 1;
        }
    }
    assert!(executed >= 4);
}

#[test]
fn rule_command_prints_the_doc() {
    let output = common::bin().args(["rule", "inline-schedule"]).output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("# inline-schedule"));
    let output = common::bin().args(["rule", "no-such-rule"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown rule `no-such-rule`"));
}
