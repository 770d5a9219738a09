/**
 * The bounds of the bridge: what a broker full of strangers can make it do is limited here, by
 * count and by time, whatever the rate of messages.
 */
import { performance } from 'node:perf_hooks';

/** At most `rate` a second, `burst` at once. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.rate);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** Kinds told apart at most: a bound, beyond it the others share one. */
const MAX_KINDS = 32;

/**
 * Lets one report per kind through per `interval` and counts the others, with no timer: the
 * errors of what Home Assistant asks for (a refused relay command) reach the flow once a minute
 * per kind, however often they are asked. Warnings use lib/events/throttle's WarningThrottle.
 */
export class KindThrottle {
  private readonly kinds = new Map<string, { at: number; held: number }>();

  constructor(
    private readonly interval = 60_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The number held back since the last report of this kind, when this one may go out; else undefined. */
  admit(kind: string): number | undefined {
    const key = this.kinds.has(kind) || this.kinds.size < MAX_KINDS ? kind : '*';
    const entry = this.kinds.get(key);
    const t = this.now();
    if (entry && t - entry.at < this.interval) {
      entry.held++;
      return undefined;
    }
    this.kinds.set(key, { at: t, held: 0 });
    return entry?.held ?? 0;
  }
}

export interface PacedQueueOptions<T> {
  /** Least time between the starts of two items (ms). */
  interval: number;
  /** Items waiting at most; beyond, `push` refuses. */
  max: number;
  run(item: T): Promise<void>;
}

/**
 * Runs items one at a time, at most one per `interval`, up to `max` waiting: the pace of the
 * plate changes Home Assistant may ask for.
 */
export class PacedQueue<T> {
  private readonly waiting: T[] = [];
  private running = false;
  private lastStart = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly opts: PacedQueueOptions<T>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.waiting.length;
  }

  /** No room for another item. */
  get full(): boolean {
    return this.closed || this.waiting.length >= this.opts.max;
  }

  /** False when the queue is full (or closed): the item is dropped. */
  push(item: T): boolean {
    if (this.closed || this.waiting.length >= this.opts.max) return false;
    this.waiting.push(item);
    this.next();
    return true;
  }

  close(): void {
    this.closed = true;
    this.waiting.length = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private next(): void {
    if (this.running || this.timer !== undefined || this.closed || this.waiting.length === 0) return;
    const wait = this.lastStart + this.opts.interval - this.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.next();
      }, wait);
      return;
    }
    const item = this.waiting.shift() as T;
    this.running = true;
    this.lastStart = this.now();
    void this.opts
      .run(item)
      .catch(() => undefined)
      .finally(() => {
        this.running = false;
        this.next();
      });
  }
}
