import type { Dispatcher } from 'undici';

/** An answer read whole: its head and its bytes (none for a body thrown away). */
export interface BufferedReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface BufferedLimits {
  /** Largest body kept; a larger one ends the exchange with `tooLarge()`. */
  maxBytes: number;
  tooLarge(): Error;
  /**
   * Bodies of these answers are read and thrown away, at most `discardBytes` of them: a longer
   * one drops the connection and the reply has an empty body (a 401's text is never needed).
   */
  discard?: (status: number) => boolean;
  discardBytes?: number;
  /** Each piece of a kept body as it arrives; what it throws ends the exchange there. */
  onChunk?: (chunk: Buffer) => void;
  /** Bytes of a kept body arrived, for the exchange's deadline. */
  onBytes?: (bytes: number) => void;
}

/**
 * One request/response exchange as undici's `dispatch()` runs it: the answer's bytes go from
 * undici's parser into a list, bounded, and `reply` settles once with all of it or the error that
 * ended it. No Readable, no promise per piece: a relay's answer is a few bytes, and the body
 * stream of undici's `request()` cost more than the rest of its reading, most of it on a cold path.
 */
export class BufferedAnswer implements Dispatcher.DispatchHandler {
  readonly reply: Promise<BufferedReply>;
  private settleReply: ((outcome: BufferedReply | Error) => void) | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: Record<string, string | string[] | undefined> = NO_HEADERS;
  private chunks: Buffer[] = [];
  private size = 0;
  private discarding = false;
  /** Why we dropped the exchange (handed to undici when it gives the controller, if it had not yet). */
  private dropped: Error | undefined;

  constructor(private limits: BufferedLimits) {
    this.reply = new Promise((resolve, reject) => {
      this.settleReply = (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome));
    });
  }

  /**
   * Ends the exchange with `reason` (made an Error if it is not one): `reply` rejects with it at
   * once, undici drops the connection. Nothing once the reply is settled: undici 7 must not be
   * told to abort a request it has completed.
   */
  abort(reason: unknown): void {
    if (this.settleReply === undefined) return;
    this.fail(reason instanceof Error ? reason : new Error(String(reason)));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Ended before its connection was there (a deadline during a slow connect).
    if (this.dropped) controller.abort(this.dropped);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>): void {
    // An informational answer (103) comes before the real one.
    if (status < 200) return;
    this.status = status;
    this.headers = headers;
    this.discarding = this.limits.discard?.(status) ?? false;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settleReply === undefined) return;
    this.size += chunk.length;
    if (this.discarding) {
      // Cut off, not failed: the reply goes on without the rest, and without the connection.
      if (this.size > (this.limits.discardBytes ?? 0)) {
        this.settle(undefined);
        this.drop(new Error('The answer was cut off'));
      }
      return;
    }
    this.limits.onBytes?.(chunk.length);
    if (this.size > this.limits.maxBytes) return this.fail(this.limits.tooLarge());
    if (this.limits.onChunk) {
      try {
        this.limits.onChunk(chunk);
      } catch (err) {
        return this.abort(err);
      }
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.settle(undefined);
    this.controller = undefined;
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.settle(err);
    this.controller = undefined;
  }

  private fail(err: Error): void {
    this.settle(err);
    this.drop(err);
  }

  private drop(err: Error): void {
    if (this.dropped) return;
    this.dropped = err;
    const controller = this.controller;
    this.controller = undefined;
    controller?.abort(err);
  }

  /** Settles the reply once: with what came (`outcome` undefined) or the error that ended it. */
  private settle(outcome: Error | undefined): void {
    const settle = this.settleReply;
    if (settle === undefined) return;
    this.settleReply = undefined;
    const reply = outcome ?? { status: this.status, headers: this.headers, body: this.discarding ? EMPTY : this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.size) };
    // Let go of the answer and the caller's limits (closures over its call) at once: undici may
    // hold this handler a while after the exchange, and with it whatever it still points to.
    this.chunks = [];
    this.headers = NO_HEADERS;
    this.limits = SETTLED;
    settle(reply);
  }
}

const EMPTY = Buffer.alloc(0);
const NO_HEADERS: Record<string, string | string[] | undefined> = Object.freeze({});
const SETTLED: BufferedLimits = Object.freeze({ maxBytes: 0, tooLarge: () => new Error('The answer was read already') });
