import { CHECKPOINTS, type Checkpoint } from "./service.ts";

/**
 * The fault suite's switch: given `<checkpoint>:<n>`, the process kills itself with SIGKILL the n-th
 * time the order flow passes that checkpoint, so that recovery is tested from every step boundary.
 * Without a setting there is no checkpoint hook at all.
 */
export function killSwitch(setting: string | undefined): ((step: Checkpoint) => void) | undefined {
  if (setting === undefined) return undefined;
  const [step, count] = setting.split(":");
  const n = Number(count);
  if (!(CHECKPOINTS as readonly string[]).includes(step!) || !Number.isInteger(n) || n < 1) {
    throw new Error(`CROSSFILL_KILL_AT must be <checkpoint>:<n> with a checkpoint of ${CHECKPOINTS.join(", ")} (got ${JSON.stringify(setting)}).`);
  }
  let seen = 0;
  return (at) => {
    if (at === step && ++seen === n) process.kill(process.pid, "SIGKILL");
  };
}
