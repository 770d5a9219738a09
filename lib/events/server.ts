import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BlockList, isIP, type AddressInfo, type Socket } from 'node:net';
import { IpcamError, inputError } from '../errors';
import { XML_NS } from '../xml/codec';
import { parseDevicePost, type DevicePost } from './parse';

export interface EventServerOptions {
  /** TCP port (default 5002; 0 picks a free one). */
  port?: number;
  /** Address to bind (default 0.0.0.0). */
  bind?: string;
  /** Path prefix posts must be under (default `/`). */
  path?: string;
  /** Largest body accepted (default 16 MiB); a larger one is answered 413. */
  maxBody?: number;
  /** Comma-separated IPs and CIDRs allowed to post; empty = any. */
  allow?: string;
  /** Basic credentials devices must send; none = no authentication. */
  username?: string;
  password?: string;
}

export type EventServerState = 'starting' | 'listening' | 'failed' | 'closed';

export interface ReceivedPost {
  /** Address of the sender (IPv4-mapped addresses as plain IPv4). */
  remoteAddress: string;
  receivedAt: number;
  posts: DevicePost[];
}

/** What a node subscribes with; every callback is optional. */
export interface EventSubscriber {
  onPost?(post: ReceivedPost): void;
  onWarning?(text: string): void;
  onState?(state: EventServerState, detail?: string): void;
}

/** Cameras expect this answer, fast, to every post (field notes). */
export const SUCCESS_DOCUMENT = `<?xml version="1.0" encoding="UTF-8"?>\n<config version="1.0" xmlns="${XML_NS}"><status>success</status></config>`;
const DEFAULT_MAX_BODY = 16 * 1024 * 1024;
/** Cameras post a keep-alive every ~30 s; closing idle sockets sooner makes them reconnect constantly. */
const KEEP_ALIVE_MS = 65_000;

interface Resolved {
  port: number;
  bind: string;
  path: string;
  maxBody: number;
  allow: BlockList | undefined;
  basic: Buffer | undefined;
}

/**
 * The HTTP listener devices post events to: answers each post at once, enforces the limits and
 * hands parsed posts to every subscriber. One per `ipcam-event-server` config node.
 */
export class EventServer {
  private readonly opts: Resolved;
  private readonly subscribers = new Set<EventSubscriber>();
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private current: EventServerState = 'starting';
  private detail: string | undefined;
  /** Last time each device (by mac, else ip) posted anything, keep-alives included. */
  readonly lastSeen = new Map<string, number>();

  constructor(options: EventServerOptions = {}) {
    this.opts = resolve(options);
  }

  get state(): EventServerState {
    return this.current;
  }

  /** Path prefix served, e.g. `/` or `/lpr`. */
  get path(): string {
    return this.opts.path;
  }

  get port(): number {
    const address = this.server?.address();
    return typeof address === 'object' && address ? (address as AddressInfo).port : this.opts.port;
  }

  /** Starts listening. A port in use or a refused bind is `ECONN` with a clear message, never a crash. */
  async start(): Promise<void> {
    const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: KEEP_ALIVE_MS + 5_000, requestTimeout: 0 }, (req, res) => this.handle(req, res));
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
    this.server = server;
    try {
      await new Promise<void>((resolveListen, reject) => {
        server.once('error', reject);
        server.listen(this.opts.port, this.opts.bind, () => {
          server.off('error', reject);
          resolveListen();
        });
      });
    } catch (err) {
      const error = listenError(err, this.opts);
      this.setState('failed', error.message);
      throw error;
    }
    server.on('error', (err) => this.setState('failed', err.message));
    this.setState('listening', `${this.opts.bind}:${this.port}`);
  }

  subscribe(subscriber: EventSubscriber): () => void {
    this.subscribers.add(subscriber);
    subscriber.onState?.(this.current, this.detail);
    return () => this.subscribers.delete(subscriber);
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.subscribers.clear();
    this.current = 'closed';
    if (!server) return;
    const closed = new Promise<void>((done) => server.close(() => done()));
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  private setState(state: EventServerState, detail?: string): void {
    this.current = state;
    this.detail = detail;
    for (const s of this.subscribers) s.onState?.(state, detail);
  }

  private warn(text: string): void {
    for (const s of this.subscribers) s.onWarning?.(text);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const remote = plainAddress(req.socket.remoteAddress ?? '');
    const refuse = (status: number, text: string, headers: Record<string, string> = {}): void => {
      this.warn(`${text} (from ${remote})`);
      res.writeHead(status, { 'content-type': 'text/plain', ...headers });
      res.end(`${text}\n`);
    };
    if (this.opts.allow && !this.opts.allow.check(remote, isIP(remote) === 6 ? 'ipv6' : 'ipv4')) {
      req.resume();
      return refuse(403, 'Sender not in the allow list');
    }
    if (this.opts.basic && !basicMatches(req.headers.authorization, this.opts.basic)) {
      req.resume();
      return refuse(401, 'Wrong or missing credentials', { 'www-authenticate': 'Basic realm="ipcam events"' });
    }
    if (!this.pathAllowed(req.url ?? '/')) {
      req.resume();
      return refuse(404, `Path ${pathOf(req.url ?? '/')} is not served here`);
    }
    if (req.method !== 'POST' && req.method !== 'PUT') {
      req.resume();
      return refuse(405, `Method ${req.method ?? ''} not allowed: devices post events`, { allow: 'POST' });
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.opts.maxBody) return this.tooLarge(req, res, refuse);

    const chunks: Buffer[] = [];
    let size = 0;
    let aborted = false;
    req.on('data', (chunk: Buffer) => {
      if (aborted) return;
      size += chunk.length;
      if (size > this.opts.maxBody) {
        aborted = true;
        chunks.length = 0;
        this.tooLarge(req, res, refuse);
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      if (aborted) return;
      const receivedAt = Date.now();
      const posts = this.parse(Buffer.concat(chunks, size), remote, receivedAt);
      if (typeof posts === 'string') return refuse(400, posts);
      res.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(SUCCESS_DOCUMENT) });
      res.end(SUCCESS_DOCUMENT);
      this.dispatch({ remoteAddress: remote, receivedAt, posts });
    });
  }

  /** 413 and close that connection: the rest of its body is not worth reading. */
  private tooLarge(req: IncomingMessage, res: ServerResponse, refuse: (status: number, text: string, headers?: Record<string, string>) => void): void {
    refuse(413, `Post larger than ${this.opts.maxBody} bytes refused`, { connection: 'close' });
    res.on('finish', () => req.socket.destroySoon());
  }

  /** The posts in a body, or the reason it is unreadable. */
  private parse(body: Buffer, remote: string, receivedAt: number): DevicePost[] | string {
    if (body.length === 0) return 'Empty post';
    try {
      return parseDevicePost(body, remote, receivedAt);
    } catch (err) {
      return `Unreadable post: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  private dispatch(received: ReceivedPost): void {
    for (const post of received.posts) this.lastSeen.set(post.device.mac ?? post.device.ip, received.receivedAt);
    for (const s of this.subscribers) {
      try {
        s.onPost?.(received);
      } catch (err) {
        this.warn(`A subscriber failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  private pathAllowed(url: string): boolean {
    const path = pathOf(url);
    const base = this.opts.path;
    return base === '/' || path === base || path.startsWith(base.endsWith('/') ? base : `${base}/`);
  }
}

/** Recorders send an absolute URL in the request line (`POST http://host:port/path`). */
function pathOf(url: string): string {
  try {
    return new URL(url, 'http://device').pathname;
  } catch {
    return url.split('?')[0] ?? '/';
  }
}

function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

function basicMatches(header: string | undefined, expected: Buffer): boolean {
  const got = Buffer.from(header ?? '', 'utf8');
  return got.length === expected.length && timingSafeEqual(got, expected);
}

function listenError(err: unknown, opts: Resolved): IpcamError {
  const code = (err as { code?: string }).code;
  const where = `${opts.bind}:${opts.port}`;
  if (code === 'EADDRINUSE') return new IpcamError('ECONN', `Port ${opts.port} is already in use (${where}): choose another port or stop the other listener`);
  if (code === 'EACCES' || code === 'EPERM') return new IpcamError('ECONN', `Permission denied to listen on ${where}: ports below 1024 need privileges`);
  if (code === 'EADDRNOTAVAIL') return new IpcamError('ECONN', `Address ${opts.bind} is not on this machine`);
  return new IpcamError('ECONN', `Cannot listen on ${where}: ${err instanceof Error ? err.message : String(err)}`);
}

function resolve(o: EventServerOptions): Resolved {
  const port = o.port ?? 5002;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw inputError(`Port must be a whole number from 1 to 65535 (0 picks a free port), got ${String(o.port)}`);
  const bind = o.bind?.trim() || '0.0.0.0';
  if (!isIP(bind) && bind !== 'localhost') throw inputError(`Bind address "${bind}" is not an IP address`);
  let path = o.path?.trim() || '/';
  if (!path.startsWith('/')) path = `/${path}`;
  const maxBody = o.maxBody ?? DEFAULT_MAX_BODY;
  if (!Number.isInteger(maxBody) || maxBody < 1) throw inputError(`maxBody must be a whole number of bytes above 0, got ${String(o.maxBody)}`);
  const resolved: Resolved = { port, bind, path, maxBody, allow: allowList(o.allow), basic: undefined };
  if (o.username) resolved.basic = Buffer.from(`Basic ${Buffer.from(`${o.username}:${o.password ?? ''}`, 'utf8').toString('base64')}`, 'utf8');
  return resolved;
}

/** `10.0.0.5, 192.168.1.0/24, fe80::/10` to a BlockList used as an allow list. */
export function allowList(text: string | undefined): BlockList | undefined {
  const entries = (text ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '');
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefixText] = entry.split('/');
    const family = isIP(address);
    if (family === 0) throw inputError(`Allow list entry "${entry}" is not an IP address or CIDR`);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (prefixText === undefined) {
      list.addAddress(address, type);
      continue;
    }
    const prefix = Number(prefixText);
    if (!/^\d+$/.test(prefixText) || prefix > (family === 6 ? 128 : 32)) throw inputError(`Allow list entry "${entry}" has a bad prefix length`);
    list.addSubnet(address, prefix, type);
  }
  return list;
}
