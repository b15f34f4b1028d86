import { Data } from "effect"

export class DeadlockError extends Data.TaggedError("DeadlockError")<{ readonly cause: unknown }> {}
export class ConnectionError extends Data.TaggedError("ConnectionError")<{ readonly cause: unknown }> {}
