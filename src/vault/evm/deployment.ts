// Where the contracts live on each chain: deployed on first use and recorded in
// <dataDir>/chain/deployment.json keyed by chain id, so a restart finds them again.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileDurably } from "../durable.ts";
import { decodeFunctionResult, encodeDeployData, encodeFunctionData, getAddress, maxUint256, type Hex } from "viem";
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
}

export async function ensureContracts(ctx: Ctx, overrides: ContractOverrides): Promise<Contracts> {
  if (overrides.vault) return fromVault(ctx.rpc, overrides.vault);
  const file = join(ctx.dataDir, "chain", "deployment.json");
  const all = readDeployments(file);
  const known = all[String(ctx.chainId)];
  if (known && (await hasCode(ctx.rpc, known.vault))) return known;
  if (known && !ctx.faucet) throw new Error(`no Vault code at ${known.vault} on chain ${ctx.chainId} (see ${file})`);
  const deployed = await deploy(ctx, overrides.usdc);
  all[String(ctx.chainId)] = deployed;
  writeFileDurably(file, JSON.stringify(all, null, 2) + "\n");
  return deployed;
}

async function deploy(ctx: Ctx, usdcOverride: Address | undefined): Promise<Contracts> {
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
    data: encodeDeployData({ abi: vaultAbi, bytecode: vaultBytecode, args: [usdc, ctx.operator, ctx.operator, ""] }),
  });
  const contracts = await fromVault(ctx.rpc, tx.contractAddress!);
  if (ctx.faucet) {
    // The faucet mints to the operator, then deposits for the account: one allowance for good.
    await ctx.sender.send({
      label: "TestUSDC.approve",
      to: usdc,
      data: encodeFunctionData({ abi: testUSDCAbi, functionName: "approve", args: [contracts.vault, maxUint256] }),
    });
  }
  return contracts;
}

async function fromVault(rpc: JsonRpc, vault: Address): Promise<Contracts> {
  const read = async (functionName: "usdc" | "sot"): Promise<Address> => {
    const data = encodeFunctionData({ abi: vaultAbi, functionName });
    const out = await rpc.call<Hex>("eth_call", [{ to: vault, data }, "latest"]);
    return decodeFunctionResult({ abi: vaultAbi, functionName, data: out });
  };
  const [usdc, sot] = await Promise.all([read("usdc"), read("sot")]);
  return { usdc, vault: getAddress(vault), sot };
}

async function hasCode(rpc: JsonRpc, address: Address): Promise<boolean> {
  const code = await rpc.call<Hex>("eth_getCode", [address, "latest"]);
  return code !== "0x";
}

function readDeployments(file: string): Record<string, Contracts> {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Record<string, Contracts>;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw e;
  }
}
