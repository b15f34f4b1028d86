//! How a fix names another module: an import the file already has, or a new import edit in
//! the file's own style.

use crate::diagnostic::Edit;
use crate::index::{FileId, Index, Resolved};
use crate::source::{relative_specifier, Span};

/// How `file` names `module`: an existing namespace import of it (directly or through a
/// barrel's `export * as`), or a new `import * as Retry from "…"` edit.
pub fn module_reference(index: &Index, file: FileId, module: FileId) -> Option<(String, Option<Edit>)> {
    let facts = index.facts(file)?;
    for import in &facts.imports {
        if let Resolved::Namespace(target) = index.resolve_name(file, &import.local) {
            if target == module {
                return Some((import.local.clone(), None));
            }
        }
    }
    let name = ["Retry", "RetryPolicies", "Retries"]
        .into_iter()
        .find(|n| facts.import(n).is_none() && facts.binding(n).is_none())?;
    let from = index.files[file].absolute.parent()?;
    let to = &index.files[module].absolute;
    let mut specifier = relative_specifier(from, to)?;
    // Follow the file's own style: ESM `.js` specifiers or extensionless ones; a file with no
    // relative import follows its project: an ES module under node16/nodenext resolution
    // needs the extension (TS2835 without it).
    let relative: Vec<&str> = facts
        .imports
        .iter()
        .map(|i| i.source.as_str())
        .filter(|s| s.starts_with('.'))
        .collect();
    let uses_js = match relative.is_empty() {
        false => relative.iter().any(|s| s.ends_with(".js")),
        true => needs_extensions(index, file),
    };
    specifier = match specifier.rsplit_once('.') {
        Some((stem, _)) if uses_js => format!("{stem}.js"),
        Some((stem, _)) => stem.to_string(),
        None => specifier,
    };
    // The file's quotes: those of its first import's source, the first quote after a name it
    // imports.
    let quote = index
        .text(file)
        .zip(facts.imports.first())
        .and_then(|(text, import)| text.get(import.span.start as usize..))
        .and_then(|rest| rest.iter().take(400).find(|b| **b == b'"' || **b == b'\''))
        .map_or('"', |b| *b as char);
    // After the last import, or at the top.
    let insertion = facts
        .imports
        .iter()
        .map(|i| i.span.end)
        .max()
        .map_or(0, |end| facts.lines.next_line_start(end));
    Some((
        name.to_string(),
        Some(Edit {
            file,
            span: Span::at(insertion),
            replacement: format!("import * as {name} from {quote}{specifier}{quote}\n"),
        }),
    ))
}

/// Whether relative imports of `file` must name their file's extension: an ES module whose
/// project resolves as node16/nodenext.
fn needs_extensions(index: &Index, file: FileId) -> bool {
    use crate::index::tsconfig::ModuleResolution;
    let Some(project) = index.project_of(file) else {
        return false;
    };
    matches!(
        project.options.effective_resolution(),
        ModuleResolution::Node16 | ModuleResolution::NodeNext
    ) && crate::index::resolve::import_mode(index, &project.options, &index.files[file].absolute)
        == Some(crate::index::resolve::Mode::Esm)
}
