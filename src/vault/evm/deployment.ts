// Where the contracts live on each chain: deployed on first use and recorded in
// <dataDir>/chain/deployment.json keyed by chain id, so a restart finds them again.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileDurably } from "../durable.ts";
import { concat, decodeFunctionResult, encodeDeployData, encodeFunctionData, getAddress, keccak256, toHex, type Hex } from "viem";
import { testUSDCAbi, testUSDCBytecode, vaultAbi, vaultBytecode } from "../../contracts/artifacts.ts";
import type { Address } from "../vault.ts";
import type { JsonRpc } from "../rpc.ts";
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

/** The overrides from `VAULT_ADDRESS` and `USDC_ADDRESS`. */
export function contractsFromEnv(env: NodeJS.ProcessEnv): ContractOverrides {
  return {
    ...(env.VAULT_ADDRESS ? { vault: getAddress(env.VAULT_ADDRESS) } : {}),
    ...(env.USDC_ADDRESS ? { usdc: getAddress(env.USDC_ADDRESS) } : {}),
  };
}

interface Ctx {
  rpc: JsonRpc;
  sender: TxSender;
  chainId: number;
  operator: Address;
  dataDir: string;
  faucet: boolean;
  lockTtlSeconds: number;
}

/** The contracts in use, with what the vault needs to read their history. */
export interface Deployment {
  contracts: Contracts;
  /** The block the Vault was deployed in (0 when unknown: a Vault named by VAULT_ADDRESS). No event of ours is older. */
  fromBlock: bigint;
  lockTtlSeconds: number;
}

/** One chain's entry in deployment.json. */
interface Recorded extends Contracts {
  block: number;
  /** What it was deployed from (see `buildOf`): a deployment of another build is not used. */
  build: Hex;
}

export async function ensureContracts(ctx: Ctx, overrides: ContractOverrides): Promise<Deployment> {
  if (overrides.vault) return { ...(await fromVault(ctx.rpc, overrides.vault)), fromBlock: 0n };
  const file = join(ctx.dataDir, "chain", "deployment.json");
  const all = readDeployments(file);
  const known = all[String(ctx.chainId)];
  const build = buildOf(ctx.faucet);
  if (known) {
    const usable = known.build === build && (await hasCode(ctx.rpc, known.vault));
    if (usable) return { ...(await fromVault(ctx.rpc, known.vault)), fromBlock: BigInt(known.block) };
    // The dev chain's contracts are ours to replace; on any other chain a silent redeploy would strand clients' funds.
    if (!ctx.faucet) {
      const why = known.build === build ? `there is no Vault code at ${known.vault}` : `the Vault at ${known.vault} was deployed from another build of the contracts`;
      throw new Error(`chain ${ctx.chainId}: ${why} (see ${file}); set VAULT_ADDRESS, or remove the entry to deploy anew`);
    }
  }
  const deployed = await deploy(ctx, overrides.usdc);
  all[String(ctx.chainId)] = { ...deployed.contracts, block: Number(deployed.fromBlock), build };
  writeFileDurably(file, JSON.stringify(all, null, 2) + "\n");
  return deployed;
}

/**
 * What a deployment was made from: the creation code of the contracts it deploys. (A Vault's runtime code
 * embeds its immutables, so the artifacts are what can be compared.) The lock TTL is not part of it: a
 * process that opens the Vault with another TTL, or none, uses the one deployed rather than replace it.
 */
function buildOf(faucet: boolean): Hex {
  return keccak256(concat([vaultBytecode, ...(faucet ? [testUSDCBytecode] : [])]));
}

async function deploy(ctx: Ctx, usdcOverride: Address | undefined): Promise<Deployment> {
  let usdc = usdcOverride;
  if (!usdc) {
    if (!ctx.faucet) throw new Error("USDC_ADDRESS is required to deploy the Vault on a chain without the test faucet");
    const tx = await ctx.sender.send({
      label: "deploy TestUSDC",
      data: encodeDeployData({ abi: testUSDCAbi, bytecode: testUSDCBytecode, args: [ctx.operator] }),
    });
    usdc = tx.contractAddress!;
  }
  const tx = await ctx.sender.send({
    label: "deploy Vault",
    data: encodeDeployData({ abi: vaultAbi, bytecode: vaultBytecode, args: [usdc, ctx.operator, ctx.operator, ctx.lockTtlSeconds, ""] }),
  });
  return { ...(await fromVault(ctx.rpc, tx.contractAddress!)), fromBlock: tx.blockNumber };
}

async function fromVault(rpc: JsonRpc, vault: Address): Promise<Omit<Deployment, "fromBlock">> {
  const read = async (functionName: "usdc" | "sot" | "lockTtl"): Promise<Hex> => {
    const data = encodeFunctionData({ abi: vaultAbi, functionName });
    return rpc.call<Hex>("eth_call", [{ to: vault, data }, "latest"]);
  };
  const [usdc, sot, lockTtl] = await Promise.all([read("usdc"), read("sot"), read("lockTtl")]);
  return {
    contracts: {
      usdc: decodeFunctionResult({ abi: vaultAbi, functionName: "usdc", data: usdc }),
      vault: getAddress(vault),
      sot: decodeFunctionResult({ abi: vaultAbi, functionName: "sot", data: sot }),
    },
    lockTtlSeconds: decodeFunctionResult({ abi: vaultAbi, functionName: "lockTtl", data: lockTtl }),
  };
}

async function hasCode(rpc: JsonRpc, address: Address): Promise<boolean> {
  const code = await rpc.call<Hex>("eth_getCode", [address, "latest"]);
  return code !== "0x";
}

function readDeployments(file: string): Record<string, Recorded> {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Record<string, Recorded>;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw e;
  }
}
