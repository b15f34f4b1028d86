//! What rules produce and every later stage consumes: findings with their severity, labels
//! and fixes. Plain data; the catalogue of rules lives in `rules`.

use std::fmt;

use crate::source::{FileId, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Off,
    Warning,
    Error,
}

impl Severity {
    pub fn parse(text: &str) -> Option<Severity> {
        match text {
            "error" => Some(Severity::Error),
            "warn" | "warning" => Some(Severity::Warning),
            "off" => Some(Severity::Off),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Off => "off",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a rule's fix may do, with the meaning written down once:
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixSafety {
    /// The rule offers no fix; its help line says what to do.
    None,
    /// Behaviour-preserving; `--fix` applies it.
    Safe,
    /// Changes behaviour (timing, what is retried); needs `--unsafe-fixes`.
    Unsafe,
}

/// A secondary location that explains a finding.
#[derive(Debug, Clone)]
pub struct Label {
    pub file: FileId,
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct Edit {
    pub file: FileId,
    pub span: Span,
    pub replacement: String,
}

#[derive(Debug, Clone)]
pub struct Fix {
    pub safety: FixSafety,
    pub title: String,
    pub edits: Vec<Edit>,
}

/// One finding. Messages are lowercase without a trailing period and say what goes wrong
/// in the user's terms; `help` says what to do instead.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub rule: &'static str,
    pub severity: Severity,
    pub file: FileId,
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
    pub labels: Vec<Label>,
    pub fix: Option<Fix>,
}

impl Diagnostic {
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn with_label(mut self, file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            file,
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_fix(mut self, fix: Option<Fix>) -> Diagnostic {
        self.fix = fix;
        self
    }
}

/// The candidate closest to `name` when it is a likely misspelling (an edit distance of at
/// most a third of its length, and at least 1): "did you mean `…`?".
pub fn did_you_mean<'c>(name: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let distance = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut previous = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let substitution = previous + usize::from(ca != *cb);
                previous = row[j + 1];
                row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
            }
        }
        row[b.len()]
    };
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|c| (distance(&name.to_lowercase(), c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `; did you mean `x`?` when a candidate is close to `name`, else nothing.
pub fn did_you_mean_suffix(name: &str, candidates: &[&str]) -> String {
    did_you_mean(name, candidates).map_or_else(String::new, |c| format!("; did you mean `{c}`?"))
}

#[cfg(test)]
mod did_you_mean_tests {
    #[test]
    fn suggests_a_close_name_only() {
        let names = ["inline-schedule", "uncapped-schedule", "stacked-retry"];
        assert_eq!(super::did_you_mean("inline-schedul", &names), Some("inline-schedule"));
        assert_eq!(super::did_you_mean("stacked-retries", &names), Some("stacked-retry"));
        assert_eq!(super::did_you_mean("no-such-thing", &names), None);
    }
}
