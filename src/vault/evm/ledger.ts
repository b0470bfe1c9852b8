// The audit's view of the chain: every event of the Vault, the faucet and the SOT from the Vault's
// deployment to one block, with the balances and supplies as they stood at that same block; and the
// sweep's: the locks and escrows some blocks opened and ended.
import { decodeEventLog, encodeEventTopics, zeroAddress, type Hex, type PublicClient } from "viem";
import { positionTokenAbi, testUSDCAbi, vaultAbi } from "../../contracts/artifacts.ts";
import type { Address, ChainInfo, HoldEvents, Ledger, LoggedAt } from "../vault.ts";
import type { LogReader, RawLog } from "./logs.ts";

export async function readLedger(chain: ChainInfo, client: PublicClient, logs: LogReader): Promise<Ledger> {
  const { vault, usdc, sot } = chain.contracts;
  // One block for everything: events up to it, balances at it, so they add up even while orders go on.
  const toBlock = await client.getBlockNumber({ cacheTime: 0 }); // viem would otherwise answer from a 4 s cache
  const [vaultLogs, dripLogs, mintLogs, burnLogs] = await logs.all(
    [
      { address: vault, topics: [] },
      // A chain without the faucet has a real USDC, which logs no Dripped: the query finds nothing.
      { address: usdc, topics: encodeEventTopics({ abi: testUSDCAbi, eventName: "Dripped" }) },
      { address: sot, topics: encodeEventTopics({ abi: positionTokenAbi, eventName: "TransferSingle", args: { from: zeroAddress } }) },
      { address: sot, topics: encodeEventTopics({ abi: positionTokenAbi, eventName: "TransferSingle", args: { to: zeroAddress } }) },
    ],
    toBlock,
  );
  const ledger: Ledger = {
    fromBlock: logs.fromBlock,
    toBlock,
    ...vaultEvents(),
    drips: [],
    sotMints: [],
    sotBurns: [],
    sotSupply: [],
    usdcGranted: 0n,
    usdcTotalSupply: 0n,
    vaultUsdc: 0n,
    balances: [],
  };
  for (const log of vaultLogs!) file(ledger, log);
  for (const log of dripLogs!) {
    const e = decodeEventLog({ abi: testUSDCAbi, eventName: "Dripped", data: log.data, topics: log.topics });
    ledger.drips.push({ ...e.args, ...loggedAt(log) });
  }
  for (const log of mintLogs!) {
    const e = decodeEventLog({ abi: positionTokenAbi, eventName: "TransferSingle", data: log.data, topics: log.topics });
    ledger.sotMints.push({ to: e.args.to, tokenId: e.args.id, amount: e.args.value, ...loggedAt(log) });
  }
  for (const log of burnLogs!) {
    const e = decodeEventLog({ abi: positionTokenAbi, eventName: "TransferSingle", data: log.data, topics: log.topics });
    ledger.sotBurns.push({ from: e.args.from, tokenId: e.args.id, amount: e.args.value, ...loggedAt(log) });
  }
  const clients = [
    ...new Set<Address>(
      [...ledger.locks, ...ledger.escrows, ...ledger.redemptions, ...ledger.deposits, ...ledger.withdrawals, ...ledger.withdrawnTo, ...ledger.depositCredits].map((x) => x.client),
    ),
  ];
  const tokenIds = [...new Set(ledger.sotMints.map((m) => m.tokenId))];
  const at = { blockNumber: toBlock } as const;
  const [supply, granted, vaultUsdc, sotSupply, balances] = await Promise.all([
    client.readContract({ address: usdc, abi: testUSDCAbi, functionName: "totalSupply", ...at }),
    chain.faucet ? client.readContract({ address: usdc, abi: testUSDCAbi, functionName: "treasuryGrant", ...at }) : 0n,
    client.readContract({ address: usdc, abi: testUSDCAbi, functionName: "balanceOf", args: [vault], ...at }),
    Promise.all(
      tokenIds.map(async (tokenId) => ({
        tokenId,
        supply: await client.readContract({ address: sot, abi: positionTokenAbi, functionName: "totalSupply", args: [tokenId], ...at }),
      })),
    ),
    Promise.all(
      clients.map(async (c) => {
        const [available, locked] = await Promise.all([
          client.readContract({ address: vault, abi: vaultAbi, functionName: "available", args: [c], ...at }),
          client.readContract({ address: vault, abi: vaultAbi, functionName: "locked", args: [c], ...at }),
        ]);
        return { client: c, available, locked };
      }),
    ),
  ]);
  ledger.usdcGranted = granted;
  ledger.usdcTotalSupply = supply;
  ledger.sotSupply = sotSupply;
  ledger.vaultUsdc = vaultUsdc;
  ledger.balances = balances;
  return ledger;
}

/** The Vault's events a ledger lists, by kind. */
type VaultEvents = Pick<Ledger, "locks" | "endings" | "deposits" | "withdrawals" | "escrows" | "escrowEndings" | "redemptions" | "withdrawnTo" | "depositCredits">;

function vaultEvents(): VaultEvents {
  return { locks: [], endings: [], deposits: [], withdrawals: [], escrows: [], escrowEndings: [], redemptions: [], withdrawnTo: [], depositCredits: [] };
}

/** Files one of the Vault's logs under its kind. */
function file(into: VaultEvents, log: RawLog): void {
  const e = decodeEventLog({ abi: vaultAbi, data: log.data, topics: log.topics });
  const at = loggedAt(log);
  switch (e.eventName) {
    case "Locked":
      into.locks.push({ ...e.args, ...at });
      break;
    case "Settled":
      into.endings.push({ kind: "settled", ...e.args, ...at });
      break;
    case "Released":
    case "Expired":
      into.endings.push({ kind: "released", ...e.args, expired: e.eventName === "Expired", ...at });
      break;
    case "Deposited":
      into.deposits.push({ ...e.args, ...at });
      break;
    case "Withdrawn":
      into.withdrawals.push({ ...e.args, ...at });
      break;
    case "Escrowed":
      into.escrows.push({ ...e.args, ...at });
      break;
    case "SellSettled":
      into.escrowEndings.push({ kind: "settled", ...e.args, ...at });
      break;
    case "EscrowReleased":
    case "EscrowExpired":
      into.escrowEndings.push({ kind: "released", ...e.args, expired: e.eventName === "EscrowExpired", ...at });
      break;
    case "Redeemed":
      into.redemptions.push({ ...e.args, ...at });
      break;
    case "WithdrawnTo":
      into.withdrawnTo.push({ ...e.args, ...at });
      break;
    case "DepositCredited":
      into.depositCredits.push({ ...e.args, ...at });
      break;
  }
}

/** The first topics of the Vault's events that open or end a lock or an escrow. */
const HOLD_TOPICS = (["Locked", "Settled", "Released", "Expired", "Escrowed", "SellSettled", "EscrowReleased", "EscrowExpired"] as const).map((eventName) => encodeEventTopics({ abi: vaultAbi, eventName })[0]!);

/** The locks and escrows opened and ended from `fromBlock` to `toBlock` (whose hash, given, the logs' node must have there): the Vault's logs of those events alone, filed as the ledger files them. */
export async function readHolds(vault: Address, logs: LogReader, fromBlock: bigint, toBlock: bigint, toHash?: Hex): Promise<HoldEvents> {
  const [found] = await logs.between([{ address: vault, topics: [HOLD_TOPICS] }], fromBlock, toBlock, toHash);
  const events = vaultEvents();
  for (const log of found!) file(events, log);
  return { locks: events.locks, endings: events.endings, escrows: events.escrows, escrowEndings: events.escrowEndings };
}

export function loggedAt(log: RawLog): LoggedAt {
  return { txHash: log.transactionHash, blockNumber: BigInt(log.blockNumber as Hex) };
}
