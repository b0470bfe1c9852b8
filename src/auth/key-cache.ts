import type { ApiKeyRecord, Store } from "../store/store.ts";
import { decryptSecret } from "./secrets.ts";
import { BoundedMap } from "../domain/bounded-map.ts";

/**
 * Verified API keys by apiKey, with their decrypted secrets, so that an authenticated read reads no
 * database. Every entry is dropped as soon as the store's apiKeysVersion() moves (a revocation by this
 * process, another process on the same SQLite file, or another instance on the same PostgreSQL), and
 * nothing is kept while it is unknown. That move is seen a moment after the revocation commits, so a
 * fund-moving request reads its key afresh (`record(apiKey, true)`). Unknown keys are not remembered, so
 * a key made anywhere works at once. Bounded: the oldest entry goes first.
 */
export class KeyCache {
  private readonly entries: BoundedMap<string, { record: ApiKeyRecord; secret: string | undefined }>;
  private version: string | undefined;

  constructor(
    private readonly store: Pick<Store, "apiKey" | "apiKeysVersion">,
    private readonly master: Buffer,
    capacity = 10_000,
  ) {
    this.entries = new BoundedMap(capacity);
  }

  /** The key's record if it is cached and current: no promise, no database. */
  cached(apiKey: string): ApiKeyRecord | undefined {
    this.current();
    return this.entries.get(apiKey)?.record;
  }

  /**
   * The key's record, from the cache unless `fresh`: a fund-moving request reads it from the store, since another
   * instance's revocation (or another process's) reaches the cache only a moment after it commits.
   */
  async record(apiKey: string, fresh = false): Promise<ApiKeyRecord | undefined> {
    const version = this.current();
    const hit = this.entries.get(apiKey);
    if (hit !== undefined && !fresh) return hit.record;
    const record = await this.store.apiKey(apiKey);
    // Kept only if no change was noticed meanwhile: the record read may predate it.
    if (record !== undefined && version !== undefined && this.current() === version) {
      this.entries.set(apiKey, { record, secret: hit?.record.secretEnc === record.secretEnc ? hit.secret : undefined });
    }
    return record;
  }

  /** The key's secret, decrypted once per cached record. */
  secretOf(record: ApiKeyRecord): string {
    const entry = this.entries.get(record.apiKey);
    if (entry?.record !== record) return decryptSecret(this.master, record.secretEnc);
    entry.secret ??= decryptSecret(this.master, record.secretEnc);
    return entry.secret;
  }

  private current(): string | undefined {
    const version = this.store.apiKeysVersion();
    if (version === undefined || version !== this.version) {
      this.entries.clear();
      this.version = version;
    }
    return version;
  }

  get size(): number {
    return this.entries.size;
  }
}
