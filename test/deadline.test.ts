/**
 * Issue 18 item 4: a dripping device must not starve anything. Every exchange has a deadline
 * (the whole of it: authentication, a 401's body, the answer, polling loops), and commands (relay,
 * PTZ, I/O checks) have a lane of their own that slow answers cannot hold. Hostile fake devices
 * over real sockets: answers that drip one byte every 250 ms for ever.
 */
import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { IpcamError } from '../lib/errors/errors';
import { cgiPtz } from '../lib/ops/ptz-cgi';
import { pulseRelay, readRelay } from '../lib/ops/relay';
import { takeSnapshot } from '../lib/ops/snapshot';
import { FIRMWARE_POLLING, upgradeFirmware } from '../lib/ops/maintenance';
import { runOperation } from '../lib/ops/runner';
import { testSmtp } from '../lib/ops/servetest';
import { allowance } from '../lib/transport/deadline';
import { CONTROL_CONNECTIONS, DeviceClient } from '../lib/transport/client';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import relayNode from '../nodes/ipcam-relay/ipcam-relay';
import snapshotNode from '../nodes/ipcam-snapshot/ipcam-snapshot';
import { DrippingDevice, OUTPUT_PATH } from './dripping-device';
import { waitFor } from './helpers';
import { DEVICE, FlowWatch, TAB, deviceDef, getNode, helper, type FlowNode } from './node-helper';

/** A short device timeout, so that a test waits for the deadline in well under a second or two. */
const TIMEOUT = 800;
/** Slack for a loaded machine (two cores shared with other test runs): a bound, not a measurement. */
const SLACK = 1500;
/** "At once": a command beside dripping snapshots reaches the device within this, plus SLACK. */
const AT_ONCE = 1000;
/** A socket or a dripping answer released after its deadline or close(): within this, plus SLACK. */
const RELEASED = 1500;

/** Time `promise` takes to settle, and how. */
async function timed<T>(promise: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = Date.now();
  try {
    const value = await promise;
    return { ms: Date.now() - start, value };
  } catch (error) {
    return { ms: Date.now() - start, error };
  }
}

function assertTimeout(outcome: { ms: number; error?: unknown }, limitMs: number): void {
  assert.ok(outcome.error instanceof IpcamError, `expected ETIMEOUT, got ${String(outcome.error ?? 'success')}`);
  assert.equal(outcome.error.code, 'ETIMEOUT', outcome.error.message);
  assert.ok(outcome.ms <= limitMs, `ended after ${outcome.ms} ms, deadline ${limitMs} ms`);
}

/** A raw TCP device that plays `script` on every connection that sends a request. */
class RawDevice {
  /** Connections a request came on. */
  readonly asked: Socket[] = [];
  readonly sockets = new Set<Socket>();
  private readonly server: NetServer;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly script: (socket: Socket, every: (ms: number, tick: () => void) => void) => void) {
    this.server = createNetServer((socket) => {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => this.sockets.delete(socket));
      // Answer once the request has arrived.
      socket.once('data', () => {
        this.asked.push(socket);
        this.script(socket, (ms, tick) => {
          const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : tick()), ms);
          this.timers.add(timer);
        });
      });
    });
  }

  /**
   * Every connection a request came on is closed. (After an abort undici may open one idle
   * connection again; its keep-alive timeout closes it, and it holds no request.)
   */
  get released(): boolean {
    return this.asked.length > 0 && this.asked.every((socket) => socket.destroyed);
  }

  async listen(): Promise<number> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('deadlines: a dripping device never holds a request for ever', function () {
  this.timeout(20_000);
  let device: RawDevice | undefined;
  let client: DeviceClient | undefined;

  afterEach(async function () {
    await client?.close();
    await device?.close();
    client = undefined;
    device = undefined;
  });

  async function start(script: ConstructorParameters<typeof RawDevice>[0], username = '', timeout = TIMEOUT): Promise<DeviceClient> {
    device = new RawDevice(script);
    const port = await device.listen();
    client = new DeviceClient({ host: '127.0.0.1', port, timeout, username, password: username === '' ? '' : 'secret' });
    return client;
  }

  it('an answer that drips one byte every 250 ms is ETIMEOUT within its deadline, and its socket is released', async function () {
    const c = await start((socket, every) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: 1000000\r\n\r\n\xff');
      every(250, () => socket.write('\xd8'));
    });
    const outcome = await timed(c.request({ path: '/jpg/image.jpg' }));
    // Idle timeouts per chunk (what undici has) never fire on this device: only the deadline does.
    assertTimeout(outcome, allowance(TIMEOUT, 0) + SLACK);
    assert.ok(outcome.ms >= TIMEOUT - 50, `not before the deadline (${outcome.ms} ms)`);
    await waitFor('the device to see its socket closed', () => device?.released === true, RELEASED + SLACK);
  });

  it('a status line and headers that drip are ETIMEOUT within the deadline', async function () {
    const head = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Filler: ' + 'x'.repeat(1000) + '\r\n\r\n';
    const c = await start((socket, every) => {
      let at = 0;
      every(200, () => socket.write(head.charAt(at++ % head.length)));
    });
    assertTimeout(await timed(c.request({ path: '/cgi-bin/admin/param?action=list' })), allowance(TIMEOUT, 0) + SLACK);
    await waitFor('the device to see its socket closed', () => device?.released === true, RELEASED + SLACK);
  });

  it('a 401 whose body drips is ETIMEOUT within the deadline (the dump of its body is bounded too)', async function () {
    const c = await start((socket, every) => {
      socket.write('HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Digest realm="cam", nonce="abc123", qop="auth", algorithm=MD5\r\nContent-Length: 1000\r\n\r\n<');
      every(250, () => socket.write('x'));
    }, 'admin');
    assertTimeout(await timed(c.request({ path: '/cgi-bin/admin/param?action=list' })), allowance(TIMEOUT, 0) + SLACK);
    await waitFor('the device to see its socket closed', () => device?.released === true, RELEASED + SLACK);
  });

  it('a stream whose refusal drips is ETIMEOUT when opening, not held for ever', async function () {
    const c = await start((socket, every) => {
      socket.write('HTTP/1.1 503 Busy\r\nContent-Length: 1000\r\n\r\n<');
      every(250, () => socket.write('x'));
    });
    assertTimeout(await timed(c.openStream({ path: '/cgi-bin/admin/input?monitor=1' })), allowance(TIMEOUT, 0) + SLACK);
  });

  it('a large answer at a healthy pace is not cut: the deadline moves on with the bytes received', async function () {
    // 4 MiB in 64 KiB pieces every 100 ms (640 KiB/s, ten times the floor rate): about 6.4 s, far
    // beyond the timeout of 800 ms, and never dripping.
    const piece = Buffer.alloc(64 * 1024, 0x5a);
    const pieces = 64;
    const c = await start((socket, every) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${piece.length * pieces}\r\n\r\n`);
      let sent = 0;
      every(100, () => {
        if (sent < pieces) socket.write(piece);
        sent += 1;
      });
    });
    const outcome = await timed(c.request({ path: '/big', maxBytes: 8 * 1024 * 1024 }));
    assert.equal(outcome.error, undefined, String(outcome.error));
    assert.equal(outcome.value?.body.length, piece.length * pieces);
  });

  it('a caller-given deadline ends the exchange earlier than the device timeout', async function () {
    const c = await start(
      (socket, every) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n');
        every(250, () => socket.write('x'));
      },
      '',
      60_000,
    );
    assertTimeout(await timed(c.request({ path: '/x', deadline: Date.now() + 500 })), 500 + SLACK);
  });
});

describe('polling loops end with their deadline against a dripping device', function () {
  this.timeout(20_000);
  let camera: DrippingDevice;
  let client: DeviceClient;
  const polling = { ...FIRMWARE_POLLING };

  afterEach(async function () {
    Object.assign(FIRMWARE_POLLING, polling);
    await client.close();
    await camera.close();
  });

  it('firmware progress polling: every poll drips, the upgrade ends ETIMEOUT at its own end', async function () {
    camera = new DrippingDevice((path, query) => path === '/cgi-bin/admin/firmwareupgrade' && query === 'action=progress');
    const port = await camera.listen();
    // The device timeout is long: only the loop's end can bound a poll that drips.
    client = new DeviceClient({ host: '127.0.0.1', port, timeout: 60_000 });
    Object.assign(FIRMWARE_POLLING, { intervalMs: 50, maxPolls: 100, maxMs: 1500, maxFailures: 100 });
    const outcome = await timed(runOperation(client, upgradeFirmware, { file: Buffer.alloc(1000, 1) }));
    assertTimeout(outcome, 1500 + SLACK);
    assert.match(String((outcome.error as Error).message), /did not reach 100%/);
    await waitFor('every dripping poll to be released', () => camera.dripping === 0, RELEASED + SLACK);
  });

  it('server-test log reads: the log drips, the SMTP test ends ETIMEOUT at its timeout and is stopped', async function () {
    camera = new DrippingDevice((path) => path === '/cgi-bin/admin/fileread');
    const port = await camera.listen();
    client = new DeviceClient({ host: '127.0.0.1', port, timeout: 60_000 });
    const outcome = await timed(runOperation(client, testSmtp, { server: 'mail.example.com', port: 25, from: 'cam@example.com', to: 'me@example.com', timeout: 2 }));
    assertTimeout(outcome, 2000 + SLACK);
    assert.match(String((outcome.error as Error).message), /did not end within 2 s; the test was stopped/);
    assert.ok(camera.reached('/cgi-bin/admin/servetest').length >= 2, 'the test was started and then stopped');
    await waitFor('every dripping read to be released', () => camera.dripping === 0, RELEASED + SLACK);
  });
});

describe('control lane: commands never wait behind slow answers', function () {
  this.timeout(20_000);
  /** Long enough that a relay queued behind the snapshots would be seen late. */
  const SNAPSHOT_TIMEOUT = 3000;
  let camera: DrippingDevice;
  let client: DeviceClient;

  beforeEach(async function () {
    camera = new DrippingDevice();
    const port = await camera.listen();
    client = new DeviceClient({ host: '127.0.0.1', port, timeout: SNAPSHOT_TIMEOUT });
  });

  afterEach(async function () {
    await client.close();
    await camera.close();
  });

  it('four dripping snapshots hold the pool; a relay pulse, a relay check and a PTZ command reach the device at once', async function () {
    const snapshots = [1, 2, 3, 4].map(() => timed(takeSnapshot(client, { source: 'jpg' })));
    await waitFor('four dripping snapshots', () => camera.dripping === 4);
    // A fifth snapshot waits for a connection of the pool: the pool is full.
    const fifth = timed(takeSnapshot(client, { source: 'jpg' }));

    const sent = Date.now();
    const pulse = await timed(pulseRelay(client, 1, 500));
    assert.equal(pulse.error, undefined, String(pulse.error));
    const reached = camera.reached(OUTPUT_PATH)[0];
    assert.ok(reached, 'the relay command reached the device');
    // The bound stays below the snapshots' timeout: a command that waited for them would miss it.
    assert.ok(AT_ONCE + SLACK < SNAPSHOT_TIMEOUT);
    assert.ok(reached.time - sent < AT_ONCE + SLACK, `the relay command reached the device ${reached.time - sent} ms after it was sent`);
    assert.ok(pulse.ms < AT_ONCE + SLACK, `the pulse took ${pulse.ms} ms`);
    assert.equal(camera.dripping, 4, 'the snapshots still drip: the relay did not wait for them');

    const check = await timed(readRelay(client, 1));
    assert.deepEqual(check.value, { output: 1, active: false });
    const ptz = await timed(cgiPtz(client, { action: 'move', move: 'left' }));
    assert.equal(ptz.error, undefined, String(ptz.error));
    assert.ok(check.ms < AT_ONCE + SLACK && ptz.ms < AT_ONCE + SLACK, `check ${check.ms} ms, PTZ ${ptz.ms} ms`);

    // Every snapshot ends ETIMEOUT by its deadline, counted from its call (the fifth's wait in the queue included).
    for (const outcome of await Promise.all([...snapshots, fifth])) assertTimeout(outcome, allowance(SNAPSHOT_TIMEOUT, 0) + SLACK);
    await waitFor('every dripping answer to be released', () => camera.dripping === 0, RELEASED + SLACK);
    // The lanes' kept-alive connections close with the client. (A command first: the device's
    // keep-alive offer, 5 s, leaves 3 s, about as long as the snapshots took.)
    assert.deepEqual((await timed(readRelay(client, 1))).value, { output: 1, active: false });
    assert.ok(camera.connections > 0, 'connections are kept alive before close');
    await client.close();
    await waitFor('no connection left after close()', () => camera.connections === 0, RELEASED + SLACK);
  });

  it(`the lane is bounded: ${CONTROL_CONNECTIONS} connections, the next command waits (and has its deadline)`, async function () {
    const held = new DrippingDevice((path) => path === OUTPUT_PATH);
    const port = await held.listen();
    const c = new DeviceClient({ host: '127.0.0.1', port, timeout: 1000 });
    try {
      const pulses = [1, 2, 3].map((n) => timed(pulseRelay(c, n, 500)));
      await waitFor('the lane to be full', () => held.dripping === CONTROL_CONNECTIONS);
      assert.equal(held.reached(OUTPUT_PATH).length, CONTROL_CONNECTIONS, 'the third command waits for a connection of the lane');
      for (const outcome of await Promise.all(pulses)) assertTimeout(outcome, allowance(1000, 0) + SLACK);
    } finally {
      await c.close();
      await held.close();
    }
  });
});

describe('control lane through the ipcam-relay node', function () {
  this.timeout(20_000);
  let camera: DrippingDevice;
  const RELAY = 'relay1';
  const SNAPSHOT = 'snap1';

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.stopServer();
  });

  afterEach(async function () {
    await helper.unload();
    await camera.close();
  });

  it('four dripping snapshots in flight: a relay pulse reaches the device at once and the node reports it', async function () {
    camera = new DrippingDevice();
    const port = await camera.listen();
    const flow: FlowNode[] = [
      { id: TAB, type: 'tab', label: 'test' },
      deviceDef({ port }, { timeout: '3000' }),
      { id: SNAPSHOT, type: 'ipcam-snapshot', z: TAB, x: 100, y: 50, name: '', device: DEVICE, source: 'jpg', channel: '', format: 'buffer', wires: [['snapOut']] },
      { id: 'snapOut', type: 'helper', z: TAB, x: 300, y: 50, wires: [] },
      { id: RELAY, type: 'ipcam-relay', z: TAB, x: 100, y: 100, name: '', device: DEVICE, output: '1', mode: 'pulse', pulse: '500', sequence: '', wires: [['out']] },
      { id: 'out', type: 'helper', z: TAB, x: 300, y: 100, wires: [] },
      { id: 'catch-all', type: 'catch', z: TAB, x: 100, y: 200, scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper', z: TAB, x: 300, y: 200, wires: [] },
    ];
    await helper.load([deviceNode, snapshotNode, relayNode], flow, { [DEVICE]: { username: '', password: '' } });
    const watch = new FlowWatch([RELAY, SNAPSHOT]);
    for (let i = 0; i < 4; i++) getNode(SNAPSHOT).receive({ payload: i });
    await waitFor('four dripping snapshots', () => camera.dripping === 4);

    const sent = Date.now();
    const outcome = await watch.send(RELAY, { payload: 'pulse' });
    assert.equal(outcome.kind, 'out', `the relay failed: ${JSON.stringify(outcome.msg['error'])}`);
    assert.deepEqual(outcome.msg.payload, { output: 1, active: false, pulse: 500 });
    const reached = camera.reached(OUTPUT_PATH)[0];
    assert.ok(reached && reached.time - sent < AT_ONCE + SLACK, `the pulse reached the device ${reached ? reached.time - sent : 'never'} ms after it was sent`);
    assert.equal(camera.dripping, 4, 'the relay did not wait for the snapshots');

    // The four snapshots end at the Catch node with ETIMEOUT.
    await waitFor('four snapshot errors', () => watch.messages.filter((m) => (m['error'] as { code?: string } | undefined)?.code === 'ETIMEOUT').length === 4, 3000 + SLACK + 2000);
    await waitFor('every dripping answer to be released', () => camera.dripping === 0, RELEASED + SLACK);
  });
});
