import { Type, type Static } from "@sinclair/typebox";
import type { FastifyPluginAsync } from "fastify";
import { AppError, ERRORS, type ErrorCode } from "../../domain/errors.ts";
import { validateWithdrawal } from "../../funds/validate.ts";
import { withdrawalView } from "../../funds/view.ts";
import type { HttpDeps } from "../deps.ts";
import { namesClientId } from "../json-body.ts";
import { SIGN_IN_LIMIT } from "../terminal/session-routes.ts";
import { ListQuery, Page } from "../schemas.ts";
import type { Sessions } from "../terminal/session.ts";

const WithdrawalsQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
const errors = { 400: { $ref: "Error#" }, 401: { $ref: "Error#" }, 403: { $ref: "Error#" }, 404: { $ref: "Error#" } };
const read = { auth: { scope: "read" as const, signed: false } };
const security: { [scheme: string]: string[] }[] = [{ apiKey: [] }, { session: [] }];

export const withdrawalRoutes =
  (deps: HttpDeps, sessions: Sessions): FastifyPluginAsync =>
  async (app) => {
    app.post<{ Headers: { "idempotency-key"?: string } }>(
      "/v1/withdrawals",
      {
        config: { auth: { scope: "withdraw", signed: true, idempotentReplay: namesClientId("client_withdrawal_id") } },
        // The body is validated by validateWithdrawal, which reads amounts exactly; a schema validator would coerce them through floats.
        validatorCompiler: () => () => true,
        schema: {
          summary: "Pay available USDC out of the vault to an external address",
          description:
            `Signed request with a key of the withdraw scope (never granted by default); from the web terminal, its session with X-CSRF-Token and the account's password in the body (at most ${SIGN_IN_LIMIT.max} tries a minute per account, then rate_limited with Retry-After). Returns 200 once paid (confirmed, with tx_hash), 202 while its transaction's outcome is still being learnt from the chain. The same client_withdrawal_id (or Idempotency-Key header) with the same body answers the same withdrawal (one that failed chain_unavailable, 503, is run again); with another body, idempotency_conflict. A signed request sent again is that retry unless its first copy was answered with an error: then it answers replayed_request, and a retry is signed again (a new X-Timestamp). A key with a withdrawal allowlist pays only to those addresses (withdrawal_address_not_allowed). A withdrawal the chain refused answers its error code with the withdrawal in details.`,
          tags: ["funds"],
          security: [{ apiKey: [], signature: [] }, { session: [] }],
          body: { $ref: "WithdrawalRequest#" },
          headers: Type.Object({ "idempotency-key": Type.Optional(Type.String({ description: "Same as client_withdrawal_id, of printable ASCII characters only (an id of others goes in client_withdrawal_id)" })) }),
          response: { 200: { $ref: "Withdrawal#" }, 202: { $ref: "Withdrawal#" }, ...errors, 409: { $ref: "Error#" }, 422: { $ref: "Error#" } },
        },
      },
      async (req, reply) => {
        const principal = req.principal!;
        const session = principal.apiKey === undefined;
        const idempotencyKey = req.headers["idempotency-key"];
        const request = validateWithdrawal(req.body, { session, ...(typeof idempotencyKey === "string" && { idempotencyKey }) });
        const account = await deps.account(principal.accountId);
        // A session's withdrawal asks for the account's password again, so that a stolen session cookie alone cannot move funds.
        if (session) await sessions.confirmPassword(account.id, request.password!, "The password is wrong: nothing was withdrawn.");
        const key = principal.apiKey === undefined ? undefined : await deps.store.apiKey(principal.apiKey);
        const w = await deps.withdrawals.submit(
          { accountId: account.id, address: account.address as `0x${string}`, allowlist: key?.withdrawalAllowlist ?? null },
          request,
          req.log,
        );
        const body = withdrawalView(w);
        if (w.status === "failed") {
          const code = (w.errorCode ?? "internal") in ERRORS ? (w.errorCode as ErrorCode) : "internal";
          throw new AppError(code, w.errorMessage ?? undefined, { withdrawal_id: w.id, status: w.status, withdrawal: body });
        }
        return reply.status(w.status === "confirmed" ? 200 : 202).send(body);
      },
    );

    app.get<{ Params: { withdrawal_id: string } }>(
      "/v1/withdrawals/:withdrawal_id",
      {
        config: read,
        schema: {
          summary: "One of the key owner's withdrawals",
          tags: ["funds"],
          security,
          params: Type.Object({ withdrawal_id: Type.String({ minLength: 1, maxLength: 64 }) }),
          response: { 200: { $ref: "Withdrawal#" }, ...errors },
        },
      },
      async (req) => {
        const w = await deps.store.withdrawal(req.params.withdrawal_id);
        if (!w || w.accountId !== req.principal!.accountId) throw new AppError("withdrawal_not_found", `No withdrawal ${req.params.withdrawal_id}.`);
        return withdrawalView(w);
      },
    );

    app.get<{ Querystring: Static<typeof WithdrawalsQuery> }>(
      "/v1/withdrawals",
      {
        config: read,
        schema: {
          summary: "The key owner's withdrawals, newest first",
          tags: ["funds"],
          security,
          querystring: WithdrawalsQuery,
          response: { 200: Page("Withdrawal"), ...errors },
        },
      },
      async (req) => {
        const page = await deps.store.listWithdrawals(req.principal!.accountId, { limit: req.query.limit ?? 50, cursor: req.query.cursor ?? null });
        return { data: page.data.map(withdrawalView), next_cursor: page.nextCursor };
      },
    );
  };
