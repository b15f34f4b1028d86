//! Syntax nodes to [`Expr`]: the small owned expression tree policies are kept as.

use super::*;

/// Nodes one conversion visits at most: policies, options and job definitions are a few
/// dozen; a large initializer (a whole service in one `const`) becomes opaque instead of a
/// copy of the file.
const EXPR_BUDGET: usize = 2_000;

impl<'t> Extractor<'t, '_> {
    /// Converts `node` (at `depth` of an enclosing conversion) into an [`Expr`].
    pub(super) fn expr(&self, node: Node<'t>, depth: usize) -> Expr {
        self.budget.set(EXPR_BUDGET);
        self.convert(node, depth)
    }

    /// The names of an identifier or member chain as written (`Effect.retry` →
    /// `["Effect", "retry"]`), without converting it. `None` for anything else, and when the
    /// first name is a local or a parameter: it shadows any import, as in [`Expr::path`].
    pub(super) fn name_path(&self, node: Node<'t>) -> Option<Vec<&'t str>> {
        let names = self.written_path(node)?;
        self.lookup_local(names[0]).is_none().then_some(names)
    }

    /// [`Extractor::name_path`] without the look at locals (the caller checks when it matters).
    pub(super) fn written_path(&self, node: Node<'t>) -> Option<Vec<&'t str>> {
        let mut names = Vec::with_capacity(4);
        let mut current = node;
        loop {
            match current.kind_str() {
                "member_expression" => {
                    names.push(self.text_of(current.field("property")?));
                    current = current.field("object")?;
                }
                "identifier" => {
                    names.push(self.text_of(current));
                    names.reverse();
                    return Some(names);
                }
                _ => return None,
            }
            if names.len() > 8 {
                return None;
            }
        }
    }

    fn convert(&self, node: Node<'t>, depth: usize) -> Expr {
        let span = Self::span(node);
        let budget = self.budget.get();
        if depth > MAX_EXPR_DEPTH || budget == 0 || node.is_error() || node.is_missing() {
            if depth > MAX_EXPR_DEPTH || budget == 0 {
                self.truncated.set(true);
            }
            return Expr::Opaque(span);
        }
        self.budget.set(budget - 1);
        match node.kind_str() {
            "identifier" | "undefined" => {
                let name = self.text_of(node);
                if let Some(local) = self.block_local(name, span) {
                    return local;
                }
                match self.lookup_local(name) {
                    Some((def, Some(value))) => Expr::Local {
                        name: name.to_string(),
                        def,
                        value: Box::new(self.convert(value, depth + 1)),
                        span,
                    },
                    // A parameter or an uninitialised local: it shadows any import.
                    Some((_, None)) => Expr::Param(name.to_string(), span),
                    None => Expr::Ident(name.to_string(), span),
                }
            }
            "member_expression" => {
                let (Some(object), Some(property)) = (node.field("object"), node.field("property")) else {
                    return Expr::Opaque(span);
                };
                Expr::Member(
                    Box::new(self.convert(object, depth + 1)),
                    self.text_of(property).to_string(),
                    span,
                )
            }
            "call_expression" => {
                let (Some(callee), Some(arguments)) = (node.field("function"), node.field("arguments")) else {
                    return Expr::Opaque(span);
                };
                if arguments.kind_str() != "arguments" {
                    // A tagged template (sql`…`): not a policy.
                    return Expr::Opaque(span);
                }
                let mut cursor = arguments.walk();
                let args = arguments
                    .named_children(&mut cursor)
                    .filter(|a| a.kind_str() != "comment")
                    .map(|a| self.convert(a, depth + 1))
                    .collect();
                Expr::Call {
                    callee: Box::new(self.convert(callee, depth + 1)),
                    args,
                    span,
                }
            }
            "string" => Expr::Str(string_value(self.text_of(node)), span),
            "template_string" => {
                let mut cursor = node.walk();
                let has_holes = node
                    .named_children(&mut cursor)
                    .any(|c| c.kind_str() == "template_substitution");
                if has_holes {
                    Expr::Opaque(span)
                } else {
                    Expr::Str(string_value(self.text_of(node)), span)
                }
            }
            "number" => match parse_number(self.text_of(node)) {
                Some(n) => Expr::Num(n, span),
                None => Expr::Opaque(span),
            },
            "true" => Expr::Bool(true, span),
            "false" => Expr::Bool(false, span),
            "unary_expression" => {
                let operator = node.field("operator").map(|o| o.kind_str());
                match (operator, node.field("argument").map(|a| self.convert(a, depth + 1))) {
                    (Some("-"), Some(Expr::Num(n, _))) => Expr::Num(-n, span),
                    (Some("+"), Some(Expr::Num(n, _))) => Expr::Num(n, span),
                    // What a factory tests its argument with: `typeof preset === "string"`.
                    (Some(op @ ("typeof" | "!")), Some(arg)) => Expr::Unary {
                        op: op.to_string(),
                        arg: Box::new(arg),
                        span,
                    },
                    _ => Expr::Opaque(span),
                }
            }
            // `presets[name]`, `delays[0]`: a preset table or an array read by a factory.
            "subscript_expression" => {
                let (Some(object), Some(index)) = (node.field("object"), node.field("index")) else {
                    return Expr::Opaque(span);
                };
                let object = Box::new(self.convert(object, depth + 1));
                match self.convert(index, depth + 1) {
                    Expr::Str(key, _) => Expr::Member(object, key, span),
                    index => Expr::Index {
                        object,
                        index: Box::new(index),
                        span,
                    },
                }
            }
            "binary_expression" => {
                let (Some(left), Some(right), Some(op)) =
                    (node.field("left"), node.field("right"), node.field("operator"))
                else {
                    return Expr::Opaque(span);
                };
                Expr::Binary {
                    op: op.kind_str().to_string(),
                    left: Box::new(self.convert(left, depth + 1)),
                    right: Box::new(self.convert(right, depth + 1)),
                    span,
                }
            }
            "ternary_expression" => {
                let (Some(test), Some(then), Some(otherwise)) = (
                    node.field("condition"),
                    node.field("consequence"),
                    node.field("alternative"),
                ) else {
                    return Expr::Opaque(span);
                };
                Expr::Cond {
                    test: Box::new(self.convert(test, depth + 1)),
                    then: Box::new(self.convert(then, depth + 1)),
                    otherwise: Box::new(self.convert(otherwise, depth + 1)),
                    span,
                }
            }
            "parenthesized_expression"
            | "as_expression"
            | "satisfies_expression"
            | "non_null_expression"
            | "type_assertion" => {
                let mut cursor = node.walk();
                let inner = node
                    .named_children(&mut cursor)
                    .find(|c| !c.kind_str().starts_with("type") && c.kind_str() != "comment");
                match inner {
                    Some(inner) => self.convert(inner, depth + 1),
                    None => Expr::Opaque(span),
                }
            }
            "object" => {
                let mut props = Vec::new();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind_str() {
                        "pair" => {
                            let (Some(key), Some(value)) = (child.field("key"), child.field("value")) else {
                                continue;
                            };
                            let key_text = match key.kind_str() {
                                "property_identifier" | "number" => self.text_of(key).to_string(),
                                "string" => string_value(self.text_of(key)),
                                // A computed key: the object's shape is unknown.
                                _ => "...".to_string(),
                            };
                            props.push(Property {
                                key: key_text,
                                key_span: Self::span(key),
                                value: self.convert(value, depth + 1),
                            });
                        }
                        "shorthand_property_identifier" => {
                            let name = self.text_of(child);
                            let value = match self.block_local(name, Self::span(child)) {
                                Some(local) => local,
                                None => match self.lookup_local(name) {
                                    Some((def, Some(value))) => Expr::Local {
                                        name: name.to_string(),
                                        def,
                                        value: Box::new(self.convert(value, depth + 1)),
                                        span: Self::span(child),
                                    },
                                    Some((_, None)) => Expr::Param(name.to_string(), Self::span(child)),
                                    None => Expr::Ident(name.to_string(), Self::span(child)),
                                },
                            };
                            props.push(Property {
                                key: name.to_string(),
                                key_span: Self::span(child),
                                value,
                            });
                        }
                        "method_definition" => {
                            if let Some(name) = child.field("name") {
                                props.push(Property {
                                    key: self.text_of(name).to_string(),
                                    key_span: Self::span(name),
                                    value: self.function(child, depth + 1),
                                });
                            }
                        }
                        "spread_element" => props.push(Property {
                            key: "...".into(),
                            key_span: Self::span(child),
                            value: Expr::Opaque(Self::span(child)),
                        }),
                        _ => {}
                    }
                }
                Expr::Object(props, span)
            }
            "array" => {
                let mut cursor = node.walk();
                let items = node
                    .named_children(&mut cursor)
                    .filter(|c| c.kind_str() != "comment")
                    .map(|c| {
                        if c.kind_str() == "spread_element" {
                            Expr::Opaque(Self::span(c))
                        } else {
                            self.convert(c, depth + 1)
                        }
                    })
                    .collect();
                Expr::Array(items, span)
            }
            "arrow_function" | "function_expression" | "function" | "generator_function" => self.function(node, depth),
            _ => Expr::Opaque(span),
        }
    }

    /// A function as a value: its parameter names and, when it is a single expression, its body.
    /// A function declaration as an [`Expr::Function`], within a fresh budget.
    pub(super) fn function_expr(&self, node: Node<'t>) -> Expr {
        self.budget.set(EXPR_BUDGET);
        self.function(node, 0)
    }

    fn function(&self, node: Node<'t>, depth: usize) -> Expr {
        let span = Self::span(node);
        let mut params = Vec::new();
        let mut defaults = Vec::new();
        if let Some(param) = node.field("parameter") {
            params.push(self.text_of(param).to_string());
        }
        if let Some(list) = node.field("parameters") {
            let mut cursor = list.walk();
            for param in list.named_children(&mut cursor) {
                let name = param
                    .field("pattern")
                    .or_else(|| param.field("name"))
                    .map(|p| self.text_of(p).to_string())
                    .unwrap_or_default();
                // A default (`retries = 5`), read where the function is: earlier parameters
                // shadow what it names.
                if let Some(value) = param.field("value") {
                    defaults.resize(params.len(), None);
                    let value = self.with_params(&params, |this| this.convert(value, depth + 1));
                    defaults.push(Some(value));
                }
                params.push(name);
            }
        }
        // Parameters shadow everything outside while the body is converted.
        let body = node.field("body").and_then(|body| {
            self.with_params(&params, |this| {
                // Each `if` without a `return` at its end repeats what follows it in both
                // branches: a few are followed, not a function's worth.
                if body.kind_str() == "statement_block" {
                    // Only a body that opens with an `if` or a `return` can have a value: the
                    // `if`s of any other (every generator an `Effect.gen` runs) are not counted.
                    // A plain function's leading `const`s (a factory's `const o = presets[p]`)
                    // are read on the way.
                    let statements = statements_of(body);
                    let generator = node.kind_str().starts_with("generator");
                    let opens_with_value = statements
                        .iter()
                        .find(|s| generator || !is_const_declaration(**s))
                        .is_some_and(|s| matches!(s.kind_str(), "if_statement" | "return_statement"));
                    (opens_with_value && count_ifs(body) <= MAX_BLOCK_IFS)
                        .then(|| this.block_value(&statements, depth + 1))
                        .flatten()
                } else {
                    Some(this.expr(body, depth + 1))
                }
            })
            .map(Box::new)
        });
        Expr::Function {
            params,
            body,
            span,
            defaults,
        }
    }

    /// The value a block of statements returns, when it is made of `if (test) { … }` and
    /// `return value` only: `if (a) return x; if (b) { if (c) return y }; return z` becomes
    /// `a ? x : (b ? (c ? y : z) : z)`. Anything else (a declaration, a loop, a path that
    /// returns nothing) has no value the model can follow.
    fn block_value(&self, statements: &[Node<'t>], depth: usize) -> Option<Expr> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        let (first, rest) = statements.split_first()?;
        match first.kind_str() {
            "return_statement" => Some(self.expr(first.named_child(0)?, depth + 1)),
            "lexical_declaration" if is_const_declaration(*first) => {
                let declared = self.declare_block_consts(*first, depth);
                let value = self.block_value(rest, depth + 1);
                let mut locals = self.block_locals.borrow_mut();
                let kept = locals.len().saturating_sub(declared);
                locals.truncate(kept);
                value
            }
            "if_statement" => {
                let test = first.field("condition")?;
                let consequence = first.field("consequence")?;
                let mut then: Vec<Node<'t>> = match consequence.kind_str() {
                    "statement_block" => statements_of(consequence),
                    _ => vec![consequence],
                };
                // A branch that does not return goes on with the statements after the `if`.
                then.extend_from_slice(rest);
                let otherwise: Vec<Node<'t>> = match first.field("alternative") {
                    Some(alternative) => {
                        let branch = alternative.named_child(0)?;
                        let mut out = match branch.kind_str() {
                            "statement_block" => statements_of(branch),
                            _ => vec![branch],
                        };
                        out.extend_from_slice(rest);
                        out
                    }
                    None => rest.to_vec(),
                };
                Some(Expr::Cond {
                    test: Box::new(self.expr(test, depth + 1)),
                    then: Box::new(self.block_value(&then, depth + 1)?),
                    otherwise: Box::new(self.block_value(&otherwise, depth + 1)?),
                    span: Self::span(*first),
                })
            }
            _ => None,
        }
    }

    /// Binds the names a `const` declaration of a converted body declares: `const o = x` to
    /// `x`, `const { base, cap } = o` to `o.base` and `o.cap`, any other pattern to nothing
    /// the model follows. Returns how many names were bound.
    fn declare_block_consts(&self, declaration: Node<'t>, depth: usize) -> usize {
        let mut declared = 0;
        let mut cursor = declaration.walk();
        let declarators: Vec<Node<'t>> = declaration
            .named_children(&mut cursor)
            .filter(|d| d.kind_str() == "variable_declarator")
            .collect();
        for declarator in declarators {
            let (Some(name), value) = (declarator.field("name"), declarator.field("value")) else {
                continue;
            };
            let def = Self::span(declarator);
            let value = value.map(|v| self.convert(v, depth + 1));
            let level = self.shadowed.borrow().len();
            let mut bind = |this: &Self, name: &str, value: Option<Expr>| {
                this.block_locals
                    .borrow_mut()
                    .push((name.to_string(), def, value, level));
                declared += 1;
            };
            match name.kind_str() {
                "identifier" => bind(self, self.text_of(name), value),
                "object_pattern" => {
                    let mut cursor = name.walk();
                    for field in name.named_children(&mut cursor) {
                        match field.kind_str() {
                            "shorthand_property_identifier_pattern" => {
                                let key = self.text_of(field);
                                let member = value
                                    .clone()
                                    .map(|v| Expr::Member(Box::new(v), key.to_string(), Self::span(field)));
                                bind(self, key, member);
                            }
                            "pair_pattern" => {
                                let (Some(key), Some(target)) = (field.field("key"), field.field("value")) else {
                                    continue;
                                };
                                let member = (target.kind_str() == "identifier")
                                    .then(|| value.clone())
                                    .flatten()
                                    .map(|v| {
                                        Expr::Member(Box::new(v), self.text_of(key).to_string(), Self::span(field))
                                    });
                                if target.kind_str() == "identifier" {
                                    bind(self, self.text_of(target), member);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        declared
    }

    /// A `const` of a body being converted, unless a parameter declared inside it shadows it.
    fn block_local(&self, name: &str, span: Span) -> Option<Expr> {
        let locals = self.block_locals.borrow();
        let (_, def, value, level) = locals.iter().rev().find(|(n, ..)| n == name)?;
        let shadowed = self.shadowed.borrow();
        if shadowed
            .iter()
            .skip(*level)
            .any(|params| params.iter().any(|p| p == name))
        {
            return None;
        }
        let Some(value) = value else {
            return Some(Expr::Param(name.to_string(), span));
        };
        // A copy per use, charged to the conversion's budget.
        let mut size = 0;
        value.walk(&mut |_| size += 1);
        let budget = self.budget.get();
        if size > budget {
            self.truncated.set(true);
            return Some(Expr::Opaque(span));
        }
        self.budget.set(budget - size);
        Some(Expr::Local {
            name: name.to_string(),
            def: *def,
            value: Box::new(value.clone()),
            span,
        })
    }

    pub(super) fn with_params<T>(&self, params: &[String], convert: impl FnOnce(&Self) -> T) -> T {
        self.shadowed.borrow_mut().push(params.to_vec());
        let result = convert(self);
        self.shadowed.borrow_mut().pop();
        result
    }

    pub(super) fn lookup_local(&self, name: &str) -> Option<(Span, Option<Node<'t>>)> {
        let shadowed = self
            .shadowed
            .borrow()
            .iter()
            .any(|params| params.iter().any(|p| p == name));
        if shadowed {
            return Some((Span::default(), None));
        }
        self.scopes.lookup(name).map(|(_, value, def)| (*def, *value))
    }
}

/// `const x = …` (not `let`: a `let` may be assigned again).
fn is_const_declaration(node: Node) -> bool {
    node.kind_str() == "lexical_declaration" && node.child(0).is_some_and(|k| k.kind_str() == "const")
}

/// The statements of a block, without comments.
fn statements_of(block: Node) -> Vec<Node> {
    let mut cursor = block.walk();
    block
        .named_children(&mut cursor)
        .filter(|s| s.kind_str() != "comment")
        .collect()
}

/// `if` statements of a function body that [`Extractor::block_value`] follows at most.
const MAX_BLOCK_IFS: usize = 6;

/// The `if` statements in `block`, nested ones included (not those of inner functions), up to
/// one more than [`MAX_BLOCK_IFS`].
fn count_ifs(block: Node) -> usize {
    let mut count = 0;
    let mut cursor = block.walk();
    loop {
        let node = cursor.node();
        if node.kind_str() == "if_statement" {
            count += 1;
            if count > MAX_BLOCK_IFS {
                return count;
            }
        }
        let inner_function = node != block
            && matches!(
                node.kind_str(),
                "arrow_function" | "function_expression" | "function_declaration" | "method_definition"
            );
        if !inner_function && cursor.goto_first_child() {
            continue;
        }
        if !super::step_past(&mut cursor, block) {
            return count;
        }
    }
}
