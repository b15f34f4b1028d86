//! Rust crate paths: a path to a named policy (`crate::retry::transient`, `super::retry::X`,
//! through inline `mod`s) to the file and item that define it, by the crate's module layout.

use std::path::{Path, PathBuf};

use super::{FileId, Index};
use crate::facts::{RustPath, RustPolicy};

impl Index {
    /// The policy a path names: a `fn` without parameters, a `const` or a `static` of this crate.
    pub fn resolve_rust(&self, file: FileId, path: &RustPath) -> Option<(FileId, &RustPolicy)> {
        let (root, file_module) = crate_module(&self.files[file].absolute)?;
        let mut here = file_module;
        here.extend(path.module.iter().cloned());
        let segments = &path.segments;
        let full: Vec<String> = match segments.first()?.as_str() {
            "crate" => segments[1..].to_vec(),
            "self" => {
                let mut full = here;
                full.extend(segments[1..].iter().cloned());
                full
            }
            "super" => {
                let supers = segments.iter().take_while(|s| *s == "super").count();
                for _ in 0..supers {
                    here.pop()?;
                }
                here.extend(segments[supers..].iter().cloned());
                here
            }
            _ => return None,
        };
        let (name, module) = full.split_last()?;
        for split in (0..=module.len()).rev() {
            for candidate in module_files(&root, &module[..split]) {
                let Some(target) = self.file_id(&candidate) else {
                    continue;
                };
                let Some(facts) = self.facts(target) else {
                    continue;
                };
                if let Some(policy) = facts
                    .rust_policies
                    .iter()
                    .find(|p| p.module == module[split..] && &p.name == name)
                {
                    return Some((target, policy));
                }
            }
        }
        None
    }
}

/// The crate's source root (the nearest `src` directory above the file, else the file's own
/// directory) and the file's module path below it.
fn crate_module(absolute: &Path) -> Option<(PathBuf, Vec<String>)> {
    let root = absolute
        .ancestors()
        .skip(1)
        .find(|a| a.file_name().is_some_and(|n| n == "src"))
        .or_else(|| absolute.parent())?
        .to_path_buf();
    let relative = absolute.strip_prefix(&root).ok()?;
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?.to_string();
    let module = match stem.as_str() {
        "lib" | "main" if parts.is_empty() => Vec::new(),
        "mod" => parts,
        _ => {
            parts.push(stem);
            parts
        }
    };
    Some((root, module))
}

/// Where a module's file can be: `a/b.rs`, `a/b/mod.rs`; the root is `lib.rs` or `main.rs`.
fn module_files(root: &Path, module: &[String]) -> Vec<PathBuf> {
    if module.is_empty() {
        return vec![root.join("lib.rs"), root.join("main.rs")];
    }
    let dir: PathBuf = module.iter().collect();
    let mut file = root.join(&dir);
    file.set_extension("rs");
    vec![file, root.join(dir).join("mod.rs")]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_follow_the_layout() {
        let m = |p: &str| crate_module(Path::new(p)).map(|(root, m)| (root.display().to_string(), m.join("::")));
        assert_eq!(m("/x/src/lib.rs"), Some(("/x/src".into(), "".into())));
        assert_eq!(m("/x/src/retry.rs"), Some(("/x/src".into(), "retry".into())));
        assert_eq!(
            m("/x/src/infra/retry/mod.rs"),
            Some(("/x/src".into(), "infra::retry".into()))
        );
        assert_eq!(
            m("/x/src/orders/repository.rs"),
            Some(("/x/src".into(), "orders::repository".into()))
        );
        assert_eq!(m("/x/tests/it.rs"), Some(("/x/tests".into(), "it".into())));
    }
}
