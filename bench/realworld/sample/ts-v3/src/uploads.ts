import { Effect, Schedule } from "effect"

declare const storage: {
  readonly head: (key: string) => Effect.Effect<{ size: number }, Error>
}

// Idiom: an inline schedule plus `times` at the retry site, no predicate.
export const confirmUpload = (key: string) =>
  storage.head(key).pipe(
    Effect.retry({
      times: 3,
      schedule: Schedule.exponential("50 millis"),
    }),
  )
