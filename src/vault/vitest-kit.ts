// For the chain's vitest files: a test chain per file, and assertions that a call was refused by the
// vault's dry run or by the contract itself. (testkit.ts stays free of vitest: plain scripts use it too.)
import { BaseError, ContractFunctionRevertedError } from "viem";
import { afterAll, beforeAll, expect } from "vitest";
import { closeTestChain, openTestChain, tempDir, type TestChain } from "./testkit.ts";
import { VaultTxError } from "./vault.ts";

/** One dev chain with the vault on it for the whole file: filled in before its tests, stopped after them. */
export function testChainPerFile(opts: Parameters<typeof openTestChain>[1] = {}): TestChain {
  const t = {} as TestChain;
  beforeAll(async () => {
    Object.assign(t, await openTestChain(tempDir(), opts));
  });
  afterAll(() => closeTestChain(t));
  return t;
}

/** The vault refused the call by name, and nothing happened. */
export async function reverts(p: Promise<unknown>, reason: string): Promise<void> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(VaultTxError);
  expect((e as VaultTxError).outcome).toBe("reverted");
  expect((e as VaultTxError).reason).toBe(reason);
}

/** Calls the contract as someone other than the operator: the chain itself must refuse. */
export async function refusedOnChain(p: Promise<unknown>, errorName: string): Promise<void> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(BaseError);
  const revert = (e as BaseError).walk((x) => x instanceof ContractFunctionRevertedError);
  expect((revert as ContractFunctionRevertedError).data?.errorName).toBe(errorName);
}
