#!/usr/bin/env python3
"""Deterministic corpus of Effect TypeScript services for benchmarking retrylint.

    python3 bench/gen_corpus.py OUT_DIR [--seed N] [--files N] [--sdk-mb N]

Writes a pnpm-style monorepo of Effect v3 services (schemas, repositories, services, use cases,
layers, HTTP APIs and handlers, React views, tests) under OUT_DIR. About 2% of the files touch
retries, jobs or leases, some with violations (inline `Schedule.exponential` retries,
repositories that retry, lease SQL); every other file imports from "effect" but never contains
`retry`, `Retry`, `cron`, `Jobs` or `lease`. Same seed and file count, same bytes: the last line
printed is a SHA-256 over every path and content. OUT_DIR must be empty, absent, or a corpus
this script wrote before (it is then replaced); it may not lie inside the repository.
A manifest of the planted files is written to OUT_DIR/.corpus.json (hidden: no linter reads it).

--sdk-mb N adds about N MB of generated SDK clients (packages/sdk: files of ~90 KB, each with a
generator's "do not edit" header, every operation retried with an inline schedule): the shape
of an Effect app that vendors a large OpenAPI client, which must not dominate a run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
from pathlib import Path

MARKER = ".corpus.json"
# Plain files must contain none of these (the prefilter's tokens and their neighbours).
FORBIDDEN = ("retry", "Retry", "cron", "Jobs", "lease", "last_slot")

SERVICES = [
    "billing", "orders", "catalog", "inventory", "identity", "notifications", "shipping",
    "payments", "search", "analytics", "support", "pricing", "accounts", "fulfillment",
    "reviews", "messaging", "documents", "compliance", "reporting", "onboarding", "payroll",
    "procurement", "workspace", "calendar", "media", "ledger", "marketing", "tenancy",
]
NOUNS = [
    "Invoice", "Customer", "Order", "Product", "Shipment", "Payment", "Refund", "Coupon", "Cart",
    "Warehouse", "Supplier", "Account", "Profile", "Session", "Team", "Member", "Invitation",
    "Document", "Template", "Report", "Ticket", "Comment", "Review", "Rating", "Address",
    "Subscription", "Plan", "Price", "Discount", "TaxRate", "Transfer", "Payout", "Dispute",
    "Webhook", "Notification", "Channel", "Message", "Thread", "Attachment", "Folder", "Tag",
    "Category", "Brand", "Variant", "Bundle", "Stock", "Reservation", "Carrier", "Parcel",
    "Route", "Zone", "AuditEntry", "Consent", "Agreement", "Contract", "Quote", "Budget",
    "Forecast", "Metric", "Dashboard", "Widget", "Feed", "Article", "Author", "Page", "Asset",
    "Upload", "Device", "Token", "Credential", "Role", "Permission", "Organization", "Project",
    "Milestone", "Task", "Sprint", "Board", "Card", "Label", "Survey", "Answer", "Question",
    "Appointment", "Shift", "Employee", "Expense", "Receipt", "Vendor", "Purchase",
    "Requisition", "Approval", "Workflow", "Step", "Payslip", "Campaign", "Segment", "Audience",
    "Voucher", "Wallet", "Statement", "Region", "Store", "Menu", "Recipe", "Ingredient",
]
QUALIFIERS = ["", "", "", "", "Line", "Item", "Draft", "Snapshot", "Group", "Summary", "Rule", "Setting"]
VERBS = [
    "Create", "Update", "Archive", "Approve", "Reject", "Cancel", "Assign", "Publish", "Close",
    "Reopen", "Merge", "Split", "Transfer", "Verify", "Rename", "Export", "Submit", "Complete",
    "Expire", "Restore", "Duplicate", "Lock", "Unlock", "Invite", "Notify", "Summarize",
    "Recalculate", "Validate", "Flag", "Escalate", "Resolve", "Link", "Unlink", "Attach",
    "Detach", "Sync", "Import", "Reassign", "Suspend", "Activate",
]
FIELDS = [
    ("name", "Schema.NonEmptyTrimmedString", "text"), ("title", "Schema.String", "text"),
    ("description", "Schema.optional(Schema.String)", "text"), ("amount", "Schema.Number", "numeric"),
    ("currency", 'Schema.Literal("EUR", "USD", "GBP")', "text"), ("quantity", "Schema.Int", "integer"),
    ("email", "Email", "text"), ("phone", "Schema.optional(Schema.String)", "text"),
    ("note", "Schema.optional(Schema.String)", "text"), ("externalRef", "Schema.String", "text"),
    ("priority", 'Schema.Literal("low", "normal", "high")', "text"), ("position", "Schema.Int", "integer"),
    ("color", "Schema.String", "text"), ("weight", "Schema.Number", "numeric"),
    ("locale", "Schema.String", "text"), ("timezone", "Schema.String", "text"),
    ("ownerId", "UserId", "uuid"), ("parentId", "Schema.optional(Schema.String)", "uuid"),
    ("sku", "Schema.String", "text"), ("slug", "Schema.String", "text"), ("url", "Schema.String", "text"),
    ("version", "Schema.Int", "integer"), ("score", "Schema.Number", "numeric"),
    ("total", "Schema.Number", "numeric"), ("balance", "Schema.Number", "numeric"),
    ("dueAt", "Schema.DateFromSelf", "timestamptz"), ("startsAt", "Schema.DateFromSelf", "timestamptz"),
    ("endsAt", "Schema.optional(Schema.DateFromSelf)", "timestamptz"),
    ("approvedAt", "Schema.optional(Schema.DateFromSelf)", "timestamptz"),
    ("archivedAt", "Schema.optional(Schema.DateFromSelf)", "timestamptz"),
    ("isActive", "Schema.Boolean", "boolean"), ("isDefault", "Schema.Boolean", "boolean"),
    ("tags", "Schema.Array(Schema.String)", "text[]"), ("country", "Schema.String", "text"),
    ("city", "Schema.String", "text"), ("postalCode", "Schema.String", "text"),
    ("metadata", "Schema.Record({ key: Schema.String, value: Schema.Unknown })", "jsonb"),
]
STATUSES = ["pending", "active", "approved", "rejected", "archived", "closed", "draft", "failed"]
DURATIONS = ["50 millis", "100 millis", "200 millis", "250 millis", "500 millis", "1 second"]


def snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def lower_first(name: str) -> str:
    return name[0].lower() + name[1:]


def plural(word: str) -> str:
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


class Entity:
    def __init__(self, rng: random.Random, name: str):
        self.name = name
        self.var = lower_first(name)
        self.table = snake(plural(name))
        self.id = f"{name}Id"
        count = rng.randint(3, 12)
        self.fields = sorted(rng.sample(FIELDS, count), key=FIELDS.index)
        self.statuses = rng.sample(STATUSES, rng.randint(2, 5))
        self.verbs = sorted(rng.sample(VERBS, rng.randint(2, 8)), key=VERBS.index)


class Corpus:
    def __init__(self, seed: int, target_files: int):
        self.rng = random.Random(seed)
        self.target = target_files
        self.files: dict[str, str] = {}
        self.planted: dict[str, str] = {}  # path -> what it holds

    def add(self, path: str, text: str, planted: str | None = None) -> None:
        assert path not in self.files, path
        if planted is None:
            for token in FORBIDDEN:
                assert token not in text, f"{path} mentions {token!r}"
        else:
            self.planted[path] = planted
        self.files[path] = text

    # ---------------------------------------------------------------- shapes

    def schema_module(self, svc: str, e: Entity) -> str:
        r = self.rng
        lines = [
            'import { Schema } from "effect"',
            f'import {{ Email, UserId }} from "../shared/ids.js"',
            "",
            f'export const {e.id} = Schema.UUID.pipe(Schema.brand("{e.id}"))',
            f"export type {e.id} = typeof {e.id}.Type",
            "",
            f"export const {e.name}Status = Schema.Literal({', '.join(repr(s).replace(chr(39), chr(34)) for s in e.statuses)})",
            f"export type {e.name}Status = typeof {e.name}Status.Type",
            "",
        ]
        if r.random() < 0.6:
            lines.append(f"/** A {e.name.lower()} as stored and returned by the {svc} API. */")
        lines.append(f'export class {e.name} extends Schema.Class<{e.name}>("{e.name}")({{')
        lines.append(f"  id: {e.id},")
        lines.append(f"  status: {e.name}Status,")
        for fname, ftype, _ in e.fields:
            lines.append(f"  {fname}: {ftype},")
        lines.append("  createdAt: Schema.DateFromSelf,")
        lines.append("  updatedAt: Schema.DateFromSelf,")
        lines.append("}) {")
        if r.random() < 0.5:
            lines += [
                f"  get isOpen(): boolean {{",
                f'    return this.status !== "{e.statuses[-1]}"',
                "  }",
            ]
        lines.append("}")
        lines.append("")
        writable = [f for f in e.fields if not f[0].endswith("At")]
        lines.append(f'export class Create{e.name} extends Schema.Class<Create{e.name}>("Create{e.name}")({{')
        for fname, ftype, _ in writable:
            lines.append(f"  {fname}: {ftype},")
        lines.append("}) {}")
        lines.append("")
        lines.append(f"export const Update{e.name} = Schema.Struct({{")
        lines.append(f"  id: {e.id},")
        for fname, ftype, _ in writable:
            inner = ftype[len("Schema.optional("):-1] if ftype.startswith("Schema.optional(") else ftype
            lines.append(f"  {fname}: Schema.optional({inner}),")
        lines.append("})")
        lines.append(f"export type Update{e.name} = typeof Update{e.name}.Type")
        lines.append("")
        for extra in range(r.randint(0, 5)):
            kind = r.choice(["Filter", "Page", "Event", "View"])
            cname = f"{e.name}{kind}{extra or ''}"
            lines.append(f'export class {cname} extends Schema.Class<{cname}>("{cname}")({{')
            for fname, ftype, _ in r.sample(e.fields, min(len(e.fields), r.randint(2, 6))):
                lines.append(f"  {fname}: {ftype},")
            if kind == "Page":
                lines += ["  cursor: Schema.optional(Schema.String),", "  limit: Schema.Int.pipe(Schema.between(1, 200)),"]
            lines.append("}) {}")
            lines.append("")
        return "\n".join(lines)

    def helper(self, e: Entity, name: str) -> list[str]:
        """One plain Effect function in one of the shapes services are made of."""
        r = self.rng
        status = r.choice(e.statuses)
        fname = r.choice(e.fields)[0]
        shape = r.randrange(7)
        if shape == 0:
            return [
                f"export const {name} = (items: ReadonlyArray<{e.name}>) =>",
                "  Effect.forEach(",
                "    items,",
                "    (item) =>",
                f'      item.status === "{status}"',
                f'        ? Effect.logDebug("skipping", item.id)',
                f'        : Effect.succeed({{ id: item.id, {fname}: item.{fname} }}),',
                f"    {{ concurrency: {r.choice([2, 4, 8, 16])} }},",
                "  ).pipe(Effect.map((rows) => rows.filter((row) => row !== undefined)))",
                "",
            ]
        if shape == 1:
            return [
                f"export const {name} = (input: unknown) =>",
                f"  Schema.decodeUnknown({e.name})(input).pipe(",
                "    Effect.mapError((error) => ({",
                '      _tag: "InvalidInput" as const,',
                "      message: ParseResult.TreeFormatter.formatErrorSync(error),",
                "    })),",
                f'    Effect.withSpan("{name}"),',
                "  )",
                "",
            ]
        if shape == 2:
            cases = r.sample(e.statuses, len(e.statuses))
            out = [f"export const {name} = (value: {e.name}) =>", "  Match.value(value.status).pipe("]
            for c in cases[:-1]:
                out.append(f'    Match.when("{c}", () => {r.randint(0, 100)}),')
            out += ["    Match.orElse(() => 0),", "  )", ""]
            return out
        if shape == 3:
            return [
                f"export const {name} = (values: ReadonlyArray<{e.name}>) => {{",
                f"  const byStatus = new Map<string, Array<{e.name}>>()",
                "  for (const value of values) {",
                "    const bucket = byStatus.get(value.status) ?? []",
                "    bucket.push(value)",
                "    byStatus.set(value.status, bucket)",
                "  }",
                "  return Array.from(byStatus.entries())",
                "    .map(([status, rows]) => ({ status, count: rows.length }))",
                "    .sort((a, b) => b.count - a.count)",
                "}",
                "",
            ]
        if shape == 4:
            return [
                f"export const {name} = (stream: Stream.Stream<{e.name}>) =>",
                "  stream.pipe(",
                f'    Stream.filter((value) => value.status !== "{status}"),',
                f"    Stream.grouped({r.choice([10, 50, 100, 500])}),",
                "    Stream.mapEffect((chunk) => Effect.succeed(Chunk.size(chunk)), { concurrency: 2 }),",
                "    Stream.runFold(0, (total, size) => total + size),",
                "  )",
                "",
            ]
        if shape == 5:
            return [
                f"export const {name} = <E, R>(effect: Effect.Effect<{e.name}, E, R>) =>",
                "  effect.pipe(",
                f'    Effect.timeout("{r.choice(["2 seconds", "5 seconds", "30 seconds"])}"),',
                "    Effect.catchTags({",
                f'      TimeoutException: () => Effect.fail(new {e.name}Unavailable({{ reason: "timeout" }})),',
                "    }),",
                f'    Effect.tap((value) => Effect.annotateCurrentSpan("{e.var}.status", value.status)),',
                "  )",
                "",
            ]
        return [
            f"export const {name} = (left: {e.name}, right: {e.name}): Either.Either<{e.name}, string> => {{",
            "  if (left.id !== right.id) {",
            f'    return Either.left("different {e.name.lower()}s")',
            "  }",
            f"  if (left.updatedAt.getTime() >= right.updatedAt.getTime()) {{",
            "    return Either.right(left)",
            "  }",
            "  return Either.right(right)",
            "}",
            "",
        ]

    def helper_imports(self) -> list[str]:
        return ['import { Array, Chunk, Effect, Either, Match, ParseResult, Schema, Stream } from "effect"']

    def engine_module(self, svc: str, e: Entity) -> str:
        r = self.rng
        lines = self.helper_imports() + [
            f'import {{ {e.name} }} from "../domain/{e.name}.js"',
            f'import {{ {e.name}Unavailable }} from "../domain/errors.js"',
            "",
        ]
        for i in range(r.randint(15, 70)):
            lines += self.helper(e, f"{lower_first(r.choice(VERBS))}{e.name}{i}")
        return "\n".join(lines)

    def errors_module(self, entities: list[Entity]) -> str:
        lines = ['import { Schema } from "effect"', ""]
        for e in entities:
            lines += [
                f"export class {e.name}NotFound extends Schema.TaggedError<{e.name}NotFound>()(\"{e.name}NotFound\", {{",
                "  id: Schema.String,",
                "}) {}",
                "",
                f"export class {e.name}Conflict extends Schema.TaggedError<{e.name}Conflict>()(\"{e.name}Conflict\", {{",
                "  id: Schema.String,",
                "  reason: Schema.String,",
                "}) {}",
                "",
                f"export class {e.name}Unavailable extends Schema.TaggedError<{e.name}Unavailable>()(\"{e.name}Unavailable\", {{",
                "  reason: Schema.String,",
                "}) {}",
                "",
            ]
        return "\n".join(lines)

    def repository(self, svc: str, e: Entity, planted: str | None) -> str:
        r = self.rng
        cols = ", ".join(["id", "status"] + [snake(f[0]) for f in e.fields] + ["created_at", "updated_at"])
        imports = ["Effect", "Option", "Schema"]
        if planted == "inline":
            imports.append("Schedule")
        lines = [
            'import { SqlClient, SqlSchema } from "@effect/sql"',
            f"import {{ {', '.join(sorted(imports))} }} from \"effect\"",
            f'import {{ {e.name}, {e.id}, Create{e.name}, Update{e.name} }} from "../domain/{e.name}.js"',
            f'import {{ {e.name}NotFound }} from "../domain/errors.js"',
        ]
        if planted == "named":
            lines.append('import * as Retry from "../infra/retry.js"')
        lines += [
            "",
            f'export class {e.name}Repository extends Effect.Service<{e.name}Repository>()("{svc}/{e.name}Repository", {{',
            "  effect: Effect.gen(function* () {",
            "    const sql = yield* SqlClient.SqlClient",
            "",
            "    const findById = SqlSchema.findOne({",
            f"      Request: {e.id},",
            f"      Result: {e.name},",
            f"      execute: (id) => sql`SELECT {cols} FROM {e.table} WHERE id = ${{id}}`,",
            "    })",
            "",
            f"    const get = (id: {e.id}) =>",
            "      findById(id).pipe(",
            "        Effect.orDie,",
            f"        Effect.flatMap(Option.match({{ onNone: () => Effect.fail(new {e.name}NotFound({{ id }})), onSome: Effect.succeed }})),",
            f'        Effect.withSpan("{e.name}Repository.get"),',
            "      )",
            "",
            "    const insert = SqlSchema.single({",
            f"      Request: Create{e.name},",
            f"      Result: {e.name},",
            f"      execute: (input) => sql`INSERT INTO {e.table} ${{sql.insert(input)}} RETURNING *`,",
            "    })",
            "",
            f"    const update = (input: Update{e.name}) =>",
            f"      sql`UPDATE {e.table} SET ${{sql.update(input, [\"id\"])}}, updated_at = now() WHERE id = ${{input.id}}`.pipe(",
            "        Effect.asVoid,",
            "        Effect.orDie,",
            "      )",
            "",
        ]
        methods = ["findById", "get", "insert", "update"]
        for i in range(r.randint(2, 14)):
            status = r.choice(e.statuses)
            fname, _, ftype = r.choice(e.fields)
            col = snake(fname)
            kind = r.random()
            if kind < 0.4:
                m = f"listBy{fname[0].upper()}{fname[1:]}{i}"
                lines += [
                    f"    const {m} = SqlSchema.findAll({{",
                    "      Request: Schema.Struct({ value: Schema.Unknown, limit: Schema.Int }),",
                    f"      Result: {e.name},",
                    "      execute: ({ value, limit }) =>",
                    f"        sql`SELECT {cols} FROM {e.table} WHERE {col} = ${{value}} AND status <> '{e.statuses[-1]}' ORDER BY created_at DESC LIMIT ${{limit}}`,",
                    "    })",
                    "",
                ]
            elif kind < 0.7:
                m = f"markAs{status.capitalize()}{i}"
                lines += [
                    f"    const {m} = (id: {e.id}) =>",
                    f"      sql`UPDATE {e.table} SET status = '{status}', updated_at = now() WHERE id = ${{id}}`.pipe(",
                    "        Effect.asVoid,",
                    "        Effect.orDie,",
                    f'        Effect.withSpan("{e.name}Repository.{m}", {{ attributes: {{ id }} }}),',
                    "      )",
                    "",
                ]
            else:
                m = f"countBy{status.capitalize()}{i}"
                lines += [
                    f"    const {m} = sql<{{ readonly count: number }}>`SELECT count(*)::int AS count FROM {e.table} WHERE status = '{status}'`.pipe(",
                    "      Effect.map((rows) => rows[0]?.count ?? 0),",
                    "      Effect.orDie,",
                    "    )",
                    "",
                ]
            methods.append(m)
        if planted == "named":
            lines += [
                "    // Reads are idempotent, so someone decided the repository may ride out connection loss.",
                f"    const findFresh = (id: {e.id}) =>",
                "      findById(id).pipe(",
                "        Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }),",
                "        Effect.orDie,",
                "      )",
                "",
            ]
            methods.append("findFresh")
        elif planted == "inline":
            d = r.choice(DURATIONS)
            lines += [
                f"    const lockForUpdate = (id: {e.id}) =>",
                f"      sql`SELECT id FROM {e.table} WHERE id = ${{id}} FOR UPDATE NOWAIT`.pipe(",
                f'        Effect.retry({{ schedule: Schedule.exponential("{d}"), times: {r.randint(2, 6)} }}),',
                "        Effect.orDie,",
                "      )",
                "",
            ]
            methods.append("lockForUpdate")
        lines.append(f"    return {{ {', '.join(methods)} }} as const")
        lines += ["  }),", "}) {}", ""]
        return "\n".join(lines)

    def use_case(self, svc: str, e: Entity, verb: str, planted: str | None) -> str:
        r = self.rng
        fn = f"{lower_first(verb)}{e.name}"
        effect_imports = {"Effect", "Option"}
        extra = []
        if r.random() < 0.3:
            effect_imports.add("DateTime")
        if r.random() < 0.2:
            effect_imports.add("Array")
        if planted == "inline":
            effect_imports.add("Schedule")
        helpers = r.choice([0, 0, 0, 1, 1, 2, 3, 5])
        if helpers:
            effect_imports |= {"Array", "Chunk", "Either", "Match", "ParseResult", "Schema", "Stream"}
        lines = [f"import {{ {', '.join(sorted(effect_imports))} }} from \"effect\""]
        lines.append(f'import {{ {e.id}, {e.name} }} from "../../domain/{e.name}.js"')
        lines.append(f'import {{ {e.name}Conflict, {e.name}Unavailable }} from "../../domain/errors.js"')
        lines.append(f'import {{ {e.name}Repository }} from "../../repositories/{e.name}Repository.js"')
        lines.append('import { AuditLog } from "../../services/AuditLog.js"')
        if planted == "named":
            lines.append('import * as Retry from "../../infra/retry.js"')
        lines.append("")
        for h in range(helpers):
            lines += self.helper(e, f"{fn}Step{h}")
        if r.random() < 0.7:
            lines.append(f"/** {verb}s a {e.name.lower()} of the {svc} service on behalf of the current user. */")
        lines.append(f'export const {fn} = Effect.fn("{svc}.{fn}")(')
        lines.append(f"  function* (id: {e.id}, actor: string) {{")
        lines.append(f"    const repository = yield* {e.name}Repository")
        lines.append("    const audit = yield* AuditLog")
        lines.append(f"    const current = yield* repository.get(id)")
        lines.append(f'    yield* Effect.annotateCurrentSpan("{e.var}.id", id)')
        blocks = r.randint(2, 12)
        for b in range(blocks):
            kind = r.random()
            status = r.choice(e.statuses)
            if kind < 0.25:
                lines += [
                    f'    if (current.status === "{status}") {{',
                    f'      return yield* Effect.fail(new {e.name}Conflict({{ id, reason: "already {status}" }}))',
                    "    }",
                ]
            elif kind < 0.45:
                fname = r.choice(e.fields)[0]
                lines += [
                    f"    const {fname}{b} = Option.fromNullable(current.{fname}).pipe(",
                    "      Option.map((value) => String(value).trim()),",
                    '      Option.getOrElse(() => ""),',
                    "    )",
                    f'    yield* Effect.logDebug("{fn}: {fname}", {fname}{b})',
                ]
            elif kind < 0.6 and "DateTime" in effect_imports:
                lines += [
                    f"    const now{b} = yield* DateTime.now",
                    f"    const deadline{b} = DateTime.add(now{b}, {{ days: {r.randint(1, 30)} }})",
                    f'    yield* Effect.annotateCurrentSpan("deadline", DateTime.formatIso(deadline{b}))',
                ]
            elif kind < 0.7 and "Array" in effect_imports:
                lines += [
                    f"    const labels{b} = Array.dedupe(Array.map([current.status, actor], (value) => value.toLowerCase()))",
                    f"    yield* Effect.forEach(labels{b}, (label) => Effect.logTrace(label), {{ discard: true }})",
                ]
            elif kind < 0.85:
                lines += [
                    f"    yield* repository.update({{ id }}).pipe(",
                    f'      Effect.tapErrorCause((cause) => Effect.logWarning("{fn} failed", cause)),',
                    "    )",
                ]
            else:
                lines += [
                    "    yield* Effect.all(",
                    "      [",
                    f'        audit.record({{ actor, action: "{snake(verb)}_{snake(e.name)}", subject: id }}),',
                    f'        Effect.logInfo("{e.name} {verb.lower()}d", {{ id, actor }}),',
                    "      ],",
                    '      { concurrency: "unbounded", discard: true },',
                    "    )",
                ]
        lines.append(f'    yield* audit.record({{ actor, action: "{snake(verb)}", subject: id }})')
        lines.append("    return current")
        lines.append("  },")
        if planted == "named":
            lines.append("  Effect.retry({ schedule: Retry.contention, while: Retry.isContention }),")
        elif planted == "inline":
            d = r.choice(DURATIONS)
            if r.random() < 0.5:
                lines.append(f'  Effect.retry({{ schedule: Schedule.exponential("{d}"), times: {r.randint(2, 5)} }}),')
            else:
                lines.append(
                    f'  Effect.retry(Schedule.exponential("{d}").pipe(Schedule.compose(Schedule.recurs({r.randint(2, 5)})))),'
                )
        lines.append(f'  Effect.withSpan("{svc}.{fn}.unit"),')
        lines.append(")")
        lines.append("")
        return "\n".join(lines)

    def audit_service(self, svc: str) -> str:
        return "\n".join([
            'import { SqlClient } from "@effect/sql"',
            'import { Context, Effect, Layer } from "effect"',
            "",
            "export interface AuditRecord {",
            "  readonly actor: string",
            "  readonly action: string",
            "  readonly subject: string",
            "}",
            "",
            f'export class AuditLog extends Context.Tag("{svc}/AuditLog")<',
            "  AuditLog,",
            "  { readonly record: (entry: AuditRecord) => Effect.Effect<void> }",
            ">() {}",
            "",
            "export const AuditLogLive = Layer.effect(",
            "  AuditLog,",
            "  Effect.gen(function* () {",
            "    const sql = yield* SqlClient.SqlClient",
            "    return AuditLog.of({",
            "      record: (entry) =>",
            "        sql`INSERT INTO audit_log ${sql.insert({ ...entry, at: new Date() })}`.pipe(Effect.asVoid, Effect.orDie),",
            "    })",
            "  }),",
            ")",
            "",
            "export const AuditLogTest = Layer.succeed(AuditLog, AuditLog.of({ record: () => Effect.void }))",
            "",
        ])

    def domain_service(self, svc: str, name: str, entities: list[Entity]) -> str:
        r = self.rng
        deps = r.sample(entities, min(len(entities), r.randint(1, 3)))
        ops = r.sample(VERBS, r.randint(2, 7))
        lines = ['import { Context, Effect, Layer, Option } from "effect"']
        for d in deps:
            lines.append(f'import {{ {d.name}Repository }} from "../repositories/{d.name}Repository.js"')
        lines.append("")
        lines.append(f"export class {name} extends Context.Tag(\"{svc}/{name}\")<")
        lines.append(f"  {name},")
        lines.append("  {")
        for op in ops:
            lines.append(f"    readonly {lower_first(op)}: (id: string) => Effect.Effect<Option.Option<string>>")
        lines.append("  }")
        lines.append(">() {}")
        lines.append("")
        lines.append(f"export const {name}Live = Layer.effect(")
        lines.append(f"  {name},")
        lines.append("  Effect.gen(function* () {")
        for d in deps:
            lines.append(f"    const {d.var}s = yield* {d.name}Repository")
        lines.append(f"    return {name}.of({{")
        for op in ops:
            d = r.choice(deps)
            lines += [
                f"      {lower_first(op)}: (id) =>",
                f"        {d.var}s.findById(id as never).pipe(",
                "          Effect.map(Option.map((row) => row.id)),",
                "          Effect.orElseSucceed(() => Option.none()),",
                f'          Effect.withSpan("{name}.{lower_first(op)}"),',
                "        ),",
            ]
        lines.append("    })")
        lines.append("  }),")
        lines.append(f").pipe(Layer.provide([{', '.join(f'{d.name}Repository.Default' for d in deps)}]))")
        lines.append("")
        return "\n".join(lines)

    def http_api(self, svc: str, e: Entity) -> str:
        lines = [
            'import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"',
            'import { Schema } from "effect"',
            f'import {{ {e.name}, {e.id}, Create{e.name}, Update{e.name} }} from "../domain/{e.name}.js"',
            f'import {{ {e.name}NotFound, {e.name}Conflict }} from "../domain/errors.js"',
            "",
            f'const idParam = HttpApiSchema.param("id", {e.id})',
            "",
            f'export class {plural(e.name)}Api extends HttpApiGroup.make("{e.table}")',
            f'  .add(HttpApiEndpoint.get("list", "/{e.table}").addSuccess(Schema.Array({e.name})))',
            f'  .add(HttpApiEndpoint.get("get")`/{e.table}/${{idParam}}`.addSuccess({e.name}).addError({e.name}NotFound, {{ status: 404 }}))',
            f'  .add(HttpApiEndpoint.post("create", "/{e.table}").setPayload(Create{e.name}).addSuccess({e.name}, {{ status: 201 }}))',
            f'  .add(HttpApiEndpoint.patch("update")`/{e.table}/${{idParam}}`.setPayload(Update{e.name}).addSuccess({e.name}))',
        ]
        for v in e.verbs:
            lines.append(
                f'  .add(HttpApiEndpoint.post("{lower_first(v)}")`/{e.table}/${{idParam}}/{snake(v)}`.addSuccess({e.name}).addError({e.name}Conflict, {{ status: 409 }}))'
            )
        lines.append(f'  .prefix("/{svc}")')
        lines.append("{}")
        lines.append("")
        return "\n".join(lines)

    def http_handlers(self, svc: str, e: Entity) -> str:
        lines = [
            'import { HttpApiBuilder } from "@effect/platform"',
            'import { Effect, Layer } from "effect"',
            f'import {{ {svc.capitalize()}Api }} from "./Api.js"',
            f'import {{ {e.name}Repository }} from "../repositories/{e.name}Repository.js"',
        ]
        for v in e.verbs:
            lines.append(f'import {{ {lower_first(v)}{e.name} }} from "../features/{e.var}/{v}{e.name}.js"')
        lines += [
            'import { CurrentUser } from "../services/CurrentUser.js"',
            "",
            f'export const {plural(e.name)}Live = HttpApiBuilder.group({svc.capitalize()}Api, "{e.table}", (handlers) =>',
            "  Effect.gen(function* () {",
            f"    const repository = yield* {e.name}Repository",
            "    return handlers",
            '      .handle("list", () => Effect.succeed([]))',
            '      .handle("get", ({ path }) => repository.get(path.id))',
            '      .handle("create", ({ payload }) => repository.insert(payload).pipe(Effect.orDie))',
            '      .handle("update", ({ path, payload }) =>',
            "        repository.update({ ...payload, id: path.id }).pipe(Effect.zipRight(repository.get(path.id))),",
            "      )",
        ]
        for v in e.verbs:
            lines += [
                f'      .handle("{lower_first(v)}", ({{ path }}) =>',
                "        Effect.gen(function* () {",
                "          const user = yield* CurrentUser",
                f"          return yield* {lower_first(v)}{e.name}(path.id, user.id)",
                "        }),",
                "      )",
            ]
        lines += [
            "  }),",
            f").pipe(Layer.provide({e.name}Repository.Default))",
            "",
        ]
        return "\n".join(lines)

    def api_module(self, svc: str, entities: list[Entity]) -> str:
        lines = ['import { HttpApi, OpenApi } from "@effect/platform"']
        for e in entities:
            lines.append(f'import {{ {plural(e.name)}Api }} from "./{plural(e.name)}Api.js"')
        lines.append("")
        lines.append(f'export class {svc.capitalize()}Api extends HttpApi.make("{svc}")')
        for e in entities:
            lines.append(f"  .add({plural(e.name)}Api)")
        lines.append(f'  .annotate(OpenApi.Title, "{svc.capitalize()} API")')
        lines.append("{}")
        lines.append("")
        return "\n".join(lines)

    def layers(self, svc: str, entities: list[Entity], services: list[str]) -> str:
        lines = [
            'import { HttpApiBuilder, HttpMiddleware, HttpServer } from "@effect/platform"',
            'import { NodeHttpServer } from "@effect/platform-node"',
            'import { PgClient } from "@effect/sql-pg"',
            'import { Config, Layer } from "effect"',
            'import { createServer } from "node:http"',
            f'import {{ {svc.capitalize()}Api }} from "./http/Api.js"',
            'import { AuditLogLive } from "./services/AuditLog.js"',
        ]
        for e in entities:
            lines.append(f'import {{ {plural(e.name)}Live }} from "./http/{plural(e.name)}Handlers.js"')
        for s in services:
            lines.append(f'import {{ {s}Live }} from "./services/{s}.js"')
        lines += [
            "",
            "export const SqlLive = PgClient.layerConfig({",
            '  url: Config.redacted("DATABASE_URL"),',
            '  maxConnections: Config.integer("DATABASE_POOL_SIZE").pipe(Config.withDefault(10)),',
            "})",
            "",
            f"export const HandlersLive = Layer.mergeAll(",
        ]
        for e in entities:
            lines.append(f"  {plural(e.name)}Live,")
        lines.append(")")
        lines.append("")
        lines.append("export const ServicesLive = Layer.mergeAll(AuditLogLive" + "".join(f", {s}Live" for s in services) + ")")
        lines += [
            "",
            f"export const ApiLive = HttpApiBuilder.api({svc.capitalize()}Api).pipe(",
            "  Layer.provide(HandlersLive),",
            "  Layer.provide(ServicesLive),",
            "  Layer.provide(SqlLive),",
            ")",
            "",
            "export const ServerLive = HttpApiBuilder.serve(HttpMiddleware.logger).pipe(",
            "  Layer.provide(ApiLive),",
            "  HttpServer.withLogAddress,",
            f'  Layer.provide(NodeHttpServer.layer(createServer, {{ port: {self.rng.randint(3000, 9000)} }})),',
            ")",
            "",
        ]
        return "\n".join(lines)

    def test_module(self, svc: str, e: Entity, verbs: list[str]) -> str:
        r = self.rng
        lines = [
            'import { describe, expect, it } from "@effect/vitest"',
            'import { Effect, Exit, Layer, Option } from "effect"',
            f'import {{ {e.name}Repository }} from "../src/repositories/{e.name}Repository.js"',
            'import { AuditLogTest } from "../src/services/AuditLog.js"',
        ]
        for v in verbs:
            lines.append(f'import {{ {lower_first(v)}{e.name} }} from "../src/features/{e.var}/{v}{e.name}.js"')
        lines += [
            "",
            f"const row = {{",
            '  id: "00000000-0000-4000-8000-000000000001",',
            f'  status: "{e.statuses[0]}",',
            "  createdAt: new Date(0),",
            "  updatedAt: new Date(0),",
            "} as never",
            "",
            f"const Repository{e.name}Test = Layer.succeed(",
            f"  {e.name}Repository,",
            f"  {e.name}Repository.make({{",
            "    findById: () => Effect.succeed(Option.some(row)),",
            "    get: () => Effect.succeed(row),",
            "    update: () => Effect.void,",
            "  } as never),",
            ")",
            "",
            f"const TestLayer = Layer.mergeAll(Repository{e.name}Test, AuditLogTest)",
            "",
        ]
        for v in verbs:
            fn = f"{lower_first(v)}{e.name}"
            lines.append(f'describe("{fn}", () => {{')
            for t in range(r.randint(1, 6)):
                status = r.choice(e.statuses)
                if r.random() < 0.6:
                    lines += [
                        f'  it.effect("works when the {e.name.lower()} is {status} ({t})", () =>',
                        "    Effect.gen(function* () {",
                        f'      const result = yield* {fn}(row.id, "user-{t}")',
                        "      expect(result.id).toEqual(row.id)",
                        f'      expect(result.status).toBe("{e.statuses[0]}")',
                        "    }).pipe(Effect.provide(TestLayer)))",
                        "",
                    ]
                else:
                    lines += [
                        f'  it.effect("fails for an unknown actor ({t})", () =>',
                        "    Effect.gen(function* () {",
                        f'      const exit = yield* Effect.exit({fn}(row.id, ""))',
                        "      expect(Exit.isSuccess(exit) || Exit.isFailure(exit)).toBe(true)",
                        "    }).pipe(Effect.provide(TestLayer)))",
                        "",
                    ]
            lines.append("})")
            lines.append("")
        return "\n".join(lines)

    def view(self, e: Entity) -> str:
        r = self.rng
        shown = r.sample(e.fields, min(len(e.fields), r.randint(2, 6)))
        lines = [
            'import { Option, pipe } from "effect"',
            'import * as React from "react"',
            f'import type {{ {e.name} }} from "../domain/{e.name}.js"',
            "",
            f"export interface {e.name}CardProps {{",
            f"  readonly {e.var}: {e.name}",
            "  readonly onSelect?: (id: string) => void",
            "}",
            "",
            f"export function {e.name}Card({{ {e.var}, onSelect }}: {e.name}CardProps) {{",
            "  const subtitle = pipe(",
            f"    Option.fromNullable({e.var}.status),",
            "    Option.map((status) => status.toUpperCase()),",
            '    Option.getOrElse(() => "UNKNOWN"),',
            "  )",
            "  return (",
            f'    <article className="card card-{e.var}" onClick={{() => onSelect?.({e.var}.id)}}>',
            f"      <header>",
            f"        <h3>{e.name} {{{e.var}.id.slice(0, 8)}}</h3>",
            "        <small>{subtitle}</small>",
            "      </header>",
            "      <dl>",
        ]
        for fname, _, _ in shown:
            lines += [f"        <dt>{fname}</dt>", f"        <dd>{{String({e.var}.{fname} ?? \"\")}}</dd>"]
        lines += ["      </dl>", "    </article>", "  )", "}", ""]
        return "\n".join(lines)

    def shared_ids(self) -> str:
        return "\n".join([
            'import { Schema } from "effect"',
            "",
            'export const UserId = Schema.UUID.pipe(Schema.brand("UserId"))',
            "export type UserId = typeof UserId.Type",
            "",
            "export const Email = Schema.String.pipe(",
            "  Schema.pattern(/^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$/),",
            '  Schema.brand("Email"),',
            ")",
            "export type Email = typeof Email.Type",
            "",
        ])

    def current_user(self, svc: str) -> str:
        return "\n".join([
            'import { Context } from "effect"',
            "",
            f'export class CurrentUser extends Context.Tag("{svc}/CurrentUser")<CurrentUser, {{ readonly id: string; readonly roles: ReadonlyArray<string> }}>() {{}}',
            "",
        ])

    def codes_module(self, svc: str) -> str:
        # The big, flat module most codebases have: a lookup table.
        r = self.rng
        n = r.randint(150, 900)
        lines = ['import { HashMap, Schema } from "effect"', "", f"/** Reference codes of the {svc} service. */"]
        lines.append("export const Codes = HashMap.make(")
        for i in range(n):
            lines.append(f'  ["{svc[:3].upper()}-{i:04d}", {{ label: "{r.choice(NOUNS)} {r.choice(VERBS).lower()}", weight: {r.randint(1, 99)} }}],')
        lines.append(")")
        lines.append("")
        lines.append(f'export const Code = Schema.String.pipe(Schema.pattern(/^{svc[:3].upper()}-\\d{{4}}$/), Schema.brand("Code"))')
        lines.append("")
        return "\n".join(lines)

    def config_module(self, svc: str) -> str:
        return "\n".join([
            'import { Config, Effect } from "effect"',
            "",
            f"export const {svc.capitalize()}Config = Config.all({{",
            '  baseUrl: Config.string("PUBLIC_BASE_URL"),',
            '  pageSize: Config.integer("PAGE_SIZE").pipe(Config.withDefault(50)),',
            '  featureFlags: Config.array(Config.string(), "FEATURE_FLAGS").pipe(Config.withDefault([])),',
            '  requestTimeout: Config.duration("REQUEST_TIMEOUT").pipe(Config.withDefault("5 seconds")),',
            "})",
            "",
            f"export const load{svc.capitalize()}Config = Effect.gen(function* () {{",
            f"  const config = yield* {svc.capitalize()}Config",
            '  yield* Effect.logInfo("configuration loaded", { pageSize: config.pageSize })',
            "  return config",
            "})",
            "",
        ])

    # ------------------------------------------------------ planted (relevant)

    def retry_module(self) -> str:
        return "\n".join([
            "// The retry module: every retry schedule and predicate the service uses is named here.",
            'import { Duration, Schedule } from "effect"',
            'import { SqlError } from "@effect/sql/SqlError"',
            "",
            "const capped = (base: Duration.DurationInput, cap: Duration.DurationInput, retries: number) =>",
            "  Schedule.exponential(base).pipe(",
            "    Schedule.union(Schedule.spaced(cap)),",
            "    Schedule.intersect(Schedule.recurs(retries)),",
            "    Schedule.jittered,",
            "  )",
            "",
            "/** Contention: the database rolled the transaction back, so any atomic unit may replay. */",
            'export const contention = capped("50 millis", "200 millis", 3)',
            "",
            "/** Connection loss: only on an idempotent unit. */",
            'export const transient = capped("200 millis", "2 seconds", 3)',
            "",
            "export const isContention = (error: unknown): boolean =>",
            '  error instanceof SqlError && /deadlock|serialization|lock timeout/i.test(String(error.cause))',
            "",
            "export const isConnectionLost = (error: unknown): boolean =>",
            '  error instanceof SqlError && /ECONNRESET|terminating connection/.test(String(error.cause))',
            "",
        ])

    def jobs_module(self) -> str:
        return "\n".join([
            'import { Effect } from "effect"',
            "",
            "export interface Job {",
            "  readonly name: string",
            "  readonly cron: string",
            "  readonly exclusive: boolean",
            "  readonly run: (slot: Date) => Effect.Effect<void>",
            "}",
            "",
            "export const Jobs = {",
            "  make: (job: Job): Job => job,",
            "}",
            "",
        ])

    def job(self, svc: str, e: Entity) -> str:
        r = self.rng
        return "\n".join([
            'import { Effect } from "effect"',
            'import { Jobs } from "../infra/jobs.js"',
            f'import {{ {e.name}Repository }} from "../repositories/{e.name}Repository.js"',
            "",
            f"export const sweep{plural(e.name)} = Jobs.make({{",
            f'  name: "{svc}.sweep-{snake(plural(e.name)).replace("_", "-")}",',
            f'  cron: "{r.randint(0, 59)} {r.randint(0, 23)} * * *",',
            "  exclusive: true,",
            "  run: (slot: Date) =>",
            "    Effect.gen(function* () {",
            f"      const repository = yield* {e.name}Repository",
            f'      yield* Effect.logInfo("sweeping", {{ slot: slot.toISOString() }})',
            "      yield* repository.update({ id: undefined as never })",
            f"    }}).pipe(Effect.provide({e.name}Repository.Default), Effect.orDie),",
            "})",
            "",
        ])

    def lease_module(self, svc: str) -> str:
        return "\n".join([
            'import { SqlClient } from "@effect/sql"',
            'import { Effect } from "effect"',
            "",
            "/** Claims the named job for this replica until the lease runs out. */",
            "export const claim = (name: string, owner: string) =>",
            "  Effect.gen(function* () {",
            "    const sql = yield* SqlClient.SqlClient",
            "    const rows = yield* sql`",
            "      UPDATE jobs_leases",
            "      SET owner = ${owner}, lease_until = now() + interval '5 minutes'",
            "      WHERE name = ${name} AND (lease_until IS NULL OR lease_until < now())",
            "      RETURNING name",
            "    `",
            "    return rows.length > 0",
            "  })",
            "",
            "export const complete = (name: string, slot: Date) =>",
            "  Effect.gen(function* () {",
            "    const sql = yield* SqlClient.SqlClient",
            "    yield* sql`UPDATE jobs_leases SET last_slot = ${slot}, lease_until = NULL WHERE name = ${name}`",
            "  })",
            "",
        ])

    def http_client(self, svc: str, planted: str) -> str:
        lines = [
            'import { HttpClient, HttpClientRequest } from "@effect/platform"',
            'import { Effect, Schedule } from "effect"' if planted == "inline" else 'import { Effect } from "effect"',
        ]
        if planted != "inline":
            lines.append('import * as Retry from "../infra/retry.js"')
        lines += [
            "",
            f"export const fetchExchangeRates = Effect.gen(function* () {{",
            "  const client = (yield* HttpClient.HttpClient).pipe(",
            '    HttpClient.mapRequest(HttpClientRequest.prependUrl("https://rates.example.com")),',
            "    HttpClient.filterStatusOk,",
            "  )",
            '  return yield* client.get("/latest").pipe(Effect.flatMap((response) => response.json))',
            "}).pipe(",
        ]
        if planted == "inline":
            lines.append('  Effect.retry(Schedule.exponential("200 millis").pipe(Schedule.intersect(Schedule.recurs(4)))),')
        else:
            lines.append("  Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }),")
        lines += [f'  Effect.withSpan("{svc}.fetchExchangeRates"),', ")", ""]
        return "\n".join(lines)

    # ---------------------------------------------------------------- layout

    def service(self, svc: str, first: bool = False) -> None:
        r = self.rng
        root = f"packages/{svc}"
        pool = [n + q for n in NOUNS for q in QUALIFIERS]
        names = sorted(set(r.sample(pool, r.randint(12, 28))))
        entities = [Entity(r, n) for n in names]
        self.add(f"{root}/package.json", json.dumps({
            "name": f"@acme/{svc}", "private": True, "type": "module",
            "dependencies": {"effect": "^3.17.0", "@effect/platform": "^0.90.0", "@effect/sql": "^0.44.0"},
        }, indent=2) + "\n")
        self.add(f"{root}/src/shared/ids.ts", self.shared_ids())
        self.add(f"{root}/src/domain/errors.ts", self.errors_module(entities))
        self.add(f"{root}/src/services/AuditLog.ts", self.audit_service(svc))
        self.add(f"{root}/src/services/CurrentUser.ts", self.current_user(svc))
        self.add(f"{root}/src/config.ts", self.config_module(svc))
        self.add(f"{root}/src/domain/Codes.ts", self.codes_module(svc))
        self.add(f"{root}/src/http/Api.ts", self.api_module(svc, entities))
        # Planted: every service names its policies; some use them, some copy them inline.
        self.add(f"{root}/src/infra/retry.ts", self.retry_module(), "retry-module")
        if r.random() < 0.5:
            self.add(f"{root}/src/infra/jobs.ts", self.jobs_module(), "jobs")
            for e in r.sample(entities, r.randint(1, 2)):
                self.add(f"{root}/src/jobs/sweep{plural(e.name)}.ts", self.job(svc, e), "jobs")
            if r.random() < 0.6:
                self.add(f"{root}/src/infra/leases.ts", self.lease_module(svc), "lease-sql")
        if r.random() < 0.3:
            kind = r.choice(["named", "inline"])
            self.add(f"{root}/src/http/ExchangeRates.ts", self.http_client(svc, kind), f"http-{kind}")
        services = [f"{e.name}{s}" for e in r.sample(entities, min(len(entities), r.randint(2, 6)))
                    for s in [r.choice(["Service", "Policy", "Directory", "Calculator"])]]
        for s in services:
            self.add(f"{root}/src/services/{s}.ts", self.domain_service(svc, s, entities))
        for e in r.sample(entities, r.randint(1, 3)):
            self.add(f"{root}/src/services/{e.name}Engine.ts", self.engine_module(svc, e))
        index = ['export * from "./config.js"', 'export * from "./domain/errors.js"']
        for i, e in enumerate(entities):
            repo_plant = None
            if r.random() < 0.03:
                repo_plant = r.choice(["named", "inline"])
            if first and i == 0:
                # The first service always holds one of each violation, so small corpora have them.
                repo_plant = "inline"
            self.add(f"{root}/src/domain/{e.name}.ts", self.schema_module(svc, e))
            self.add(
                f"{root}/src/repositories/{e.name}Repository.ts",
                self.repository(svc, e, repo_plant),
                None if repo_plant is None else f"repository-{repo_plant}",
            )
            for v in e.verbs:
                plant = None
                if r.random() < 0.012:
                    plant = r.choice(["named", "inline"])
                if first and i == 1 and v == e.verbs[0]:
                    plant = "inline"
                self.add(
                    f"{root}/src/features/{e.var}/{v}{e.name}.ts",
                    self.use_case(svc, e, v, plant),
                    None if plant is None else f"use-case-{plant}",
                )
            self.add(f"{root}/src/http/{plural(e.name)}Api.ts", self.http_api(svc, e))
            self.add(f"{root}/src/http/{plural(e.name)}Handlers.ts", self.http_handlers(svc, e))
            if r.random() < 0.35:
                self.add(f"{root}/src/ui/{e.name}Card.tsx", self.view(e))
            tested = [v for v in e.verbs if r.random() < 0.6]
            if tested:
                self.add(f"{root}/test/{e.name}.test.ts", self.test_module(svc, e, tested))
            index.append(f'export * from "./domain/{e.name}.js"')
        self.add(f"{root}/src/layers.ts", self.layers(svc, entities, services))
        self.add(f"{root}/src/index.ts", "\n".join(index) + "\n")

    def build(self) -> None:
        self.add("package.json", json.dumps({
            "name": "acme-platform", "private": True, "workspaces": ["packages/*"],
            "dependencies": {"effect": "^3.17.0"},
        }, indent=2) + "\n")
        self.add(".gitignore", "node_modules/\ndist/\n")
        n = 0
        while sum(1 for p in self.files if p.endswith((".ts", ".tsx"))) < self.target:
            base = SERVICES[n % len(SERVICES)]
            self.service(base if n < len(SERVICES) else f"{base}{n // len(SERVICES) + 1}", first=n == 0)
            n += 1


def sdk_files(rng: random.Random, megabytes: int) -> dict[str, str]:
    """Generated API clients: ~90 KB each, every operation retried inline (so every file would
    pass a retry prefilter), each under a generator's header."""
    out: dict[str, str] = {}
    budget = megabytes * 1_000_000
    written = n = 0
    while written < budget:
        resource = f"{rng.choice(['Account', 'Invoice', 'Widget', 'Order', 'Shipment', 'Ledger'])}{n}"
        parts = [
            "// This file was generated by openapi-effect-gen 2.4.1. DO NOT EDIT.\n",
            'import { Effect, Schedule, Schema } from "effect"\n',
            'import { HttpClient, HttpClientResponse } from "@effect/platform"\n\n',
        ]
        size = sum(len(p) for p in parts)
        op = 0
        while size < 90_000:
            base = rng.choice([50, 100, 200, 500])
            retries = rng.randint(2, 6)
            text = (
                f"export class {resource}Op{op}Response extends Schema.Class<{resource}Op{op}Response>(\"{resource}Op{op}Response\")({{\n"
                f"  id: Schema.String,\n  version: Schema.Number,\n  updatedAt: Schema.DateTimeUtc,\n}}) {{}}\n\n"
                f"export const {resource[0].lower()}{resource[1:]}Op{op} = (client: HttpClient.HttpClient, id: string) =>\n"
                f"  client.get(`/v1/{resource.lower()}/${{id}}/op{op}`).pipe(\n"
                f"    Effect.flatMap(HttpClientResponse.schemaBodyJson({resource}Op{op}Response)),\n"
                f"    Effect.retry({{\n"
                f"      schedule: Schedule.exponential(\"{base} millis\").pipe(Schedule.intersect(Schedule.recurs({retries}))),\n"
                f"      while: (error) => error._tag === \"RequestError\",\n"
                f"    }}),\n  )\n\n"
            )
            parts.append(text)
            size += len(text)
            op += 1
        out[f"packages/sdk/src/clients/{resource}Client.ts"] = "".join(parts)
        written += size
        n += 1
    return out


def is_test(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (".test." in name or ".spec." in name
            or any(d in ("test", "tests", "__tests__") for d in parts[:-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--files", type=int, default=5000, help="TypeScript files to write, about (default 5000)")
    parser.add_argument("--sdk-mb", type=int, default=0, help="MB of generated SDK clients to add (default 0)")
    args = parser.parse_args()

    out = args.out.resolve()
    repo = Path(__file__).resolve().parent.parent
    if out == repo or repo in out.parents:
        sys.exit(f"gen_corpus: refusing to write inside the repository ({out})")
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            sys.exit(f"gen_corpus: {out} is not empty and holds no {MARKER}: refusing to overwrite it")
        shutil.rmtree(out)

    corpus = Corpus(args.seed, args.files)
    corpus.build()
    if args.sdk_mb:
        corpus.files.update(sdk_files(random.Random(args.seed), args.sdk_mb))
    digest = hashlib.sha256()
    lines = size = 0
    for path in sorted(corpus.files):
        data = corpus.files[path].encode()
        digest.update(path.encode() + b"\0" + data + b"\0")
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        if path.endswith((".ts", ".tsx")):
            lines += data.count(b"\n")
            size += len(data)
    # The files retrylint discovers: sources, and JSON/YAML (read for RS2 policies).
    checked = sum(1 for p in corpus.files if p.endswith((".ts", ".tsx", ".json", ".yaml", ".yml")))
    # Of those, test code, which retrylint skips by default (config.rs DEFAULT_TESTS).
    tests = sum(1 for p in corpus.files if p.endswith((".ts", ".tsx")) and is_test(p))
    manifest = {
        "seed": args.seed,
        "files": checked,
        "tests": tests,
        "lines": lines,
        "bytes": size,
        "sha256": digest.hexdigest(),
        "planted": dict(sorted(corpus.planted.items())),
    }
    (out / MARKER).write_text(json.dumps(manifest, indent=1) + "\n")
    print(
        f"{out}: {checked} files, {lines} lines, {size} bytes, "
        f"{len(corpus.planted)} planted ({100 * len(corpus.planted) / checked:.1f}%)"
    )
    print(f"sha256 {digest.hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
