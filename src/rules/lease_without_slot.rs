//! `lease-without-slot`: a lease claim (an `UPDATE` or upsert that takes a lease) without the
//! guards of the policy's one-statement claim: `last_slot < slot` (a retried or late fire),
//! `lease_until < now` (overlap) and `lease_until > now + 2 * lease` (a clock that jumped).

use super::{snippet, Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::lease::{database_clock, is_holder_column, is_lease_table, lease_column, target_comparison};
use crate::facts::sql::{CmpOp, Operand, SqlOrigin, Statement, StatementKind};
use crate::facts::SqlText;

pub const RULE: Rule = Rule {
    name: "lease-without-slot",
    summary: "a lease claim without the `last_slot < slot` guard, the overlap guard or the clock-jump clause",
    decision: "5",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Leases],
    doc: include_str!("../../rules/lease-without-slot.md"),
    check,
};

const SLOT_COLUMN: &str = "last_slot";

fn is_slot_column(column: &str) -> bool {
    column == SLOT_COLUMN || column.contains("slot")
}

/// How a statement takes a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `UPDATE t SET lease_until = … WHERE …`
    Update,
    /// `INSERT … ON CONFLICT … DO UPDATE SET lease_until = … WHERE …`
    Upsert,
    /// `INSERT OR REPLACE` / `REPLACE INTO`: no condition at all.
    Replace,
}

fn claim_form(statement: &Statement, lease: &str) -> Option<Form> {
    let sets_lease = statement
        .assignments
        .iter()
        .any(|a| a.column == lease && a.value != Operand::Null);
    match statement.kind {
        StatementKind::Update if sets_lease => Some(Form::Update),
        StatementKind::Insert if statement.or_replace && statement.columns.iter().any(|c| c == lease) => {
            Some(Form::Replace)
        }
        StatementKind::Insert if statement.on_conflict.as_ref().is_some_and(|c| c.update) && sets_lease => {
            Some(Form::Upsert)
        }
        _ => None,
    }
}

/// Which guards a claim's condition has.
#[derive(Debug, Default, PartialEq, Eq)]
struct Guards {
    /// `last_slot < slot` as an `AND` term.
    slot: bool,
    /// `last_slot < slot` only as one `OR` alternative.
    slot_alternative: bool,
    /// The claim writes the slot it takes.
    slot_recorded: bool,
    /// `lease_until < now`, alone or among `OR` alternatives of an `AND` term, with its `now`.
    overlap: Option<String>,
    /// `lease_until > …` beside the overlap guard.
    clock_jump: bool,
}

fn guards(statement: &Statement, form: Form, lease: &str) -> Guards {
    let mut guards = Guards {
        slot_recorded: match form {
            Form::Replace => statement.columns.iter().any(|c| is_slot_column(c)),
            _ => statement.assignments.iter().any(|a| is_slot_column(&a.column)),
        },
        ..Guards::default()
    };
    let Some(filter) = statement.filter.as_ref().filter(|_| form != Form::Replace) else {
        return guards;
    };
    for term in filter.conjuncts() {
        if let Some((_, CmpOp::Lt, _)) = target_comparison(statement, term, is_slot_column) {
            guards.slot = true;
        }
        let alternatives = term.disjuncts();
        guards.slot_alternative |= alternatives.len() > 1
            && alternatives.iter().any(|alt| {
                matches!(
                    target_comparison(statement, alt, is_slot_column),
                    Some((_, CmpOp::Lt, _))
                )
            });
        let lease = |ops: &[CmpOp]| {
            alternatives.iter().find_map(|alt| {
                target_comparison(statement, alt, |c| c == lease)
                    .filter(|(_, op, _)| ops.contains(op))
                    .map(|(_, _, value)| value.to_string())
            })
        };
        if let Some(now) = lease(&[CmpOp::Lt, CmpOp::LtEq]) {
            guards.clock_jump = lease(&[CmpOp::Gt, CmpOp::GtEq]).is_some();
            guards.overlap = Some(now);
        }
    }
    guards
}

/// The values a canonical claim needs, taken from the statement where it has them.
struct Names {
    table: String,
    /// The column that holds the lease's expiry.
    lease: String,
    /// How the target row's columns are qualified in an upsert condition.
    row: String,
    key: String,
    key_value: String,
    slot: String,
    slot_value: String,
    lease_value: String,
    holder: String,
    holder_value: String,
    now: String,
    far_future: String,
    template: bool,
    sqlite: bool,
}

impl Names {
    fn of(sql: &SqlText, statement: &Statement, guards: &Guards, lease: &str) -> Names {
        let template = sql.holes_are_code();
        // SQLite-style texts (`?1`) get SQLite-style parameters.
        let sqlite = !template && !sql.text.contains('$') && sql.text.contains('?');
        let param = |ts: &str, n: usize| match (template, sqlite) {
            (true, _) => format!("${{{ts}}}"),
            (false, true) => format!("?{n}"),
            (false, false) => format!("${n}"),
        };
        let table = statement.table.clone().unwrap_or_else(|| "jobs_leases".into());
        let row = statement.alias.clone().unwrap_or_else(|| table.clone());
        // A value a template gives a column, in `SET` or `VALUES`. Other texts get numbered
        // parameters throughout, so the help never mixes two numberings.
        let value_of = |column: &str| -> Option<String> {
            if !template {
                return None;
            }
            let assigned = statement
                .assignments
                .iter()
                .find(|a| a.column == column && matches!(a.value, Operand::Other))
                .map(|a| a.value_text.clone());
            let inserted = statement
                .columns
                .iter()
                .position(|c| c == column)
                .and_then(|i| statement.values.get(i).cloned());
            assigned.or(inserted)
        };
        let equality_key = statement.filter.as_ref().and_then(|f| {
            f.conjuncts().into_iter().find_map(|term| {
                target_comparison(statement, term, |c| {
                    c != lease && !is_slot_column(c) && !is_holder_column(c)
                })
                .filter(|(_, op, _)| *op == CmpOp::Eq)
                .map(|(column, _, value)| (column.to_string(), value.to_string()))
            })
        });
        let conflict_key = statement.on_conflict.as_ref().and_then(|c| c.target.first().cloned());
        let (key, key_value) = match (conflict_key, equality_key) {
            (Some(key), _) => {
                let value = value_of(&key);
                (key, value)
            }
            (None, Some((key, value))) => (key, Some(value).filter(|_| template)),
            (None, None) => ("name".to_string(), None),
        };
        let mentioned: Vec<&str> = statement
            .assignments
            .iter()
            .map(|a| a.column.as_str())
            .chain(statement.columns.iter().map(String::as_str))
            .collect();
        let slot = mentioned
            .iter()
            .find(|c| is_slot_column(c))
            .map_or(SLOT_COLUMN.to_string(), |c| c.to_string());
        let holder = mentioned
            .iter()
            .find(|c| is_holder_column(c))
            .map_or("holder".to_string(), |c| c.to_string());
        Names {
            key_value: key_value.unwrap_or_else(|| param("job.name", 1)),
            slot_value: value_of(&slot).unwrap_or_else(|| param("slot", 2)),
            lease_value: value_of(lease)
                .filter(|v| database_clock(v).is_none())
                .unwrap_or_else(|| param("now + leaseMs", 3)),
            holder_value: value_of(&holder).unwrap_or_else(|| param("runId", 4)),
            now: guards
                .overlap
                .clone()
                .filter(|now| template && database_clock(now).is_none())
                .unwrap_or_else(|| param("now", 5)),
            far_future: param("now + 2 * leaseMs", 6),
            table,
            lease: lease.to_string(),
            row,
            key,
            slot,
            holder,
            template,
            sqlite,
        }
    }

    /// Decision 5's claim, adapted to this table's columns.
    fn canonical_upsert(&self) -> String {
        let Names {
            table,
            lease,
            key,
            slot,
            holder,
            ..
        } = self;
        let mut text = format!(
            "claim the slot with one upsert (one row back means this replica runs it):\n\
             INSERT INTO {table} ({key}, {slot}, {lease}, {holder})\n\
             VALUES ({}, {}, {}, {})\n\
             ON CONFLICT ({key}) DO UPDATE\n  \
             SET {slot} = excluded.{slot}, {lease} = excluded.{lease}, {holder} = excluded.{holder}\n  \
             WHERE {table}.{slot} < excluded.{slot}\n    \
             AND {}\n\
             RETURNING {key}",
            self.key_value,
            self.slot_value,
            self.lease_value,
            self.holder_value,
            self.overlap_group(table),
        );
        if !self.template {
            let p = if self.sqlite { '?' } else { '$' };
            text.push_str(&format!(
                "\n({p}5 is now and {p}6 is now + 2 × the lease: the claim takes now as a parameter)"
            ));
        }
        text
    }

    /// `(lease_until IS NULL OR lease_until < now OR lease_until > now + 2 * lease)`.
    fn overlap_group(&self, row: &str) -> String {
        let column = if row.is_empty() {
            self.lease.clone()
        } else {
            format!("{row}.{}", self.lease)
        };
        format!(
            "({column} IS NULL OR {column} < {} OR {column} > {})",
            self.now, self.far_future
        )
    }
}

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for sql in &ctx.facts.sql {
        for statement in sql.statements() {
            let lease = lease_column(ctx.config(), statement);
            let Some(form) = claim_form(statement, lease) else {
                continue;
            };
            if !is_lease_table(ctx.config(), statement) {
                continue;
            }
            let guards = guards(statement, form, lease);
            let names = Names::of(sql, statement, &guards, lease);
            let row = if form == Form::Upsert {
                names.row.clone()
            } else {
                String::new()
            };
            let mut missing: Vec<(String, String)> = Vec::new();
            if !guards.slot {
                let what = if guards.slot_alternative {
                    "tests `last_slot < slot` only as one alternative of an OR: a retried or late fire runs the slot again whenever another alternative holds"
                } else {
                    "has no `last_slot < slot` guard: a retried or late fire runs the slot again"
                };
                missing.push((what.to_string(), names.canonical_upsert()));
            } else if !guards.slot_recorded {
                missing.push((
                    "checks `last_slot < slot` but never sets the slot it takes: a retried fire of the same slot claims it again".to_string(),
                    format!(
                        "record the slot with the lease: `SET {slot} = {value}, …`",
                        slot = names.slot,
                        value = if form == Form::Upsert {
                            format!("excluded.{}", names.slot)
                        } else {
                            names.slot_value.clone()
                        }
                    ),
                ));
            }
            if guards.overlap.is_none() {
                missing.push((
                    format!("has no overlap guard `{lease} < now`: a second replica takes the lease while the first still runs"),
                    format!("add `AND {}`", names.overlap_group(&row)),
                ));
            } else if !guards.clock_jump {
                missing.push((
                    format!("has no clock-jump clause `{lease} > now + 2 * lease`: a lease written by a clock that ran ahead blocks the job until that time"),
                    format!("widen the overlap guard to `{}`", names.overlap_group(&row)),
                ));
            }
            // The claim takes now as a parameter: the database's clock is another clock than
            // the one the slot and the lease are computed with, and `now()` does not run
            // unchanged on Postgres, SQLite and D1.
            let lease_written = statement
                .assignments
                .iter()
                .filter(|a| a.column == lease)
                .map(|a| a.value_text.as_str())
                .chain(
                    statement
                        .columns
                        .iter()
                        .position(|c| c == lease)
                        .and_then(|i| statement.values.get(i))
                        .map(String::as_str),
                );
            let clock = guards
                .overlap
                .as_deref()
                .into_iter()
                .chain(lease_written)
                .find_map(database_clock);
            if let Some(clock) = clock {
                missing.push((
                    format!("reads the database clock `{clock}` instead of taking now as a parameter: the lease is checked with another clock than the one the job's slot and timeout are measured with"),
                    format!("pass now from `Clock` as a parameter (`{lease} < {}`) and the lease as now + the job's timeout + 1 minute", names.now),
                ));
            }
            // One row back means this replica runs the slot. Rust code reads `rows_affected()`.
            if form != Form::Replace && !statement.returning && sql.origin != SqlOrigin::Rust {
                missing.push((
                    "has no `RETURNING`: no row comes back, so the replica cannot tell whether it took the slot".to_string(),
                    format!("end the claim with `RETURNING {}`: one row back means this replica runs the slot, none means it does nothing", names.key),
                ));
            }
            let Some(((first, help), rest)) = missing.split_first() else {
                continue;
            };
            let (clause, span) = match (&statement.filter, form) {
                (Some(filter), Form::Update | Form::Upsert) => {
                    (format!("`WHERE {}`", snippet(&filter.text, 90)), filter.span)
                }
                (_, Form::Replace) => (format!("`{}`", snippet(&statement.text, 60)), statement.span),
                (None, _) => (format!("`{}` (no WHERE)", snippet(&statement.text, 60)), statement.span),
            };
            let mut message = format!("lease claim {clause} {first}");
            for (also, _) in rest {
                let short = also.split(':').next().unwrap_or(also);
                message.push_str(&format!("; it also {short}"));
            }
            // The canonical claim covers every guard; otherwise each missing guard says its own.
            let mut help = help.clone();
            if guards.slot {
                for (_, more) in rest {
                    help.push_str("; ");
                    help.push_str(more);
                }
            }
            out.push(RULE.report(ctx, span, message).with_help(help));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::sql::SqlSource;
    use crate::source::Span;

    fn statement(text: &str) -> Statement {
        let mut source = SqlSource::new();
        source.push_str(text, 0);
        let sql = source.finish(Span::new(0, text.len()), SqlOrigin::SqlFile);
        sql.statements()[0].clone()
    }

    fn guards_of(text: &str) -> Guards {
        let statement = statement(text);
        let form = claim_form(&statement, "lease_until").expect("a claim");
        guards(&statement, form, "lease_until")
    }

    const CANONICAL: &str = "INSERT INTO jobs_leases (name, last_slot, lease_until, holder) VALUES ($1, $2, $3, $4) \
        ON CONFLICT (name) DO UPDATE SET last_slot = excluded.last_slot, lease_until = excluded.lease_until, holder = excluded.holder \
        WHERE jobs_leases.last_slot < excluded.last_slot \
        AND (jobs_leases.lease_until IS NULL OR jobs_leases.lease_until < $5 OR jobs_leases.lease_until > $6) RETURNING name";

    #[test]
    fn the_canonical_upsert_has_every_guard() {
        assert_eq!(
            guards_of(CANONICAL),
            Guards {
                slot: true,
                slot_alternative: false,
                slot_recorded: true,
                overlap: Some("$5".into()),
                clock_jump: true
            }
        );
    }

    #[test]
    fn guards_are_read_from_either_side_and_only_as_and_terms() {
        let flipped = guards_of(
            "UPDATE jobs_leases SET lease_until = $1, last_slot = $2 WHERE $2 > last_slot AND ($3 > lease_until OR lease_until >= $4)",
        );
        assert!(flipped.slot && flipped.slot_recorded && flipped.clock_jump);
        assert_eq!(flipped.overlap.as_deref(), Some("$3"));
        // A slot test that is only one alternative guards nothing.
        let alternative = guards_of("UPDATE jobs_leases SET lease_until = $1 WHERE last_slot < $2 OR lease_until < $3");
        assert!(!alternative.slot && alternative.slot_alternative);
        // `excluded.last_slot < jobs_leases.last_slot` is the wrong way round.
        let reversed = guards_of(
            "INSERT INTO jobs_leases (name, last_slot, lease_until) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE \
             SET last_slot = excluded.last_slot, lease_until = excluded.lease_until WHERE excluded.last_slot < jobs_leases.last_slot",
        );
        assert!(!reversed.slot);
    }

    #[test]
    fn what_is_not_a_claim() {
        for text in [
            "SELECT name FROM jobs_leases WHERE lease_until < $1",
            "UPDATE jobs_leases SET lease_until = NULL, holder = NULL WHERE name = $1 AND holder = $2",
            "INSERT INTO jobs_leases (name) VALUES ($1) ON CONFLICT DO NOTHING",
            "UPDATE jobs_leases SET last_slot = $1 WHERE name = $2",
        ] {
            assert_eq!(claim_form(&statement(text), "lease_until"), None, "{text}");
        }
        assert_eq!(
            claim_form(
                &statement("INSERT OR REPLACE INTO jobs_leases (name, lease_until) VALUES (?1, ?2)"),
                "lease_until"
            ),
            Some(Form::Replace)
        );
    }

    #[test]
    fn the_canonical_claim_is_adapted_to_the_table() {
        let text = "UPDATE scheduler_locks SET lease_until = $1, owner = $2 WHERE job = $3 AND lease_until < $4";
        let statement = statement(text);
        let guards = guards(&statement, Form::Update, "lease_until");
        let sql = SqlText {
            span: Span::default(),
            origin: SqlOrigin::SqlFile,
            text: text.into(),
            holes: Vec::new(),
            parse: crate::facts::sql::SqlParse::Parsed(vec![statement.clone()]),
        };
        let help = Names::of(&sql, &statement, &guards, "lease_until").canonical_upsert();
        assert!(
            help.contains("INSERT INTO scheduler_locks (job, last_slot, lease_until, owner)\nVALUES ($1, $2, $3, $4)"),
            "{help}"
        );
        assert!(
            help.contains("WHERE scheduler_locks.last_slot < excluded.last_slot"),
            "{help}"
        );
        assert!(help.contains("scheduler_locks.lease_until < $5 OR"), "{help}");
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn lease_without_slot() {
        let pass = [
            (
                "src/infra/jobs/leases.ts",
                r#"export const claim = (job: Job, slot: number, now: number, leaseMs: number, runId: string) =>
  sql`INSERT INTO job_leases (name, last_slot, lease_until, holder)
      VALUES (${job.name}, ${slot}, ${now + leaseMs}, ${runId})
      ON CONFLICT (name) DO UPDATE
        SET last_slot = excluded.last_slot, lease_until = excluded.lease_until, holder = excluded.holder
        WHERE job_leases.last_slot < excluded.last_slot
          AND (job_leases.lease_until IS NULL OR job_leases.lease_until < ${now}
               OR job_leases.lease_until > ${now + 2 * leaseMs})
      RETURNING name`
"#,
            ),
            (
                "src/infra/jobs/leases.ts",
                r#"// Not a lease: a plain status update.
export const markDone = (name: string) => sql`UPDATE jobs SET status = 'done' WHERE name = ${name}`
"#,
            ),
        ];
        let fail = [
            (
                "src/infra/jobs/leases.ts",
                r#"export const claim = (name: string, now: number, leaseMs: number, runId: string) =>
  sql`UPDATE job_leases SET lease_until = ${now + leaseMs}, holder = ${runId}
      WHERE name = ${name} AND lease_until < ${now}`
"#,
            ),
            (
                "src/infra/jobs/claim.sql",
                r#"-- Claims a free lease, whatever the slot: a late replica runs the slot again.
UPDATE job_leases SET lease_until = $2, holder = $3
WHERE name = $1 AND (lease_until IS NULL OR lease_until < now())
RETURNING name;
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
