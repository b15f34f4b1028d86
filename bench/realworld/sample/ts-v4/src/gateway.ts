import { Effect, Schedule } from "effect"

declare const subscribe: (event: string) => Effect.Effect<never, Error>

// Idiom: a long-running subscription restarted forever at a fixed 1 s.
export const watchMessages = Effect.gen(function* () {
  yield* subscribe("message.created").pipe(
    Effect.retry(Schedule.spaced("1 second")),
    Effect.forkScoped,
  )
})
