/**
 * The event server at its connection cap: connections that have not finished their headers, then
 * idle ones, give way to a newcomer, so thousands of half-sent requests cannot keep a camera out;
 * a connection in a request (mid-body, or waiting on its answer) never gives way.
 *
 * The floods come from several loopback addresses (127.0.0.10-17) so that the total cap, not the
 * per-sender one, is what they meet; the device posts from 127.0.0.2.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_MAX_CONNECTIONS, EventServer, type EventServerOptions, type ReceivedPost } from '../lib/events/server';
import type { ChildReport } from './event-server-child';
import { CAPTURE, CAPTURE_PLATE, ConnectionFlood, HALF_SENT, keptAlivePost, postHead, rawPost, ServerChild } from './event-flood';
import { CAPTURES, waitFor } from './helpers';

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

describe('EventServer at its connection cap: which connection gives way', function () {
  this.timeout(30_000);
  const servers: EventServer[] = [];
  const floods: ConnectionFlood[] = [];

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
    const closing = servers.splice(0);
    for (const server of closing) await waitFor('every connection closed', () => server.connections === 0, 5_000);
    await Promise.all(closing.map((s) => s.close()));
  });

  it('a post mid-body and a kept-alive camera are never given up while half-sent requests are held: both are served after 400 of them', async function () {
    const { server, port, received } = await start({ maxConnections: 40 });
    const body = CAPTURE.toString('latin1');
    const midBody = newFlood();
    await midBody.connect(port, 1, { localAddress: '127.0.0.5', first: `${postHead(CAPTURE.length)}${body.slice(0, 500)}` });
    await waitFor('the post mid-body', () => server.bodyBytes === 500);
    const camera = newFlood();
    await camera.connect(port, 1, { localAddress: '127.0.0.6', first: keptAlivePost(KEEPALIVE) });
    await waitFor('the camera answered', () => camera.unanswered.size === 0 && received.length === 1);
    const flood = newFlood();
    await openFrom(flood, port, 400, HALF_SENT, 80);
    await waitFor('the cap full of half-sent requests', () => flood.open.size === 38, 10_000);
    assert.equal(server.connections, 40);
    const [posting] = [...midBody.open];
    const [kept] = [...camera.open];
    assert.ok(posting && kept, 'a connection in a request or idle was given up while half-sent ones were held');
    posting.end(body.slice(500), 'latin1');
    await waitFor('the post finished after the flood delivered', () => received.length === 2);
    await waitFor('its answer', () => midBody.answers.length === 1);
    assert.match(midBody.answers[0] ?? '', /^HTTP\/1\.1 200/);
    kept.write(keptAlivePost(CAPTURE));
    await waitFor('the camera posted again on its kept connection', () => received.length === 3);
    assert.equal(kept.destroyed, false);
  });

  it('without half-sent requests the connection idle longest gives way; when every connection is in a request the newcomer is closed', async function () {
    const { server, port, warnings, received } = await start({ maxConnections: 4 });
    const cameras = newFlood();
    for (const localAddress of ['127.0.0.3', '127.0.0.4']) {
      await cameras.connect(port, 1, { localAddress, first: keptAlivePost(KEEPALIVE) });
      await waitFor('the camera answered', () => cameras.unanswered.size === 0);
    }
    const [longestIdle, otherIdle] = [...cameras.open];
    // Two posts mid-body (their bytes held show their headers were read): in a request, never given up.
    const body = CAPTURE.toString('latin1');
    const midBody = `${postHead(CAPTURE.length)}${body.slice(0, 100)}`;
    const posting = newFlood();
    for (const localAddress of ['127.0.0.3', '127.0.0.4']) await posting.connect(port, 1, { localAddress, first: midBody });
    await waitFor('4 connections held, 2 mid-body', () => server.connections === 4 && server.bodyBytes === 200);
    assert.equal((await rawPost(port, CAPTURE, '127.0.0.5')).status, 200);
    await waitFor('the longest idle connection given up', () => longestIdle?.destroyed === true);
    assert.equal(otherIdle?.destroyed, false);
    // A third post mid-body fills the cap again; the next newcomer takes the other idle one's place.
    const slow = newFlood();
    await slow.connect(port, 1, { localAddress: '127.0.0.6', first: midBody });
    await waitFor('4 connections held, 3 mid-body', () => server.connections === 4 && server.bodyBytes === 300);
    assert.equal((await rawPost(port, CAPTURE, '127.0.0.5')).status, 200);
    await waitFor('the other idle connection given up', () => otherIdle?.destroyed === true);
    // A fourth post mid-body: all four connections are in a request.
    await slow.connect(port, 1, { localAddress: '127.0.0.6', first: midBody });
    await waitFor('4 connections held, all mid-body', () => server.connections === 4 && server.bodyBytes === 400);
    const shut = await rawPost(port, CAPTURE, '127.0.0.7');
    assert.equal(shut.status, 0, `a connection beyond a cap of busy ones got ${shut.text.slice(0, 100)}`);
    assert.equal(posting.open.size + slow.open.size, 4);
    assert.ok(
      warnings.some((w) => /^Connection limit of 4 reached, every connection in a request: a connection from 127\.0\.0\.7 was closed$/.test(w)),
      warnings.join(' | '),
    );
    assert.ok(
      warnings.some((w) => /^Connection limit of 4 reached: the connection idle longest \(from 127\.0\.0\.3\) was closed for one from 127\.0\.0\.5$/.test(w)),
      warnings.join(' | '),
    );
    // A finished post frees its slot.
    for (const socket of posting.open) socket.end(body.slice(100), 'latin1');
    await waitFor('the posts delivered', () => received.filter((r) => r.posts.some((p) => p.kind === 'plate')).length === 4);
    assert.equal((await rawPost(port, CAPTURE, '127.0.0.7')).status, 200);
  });
});
