import { microToNumber } from "../domain/money.ts";
import type { ActivityBody, WithdrawalBody } from "../http/schemas.ts";
import type { ActivityRecord, WithdrawalRecord } from "../store/store.ts";

/** The JSON a withdrawal is shown as: DESIGN §12's fields first. */
export function withdrawalView(w: WithdrawalRecord): WithdrawalBody {
  return {
    withdrawal_id: w.id,
    status: w.status,
    amount_usdc: microToNumber(w.amount),
    to_address: w.toAddress,
    tx_hash: w.txHash,
    client_withdrawal_id: w.clientWithdrawalId,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
    error: w.errorCode === null ? null : { code: w.errorCode, message: w.errorMessage ?? "" },
  };
}

export function activityView(a: ActivityRecord): ActivityBody {
  return {
    activity_id: a.id,
    type: a.type,
    amount_usdc: microToNumber(a.amount),
    tx_hash: a.txHash,
    status: a.status,
    reference: a.reference,
    address: a.address,
    created_at: a.createdAt,
  };
}
