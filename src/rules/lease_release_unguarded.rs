//! `lease-release-unguarded`: a lease release (clearing `lease_until` or the holder) whose
//! `WHERE` does not name the holder, so a run that outlived its lease frees another's.

use super::{snippet, Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::lease::{is_holder_column, is_lease_table, lease_column, target_comparison};
use crate::facts::sql::{CmpOp, Operand, Statement, StatementKind};

pub const RULE: Rule = Rule {
    name: "lease-release-unguarded",
    summary: "a lease release whose WHERE does not name the holder",
    decision: "5",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Leases],
    doc: include_str!("../../rules/lease-release-unguarded.md"),
    check,
};

/// An `UPDATE` that clears the lease (`lease_until = NULL`) or its holder, and sets no new
/// lease; a `DELETE` of one job's lease row (`WHERE name = $1`) that does not test the
/// lease's expiry (deleting expired leases releases no one's).
fn is_release(statement: &Statement, lease: &str) -> bool {
    if statement.kind == StatementKind::Delete {
        let Some(filter) = &statement.filter else {
            return false;
        };
        let terms = filter.conjuncts();
        let keyed = terms.iter().any(|term| {
            target_comparison(statement, term, |c| c != lease && !is_holder_column(c))
                .is_some_and(|(_, op, value)| op == CmpOp::Eq && !value.eq_ignore_ascii_case("null"))
        });
        let mut expiry = false;
        crate::facts::sql::visit(filter, &mut |p| {
            expiry |= target_comparison(statement, p, |c| c == lease).is_some();
        });
        return keyed && !expiry;
    }
    if statement.kind != StatementKind::Update {
        return false;
    }
    let clears = |a: &&crate::facts::sql::Assignment| a.column == lease || is_holder_column(&a.column);
    let mut cleared = statement.assignments.iter().filter(clears);
    let any_cleared = cleared.clone().any(|a| a.value == Operand::Null);
    let takes = cleared.any(|a| a.column == lease && a.value != Operand::Null);
    any_cleared && !takes
}

/// `holder = $run` as an `AND` term of the condition.
fn names_holder(statement: &Statement) -> bool {
    statement.filter.as_ref().is_some_and(|filter| {
        filter.conjuncts().into_iter().any(|term| {
            target_comparison(statement, term, is_holder_column)
                .is_some_and(|(_, op, value)| op == CmpOp::Eq && !value.eq_ignore_ascii_case("null"))
        })
    })
}

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for sql in &ctx.facts.sql {
        for statement in sql.statements() {
            let lease = lease_column(ctx.config(), statement);
            if !is_release(statement, lease) || !is_lease_table(ctx.config(), statement) || names_holder(statement) {
                continue;
            }
            let holder = statement
                .assignments
                .iter()
                .map(|a| a.column.as_str())
                .find(|c| is_holder_column(c))
                .unwrap_or("holder");
            let template = sql.holes_are_code();
            let run_id = if template {
                "${runId}".to_string()
            } else {
                next_placeholder(&statement.text)
            };
            let (release, clears) = if statement.kind == StatementKind::Delete {
                ("lease release `DELETE … WHERE", "deletes")
            } else {
                ("lease release `WHERE", "clears")
            };
            let (message, span, help) = match &statement.filter {
                Some(filter) => (
                    format!(
                        "{release} {}` does not check `{holder}`: a run that outlived its lease {clears} the lease another replica now holds",
                        snippet(&filter.text, 80)
                    ),
                    filter.span,
                    format!(
                        "release only the lease this run took: `WHERE {} AND {holder} = {run_id}`",
                        snippet(&filter.text, 80)
                    ),
                ),
                None => (
                    format!(
                        "lease release `{}` has no WHERE: it clears every job's lease, including those other replicas hold",
                        snippet(&statement.text, 60)
                    ),
                    statement.span,
                    format!("release only this job's lease, taken by this run: `WHERE name = … AND {holder} = {run_id}`"),
                ),
            };
            out.push(RULE.report(ctx, span, message).with_help(help));
        }
    }
}

/// The parameter after the text's last: `$3` after `$1, $2`, `?` in SQLite style.
fn next_placeholder(text: &str) -> String {
    let highest = text
        .match_indices('$')
        .filter_map(|(i, _)| {
            let digits: String = text[i + 1..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<usize>().ok()
        })
        .max();
    match highest {
        Some(n) => format!("${}", n + 1),
        None if text.contains('?') => "?".to_string(),
        None => "$1".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::sql::first_statement as statement;

    #[test]
    fn releases_and_their_guard() {
        let unguarded = statement("UPDATE jobs_leases SET lease_until = NULL, holder = NULL WHERE name = $1");
        assert!(is_release(&unguarded, "lease_until") && !names_holder(&unguarded));
        let guarded = statement("UPDATE jobs_leases SET lease_until = NULL WHERE name = $1 AND holder = $2");
        assert!(is_release(&guarded, "lease_until") && names_holder(&guarded));
        let either =
            statement("UPDATE jobs_leases SET holder = NULL WHERE name = $1 AND (holder = $2 OR lease_until < $3)");
        assert!(
            is_release(&either, "lease_until") && !names_holder(&either),
            "an alternative is not a guard"
        );
        let claim = statement("UPDATE jobs_leases SET lease_until = $1, holder = $2 WHERE name = $3");
        assert!(!is_release(&claim, "lease_until"));
        let delete = statement("DELETE FROM jobs_leases WHERE name = $1");
        assert!(is_release(&delete, "lease_until") && !names_holder(&delete));
        let guarded_delete = statement("DELETE FROM jobs_leases WHERE name = $1 AND holder = $2");
        assert!(is_release(&guarded_delete, "lease_until") && names_holder(&guarded_delete));
        for text in [
            "DELETE FROM jobs_leases WHERE lease_until < $1",
            "DELETE FROM jobs_leases WHERE name = $1 AND lease_until < $2",
            "DELETE FROM jobs_leases",
        ] {
            assert!(!is_release(&statement(text), "lease_until"), "{text}");
        }
    }

    #[test]
    fn the_run_id_parameter_follows_the_text() {
        assert_eq!(next_placeholder("WHERE name = $1 AND x = $2"), "$3");
        assert_eq!(next_placeholder("WHERE name = ?"), "?");
        assert_eq!(next_placeholder("WHERE name = 'a'"), "$1");
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn lease_release_unguarded() {
        let pass = [
            (
                "src/infra/jobs/leases.ts",
                r#"export const release = (name: string, runId: string) =>
  sql`UPDATE job_leases SET lease_until = NULL, holder = NULL WHERE name = ${name} AND holder = ${runId}`
"#,
            ),
            (
                "src/infra/jobs/leases.ts",
                r#"export const unlock = (name: string, owner: string) =>
  sql`UPDATE cron_locks SET locked_until = NULL WHERE name = ${name} AND locked_by = ${owner}`
"#,
            ),
        ];
        let fail = [
            (
                "src/infra/jobs/leases.ts",
                r#"export const release = (name: string) =>
  sql`UPDATE job_leases SET lease_until = NULL, holder = NULL WHERE name = ${name}`
"#,
            ),
            (
                "src/infra/jobs/release.sql",
                r#"-- Clears whoever holds the lease, this replica or the next.
UPDATE jobs_leases SET holder = NULL, lease_until = NULL WHERE name = $1;
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
