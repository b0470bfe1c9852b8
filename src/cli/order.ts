import { randomUUID } from "node:crypto";
import type { Command } from "commander";
import type { Order, OrderRequest } from "../sdk/types.ts";
import { answer, apiClient, type FieldNames } from "./funds.ts";

interface OrderOptions {
  side: string;
  amount?: string;
  shares?: string;
  slippage?: string;
  strategy?: string;
  tif?: string;
  clientOrderId?: string;
  json?: boolean;
}

const ORDER_FIELDS: FieldNames = {
  market_id: "<market_id>",
  outcome: "<outcome>",
  side: "--side",
  amount_usdc: "--amount",
  shares: "--shares",
  max_slippage: "--slippage",
  strategy: "--strategy",
  time_in_force: "--tif",
  client_order_id: "--client-order-id",
};

/**
 * `crossfill order <market_id> <outcome>`: places a buy (`--amount`) or a sell (`--shares`) through the API
 * of the running server, signed with the key in CROSSFILL_API_KEY and CROSSFILL_API_SECRET, as a bot would
 * with the SDK. The server validates every field; the command passes them on as written.
 */
export function registerOrderCommand(program: Command, fail: (message: string) => never): void {
  program
    .command("order")
    .description("Place an order: a buy spends --amount USDC, a sell sells --shares of a position held (the key needs the trade scope)")
    .argument("<market_id>", "the unified event id")
    .argument("<outcome>", "YES or NO")
    .option("--side <side>", "buy or sell", "buy")
    .option("--amount <usdc>", "a buy's USDC to spend, fees included")
    .option("--shares <shares>", "a sell's shares to sell")
    .option("--slippage <fraction>", "0 to 0.5 from the best fee-adjusted price (default 0.01)")
    .option("--strategy <strategy>", "optimize_price or optimize_speed")
    .option("--tif <tif>", "FOK or IOC")
    .option("--client-order-id <id>", "idempotency key: the same order sent again is placed once (default: a new one, printed if the answer is lost)")
    .option("--json", "print the order as JSON")
    .action(async (marketId: string, outcome: string, o: OrderOptions) => {
      const client = apiClient(fail);
      if (!process.env.CROSSFILL_API_SECRET) fail("set CROSSFILL_API_SECRET: an order is a signed request");
      const body = {
        market_id: marketId,
        outcome,
        side: o.side,
        ...(o.amount !== undefined && { amount_usdc: o.amount }),
        ...(o.shares !== undefined && { shares: o.shares }),
        ...(o.slippage !== undefined && { max_slippage: o.slippage }),
        ...(o.strategy !== undefined && { strategy: o.strategy }),
        ...(o.tif !== undefined && { time_in_force: o.tif }),
        // always named: an order whose answer is lost is then sent again by it, and placed once
        client_order_id: o.clientOrderId ?? `cli-${randomUUID()}`,
      } as OrderRequest;
      const again = `The order may have been placed: send it again with --client-order-id ${body.client_order_id} to get it, placed once`;
      const order = await answer(client.order(body), fail, again, ORDER_FIELDS);
      console.log(o.json ? JSON.stringify(order) : describe(order));
    });
}

/** What a 202's order waits for: what filled is not known yet, and the reconciler finishes the order (docs/decisions.md). */
const PENDING: Partial<Record<Order["status"], string>> = {
  pending: "its lock on the chain is not known yet",
  locked: "it is not routed yet",
  routing: "a venue's answer is not known yet",
};

function describe(o: Order): string {
  const pending = PENDING[o.status];
  if (pending) return `Order ${o.order_id} ${o.status}: ${pending}; the order is reconciled, never guessed (GET /v1/orders/${o.order_id}).`;
  const what =
    o.side === "sell"
      ? `sold ${o.filled_shares} of ${o.shares} ${o.outcome} shares for ${o.proceeds_usdc} USDC after ${o.fees_usdc} fees`
      : `bought ${o.filled_shares} ${o.outcome} shares for ${o.spent_usdc} USDC (fees included)`;
  const price = o.executed_price === null ? "" : ` at ${o.executed_price} on average`;
  return `Order ${o.order_id} ${o.status}: ${what}${price}${o.tx_hash ? `, settled in ${o.tx_hash}` : ""}`;
}
