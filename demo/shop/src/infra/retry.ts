// Every retry schedule and predicate of the shop, named once.
import { Schedule } from "effect"
import { ConnectionError, DeadlockError } from "./errors.js"

/** Contention: the database rolled the transaction back, so any atomic unit may replay it. */
export const contention = Schedule.exponential("50 millis").pipe(
  Schedule.union(Schedule.spaced("200 millis")),
  Schedule.intersect(Schedule.recurs(3)),
  Schedule.jittered,
)

/** Connection loss: the commit may have happened, so only idempotent units use this. */
export const transient = Schedule.exponential("200 millis").pipe(
  Schedule.union(Schedule.spaced("1 second")),
  Schedule.intersect(Schedule.recurs(3)),
  Schedule.jittered,
)

export const isContention = (error: unknown): boolean => error instanceof DeadlockError
export const isConnectionLost = (error: unknown): boolean => error instanceof ConnectionError

/** Webhook deliveries: five attempts, doubling from one second. */
export const webhook = Schedule.exponential("1 second").pipe(
  Schedule.intersect(Schedule.recurs(5)),
  Schedule.jittered,
)
