//! A small owned expression tree: the subset of TypeScript expressions that policies, options
//! and job definitions are built from. Lossy on purpose: anything the model does not
//! represent becomes [`Expr::Opaque`], which the analysis treats as unknown.

use serde::{Deserialize, Serialize};

use crate::source::Span;

/// A small owned expression tree: the subset of TypeScript expressions that policies are
/// built from. Spans point into the file the expression was extracted from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    Ident(String, Span),
    Member(Box<Expr>, String, Span),
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
        span: Span,
    },
    Str(String, Span),
    Num(f64, Span),
    Bool(bool, Span),
    Object(Vec<Property>, Span),
    Array(Vec<Expr>, Span),
    /// An arrow function or function expression. `body` is the returned expression when
    /// the body is an expression or a block whose only statement is `return expr`.
    Function {
        params: Vec<String>,
        body: Option<Box<Expr>>,
        span: Span,
        /// Each parameter's default value (`retries = 5`), by position; shorter than
        /// `params` when the last ones have none. Always serialized: the facts cache is
        /// postcard, which has no field names to skip by.
        defaults: Vec<Option<Expr>>,
    },
    /// `typeof x`, `!x`: an operator before its operand.
    Unary {
        op: String,
        arg: Box<Expr>,
        span: Span,
    },
    /// `table[key]`: a computed member (a literal key is a [`Expr::Member`]).
    Index {
        object: Box<Expr>,
        index: Box<Expr>,
        span: Span,
    },
    Binary {
        op: String,
        left: Box<Expr>,
        right: Box<Expr>,
        span: Span,
    },
    /// `test ? then : otherwise`: either value, picked at run time.
    Cond {
        test: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
        span: Span,
    },
    /// An identifier resolved lexically to a local `const` in an enclosing block of the
    /// same file, with the binding's initializer.
    Local {
        name: String,
        def: Span,
        value: Box<Expr>,
        span: Span,
    },
    /// An identifier bound to a parameter of an enclosing function (or a local without a
    /// known value): it shadows imports and top-level names.
    Param(String, Span),
    /// Anything the model does not represent: treated as unknown.
    Opaque(Span),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Property {
    pub key: String,
    pub key_span: Span,
    pub value: Expr,
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Ident(_, s)
            | Expr::Member(_, _, s)
            | Expr::Str(_, s)
            | Expr::Num(_, s)
            | Expr::Bool(_, s)
            | Expr::Object(_, s)
            | Expr::Array(_, s)
            | Expr::Param(_, s)
            | Expr::Opaque(s) => *s,
            Expr::Call { span, .. }
            | Expr::Function { span, .. }
            | Expr::Binary { span, .. }
            | Expr::Cond { span, .. }
            | Expr::Unary { span, .. }
            | Expr::Index { span, .. }
            | Expr::Local { span, .. } => *span,
        }
    }

    /// The value of property `key` of an object literal.
    pub fn property(&self, key: &str) -> Option<&Expr> {
        match self {
            Expr::Object(props, _) => props.iter().rev().find(|p| p.key == key).map(|p| &p.value),
            _ => None,
        }
    }

    /// The last name of a member path, through local bindings: `Retry.transient` →
    /// `transient`.
    pub fn last_name(&self) -> Option<&str> {
        match self {
            Expr::Ident(name, _) => Some(name),
            Expr::Member(_, name, _) => Some(name),
            Expr::Local { value, .. } => value.last_name(),
            _ => None,
        }
    }

    /// The names and strings an expression mentions, in order: every identifier, member
    /// name and string literal (through local bindings) — what a predicate tests.
    pub fn mentions(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Some(name) = e.last_name() {
                out.push(name.to_string());
            }
            if let Expr::Str(s, _) = e {
                out.push(s.clone());
            }
        });
        out
    }

    /// `a.b.c` as `["a", "b", "c"]`, for identifiers and member chains only.
    pub fn path(&self) -> Option<Vec<&str>> {
        match self {
            Expr::Ident(name, _) => Some(vec![name.as_str()]),
            Expr::Member(object, name, _) => {
                let mut path = object.path()?;
                path.push(name.as_str());
                Some(path)
            }
            _ => None,
        }
    }

    /// Calls `visit` on this expression and every sub-expression, following local
    /// bindings into their values.
    pub fn walk<'a>(&'a self, visit: &mut dyn FnMut(&'a Expr)) {
        visit(self);
        match self {
            Expr::Member(object, _, _) => object.walk(visit),
            Expr::Call { callee, args, .. } => {
                callee.walk(visit);
                args.iter().for_each(|a| a.walk(visit));
            }
            Expr::Object(props, _) => props.iter().for_each(|p| p.value.walk(visit)),
            Expr::Array(items, _) => items.iter().for_each(|a| a.walk(visit)),
            Expr::Function { body, .. } => {
                if let Some(body) = body {
                    body.walk(visit)
                }
            }
            Expr::Unary { arg, .. } => arg.walk(visit),
            Expr::Index { object, index, .. } => {
                object.walk(visit);
                index.walk(visit);
            }
            Expr::Binary { left, right, .. } => {
                left.walk(visit);
                right.walk(visit);
            }
            Expr::Cond {
                test, then, otherwise, ..
            } => {
                test.walk(visit);
                then.walk(visit);
                otherwise.walk(visit);
            }
            Expr::Local { value, .. } => value.walk(visit),
            Expr::Ident(..) | Expr::Param(..) | Expr::Str(..) | Expr::Num(..) | Expr::Bool(..) | Expr::Opaque(_) => {}
        }
    }
}

impl Expr {
    /// A compact source-like rendering for messages: `Schedule.exponential("100 millis")`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out, 0);
        out
    }

    fn render_into(&self, out: &mut String, depth: usize) {
        if depth > 6 || out.len() > 120 {
            out.push('…');
            return;
        }
        match self {
            Expr::Ident(name, _) | Expr::Param(name, _) | Expr::Local { name, .. } => out.push_str(name),
            Expr::Member(object, name, _) => {
                object.render_into(out, depth + 1);
                out.push('.');
                out.push_str(name);
            }
            Expr::Call { callee, args, .. } => {
                callee.render_into(out, depth + 1);
                out.push('(');
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    arg.render_into(out, depth + 1);
                }
                out.push(')');
            }
            Expr::Str(s, _) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            Expr::Num(n, _) => out.push_str(&format_number(*n)),
            Expr::Bool(b, _) => out.push_str(if *b { "true" } else { "false" }),
            Expr::Object(props, _) => {
                out.push_str("{ ");
                for (i, prop) in props.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&prop.key);
                    out.push_str(": ");
                    prop.value.render_into(out, depth + 1);
                }
                out.push_str(" }");
            }
            Expr::Array(items, _) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.render_into(out, depth + 1);
                }
                out.push(']');
            }
            Expr::Function { .. } => out.push_str("(…) => …"),
            Expr::Unary { op, arg, .. } => {
                out.push_str(op);
                if op.chars().all(char::is_alphabetic) {
                    out.push(' ');
                }
                arg.render_into(out, depth + 1);
            }
            Expr::Index { object, index, .. } => {
                object.render_into(out, depth + 1);
                out.push('[');
                index.render_into(out, depth + 1);
                out.push(']');
            }
            Expr::Binary { op, left, right, .. } => {
                left.render_into(out, depth + 1);
                out.push(' ');
                out.push_str(op);
                out.push(' ');
                right.render_into(out, depth + 1);
            }
            Expr::Cond {
                test, then, otherwise, ..
            } => {
                test.render_into(out, depth + 1);
                out.push_str(" ? ");
                then.render_into(out, depth + 1);
                out.push_str(" : ");
                otherwise.render_into(out, depth + 1);
            }
            Expr::Opaque(_) => out.push('…'),
        }
    }
}

pub fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Evaluates a job timeout to milliseconds: Effect duration strings (`"5 minutes"`),
/// `Duration.minutes(5)`-style calls, and numbers (milliseconds). `None` when not visible.
pub fn duration_millis(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Str(text, _) => crate::schedule::duration::parse(text),
        Expr::Num(n, _) => Some(*n),
        Expr::Local { value, .. } => duration_millis(value),
        Expr::Call { callee, args, .. } => {
            let path = callee.path()?;
            let [module, unit] = path.as_slice() else {
                return None;
            };
            if *module != "Duration" {
                return None;
            }
            let [arg] = args.as_slice() else { return None };
            let n = match arg {
                Expr::Num(n, _) => *n,
                Expr::Local { value, .. } => match value.as_ref() {
                    Expr::Num(n, _) => *n,
                    _ => return None,
                },
                _ => return None,
            };
            let unit = match *unit {
                "millis" => 1.0,
                "seconds" => 1_000.0,
                "minutes" => 60_000.0,
                "hours" => 3_600_000.0,
                "days" => 86_400_000.0,
                "weeks" => 604_800_000.0,
                _ => return None,
            };
            Some(n * unit)
        }
        _ => None,
    }
}

/// The string a cron property holds, following local constants.
pub fn string_value(expr: &Expr) -> Option<(&str, Span)> {
    match expr {
        Expr::Str(text, span) => Some((text, *span)),
        Expr::Local { value, .. } => string_value(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(module: &str, unit: &str, n: f64) -> Expr {
        let s = Span::default();
        Expr::Call {
            callee: Box::new(Expr::Member(Box::new(Expr::Ident(module.into(), s)), unit.into(), s)),
            args: vec![Expr::Num(n, s)],
            span: s,
        }
    }

    #[test]
    fn timeouts_in_every_form() {
        let s = Span::default();
        assert_eq!(duration_millis(&Expr::Str("20 minutes".into(), s)), Some(1_200_000.0));
        assert_eq!(duration_millis(&Expr::Num(5000.0, s)), Some(5000.0));
        assert_eq!(duration_millis(&call("Duration", "minutes", 16.0)), Some(960_000.0));
        assert_eq!(duration_millis(&call("Other", "minutes", 16.0)), None);
        assert_eq!(duration_millis(&Expr::Opaque(s)), None);
    }
}
