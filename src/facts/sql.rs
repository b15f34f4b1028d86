//! SQL facts: every SQL text the codebase holds (`sql`-tagged templates, SQL-looking string
//! literals, `.sql` files, Rust string literals), reduced by the extractor (`extract::sql`)
//! to a small statement model with file spans. Rules read only [`Statement`]s.
//!
//! Unknown is silent: a text that does not parse keeps its parser message and no statement.

use serde::{Deserialize, Serialize};

use crate::source::Span;

/// Where an SQL text was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SqlOrigin {
    /// A `sql`-tagged template literal: each `${…}` hole is a bound parameter.
    TaggedTemplate,
    /// A string or template literal whose text reads as SQL.
    Literal,
    /// A `.sql` file (or one statement of it, when the file as a whole does not parse).
    SqlFile,
    /// A Rust string literal: sqlx `query!`/`query(…)` arguments, raw strings.
    Rust,
    /// A query builder's chain written out as SQL (drizzle's `db.update(t).set(…).where(…)`):
    /// each value is a bound parameter, a hole holding the code that gives it.
    QueryBuilder,
}

/// One SQL text with its parse.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SqlText {
    /// The literal (or the statement of a `.sql` file) in the file.
    pub span: Span,
    pub origin: SqlOrigin,
    /// The SQL, each interpolated hole replaced by a placeholder `$1`, `$2`, ….
    pub text: String,
    /// The source of each hole: `$n` stands for `holes[n - 1]`.
    pub holes: Vec<String>,
    pub parse: SqlParse,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum SqlParse {
    Parsed(Vec<Statement>),
    /// Neither dialect parses the text: the Postgres parser's message.
    Failed(String),
}

impl SqlText {
    pub fn statements(&self) -> &[Statement] {
        match &self.parse {
            SqlParse::Parsed(statements) => statements,
            SqlParse::Failed(_) => &[],
        }
    }

    /// Whether the holes are code (a template's `${…}`, a query builder's values): a help
    /// can show a parameter as the code that gives it.
    pub fn holes_are_code(&self) -> bool {
        matches!(
            self.origin,
            SqlOrigin::TaggedTemplate | SqlOrigin::Literal | SqlOrigin::QueryBuilder
        ) && !self.holes.is_empty()
    }

    /// How a placeholder reads to the user: `${now}` for a template hole, `$1` otherwise.
    pub fn placeholder(&self, index: usize) -> String {
        match self.holes.get(index.wrapping_sub(1)) {
            Some(hole) => format!("${{{hole}}}"),
            None => format!("${index}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StatementKind {
    Select,
    Insert,
    Update,
    Delete,
    CreateTable,
    Other,
}

/// One statement, reduced to what the rules read. Names are lowercased and unquoted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Statement {
    pub kind: StatementKind,
    pub span: Span,
    /// The statement as the parser prints it, holes shown as `${…}`.
    pub text: String,
    /// The target table (`UPDATE t`, `INSERT INTO t`, `DELETE FROM t`, the first `FROM` of a
    /// `SELECT`, `CREATE TABLE t`): its last name part.
    pub table: Option<String>,
    pub alias: Option<String>,
    /// `INSERT`'s column list, `CREATE TABLE`'s columns.
    pub columns: Vec<String>,
    /// The first `VALUES` row of an `INSERT`, as printed, aligned with `columns`.
    pub values: Vec<String>,
    /// `UPDATE … SET`, or an upsert's `DO UPDATE SET`.
    pub assignments: Vec<Assignment>,
    /// `UPDATE`/`DELETE`/`SELECT … WHERE`, or an upsert's `DO UPDATE … WHERE`.
    pub filter: Option<Pred>,
    pub on_conflict: Option<OnConflict>,
    /// `INSERT OR REPLACE` / `REPLACE INTO`: the row is overwritten unconditionally.
    pub or_replace: bool,
    /// `… RETURNING …`: the statement gives back the rows it wrote.
    #[serde(default)]
    pub returning: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OnConflict {
    pub target: Vec<String>,
    /// `DO UPDATE` (else `DO NOTHING`).
    pub update: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Assignment {
    pub column: String,
    pub value: Operand,
    /// The value as printed: `${now + leaseMs}`, `excluded.holder`.
    pub value_text: String,
    /// `lease_until = NULL`, as printed.
    pub text: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operand {
    Column {
        qualifier: Option<String>,
        name: String,
    },
    Null,
    /// Anything else: a placeholder, a literal, an expression.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

impl CmpOp {
    /// The same comparison with its operands swapped: `a < b` is `b > a`.
    pub fn flipped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::LtEq => CmpOp::GtEq,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::GtEq => CmpOp::LtEq,
            other => other,
        }
    }
}

/// A `WHERE` condition as a tree of `AND`/`OR` over comparisons.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pred {
    pub kind: PredKind,
    pub span: Span,
    /// As printed, holes shown as `${…}`.
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum PredKind {
    And(Vec<Pred>),
    Or(Vec<Pred>),
    Compare {
        left: Operand,
        op: CmpOp,
        right: Operand,
        /// The right-hand side as printed: what a column is compared with.
        right_text: String,
        left_text: String,
    },
    IsNull {
        operand: Operand,
        negated: bool,
    },
    Other,
}

impl Pred {
    /// The top-level `AND` terms (the condition itself when it is not an `AND`).
    pub fn conjuncts(&self) -> Vec<&Pred> {
        match &self.kind {
            PredKind::And(items) => items.iter().flat_map(Pred::conjuncts).collect(),
            _ => vec![self],
        }
    }

    /// The `OR` alternatives of this term (itself when it is not an `OR`).
    pub fn disjuncts(&self) -> Vec<&Pred> {
        match &self.kind {
            PredKind::Or(items) => items.iter().flat_map(Pred::disjuncts).collect(),
            _ => vec![self],
        }
    }

    /// `column op value` with the column on the left, whichever side it was written on.
    pub fn comparison(&self) -> Option<(&Operand, CmpOp, &str)> {
        match &self.kind {
            PredKind::Compare {
                left,
                op,
                right,
                right_text,
                left_text,
            } => match (left, right) {
                (Operand::Column { .. }, _) => Some((left, *op, right_text)),
                (_, Operand::Column { .. }) => Some((right, op.flipped(), left_text)),
                _ => None,
            },
            _ => None,
        }
    }
}

impl Operand {
    pub fn column(&self) -> Option<(Option<&str>, &str)> {
        match self {
            Operand::Column { qualifier, name } => Some((qualifier.as_deref(), name)),
            _ => None,
        }
    }
}

impl Statement {
    /// Whether `column` is named anywhere the model keeps: columns, assignments, condition.
    pub fn mentions(&self, column: &str) -> bool {
        self.find_column(|name| name == column).is_some()
    }

    /// The first column named anywhere the model keeps (columns, assignments, condition) that
    /// `matches`, as the statement spells it.
    pub fn find_column<'s>(&'s self, matches: impl Fn(&str) -> bool) -> Option<&'s str> {
        let in_pred = |pred: &'s Pred| -> Option<&'s str> {
            let mut found: Option<&'s str> = None;
            visit(pred, &mut |p| {
                let operands: Vec<&'s Operand> = match &p.kind {
                    PredKind::Compare { left, right, .. } => vec![left, right],
                    PredKind::IsNull { operand, .. } => vec![operand],
                    _ => Vec::new(),
                };
                for operand in operands {
                    if let Some((_, name)) = operand.column().filter(|(_, n)| found.is_none() && matches(n)) {
                        found = Some(name);
                    }
                }
            });
            found
        };
        self.columns
            .iter()
            .map(String::as_str)
            .chain(self.assignments.iter().map(|a| a.column.as_str()))
            .find(|c| matches(c))
            .or_else(|| self.filter.as_ref().and_then(in_pred))
    }

    /// Whether a column reference in this statement's condition names the target row (rather
    /// than `excluded`, the row an upsert proposes).
    pub fn is_target_row(&self, qualifier: Option<&str>) -> bool {
        match qualifier {
            None => true,
            Some(q) => Some(q) == self.table.as_deref() || Some(q) == self.alias.as_deref(),
        }
    }
}

/// Calls `f` on `pred` and every sub-condition.
pub fn visit<'p>(pred: &'p Pred, f: &mut dyn FnMut(&'p Pred)) {
    f(pred);
    if let PredKind::And(items) | PredKind::Or(items) = &pred.kind {
        items.iter().for_each(|p| visit(p, f));
    }
}
