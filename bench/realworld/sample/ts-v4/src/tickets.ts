import { Effect, Schedule } from "effect"

class TicketsError {
  readonly _tag = "TicketsError"
  constructor(readonly status: number) {}
}

declare const send: (
  method: "GET" | "POST",
  path: string,
  body?: unknown,
) => Effect.Effect<unknown, TicketsError>

// Idiom: an adapter-local policy capped with Schedule.both (4.0 betas), shared by
// several sites, with a 429/5xx predicate on a POST that creates.
const ticketRetry = Schedule.exponential("100 millis").pipe(Schedule.both(Schedule.recurs(3)))

const isRetryable = (e: TicketsError) => e.status === 429 || e.status >= 500

export const listTickets = send("GET", "/tickets").pipe(
  Effect.retry({ schedule: ticketRetry, while: isRetryable }),
)

export const openTicket = (title: string) =>
  send("POST", "/tickets", { title }).pipe(
    Effect.retry({ schedule: ticketRetry, while: isRetryable }),
  )
