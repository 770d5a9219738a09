/**
 * The event server at its connection cap: connections that have not finished their headers, send
 * their body below the minimum rate or are idle without a post give way to a newcomer (the older
 * first), then the kept connection whose last post is the oldest, so thousands of half-sent
 * requests cannot keep a camera out; a post whose body arrives at rate never gives way. At the
 * per-sender cap the same holds among the sender's own connections. (Bodies dripped from two
 * addresses for 60 s: event-server-drip.test.ts.)
 *
 * The floods come from several loopback addresses (127.0.0.10-17) so that the total cap, not the
 * per-sender one, is what they meet; the device posts from 127.0.0.2.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:net';
import { DEFAULT_MAX_CONNECTIONS, EventServer, MIN_BODY_RATE, type EventServerOptions, type ReceivedPost } from '../lib/events/server';
import { buildPlateEvent } from '../lib/simulator/events';
import { SNAPSHOT_JPEG } from '../lib/simulator/images';
import type { ChildReport } from './event-server-child';
import { CAPTURE, CAPTURE_PLATE, ConnectionFlood, HALF_SENT, keptAlivePost, postHead, rawPost, ServerChild, type RawAnswer } from './event-flood';
import { CAPTURES, jpegGrownTo, waitFor } from './helpers';

const DEVICE = '127.0.0.2';
const FLOOD_SENDERS = Array.from({ length: 8 }, (_, i) => `127.0.0.${10 + i}`);
/** The contract: a real post is answered and delivered within this, whatever the flood (a generous bound, not a benchmark). */
const SERVED_WITHIN_MS = 2_000;
/** What a camera posts on the connection it keeps open, about every 30 s. */
const KEEPALIVE = readFileSync(join(CAPTURES, 'ipc-v1x', 'keepalive.xml'));

/** `count` connections, spread over the flood senders in rounds of `round`, each writing `first`. */
async function openFrom(flood: ConnectionFlood, port: number, count: number, first: string | Buffer, round = 200): Promise<void> {
  for (let done = 0; done < count; done += round) {
    const size = Math.min(round, count - done);
    const each = Math.ceil(size / FLOOD_SENDERS.length);
    await Promise.all(FLOOD_SENDERS.map((localAddress, i) => flood.connect(port, Math.max(0, Math.min(each, size - i * each)), { localAddress, first })));
  }
}

describe('EventServer at its connection cap (default 256, server alone in a child process)', function () {
  this.timeout(60_000);
  let child: ServerChild;
  const floods: ConnectionFlood[] = [];

  function newFlood(): ConnectionFlood {
    const flood = new ConnectionFlood();
    floods.push(flood);
    return flood;
  }

  /** A real camera post from the device address: answered 200 and delivered within the contract bound. */
  async function realPostServed(): Promise<{ report: ChildReport; elapsed: number }> {
    const before = (await child.measure()).delivered;
    const started = Date.now();
    const answer = await rawPost(child.port, CAPTURE, DEVICE);
    assert.equal(answer.status, 200, `a real post got ${answer.text.slice(0, 200) || 'no answer'}`);
    const report = await child.until('the real post delivered', (r) => r.delivered > before && r.plates.at(-1) === CAPTURE_PLATE, SERVED_WITHIN_MS);
    const elapsed = Date.now() - started;
    assert.ok(elapsed < SERVED_WITHIN_MS, `a real post took ${elapsed} ms`);
    return { report, elapsed };
  }

  before(async function () {
    child = await ServerChild.start({} satisfies EventServerOptions);
    await realPostServed();
  });

  afterEach(async function () {
    for (const flood of floods.splice(0)) flood.destroyAll();
    await child.until('every connection closed', (r) => r.connections === 0);
  });

  after(async function () {
    for (const flood of floods.splice(0)) flood.destroyAll();
    await child?.stop();
  });

  it('2,000 half-sent requests fill the cap: a real post takes the place of the oldest and is answered 200 within 2 s', async function () {
    const flood = newFlood();
    await openFrom(flood, child.port, 2_000, HALF_SENT);
    assert.equal(flood.opened, 2_000);
    const full = await child.until('the cap full', (r) => r.connections === DEFAULT_MAX_CONNECTIONS);
    // The server closed the older ones as newer ones came; the newest are held.
    await waitFor('the excess closed', () => flood.open.size === DEFAULT_MAX_CONNECTIONS, 10_000);
    const { report, elapsed } = await realPostServed();
    console.log(`      real post served in ${elapsed} ms with ${full.connections} half-sent requests held and ${2_000 - DEFAULT_MAX_CONNECTIONS} closed`);
    await waitFor('one more half-sent request given up', () => flood.open.size === DEFAULT_MAX_CONNECTIONS - 1, 5_000);
    assert.ok(report.connections <= DEFAULT_MAX_CONNECTIONS, `the server holds ${report.connections} connections`);
    // 1,745 connections given up: one line, the rest summed up at the end of the interval.
    assert.ok(report.warnings - full.warnings <= 1 && full.warnings <= 2, `${report.warnings} warning lines`);
  });

  it('2,000 idle kept-alive connections fill the cap: a real post takes the place of the one idle longest and is answered 200 within 2 s', async function () {
    const flood = newFlood();
    await openFrom(flood, child.port, 2_000, keptAlivePost(KEEPALIVE));
    assert.equal(flood.opened, 2_000);
    // Every connection answered (then kept) or closed to make room: what is left is the cap, all idle.
    await waitFor('every flood connection answered or closed', () => flood.unanswered.size === 0, 10_000);
    await child.until('the cap full', (r) => r.connections === DEFAULT_MAX_CONNECTIONS);
    assert.equal(flood.open.size, DEFAULT_MAX_CONNECTIONS);
    const { elapsed } = await realPostServed();
    console.log(`      real post served in ${elapsed} ms with ${DEFAULT_MAX_CONNECTIONS} idle connections held`);
    await waitFor('one idle connection given up', () => flood.open.size === DEFAULT_MAX_CONNECTIONS - 1, 5_000);
    // An answer is read when its connection closes: at least the idle one given up, answered before it was kept.
    assert.ok(flood.answers.length >= 1, 'no answer read: nothing to check');
    assert.ok(
      flood.answers.every((a) => a.startsWith('HTTP/1.1 200')),
      'a kept-alive post that was read got no 200',
    );
  });

  it('a flood that keeps renewing half-sent requests while real posts arrive: every real post is answered 200 and delivered', async function () {
    const flood = newFlood();
    /** At least this many real posts, and on until the flood has renewed thousands of connections (both bounded). */
    const posts = { least: 20, most: 60, flood: 3_000 };
    // The count bound only stops a runaway flood: 20 real posts see 15,000-20,000 renewals on an
    // idle machine, and a bound of 20,000 once ended the flood before the 20th post.
    const limit = { connections: 100_000, ms: 30_000 };
    let devicesDone = false;
    let flooding = true;
    const started = Date.now();
    const renewing = (async (): Promise<void> => {
      // Bounded by count and time whatever the device posts do.
      while (!devicesDone && flood.opened < limit.connections && Date.now() - started < limit.ms) await openFrom(flood, child.port, 200, HALF_SENT);
      flooding = false;
    })();
    /** Real posts answered while the flood was still being renewed. */
    let duringFlood = 0;
    const statuses: number[] = [];
    const elapsed: number[] = [];
    try {
      await child.until('the cap full', (r) => r.connections === DEFAULT_MAX_CONNECTIONS);
      for (let i = 0; i < posts.most && (i < posts.least || flood.opened < posts.flood); i++) {
        const before = (await child.measure()).delivered;
        const postStarted = Date.now();
        statuses.push((await rawPost(child.port, CAPTURE, DEVICE)).status);
        await child.until(`real post ${i + 1} delivered`, (r) => r.delivered > before, SERVED_WITHIN_MS);
        elapsed.push(Date.now() - postStarted);
        if (flooding) duringFlood += 1;
        await sleep(50);
      }
    } finally {
      devicesDone = true;
      await renewing;
    }
    console.log(`      ${statuses.length} real posts served in ${Math.min(...elapsed)}-${Math.max(...elapsed)} ms among ${flood.opened} half-sent requests`);
    assert.deepEqual(statuses, new Array<number>(statuses.length).fill(200));
    // The flood was renewed throughout: far more connections were opened than the cap holds.
    assert.ok(flood.opened >= posts.flood, `only ${flood.opened} flood connections`);
    assert.equal(duringFlood, statuses.length, 'the flood stopped (at its own bound) before the real posts did');
    await waitFor('the flood connections given up closed', () => flood.open.size <= DEFAULT_MAX_CONNECTIONS, 5_000);
  });
});

// ---------------------------------------------------------------------------------------------

interface PostAtRate {
  /** The server's answer, once it closes the connection (`Connection: close`). */
  answer: Promise<RawAnswer>;
  /** Still sending its body. */
  sending(): boolean;
  stop(): void;
}

/** A real plate post with a 100 KB scene (about 280 KB with its crop, base64), sent on its own connection at `rate` bytes/s, a piece every 50 ms. */
function postAtRate(port: number, localAddress: string, rate: number, plate: string): PostAtRate {
  const body = Buffer.from(buildPlateEvent('ipc', { plate, scene: jpegGrownTo(SNAPSHOT_JPEG, 100 * 1024) }), 'latin1');
  const bytes = Buffer.concat([Buffer.from(postHead(body.length), 'latin1'), body]);
  const step = Math.ceil(rate / 20);
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  const answer = new Promise<RawAnswer>((resolveAnswer) => {
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearInterval(timer);
      resolveAnswer({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
  });
  const send = (): void => {
    socket.write(bytes.subarray(sent, sent + step));
    sent += step;
    if (sent >= bytes.length) clearInterval(timer);
  };
  socket.once('connect', () => {
    send();
    timer = setInterval(send, 50);
  });
  return {
    answer,
    sending: () => sent < bytes.length && !socket.destroyed,
    stop: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

describe('EventServer at its connection cap: which connection gives way', function () {
  this.timeout(30_000);
  const servers: EventServer[] = [];
  const floods: ConnectionFlood[] = [];
  const streams: PostAtRate[] = [];

  async function start(options: EventServerOptions): Promise<{ server: EventServer; port: number; warnings: string[]; received: ReceivedPost[] }> {
    const warnings: string[] = [];
    const received: ReceivedPost[] = [];
    const server = new EventServer({ port: 0, bind: '127.0.0.1', onWarning: (text) => warnings.push(text), ...options });
    servers.push(server);
    await server.start();
    server.subscribe({ onPost: (post) => received.push(post) });
    return { server, port: server.port, warnings, received };
  }

  function newFlood(): ConnectionFlood {
    const flood = new ConnectionFlood();
    floods.push(flood);
    return flood;
  }

  afterEach(async function () {
    for (const flood of floods.splice(0)) flood.destroyAll();
    for (const stream of streams.splice(0)) stream.stop();
    const closing = servers.splice(0);
    for (const server of closing) await waitFor('every connection closed', () => server.connections === 0, 5_000);
    await Promise.all(closing.map((s) => s.close()));
  });

  /** A kept-alive connection from `localAddress` that posts `body` as it connects, once answered: its flood (one socket). */
  async function keptCamera(port: number, localAddress: string, body: Buffer | string = KEEPALIVE): Promise<ConnectionFlood> {
    const camera = newFlood();
    await camera.connect(port, 1, { localAddress, first: typeof body === 'string' ? body : keptAlivePost(body) });
    await waitFor(`the kept connection from ${localAddress} answered`, () => camera.unanswered.size === 0);
    assert.equal(camera.open.size, 1, `the kept connection from ${localAddress} was closed`);
    return camera;
  }

  /** A post that has sent its headers and 100 bytes of its body, then nothing: below the minimum rate within milliseconds. */
  async function stalledPost(port: number, localAddress: string): Promise<ConnectionFlood> {
    const stalled = newFlood();
    await stalled.connect(port, 1, { localAddress, first: `${postHead(CAPTURE.length)}${CAPTURE.toString('latin1').slice(0, 100)}` });
    return stalled;
  }

  it('a post whose body arrives at 4 x the minimum rate and a kept-alive camera are never given up while half-sent requests are held: both are served after 400 of them', async function () {
    const { server, port, received } = await start({ maxConnections: 40 });
    const camera = await keptCamera(port, '127.0.0.6');
    assert.equal(received.length, 1);
    const streaming = postAtRate(port, '127.0.0.5', 4 * MIN_BODY_RATE, 'RATE1');
    streams.push(streaming);
    await waitFor('the post at rate under way', () => server.connections === 2 && server.requests === 1);
    const flood = newFlood();
    await openFrom(flood, port, 400, HALF_SENT, 80);
    await waitFor('the cap full of half-sent requests', () => flood.open.size === 38, 10_000);
    assert.equal(server.connections, 40);
    assert.ok(streaming.sending(), 'the post at rate ended before the flood filled the cap');
    const [kept] = [...camera.open];
    assert.ok(kept, 'the kept-alive camera was given up while half-sent requests were held');
    assert.equal((await streaming.answer).status, 200, 'the post at rate was given up or refused');
    await waitFor('the post at rate delivered', () => received.some((r) => r.posts.some((p) => p.kind === 'plate' && p.plate === 'RATE1')));
    kept.write(keptAlivePost(CAPTURE));
    await waitFor('the camera posted again on its kept connection', () => received.length === 3);
    assert.equal(kept.destroyed, false);
  });

  it('without half-sent requests, a body below the minimum rate and an idle connection without a post give way first (the older first), then the kept connection whose last post is the oldest; a post at rate never does', async function () {
    const { server, port, warnings, received } = await start({ maxConnections: 5 });
    // Five connections, each from its own address: a kept-alive camera (the oldest connection of
    // all), a post stalled mid-body, an idle connection whose request was refused (405), a second
    // camera and a post streaming at 4 x the minimum rate.
    const older = await keptCamera(port, '127.0.0.5');
    const stalled = await stalledPost(port, '127.0.0.3');
    await waitFor('the stalled post mid-body', () => server.bodyBytes === 100);
    const refused = await keptCamera(port, '127.0.0.4', 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const recent = await keptCamera(port, '127.0.0.6');
    const streaming = postAtRate(port, '127.0.0.7', 4 * MIN_BODY_RATE, 'RATE2');
    streams.push(streaming);
    await waitFor('the cap full, the post at rate under way', () => server.connections === 5 && server.requests === 2);
    // Each newcomer is a camera that keeps its connection, from an address of its own.
    const newcomers: ConnectionFlood[] = [];
    const order: [ConnectionFlood, string][] = [
      [stalled, 'the stalled post'],
      [refused, 'the idle connection without a post'],
      [older, 'the camera whose last post is the oldest'],
    ];
    for (const [i, [gone, what]] of order.entries()) {
      newcomers.push(await keptCamera(port, `127.0.0.${10 + i}`));
      await waitFor(`${what} given up`, () => gone.open.size === 0);
      assert.equal(server.connections, 5);
    }
    // The later camera posts again: now the first newcomer's last post is the oldest, and it goes first.
    const before = received.length;
    [...recent.open][0]?.write(keptAlivePost(KEEPALIVE));
    await waitFor('the later camera posted again', () => received.length === before + 1);
    newcomers.push(await keptCamera(port, '127.0.0.13'));
    await waitFor('the first newcomer given up', () => newcomers[0]?.open.size === 0);
    assert.equal(recent.open.size, 1, 'the camera that posted last was given up');
    assert.ok(streaming.sending(), 'the post at rate ended before the newcomers were in');
    assert.equal((await streaming.answer).status, 200, 'the post at rate was given up or refused');
    for (const line of [
      /^Connection limit of 5 reached: the connection sending its body below 16384 bytes\/s \(from 127\.0\.0\.3\) was closed for one from 127\.0\.0\.10$/,
      /^Connection limit of 5 reached: the connection idle longest without an accepted post \(from 127\.0\.0\.4\) was closed for one from 127\.0\.0\.11$/,
      /^Connection limit of 5 reached: the kept connection whose last post is the oldest \(from 127\.0\.0\.5\) was closed for one from 127\.0\.0\.12$/,
    ]) {
      assert.ok(
        warnings.some((w) => line.test(w)),
        `no line like ${String(line)} in ${warnings.join(' | ')}`,
      );
    }
  });

  it('when every connection is a post arriving at rate, a newcomer is closed at once; once they end it is served', async function () {
    const { server, port, warnings } = await start({ maxConnections: 2 });
    const posts = [postAtRate(port, '127.0.0.3', 4 * MIN_BODY_RATE, 'RATE3'), postAtRate(port, '127.0.0.4', 4 * MIN_BODY_RATE, 'RATE4')];
    streams.push(...posts);
    await waitFor('both posts under way', () => server.requests === 2);
    const shut = await rawPost(port, CAPTURE, '127.0.0.5');
    assert.equal(shut.status, 0, `a connection beyond a cap of posts at rate got ${shut.text.slice(0, 100)} (${warnings.join(' / ')})`);
    assert.ok(
      posts.every((p) => p.sending()),
      'a post at rate ended before the newcomer came',
    );
    assert.ok(
      warnings.some((w) => /^Connection limit of 2 reached, every connection in a request: a connection from 127\.0\.0\.5 was closed$/.test(w)),
      warnings.join(' | '),
    );
    assert.deepEqual((await Promise.all(posts.map((p) => p.answer))).map((a) => a.status), [200, 200]);
    assert.equal((await rawPost(port, CAPTURE, '127.0.0.5')).status, 200);
  });

  it("at the per-sender cap the sender's own connections give way to its new one (half-sent, slow or idle, the older first; its kept camera last); another sender's are kept", async function () {
    const { server, port, warnings } = await start({ maxConnections: 8 });
    // Another sender's half-sent request, older than all: never given up for 127.0.0.3's newcomers.
    const other = newFlood();
    await other.connect(port, 1, { localAddress: '127.0.0.4', first: HALF_SENT });
    // 127.0.0.3 at its cap (4): a camera (its oldest connection), a half-sent request, a stalled post, a refused request kept idle.
    const camera = await keptCamera(port, '127.0.0.3');
    const half = newFlood();
    await half.connect(port, 1, { localAddress: '127.0.0.3', first: HALF_SENT });
    const stalled = await stalledPost(port, '127.0.0.3');
    await waitFor('the stalled post mid-body', () => server.bodyBytes === 100);
    const refused = await keptCamera(port, '127.0.0.3', 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    assert.equal(server.connections, 5);
    // Cameras behind the same address connect and post: each takes the place of one of the sender's own.
    const newcomers: ConnectionFlood[] = [];
    for (const [gone, what] of [
      [half, 'the half-sent request'],
      [stalled, 'the stalled post'],
      [refused, 'the idle connection without a post'],
      [camera, 'the camera whose last post is the oldest'],
    ] as const) {
      newcomers.push(await keptCamera(port, '127.0.0.3'));
      await waitFor(`${what} given up`, () => gone.open.size === 0);
      assert.equal(server.connections, 5);
    }
    assert.equal(other.open.size, 1, "another sender's half-sent request was given up for 127.0.0.3's newcomer");
    assert.ok(
      warnings.some((w) => /^127\.0\.0\.3 holds 4 connections, the most one sender may: its oldest connection still sending its headers was closed for its new one$/.test(w)),
      warnings.join(' | '),
    );
    // A sender whose every connection is a post at rate: its newcomer is closed.
    for (const flood of [...newcomers]) flood.destroyAll();
    await waitFor('the newcomers closed', () => server.connections === 1);
    const posts = [1, 2, 3, 4].map((i) => postAtRate(port, '127.0.0.3', 4 * MIN_BODY_RATE, `RATE5${i}`));
    streams.push(...posts);
    await waitFor('the sender at its cap, each of its connections a post under way', () => server.connections === 5 && server.requests === 4);
    assert.equal((await rawPost(port, CAPTURE, '127.0.0.3')).status, 0);
    assert.ok(
      warnings.some((w) => /^127\.0\.0\.3 holds 4 connections, the most one sender may, each in a request: a further one was closed$/.test(w)),
      warnings.join(' | '),
    );
    assert.deepEqual((await Promise.all(posts.map((p) => p.answer))).map((a) => a.status), [200, 200, 200, 200]);
  });
});
