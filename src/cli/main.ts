import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Command } from "commander";
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN } from "../accounts/password.ts";
import { loadConfig } from "../config.ts";
import { findOrCreateAccount, hasEmailForm, LOCAL_ACCOUNT } from "../accounts/service.ts";
import { parseIpAllowlist } from "../auth/ip.ts";
import { createApiKey, KEY_NAME_MAX, parseKeyName, parseScopes, parseWithdrawalAllowlist } from "../auth/keys.ts";
import { encryptSecret } from "../auth/secrets.ts";
import { AppError } from "../domain/errors.ts";
import { serve } from "../main.ts";
import { keyView } from "../http/terminal/key-routes.ts";
import { registerAuditCommand } from "./audit.ts";
import { registerBookCommand } from "./book.ts";
import { registerChainCommand } from "./chain.ts";
import { registerEventCommands } from "./events.ts";
import { registerFundsCommands } from "./funds.ts";
import { registerOrderCommand } from "./order.ts";
import { printable } from "../domain/text.ts";
import { registerSimCommand } from "./sim.ts";
import { withStore } from "./with-store.ts";

async function firstLine(input: NodeJS.ReadableStream): Promise<string | undefined> {
  for await (const line of createInterface({ input })) return line;
  return undefined;
}

function fail(message: string): never {
  console.error(`crossfill: ${message}`);
  process.exit(2);
}

// A reader that stopped (crossfill events list | head -1) has what it wanted: stop quietly, not with an EPIPE stack.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE") throw e;
  process.exit(0);
});

const version: string = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
const program = new Command("crossfill")
  .description("Trade prediction-market outcomes across venues through one API.")
  .version(version)
  .showHelpAfterError()
  // Commander exits 1 when called wrongly, which crossfill audit means for violated invariants: a usage error is 2,
  // as every other refusal of the CLI's (fail). Set before the commands, which take it from here.
  .exitOverride((e) => process.exit(e.exitCode === 0 ? 0 : 2));

program
  .command("serve")
  .description("Start the API server, web terminal, embedded chain and venue simulators (same as npm start)")
  .action(() => serve(loadConfig()));

const keys = program.command("keys").description("Manage API keys");

keys
  .command("create")
  .description("Create an API key; its secret is printed once and never again")
  .requiredOption("--name <name>", `a name to recognise the key by (1 to ${KEY_NAME_MAX} characters)`)
  .option("--scopes <scopes>", "comma-separated scopes: read, trade, withdraw (withdraw only when named)", "read,trade")
  .option("--account <email>", "the account that owns the key", LOCAL_ACCOUNT)
  .option("--ip <cidrs>", "comma-separated IP addresses allowed to use the key")
  .option("--withdraw-to <addresses>", "comma-separated addresses the key's withdrawals may pay to (default: any)")
  .option("--json", "print JSON for scripts")
  .action(async (o: { name: string; scopes: string; account: string; ip?: string; withdrawTo?: string; json?: boolean }) => {
    if (!hasEmailForm(o.account)) fail(`--account must be an email address (got ${JSON.stringify(o.account)})`);
    const name = parseKeyName(o.name);
    const scopes = parseScopes(o.scopes);
    // A list given empty (a script's unset variable) would make a key without the limit asked for: any address, any IP.
    const list = (v: string | undefined, flag: string) => {
      if (v === undefined) return null;
      const items = v.split(",").map((s) => s.trim()).filter(Boolean);
      if (items.length === 0) fail(`${flag} names nothing; leave it out for a key without that limit`);
      return items;
    };
    // read before the account is made: refused after, they left an account without a password its owner could not sign up as
    const ipAllowlist = parseIpAllowlist(list(o.ip, "--ip") ?? []);
    const withdrawalAllowlist = parseWithdrawalAllowlist(list(o.withdrawTo, "--withdraw-to") ?? []);
    const created = await withStore(async (store, masterKey) => {
      const master = await masterKey();
      const { account } = await findOrCreateAccount(store, o.account, (k) => encryptSecret(master, k));
      const key = await createApiKey(store, master, { accountId: account.id, name, scopes, ipAllowlist, withdrawalAllowlist });
      return { account, ...key };
    });
    if (o.json) {
      console.log(JSON.stringify({ api_key: created.apiKey, api_secret: created.apiSecret }));
      return;
    }
    console.log(`Created key "${name}" for ${printable(created.account.email)} (scopes: ${scopes.join(", ")})`);
    console.log(`  API_KEY     ${created.apiKey}`);
    console.log(`  API_SECRET  ${created.apiSecret}`);
    console.log("Store the secret now: it is shown only this once.");
  });

keys
  .command("list")
  .description("List an account's API keys (never their secrets)")
  .option("--account <email>", "the account", LOCAL_ACCOUNT)
  .option("--json", "print JSON for scripts")
  .action(async (o: { account: string; json?: boolean }) => {
    if (!hasEmailForm(o.account)) fail(`--account must be an email address (got ${JSON.stringify(o.account)})`);
    const list = await withStore(async (store) => {
      const account = await store.accountByEmail(o.account.trim().toLowerCase());
      return account ? store.listApiKeys(account.id) : [];
    });
    const rows = list.map(keyView);
    if (o.json) {
      console.log(JSON.stringify(rows));
      return;
    }
    if (rows.length === 0) {
      console.log(`No keys for ${printable(o.account)}.`);
      return;
    }
    for (const r of rows) {
      const state = r.revoked_at ? `revoked ${r.revoked_at}` : `last used ${r.last_used_at ?? "never"}`;
      const ips = r.ip_allowlist ? `  from ${r.ip_allowlist.join(",")}` : "";
      const to = r.withdrawal_allowlist ? `  pays to ${r.withdrawal_allowlist.join(",")}` : "";
      console.log(`${r.api_key}  ${printable(r.name).padEnd(16)}  ${r.scopes.join(",").padEnd(10)}  created ${r.created_at}  ${state}${ips}${to}`);
    }
  });

keys
  .command("revoke")
  .description("Revoke an API key; it is refused from the next request on")
  .argument("<api_key>", "the public key, ck_live_...")
  .option("--json", "print JSON for scripts")
  .action(async (apiKey: string, o: { json?: boolean }) => {
    const revoked = await withStore((store) => store.revokeApiKey(apiKey, new Date().toISOString()));
    if (o.json) console.log(JSON.stringify({ api_key: apiKey, revoked }));
    else if (revoked) console.log(`Revoked ${apiKey}.`);
    else console.error(`crossfill: no active key ${apiKey}`);
    if (!revoked) process.exitCode = 1;
  });

const accounts = program.command("accounts").description("Manage accounts");

accounts
  .command("password")
  .description("Set the password that signs an account in to the web terminal, signing out its sessions; read from standard input (e.g. piped)")
  .option("--account <email>", "the account (made if it does not exist yet)", LOCAL_ACCOUNT)
  .action(async (o: { account: string }) => {
    if (!hasEmailForm(o.account)) fail(`--account must be an email address (got ${JSON.stringify(o.account)})`);
    if (process.stdin.isTTY) process.stderr.write("New password (shown as typed; pipe it in to avoid that): ");
    const password = (await firstLine(process.stdin)) ?? "";
    // counted as the terminal's sign-in counts them (JSON Schema's minLength and maxLength): code points, an emoji one
    const length = [...password].length;
    if (length < PASSWORD_MIN || length > PASSWORD_MAX) fail(`the password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
    const email = await withStore(async (store, masterKey) => {
      const master = await masterKey();
      const { account } = await findOrCreateAccount(store, o.account, (k) => encryptSecret(master, k));
      await store.setPasswordHash(account.id, await hashPassword(password));
      return account.email;
    });
    console.log(`${printable(email)} can now sign in to the web terminal with that password.`);
  });

registerEventCommands(program, fail);
registerFundsCommands(program, fail);
registerOrderCommand(program, fail);
registerBookCommand(program, fail);
registerAuditCommand(program, fail);
registerChainCommand(program, fail);
registerSimCommand(program, fail);

program.parseAsync(process.argv).catch((e: unknown) => fail(e instanceof AppError ? e.message : e instanceof Error ? e.message : String(e)));
