/**
 * The live view's frame schedule: one fetch per tick, shared by every viewer, and no fetch at
 * all while nobody watches. A dashboard widget registers each client that shows it as a viewer;
 * the first viewer starts the ticks (a frame at once, then one per interval), the last one
 * leaving stops them and aborts a fetch on its way. A tick that comes while the previous fetch
 * is still running is skipped: a slow device never has two snapshot requests of one widget.
 * Every view of one device shares its FramePacer: the device's rate holds across widgets, and
 * whatever pattern viewers come and go in (a view that comes back within an interval of its last
 * frame waits for the rest of it).
 */
import { decimal, withDefault } from '../input/params';

/** Frames per second of a live view: one every 5 s up to ten a second. */
export const FRAME_RATE = { min: 0.2, max: 10, default: 1 } as const;

/** The Rate setting of a live view (blank: the default), the editor's rule and the runtime's check. */
export const FRAME_RATE_SETTING = withDefault(decimal(FRAME_RATE), FRAME_RATE.default);

/** Most viewers one ticker keeps: each is a dashboard connection; more are refused, not stored. */
export const MAX_VIEWERS = 256;

/** A rate setting: blank is the default, anything else a number within FRAME_RATE. */
export function checkFrameRate(value: unknown): number {
  return FRAME_RATE_SETTING.parse(value, 'Rate (frames per second)');
}

/** One tick's outcome: a frame, or the error that took its place. */
export type FrameResult<F> = { ok: true; frame: F; at: number } | { ok: false; error: unknown; at: number };

/**
 * The snapshots of one device, shared by every live view of it (every widget, every viewer): at
 * most one fetch on its way at a time, and a new one no sooner than the shortest interval of the
 * views that share it after the last one started. However many widgets show the device and however
 * their viewers come and go, the device sees at most the highest of their frame rates. A frame one
 * view fetched is handed to the others of the same source, so two widgets of one camera cost the
 * camera one snapshot per tick, not two.
 */
export class FramePacer<F = unknown> {
  private lastStart = Number.NEGATIVE_INFINITY;
  private busy = false;
  private readonly members = new Map<FrameTicker<F>, { intervalMs: number; source: string }>();
  /** Views waiting for their turn, longest waiting first: each gets one before a view that fetched since. */
  private readonly queue: Array<FrameTicker<F>> = [];

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** How many views share this device. */
  get size(): number {
    return this.members.size;
  }

  join(member: FrameTicker<F>, intervalMs: number, source: string): void {
    this.members.set(member, { intervalMs, source });
  }

  leave(member: FrameTicker<F>): void {
    this.members.delete(member);
    this.dequeue(member);
  }

  /** `member` no longer waits (it stopped: nobody watches it, paused). */
  dequeue(member: FrameTicker<F>): void {
    const at = this.queue.indexOf(member);
    if (at >= 0) this.queue.splice(at, 1);
  }

  /**
   * ms until `member` may fetch (0: now). While the device is busy or was asked less than the
   * shortest interval ago, or another view waits longer, `member` waits its turn.
   */
  wait(member: FrameTicker<F>): number {
    const interval = this.shortestInterval();
    const left = this.busy ? interval : Math.max(0, Math.ceil(this.lastStart + interval - this.now()));
    const first = this.queue[0];
    if (left === 0 && (first === undefined || first === member)) return 0;
    if (!this.queue.includes(member)) this.queue.push(member);
    // Not first in line: asked again soon, after the view before it has had its turn.
    return left > 0 ? left : Math.max(10, Math.ceil(interval / 4));
  }

  begin(member: FrameTicker<F>): void {
    this.dequeue(member);
    this.busy = true;
    this.lastStart = this.now();
  }

  /** The fetch begun by `from` settled: its frame, if any, goes to the other views of its source. */
  end(from: FrameTicker<F>, result?: FrameResult<F>): void {
    this.busy = false;
    if (!result?.ok) return;
    const source = this.members.get(from)?.source;
    for (const [member, entry] of this.members) if (member !== from && entry.source === source) member.receive(result);
  }

  private shortestInterval(): number {
    let shortest = Number.POSITIVE_INFINITY;
    for (const { intervalMs } of this.members.values()) shortest = Math.min(shortest, intervalMs);
    return Number.isFinite(shortest) ? shortest : 0;
  }
}

const pacers = new Map<unknown, { pacer: FramePacer<never>; users: number }>();

/**
 * The pacer of the device `key` (any value that stands for one device, e.g. its config node),
 * shared by every caller with the same key until each has released it.
 */
export function pacerFor<F>(key: unknown): { pacer: FramePacer<F>; release: () => void } {
  let entry = pacers.get(key);
  if (!entry) {
    entry = { pacer: new FramePacer<never>(), users: 0 };
    pacers.set(key, entry);
  }
  entry.users += 1;
  const held = entry;
  let released = false;
  return {
    pacer: held.pacer as unknown as FramePacer<F>,
    release: () => {
      if (released) return;
      released = true;
      held.users -= 1;
      if (held.users === 0 && pacers.get(key) === held) pacers.delete(key);
    },
  };
}

/** Devices with a pacer now (a test reads it: a redeploy leaves none behind). */
export function pacerCount(): number {
  return pacers.size;
}

export interface FrameTickerOptions<F> {
  /** Frames per second (checked with checkFrameRate). */
  rate: number;
  /** Takes one frame; the signal aborts it when the last viewer leaves or the ticker closes. */
  fetch: (signal: AbortSignal) => Promise<F>;
  /** Every tick's outcome, once, for all viewers. */
  deliver: (result: FrameResult<F>) => void;
  /** The device's pacer, shared with its other views (default: one of its own). */
  pacer?: FramePacer<F>;
  /** What is fetched (e.g. the snapshot source): views of one device and source share frames. */
  source?: string;
  /**
   * Asked before each fetch: an error when the device must not be asked now (a refused password:
   * no login until the device answers again). It is delivered once, and no fetch is made while
   * it holds; the ticks go on and fetch again once it no longer does.
   */
  blocked?: () => unknown;
  maxViewers?: number;
  now?: () => number;
}

export class FrameTicker<F> {
  private readonly viewers = new Set<string>();
  private readonly maxViewers: number;
  private readonly now: () => number;
  private pacer: FramePacer<F>;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: AbortController | undefined;
  /** When this view's last fetch started, or a shared frame arrived: kept while nobody watches, so that coming back is no sooner. */
  private lastFrame = Number.NEGATIVE_INFINITY;
  private blockShown = false;
  private paused = false;
  private closed = false;
  /** How many fetches were started (a test and a status read it). */
  fetches = 0;

  constructor(private readonly options: FrameTickerOptions<F>) {
    this.intervalMs = 1000 / checkFrameRate(options.rate);
    this.maxViewers = options.maxViewers ?? MAX_VIEWERS;
    this.now = options.now ?? (() => Date.now());
    this.pacer = options.pacer ?? new FramePacer<F>(this.now);
    this.pacer.join(this, this.intervalMs, options.source ?? '');
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  get isRunning(): boolean {
    return this.timer !== undefined;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Adds a viewer; false when the ticker is closed or full (that viewer gets no frames). */
  watch(viewer: string): boolean {
    if (this.closed) return false;
    if (!this.viewers.has(viewer)) {
      if (this.viewers.size >= this.maxViewers) return false;
      this.viewers.add(viewer);
    }
    this.update();
    return true;
  }

  unwatch(viewer: string): void {
    this.viewers.delete(viewer);
    this.update();
  }

  pause(): void {
    this.paused = true;
    this.update();
  }

  resume(): void {
    this.paused = false;
    this.update();
  }

  close(): void {
    this.closed = true;
    this.viewers.clear();
    this.stop();
    this.pacer.leave(this);
  }

  /** The view shows another device now: a fetch of the old one on its way is dropped. */
  setPacer(pacer: FramePacer<F>): void {
    const running = this.timer !== undefined;
    this.stop();
    this.pacer.leave(this);
    this.pacer = pacer;
    this.pacer.join(this, this.intervalMs, this.options.source ?? '');
    this.lastFrame = Number.NEGATIVE_INFINITY;
    this.blockShown = false;
    if (running) this.update();
  }

  /** A frame another view of the same device and source fetched: this view's tick it is. */
  receive(result: FrameResult<F>): void {
    // A faster view of the same camera does not make this one faster than its own rate.
    if (!this.wanted || this.inFlight || this.now() - this.lastFrame < this.intervalMs * 0.9) return;
    this.lastFrame = this.now();
    this.blockShown = false;
    this.pacer.dequeue(this);
    this.options.deliver(result);
    this.schedule(this.intervalMs);
  }

  private get wanted(): boolean {
    return !this.closed && !this.paused && this.viewers.size > 0;
  }

  private update(): void {
    if (this.wanted && !this.timer) {
      // The first viewer after a pause gets a frame at once, unless this view had one less than an
      // interval ago: watching and unwatching in a loop never asks the device faster than the rate.
      const wait = Math.max(0, Math.ceil(this.lastFrame + this.intervalMs - this.now()));
      if (wait === 0) this.tick();
      else this.schedule(wait);
    } else if (!this.wanted && this.timer) {
      this.stop();
    }
  }

  private schedule(delay: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), delay);
  }

  private stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pacer.dequeue(this);
    const fetching = this.inFlight;
    this.inFlight = undefined;
    if (fetching) {
      fetching.abort();
      this.pacer.end(this);
    }
  }

  private tick(): void {
    this.timer = undefined;
    if (!this.wanted) return;
    // A slow device never has two snapshot requests of one view: the tick after it ends fetches.
    if (this.inFlight) return this.schedule(this.intervalMs);
    const block = this.options.blocked?.();
    if (block !== undefined) {
      if (!this.blockShown) {
        this.blockShown = true;
        this.options.deliver({ ok: false, error: block, at: this.now() });
      }
      return this.schedule(this.intervalMs);
    }
    const wait = this.pacer.wait(this);
    if (wait > 0) return this.schedule(wait);
    this.blockShown = false;
    const controller = new AbortController();
    this.inFlight = controller;
    this.lastFrame = this.now();
    this.fetches += 1;
    this.pacer.begin(this);
    this.schedule(this.intervalMs);
    let fetching: Promise<F>;
    try {
      fetching = this.options.fetch(controller.signal);
    } catch (err) {
      fetching = Promise.reject(err);
    }
    fetching.then(
      (frame) => this.settle(controller, { ok: true, frame, at: this.now() }),
      (error: unknown) => this.settle(controller, { ok: false, error, at: this.now() }),
    );
  }

  private settle(controller: AbortController, result: FrameResult<F>): void {
    // An aborted fetch (nobody left, closed) delivers nothing: no viewer waits for it.
    if (this.inFlight !== controller) return;
    this.inFlight = undefined;
    this.pacer.end(this, result);
    this.options.deliver(result);
  }
}
