import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { toHex, type Hex } from "viem";
import { audit, formatAudit } from "../audit/run.ts";
import { loadConfig, type Config } from "../config.ts";
import { loadCatalog } from "../markets/catalog-db.ts";
import type { Store } from "../store/store.ts";
import { runningDevChain } from "../vault/devnode/running.ts";
import { DEV_CHAIN_ID, startDevChain } from "../vault/devnode/index.ts";
import { contractsFromEnv, openEvmVault } from "../vault/evm/index.ts";
import { chainIdAt } from "../vault/rpc.ts";
import type { Vault } from "../vault/vault.ts";
import { startVenues } from "../venues/start.ts";
import { count } from "./funds.ts";
import { withStore } from "./with-store.ts";

const MAX_EXAMPLES = 1_000_000;

/**
 * `crossfill audit`: checks every invariant of the order path against the store, the chain and the
 * venues, prints each with its count of violations, and exits 1 if any is violated.
 */
export function registerAuditCommand(program: Command, fail: (message: string) => never): void {
  program
    .command("audit")
    .description("Check the order path's invariants against the store, the chain and the venues; exit 1 on any violation")
    .option("--json", "print JSON for scripts")
    .option("--examples <n>", `name up to n violations of each invariant (1 to ${MAX_EXAMPLES})`, "5")
    .action(async (o: { json?: boolean; examples: string }) => {
      const examples = count(o.examples, "--examples", MAX_EXAMPLES, fail);
      const config = loadConfig();
      const report = await withStore(async (store) => {
        const chain = await openChain(config, store);
        try {
          const venues = await openVenues(config, store);
          try {
            return await audit(store, chain.vault, venues?.venues, new Date(), examples);
          } finally {
            await venues?.stop();
          }
        } finally {
          await chain.close();
        }
      });
      console.log(o.json ? JSON.stringify(report, null, 2) : formatAudit(report));
      process.exit(report.ok ? 0 : 1);
    });
}

/**
 * The chain the server uses: CHAIN_RPC_URL, else the embedded dev chain of DATA_DIR — the running
 * server's (it leaves its address in the data directory), or started here from its state when no server runs; one
 * without state there (a DATA_DIR not the server's, with DATABASE_URL) is refused, not made.
 * Its contracts are the ones the server recorded in the store.
 */
async function openChain(config: Config, store: Store): Promise<{ vault: Vault; close(): Promise<void> }> {
  const open = (rpcUrl: string, operatorKey: Hex, faucet: boolean) =>
    openEvmVault({ rpcUrl, operatorKey, store, faucet, contracts: contractsFromEnv(process.env), logRangeBlocks: config.chainLogRangeBlocks, rpcTimeoutMs: config.chainRpcTimeoutMs });
  if (config.chainRpcUrl) {
    // As for the server (src/main.ts), the dev chain's id marks a chain of test USDC: its deployment was
    // recorded as the faucet's build, which a vault opened without the faucet refuses as another build.
    const chainId = await chainIdAt(config.chainRpcUrl, config.chainRpcTimeoutMs);
    const faucet = chainId === toHex(DEV_CHAIN_ID);
    const vault = await open(config.chainRpcUrl, config.operatorPrivateKey!, faucet);
    return { vault, close: () => vault.close() };
  }
  const chainDir = join(config.dataDir, "chain");
  const running = runningDevChain(chainDir);
  if (running) {
    const vault = await open(running.rpcUrl, readFileSync(join(chainDir, "operator.key"), "utf8").trim() as Hex, true);
    return { vault, close: () => vault.close() };
  }
  // One never started there is a new, empty chain: the store audited against it is a report on nothing the server did.
  if (!existsSync(join(chainDir, "operator.key"))) {
    throw new Error(`no dev chain at ${chainDir}: set DATA_DIR to the server's data directory, or CHAIN_RPC_URL and OPERATOR_PRIVATE_KEY to the chain it uses; the server makes its dev chain at its first start (crossfill serve, npm start)`);
  }
  const devChain = await startDevChain({ dataDir: chainDir });
  const vault = await openEvmVault({ rpcUrl: devChain.rpcUrl, operatorKey: devChain.operatorKey, store, faucet: true, devChain, logRangeBlocks: config.chainLogRangeBlocks, rpcTimeoutMs: config.chainRpcTimeoutMs });
  return {
    vault,
    close: async () => {
      await vault.close();
      await devChain.stop();
    },
  };
}

/** The venues, when their history outlives the server: every configured venue points at an endpoint of its own (the real venue, or `crossfill sim`). */
async function openVenues(config: Config, store: Store) {
  const external = config.venues.every((name) => config.venueEndpoints[name] !== undefined);
  if (!external) return undefined;
  return startVenues({
    names: config.venues,
    endpoints: config.venueEndpoints,
    catalog: await loadCatalog(store),
    clock: { now: () => Date.now() },
  });
}
