// Fastify makes a pino child logger (bound to the request id) for every request, and that was
// measurable in bench/api-throughput although a successful request writes nothing at the
// default level. This factory hands out a stand-in that makes the real child on first use,
// so request ids stay in every line that is written and quiet requests pay one small object.
import type { FastifyBaseLogger } from 'fastify';
import type { FastifyChildLoggerFactory } from 'fastify/types/logger.js';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

class LazyChild {
  private readonly parent: Logger;
  private readonly bindings: Bindings;
  private readonly opts: ChildLoggerOptions | undefined;
  private made: Logger | undefined;
  constructor(parent: Logger, bindings: Bindings, opts: ChildLoggerOptions | undefined) {
    this.parent = parent;
    this.bindings = bindings;
    this.opts = opts;
  }
  private real(): Logger {
    this.made ??= this.parent.child(this.bindings, this.opts);
    return this.made;
  }
  // A disabled level writes nothing, so it needs no child either.
  private log(level: Level, args: unknown[]): void {
    if (this.parent.isLevelEnabled(level)) (this.real()[level] as (...a: unknown[]) => void)(...args);
  }
  get level(): string {
    return (this.made ?? this.parent).level;
  }
  set level(l: string) {
    this.real().level = l;
  }
  child(b: Bindings, o?: ChildLoggerOptions): Logger {
    return this.real().child(b, o);
  }
  fatal(...a: unknown[]): void {
    this.log('fatal', a);
  }
  error(...a: unknown[]): void {
    this.log('error', a);
  }
  warn(...a: unknown[]): void {
    this.log('warn', a);
  }
  info(...a: unknown[]): void {
    this.log('info', a);
  }
  debug(...a: unknown[]): void {
    this.log('debug', a);
  }
  trace(...a: unknown[]): void {
    this.log('trace', a);
  }
  silent(): void {
    /* pino's no-op level */
  }
}

export const lazyChildLogger: FastifyChildLoggerFactory = (logger, bindings, opts) =>
  new LazyChild(logger as unknown as Logger, bindings, opts as ChildLoggerOptions) as unknown as FastifyBaseLogger;
