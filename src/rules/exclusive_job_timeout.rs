//! `exclusive-job-timeout`: an exclusive job whose timeout exceeds 15 minutes. Its lease (the
//! timeout plus 1 minute) would need renewal, a heartbeat the policy defers.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::facts::duration_millis;
use crate::facts::Expr;
use crate::schedule::duration::format_ms;

pub const RULE: Rule = Rule {
    name: "exclusive-job-timeout",
    summary: "an exclusive job whose timeout exceeds 15 minutes: its lease would need renewal",
    decision: "5",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Jobs],
    doc: include_str!("../../rules/exclusive-job-timeout.md"),
    check,
};

/// The longest timeout an exclusive job may have before its lease needs a heartbeat.
const MAX_EXCLUSIVE_TIMEOUT_MS: f64 = 15.0 * 60_000.0;

fn is_true(expr: &Expr) -> bool {
    match expr {
        Expr::Bool(b, _) => *b,
        Expr::Local { value, .. } => is_true(value),
        _ => false,
    }
}

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for job in &ctx.facts.jobs {
        let (Some(exclusive), Some(timeout)) = (&job.exclusive, &job.timeout) else {
            continue;
        };
        if !is_true(exclusive) {
            continue;
        }
        let Some(ms) = duration_millis(timeout) else { continue };
        if ms <= MAX_EXCLUSIVE_TIMEOUT_MS {
            continue;
        }
        out.push(
            RULE.report(ctx, timeout.span(),
                format!(
                    "exclusive {} has a {} timeout, over the 15-minute limit: a crashed run keeps the job locked for its {} lease, and renewing a shorter lease needs a heartbeat the jobs runtime does not have",
                    job.display_name(),
                    format_ms(ms),
                    format_ms(ms + 60_000.0),
                ),
            )
            .with_help("keep the timeout at 15 minutes or less and process a bounded batch per slot (the next slot takes the rest), or make the job `exclusive: false` if two replicas may run it at once"),
        );
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn exclusive_job_timeout() {
        let pass = [
            (
                "src/jobs/exports.ts",
                r#"import { Jobs } from "../infra/jobs.js"

export const exportLedger = Jobs.make({
  name: "ledger.export",
  cron: "0 * * * *",
  exclusive: true,
  timeout: "15 minutes",
  run: (slot) => ledger.exportDueAt(slot),
})
"#,
            ),
            (
                "src/jobs/exports.ts",
                r#"import { Jobs } from "../infra/jobs.js"

export const warmCache = Jobs.make({
  name: "cache.warm",
  cron: "0 5 * * *",
  exclusive: false,
  timeout: "1 hour",
  run: (slot) => cache.warmAsOf(slot),
})
"#,
            ),
        ];
        let fail = [
            (
                "src/jobs/exports.ts",
                r#"import { Jobs } from "../infra/jobs.js"

export const exportLedger = Jobs.make({
  name: "ledger.export",
  cron: "0 * * * *",
  exclusive: true,
  timeout: "20 minutes",
  run: (slot) => ledger.exportDueAt(slot),
})
"#,
            ),
            (
                "src/jobs/exports.ts",
                r#"import { Duration } from "effect"
import { Jobs } from "../infra/jobs.js"

export const exportLedger = Jobs.make({
  name: "ledger.export",
  cron: "0 2 * * *",
  exclusive: true,
  timeout: Duration.minutes(30),
  run: (slot) => ledger.exportDueAt(slot),
})
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
