/**
 * The bytes of answers that are the same object until the books they show tick (PriceBoard): each object
 * serialised once, as a Buffer, or every answer would encode its text to UTF-8 again. Shared by the
 * routes that make them and the fast path that sends them (fast-prices.ts).
 */
export class AnswerBytes {
  private readonly bytes = new WeakMap<object, Buffer>();

  /** The bytes made for this object, if they have been. */
  of(value: object): Buffer | undefined {
    return this.bytes.get(value);
  }

  /** The bytes for this object, serialised the first time. */
  make(value: object, serialize: (value: object) => string): Buffer {
    let body = this.bytes.get(value);
    if (body === undefined) this.bytes.set(value, (body = Buffer.from(serialize(value))));
    return body;
  }
}
