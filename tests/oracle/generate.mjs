#!/usr/bin/env node
// Random Effect `Schedule` expressions for differential testing of retrylint's schedule model,
// drawn from EVERY export of `effect/Schedule` in each installed version (see package.json):
// effect-v3 (3.x), effect-v4-beta (a late 4.0 beta) and effect (4.x).
//   node generate.mjs [--seed 42] [--count 600] [--per-export 6]
// stdout: JSONL. First, one line per version:
//   {"version":"4.1.0","exports":[...],"notSchedules":{"toStepWithSleep":"why",...}}
// then the requests:
//   {"id":"f0001","version":"4.1.0","export":"max","expr":"<JS expression>"}
// `--per-export` "focus" requests per export and version put that export on top of
// sub-expressions drawn from the version's core grammar, so that what the model does not know
// is charged to that export; `--count` "mixed" requests (export null) draw every part from all
// exports. The exports are enumerated from the installed packages: an export this file has no
// template for (a new version, a renamed combinator) stops the generator.
// The output depends only on the arguments and the installed versions (own PRNG, no Math.random).

import { createRequire } from "node:module"

const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`)
  if (i < 0) return dflt
  const v = Number(args[i + 1])
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${name} needs a non-negative integer`)
  return v
}
const seed = opt("seed", 42)
const count = opt("count", 600)
const perExport = opt("per-export", 6)

// mulberry32: small, fast, deterministic 32-bit PRNG.
const mulberry32 = (a) => () => {
  a |= 0
  a = (a + 0x6d2b79f5) | 0
  let t = Math.imul(a ^ (a >>> 15), 1 | a)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const rand = mulberry32(seed)
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)) // inclusive
const pick = (xs) => xs[Math.floor(rand() * xs.length)]
const chance = (p) => rand() < p
// weighted choice: [[weight, value], ...]
const weighted = (pairs) => {
  const total = pairs.reduce((s, [w]) => s + w, 0)
  let x = rand() * total
  for (const [w, v] of pairs) if ((x -= w) < 0) return v
  return pairs[pairs.length - 1][1]
}

// ---- durations ----------------------------------------------------------
// Base delays stay within 10 ms .. 10 s.
const delay = () =>
  weighted([
    [5, () => JSON.stringify(`${pick([10, 20, 50, 100, 200, 250, 500])} millis`)],
    [3, () => JSON.stringify(pick(["0.5 seconds", "1 second", "1.5 seconds", "2 seconds", "5 seconds", "10 seconds"]))],
    [2, () => String(pick([10, 50, 100, 250, 1000, 2000]))],
    [2, () => `Duration.millis(${pick([10, 25, 100, 300, 750, 1500])})`],
    [1, () => `Duration.seconds(${pick([1, 2, 3, 5])})`]
  ])()
// Time limits (during / upTo): may be longer than a delay.
const limit = () =>
  weighted([
    [3, () => JSON.stringify(pick(["500 millis", "1 second", "2 seconds", "5 seconds", "10 seconds", "30 seconds", "1 minute"]))],
    [1, () => String(pick([1000, 3000, 10000]))],
    [1, () => `Duration.seconds(${pick([1, 5, 10, 30])})`]
  ])()
const smallDelay = () => pick([10, 25, 50, 100, 200, 500])
const millisString = () => JSON.stringify(`${smallDelay()} millis`)
const cronExpr = () => JSON.stringify(pick(["*/5 * * * *", "0 * * * *", "0 0 * * *", "30 2 * * 1", "*/15 9-17 * * 1-5"]))

// ---- AST ---------------------------------------------------------------
// A node is { s: string | pipe, term: bool, out: "count"|"duration"|"other" }. `term`: stops after a
// bounded number of steps even when every delay is 0 (time limits alone don't count). `out`:
// "count" when the output is 0, 1, 2, … (predicates compare it with numbers).
// Pipes are kept structured so that wrapping a pipe can append to its argument list,
// as in `Schedule.exponential("1 second").pipe(Schedule.jittered, Schedule.upTo({ times: 5 }))`.
const render = (node) =>
  node.pipe ? `${render(node.pipe.base)}.pipe(${node.pipe.ops.join(", ")})` : node.s
const call = (s, term, out) => ({ s, term, out })
const piped = (x, op, term, out) => {
  if (x.pipe && chance(0.6)) return { pipe: { base: x.pipe.base, ops: [...x.pipe.ops, op] }, term, out }
  return { pipe: { base: x, ops: [op] }, term, out }
}
// A dual combinator `Schedule.name(x, ...rest)` or `x.pipe(Schedule.name(...rest))`.
const dual = (name, x, rest, term = x.term, out = x.out) => {
  const tail = rest.length ? `, ${rest.join(", ")}` : ""
  return chance(0.5)
    ? call(`Schedule.${name}(${render(x)}${tail})`, term, out)
    : piped(x, `Schedule.${name}(${rest.join(", ")})`, term, out)
}
// A unary combinator `Schedule.name(x)` or `x.pipe(Schedule.name)`.
const unary = (name, x, term = x.term, out = x.out) =>
  chance(0.5) ? call(`Schedule.${name}(${render(x)})`, term, out) : piped(x, `Schedule.${name}`, term, out)
const pair = (name, x, y, term, out, extra = []) => dual(name, x, [render(y), ...extra], term, out)
// `Schedule.isSchedule` in the only place retry code meets it: choosing a policy.
const isScheduleChoice = (x) => call(`(Schedule.isSchedule(${render(x)}) ? ${render(x)} : Schedule.forever)`, x.term, x.out)

// A generator context: `sub(depth)` draws sub-expressions (core grammar for focus requests,
// every export for mixed ones); `terminating`/`counting` retry until the draw fits.
const context = (grammar, pool) => {
  const g = {}
  g.leaf = () => {
    const name = pick(pool.leaves)
    return grammar.leaves[name]()
  }
  g.sub = (depth) => {
    if (depth <= 1 || pool.combinators.length === 0) return g.leaf()
    const name = pick(pool.combinators)
    return grammar.combinators[name](g, depth)
  }
  const until = (test, fallback) => (depth) => {
    for (let i = 0; i < 20; i++) {
      const x = g.sub(depth)
      if (test(x)) return x
    }
    return fallback()
  }
  g.terminating = until((x) => x.term, () => call(`Schedule.recurs(${int(1, 4)})`, true, "count"))
  g.counting = until((x) => x.out === "count", () => call(`Schedule.spaced(${delay()})`, false, "count"))
  g.durations = until((x) => x.out === "duration", () => call(`Schedule.exponential(${delay()})`, false, "duration"))
  return g
}

// ---- effect 3.x ---------------------------------------------------------
const v3 = {
  leaves: {
    exponential: () =>
      chance(0.7)
        ? call(`Schedule.exponential(${delay()})`, false, "duration")
        : call(`Schedule.exponential(${delay()}, ${pick(["1.5", "2", "3"])})`, false, "duration"),
    fibonacci: () => call(`Schedule.fibonacci(${delay()})`, false, "duration"),
    spaced: () => call(`Schedule.spaced(${delay()})`, false, "count"),
    fixed: () => call(`Schedule.fixed(${delay()})`, false, "count"),
    windowed: () => call(`Schedule.windowed(${delay()})`, false, "count"),
    linear: () => call(`Schedule.linear(${delay()})`, false, "duration"),
    recurs: () => call(`Schedule.recurs(${int(0, 6)})`, true, "count"),
    forever: () => call("Schedule.forever", false, "count"),
    count: () => call("Schedule.count", false, "count"),
    // A value in the public module: `forever` (the internal combinator of that name is not exported).
    repeatForever: () => call("Schedule.repeatForever", false, "count"),
    elapsed: () => call("Schedule.elapsed", false, "other"),
    once: () => call("Schedule.once", true, "other"),
    stop: () => call("Schedule.stop", true, "other"),
    duration: () => call(`Schedule.duration(${delay()})`, true, "duration"),
    fromDelay: () => call(`Schedule.fromDelay(${delay()})`, true, "duration"),
    fromDelays: () => call(`Schedule.fromDelays(${delay()}, ${delay()}, ${delay()})`, true, "duration"),
    identity: () => call("Schedule.identity()", false, "other"),
    fromFunction: () => call("Schedule.fromFunction((e) => 1)", false, "other"),
    succeed: () => call(`Schedule.succeed(${int(0, 5)})`, false, "other"),
    sync: () => call("Schedule.sync(() => 1)", false, "other"),
    unfold: () => call("Schedule.unfold(0, (n) => n + 1)", false, "count"),
    collectAllInputs: () => call("Schedule.collectAllInputs()", false, "other"),
    recurWhile: () => call(`Schedule.recurWhile(${pick(["() => true", "(e) => e instanceof Error"])})`, false, "other"),
    recurUntil: () => call(`Schedule.recurUntil(${pick(["() => false", "() => true"])})`, false, "other"),
    recurWhileEffect: () => call("Schedule.recurWhileEffect(() => Effect.succeed(true))", false, "other"),
    recurUntilEffect: () => call("Schedule.recurUntilEffect(() => Effect.succeed(false))", false, "other"),
    recurUntilOption: () => call("Schedule.recurUntilOption(() => Option.none())", false, "other"),
    recurUpTo: () => call(`Schedule.recurUpTo(${limit()})`, false, "other"),
    collectWhile: () => call("Schedule.collectWhile(() => true)", false, "other"),
    collectUntil: () => call(`Schedule.collectUntil(${pick(["() => false", "() => true"])})`, false, "other"),
    collectWhileEffect: () => call("Schedule.collectWhileEffect(() => Effect.succeed(true))", false, "other"),
    collectUntilEffect: () => call("Schedule.collectUntilEffect(() => Effect.succeed(false))", false, "other"),
    cron: () => call(`Schedule.cron(${cronExpr()})`, false, "other"),
    dayOfMonth: () => call(`Schedule.dayOfMonth(${int(1, 28)})`, false, "count"),
    dayOfWeek: () => call(`Schedule.dayOfWeek(${int(1, 7)})`, false, "count"),
    hourOfDay: () => call(`Schedule.hourOfDay(${int(0, 23)})`, false, "count"),
    minuteOfHour: () => call(`Schedule.minuteOfHour(${int(0, 59)})`, false, "count"),
    secondOfMinute: () => call(`Schedule.secondOfMinute(${int(0, 59)})`, false, "count"),
    makeWithState: () => {
      const k = int(1, 5)
      const d = smallDelay()
      return call(
        `Schedule.makeWithState(0, (now, _, n) => Effect.succeed([n + 1, n, n < ${k} ? ScheduleDecision.continueWith(ScheduleInterval.after(now + ${d})) : ScheduleDecision.done]))`,
        true,
        "count"
      )
    }
  },
  combinators: {
    intersect: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("intersect", x, y, x.term || y.term, "other") },
    union: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("union", x, y, x.term && y.term, "other") },
    either: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("either", x, y, x.term && y.term, "other") },
    compose: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("compose", x, y, x.term || y.term, y.out) },
    zipLeft: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("zipLeft", x, y, x.term || y.term, x.out) },
    zipRight: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("zipRight", x, y, x.term || y.term, y.out) },
    zipWith: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("zipWith", x, y, x.term || y.term, "other", ["(a, b) => a"]) },
    bothInOut: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("bothInOut", x, y, x.term || y.term, "other") },
    intersectWith: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("intersectWith", x, y, x.term || y.term, "other", [pick(["(a, b) => ScheduleIntervals.intersect(a, b)", "(a, b) => ScheduleIntervals.union(a, b)"])]) },
    unionWith: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("unionWith", x, y, x.term && y.term, "other", [pick(["(a, b) => ScheduleIntervals.union(a, b)", "(a, b) => ScheduleIntervals.intersect(a, b)"])]) },
    eitherWith: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("eitherWith", x, y, x.term && y.term, "other", ["(a, b) => ScheduleIntervals.union(a, b)"]) },
    andThen: (g, d) => { const x = g.terminating(d - 1), y = g.sub(d - 1); return pair("andThen", x, y, y.term, x.out === y.out ? x.out : "other") },
    andThenEither: (g, d) => { const x = g.terminating(d - 1), y = g.sub(d - 1); return pair("andThenEither", x, y, y.term, "other") },
    upTo: (g, d) => dual("upTo", g.sub(d - 1), [limit()]),
    jittered: (g, d) => unary("jittered", g.sub(d - 1)),
    jitteredWith: (g, d) => dual("jitteredWith", g.sub(d - 1), [pick(["{ min: 0.5, max: 1.5 }", "{ min: 0.9 }", "{ max: 2 }", "{}"])]),
    addDelay: (g, d) => dual("addDelay", g.sub(d - 1), [`() => ${chance(0.5) ? millisString() : `Duration.millis(${smallDelay()})`}`]),
    addDelayEffect: (g, d) => dual("addDelayEffect", g.sub(d - 1), [`() => Effect.succeed(${millisString()})`]),
    modifyDelay: (g, d) => dual("modifyDelay", g.sub(d - 1), [chance(0.6) ? `(_, d) => Duration.times(d, ${pick([2, 3, "0.5"])})` : `() => ${delay()}`]),
    modifyDelayEffect: (g, d) => dual("modifyDelayEffect", g.sub(d - 1), [`(_, d) => Effect.succeed(Duration.times(d, ${pick([2, "0.5"])}))`]),
    delayed: (g, d) => dual("delayed", g.sub(d - 1), [chance(0.6) ? `(d) => Duration.times(d, ${pick([2, 3, "0.5"])})` : `() => ${delay()}`]),
    delayedEffect: (g, d) => dual("delayedEffect", g.sub(d - 1), [`(d) => Effect.succeed(Duration.times(d, ${pick([2, "0.5"])}))`]),
    delayedSchedule: (g, d) => call(`Schedule.delayedSchedule(${render(g.durations(d - 1))})`, false, "duration"),
    whileOutput: (g, d) => dual("whileOutput", g.counting(d - 1), [`(n) => n < ${int(0, 6)}`], true),
    untilOutput: (g, d) => dual("untilOutput", g.counting(d - 1), [`(n) => n >= ${int(0, 6)}`], true),
    whileOutputEffect: (g, d) => dual("whileOutputEffect", g.counting(d - 1), [`(n) => Effect.succeed(n < ${int(0, 6)})`], true),
    untilOutputEffect: (g, d) => dual("untilOutputEffect", g.counting(d - 1), [`(n) => Effect.succeed(n >= ${int(0, 6)})`], true),
    whileInput: (g, d) => dual("whileInput", g.sub(d - 1), [pick(["() => true", "(e) => e instanceof Error", "() => false"])]),
    untilInput: (g, d) => dual("untilInput", g.sub(d - 1), [pick(["() => false", "() => true"])]),
    whileInputEffect: (g, d) => dual("whileInputEffect", g.sub(d - 1), ["() => Effect.succeed(true)"]),
    untilInputEffect: (g, d) => dual("untilInputEffect", g.sub(d - 1), ["() => Effect.succeed(false)"]),
    check: (g, d) => dual("check", g.sub(d - 1), [pick(["() => true", "(input, output) => input instanceof Error"])]),
    checkEffect: (g, d) => dual("checkEffect", g.sub(d - 1), ["() => Effect.succeed(true)"]),
    map: (g, d) => dual("map", g.sub(d - 1), ["(o) => o"], undefined, "other"),
    mapEffect: (g, d) => dual("mapEffect", g.sub(d - 1), ["(o) => Effect.succeed(o)"], undefined, "other"),
    as: (g, d) => dual("as", g.sub(d - 1), [JSON.stringify("x")], undefined, "other"),
    asVoid: (g, d) => unary("asVoid", g.sub(d - 1), undefined, "other"),
    mapBoth: (g, d) => dual("mapBoth", g.sub(d - 1), ["{ onInput: (e) => e, onOutput: (o) => o }"], undefined, "other"),
    mapBothEffect: (g, d) => dual("mapBothEffect", g.sub(d - 1), ["{ onInput: (e) => Effect.succeed(e), onOutput: (o) => Effect.succeed(o) }"], undefined, "other"),
    mapInput: (g, d) => dual("mapInput", g.sub(d - 1), ["(e) => e"]),
    mapInputEffect: (g, d) => dual("mapInputEffect", g.sub(d - 1), ["(e) => Effect.succeed(e)"]),
    mapInputContext: (g, d) => dual("mapInputContext", g.sub(d - 1), ["(c) => c"]),
    provideContext: (g, d) => dual("provideContext", g.sub(d - 1), ["Context.empty()"]),
    provideService: (g, d) => dual("provideService", g.sub(d - 1), ["Context.GenericTag(\"oracle/Service\")", "{}"]),
    tapInput: (g, d) => dual("tapInput", g.sub(d - 1), ["() => Effect.void"]),
    tapOutput: (g, d) => dual("tapOutput", g.sub(d - 1), ["() => Effect.void"]),
    onDecision: (g, d) => dual("onDecision", g.sub(d - 1), ["() => Effect.void"]),
    ensuring: (g, d) => dual("ensuring", g.sub(d - 1), ["Effect.void"]),
    passthrough: (g, d) => unary("passthrough", g.sub(d - 1), undefined, "other"),
    collectAllOutputs: (g, d) => unary("collectAllOutputs", g.sub(d - 1), undefined, "other"),
    delays: (g, d) => unary("delays", g.sub(d - 1), undefined, "duration"),
    repetitions: (g, d) => unary("repetitions", g.sub(d - 1), undefined, "other"),
    reduce: (g, d) => dual("reduce", g.sub(d - 1), ["0", "(s) => s + 1"], undefined, "other"),
    reduceEffect: (g, d) => dual("reduceEffect", g.sub(d - 1), ["0", "(s) => Effect.succeed(s + 1)"], undefined, "other"),
    resetAfter: (g, d) => dual("resetAfter", g.sub(d - 1), [limit()]),
    resetWhen: (g, d) => dual("resetWhen", g.counting(d - 1), [`(n) => n >= ${int(1, 5)}`]),
    isSchedule: (g, d) => isScheduleChoice(g.sub(d - 1))
  },
  notSchedules: {
    CurrentIterationMetadata: "a context reference for the running schedule's metadata",
    ScheduleTypeId: "a type id",
    ScheduleDriverTypeId: "a type id",
    driver: "runs a schedule by hand: an Effect, not a schedule",
    run: "runs a schedule over given inputs: an Effect, not a schedule"
  },
  wrappers: [
    (g, x) => unary("jittered", x),
    (g, x) => dual("upTo", x, [limit()]),
    (g, x) => { const y = g.sub(1); return pair("intersect", x, y, x.term || y.term, "other") },
    (g, x) => { const y = g.sub(1); return pair("union", x, y, x.term && y.term, "other") }
  ],
  core: {
    leaves: ["exponential", "fibonacci", "spaced", "fixed", "linear", "recurs", "forever", "once", "fromDelays"],
    combinators: ["intersect", "union", "andThen", "upTo", "jittered", "addDelay", "modifyDelay", "delayed", "whileOutput"]
  }
}

// ---- effect 4.0 betas (the both/either/take API, up to beta.94) ---------
const beta = {
  leaves: {
    exponential: v3.leaves.exponential,
    fibonacci: v3.leaves.fibonacci,
    spaced: v3.leaves.spaced,
    fixed: v3.leaves.fixed,
    windowed: v3.leaves.windowed,
    recurs: v3.leaves.recurs,
    forever: v3.leaves.forever,
    during: () => call(`Schedule.during(${limit()})`, false, "other"),
    duration: v3.leaves.duration,
    elapsed: () => call("Schedule.elapsed", false, "other"),
    identity: () => call("Schedule.identity()", false, "other"),
    unfold: () => call("Schedule.unfold(0, (n) => Effect.succeed(n + 1))", false, "count"),
    cron: () => call(`Schedule.cron(${cronExpr()})`, false, "other"),
    fromStepWithMetadata: () =>
      call(`Schedule.fromStepWithMetadata(Effect.succeed((meta) => Effect.succeed([meta.attempt, Duration.millis(${smallDelay()})])))`, false, "other")
  },
  combinators: {
    both: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("both", x, y, x.term || y.term, "other") },
    bothLeft: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("bothLeft", x, y, x.term || y.term, x.out) },
    bothRight: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("bothRight", x, y, x.term || y.term, y.out) },
    bothWith: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("bothWith", x, y, x.term || y.term, "other", ["(l, r) => [l, r]"]) },
    either: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("either", x, y, x.term && y.term, "other") },
    eitherLeft: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("eitherLeft", x, y, x.term && y.term, "other") },
    eitherRight: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("eitherRight", x, y, x.term && y.term, "other") },
    eitherWith: (g, d) => { const x = g.sub(d - 1), y = g.sub(d - 1); return pair("eitherWith", x, y, x.term && y.term, "other", ["(l, r) => l"]) },
    andThen: (g, d) => { const x = g.terminating(d - 1), y = g.sub(d - 1); return pair("andThen", x, y, y.term, x.out === y.out ? x.out : "other") },
    andThenResult: (g, d) => { const x = g.terminating(d - 1), y = g.sub(d - 1); return pair("andThenResult", x, y, y.term, "other") },
    take: (g, d) => dual("take", g.sub(d - 1), [String(int(0, 6))], true),
    jittered: (g, d) => unary("jittered", g.sub(d - 1)),
    addDelay: (g, d) =>
      dual("addDelay", g.sub(d - 1), [
        pick([`() => Effect.succeed(${millisString()})`, `(out) => Effect.succeed(Duration.millis(${smallDelay()}))`])
      ]),
    modifyDelay: (g, d) =>
      dual("modifyDelay", g.sub(d - 1), [
        pick([
          `(_, delay) => Effect.succeed(Duration.times(delay, ${pick([2, 3, "0.5"])}))`,
          `() => Effect.succeed(${delay()})`,
          `(out, delay) => Effect.succeed(Duration.sum(delay, Duration.millis(${smallDelay()})))`
        ])
      ]),
    while: (g, d) => {
      if (chance(0.3)) {
        const x = g.counting(d - 1)
        return dual("while", x, [`({ output }) => output < ${int(0, 6)}`], true)
      }
      return dual("while", g.sub(d - 1), [
        pick([
          `({ attempt }) => attempt <= ${int(0, 6)}`,
          `({ elapsed }) => elapsed <= ${pick([500, 1000, 5000])}`,
          `({ attempt }) => Effect.succeed(attempt <= ${int(0, 6)})`
        ])
      ])
    },
    collectWhile: (g, d) => dual("collectWhile", g.sub(d - 1), [`({ attempt }) => attempt <= ${int(0, 6)}`], undefined, "other"),
    collectInputs: (g, d) => unary("collectInputs", g.sub(d - 1), undefined, "other"),
    collectOutputs: (g, d) => unary("collectOutputs", g.sub(d - 1), undefined, "other"),
    delays: (g, d) => unary("delays", g.sub(d - 1), undefined, "duration"),
    map: (g, d) => dual("map", g.sub(d - 1), [pick(["(o) => o", "() => Effect.succeed(1)"])], undefined, "other"),
    passthrough: (g, d) => unary("passthrough", g.sub(d - 1), undefined, "other"),
    reduce: (g, d) => dual("reduce", g.sub(d - 1), ["() => 0", "(s) => s + 1"], undefined, "other"),
    tapInput: (g, d) => dual("tapInput", g.sub(d - 1), ["() => Effect.void"]),
    tapOutput: (g, d) => dual("tapOutput", g.sub(d - 1), ["() => Effect.void"]),
    satisfiesInputType: (g, d) => { const x = g.sub(d - 1); return piped(x, "Schedule.satisfiesInputType()", x.term, x.out) },
    satisfiesOutputType: (g, d) => { const x = g.sub(d - 1); return piped(x, "Schedule.satisfiesOutputType()", x.term, x.out) },
    satisfiesErrorType: (g, d) => { const x = g.sub(d - 1); return piped(x, "Schedule.satisfiesErrorType()", x.term, x.out) },
    satisfiesServicesType: (g, d) => { const x = g.sub(d - 1); return piped(x, "Schedule.satisfiesServicesType()", x.term, x.out) },
    setInputType: (g, d) => { const x = g.sub(d - 1); return piped(x, "Schedule.setInputType()", x.term, x.out) },
    fromStep: (g, d) => { const x = g.sub(d - 1); return call(`Schedule.fromStep(Schedule.toStep(${render(x)}))`, x.term, x.out) },
    toStep: (g, d) => { const x = g.sub(d - 1); return call(`Schedule.fromStep(Schedule.toStep(${render(x)}))`, x.term, x.out) },
    isSchedule: (g, d) => isScheduleChoice(g.sub(d - 1))
  },
  notSchedules: {
    CurrentMetadata: "a context reference for the running schedule's metadata",
    toStepWithMetadata: "drives a schedule by hand: an Effect, not a schedule",
    toStepWithSleep: "drives a schedule by hand: an Effect, not a schedule"
  },
  wrappers: [
    (g, x) => unary("jittered", x),
    (g, x) => dual("take", x, [String(int(0, 6))], true),
    (g, x) => { const y = g.sub(1); return pair("both", x, y, x.term || y.term, "other") },
    (g, x) => { const y = g.sub(1); return pair("either", x, y, x.term && y.term, "other") }
  ],
  core: {
    leaves: ["exponential", "fibonacci", "spaced", "fixed", "recurs", "forever", "duration"],
    combinators: ["both", "either", "take", "andThen", "jittered", "addDelay", "modifyDelay", "while"]
  }
}

// ---- effect 4.x ---------------------------------------------------------
const metadataDelay = () =>
  chance(0.6)
    ? `({ duration }) => Effect.succeed(Duration.times(duration, ${pick([2, 3, "0.5"])}))`
    : `() => Effect.succeed(${delay()})`
const v4 = {
  leaves: {
    exponential: v3.leaves.exponential,
    fibonacci: v3.leaves.fibonacci,
    spaced: v3.leaves.spaced,
    fixed: v3.leaves.fixed,
    windowed: v3.leaves.windowed,
    recurs: v3.leaves.recurs,
    forever: v3.leaves.forever,
    once: v3.leaves.once,
    during: beta.leaves.during,
    duration: v3.leaves.duration,
    identity: beta.leaves.identity,
    cron: beta.leaves.cron,
    fromStepWithMetadata: beta.leaves.fromStepWithMetadata
  },
  combinators: {
    max: (g, d) => {
      const xs = [g.sub(d - 1), g.sub(d - 1), ...(chance(0.3) ? [g.sub(d - 1)] : [])]
      return call(`Schedule.max([${xs.map(render).join(", ")}])`, xs.some((x) => x.term), "other")
    },
    min: (g, d) => {
      const xs = [g.sub(d - 1), g.sub(d - 1), ...(chance(0.3) ? [g.sub(d - 1)] : [])]
      return call(`Schedule.min([${xs.map(render).join(", ")}])`, xs.every((x) => x.term), "other")
    },
    upTo: (g, d) =>
      weighted([
        [4, () => dual("upTo", g.sub(d - 1), [`{ times: ${int(0, 6)} }`], true)],
        [2, () => dual("upTo", g.sub(d - 1), [`{ duration: ${limit()} }`])],
        [1, () => dual("upTo", g.sub(d - 1), [`{ times: ${int(1, 6)}, duration: ${limit()} }`], true)]
      ])(),
    concat: (g, d) => { const x = g.terminating(d - 1), y = g.sub(d - 1); return pair("concat", x, y, y.term, "other") },
    concatResult: (g, d) => { const x = g.terminating(d - 1), y = g.sub(d - 1); return pair("concatResult", x, y, y.term, "other") },
    jittered: (g, d) => unary("jittered", g.sub(d - 1)),
    addDelay: (g, d) =>
      dual("addDelay", g.sub(d - 1), [
        pick([
          `() => Effect.succeed(Duration.millis(${smallDelay()}))`,
          `() => Effect.succeed(${millisString()})`,
          `({ attempt }) => Effect.succeed(Duration.millis(attempt * ${smallDelay()}))`
        ])
      ]),
    modifyDelay: (g, d) => dual("modifyDelay", g.sub(d - 1), [metadataDelay()]),
    while: beta.combinators.while,
    map: (g, d) => dual("map", g.sub(d - 1), [pick(["({ output }) => output", "() => Effect.succeed(1)"])], undefined, "other"),
    passthrough: beta.combinators.passthrough,
    tap: (g, d) => dual("tap", g.sub(d - 1), ["() => Effect.void"]),
    setInputType: beta.combinators.setInputType,
    fromStep: beta.combinators.fromStep,
    toStep: beta.combinators.toStep,
    isSchedule: beta.combinators.isSchedule
  },
  notSchedules: beta.notSchedules,
  wrappers: [
    (g, x) => unary("jittered", x),
    (g, x) => dual("upTo", x, [`{ times: ${int(0, 6)} }`], true),
    (g, x) => { const y = g.sub(1); return call(`Schedule.max([${render(x)}, ${render(y)}])`, x.term || y.term, "other") },
    (g, x) => { const y = g.sub(1); return call(`Schedule.min([${render(x)}, ${render(y)}])`, x.term && y.term, "other") }
  ],
  core: {
    leaves: ["exponential", "fibonacci", "spaced", "fixed", "recurs", "forever", "once", "during", "duration"],
    combinators: ["max", "min", "upTo", "concat", "jittered", "addDelay", "modifyDelay", "while"]
  }
}

// ---- versions -------------------------------------------------------------
const WALL_CLOCK = ["cron", "dayOfMonth", "dayOfWeek", "hourOfDay", "minuteOfHour", "secondOfMinute"]
const require = createRequire(import.meta.url)
const VERSIONS = [
  { alias: "effect-v3", grammar: v3 },
  { alias: "effect-v4-beta", grammar: beta },
  { alias: "effect", grammar: v4 }
]

const out = []
const lines = []
for (const v of VERSIONS) {
  v.version = require(`${v.alias}/package.json`).version
  v.exports = Object.keys(await import(`${v.alias}/Schedule`)).sort()
  const { leaves, combinators, notSchedules } = v.grammar
  const known = new Set([...Object.keys(leaves), ...Object.keys(combinators), ...Object.keys(notSchedules)])
  const missing = v.exports.filter((e) => !known.has(e))
  const extra = [...known].filter((e) => !v.exports.includes(e))
  if (missing.length || extra.length) {
    throw new Error(
      `generate.mjs and effect ${v.version} disagree on the Schedule exports: ` +
        `no template for [${missing.join(", ")}], templates for missing [${extra.join(", ")}]`
    )
  }
  out.push(JSON.stringify({ version: v.version, exports: v.exports, notSchedules }))
  // Two wall-clock schedules under `intersect` may never meet: 3.x then searches forever
  // (`zipRight(cron("*/5 * * * *"), secondOfMinute(53))` hangs). Mixed requests leave them out;
  // their focus requests combine them with the core grammar only.
  v.all = { leaves: Object.keys(leaves).filter((name) => !WALL_CLOCK.includes(name)), combinators: Object.keys(combinators) }
}

// A retry site's options around a schedule, now and then.
const top = (x) =>
  weighted([
    [17, () => render(x)],
    [2, () => `({ schedule: ${render(x)}, times: ${int(0, 6)} })`],
    [1, () => `({ times: ${int(0, 6)} })`]
  ])()

let focusId = 0
for (const v of VERSIONS) {
  const g = context(v.grammar, v.grammar.core)
  for (const name of v.exports) {
    if (name in v.grammar.notSchedules) continue
    for (let k = 0; k < perExport; k++) {
      let x
      if (name in v.grammar.leaves) {
        x = v.grammar.leaves[name]()
        // Half the time, inside a core combinator: `jittered`, a cap, a pair. Wall-clock
        // schedules only in the first two: 3.x's `intersect` searches their calendar windows for
        // one that meets the other side's delay, which after 64 doublings is centuries away.
        const wrappers = WALL_CLOCK.includes(name) ? v.grammar.wrappers.slice(0, 2) : v.grammar.wrappers
        if (chance(0.5)) x = pick(wrappers)(g, x)
      } else {
        x = v.grammar.combinators[name](g, int(2, 3))
      }
      focusId++
      // No retry options around it: `{ times }` would decide the count whatever the export does.
      lines.push(JSON.stringify({ id: `f${String(focusId).padStart(5, "0")}`, version: v.version, export: name, expr: render(x) }))
    }
  }
}

const width = Math.max(4, String(count).length)
for (let i = 1; i <= count; i++) {
  const v = VERSIONS[i % VERSIONS.length]
  const g = context(v.grammar, v.all)
  lines.push(JSON.stringify({ id: `m${String(i).padStart(width, "0")}`, version: v.version, export: null, expr: top(g.sub(int(1, 3))) }))
}
out.push(...lines)
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""))
