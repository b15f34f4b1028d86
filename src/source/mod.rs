//! What every stage shares about a source file: byte spans, the language, where the file
//! is, its line index, and notes about what could not be analysed. Nothing here knows any
//! other module of the crate.

mod lines;
mod paths;
pub mod printable;

use std::path::{Path, PathBuf};

pub use lines::{LineIndex, Position, TextUnit};
pub use paths::{display_path, normalize, relative_specifier};

/// A byte range into a file's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// An empty span at `offset`: where an insertion goes.
    pub fn at(offset: u32) -> Span {
        Span {
            start: offset,
            end: offset,
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn contains(self, other: Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Language {
    TypeScript,
    Tsx,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`: read with the TSX grammar, which reads JavaScript.
    JavaScript,
    /// `.svelte` and `.vue` components: their `<script>` blocks, at their own offsets.
    Svelte,
    Vue,
    Rust,
    /// `.sql` files: read for their SQL texts only.
    Sql,
    /// `.json` files: read for RS2 retry policies only.
    Json,
    /// `.yaml`/`.yml` files: read for RS2 retry policies only.
    Yaml,
}

impl Language {
    pub fn from_path(path: &Path) -> Option<Language> {
        let name = path.file_name()?.to_str()?;
        if name.ends_with(".d.ts") || name.ends_with(".d.mts") || name.ends_with(".d.cts") {
            return None;
        }
        match path.extension()?.to_str()? {
            "ts" | "mts" | "cts" => Some(Language::TypeScript),
            "tsx" => Some(Language::Tsx),
            "js" | "jsx" | "mjs" | "cjs" => Some(Language::JavaScript),
            "svelte" => Some(Language::Svelte),
            "vue" => Some(Language::Vue),
            "rs" => Some(Language::Rust),
            "sql" => Some(Language::Sql),
            "json" => Some(Language::Json),
            "yaml" | "yml" => Some(Language::Yaml),
            _ => None,
        }
    }

    /// TypeScript or JavaScript, alone or in a component: what the TypeScript extractor reads.
    pub fn is_script(self) -> bool {
        matches!(
            self,
            Language::TypeScript | Language::Tsx | Language::JavaScript | Language::Svelte | Language::Vue
        )
    }

    /// The line comment that opens a suppression in this language.
    pub fn line_comment(self) -> &'static str {
        match self {
            Language::Sql => "--",
            Language::Yaml => "#",
            _ => "//",
        }
    }
}

/// A file the pipeline looks at.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path shown to the user: relative to the current directory where possible.
    pub path: PathBuf,
    /// Canonical absolute path: the key for import resolution, globs and caches.
    pub absolute: PathBuf,
    pub language: Language,
}

/// Something the analysis could not look at, said to the user rather than silently missed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Note {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

/// 64-bit FNV-1a: stable across runs, platforms and versions (fingerprints and cache keys
/// are compared across machines).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A file's place in the list of discovered files.
pub type FileId = usize;

/// Shortens source text for a message: first line, at most `max` characters.
pub fn snippet(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    if first.chars().count() <= max && !text.trim().contains('\n') {
        return first.to_string();
    }
    let cut: String = first.chars().take(max).collect();
    format!("{cut}…")
}
