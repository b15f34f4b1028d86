//! The file's items (`fn`, `const`, `static`, inline `mod`s) and the local bindings a name
//! refers to at a point.

use super::*;

impl<'t> Rx<'t> {
    pub(super) fn collect_items(&mut self, container: Node<'t>, module: &mut Vec<String>) {
        self.collect_items_in(container, module, false);
    }

    /// `associated`: the container is an `impl` block's body, whose type ends `module`.
    fn collect_items_in(&mut self, container: Node<'t>, module: &mut Vec<String>, associated: bool) {
        for item in named_children(container) {
            if is_test_item(item, self.text) {
                continue;
            }
            let public = named_children(item)
                .iter()
                .any(|c| c.kind_str() == "visibility_modifier");
            match item.kind_str() {
                "function_item" => {
                    let (Some(name), Some(body)) = (item.field("name"), item.field("body")) else {
                        continue;
                    };
                    let params: Vec<String> = item
                        .field("parameters")
                        .map(|p| {
                            named_children(p)
                                .into_iter()
                                .filter_map(|param| param.field("pattern"))
                                .map(|pattern| {
                                    let mut names = Vec::new();
                                    self.pattern_names(pattern, &mut names);
                                    names.into_iter().next().unwrap_or_default()
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    let has_params = item.field("parameters").is_some_and(|p| !named_children(p).is_empty());
                    self.items.push(Item {
                        name: self.text_of(name).to_string(),
                        name_span: span(name),
                        module: module.clone(),
                        node: item,
                        value: tail(body),
                        body: Some(body),
                        params,
                        has_params,
                        public,
                        associated,
                    });
                }
                "const_item" | "static_item" => {
                    let Some(name) = item.field("name") else {
                        continue;
                    };
                    self.items.push(Item {
                        name: self.text_of(name).to_string(),
                        name_span: span(name),
                        module: module.clone(),
                        node: item,
                        value: item.field("value"),
                        body: None,
                        params: Vec::new(),
                        has_params: false,
                        public,
                        associated,
                    });
                }
                "mod_item" => {
                    if let Some(name) = item.field("name") {
                        self.modules.push(self.text_of(name).to_string());
                    }
                    let (Some(name), Some(body)) = (item.field("name"), item.field("body")) else {
                        continue;
                    };
                    module.push(self.text_of(name).to_string());
                    self.collect_items_in(body, module, false);
                    module.pop();
                }
                // `impl Policies { pub const TRANSIENT: … }`: associated items are reached as
                // `Policies::TRANSIENT`, so the type is one more module segment. Trait impls
                // are not read: their items implement someone else's interface.
                "impl_item" if !associated && item.field("trait").is_none() => {
                    let (Some(ty), Some(body)) = (item.field("type"), item.field("body")) else {
                        continue;
                    };
                    let Some(name) = self.segments(ty).last().cloned() else {
                        continue;
                    };
                    module.push(name);
                    self.collect_items_in(body, module, true);
                    module.pop();
                }
                _ => {}
            }
        }
    }

    pub(super) fn item(&self, module: &[String], name: &str) -> Option<&Item<'t>> {
        self.items
            .iter()
            .find(|i| !i.associated && i.module == module && i.name == name)
    }

    /// An associated item of `impl ty { … }` in `module`.
    pub(super) fn associated(&self, module: &[String], ty: &str, name: &str) -> Option<&Item<'t>> {
        self.items.iter().find(|i| {
            i.associated
                && i.name == name
                && i.module.len() == module.len() + 1
                && i.module.starts_with(module)
                && i.module.last().is_some_and(|t| t == ty)
        })
    }

    /// The same-file item a path names: `name`, `self::name`, `self::Type::name` (an
    /// associated item of a type of this file).
    pub(super) fn item_of_path(&self, path: &[String], module: &[String]) -> Option<&Item<'t>> {
        match path {
            [first, name] if first == "self" => self.item(module, name),
            [first, ty, name] if first == "self" => self.associated(module, ty, name),
            _ => None,
        }
    }

    /// The type of the `impl` block around `node`, for `Self::…` and `self.…`.
    pub(super) fn impl_type(&self, node: Node<'t>) -> Option<String> {
        let mut current = node.parent();
        while let Some(parent) = current {
            if parent.kind_str() == "impl_item" {
                return parent.field("type").and_then(|t| self.segments(t).last().cloned());
            }
            current = parent.parent();
        }
        None
    }

    pub(super) fn pattern_names(&self, pattern: Node, out: &mut Vec<String>) {
        if pattern.kind_str() == "identifier" {
            out.push(self.text_of(pattern).to_string());
            return;
        }
        for child in named_children(pattern) {
            // `Point { x, .. }`: field names are bindings, type names are not.
            if matches!(
                child.kind_str(),
                "type_identifier" | "scoped_type_identifier" | "scoped_identifier"
            ) {
                continue;
            }
            self.pattern_names(child, out);
        }
    }

    /// What `name`, used at `at`, is bound to: the nearest earlier `let` of an enclosing
    /// block, or a parameter of the enclosing closure or function.
    pub(super) fn local(&self, at: Node<'t>, name: &str) -> Local<'t> {
        let position = at.start_byte();
        let mut current = at.parent();
        while let Some(node) = current {
            match node.kind_str() {
                "block" => {
                    let found = named_children(node)
                        .into_iter()
                        .rev()
                        .filter(|c| c.kind_str() == "let_declaration" && c.end_byte() <= position)
                        .find(|c| {
                            let mut names = Vec::new();
                            if let Some(pattern) = c.field("pattern") {
                                self.pattern_names(pattern, &mut names);
                            }
                            names.iter().any(|n| n == name)
                        });
                    if let Some(declaration) = found {
                        let pattern = declaration.field("pattern");
                        return match (declaration.field("value"), pattern) {
                            (Some(value), Some(pattern)) if pattern.kind_str() == "identifier" => Local::Let {
                                value,
                                pattern: span(pattern),
                            },
                            _ => Local::Param,
                        };
                    }
                }
                "closure_expression" => {
                    let mut names = Vec::new();
                    if let Some(params) = node.field("parameters") {
                        self.pattern_names(params, &mut names);
                    }
                    if names.iter().any(|n| n == name) {
                        return Local::Param;
                    }
                }
                "match_arm" | "for_expression" | "let_condition" | "if_let_expression" => {
                    let mut names = Vec::new();
                    if let Some(pattern) = node.field("pattern") {
                        self.pattern_names(pattern, &mut names);
                    }
                    if names.iter().any(|n| n == name) {
                        return Local::Param;
                    }
                }
                "function_item" => {
                    let mut names = Vec::new();
                    if let Some(params) = node.field("parameters") {
                        self.pattern_names(params, &mut names);
                    }
                    return if names.iter().any(|n| n == name) {
                        Local::Param
                    } else {
                        Local::None
                    };
                }
                _ => {}
            }
            current = node.parent();
        }
        Local::None
    }
}
