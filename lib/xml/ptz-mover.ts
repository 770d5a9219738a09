import { inputError } from '../errors';
import type { DeviceClient } from '../transport/client';
import { checkChannel, checkSpeed, DEFAULT_SPEED_RANGE, ptzAction, ptzControl, speedRange, type PtzAction } from './ptz';

export interface PtzMove {
  action: unknown;
  speed?: unknown;
  /** ms after which a Stop follows; 0 = until Stop. */
  duration?: unknown;
  channel?: unknown;
}

/** Longest timed move (ms). */
export const MAX_DURATION = 600_000;

/** Sends the Stop of one moving camera, on `via` (the mover's client, or another one at close). */
export type StopSender = (via: DeviceClient) => Promise<void>;

/**
 * Timed moves, for both interfaces: each camera (a key: XML channel, CGI stream) has at most one
 * pending Stop; a command to the same camera replaces it; `close()` stops every camera this mover
 * set moving and has not stopped since. The interfaces only say what moves and how to stop.
 */
export class TimedMoves {
  /** The pending Stop of each camera key. */
  private readonly pendingStops = new Map<string, NodeJS.Timeout>();
  /** Cameras this mover set moving and has not stopped since, with how to stop each. */
  private readonly moving = new Map<string, StopSender>();
  private closed = false;

  constructor(
    protected readonly client: DeviceClient,
    private readonly onStopError: (err: unknown) => void = () => undefined,
  ) {}

  /** True while a camera this mover set moving has not been stopped. */
  get isMoving(): boolean {
    return this.moving.size > 0;
  }

  /**
   * Stops what this mover set moving; pending timers are cleared. `via` sends those Stops on
   * another client of the same device (when the shared one is being closed at the same time).
   */
  async close(via: DeviceClient = this.client): Promise<void> {
    this.closed = true;
    for (const key of [...this.pendingStops.keys()]) this.cancelPendingStop(key);
    await Promise.all([...this.moving].map(([key, stop]) => this.stop(key, stop, via).catch(this.onStopError)));
  }

  /** Before a command to the camera of `key` is sent: its pending Stop no longer applies. */
  protected cancelPendingStop(key: string): void {
    clearTimeout(this.pendingStops.get(key));
    this.pendingStops.delete(key);
  }

  /**
   * After the device accepted a command to the camera of `key`: `stop` says how to stop the
   * move it started (undefined: the camera is not left moving), `duration` when (0 = never).
   */
  protected settle(key: string, stop: StopSender | undefined, duration: number): void {
    if (!stop) {
      this.moving.delete(key);
      return;
    }
    this.moving.set(key, stop);
    if (duration > 0 && !this.closed) {
      const timer = setTimeout(() => {
        this.pendingStops.delete(key);
        void this.stop(key, stop, this.client).catch(this.onStopError);
      }, duration);
      this.pendingStops.set(key, timer);
    }
  }

  private async stop(key: string, stop: StopSender, via: DeviceClient): Promise<void> {
    await stop(via);
    // A newer move of the same camera keeps its own entry.
    if (this.moving.get(key) === stop) this.moving.delete(key);
  }
}

/** PtzControl (XML) with timed moves: a move with a duration is followed by exactly one Stop. */
export class PtzMover extends TimedMoves {
  async move(request: PtzMove, signal?: AbortSignal): Promise<{ action: PtzAction; ok: true }> {
    const action = ptzAction(request.action);
    const channel = checkChannel(request.channel);
    const duration = checkDuration(request.duration);
    const speedInput = request.speed === undefined || request.speed === '' ? undefined : request.speed;
    // The interface allows 1-8 (spec section 8): checked before any request; the device's caps may narrow it.
    if (speedInput !== undefined) checkSpeed(speedInput, DEFAULT_SPEED_RANGE);
    const range = await speedRange(this.client, channel);
    const speed = speedInput === undefined ? Math.min(range.max, Math.max(range.min, 4)) : checkSpeed(speedInput, range);
    const key = String(channel);
    this.cancelPendingStop(key);
    await ptzControl(this.client, action, speed, channel, signal);
    this.settle(key, action === 'Stop' ? undefined : (via) => ptzControl(via, 'Stop', speed, channel), duration);
    return { action, ok: true };
  }
}

/** A move's duration in ms: 0 (none given) to `MAX_DURATION`. */
export function checkDuration(value: unknown): number {
  if (value === undefined || value === null || value === '') return 0;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_DURATION) {
    throw inputError(`Duration must be whole ms from 0 to ${MAX_DURATION}, got ${JSON.stringify(value)}`);
  }
  return n;
}
