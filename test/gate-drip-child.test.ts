/**
 * Issue 18 item 4 in a real Node-RED runtime (a child process, through its admin API): the gate
 * console's plate -> relay chain, taken from examples/gate-console.json as it ships (plate-event,
 * "allow list only" switch, "who opens" change, the gate relay), beside snapshot requests on the
 * same device, against a camera whose snapshots drip one byte every 250 ms. The dashboard nodes
 * are left out (they only display); four snapshots are sent at once by an ipcam-snapshot node
 * (the console's live view fetches its frames through the same client), so that they hold every
 * connection of the device's pool. Then an
 * allow-listed plate is posted to the event server: the relay pulse must reach the camera within
 * 1 s, and every snapshot must end ETIMEOUT within its deadline.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../lib/simulator';
import { allowance } from '../lib/transport/deadline';
import { DrippingDevice, OUTPUT_PATH } from './dripping-device';
import { PROJECT_ROOT, waitFor } from './helpers';
import { ChildRuntime, freePort, type FlowNode } from './runtime-child';

const TAB = '9c4e2a7b1d6f0001';
const DEVICE = 'ipcam-sim-device';
const SERVER = '9c4e2a7b1d6f0003';
const SNAPSHOT = 'four-snapshots';
const PLATES = '9c4e2a7b1d6f0031';
const ALLOW_ONLY = '9c4e2a7b1d6f0034';
const WHO_OPENS = '9c4e2a7b1d6f0038';
const RELAY = '9c4e2a7b1d6f0040';
/** The device timeout of the test: a relay queued behind the snapshots would be seen this late. */
const DEVICE_TIMEOUT = 2000;

/** What the flow reports to the test: relay outputs and errors at a Catch node, posted as JSON. */
class Collector {
  readonly relays: Array<{ time: number; body: unknown }> = [];
  readonly errors: Array<{ time: number; body: { code?: string; message?: string; source?: string } }> = [];
  private readonly server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      const entry = { time: Date.now(), body: JSON.parse(text || '{}') as never };
      (req.url === '/relay' ? this.relays : this.errors).push(entry);
      res.end('ok');
    });
  });

  async listen(): Promise<number> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function postTo(id: string, url: string): FlowNode {
  return { id, type: 'http request', z: TAB, x: 900, y: 500, name: '', method: 'POST', ret: 'txt', paytoqs: 'ignore', url, tls: '', persist: false, proxy: '', insecureHTTPParser: false, authType: '', senderr: false, headers: [], wires: [[]] };
}

/** The example's plate -> relay chain and a snapshot node on its device, pointed at the test's camera and ports. */
function gateFlow(cameraPort: number, eventPort: number, collectorPort: number): FlowNode[] {
  const example = JSON.parse(readFileSync(join(PROJECT_ROOT, 'examples', 'gate-console.json'), 'utf8')) as FlowNode[];
  const take = (id: string): FlowNode => {
    const node = example.find((n) => n.id === id);
    assert.ok(node, `the example has node ${id}`);
    return { ...node };
  };
  const tab = take(TAB);
  const device = { ...take(DEVICE), port: String(cameraPort), timeout: String(DEVICE_TIMEOUT) };
  const server = { ...take(SERVER), port: String(eventPort), bind: '127.0.0.1' };
  // The plate list display is a dashboard node: only the path to the gate stays wired.
  const plates = { ...take(PLATES), wires: [[ALLOW_ONLY], []] };
  const relay: FlowNode = { ...take(RELAY), wires: [['post-relay']] };
  const snapshot: FlowNode = { id: SNAPSHOT, type: 'ipcam-snapshot', z: TAB, x: 500, y: 400, name: '', device: DEVICE, source: 'jpg', channel: '1', format: 'buffer', wires: [[]] };
  assert.equal(relay['type'], 'ipcam-relay');
  assert.equal(snapshot['device'], DEVICE);
  assert.equal(relay['device'], DEVICE);
  const collector = `http://127.0.0.1:${collectorPort}`;
  return [
    tab,
    device,
    server,
    plates,
    take(ALLOW_ONLY),
    take(WHO_OPENS),
    relay,
    snapshot,
    { id: 'four-at-once', type: 'inject', z: TAB, x: 100, y: 400, name: '', props: [{ p: 'payload' }], repeat: '', crontab: '', once: false, onceDelay: 0.1, topic: '', payload: '', payloadType: 'date', wires: [['fan-out']] },
    { id: 'fan-out', type: 'function', z: TAB, x: 300, y: 400, name: 'four snapshots', func: 'for (let i = 0; i < 4; i++) node.send({ payload: i });\nreturn null;', outputs: 1, timeout: 0, noerr: 0, initialize: '', finalize: '', libs: [], wires: [[SNAPSHOT]] },
    postTo('post-relay', `${collector}/relay`),
    { id: 'errors', type: 'catch', z: TAB, x: 100, y: 500, name: '', scope: null, uncaught: false, wires: [['error-text']] },
    { id: 'error-text', type: 'function', z: TAB, x: 300, y: 500, name: '', func: 'return { payload: { code: msg.error.code, message: msg.error.message, source: msg.error.source && msg.error.source.id } };', outputs: 1, timeout: 0, noerr: 0, initialize: '', finalize: '', libs: [], wires: [['post-error']] },
    postTo('post-error', `${collector}/error`),
  ];
}

describe('gate console in a real Node-RED runtime: a dripping camera does not starve the gate', function () {
  this.timeout(120_000);
  let runtime: ChildRuntime;
  let camera: DrippingDevice;
  let collector: Collector;
  let poster: Simulator;

  before(async function () {
    camera = new DrippingDevice();
    collector = new Collector();
    poster = await startSimulator();
    runtime = new ChildRuntime();
    await runtime.start();
  });

  after(async function () {
    await runtime?.stop();
    await poster?.close();
    await collector?.close();
    await camera?.close();
  });

  it('four dripping snapshots in flight, then an allow-listed plate: the pulse reaches the camera within 1 s; every snapshot ends ETIMEOUT by its deadline', async function () {
    const eventPort = await freePort();
    await runtime.deploy(gateFlow(await camera.listen(), eventPort, await collector.listen()));
    // The flow runs once its event server answers (whatever it makes of a post that holds no plate).
    for (let tries = 0; ; tries++) {
      const up = await fetch(`http://127.0.0.1:${eventPort}/`, { method: 'POST', body: '' }).then(() => true, () => false);
      if (up) break;
      assert.ok(tries < 200, `the event server never answered:\n${runtime.output.slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const fire = await fetch(`${runtime.adminUrl}/inject/four-at-once`, { method: 'POST' });
    assert.equal(fire.status, 200, 'the inject fired');
    await waitFor('four dripping snapshots', () => camera.dripping === 4);

    const posted = Date.now();
    const results = await poster.postEvent({ url: `http://127.0.0.1:${eventPort}/`, kind: 'plate', format: 'ipc', plate: 'AB123CD', listType: 'whiteList' });
    assert.deepEqual(
      results.map((r) => r.status),
      [200],
    );
    await waitFor('the relay pulse at the camera', () => camera.reached(OUTPUT_PATH).length > 0, 10_000);
    const pulse = camera.reached(OUTPUT_PATH)[0]!;
    assert.match(decodeURIComponent(pulse.query), /^action=1:\/1000\\$/, 'the example\'s 1 s pulse on output 1');
    assert.ok(pulse.time - posted < 1000, `the pulse reached the camera ${pulse.time - posted} ms after the plate was posted`);
    assert.equal(camera.dripping, 4, 'the snapshots were still dripping: the relay did not wait for them');
    await waitFor('the relay node to report the pulse', () => collector.relays.length === 1, 5000);
    assert.equal(collector.errors.filter((e) => e.body.source === RELAY).length, 0, 'the relay reported no error');

    // Every snapshot ends ETIMEOUT within its deadline (the device timeout: snapshots send nothing).
    const deadline = allowance(DEVICE_TIMEOUT, 0);
    await waitFor('four snapshot errors', () => collector.errors.filter((e) => e.body.source === SNAPSHOT).length === 4, deadline + 10_000);
    const snapshotErrors = collector.errors.filter((e) => e.body.source === SNAPSHOT);
    assert.deepEqual(
      snapshotErrors.map((e) => e.body.code),
      ['ETIMEOUT', 'ETIMEOUT', 'ETIMEOUT', 'ETIMEOUT'],
      JSON.stringify(snapshotErrors),
    );
    await waitFor('every dripping answer to be released', () => camera.dripping === 0, 5000);
    for (const drip of camera.drips) {
      const held = (drip.closed as number) - drip.arrived;
      // Generous for a loaded machine; without a deadline these never end.
      assert.ok(held <= deadline + 1500, `a snapshot was held ${held} ms (deadline ${deadline} ms)`);
    }
    assert.ok(runtime.alive, runtime.output.slice(-2000));
    assert.doesNotMatch(runtime.output, /Uncaught Exception|Unhandled rejection/i, runtime.output.slice(-4000));
  });
});
