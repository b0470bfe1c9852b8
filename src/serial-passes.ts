/**
 * A background pass (resolutions, deposits) run one at a time. A pass asked for while one runs follows
 * it, shared by everyone who asks meanwhile: the running pass may have read its inputs before the caller
 * changed them (stored a decision, sent a deposit), and the caller's pass must see the change.
 */
export class SerialPasses<T> {
  private running: Promise<T> | undefined;
  private next: Promise<T> | undefined;

  constructor(private readonly run: () => Promise<T>) {}

  /** A pass that begins after this call; resolves to what it returned. */
  pass(): Promise<T> {
    if (this.running === undefined) {
      this.running = this.run().finally(() => (this.running = undefined));
      return this.running;
    }
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.pass();
      });
    return this.next;
  }

  /** Resolves once no pass runs or waits to: what shutdown awaits. */
  async idle(): Promise<void> {
    for (let p = this.next ?? this.running; p !== undefined; p = this.next ?? this.running) await p.catch(() => undefined);
  }
}
