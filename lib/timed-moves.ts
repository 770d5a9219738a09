import { IpcamError } from './errors';
import { checkWhole, isBlank } from './params';
import type { DeviceClient } from './transport/client';

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
  /** Commands on their way to the device: close waits for them, so a Stop never overtakes a move. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  /**
   * @param onIdle called whenever the mover has no command on its way and no camera it set
   *   moving left unstopped (after a command, after a timed Stop): its owner may let it go then.
   */
  constructor(
    protected readonly client: DeviceClient,
    private readonly onStopError: (err: unknown) => void = () => undefined,
    private readonly onIdle: () => void = () => undefined,
  ) {}

  /** True while a camera this mover set moving has not been stopped. */
  get isMoving(): boolean {
    return this.moving.size > 0;
  }

  /** True with no command on its way and nothing left moving: dropping the mover loses nothing. */
  get isIdle(): boolean {
    return this.moving.size === 0 && this.inFlight.size === 0;
  }

  /**
   * Stops what this mover set moving, once the commands on their way have landed (each bounded
   * by its request timeout or abort); pending timers are cleared. `via` sends those Stops on
   * another client of the same device (when the shared one is being closed at the same time).
   */
  async close(via: DeviceClient = this.client): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.inFlight);
    for (const key of [...this.pendingStops.keys()]) this.cancelPendingStop(key);
    await Promise.all([...this.moving].map(([key, stop]) => this.stop(key, stop, via).catch(this.onStopError)));
  }

  /**
   * Sends a command to the camera of `key`: its pending Stop no longer applies; `stop` says how
   * to stop the move it starts (undefined: it leaves the camera still), `duration` when (0 =
   * never). The camera counts as moving from the moment the command leaves: a command that
   * fails or is aborted on its way may still have reached the camera, and close stops it then.
   */
  protected async command<T>(key: string, stop: StopSender | undefined, duration: number, send: () => Promise<T>): Promise<T> {
    // After close nothing moves: a move whose lookups (caps, a preset's id) were still on their
    // way when the node closed is not sent, so no camera is left moving that close did not stop.
    if (this.closed) throw new IpcamError('ECONN', 'The PTZ node is closing: the command was not sent');
    this.cancelPendingStop(key);
    if (stop) this.moving.set(key, stop);
    const sending = send();
    this.inFlight.add(sending);
    try {
      const result = await sending;
      this.settle(key, stop, duration);
      return result;
    } finally {
      this.inFlight.delete(sending);
      this.notifyIfIdle();
    }
  }

  /**
   * Runs the whole of one request of a flow (lookups, then the command) as work close waits for:
   * a move is on its way from its first request, not only from its command.
   */
  protected async track<T>(work: () => Promise<T>): Promise<T> {
    const running = work();
    this.inFlight.add(running);
    try {
      return await running;
    } finally {
      this.inFlight.delete(running);
      this.notifyIfIdle();
    }
  }

  private notifyIfIdle(): void {
    if (this.isIdle && !this.closed) this.onIdle();
  }

  private cancelPendingStop(key: string): void {
    clearTimeout(this.pendingStops.get(key));
    this.pendingStops.delete(key);
  }

  /** After the device accepted a command to the camera of `key`. */
  private settle(key: string, stop: StopSender | undefined, duration: number): void {
    if (!stop) {
      this.moving.delete(key);
      return;
    }
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
    this.notifyIfIdle();
  }
}

/** A move's duration in ms: 0 (none given) to `MAX_DURATION`. */
export function checkDuration(value: unknown): number {
  return isBlank(value) ? 0 : checkWhole(value, 'Duration (ms)', 0, MAX_DURATION);
}
