/**
 * "Search network" as users run it: the WS-Discovery probe to 239.255.255.250:3702 from the
 * system's default interface (no interface chosen, no targets), answered by a simulator joined to
 * the group on 3702; through the library with its defaults, and through the device dialog's
 * endpoint with the runtime's default settings (no `ipcamDiscovery`).
 *
 * The probe goes out on the default interface's LAN, as a user's search does, so these tests run
 * only with IPCAM_TEST_MULTICAST=1 (`.ci/run` sets it). Then nothing found is a failure, never a
 * skip, and UDP 3702 must be free: another run on the same machine, or a WS-Discovery service
 * (wsdd), fails them with a message saying so.
 */
import { strict as assert } from 'node:assert';
import { createSocket } from 'node:dgram';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import type { FoundDevice } from '../nodes/discovery-search';
import { discoverDevices } from '../lib/discovery/probe';
import { WSD_MULTICAST_ADDRESS, WSD_PORT } from '../lib/discovery/wsd';
import { startSimulator, type Simulator } from '../lib/simulator';
import { SIM_PASSWORD } from './helpers';
import { DEVICE, deviceDef, helper, isRecord } from './node-helper';

const settingsOf = helper as unknown as { settings(s: Record<string, unknown>): void };
/** Ours among whatever else answers on the LAN. */
const NAME = `Multicast test ${process.pid}`;

/** Fails unless this process can have UDP 3702 to itself (no other socket bound to it). */
async function portFree(port: number): Promise<void> {
  const socket = createSocket({ type: 'udp4', reuseAddr: false });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ port, address: '0.0.0.0', exclusive: true }, () => resolve());
    });
  } catch (err) {
    throw new Error(`UDP port ${port} is taken on this machine (${(err as NodeJS.ErrnoException).code ?? String(err)}): another test run, or a WS-Discovery service such as wsdd, holds it; the multicast search test needs it to itself`, { cause: err });
  } finally {
    await new Promise<void>((resolve) => {
      try {
        socket.close(() => resolve());
      } catch {
        resolve();
      }
    });
  }
}

/** The local address a probe to the group leaves from (the default interface's), as the kernel routes it. */
async function multicastSource(): Promise<string> {
  const socket = createSocket('udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(WSD_PORT, WSD_MULTICAST_ADDRESS, () => resolve());
    });
    return socket.address().address;
  } catch (err) {
    throw new Error(`this machine has no route for multicast to ${WSD_MULTICAST_ADDRESS} (${(err as NodeJS.ErrnoException).code ?? String(err)}): the search the nodes run by default cannot work here`, { cause: err });
  } finally {
    socket.close();
  }
}

describe('Search network by multicast, default port and interface (IPCAM_TEST_MULTICAST=1)', function () {
  this.timeout(30_000);
  let sim: Simulator | undefined;
  let lan = '';
  /** Whether the Node-RED test server was started (the dialog's test): skipped, nothing was. */
  let serving = false;

  before(async function () {
    if (process.env['IPCAM_TEST_MULTICAST'] !== '1') return this.skip();
    await portFree(WSD_PORT);
    lan = await multicastSource();
    // The web interface on the address the answer comes from, so that identifying it works as on a LAN.
    sim = await startSimulator({ host: lan, password: SIM_PASSWORD, discoveryMulticast: true });
    sim.state.device.deviceName = NAME;
    assert.equal(sim.discoveryMulticast, true, `the simulator could not join ${WSD_MULTICAST_ADDRESS} on UDP ${WSD_PORT}`);
    assert.equal(sim.discoveryPort, WSD_PORT);
  });

  after(async function () {
    settingsOf.settings({});
    if (serving) {
      await helper.unload();
      await helper.stopServer();
    }
    await sim?.close();
  });

  /** Our simulator's one answer among whatever else answers on the LAN. */
  function ours<T extends { name?: string | undefined; address: string; port: number }>(devices: readonly T[]): T {
    const found = devices.filter((d) => d.name === NAME);
    assert.equal(found.length, 1, `the multicast probe found ${found.length} answers of our simulator; all answers: ${JSON.stringify(devices.map((d) => `${d.name ?? '?'} ${d.address}:${d.port}`))}`);
    return found[0] as T;
  }

  it('the library with its defaults (multicast, no interface, no targets) finds the simulator', async function () {
    const { devices } = await discoverDevices({ durationMs: 2000 });
    const found = ours(devices);
    assert.equal(found.address, lan);
    assert.equal(found.port, sim?.port);
    assert.equal(found.hardware, 'SIM-IPC-2MP');
    assert.deepEqual(found.xaddrs, [`http://${lan}:${sim?.port}/onvif/device_service`]);
    assert.ok(sim && sim.discoveryAnswered > 0);
  });

  it("the device dialog's Search network, with the runtime's default settings, lists it deployed and identified", async function () {
    assert.ok(sim);
    settingsOf.settings({});
    await helper.startServer();
    serving = true;
    await helper.load([deviceNode], [deviceDef(sim, { host: lan })], { [DEVICE]: { username: 'admin', password: SIM_PASSWORD } });
    sim.resetRequests();
    const res = await helper.request().post('/ipcam-device/discover').set('content-type', 'application/json').send({ id: DEVICE, username: 'admin', password: '__PWRD__' });
    assert.equal(res.status, 200, res.text);
    assert.ok(isRecord(res.body) && res.body['ok'] === true, res.text);
    const found = ours(res.body['devices'] as FoundDevice[]);
    assert.equal(found.port, sim.port);
    assert.equal(found.deployed, true);
    // Identified with the deployed device's own credentials (Digest), as the dialog does.
    assert.equal(found.model, 'SIM-IPC-2MP');
    assert.equal(found.error, undefined);
    assert.ok(sim.state.requests.length > 0 && sim.state.requests.every((r) => r.auth !== 'basic'));
  });
});
