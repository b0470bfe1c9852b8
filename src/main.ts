import { readFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { randomBytes } from "node:crypto";
import { pino, type Logger } from "pino";
import { toHex, type Hex } from "viem";
import { sign } from "viem/accounts";
import type { FastifyInstance } from "fastify";
import { loadConfig, type Config } from "./config.ts";
import { AppError } from "./domain/errors.ts";
import { microToNumber } from "./domain/money.ts";
import { skewed, systemClock, type Clock, type Outcome } from "./domain/types.ts";
import { AccountDirectory, topUp } from "./accounts/service.ts";
import { positionMark, positionViews } from "./accounts/positions.ts";
import { authenticate, authenticateCached, checkHeaders, type AuthDeps } from "./auth/authenticate.ts";
import { KeyCache } from "./auth/key-cache.ts";
import { redisReplayCache, storeReplayCache } from "./auth/replay-cache.ts";
import { createApiKey } from "./auth/keys.ts";
import { decryptSecret, encryptSecret, loadMasterKey } from "./auth/secrets.ts";
import { buildApp } from "./http/app.ts";
import type { HttpDeps } from "./http/deps.ts";
import { loadCatalog } from "./markets/catalog-db.ts";
import { markPrice, sellQuotes, venueQuotes } from "./markets/merged-book.ts";
import { PriceBoard } from "./markets/price-board.ts";
import { listedMarket, presentMarket } from "./markets/present.ts";
import { Metrics, meterPlacements } from "./metrics/metrics.ts";
import { OrderService, type Checkpoint } from "./orders/service.ts";
import { ResolutionService } from "./resolution/service.ts";
import type { FundsCheckpoint } from "./funds/checkpoints.ts";
import { DepositWatcher } from "./funds/deposits.ts";
import { WithdrawalService } from "./funds/withdrawals.ts";
import { Reconciler } from "./orders/reconcile.ts";
import { killSwitch } from "./orders/kill-switch.ts";
import { OPEN_STATUSES } from "./domain/order-status.ts";
import { plan } from "./router/index.ts";
import { openStore } from "./store/open-store.ts";
import type { Store } from "./store/store.ts";
import { startConfiguredVenues } from "./venues/sim-process.ts";
import type { Venue } from "./venues/venue.ts";
import { DEV_CHAIN_ID, startDevChain } from "./vault/devnode/index.ts";
import { chainIdAt } from "./vault/rpc.ts";
import { announceDevChain } from "./vault/devnode/running.ts";
import { contractsFromEnv, openEvmVault } from "./vault/evm/index.ts";
import { sotAssetId, sotTokenId } from "./contracts/sot.ts";
import type { Vault } from "./vault/vault.ts";
import { privateDir } from "./private-files.ts";
import { openRedis } from "./redis.ts";

const VERSION: string = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
/** How long GET /v1/health waits for the chain, the store or Redis to answer before it calls that part down. */
const HEALTH_READ_MS = 2_000;

export interface Crossfill {
  url: string;
  app: FastifyInstance;
  store: Store;
  vault: Vault;
  venues: Venue[];
  orders: OrderService;
  reconciler: Reconciler;
  resolutions: ResolutionService;
  withdrawals: WithdrawalService;
  deposits: DepositWatcher;
  /**
   * The graceful stop: stops accepting, lets the requests in flight (orders among them), a running
   * reconciliation pass and the Vault's transactions finish, up to SHUTDOWN_GRACE_MS, then closes venues, chain,
   * store and Redis. Orders still going at the bound are left to recovery, which the order state machine makes safe.
   */
  stop(): Promise<void>;
}

/** The composition root: reads config, wires adapters to ports, recovers interrupted orders, then serves. */
export async function startCrossfill(config: Config, opts: { clock?: Clock; logger?: Logger | false } = {}): Promise<Crossfill> {
  const clock = opts.clock ?? skewed(systemClock, config.clockSkewMs);
  const log = opts.logger === undefined ? pino({ level: config.logLevel }) : opts.logger === false ? pino({ level: "silent" }) : opts.logger;
  // Read when scraped, by which time every part is built.
  const metrics = new Metrics({
    venues: (): readonly Venue[] => venues,
    openOrders: async () => (await store.ordersInStatus(OPEN_STATUSES)).length,
    inFlight: () => orders.inFlight.size,
  });
  const kill = killSwitch(config.killAt);
  const checkpoint = (step: Checkpoint, orderId: string) => {
    metrics.orderStep(step, orderId);
    kill?.(step);
  };
  const fundsCheckpoint = (step: FundsCheckpoint) => kill?.(step);
  privateDir(config.dataDir);
  const master = await loadMasterKey({ env: process.env.MASTER_KEY, dataDir: config.dataDir });

  const store = await openStore(config, {
    clock,
    onIdleError: (err) => log.warn({ err }, "an idle database connection failed; the pool opens another"),
    checkpointer: { onFailure: (err) => log.error({ err }, "the SQLite checkpointer stopped; commits checkpoint the WAL themselves again") },
  });
  await store.migrate();
  const redis =
    config.redisUrl === undefined
      ? undefined
      : await openRedis(config.redisUrl, { prefix: config.redisPrefix, onError: (err) => log.warn({ err }, "the Redis connection failed; reconnecting") });
  const replay = redis ? redisReplayCache(redis, clock) : storeReplayCache(store);

  const devChain = config.chainRpcUrl
    ? undefined
    : await startDevChain({
        dataDir: join(config.dataDir, "chain"),
        onSnapshotError: (err) => log.warn({ err }, "a snapshot of the dev chain failed; its journal keeps the batches since the last one, which the next start replays"),
      });
  const withdrawDevChain = devChain && announceDevChain(join(config.dataDir, "chain"), devChain.rpcUrl);
  // The dev chain's id marks a chain of test USDC: the embedded one, or one run apart (`crossfill chain`, the fault suite's).
  const faucet = devChain !== undefined || (await chainIdAt(config.chainRpcUrl!, config.chainRpcTimeoutMs)) === toHex(DEV_CHAIN_ID);
  const confirmations = config.depositConfirmations ?? (faucet ? 0 : 12);
  const vault = await openEvmVault({
    rpcUrl: config.chainRpcUrl ?? devChain!.rpcUrl,
    operatorKey: config.operatorPrivateKey ?? devChain!.operatorKey,
    store,
    faucet,
    confirmations,
    devChain,
    rpcTimeoutMs: config.chainRpcTimeoutMs,
    logRangeBlocks: config.chainLogRangeBlocks,
    contracts: contractsFromEnv(process.env),
    txObserver: {
      transaction: (label, seconds, outcome) => metrics.chainTransaction(label, seconds, outcome),
      batch: (size, seconds) => metrics.chainBatch(size, seconds),
      calls: (count) => metrics.chainCalls(count),
    },
  });
  const chain = vault.info();

  const catalog = await loadCatalog(store);
  const venueSetup = await startConfiguredVenues(config, { catalog, clock, log, onSimLine: (line) => log.info({ line }, "venue simulators") });
  const venues: Venue[] = venueSetup.venues.map((v) => meterPlacements(v, metrics));
  const venueById = new Map(venues.map((v) => [v.id, v]));
  const board = new PriceBoard(catalog, venues, clock);

  const resolutions = new ResolutionService({
    store,
    vault,
    catalog,
    venues: new Set(venueById.keys()),
    // Only a venue of `venues` is asked.
    ask: (venue, venueMarketId) => venueById.get(venue)!.resolution(venueMarketId),
    tokenId: sotTokenId,
    pollMs: config.resolutionPollMs,
    confirmations,
    clock,
    log,
    checkpoint,
  });
  const finished = (order: { eventId: string }) => resolutions.orderFinished(order.eventId);
  // Renewed at every recovery tick: a lease outlives several of them.
  const leaseMs = Math.max(30_000, 3 * config.reconcileIntervalMs);
  const orders = new OrderService({
    store,
    vault,
    venues: venueById,
    event: (id) => catalog.get(id),
    quotes: (event, outcome, ahead) => venueQuotes(event, outcome, venues, clock.now(), ahead),
    plan,
    sellQuotes: (event, outcome, inventory, ahead) => sellQuotes(event, outcome, venues, clock.now(), inventory, ahead),
    planSell: plan,
    tokenId: sotTokenId,
    clock,
    newOrderId: () => `ord_${clock.now().toString(36)}${randomBytes(10).toString("hex")}`,
    limits: { maxOrder: config.maxOrder },
    log,
    childOrderTtlMs: config.childOrderTtlMs,
    expirySkewMs: config.expirySkewMs,
    checkpoint,
    instanceId: config.instanceId,
    leaseMs,
    finished,
  });
  // Leases are renewed from before the first recovery pass until the last pass has stopped: one at start-up
  // or at a stop that outlasted a lease would otherwise be claimed by another instance's recovery as well.
  const leased: [string, { renewLeases(): Promise<void> }][] = [["orders in flight", orders]];
  const renewal = setInterval(() => {
    for (const [what, holder] of leased) holder.renewLeases().catch((err: unknown) => log.error({ err }, `renewing the leases of ${what} failed`));
  }, config.reconcileIntervalMs);
  renewal.unref();
  const reconciler = new Reconciler(orders, { store, vault, venues: venueById, clock, log, checkpoint, finished, confirmations });
  const recovered = await reconciler.pass(0);
  metrics.reconciledOrders(recovered);
  if (recovered > 0) log.info({ recovered }, "finished orders interrupted by the last stop");
  // Decisions stored before this start apply before the first request: no order is taken on an ended event.
  await resolutions.pass();
  // A chain that fails now only delays the sweep: the timer below runs it again.
  const sweep = () => reconciler.sweepLocks().catch((err: unknown) => log.warn({ err }, "sweeping the chain for stranded locks failed; will retry"));
  await sweep();

  // Money in and out: withdrawals finished and deposits credited where a crash left them, then periodically.
  const withdrawals = new WithdrawalService({
    store,
    vault,
    clock,
    log,
    confirmations,
    newWithdrawalId: () => `wd_${clock.now().toString(36)}${randomBytes(10).toString("hex")}`,
    instanceId: config.instanceId,
    leaseMs,
    checkpoint: fundsCheckpoint,
  });
  const deposits = new DepositWatcher({
    store,
    vault,
    clock,
    log,
    confirmations,
    signerOf: (account) => {
      const enc = account.walletKeyEnc;
      return enc === null ? undefined : (digest) => sign({ hash: digest, privateKey: decryptSecret(master, enc) as Hex, to: "hex" });
    },
    instanceId: config.instanceId,
    leaseMs,
    checkpoint: fundsCheckpoint,
  });
  const moveFunds = () =>
    Promise.all([
      withdrawals.pass(config.reconcileIntervalMs).catch((err: unknown) => log.error({ err }, "withdrawal recovery pass failed")),
      deposits.pass().catch((err: unknown) => log.warn({ err }, "the deposit watcher's pass failed; will retry")),
    ]);
  leased.push(["withdrawals in flight", withdrawals], ["deposits being credited", deposits]);
  const recoveredWithdrawals = await withdrawals.pass(0);
  if (recoveredWithdrawals > 0) log.info({ recovered: recoveredWithdrawals }, "finished withdrawals interrupted by the last stop");
  await deposits.pass().catch((err: unknown) => log.warn({ err }, "the deposit watcher's first pass failed; will retry"));

  const keys = new KeyCache(store, master);
  const accounts = new AccountDirectory(store, vault, config.faucet, clock);
  const asset = (tokenId: string) => sotAssetId(chain.chainId, chain.contracts.sot, BigInt(tokenId));

  // Made once: every request authenticates with them.
  const authDeps: AuthDeps = { store, replay, keys, clock, onBackgroundError: (err) => log.warn({ err }, "recording key use failed") };
  // Each part is read, within a bound, by the cheapest read it answers: the latest block, an order by its key, a PING.
  // One read at a time, shared by the health requests that arrive while it runs: the route takes no key and no
  // limit, and a flood of it must not become a flood of JSON-RPC calls to the chain's provider.
  let partsRead: Promise<boolean[]> | undefined;
  const readParts = () =>
    (partsRead ??= Promise.all(
      [vault.blockNumber(), store.order(""), redis?.ping() ?? Promise.resolve()].map((read) => settlesBy(read, performance.now() + HEALTH_READ_MS).catch(() => false)),
    ).finally(() => (partsRead = undefined)));
  const deps: HttpDeps = {
    version: VERSION,
    trustProxy: config.trustProxy,
    requestTimeoutMs: config.requestTimeoutMs,
    authenticate: (req, needs) => authenticate(req, needs, authDeps),
    checkHeaders: (req, needs) => checkHeaders(req, needs, authDeps),
    authenticateCached: (req, needs) => authenticateCached(req, needs, authDeps),
    store,
    orders,
    withdrawals,
    account: (id) => accounts.get(id),
    accountView: async (account) => {
      const address = account.address as `0x${string}`;
      const positions = await store.positions(account.id);
      // Both reads go to the node in one JSON-RPC batch.
      const [balance, shares] = await Promise.all([vault.balanceOf(address), vault.sotBalances(positions.map((p) => ({ account: address, tokenId: BigInt(p.sotTokenId) })))]).catch(
        (err: unknown) => {
          log.warn({ err, account_id: account.id }, "reading the account's balances on chain failed");
          throw new AppError("chain_unavailable");
        },
      );
      const held = positions.map((p, i) => ({ ...p, sot: asset(p.sotTokenId), shares: shares[i]! }));
      const mark = (eventId: string, outcome: Outcome) => {
        const event = catalog.get(eventId);
        return event === undefined ? null : positionMark(event, outcome, () => markPrice(event, outcome, venues, clock.now()));
      };
      return {
        account_id: account.id,
        email: account.email,
        vault_address: account.address,
        // The account's own address: USDC sent there is credited by the deposit watcher, which needs its key.
        deposit_address: account.walletKeyEnc === null ? null : account.address,
        available_usdc: microToNumber(balance.available),
        locked_usdc: microToNumber(balance.locked),
        positions: positionViews(held, mark, (eventId) => catalog.get(eventId)?.status ?? null),
      };
    },
    markets: (q) =>
      board.memo(JSON.stringify(q), () => {
        const page = catalog.list(q, (l) => listedMarket(l, venues) !== undefined);
        return { data: page.data.map((e) => presentMarket(e, venues, board.prices(e, "YES", 1))), next_cursor: page.nextCursor };
      }),
    prices: (eventId, outcome, depth, side) => board.prices(catalog.event(eventId), outcome, depth, side),
    health: async () => {
      const states = venues.map((v) => ({ v, h: v.health(), d: v.describe() }));
      const [chainUp, storeUp, redisUp] = await readParts();
      const state = (up: boolean | undefined) => (up ? "up" : "down");
      return {
        status: chainUp && storeUp && redisUp && states.every(({ h }) => h.state === "up") ? "ok" : "degraded",
        version: VERSION,
        chain: { chain_id: chain.chainId, rpc_url: chain.rpcUrl, contracts: chain.contracts, state: state(chainUp) },
        store: { state: state(storeUp) },
        redis: redis ? { state: state(redisUp) } : null,
        venues: states.map(({ v, h, d }) => ({
          venue: v.id,
          adapter: d.adapter,
          // The origin only: a venue's URL (or a gateway's in front of it) may hold a key in its user, path or query, and this route needs no key.
          base_url: d.baseUrl === null ? null : new URL(d.baseUrl).origin,
          stream_state: d.stream?.state ?? null,
          state: h.state,
          latency_p50_ms: h.latency.p50Ms ?? null,
          latency_p99_ms: h.latency.p99Ms ?? null,
          book_age_ms: h.bookAgeMs ?? null,
        })),
      };
    },
    sotAssetId: asset,
    metrics,
    rateLimit: { perMinute: config.rateLimitPerMinute, redis },
    terminal: {
      clock,
      encryptWalletKey: (key) => encryptSecret(master, key),
      createApiKey: (input) => createApiKey(store, master, input),
      topUp: (account) => topUp(store, vault, account, config.faucet, clock),
      assetsDir: fileURLToPath(new URL("../dist/terminal", import.meta.url)),
    },
  };

  const app = await buildApp(deps, opts.logger === false ? false : log);
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;

  // The sweep reads the blocks since its last read (OpenHolds), so it runs at every tick with the rest of recovery.
  const timer = setInterval(() => {
    void sweep();
    void moveFunds();
    reconciler.pass(config.reconcileIntervalMs).then(
      (n) => metrics.reconciledOrders(n),
      (err: unknown) => log.error({ err }, "reconciliation pass failed"),
    );
    replay.purge(clock.now()).catch((err: unknown) => log.error({ err }, "replay cache purge failed"));
    resolutions.pass().catch((err: unknown) => log.error({ err }, "resolution pass failed"));
  }, config.reconcileIntervalMs);
  timer.unref();

  log.info({ url, chain_id: chain.chainId, rpc_url: chain.rpcUrl, venues: venues.map((v) => v.id) }, "crossfill is serving");
  return {
    url,
    app,
    store,
    vault,
    venues,
    orders,
    reconciler,
    resolutions,
    withdrawals,
    deposits,
    stop: async () => {
      clearInterval(timer);
      const deadline = performance.now() + config.shutdownGraceMs;
      // Fastify's close stops listening, answers 503 shutting_down to requests arriving on open connections, and
      // resolves once the requests in flight have been answered.
      if (!(await settlesBy(app.close(), deadline))) {
        log.warn({ orders_in_flight: [...orders.inFlight] }, "requests still in flight at the shutdown bound; recovery will finish their orders");
      }
      if (!(await settlesBy(reconciler.idle(), deadline))) log.warn("a reconciliation pass still running at the shutdown bound; the next one finishes its orders");
      if (!(await settlesBy(resolutions.idle(), deadline))) log.warn("a resolution pass still running at the shutdown bound; the next one finishes its redemptions");
      if (!(await settlesBy(Promise.all([withdrawals.idle(), deposits.idle()]), deadline))) log.warn("withdrawals or deposits still moving at the shutdown bound; the next start finishes them");
      clearInterval(renewal);
      board.stop();
      await venueSetup.stop();
      // The Vault's transactions of what was left above: a node that stopped answering would hold them for the
      // receipts' deadline, each read given up only after its retries.
      if (!(await settlesBy(vault.close(), deadline))) log.warn("Vault transactions still unanswered at the shutdown bound; recovery reads from the chain what became of them");
      withdrawDevChain?.();
      await devChain?.stop();
      await store.close();
      // A Redis that is gone cannot take a QUIT: the connection is dropped instead, and the stop goes on.
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** Whether the promise settled before `deadline` (performance.now() time); it is left running if not. */
async function settlesBy(p: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()))));
  try {
    return await Promise.race([p.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Serves until SIGTERM or SIGINT, then stops gracefully (Crossfill.stop) and exits 0, or 1 if the stop
 * failed. A second signal exits at once (128 + its number, as a shell reports it): what was in flight
 * is left to recovery. `npm start` and `crossfill serve` both run this.
 */
export async function serve(config: Config): Promise<void> {
  const log = pino({ level: config.logLevel });
  const server = await startCrossfill(config, { logger: log });
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, "second signal: exiting now; recovery will finish what was in flight");
      process.exit(128 + constants.signals[signal]);
    }
    stopping = true;
    log.info({ signal, grace_ms: config.shutdownGraceMs }, "stopping: no new requests; those in flight finish first");
    server.stop().then(
      () => {
        log.info("crossfill stopped");
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, "stopping crossfill failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // loadConfig throws a bad setting's sentence: called inside the promise, it is printed alone, not as an uncaught stack.
  Promise.resolve()
    .then(() => serve(loadConfig()))
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    });
}
