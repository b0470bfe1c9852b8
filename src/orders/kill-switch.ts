import { FUNDS_CHECKPOINTS, type FundsCheckpoint } from "../funds/checkpoints.ts";
import { CHECKPOINTS, type Checkpoint } from "./service.ts";

const ALL: readonly string[] = [...CHECKPOINTS, ...FUNDS_CHECKPOINTS];

/**
 * The fault suite's switch: given `<checkpoint>:<n>`, the process kills itself with SIGKILL the n-th
 * time the order flow (or a withdrawal, or a deposit credit) passes that checkpoint, so that recovery is
 * tested from every step boundary. Without a setting there is no checkpoint hook at all.
 */
export function killSwitch(setting: string | undefined): ((step: Checkpoint | FundsCheckpoint) => void) | undefined {
  if (setting === undefined) return undefined;
  const [step, count] = setting.split(":");
  const n = Number(count);
  if (!ALL.includes(step!) || !Number.isInteger(n) || n < 1) {
    throw new Error(`CROSSFILL_KILL_AT must be <checkpoint>:<n> with a checkpoint of ${ALL.join(", ")} (got ${JSON.stringify(setting)}).`);
  }
  let seen = 0;
  return (at) => {
    if (at === step && ++seen === n) process.kill(process.pid, "SIGKILL");
  };
}
