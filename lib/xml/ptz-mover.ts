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

/**
 * PtzControl with timed moves: a move with a duration is followed by exactly one Stop; a new
 * move replaces the pending Stop; `close()` stops a camera this mover set moving.
 */
export class PtzMover {
  /** The pending Stop of each channel (a move replaces the one of its own channel). */
  private readonly pendingStops = new Map<number, NodeJS.Timeout>();
  /** Channels this mover set moving and has not stopped since. */
  private readonly moving = new Set<number>();
  private closed = false;

  constructor(
    private readonly client: DeviceClient,
    private readonly onStopError: (err: unknown) => void = () => undefined,
  ) {}

  async move(request: PtzMove, signal?: AbortSignal): Promise<{ action: PtzAction; ok: true }> {
    const action = ptzAction(request.action);
    const channel = checkChannel(request.channel);
    const duration = checkDuration(request.duration);
    const speedInput = request.speed === undefined || request.speed === '' ? undefined : request.speed;
    // The interface allows 1-8 (spec section 8): checked before any request; the device's caps may narrow it.
    if (speedInput !== undefined) checkSpeed(speedInput, DEFAULT_SPEED_RANGE);
    const range = await speedRange(this.client, channel);
    const speed = speedInput === undefined ? Math.min(range.max, Math.max(range.min, 4)) : checkSpeed(speedInput, range);
    this.cancelPendingStop(channel);
    await ptzControl(this.client, action, speed, channel, signal);
    if (action === 'Stop') {
      this.moving.delete(channel);
      return { action, ok: true };
    }
    this.moving.add(channel);
    if (duration > 0 && !this.closed) {
      const timer = setTimeout(() => {
        this.pendingStops.delete(channel);
        void this.stop(channel, speed).catch(this.onStopError);
      }, duration);
      this.pendingStops.set(channel, timer);
    }
    return { action, ok: true };
  }

  /** True while a channel this mover set moving has not been stopped. */
  get isMoving(): boolean {
    return this.moving.size > 0;
  }

  /**
   * Stops what this mover set moving; pending timers are cleared. `via` sends those Stops on
   * another client of the same device (when the shared one is being closed at the same time).
   */
  async close(via: DeviceClient = this.client): Promise<void> {
    this.closed = true;
    for (const channel of [...this.pendingStops.keys()]) this.cancelPendingStop(channel);
    await Promise.all([...this.moving].map((channel) => this.stop(channel, undefined, via).catch(this.onStopError)));
  }

  private async stop(channel: number, speed?: number, via: DeviceClient = this.client): Promise<void> {
    const range = await speedRange(this.client, channel);
    await ptzControl(via, 'Stop', speed ?? range.min, channel);
    this.moving.delete(channel);
  }

  private cancelPendingStop(channel: number): void {
    clearTimeout(this.pendingStops.get(channel));
    this.pendingStops.delete(channel);
  }
}

function checkDuration(value: unknown): number {
  if (value === undefined || value === null || value === '') return 0;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 600_000) {
    throw inputError(`Duration must be whole ms from 0 to 600000, got ${JSON.stringify(value)}`);
  }
  return n;
}
