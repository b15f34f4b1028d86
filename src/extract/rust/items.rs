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
            if is_test_item(item, self.text) || is_debug_only_value(item, self.text) {
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
                    let has_params_self = item
                        .field("parameters")
                        .is_some_and(|p| named_children(p).iter().any(|c| c.kind_str() == "self_parameter"));
                    self.items.push(Item {
                        has_params_self,
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
                        has_params_self: false,
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
        self.items_named(name)
            .find(|i| !i.associated && i.module == module && i.name == name)
    }

    /// An associated item of `impl ty { … }` in `module`.
    pub(super) fn associated(&self, module: &[String], ty: &str, name: &str) -> Option<&Item<'t>> {
        self.items_named(name).find(|i| {
            i.associated
                && i.name == name
                && i.module.len() == module.len() + 1
                && i.module.starts_with(module)
                && i.module.last().is_some_and(|t| t == ty)
        })
    }

    /// The file's items named `name`, in order: from an index read once (a scan of every
    /// item per look-up is quadratic on a large file).
    fn items_named(&self, name: &str) -> impl Iterator<Item = &Item<'t>> {
        let index = self.items_by_name.get_or_init(|| {
            let mut index: HashMap<String, Vec<usize>> = HashMap::new();
            for (at, item) in self.items.iter().enumerate() {
                index.entry(item.name.clone()).or_default().push(at);
            }
            index
        });
        crate::extract::work::step(1);
        index.get(name).into_iter().flatten().map(|&at| &self.items[at])
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
        let implementation = self.parents.ancestors(node).find(|n| n.kind_str() == "impl_item")?;
        implementation
            .field("type")
            .and_then(|t| self.segments(t).last().cloned())
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
        for node in self.parents.ancestors(at) {
            match node.kind_str() {
                "block" => {
                    let found = self.lets(node).before(name, position);
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
                // A `for` pattern is in scope in the loop's body, not in what it iterates.
                "for_expression" if !node.field("body").is_some_and(|b| b.byte_range().contains(&position)) => {}
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
        }
        Local::None
    }

    /// The `let`s of `block`, read once.
    fn lets(&self, block: Node<'t>) -> std::rc::Rc<Lets<'t>> {
        let mut lets = self.lets.borrow_mut();
        std::rc::Rc::clone(lets.entry(block.id()).or_insert_with(|| {
            let mut by_name: HashMap<String, Vec<Node<'t>>> = HashMap::new();
            let mut consts: HashMap<String, Node<'t>> = HashMap::new();
            for declaration in named_children(block) {
                // `fn retry_durations() { const RETRIES: usize = 5; … }`: an item of the
                // block, in scope in all of it (issue 25.1).
                if matches!(declaration.kind_str(), "const_item" | "static_item") {
                    if let (Some(name), Some(value)) = (declaration.field("name"), declaration.field("value")) {
                        consts.entry(self.text_of(name).to_string()).or_insert(value);
                    }
                    continue;
                }
                if declaration.kind_str() != "let_declaration" {
                    continue;
                }
                let mut names = Vec::new();
                if let Some(pattern) = declaration.field("pattern") {
                    self.pattern_names(pattern, &mut names);
                }
                names.dedup();
                for name in names {
                    let declared = by_name.entry(name).or_default();
                    if declared.last() != Some(&declaration) {
                        declared.push(declaration);
                    }
                }
            }
            std::rc::Rc::new(Lets { by_name, consts })
        }))
    }

    /// The value of the `const`/`static` named `name` declared in a block around `at` (the
    /// nearest; a nested `fn` sees its enclosing body's items too): a function body's own
    /// constants, read like the module's. The caller looks for a `let` or parameter first.
    pub(super) fn block_const(&self, at: Node<'t>, name: &str) -> Option<Node<'t>> {
        for node in self.parents.ancestors(at) {
            if node.kind_str() == "block" {
                if let Some(value) = self.lets(node).consts.get(name) {
                    return Some(*value);
                }
            }
        }
        None
    }
}

/// The `let` declarations of a block by the names they bind, in order: a local is looked
/// up among them by bisection instead of a scan of the block per look-up (quadratic on a
/// function of thousands of statements).
pub(super) struct Lets<'t> {
    by_name: HashMap<String, Vec<Node<'t>>>,
    /// The block's own `const` and `static` items, by name: their values.
    consts: HashMap<String, Node<'t>>,
}

impl<'t> Lets<'t> {
    /// The last `let` binding `name` that ends at or before `position`.
    fn before(&self, name: &str, position: usize) -> Option<Node<'t>> {
        crate::extract::work::step(1);
        let declared = self.by_name.get(name)?;
        let ending_before = declared.partition_point(|d| d.end_byte() <= position);
        ending_before.checked_sub(1).map(|at| declared[at])
    }
}
