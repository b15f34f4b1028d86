import { Effect, Schedule } from "effect"

export const a = Effect.succeed(1).pipe(
  Effect.retry({
    schedule: Schedule.exponential("50 millis").pipe(
      Schedule.either(Schedule.spaced("1 second")),
      Schedule.intersect(Schedule.recurs(3)),
    ),
    while: (e: unknown) => e instanceof Error,
  }),
)

export const b = Effect.succeed(1).pipe(
  Effect.retry({
    schedule: Schedule.exponential("50 millis").pipe(
      Schedule.either(Schedule.spaced("1 second")),
      Schedule.intersect(Schedule.recurs(3))
    ),
    while: (e: unknown) => e instanceof Error,
  }),
)

export const c = Effect.succeed(1).pipe(
  Effect.retry({ schedule: Schedule.exponential("50 millis").pipe(Schedule.either(Schedule.spaced("1 second")), Schedule.intersect(Schedule.recurs(3))), while: (e: unknown) => e instanceof Error }),
)
