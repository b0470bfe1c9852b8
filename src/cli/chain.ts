import { join } from "node:path";
import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { startDevChain } from "../vault/devnode/index.ts";
import { startRpcFront } from "../vault/devnode/rpc-front.ts";
import { announceDevChain } from "../vault/devnode/running.ts";

/**
 * `crossfill chain`: the embedded dev chain as a process of its own, for several server instances (or a
 * restart of one) to share. Stdout carries only the KEY=value settings that point a server at it.
 */
export function registerChainCommand(program: Command, fail: (message: string) => never): void {
  program
    .command("chain")
    .description("Run the embedded dev chain (state in DATA_DIR/chain) and print, on stdout, CHAIN_RPC_URL and OPERATOR_PRIVATE_KEY for the servers")
    .option("--port <n>", "where its JSON-RPC endpoint listens (default: a free port)")
    .action(async (o: { port?: string }) => {
      // digits only: Number() reads "" and " " as 0, a free port nobody asked for
      if (o.port !== undefined && (!/^\d+$/.test(o.port) || Number(o.port) > 65535)) fail(`--port must be an integer from 0 to 65535 (got ${JSON.stringify(o.port)})`);
      const port = Number(o.port ?? 0);
      const config = loadConfig();
      const chainDir = join(config.dataDir, "chain");
      const chain = await startDevChain({ dataDir: chainDir });
      const front = await startRpcFront(chain, port);
      const withdraw = announceDevChain(chainDir, front.url);
      // one write, so a script that waits for a non-empty file reads every line
      process.stdout.write(`CHAIN_RPC_URL=${front.url}\nOPERATOR_PRIVATE_KEY=${chain.operatorKey}\n`);
      process.stderr.write(`crossfill chain: chain ${chain.chainId} at ${front.url}, state in ${chainDir}\n`);
      process.stderr.write("crossfill chain: running until SIGINT (Ctrl-C) or SIGTERM\n");
      let stopping = false;
      const stop = (signal: NodeJS.Signals) => {
        if (stopping) return;
        stopping = true;
        process.stderr.write(`crossfill chain: ${signal}, stopping the chain\n`);
        withdraw();
        front
          .close()
          .then(() => chain.stop())
          .then(
            () => process.exit(0),
            (e: unknown) => fail(`stopping the chain failed: ${e instanceof Error ? e.message : String(e)}`),
          );
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
}
