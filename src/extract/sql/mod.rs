//! SQL texts parsed with `sqlparser` — Postgres first, then SQLite — into the statement
//! model of [`crate::facts::sql`]. The parser's AST is dropped before extraction returns.

use sqlparser::ast::{self, Spanned};
use sqlparser::dialect::{PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;

use crate::facts::sql::*;
use crate::facts::SqlClass;
use crate::source::Span;

// ---------------------------------------------------------------- building SQL texts

/// Collects an SQL text piece by piece while remembering where each byte came from in the
/// file, so statement and clause spans point into the file.
#[derive(Debug, Default)]
pub struct SqlSource {
    text: String,
    /// File offset of each byte of `text`, and of the byte after it.
    starts: Vec<u32>,
    ends: Vec<u32>,
    holes: Vec<String>,
}

/// The first statement of `text`, read as a `.sql` file's (for tests).
#[cfg(test)]
pub(crate) fn first_statement(text: &str) -> crate::facts::sql::Statement {
    let mut source = SqlSource::new();
    source.push_str(text, 0);
    source.finish(Span::new(0, text.len()), SqlOrigin::SqlFile).statements()[0].clone()
}

impl SqlSource {
    pub fn new() -> SqlSource {
        SqlSource::default()
    }

    /// Text copied byte for byte from the file at `file_offset`.
    pub fn push_str(&mut self, text: &str, file_offset: usize) {
        for i in 0..text.len() {
            self.starts.push((file_offset + i) as u32);
            self.ends.push((file_offset + i + 1) as u32);
        }
        self.text.push_str(text);
    }

    /// A character decoded from an escape sequence spanning `file` in the file.
    pub fn push_decoded(&mut self, c: char, file: Span) {
        for _ in 0..c.len_utf8() {
            self.starts.push(file.start);
            self.ends.push(file.end);
        }
        self.text.push(c);
    }

    /// Text the file does not hold, written for the code at `file` (a query builder's
    /// `UPDATE t SET`, the `AND` of drizzle's `and(…)`).
    pub fn push_at(&mut self, text: &str, file: Span) {
        for _ in 0..text.len() {
            self.starts.push(file.start);
            self.ends.push(file.end);
        }
        self.text.push_str(text);
    }

    /// An interpolated hole: becomes the placeholder `$n`.
    pub fn push_hole(&mut self, source: &str, file: Span) {
        self.holes.push(source.split_whitespace().collect::<Vec<_>>().join(" "));
        let placeholder = format!("${}", self.holes.len());
        for _ in 0..placeholder.len() {
            self.starts.push(file.start);
            self.ends.push(file.end);
        }
        self.text.push_str(&placeholder);
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Parses the collected text into an [`SqlText`] covering `span` of the file.
    pub fn finish(self, span: Span, origin: SqlOrigin) -> SqlText {
        let operators = largest_operators(&self.text);
        let parse = if operators > MAX_OPERATORS {
            SqlParse::Failed(format!(
                "{TOO_LARGE}: {operators} AND/OR/UNION operators in one statement, over the limit of {MAX_OPERATORS}"
            ))
        } else if self.text.len() > BIG_TEXT || operators > SMALL_STACK_OPERATORS {
            // The parser and the tree it builds recurse; a big text gets a big stack.
            std::thread::scope(|scope| {
                std::thread::Builder::new()
                    .name("sql".into())
                    .stack_size(BIG_STACK)
                    .spawn_scoped(scope, || parse_and_convert(&self))
                    .ok()
                    .and_then(|worker| worker.join().ok())
                    .unwrap_or_else(|| SqlParse::Failed(format!("{TOO_LARGE}: the parser failed on it")))
            })
        } else {
            parse_and_convert(&self)
        };
        SqlText {
            span,
            origin,
            text: self.text,
            holes: self.holes,
            parse,
        }
    }
}

/// How a statement too large to analyse is described (its note starts so).
pub const TOO_LARGE: &str = "statement too large to analyse";

/// AND/OR/UNION/INTERSECT/EXCEPT operators one statement may hold: the parser's tree and the
/// model built from it nest one level per operator.
const MAX_OPERATORS: usize = 500;

/// Texts longer than this, or with a statement of more operators than that, are parsed on a
/// thread with a [`BIG_STACK`]: 400 `OR`s in 4 KB overflowed a 2 MB worker stack in a debug
/// build (issue 22, found by `tests/fuzz.rs`).
const BIG_TEXT: usize = 16 * 1024;
const SMALL_STACK_OPERATORS: usize = 64;
const BIG_STACK: usize = 256 * 1024 * 1024;

fn parse_and_convert(source: &SqlSource) -> SqlParse {
    match parse(&source.text) {
        Ok(statements) => {
            let converter = Converter::new(source);
            SqlParse::Parsed(statements.iter().map(|s| converter.statement(s)).collect())
        }
        Err(message) => SqlParse::Failed(message),
    }
}

/// The operator count of the largest statement of `text` (a word scan, linear in the text; a
/// count inside a string literal only errs towards skipping).
fn largest_operators(text: &str) -> usize {
    let mut largest = 0;
    let mut count = 0;
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        if b == b';' {
            largest = largest.max(count);
            count = 0;
            at += 1;
        } else if b.is_ascii_alphabetic() {
            let start = at;
            while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                at += 1;
            }
            let word = &text[start..at];
            if ["and", "or", "union", "intersect", "except"]
                .iter()
                .any(|k| word.eq_ignore_ascii_case(k))
            {
                count += 1;
            }
        } else {
            at += 1;
        }
    }
    largest.max(count)
}

/// Parses with the Postgres dialect, then SQLite (`?` placeholders, `INSERT OR REPLACE`).
fn parse(text: &str) -> Result<Vec<ast::Statement>, String> {
    match Parser::parse_sql(&PostgreSqlDialect {}, text) {
        Ok(statements) => Ok(statements),
        Err(postgres) => Parser::parse_sql(&SQLiteDialect {}, text).map_err(|_| {
            let message = postgres.to_string();
            message
                .strip_prefix("sql parser error: ")
                .unwrap_or(&message)
                .to_string()
        }),
    }
}

struct Converter<'s> {
    source: &'s SqlSource,
    line_starts: Vec<usize>,
    /// Byte offset of each char of a non-ASCII text (and of its end), and the char index of
    /// each line start: a location maps to a byte in constant time, so a long line (a
    /// minified `.sql` file) costs no more than short ones.
    chars: Option<(Vec<u32>, Vec<usize>)>,
}

impl<'s> Converter<'s> {
    fn new(source: &'s SqlSource) -> Converter<'s> {
        let mut line_starts = vec![0];
        line_starts.extend(source.text.match_indices('\n').map(|(i, _)| i + 1));
        let chars = (!source.text.is_ascii()).then(|| {
            let mut offsets: Vec<u32> = Vec::with_capacity(source.text.len() + 1);
            let mut line_chars = vec![0];
            for (i, c) in source.text.char_indices() {
                offsets.push(i as u32);
                if c == '\n' {
                    line_chars.push(offsets.len());
                }
            }
            offsets.push(source.text.len() as u32);
            (offsets, line_chars)
        });
        Converter {
            source,
            line_starts,
            chars,
        }
    }

    /// Byte offset in the SQL text of a parser location (1-based line, 1-based column in chars).
    fn offset(&self, location: sqlparser::tokenizer::Location) -> Option<usize> {
        let line = (location.line as usize).checked_sub(1)?;
        let line_start = *self.line_starts.get(line)?;
        let line_end = self
            .line_starts
            .get(line + 1)
            .map_or(self.source.text.len(), |next| next - 1);
        let column = (location.column as usize).checked_sub(1)?;
        let at = match &self.chars {
            None => line_start + column,
            Some((offsets, line_chars)) => *offsets.get(line_chars.get(line)? + column)? as usize,
        };
        (at <= line_end).then_some(at)
    }

    /// The file span of a parser span; `None` for the parser's empty spans.
    fn file_span(&self, span: sqlparser::tokenizer::Span) -> Option<Span> {
        if span.start.line == 0 {
            return None;
        }
        let (start, end) = (self.offset(span.start)?, self.offset(span.end)?);
        if start >= end || end > self.source.starts.len() {
            return None;
        }
        Some(Span {
            start: self.source.starts[start],
            end: self.source.ends[end - 1],
        })
    }

    fn span_or(&self, span: sqlparser::tokenizer::Span, fallback: Span) -> Span {
        self.file_span(span).unwrap_or(fallback)
    }

    /// How the user reads a printed fragment: `$n` placeholders shown as their holes.
    fn display(&self, printed: impl std::fmt::Display) -> String {
        let printed = printed.to_string();
        if self.source.holes.is_empty() {
            return printed;
        }
        let mut out = String::with_capacity(printed.len());
        let mut rest = printed.as_str();
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let digits: String = rest[at + 1..].chars().take_while(char::is_ascii_digit).collect();
            match digits
                .parse::<usize>()
                .ok()
                .and_then(|n| self.source.holes.get(n.wrapping_sub(1)))
            {
                Some(hole) => {
                    out.push_str("${");
                    out.push_str(hole);
                    out.push('}');
                    rest = &rest[at + 1 + digits.len()..];
                }
                None => {
                    out.push('$');
                    rest = &rest[at + 1..];
                }
            }
        }
        out.push_str(rest);
        out
    }

    fn whole(&self) -> Span {
        match (self.source.starts.first(), self.source.ends.last()) {
            (Some(start), Some(end)) => Span {
                start: *start,
                end: *end,
            },
            _ => Span::default(),
        }
    }

    fn statement(&self, stmt: &ast::Statement) -> Statement {
        let span = self.span_or(stmt.span(), self.whole());
        let mut out = Statement {
            kind: StatementKind::Other,
            span,
            text: self.display(stmt),
            table: None,
            alias: None,
            columns: Vec::new(),
            values: Vec::new(),
            assignments: Vec::new(),
            filter: None,
            on_conflict: None,
            or_replace: false,
            returning: false,
        };
        match stmt {
            ast::Statement::Update(update) => {
                out.kind = StatementKind::Update;
                out.returning = update.returning.is_some();
                (out.table, out.alias) = table_factor(&update.table.relation);
                out.assignments = update.assignments.iter().map(|a| self.assignment(a, span)).collect();
                out.filter = update.selection.as_ref().map(|e| self.pred(e, span));
            }
            ast::Statement::Insert(insert) => {
                out.kind = StatementKind::Insert;
                out.returning = insert.returning.is_some();
                if let ast::TableObject::TableName(name) = &insert.table {
                    out.table = object_name(name);
                }
                out.alias = insert.table_alias.as_ref().map(|a| ident(&a.alias));
                out.columns = insert.columns.iter().filter_map(object_name).collect();
                out.or_replace = insert.replace_into || matches!(insert.or, Some(ast::SqliteOnConflict::Replace));
                if let Some(source) = &insert.source {
                    if let ast::SetExpr::Values(values) = source.body.as_ref() {
                        if let Some(row) = values.rows.first() {
                            out.values = row.content.iter().map(|e| self.display(e)).collect();
                        }
                    }
                }
                if let Some(ast::OnInsert::OnConflict(conflict)) = &insert.on {
                    let target = match &conflict.conflict_target {
                        Some(ast::ConflictTarget::Columns { columns, .. }) => columns.iter().map(ident).collect(),
                        _ => Vec::new(),
                    };
                    let update = match &conflict.action {
                        ast::OnConflictAction::DoUpdate(update) => {
                            out.assignments = update.assignments.iter().map(|a| self.assignment(a, span)).collect();
                            out.filter = update.selection.as_ref().map(|e| self.pred(e, span));
                            true
                        }
                        ast::OnConflictAction::DoNothing => false,
                    };
                    out.on_conflict = Some(OnConflict { target, update });
                }
            }
            ast::Statement::Delete(delete) => {
                out.kind = StatementKind::Delete;
                out.returning = delete.returning.is_some();
                let tables = match &delete.from {
                    ast::FromTable::WithFromKeyword(tables) | ast::FromTable::WithoutKeyword(tables) => tables,
                };
                if let Some(first) = tables.first() {
                    (out.table, out.alias) = table_factor(&first.relation);
                }
                out.filter = delete.selection.as_ref().map(|e| self.pred(e, span));
            }
            ast::Statement::Query(query) => {
                if let ast::SetExpr::Select(select) = query.body.as_ref() {
                    out.kind = StatementKind::Select;
                    if let Some(first) = select.from.first() {
                        (out.table, out.alias) = table_factor(&first.relation);
                    }
                    out.filter = select.selection.as_ref().map(|e| self.pred(e, span));
                }
            }
            ast::Statement::CreateTable(create) => {
                out.kind = StatementKind::CreateTable;
                out.table = object_name(&create.name);
                out.columns = create.columns.iter().map(|c| ident(&c.name)).collect();
            }
            _ => {}
        }
        out
    }

    fn assignment(&self, assignment: &ast::Assignment, fallback: Span) -> Assignment {
        let column = match &assignment.target {
            ast::AssignmentTarget::ColumnName(name) => object_name(name).unwrap_or_default(),
            ast::AssignmentTarget::Tuple(_) => String::new(),
        };
        Assignment {
            column,
            value: operand(&assignment.value),
            value_text: self.display(&assignment.value),
            text: self.display(assignment),
            span: self.span_or(assignment.span(), fallback),
        }
    }

    fn pred(&self, expr: &ast::Expr, fallback: Span) -> Pred {
        let span = self.span_or(expr.span(), fallback);
        let text = self.display(expr);
        let kind = match expr {
            ast::Expr::Nested(inner) => {
                let mut inner = self.pred(inner, span);
                inner.text = text;
                return inner;
            }
            ast::Expr::BinaryOp { left, op, right } => match op {
                ast::BinaryOperator::And | ast::BinaryOperator::Or => {
                    let items = vec![self.pred(left, span), self.pred(right, span)];
                    if *op == ast::BinaryOperator::And {
                        PredKind::And(items)
                    } else {
                        PredKind::Or(items)
                    }
                }
                _ => match compare_op(op) {
                    Some(op) => PredKind::Compare {
                        left: operand(left),
                        op,
                        right: operand(right),
                        right_text: self.display(right),
                        left_text: self.display(left),
                    },
                    None => PredKind::Other,
                },
            },
            ast::Expr::IsNull(inner) => PredKind::IsNull {
                operand: operand(inner),
                negated: false,
            },
            ast::Expr::IsNotNull(inner) => PredKind::IsNull {
                operand: operand(inner),
                negated: true,
            },
            _ => PredKind::Other,
        };
        Pred { kind, span, text }
    }
}

fn compare_op(op: &ast::BinaryOperator) -> Option<CmpOp> {
    Some(match op {
        ast::BinaryOperator::Eq => CmpOp::Eq,
        ast::BinaryOperator::NotEq => CmpOp::NotEq,
        ast::BinaryOperator::Lt => CmpOp::Lt,
        ast::BinaryOperator::LtEq => CmpOp::LtEq,
        ast::BinaryOperator::Gt => CmpOp::Gt,
        ast::BinaryOperator::GtEq => CmpOp::GtEq,
        _ => return None,
    })
}

fn operand(expr: &ast::Expr) -> Operand {
    match expr {
        ast::Expr::Identifier(name) => Operand::Column {
            qualifier: None,
            name: ident(name),
        },
        ast::Expr::CompoundIdentifier(parts) if parts.len() >= 2 => Operand::Column {
            qualifier: Some(ident(&parts[parts.len() - 2])),
            name: ident(&parts[parts.len() - 1]),
        },
        ast::Expr::Value(value) if value.value == ast::Value::Null => Operand::Null,
        ast::Expr::Nested(inner) => operand(inner),
        _ => Operand::Other,
    }
}

fn ident(ident: &ast::Ident) -> String {
    ident.value.to_lowercase()
}

fn object_name(name: &ast::ObjectName) -> Option<String> {
    match name.0.last()? {
        ast::ObjectNamePart::Identifier(last) => Some(ident(last)),
        ast::ObjectNamePart::Function(_) => None,
    }
}

fn table_factor(factor: &ast::TableFactor) -> (Option<String>, Option<String>) {
    match factor {
        ast::TableFactor::Table { name, alias, .. } => (object_name(name), alias.as_ref().map(|a| ident(&a.name))),
        _ => (None, None),
    }
}

// ---------------------------------------------------------------- finding SQL

/// Statement keywords and, for each, a word that must follow for the text to read as SQL.
const SQL_SHAPES: &[(&str, &[&str])] = &[
    ("select", &["from"]),
    ("insert", &["into"]),
    ("update", &["set"]),
    ("delete", &["from"]),
    ("replace", &["into"]),
    ("with", &["as"]),
    ("create", &["table", "index", "view", "trigger"]),
    ("alter", &["table"]),
];

/// The statement kind of an SQL text, by its leading keyword.
pub fn classify_sql(template: &str) -> SqlClass {
    let upper = template.trim_matches('`').to_ascii_uppercase();
    let body = upper.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
    let first = body.split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or("");
    let squashed: String = upper.split_whitespace().collect::<Vec<_>>().join(" ");
    match first {
        "SELECT" | "WITH" if !squashed.contains("INSERT ") && !squashed.contains("UPDATE ") => SqlClass::Select,
        "INSERT" | "REPLACE" => {
            let guarded = [
                "ON CONFLICT",
                "ON DUPLICATE KEY",
                "INSERT OR IGNORE",
                "INSERT OR REPLACE",
                "WHERE NOT EXISTS",
            ]
            .iter()
            .any(|g| squashed.contains(g));
            if guarded || first == "REPLACE" {
                SqlClass::Upsert
            } else {
                SqlClass::Insert
            }
        }
        "UPDATE" => SqlClass::Update,
        "DELETE" => SqlClass::Delete,
        _ => SqlClass::Other,
    }
}

/// Whether a string literal reads as an SQL statement: it opens with a statement keyword and
/// has the word that keyword needs (`UPDATE … SET`, `INSERT INTO`, `SELECT … FROM`).
pub fn looks_like_sql(text: &str) -> bool {
    let mut words = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty());
    let Some(first) = words.next() else {
        return false;
    };
    if !text.trim_start().starts_with(|c: char| c.is_ascii_alphabetic()) {
        return false;
    }
    let first = first.to_ascii_lowercase();
    let Some((_, needs)) = SQL_SHAPES.iter().find(|(keyword, _)| *keyword == first) else {
        return false;
    };
    words.take(64).any(|w| needs.iter().any(|n| w.eq_ignore_ascii_case(n)))
}

/// Whether some string literal of a source text can read as SQL ([`looks_like_sql`]): a quote
/// followed, past spaces and raw-string marks, by one of the keywords an SQL text starts with
/// (any case). A byte test, so that a file without one is not walked for its strings; a
/// superset is safe (closing quotes are tested too).
pub fn may_hold_sql_string(text: &[u8]) -> bool {
    let keyword_at = |at: usize| {
        let rest = text.get(at..).unwrap_or_default();
        SQL_SHAPES.iter().any(|(keyword, _)| {
            rest.len() >= keyword.len() && rest[..keyword.len()].eq_ignore_ascii_case(keyword.as_bytes())
        })
    };
    // One pass: each byte of a run that follows a quote is tested once, however many quotes the
    // run holds (a file of a million `"` is linear, not quadratic).
    let mut from = 0;
    while let Some(offset) = memchr::memchr(b'"', &text[from..]) {
        let mut at = from + offset + 1;
        loop {
            if keyword_at(at) {
                return true;
            }
            match text.get(at) {
                Some(&b) if b.is_ascii_whitespace() || b >= 0x80 || matches!(b, b'r' | b'#' | b'"') => at += 1,
                _ => break,
            }
        }
        from = at.min(text.len());
    }
    false
}

/// Whether an SQL text that does not parse still looks like it writes a lease, so the user is
/// told it was not analysed.
pub fn looks_like_lease_write(text: &str) -> bool {
    let opens_write = text.split_whitespace().next().is_some_and(|w| {
        ["update", "insert", "replace"]
            .iter()
            .any(|k| w.eq_ignore_ascii_case(k))
    });
    let lower = text.to_ascii_lowercase();
    opens_write && (lower.contains("lease_until") || lower.contains("jobs_leases"))
}

/// Splits a `.sql` file into statements at top-level semicolons, skipping quotes, comments
/// and dollar-quoted bodies. Returns byte ranges, each trimmed of surrounding whitespace and
/// comments-only chunks.
pub fn split_statements(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let push = |from: usize, to: usize, out: &mut Vec<std::ops::Range<usize>>| {
        let chunk = &text[from..to];
        let has_code = chunk.lines().any(|l| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with("--")
        });
        if has_code {
            let lead = chunk.len() - chunk.trim_start().len();
            let trail = chunk.len() - chunk.trim_end().len();
            out.push(from + lead..to - trail);
        }
    };
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'"' | b'`' => {
                let quote = bytes[i];
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += 1;
                }
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = memchr::memmem::find(&bytes[i + 2..], b"*/").map_or(bytes.len(), |n| i + 2 + n + 2);
            }
            b'$' => {
                // `$tag$ … $tag$` (Postgres function bodies); `$1` placeholders are not tags.
                let name_len = bytes[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                let end = i + 1 + name_len;
                let placeholder = name_len > 0 && bytes[i + 1..end].iter().all(u8::is_ascii_digit);
                if bytes.get(end) == Some(&b'$') && !placeholder {
                    let tag = &bytes[i..=end];
                    i = memchr::memmem::find(&bytes[end + 1..], tag).map_or(bytes.len(), |n| end + 1 + n + tag.len());
                } else {
                    i += 1;
                }
            }
            b';' => {
                push(start, i, &mut out);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    push(start, bytes.len(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte test keeps every file with a literal that reads as SQL, as the string walk
    /// reads them (the raw literal, its marks trimmed), and rules out the others here.
    #[test]
    fn a_file_whose_strings_can_read_as_sql_is_kept_by_the_byte_test() {
        let literals = [
            "\"SELECT id FROM jobs\"",
            "r#\"\n    update jobs set lease_until = now()\"#",
            "r\"  Insert Into leases (a) values (1)\"",
            "\"\u{a0}delete from jobs\"",
            "b\"with x as (select 1) select * from x\"",
            "\"create table t (a int)\"",
        ];
        for literal in literals {
            let body = literal.trim_start_matches(['b']).trim_start_matches(['r', '#', '"']);
            assert!(looks_like_sql(body), "{literal} reads as SQL");
            let file = format!("fn main() {{ let q = {literal}; }}");
            assert!(may_hold_sql_string(file.as_bytes()), "{literal}");
        }
        for file in [
            "fn main() { let q = \"selected items\"; }",
            "fn main() { println!(\"hello\"); }",
            "fn update() { select(); }",
        ] {
            let literal_is_sql = file.split('"').skip(1).step_by(2).any(looks_like_sql);
            assert!(!literal_is_sql);
        }
        assert!(!may_hold_sql_string(b"fn main() { println!(\"hello\"); }"));
        assert!(!may_hold_sql_string(b"fn update() { select(); }"), "no string at all");
    }

    fn parse_template(parts: &[&str], holes: &[&str]) -> SqlText {
        let mut source = SqlSource::new();
        let mut offset = 0;
        for (i, part) in parts.iter().enumerate() {
            source.push_str(part, offset);
            offset += part.len();
            if let Some(hole) = holes.get(i) {
                source.push_hole(hole, Span::new(offset, offset + hole.len() + 3));
                offset += hole.len() + 3;
            }
        }
        source.finish(Span::new(0, offset), SqlOrigin::TaggedTemplate)
    }

    #[test]
    fn holes_become_placeholders_and_show_as_holes() {
        let sql = parse_template(
            &[
                "UPDATE jobs_leases SET holder = ",
                " WHERE name = ",
                " AND lease_until < ",
                "",
            ],
            &["runId", "job.name", "now"],
        );
        assert_eq!(
            sql.text,
            "UPDATE jobs_leases SET holder = $1 WHERE name = $2 AND lease_until < $3"
        );
        let [statement] = sql.statements() else {
            panic!("{sql:?}")
        };
        assert_eq!(statement.kind, StatementKind::Update);
        assert_eq!(statement.table.as_deref(), Some("jobs_leases"));
        let filter = statement.filter.as_ref().unwrap();
        assert_eq!(filter.text, "name = ${job.name} AND lease_until < ${now}");
        let conjuncts = filter.conjuncts();
        assert_eq!(conjuncts.len(), 2);
        let (column, op, value) = conjuncts[1].comparison().unwrap();
        assert_eq!(column.column(), Some((None, "lease_until")));
        assert_eq!((op, value), (CmpOp::Lt, "${now}"));
    }

    #[test]
    fn spans_point_into_the_file() {
        // `UPDATE t SET a = ${x} WHERE b < 1`, the template starting at byte 10 of its file.
        let mut source = SqlSource::new();
        source.push_str("UPDATE t SET a = ", 10);
        source.push_hole("x", Span::new(27, 31));
        source.push_str(" WHERE b < 1", 31);
        let sql = source.finish(Span::new(9, 44), SqlOrigin::TaggedTemplate);
        let statement = &sql.statements()[0];
        let filter = statement.filter.as_ref().unwrap();
        assert_eq!(filter.span, Span::new(38, 43), "`b < 1`");
        assert_eq!(statement.assignments[0].span, Span::new(23, 31), "`a = ${{x}}`");
    }

    #[test]
    fn sqlite_placeholders_and_upserts_parse() {
        let mut source = SqlSource::new();
        source.push_str(
            "INSERT OR REPLACE INTO jobs_leases (name, lease_until) VALUES (?1, ?2)",
            0,
        );
        let sql = source.finish(Span::new(0, 1), SqlOrigin::Rust);
        let statement = &sql.statements()[0];
        assert!(statement.or_replace);
        assert_eq!(statement.columns, ["name", "lease_until"]);
        assert_eq!(statement.values, ["?1", "?2"]);
    }

    #[test]
    fn upsert_condition_is_the_do_update_where() {
        let mut source = SqlSource::new();
        source.push_str(
            "INSERT INTO jobs_leases AS l (name, last_slot) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE \
             SET last_slot = excluded.last_slot WHERE l.last_slot < excluded.last_slot",
            0,
        );
        let sql = source.finish(Span::new(0, 1), SqlOrigin::SqlFile);
        let statement = &sql.statements()[0];
        assert_eq!(statement.alias.as_deref(), Some("l"));
        assert_eq!(statement.on_conflict.as_ref().unwrap().target, ["name"]);
        assert_eq!(
            statement.assignments[0].value,
            Operand::Column {
                qualifier: Some("excluded".into()),
                name: "last_slot".into()
            }
        );
        let (column, op, _) = statement.filter.as_ref().unwrap().comparison().unwrap();
        assert!(statement.is_target_row(column.column().unwrap().0));
        assert_eq!(op, CmpOp::Lt);
    }

    #[test]
    fn unparseable_text_keeps_the_message() {
        let mut source = SqlSource::new();
        source.push_str("UPDATE jobs_leases SET WHERE", 0);
        let sql = source.finish(Span::new(0, 1), SqlOrigin::Literal);
        let SqlParse::Failed(message) = &sql.parse else {
            panic!("{sql:?}")
        };
        assert!(message.contains("Expected"), "{message}");
    }

    #[test]
    fn sql_shapes() {
        assert!(looks_like_sql("SELECT id FROM users"));
        assert!(looks_like_sql("\n  update jobs_leases set holder = null"));
        assert!(!looks_like_sql("Update your profile"));
        assert!(!looks_like_sql("select a plan"));
        assert!(!looks_like_sql("  -- SELECT * FROM t"));
    }

    #[test]
    fn splits_statements_outside_quotes_comments_and_bodies() {
        let text = "CREATE TABLE a (x TEXT DEFAULT ';');\n-- a comment; still a comment\nSELECT $1;\nCREATE FUNCTION f() RETURNS void AS $$ BEGIN; END $$ LANGUAGE plpgsql;\n-- trailing comment\n";
        let parts: Vec<&str> = split_statements(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            parts,
            [
                "CREATE TABLE a (x TEXT DEFAULT ';')",
                "-- a comment; still a comment\nSELECT $1",
                "CREATE FUNCTION f() RETURNS void AS $$ BEGIN; END $$ LANGUAGE plpgsql",
            ]
        );
    }
}
