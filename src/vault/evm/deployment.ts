// Where the contracts live on each chain: deployed by the first process that finds none and recorded in
// the store, one row per chain id, so a restart and every other instance on the same store use them.
import { randomUUID } from "node:crypto";
import { concat, decodeFunctionResult, encodeDeployData, encodeFunctionData, getAddress, isAddress, maxUint256, toHex, type Hex } from "viem";
import { keccak256 } from "../../evm/keccak.ts";
import { positionTokenDeployedBytecode, positionTokenImmutables, testUSDCAbi, testUSDCBytecode, testUSDCDeployedBytecode, testUSDCImmutables, vaultAbi, vaultBytecode, vaultDeployedBytecode, vaultImmutables } from "../../contracts/artifacts.ts";
import type { Address } from "../vault.ts";
import { RpcError, type JsonRpc } from "../rpc.ts";
import type { ChainStore } from "./nonce-book.ts";
import type { TxSender } from "./sender.ts";

export interface Contracts {
  usdc: Address;
  vault: Address;
  sot: Address;
}

export interface ContractOverrides {
  /** An existing Vault: its USDC and SOT are read from it. */
  vault?: Address;
  /** The USDC to deploy a new Vault against (required on a chain without the faucet). */
  usdc?: Address;
}

/** The overrides from `VAULT_ADDRESS` and `USDC_ADDRESS`; a value that is not an address stops the start with a sentence that names it. */
export function contractsFromEnv(env: NodeJS.ProcessEnv): ContractOverrides {
  const vault = address(env, "VAULT_ADDRESS");
  const usdc = address(env, "USDC_ADDRESS");
  return { ...(vault ? { vault } : {}), ...(usdc ? { usdc } : {}) };
}

/** Mixed case is an EIP-55 checksum, which must hold: a mistyped character would name another contract, or none. */
function address(env: NodeJS.ProcessEnv, name: string): Address | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  if (!isAddress(raw, { strict: true })) {
    throw new Error(`${name} must be an address, 0x and 40 hex digits, in lower case or with its EIP-55 checksum (got ${JSON.stringify(raw)}).`);
  }
  return getAddress(raw);
}

interface Ctx {
  rpc: JsonRpc;
  sender: TxSender;
  chainId: number;
  operator: Address;
  store: ChainStore;
  faucet: boolean;
  lockTtlSeconds: number;
}

/** The contracts in use, with what the vault needs to read their history. */
export interface Deployment {
  contracts: Contracts;
  /** Who settles pay and who pays proceeds and payouts: the operator in a Vault deployed here, anyone in one named by VAULT_ADDRESS. */
  treasury: Address;
  /** The block the Vault was deployed in. No event of ours is older. */
  fromBlock: bigint;
  lockTtlSeconds: number;
}

/**
 * How long a process deploying the contracts keeps the others waiting for its record. Deploying is two
 * transactions, seconds even on a chain with slow blocks; a claim that runs out (its process died) is
 * taken over, and should the first process record after all, its record is refused and it uses the other's.
 */
const CLAIM_MS = 120_000;
/** How often a process waiting for another's deployment looks for its record. */
const WAIT_MS = 200;
/**
 * The test USDC minted to the treasury (the operator) when the dev chain's TestUSDC is deployed: what pays sells'
 * proceeds and redemptions there, where no venue pays the treasury. A billion USDC outlasts any dev chain.
 */
export const TREASURY_GRANT = 1_000_000_000n * 1_000_000n;

/**
 * The contracts recorded for this chain in the store, or, when none are usable, deployed and recorded by
 * exactly one of the processes that find so at once (the one whose claim the store lets through); the
 * others wait for its record and use it.
 */
export async function ensureContracts(ctx: Ctx, overrides: ContractOverrides): Promise<Deployment> {
  if (overrides.vault) {
    await checkNamedVault(ctx, overrides.vault);
    const named = await fromVault(ctx.rpc, overrides.vault);
    const why = await notUsdc(ctx, named.contracts.usdc);
    if (why) throw new Error(`VAULT_ADDRESS ${overrides.vault}: its USDC ${named.contracts.usdc}: ${why}`);
    const deployment = withUsdc(overrides, { ...named, fromBlock: await deployedIn(ctx.rpc, overrides.vault) });
    await treasuryApproval(ctx, deployment);
    return deployment;
  }
  const build = buildOf(ctx.faucet);
  const owner = randomUUID();
  for (;;) {
    const { deployment: known, claim } = await ctx.store.chainDeployment(ctx.chainId);
    if (known) {
      const present = await hasCode(ctx.rpc, getAddress(known.vault));
      const usable = present && (known.build === build || (await sameContracts(ctx, known)));
      if (usable) {
        const operator = await operatorOf(ctx.rpc, getAddress(known.vault));
        if (operator !== ctx.operator) {
          throw new Error(
            `chain ${ctx.chainId}: the Vault at ${known.vault} is operated by ${operator}, not by OPERATOR_PRIVATE_KEY's address ${ctx.operator}: set OPERATOR_PRIVATE_KEY to its operator's key`,
          );
        }
        return withUsdc(overrides, { ...(await fromVault(ctx.rpc, getAddress(known.vault))), fromBlock: known.block });
      }
      // The dev chain's contracts are ours to replace; on any other chain a silent redeploy would strand clients' funds.
      if (!ctx.faucet) {
        const why = present ? `the Vault at ${known.vault} was deployed from another build of the contracts` : `there is no Vault code at ${known.vault}`;
        throw new Error(`chain ${ctx.chainId}: ${why} (recorded in the database's chain_deployments); set VAULT_ADDRESS, or delete that row to deploy anew`);
      }
    }
    const now = Date.now();
    if (claim === undefined || claim.until < new Date(now).toISOString()) {
      const lease = { owner, until: new Date(now + CLAIM_MS).toISOString() };
      if (await ctx.store.claimChainDeployment(ctx.chainId, known?.vault ?? null, lease, new Date(now).toISOString())) {
        const deployed = await deploy(ctx, overrides.usdc).catch(async (e: unknown) => {
          // Given back so that another process may try at once; if that fails too, the claim runs out by itself.
          await ctx.store.finishChainDeployment(ctx.chainId, owner).catch(() => undefined);
          throw e;
        });
        const record = { ...deployed.contracts, block: deployed.fromBlock, build };
        if (await ctx.store.finishChainDeployment(ctx.chainId, owner, record)) return deployed;
        // The claim ran out and another process took it over: the contracts it records are the ones in use.
      }
    }
    await new Promise((r) => setTimeout(r, WAIT_MS));
  }
}

/** The deployment in use, unless USDC_ADDRESS names another token than its Vault's: the operator meant another USDC, which would not be the one counted. */
function withUsdc(overrides: ContractOverrides, deployment: Deployment): Deployment {
  const { usdc, vault } = deployment.contracts;
  if (overrides.usdc && overrides.usdc !== usdc) {
    throw new Error(`USDC_ADDRESS ${overrides.usdc} is not the USDC of the Vault in use, ${vault}, which holds ${usdc}: unset USDC_ADDRESS, or set it to ${usdc}`);
  }
  return deployment;
}

/**
 * What a deployment was made from: the creation code of the contracts it deploys. (A Vault's runtime code
 * embeds its immutables, so the artifacts are what can be compared.) The lock TTL is not part of it: a
 * process that opens the Vault with another TTL, or none, uses the one deployed rather than replace it.
 * The creation code holds the compiler's metadata, which a change of comments alone changes: a recorded build
 * that differs is compared by the contracts' code before it is taken for another (`sameContracts`).
 */
function buildOf(faucet: boolean): Hex {
  return keccak256(concat([vaultBytecode, ...(faucet ? [testUSDCBytecode] : [])]));
}

async function deploy(ctx: Ctx, usdcOverride: Address | undefined): Promise<Deployment> {
  let usdc = usdcOverride;
  if (usdc) {
    const why = await notUsdc(ctx, usdc);
    if (why) throw new Error(`USDC_ADDRESS ${usdc}: ${why}`);
  } else {
    if (!ctx.faucet) throw new Error("USDC_ADDRESS is required to deploy the Vault on a chain without the test faucet");
    const tx = await ctx.sender.send({
      label: "deploy TestUSDC",
      data: encodeDeployData({ abi: testUSDCAbi, bytecode: testUSDCBytecode, args: [ctx.operator, ctx.operator, TREASURY_GRANT] }),
    });
    usdc = tx.contractAddress!;
  }
  // The operator is the treasury too: settles pay it, sells' proceeds and redemptions are pulled from it.
  const tx = await ctx.sender.send({
    label: "deploy Vault",
    data: encodeDeployData({ abi: vaultAbi, bytecode: vaultBytecode, args: [usdc, ctx.operator, ctx.operator, ctx.lockTtlSeconds, ""] }),
  });
  await approve(ctx, usdc, tx.contractAddress!);
  return { ...(await fromVault(ctx.rpc, tx.contractAddress!)), fromBlock: tx.blockNumber };
}

/** The operator, as the treasury, lets the Vault pull sells' proceeds and redemptions' payouts from it. */
async function approve(ctx: Ctx, usdc: Address, vault: Address): Promise<void> {
  await ctx.sender.send({
    label: "USDC.approve(Vault)",
    to: usdc,
    data: encodeFunctionData({ abi: testUSDCAbi, functionName: "approve", args: [vault, maxUint256] }),
  });
}

/**
 * A Vault named by VAULT_ADDRESS was deployed elsewhere, and its treasury may never have approved it: every sell's
 * settlement and every redemption would then revert on the treasury's allowance, the shares never sold, the holders
 * never paid. A treasury that is the operator approves it here, as a deployment of ours does; another treasury is
 * its owner's to approve, and until it has the start stops, saying so. An allowance already given is kept as it is.
 */
async function treasuryApproval(ctx: Ctx, { contracts: { usdc, vault }, treasury }: Deployment): Promise<void> {
  const data = encodeFunctionData({ abi: testUSDCAbi, functionName: "allowance", args: [treasury, vault] });
  if (BigInt(await ctx.rpc.call<Hex>("eth_call", [{ to: usdc, data }, "latest"])) > 0n) return;
  if (treasury !== ctx.operator) {
    throw new Error(
      `VAULT_ADDRESS ${vault}: its treasury ${treasury} has not approved it to take USDC ${usdc}, which pays sells' proceeds and redemptions: send USDC.approve(${vault}, amount) from ${treasury}, then start again`,
    );
  }
  await approve(ctx, usdc, vault);
}

async function fromVault(rpc: JsonRpc, vault: Address): Promise<Omit<Deployment, "fromBlock">> {
  const read = async (functionName: "usdc" | "sot" | "lockTtl" | "treasury"): Promise<Hex> => {
    const data = encodeFunctionData({ abi: vaultAbi, functionName });
    return rpc.call<Hex>("eth_call", [{ to: vault, data }, "latest"]);
  };
  const [usdc, sot, lockTtl, treasury] = await Promise.all([read("usdc"), read("sot"), read("lockTtl"), read("treasury")]);
  return {
    contracts: {
      usdc: decodeFunctionResult({ abi: vaultAbi, functionName: "usdc", data: usdc }),
      vault: getAddress(vault),
      sot: decodeFunctionResult({ abi: vaultAbi, functionName: "sot", data: sot }),
    },
    treasury: decodeFunctionResult({ abi: vaultAbi, functionName: "treasury", data: treasury }),
    lockTtlSeconds: decodeFunctionResult({ abi: vaultAbi, functionName: "lockTtl", data: lockTtl }),
  };
}

/**
 * Refuses a VAULT_ADDRESS whose code is not this build's Vault: an older Vault (say one whose creditDeposit
 * took other arguments) would start and then revert every call this build makes differently, deposits' credits
 * among them. The code is compared with the build's runtime code but for what differs between two deployments
 * of the same contracts: the immutables (USDC, SOT, operator, treasury, lock TTL) and the compiler's metadata.
 */
async function checkNamedVault(ctx: Ctx, vault: Address): Promise<void> {
  const code = await ctx.rpc.call<Hex>("eth_getCode", [vault, "latest"]);
  if (code === "0x") throw new Error(`VAULT_ADDRESS ${vault}: chain ${ctx.chainId} has no contract there`);
  if (executable(code, vaultImmutables) !== executable(vaultDeployedBytecode, vaultImmutables)) {
    throw new Error(
      `VAULT_ADDRESS ${vault}: the contract there is not the Vault of this version of crossfill (another contract, or a Vault of another version, whose calls differ from this one's); name this version's Vault, or unset VAULT_ADDRESS to deploy one`,
    );
  }
  const operator = await operatorOf(ctx.rpc, vault);
  if (operator !== ctx.operator) {
    throw new Error(`VAULT_ADDRESS ${vault}: its operator is ${operator}, not OPERATOR_PRIVATE_KEY's address ${ctx.operator}: only its operator may lock, settle, credit or pay out`);
  }
}

/** Why the token at `usdc` cannot be the USDC the Vault holds, or undefined: every amount is counted in micro-USDC, 6 decimals. */
async function notUsdc(ctx: Ctx, usdc: Address): Promise<string | undefined> {
  if (!(await hasCode(ctx.rpc, usdc))) return `chain ${ctx.chainId} has no contract there`;
  const data = await ctx.rpc
    .call<Hex>("eth_call", [{ to: usdc, data: encodeFunctionData({ abi: testUSDCAbi, functionName: "decimals" }) }, "latest"])
    .catch((e: unknown) => {
      // A revert is the contract's answer; a chain that did not answer is not.
      if (e instanceof RpcError) return "0x" as const;
      throw e;
    });
  const decimals = data.length === 66 ? BigInt(data) : undefined;
  if (decimals === 6n) return undefined;
  return decimals === undefined ? "the contract there answers no ERC-20 decimals()" : `the token there counts in ${decimals} decimals, not USDC's 6`;
}

/** The only address the Vault takes its locks, settlements, credits and payments from (an immutable of its constructor). */
async function operatorOf(rpc: JsonRpc, vault: Address): Promise<Address> {
  const data = await rpc.call<Hex>("eth_call", [{ to: vault, data: encodeFunctionData({ abi: vaultAbi, functionName: "operator" }) }, "latest"]);
  return decodeFunctionResult({ abi: vaultAbi, functionName: "operator", data });
}

/**
 * Whether a recorded deployment of another build holds this build's contracts all the same: the code of its Vault, its
 * SOT (and on the dev chain its TestUSDC) is this build's, but for the compiler's metadata. A change of comments in the
 * sources then keeps the Vault in use, its clients' balances and positions with it, rather than stop the start on a real
 * chain or replace the Vault on the dev chain.
 */
async function sameContracts(ctx: Ctx, known: Record<keyof Contracts, string>): Promise<boolean> {
  const same = async (address: string, built: Hex, immutables: readonly Immutable[]) =>
    executable(await ctx.rpc.call<Hex>("eth_getCode", [address, "latest"]), immutables) === executable(built, immutables);
  return (
    (await same(known.vault, vaultDeployedBytecode, vaultImmutables)) &&
    (await same(known.sot, positionTokenDeployedBytecode, positionTokenImmutables)) &&
    (!ctx.faucet || (await same(known.usdc, testUSDCDeployedBytecode, testUSDCImmutables)))
  );
}

interface Immutable {
  start: number;
  length: number;
}

/** Runtime code without its metadata (the CBOR its last two bytes give the length of) and with its immutables zeroed. */
function executable(code: Hex, immutables: readonly Immutable[]): string {
  let hex = code.slice(2);
  const metadata = (parseInt(hex.slice(-4), 16) + 2) * 2;
  if (metadata <= hex.length) hex = hex.slice(0, hex.length - metadata);
  for (const { start, length } of immutables) hex = hex.slice(0, start * 2) + "00".repeat(length) + hex.slice((start + length) * 2);
  return hex;
}

async function hasCode(rpc: JsonRpc, address: Address, block: Hex | "latest" = "latest"): Promise<boolean> {
  const code = await rpc.call<Hex>("eth_getCode", [address, block]);
  return code !== "0x";
}

/**
 * The block a Vault named by VAULT_ADDRESS was deployed in, where reading its history starts (the deposit watcher's
 * first scan, the ledger, the search for a lock's ending), rather than block 0, a scan of the whole chain's USDC
 * transfers: the first block with its code, found by halving, some thirty reads on any chain, since a Vault never
 * self-destructs. A block whose state the node no longer keeps (a pruned node; anvil started from a saved state)
 * counts as one with the code: the answer is then an earlier block, never a later one, and block 0 at worst.
 */
async function deployedIn(rpc: JsonRpc, vault: Address): Promise<bigint> {
  let [low, high] = [0n, BigInt(await rpc.call<Hex>("eth_blockNumber"))];
  while (low < high) {
    const middle = (low + high) / 2n;
    const code = await hasCode(rpc, vault, toHex(middle)).catch((e: unknown) => {
      if (e instanceof RpcError) return true;
      throw e;
    });
    if (code) high = middle;
    else low = middle + 1n;
  }
  return low;
}
