/**
 * A hostile camera over real sockets: its snapshot answers arrive as 200 with a length, then one
 * byte every `dripMs` for as long as the connection stays open; its relay (`output`) and I/O check
 * answer at once. It records when each request arrived and when each dripping answer's socket closed.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const DRIP_PATH = '/jpg/image.jpg';
export const OUTPUT_PATH = '/cgi-bin/admin/output';

export interface Drip {
  path: string;
  arrived: number;
  /** When its socket closed (the client gave up), undefined while it still drips. */
  closed?: number;
}

export interface Arrival {
  path: string;
  query: string;
  time: number;
}

export class DrippingDevice {
  readonly drips: Drip[] = [];
  readonly arrivals: Arrival[] = [];
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();

  /**
   * @param drips which requests get a dripping answer (default: snapshots).
   * @param dripMs between two bytes.
   */
  constructor(
    private readonly drips_: (path: string, query: string) => boolean = (path) => path === DRIP_PATH,
    private readonly dripMs = 250,
  ) {
    this.server = createServer((req, res) => this.answer(req, res));
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<number> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return (this.server.address() as AddressInfo).port;
  }

  /** Dripping answers whose socket is still open. */
  get dripping(): number {
    return this.drips.filter((d) => d.closed === undefined).length;
  }

  /** Connections open to the device, idle or not. */
  get connections(): number {
    return this.sockets.size;
  }

  /** Requests that reached a path (starts with). */
  reached(path: string): Arrival[] {
    return this.arrivals.filter((a) => a.path.startsWith(path));
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const [path = '/', query = ''] = (req.url ?? '/').split('?');
    this.arrivals.push({ path, query, time: Date.now() });
    if (this.drips_(path, query)) return this.drip(path, res);
    req.resume();
    const kind = /^\/cgi-bin\/admin\/(input|output)$/.exec(path)?.[1];
    if (kind && query.startsWith('check=')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(decodeURIComponent(query.slice('check='.length)).split(',').map((port) => `${kind}${port}=0\r\n`).join(''));
      return;
    }
    // Every other CGI (relay, PTZ, file writes, tests, firmware steps) is done at once.
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('OK\r\n');
  }

  private drip(path: string, res: ServerResponse): void {
    const drip: Drip = { path, arrived: Date.now() };
    this.drips.push(drip);
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(10 * 1024 * 1024) });
    res.write(Buffer.from([0xff]));
    const timer = setInterval(() => res.write(Buffer.from([0xd8])), this.dripMs);
    this.timers.add(timer);
    res.socket?.once('close', () => {
      clearInterval(timer);
      this.timers.delete(timer);
      drip.closed = Date.now();
    });
  }
}
