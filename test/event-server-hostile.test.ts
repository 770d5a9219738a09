/**
 * The event server against senders that are not devices: floods of unique macs, oversize and
 * element-dense posts, thousands of idle and half-sent connections, refused posts by the hundred.
 * Each must leave the server answering a real post, its memory bounded and its log short.
 */
import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { DEDUP_MAX_KEYS, DedupWindow } from '../lib/events/dedup';
import { decodeImage, PARSE_LIMITS, type PlateDetection } from '../lib/events/parse';
import { DEFAULT_MAX_BODY, DEFAULT_MAX_CONNECTIONS, EventServer, type EventServerOptions, type ReceivedPost } from '../lib/events/server';
import { buildPlateEvent } from '../lib/simulator/events';
import { SNAPSHOT_JPEG } from '../lib/simulator/images';
import type { ChildReport } from './event-server-child';
import { CAPTURE, CAPTURE_PLATE, ConnectionFlood, HALF_SENT, postHead, rawPost, rawRequest, ServerChild } from './event-flood';
import { expectQuiet, jpegGrownTo, waitFor } from './helpers';

/** Heap a flood may leave behind after GC; what the floods would leak if kept is several times more. */
const HEAP_SLACK = 8 * 1024 * 1024;
const MB = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Posts `count` bodies over `connections` kept-alive connections; the statuses, in order of sending. */
async function flood(port: number, count: number, body: (i: number) => string | Buffer, connections = 4): Promise<number[]> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections, pipelining: 1 });
  const statuses: number[] = new Array<number>(count);
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < count) {
          const i = next++;
          try {
            const res = await pool.request({ method: 'POST', path: '/', body: body(i), headers: { 'content-type': 'text/xml' } });
            await res.body.dump();
            statuses[i] = res.statusCode;
          } catch {
            statuses[i] = 0;
          }
        }
      }),
    );
  } finally {
    await pool.destroy();
  }
  return statuses;
}

/** Streams a chunked body of `bytes` until the server answers or closes; the status it answered. */
function streamOversize(port: number, bytes: number): Promise<number> {
  return new Promise((resolveStatus) => {
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    let closed = false;
    socket.setTimeout(15_000, () => socket.destroy());
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      resolveStatus(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0));
    });
    socket.on('connect', async () => {
      socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = Buffer.alloc(256 * 1024, 0x41);
      for (let sent = 0; sent < bytes && !closed && text === ''; sent += chunk.length) {
        if (!socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`)) await Promise.race([once(socket, 'drain'), once(socket, 'close')]);
      }
      if (!closed) socket.end('0\r\n\r\n');
    });
  });
}

// ---------------------------------------------------------------------------------------------

describe('EventServer against hostile senders (server alone in a child process, heap after GC)', function () {
  this.timeout(120_000);
  let child: ServerChild | undefined;
  let port = 0;
  let baseline: ChildReport;
  const connections = new ConnectionFlood();

  function measure(): Promise<ChildReport> {
    assert.ok(child, 'the server process is not started');
    return child.measure();
  }

  /** A real camera post is answered 200 and delivered. */
  async function realPostServed(localAddress?: string): Promise<ChildReport> {
    const before = (await measure()).delivered;
    const answer = await rawPost(port, CAPTURE, localAddress);
    assert.equal(answer.status, 200, `a real post got ${answer.text.slice(0, 200) || 'no answer'}`);
    let report = await measure();
    for (let i = 0; report.delivered === before && i < 100; i++) report = await measure();
    assert.equal(report.delivered, before + 1);
    assert.equal(report.plates.at(-1), CAPTURE_PLATE);
    return report;
  }

  function assertHeapBounded(report: ChildReport, what: string): void {
    const growth = report.heapUsed - baseline.heapUsed;
    console.log(`      heap after GC: ${MB(baseline.heapUsed)} before, ${MB(report.heapUsed)} after ${what}`);
    assert.ok(growth < HEAP_SLACK, `heap grew by ${MB(growth)} after ${what}`);
  }

  before(async function () {
    child = await ServerChild.start({} satisfies EventServerOptions);
    port = child.port;
    // Warm up the parser, the sockets and the JIT with real traffic before the baseline.
    await flood(port, 200, (i) => (i % 2 === 0 ? CAPTURE : buildPlateEvent(i % 4 === 1 ? 'ipc' : 'nvr', { plate: `WARM${i}` })));
    baseline = await realPostServed();
  });

  after(async function () {
    connections.destroyAll();
    await child?.stop();
    child = undefined;
  });

  it('2,000 posts with distinct 16 KB macs: nothing is kept per device', async function () {
    const [head, tail] = buildPlateEvent('ipc', { plate: 'MAC1', images: false, device: { mac: 'MAC-MARK' } }).split('MAC-MARK') as [string, string];
    const big = 'm'.repeat(16 * 1024);
    // If the server kept anything per mac, that would be 2,000 x 16 KB = 32 MB.
    const statuses = await flood(port, 2_000, (i) => `${head}${i}:${big}${tail}`);
    assert.ok(
      statuses.every((s) => s === 200),
      'a unique-mac post was refused',
    );
    const report = await realPostServed();
    assert.equal(report.delivered, baseline.delivered + 2_001);
    assertHeapBounded(report, '2,000 unique macs');
  });

  it('oversize posts, declared, sent whole and streamed past maxBody: 413, nothing kept', async function () {
    // Declared far beyond: answered at once, the body not read.
    const declared = await Promise.all(Array.from({ length: 20 }, () => rawRequest(port, postHead(3 * DEFAULT_MAX_BODY), 'x'.repeat(1024))));
    assert.deepEqual(new Set(declared.map((a) => a.status)), new Set([413]));
    // Sent whole, one byte over, or streamed without a length: the server holds at most maxBody
    // of each, drops the rest and answers when the sender is done.
    const over = Buffer.alloc(DEFAULT_MAX_BODY + 1, 0x78);
    const whole = await Promise.all(Array.from({ length: 10 }, () => rawPost(port, over)));
    assert.deepEqual(new Set(whole.map((a) => a.status)), new Set([413]));
    const streamed: number[] = [];
    for (let i = 0; i < 4; i++) streamed.push(...(await Promise.all(Array.from({ length: 5 }, () => streamOversize(port, DEFAULT_MAX_BODY + 1024 * 1024)))));
    assert.deepEqual(new Set(streamed), new Set([413]));
    await realPostServed();
    assertHeapBounded(await measure(), '20 declared, 10 whole and 20 streamed oversize posts');
  });

  it('element-dense and markup-heavy posts are 413 before any XML parsing; the server goes on', async function () {
    const dense = `<config version="1.7"><smartType>PEA</smartType><list>${'<i/>'.repeat(PARSE_LIMITS.maxNodes + 1)}</list></config>`;
    const wordy = `<config version="1.7"><smartType>PEA</smartType><a>${'x'.repeat(PARSE_LIMITS.maxMarkup)}</a></config>`;
    const statuses = await flood(port, 400, (i) => (i % 2 === 0 ? dense : wordy));
    assert.deepEqual(new Set(statuses), new Set([413]));
    await realPostServed();
    assertHeapBounded(await measure(), '400 element-dense and markup-heavy posts');
  });

  it('2,000 idle and half-sent connections from one sender: it holds at most half the connection cap; a device elsewhere is served at once', async function () {
    const perSender = DEFAULT_MAX_CONNECTIONS / 2;
    await connections.connect(port, 1_000);
    await connections.connect(port, 1_000, { first: HALF_SENT });
    assert.equal(connections.opened, 2_000);
    // The server closes the excess at once (well before any timeout).
    await waitFor(`at most ${perSender} connections left open`, () => connections.open.size <= perSender, 10_000);
    const report = await realPostServed('127.0.0.2');
    assert.ok(report.connections <= perSender + 1, `the server holds ${report.connections} connections`);
    assertHeapBounded(report, `${connections.open.size} held and ${2_000 - connections.open.size} closed connections`);
    // Everything the floods of this file caused was logged in a few lines.
    assert.ok(report.warnings <= 12, `${report.warnings} warning lines`);
    connections.destroyAll();
  });
});

// ---------------------------------------------------------------------------------------------

describe('EventServer limits', function () {
  const servers: EventServer[] = [];
  const floods: ConnectionFlood[] = [];

  async function start(options: EventServerOptions = {}): Promise<{ server: EventServer; port: number; warnings: string[]; received: ReceivedPost[] }> {
    const warnings: string[] = [];
    const received: ReceivedPost[] = [];
    const server = new EventServer({ port: 0, bind: '127.0.0.1', onWarning: (text) => warnings.push(text), ...options });
    servers.push(server);
    await server.start();
    server.subscribe({ onPost: (post) => received.push(post) });
    return { server, port: server.port, warnings, received };
  }

  function newFlood(): ConnectionFlood {
    const f = new ConnectionFlood();
    floods.push(f);
    return f;
  }

  afterEach(async function () {
    for (const f of floods.splice(0)) f.destroyAll();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('at the connection cap a half-sent request gives way to a device; the headers timeout frees the held ones', async function () {
    this.timeout(30_000);
    // The timeout leaves ample time to open the 200 connections and post before it frees them.
    const { port, warnings, received } = await start({ maxConnections: 40, headersTimeout: 5_000 });
    const held = newFlood();
    // Two senders, 100 half-sent requests each: 20 each are held (half the cap), 40 in all = the cap.
    await held.connect(port, 100, { localAddress: '127.0.0.3', first: HALF_SENT });
    await held.connect(port, 100, { localAddress: '127.0.0.4', first: HALF_SENT });
    await waitFor('at most 40 connections left open', () => held.open.size <= 40, 10_000);
    assert.equal(held.open.size, 40);
    // A device beyond the cap takes the place of the oldest half-sent request.
    assert.equal((await rawPost(port, CAPTURE, '127.0.0.5')).status, 200);
    await waitFor('the real post delivered', () => received.length === 1);
    await waitFor('one held connection given up', () => held.open.size === 39);
    // The others never complete their headers: answered 408 and closed after the timeout.
    await waitFor('the held connections timed out', () => held.open.size === 0, 10_000);
    assert.equal(held.answers.filter((a) => a.startsWith('HTTP/1.1 408')).length, 39);
    // 160 given up for their own sender's newer ones at its cap, 1 for the device, 39 timed out: one line for each kind within the interval.
    assert.equal(warnings.length, 3, warnings.join('\n'));
    for (const line of [
      /^127\.0\.0\.[34] holds 20 connections, the most one sender may: its oldest connection still sending its headers was closed for its new one$/,
      /^Connection limit of 40 reached: the oldest connection still sending its headers \(from 127\.0\.0\.3\) was closed for one from 127\.0\.0\.5$/,
      /^A request from 127\.0\.0\.[34] was not complete in time: answered 408 and closed$/,
    ]) {
      assert.ok(
        warnings.some((w) => line.test(w)),
        `no line like ${String(line)} in ${warnings.join(' | ')}`,
      );
    }
  });

  it('an idle kept-alive connection outlives the headers timeout; a connection that sends nothing does not', async function () {
    this.timeout(20_000);
    const { port, received } = await start({ headersTimeout: 500 });
    const idle = newFlood();
    await idle.connect(port, 1);
    const device = newFlood();
    await device.connect(port, 1, { first: `${postHead(CAPTURE.length).replace('Connection: close\r\n', '')}${CAPTURE.toString('latin1')}` });
    await waitFor('the first post delivered', () => received.length === 1);
    await sleep(2_000);
    assert.equal(idle.open.size, 0, 'a connection that never sent a request is still open');
    assert.match(idle.answers[0] ?? '', /^HTTP\/1\.1 408/);
    const [socket] = [...device.open];
    assert.ok(socket, 'the kept-alive connection was closed while idle');
    socket.write(`${postHead(CAPTURE.length).replace('Connection: close\r\n', '')}${CAPTURE.toString('latin1')}`, 'latin1');
    await waitFor('the second post on the same connection delivered', () => received.length === 2);
  });

  it('bodies in flight are bounded in all (16 x maxBody): beyond, 503 once the sender is done; aborted bodies release their bytes', async function () {
    this.timeout(30_000);
    const maxBody = 64 * 1024;
    const part = 60_000;
    const { server, port, received } = await start({ maxBody });
    const held = newFlood();
    // 17 x 60,000 bytes fit in 16 x 64 KiB.
    for (let i = 1; i <= 17; i++) {
      await held.connect(port, 1, { first: `${postHead(maxBody)}${'x'.repeat(part)}` });
      await waitFor(`${i} bodies held`, () => server.bodyBytes === i * part);
    }
    // Posts that do not fit are read to their end (dropped), then answered 503.
    const refused = await Promise.all(Array.from({ length: 7 }, () => rawRequest(port, postHead(maxBody), 'y'.repeat(maxBody))));
    assert.deepEqual(
      refused.map((a) => a.status),
      new Array(7).fill(503),
    );
    assert.equal(server.bodyBytes, 17 * part);
    held.destroyAll();
    await waitFor('the aborted bodies released', () => server.bodyBytes === 0);
    const doc = buildPlateEvent('ipc', { plate: 'FULL', images: false });
    const full = `${doc}<!--${'p'.repeat(part - Buffer.byteLength(doc) - 7)}-->`;
    const answers = await Promise.all(Array.from({ length: 16 }, () => rawPost(port, full)));
    assert.deepEqual(
      answers.map((a) => a.status),
      new Array(16).fill(200),
    );
    await waitFor('16 delivered', () => received.length === 16);
    assert.equal(server.bodyBytes, 0);
  });

  it('the default maxBody (4 MiB) takes a post with real-size pictures (1 MB scene, ~2.8 MB body); one byte more is 413', async function () {
    this.timeout(20_000);
    const { port, received } = await start();
    assert.equal(DEFAULT_MAX_BODY, 4 * 1024 * 1024);
    const scene = jpegGrownTo(SNAPSHOT_JPEG, 1024 * 1024);
    const body = buildPlateEvent('ipc', { plate: 'REAL1', scene });
    assert.ok(Buffer.byteLength(body) > 2.5 * 1024 * 1024, `${Buffer.byteLength(body)} bytes`);
    assert.equal((await rawPost(port, body)).status, 200);
    await waitFor('delivered', () => received.length === 1);
    const plate = received[0]?.posts[0] as PlateDetection;
    assert.equal(plate.plate, 'REAL1');
    assert.deepEqual(decodeImage(plate.images.scene), scene);
    assert.equal((await rawPost(port, Buffer.alloc(DEFAULT_MAX_BODY + 1, 0x78))).status, 413);
  });

  it('refused posts are logged at a bounded rate: the first at once, then one summary per interval and kind with the count', async function () {
    this.timeout(30_000);
    const { port, warnings } = await start({ username: 'cam', password: 'pw', warnEveryMs: 300 });
    const started = Date.now();
    const statuses = await flood(port, 600, () => buildPlateEvent('ipc', { plate: 'NOAUTH', images: false }));
    const elapsed = Date.now() - started;
    assert.deepEqual(new Set(statuses), new Set([401]));
    assert.ok(warnings.length <= 2 + Math.ceil(elapsed / 300), `${warnings.length} lines in ${elapsed} ms`);
    assert.match(warnings[0] ?? '', /^Post refused \(401\): Wrong or missing credentials \(from 127\.0\.0\.1\)$/);
    await waitFor('the last summary', () => total(warnings) === 600, 5_000);
    // No line is written without something to report: quiet after the flood.
    const lines = warnings.length;
    expectQuiet(warnings, 'a line written with nothing to report');
    await sleep(700);
    assert.equal(warnings.length, lines);
    assert.equal(total(warnings), 600);
  });

  it('plates beyond maxItems in one post: the first are delivered, one warning for the rest', async function () {
    const { port, warnings, received } = await start({ parseLimits: { maxItems: 3 } });
    const items = Array.from({ length: 5 }, (_, i) => `<item><plateNumber>IT${i}</plateNumber></item>`).join('');
    const doc = `<config version="1.7"><smartType>VEHICLE</smartType><listInfo type="list">${items}</listInfo></config>`;
    assert.equal((await rawPost(port, doc)).status, 200);
    await waitFor('delivered', () => received.length === 1);
    assert.deepEqual(
      received[0]?.posts.map((p) => (p as PlateDetection).plate),
      ['IT0', 'IT1', 'IT2'],
    );
    assert.deepEqual(warnings, ['A post from 127.0.0.1 carried 5 plates: the first 3 were read, 2 ignored']);
  });

  it('bad limits are EINPUT before anything listens', function () {
    const bad: EventServerOptions[] = [{ maxConnections: 0 }, { maxConnections: 1.5 }, { maxConnections: 10_001 }, { headersTimeout: 0 }, { headersTimeout: 2_000, requestTimeout: 1_000 }, { warnEveryMs: 0 }];
    for (const options of bad) {
      assert.throws(
        () => new EventServer(options),
        (err: unknown) => err instanceof Error && (err as { code?: string }).code === 'EINPUT',
        JSON.stringify(options),
      );
    }
  });
});

/** Refusals accounted for in the warning lines: 1 per first line, N per "N more like this" summary. */
function total(warnings: string[]): number {
  return warnings.reduce((sum, w) => sum + (/^(\d+) more like this/.exec(w) ? Number(/^(\d+)/.exec(w)?.[1]) : 1), 0);
}

// ---------------------------------------------------------------------------------------------

describe('DedupWindow bounds', function () {
  it('a flood of distinct keys within the window keeps at most DEDUP_MAX_KEYS; the newest still suppress repeats', function () {
    const dedup = new DedupWindow(60_000);
    const now = 1_000_000;
    for (let i = 0; i < 5 * DEDUP_MAX_KEYS; i++) assert.equal(dedup.admit(`mac-${i}\u0000PLATE`, now + i), true);
    assert.equal(dedup.size, DEDUP_MAX_KEYS);
    assert.equal(dedup.admit(`mac-${5 * DEDUP_MAX_KEYS - 1}\u0000PLATE`, now + 5 * DEDUP_MAX_KEYS), false);
    // Expired keys leave as new ones come.
    assert.equal(dedup.admit('late', now + 5 * DEDUP_MAX_KEYS + 60_000), true);
    assert.equal(dedup.size, 1);
  });

  it('long keys (a sender can post any mac) are kept apart and suppressed like short ones', function () {
    const dedup = new DedupWindow(60_000);
    const long = 'm'.repeat(1024 * 1024);
    assert.equal(dedup.admit(`${long}a\u0000P1`, 1), true);
    assert.equal(dedup.admit(`${long}b\u0000P1`, 2), true);
    assert.equal(dedup.admit(`${long}a\u0000P1`, 3), false);
    assert.equal(dedup.admit(`${long}b\u0000P1`, 4), false);
    assert.equal(dedup.size, 2);
  });
});
