//! Every code block in `rules/*.md` is executed: each block under "## Example" must produce
//! exactly one finding of its rule, each block under "## Use instead" none. A block whose info
//! string says `context` is written beside every example of that doc and is not asserted. A
//! block whose info string says `effect=<version>` is checked in a package that depends on that
//! version of `effect` (a `package.json` is written beside it); without it the version is
//! unknown and every line's names are understood.

mod common;

use common::docs::{blocks, project_of, Block};

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
        let incorrect: Vec<&Block> = all
            .iter()
            .filter(|b| !b.context && b.after.is_none() && b.section == "Example")
            .collect();
        let correct: Vec<&Block> = all
            .iter()
            .filter(|b| !b.context && b.after.is_none() && b.section == "Use instead")
            .collect();
        assert!(!incorrect.is_empty(), "{name}: no incorrect example");
        assert!(!correct.is_empty(), "{name}: no correct example");
        for (block, want) in incorrect.iter().map(|b| (b, 1)).chain(correct.iter().map(|b| (b, 0))) {
            let dir = project_of(&context, block);
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

/// Every fix a rule doc shows is executed: each incorrect example is fixed with
/// `--fix --unsafe-fixes`; a fixed file must equal the doc's `after` block for it, parse
/// without a new error, no longer have the rule's finding, and not change on a second run. A
/// rule that has a fix shows at least one, before and after.
#[test]
fn every_rule_doc_fix_is_executed_idempotent_and_reparses() {
    let output = common::bin().args(["rules", "--format", "json"]).output().unwrap();
    let listing: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut fixed_examples = 0;
    for rule in listing.as_array().unwrap() {
        let name = rule["name"].as_str().unwrap();
        let has_fix = rule["fix"] != "none";
        let doc = std::fs::read_to_string(common::repo_root().join("rules").join(format!("{name}.md"))).unwrap();
        let all = blocks(&doc);
        let context: Vec<&Block> = all.iter().filter(|b| b.context).collect();
        let incorrect: Vec<&Block> = all
            .iter()
            .filter(|b| !b.context && b.after.is_none() && b.section == "Example")
            .collect();
        let afters: Vec<&Block> = all.iter().filter(|b| b.after.is_some()).collect();
        assert!(
            afters.iter().all(|b| b.section == "Fix"),
            "{name}: `after` blocks belong under ## Fix"
        );
        assert!(
            !has_fix || !afters.is_empty(),
            "{name} has a fix: its doc shows it under ## Fix with an `after` block"
        );
        assert!(
            afters
                .iter()
                .all(|b| b.after.is_some_and(|n| (1..=incorrect.len()).contains(&n))),
            "{name}: an `after=N` block names no example"
        );
        for (at, block) in incorrect.iter().enumerate() {
            let dir = project_of(&context, block);
            let fix = [".", "--no-config", "--select", name, "--fix", "--unsafe-fixes"];
            let output = common::check(dir.path(), &fix);
            assert_ne!(
                output.status.code(),
                Some(2),
                "{name}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let read = || std::fs::read_to_string(dir.path().join(&block.path)).unwrap();
            let fixed = read();
            let after = afters.iter().find(|b| b.after == Some(at + 1));
            if let Some(after) = after {
                assert_eq!(fixed, after.code, "{name}: example {} fixed", at + 1);
            }
            if fixed == block.code {
                continue;
            }
            assert!(
                after.is_some(),
                "{name}: example {} has a fix: show it with an `after={}` block",
                at + 1,
                at + 1
            );
            fixed_examples += 1;
            // It re-parses: no note of a parse error, and the rule's finding is gone.
            let (code, report) = common::check_json(dir.path(), &[".", "--no-config", "--select", name]);
            assert_ne!(code, 2);
            let notes = report["notes"].as_array().unwrap();
            assert!(
                !notes
                    .iter()
                    .any(|n| n["message"].as_str().unwrap().contains("parse error")),
                "{name}: the fixed example does not parse: {notes:#?}\n{fixed}"
            );
            let left: Vec<_> = common::findings(&report)
                .into_iter()
                .filter(|(path, _, rule)| *path == block.path && rule == name)
                .collect();
            assert!(left.is_empty(), "{name}: the fix leaves {left:?}\n{fixed}");
            assert!(
                !double_pipe(&fixed) || double_pipe(&block.code),
                "{name}: `.pipe(…).pipe(` is not idiomatic\n{fixed}"
            );
            // Idempotent: a second run changes nothing.
            common::check(dir.path(), &fix);
            assert_eq!(read(), fixed, "{name}: a second --fix changed the example");
        }
    }
    assert!(fixed_examples >= 4, "only {fixed_examples} examples were fixed");
}

/// Whether `code` pipes a `.pipe(…)` call again: `.pipe(a).pipe(b)` for `.pipe(a, b)`.
fn double_pipe(code: &str) -> bool {
    code.match_indices(".pipe(").any(|(at, open)| {
        let mut depth = 0;
        for (i, c) in code[at + open.len() - 1..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return code[at + open.len() - 1 + i + 1..].starts_with(".pipe(");
                    }
                }
                _ => {}
            }
        }
        false
    })
}

#[test]
fn double_pipes_are_told_apart() {
    assert!(double_pipe("S.spaced(1).pipe(S.upTo({ times: 2 })).pipe(S.jittered)"));
    assert!(!double_pipe("S.spaced(1).pipe(S.upTo({ times: 2 }), S.jittered)"));
    assert!(!double_pipe("S.max([a(1)]).pipe(S.jittered)"));
}

/// Every example of every rule doc, incorrect and correct, checked with every rule and fixed
/// with `--fix` and with `--fix --unsafe-fixes`: the fixes clear their findings, the fixed
/// files parse, and a second run changes nothing.
#[test]
fn every_rule_doc_example_converges_under_every_fix() {
    let output = common::bin().args(["rules", "--format", "json"]).output().unwrap();
    let listing: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut fixed = 0;
    for rule in listing.as_array().unwrap() {
        let name = rule["name"].as_str().unwrap();
        let doc = std::fs::read_to_string(common::repo_root().join("rules").join(format!("{name}.md"))).unwrap();
        let all = blocks(&doc);
        let context: Vec<&Block> = all.iter().filter(|b| b.context).collect();
        for (at, block) in all.iter().filter(|b| !b.context && b.after.is_none()).enumerate() {
            let label = format!("{name}: block {} ({}) at {}", at + 1, block.section, block.path);
            fixed += common::assert_fixes_converge(&label, &|| project_of(&context, block), &["--no-config"]);
        }
    }
    assert!(fixed >= 10, "only {fixed} fixes in the rule docs");
}
