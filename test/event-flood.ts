/**
 * Senders that are not devices, for the event server's hostile tests: raw requests on their own
 * connections, connections opened by the hundred and held, and the server alone in a child
 * process (event-server-child.ts) to be measured and closed.
 */
import { strict as assert } from 'node:assert';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { EventServerOptions } from '../lib/events/server';
import type { ChildReport } from './event-server-child';
import { CAPTURES } from './helpers';

/** A real camera post (plate ABC1234), as captured. */
export const CAPTURE = readFileSync(join(CAPTURES, 'ipc-v1x', 'lpr.xml'));
export const CAPTURE_PLATE = 'ABC1234';

/** A request cut off in the middle of its headers. */
export const HALF_SENT = 'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml\r\nContent-Len';

export interface RawAnswer {
  /** HTTP status, 0 when the connection closed without an answer. */
  status: number;
  text: string;
}

/** One request on its own connection, read until the server closes it. */
export function rawRequest(port: number, head: string, body: Buffer | string = '', localAddress?: string): Promise<RawAnswer> {
  return new Promise((resolveAnswer) => {
    const socket = connect({ host: '127.0.0.1', port, ...(localAddress && { localAddress }) });
    let text = '';
    socket.setTimeout(15_000, () => socket.destroy());
    socket.on('connect', () => socket.end(Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body)])));
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolveAnswer({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0), text }));
  });
}

export function postHead(length: number, extra = ''): string {
  return `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml\r\nContent-Length: ${length}\r\nConnection: close\r\n${extra}\r\n`;
}

/** A post as a camera sends it on the connection it keeps: no `Connection: close`. */
export function keptAlivePost(body: Buffer | string): Buffer {
  return Buffer.concat([Buffer.from(postHead(Buffer.byteLength(body)).replace('Connection: close\r\n', ''), 'latin1'), Buffer.from(body)]);
}

export function rawPost(port: number, body: Buffer | string, localAddress?: string): Promise<RawAnswer> {
  return rawRequest(port, postHead(Buffer.byteLength(body)), body, localAddress);
}

/** Connections opened by the hundred, each bounded in time; those still open are destroyed by `destroyAll`. */
export class ConnectionFlood {
  readonly open = new Set<Socket>();
  /** What the server wrote on each connection before it closed it. `first` is written as latin1 (bytes as given). */
  readonly answers: string[] = [];
  /** Open connections on which the server has written nothing yet. */
  readonly unanswered = new Set<Socket>();
  opened = 0;

  async connect(port: number, count: number, options: { localAddress?: string; first?: string | Buffer } = {}, batch = 200): Promise<void> {
    for (let done = 0; done < count; done += batch) {
      await Promise.all(Array.from({ length: Math.min(batch, count - done) }, () => this.one(port, options)));
    }
  }

  destroyAll(): void {
    for (const socket of this.open) socket.destroy();
    this.open.clear();
    this.unanswered.clear();
  }

  private one(port: number, { localAddress, first }: { localAddress?: string; first?: string | Buffer }): Promise<void> {
    return new Promise((settle) => {
      const socket = connect({ host: '127.0.0.1', port, ...(localAddress && { localAddress }) });
      let text = '';
      socket.setTimeout(5_000, () => socket.destroy());
      socket.once('connect', () => {
        socket.setTimeout(0);
        this.opened += 1;
        this.open.add(socket);
        this.unanswered.add(socket);
        if (typeof first === 'string') socket.write(first, 'latin1');
        else if (first) socket.write(first);
        settle();
      });
      socket.on('data', (d: Buffer) => {
        this.unanswered.delete(socket);
        text += d.toString('latin1');
      });
      socket.on('error', () => settle());
      socket.once('close', () => {
        this.open.delete(socket);
        this.unanswered.delete(socket);
        if (text !== '') this.answers.push(text);
        settle();
      });
    });
  }
}

/** An EventServer alone in a child process (event-server-child.ts): measured with its heap after GC, closed with `stop`. */
export class ServerChild {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(options: EventServerOptions = {}): Promise<ServerChild> {
    const script = resolve(__dirname, 'event-server-child.js');
    const child = fork(script, [JSON.stringify(options)], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    try {
      const [first] = (await Promise.race([once(child, 'message'), once(child, 'exit').then(() => assert.fail('the server process did not start'))])) as [{ port: number }];
      return new ServerChild(child, first.port);
    } catch (err) {
      child.kill();
      throw err;
    }
  }

  /** The server's report; `gc: false` skips the two GCs (its heap is then not a bound), for polling while timing matters. */
  measure({ gc = true }: { gc?: boolean } = {}): Promise<ChildReport> {
    const current = this.child;
    assert.ok(current.connected, 'the server process is gone');
    return new Promise((resolveReport, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`the server process exited (${String(code)})`));
      current.once('exit', onExit);
      current.once('message', (report: ChildReport) => {
        current.off('exit', onExit);
        resolveReport(report);
      });
      current.send(gc ? 'measure' : 'peek');
    });
  }

  /** Polls the server until `check` holds for its report, at most `limitMs`; the last report. */
  async until(what: string, check: (report: ChildReport) => boolean, limitMs = 10_000, options: { gc?: boolean } = {}): Promise<ChildReport> {
    const end = Date.now() + limitMs;
    let report = await this.measure(options);
    while (!check(report)) {
      if (Date.now() > end) assert.fail(`timed out waiting for ${what} (${JSON.stringify({ ...report, plates: undefined })})`);
      report = await this.measure(options);
    }
    return report;
  }

  /** Closes the server and waits for its process to end (killed after 5 s). */
  async stop(): Promise<void> {
    const current = this.child;
    if (current.exitCode !== null || current.signalCode !== null) return;
    const exited = once(current, 'exit');
    if (current.connected) current.send('close');
    const timer = setTimeout(() => current.kill(), 5_000);
    await exited;
    clearTimeout(timer);
  }
}
