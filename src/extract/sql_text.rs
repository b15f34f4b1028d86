//! SQL texts outside TypeScript: `.sql` files and Rust string literals (sqlx `query!` and
//! `query(…)` arguments, raw strings). The TypeScript extractor finds its own (`sql`
//! templates, SQL-looking literals) and records them through [`push`].

use super::FieldExt;
use tree_sitter::{Node, Tree};

use crate::extract::sql::{looks_like_lease_write, split_statements, SqlSource};
use crate::facts::sql::{SqlOrigin, SqlParse, SqlText};
use crate::facts::FileFacts;
use crate::source::Span;

/// Records an SQL text; one that does not parse but looks like it writes a lease becomes a
/// note, so a lease nobody checked is never a silent miss.
pub(super) fn push(facts: &mut FileFacts, sql: SqlText) {
    if let SqlParse::Failed(message) = &sql.parse {
        if message.starts_with(crate::extract::sql::TOO_LARGE) {
            let (line, column) = facts.position(sql.span.start);
            facts.note(Some(line), format!("not analysed: SQL at {line}:{column}: {message}"));
        } else if looks_like_lease_write(&sql.text) {
            let (line, column) = facts.position(sql.span.start);
            facts.note(
                Some(line),
                format!("not analysed: SQL at {line}:{column} writes a lease but does not parse ({message})"),
            );
        }
    }
    facts.sql.push(sql);
}

/// A `.sql` file: parsed whole; when that fails, statement by statement, so one statement the
/// parser does not know does not hide the others.
pub(super) fn sql_file(facts: &mut FileFacts, text: &[u8]) {
    let Ok(text) = std::str::from_utf8(text) else { return };
    let mut whole = SqlSource::new();
    whole.push_str(text, 0);
    let sql = whole.finish(Span::new(0, text.len()), SqlOrigin::SqlFile);
    if matches!(sql.parse, SqlParse::Parsed(_)) {
        facts.sql.push(sql);
        return;
    }
    for range in split_statements(text) {
        let mut source = SqlSource::new();
        source.push_str(&text[range.clone()], range.start);
        push(
            facts,
            source.finish(Span::new(range.start, range.end), SqlOrigin::SqlFile),
        );
    }
}

/// sqlx and friends: macros whose string argument is a query.
const QUERY_MACROS: &[&str] = &[
    "query",
    "query_as",
    "query_scalar",
    "query_unchecked",
    "query_as_unchecked",
    "query_scalar_unchecked",
];

/// Every Rust string literal that reads as SQL or is a query macro's argument.
pub(super) fn rust_strings(facts: &mut FileFacts, text: &[u8], tree: &Tree) {
    // Most files hold neither: the walk over every node was a tenth of a Rust file's time.
    if !crate::extract::rust::may_invoke_macro(text, b"query") && !crate::extract::sql::may_hold_sql_string(text) {
        return;
    }
    let mut cursor = tree.walk();
    // The macro invocations around the walk, innermost last: their depth, and whether each
    // is a query macro (a string's nearest one says whether it is a query).
    let mut macros: Vec<(usize, bool)> = Vec::new();
    let mut depth = 0;
    'walk: loop {
        let node = cursor.node();
        while macros.last().is_some_and(|(at, _)| *at >= depth) {
            macros.pop();
        }
        if matches!(node.kind_str(), "string_literal" | "raw_string_literal") {
            // Most strings are not SQL: decide on the raw text before decoding it.
            let raw = std::str::from_utf8(&text[node.byte_range()]).unwrap_or("");
            let body = raw.trim_start_matches(['r', '#', '"']);
            let in_query_macro = macros.last().is_some_and(|(_, query)| *query);
            if crate::extract::sql::looks_like_sql(body) || in_query_macro {
                if let Some(source) = rust_literal(node, text) {
                    let sql = source.finish(Span::new(node.start_byte(), node.end_byte()), SqlOrigin::Rust);
                    push(facts, sql);
                }
            }
        } else {
            if node.kind_str() == "macro_invocation" {
                macros.push((depth, is_query_macro(node, text)));
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
            depth -= 1;
        }
    }
}

/// `sqlx::query!(…)` and the like.
fn is_query_macro(invocation: Node, text: &[u8]) -> bool {
    let Some(name) = invocation.field("macro") else {
        return false;
    };
    let name = std::str::from_utf8(&text[name.byte_range()]).unwrap_or("");
    let last = name.rsplit("::").next().unwrap_or(name);
    QUERY_MACROS.contains(&last)
}

/// The value of a Rust string literal, each byte mapped to the file. Byte strings and
/// C strings are not SQL texts.
fn rust_literal(node: Node, text: &[u8]) -> Option<SqlSource> {
    let first = *text.get(node.start_byte())?;
    if first == b'b' || first == b'c' {
        return None;
    }
    let mut source = SqlSource::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        let piece = std::str::from_utf8(&text[child.byte_range()]).ok()?;
        match child.kind_str() {
            "string_content" => source.push_str(piece, child.start_byte()),
            "escape_sequence" => {
                let span = Span::new(child.start_byte(), child.end_byte());
                if let Some(c) = crate::extract::decode_escape(piece) {
                    source.push_decoded(c, span);
                }
            }
            _ => {}
        }
    }
    Some(source)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::sql::StatementKind;
    use crate::source::Language;

    fn extract(language: Language, text: &str) -> FileFacts {
        super::super::extract_file(language, text.as_bytes())
    }

    #[test]
    fn rust_query_strings_are_sql_texts() {
        let text = r####"
fn claim() {
    let a = sqlx::query!("UPDATE jobs_leases SET holder = NULL WHERE name = $1", name);
    let b = sqlx::query(r#"SELECT name FROM jobs_leases WHERE name = "x""#);
    let c = query!("with_unusual_shape");
    let d = "Update your profile";
    let e = "DELETE FROM t \
             WHERE id = \"1\"";
}
"####;
        let facts = extract(Language::Rust, text);
        let texts: Vec<&str> = facts.sql.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts.len(), 4, "{texts:#?}");
        assert_eq!(facts.sql[0].statements()[0].kind, StatementKind::Update);
        assert_eq!(facts.sql[1].statements()[0].kind, StatementKind::Select);
        let delete: Vec<&str> = texts[3].split_whitespace().collect();
        assert_eq!(
            delete.join(" "),
            "DELETE FROM t WHERE id = \"1\"",
            "a line continuation is dropped"
        );
        // Spans point at the clause in the file.
        let filter = facts.sql[0].statements()[0].filter.as_ref().unwrap();
        assert_eq!(&text[filter.span.range()], "name = $1");
    }

    #[test]
    fn sql_files_parse_whole_or_statement_by_statement() {
        let text = "CREATE TABLE jobs_leases (name TEXT PRIMARY KEY, lease_until BIGINT);\nUPDATE jobs_leases SET lease_until = NULL WHERE name = $1;\n";
        let facts = extract(Language::Sql, text);
        assert_eq!(facts.sql.len(), 1);
        assert_eq!(facts.sql[0].statements().len(), 2);

        let text = "CREATE TABLE x (a TEXT);\nUPDATE jobs_leases SET lease_until = $1 WHERE name = = 2;\nSELECT 1;\n";
        let facts = extract(Language::Sql, text);
        assert_eq!(facts.sql.len(), 3, "one text per statement");
        assert_eq!(facts.notes.len(), 1, "{:?}", facts.notes);
        assert!(facts.notes[0]
            .message
            .starts_with("not analysed: SQL at 2:1 writes a lease"));
    }
}
