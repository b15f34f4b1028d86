import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as Retry from "../infra/retry.js"

export class OrdersRepository extends Effect.Service<OrdersRepository>()("OrdersRepository", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const findById = (id: string) =>
      sql`SELECT * FROM orders WHERE id = ${id}`.pipe(
        Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }),
      )
    const insert = (order: { readonly customerId: string; readonly total: number }) =>
      sql`INSERT INTO orders ${sql.insert(order)}`
    return { findById, insert } as const
  }),
}) {}
