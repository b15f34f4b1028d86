//! The incremental check (the language server's, after an edit): the last check's first load
//! with the changed files loaded again, the demand stage as a full check runs it, and the
//! rules only for the files whose findings can change. The rest keep what their rules found
//! last time.
//!
//! Which files' findings can change is read off a dependency index kept between checks: the
//! import resolutions the last check and this one made (`Index::import_edges`: who imports
//! whom, re-exports included). A file whose load differs from the last check's (its text, or
//! what the demand stage read again for it: its Effect aliases, a read in full) is *changed*;
//! the files it depends on, then every file that depends on one of those, are *affected*: a
//! policy used across files is reported where it is built, with its uses as labels, and
//! judged by them. Whatever this index cannot follow falls back to every file's rules: a
//! changed file that is not a script (SQL, JSON, YAML, Rust), a workspace with parsed Rust
//! (crate paths and helper methods are resolved by name, not by import), or a retry module
//! that changed or came or went (every file's remedies name its exports). A config change, a
//! file created or deleted, or changed project files are not seen here: the caller checks
//! in full then.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;

use super::{finish, first_load, make_loader, settle, CheckOptions, Kept, Outcome};
use crate::diagnostic::{Diagnostic, Severity};
use crate::index::{FileId, Index, Loaded};
use crate::rules::Rule;
use crate::source::Note;

/// What one file's rules found: findings (before suppressions) and notes.
pub(super) type Found = (Vec<Diagnostic>, Vec<Note>);

/// What a check keeps for the next one to start from.
pub struct Carry {
    /// The first load's table, before the demand stage.
    pub(super) base: Vec<Loaded>,
    /// What each checked file's rules found (before suppressions).
    pub(super) produced: HashMap<FileId, Found>,
    /// The rules that ran, and the prefilter's key: another set of either is a full check.
    enabled: Vec<&'static str>,
    prefilter_key: u64,
    /// The retry modules the check found (configured, then inferred).
    retry_modules: Vec<FileId>,
}

impl Carry {
    pub(super) fn new(base: Vec<Loaded>, index: &Index, enabled: &[(&'static Rule, Severity)], key: u64) -> Carry {
        Carry {
            base,
            produced: HashMap::new(),
            enabled: enabled.iter().map(|(rule, _)| rule.name).collect(),
            prefilter_key: key,
            retry_modules: sorted(index.retry_modules().to_vec()),
        }
    }
}

/// What an incremental check knows of the last one, for its rule stage.
pub(super) struct Previous {
    affected: Vec<bool>,
    changed: Vec<bool>,
    produced: HashMap<FileId, Found>,
}

impl Previous {
    /// The findings of `file`'s rules last time, when they still hold: the file is not
    /// affected, and none of its findings points into a changed file.
    pub(super) fn reuse(&self, file: FileId) -> Option<&Found> {
        if self.affected[file] {
            return None;
        }
        let found = self.produced.get(&file)?;
        let touches = |d: &Diagnostic| {
            self.changed[d.file]
                || d.labels.iter().any(|l| self.changed[l.file])
                || d.fix.iter().flat_map(|f| f.edits.iter()).any(|e| self.changed[e.file])
        };
        (!found.0.iter().any(touches)).then_some(found)
    }
}

fn sorted(mut files: Vec<FileId>) -> Vec<FileId> {
    files.sort_unstable();
    files.dedup();
    files
}

/// Checks `previous`'s files again after the files at `changed` (absolute paths) changed:
/// their texts in `options.overlay`, or on disk. With `kept.trust_cache` off, every file is
/// looked at again (as a full check looks), and those whose load differs are the changed
/// ones. Gives `previous` back when it kept nothing to start from, or ran other rules.
///
/// The outcome is the full check's (`run_files` of the same files, configs and texts): the
/// same index, analysis, findings and notes.
pub fn run_again(
    mut previous: Outcome,
    changed: &[PathBuf],
    options: &CheckOptions,
    kept: &Kept,
) -> Result<Outcome, Box<Outcome>> {
    let started = Instant::now();
    let Some(carry) = previous.carry.take() else {
        return Err(Box::new(previous));
    };
    let configs = previous.index.configs().clone();
    let enabled = super::enabled_rules(&configs, options);
    let project_kept = kept
        .project
        .as_ref()
        .is_none_or(|p| std::sync::Arc::ptr_eq(p, previous.index.project_files()));
    let same_rules = enabled.iter().map(|(r, _)| r.name).eq(carry.enabled.iter().copied());
    let root = configs.root.root.clone();
    let skip_generated = |path: &std::path::Path| !configs.for_path(path).check_generated;
    let loader = make_loader(&configs, &enabled, options, kept, &root, &skip_generated);
    if !project_kept || !same_rules || loader.prefilter_key != carry.prefilter_key {
        previous.carry = Some(carry);
        return Err(Box::new(previous));
    }
    let old_edges = previous.index.import_edges();
    let Outcome { index: old, .. } = previous;
    let Carry {
        mut base,
        produced,
        retry_modules: old_retry_modules,
        ..
    } = *carry;

    // The first load again, for the files that may have changed.
    let trusted = loader.trust_cache;
    let again: Vec<FileId> = match trusted {
        true => sorted(changed.iter().filter_map(|path| old.file_id(path)).collect()),
        false => (0..old.len()).collect(),
    };
    let loads: Vec<(FileId, Loaded)> = again
        .par_iter()
        .map(|&file| (file, first_load(&old, &loader, file)))
        .collect();
    let mut changed = vec![false; old.len()];
    for (file, loaded) in loads {
        if !loaded.same_as(&base[file]) {
            changed[file] = true;
            base[file] = loaded;
        }
    }
    let (mut index, old_loaded) = old.renew(base.clone());
    if !trusted {
        // What the disk held may have changed under the resolutions.
        index.forget_resolutions();
    }
    let (index, analysis) = settle(index, &loader, None);

    // Changed: loaded otherwise than last time, in the first load or after the demand stage.
    for (file, was) in old_loaded.iter().enumerate() {
        if !changed[file] && !was.same_as(index.loaded_entry(file)) {
            changed[file] = true;
        }
    }
    let retry_modules = sorted(index.retry_modules().to_vec());
    let rust = index
        .parsed_files()
        .any(|file| index.files[file].language == crate::source::Language::Rust);
    let unfollowed = (0..index.len()).any(|file| {
        changed[file]
            && (!index.files[file].language.is_script()
                || retry_modules.binary_search(&file).is_ok()
                || old_retry_modules.binary_search(&file).is_ok())
    });
    let affected = if rust || unfollowed || retry_modules != old_retry_modules {
        vec![true; index.len()]
    } else {
        let mut edges = old_edges;
        edges.extend(index.import_edges());
        edges.sort_unstable();
        edges.dedup();
        let mut affected = affected_by(&changed, &edges);
        // Files that are not scripts are few and read across directories (RS2 documents):
        // always checked again.
        for file in index.parsed_files() {
            if !index.files[file].language.is_script() {
                affected[file] = true;
            }
        }
        affected
    };
    let previous = super::again::Previous {
        affected,
        changed,
        produced,
    };
    let carry = Carry::new(base, &index, &enabled, loader.prefilter_key);
    let out = finish(index, analysis, &enabled, options, started, Some(previous), Some(carry));
    Ok(out)
}

/// The files whose findings can change when the `changed` ones did: those, every file they
/// depend on (through `edges`, `(from, to)`, transitively), and every file that depends on
/// one of these.
fn affected_by(changed: &[bool], edges: &[(FileId, FileId)]) -> Vec<bool> {
    let n = changed.len();
    let mut forward: HashMap<FileId, Vec<FileId>> = HashMap::new();
    let mut backward: HashMap<FileId, Vec<FileId>> = HashMap::new();
    for &(from, to) in edges {
        if from < n && to < n {
            forward.entry(from).or_default().push(to);
            backward.entry(to).or_default().push(from);
        }
    }
    let reach = |start: &mut Vec<bool>, graph: &HashMap<FileId, Vec<FileId>>| {
        let mut stack: Vec<FileId> = (0..n).filter(|&f| start[f]).collect();
        while let Some(file) = stack.pop() {
            for &next in graph.get(&file).into_iter().flatten() {
                if !start[next] {
                    start[next] = true;
                    stack.push(next);
                }
            }
        }
    };
    let mut affected = changed.to_vec();
    reach(&mut affected, &forward);
    reach(&mut affected, &backward);
    affected
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::FactsCache;
    use crate::source::SourceFile;
    use std::path::Path;
    use std::sync::Arc;

    /// A project of texts held in memory, checked as the language server checks it: every
    /// file's text in the overlay, the facts kept in an in-memory cache between checks.
    struct Project {
        config: crate::config::Configs,
        files: Vec<SourceFile>,
        texts: HashMap<PathBuf, Arc<[u8]>>,
        cache: FactsCache,
    }

    impl Project {
        fn new(root: &Path, config: crate::config::Config, files: &[(&str, &str)]) -> Project {
            let mut sources: Vec<SourceFile> = files
                .iter()
                .map(|(path, _)| SourceFile {
                    path: PathBuf::from(path),
                    absolute: root.join(path),
                    language: crate::source::Language::from_path(Path::new(path)).expect("a source"),
                })
                .collect();
            sources.sort_by(|a, b| a.absolute.cmp(&b.absolute));
            Project {
                config: config.into(),
                files: sources,
                texts: files.iter().map(|(p, t)| (root.join(p), t.as_bytes().into())).collect(),
                cache: FactsCache::in_memory(),
            }
        }

        fn options(&self) -> CheckOptions {
            let mut options = CheckOptions::new(Vec::new());
            options.overlay = self.texts.clone();
            options.keep = true;
            options
        }

        fn kept(&self) -> Kept<'_> {
            Kept {
                cache: Some(&self.cache),
                project: None,
                trust_cache: true,
            }
        }

        /// The whole check, with nothing kept from before.
        fn fresh(&self) -> Outcome {
            let cache = FactsCache::in_memory();
            let kept = Kept {
                cache: Some(&cache),
                project: None,
                trust_cache: true,
            };
            super::super::run_files(self.config.clone(), self.files.clone(), &self.options(), &kept)
        }

        fn first(&self) -> Outcome {
            super::super::run_files(self.config.clone(), self.files.clone(), &self.options(), &self.kept())
        }

        fn again(&self, previous: Outcome, changed: &[PathBuf]) -> Outcome {
            match run_again(previous, changed, &self.options(), &self.kept()) {
                Ok(outcome) => outcome,
                Err(_) => panic!("the last check kept what the next one starts from"),
            }
        }
    }

    /// What a check reports, comparable across checks of the same files.
    fn report(outcome: &Outcome) -> Vec<String> {
        let mut lines: Vec<String> = outcome
            .diagnostics
            .iter()
            .map(|d| {
                let labels: Vec<_> = d.labels.iter().map(|l| outcome.index.path(l.file)).collect();
                format!("{} {d:?} labelled in {labels:?}", outcome.index.path(d.file).display())
            })
            .collect();
        lines.extend(outcome.notes.iter().map(|n| format!("note {n:?}")));
        // Not the count of files parsed: a file the demand stage once read in full is answered
        // from the facts cache in full afterwards (by a whole check too), where a check with an
        // empty cache rules it out.
        lines.push(format!("files {}", outcome.files));
        lines
    }

    const RETRY_MODULE: &str = "import { Schedule } from \"effect\"\n\
        export const standard = Schedule.exponential(\"100 millis\").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(5)))\n";
    /// Policies built outside the retry module, in a module of their own.
    const POLICIES: &str = "import { Schedule } from \"effect\"\n\
        export const slow = Schedule.exponential(\"1 second\")\n\
        export const capped = Schedule.exponential(\"1 second\").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(3)))\n";
    const BARREL: &str = "export * from \"./policies\"\n";
    const DIRECT_USER: &str = "import { Effect } from \"effect\"\n\
        import { slow } from \"./lib/policies\"\n\
        export const a = Effect.succeed(1).pipe(Effect.retry(slow))\n";
    const BARREL_USER: &str = "import { Effect } from \"effect\"\n\
        import { slow, capped } from \"./lib\"\n\
        export const b = Effect.succeed(2).pipe(Effect.retry(slow))\n\
        export const c = Effect.succeed(3).pipe(Effect.retry(capped))\n";
    const ALONE: &str = "import { Effect, Schedule } from \"effect\"\n\
        export const d = Effect.succeed(4).pipe(Effect.retry(Schedule.spaced(\"1 second\")))\n";
    const PLAIN: &str = "import { Effect } from \"effect\"\nexport const e = Effect.succeed(5)\n";

    fn project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let config = crate::config::Config::defaults(root.clone());
        let project = Project::new(
            &root,
            config,
            &[
                ("src/infra/retry.ts", RETRY_MODULE),
                ("src/lib/policies.ts", POLICIES),
                ("src/lib/index.ts", BARREL),
                ("src/direct.ts", DIRECT_USER),
                ("src/viaBarrel.ts", BARREL_USER),
                ("src/alone.ts", ALONE),
                ("src/plain.ts", PLAIN),
            ],
        );
        (dir, project)
    }

    /// The variants each file is edited into: a policy made safe or broken, an import
    /// removed, a use added or taken away, the file emptied.
    fn variants(path: &str) -> Vec<String> {
        let original = match path {
            "src/infra/retry.ts" => RETRY_MODULE,
            "src/lib/policies.ts" => POLICIES,
            "src/lib/index.ts" => BARREL,
            "src/direct.ts" => DIRECT_USER,
            "src/viaBarrel.ts" => BARREL_USER,
            "src/alone.ts" => ALONE,
            _ => PLAIN,
        };
        let mut out = vec![original.to_string(), String::new()];
        out.push(original.replace(
            "Schedule.exponential(\"1 second\")\n",
            "Schedule.exponential(\"1 second\").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(3)))\n",
        ));
        out.push(original.replace("Schedule.jittered, ", ""));
        out.push(
            original
                .lines()
                .filter(|l| !l.contains("from \"./"))
                .collect::<Vec<_>>()
                .join("\n"),
        );
        out.push(original.replace("retry(slow)", "retry(capped)"));
        out.push(format!(
            "{original}import {{ Schedule as S2 }} from \"effect\"\nexport const extra = S2.exponential(\"5 seconds\")\n"
        ));
        out.push(format!("{original}export * from \"./lib\"\n"));
        out.dedup();
        out
    }

    #[test]
    fn affected_are_the_changed_files_their_dependencies_and_their_dependants() {
        // 0 imports 1 (a barrel), which re-exports 2; 3 imports 2; 4 imports 0; 5 is alone;
        // 6 is imported by 5 only.
        let edges = [(0, 1), (1, 2), (3, 2), (4, 0), (5, 6)];
        let changed = |file: usize| (0..7).map(|f| f == file).collect::<Vec<bool>>();
        let set = |affected: Vec<bool>| (0..7).filter(|&f| affected[f]).collect::<Vec<_>>();
        // An edit of the policy's module: every file that reaches it.
        assert_eq!(set(affected_by(&changed(2), &edges)), vec![0, 1, 2, 3, 4]);
        // An edit of a user: what it uses, and every other user of that.
        assert_eq!(set(affected_by(&changed(0), &edges)), vec![0, 1, 2, 3, 4]);
        // A file nothing imports and that imports nothing: itself.
        assert_eq!(set(affected_by(&changed(5), &edges)), vec![5, 6]);
        assert_eq!(set(affected_by(&changed(6), &edges)), vec![5, 6]);
    }

    #[test]
    fn an_edit_of_a_policy_module_changes_findings_in_its_users_directly_and_through_a_barrel() {
        let (_dir, mut project) = project();
        let first = project.first();
        let before = report(&first);
        assert!(
            before
                .iter()
                .any(|l| l.starts_with("src/lib/policies.ts") && l.contains("viaBarrel")),
            "the policy's finding lists its use through the barrel: {before:#?}"
        );
        // `slow` made safe: its finding (with the uses of both users as labels) goes.
        let path = first.index.files[first
            .index
            .file_id(&first.index.config.root.join("src/lib/policies.ts"))
            .unwrap()]
        .absolute
        .clone();
        project
            .texts
            .insert(path.clone(), variants("src/lib/policies.ts")[2].as_bytes().into());
        let again = project.again(first, std::slice::from_ref(&path));
        assert_eq!(report(&again), report(&project.fresh()));
        assert_ne!(report(&again), before, "the edit changed the findings");
        // Only the module, its barrel and the files that reach it were checked again.
        assert!(
            again.rechecked < again.parsed,
            "{} of {}",
            again.rechecked,
            again.parsed
        );
    }

    #[test]
    fn after_random_edits_the_incremental_check_is_the_full_one() {
        let seeds: Vec<u64> = match std::env::var("RETRYLINT_INCREMENTAL_SEED") {
            Ok(seed) => vec![seed.parse().expect("a number")],
            Err(_) => vec![1, 2, 3, 4, 5],
        };
        let paths = [
            "src/infra/retry.ts",
            "src/lib/policies.ts",
            "src/lib/index.ts",
            "src/direct.ts",
            "src/viaBarrel.ts",
            "src/alone.ts",
            "src/plain.ts",
        ];
        let mut skipped = 0;
        for seed in seeds {
            let (dir, mut project) = project();
            let root = dir.path().canonicalize().unwrap();
            let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let mut next = |n: usize| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % n as u64) as usize
            };
            let mut outcome = project.first();
            for step in 0..25 {
                // One to two files edited at once.
                let mut changed = Vec::new();
                for _ in 0..1 + next(2) {
                    let path = paths[next(paths.len())];
                    let variants = variants(path);
                    let text = &variants[next(variants.len())];
                    let absolute = root.join(path);
                    project.texts.insert(absolute.clone(), text.as_bytes().into());
                    changed.push(absolute);
                }
                outcome = project.again(outcome, &changed);
                skipped += outcome.parsed - outcome.rechecked;
                assert_eq!(
                    report(&outcome),
                    report(&project.fresh()),
                    "seed {seed}, step {step}, after editing {changed:?}"
                );
            }
        }
        assert!(skipped > 0, "some edits left some files' findings as they were");
    }
}
