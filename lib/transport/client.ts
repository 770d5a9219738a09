import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import type { Socket } from 'node:net';
import { buildConnector, Client } from 'undici';
import { IpcamError } from '../errors/errors';
import { DeviceAuth, type AuthTicket } from './auth';
import { Deadline } from './deadline';
import { BufferedAnswer, type BufferedLimits, type BufferedReply } from './buffered-answer';
import { drain, StreamBody, type StreamHead } from './stream-body';
import { closedUnanswered, Lane, reuseOf, type Seat } from './lane';
import { closedByPeer, transportError } from './transport-error';
import { frameUpload, piecesStream, type UploadFile } from './upload';
import { resolveDeviceOptions, type DeviceOptions, type ResolvedDeviceOptions } from './options';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface RequestOptions {
  method?: HttpMethod;
  /** Request target: path and query, already encoded (build it with lib/cgi or lib/xml). */
  path: string;
  body?: string | Buffer;
  contentType?: string;
  /**
   * A file sent as multipart/form-data (RFC 7578), framed around its own Buffer and streamed with
   * its length (not chunked, not copied).
   */
  upload?: UploadFile;
  /** Progress of the body as it is sent (bytes read from it of the total). */
  onUpload?: (sent: number, total: number) => void;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * Overrides the device timeout for this call (ms). The whole exchange (authentication, body,
   * answer) must end within the timeout plus the time its bytes take at the floor rate (see `Deadline`).
   */
  timeout?: number;
  /** A time (ms since epoch) by which the exchange ends in any case, e.g. the end of a polling loop. */
  deadline?: number;
  /**
   * A short command that must not wait behind slow answers (relay, PTZ, I/O check): it goes on the
   * device's control lane, a few connections of its own, never on the connections that snapshots,
   * downloads and uploads hold.
   */
  control?: boolean;
  /**
   * A cheap read without side effects on the same device (a target like `path`), sent first
   * while the client does not yet know how the device authenticates, so that a body is sent
   * once: its 401 teaches the scheme before the body goes.
   */
  probe?: string;
  /** Largest body accepted (default 32 MiB); a larger one is `EPARSE`. */
  maxBytes?: number;
  /**
   * Sees each piece of the answer as it arrives; what it throws ends the exchange there (an
   * answer over a budget is not read to its end, nor held whole).
   */
  onChunk?: (chunk: Buffer) => void;
  /** Return non-2xx answers instead of throwing `EHTTP` (the XML interface sends error documents with 400). */
  allowHttpError?: boolean;
  /**
   * Sending it twice does what sending it once does (a read, a relay switched on or off, a PTZ
   * stop, a preset): when the device closes a connection kept alive from an earlier answer before
   * any byte of this one (field notes: embedded servers close a few ms after an answer without
   * `Connection: close`), it is sent once more, on a new connection, within the same deadline.
   * Default false: such a call fails with ECONN saying it was not repeated. An upload never is.
   */
  repeatable?: boolean;
  /**
   * false: the client's `onOutcome` is not told how this request ended; its caller tells it
   * itself (the heartbeat, once it has read the whole answer). Default true.
   */
  report?: boolean;
}

/** How an exchange ended, as `ClientHooks.onOutcome` is told it: resolved, or the error it failed with. */
export type ExchangeOutcome = { ok: true } | { ok: false; error: IpcamError };

/** What a client's owner is told of its exchanges. */
export interface ClientHooks {
  /**
   * Told how each request and each stream opening ended (the device's health listens here).
   * Not told what teaches nothing of the device: a call its caller aborted, a call refused or
   * cut because the client closed (a redeploy), a request marked `report: false`.
   */
  onOutcome?(outcome: ExchangeOutcome): void;
}

export interface DeviceResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  contentType: string;
  body: Buffer;
}

export interface StreamOptions {
  path: string;
  signal?: AbortSignal;
  /** Longest silence on the body before the stream is treated as stalled (ms, default 30000). */
  stallTimeout?: number;
}

/**
 * A long-lived response on a connection of its own; `close()` releases the socket at once. Its
 * body is read by one sink (`body.listen`), chunk by chunk as undici's parser hands them out.
 */
export interface DeviceStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  contentType: string;
  body: StreamBody;
  close(): Promise<void>;
}

/** Whether an exchange may be sent again after the keep-alive race, and the resends its request has left. */
interface RaceRule {
  repeatable: boolean;
  resends: Resends;
}

/** A request/response exchange as `exchange()` sends it. */
interface Call {
  method: HttpMethod;
  path: string;
  headers: Record<string, string>;
  /** A stream body is a maker: each attempt gets its own. */
  body: string | Buffer | null | (() => Readable);
  headersTimeout?: number;
  bodyTimeout?: number;
}

/** Sends left of one exchange after the keep-alive race (see `RequestOptions.repeatable`): each exchange gets `RACE_RESENDS`. */
interface Resends {
  left: number;
}

/** One attempt of an exchange as `authenticated` sees it: the answer's head, and how to throw away a 401's body. */
interface Attempt<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  answer: T;
  discard(): Promise<void>;
}

const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
/**
 * Longest request target sent: every value is checked against its own limit before it gets here;
 * this is the last bound, well below what the small web servers of these devices take.
 */
export const MAX_TARGET = 4096;
/**
 * Longest a connection with nothing to do stays open, whatever the device's `Keep-Alive: timeout`
 * offers (undici takes a device's offer up to 10 minutes unless capped): a heartbeat once a minute
 * would otherwise hold a socket of every device for good. A shorter offer is kept.
 */
export const KEEP_ALIVE_MS = 30_000;
/**
 * How often one exchange is sent again after the device closed a kept-alive connection without
 * answering: once, on a new connection. A device that does it on a new connection too is ECONN.
 */
export const RACE_RESENDS = 1;
/** Connections of the control lane: enough for a relay and a PTZ command at once, few enough to bound what a device is asked to hold. */
export const CONTROL_CONNECTIONS = 2;
/** Most of a 401's body read before the retry: the text is thrown away. */
const CHALLENGE_BODY_MAX = 64 * 1024;
/** A probe's answer only teaches the scheme: its body is thrown away, bounded as a 401's. */
const PROBE_LIMITS: BufferedLimits = Object.freeze({ maxBytes: 0, tooLarge: () => new Error('unused'), discard: () => true, discardBytes: CHALLENGE_BODY_MAX });
const isChallenge = (status: number): boolean => status === 401;
const settled = (): Promise<void> => Promise.resolve();

/**
 * The HTTP client of one device: a lane of keep-alive connections for request/response calls, a small control
 * lane beside it for commands, a dedicated connection per stream, the device's authentication,
 * a deadline on every exchange and the mapping of every failure to an `IpcamError`.
 */
export class DeviceClient {
  readonly options: ResolvedDeviceOptions;
  private readonly auth: DeviceAuth;
  /**
   * Request/response calls, up to `connections`. Made by the first request, as everything below:
   * a device node that is deployed and never asks anything (a camera that only streams, a
   * heartbeat that is off) holds none of it.
   */
  private mainLane: Lane | undefined;
  /** Commands only: four slow snapshots holding every connection of `mainLane` never delay a relay. */
  private controlLane: Lane | undefined;
  /** What every connection to the device is made with (the connector keeps the TLS sessions of all of them). */
  private clientOptions: Readonly<Client.Options> | undefined;
  /** The device has answered something other than 401 once: its scheme (or none) is known. */
  private authSettled = false;
  /** How to close each open stream (its connection and any socket still connecting). */
  private streams: Set<() => Promise<void>> | undefined;
  private closed = false;
  private secretList: readonly string[] | undefined;
  private resentCount = 0;

  constructor(
    options: DeviceOptions,
    private readonly hooks: ClientHooks = {},
  ) {
    this.options = resolveDeviceOptions(options);
    this.auth = new DeviceAuth(this.options.auth, { username: this.options.username, password: this.options.password });
  }

  private lane(control: boolean | undefined): Lane {
    if (control) return (this.controlLane ??= new Lane(this.options.origin, this.connectionOptions(), CONTROL_CONNECTIONS));
    return (this.mainLane ??= new Lane(this.options.origin, this.connectionOptions(), this.options.connections));
  }

  /** Requests sent again since the client was made, each after the device closed a kept-alive connection without answering it (`RequestOptions.repeatable`). */
  get resent(): number {
    return this.resentCount;
  }

  /** A short label for logs and messages: never holds credentials. */
  get label(): string {
    return this.options.origin;
  }

  /**
   * What a device's own words must not hold to be shown in an error text: the password, the
   * username and the Basic form of both (a device may echo a request or its header).
   */
  get secrets(): readonly string[] {
    // Asked on every answer read: made once (the options never change).
    this.secretList ??= Object.freeze(secretsOf(this.options.username, this.options.password));
    return this.secretList;
  }

  request(opts: RequestOptions): Promise<DeviceResponse> {
    return this.told(this.call(opts), opts.signal, opts.report !== false);
  }

  /** Opens a never-ending response (multipart streams) on its own connection. */
  openStream(opts: StreamOptions): Promise<DeviceStream> {
    return this.told(this.open(opts), opts.signal, true);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.mainLane?.close(), this.controlLane?.close(), ...[...(this.streams ?? [])].map((close) => close())]);
  }

  /** Tells `onOutcome` how the call ended, unless it teaches nothing (see `ClientHooks.onOutcome`). */
  private async told<T>(call: Promise<T>, signal: AbortSignal | undefined, report: boolean): Promise<T> {
    if (!report || !this.hooks.onOutcome) return call;
    try {
      const result = await call;
      this.hooks.onOutcome({ ok: true });
      return result;
    } catch (err) {
      if (!signal?.aborted && !this.closed && err instanceof IpcamError) this.hooks.onOutcome({ ok: false, error: err });
      throw err;
    }
  }

  private async call(opts: RequestOptions): Promise<DeviceResponse> {
    this.assertOpen();
    checkTarget(opts.path);
    if (opts.probe !== undefined) checkTarget(opts.probe);
    const method = opts.method ?? 'GET';
    const timeout = opts.timeout ?? this.options.timeout;
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.contentType) headers['content-type'] = opts.contentType;
    const body = bodyOf(opts);
    if (body.contentType !== undefined) headers['content-type'] = body.contentType;
    if (body.length > 0) headers['content-length'] = String(body.length);
    const deadline = new Deadline(timeout, body.length, opts.deadline);
    deadline.follow(opts.signal);
    const lane = this.lane(opts.control);
    // undici's own idle timeouts are the device's (its Clients are made with them): given per call only when the call has its own.
    const timeouts = timeout === this.options.timeout ? {} : { headersTimeout: timeout, bodyTimeout: timeout };
    // A file sent twice (a firmware, a backup restored) is never a repeat of nothing.
    const repeatable = opts.repeatable === true && opts.upload === undefined;
    const resends: Resends = { left: RACE_RESENDS };
    let seat: Seat | undefined;
    try {
      // One connection for the whole exchange: a probe and an authentication retry follow on it.
      seat = lane.take() ?? (await lane.wait(deadline.line));
      if (opts.probe !== undefined && body.length > 0 && !this.authSettled && this.options.auth !== 'basic') {
        // The probe is a read (see `probe`): safe to repeat.
        await this.exchange(seat, { ...timeouts, method: 'GET', path: opts.probe, headers: {}, body: null }, PROBE_LIMITS, deadline, { repeatable: true, resends });
      }
      const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
      const limits: BufferedLimits = {
        maxBytes,
        tooLarge: () => new IpcamError('EPARSE', `The answer to ${this.describe(method, opts.path)} is larger than ${maxBytes} bytes`),
        discard: isChallenge,
        discardBytes: CHALLENGE_BODY_MAX,
        onBytes: (bytes) => deadline.received(bytes),
        ...(opts.onChunk ? { onChunk: opts.onChunk } : {}),
      };
      const reply = await this.exchange(seat, { ...timeouts, method, path: opts.path, headers, body: body.make }, limits, deadline, { repeatable, resends });
      const response: DeviceResponse = { status: reply.status, headers: reply.headers, contentType: contentTypeOf(reply.headers), body: reply.body };
      if (!opts.allowHttpError && (response.status < 200 || response.status >= 300)) assertOk(response, this.describe(method, opts.path));
      return response;
    } catch (err) {
      if (deadline.expired) throw new IpcamError('ETIMEOUT', `No complete answer from ${this.label} (${this.describe(method, opts.path)}) within ${deadline.seconds} s`);
      throw this.toIpcamError(err, method, opts.path);
    } finally {
      if (seat) lane.release(seat);
      deadline.clear();
    }
  }

  private async open(opts: StreamOptions): Promise<DeviceStream> {
    this.assertOpen();
    checkTarget(opts.path);
    // The connector is wrapped to keep the socket, so that closing during a slow connect (an
    // unreachable camera) releases it at once instead of at the connect timeout.
    const connector = this.connectionOptions().connect as unknown as (o: buildConnector.Options, cb: buildConnector.Callback) => Socket;
    const sockets = new Set<Socket>();
    const client = new Client(this.options.origin, {
      headersTimeout: this.options.timeout,
      bodyTimeout: opts.stallTimeout ?? 30_000,
      pipelining: 1,
      connect: (options, callback) => {
        const socket = connector(options, callback);
        // A quiet stream is healthy: a dead peer is found by keepalive probes after 20 s idle (undici's default is 60 s).
        socket.setKeepAlive(true, 20_000);
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        return socket;
      },
    });
    const streams = (this.streams ??= new Set());
    const close = async (): Promise<void> => {
      if (!streams.delete(close)) return;
      for (const socket of sockets) destroyWithError(socket);
      await client.destroy().catch(() => undefined);
    };
    streams.add(close);
    // The opening (authentication, headers, a refused answer's body) has a deadline; the body that follows never ends.
    const deadline = new Deadline(this.options.timeout, 0);
    deadline.follow(opts.signal);
    try {
      const opening = await this.openExchange(client, opts.path, deadline);
      const response = { status: opening.head.status, headers: opening.head.headers, contentType: contentTypeOf(opening.head.headers) };
      if (response.status < 200 || response.status >= 300) {
        await drain(opening.body, CHALLENGE_BODY_MAX).catch(() => undefined);
        assertOk({ ...response, body: Buffer.alloc(0) }, this.describe('GET', opts.path));
      }
      return { ...response, body: opening.body, close };
    } catch (err) {
      await close();
      if (deadline.expired) throw new IpcamError('ETIMEOUT', `No answer in time from ${this.label} (${this.describe('GET', opts.path)})`);
      throw this.toIpcamError(err, 'GET', opts.path);
    } finally {
      deadline.clear();
    }
  }

  /**
   * Sends the request through undici's `dispatch()`, answering authentication challenges
   * (`authenticated`), and reads the answer whole within `limits` (a 401's body is thrown away,
   * bounded). The deadline ends it all, each attempt as it goes.
   */
  private exchange(seat: Seat, call: Call, limits: BufferedLimits, deadline: Deadline, race: RaceRule): Promise<BufferedReply> {
    return this.authenticated(call.method, call.path, async (authorization) => {
      const headers = authorization === undefined ? call.headers : { ...call.headers, authorization };
      const reply = await this.send(seat, { ...call, headers }, limits, deadline, race);
      // A 401's body is already read and thrown away (`limits.discard`).
      return { status: reply.status, headers: reply.headers, answer: reply, discard: settled };
    }, deadline);
  }

  /**
   * One request on the seat's connection, read whole. When it went out on a connection kept
   * alive from an earlier answer and the device closed that connection before any byte of the
   * answer came, a repeatable call is sent again on a new connection (the seat's Client opens
   * one), within the same deadline and at most `RACE_RESENDS` times per exchange; any other call
   * fails with ECONN saying it was not repeated.
   */
  private async send(seat: Seat, call: Call, limits: BufferedLimits, deadline: Deadline, race: RaceRule): Promise<BufferedReply> {
    for (;;) {
      const reuse = reuseOf(seat);
      // A stream body is made anew for each attempt: an authentication retry sends it again.
      const body = typeof call.body === 'function' ? call.body() : call.body;
      const answer = new BufferedAnswer(limits);
      deadline.inFlight((reason) => answer.abort(reason));
      seat.client.dispatch({ ...call, body }, answer);
      try {
        return await answer.reply;
      } catch (err) {
        if (reuse === undefined || deadline.line.aborted || !closedByPeer(err) || !closedUnanswered(seat, reuse)) throw err;
        if (!race.repeatable) {
          throw new IpcamError(
            'ECONN',
            `${this.label} (${this.describe(call.method, call.path)}): the device closed a reused keep-alive connection before answering; the command was not repeated because it is not safe to repeat (the device may or may not have carried it out)`,
          );
        }
        if (race.resends.left <= 0) throw err;
        race.resends.left -= 1;
        this.resentCount += 1;
      }
    }
  }

  /**
   * `exchange()` for a stream: the GET goes through undici's `dispatch()`, so that its body
   * reaches a sink with no Readable in between. The deadline ends the opening, each attempt as it goes.
   */
  private openExchange(client: Client, path: string, deadline: Deadline): Promise<{ head: StreamHead; body: StreamBody }> {
    return this.authenticated('GET', path, async (authorization) => {
      const body = new StreamBody();
      deadline.inFlight((reason) => body.destroy(reason));
      client.dispatch({ method: 'GET', path, headers: authorization === undefined ? {} : { authorization } }, body);
      const head = await body.head;
      return { status: head.status, headers: head.headers, answer: { head, body }, discard: () => drain(body, CHALLENGE_BODY_MAX) };
    }, deadline);
  }

  /**
   * The authentication rounds of one exchange, written once for requests and streams: each
   * attempt goes out with what the device's last challenge asked for; a 401's body is read
   * (bounded, by `discard`) and thrown away before the retry, and each retry must bring
   * something new (`learn`).
   */
  private async authenticated<T>(method: string, path: string, send: (authorization: string | undefined) => Promise<Attempt<T>>, deadline: Deadline): Promise<T> {
    let refused = 0;
    for (let attempt = 1; ; attempt++) {
      if (deadline.line.aborted) throw deadline.line.reason;
      const { header, ticket } = this.auth.authorize(method, path);
      const sent = await send(header);
      if (sent.status !== 401) {
        this.authSettled = true;
        return sent.answer;
      }
      await sent.discard().catch(() => undefined);
      if (deadline.line.aborted) throw deadline.line.reason;
      if (ticket.scheme !== 'none') refused += 1;
      this.learn(sent.headers['www-authenticate'], ticket, attempt, refused);
    }
  }

  private learn(wwwAuthenticate: string | string[] | undefined, ticket: AuthTicket, attempt: number, refused: number): void {
    this.auth.challenged(wwwAuthenticate, ticket);
    // At most: no credentials -> challenge answered -> one stale-nonce renewal. A request that
    // already carried credentials gets one renewal too, not two.
    if (attempt >= 3 || refused >= 2) throw new IpcamError('EAUTH', 'The device keeps refusing the credentials', { status: 401 });
  }

  /** Made once, by the first connection: one connector (and TLS session cache) for the device, frozen options shared by its lanes. */
  private connectionOptions(): Readonly<Client.Options> {
    if (this.clientOptions) return this.clientOptions;
    const connect: Record<string, unknown> = { timeout: this.options.timeout };
    if (this.options.protocol === 'https') {
      connect['rejectUnauthorized'] = this.options.tlsVerify;
      if (this.options.ca !== undefined) connect['ca'] = this.options.ca;
      // SNI carries host names only (RFC 6066; Node warns when given an IP address).
      if (isIP(this.options.host) === 0) connect['servername'] = this.options.host;
    }
    this.clientOptions = Object.freeze({
      connect: buildConnector(connect as buildConnector.BuildOptions),
      headersTimeout: this.options.timeout,
      bodyTimeout: this.options.timeout,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
    });
    return this.clientOptions;
  }

  private assertOpen(): void {
    if (this.closed) throw new IpcamError('ECONN', `The connection to ${this.label} is closed`);
  }

  private describe(method: string, path: string): string {
    return `${method} ${path.split('?')[0]}`;
  }

  private toIpcamError(err: unknown, method: string, path: string): IpcamError {
    return transportError(err, { target: `${this.label} (${this.describe(method, path)})` });
  }
}

/**
 * Destroys a socket of ours with an error, never without one. undici reads a close-delimited
 * body (HTTP/1.0, no Content-Length) as complete when the socket closes cleanly; if the request
 * was aborted between our destroy and that 'close' event (a stop racing a device-node close),
 * undici 7 completes an aborted request and fails `assert(!this.aborted)` in
 * `Request.onComplete`: an uncatchable crash. With an error, undici records it as the socket's
 * error and skips that completion.
 */
function destroyWithError(socket: Socket): void {
  if (socket.destroyed) return;
  // undici listens while it owns the socket; during the connect only the connector may.
  socket.on('error', ignoreError);
  socket.destroy(new IpcamError('ECONN', 'The stream was closed'));
}

function ignoreError(): void {
  // The close was ours: the error only marks it as not a clean end of the body.
}

/** What a request sends: its length, its type when framed here, and how to make it for each attempt. */
interface Body {
  length: number;
  contentType?: string;
  /** A stream body is made anew for each attempt: an authentication retry sends it again. */
  make: string | Buffer | null | (() => Readable);
}

function bodyOf(opts: RequestOptions): Body {
  if (opts.upload) {
    const framed = frameUpload(opts.upload);
    return { length: framed.length, contentType: framed.contentType, make: () => piecesStream(framed.pieces, opts.onUpload) };
  }
  if (opts.body === undefined) return { length: 0, make: null };
  const bytes = Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(opts.body, 'utf8');
  const onUpload = opts.onUpload;
  return { length: bytes.length, make: onUpload ? () => piecesStream([bytes], onUpload) : bytes };
}

function secretsOf(username: string, password: string): string[] {
  if (password === '' && username === '') return [];
  return [password, username, Buffer.from(`${username}:${password}`, 'utf8').toString('base64')].filter((s) => s !== '');
}

/** A character a request target never holds raw (spaces, controls, non-ASCII). */
const NOT_ENCODED = /[^\x21-\x7e]/;

/** A target the device can take: a path of ours, bounded, on one line (`EINPUT` otherwise, nothing sent). */
function checkTarget(path: string): void {
  if (typeof path !== 'string' || !path.startsWith('/')) throw new IpcamError('EINPUT', 'A request target must be a path starting with /');
  if (path.length > MAX_TARGET) throw new IpcamError('EINPUT', `The request target is longer than ${MAX_TARGET} characters: a value given is too long`);
  if (NOT_ENCODED.test(path)) throw new IpcamError('EINPUT', 'The request target holds a character that is not encoded');
}

function contentTypeOf(headers: Record<string, string | string[] | undefined>): string {
  const value = headers['content-type'];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function assertOk(res: DeviceResponse, what: string): void {
  if (res.status >= 200 && res.status < 300) return;
  throw new IpcamError('EHTTP', `The device answered HTTP ${res.status} to ${what}`, { status: res.status });
}
