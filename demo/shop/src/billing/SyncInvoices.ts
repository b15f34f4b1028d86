import { Effect } from "effect"
import * as Retry from "../infra/retry.js"

export const syncInvoices = Effect.fn("SyncInvoices")(
  function* (since: Date) {
    const response = yield* Effect.tryPromise(() => fetch(`https://billing.example.com/invoices?since=${since.toISOString()}`))
    return yield* Effect.tryPromise(() => response.json())
  },
  Effect.retry({ schedule: Retry.transient }),
)
