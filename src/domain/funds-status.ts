/**
 * The state machines of money in and out (DESIGN §12). As for orders, every transition is a compare-and-set
 * from the states it may leave, so no writer (a request, recovery, another instance) moves one backwards.
 */

/**
 * A withdrawal: `pending` stored, nothing sent; `sent` its transaction may be on its way (persisted before it
 * goes, so recovery knows to ask the chain), or landed under fewer than DEPOSIT_CONFIRMATIONS blocks; `confirmed`
 * paid by a successful transaction that deep; `failed` refused by the chain, the funds untouched (for good, but for a chain_unavailable,
 * which its client's retry runs again).
 */
export const WITHDRAWAL_STATUSES = ["pending", "sent", "confirmed", "failed"] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];
export const OPEN_WITHDRAWAL_STATUSES: readonly WithdrawalStatus[] = ["pending", "sent"];

export const WITHDRAWAL_ENTERED_FROM: Readonly<Record<WithdrawalStatus, readonly WithdrawalStatus[]>> = {
  // Only Store.reopenWithdrawal enters it from `failed`: a chain_unavailable its client sends again.
  pending: [],
  // Recovery sends again a withdrawal the chain says never landed and never will: it stays `sent`.
  sent: ["pending", "sent"],
  confirmed: ["sent"],
  failed: ["sent"],
};

/**
 * A deposit, one transfer into a deposit address: `detected` stored from the chain's logs; `crediting` its
 * credit may be on its way, or landed under fewer than DEPOSIT_CONFIRMATIONS blocks; `credited` the Vault credited it (by its key, once); `dropped` the transfer is no
 * longer on chain (a reorganisation, or a dev chain that lost it), so there is nothing to credit.
 */
export const DEPOSIT_STATUSES = ["detected", "crediting", "credited", "dropped"] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];
export const OPEN_DEPOSIT_STATUSES: readonly DepositStatus[] = ["detected", "crediting"];

export const DEPOSIT_ENTERED_FROM: Readonly<Record<DepositStatus, readonly DepositStatus[]>> = {
  // A dropped transfer that the chain shows again (mined anew after a reorganisation) is credited after all; so is
  // a credited one whose credit a reorganisation removed (the Vault credits its key once, whatever is sent again),
  // `crediting` since that credit may still land.
  detected: ["dropped"],
  crediting: ["detected", "crediting", "credited"],
  credited: ["detected", "crediting"],
  dropped: ["detected", "crediting"],
};
