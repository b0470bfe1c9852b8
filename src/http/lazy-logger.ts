import type { FastifyBaseLogger } from "fastify";
import type { Bindings, ChildLoggerOptions } from "fastify/types/logger.js";

const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

// The logging methods, one per level, are put on the prototype below.
export interface LazyLogger extends Pick<FastifyBaseLogger, (typeof LEVELS)[number]> {}

/**
 * The server's logger as Fastify is given it: a child (Fastify makes one per request, carrying its
 * request_id) is made into a pino child only when it logs something. Most requests never log (requests
 * are not logged one by one), and a pino child per request, its bindings serialised, was a measurable
 * part of a cached read's cost.
 */
export class LazyLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  /** The logger itself, or (with bindings) a child of `parent` made when first used. */
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings?: Bindings,
    private readonly options?: ChildLoggerOptions,
  ) {
    if (bindings === undefined) this.made = parent;
  }

  /** The pino logger itself, made now if it was not yet. */
  logger(): FastifyBaseLogger {
    return (this.made ??= (this.parent instanceof LazyLogger ? this.parent.logger() : this.parent).child(this.bindings!, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.options?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return new LazyLogger(this, bindings, options);
  }
}

for (const level of LEVELS) {
  Object.defineProperty(LazyLogger.prototype, level, {
    value(this: LazyLogger, ...args: unknown[]) {
      (this.logger()[level] as (...args: unknown[]) => void)(...args);
    },
  });
}
