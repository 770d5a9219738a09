import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BlockList, isIP, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { IpcamError, inputError } from '../errors/errors';
import { XML_NS } from '../xml/codec';
import { int, optional, text, withDefault } from '../input/params';
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
   * Connections held at once (default 256); one sender may hold at most half. At the cap (of all,
   * or of the sender, then among its own) a new connection takes the place of the oldest of: one
   * still sending its headers, one sending its body below `MIN_BODY_RATE`, one idle without an
   * accepted post; else of the kept one whose last post is the oldest. When every connection is a
   * request whose body arrives at rate, the new one is closed at once.
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

/**
 * Where a connection stands: still sending its (first) headers; in a request (its body being
 * received, or its answer written); idle after a request that was not an accepted post (refused,
 * or none yet); idle after an accepted post.
 */
type Standing = 'headers' | 'request' | 'unposted' | 'posted';

/** Why a connection gave way, for the warning: its standing, a request only when `slow`. */
type Yield = 'headers' | 'slow' | 'unposted' | 'posted';

interface Held {
  sender: string;
  standing: Standing;
  /** When it took its standing (monotonic ms): connected, its request's headers read, or idle. */
  since: number;
  /** Requests read and not yet answered (more than one when a sender pipelines). */
  open: number;
  /** The response being written: a timeout or parse error then must not write a second status line. */
  response: ServerResponse | undefined;
  /** The request under way (its headers read) was an accepted post: the connection is then idle as `posted`. */
  accepted: boolean;
  /** Bytes the socket had read before the request under way began: its headers count towards its rate. */
  readBefore: number;
}

/**
 * A body must arrive at this rate at least, bytes per second averaged from its headers on (the
 * headers count), or its connection gives way at a cap like a half-sent one. Real posts with
 * pictures run to 500 KB-1.3 MB and arrive in well under a second on a LAN (over 1 MB/s); a
 * camera behind a 1 Mbit/s uplink sends 125 KB/s, 8 times this floor. A sender dripping a body
 * falls below it within milliseconds (its ~100 bytes of headers last 6 ms); to hold a slot it
 * must send 16 KiB every second, and 256 slots then cost it 4 MiB/s (32 Mbit/s).
 */
export const MIN_BODY_RATE = 16 * 1024;
/** How each kind of connection that gives way at a cap is named in the warning. */
const GIVING_WAY: Record<Yield, string> = {
  headers: 'oldest connection still sending its headers',
  slow: `connection sending its body below ${MIN_BODY_RATE} bytes/s`,
  unposted: 'connection idle longest without an accepted post',
  posted: 'kept connection whose last post is the oldest',
};
/** Requests checked for their rate per search for a connection to give way: the cost of one newcomer stays small whatever the cap. */
const RATE_CHECKS = 32;

/** Connections by standing, each standing an insertion-ordered Set so that the first entry took it first. */
class Standings {
  readonly sets: Record<Standing, Set<Socket>> = { headers: new Set(), request: new Set(), unposted: new Set(), posted: new Set() };
  size = 0;

  add(socket: Socket, standing: Standing): void {
    this.sets[standing].add(socket);
    this.size += 1;
  }

  delete(socket: Socket, standing: Standing): void {
    if (this.sets[standing].delete(socket)) this.size -= 1;
  }

  /**
   * The connection to give up for a new one, if any may be. First whichever took its standing
   * earliest of: the oldest still sending its headers, a request whose body arrives below
   * `MIN_BODY_RATE` (the first found), the one idle longest without an accepted post; all three
   * cost their sender next to nothing, and a camera's new connection, in its first milliseconds
   * still "sending its headers", is younger than any of a flood's. Then the kept connection whose
   * last post is the oldest. A request at rate is never given up. At most `RATE_CHECKS` requests
   * are checked; those found at rate go to the end of their set, so that the next search checks others.
   */
  yielding(entryOf: (socket: Socket) => Held | undefined, now: number): { socket: Socket; why: Yield } | undefined {
    let chosen: { socket: Socket; why: Yield; since: number } | undefined;
    const consider = (socket: Socket | undefined, why: Yield): void => {
      const since = socket && entryOf(socket)?.since;
      if (socket && since !== undefined && (!chosen || since < chosen.since)) chosen = { socket, why, since };
    };
    consider(first(this.sets.headers), 'headers');
    consider(this.firstSlow(entryOf, now), 'slow');
    consider(first(this.sets.unposted), 'unposted');
    if (!chosen) consider(first(this.sets.posted), 'posted');
    return chosen && { socket: chosen.socket, why: chosen.why };
  }

  clear(): void {
    for (const set of Object.values(this.sets)) set.clear();
    this.size = 0;
  }

  private firstSlow(entryOf: (socket: Socket) => Held | undefined, now: number): Socket | undefined {
    const requests = this.sets.request;
    const atRate: Socket[] = [];
    let found: Socket | undefined;
    for (const socket of requests) {
      const entry = entryOf(socket);
      if (entry && belowRate(socket, entry, now)) {
        found = socket;
        break;
      }
      atRate.push(socket);
      if (atRate.length >= RATE_CHECKS) break;
    }
    for (const socket of atRate) {
      requests.delete(socket);
      requests.add(socket);
    }
    return found;
  }
}

function first(set: Set<Socket>): Socket | undefined {
  const next = set.values().next();
  return next.done ? undefined : next.value;
}

/** A request whose bytes since it began (its headers included) are fewer than `MIN_BODY_RATE` over its time so far. */
function belowRate(socket: Socket, entry: Held, now: number): boolean {
  return entry.standing === 'request' && (socket.bytesRead - entry.readBefore) * 1_000 < MIN_BODY_RATE * (now - entry.since);
}

/**
 * The connections a server holds, by standing, in all and per sender: every step (admit,
 * request, answer, close) is O(1), a search for one to give way checks at most `RATE_CHECKS`
 * bodies, and nothing outlives its connection (a sender's entry goes with its last connection).
 *
 * Which one gives way at a cap is the point: a connection that has not finished its headers, or
 * sends its body below `MIN_BODY_RATE`, costs its sender next to nothing and is what a flood
 * consists of; an idle one belongs to a device that reconnects when it next posts, and the kept
 * connection of a camera that posted recently is the last of them to go; a request whose body
 * arrives at rate is a post being received and is never given up for a newcomer.
 */
class ConnectionTable {
  private readonly held = new Map<Socket, Held>();
  private readonly all = new Standings();
  private readonly bySender = new Map<string, Standings>();
  private readonly entryOf = (socket: Socket): Held | undefined => this.held.get(socket);

  get size(): number {
    return this.held.size;
  }

  sockets(): IterableIterator<Socket> {
    return this.held.keys();
  }

  get inRequest(): number {
    return this.all.sets.request.size;
  }

  /** Connections `sender` holds now. */
  heldBy(sender: string): number {
    return this.bySender.get(sender)?.size ?? 0;
  }

  add(socket: Socket, sender: string): void {
    this.held.set(socket, { sender, standing: 'headers', since: performance.now(), open: 0, response: undefined, accepted: false, readBefore: socket.bytesRead });
    this.all.add(socket, 'headers');
    let own = this.bySender.get(sender);
    if (!own) {
      own = new Standings();
      this.bySender.set(sender, own);
    }
    own.add(socket, 'headers');
  }

  /** A request's headers are in: its connection's entry (the sender, known since it connected), if still held. */
  requestStarted(socket: Socket, response: ServerResponse): Held | undefined {
    const entry = this.held.get(socket);
    if (!entry) return undefined;
    entry.open += 1;
    entry.response = response;
    entry.accepted = false;
    this.move(socket, entry, 'request');
    return entry;
  }

  /** The request under way on `socket` is an accepted post (answered 200). */
  accepted(socket: Socket): void {
    const entry = this.held.get(socket);
    if (entry) entry.accepted = true;
  }

  /** The answer to `response` is written or cut off: no longer "mid-response", and the response is not held while idle. */
  requestAnswered(socket: Socket, response: ServerResponse): void {
    const entry = this.held.get(socket);
    if (!entry) return;
    if (entry.response === response) entry.response = undefined;
    entry.open = Math.max(0, entry.open - 1);
    if (entry.open > 0 || socket.destroyed) return;
    entry.readBefore = socket.bytesRead;
    this.move(socket, entry, entry.accepted ? 'posted' : 'unposted');
  }

  /** The response being written on a connection, if any. */
  responding(socket: Duplex): ServerResponse | undefined {
    return this.held.get(socket as Socket)?.response;
  }

  /** The connection to give up for a new one at the cap (of `sender`'s own when given), if any may be. */
  yielding(sender?: string): { socket: Socket; why: Yield; sender: string } | undefined {
    const standings = sender === undefined ? this.all : this.bySender.get(sender);
    const found = standings?.yielding(this.entryOf, performance.now());
    const entry = found && this.held.get(found.socket);
    return found && entry ? { ...found, sender: entry.sender } : undefined;
  }

  /** Forgets a connection; its sender when it was held (once per connection, however often called). */
  remove(socket: Socket): string | undefined {
    const entry = this.held.get(socket);
    if (!entry) return undefined;
    this.held.delete(socket);
    this.all.delete(socket, entry.standing);
    const own = this.bySender.get(entry.sender);
    own?.delete(socket, entry.standing);
    if (own?.size === 0) this.bySender.delete(entry.sender);
    return entry.sender;
  }

  clear(): void {
    this.held.clear();
    this.all.clear();
    this.bySender.clear();
  }

  /** Into its new standing, at the end of its sets; a request (again) starts its time and bytes anew (pipelined ones included). */
  private move(socket: Socket, entry: Held, standing: Standing): void {
    entry.since = performance.now();
    if (entry.standing === standing) return;
    this.all.delete(socket, entry.standing);
    const own = this.bySender.get(entry.sender);
    own?.delete(socket, entry.standing);
    entry.standing = standing;
    this.all.add(socket, standing);
    own?.add(socket, standing);
  }
}

/**
 * The HTTP listener devices post events to: answers each post at once, enforces the limits and
 * hands parsed posts to every subscriber. One per `ipcam-event-server` config node.
 *
 * Everything a sender can make it hold is bounded: connections (in all and per sender; at a cap
 * a half-sent, slow-bodied or idle one gives way to a newcomer, so neither half-sent requests nor
 * bodies dripped below `MIN_BODY_RATE` can hold the slots),
 * the time a request may take, the bytes of bodies being received, the cost of parsing a post,
 * and the warnings it writes. It keeps nothing per device.
 */
export class EventServer {
  private readonly opts: Resolved;
  private readonly parseLimits: Partial<ParseLimits>;
  private readonly subscribers = new Set<EventSubscriber>();
  private readonly sockets = new ConnectionTable();
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

  /** Connections in a request now: its headers read, its answer not yet written (a test and status aid). */
  get requests(): number {
    return this.sockets.inRequest;
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
    await closed;
  }

  private setState(state: EventServerState, detail?: string): void {
    this.current = state;
    this.detail = detail;
    for (const s of this.subscribers) s.onState?.(state, detail);
  }

  /**
   * One sender may hold half the connections: a flood from one host leaves room for the devices.
   * At its cap, the sender's own connection that gives way first (`Standings.yielding`) makes room
   * for its new one: a camera behind the same NAT address as a misbehaving device still posts. At
   * the cap of all, the first to give way of all gives way. When none may (every one is a request
   * whose body arrives at rate), the newcomer is closed.
   */
  private admit(socket: Socket): void {
    if (!this.server) {
      socket.destroy();
      return;
    }
    const sender = plainAddress(socket.remoteAddress ?? '');
    const held = this.sockets.heldBy(sender);
    if (held >= this.opts.perSender) {
      if (!this.giveWay(sender, sender)) {
        socket.destroy();
        this.warnings.warn('sender cap', `${sender} holds ${held} connections, the most one sender may, each in a request: a further one was closed`);
        return;
      }
    } else if (this.sockets.size >= this.opts.maxConnections && !this.giveWay(sender)) {
      socket.destroy();
      this.warnings.warn('connection cap', `Connection limit of ${this.opts.maxConnections} reached, every connection in a request: a connection from ${sender} was closed`);
      return;
    }
    this.sockets.add(socket, sender);
    socket.once('close', () => this.sockets.remove(socket));
  }

  /** Closes the connection that gives way to one from `newcomer` (one of `own`'s when given); false when none may. */
  private giveWay(newcomer: string, own?: string): boolean {
    const yielding = this.sockets.yielding(own);
    if (!yielding) return false;
    // Its slot and its sender's count are freed at once, before its 'close'.
    this.sockets.remove(yielding.socket);
    yielding.socket.destroy();
    const what = GIVING_WAY[yielding.why];
    if (own === undefined) {
      this.warnings.warn(`cap ${yielding.why}`, `Connection limit of ${this.opts.maxConnections} reached: the ${what} (from ${yielding.sender}) was closed for one from ${newcomer}`);
    } else {
      this.warnings.warn(`sender cap ${yielding.why}`, `${own} holds ${this.opts.perSender} connections, the most one sender may: its ${what} was closed for its new one`);
    }
    return true;
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
      this.sockets.accepted(req.socket);
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
