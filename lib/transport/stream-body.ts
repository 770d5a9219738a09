import type { Dispatcher } from 'undici';

/** Where a stream's body goes: each chunk as undici's parser hands it, then its end or its error (one of the two, once). */
export interface StreamSink {
  onData(chunk: Buffer): void;
  onEnd(): void;
  onError(err: Error): void;
}

export interface StreamHead {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * One GET of a stream as undici's `dispatch()` runs it: `head` settles with the answer's status
 * and headers, then the body goes chunk by chunk straight to one sink. No Readable in between:
 * its buffering, a nextTick and an event per chunk cost a detection reading more than the rest
 * of its path. A chunk that comes before a sink is held (one: the parser is paused at once and
 * resumed by `listen`); a sink handles each chunk synchronously, so nothing else is buffered.
 */
export class StreamBody implements Dispatcher.DispatchHandler {
  readonly head: Promise<StreamHead>;
  private settleHead: ((head: StreamHead | Error) => void) | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private sink: StreamSink | undefined;
  private held: Buffer[] = [];
  /** How the body ended (`true`: its end), when it did. */
  private outcome: true | Error | undefined;

  constructor() {
    this.head = new Promise((resolve, reject) => {
      this.settleHead = (head) => (head instanceof Error ? reject(head) : resolve(head));
    });
    // Who awaits the head sees its failure; one left unawaited (a close racing the opening) is no unhandled rejection.
    this.head.catch(() => undefined);
  }

  /** Sends every chunk to `sink` from now on (and what came before it); called once. */
  listen(sink: StreamSink): void {
    const before = this.outcome;
    this.sink = sink;
    const held = this.held;
    this.held = [];
    // A held chunk may end the body (the sink destroys it): settle() tells the sink then.
    for (const chunk of held) if (this.outcome === before) sink.onData(chunk);
    if (before === true) sink.onEnd();
    else if (before) sink.onError(before);
    else if (this.outcome === undefined) this.controller?.resume();
  }

  /** Ends the exchange with `reason` (an Error, or made one): the sink hears it at once, undici drops the connection. */
  destroy(reason: unknown): void {
    const err = reason instanceof Error ? reason : new Error(String(reason));
    this.settle(err);
    this.controller?.abort(err);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Destroyed before its connection was there (a close during a slow connect).
    if (this.outcome instanceof Error) controller.abort(this.outcome);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>): void {
    // An informational answer (103) comes before the real one.
    if (status < 200) return;
    this.settleHead?.({ status, headers });
    this.settleHead = undefined;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.outcome !== undefined) return;
    if (this.sink) return this.sink.onData(chunk);
    this.held.push(chunk);
    controller.pause();
  }

  onResponseEnd(): void {
    this.settle(true);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.settle(err);
  }

  private settle(outcome: true | Error): void {
    if (this.outcome !== undefined) return;
    this.outcome = outcome;
    this.settleHead?.(outcome === true ? new Error('The answer ended before its head') : outcome);
    this.settleHead = undefined;
    if (!this.sink) return;
    if (outcome === true) this.sink.onEnd();
    else this.sink.onError(outcome);
  }
}

/**
 * Reads a body to its end and throws it away, at most `limit` bytes (a 401's text, a refused
 * stream's answer): a longer one is cut off (and fails), as is one destroyed meanwhile (a deadline).
 */
export function drain(body: StreamBody, limit: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let size = 0;
    body.listen({
      onData: (chunk) => {
        size += chunk.length;
        if (size > limit) body.destroy(new Error(`The answer is longer than ${limit} bytes`));
      },
      onEnd: resolve,
      onError: reject,
    });
  });
}
