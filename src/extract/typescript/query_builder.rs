//! drizzle's update builder read as the SQL it writes, so the SQL rules see a lease claimed
//! through `db.update(table).set({…}).where(…)` like one written in an `sql` template:
//!
//! ```ts
//! db.update(alertRules).set({ lastScheduledAt: now })
//!   .where(and(eq(alertRules.id, id), sql`${alertRules.lastScheduledAt} < ${now - 30_000}`))
//! ```
//!
//! becomes `UPDATE alert_rules SET last_scheduled_at = $1 WHERE (id = $2) AND (…)`. The
//! table's SQL name and its columns' come from a `pgTable("alert_rules", { lastScheduledAt:
//! bigint("last_scheduled_at") })` in the same file, else from the variable and the keys in
//! snake_case (drizzle's `casing: "snake_case"`); the lease rules match names either way.
//! Values are bound parameters: `$n` holes that print as the code that gives them.
//!
//! Unknown is silent: a condition built by anything but drizzle's operators (`and`, `or`,
//! `not`, `eq`, `ne`, `lt`, `lte`, `gt`, `gte`, `isNull`, `isNotNull`) or `sql` fragments may
//! hold any guard, so such a chain yields no statement at all. Drizzle's inserts are read in
//! `units.rs` (`query_builder_insert`) as the kind of SQL a unit runs.

use tree_sitter::Node;

use super::{Extractor, Lineage, TopLevel};
use crate::extract::sql::SqlSource;
use crate::extract::{sql_text, FieldExt};
use crate::facts::sql::SqlOrigin;
use crate::source::Span;

/// How deep a condition is followed; deeper ones are unknown.
const MAX_DEPTH: usize = 16;

impl<'t> Extractor<'t, '_> {
    /// Called for every call: records the statement of a drizzle `update(…).set(…).where(…)`.
    pub(super) fn query_builder_update(&mut self, call: Node<'t>) {
        let Some(root) = self.lineage.root_node() else {
            return;
        };
        if let Some(sql) = update_statement(self.text, call, self.top_level(root), &self.lineage) {
            sql_text::push(self.facts, sql);
        }
    }
}

fn text<'a>(source: &'a [u8], node: Node) -> &'a str {
    std::str::from_utf8(&source[node.byte_range()]).unwrap_or("")
}

fn span(node: Node) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// `callee.method(…)`: the object and the arguments, when `call` calls `method` on something.
fn method_call<'a>(source: &[u8], call: Node<'a>, method: &str) -> Option<(Node<'a>, Vec<Node<'a>>)> {
    if call.kind_str() != "call_expression" {
        return None;
    }
    let callee = call.field("function").filter(|f| f.kind_str() == "member_expression")?;
    if callee.field("property").map(|p| text(source, p)) != Some(method) {
        return None;
    }
    let arguments = call.field("arguments").filter(|a| a.kind_str() == "arguments")?;
    let mut cursor = arguments.walk();
    let arguments = arguments
        .named_children(&mut cursor)
        .filter(|a| a.kind_str() != "comment")
        .collect();
    Some((callee.field("object")?, arguments))
}

/// `pgTable("alert_rules", …)`, `sqliteTable`, `mysqlTable`, or a schema's `.table(…)`.
fn is_table_builder(name: &str) -> bool {
    name.ends_with("Table") || name.ends_with(".table")
}

/// The table an update targets: its variable, its SQL name and its columns' (`key` → name).
struct Table {
    variable: String,
    name: String,
    columns: Vec<(String, String)>,
}

impl Table {
    fn column(&self, key: &str) -> String {
        self.columns
            .iter()
            .find(|(k, _)| k == key)
            .map_or_else(|| snake_case(key), |(_, name)| name.clone())
    }
}

/// `alertRules` → `alert_rules`.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The string a literal node holds, when it is a plain one.
fn string_literal(source: &[u8], node: Node) -> Option<String> {
    match node.kind_str() {
        "string" => Some(super::string_value(text(source, node))),
        "template_string" if node.named_child_count() == 0 => Some(super::string_value(text(source, node))),
        _ => None,
    }
}

/// The table `variable` names: from its `pgTable(…)` declaration at the top of the file, else
/// the variable's own name.
fn table(source: &[u8], top_level: &TopLevel, variable: &str) -> Table {
    let mut found = Table {
        variable: variable.to_string(),
        name: snake_case(variable),
        columns: Vec::new(),
    };
    for declarator in top_level.declarators(variable) {
        let Some(value) = declarator.field("value") else {
            continue;
        };
        let builder = value.field("function").map(|f| text(source, f)).unwrap_or("");
        if value.kind_str() != "call_expression" || !is_table_builder(builder) {
            continue;
        }
        let Some(arguments) = value.field("arguments") else {
            continue;
        };
        let mut args = arguments.walk();
        let args: Vec<Node> = arguments.named_children(&mut args).collect();
        if let Some(name) = args.first().and_then(|a| string_literal(source, *a)) {
            found.name = name;
        }
        if let Some(columns) = args.get(1).filter(|c| c.kind_str() == "object") {
            let mut pairs = columns.walk();
            for pair in columns.named_children(&mut pairs).filter(|p| p.kind_str() == "pair") {
                let (Some(key), Some(column)) = (pair.field("key"), pair.field("value")) else {
                    continue;
                };
                if let Some(name) = column_name(source, column) {
                    found.columns.push((super::string_value(text(source, key)), name));
                }
            }
        }
    }
    found
}

/// `bigint("last_scheduled_at", { mode: "number" }).notNull()`: the column's SQL name.
fn column_name(source: &[u8], mut node: Node) -> Option<String> {
    // Down the chain of modifiers to the column builder.
    for _ in 0..MAX_DEPTH {
        if node.kind_str() != "call_expression" {
            return None;
        }
        let function = node.field("function")?;
        if function.kind_str() == "member_expression" {
            let object = function.field("object")?;
            if object.kind_str() == "call_expression" {
                node = object;
                continue;
            }
        }
        let first = node.field("arguments")?.named_child(0)?;
        return string_literal(source, first);
    }
    None
}

/// The statement of `call` when it is `….update(table).set({…}).where(condition)`, with a
/// `RETURNING` when the chain goes on with `.returning(…)`.
fn update_statement<'t>(
    source: &[u8],
    call: Node<'t>,
    top_level: &TopLevel<'t>,
    lineage: &Lineage<'_, 't>,
) -> Option<crate::facts::SqlText> {
    let (set_call, where_args) = method_call(source, call, "where")?;
    let (update_call, set_args) = method_call(source, set_call, "set")?;
    let (_, update_args) = method_call(source, update_call, "update")?;
    let [table_arg] = update_args.as_slice() else {
        return None;
    };
    let [values] = set_args.as_slice() else { return None };
    let [condition] = where_args.as_slice() else {
        return None;
    };
    if table_arg.kind_str() != "identifier" || values.kind_str() != "object" {
        return None;
    }
    let table = table(source, top_level, text(source, *table_arg));
    let mut sql = SqlSource::new();
    sql.push_at(&format!("UPDATE {} SET ", table.name), span(update_call));
    let mut cursor = values.walk();
    let mut first = true;
    for entry in values.named_children(&mut cursor) {
        let (key, value) = match entry.kind_str() {
            "pair" => (entry.field("key")?, entry.field("value")?),
            "shorthand_property_identifier" => (entry, entry),
            "comment" => continue,
            // A spread may set any column.
            _ => return None,
        };
        if !first {
            sql.push_at(", ", span(entry));
        }
        first = false;
        let column = table.column(&super::string_value(text(source, key)));
        sql.push_at(&format!("{column} = "), span(key));
        sql.push_hole(text(source, value), span(value));
    }
    if first {
        return None;
    }
    sql.push_at(" WHERE ", span(*condition));
    Condition {
        source,
        table: &table,
        sql: &mut sql,
    }
    .predicate(*condition, 0)?;
    if returns(source, call, lineage) {
        sql.push_at(" RETURNING *", span(call));
    }
    Some(sql.finish(span(call), SqlOrigin::QueryBuilder))
}

/// Whether the chain above `call` goes on with `.returning(…)`.
fn returns<'t>(source: &[u8], call: Node<'t>, lineage: &Lineage<'_, 't>) -> bool {
    for parent in lineage.ancestors(call) {
        match parent.kind_str() {
            "member_expression" => {
                if parent.field("property").is_some_and(|p| text(source, p) == "returning") {
                    return true;
                }
            }
            "call_expression" | "await_expression" | "parenthesized_expression" => {}
            _ => return false,
        }
    }
    false
}

/// A drizzle condition written out as SQL.
struct Condition<'a, 's> {
    source: &'a [u8],
    table: &'a Table,
    sql: &'s mut SqlSource,
}

impl Condition<'_, '_> {
    fn predicate(&mut self, node: Node, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        if node.kind_str() == "parenthesized_expression" {
            return self.predicate(node.named_child(0)?, depth + 1);
        }
        if node.kind_str() != "call_expression" {
            return None;
        }
        let function = node.field("function").filter(|f| f.kind_str() == "identifier")?;
        let name = text(self.source, function);
        let arguments = node.field("arguments")?;
        if arguments.kind_str() == "template_string" {
            return (name == "sql").then(|| self.fragment(arguments));
        }
        let mut cursor = arguments.walk();
        let args: Vec<Node> = arguments
            .named_children(&mut cursor)
            .filter(|a| a.kind_str() != "comment")
            // `and(a, undefined)`: drizzle drops an undefined condition.
            .filter(|a| !matches!(a.kind_str(), "undefined"))
            .collect();
        let at = span(node);
        match (name, args.as_slice()) {
            ("and" | "or", [_, ..]) => {
                let joint = if name == "and" { " AND " } else { " OR " };
                for (i, arg) in args.iter().enumerate() {
                    self.sql.push_at(if i == 0 { "(" } else { joint }, at);
                    if i > 0 {
                        self.sql.push_at("(", at);
                    }
                    self.predicate(*arg, depth + 1)?;
                    self.sql.push_at(")", at);
                }
                Some(())
            }
            ("not", [inner]) => {
                self.sql.push_at("NOT (", at);
                self.predicate(*inner, depth + 1)?;
                self.sql.push_at(")", at);
                Some(())
            }
            ("eq" | "ne" | "lt" | "lte" | "gt" | "gte", [left, right]) => {
                let op = match name {
                    "eq" => " = ",
                    "ne" => " <> ",
                    "lt" => " < ",
                    "lte" => " <= ",
                    "gt" => " > ",
                    _ => " >= ",
                };
                self.operand(*left);
                self.sql.push_at(op, at);
                self.operand(*right);
                Some(())
            }
            ("isNull" | "isNotNull", [operand]) => {
                self.operand(*operand);
                let test = if name == "isNull" { " IS NULL" } else { " IS NOT NULL" };
                self.sql.push_at(test, at);
                Some(())
            }
            _ => None,
        }
    }

    /// `alertRules.lastScheduledAt`: a column of the updated table.
    fn column(&self, node: Node) -> Option<String> {
        if node.kind_str() != "member_expression" {
            return None;
        }
        let object = node.field("object")?;
        if text(self.source, object) != self.table.variable {
            return None;
        }
        let property = node.field("property")?;
        Some(self.table.column(text(self.source, property)))
    }

    /// A column of the table, or a bound parameter.
    fn operand(&mut self, node: Node) {
        match self.column(node) {
            Some(column) => self.sql.push_at(&column, span(node)),
            None => self.sql.push_hole(text(self.source, node), span(node)),
        }
    }

    /// An `sql` fragment: its text as written, its holes columns or parameters.
    fn fragment(&mut self, template: Node) {
        let (start, end) = (template.start_byte() + 1, template.end_byte().saturating_sub(1));
        let slice = |from: usize, to: usize| std::str::from_utf8(&self.source[from..to.max(from)]).unwrap_or("");
        self.sql.push_at("(", span(template));
        let mut pos = start;
        let mut cursor = template.walk();
        for child in template.named_children(&mut cursor) {
            if !matches!(child.kind_str(), "template_substitution" | "escape_sequence") {
                continue;
            }
            self.sql.push_str(slice(pos, child.start_byte()), pos);
            if child.kind_str() == "template_substitution" {
                let mut inner = child.walk();
                let expression = child.named_children(&mut inner).find(|c| c.kind_str() != "comment");
                match expression.and_then(|e| self.column(e)) {
                    Some(column) => self.sql.push_at(&column, span(child)),
                    None => self
                        .sql
                        .push_hole(expression.map_or("", |e| text(self.source, e)), span(child)),
                }
            } else if let Some(c) = crate::extract::decode_escape(text(self.source, child)) {
                self.sql.push_decoded(c, span(child));
            }
            pos = child.end_byte();
        }
        self.sql.push_str(slice(pos, end), pos);
        self.sql.push_at(")", span(template));
    }
}

#[cfg(test)]
mod tests {
    use crate::facts::sql::{SqlOrigin, StatementKind};
    use crate::facts::FileFacts;
    use crate::source::Language;

    fn extract(text: &str) -> FileFacts {
        crate::extract::extract_file(Language::TypeScript, text.as_bytes())
    }

    fn built(facts: &FileFacts) -> Vec<&str> {
        facts
            .sql
            .iter()
            .filter(|s| s.origin == SqlOrigin::QueryBuilder)
            .map(|s| s.text.as_str())
            .collect()
    }

    #[test]
    fn an_update_chain_reads_as_its_sql() {
        let facts = extract(
            r#"
import { and, eq, sql } from "drizzle-orm"
import { bigint, pgTable, text } from "drizzle-orm/pg-core"
export const alertRules = pgTable("alert_rules", {
  id: text("id").primaryKey(),
  lastScheduledAt: bigint("last_scheduled_at", { mode: "number" }),
})
export const claim = (id: string, now: number) =>
  db.update(alertRules).set({ lastScheduledAt: now })
    .where(and(eq(alertRules.id, id), sql`(${alertRules.lastScheduledAt} IS NULL OR ${alertRules.lastScheduledAt} < ${now - 30_000})`))
    .returning({ id: alertRules.id })
"#,
        );
        assert_eq!(
            built(&facts),
            ["UPDATE alert_rules SET last_scheduled_at = $1 WHERE (id = $2) AND (((last_scheduled_at IS NULL OR last_scheduled_at < $3))) RETURNING *"]
        );
        let sql = facts.sql.iter().find(|s| s.origin == SqlOrigin::QueryBuilder).unwrap();
        let statement = &sql.statements()[0];
        assert_eq!(statement.kind, StatementKind::Update);
        assert_eq!(statement.table.as_deref(), Some("alert_rules"));
        assert!(statement.returning);
        assert_eq!(sql.holes, ["now", "id", "now - 30_000"]);
    }

    #[test]
    fn names_without_a_table_definition_are_snake_cased() {
        let facts = extract(
            "const f = (slot: number, now: number) => db.update(jobLeases).set({ lastSlot: slot, leaseUntil: now + 1 })\n\
             .where(and(lt(jobLeases.lastSlot, slot), or(isNull(jobLeases.leaseUntil), lte(jobLeases.leaseUntil, now))))",
        );
        assert_eq!(
            built(&facts),
            ["UPDATE job_leases SET last_slot = $1, lease_until = $2 WHERE (last_slot < $3) AND ((lease_until IS NULL) OR (lease_until <= $4))"]
        );
    }

    #[test]
    fn a_condition_it_cannot_read_yields_no_statement() {
        for text in [
            "db.update(t).set({ a: 1 }).where(slotGuard(t, slot))",
            "db.update(t).set({ ...values }).where(eq(t.id, id))",
            "db.update(t).set({ a: 1 }).where(and(eq(t.id, id), custom(t.a)))",
            "db.update(t).set({ a: 1 })",
        ] {
            assert!(built(&extract(text)).is_empty(), "{text}");
        }
    }
}
