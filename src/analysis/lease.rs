//! What the lease rules share about lease SQL: which tables hold leases, which columns name
//! the holder, and comparisons of the target row's columns.

use crate::config::Config;
use crate::facts::sql::{CmpOp, Operand, Pred, PredKind, Statement};

/// The column that holds a lease's expiry in `statement`: the first configured one
/// (`lease-columns`, `lease_until` by default) it names, as it spells it, else the first
/// configured.
pub fn lease_column<'a>(config: &'a Config, statement: &'a Statement) -> &'a str {
    config
        .lease_columns
        .iter()
        .find_map(|c| statement.find_column(|name| same_name(name, c)))
        .or(config.lease_columns.first().map(String::as_str))
        .unwrap_or("lease_until")
}

/// A table that holds leases: configured (`lease-tables`), or one the statement gives a
/// lease column (`lease-columns`).
pub fn is_lease_table(config: &Config, statement: &Statement) -> bool {
    let Some(table) = &statement.table else {
        return false;
    };
    config.lease_tables.iter().any(|t| same_name(t, table))
        || config
            .lease_columns
            .iter()
            .any(|c| statement.find_column(|name| same_name(name, c)).is_some())
}

/// Whether two names are one, whatever their case and underscores: an ORM's `lastScheduledAt`
/// (which SQL lowercases to `lastscheduledat`) is the column `last_scheduled_at`, and a
/// configured `lastScheduledAt` names either.
pub fn same_name(a: &str, b: &str) -> bool {
    let fold = |s: &str| {
        s.bytes()
            .filter(|b| *b != b'_')
            .map(|b| b.to_ascii_lowercase())
            .collect::<Vec<u8>>()
    };
    fold(a) == fold(b)
}

/// `now()`, `CURRENT_TIMESTAMP`, `datetime('now')`: the database's clock, in a value as printed.
pub fn database_clock(value: &str) -> Option<&'static str> {
    let lower = value.to_ascii_lowercase();
    // A template hole (`${now}`) is the application's value, whatever it is named.
    if lower.contains("${") {
        return None;
    }
    const CLOCKS: &[(&str, &str)] = &[
        ("now()", "now()"),
        ("current_timestamp", "CURRENT_TIMESTAMP"),
        ("localtimestamp", "LOCALTIMESTAMP"),
        ("clock_timestamp(", "clock_timestamp()"),
        ("statement_timestamp(", "statement_timestamp()"),
        ("transaction_timestamp(", "transaction_timestamp()"),
        ("'now'", "'now'"),
        ("unixepoch(", "unixepoch()"),
        ("sysdate", "SYSDATE"),
        ("getdate(", "GETDATE()"),
        ("utc_timestamp", "UTC_TIMESTAMP"),
    ];
    CLOCKS
        .iter()
        .find(|(text, _)| lower.contains(text))
        .map(|(_, shown)| *shown)
}

/// `holder`, `lease_holder`, `owner`, `locked_by`, `run_id`: who holds the lease.
pub fn is_holder_column(column: &str) -> bool {
    column.ends_with("holder")
        || column.ends_with("holder_id")
        || column.contains("owner")
        || matches!(column, "locked_by" | "claimed_by" | "run_id" | "worker_id")
}

/// A comparison of a column of the target row (not `excluded.*`) with something else:
/// `(column, op, the other side as printed)`, the column on the left.
pub fn target_comparison<'p>(
    statement: &Statement,
    pred: &'p Pred,
    column: impl Fn(&str) -> bool,
) -> Option<(&'p str, CmpOp, &'p str)> {
    let PredKind::Compare {
        left,
        op,
        right,
        right_text,
        left_text,
    } = &pred.kind
    else {
        return None;
    };
    let is_target = |operand: &'p Operand| match operand {
        Operand::Column { qualifier, name } if statement.is_target_row(qualifier.as_deref()) && column(name) => {
            Some(name.as_str())
        }
        _ => None,
    };
    // `last_slot < last_slot` compares the row with itself: not a guard.
    let same = |a: &Operand, b: &Operand| a.column().map(|c| c.1) == b.column().map(|c| c.1) && a.column().is_some();
    if same(left, right) && left.column().map(|c| c.0) == right.column().map(|c| c.0) {
        return None;
    }
    if let Some(name) = is_target(left) {
        return Some((name, *op, right_text));
    }
    is_target(right).map(|name| (name, op.flipped(), left_text.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::sql::first_statement as statement;

    #[test]
    fn names_match_whatever_their_case_and_underscores() {
        let mut config = Config::defaults(std::path::PathBuf::from("."));
        // Configured as `lastScheduledAt` (lowercased by the config).
        config.lease_columns = vec!["lastscheduledat".into()];
        let snake = statement("UPDATE alert_rules SET last_scheduled_at = $1 WHERE id = $2");
        assert!(is_lease_table(&config, &snake));
        assert_eq!(lease_column(&config, &snake), "last_scheduled_at");
        config.lease_columns = vec!["last_scheduled_at".into()];
        let camel = statement("UPDATE alert_rules SET \"lastScheduledAt\" = $1 WHERE id = $2");
        assert_eq!(lease_column(&config, &camel), "lastscheduledat");
        let other = statement("UPDATE alert_rules SET last_seen_at = $1 WHERE id = $2");
        assert!(!is_lease_table(&config, &other));
        config.lease_tables = vec!["alert_rules".into()];
        assert!(is_lease_table(&config, &statement("UPDATE alertRules SET x = 1")));
    }
}
