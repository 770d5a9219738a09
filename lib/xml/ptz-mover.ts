import { checkDuration, TimedMoves } from '../timed-moves';
import type { DeviceClient } from '../transport/client';
import { checkChannel, checkSpeed, DEFAULT_SPEED_RANGE, ptzAction, ptzControl, speedRange, type PtzAction } from './ptz';

export interface PtzMove {
  action: unknown;
  speed?: unknown;
  /** ms after which a Stop follows; 0 = until Stop. */
  duration?: unknown;
  channel?: unknown;
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
    const stop = action === 'Stop' ? undefined : (via: DeviceClient): Promise<void> => ptzControl(via, 'Stop', speed, channel);
    await this.command(key, stop, duration, () => ptzControl(this.client, action, speed, channel, signal));
    return { action, ok: true };
  }
}
