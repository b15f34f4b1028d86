import { Effect } from "effect"
import * as Retry from "../infra/retry.js"
import { OrdersRepository } from "./OrdersRepository.js"

export const placeOrder = Effect.fn("PlaceOrder")(
  function* (customerId: string, total: number) {
    const orders = yield* OrdersRepository
    yield* orders.insert({ customerId, total })
  },
  Effect.retry({ schedule: Retry.transient, while: Retry.isConnectionLost }),
)
