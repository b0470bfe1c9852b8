// The audit's view of the chain: every event of the Vault, the faucet and the SOT from the Vault's
// deployment to one block, with the balances as they stood at that same block.
import { decodeEventLog, encodeEventTopics, zeroAddress, type Hex, type PublicClient } from "viem";
import { positionTokenAbi, testUSDCAbi, vaultAbi } from "../../contracts/artifacts.ts";
import type { Address, ChainInfo, Ledger, LoggedAt } from "../vault.ts";
import type { LogReader, RawLog } from "./logs.ts";

export async function readLedger(chain: ChainInfo, client: PublicClient, logs: LogReader): Promise<Ledger> {
  const { vault, usdc, sot } = chain.contracts;
  // One block for everything: events up to it, balances at it, so they add up even while orders go on.
  const toBlock = await client.getBlockNumber({ cacheTime: 0 }); // viem would otherwise answer from a 4 s cache
  const [vaultLogs, dripLogs, mintLogs] = await logs.all(
    [
      { address: vault, topics: [] },
      // A chain without the faucet has a real USDC, which logs no Dripped: the query finds nothing.
      { address: usdc, topics: encodeEventTopics({ abi: testUSDCAbi, eventName: "Dripped" }) },
      { address: sot, topics: encodeEventTopics({ abi: positionTokenAbi, eventName: "TransferSingle", args: { from: zeroAddress } }) },
    ],
    toBlock,
  );
  const ledger: Ledger = {
    fromBlock: logs.fromBlock,
    toBlock,
    locks: [],
    endings: [],
    deposits: [],
    withdrawals: [],
    drips: [],
    sotMints: [],
    usdcTotalSupply: 0n,
    balances: [],
  };
  for (const log of vaultLogs!) {
    const e = decodeEventLog({ abi: vaultAbi, data: log.data, topics: log.topics });
    const at = loggedAt(log);
    switch (e.eventName) {
      case "Locked":
        ledger.locks.push({ ...e.args, ...at });
        break;
      case "Settled":
        ledger.endings.push({ kind: "settled", ...e.args, ...at });
        break;
      case "Released":
      case "Expired":
        ledger.endings.push({ kind: "released", ...e.args, expired: e.eventName === "Expired", ...at });
        break;
      case "Deposited":
        ledger.deposits.push({ ...e.args, ...at });
        break;
      case "Withdrawn":
        ledger.withdrawals.push({ ...e.args, ...at });
        break;
    }
  }
  for (const log of dripLogs!) {
    const e = decodeEventLog({ abi: testUSDCAbi, eventName: "Dripped", data: log.data, topics: log.topics });
    ledger.drips.push({ ...e.args, ...loggedAt(log) });
  }
  for (const log of mintLogs!) {
    const e = decodeEventLog({ abi: positionTokenAbi, eventName: "TransferSingle", data: log.data, topics: log.topics });
    ledger.sotMints.push({ to: e.args.to, tokenId: e.args.id, amount: e.args.value, ...loggedAt(log) });
  }
  const clients = [...new Set<Address>([...ledger.locks, ...ledger.deposits, ...ledger.withdrawals].map((x) => x.client))];
  const at = { blockNumber: toBlock } as const;
  const [supply, balances] = await Promise.all([
    client.readContract({ address: usdc, abi: testUSDCAbi, functionName: "totalSupply", ...at }),
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
  ledger.usdcTotalSupply = supply;
  ledger.balances = balances;
  return ledger;
}

export function loggedAt(log: RawLog): LoggedAt {
  return { txHash: log.transactionHash, blockNumber: BigInt(log.blockNumber as Hex) };
}
