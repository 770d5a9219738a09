/**
 * examples/snapshot-basics.json in a real Node-RED child, its camera unreachable (issue 24): the
 * example's `/snapshot` must answer 502 within the device timeout plus 1 s, never hang the
 * browser that asked. Two cameras that never give a picture: a port nothing listens on (refused
 * at once) and a device that accepts the connection and never answers (the timeout runs out).
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { ChildRuntime, freePort, type FlowNode } from './runtime-child';
import { PROJECT_ROOT } from './helpers';

/** The device timeout the example's device is given here (ms): short, so the test is quick. */
const DEVICE_TIMEOUT_MS = 2000;

function exampleFor(port: number): FlowNode[] {
  const nodes = JSON.parse(readFileSync(join(PROJECT_ROOT, 'examples', 'snapshot-basics.json'), 'utf8')) as FlowNode[];
  return nodes.map((node) =>
    node.type === 'ipcam-device' ? { ...node, host: '127.0.0.1', port: String(port), timeout: String(DEVICE_TIMEOUT_MS), credentials: { username: 'admin', password: 'admin' } } : node,
  );
}

/** A device that accepts connections and never says a word; every socket is kept to be destroyed at the end. */
async function silentDevice(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('examples/snapshot-basics.json with an unreachable camera: /snapshot answers 502 in time', function () {
  this.timeout(60_000);
  const runtime = new ChildRuntime();
  let silent: { port: number; close(): Promise<void> } | undefined;

  before(async function () {
    await runtime.start();
    silent = await silentDevice();
  });

  after(async function () {
    await runtime.stop();
    await silent?.close();
  });

  /** GET /snapshot once the example's route is there: its status, body and how long it took. */
  async function snapshot(): Promise<{ status: number; body: string; ms: number }> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const started = Date.now();
      const res = await fetch(`${runtime.adminUrl}/snapshot`, { signal: AbortSignal.timeout(DEVICE_TIMEOUT_MS + 10_000) });
      const body = await res.text();
      if (res.status !== 404) return { status: res.status, body, ms: Date.now() - started };
      assert.ok(Date.now() < deadline, 'the example never served /snapshot');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('a camera port nothing listens on: 502 "No picture from the camera", at once', async function () {
    await runtime.deploy(exampleFor(await freePort()));
    const answer = await snapshot();
    assert.equal(answer.status, 502);
    assert.equal(answer.body, 'No picture from the camera');
    assert.ok(answer.ms <= DEVICE_TIMEOUT_MS + 1000, `answered after ${answer.ms} ms`);
  });

  it('a camera that accepts and never answers: 502 within the device timeout plus 1 s', async function () {
    assert.ok(silent);
    await runtime.deploy(exampleFor(silent.port));
    const answer = await snapshot();
    assert.equal(answer.status, 502);
    assert.equal(answer.body, 'No picture from the camera');
    assert.ok(answer.ms >= DEVICE_TIMEOUT_MS - 100, `answered after ${answer.ms} ms: before the device timeout, so not the timeout case`);
    assert.ok(answer.ms <= DEVICE_TIMEOUT_MS + 1000, `answered after ${answer.ms} ms`);
    assert.ok(runtime.alive, 'Node-RED is still running');
  });
});
