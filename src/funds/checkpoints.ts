/**
 * The step boundaries of a withdrawal and of a deposit credit, where the fault suite's kill switch
 * (CROSSFILL_KILL_AT) may end the process: recovery must finish each exactly once from any of them.
 */
export const FUNDS_CHECKPOINTS = [
  "withdrawal.inserted",
  "withdrawal.sent",
  "withdrawal.paid",
  "deposit.stored",
  "deposit.credit.sent",
  "deposit.credited",
] as const;
export type FundsCheckpoint = (typeof FUNDS_CHECKPOINTS)[number];
