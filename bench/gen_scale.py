#!/usr/bin/env python3
"""Single files of pathological shape and size, for measuring how retrylint scales.

    python3 bench/gen_scale.py SHAPE SIZE OUT_DIR

writes OUT_DIR/retrylint.toml (max-file-size raised so the file is read) and one source file:

    nested-blocks N    src/nested.ts: N nested `{ … }` blocks around an `Effect.retry`
    nested-arrows N    src/arrows.ts: N nested `() =>` arrows around an `Effect.retry`
    nested-fns N       src/fns.ts: N nested `function () { … }` bodies around an `Effect.retry`
    nested-retries N   src/retries.ts: N nested `Effect.retry(…, { … })` calls, each retrying the
                       ones inside it
    policies MB        src/policies.ts: about MB megabytes of named policies, retried units
                       (services bound around them, SQL, HTTP calls) and their retries
    unbound MB         src/unbound.ts: about MB megabytes of `Effect.retry(x, …)` statements on
                       names the file never binds
    rust MB            src/retries.rs: about MB megabytes of backon / tokio-retry `.retry(` sites
    rust-block MB      src/block.rs: about MB megabytes of `let` policies and their retries in
                       one function body
    sql N              db/leases.sql: N lease statements, one per line

Same arguments, same bytes. See bench/RESULTS-*-scale.md for what was measured with it.
"""

from __future__ import annotations

import sys
from pathlib import Path

HEADER = 'import { Effect, Schedule } from "effect"\nimport { OrdersRepository } from "./orders"\n\n'


def nested_blocks(n: int) -> str:
    return (
        HEADER
        + "export const run = (task: Effect.Effect<void>) => {\n"
        + "{\n" * n
        + 'Effect.retry(task, { schedule: Schedule.exponential("1 second"), times: 3 })\n'
        + "}\n" * n
        + "}\n"
    )


def nested_arrows(n: int) -> str:
    return (
        HEADER
        + "export const run = "
        + "() =>\n" * n
        + 'Effect.retry(task, { schedule: Schedule.exponential("1 second"), times: 3 })\n'
    )


def nested_fns(n: int) -> str:
    return (
        HEADER
        + "export const run = "
        + "function () {\nreturn " * n
        + 'Effect.retry(task, { schedule: Schedule.exponential("1 second"), times: 3 })\n'
        + "}\n" * n
    )


def nested_retries(n: int) -> str:
    return (
        HEADER
        + "export const run = "
        + "Effect.retry(\n" * n
        + "task"
        + ', { schedule: Schedule.spaced("1 second"), times: 3 })' * n
        + "\n"
    )


POLICY_CHUNK = """\
export const policy{i} = Schedule.exponential("{ms} millis").pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs({r})),
)

const isRetryable{i} = (e: {{ _tag: string }}) => e._tag === "Timeout{i}"

export const place{i} = Effect.fn("place{i}")(function* (id: string) {{
  const orders = yield* OrdersRepository
  const key = crypto.randomUUID()
  yield* orders.insert({{ id, key, total: {i} }})
  yield* sql`INSERT INTO orders_{m} (id) VALUES (${{id}}) ON CONFLICT DO NOTHING`
  yield* client.post("/orders/{i}", {{ body: {{ id, key }} }})
}}, Effect.retry({{ schedule: policy{i}, while: isRetryable{i} }}))

export const sync{i} = (id: string) =>
  OrdersRepository.pipe(
    Effect.flatMap((orders) => orders.update(id, {{ seen: true }})),
    Effect.retry({{ schedule: Schedule.spaced("{ms} millis"), times: {r} }}),
  )

"""


def policies(mb: float) -> str:
    out = [HEADER, 'import { HttpClient } from "@effect/platform"\n\n']
    size = sum(map(len, out))
    i = 0
    while size < mb * 1024 * 1024:
        chunk = POLICY_CHUNK.format(i=i, ms=100 + i % 900, r=1 + i % 7, m=i % 13)
        out.append(chunk)
        size += len(chunk)
        i += 1
    return "".join(out)


UNBOUND_CHUNK = """\
export const retried{i} = Effect.retry(x, {{ schedule: Schedule.exponential("{ms} millis"), while: isRetryable }})
"""


def unbound(mb: float) -> str:
    out = [HEADER]
    size = len(HEADER)
    i = 0
    while size < mb * 1024 * 1024:
        chunk = UNBOUND_CHUNK.format(i=i, ms=100 + i % 900)
        out.append(chunk)
        size += len(chunk)
        i += 1
    return "".join(out)


RUST_CHUNK = """\
pub async fn fetch_{i}(client: &Client, id: u64) -> Result<Order, Error> {{
    let policy = ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis({ms}))
        .with_max_times({r});
    (|| async {{ client.get(format!("/orders/{{id}}")).send().await?.json().await }})
        .retry(policy)
        .when(|e: &Error| e.is_timeout())
        .await
}}

pub async fn insert_{i}(pool: &PgPool, id: u64) -> Result<(), Error> {{
    let strategy = ExponentialBackoff::from_millis({ms}).map(jitter).take({r});
    Retry::spawn(strategy, || async {{
        sqlx::query("INSERT INTO orders_{m} (id) VALUES ($1)").bind(id as i64).execute(pool).await
    }})
    .await?;
    Ok(())
}}

"""


def rust(mb: float) -> str:
    out = [
        "use backon::{ExponentialBuilder, Retryable};\n"
        "use tokio_retry::{Retry, strategy::{ExponentialBackoff, jitter}};\n"
        "use std::time::Duration;\n\n"
    ]
    size = len(out[0])
    i = 0
    while size < mb * 1024 * 1024:
        chunk = RUST_CHUNK.format(i=i, ms=100 + i % 900, r=1 + i % 7, m=i % 13)
        out.append(chunk)
        size += len(chunk)
        i += 1
    return "".join(out)


RUST_BLOCK_CHUNK = """\
        let policy{i} = ExponentialBuilder::default().with_min_delay(Duration::from_millis({ms})).with_max_times({r});
        (|| async {{ self.fetch({i}).await }}).retry(policy{i}).when(|e: &Error| e.is_timeout()).await?;
"""


def rust_block(mb: float) -> str:
    out = [
        "use backon::{ExponentialBuilder, Retryable};\nuse std::time::Duration;\n\n"
        "impl Client {\n    pub async fn run(&self) -> Result<(), Error> {\n"
    ]
    size = len(out[0])
    i = 0
    while size < mb * 1024 * 1024:
        chunk = RUST_BLOCK_CHUNK.format(i=i, ms=100 + i % 900, r=1 + i % 7)
        out.append(chunk)
        size += len(chunk)
        i += 1
    out.append("        Ok(())\n    }\n}\n")
    return "".join(out)


def sql(n: int) -> str:
    out = []
    for i in range(n):
        if i % 3 == 0:
            out.append(
                f"UPDATE job_leases SET holder = $1, lease_until = now() + interval '30 seconds' "
                f"WHERE name = 'job{i}' AND (lease_until < now() OR holder = $1);\n"
            )
        elif i % 3 == 1:
            out.append(
                f"INSERT INTO job_leases (name, holder, last_slot) VALUES ('job{i}', $1, $2) "
                f"ON CONFLICT (name) DO UPDATE SET holder = $1 WHERE job_leases.last_slot < $2;\n"
            )
        else:
            out.append(f"DELETE FROM job_leases WHERE name = 'job{i}';\n")
    return "".join(out)


SHAPES = {
    "nested-blocks": ("src/nested.ts", nested_blocks, int),
    "nested-arrows": ("src/arrows.ts", nested_arrows, int),
    "nested-fns": ("src/fns.ts", nested_fns, int),
    "nested-retries": ("src/retries.ts", nested_retries, int),
    "policies": ("src/policies.ts", policies, float),
    "unbound": ("src/unbound.ts", unbound, float),
    "rust": ("src/retries.rs", rust, float),
    "rust-block": ("src/block.rs", rust_block, float),
    "sql": ("db/leases.sql", sql, int),
}


def main() -> None:
    if len(sys.argv) != 4 or sys.argv[1] not in SHAPES:
        sys.exit(__doc__)
    path, generate, parse = SHAPES[sys.argv[1]]
    out = Path(sys.argv[3])
    text = generate(parse(sys.argv[2]))
    (out / path).parent.mkdir(parents=True, exist_ok=True)
    (out / path).write_text(text)
    (out / "retrylint.toml").write_text(f"max-file-size = {max(len(text) + 1, 1 << 20)}\n")
    print(f"{out / path}: {len(text)} bytes")


if __name__ == "__main__":
    main()
