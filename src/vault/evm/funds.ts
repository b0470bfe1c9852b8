// Money in and out of the Vault by the operator: EIP-2612 permit digests for deposit credits, and the USDC
// Transfer logs that tell a deposit, read in the chain's own terms (transaction hash, log index).
import { concat, decodeEventLog, encodeAbiParameters, encodeEventTopics, parseAbiParameters, toHex, type Hex } from "viem";
import { keccak256 } from "../../evm/keccak.ts";
import { testUSDCAbi } from "../../contracts/artifacts.ts";
import type { Address, UsdcTransfer } from "../vault.ts";
import { loggedAt } from "./ledger.ts";
import type { LogFilter, RawLog } from "./logs.ts";

const PERMIT_TYPEHASH = keccak256(toHex("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"));
const PERMIT_STRUCT = parseAbiParameters("bytes32, address, address, uint256, uint256, uint256");

export interface Permit {
  owner: Address;
  spender: Address;
  value: bigint;
  nonce: bigint;
  deadline: bigint;
}

/**
 * The EIP-712 digest an EIP-2612 permit signs, under the token's own domain separator (read from the token, so
 * the same code serves the test USDC and real USDC, whose domains differ in name and version).
 */
export function permitDigest(domainSeparator: Hex, p: Permit): Hex {
  const struct = keccak256(encodeAbiParameters(PERMIT_STRUCT, [PERMIT_TYPEHASH, p.owner, p.spender, p.value, p.nonce, p.deadline]));
  return keccak256(concat(["0x1901", domainSeparator, struct]));
}

/** The filter for every USDC Transfer log, whoever sent or received it. */
export function transferFilter(usdc: Address): LogFilter {
  return { address: usdc, topics: encodeEventTopics({ abi: testUSDCAbi, eventName: "Transfer" }) };
}

/** A USDC Transfer log as a transfer; undefined for any other log. */
export function asTransfer(usdc: Address, log: RawLog & { address?: string }): UsdcTransfer | undefined {
  if (log.address !== undefined && log.address.toLowerCase() !== usdc.toLowerCase()) return undefined;
  try {
    const e = decodeEventLog({ abi: testUSDCAbi, eventName: "Transfer", data: log.data, topics: log.topics });
    return { from: e.args.from, to: e.args.to, amount: e.args.value, logIndex: Number(log.logIndex), ...loggedAt(log) };
  } catch {
    return undefined;
  }
}
