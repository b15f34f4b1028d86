//! A module's interface: imports, exports and top-level bindings.

use super::*;

impl<'t> Extractor<'t, '_> {
    pub(super) fn module_items(&mut self, root: Node<'t>) {
        let mut cursor = root.walk();
        for item in root.named_children(&mut cursor) {
            match item.kind_str() {
                "import_statement" => self.import_statement(item),
                "export_statement" => self.export_statement(item),
                _ => {
                    self.declaration(item);
                }
            }
        }
        self.facts.uses_effect = self.facts.imports.iter().any(|i| is_effect_source(&i.source));
    }

    pub(super) fn import_statement(&mut self, node: Node<'t>) {
        let Some(source) = node.field("source").map(|s| string_value(self.text_of(s))) else {
            return;
        };
        let type_only = has_token_child(node, "type");
        let mut cursor = node.walk();
        for clause in node.named_children(&mut cursor) {
            if clause.kind_str() != "import_clause" {
                continue;
            }
            let mut inner = clause.walk();
            for part in clause.named_children(&mut inner) {
                match part.kind_str() {
                    "identifier" => self.push_import(self.text_of(part), ImportKind::Default, &source, type_only, part),
                    "namespace_import" => {
                        if let Some(name) = first_named_child_of_kind(part, "identifier") {
                            self.push_import(self.text_of(name), ImportKind::Namespace, &source, type_only, part);
                        }
                    }
                    "named_imports" => {
                        let mut specs = part.walk();
                        for spec in part.named_children(&mut specs) {
                            if spec.kind_str() != "import_specifier" {
                                continue;
                            }
                            let Some(name) = spec.field("name") else {
                                continue;
                            };
                            let imported = string_value(self.text_of(name));
                            let local = spec
                                .field("alias")
                                .map(|a| self.text_of(a).to_string())
                                .unwrap_or_else(|| imported.clone());
                            let spec_type_only = type_only || has_token_child(spec, "type");
                            self.push_import(&local, ImportKind::Named(imported), &source, spec_type_only, spec);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    pub(super) fn push_import(&mut self, local: &str, kind: ImportKind, source: &str, type_only: bool, node: Node) {
        self.facts.imports.push(Import {
            local: local.to_string(),
            kind,
            source: source.to_string(),
            type_only,
            span: Self::span(node),
            via: None,
            via_kind: None,
        });
    }

    pub(super) fn export_statement(&mut self, node: Node<'t>) {
        let source = node.field("source").map(|s| string_value(self.text_of(s)));
        if let Some(declaration) = node.field("declaration") {
            for name in self.declaration(declaration) {
                self.facts.exports.push(Export::Local {
                    name: name.clone(),
                    local: name,
                });
            }
            return;
        }
        if let Some(value) = node.field("value") {
            let value = self.expr(value, 0);
            self.facts.bindings.push(Binding {
                name: "default".into(),
                span: Self::span(node),
                value,
            });
            self.facts.exports.push(Export::Local {
                name: "default".into(),
                local: "default".into(),
            });
            return;
        }
        let mut cursor = node.walk();
        let mut saw_clause = false;
        for child in node.named_children(&mut cursor) {
            match child.kind_str() {
                "export_clause" => {
                    saw_clause = true;
                    let mut specs = child.walk();
                    for spec in child.named_children(&mut specs) {
                        let Some(name) = spec.field("name") else {
                            continue;
                        };
                        let local = string_value(self.text_of(name));
                        let exported = spec
                            .field("alias")
                            .map(|a| string_value(self.text_of(a)))
                            .unwrap_or_else(|| local.clone());
                        self.facts.exports.push(match &source {
                            Some(source) => Export::Named {
                                name: exported,
                                imported: local,
                                source: source.clone(),
                            },
                            None => Export::Local { name: exported, local },
                        });
                    }
                }
                "namespace_export" => {
                    saw_clause = true;
                    if let (Some(source), Some(name)) = (&source, child.named_child(0)) {
                        self.facts.exports.push(Export::Namespace {
                            name: string_value(self.text_of(name)),
                            source: source.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
        if !saw_clause {
            if let Some(source) = source {
                self.facts.exports.push(Export::Star { source });
            }
        }
    }

    /// Records the top-level bindings a declaration introduces; returns their names.
    pub(super) fn declaration(&mut self, node: Node<'t>) -> Vec<String> {
        let mut names = Vec::new();
        match node.kind_str() {
            "lexical_declaration" | "variable_declaration" => {
                let mut cursor = node.walk();
                for declarator in node.named_children(&mut cursor) {
                    if declarator.kind_str() != "variable_declarator" {
                        continue;
                    }
                    let Some(name) = declarator.field("name") else {
                        continue;
                    };
                    if name.kind_str() != "identifier" {
                        continue;
                    }
                    // Module state a "since the last run" cursor can live in.
                    let is_let = node.child(0).is_some_and(|kw| kw.kind_str() == "let");
                    let is_map = declarator.field("value").is_some_and(|v| is_new_map(self, v));
                    if is_let || is_map {
                        self.module_state.push((self.text_of(name), is_map));
                    }
                    let value = match declarator.field("value") {
                        Some(value) => self.expr(value, 0),
                        None => Expr::Opaque(Self::span(declarator)),
                    };
                    let name = self.text_of(name).to_string();
                    self.facts.bindings.push(Binding {
                        name: name.clone(),
                        span: Self::span(declarator),
                        value,
                    });
                    names.push(name);
                }
            }
            "function_declaration" | "generator_function_declaration" => {
                if let Some(name) = node.field("name") {
                    let value = self.function_expr(node);
                    let name = self.text_of(name).to_string();
                    self.facts.bindings.push(Binding {
                        name: name.clone(),
                        span: Self::span(node),
                        value,
                    });
                    names.push(name);
                }
            }
            "class_declaration" | "abstract_class_declaration" | "enum_declaration" => {
                if let Some(name) = node.field("name") {
                    let name = self.text_of(name).to_string();
                    self.facts.bindings.push(Binding {
                        name: name.clone(),
                        span: Self::span(node),
                        value: Expr::Opaque(Self::span(node)),
                    });
                    names.push(name);
                }
            }
            _ => {}
        }
        names
    }
}

/// `new Map()` (the global `Map`).
pub(super) fn is_new_map(extractor: &Extractor, value: Node) -> bool {
    value.kind_str() == "new_expression"
        && value
            .field("constructor")
            .is_some_and(|c| extractor.text_of(c) == "Map")
}
