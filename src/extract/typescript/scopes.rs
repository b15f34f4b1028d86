//! The walk over the tree, and the scopes it keeps: lexical scopes (for locals and
//! parameters) and named containers (classes, functions, layers, `Effect.fn`s, handler
//! registrations) that say what a fact is "inside".

use super::*;

impl<'t> Extractor<'t, '_> {
    pub(super) fn walk(&mut self, root: Node<'t>) {
        let mut cursor = root.walk();
        loop {
            let node = cursor.node();
            // Punctuation and keywords are half of all nodes and hold no fact: step over them,
            // and over subtrees holding no word a fact starts from (a declaration is still
            // entered: its locals are visible to what follows it).
            let named = node.is_named() && (self.holds_mark(node) || declares(node));
            let descend = named && self.enter(node);
            if descend && cursor.goto_first_child() {
                continue;
            }
            if named {
                self.leave();
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                self.leave();
            }
        }
    }

    /// Whether `node`'s text holds a mark (see `marks`).
    fn holds_mark(&self, node: Node<'t>) -> bool {
        let start = node.start_byte() as u32;
        let at = self.marks.partition_point(|&m| m < start);
        self.marks.get(at).is_some_and(|&m| m < node.end_byte() as u32)
    }

    pub(super) fn leave(&mut self) {
        self.lineage.pop();
        let frame = self.frames.pop().unwrap_or_default();
        if frame.scope {
            self.scopes.close();
        }
        if frame.container {
            self.containers.pop();
        }
    }

    /// Called before a node's children; returns whether to visit them.
    pub(super) fn enter(&mut self, node: Node<'t>) -> bool {
        self.lineage.push(node);
        self.blocks.visit(self.lineage.path());
        let mut frame = Frame::default();
        let mut descend = true;
        self.job_and_sql_facts(node);
        match node.kind_str() {
            // Clean subtrees inside an error node are still code and are walked; only the
            // tokens the parser could not place are "not analysed".
            "ERROR" => self.note_error_region(node),
            "comment"
            | "string"
            | "template_string"
            | "import_statement"
            | "type_annotation"
            | "interface_declaration"
            | "type_alias_declaration" => descend = false,
            "statement_block" | "class_body" => {
                self.scopes.open(Vec::new());
                frame.scope = true;
            }
            "arrow_function"
            | "function_expression"
            | "generator_function"
            | "function_declaration"
            | "generator_function_declaration"
            | "method_definition" => {
                let params = self.param_names(node);
                self.scopes.open(params);
                frame.scope = true;
                if let Some(name) = node.field("name").filter(|_| node.kind_str() != "arrow_function") {
                    if !node.kind_str().ends_with("expression") && node.kind_str() != "generator_function" {
                        self.containers
                            .push((ContainerKind::Function, std::borrow::Cow::Borrowed(self.text_of(name))));
                        frame.container = true;
                    }
                }
            }
            "class_declaration" | "abstract_class_declaration" | "class" => {
                if let Some(name) = node.field("name") {
                    self.containers
                        .push((ContainerKind::Class, std::borrow::Cow::Borrowed(self.text_of(name))));
                    frame.container = true;
                }
            }
            "variable_declarator" => {
                if let Some(name) = node.field("name").filter(|n| n.kind_str() == "identifier") {
                    let name_text = self.text_of(name);
                    // Locals (not top-level bindings, which the module pass recorded) join the scope.
                    let declaration = self.walk_parent();
                    let local = self
                        .lineage
                        .up(2)
                        .is_some_and(|scope| scope.kind_str() != "program" && scope.kind_str() != "export_statement");
                    if local && self.scopes.is_open() {
                        let is_const =
                            declaration.is_some_and(|decl| decl.child(0).is_some_and(|kw| kw.kind_str() == "const"));
                        let value = node.field("value").filter(|_| is_const);
                        self.scopes.declare((name_text, value, Self::span(node)));
                    }
                    self.containers
                        .push((ContainerKind::Variable, std::borrow::Cow::Borrowed(name_text)));
                    frame.container = true;
                }
            }
            "call_expression" => {
                if let Some(container) = self.call(node) {
                    self.containers.push(container);
                    frame.container = true;
                }
            }
            // `queue: async (batch, env) => …` in a Workers handler object.
            "pair" => {
                let key = node.field("key").filter(|k| k.kind_str() == "property_identifier");
                let is_function = node
                    .field("value")
                    .is_some_and(|v| matches!(v.kind_str(), "arrow_function" | "function_expression" | "function"));
                if let (Some(key), true) = (key, is_function) {
                    self.containers
                        .push((ContainerKind::Function, std::borrow::Cow::Borrowed(self.text_of(key))));
                    frame.container = true;
                }
            }
            _ => {}
        }
        self.frames.push(frame);
        descend
    }

    pub(super) fn param_names(&self, node: Node<'t>) -> Vec<ScopeEntry<'t>> {
        let mut out = Vec::new();
        if let Some(param) = node.field("parameter") {
            out.push((self.text_of(param), None, Self::span(param)));
        }
        if let Some(list) = node.field("parameters") {
            let mut cursor = list.walk();
            for param in list.named_children(&mut cursor) {
                if let Some(pattern) = param.field("pattern") {
                    collect_pattern_names(pattern, self.src, &mut out);
                }
            }
        }
        out
    }

    /// `Layer.effect(UserRepository, …)` names the layer after its tag; `Effect.fn("name")(…)`
    /// names the unit; a call that registers a handler (`Outbox.subscribe(…, handler)`) is
    /// named by its callee, so rules can tell code that runs under a durable retrier.
    pub(super) fn call_container(
        &self,
        callee: Node<'t>,
        arguments: Node<'t>,
        effect: Option<(&str, &str)>,
    ) -> Option<Scope<'t>> {
        if callee.kind_str() == "member_expression" {
            let mut cursor = arguments.walk();
            let takes_handler = arguments.named_children(&mut cursor).any(|a| {
                matches!(
                    a.kind_str(),
                    "arrow_function" | "function_expression" | "generator_function" | "call_expression"
                ) && (a.kind_str() != "call_expression" || self.text_of(a).starts_with("Effect.fn"))
            });
            let callee_text = self.text_of(callee);
            if takes_handler && callee_text.len() <= 80 && !callee_text.contains('\n') {
                return Some((ContainerKind::Registration, std::borrow::Cow::Borrowed(callee_text)));
            }
        }
        if let Some(("Layer", member)) = effect {
            if matches!(member, "effect" | "succeed" | "scoped" | "sync" | "function") {
                let tag = arguments.named_child(0)?;
                let name = self.name_path(tag)?.join(".");
                return Some((ContainerKind::Layer, std::borrow::Cow::Owned(name)));
            }
        }
        // `Effect.fn("name")(body, …pipeables)`: the callee is itself the call `Effect.fn("name")`.
        if callee.kind_str() == "call_expression" {
            let inner_callee = self.name_path(callee.field("function")?)?;
            if let Some(("Effect", "fn" | "fnUntraced")) = self.facts.effect_member_path(&inner_callee) {
                let name_arg = callee.field("arguments")?.named_child(0)?;
                if let Expr::Str(name, _) = self.expr(name_arg, 0) {
                    return Some((ContainerKind::EffectFn, std::borrow::Cow::Owned(name)));
                }
            }
        }
        None
    }
}

/// The lexical scopes the walk is inside, each with its locals and parameters in order, and
/// the same entries by name: a look-up reads the innermost entry of its name instead of
/// every scope (a deep nest of functions, each looking up names, is otherwise quadratic).
#[derive(Default)]
pub(super) struct Scopes<'t> {
    /// The names each open scope declared, innermost last.
    open: Vec<Vec<&'t str>>,
    /// Each name's entries in the open scopes, innermost (latest) last.
    by_name: std::collections::HashMap<&'t str, Vec<ScopeEntry<'t>>>,
}

impl<'t> Scopes<'t> {
    pub(super) fn open(&mut self, entries: Vec<ScopeEntry<'t>>) {
        self.open.push(Vec::with_capacity(entries.len()));
        for entry in entries {
            self.declare(entry);
        }
    }

    pub(super) fn close(&mut self) {
        for name in self.open.pop().unwrap_or_default() {
            if let Some(entries) = self.by_name.get_mut(name) {
                entries.pop();
                if entries.is_empty() {
                    self.by_name.remove(name);
                }
            }
        }
    }

    pub(super) fn is_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// A local of the innermost scope.
    pub(super) fn declare(&mut self, entry: ScopeEntry<'t>) {
        let Some(names) = self.open.last_mut() else {
            return;
        };
        names.push(entry.0);
        self.by_name.entry(entry.0).or_default().push(entry);
    }

    /// The innermost entry named `name`.
    pub(super) fn lookup(&self, name: &str) -> Option<&ScopeEntry<'t>> {
        crate::extract::work::step(1);
        self.by_name.get(name).and_then(|entries| entries.last())
    }
}

/// Nodes that declare locals for what follows them in their block.
fn declares(node: Node) -> bool {
    matches!(
        node.kind_str(),
        "lexical_declaration" | "variable_declaration" | "variable_declarator"
    )
}
