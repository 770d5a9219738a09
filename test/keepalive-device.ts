/**
 * A fake device on raw sockets that keeps its connections alive the way embedded servers do
 * (HTTP/1.1, no `Connection: close`) and then closes them under the next request (field notes:
 * a few ms after an answer, without saying so). Every request head that arrives is counted with
 * its connection, answered or not, so a test can tell what was sent how often, and where.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';

/**
 * When a connection closes:
 * - `after`: 1 ms (or `delay`) after each answer, whatever comes meanwhile; whether the next
 *   request is sent before the close arrives is up to timing (the race as it happens);
 * - `reused`: when a second request arrives on it, unanswered (the race as it lands when it hits);
 * - `always`: when any request arrives on it, unanswered, even the first on a new connection.
 */
export type CloseMode = 'after' | 'reused' | 'always';

export interface Seen {
  /** Index of the connection it came on (0 = the first accepted). */
  connection: number;
  /** The request line, e.g. `GET /cgi-bin/admin/output?action=1%3A%2F HTTP/1.1`. */
  line: string;
  answered: boolean;
}

export interface KeepAliveOptions {
  mode: CloseMode;
  /** `after`: ms between an answer and the close (default 1). */
  delay?: number;
  /** Close with a reset (RST) instead of a FIN. */
  reset?: boolean;
  /** Written to an unanswered request before the close: the first bytes of an answer that never ends. */
  partial?: string;
  /** Connections from this index on read their requests and never answer nor close. */
  silentFrom?: number;
  /** Serve HTTPS with this key and certificate (a TLS close sends its close_notify first). */
  tls?: { key: string; cert: string };
  /** The body answered to a request line (default `OK`). */
  answer?: (line: string) => string;
  /** The first request on each connection is answered 401 with a Digest challenge of a new nonce (`stale=true`), whatever it carries. */
  challengeFirst?: boolean;
}

export class KeepAliveDevice {
  readonly seen: Seen[] = [];
  private readonly server: Server;
  private readonly sockets: Socket[] = [];

  constructor(private readonly opts: KeepAliveOptions) {
    this.server = opts.tls ? createTlsServer(opts.tls, (socket) => this.serve(socket)) : createServer((socket) => this.serve(socket));
  }

  async listen(): Promise<number> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return (this.server.address() as AddressInfo).port;
  }

  /** Requests whose line holds `part`. */
  count(part: string): number {
    return this.seen.filter((s) => s.line.includes(part)).length;
  }

  get connections(): number {
    return this.sockets.length;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket): void {
    const connection = this.sockets.length;
    this.sockets.push(socket);
    socket.on('error', () => undefined);
    let pending = '';
    let requests = 0;
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      for (let end = pending.indexOf('\r\n\r\n'); end !== -1; end = pending.indexOf('\r\n\r\n')) {
        const head = pending.slice(0, end);
        // Bodies (an upload, an XML document) are counted by their length and skipped.
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        pending = pending.slice(end + 4 + length);
        requests += 1;
        const line = head.split('\r\n', 1)[0] ?? '';
        const unanswered = this.opts.mode === 'always' || (this.opts.mode === 'reused' && requests > 1);
        const silent = connection >= (this.opts.silentFrom ?? Infinity);
        this.seen.push({ connection, line, answered: !unanswered && !silent });
        if (silent) continue;
        if (unanswered) {
          if (this.opts.partial !== undefined) socket.write(this.opts.partial);
          return this.end(socket);
        }
        const challenge = this.opts.challengeFirst === true && requests === 1;
        const body = challenge ? 'Unauthorized' : (this.opts.answer?.(line) ?? 'OK');
        const status = challenge ? `401 Unauthorized\r\nWWW-Authenticate: Digest realm="fake", qop="auth", nonce="n${connection}", stale=true` : '200 OK';
        socket.write(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        if (this.opts.mode === 'after') setTimeout(() => this.end(socket), this.opts.delay ?? 1);
      }
    });
  }

  private end(socket: Socket): void {
    if (socket.destroyed) return;
    if (this.opts.reset) socket.resetAndDestroy();
    else socket.destroy();
  }
}
