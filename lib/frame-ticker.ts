/**
 * The live view's frame schedule: one fetch per tick, shared by every viewer, and no fetch at
 * all while nobody watches. A dashboard widget registers each client that shows it as a viewer;
 * the first viewer starts the ticks (a frame at once, then one per interval), the last one
 * leaving stops them and aborts a fetch on its way. A tick that comes while the previous fetch
 * is still running is skipped: a slow device never has two snapshot requests of one widget.
 */
import { decimal, withDefault } from './params';

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

export interface FrameTickerOptions<F> {
  /** Frames per second (checked with checkFrameRate). */
  rate: number;
  /** Takes one frame; the signal aborts it when the last viewer leaves or the ticker closes. */
  fetch: (signal: AbortSignal) => Promise<F>;
  /** Every tick's outcome, once, for all viewers. */
  deliver: (result: FrameResult<F>) => void;
  maxViewers?: number;
  now?: () => number;
}

export class FrameTicker<F> {
  private readonly viewers = new Set<string>();
  private readonly maxViewers: number;
  private readonly now: () => number;
  private intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: AbortController | undefined;
  private paused = false;
  private closed = false;
  /** How many fetches were started (a test and a status read it). */
  fetches = 0;

  constructor(private readonly options: FrameTickerOptions<F>) {
    this.intervalMs = 1000 / checkFrameRate(options.rate);
    this.maxViewers = options.maxViewers ?? MAX_VIEWERS;
    this.now = options.now ?? Date.now;
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

  /** A new rate applies from the next tick on. */
  setRate(rate: number): void {
    this.intervalMs = 1000 / checkFrameRate(rate);
    if (this.timer) {
      this.stop();
      this.update();
    }
  }

  close(): void {
    this.closed = true;
    this.viewers.clear();
    this.stop();
  }

  private update(): void {
    const wanted = !this.closed && !this.paused && this.viewers.size > 0;
    if (wanted && !this.timer) {
      this.timer = setInterval(() => this.tick(), this.intervalMs);
      this.tick();
    } else if (!wanted && this.timer) {
      this.stop();
    }
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.inFlight?.abort();
    this.inFlight = undefined;
  }

  private tick(): void {
    if (this.inFlight) return;
    const controller = new AbortController();
    this.inFlight = controller;
    this.fetches += 1;
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
    this.options.deliver(result);
  }
}
