import { strict as assert } from 'node:assert';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { Client, request } from 'undici';
import { IpcamError } from '../lib/errors/errors';
import { decodeImage, type PlateDetection } from '../lib/events/parse';
import { EventServer, SUCCESS_DOCUMENT, type EventServerOptions, type ReceivedPost } from '../lib/events/server';
import { startSimulator, type Simulator } from '../lib/simulator';
import { buildKeepAlive, buildPlateEvent, EventPoster } from '../lib/simulator/events';
import { PLATE_JPEG, SNAPSHOT_JPEG } from '../lib/simulator/images';
import { DeviceClient } from '../lib/transport/client';
import { xmlExchange as xmlCall } from '../lib/answer';
import { buildDocument, parseXml, xml } from '../lib/xml/codec';
import { setHttpPostConfig } from '../lib/ops/http-post';
import { expectQuiet, SIM_PASSWORD, SIM_USER } from './helpers';

/** The answer the cameras expect, written out here so that a change of it shows. */
const SUCCESS_ROOT = '<config version="1.0" xmlns="http://www.ipc.com/ver10"><status>success</status></config>';

/** An EventServer on a free loopback port with everything it hands its subscribers collected. */
interface Harness {
  server: EventServer;
  port: number;
  url: string;
  received: ReceivedPost[];
  warnings: string[];
  /** Resolves once `n` posts (in all) have been delivered. */
  delivered(n: number): Promise<void>;
  plates(): PlateDetection[];
}

const open: Harness[] = [];

async function harness(options: EventServerOptions = {}): Promise<Harness> {
  const warnings: string[] = [];
  const server = new EventServer({ port: 0, bind: '127.0.0.1', onWarning: (text) => warnings.push(text), ...options });
  await server.start();
  const received: ReceivedPost[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  server.subscribe({
    onPost: (post) => {
      received.push(post);
      for (const w of waiters.filter((w) => received.length >= w.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
  });
  const h: Harness = {
    server,
    port: server.port,
    url: `http://127.0.0.1:${server.port}${options.path ?? '/'}`,
    received,
    warnings,
    delivered: (n) => (received.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    plates: () => received.flatMap((r) => r.posts).filter((p): p is PlateDetection => p.kind === 'plate'),
  };
  open.push(h);
  return h;
}

function plateDoc(plate: string, format: 'ipc' | 'nvr' = 'ipc'): string {
  return buildPlateEvent(format, { plate, listType: 'whiteList', images: false });
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One TCP connection speaking HTTP/1.1 by hand: request lines exactly as written, responses read by Content-Length. */
class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  closed = false;
  readonly closedPromise: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiting?.();
    });
    socket.on('error', () => undefined);
    this.closedPromise = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        this.waiting?.();
        resolve();
      }),
    );
  }

  static async open(port: number, localAddress?: string): Promise<RawConnection> {
    const socket = connect({ host: '127.0.0.1', port, ...(localAddress && { localAddress }) });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new RawConnection(socket);
  }

  post(requestTarget: string, body: string, headers: Record<string, string> = {}): void {
    const bytes = Buffer.from(body, 'utf8');
    const lines = [`POST ${requestTarget} HTTP/1.1`, `Host: 127.0.0.1`, `Content-Length: ${bytes.length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    this.socket.write(Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), bytes]));
  }

  async response(): Promise<RawResponse> {
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of head.slice(1)) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (this.buffer.length >= end + 4 + length) {
          const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
          this.buffer = this.buffer.subarray(end + 4 + length);
          return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1]), headers, body };
        }
      }
      if (this.closed) throw new Error(`connection closed before a whole response: ${this.buffer.toString('latin1')}`);
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

async function post(url: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'text/xml' }): Promise<{ status: number; body: string; headers: IncomingHttpHeaders }> {
  const res = await request(url, { method: 'POST', body, headers });
  return { status: res.statusCode, body: await res.body.text(), headers: res.headers as IncomingHttpHeaders };
}

function activeHandles(): number {
  return (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().length;
}

/**
 * Handles closed a moment ago (the peer's side of a destroyed socket, a listener whose close
 * callback is pending) leave the list a few loop turns later: wait up to 2 s for the count to come
 * down to `baseline`, and return it. A leak keeps it above.
 */
async function handlesSettledTo(baseline: number): Promise<number> {
  const deadline = Date.now() + 2_000;
  while (activeHandles() > baseline && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  return activeHandles();
}

function expectCode(err: unknown, code: IpcamError['code']): true {
  assert.ok(err instanceof IpcamError, `expected an IpcamError ${code}, got ${String(err)}`);
  assert.equal(err.code, code, err.message);
  return true;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.server.close()));
});

describe('EventServer', () => {
  it('answers a post at once with the success document the cameras expect, and delivers it', async () => {
    const h = await harness();
    const res = await post(h.url, plateDoc('OK1'));
    assert.equal(res.status, 200);
    assert.equal(res.body, SUCCESS_DOCUMENT);
    assert.ok(res.body.includes(SUCCESS_ROOT), res.body);
    assert.match(String(res.headers['content-type']), /xml/);
    const answer = parseXml(res.body);
    assert.equal(answer.name, 'config');
    await h.delivered(1);
    assert.deepEqual(
      h.plates().map((p) => [p.plate, p.listType]),
      [['OK1', 'whiteList']],
    );
    assert.equal(h.received[0]?.remoteAddress, '127.0.0.1');
    assert.deepEqual(h.warnings, []);
  });

  it('keeps idle connections: Keep-Alive timeout >= 60 s, and a socket idle past the 5 s default is still served', async function () {
    this.timeout(20_000);
    const h = await harness();
    const conn = await RawConnection.open(h.port);
    try {
      conn.post('/', plateDoc('KA1'));
      const first = await conn.response();
      assert.equal(first.status, 200);
      const timeout = Number(/timeout=(\d+)/.exec(first.headers['keep-alive'] ?? '')?.[1]);
      assert.ok(timeout >= 60, `Keep-Alive header ${first.headers['keep-alive']} announces less than 60 s`);
      assert.notEqual(first.headers['connection'], 'close');
      // Node's default keepAliveTimeout is 5 s: a server left at it would have closed the socket by now.
      await new Promise((resolve) => setTimeout(resolve, 5_600));
      assert.equal(conn.closed, false, 'the server closed an idle connection within 5.6 s');
      conn.post('/', plateDoc('KA2'));
      const second = await conn.response();
      assert.equal(second.status, 200);
      await h.delivered(2);
      assert.deepEqual(
        h.plates().map((p) => p.plate),
        ['KA1', 'KA2'],
      );
    } finally {
      conn.destroy();
    }
  });

  it('accepts an absolute URL in the request line (recorders), under the configured path, and honours Connection: close', async () => {
    const h = await harness({ path: '/events' });
    const conn = await RawConnection.open(h.port);
    conn.post(`http://127.0.0.1:${h.port}/events/lpr?x=1`, plateDoc('ABS1', 'nvr'), { 'Content-Type': 'application/soap+xml', Connection: 'close' });
    const res = await conn.response();
    assert.equal(res.status, 200);
    assert.equal(res.body, SUCCESS_DOCUMENT);
    await conn.closedPromise;
    await h.delivered(1);
    assert.equal(h.plates()[0]?.plate, 'ABS1');

    const outside = await RawConnection.open(h.port);
    outside.post(`http://127.0.0.1:${h.port}/other`, plateDoc('ABS2', 'nvr'), { Connection: 'close' });
    assert.equal((await outside.response()).status, 404);
    outside.destroy();
    const again = await post(`http://127.0.0.1:${h.port}/events`, plateDoc('ABS3'));
    assert.equal(again.status, 200);
    await h.delivered(2);
    assert.deepEqual(
      h.plates().map((p) => p.plate),
      ['ABS1', 'ABS3'],
    );
  });

  it('takes posts as application/soap+xml, text/xml, application/xml and without content type', async () => {
    const h = await harness();
    const types = ['application/soap+xml', 'text/xml', 'application/xml; charset=utf-8', undefined];
    for (const [i, type] of types.entries()) {
      const res = await post(h.url, plateDoc(`CT${i}`, i % 2 === 0 ? 'nvr' : 'ipc'), type === undefined ? {} : { 'content-type': type });
      assert.equal(res.status, 200, String(type));
    }
    await h.delivered(types.length);
    assert.deepEqual(
      h.plates().map((p) => p.plate),
      ['CT0', 'CT1', 'CT2', 'CT3'],
    );
  });

  it('malformed XML and non-XML are 400 with one warning (the rest summed up); the next valid post on the same connection is served', async () => {
    const h = await harness();
    const client = new Client(`http://127.0.0.1:${h.port}`);
    try {
      // An empty body is no longer among them: it is the keep-alive of the newer push (field notes).
      const bad = ['<config version="1.7"><smartType>VEHICE</smartType><listInfo>', 'hello, this is not XML', '{"plate":"X"}', '<config><unknown/></config>'];
      for (const [i, body] of bad.entries()) {
        const res = await client.request({ method: 'POST', path: '/', body, headers: { 'content-type': 'text/xml' } });
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        await res.body.dump();
        // The first refusal is written at once; the others of that kind within the interval are counted.
        assert.equal(h.warnings.length, 1, `warnings after ${JSON.stringify(body)}: ${h.warnings.join(' | ')}`);
        assert.match(h.warnings[0] ?? '', /400.*127\.0\.0\.1/, 'the warning names the status and the sender');
        const ok = await client.request({ method: 'POST', path: '/', body: plateDoc(`AFTER${i}`), headers: { 'content-type': 'text/xml' } });
        assert.equal(ok.statusCode, 200);
        assert.equal(await ok.body.text(), SUCCESS_DOCUMENT);
        await h.delivered(i + 1);
      }
      assert.deepEqual(
        h.plates().map((p) => p.plate),
        bad.map((_, i) => `AFTER${i}`),
      );
    } finally {
      await client.close();
    }
    await h.server.close();
    assert.equal(h.warnings.length, 2, 'closing writes the summary of the held-back warnings');
    assert.match(h.warnings[1] ?? '', /^3 more like this in the last 30 s; the last: .*Unknown post/);
  });

  it('a body of maxBody bytes is served; maxBody + 1 is 413 with a warning (declared or streamed); the next post is served', async () => {
    const maxBody = 4096;
    const h = await harness({ maxBody });
    const pad = (doc: string, size: number): string => {
      const comment = size - Buffer.byteLength(doc) - '<!---->'.length;
      assert.ok(comment >= 0);
      return doc + `<!--${'x'.repeat(comment)}-->`;
    };
    const exact = pad(plateDoc('MAX1'), maxBody);
    assert.equal(Buffer.byteLength(exact), maxBody);
    assert.equal((await post(h.url, exact)).status, 200);
    await h.delivered(1);

    const over = pad(plateDoc('MAX2'), maxBody + 1);
    assert.equal(Buffer.byteLength(over), maxBody + 1);
    const declared = await post(h.url, over);
    assert.equal(declared.status, 413);
    assert.equal(h.warnings.length, 1);
    assert.match(h.warnings[0] ?? '', /4096/);

    // Streamed with chunked encoding: no Content-Length to refuse it by. The answer comes while the
    // body is still being sent; the rest is read and dropped, so the sender can read the answer.
    const chunked = await new Promise<number>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: h.port }, () => {
        const half = Buffer.from(over).subarray(0, 3000);
        const rest = Buffer.from(over).subarray(3000);
        const chunk = (b: Buffer): string => `${b.length.toString(16)}\r\n${b.toString('latin1')}\r\n`;
        socket.write(`POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: text/xml\r\n\r\n${chunk(half)}`);
        socket.write(`${chunk(rest)}0\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
        if (Number.isFinite(status)) {
          socket.destroy();
          resolve(status);
        }
      });
      socket.on('error', () => undefined);
      socket.on('close', () => reject(new Error(`no answer: ${text}`)));
    });
    assert.equal(chunked, 413);
    assert.equal(h.warnings.length, 1, 'a second 413 within the interval is counted, not written');

    const after = await post(h.url, plateDoc('MAX3'));
    assert.equal(after.status, 200);
    await h.delivered(2);
    assert.deepEqual(
      h.plates().map((p) => p.plate),
      ['MAX1', 'MAX3'],
    );
  });

  it('wrong or missing credentials are 401 with a Basic challenge and one warning; the right ones are served', async () => {
    const h = await harness({ username: SIM_USER, password: SIM_PASSWORD });
    const basic = (user: string, pass: string): string => `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}`;
    const none = await post(h.url, plateDoc('AU1'));
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /^Basic realm=/);
    const wrong = await post(h.url, plateDoc('AU2'), { 'content-type': 'text/xml', authorization: basic(SIM_USER, `${SIM_PASSWORD}x`) });
    assert.equal(wrong.status, 401);
    const wrongUser = await post(h.url, plateDoc('AU3'), { 'content-type': 'text/xml', authorization: basic('other', SIM_PASSWORD) });
    assert.equal(wrongUser.status, 401);
    assert.equal(h.warnings.length, 1);
    assert.ok(h.warnings.every((w) => !w.includes(SIM_PASSWORD)), 'a warning carries the password');
    const right = await post(h.url, plateDoc('AU4'), { 'content-type': 'text/xml', authorization: basic(SIM_USER, SIM_PASSWORD) });
    assert.equal(right.status, 200);
    await h.delivered(1);
    assert.deepEqual(
      h.plates().map((p) => p.plate),
      ['AU4'],
    );
  });

  it('a sender outside the allow list is 403 with a warning and nothing is delivered', async () => {
    const h = await harness({ allow: '10.9.9.9' });
    const res = await post(h.url, plateDoc('AL1'));
    assert.equal(res.status, 403);
    assert.equal(h.warnings.length, 1);
    assert.match(h.warnings[0] ?? '', /allow/i);
    // A later, valid post from an allowed sender proves nothing was queued for the refused one.
    const keepalive = await post(h.url, buildKeepAlive('ipc'));
    assert.equal(keepalive.status, 403);
    assert.equal(h.received.length, 0);
  });

  it('after a 403 the next post from an allowed sender is served (allow list with a CIDR)', async () => {
    const h = await harness({ allow: '10.9.9.9, 127.0.0.2/32' });
    const refused = await RawConnection.open(h.port);
    refused.post('/', plateDoc('AL2'));
    assert.equal((await refused.response()).status, 403);
    refused.destroy();
    const allowed = await RawConnection.open(h.port, '127.0.0.2');
    allowed.post('/', plateDoc('AL3'));
    const res = await allowed.response();
    allowed.destroy();
    assert.equal(res.status, 200);
    await h.delivered(1);
    assert.equal(h.received[0]?.remoteAddress, '127.0.0.2');
    assert.deepEqual(
      h.plates().map((p) => p.plate),
      ['AL3'],
    );
    assert.equal(h.warnings.length, 1);
  });

  it('50 connections posting at once: all answered 200, all 50 delivered', async () => {
    const h = await harness();
    const clients = Array.from({ length: 50 }, () => new Client(`http://127.0.0.1:${h.port}`));
    try {
      const statuses = await Promise.all(
        clients.map(async (client, i) => {
          const res = await client.request({ method: 'POST', path: '/', body: plateDoc(`C${String(i).padStart(2, '0')}`, i % 2 === 0 ? 'ipc' : 'nvr'), headers: { 'content-type': 'text/xml' } });
          await res.body.dump();
          return res.statusCode;
        }),
      );
      assert.deepEqual(statuses, new Array(50).fill(200));
      await h.delivered(50);
      assert.equal(h.received.length, 50);
      assert.deepEqual(
        h.plates().map((p) => p.plate).sort(),
        Array.from({ length: 50 }, (_, i) => `C${String(i).padStart(2, '0')}`),
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('a port already in use rejects start() with ECONN and a clear message; nothing crashes, the first server still serves', async () => {
    const h = await harness();
    const second = new EventServer({ port: h.port, bind: '127.0.0.1' });
    const states: string[] = [];
    second.subscribe({ onState: (state) => states.push(state) });
    await assert.rejects(second.start(), (err: unknown) => {
      expectCode(err, 'ECONN');
      assert.match((err as Error).message, new RegExp(`${h.port}.*already in use`));
      return true;
    });
    assert.equal(second.state, 'failed');
    assert.ok(states.includes('failed'));
    await second.close();
    const res = await post(h.url, plateDoc('IU1'));
    assert.equal(res.status, 200);
    await h.delivered(1);
  });

  it('bad options are EINPUT before anything listens', () => {
    const bad: EventServerOptions[] = [{ port: 70000 }, { port: -1 }, { port: 1.5 }, { allow: '10.0.0.0/33' }, { allow: '10.0.0.1, not-an-ip' }, { allow: '10.0.0.0/x' }, { bind: 'nowhere' }, { maxBody: 0 }];
    for (const options of bad) {
      assert.throws(() => new EventServer(options), (err: unknown) => expectCode(err, 'EINPUT'), JSON.stringify(options));
    }
  });

  it('a subscriber that throws does not stop the others, and becomes a warning', async () => {
    const h = await harness();
    h.server.subscribe({
      onPost: () => {
        throw new Error('subscriber bug');
      },
    });
    const seen: string[] = [];
    h.server.subscribe({ onPost: (p) => seen.push(...p.posts.map((x) => x.kind)) });
    assert.equal((await post(h.url, buildKeepAlive('nvr'))).status, 200);
    await h.delivered(1);
    assert.deepEqual(seen, ['keepalive']);
    assert.ok(h.warnings.some((w) => w.includes('subscriber bug')));
  });

  it('close() releases everything: 100 start/post/close cycles leave no handle behind and free the port', async function () {
    this.timeout(60_000);
    const cycle = async (): Promise<number> => {
      const server = new EventServer({ port: 0, bind: '127.0.0.1' });
      await server.start();
      const port = server.port;
      assert.ok(port > 0);
      const client = new Client(`http://127.0.0.1:${port}`);
      const res = await client.request({ method: 'POST', path: '/', body: plateDoc('CL1'), headers: { 'content-type': 'text/xml' } });
      await res.body.dump();
      assert.equal(res.statusCode, 200);
      // A post half sent: a connection in the middle of a request, which server.close() alone waits for.
      const partial = await RawConnection.open(port);
      partial.socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n<config>');
      await new Promise((resolve) => setImmediate(resolve));
      // The client keeps its idle connection open too: close() must wait for neither.
      await server.close();
      assert.equal(server.state, 'closed');
      await partial.closedPromise;
      await client.close();
      return port;
    };
    await cycle(); // warm up whatever undici keeps process-wide
    const before = activeHandles();
    let port = 0;
    for (let i = 0; i < 100; i++) port = await cycle();
    const after = await handlesSettledTo(before);
    assert.equal(after, before, `active handles ${before} before, ${after} after 100 cycles`);
    // The last cycle's port is free again at once.
    const reuse = new EventServer({ port, bind: '127.0.0.1' });
    await reuse.start();
    assert.equal(reuse.port, port);
    await reuse.close();
  });
});

describe('simulator event posting', () => {
  let sim: Simulator;
  let device: DeviceClient;

  beforeEach(async () => {
    sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD });
    device = new DeviceClient({ host: sim.host, port: sim.port, username: SIM_USER, password: SIM_PASSWORD });
  });

  afterEach(async () => {
    await device.close();
    await sim.close();
  });

  for (const format of ['ipc', 'nvr'] as const) {
    it(`${format}: a plate post reaches an EventServer with the real plate crop and scene`, async () => {
      const h = await harness();
      const results = await sim.postEvent({ url: h.url, format, plate: 'SIM-Ä1', listType: 'temporaryList', direction: 'away', confidence: 97, channel: 2 });
      assert.deepEqual(results, [{ status: 200 }]);
      await h.delivered(1);
      const [plate] = h.plates();
      assert.ok(plate);
      assert.equal(plate.plate, 'SIM-Ä1');
      assert.equal(plate.listType, 'temporaryList');
      assert.equal(plate.direction, 'away');
      assert.equal(plate.confidence, 97);
      assert.equal(plate.channel, 2);
      const d = sim.state.device;
      assert.deepEqual(plate.device, format === 'ipc' ? { name: d.deviceName, mac: d.mac, sn: d.sn, ip: '127.0.0.1' } : { name: d.deviceName, mac: d.mac, ip: '127.0.0.1' });
      assert.deepEqual(decodeImage(plate.images.plate), PLATE_JPEG);
      assert.deepEqual(decodeImage(plate.images.scene), SNAPSHOT_JPEG);
    });

    it(`${format}: a caller's scene Buffer is delivered byte for byte`, async () => {
      const h = await harness();
      const comment = Buffer.alloc(60_000, 0x61);
      const scene = Buffer.concat([SNAPSHOT_JPEG.subarray(0, 2), Buffer.from([0xff, 0xfe]), Buffer.from([(comment.length + 2) >> 8, (comment.length + 2) & 0xff]), comment, SNAPSHOT_JPEG.subarray(2)]);
      assert.deepEqual(await sim.postEvent({ url: h.url, format, plate: 'BIG1', scene }), [{ status: 200 }]);
      await h.delivered(1);
      assert.deepEqual(decodeImage(h.plates()[0]?.images.scene), scene);
    });

    it(`${format}: keep-alive and alarm status posts arrive as such`, async () => {
      const h = await harness();
      assert.deepEqual(await sim.postEvent({ url: h.url, format, kind: 'keepalive' }), [{ status: 200 }]);
      assert.deepEqual(await sim.postEvent({ url: h.url, format, kind: 'alarmStatus', alarm: 'motionAlarm', id: 3, active: false }), [{ status: 200 }]);
      await h.delivered(2);
      const [keepalive, alarm] = h.received.map((r) => r.posts[0]);
      assert.equal(keepalive?.kind, 'keepalive');
      assert.equal(keepalive?.device.mac, sim.state.device.mac);
      assert.ok(alarm?.kind === 'alarmStatus');
      assert.deepEqual(alarm.alarms, [{ type: 'motionAlarm', id: 3, active: false }]);
    });
  }

  it('posts as the devices do: camera application/xml; charset=utf-8 keep-alive, recorder application/soap+xml, Connection: close, absolute URL; Basic credentials', async () => {
    const seen: Array<{ url: string; headers: IncomingHttpHeaders; socket: number }> = [];
    const sockets: unknown[] = [];
    const server: Server = createServer((req, res) => {
      if (!sockets.includes(req.socket)) sockets.push(req.socket);
      seen.push({ url: req.url ?? '', headers: req.headers, socket: sockets.indexOf(req.socket) });
      req.resume();
      req.on('end', () => res.end(SUCCESS_DOCUMENT));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const url = `http://127.0.0.1:${port}/alarm/post`;
      await sim.postEvent({ url, format: 'ipc', count: 3, username: 'cam', password: 'pw:1' });
      await sim.postEvent({ url, format: 'nvr', count: 2 });
      const camera = seen.slice(0, 3);
      const recorder = seen.slice(3);
      for (const r of camera) {
        assert.equal(r.url, '/alarm/post');
        assert.equal(r.headers['content-type'], 'application/xml; charset=utf-8');
        assert.equal(r.headers['authorization'], `Basic ${Buffer.from('cam:pw:1').toString('base64')}`);
      }
      assert.deepEqual(
        camera.map((r) => r.socket),
        [0, 0, 0],
        'a camera keeps its connection',
      );
      for (const r of recorder) {
        assert.equal(r.url, `http://127.0.0.1:${port}/alarm/post`);
        assert.equal(r.headers['content-type'], 'application/soap+xml');
        assert.equal(r.headers['connection'], 'close');
        assert.equal(r.headers['authorization'], undefined);
      }
      assert.notEqual(recorder[0]?.socket, recorder[1]?.socket, 'a recorder opens a connection per post');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('reports the server answer: 401 without the credentials it asks for, 200 with them', async () => {
    const h = await harness({ username: 'events', password: SIM_PASSWORD });
    assert.deepEqual(await sim.postEvent({ url: h.url }), [{ status: 401 }]);
    assert.deepEqual(await sim.postEvent({ url: h.url, username: 'events', password: SIM_PASSWORD }), [{ status: 200 }]);
    await h.delivered(1);
  });

  it('count and concurrency: 40 posts, 4 at a time, all delivered', async () => {
    const h = await harness();
    const results = await sim.postEvent({ url: h.url, count: 40, concurrency: 4, images: false, format: 'nvr' });
    assert.equal(results.length, 40);
    assert.ok(results.every((r) => r.status === 200));
    await h.delivered(40);
    assert.equal(h.plates().length, 40);
  });

  it('count at a rate: every post is sent and answered', async () => {
    const h = await harness();
    const results = await sim.postEvent({ url: h.url, count: 6, ratePerSecond: 100, images: false });
    assert.deepEqual(results, new Array(6).fill({ status: 200 }));
    await h.delivered(6);
  });

  it('an unreachable server is ECONN; bad options are EINPUT', async () => {
    const h = await harness();
    const port = h.port;
    await h.server.close();
    open.splice(open.indexOf(h), 1);
    await assert.rejects(sim.postEvent({ url: `http://127.0.0.1:${port}/` }), (err: unknown) => expectCode(err, 'ECONN'));
    const bad: unknown[] = [{ url: 'not a url' }, { url: 'ftp://x/' }, { kind: 'motion', url: h.url }, { format: 'dvr', url: h.url }, { listType: 'grey', url: h.url }, { confidence: 101, url: h.url }, { count: -1, url: h.url }, { ratePerSecond: 0, url: h.url }, { plate: '', url: h.url }];
    for (const options of bad) {
      await assert.rejects(sim.postEvent(options as Parameters<Simulator['postEvent']>[0]), (err: unknown) => expectCode(err, 'EINPUT'), JSON.stringify(options));
    }
  });

  it('startPosting posts at a rate until stopped, then nothing more; done gives the number answered', async () => {
    const h = await harness();
    const run = sim.startPosting({ url: h.url, ratePerSecond: 200, images: false, format: 'ipc' });
    await h.delivered(5);
    run.stop();
    const answered = await run.done;
    assert.ok(answered >= 5, `answered ${answered}`);
    const delivered = h.received.length;
    assert.equal(delivered, answered);
    expectQuiet(h.received, 'posts went on after stop()');
    await new Promise((resolve) => setTimeout(resolve, 100)); // 20 intervals at 200/s
    assert.equal(h.received.length, delivered, 'posts went on after stop()');
  });

  it('startPosting with a count stops by itself, reporting every result', async () => {
    const h = await harness();
    const statuses: number[] = [];
    const run = sim.startPosting({ url: h.url, ratePerSecond: 500, count: 7, images: false, onResult: (r) => statuses.push(r.status) });
    assert.equal(await run.done, 7);
    assert.deepEqual(statuses, new Array(7).fill(200));
    await h.delivered(7);
  });

  it('closing the simulator stops a posting run and releases its timers', async () => {
    const h = await harness();
    const baseline = activeHandles();
    const other = await startSimulator();
    let answered: () => void = () => undefined;
    const first = new Promise<void>((resolve) => (answered = resolve));
    const run = other.startPosting({ url: h.url, ratePerSecond: 0.5, images: false, onResult: () => answered() });
    await first;
    await other.close();
    assert.equal(await run.done, 1);
    assert.equal(await handlesSettledTo(baseline), baseline, 'a handle of the posting run was left behind');
  });

  it('the poster on its own: close() stops its runs and refuses further posts', async () => {
    const h = await harness();
    const poster = new EventPoster();
    let answered: () => void = () => undefined;
    const first = new Promise<void>((resolve) => (answered = resolve));
    const run = poster.startPosting({ url: h.url, ratePerSecond: 0.2, onResult: () => answered() });
    await first;
    await poster.close();
    assert.equal(await run.done, 1);
    await assert.rejects(poster.send({ url: h.url, format: 'ipc' }, plateDoc('X')), (err: unknown) => expectCode(err, 'ECONN'));
  });

  it('SetHttpPostConfig stores the target; posts without a url go there', async () => {
    const h = await harness({ path: '/lpr' });
    await assert.rejects(sim.postEvent({}), (err: unknown) => expectCode(err, 'EINPUT'));
    const stored = await setHttpPostConfig(device, { serverIp: '127.0.0.1', serverPort: h.port, path: '/lpr', keepalive: 60 });
    assert.equal(stored.keepalive, 60);
    assert.deepEqual(sim.state.httpPost, { enabled: true, serverIp: '127.0.0.1', serverPort: h.port, keepalive: 60, url: '/lpr' });
    const request = sim.state.requests.find((r) => r.path === '/SetHttpPostConfig');
    assert.ok(request);
    assert.match(request.body, /<httpPost><bSwitch type="boolean">true<\/bSwitch><serverIp type="string"><!\[CDATA\[127\.0\.0\.1\]\]><\/serverIp>/);
    // The server only serves /lpr: a 200 proves the stored path was used.
    assert.deepEqual(await sim.postEvent({ format: 'nvr', plate: 'CFG1' }), [{ status: 200 }]);
    await h.delivered(1);
    assert.equal(h.plates()[0]?.plate, 'CFG1');

    await setHttpPostConfig(device, { serverIp: '127.0.0.1', serverPort: h.port, path: '/lpr', enabled: false });
    assert.equal(sim.state.httpPost?.enabled, false);
    await assert.rejects(sim.postEvent({}), (err: unknown) => expectCode(err, 'EINPUT') && /switched off/.test((err as Error).message));
  });

  it('SetHttpPostConfig: keepaliveTimeval outside 30-120 is errorCode 16 Range Error, a missing block 15; the stored target is kept', async () => {
    const send = (keepalive: string, port = '5002'): Promise<unknown> =>
      xmlCall(device, {
        path: '/SetHttpPostConfig',
        body: buildDocument('1.0', [xml.el('httpPost', [xml.bool('bSwitch', true), xml.str('serverIp', '10.0.0.1'), xml.text('serverPort', port, 'uint16'), xml.uint('keepaliveTimeval', Number(keepalive)), xml.str('URL', '/')])]),
      });
    await send('30');
    assert.equal(sim.state.httpPost?.keepalive, 30);
    await send('120');
    assert.equal(sim.state.httpPost?.keepalive, 120);
    for (const value of ['29', '121', '0']) {
      await assert.rejects(send(value), (err: unknown) => {
        expectCode(err, 'EDEVICE');
        assert.equal((err as IpcamError).deviceCode, 16);
        return true;
      });
    }
    await assert.rejects(send('60', '70000'), (err: unknown) => expectCode(err, 'EDEVICE') && (err as IpcamError).deviceCode === 16);
    await assert.rejects(xmlCall(device, { path: '/SetHttpPostConfig', body: buildDocument('1.0', [xml.el('other')]) }), (err: unknown) => expectCode(err, 'EDEVICE') && (err as IpcamError).deviceCode === 15);
    assert.equal(sim.state.httpPost?.keepalive, 120, 'a refused config changed the stored one');
  });

  it('control API POST /_sim/events posts per its JSON and answers the results', async () => {
    const h = await harness();
    const call = async (body: string): Promise<{ status: number; json: Record<string, unknown> }> => {
      const res = await request(`${sim.url}/_sim/events`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
    };
    const ok = await call(JSON.stringify({ url: h.url, kind: 'plate', format: 'nvr', plate: 'CTL1', listType: 'blackList', direction: 'approach', confidence: 87.5, count: 2 }));
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, { results: [{ status: 200 }, { status: 200 }] });
    await h.delivered(2);
    const plates = h.plates();
    assert.deepEqual(
      plates.map((p) => [p.plate, p.listType, p.direction, p.confidence]),
      [
        ['CTL1', 'blackList', 'approach', 87.5],
        ['CTL1', 'blackList', 'approach', 87.5],
      ],
    );
    assert.deepEqual(decodeImage(plates[0]?.images.plate), PLATE_JPEG);

    const keepalive = await call(JSON.stringify({ url: h.url, kind: 'keepalive', format: 'ipc' }));
    assert.equal(keepalive.status, 200);
    const alarm = await call(JSON.stringify({ url: h.url, kind: 'alarmStatus', format: 'ipc' }));
    assert.equal(alarm.status, 200);
    await h.delivered(4);
    assert.deepEqual(
      h.received.slice(2).map((r) => r.posts[0]?.kind),
      ['keepalive', 'alarmStatus'],
    );

    const badJson = await call('{not json');
    assert.equal(badJson.status, 400);
    const badKind = await call(JSON.stringify({ url: h.url, kind: 'motion' }));
    assert.equal(badKind.status, 400);
    assert.match(String(badKind.json['error']), /kind/);
    const noUrl = await call(JSON.stringify({ kind: 'plate' }));
    assert.equal(noUrl.status, 400);
    await h.server.close();
    open.splice(open.indexOf(h), 1);
    const unreachable = await call(JSON.stringify({ url: h.url }));
    assert.equal(unreachable.status, 502);
    assert.equal(unreachable.json['code'], 'ECONN');
  });
});
