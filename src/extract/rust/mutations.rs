//! A `let mut` policy changed by the statements after it: backoff's `ExponentialBackoffBuilder`
//! takes `&mut self` (`let mut b = ExponentialBackoffBuilder::new(); b.with_max_elapsed_time(None);
//! b.build()`), and a backoff `ExponentialBackoff`'s fields are public (`p.max_elapsed_time =
//! None;`). The statements between the `let` and a use of the name are read in order: one of its
//! own that calls the builder's methods or sets a field is applied as written (the method's name
//! marked [`model::BY_REF`], so the model applies it only where the methods take `&mut self`);
//! one the model cannot follow (a method call in a branch or a loop, a call given `&mut b`, `b =
//! …`) makes what it can touch unknown — the method's property, or everything — never a known
//! value it did not read.

use super::*;

/// Nodes looked at for the mutations of one binding: past it, everything is unknown.
const MAX_SCAN: usize = 20_000;

impl<'t> Rx<'t> {
    /// `value` (a `let`'s value) with the changes the statements after the `let` make before
    /// `at`, the use being evaluated; unchanged for a `let` without `mut`.
    pub(super) fn after_statements(
        &self,
        val: Val,
        at: Node<'t>,
        value: Node<'t>,
        module: &[String],
        env: Option<&HashMap<String, Val>>,
        depth: usize,
    ) -> Val {
        if !matches!(val, Val::Chain(_) | Val::Path(..)) {
            return val;
        }
        let Some(declaration) = self.parents.of(value).filter(|d| d.kind_str() == "let_declaration") else {
            return val;
        };
        let ops = self.statement_ops(
            declaration,
            self.text_of(at),
            at.start_byte(),
            Some(at),
            module,
            env,
            depth,
        );
        if ops.is_empty() {
            return val;
        }
        let Some(mut chain) = self.chain(val) else {
            return Val::Unknown;
        };
        chain.ops.extend(ops);
        Val::Chain(chain)
    }

    /// The changes the statements after `declaration` (a `let mut name = …`) make to `name`
    /// before the byte `until`; `at` is the use there, whose loops (inside the `let`'s block)
    /// run their later statements before its next turn.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn statement_ops(
        &self,
        declaration: Node<'t>,
        name: &str,
        until: usize,
        at: Option<Node<'t>>,
        module: &[String],
        env: Option<&HashMap<String, Val>>,
        depth: usize,
    ) -> Vec<RustOp> {
        let mutable = named_children(declaration)
            .iter()
            .any(|c| c.kind_str() == "mutable_specifier")
            || (0..declaration.child_count())
                .filter_map(|i| declaration.child(i))
                .any(|c| c.kind_str() == "mutable_specifier");
        let Some(block) = self.parents.of(declaration).filter(|_| mutable) else {
            return Vec::new();
        };
        let looped = at.and_then(|at| {
            self.parents
                .ancestors(at)
                .take_while(|n| *n != block)
                .filter(|n| matches!(n.kind_str(), "loop_expression" | "while_expression" | "for_expression"))
                .last()
        });
        let end = looped.map_or(until, |l| l.end_byte().max(until));
        let mut ops = Vec::new();
        let mut budget = MAX_SCAN;
        for statement in named_children(block) {
            if statement.start_byte() < declaration.end_byte() {
                continue;
            }
            if statement.start_byte() >= end {
                break;
            }
            // A statement of its own, run once before the use: read as written.
            if statement.end_byte() <= until {
                if let Some(found) = self.straight(statement, name, module, env, depth) {
                    ops.extend(found);
                    continue;
                }
            }
            self.touches(statement, name, at, end, &mut budget, &mut ops);
        }
        ops
    }

    /// `name.m(a).n(b);` or `name.field = v;`: the methods (marked [`model::BY_REF`]) or the
    /// field set, with their values.
    fn straight(
        &self,
        statement: Node<'t>,
        name: &str,
        module: &[String],
        env: Option<&HashMap<String, Val>>,
        depth: usize,
    ) -> Option<Vec<RustOp>> {
        if statement.kind_str() != "expression_statement" {
            return None;
        }
        let expression = *named_children(statement).first()?;
        let is_name = |n: Node| n.kind_str() == "identifier" && self.text_of(n) == name;
        match expression.kind_str() {
            "call_expression" => {
                let mut calls = Vec::new();
                let mut current = expression;
                loop {
                    let function = current
                        .field("function")
                        .filter(|f| f.kind_str() == "field_expression")?;
                    calls.push((self.text_of(function.field("field")?), current));
                    let receiver = function.field("value")?;
                    if is_name(receiver) {
                        break;
                    }
                    if receiver.kind_str() != "call_expression" {
                        return None;
                    }
                    current = receiver;
                }
                // An argument that reads the builder itself is not followed.
                if calls.iter().any(|(_, call)| self.mentions(self.args(*call), name)) {
                    return None;
                }
                Some(
                    calls
                        .into_iter()
                        .rev()
                        .map(|(method, call)| RustOp {
                            method: format!("{}{method}", model::BY_REF),
                            args: self
                                .args(call)
                                .iter()
                                .map(|a| self.arg(self.eval(*a, module, env, depth + 1)))
                                .collect(),
                            span: span(call),
                        })
                        .collect(),
                )
            }
            "assignment_expression" => {
                let (left, right) = (expression.field("left")?, expression.field("right")?);
                if left.kind_str() != "field_expression" || !left.field("value").is_some_and(is_name) {
                    return None;
                }
                if self.mentions(vec![right], name) {
                    return None;
                }
                Some(vec![RustOp {
                    method: format!("={}", self.text_of(left.field("field")?)),
                    args: vec![self.arg(self.eval(right, module, env, depth + 1))],
                    span: span(expression),
                }])
            }
            _ => None,
        }
    }

    fn mentions(&self, nodes: Vec<Node<'t>>, name: &str) -> bool {
        nodes.into_iter().any(|node| {
            let mut cursor = node.walk();
            loop {
                let current = cursor.node();
                if current.kind_str() == "identifier" && self.text_of(current) == name {
                    return true;
                }
                if cursor.goto_first_child() {
                    continue;
                }
                if !crate::extract::step_past(&mut cursor, node) {
                    return false;
                }
            }
        })
    }

    /// The changes a statement the model does not read as written may make to `name` before
    /// `end` (other than the use `at`): a method called on it changes its property to unknown
    /// (`if slow { b.with_multiplier(3.0); }`), a field set the field; a call given `&mut name`
    /// or an assignment to it, everything.
    fn touches(
        &self,
        statement: Node<'t>,
        name: &str,
        at: Option<Node<'t>>,
        end: usize,
        budget: &mut usize,
        ops: &mut Vec<RustOp>,
    ) {
        let opaque = |at: Node| RustOp {
            method: model::OPAQUE.to_string(),
            args: vec![Arg::Unknown],
            span: span(at),
        };
        let mut cursor = statement.walk();
        loop {
            let node = cursor.node();
            if *budget == 0 {
                ops.push(opaque(statement));
                return;
            }
            *budget -= 1;
            if node.start_byte() >= end {
                return;
            }
            if node.kind_str() == "identifier" && self.text_of(node) == name && Some(node) != at {
                ops.extend(
                    self.touched(node)
                        .into_iter()
                        .filter_map(|t| match t {
                            Touch::Method(method, _) if model::reads(method) => None,
                            t => Some(t),
                        })
                        .map(|t| match t {
                            Touch::Method(method, call) => RustOp {
                                method: format!("{}{method}", model::BY_REF),
                                args: vec![Arg::Unknown],
                                span: span(call),
                            },
                            Touch::Field(field, at) => RustOp {
                                method: format!("={field}"),
                                args: vec![Arg::Unknown],
                                span: span(at),
                            },
                            Touch::All(at) => opaque(at),
                        }),
                );
            }
            if cursor.goto_first_child() {
                continue;
            }
            if !crate::extract::step_past(&mut cursor, statement) {
                return;
            }
        }
    }

    /// What a mention of a `let mut` name may change.
    fn touched(&self, mention: Node<'t>) -> Vec<Touch<'t>> {
        let Some(parent) = self.parents.of(mention) else {
            return Vec::new();
        };
        let left_of = |assignment: Node, side: Node| {
            matches!(
                assignment.kind_str(),
                "assignment_expression" | "compound_assignment_expr"
            ) && assignment.field("left") == Some(side)
        };
        match parent.kind_str() {
            "field_expression" if parent.field("value") == Some(mention) => {
                let Some(field) = parent.field("field").map(|f| self.text_of(f)) else {
                    return Vec::new();
                };
                let Some(outer) = self.parents.of(parent) else {
                    return Vec::new();
                };
                match outer.kind_str() {
                    // `name.m(…)`, and the methods chained on its `&mut Self`.
                    "call_expression" if outer.field("function") == Some(parent) => {
                        let mut touched = vec![Touch::Method(field, outer)];
                        let mut call = outer;
                        while let Some(next) = self
                            .parents
                            .of(call)
                            .filter(|n| n.kind_str() == "field_expression" && n.field("value") == Some(call))
                        {
                            let Some(next_call) = self
                                .parents
                                .of(next)
                                .filter(|c| c.kind_str() == "call_expression" && c.field("function") == Some(next))
                            else {
                                break;
                            };
                            if let Some(method) = next.field("field") {
                                touched.push(Touch::Method(self.text_of(method), next_call));
                            }
                            call = next_call;
                        }
                        touched
                    }
                    _ if left_of(outer, parent) => vec![Touch::Field(field, outer)],
                    // A field's own field or method (`name.clock.advance()`), `&mut name.f`.
                    "field_expression" | "index_expression" => vec![Touch::All(outer)],
                    "reference_expression" if self.text_of(outer).starts_with("&mut") => vec![Touch::All(outer)],
                    _ => Vec::new(),
                }
            }
            "reference_expression" if self.text_of(parent).starts_with("&mut") => vec![Touch::All(parent)],
            _ if left_of(parent, mention) => vec![Touch::All(parent)],
            // Read, moved, or given by value: the binding is not changed.
            _ => Vec::new(),
        }
    }
}

/// What a statement may change of a `let mut` policy.
enum Touch<'t> {
    /// A method called on it (`&mut self` for backoff's builder).
    Method(&'t str, Node<'t>),
    /// A field set.
    Field(&'t str, Node<'t>),
    /// Anything.
    All(Node<'t>),
}
