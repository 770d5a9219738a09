import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { FIRMWARE_MAX_BYTES } from '../ops/maintenance';
import type { DigestAlgorithm } from '../transport/digest';
import { paramRoute, snapshotRoute } from './cgi-routes';
import type { Route, SimContext } from './context';
import { controlRoute } from './control';
import { EventPoster, httpPostRoute, type PostEventOptions, type PostingRun, type PostResult, type StartPostingOptions } from './events';
import { answerAsHttp10, sendBuffer, sendText } from './respond';
import { ServerAuth, type SimulatorAuth } from './server-auth';
import { initialState, MAX_RECORDED, RECORDED_BODY_MAX, type AnswerStyle, type Fault, type RecordedRequest, type SimulatorState } from './state';
import { xmlDeviceRoutes } from './xml-routes';
import { plateRoutes } from './plate-routes';
import { DiscoveryResponder } from './discovery';

export type { AnswerStyle, Fault, RecordedRequest, SimulatorState, SimulatedDeviceInfo } from './state';
export { simulatorMac } from './state';
export type { SimulatorAuth } from './server-auth';
export type { DetectionKind, RelayChange, SimulatedIo, StreamFault, StreamStyle } from './io';
export type { PtzCommand, SimulatedPtz } from './ptz';
export type { EventFormat, EventKind, PostEventOptions, PostingRun, PostResult, StartPostingOptions } from './events';

export interface SimulatorOptions {
  /** TCP port (default 0: any free port). */
  port?: number;
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  username?: string;
  password?: string;
  /** Accepted schemes (default `any`: Digest SHA-256, Digest MD5 and Basic are offered). */
  auth?: SimulatorAuth;
  realm?: string;
  digestAlgorithms?: DigestAlgorithm[];
  /** Digest nonce lifetime before `stale=true` (ms, default 5 minutes). */
  nonceTtl?: number;
  /** Serve HTTPS with this PEM key and certificate instead of HTTP. */
  tls?: { key: string; cert: string };
  /** How the device answers (default: HTTP/1.1 with Content-Length, keep-alive); see `setAnswer`. */
  answer?: Partial<AnswerStyle>;
  /** TCP port of the RTSP server (default 0: any free port; named in the parameter Network.RTSP.Port). */
  rtspPort?: number;
  /** UDP port answering WS-Discovery probes (default 0: any free port; named by `discoveryPort`); with `discoveryMulticast`, 3702 unless given, and 0 is refused. */
  discoveryPort?: number;
  /** Also answer multicast probes on 3702, where the machine allows it (default false). */
  discoveryMulticast?: boolean;
  /**
   * The device's MAC (default `58:5b:69:00:00:01`; `simulatorMac(n)` numbers a fleet's devices):
   * GetDeviceInfo, the parameters, event posts and the storage folder name give it; the serial
   * number follows it. Simulators of one fleet need different ones, as real devices have.
   */
  mac?: string;
  /** The device's own name (GetDeviceInfo `deviceName`, event posts; default `Simulated IPC`). */
  name?: string;
  /** Called with each request as it is recorded (the bench times relay requests; `requests` keeps the last 1,000 only). */
  onRequest?: (request: RecordedRequest) => void;
}

export interface Simulator {
  /** Base URL, e.g. `http://127.0.0.1:38211`. */
  url: string;
  host: string;
  port: number;
  /** The RTSP port (DESCRIBE answered with SDP). */
  rtspPort: number;
  /** The UDP port answering WS-Discovery probes (unicast; 3702 when it joined the multicast group). */
  discoveryPort: number;
  /** True when it also answers multicast probes. */
  discoveryMulticast: boolean;
  /** Probes answered so far. */
  readonly discoveryAnswered: number;
  /** HTTP connections open to the device now, and accepted since it started (what a client holds of a device). */
  readonly connections: { readonly open: number; readonly accepted: number };
  state: SimulatorState;
  /** Adds a fault; it hits matching requests until spent or cleared. */
  inject(fault: Fault): void;
  clearFaults(): void;
  /** Forgets the recorded requests (the total count too). */
  resetRequests(): void;
  /** Calls `listener` with each request as it is recorded, until the function returned is called (resetRequests does not end it). */
  watchRequests(listener: (request: RecordedRequest) => void): () => void;
  /** Changes how the device answers from the next request on; going half-open also stalls open streams. */
  setAnswer(style: Partial<AnswerStyle>): void;
  /** Posts device events (plate, keep-alive, alarm status) as a camera or recorder does; one result per post. */
  postEvent(options?: PostEventOptions): Promise<PostResult[]>;
  /** Posts at `ratePerSecond` until stopped, `count` is reached or the simulator closes. */
  startPosting(options?: StartPostingOptions): PostingRun;
  close(): Promise<void>;
}

/** Order matters: the control API answers before authentication, device routes after it. */
const DEVICE_ROUTES: Route[] = [
  xmlDeviceRoutes,
  (ctx) => ctx.state.alarms.route(ctx),
  plateRoutes,
  httpPostRoute,
  (ctx) => ctx.state.ptz.route(ctx),
  (ctx) => ctx.state.io.route(ctx),
  snapshotRoute,
  paramRoute,
  (ctx) => ctx.state.equipment.route(ctx),
  (ctx) => ctx.state.files.route(ctx),
  (ctx) => ctx.state.certificates.route(ctx),
  (ctx) => ctx.state.maintenance.route(ctx),
  (ctx) => ctx.state.serveTests.route(ctx),
  (ctx) => ctx.state.media.route(ctx),
  (ctx) => ctx.state.records.route(ctx),
];

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const state = initialState({ ...(options.mac !== undefined && { mac: options.mac }), ...(options.name !== undefined && { name: options.name }) });
  Object.assign(state.account, { username: options.username ?? 'admin', password: options.password ?? 'admin' });
  Object.assign(state.answer, options.answer);
  const auth = new ServerAuth({
    mode: options.auth ?? 'any',
    account: state.account,
    realm: options.realm ?? 'ipcam-simulator',
    algorithms: options.digestAlgorithms ?? ['SHA-256', 'MD5'],
    nonceTtl: options.nonceTtl ?? 5 * 60_000,
  });
  const sockets = new Set<Socket>();
  let accepted = 0;
  const timers = new Set<NodeJS.Timeout>();
  const poster = new EventPoster(state);

  const listener: RequestListener = (req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendText(res, 500, `Simulator error: ${err instanceof Error ? err.message : String(err)}`);
      else res.destroy();
    });
  };
  const server: Server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, listener) : createHttpServer(listener);
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    accepted += 1;
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [seconds, nanos] = process.hrtime();
    const monotonic = seconds * 1e3 + nanos / 1e6;
    const body = await readRequestBody(req);
    const ctx = context(req, res, body, state);
    if (await controlRoute(ctx, simulator)) return;

    const verdict = auth.verify(req);
    record(ctx, verdict.ok ? verdict.scheme : 'rejected', monotonic);
    // Half-open: read, never answered; close() destroys the socket.
    if (state.answer.halfOpen) return;
    if (state.answer.http10) answerAsHttp10(res);
    if (applyFault(ctx, verdict.ok)) return;
    if (!verdict.ok) {
      res.setHeader('www-authenticate', auth.challenges(verdict.stale));
      sendText(res, 401, 'Unauthorized');
      return;
    }
    for (const route of DEVICE_ROUTES) if (await route(ctx)) return;
    sendText(res, 404, 'Not Found');
  }

  const watchers = new Set<(request: RecordedRequest) => void>();

  function record(ctx: SimContext, scheme: RecordedRequest['auth'], monotonic: number): void {
    state.requestCount += 1;
    const recorded: RecordedRequest = {
      method: ctx.method,
      path: ctx.path,
      rawQuery: rawQueryOf(ctx.req.url ?? ''),
      query: ctx.query,
      headers: { ...ctx.req.headers },
      body: ctx.body.toString('utf8', 0, Math.min(ctx.body.length, RECORDED_BODY_MAX)),
      bodyBytes: ctx.body.length,
      auth: scheme,
      time: Date.now(),
      monotonic,
    };
    state.requests.push(recorded);
    options.onRequest?.(recorded);
    for (const watcher of [...watchers]) watcher(recorded);
    if (state.requests.length > MAX_RECORDED) state.requests.splice(0, state.requests.length - MAX_RECORDED);
  }

  /** Plays the first matching fault; true when it took over the answer. */
  function applyFault(ctx: SimContext, authenticated: boolean): boolean {
    const fault = state.faults.find((f) => ctx.path.startsWith(f.path ?? '/'));
    if (!fault) return false;
    // A lying device still asks for credentials first: its answer is for the authenticated request.
    if (fault.kind === 'answer' && !authenticated) return false;
    if (fault.times !== undefined && --fault.times <= 0) state.faults.splice(state.faults.indexOf(fault), 1);
    const { res } = ctx;
    switch (fault.kind) {
      case 'stall':
        return true; // never answer; close() destroys the socket
      case 'drop':
        ctx.req.socket.destroy();
        return true;
      case 'garbage':
        ctx.req.socket.end('\x00\x13garbage that is not HTTP\r\n\r\n');
        return true;
      case 'status':
        if (fault.status === 401) res.setHeader('www-authenticate', auth.challenges(false));
        sendText(res, fault.status ?? 503, 'Simulated failure');
        return true;
      case 'answer': {
        sendBuffer(res, fault.status ?? 200, Buffer.isBuffer(fault.body) ? fault.body : Buffer.from(fault.body ?? '', 'utf8'), fault.contentType);
        return true;
      }
      case 'slow': {
        const timer = setTimeout(() => {
          timers.delete(timer);
          void (async () => {
            for (const route of DEVICE_ROUTES) if (await route(ctx)) return;
            sendText(res, 404, 'Not Found');
          })();
        }, fault.delay ?? 1000);
        timers.add(timer);
        return true;
      }
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const rtspPort = await state.media.startRtsp({ host: options.host ?? '127.0.0.1', port: options.rtspPort ?? 0, auth, params: state.params }).catch(async (err: unknown) => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw err;
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const discovery = new DiscoveryResponder({
    host: address.family === 'IPv4' ? address.address : '127.0.0.1',
    ...(options.discoveryPort !== undefined && { port: options.discoveryPort }),
    multicast: options.discoveryMulticast === true,
    httpPort: address.port,
    protocol: options.tls ? 'https' : 'http',
    device: state.device,
  });
  await discovery.start().catch(async (err: unknown) => {
    await state.media.closeRtsp();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw err;
  });

  const simulator: Simulator = {
    url: `${options.tls ? 'https' : 'http'}://${host}:${address.port}`,
    host: address.address,
    port: address.port,
    rtspPort,
    discoveryPort: discovery.port,
    discoveryMulticast: discovery.multicast,
    get connections() {
      return { open: sockets.size, accepted };
    },
    get discoveryAnswered() {
      return discovery.answered;
    },
    state,
    inject: (fault) => state.faults.push({ ...fault }),
    setAnswer: (style) => {
      Object.assign(state.answer, style);
      if (style.halfOpen) state.io.streamFault('stall');
    },
    clearFaults: () => {
      state.faults.length = 0;
    },
    resetRequests: () => {
      state.requests.length = 0;
      state.requestCount = 0;
    },
    watchRequests: (listener) => {
      const watcher = (request: RecordedRequest): void => listener(request);
      watchers.add(watcher);
      return () => void watchers.delete(watcher);
    },
    postEvent: (o) => poster.postEvent(o),
    startPosting: (o) => poster.startPosting(o),
    close: async () => {
      await poster.close();
      state.io.closeAll();
      await state.media.closeRtsp();
      await discovery.close();
      state.serveTests.close();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
  return simulator;
}

function context(req: IncomingMessage, res: ServerResponse, body: Buffer, state: SimulatorState): SimContext {
  // Recorders send an absolute URL in the request line; the base only matters for relative ones.
  const url = new URL(req.url ?? '/', 'http://simulator');
  return { req, res, method: req.method ?? 'GET', path: url.pathname, query: [...url.searchParams], body, state };
}

function rawQueryOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
}

/** A firmware image at its cap with its form framing fits. */
const MAX_REQUEST_BODY = FIRMWARE_MAX_BYTES + 1024 * 1024;

async function readRequestBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BODY) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
