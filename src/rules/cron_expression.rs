//! `cron-expression`: a job cron that is not five UTC fields at minute granularity.
//!
//! The validator accepts what both runtime profiles accept: Effect's `Cron.parse` (the
//! container loop) and Workers cron. Five fields — minute, hour, day of month, month, day of
//! week — each `*`, a number, a range `a-b`, a step `*/n`, `a/n` or `a-b/n`, or a list of
//! those; month and weekday names (`JAN`–`DEC`, `SUN`–`SAT`) in any case. No seconds, no
//! `L`/`W`/`#`/`?`, no nicknames (`@daily`), no timezone. A valid cron whose days of month
//! none of its months has (`0 0 31 2 *`) never fires.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::facts::string_value;

pub const RULE: Rule = Rule {
    name: "cron-expression",
    summary: "a job cron that is not five UTC fields (seconds, a timezone, a value out of range) or never fires",
    decision: "4",
    default_severity: Severity::Error,
    fix: FixSafety::None,
    triggers: &[Trigger::Jobs],
    doc: include_str!("../../rules/cron-expression.md"),
    check,
};

struct Field {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const FIELDS: [Field; 5] = [
    Field {
        name: "minute",
        min: 0,
        max: 59,
        names: &[],
    },
    Field {
        name: "hour",
        min: 0,
        max: 23,
        names: &[],
    },
    Field {
        name: "day of month",
        min: 1,
        max: 31,
        names: &[],
    },
    Field {
        name: "month",
        min: 1,
        max: 12,
        names: MONTHS,
    },
    // 0 and 7 are both Sunday.
    Field {
        name: "day of week",
        min: 0,
        max: 7,
        names: WEEKDAYS,
    },
];

/// What is wrong with a cron, in words for the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Six fields: the first is seconds. Carries the five-field cron without it.
    Seconds {
        without: String,
    },
    FieldCount(usize),
    /// `CRON_TZ=…` / `TZ=…` in the expression.
    Timezone(String),
    /// `@daily` and friends, with the five-field equivalent when there is one.
    Nickname {
        nickname: String,
        instead: Option<&'static str>,
    },
    /// A field that does not parse, in words: "hour 61 is outside 0-23".
    Field(String),
    /// Valid, but no date matches: `0 0 31 2 *` (February has no 31st). Carries the day and
    /// month fields.
    NeverFires {
        days: String,
        months: String,
    },
}

/// Validates a job cron.
pub fn validate(cron: &str) -> Result<(), Problem> {
    let mut parts: Vec<&str> = cron.split_whitespace().collect();
    if let Some(first) = parts.first() {
        if let Some(zone) = first.strip_prefix("CRON_TZ=").or_else(|| first.strip_prefix("TZ=")) {
            return Err(Problem::Timezone(zone.to_string()));
        }
        if first.starts_with('@') && parts.len() == 1 {
            let instead = match first.to_ascii_lowercase().as_str() {
                "@yearly" | "@annually" => Some("0 0 1 1 *"),
                "@monthly" => Some("0 0 1 * *"),
                "@weekly" => Some("0 0 * * 0"),
                "@daily" | "@midnight" => Some("0 0 * * *"),
                "@hourly" => Some("0 * * * *"),
                _ => None,
            };
            return Err(Problem::Nickname {
                nickname: first.to_string(),
                instead,
            });
        }
    }
    match parts.len() {
        5 => {}
        6 => {
            // Report a seconds field only when the other five are a valid cron.
            let rest = parts.split_off(1);
            validate_fields(&rest)?;
            return Err(Problem::Seconds {
                without: rest.join(" "),
            });
        }
        n => return Err(Problem::FieldCount(n)),
    }
    validate_fields(&parts)
}

fn validate_fields(parts: &[&str]) -> Result<(), Problem> {
    for (part, field) in parts.iter().zip(FIELDS.iter()) {
        validate_field(part, field).map_err(|reason| Problem::Field(format!("{} {reason}", field.name)))?;
    }
    // A day of month that none of the months has. With a day of week as well, either one
    // matching fires the cron (in Vixie cron), so only an unrestricted weekday is judged.
    if let [_, _, days, months, "*"] = parts {
        let day_set = expand(days, &FIELDS[2]);
        let month_set = expand(months, &FIELDS[3]);
        // February has a 29th in leap years.
        const LONGEST: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        let fires = month_set
            .iter()
            .any(|m| day_set.iter().any(|d| *d <= LONGEST[(*m - 1) as usize]));
        if !fires && !day_set.is_empty() && !month_set.is_empty() {
            return Err(Problem::NeverFires {
                days: days.to_string(),
                months: months.to_string(),
            });
        }
    }
    Ok(())
}

/// The values of a field that validated.
fn expand(text: &str, field: &Field) -> Vec<u32> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((range, step)) => (range, step.parse::<u32>().unwrap_or(1).max(1)),
            None => (item, 1),
        };
        let (low, high) = match range.split_once('-') {
            _ if range == "*" => (field.min, field.max),
            Some((low, high)) => match (value(low, field), value(high, field)) {
                (Ok(low), Ok(high)) => (low, high),
                _ => continue,
            },
            None => match value(range, field) {
                // `a/n` runs from a to the field's end.
                Ok(v) if item.contains('/') => (v, field.max),
                Ok(v) => (v, v),
                Err(_) => continue,
            },
        };
        out.extend((low..=high).step_by(step as usize));
    }
    out
}

/// One field: a comma-separated list of `*`, `v`, `a-b`, each with an optional `/step`.
/// An error says what is wrong; the caller puts the field's name first.
fn validate_field(text: &str, field: &Field) -> Result<(), String> {
    for item in text.split(',') {
        if item.is_empty() {
            return Err(format!("list `{text}` has an empty item"));
        }
        if let Some(special) = item.chars().find(|c| matches!(c, 'L' | 'W' | '#' | '?')) {
            return Err(if item.len() == 1 {
                format!("`{special}` is an extension Effect's cron parser does not know")
            } else {
                format!("`{item}` uses `{special}`, an extension Effect's cron parser does not know")
            });
        }
        let (range, step) = match item.split_once('/') {
            Some((range, step)) => (range, Some(step)),
            None => (item, None),
        };
        if let Some(step) = step {
            match step.parse::<u32>() {
                Ok(n) if n >= 1 && n <= field.max => {}
                Ok(n) => return Err(format!("step {n} is outside 1-{}", field.max)),
                Err(_) => return Err(format!("step `{step}` is not a whole number")),
            }
        }
        if range == "*" {
            continue;
        }
        let (low, high) = match range.split_once('-') {
            Some((low, high)) => (low, Some(high)),
            None => (range, None),
        };
        let low = value(low, field)?;
        if let Some(high) = high {
            let high = value(high, field)?;
            if low > high {
                return Err(format!("range `{range}` runs backwards"));
            }
        }
    }
    Ok(())
}

fn value(text: &str, field: &Field) -> Result<u32, String> {
    if let Some(index) = field.names.iter().position(|n| n.eq_ignore_ascii_case(text)) {
        let first = if field.names.len() == 12 { 1 } else { 0 };
        return Ok(index as u32 + first);
    }
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(if field.names.is_empty() {
            format!("`{text}` is not a number")
        } else {
            format!(
                "`{text}` is not a number or a name {}-{}",
                field.names[0].to_ascii_uppercase(),
                field.names[field.names.len() - 1].to_ascii_uppercase()
            )
        });
    }
    match text.parse::<u32>() {
        Ok(n) if n >= field.min && n <= field.max => Ok(n),
        _ => Err(format!("{text} is outside {}-{}", field.min, field.max)),
    }
}

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for (job, analysis) in ctx.facts.jobs.iter().zip(ctx.analysis.jobs(ctx.index, ctx.file)) {
        let name = job.display_name();
        if let Some(zone) = &job.timezone {
            let shown = match string_value(zone) {
                Some((text, _)) => format!("`{text}`"),
                None => format!("`{}`", zone.render()),
            };
            out.push(
                RULE.report(ctx, zone.span(),
                    format!("{name} names timezone {shown}: job crons run in UTC on both runtime profiles, and Workers cron has no timezone"),
                )
                .with_help("drop the timezone and write the cron's time in UTC; a local time that follows daylight saving cannot be one cron"),
            );
        }
        let (Some(cron), Some((text, defined))) = (&job.cron, &analysis.cron) else {
            continue;
        };
        let Err(problem) = validate(text) else { continue };
        let (message, help) = match problem {
            Problem::Seconds { without } => (
                format!("{name} cron `{text}` has a seconds field: a job fires at most once a minute, and Workers cron rejects six fields"),
                format!("write five fields (minute hour day-of-month month day-of-week), e.g. `{without}`"),
            ),
            Problem::FieldCount(n) => (
                format!("{name} cron `{text}` has {n} field{}: the job is never scheduled", if n == 1 { "" } else { "s" }),
                "write five fields: minute hour day-of-month month day-of-week, e.g. `0 3 * * *` for 03:00 UTC daily".to_string(),
            ),
            Problem::Timezone(zone) => (
                format!("{name} cron `{text}` names timezone `{zone}`: job crons run in UTC on both runtime profiles"),
                "drop the timezone prefix and write the time in UTC".to_string(),
            ),
            Problem::Nickname { nickname, instead } => (
                format!("{name} cron `{text}` uses the nickname `{nickname}`, which neither runtime profile parses"),
                match instead {
                    Some(five) => format!("write it as five fields: `{five}`"),
                    None => "write five fields: minute hour day-of-month month day-of-week".to_string(),
                },
            ),
            Problem::NeverFires { days, months } => (
                format!("{name} cron `{text}` never fires: no month in `{months}` has a day `{days}`"),
                "pick a day every one of its months has (up to 29 in February, 30 in April, June, September and November), or the 1st of the next month".to_string(),
            ),
            Problem::Field(reason) => (
                format!("{name} cron `{text}` does not parse: {reason}, so the job is never scheduled"),
                "each field is `*`, a number, a range `a-b`, a step `*/n` or a list `a,b`; months and weekdays may be names (JAN, MON)".to_string(),
            ),
        };
        let mut diagnostic = RULE.report(ctx, cron.span(), message).with_help(help);
        if let Some(defined) = defined {
            diagnostic = diagnostic.with_label(ctx.file, *defined, "the cron is written here");
        }
        out.push(diagnostic);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_crons() {
        for cron in [
            "0 3 * * *",
            "*/15 * * * *",
            "0 9-17/2 * * MON-FRI",
            "30 4 1,15 * *",
            "0 0 1 jan,Jul *",
            "0 0 * * 7",
            "5 4 * * sun",
            "0 22 * * 1-5",
            "0 0 29 2 *",
            "1/10 * * * *",
            "0 0 31 1-2 *",
            "0 0 30,31 * *",
            "0 0 31 2 1",
            "0 0 */10 feb *",
        ] {
            assert_eq!(validate(cron), Ok(()), "{cron}");
        }
    }

    #[test]
    fn invalid_crons_say_what_is_wrong() {
        assert_eq!(
            validate("*/30 * * * * *"),
            Err(Problem::Seconds {
                without: "* * * * *".into()
            })
        );
        assert_eq!(
            validate("0 61 * * *"),
            Err(Problem::Field("hour 61 is outside 0-23".into()))
        );
        assert_eq!(validate("0 3 * *"), Err(Problem::FieldCount(4)));
        assert_eq!(
            validate("CRON_TZ=Europe/Paris 0 3 * * *"),
            Err(Problem::Timezone("Europe/Paris".into()))
        );
        assert_eq!(
            validate("@daily"),
            Err(Problem::Nickname {
                nickname: "@daily".into(),
                instead: Some("0 0 * * *")
            })
        );
        let field = |cron: &str| match validate(cron) {
            Err(Problem::Field(reason)) => reason,
            other => format!("{other:?}"),
        };
        assert_eq!(
            field("0 0 L * *"),
            "day of month `L` is an extension Effect's cron parser does not know"
        );
        assert_eq!(field("*/0 * * * *"), "minute step 0 is outside 1-59");
        assert_eq!(field("0 0 * * 1-8"), "day of week 8 is outside 0-7");
        assert_eq!(
            field("0 0 * * MON-SUNDAY"),
            "day of week `SUNDAY` is not a number or a name SUN-SAT"
        );
        assert_eq!(field("0 0 * 13 *"), "month 13 is outside 1-12");
        assert_eq!(field("0 17-9 * * *"), "hour range `17-9` runs backwards");
        assert_eq!(field("0,,5 * * * *"), "minute list `0,,5` has an empty item");
        let never = |days: &str, months: &str| {
            Err(Problem::NeverFires {
                days: days.into(),
                months: months.into(),
            })
        };
        assert_eq!(validate("0 0 31 2 *"), never("31", "2"));
        assert_eq!(validate("0 0 30-31 feb *"), never("30-31", "feb"));
        assert_eq!(validate("0 0 31 4,6,9,11 *"), never("31", "4,6,9,11"));
        assert_eq!(validate("0 0 0 31 2 *"), never("31", "2"), "with a seconds field");
        // Seconds with an invalid rest: the rest's problem comes first.
        assert_eq!(field("0 0 61 * * *"), "hour 61 is outside 0-23");
    }
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn cron_expression() {
        let pass = [
            (
                "src/jobs/digests.ts",
                r#"import { Jobs } from "../infra/jobs.js"

export const weeklyDigest = Jobs.make({
  name: "digests.weekly",
  cron: "30 7 * * MON",
  exclusive: true,
  timeout: "5 minutes",
  run: (slot) => digests.sendDueAt(slot),
})
"#,
            ),
            (
                "src/jobs/digests.ts",
                r#"import { Jobs } from "../infra/jobs.js"

export const quarterHourDigest = Jobs.make({
  name: "digests.quarter-hour",
  cron: "*/15 9-17 * * 1-5",
  exclusive: false,
  timeout: "2 minutes",
  run: (slot) => digests.sendDueAt(slot),
})
"#,
            ),
        ];
        let fail = [
            (
                "src/jobs/digests.ts",
                r#"import { Jobs } from "../infra/jobs.js"

export const weeklyDigest = Jobs.make({
  name: "digests.weekly",
  cron: "30 7 * * MONDAY",
  exclusive: true,
  timeout: "5 minutes",
  run: (slot) => digests.sendDueAt(slot),
})
"#,
            ),
            (
                "src/jobs/digests.ts",
                r#"import { Jobs } from "../infra/jobs.js"

export const monthlyDigest = Jobs.make({
  name: "digests.monthly",
  cron: "0 8 31 4 *",
  exclusive: true,
  timeout: "5 minutes",
  run: (slot) => digests.sendDueAt(slot),
})
"#,
            ),
        ];
        Tester::new(&super::RULE).pass(&pass).fail(&fail).test();
    }
}
