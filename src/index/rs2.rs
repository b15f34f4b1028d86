//! RS2 configuration across directories: the documents of a directory (where a call's nearest
//! tenant is looked for) and of a directory tree (every document a tenant's policy covers).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{FileId, Index};
use crate::source::Language;

impl Index {
    /// The JSON and YAML files directly in `dir`, in path order.
    pub fn config_files_in(&self, dir: &Path) -> &[FileId] {
        let by_dir = self.config_dirs.get_or_init(|| {
            let mut by_dir: HashMap<PathBuf, Vec<FileId>> = HashMap::new();
            for (id, file) in self.files.iter().enumerate() {
                if !is_config(file.language) {
                    continue;
                }
                if let Some(parent) = file.absolute.parent() {
                    by_dir.entry(parent.to_path_buf()).or_default().push(id);
                }
            }
            for files in by_dir.values_mut() {
                files.sort_by(|&a, &b| self.files[a].absolute.cmp(&self.files[b].absolute));
            }
            by_dir
        });
        by_dir.get(dir).map_or(&[], Vec::as_slice)
    }

    /// The JSON and YAML files in `dir` and below.
    pub fn config_files_under<'i>(&'i self, dir: &'i Path) -> impl Iterator<Item = FileId> + 'i {
        (0..self.files.len())
            .filter(move |&id| is_config(self.files[id].language) && self.files[id].absolute.starts_with(dir))
    }
}

fn is_config(language: Language) -> bool {
    matches!(language, Language::Json | Language::Yaml)
}
