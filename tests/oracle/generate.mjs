#!/usr/bin/env node
// Random Effect `Schedule` expressions for differential testing of retrylint's schedule model.
//   node generate.mjs [--seed 42] [--count 600]
// stdout: JSONL, one {"id":"g0001","version":4|3,"expr":"<JS expression>"} per line.
// The output depends only on --seed and --count (own PRNG, no Math.random).
// Expressions use `Schedule` and `Duration`; the v4 addDelay/modifyDelay forms also use
// `Effect` (their callbacks must return an Effect in effect 4.x). See README.md.

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

// ---- AST ---------------------------------------------------------------
// A node is { s: string | pipe, term: bool, out: "count"|"duration"|"other" }. `term`: stops after a
// bounded number of steps even when every delay is 0 (time limits alone don't count).
// Pipes are kept structured so that wrapping a pipe can append to its argument list,
// as in `Schedule.exponential("1 second").pipe(Schedule.jittered, Schedule.upTo({ times: 5 }))`.
const render = (node) =>
  node.pipe ? `${render(node.pipe.base)}.pipe(${node.pipe.ops.join(", ")})` : node.s
const call = (s, term, out) => ({ s, term, out })
const piped = (x, op, term, out) => {
  if (x.pipe && chance(0.6)) return { pipe: { base: x.pipe.base, ops: [...x.pipe.ops, op] }, term, out }
  return { pipe: { base: x, ops: [op] }, term, out }
}

// ---- v4 (effect 4.1.0) --------------------------------------------------
const leaf4 = () =>
  weighted([
    [4, () => call(`Schedule.exponential(${delay()})`, false, "duration")],
    [2, () => call(`Schedule.exponential(${delay()}, ${pick(["1.5", "2", "3"])})`, false, "duration")],
    [2, () => call(`Schedule.fibonacci(${delay()})`, false, "duration")],
    [3, () => call(`Schedule.spaced(${delay()})`, false, "count")],
    [2, () => call(`Schedule.fixed(${delay()})`, false, "count")],
    [3, () => call(`Schedule.recurs(${int(0, 6)})`, true, "count")],
    [1, () => call("Schedule.forever", false, "count")],
    [1, () => call("Schedule.once", true, "other")],
    [1, () => call(`Schedule.during(${limit()})`, false, "duration")] // stops only once time passes
  ])()

const terminating4 = (depth) => {
  for (let i = 0; i < 20; i++) {
    const x = gen4(depth)
    if (x.term) return x
  }
  return call(`Schedule.recurs(${int(1, 4)})`, true, "count")
}

const gen4 = (depth) => {
  if (depth <= 1) return leaf4()
  const sub = () => gen4(int(1, depth - 1))
  const main = () => gen4(depth - 1)
  return weighted([
    [3, () => {
      const xs = [main(), sub(), ...(chance(0.3) ? [sub()] : [])]
      return call(`Schedule.max([${xs.map(render).join(", ")}])`, xs.some((x) => x.term), "duration")
    }],
    [2, () => {
      const xs = [main(), sub(), ...(chance(0.3) ? [sub()] : [])]
      return call(`Schedule.min([${xs.map(render).join(", ")}])`, xs.every((x) => x.term), "duration")
    }],
    [4, () => {
      const x = main()
      const n = int(0, 6)
      return chance(0.8)
        ? piped(x, `Schedule.upTo({ times: ${n} })`, true, x.out)
        : call(`Schedule.upTo(${render(x)}, { times: ${n} })`, true, x.out)
    }],
    [2, () => {
      const x = main()
      return chance(0.8)
        ? piped(x, `Schedule.upTo({ duration: ${limit()} })`, x.term, x.out)
        : call(`Schedule.upTo(${render(x)}, { duration: ${limit()} })`, x.term, x.out)
    }],
    [1, () => {
      const x = main()
      return piped(x, `Schedule.upTo({ times: ${int(1, 6)}, duration: ${limit()} })`, true, x.out)
    }],
    [2, () => { const x = main(); return piped(x, "Schedule.jittered", x.term, x.out) }],
    [2, () => { const x = main(); return call(`Schedule.jittered(${render(x)})`, x.term, x.out) }],
    [2, () => {
      const x = terminating4(depth - 1)
      const y = sub()
      return chance(0.8)
        ? call(`Schedule.concat(${render(x)}, ${render(y)})`, y.term, "other")
        : piped(x, `Schedule.concat(${render(y)})`, y.term, "other")
    }],
    [2, () => {
      const x = main()
      const f = chance(0.6)
        ? `() => Effect.succeed(Duration.millis(${smallDelay()}))`
        : `() => Effect.succeed(${JSON.stringify(`${smallDelay()} millis`)})`
      return chance(0.8)
        ? piped(x, `Schedule.addDelay(${f})`, x.term, x.out)
        : call(`Schedule.addDelay(${render(x)}, ${f})`, x.term, x.out)
    }],
    [1, () => {
      const x = main()
      const f = chance(0.6)
        ? `({ duration }) => Effect.succeed(Duration.times(duration, ${pick([2, 3, "0.5"])}))`
        : `() => Effect.succeed(${delay()})`
      return piped(x, `Schedule.modifyDelay(${f})`, x.term, x.out)
    }]
  ])()
}

// ---- v3 (effect 3.x) ----------------------------------------------------
const leaf3 = () =>
  weighted([
    [4, () => call(`Schedule.exponential(${delay()})`, false, "duration")],
    [2, () => call(`Schedule.exponential(${delay()}, ${pick(["1.5", "2", "3"])})`, false, "duration")],
    [2, () => call(`Schedule.fibonacci(${delay()})`, false, "duration")],
    [3, () => call(`Schedule.spaced(${delay()})`, false, "count")],
    [2, () => call(`Schedule.fixed(${delay()})`, false, "count")],
    [2, () => call(`Schedule.linear(${delay()})`, false, "duration")],
    [3, () => call(`Schedule.recurs(${int(0, 6)})`, true, "count")],
    [1, () => call("Schedule.forever", false, "count")],
    [1, () => call("Schedule.once", true, "other")],
    [1, () => call(`Schedule.fromDelays(${delay()}, ${delay()}, ${delay()})`, true, "duration")]
  ])()

const terminating3 = (depth) => {
  for (let i = 0; i < 20; i++) {
    const x = gen3(depth)
    if (x.term) return x
  }
  return call(`Schedule.recurs(${int(1, 4)})`, true, "count")
}

// count-output schedule (spaced/fixed/forever/recurs, maybe wrapped in output-preserving ops)
const counting3 = (depth) => {
  for (let i = 0; i < 20; i++) {
    const x = gen3(depth)
    if (x.out === "count") return x
  }
  return call(`Schedule.spaced(${delay()})`, false, "count")
}

const gen3 = (depth) => {
  if (depth <= 1) return leaf3()
  const sub = () => gen3(int(1, depth - 1))
  const main = () => gen3(depth - 1)
  return weighted([
    [3, () => {
      const x = main(), y = sub()
      return chance(0.7)
        ? call(`Schedule.intersect(${render(x)}, ${render(y)})`, x.term || y.term, "other")
        : piped(x, `Schedule.intersect(${render(y)})`, x.term || y.term, "other")
    }],
    [2, () => {
      const x = main(), y = sub()
      return chance(0.7)
        ? call(`Schedule.union(${render(x)}, ${render(y)})`, x.term && y.term, "other")
        : piped(x, `Schedule.union(${render(y)})`, x.term && y.term, "other")
    }],
    [1, () => {
      const x = main(), y = sub()
      return chance(0.5)
        ? call(`Schedule.compose(${render(x)}, ${render(y)})`, x.term || y.term, y.out)
        : piped(x, `Schedule.compose(${render(y)})`, x.term || y.term, y.out)
    }],
    [2, () => {
      const x = terminating3(depth - 1), y = sub()
      const out = x.out === y.out ? x.out : "other"
      return chance(0.7)
        ? call(`Schedule.andThen(${render(x)}, ${render(y)})`, y.term, out)
        : piped(x, `Schedule.andThen(${render(y)})`, y.term, out)
    }],
    [3, () => {
      const x = main()
      return chance(0.7)
        ? piped(x, `Schedule.upTo(${limit()})`, x.term, x.out)
        : call(`Schedule.upTo(${render(x)}, ${limit()})`, x.term, x.out)
    }],
    [2, () => { const x = main(); return call(`Schedule.jittered(${render(x)})`, x.term, x.out) }],
    [2, () => { const x = main(); return piped(x, "Schedule.jittered", x.term, x.out) }],
    [2, () => {
      const x = main()
      const f = `() => ${chance(0.5) ? JSON.stringify(`${smallDelay()} millis`) : `Duration.millis(${smallDelay()})`}`
      return chance(0.6)
        ? call(`Schedule.addDelay(${render(x)}, ${f})`, x.term, x.out)
        : piped(x, `Schedule.addDelay(${f})`, x.term, x.out)
    }],
    [1, () => {
      const x = main()
      const f = chance(0.6) ? `(_, d) => Duration.times(d, ${pick([2, 3, "0.5"])})` : `() => ${delay()}`
      return chance(0.5)
        ? call(`Schedule.modifyDelay(${render(x)}, ${f})`, x.term, x.out)
        : piped(x, `Schedule.modifyDelay(${f})`, x.term, x.out)
    }],
    [1, () => {
      const x = main()
      const f = chance(0.6) ? `(d) => Duration.times(d, ${pick([2, 3, "0.5"])})` : `() => ${delay()}`
      return chance(0.5)
        ? call(`Schedule.delayed(${render(x)}, ${f})`, x.term, x.out)
        : piped(x, `Schedule.delayed(${f})`, x.term, x.out)
    }],
    [2, () => {
      const x = counting3(depth - 1)
      const f = `(n) => n < ${int(0, 6)}`
      return chance(0.6)
        ? call(`Schedule.whileOutput(${render(x)}, ${f})`, true, x.out)
        : piped(x, `Schedule.whileOutput(${f})`, true, x.out)
    }]
  ])()
}

// ---- top level -----------------------------------------------------------
const expression = (version) => {
  const depth = int(1, 3)
  const gen = version === 4 ? gen4 : gen3
  return weighted([
    [17, () => render(gen(depth))],
    [2, () => `({ schedule: ${render(gen(depth))}, times: ${int(0, 6)} })`],
    [1, () => `({ times: ${int(0, 6)} })`]
  ])()
}

const width = Math.max(4, String(count).length)
const out = []
for (let i = 1; i <= count; i++) {
  const version = rand() < 2 / 3 ? 4 : 3
  out.push(JSON.stringify({ id: `g${String(i).padStart(width, "0")}`, version, expr: expression(version) }))
}
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""))
