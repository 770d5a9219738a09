import { performance } from 'node:perf_hooks';

/**
 * Slowest transfer a healthy device is allowed, in bytes per second: 512 kbit/s, below a camera
 * on a weak radio or VPN link while flashing. An answer or upload slower than this on average is
 * treated as a device that drips.
 */
export const FLOOR_RATE = 64 * 1024;

/** Largest delay a Node timer holds (ms); a longer wait is armed again when it fires. */
const MAX_TIMER = 2 ** 31 - 1;

/**
 * The rule, written once: an exchange that moves `bytes` (body sent plus answer received) may
 * last the timeout (the device thinking, connecting, authentication round trips) plus the time
 * those bytes take at `FLOOR_RATE`.
 */
export function allowance(timeoutMs: number, bytes: number): number {
  return timeoutMs + (Math.max(0, bytes) / FLOOR_RATE) * 1000;
}

/**
 * The deadline of one whole exchange: authentication retries, the body sent and the answer read.
 * Undici's own timeouts are idle timeouts per chunk, so a device sending one byte every second
 * never trips them; this one counts from the start. It starts at `allowance(timeout, bytes to
 * send)` and each byte of the answer moves it on by its share at `FLOOR_RATE` (an answer of
 * unknown size may be long, but must keep that pace on average; the answer's byte budget bounds
 * it). It never moves past `latest` (a polling loop's own end). When it passes, `line` aborts,
 * which ends the exchange in flight (undici destroys its socket).
 */
export class Deadline {
  /** Aborts when the exchange runs out of time or the caller's signal aborts (see `AbortLine`). */
  readonly line = new AbortLine();
  private readonly started = performance.now();
  private end: number;
  private readonly cap: number;
  private timer: NodeJS.Timeout | undefined;
  private expiredFlag = false;
  /** The deadlines following the caller's signal, this one among them while it does (see `Followers`). */
  private following: Followers | undefined;
  /** Its neighbours in that list. */
  previous: Deadline | undefined;
  next: Deadline | undefined;
  /** How to end the exchange on the wire now (undici's dispatch takes no signal), until `clear()`. */
  private ending: ((reason: unknown) => void) | undefined;

  /**
   * @param timeoutMs the device timeout (or the call's).
   * @param sendBytes the size of the body to send.
   * @param latest a time (ms since epoch, `Date.now()`) the exchange must end by in any case.
   */
  constructor(timeoutMs: number, sendBytes: number, latest?: number) {
    this.cap = latest === undefined ? Infinity : this.started + (latest - Date.now());
    this.end = Math.min(this.cap, this.started + allowance(timeoutMs, sendBytes));
    this.arm();
  }

  /** True when the deadline (not the caller's signal) ended the exchange. */
  get expired(): boolean {
    return this.expiredFlag;
  }

  /** How long the exchange has been given so far, in whole seconds (for the error text). */
  get seconds(): number {
    return Math.max(1, Math.round((this.end - this.started) / 1000));
  }

  /** The caller's signal ends the exchange too, until `clear()`. */
  follow(signal: AbortSignal | undefined): void {
    if (!signal) return;
    if (signal.aborted) {
      this.abort(signal.reason);
      return;
    }
    this.following = followersOf(signal);
    this.following.add(this);
  }

  /** `end` ends the exchange on the wire from now on, when the deadline passes or the caller aborts (each attempt hands its own). */
  inFlight(end: (reason: unknown) => void): void {
    this.ending = end;
  }

  /** `bytes` of the answer arrived: they earn their time at the floor rate. */
  received(bytes: number): void {
    this.end = Math.min(this.cap, this.end + (bytes / FLOOR_RATE) * 1000);
  }

  /** Releases the timer, the caller's signal and the exchange; call once the exchange is over, whatever its end. */
  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.ending = undefined;
    this.unfollow();
  }

  private arm(): void {
    const wait = Math.min(MAX_TIMER, Math.max(0, this.end - performance.now()));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // Bytes that came meanwhile moved the end on: wait for the rest.
      if (performance.now() < this.end) return this.arm();
      this.expiredFlag = true;
      this.unfollow();
      this.abort(new DeadlineError());
    }, wait);
  }

  private unfollow(): void {
    this.following?.delete(this);
    this.following = undefined;
  }

  /** Ends the exchange with `reason` (the caller's abort, or the deadline passing), once. */
  abort(reason: unknown): void {
    if (this.line.aborted) return;
    this.line.abort(reason);
    this.ending?.(reason);
  }
}

/**
 * The deadlines of the exchanges that follow one caller's signal, with one listener on the signal
 * for all of them. A node hands every request the same signal (its close): an EventTarget
 * listener added and removed per exchange cost a relay pulse a tenth of its CPU, and a Set
 * reallocates its table as it empties and fills again on every request. A list through the
 * deadlines themselves allocates nothing; each exchange leaves it when it ends, so it holds only
 * exchanges in flight.
 */
class Followers {
  private first: Deadline | undefined;

  add(deadline: Deadline): void {
    deadline.previous = undefined;
    deadline.next = this.first;
    if (this.first) this.first.previous = deadline;
    this.first = deadline;
  }

  delete(deadline: Deadline): void {
    if (deadline.previous) deadline.previous.next = deadline.next;
    else if (this.first === deadline) this.first = deadline.next;
    if (deadline.next) deadline.next.previous = deadline.previous;
    deadline.previous = deadline.next = undefined;
  }

  /** Each deadline in flight aborts with `reason` (each leaves the list as it ends). */
  abortAll(reason: unknown): void {
    const all: Deadline[] = [];
    for (let d = this.first; d; d = d.next) all.push(d);
    for (const deadline of all) deadline.abort(reason);
  }
}

const followers = new WeakMap<AbortSignal, Followers>();

function followersOf(signal: AbortSignal): Followers {
  const known = followers.get(signal);
  if (known) return known;
  const made = new Followers();
  signal.addEventListener('abort', () => made.abortAll(signal.reason), { once: true });
  followers.set(signal, made);
  return made;
}

/**
 * The abort of one exchange: `aborted` and `reason`, and the one listener its exchange may have
 * while it waits for a connection. Not an EventTarget: its listener, added and removed on each
 * exchange, cost a relay pulse about half again the CPU of its whole request. Not an
 * EventEmitter either: one is made for every request, and only a wait for a connection listens.
 */
export class AbortLine {
  aborted = false;
  reason: unknown = undefined;
  private listener: (() => void) | undefined;

  /** `listener` runs once when the line aborts (it replaces any earlier one: an exchange waits once at a time). */
  whenAborted(listener: () => void): void {
    this.listener = listener;
  }

  /** `listener` no longer runs. */
  forget(listener: () => void): void {
    if (this.listener === listener) this.listener = undefined;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }
}

/** The abort reason of a deadline; the client maps it (and whatever undici makes of it) to ETIMEOUT. */
export class DeadlineError extends Error {
  override name = 'DeadlineError';
  readonly code = 'IPCAM_DEADLINE';
}
