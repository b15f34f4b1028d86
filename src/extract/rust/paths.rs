//! `use` declarations: every path is expanded through them, so names count only when they
//! come from the library.

use super::*;

impl<'t> Rx<'t> {
    /// The file's `use` declarations, each found from its `use` keyword (a byte search, then
    /// one descent from the root to it) rather than by a walk over every node. A test
    /// module's `use`s are not the file's.
    pub(super) fn collect_uses(&mut self, root: Node<'t>) {
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let text = self.text;
        let use_declaration = root.language().id_for_node_kind("use_declaration", true);
        let mod_item = root.language().id_for_node_kind("mod_item", true);
        let mut read_to = 0;
        for at in memchr::memmem::find_iter(text, b"use") {
            let word = (at == 0 || !ident(text[at - 1])) && !text.get(at + 3).is_some_and(|b| ident(*b));
            if !word || at < read_to {
                continue;
            }
            let mut cursor = root.walk();
            loop {
                let node = cursor.node();
                if node.kind_id() == use_declaration {
                    read_to = node.end_byte();
                    if let Some(argument) = node.field("argument") {
                        self.use_tree(argument, &[]);
                    }
                    break;
                }
                if node.kind_id() == mod_item && is_test_item(node, text) {
                    break;
                }
                if cursor.goto_first_child_for_byte(at).is_none() || cursor.node().start_byte() > at {
                    break;
                }
            }
        }
    }

    pub(super) fn use_tree(&mut self, node: Node<'t>, prefix: &[String]) {
        match node.kind_str() {
            "identifier" | "crate" | "super" | "self" | "scoped_identifier" => {
                let mut path = prefix.to_vec();
                path.extend(self.segments(node));
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                if let Some(local) = path.last().cloned() {
                    self.uses.insert(local, path);
                }
            }
            "use_as_clause" => {
                let (Some(target), Some(alias)) = (node.field("path"), node.field("alias")) else {
                    return;
                };
                let mut path = prefix.to_vec();
                path.extend(self.segments(target));
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                let alias = self.text_of(alias).to_string();
                // `use backon::Retryable as _` brings the trait into scope without a name.
                let key = if alias == "_" {
                    format!("_{}", path.join("::"))
                } else {
                    alias
                };
                self.uses.insert(key, path);
            }
            "scoped_use_list" => {
                let mut next = prefix.to_vec();
                if let Some(path) = node.field("path") {
                    next.extend(self.segments(path));
                }
                if let Some(list) = node.field("list") {
                    self.use_tree(list, &next);
                }
            }
            "use_list" => {
                for child in named_children(node) {
                    self.use_tree(child, prefix);
                }
            }
            "use_wildcard" => {
                let mut path = prefix.to_vec();
                if let Some(inner) = named_children(node).first() {
                    path.extend(self.segments(*inner));
                }
                self.globs.push(path);
            }
            _ => {}
        }
    }

    /// `a::b::c` as `["a", "b", "c"]`.
    pub(super) fn segments(&self, node: Node) -> Vec<String> {
        match node.kind_str() {
            "scoped_identifier" | "scoped_type_identifier" => {
                let mut out = node.field("path").map(|p| self.segments(p)).unwrap_or_default();
                if let Some(name) = node.field("name") {
                    out.push(self.text_of(name).to_string());
                }
                out
            }
            "generic_type" => node.field("type").map(|t| self.segments(t)).unwrap_or_default(),
            _ => vec![self.text_of(node).to_string()],
        }
    }

    /// A path as written, with `use` declarations and glob imports applied.
    pub(super) fn expand(&self, segments: Vec<String>) -> Vec<String> {
        let Some(first) = segments.first() else {
            return segments;
        };
        if matches!(first.as_str(), "crate" | "self" | "super") {
            return segments;
        }
        if let Some(full) = self.uses.get(first) {
            let mut out = full.clone();
            out.extend(segments[1..].iter().cloned());
            return out;
        }
        if EXTERN_ROOTS.contains(&first.as_str()) {
            return segments;
        }
        for glob in &self.globs {
            if glob_names(glob).contains(&first.as_str()) {
                let mut out = glob.clone();
                out.extend(segments.iter().cloned());
                return out;
            }
        }
        // A child module or an item of this module.
        let mut out = vec!["self".to_string()];
        out.extend(segments);
        out
    }

    /// Whether an (unresolved) path leads into this crate: `crate::…`, `super::…`, or a
    /// module this file declares. Other paths are taken to name external crates.
    pub(super) fn in_crate(&self, path: &[String]) -> bool {
        match path {
            [first, ..] if first == "crate" || first == "super" => true,
            [first, module, _, ..] if first == "self" => self.modules.contains(module),
            _ => false,
        }
    }

    /// Whether one of backon's retry traits is in scope (`.retry(builder)` needs it).
    pub(super) fn backon_in_scope(&self) -> bool {
        self.uses.values().any(|path| {
            path.first().is_some_and(|c| c == "backon")
                && path.last().is_some_and(|t| BACKON_TRAITS.contains(&t.as_str()))
        }) || self.globs.iter().any(|g| g.len() == 1 && g[0] == "backon")
    }
}
