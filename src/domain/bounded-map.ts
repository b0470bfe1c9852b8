/**
 * A Map of at most `capacity` entries: setting a key it does not hold, once full, lets go of the entry set
 * longest ago. For what a long-running process remembers per order, key, account or query, so that what it
 * remembers stays bounded however long it runs; a caller must do without an entry that was let go (ask the
 * store or the venue again), as it would after a restart.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly capacity: number) {
    super();
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError("capacity must be a positive integer");
  }

  override set(key: K, value: V): this {
    super.set(key, value);
    if (this.size > this.capacity) this.delete(this.keys().next().value!);
    return this;
  }
}
