import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { setImmediate as setImmediatePromise, setTimeout as sleep } from 'node:timers/promises';
import { getDeviceInfo, identifyDevice } from '../lib/ops/device-info';
import { takeSnapshot } from '../lib/ops/snapshot';
import { startSimulator, type Simulator } from '../lib/simulator';
import { CONTROL_CONNECTIONS, DeviceClient } from '../lib/transport/client';
import { AbortLine } from '../lib/transport/deadline';
import { Lane } from '../lib/transport/lane';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import type { DeviceConfigNode } from '../nodes/device-config';
import { expectQuiet, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';
import { DEVICE, deviceCredentials, deviceDef, helper } from './node-helper';

/** A command's path the simulator answers (an output check). */
const COMMAND = '/cgi-bin/admin/output?check=1';

/**
 * What a device costs the device itself and the runtime, counted at the device (the simulator's
 * connections, over real sockets): nothing while nothing is asked, one connection for an
 * exchange and the calls that follow it, never more than the `connections` setting, and nothing
 * left once the client or the node is closed.
 */
describe('device connections', function () {
  this.timeout(20_000);
  let sim: Simulator;
  const clients: DeviceClient[] = [];

  beforeEach(async function () {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD });
  });

  afterEach(async function () {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await sim.close();
  });

  function clientFor(options: { connections?: number } = {}): DeviceClient {
    const client = new DeviceClient({ host: sim.host, port: sim.port, username: SIM_USER, password: SIM_PASSWORD, timeout: 5000, ...options });
    clients.push(client);
    return client;
  }

  it('a client that is never asked anything opens no connection, nor does its close', async function () {
    const client = clientFor();
    expectQuiet(() => sim.connections.accepted, 'a client that is never asked anything opened a connection');
    await sleep(300);
    assert.equal(sim.connections.accepted, 0);
    await client.close();
    assert.equal(sim.connections.accepted, 0);
  });

  it('an exchange with its authentication challenge, and the calls that follow it, go on one connection', async function () {
    const client = clientFor();
    // auto: a 401 first, then the retry with Digest; then calls in a row, each right after the last answer.
    await identifyDevice(client);
    assert.ok(sim.state.requestCount >= 2, 'the device challenged the first request');
    for (let i = 0; i < 5; i++) await getDeviceInfo(client);
    await client.request({ path: COMMAND, control: true });
    await client.request({ path: COMMAND, control: true });
    assert.deepEqual(sim.connections, { open: 2, accepted: 2 }, 'one connection for the requests, one for the commands, kept alive');
  });

  it('a device that closes the connection after every answer without saying so: every call of a run succeeds, each on a new connection', async function () {
    // Field notes: many of these small web servers close after every response; some keep
    // answering HTTP/1.1 without `Connection: close`. Their close comes with or just after the
    // answer: the next call must not go out on that connection.
    for (const close of ['end', 'destroy'] as const) {
      let accepted = 0;
      const closer = createNetServer((socket) => {
        accepted += 1;
        let head = '';
        socket.on('error', () => undefined);
        socket.on('data', (chunk: Buffer) => {
          head += chunk.toString('latin1');
          if (!head.includes('\r\n\r\n')) return;
          socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok');
          if (close === 'end') socket.end();
          else socket.destroy();
        });
      });
      closer.listen(0, '127.0.0.1');
      await once(closer, 'listening');
      const client = new DeviceClient({ host: '127.0.0.1', port: (closer.address() as AddressInfo).port, username: 'u', password: 'p', auth: 'basic', timeout: 5000 });
      try {
        for (let i = 0; i < 20; i++) assert.equal((await client.request({ path: '/x', control: i >= 10 })).body.toString(), 'ok', `${close}: call ${i}`);
        assert.equal(accepted, 20, `${close}: a connection per call`);
      } finally {
        await client.close();
        await new Promise<void>((resolve) => closer.close(() => resolve()));
      }
    }
  });

  it(`concurrent calls open at most \`connections\`, commands at most ${CONTROL_CONNECTIONS} more`, async function () {
    const client = clientFor({ connections: 2 });
    await Promise.all([...Array.from({ length: 6 }, () => takeSnapshot(client)), ...Array.from({ length: 5 }, () => client.request({ path: COMMAND, control: true }))]);
    assert.equal(sim.state.requestCount >= 11, true);
    assert.ok(sim.connections.accepted <= 2 + CONTROL_CONNECTIONS, `${sim.connections.accepted} connections opened`);
  });

  it('close() leaves no connection: requests, commands and a stream', async function () {
    const client = clientFor();
    await Promise.all([takeSnapshot(client), takeSnapshot(client), client.request({ path: COMMAND, control: true })]);
    // Not read: the body waits, paused, for a sink.
    await client.openStream({ path: '/jpg/image.jpg' });
    assert.ok(sim.connections.open >= 3, `${sim.connections.open} connections open before close()`);
    await client.close();
    await waitFor('every connection to close', () => sim.connections.open === 0, 3000);
    const accepted = sim.connections.accepted;
    await assert.rejects(client.request({ path: COMMAND }), { code: 'ECONN' });
    assert.equal(sim.connections.accepted, accepted, 'nothing is sent after close()');
  });
});

describe('Lane: a connection lets its Client go', function () {
  let server: Server;
  const sockets = new Set<Socket>();

  beforeEach(async function () {
    server = createServer((_req, res) => res.end('ok'));
    // Offers 3 s; undici keeps 1 s of it (it stops 2 s early, before the device closes).
    server.keepAliveTimeout = 3000;
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });

  afterEach(async function () {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function origin(): string {
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async function get(lane: Lane, line = new AbortLine()): Promise<void> {
    const seat = lane.take() ?? (await lane.wait(line));
    try {
      const res = await seat.client.request({ method: 'GET', path: '/' });
      await res.body.text();
    } finally {
      lane.release(seat);
    }
  }

  it('its Client is dropped once the keep-alive ends: an idle device holds nothing', async function () {
    const lane = new Lane(origin(), { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 30_000 }, 2);
    try {
      await get(lane);
      await get(lane);
      assert.equal(lane.size, 1, 'calls in a row share one Client');
      assert.equal(sockets.size, 1);
      await waitFor('the keep-alive to end', () => sockets.size === 0, 5000);
      await waitFor('the Client to be dropped', () => lane.size === 0, 1000);
      await get(lane);
      assert.equal(lane.size, 1, 'a new Client for the next call');
    } finally {
      await lane.close();
    }
    assert.equal(lane.size, 0);
    await waitFor('close() to end the connection', () => sockets.size === 0, 1000);
  });

  it('when every connection is held the next call waits for the first freed; an aborted wait leaves the queue', async function () {
    const lane = new Lane(origin(), {}, 1);
    try {
      const held = lane.take();
      assert.ok(held);
      assert.equal(lane.take(), undefined, 'the lane is full');
      const aborted = new AbortLine();
      const gaveUp = lane.wait(aborted);
      const waiting = lane.wait(new AbortLine());
      aborted.abort(new Error('gave up'));
      await assert.rejects(gaveUp, /gave up/);
      lane.release(held);
      // `held` never connected: dropped when let go, and the waiting call gets a new seat.
      const next = await waiting;
      assert.notEqual(next, held);
      assert.equal(lane.size, 1);
      lane.release(next);
      await setImmediatePromise();
      assert.equal(lane.size, 0, 'never connected: dropped when let go');
    } finally {
      await lane.close();
    }
    await assert.rejects(Promise.resolve().then(() => lane.take()), { code: 'ECONN' });
  });
});

describe('ipcam-device node connections', function () {
  this.timeout(20_000);
  let sim: Simulator;

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.stopServer();
  });

  beforeEach(async function () {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD });
  });

  afterEach(async function () {
    await helper.unload();
    await sim.close();
  });

  it('with the heartbeat off a deployed device opens no connection; with it on, one; closing it leaves none', async function () {
    await helper.load([deviceNode], [deviceDef(sim, { heartbeat: '0' })], deviceCredentials(SIM_PASSWORD));
    const unasked = expectQuiet(() => sim.connections.accepted, 'a device nobody asks anything costs the device nothing');
    await sleep(500);
    assert.equal(sim.connections.accepted, 0, 'a device nobody asks anything costs the device nothing');
    await helper.unload();
    unasked.end();

    await helper.load([deviceNode], [deviceDef(sim, { heartbeat: '1' })], deviceCredentials(SIM_PASSWORD));
    const device = helper.getNode(DEVICE) as unknown as DeviceConfigNode;
    await waitFor('the first beat', () => device.health.state === 'online' && device.health.info !== undefined, 5000);
    // The identity read: a challenge and its retry, on one connection.
    assert.equal(sim.connections.accepted, 1);
    await helper.unload();
    await waitFor('the connection to close with the node', () => sim.connections.open === 0, 3000);
  });
});
