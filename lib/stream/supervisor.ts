import { performance } from 'node:perf_hooks';
import { openStreamChecked } from '../answer';
import { IpcamError } from '../errors/errors';
import type { DeviceClient, DeviceStream } from '../transport/client';
import { transportError } from '../transport/transport-error';
import { boundaryOf, MultipartParser, type MultipartPart } from '../cgi/multipart';

/**
 * What a stream follows of its device's reachability: its state now, and each change (with why it
 * went offline). Declared here, so that streams depend on nothing above them; lib/health's
 * `DeviceHealth` is one.
 */
export interface DeviceReachability {
  readonly state: string;
  subscribe(listener: (change: { readonly state: string; readonly reason?: string | undefined }) => void): () => void;
}

/** `waiting`: the device does not answer; the stream reconnects when its heartbeat finds it again. */
export type StreamState = 'connecting' | 'connected' | 'retrying' | 'waiting' | 'auth-failed' | 'unsupported' | 'stopped';

export interface StreamStateInfo {
  /** Connection attempts since the last stable connection (1 = first retry). */
  attempt?: number;
  /** When retrying: the wait before the next attempt (ms). */
  delay?: number;
  /** When retrying: when the next attempt is (ms since the epoch). */
  at?: number;
  error?: IpcamError;
}

export interface BackoffOptions {
  /** First retry delay (ms, default 1000); doubles per attempt, with jitter. */
  initial?: number;
  /** Longest delay (ms, default 60000). */
  max?: number;
  /**
   * A connection up this long resets the backoff and lets each kind of failure be reported again
   * (ms, default 10000). A connection that delivers a part resets the backoff at once.
   */
  stableAfter?: number;
  /** Wait after a 401 (ms, default 5 minutes): accounts lock after repeated failures. */
  authDelay?: number;
}

export interface SupervisorOptions {
  client: DeviceClient;
  /** Request target of the stream, e.g. `/cgi-bin/admin/input?monitor=1`. */
  path: string;
  onPart(part: MultipartPart): void;
  onState?(state: StreamState, info: StreamStateInfo): void;
  onWarning?(text: string): void;
  /**
   * A failure, once per kind (code, status and text) until the stream has stayed connected for
   * `stableAfter`: a device failing the same way on every retry fills no log.
   */
  onError?(error: IpcamError, state: StreamState): void;
  /**
   * For streams that send periodic data (detection levels): once the first byte has come, a
   * silence this long means the stream stalled, and it is reopened (ms). Default none: a quiet
   * stream (an input monitor while no input changes) is healthy; a dead peer is found by TCP
   * keepalive on the stream's socket.
   */
  stallTimeout?: number;
  backoff?: BackoffOptions;
  /**
   * The device's health, when something probes the device while it is offline (its heartbeat).
   * Then a stream does not retry on its own while the device is offline: it waits, and
   * reconnects as soon as the device answers again; and a device found offline (one that stops
   * answering with the stream still open) drops the stream to reconnect when it is back.
   */
  device?: DeviceReachability;
  /** Part size cap (default 1 MiB). */
  maxPartSize?: number;
  /**
   * Quiet time after which a complete-looking part is handed out (ms, default 10), for a part that
   * came in pieces; a part that came in one chunk is handed out at once, with no timer.
   */
  flushDelay?: number;
  /** Source of randomness for jitter (tests pin it). */
  random?: () => number;
}

/** Kinds of failure remembered between two stable connections: a bound, not a tuning value. */
const MAX_FAILURE_KINDS = 16;

/**
 * Lets one report of each kind of failure through until re-armed. A kind is the code, the HTTP
 * status and the text: the same device failing the same way gives the same text.
 */
export class FailureThrottle {
  private readonly seen = new Set<string>();

  admit(error: IpcamError): boolean {
    const kind = `${error.code} ${error.status ?? ''} ${error.message}`;
    if (this.seen.has(kind) || this.seen.size >= MAX_FAILURE_KINDS) return false;
    this.seen.add(kind);
    return true;
  }

  rearm(): void {
    this.seen.clear();
  }
}

/**
 * Keeps one multipart stream flowing while the device is reachable: each stream on its own
 * connection, reconnect with exponential backoff and jitter, stall detection where the device
 * sends periodic data, a long pause after a refused password, a stop for "not supported", one
 * error report per kind of failure. `stop()` releases socket, timers and listeners at once.
 */
export class StreamSupervisor {
  private state: StreamState = 'stopped';
  private attempt = 0;
  private stream: DeviceStream | undefined;
  private controller: AbortController | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stableTimer: NodeJS.Timeout | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  /** When the last chunk came (performance.now()), for the stall timer. */
  private lastChunkAt = 0;
  private running: Promise<void> | undefined;
  private unwatch: (() => void) | undefined;
  private readonly backoff: Required<BackoffOptions>;
  private readonly failures = new FailureThrottle();

  constructor(private readonly opts: SupervisorOptions) {
    this.backoff = { initial: 1000, max: 60_000, stableAfter: 10_000, authDelay: 5 * 60_000, ...opts.backoff };
  }

  get current(): StreamState {
    return this.state;
  }

  /** The stream's path without the query, for messages. */
  private get target(): string {
    return this.opts.path.split('?')[0] as string;
  }

  /** Opens the stream; after a refused password it tries again at once (the user asked for it). */
  start(): void {
    if (this.state !== 'stopped' && this.state !== 'unsupported' && this.state !== 'auth-failed') return;
    this.clearTimers();
    this.attempt = 0;
    this.watchDevice();
    this.connect();
  }

  async stop(): Promise<void> {
    this.setState('stopped', {});
    this.unwatch?.();
    this.unwatch = undefined;
    this.clearTimers();
    this.controller?.abort();
    this.controller = undefined;
    const stream = this.stream;
    this.stream = undefined;
    // This run's promise: a start() right after stop() puts the next run in `this.running`.
    const running = this.running;
    this.running = undefined;
    await stream?.close();
    await running?.catch(() => undefined);
  }

  /** Follows the device's health while the stream runs (from start() to stop()). */
  private watchDevice(): void {
    const device = this.opts.device;
    if (!device || this.unwatch) return;
    this.unwatch = device.subscribe((change) => {
      // Answering again (a refused password too: the stream then learns it and waits its own delay).
      if (this.state === 'waiting' && change.state !== 'offline') return this.connect();
      if (change.state !== 'offline') return;
      const reason = new IpcamError('ETIMEOUT', `${this.opts.client.label} does not answer: ${change.reason ?? 'no answer'}`);
      // Connecting: that attempt ends on its own and failed() sees the device offline.
      if (this.state === 'connected' || this.state === 'retrying') this.park(reason);
    });
  }

  /** Drops the connection (if any) and waits for the device to answer again. */
  private park(error: IpcamError): void {
    this.clearTimers();
    this.controller?.abort();
    this.controller = undefined;
    const stream = this.stream;
    this.stream = undefined;
    void stream?.close();
    this.setState('waiting', { attempt: this.attempt, error });
  }

  private connect(): void {
    this.retryTimer = undefined;
    this.setState('connecting', { attempt: this.attempt });
    const controller = new AbortController();
    this.controller = controller;
    this.running = this.run(controller.signal).catch((err: unknown) => this.failed(err, controller.signal));
  }

  private async run(signal: AbortSignal): Promise<void> {
    // No body timeout in the transport: silence is judged here (watchStall), where it may be healthy.
    // A 200 answered with an error line instead of a stream is a refusal (EDEVICE), never `connected`.
    const stream = await openStreamChecked(this.opts.client, { path: this.opts.path, signal, stallTimeout: 0 }, { what: `stream ${this.target}` });
    if (signal.aborted) return void (await stream.close());
    this.stream = stream;
    const boundary = boundaryOf(stream.contentType);
    if (!boundary) throw new IpcamError('EPARSE', `Expected a multipart stream, got "${stream.contentType || 'no content type'}"`);
    const parser = new MultipartParser(boundary, {
      onPart: (part) => {
        // The device delivers: this connection is worth a fresh backoff.
        this.attempt = 0;
        this.opts.onPart(part);
      },
      onWarning: (text) => this.opts.onWarning?.(text),
      maxPartSize: this.opts.maxPartSize,
    });
    this.setState('connected', {});
    this.stableTimer = setTimeout(() => {
      this.stableTimer = undefined;
      this.attempt = 0;
      this.failures.rearm();
    }, this.backoff.stableAfter);
    // One sink that parses each chunk as undici's parser hands it out: no Readable, no async
    // iterator, no promise per chunk; a fleet of detection streams gets a chunk per device per
    // second, for as long as it runs. The parser's caps bound what a fast device can make us hold.
    const body = stream.body;
    // Ends on an error, a stall or the stream's end: each is this run's failure.
    await new Promise<void>((resolve, reject) =>
      body.listen({
        onData: (chunk) => {
          // stop() (or a park) has released this run: a chunk already on its way is no event any
          // more. Asked of the field, not of `signal.aborted`, whose getter checks its receiver:
          // a few percent of a reading's CPU.
          if (this.stream !== stream) return;
          try {
            this.watchStall(stream);
            parser.write(chunk);
            // The chunk that completes a part hands it out now: a timer (a second wakeup) only for a part that came in pieces.
            if (parser.settle() === 'open') this.scheduleFlush(parser);
          } catch (err) {
            // A failure while handling a chunk ends this connection and is reported.
            body.destroy(err);
          }
        },
        onEnd: resolve,
        onError: reject,
      }),
    );
    if (signal.aborted) return;
    parser.flush();
    throw new IpcamError('ECONN', `${this.opts.client.label} ended the stream ${this.target}`);
  }

  /**
   * Armed by the first byte: a device that has not begun sending may be quiet by nature. A chunk
   * only notes its time; the timer, when it fires, waits again for what is left of the timeout
   * since the last chunk. One timer per timeout rather than timer work on every chunk of a
   * stream that sends every second.
   */
  private watchStall(stream: DeviceStream): void {
    const timeout = this.opts.stallTimeout ?? 0;
    if (timeout <= 0) return;
    this.lastChunkAt = performance.now();
    if (!this.stallTimer) this.armStall(stream, timeout, timeout);
  }

  private armStall(stream: DeviceStream, timeout: number, wait: number): void {
    this.stallTimer = setTimeout(() => {
      const quiet = performance.now() - this.lastChunkAt;
      if (quiet < timeout) return this.armStall(stream, timeout, timeout - quiet);
      this.stallTimer = undefined;
      stream.body.destroy(new IpcamError('ETIMEOUT', `No data from ${this.opts.client.label} (GET ${this.target}) for ${timeout / 1000} s: the stream stalled`));
    }, wait);
  }

  /**
   * One timer per connection, pushed back by each chunk (refresh() re-arms it after it has
   * fired): a timer made and dropped per chunk is garbage on every part of every stream.
   */
  private scheduleFlush(parser: MultipartParser): void {
    if (this.flushTimer) return void this.flushTimer.refresh();
    this.flushTimer = setTimeout(() => parser.flush(), this.opts.flushDelay ?? 10);
  }

  private async failed(err: unknown, signal: AbortSignal): Promise<void> {
    // Stopped: stop() has released this run's stream and timers; those in place now may be the next run's.
    if (signal.aborted) return;
    this.clearTimers();
    const stream = this.stream;
    this.stream = undefined;
    await stream?.close();
    if (signal.aborted || this.state === 'stopped') return;
    // A stall (body timeout) or a reset while reading comes straight from undici.
    const client = this.opts.client;
    const error = transportError(err, { target: `${client.label} (GET ${this.target})` });
    if (error.code === 'EHTTP' && (error.status === 400 || error.status === 404)) {
      const unsupported = new IpcamError('EHTTP', `The stream ${this.target} is not supported by this device (${client.label}, HTTP ${error.status})`, { status: error.status });
      this.setState('unsupported', { error: unsupported });
      this.report(unsupported, 'unsupported');
      return;
    }
    this.attempt += 1;
    const auth = error.code === 'EAUTH';
    if (!auth && this.opts.device?.state === 'offline') {
      // Its heartbeat probes the device: one small request for every stream, not one attempt each.
      this.setState('waiting', { attempt: this.attempt, error });
      this.report(error, 'waiting');
      return;
    }
    const delay = auth ? this.backoff.authDelay : this.retryDelay();
    const state = auth ? 'auth-failed' : 'retrying';
    this.setState(state, { attempt: this.attempt, delay, at: Date.now() + delay, error });
    this.retryTimer = setTimeout(() => this.connect(), delay);
    this.report(error, state);
  }

  private report(error: IpcamError, state: StreamState): void {
    if (this.failures.admit(error)) this.opts.onError?.(error, state);
  }

  /** Exponential from `initial` to `max`; jitter takes up to a quarter off so that many nodes do not reconnect in step. */
  private retryDelay(): number {
    const base = Math.min(this.backoff.max, this.backoff.initial * 2 ** Math.min(this.attempt - 1, 30));
    return Math.round(Math.max(this.backoff.initial, base * (0.75 + 0.25 * (this.opts.random ?? Math.random)())));
  }

  private clearTimers(): void {
    for (const timer of [this.retryTimer, this.stableTimer, this.flushTimer, this.stallTimer]) if (timer) clearTimeout(timer);
    this.retryTimer = this.stableTimer = this.flushTimer = this.stallTimer = undefined;
  }

  private setState(state: StreamState, info: StreamStateInfo): void {
    this.state = state;
    this.opts.onState?.(state, info);
  }
}
