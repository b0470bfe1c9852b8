import type { FastifyInstance } from "fastify";
import { Type } from "@sinclair/typebox";
import { microToNumber } from "../../domain/money.ts";
import type { HttpDeps } from "../deps.ts";

/** "Get test USDC": the dev faucet's drip into the signed-in account's vault (topUp). Session only, dev chain only. */
export function registerFaucetRoute(app: FastifyInstance, deps: HttpDeps): void {
  app.post(
    "/v1/faucet",
    {
      config: { session: "write" },
      schema: {
        summary: "Drip test USDC into the signed-in account's vault (the dev chain only)",
        description:
          "Mints the dev faucet's amount (DEV_FAUCET_USDC) into the vault's available balance, at most once a minute per account: another call within a minute of the last drip answers it. Not on a real chain (not_found).",
        tags: ["session"],
        security: [{ session: [] }],
        response: {
          200: Type.Object({ amount_usdc: Type.Number(), tx_hash: Type.String({ description: "The drip's transaction" }) }),
          401: { $ref: "Error#" },
          403: { $ref: "Error#" },
          404: { $ref: "Error#" },
          503: { $ref: "Error#" },
        },
      },
    },
    async (req) => {
      const drip = await deps.terminal.topUp(await deps.account(req.terminalSession!.record.accountId));
      return { amount_usdc: microToNumber(drip.amount), tx_hash: drip.txHash };
    },
  );
}
