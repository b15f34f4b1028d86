//! `inline-schedule`: a retry policy built at the call site instead of named in the retry module.

use super::{Context, Diagnostic, FixSafety, Rule, Severity, Trigger};
use crate::analysis::{dialect, How};

pub const RULE: Rule = Rule {
    name: "inline-schedule",
    summary: "a retry policy built from `Schedule.*` (or a bare `times`) outside the retry module",
    decision: "1",
    default_severity: Severity::Error,
    fix: FixSafety::Safe,
    triggers: &[Trigger::Retries],
    doc: include_str!("../../rules/inline-schedule.md"),
    check,
};

fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    passed_to_helpers(ctx, out);
    // A policy bound to a name that sites use: once, where it is defined.
    for (named, builder) in ctx.analysis.built_here(ctx.index, ctx.file) {
        // Whose help: the library the policy is built with (a Rust function's, or Effect's).
        let library = ctx
            .analysis
            .policies(ctx.index, ctx.file)
            .iter()
            .find(|p| matches!(p.origin, crate::analysis::Origin::Named { binding, .. } if binding == named.binding))
            .map_or(crate::schedule::Library::Effect, |p| p.library);
        let diagnostic = RULE
            .report(
                ctx,
                named.name_span_in(ctx.index),
                format!(
                    "retry policy `{}` is built with `{builder}` here instead of in the retry module: copies of a policy drift from the team's budget",
                    named.name
                ),
            )
            .with_help(name_policy_help(ctx, library));
        out.push(
            named
                .uses
                .iter()
                .fold(diagnostic, |d, (file, _, span)| d.with_label(*file, *span, "used here")),
        );
    }
    // A Rust policy no retry site is given (stepped by `next()`, handed to a function, stored
    // in a field, returned for other code): once, where it is built, its uses as labels.
    for (stepped, _) in crate::analysis::rust::stepped_policies(ctx.analysis, ctx.index, ctx.file) {
        let Some(found) = crate::analysis::rust::built(ctx.index, ctx.file, &stepped.value, 0) else {
            continue;
        };
        let how = match &found.changed {
            Some(methods) => format!("`{}` changed with `{methods}`", found.builder),
            None => format!("`{}`", found.builder),
        };
        let library = match &stepped.value.base {
            crate::facts::RustBase::New { state, .. } => state.lib(),
            _ => crate::schedule::Library::Backon,
        };
        let diagnostic = RULE
            .report(
                ctx,
                stepped.name_span,
                format!(
                    "retry policy `{}` is built with {how} here, outside the retry module: copies of a policy drift from the team's budget",
                    stepped.name
                ),
            )
            .with_help(name_policy_help(ctx, library));
        out.push(
            stepped
                .uses
                .iter()
                .fold(diagnostic, |d, span| d.with_label(ctx.file, *span, "used here")),
        );
    }
    // A Rust builder defined apart from its sites (a struct field the constructor sets): one
    // finding where it is built, its sites as related locations.
    let mut apart: Vec<(crate::source::Span, usize)> = Vec::new();
    for (site, analysis) in ctx.retry_sites() {
        let Some(inline) = &analysis.inline else { continue };
        let (built_apart, shared) = match &site.policy {
            crate::facts::PolicyArg::Rust(arg) => (
                arg.defined_apart_in(ctx.text()),
                arg.local.as_ref().filter(|_| arg.shared).map(|(name, _)| name.clone()),
            ),
            _ => (None, None),
        };
        // Built by a same-file factory the site calls with arguments (`get_retry_strategy(config,
        // op)`): one policy, reported once at the factory's name, its calls as related places.
        let factory = match &site.policy {
            crate::facts::PolicyArg::Rust(arg) => arg.chain.as_ref().and_then(|c| c.factory.as_deref().cloned()),
            _ => None,
        };
        if let (Some((name, definition)), How::Built { builder, .. }) = (factory, &inline.how) {
            if used_again(out, &apart, definition, ctx.file, inline.span) {
                continue;
            }
            apart.push((definition, out.len()));
            out.push(
                RULE.report(
                    ctx,
                    definition,
                    format!("retry policy `{name}` is built with `{builder}` here, outside the retry module: copies of a policy drift from the team's budget"),
                )
                .with_label(ctx.file, inline.span, "used here")
                .with_help(name_policy_help(ctx, site.library)),
            );
            continue;
        }
        if let Some(definition) = built_apart {
            if used_again(out, &apart, definition, ctx.file, inline.span) {
                continue;
            }
            if let How::Built { builder, changed, .. } = &inline.how {
                let how = match changed {
                    Some(methods) => format!("`{builder}` changed with `{methods}`"),
                    None => format!("`{builder}`"),
                };
                apart.push((definition, out.len()));
                out.push(
                    RULE.report(
                        ctx,
                        definition,
                        match shared {
                            // A `let` several retries share.
                            Some(name) => format!("retry policy `{name}` is built with {how} here, outside the retry module, and shared by the retries below: copies of a policy drift from the team's budget"),
                            None => format!("retry policy built with {how} here, outside the retry module: copies of a policy drift from the team's budget"),
                        },
                    )
                    .with_label(ctx.file, inline.span, "used here")
                    .with_help(name_policy_help(ctx, site.library)),
                );
                continue;
            }
        }
        let (builder, changed, via) = match &inline.how {
            How::BareTimes { text } => {
                out.push(
                    RULE.report(ctx, inline.span, format!("attempt cap `{text}` set at the call site instead of a named policy"))
                        .with_help("use a named policy from the retry module, e.g. `{ schedule: Retry.contention, while: Retry.isContention }`"),
                );
                continue;
            }
            How::Built { builder, changed, via } => (builder, changed, via),
        };
        let how = match changed {
            Some(methods) => format!("`{builder}` changed with `{methods}`"),
            None => format!("`{builder}`"),
        };
        let diagnostic = match via.first() {
            None if changed.is_some() => RULE.report(
                ctx,
                inline.span,
                format!("retry policy {how} at the call site: copies of a policy drift from the team's budget"),
            ),
            None => RULE.report(
                ctx,
                inline.span,
                format!("retry policy built inline with {how}: copies of a policy drift from the team's budget"),
            ),
            Some(binding) if binding.file == ctx.file => RULE
                .report(
                    ctx,
                    inline.span,
                    format!(
                        "retry policy `{}` is built with {how} here instead of in the retry module",
                        binding.name
                    ),
                )
                .with_label(
                    binding.file,
                    binding.span,
                    format!("`{}` is defined here", binding.name),
                ),
            Some(binding) => RULE
                .report(
                    ctx,
                    inline.span,
                    format!(
                        "retry policy `{}` is defined in {}, outside the retry module",
                        binding.name,
                        ctx.index.path(binding.file).display()
                    ),
                )
                .with_label(
                    binding.file,
                    binding.span,
                    format!("`{}` is built with {how} here", binding.name),
                ),
        };
        out.push(
            diagnostic
                .with_help(name_policy_help(ctx, site.library))
                .with_fix(inline.fix.clone()),
        );
    }
}

/// Labels another use of a policy already reported at `definition` (its finding's index in
/// `apart`); whether it was one.
fn used_again(
    out: &mut [Diagnostic],
    apart: &[(crate::source::Span, usize)],
    definition: crate::source::Span,
    file: crate::index::FileId,
    span: crate::source::Span,
) -> bool {
    let Some((_, at)) = apart.iter().find(|(known, _)| *known == definition) else {
        return false;
    };
    out[*at].labels.push(crate::diagnostic::Label {
        file,
        span,
        message: "used here".into(),
    });
    true
}

/// A policy built here and passed in an options object to a project helper that retries
/// with it (`retryTransientErrors(effect, { schedule: Schedule.spaced("1 second") })`): built
/// inline as surely as in `Effect.retry(…)`, with the helper's retry as a related place.
fn passed_to_helpers(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for passed in crate::analysis::passed(ctx.analysis, ctx.index, ctx.file) {
        let Some(builder) = crate::analysis::inline_builder(ctx.index, ctx.file, passed.value) else {
            continue;
        };
        out.push(
            RULE.report(
                ctx,
                passed.value.span(),
                format!(
                    "retry policy built inline with `{builder}` and passed to `{}`, which retries with it: copies of a policy drift from the team's budget",
                    passed.helper
                ),
            )
            .with_label(passed.helper_file, passed.site.span, format!("`{}` retries with it here", passed.helper))
            .with_help(name_policy_help(ctx, crate::schedule::Library::Effect)),
        );
    }
}

/// The help naming the retry module of the file's language (the one sharing most of its path)
/// and the configured transient policy.
fn name_policy_help(ctx: &Context, library: crate::schedule::Library) -> String {
    let index = ctx.index;
    let rust = library != crate::schedule::Library::Effect;
    let here = &index.files[ctx.file].absolute;
    let module = index
        .retry_modules()
        .iter()
        .filter(|&&m| (index.files[m].language == crate::source::Language::Rust) == rust)
        .max_by_key(|&&m| {
            here.components()
                .zip(index.files[m].absolute.components())
                .take_while(|(a, b)| a == b)
                .count()
        })
        .map(|&m| {
            let absolute = &index.files[m].absolute;
            absolute
                .strip_prefix(&index.config.root)
                .unwrap_or(absolute)
                .to_path_buf()
        });
    dialect::name_policy_help(library, &index.config.vocabulary, module.as_deref())
}

#[cfg(test)]
mod vectors {
    use crate::rules::tester::Tester;

    #[test]
    fn inline_schedule() {
        let pass = [
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect } from "effect"
import * as Retry from "../../infra/retry.js"

export const charge = (id: string) =>
  Effect.succeed(id).pipe(Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }))
"#,
            ),
            (
                "src/features/billing/Poll.ts",
                r#"import { Effect, Schedule } from "effect"

declare const invoice: (id: string) => Effect.Effect<{ readonly paid: boolean }>

// A repeat is not a retry.
export const poll = (id: string) => invoice(id).pipe(Effect.repeat(Schedule.spaced("5 seconds")))
"#,
            ),
        ];
        let fail = [
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect, Schedule } from "effect"

export const charge = (id: string) =>
  Effect.succeed(id).pipe(Effect.retry({ schedule: Schedule.spaced("1 second"), times: 2 }))
"#,
            ),
            (
                "src/features/billing/Charge.ts",
                r#"import { Effect, Schedule } from "effect"
import * as Retry from "../../infra/retry.js"

const chargePolicy = Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(2)))

export const charge = (id: string) => Effect.succeed(id).pipe(Effect.retry({ schedule: chargePolicy, while: Retry.isConnectionLost }))
"#,
            ),
        ];
        let fix = [(
            "src/features/billing/Charge.ts",
            r#"import { Effect, Schedule } from "effect"
import * as Retry from "../../infra/retry.js"

export const charge = (id: string) =>
  Effect.succeed(id).pipe(
    Effect.retry({
      schedule: Schedule.max([Schedule.min([Schedule.exponential("200 millis"), Schedule.spaced("2 seconds")]), Schedule.recurs(3)]).pipe(Schedule.jittered),
      while: Retry.isConnectionLost,
    }),
  )
"#,
            r#"import { Effect } from "effect"
import * as Retry from "../../infra/retry.js"

export const charge = (id: string) =>
  Effect.succeed(id).pipe(
    Effect.retry({
      schedule: Retry.transient,
      while: Retry.isConnectionLost,
    }),
  )
"#,
        )];
        Tester::new(&super::RULE)
            .with_file(
                "src/infra/retry.ts",
                r#"import { Schedule } from "effect"

export const transient = Schedule.max([
  Schedule.min([Schedule.exponential("200 millis"), Schedule.spaced("2 seconds")]),
  Schedule.recurs(3),
]).pipe(Schedule.jittered)

export const contention = Schedule.max([
  Schedule.min([Schedule.exponential("50 millis"), Schedule.spaced("200 millis")]),
  Schedule.recurs(3),
]).pipe(Schedule.jittered)

export const isContention = (e: { readonly _tag: string }) => e._tag === "SerializationFailure"
export const isConnectionLost = (e: { readonly _tag: string }) => e._tag === "ConnectionLost"
"#,
            )
            .pass(&pass)
            .fail(&fail)
            .fix(&fix)
            .test();
    }
}
