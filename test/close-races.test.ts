import { strict as assert } from 'node:assert';
import { createServer, Socket, type Server } from 'node:net';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { ioMonitorPath } from '../lib/ops/io';
import { takeSnapshot } from '../lib/ops/snapshot';
import { SNAPSHOT_JPEG } from '../lib/simulator/images';
import { startSimulator, type Simulator, type StreamStyle } from '../lib/simulator';
import { StreamSupervisor } from '../lib/stream/supervisor';
import { DeviceClient } from '../lib/transport/client';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import detectionNode from '../nodes/ipcam-detection-stream/ipcam-detection-stream';
import inputMonitorNode from '../nodes/ipcam-input-monitor/ipcam-input-monitor';
import snapshotNode from '../nodes/ipcam-snapshot/ipcam-snapshot';
import { expectQuiet, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';
import { DEVICE, deviceCredentials, deviceDef, getNode, helper, TAB, type FlowNode } from './node-helper';

/**
 * Stopping at every phase of a request or a stream, in both orders of the device's client close
 * and the user's stop, against every answer style: nothing may reach the process as an uncaught
 * exception or an unhandled rejection, and no socket may stay open.
 */

/** What reached the process uncaught while a case ran. */
class ProcessFaults {
  readonly seen: unknown[] = [];
  private readonly record = (err: unknown): void => void this.seen.push(err);

  attach(): void {
    process.on('uncaughtException', this.record);
    process.on('unhandledRejection', this.record);
  }

  detach(): void {
    process.off('uncaughtException', this.record);
    process.off('unhandledRejection', this.record);
  }
}

type RawBehaviour = 'silent' | 'half-part' | 'parts' | 'drop' | 'reset' | 'half-image';

/**
 * A camera's small web server at the byte level: HTTP/1.0, no Content-Length, the body ends when
 * the connection closes, parts written in pieces. It plays one behaviour for every request.
 */
class RawDevice {
  behaviour: RawBehaviour = 'parts';
  requests = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor() {
    this.server = createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      socket.once('data', () => {
        this.requests += 1;
        this.answer(socket);
      });
    });
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(socket: Socket): void {
    const multipart = 'HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=ioboundary\r\n\r\n';
    const part = '--ioboundary\r\nContent-Type: text/plain\r\n\r\nIO1:/\r\n';
    switch (this.behaviour) {
      case 'silent':
        return;
      case 'drop':
        socket.end(multipart);
        return;
      case 'reset':
        // A part, then a TCP reset at once: the stop races the reset.
        socket.write(multipart + part, () => setImmediate(() => socket.resetAndDestroy()));
        return;
      case 'half-part':
        socket.write(multipart + part + part.slice(0, 20));
        return;
      case 'half-image':
        socket.write('HTTP/1.0 200 OK\r\nContent-Type: image/jpeg\r\n\r\n');
        socket.write(SNAPSHOT_JPEG.subarray(0, SNAPSHOT_JPEG.length >> 1));
        return;
      case 'parts': {
        socket.write(multipart);
        const timer = setInterval(() => {
          // Each part in three pieces, as slow embedded servers flush them.
          socket.write(part.slice(0, 7));
          socket.write(part.slice(7, 30));
          setImmediate(() => socket.writable && socket.write(part.slice(30)));
        }, 5);
        socket.on('close', () => clearInterval(timer));
      }
    }
  }
}

/** Client sockets of this process still connected to `port`. */
function openSocketsTo(port: number): number {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h) => h instanceof Socket && h.remotePort === port && !h.destroyed).length;
}

/** A supervised input stream on a new client, counting parts and tracking the state. */
function watchStream(port: number, auth: 'basic' | 'digest'): { client: DeviceClient; supervisor: StreamSupervisor; seen: { parts: number; state: string } } {
  const client = new DeviceClient({ host: '127.0.0.1', port, username: SIM_USER, password: SIM_PASSWORD, auth });
  const seen = { parts: 0, state: 'stopped' };
  const supervisor = new StreamSupervisor({
    client,
    path: ioMonitorPath('input', []),
    onPart: () => void (seen.parts += 1),
    onState: (state) => void (seen.state = state),
    flushDelay: 1,
  });
  supervisor.start();
  return { client, supervisor, seen };
}

type Order = 'device first' | 'user first' | 'device, then user a turn later';

/** Closes the client and stops the user in `order`, neither awaited before the other starts. */
async function closeBoth(order: Order, closeClient: () => Promise<void>, stopUser: () => Promise<void>): Promise<void> {
  if (order === 'device first') await Promise.all([closeClient(), stopUser()]);
  else if (order === 'user first') await Promise.all([stopUser(), closeClient()]);
  else {
    const closing = closeClient();
    await nextTurn();
    await Promise.all([closing, stopUser()]);
  }
}

const ORDERS: Order[] = ['device first', 'user first', 'device, then user a turn later'];
const faults = new ProcessFaults();

/** Runs one case and checks the process saw nothing and no socket stayed open. */
async function noFault(port: number, body: () => Promise<void>): Promise<void> {
  faults.seen.length = 0;
  expectQuiet(faults.seen, 'the process saw a fault');
  await body();
  // Late socket events (close after destroy) land in the next turns.
  await sleep(20);
  assert.deepEqual(faults.seen.map(String), []);
  await waitFor('every client socket closed', () => openSocketsTo(port) === 0, 2000);
}

describe('close races: every answer style, every phase, both close orders', function () {
  this.timeout(60_000);
  before(() => faults.attach());
  after(() => faults.detach());

  describe('streams against a raw HTTP/1.0 device', function () {
    let device: RawDevice;
    before(async () => {
      device = new RawDevice();
      await device.listen();
    });
    after(() => device.close());

    const phases: Array<{ phase: string; behaviour: RawBehaviour; reached: (s: { parts: number; state: string }) => boolean }> = [
      { phase: 'connecting', behaviour: 'parts', reached: () => true },
      { phase: 'headers', behaviour: 'silent', reached: () => device.requests > 0 },
      { phase: 'mid-part', behaviour: 'half-part', reached: (s) => s.parts > 0 },
      { phase: 'between parts', behaviour: 'parts', reached: (s) => s.parts > 1 },
      { phase: 'backoff', behaviour: 'drop', reached: (s) => s.state === 'retrying' },
      { phase: 'a reset by the device', behaviour: 'reset', reached: (s) => s.parts > 0 },
    ];
    for (const { phase, behaviour, reached } of phases) {
      for (const order of ORDERS) {
        it(`stop in ${phase}, ${order}`, async () => {
          device.behaviour = behaviour;
          device.requests = 0;
          await noFault(device.port, async () => {
            for (let round = 0; round < 5; round++) {
              const { client, supervisor, seen } = watchStream(device.port, 'basic');
              await waitFor(phase, () => reached(seen));
              await closeBoth(order, () => client.close(), () => supervisor.stop());
            }
          });
        });
      }
    }
  });

  describe('streams against the simulator', function () {
    let sim: Simulator;
    before(async () => {
      sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD });
    });
    after(() => sim.close());
    afterEach(() => {
      sim.setAnswer({ http10: false, halfOpen: false });
      sim.state.io.style = { ...sim.state.io.style, pieceSize: 0, pieceDelay: 0, quiet: false, firstByteDelay: 0 };
    });

    const styles: Array<{ name: string; http10: boolean; stream: Partial<StreamStyle> }> = [
      { name: 'HTTP/1.1 keep-alive', http10: false, stream: {} },
      { name: 'HTTP/1.0', http10: true, stream: {} },
      { name: 'HTTP/1.0, parts in 3-byte pieces', http10: true, stream: { pieceSize: 3, pieceDelay: 1 } },
      { name: 'HTTP/1.0, quiet', http10: true, stream: { quiet: true } },
      { name: 'HTTP/1.0, first byte late', http10: true, stream: { firstByteDelay: 100 } },
    ];
    type Seen = { parts: number; state: string };
    const phases: Array<{ phase: string; halfOpen?: boolean; reached: (s: Seen, requests: number) => boolean; act?: (s: Seen) => Promise<void> }> = [
      { phase: 'connecting', reached: () => true },
      { phase: 'headers', halfOpen: true, reached: (_s, requests) => sim.state.requestCount > requests },
      { phase: 'connected, before the first byte', reached: (s) => s.state === 'connected' },
      {
        phase: 'a part (mid-part when in pieces)',
        reached: (s) => s.parts > 0,
        act: async (s) => {
          await waitFor('connected', () => s.state === 'connected');
          sim.state.io.setInput(2, !sim.state.io.inputs.get(2));
        },
      },
      {
        phase: 'backoff',
        reached: (s) => s.state === 'retrying',
        act: async (s) => {
          await waitFor('connected', () => s.state === 'connected');
          sim.state.io.streamFault('drop');
        },
      },
    ];
    for (const style of styles) {
      for (const { phase, halfOpen, reached, act } of phases) {
        for (const order of ORDERS) {
          it(`${style.name}: stop in ${phase}, ${order}`, async () => {
            sim.setAnswer({ http10: style.http10, halfOpen: halfOpen ?? false });
            sim.state.io.style = { ...sim.state.io.style, ...style.stream };
            await noFault(sim.port, async () => {
              for (let round = 0; round < 5; round++) {
                const requests = sim.state.requestCount;
                const { client, supervisor, seen } = watchStream(sim.port, 'digest');
                await act?.(seen);
                await waitFor(phase, () => reached(seen, requests));
                // A few ms later each round: another point of the exchange.
                await sleep(round);
                await closeBoth(order, () => client.close(), () => supervisor.stop());
              }
            });
          });
        }
      }
    }
  });

  describe('snapshots', function () {
    let device: RawDevice;
    let sim: Simulator;
    /** Digest only, every nonce stale at once: each snapshot renews it. */
    let renewing: Simulator;
    before(async () => {
      device = new RawDevice();
      await device.listen();
      sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD });
      renewing = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD, auth: 'digest', nonceTtl: 0, answer: { http10: true } });
    });
    after(async () => {
      await device.close();
      await sim.close();
      await renewing.close();
    });
    afterEach(() => sim.setAnswer({ http10: false, halfOpen: false }));

    const cases: Array<{ name: string; port: () => number; setup: () => void; reached: (start: number) => boolean }> = [
      { name: 'simulator HTTP/1.0, connecting', port: () => sim.port, setup: () => sim.setAnswer({ http10: true }), reached: () => true },
      { name: 'simulator HTTP/1.0, in flight', port: () => sim.port, setup: () => sim.setAnswer({ http10: true }), reached: () => false },
      { name: 'simulator half-open, headers', port: () => sim.port, setup: () => sim.setAnswer({ halfOpen: true }), reached: (n) => sim.state.requestCount > n },
      { name: 'digest nonce renewal, in flight', port: () => renewing.port, setup: () => undefined, reached: () => false },
      { name: 'raw HTTP/1.0, headers', port: () => device.port, setup: () => void (device.behaviour = 'silent'), reached: (n) => device.requests > n },
      { name: 'raw HTTP/1.0, mid-body', port: () => device.port, setup: () => void (device.behaviour = 'half-image'), reached: (n) => device.requests > n },
    ];
    for (const { name, port, setup, reached } of cases) {
      for (const order of ORDERS) {
        it(`${name}, ${order}`, async () => {
          setup();
          await noFault(port(), async () => {
            for (let round = 0; round < 5; round++) {
              const client = new DeviceClient({ host: '127.0.0.1', port: port(), username: SIM_USER, password: SIM_PASSWORD, auth: 'auto' });
              const controller = new AbortController();
              const start = port() === device.port ? device.requests : sim.state.requestCount;
              const snapshot = takeSnapshot(client, { signal: controller.signal }).then(
                () => 'done',
                (err: unknown) => (err as { code?: string }).code ?? String(err),
              );
              // 'in flight' stops at a random point of the exchange rather than a phase.
              if (name.endsWith('in flight')) await sleep(round);
              else await waitFor(name, () => reached(start));
              await closeBoth(order, () => client.close(), async () => controller.abort());
              const outcome = await snapshot;
              // A nonce stale on arrival may be refused twice: EAUTH, never a crash.
              assert.ok(['done', 'ECONN', 'ETIMEOUT', 'EAUTH'].includes(outcome), `snapshot ended with ${outcome}`);
            }
          });
        });
      }
    }
  });

  describe('nodes: the device node closed before and after its users', function () {
    let sim: Simulator;
    before(async () => {
      sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD });
      sim.state.io.detectionInterval = 5;
    });
    after(() => sim.close());
    afterEach(async () => {
      sim.setAnswer({ http10: false, halfOpen: false });
      await helper.unload();
    });

    const USERS = ['inputs', 'motion', 'snap'];
    function flow(): FlowNode[] {
      return [
        { id: TAB, type: 'tab', label: 'races' },
        deviceDef(sim, { timeout: '2000' }),
        { id: 'inputs', type: 'ipcam-input-monitor', z: TAB, x: 100, y: 100, device: DEVICE, kind: 'input', ports: '', wires: [[]] },
        { id: 'motion', type: 'ipcam-detection-stream', z: TAB, x: 100, y: 200, device: DEVICE, detection: 'motion', groups: '', mode: 'stream', emit: 'every', wires: [[]] },
        { id: 'snap', type: 'ipcam-snapshot', z: TAB, x: 100, y: 300, device: DEVICE, source: 'jpg', format: 'buffer', wires: [[]] },
      ];
    }
    type Closable = { close(removed?: boolean): Promise<void> };
    const styles: Array<{ name: string; http10: boolean; halfOpen: boolean }> = [
      { name: 'HTTP/1.1 keep-alive', http10: false, halfOpen: false },
      { name: 'HTTP/1.0', http10: true, halfOpen: false },
      { name: 'half-open', http10: false, halfOpen: true },
    ];
    for (const style of styles) {
      for (const deviceFirst of [true, false]) {
        it(`${style.name}: ${deviceFirst ? 'device' : 'users'} closed first, snapshots in flight, parts flowing`, async () => {
          await noFault(sim.port, async () => {
            for (let round = 0; round < 5; round++) {
              sim.setAnswer({ http10: style.http10, halfOpen: false });
              const requests = sim.state.requestCount;
              await helper.load([deviceNode, inputMonitorNode, detectionNode, snapshotNode], flow(), deviceCredentials(SIM_PASSWORD));
              await waitFor('both streams open', () => sim.state.io.openStreams >= 2);
              sim.state.io.setInput(1, round % 2 === 0);
              if (style.halfOpen) sim.setAnswer({ halfOpen: true });
              for (let i = 0; i < 3; i++) getNode('snap').receive({ payload: i });
              await waitFor('the snapshots sent', () => sim.state.requestCount >= requests + 3);
              await sleep(round);
              const nodes = (deviceFirst ? [DEVICE, ...USERS] : [...USERS, DEVICE]).map((id) => getNode(id) as unknown as Closable);
              await Promise.all(nodes.map((node) => node.close(false)));
              await helper.unload();
              sim.setAnswer({ halfOpen: false });
            }
          });
        });
      }
    }
  });
});

describe('ipcam-device waits for its users before it closes the client', function () {
  let sim: Simulator;
  before(async () => {
    sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD });
  });
  after(() => sim.close());
  afterEach(() => helper.unload());

  it('a device closed first keeps its client until the stream node has stopped, then closes it', async () => {
    await helper.load(
      [deviceNode, inputMonitorNode],
      [
        { id: TAB, type: 'tab', label: 'users' },
        deviceDef(sim),
        { id: 'inputs', type: 'ipcam-input-monitor', z: TAB, x: 100, y: 100, device: DEVICE, kind: 'input', ports: '', wires: [[]] },
      ],
      deviceCredentials(SIM_PASSWORD),
    );
    await waitFor('the stream open', () => sim.state.io.openStreams === 1);
    type Closable = { close(removed?: boolean): Promise<void> };
    let deviceClosed = false;
    const closing = (getNode(DEVICE) as unknown as Closable).close(false).then(() => void (deviceClosed = true));
    await sleep(50);
    assert.equal(deviceClosed, false, 'the device closed its client while a user was still running');
    assert.equal(sim.state.io.openStreams, 1, 'the stream was cut by the device, not stopped by its node');
    await (getNode('inputs') as unknown as Closable).close(false);
    await closing;
    assert.equal(deviceClosed, true);
    await waitFor('the stream closed', () => sim.state.io.openStreams === 0);
  });
});
