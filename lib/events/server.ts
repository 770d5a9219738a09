import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BlockList, isIP, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { IpcamError, inputError } from '../errors';
import { XML_NS } from '../xml/codec';
import { int, optional, text, withDefault } from '../params';
import { isTrackingPost, PostTooComplex, readDevicePost, type DevicePost, type ParseLimits } from './parse';
import { WarningThrottle } from './throttle';

export interface EventServerOptions {
  /** TCP port (default 5002; 0 picks a free one). */
  port?: number;
  /** Address to bind (default 0.0.0.0). */
  bind?: string;
  /** Path prefix posts must be under (default `/`). */
  path?: string;
  /** Largest body accepted (default 4 MiB); a larger one is answered 413. */
  maxBody?: number;
  /**
   * Connections held at once (default 256); one sender may hold at most half. At the cap a new
   * connection takes the place of the oldest one still sending its headers, else of the one idle
   * longest; when every connection is in a request, the new one is closed at once.
   */
  maxConnections?: number;
  /** Time a request may take to send its headers, ms (default 15 s); then 408 and closed. */
  headersTimeout?: number;
  /** Time a whole request may take, body included, ms (default 60 s). */
  requestTimeout?: number;
  /** Comma-separated IPs and CIDRs allowed to post; empty = any. */
  allow?: string;
  /** Basic credentials devices must send; none = no authentication. */
  username?: string;
  password?: string;
  /** Where warnings go (refused posts, dropped connections): one line per kind at once, then one summary per `warnEveryMs`. */
  onWarning?: (text: string) => void;
  /** Interval of the warning summaries, ms (default 30 s). */
  warnEveryMs?: number;
  /** Bounds of one post's parse (see `PARSE_LIMITS`). */
  parseLimits?: Partial<ParseLimits>;
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
  onState?(state: EventServerState, detail?: string): void;
}

/** Cameras expect this answer, fast, to every post (field notes). */
export const SUCCESS_DOCUMENT = `<?xml version="1.0" encoding="UTF-8"?>\n<config version="1.0" xmlns="${XML_NS}"><status>success</status></config>`;
/** The answer to every accepted post, encoded once: it is written hundreds of times a second on a busy site. */
const SUCCESS_BYTES = Buffer.from(SUCCESS_DOCUMENT, 'utf8');
const SUCCESS_HEADERS = Object.freeze({ 'content-type': 'application/xml', 'content-length': SUCCESS_BYTES.length });
/** The largest real posts (scene and plate pictures) run to about 1.3 MB: room for three times that. */
export const DEFAULT_MAX_BODY = 4 * 1024 * 1024;
/** Each camera keeps one connection open; a few hundred devices per server is a large site. */
export const DEFAULT_MAX_CONNECTIONS = 256;
export const MAX_CONNECTIONS_LIMIT = 10_000;
/** Largest body a setting may allow: far above any post with images (a few hundred KiB). */
export const MAX_BODY_LIMIT = 256 * 1024 * 1024;
export const DEFAULT_PORT = 5002;

/** An IPv4 address, or one that looks like IPv6 (`isIP` decides). */
const IP_LIKE = '(\\d{1,3}(\\.\\d{1,3}){3}|[0-9A-Fa-f.]*(:[0-9A-Fa-f.]*){2,})';

/**
 * The settings of an event server as the editor gives them, each checked here as the runtime
 * checks it (`resolve`, `allowList`), so the editor's rules are this data.
 */
export const EVENT_SERVER_SETTINGS = {
  port: withDefault(int({ min: 1, max: 65535 }), DEFAULT_PORT),
  bind: optional(text({ max: 64, pattern: new RegExp(`^(localhost|${IP_LIKE})$`), patternText: 'an IP address of this machine, e.g. 0.0.0.0 (all) or 127.0.0.1' })),
  path: optional(text({ max: 256, pattern: /^[^\s?#]*$/, patternText: 'a URL path like / or /lpr, without spaces, ? or #' })),
  maxBody: withDefault(int({ min: 1, max: MAX_BODY_LIMIT }), DEFAULT_MAX_BODY),
  maxConnections: withDefault(int({ min: 1, max: MAX_CONNECTIONS_LIMIT }), DEFAULT_MAX_CONNECTIONS),
  allow: optional(
    text({
      max: 4096,
      pattern: new RegExp(`^\\s*(${IP_LIKE}(/\\d{1,3})?)?(\\s*,\\s*(${IP_LIKE}(/\\d{1,3})?)?)*\\s*$`),
      patternText: 'IP addresses or CIDRs separated by commas, e.g. 192.168.1.0/24, 10.0.0.5',
    }),
  ),
};
/** Cameras post a keep-alive every ~30 s; closing idle sockets sooner makes them reconnect constantly. */
const KEEP_ALIVE_MS = 65_000;
/** A device sends its headers at once: a request still incomplete after this is not a device. */
const DEFAULT_HEADERS_TIMEOUT_MS = 15_000;
/** A 4 MiB post over a slow uplink (1 Mbit/s) takes about 35 s. */
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const DEFAULT_WARN_EVERY_MS = 30_000;
/** Bodies being received at once may hold this many times `maxBody` in all; beyond that 503. */
const BUFFERED_BODIES = 16;
/** A refused body is read (and dropped) up to this many times `maxBody`, so that its sender can read the answer. */
const DROP_LIMIT = 2;
/** Sender text quoted in a warning (a path, a parser message) is cut to this. */
const QUOTE_MAX = 120;

interface Resolved {
  port: number;
  bind: string;
  path: string;
  maxBody: number;
  maxConnections: number;
  perSender: number;
  headersTimeout: number;
  requestTimeout: number;
  allow: BlockList | undefined;
  basic: Buffer | undefined;
  warnEveryMs: number;
}

/** Where a connection is: sending its (first) headers, in a request of ours to answer, or idle between requests. */
type Phase = 'headers' | 'request' | 'idle';

interface Held {
  sender: string;
  phase: Phase;
  /** Requests read and not yet answered (more than one when a sender pipelines). */
  open: number;
  /** The response being written: a timeout or parse error then must not write a second status line. */
  response: ServerResponse | undefined;
}

/**
 * The connections a server holds, by phase, each phase an insertion-ordered Set so that the
 * oldest is its first entry: every step (admit, request, answer, close, pick one to give up) is
 * O(1), and nothing outlives the connection.
 *
 * Which one gives way at the cap is the point: a connection that has not finished its headers
 * costs its sender nothing and is what a flood consists of; an idle one belongs to a device that
 * reconnects when it next posts; one in a request is a post being received or answered and is
 * never given up for a newcomer.
 */
class ConnectionTable {
  private readonly held = new Map<Socket, Held>();
  private readonly sendingHeaders = new Set<Socket>();
  private readonly idle = new Set<Socket>();

  get size(): number {
    return this.held.size;
  }

  sockets(): IterableIterator<Socket> {
    return this.held.keys();
  }

  add(socket: Socket, sender: string): void {
    this.held.set(socket, { sender, phase: 'headers', open: 0, response: undefined });
    this.sendingHeaders.add(socket);
  }

  /** A request's headers are in: its connection's entry (the sender, known since it connected), if still held. */
  requestStarted(socket: Socket, response: ServerResponse): Held | undefined {
    const entry = this.held.get(socket);
    if (!entry) return undefined;
    entry.open += 1;
    entry.response = response;
    this.move(socket, entry, 'request');
    return entry;
  }

  /** The answer to `response` is written or cut off: no longer "mid-response", and the response is not held while idle. */
  requestAnswered(socket: Socket, response: ServerResponse): void {
    const entry = this.held.get(socket);
    if (!entry) return;
    if (entry.response === response) entry.response = undefined;
    entry.open = Math.max(0, entry.open - 1);
    if (entry.open === 0 && !socket.destroyed) this.move(socket, entry, 'idle');
  }

  /** The response being written on a connection, if any. */
  responding(socket: Duplex): ServerResponse | undefined {
    return this.held.get(socket as Socket)?.response;
  }

  /** The connection to give up for a new one at the cap, if any may be: the oldest still sending headers, else the one idle longest. */
  yielding(): { socket: Socket; phase: Phase; sender: string } | undefined {
    const first = this.sendingHeaders.values().next();
    const socket = first.done ? this.idle.values().next().value : first.value;
    const entry = socket && this.held.get(socket);
    return socket && entry ? { socket, phase: entry.phase, sender: entry.sender } : undefined;
  }

  /** Forgets a connection; its sender when it was held (once per connection, however often called). */
  remove(socket: Socket): string | undefined {
    const entry = this.held.get(socket);
    if (!entry) return undefined;
    this.held.delete(socket);
    this.sendingHeaders.delete(socket);
    this.idle.delete(socket);
    return entry.sender;
  }

  clear(): void {
    this.held.clear();
    this.sendingHeaders.clear();
    this.idle.clear();
  }

  private move(socket: Socket, entry: Held, phase: Phase): void {
    if (entry.phase === phase) return;
    if (entry.phase === 'headers') this.sendingHeaders.delete(socket);
    else if (entry.phase === 'idle') this.idle.delete(socket);
    entry.phase = phase;
    if (phase === 'idle') this.idle.add(socket);
  }
}

/**
 * The HTTP listener devices post events to: answers each post at once, enforces the limits and
 * hands parsed posts to every subscriber. One per `ipcam-event-server` config node.
 *
 * Everything a sender can make it hold is bounded: connections (in all and per sender; at the cap
 * a half-sent or idle one gives way to a newcomer, so half-sent requests cannot hold the slots),
 * the time a request may take, the bytes of bodies being received, the cost of parsing a post,
 * and the warnings it writes. It keeps nothing per device.
 */
export class EventServer {
  private readonly opts: Resolved;
  private readonly parseLimits: Partial<ParseLimits>;
  private readonly subscribers = new Set<EventSubscriber>();
  private readonly sockets = new ConnectionTable();
  /** Open connections per sender address: at most one entry per open connection. */
  private readonly perSender = new Map<string, number>();
  private readonly warnings: WarningThrottle;
  private server: Server | undefined;
  private current: EventServerState = 'starting';
  private detail: string | undefined;
  /** Body bytes held by requests still being received. */
  private buffered = 0;
  /** Tracking posts dropped: counted, never parsed nor handed on. */
  private tracking = 0;

  constructor(options: EventServerOptions = {}) {
    this.opts = resolve(options);
    this.parseLimits = { ...options.parseLimits };
    const sink = options.onWarning ?? ((): void => undefined);
    this.warnings = new WarningThrottle(sink, this.opts.warnEveryMs);
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

  /** Connections open now (a test and status aid). */
  get connections(): number {
    return this.sockets.size;
  }

  /** Body bytes held now by posts being received (a test and status aid). */
  get bodyBytes(): number {
    return this.buffered;
  }

  /** Tracking (`traject`) posts answered and dropped since the start (a test and status aid). */
  get trackingPosts(): number {
    return this.tracking;
  }

  /** Starts listening. A port in use or a refused bind is `ECONN` with a clear message, never a crash. */
  async start(): Promise<void> {
    const { headersTimeout, requestTimeout } = this.opts;
    const server = createServer(
      {
        keepAliveTimeout: KEEP_ALIVE_MS,
        headersTimeout,
        requestTimeout,
        // How often the two timeouts above are checked: the default 30 s would let a request stall for up to 45 s.
        connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(headersTimeout / 4))),
      },
      (req, res) => this.handle(req, res),
    );
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    // No server.maxConnections: Node would close the newcomer, which lets half-sent requests hold
    // every slot; admit() applies the cap and chooses which connection gives way.
    server.on('connection', (socket: Socket) => this.admit(socket));
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.clientError(err, socket));
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
    this.warnings.close();
    if (!server) return;
    const closed = new Promise<void>((done) => server.close(() => done()));
    for (const socket of [...this.sockets.sockets()]) socket.destroy();
    this.sockets.clear();
    this.perSender.clear();
    await closed;
  }

  private setState(state: EventServerState, detail?: string): void {
    this.current = state;
    this.detail = detail;
    for (const s of this.subscribers) s.onState?.(state, detail);
  }

  /**
   * One sender may hold half the connections: a flood from one host leaves room for the devices.
   * At the cap a connection still sending its headers, else an idle one, gives way to the
   * newcomer; when every connection is in a request, the newcomer is closed.
   */
  private admit(socket: Socket): void {
    const sender = plainAddress(socket.remoteAddress ?? '');
    const held = this.perSender.get(sender) ?? 0;
    if (!this.server) {
      socket.destroy();
      return;
    }
    if (held >= this.opts.perSender) {
      socket.destroy();
      this.warnings.warn('sender cap', `${sender} holds ${held} connections, the most one sender may: a further one was closed`);
      return;
    }
    if (this.sockets.size >= this.opts.maxConnections && !this.giveWay(sender)) {
      socket.destroy();
      this.warnings.warn('connection cap', `Connection limit of ${this.opts.maxConnections} reached, every connection in a request: a connection from ${sender} was closed`);
      return;
    }
    this.perSender.set(sender, held + 1);
    this.sockets.add(socket, sender);
    socket.once('close', () => this.forget(socket));
  }

  /** Closes the connection that gives way to one from `newcomer`; false when none may. */
  private giveWay(newcomer: string): boolean {
    const yielding = this.sockets.yielding();
    if (!yielding) return false;
    this.forget(yielding.socket);
    yielding.socket.destroy();
    const what = yielding.phase === 'headers' ? 'the oldest connection still sending its headers' : 'the connection idle longest';
    this.warnings.warn(`cap ${yielding.phase}`, `Connection limit of ${this.opts.maxConnections} reached: ${what} (from ${yielding.sender}) was closed for one from ${newcomer}`);
    return true;
  }

  /** Its slot and its sender's count are freed at once, whether it closed or gave way (then before its 'close'). */
  private forget(socket: Socket): void {
    const sender = this.sockets.remove(socket);
    if (sender === undefined) return;
    const left = (this.perSender.get(sender) ?? 1) - 1;
    if (left > 0) this.perSender.set(sender, left);
    else this.perSender.delete(sender);
  }

  /** Unparsable requests and the header and request timeouts: answered, closed, and logged at a bounded rate. */
  private clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    // Already answered (its peer's end then fails the parser a second time) or closed: nothing more to say.
    if (socket.writableEnded || socket.destroyed) {
      socket.destroy();
      return;
    }
    const remote = plainAddress((socket as Socket).remoteAddress ?? '?');
    const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    if (timedOut) this.warnings.warn('timeout', `A request from ${remote} was not complete in time: answered 408 and closed`);
    else this.warnings.warn('malformed', `A malformed request from ${remote} (${err.code ?? 'bad request'}): answered 400 and closed`);
    const res = this.sockets.responding(socket);
    const midResponse = res !== undefined && res.headersSent && !res.writableFinished;
    if (socket.writable && !midResponse) socket.end(timedOut ? 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n' : 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    // From its headers until its answer is written a connection is in a request: never given up
    // at the cap. Its sender was noted when it connected: no address is read again per post.
    const remote = this.sockets.requestStarted(socket, res)?.sender ?? plainAddress(socket.remoteAddress ?? '');
    // Written or cut off, the answer is over ('close' follows 'finish' on a kept connection too):
    // no longer "mid-response", and an idle keep-alive socket does not hold its last response
    // (~2.5 KB each, seen with 500 cameras).
    res.once('close', () => this.sockets.requestAnswered(socket, res));
    if (this.opts.allow && !this.opts.allow.check(remote, isIP(remote) === 6 ? 'ipv6' : 'ipv4')) {
      req.resume();
      return this.refuse(res, remote, 403, 'Sender not in the allow list');
    }
    if (this.opts.basic && !basicMatches(req.headers.authorization, this.opts.basic)) {
      req.resume();
      return this.refuse(res, remote, 401, 'Wrong or missing credentials', { 'www-authenticate': 'Basic realm="ipcam events"' });
    }
    if (!this.pathAllowed(req.url ?? '/')) {
      req.resume();
      return this.refuse(res, remote, 404, `Path ${quote(pathOf(req.url ?? '/'))} is not served here`);
    }
    if (req.method !== 'POST' && req.method !== 'PUT') {
      req.resume();
      return this.refuse(res, remote, 405, `Method ${quote(req.method ?? '')} not allowed: devices post events`, { allow: 'POST' });
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.opts.maxBody) return this.tooLarge(req, res, remote, 0);
    this.receive(req, res, remote);
  }

  /** A refusal: logged at a bounded rate, answered in plain text. */
  private refuse(res: ServerResponse, remote: string, status: number, text: string, headers: Record<string, string> = {}): void {
    this.warnings.warn(`refused ${status}`, `Post refused (${status}): ${text} (from ${remote})`);
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(`${text}\n`);
  }

  /** Reads the body within `maxBody` and the budget of all bodies in flight, then answers and delivers. */
  private receive(req: IncomingMessage, res: ServerResponse, remote: string): void {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const release = (): void => {
      this.buffered -= size;
      size = 0;
      chunks.length = 0;
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      if (size + chunk.length > this.opts.maxBody) {
        done = true;
        const received = size + chunk.length;
        release();
        this.tooLarge(req, res, remote, received);
        return;
      }
      if (this.buffered + chunk.length > this.opts.maxBody * BUFFERED_BODIES) {
        done = true;
        const received = size + chunk.length;
        release();
        this.dropRest(req, received, () => this.refuse(res, remote, 503, `Too many large posts being received at once (${this.opts.maxBody * BUFFERED_BODIES} bytes in all)`, { 'retry-after': '5' }));
        return;
      }
      size += chunk.length;
      this.buffered += chunk.length;
      chunks.push(chunk);
    });
    // No 'error' listener: an aborted request emits 'error' only to listeners (Node's own
    // backward-compatible rule, _http_incoming onError), and its 'close' below is what matters.
    // An aborted request (timeout, peer gone) ends here without 'end': its bytes are released.
    req.on('close', () => {
      if (!done) {
        done = true;
        release();
      }
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      // A post of a few KB comes in one piece: read where it lies, not copied into another buffer.
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      release();
      const receivedAt = Date.now();
      const read = this.parse(body, remote, receivedAt);
      if (read.refused) return this.refuse(res, remote, read.refused.status, read.refused.text);
      res.writeHead(200, SUCCESS_HEADERS);
      res.end(SUCCESS_BYTES);
      if (read.ignoredItems > 0) {
        const kept = read.posts.filter((p) => p.kind === 'plate').length;
        this.warnings.warn('items', `A post from ${remote} carried ${kept + read.ignoredItems} plates: the first ${kept} were read, ${read.ignoredItems} ignored`);
      }
      this.dispatch({ remoteAddress: remote, receivedAt, posts: read.posts });
    });
  }

  /** 413, and nothing of the body kept. */
  private tooLarge(req: IncomingMessage, res: ServerResponse, remote: string, received: number): void {
    const text = `Post larger than ${this.opts.maxBody} bytes refused`;
    const declared = Number(req.headers['content-length']);
    // Not worth reading: answered at once and closed after the answer.
    if (Number.isFinite(declared) && declared > DROP_LIMIT * this.opts.maxBody) return this.refuse(res, remote, 413, text, { connection: 'close' });
    this.dropRest(req, received, () => this.refuse(res, remote, 413, text));
  }

  /**
   * Reads the rest of a refused body, dropping it, and answers when it has ended: a sender that
   * gets its answer while still sending sees its socket reset, losing the answer. A body that
   * goes on beyond `DROP_LIMIT` times `maxBody` in all is cut off without an answer.
   */
  private dropRest(req: IncomingMessage, received: number, answer: () => void): void {
    let seen = received;
    req.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DROP_LIMIT * this.opts.maxBody) req.socket.destroy();
    });
    req.on('end', answer);
    req.resume();
  }

  /** The posts in a body (an empty one is a keep-alive), or why it is refused: 400 unreadable, 413 over a parse limit. */
  private parse(body: Buffer, remote: string, receivedAt: number): { posts: DevicePost[]; ignoredItems: number; refused?: { status: number; text: string } } {
    // Many a second while a target moves, never a plate: answered, counted, kept off the plate path.
    if (isTrackingPost(body)) {
      this.tracking += 1;
      return { posts: [], ignoredItems: 0 };
    }
    try {
      return readDevicePost(body, remote, receivedAt, this.parseLimits);
    } catch (err) {
      const message = quote(err instanceof Error ? err.message : String(err));
      if (err instanceof PostTooComplex) return { posts: [], ignoredItems: 0, refused: { status: 413, text: message } };
      return { posts: [], ignoredItems: 0, refused: { status: 400, text: `Unreadable post: ${message}` } };
    }
  }

  private dispatch(received: ReceivedPost): void {
    for (const s of this.subscribers) {
      try {
        s.onPost?.(received);
      } catch (err) {
        this.warnings.warn('subscriber', `A subscriber failed: ${quote(err instanceof Error ? err.message : String(err))}`);
      }
    }
  }

  private pathAllowed(url: string): boolean {
    const base = this.opts.path;
    // Everything is under '/': reading the request's path (a URL parse per post) would decide nothing.
    if (base === '/') return true;
    const path = pathOf(url);
    return path === base || path.startsWith(base.endsWith('/') ? base : `${base}/`);
  }
}

/** Text from a sender, cut short for a log line. */
function quote(text: string): string {
  return text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}...` : text;
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
  // 0 (a free port) is for code; a setting names a port.
  const port = o.port === 0 ? 0 : EVENT_SERVER_SETTINGS.port.parse(o.port, 'Port');
  const bind = o.bind?.trim() || '0.0.0.0';
  if (!isIP(bind) && bind !== 'localhost') throw inputError(`Bind address "${bind}" is not an IP address`);
  let path = o.path?.trim() || '/';
  if (!path.startsWith('/')) path = `/${path}`;
  const maxBody = EVENT_SERVER_SETTINGS.maxBody.parse(o.maxBody, 'maxBody (bytes)');
  const maxConnections = EVENT_SERVER_SETTINGS.maxConnections.parse(o.maxConnections, 'maxConnections');
  const headersTimeout = o.headersTimeout ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = o.requestTimeout ?? Math.max(DEFAULT_REQUEST_TIMEOUT_MS, headersTimeout);
  if (!Number.isInteger(headersTimeout) || headersTimeout < 1) throw inputError(`headersTimeout must be a whole number of ms above 0, got ${String(o.headersTimeout)}`);
  if (!Number.isInteger(requestTimeout) || requestTimeout < headersTimeout) throw inputError(`requestTimeout must be a whole number of ms, at least headersTimeout (${headersTimeout}), got ${String(o.requestTimeout)}`);
  const warnEveryMs = o.warnEveryMs ?? DEFAULT_WARN_EVERY_MS;
  if (!Number.isInteger(warnEveryMs) || warnEveryMs < 1) throw inputError(`warnEveryMs must be a whole number of ms above 0, got ${String(o.warnEveryMs)}`);
  const resolved: Resolved = {
    port,
    bind,
    path,
    maxBody,
    maxConnections,
    perSender: Math.max(1, Math.floor(maxConnections / 2)),
    headersTimeout,
    requestTimeout,
    allow: allowList(o.allow),
    basic: undefined,
    warnEveryMs,
  };
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
