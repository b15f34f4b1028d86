//! The prefilter's keep rate and recall on one project (shared by the `prefilter_recall`
//! example and `tests/prefilter_recall.rs`): discovers it as `retrylint check` does (its
//! `retrylint.toml`, else the defaults), loads it as `--no-prefilter` does (every file parsed,
//! read again with the Effect aliases the index finds), and asks the prefilter of the enabled
//! rules whether it keeps each file. A file holds facts when a rule reads something of its own
//! there: a retry site or retrying client, a job, a cron repeat, a cursor storing the current
//! time, a poll loop, a Rust policy, an RS2 policy, call or `$_retry`, a suppression, or SQL
//! naming a lease table or column. Generated files (skipped before the prefilter is asked) and retry modules (parsed
//! whatever the prefilter says) are not counted.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use retrylint::check::{enabled_rules, prefilter_for, CheckOptions};
use retrylint::extract::{Kept, Relevance, Trigger};
use retrylint::facts::{CursorKind, FileFacts};

/// One file: its path as discovered, whether the prefilter keeps it, whether a check with the
/// prefilter reads it (kept, or asked for by the demand stage: an RS2 tenant's policy reads
/// every document below it), what it holds.
pub struct Verdict {
    pub path: PathBuf,
    pub kept: bool,
    /// Why the prefilter keeps it.
    pub why: Option<Kept>,
    pub read: bool,
    pub holds: Vec<&'static str>,
}

pub struct Recall {
    pub files: Vec<Verdict>,
}

impl Recall {
    pub fn kept(&self) -> usize {
        self.files.iter().filter(|f| f.kept).count()
    }

    pub fn with_facts(&self) -> usize {
        self.files.iter().filter(|f| !f.holds.is_empty()).count()
    }

    /// Files with facts that the prefilter drops and no resolution asks for: each one a miss.
    pub fn dropped(&self) -> Vec<&Verdict> {
        self.files
            .iter()
            .filter(|f| !f.kept && !f.read && !f.holds.is_empty())
            .collect()
    }

    /// Files with facts that the prefilter drops and the demand stage reads.
    pub fn on_demand(&self) -> usize {
        self.files
            .iter()
            .filter(|f| !f.kept && f.read && !f.holds.is_empty())
            .count()
    }

    /// Files the prefilter keeps that hold no facts (the parses it could save).
    pub fn kept_without_facts(&self) -> usize {
        self.files.iter().filter(|f| f.kept && f.holds.is_empty()).count()
    }

    /// Files a check with the prefilter parses: those it keeps and those the demand stage reads.
    pub fn read(&self) -> usize {
        self.files.iter().filter(|f| f.kept || f.read).count()
    }

    /// `files=N kept=N keep_rate=R kept_without_facts=N with_facts=N parsed=N
    /// read_on_demand=N dropped_with_facts=N`
    pub fn line(&self) -> String {
        let files = self.files.len();
        format!(
            "files={files} kept={} keep_rate={:.3} kept_without_facts={} with_facts={} parsed={} \
             read_on_demand={} dropped_with_facts={}",
            self.kept(),
            self.kept() as f64 / files.max(1) as f64,
            self.kept_without_facts(),
            self.with_facts(),
            self.read(),
            self.on_demand(),
            self.dropped().len()
        )
    }

    /// How many kept files each reason kept: `because=N` pairs, most first.
    pub fn reasons(&self) -> String {
        let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
        for why in self.files.iter().filter_map(|f| f.why.as_ref()) {
            *counts.entry(format!("{:?}", why.because)).or_default() += 1;
        }
        let mut counts: Vec<_> = counts.into_iter().collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        counts
            .iter()
            .map(|(k, n)| format!("{k}={n}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

pub fn measure(dir: &Path) -> Result<Recall, String> {
    use retrylint::workspace::{find_config, ConfigChoice, Workspace};
    let paths = vec![dir.to_path_buf()];
    let config = find_config(ConfigChoice::default(), &paths).map_err(|e| format!("{e:?}"))?;
    // The facts of `--no-prefilter`: every file parsed, with the Effect aliases the index found.
    let workspace = Workspace::discover(config.clone(), &paths).map_err(|e| format!("{e:?}"))?;
    let configs = workspace.configs.clone();
    let (index, _) = workspace.load(None);
    let enabled = enabled_rules(&configs, &CheckOptions::new(paths.clone()));
    let prefilter = prefilter_for(&configs.root, &enabled, true).ok_or("no prefilter")?;
    // What a check with the prefilter reads: the files it keeps, and those resolution asks for.
    let mut triggers: Vec<Trigger> = enabled
        .iter()
        .flat_map(|(rule, _)| rule.triggers.iter().copied())
        .collect();
    triggers.sort_by_key(|t| *t as u8);
    triggers.dedup();
    let (filtered, _) = Workspace::discover(config, &paths)
        .map_err(|e| format!("{e:?}"))?
        .load(Some(&triggers));
    let read: HashSet<&Path> = (0..filtered.len())
        .filter(|&f| filtered.loaded(f).is_some_and(|facts| facts.parsed))
        .map(|f| filtered.files[f].path.as_path())
        .collect();
    let lease_names: Vec<String> = configs
        .all()
        .flat_map(|c| c.lease_tables.iter().chain(&c.lease_columns))
        .map(|n| n.to_ascii_lowercase())
        .chain(["last_slot".to_string()])
        .collect();
    let mut files: Vec<Verdict> = (0..index.len())
        .into_par_iter()
        .filter_map(|id| {
            // Generated code (skipped before the prefilter is asked) and unreadable files.
            let facts = index.loaded(id).filter(|_| !index.is_retry_module(id))?;
            let file = &index.files[id];
            let config = configs.for_path(&file.absolute);
            let text = retrylint::files::read_file(&file.absolute, config.max_file_size, false).ok()?;
            let read = read.contains(file.path.as_path());
            // A file kept only through its aliases is kept when the index found one of them
            // re-exports Effect (and then read).
            let why = match prefilter.relevance(file.language, &text).0 {
                Relevance::Kept => prefilter.why(file.language, &text),
                Relevance::ThroughAliases(_) if read => prefilter.why(file.language, &text),
                _ => None,
            };
            Some(Verdict {
                path: file.path.clone(),
                kept: why.is_some(),
                why,
                read,
                holds: holds(facts, &lease_names),
            })
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Recall { files })
}

/// What of its own a rule reads in the file.
fn holds(facts: &FileFacts, lease_names: &[String]) -> Vec<&'static str> {
    let lease_sql = facts.sql.iter().any(|sql| {
        let text = sql.text.to_ascii_lowercase();
        lease_names
            .iter()
            .any(|n| text.contains(n.as_str()) || text.contains(&n.replace('_', "")))
    });
    // A Rust policy built here (a library's constructor, whose names the prefilter knows); a
    // function that only names another (`fn main() { tauri_build::build() }`, a call of a
    // project factory) is a policy only if what it names is one, and then a use of it is
    // followed into this file by the demand stage: no fact of its own.
    let own_rust_policy = facts.rust_policies.iter().any(|policy| {
        !matches!(
            policy.value.base,
            retrylint::facts::RustBase::Named(_) | retrylint::facts::RustBase::Call { .. }
        )
    });
    // A cursor is read (`since-last-run-cursor`) with the current time stored in it.
    let stored_now = facts
        .cursors
        .iter()
        .any(|c| matches!(c.kind, CursorKind::SetNow | CursorKind::GetAndSetNow));
    [
        (!facts.retry_sites.is_empty(), "retry sites"),
        (!facts.retrying_clients.is_empty(), "retrying clients"),
        (!facts.jobs.is_empty(), "jobs"),
        (!facts.cron_repeats.is_empty(), "cron repeats"),
        (stored_now, "cursors of a stored time"),
        (!facts.polls.is_empty(), "polls"),
        (own_rust_policy, "Rust policies"),
        (!facts.rs2.is_empty(), "RS2"),
        (!facts.suppressions.is_empty(), "suppressions"),
        (lease_sql, "lease SQL"),
    ]
    .into_iter()
    .filter_map(|(has, what)| has.then_some(what))
    .collect()
}
