#!/usr/bin/env node
// Evaluates Effect Schedule expressions with the real `effect` packages installed side by side:
// `effect-v3` (3.x), `effect-v4-beta` (a 4.0 beta) and `effect` (4.x), see package.json.
// stdin : JSONL requests {"id", "version": "<exact version>" | 3 | 4, "expr", "n"?: 20}
// stdout: one JSONL answer per request, same order:
//   {"id","version","delaysMs":[...],"terminated":bool,"jittered":bool}  or  {"id","version","error":"..."}
// Semantics follow /work/shared/oracle/schedule-oracle.mjs "retry" mode. See README.md.
import * as V4 from "effect"
import * as V4Beta from "effect-v4-beta"
import * as V3 from "effect-v3"
import { createRequire } from "node:module"
import { createInterface } from "node:readline"

const require = createRequire(import.meta.url)
const versionOf = (alias) => require(`${alias}/package.json`).version

const MAX_N = 10_000
const round = (ms) => (Number.isFinite(ms) ? Math.round(ms * 1e6) / 1e6 : null) // null = infinite delay
const RETRY_KEYS = new Set(["schedule", "times", "while", "until"])
const isRetryOptions = (v) =>
  v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).every((k) => RETRY_KEYS.has(k))

// A tiny mutable virtual clock shared by both adapters: sleeping only moves `now` forward.
const makeTime = () => {
  let now = 0
  return { now: () => now, advance: (ms) => { now += ms }, nanos: () => BigInt(Math.round(now * 1e6)) }
}

// ---- effect 4.x and the 4.0 betas --------------------------------------------
// Schedule.jittered scales a delay by 0.8*(1-r) + 1.2*r where r = Random draw; r = 0.5 gives 1.0.
const v4Adapter = (E) => ({
  scope: { Schedule: E.Schedule, Duration: E.Duration, Effect: E.Effect, pipe: E.pipe, Cause: E.Cause, Context: E.Context, Option: E.Option },
  isSchedule: E.Schedule.isSchedule,
  run(policy, n, r) {
    const { Cause, Clock, Duration, Effect, Exit, Random } = E
    const t = makeTime()
    const clock = {
      currentTimeMillisUnsafe: () => t.now(),
      currentTimeMillis: Effect.sync(() => t.now()),
      currentTimeNanosUnsafe: t.nanos,
      currentTimeNanos: Effect.sync(t.nanos),
      monotonicTimeNanosUnsafe: t.nanos,
      monotonicTimeNanos: Effect.sync(t.nanos),
      sleep: (d) => Effect.sync(() => t.advance(Duration.toMillis(d)))
    }
    const random = { nextDoubleUnsafe: () => r, nextIntUnsafe: () => 0 }
    const sentinel = new Error("oracle: attempt failed")
    const times = []
    const attempt = Effect.suspend(() => {
      times.push(t.now())
      return times.length <= n + 1 ? Effect.fail(sentinel) : Effect.void
    })
    const exit = Effect.runSyncExit(Effect.retry(attempt, policy).pipe(
      Effect.provideService(Random.Random, random),
      Effect.provideService(Clock.Clock, clock)
    ))
    if (Exit.isFailure(exit) && !exit.cause.reasons.every((x) => Cause.isFailReason(x) && x.error === sentinel)) {
      throw new Error(Cause.pretty(exit.cause))
    }
    return { delays: times.slice(1).map((x, i) => x - times[i]), terminated: Exit.isFailure(exit) }
  }
})

// ---- effect 3.x ---------------------------------------------------------------
// v3 reads Clock and Random from the fiber's default services (not the context), so they are
// installed with Effect.withClock / Effect.withRandom. Schedule.jittered = jitteredWith({min: 0.8, max: 1.2}):
// d*0.8*(1-r) + d*1.2*r with r = Random.next, the same scaling as v4.
const v3 = {
  scope: {
    Schedule: V3.Schedule, Duration: V3.Duration, Effect: V3.Effect, pipe: V3.pipe, Context: V3.Context, Option: V3.Option,
    ScheduleDecision: V3.ScheduleDecision, ScheduleInterval: V3.ScheduleInterval, ScheduleIntervals: V3.ScheduleIntervals
  },
  isSchedule: V3.Schedule.isSchedule,
  run(policy, n, r) {
    const { Cause, Chunk, Clock, Duration, Effect, Exit, Random } = V3
    const t = makeTime()
    const clock = {
      [Clock.ClockTypeId]: Clock.ClockTypeId,
      unsafeCurrentTimeMillis: () => t.now(),
      currentTimeMillis: Effect.sync(() => t.now()),
      unsafeCurrentTimeNanos: t.nanos,
      currentTimeNanos: Effect.sync(t.nanos),
      sleep: (d) => Effect.sync(() => t.advance(Duration.toMillis(d)))
    }
    const random = {
      [Random.RandomTypeId]: Random.RandomTypeId,
      next: Effect.succeed(r),
      nextBoolean: Effect.succeed(r >= 0.5),
      nextInt: Effect.succeed(0),
      nextRange: (min, max) => Effect.succeed(min + (max - min) * r),
      nextIntBetween: (min) => Effect.succeed(min),
      shuffle: (xs) => Effect.succeed(Chunk.fromIterable(xs))
    }
    const sentinel = new Error("oracle: attempt failed")
    const times = []
    const attempt = Effect.suspend(() => {
      times.push(t.now())
      return times.length <= n + 1 ? Effect.fail(sentinel) : Effect.void
    })
    const exit = Effect.runSyncExit(Effect.retry(attempt, policy).pipe(Effect.withRandom(random), Effect.withClock(clock)))
    if (Exit.isFailure(exit)) {
      const fails = Chunk.toArray(Cause.failures(exit.cause))
      const ok = fails.length > 0 && fails.every((e) => e === sentinel) &&
        Chunk.isEmpty(Cause.defects(exit.cause)) && !Cause.isInterrupted(exit.cause)
      if (!ok) throw new Error(Cause.pretty(exit.cause))
    }
    return { delays: times.slice(1).map((x, i) => x - times[i]), terminated: Exit.isFailure(exit) }
  }
}

// Keyed by the exact installed version; the majors 3 and 4 name 3.x and 4.x.
const ADAPTERS = {
  [versionOf("effect-v3")]: v3,
  [versionOf("effect-v4-beta")]: v4Adapter(V4Beta),
  [versionOf("effect")]: v4Adapter(V4),
  3: v3,
  4: v4Adapter(V4)
}

const evaluate = (adapter, expr) => {
  const names = Object.keys(adapter.scope)
  const value = new Function(...names, `"use strict"; return (${expr})`)(...names.map((k) => adapter.scope[k]))
  if (adapter.isSchedule(value) || isRetryOptions(value)) return value
  throw new TypeError("expression is not a Schedule or Effect.retry options")
}

const same = (a, b) => a.terminated === b.terminated && a.delays.length === b.delays.length &&
  a.delays.every((d, i) => round(d) === round(b.delays[i]))

const handle = (req) => {
  const version = req.version ?? 4
  const adapter = ADAPTERS[version]
  if (!adapter) throw new Error(`unknown version ${JSON.stringify(version)} (want one of ${Object.keys(ADAPTERS).join(", ")})`)
  if (typeof req.expr !== "string") throw new Error("expr must be a string")
  const n = Math.min(Math.max(0, Math.floor(req.n ?? 20)), MAX_N)
  const policy = evaluate(adapter, req.expr)
  const mid = adapter.run(policy, n, 0.5)
  const lo = adapter.run(policy, n, 0)
  const hi = adapter.run(policy, n, 1)
  return {
    id: req.id,
    version,
    delaysMs: mid.delays.slice(0, n).map(round),
    terminated: mid.terminated,
    jittered: !same(mid, lo) || !same(mid, hi)
  }
}

// ORACLE_TRACE=1: each request and its time on stderr (to find an expression Effect hangs on).
const TRACE = Boolean(process.env.ORACLE_TRACE)
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of rl) {
  if (line.trim() === "") continue
  let req
  let answer
  const started = TRACE ? performance.now() : 0
  try {
    req = JSON.parse(line)
    if (TRACE) process.stderr.write(`${req?.id} ${req?.version} ${req?.expr}\n`)
    answer = handle(req)
  } catch (e) {
    const msg = String(e?.message ?? e).split("\n")[0]
    answer = { id: req?.id, version: req?.version, error: msg }
  }
  if (TRACE) process.stderr.write(`  ${(performance.now() - started).toFixed(1)} ms\n`)
  process.stdout.write(JSON.stringify(answer) + "\n")
}
