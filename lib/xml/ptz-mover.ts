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
  private pendingStop: { timer: NodeJS.Timeout; channel: number } | undefined;
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
    this.cancelPendingStop();
    await ptzControl(this.client, action, speed, channel, signal);
    if (action === 'Stop') {
      this.moving.delete(channel);
      return { action, ok: true };
    }
    this.moving.add(channel);
    if (duration > 0 && !this.closed) {
      const timer = setTimeout(() => {
        this.pendingStop = undefined;
        void this.stop(channel, speed).catch(this.onStopError);
      }, duration);
      this.pendingStop = { timer, channel };
    }
    return { action, ok: true };
  }

  /** Stops what this mover set moving; pending timers are cleared. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelPendingStop();
    await Promise.all([...this.moving].map((channel) => this.stop(channel).catch(this.onStopError)));
  }

  private async stop(channel: number, speed?: number): Promise<void> {
    const range = await speedRange(this.client, channel);
    await ptzControl(this.client, 'Stop', speed ?? range.min, channel);
    this.moving.delete(channel);
  }

  private cancelPendingStop(): void {
    if (this.pendingStop) clearTimeout(this.pendingStop.timer);
    this.pendingStop = undefined;
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
