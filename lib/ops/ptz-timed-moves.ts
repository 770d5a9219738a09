import { IpcamError } from '../errors/errors';
import { checkWhole, int, isBlank, withDefault } from '../input/params';
import type { DeviceClient } from '../transport/client';

/** Longest timed move (ms). */
export const MAX_DURATION = 600_000;
/** A PTZ node's Duration setting (ms): above 0 a move is followed by its Stop; 0, the default, sends no Stop. */
export const DURATION_SETTING = withDefault(int({ min: 0, max: MAX_DURATION }), 0);

/** Sends the Stop of one moving camera, on `via` (the mover's client, or another one at close). */
export type StopSender = (via: DeviceClient) => Promise<void>;

/**
 * Timed moves, for both interfaces: each camera (a key: XML channel, CGI stream) has at most one
 * pending Stop; a command to the same camera replaces it; `close()` stops every camera this mover
 * set moving and has not stopped since. The interfaces only say what moves and how to stop.
 */
/**
 * A timed move's end as its sender waits for it: settled once the Stop has been answered (or
 * has failed), once another command has taken the camera over, or once close has stopped it.
 */
export interface MoveEnd {
  promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
  /** True when someone waits: a failed Stop is then theirs to report, not onStopError's. */
  awaited: boolean;
}

function moveEnd(): MoveEnd {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  // Nobody may be waiting: an unawaited failure is onStopError's, not an unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject, awaited: false };
}

/** How a sender waits for its command: `untilEnded` waits for a timed move's Stop to be answered. */
export interface MoveOptions {
  untilEnded?: boolean;
}

export class TimedMoves {
  /** The pending Stop of each camera key, and the end of the move it stops. */
  private readonly pendingStops = new Map<string, { timer: NodeJS.Timeout; end: MoveEnd }>();
  /** Ends of timed moves whose Stop close sends (their timer cleared by close). */
  private readonly closingEnds = new Map<string, MoveEnd>();
  /** Cameras this mover set moving and has not stopped since, with how to stop each. */
  private readonly moving = new Map<string, StopSender>();
  /** Commands on their way to the device: close waits for them, so a Stop never overtakes a move. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;
  /** The last command sent to each camera key (a count): an answer to an older one comes late. */
  private readonly latest = new Map<string, number>();
  private sent = 0;

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
    for (const [key, pending] of [...this.pendingStops]) {
      clearTimeout(pending.timer);
      this.pendingStops.delete(key);
      this.closingEnds.set(key, pending.end);
    }
    await Promise.all([...this.moving].map(([key, stop]) => this.stop(key, stop, via).catch(this.onStopError)));
    // A sender still waiting for its move's end hears that the node closed (the camera stopped
    // above, or its Stop failed and was reported): the wait never outlives close.
    for (const end of this.closingEnds.values()) end.reject(new IpcamError('ECONN', 'The PTZ node closed during the timed move: the camera was sent its Stop'));
    this.closingEnds.clear();
  }

  /**
   * Sends a command to the camera of `key`: its pending Stop no longer applies; `stop` says how
   * to stop the move it starts (undefined: it leaves the camera still), `duration` when (0 =
   * never). The camera counts as moving from the moment the command leaves: a command that
   * fails or is aborted on its way may still have reached the camera, and close stops it then.
   */
  protected async command<T>(key: string, stop: StopSender | undefined, duration: number, send: () => Promise<T>): Promise<{ result: T; end: MoveEnd | undefined }> {
    // After close nothing moves: a move whose lookups (caps, a preset's id) were still on their
    // way when the node closed is not sent, so no camera is left moving that close did not stop.
    if (this.closed) throw new IpcamError('ECONN', 'The PTZ node is closing: the command was not sent');
    this.cancelPendingStop(key);
    if (stop) this.moving.set(key, stop);
    const number = (this.sent = (this.sent + 1) % Number.MAX_SAFE_INTEGER);
    this.latest.set(key, number);
    const sending = send();
    this.inFlight.add(sending);
    try {
      const result = await sending;
      // A newer command to the same camera went out while this one was on its way: the camera
      // is that one's now, and this move's Stop must not come after it.
      if (this.latest.get(key) !== number) return { result, end: undefined };
      return { result, end: this.settle(key, stop, duration) };
    } finally {
      this.inFlight.delete(sending);
      this.notifyIfIdle();
    }
  }

  /**
   * Waits, when asked to, for the end of a timed move `command` started: outside `track`, so
   * close never waits for a move's duration (it ends the move itself, and this wait with it).
   * A failed Stop is the sender's error then (the camera may still move).
   */
  protected async untilEnded(end: MoveEnd | undefined, options: MoveOptions): Promise<void> {
    if (!options.untilEnded || end === undefined) return;
    end.awaited = true;
    await end.promise;
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

  /** Another command takes the camera of `key` over: the pending Stop no longer applies, and the move it would end has ended. */
  private cancelPendingStop(key: string): void {
    const pending = this.pendingStops.get(key);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pendingStops.delete(key);
    pending.end.resolve();
  }

  /** After the device accepted a command to the camera of `key`: the end of the timed move it started, if any. */
  private settle(key: string, stop: StopSender | undefined, duration: number): MoveEnd | undefined {
    if (!stop) {
      this.moving.delete(key);
      return undefined;
    }
    if (duration <= 0) return undefined;
    const end = moveEnd();
    if (this.closed) {
      // Close came while this move was on its way and waits for it: close sends its Stop and
      // ends this wait with ECONN, as for a move already under way (not as if it had ended).
      this.closingEnds.set(key, end);
      return end;
    }
    const timer = setTimeout(() => {
      this.pendingStops.delete(key);
      this.stop(key, stop, this.client).then(end.resolve, (err: unknown) => {
        if (end.awaited) end.reject(err);
        else this.onStopError(err);
      });
    }, duration);
    this.pendingStops.set(key, { timer, end });
    return end;
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
