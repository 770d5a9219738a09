/**
 * ipcam-discover in Node-RED, and the device dialog's search endpoint: three simulators
 * answering on loopback (the runtime's ipcamDiscovery.targets: no multicast, nothing leaves the
 * machine), found, marked deployed, identified with the credentials each may get, no secret out.
 */
import { strict as assert } from 'node:assert';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import discoverNode from '../nodes/ipcam-discover/ipcam-discover';
import type { FoundDevice } from '../nodes/discovery-search';
import { startSimulator, type Simulator } from '../lib/simulator';
import { expectQuiet, SIM_PASSWORD, waitFor } from './helpers';
import { actionFlow, assertNoSecret, DEVICE, deviceDef, FlowWatch, getNode, helper, isRecord, logTexts, statusesSinceLoad, type Credentials, type FlowNode } from './node-helper';

const OTHER_PASSWORD = 'an0ther:secret';
const settingsOf = helper as unknown as { settings(s: Record<string, unknown>): void };

describe('ipcam-discover and Search network', function () {
  this.timeout(30_000);
  let sims: Simulator[] = [];

  before(async function () {
    // Sims 0 and 1 share the password typed for the search; sim 2 has another.
    for (const password of [SIM_PASSWORD, SIM_PASSWORD, OTHER_PASSWORD]) sims.push(await startSimulator({ password }));
    sims.forEach((sim, i) => (sim.state.device.deviceName = `cam ${i}`));
    settingsOf.settings({ ipcamDiscovery: { targets: sims.map((s) => `127.0.0.1:${s.discoveryPort}`), multicast: false } });
    await helper.startServer();
  });

  after(async function () {
    settingsOf.settings({});
    await helper.unload();
    await helper.stopServer();
    await Promise.all(sims.map((s) => s.close()));
    sims = [];
  });

  afterEach(async function () {
    await helper.unload();
    for (const sim of sims) sim.resetRequests();
  });

  /** Sim 0 is the deployed ipcam-device, with its stored password. */
  async function load(discover: Record<string, unknown>, credentials: Record<string, string> = {}): Promise<FlowWatch> {
    const flow: FlowNode[] = actionFlow({ id: 'disc', type: 'ipcam-discover', name: '', duration: '1', interface: '', targets: '', identify: false, ...discover }, [deviceDef(sims[0] as Simulator)]);
    const creds: Credentials = { [DEVICE]: { username: 'admin', password: SIM_PASSWORD }, disc: credentials };
    await helper.load([deviceNode, discoverNode], flow, creds);
    return new FlowWatch(['disc']);
  }

  const byPort = (list: FoundDevice[], sim: Simulator | undefined): FoundDevice => {
    const found = list.find((d) => d.port === sim?.port);
    assert.ok(found, `simulator ${sim?.port} is in the list`);
    return found;
  };

  it('sends the list: three devices with their scopes, the deployed one marked; no request without Identify', async function () {
    const watch = await load({});
    const msg = await watch.expectOutput('disc', { payload: 'go' });
    const list = msg.payload as FoundDevice[];
    assert.equal(list.length, 3);
    for (const [i, sim] of sims.entries()) {
      const d = byPort(list, sim);
      assert.equal(d.name, `cam ${i}`);
      assert.equal(d.hardware, 'SIM-IPC-2MP');
      assert.equal(d.deployed, i === 0);
      assert.equal(d.model, undefined);
    }
    for (const sim of sims) assert.equal(sim.state.requests.length, 0, 'no HTTP request without Identify');
    assert.deepEqual(watch.lastStatus('disc'), { fill: 'green', shape: 'dot', text: '3 found' });
  });

  it('Identify: the deployed device with its own credentials, the others with the node\'s (Digest), a wrong one EAUTH; no secret out', async function () {
    const watch = await load({ identify: true }, { username: 'admin', password: SIM_PASSWORD });
    const list = (await watch.expectOutput('disc', { payload: '' })).payload as FoundDevice[];
    for (const i of [0, 1]) {
      const d = byPort(list, sims[i]);
      assert.equal(d.interface, 'xml');
      assert.equal(d.model, 'SIM-IPC-2MP');
      assert.equal(d.firmware, '5.1.2.0-sim');
      assert.equal(d.mac, '58:5b:69:00:00:01');
    }
    const refused = byPort(list, sims[2]);
    assert.equal(refused.error?.code, 'EAUTH');
    assert.equal(refused.model, undefined);
    for (const sim of sims.slice(1)) for (const r of sim.state.requests) assert.notEqual(r.auth, 'basic');
    assertNoSecret(watch.texts(), SIM_PASSWORD);
    assertNoSecret(watch.texts(), OTHER_PASSWORD);
  });

  it('Identify without credentials asks only the deployed device: no request reaches the others', async function () {
    const watch = await load({ identify: true });
    const list = (await watch.expectOutput('disc', {})).payload as FoundDevice[];
    assert.equal(byPort(list, sims[0]).model, 'SIM-IPC-2MP');
    assert.equal(byPort(list, sims[1]).model, undefined);
    assert.equal(sims[1]?.state.requests.length, 0);
    assert.equal(sims[2]?.state.requests.length, 0);
  });

  it('node targets are probed too; bad settings are EINPUT with nothing sent', async function () {
    const extra = await startSimulator();
    try {
      const watch = await load({ targets: `127.0.0.1:${extra.discoveryPort}` });
      const list = (await watch.expectOutput('disc', {})).payload as FoundDevice[];
      assert.equal(list.length, 4);
      assert.ok(list.some((d) => d.port === extra.port));
    } finally {
      await extra.close();
    }
    for (const bad of [{ interface: '192.0.2.77' }, { targets: 'camera.local' }, { duration: '31' }, { duration: '0' }]) {
      await helper.unload();
      const watch = await load(bad);
      const caught = await watch.expectCaught('disc', {});
      assert.ok(isRecord(caught['error']));
      assert.equal(caught['error']['code'], 'EINPUT', JSON.stringify(bad));
    }
  });

  it('a setting out of its rules is a red status at deploy naming it and the nearest valid value; every message then gets that EINPUT, no probe sent', async function () {
    const answered = (): number => sims.reduce((n, sim) => n + sim.discoveryAnswered, 0);
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ duration: '31' }, 'EINPUT: duration 30?', /Duration must be .*31.* \(nearest valid value: "30"\); nothing is sent until the setting duration "31" is changed and deployed/],
      [{ duration: '0' }, 'EINPUT: duration 1?', /\(nearest valid value: "1"\); nothing is sent until the setting duration "0"/],
      [{ identify: 'ture' }, 'EINPUT: identify true?', /Identify must be true or false, got "ture" \(nearest valid value: "true"\); nothing is sent until the setting identify "ture"/],
      [{ interface: '192.168.1' }, 'EINPUT: Interface must be an IP\u2026', /Interface must be an IPv4 address of this machine, e.g. 192.168.1.10, got "192.168.1"; nothing is sent until the setting interface "192.168.1"/],
      [{ targets: 'camera.local' }, 'EINPUT: Targets must be IPv4 ad\u2026', /Targets must be IPv4 addresses .*; nothing is sent until the setting targets "camera.local"/],
      [{ targets: '127.0.0.1:99999' }, 'EINPUT: Targets port must be a\u2026', /Targets port must be .*; nothing is sent until the setting targets "127.0.0.1:99999"/],
    ];
    for (const [bad, text, message] of cases) {
      await helper.unload();
      const quiet = expectQuiet(answered, `a probe answered (${JSON.stringify(bad)})`);
      const watch = await load(bad);
      const red = { fill: 'red', shape: 'ring', text };
      assert.deepEqual(statusesSinceLoad('disc'), [red], `the status at deploy, before any message (${JSON.stringify(bad)})`);
      for (const payload of [undefined, 'go']) {
        const caught = await watch.expectCaught('disc', { payload });
        assert.ok(isRecord(caught['error']));
        assert.equal(caught['error']['code'], 'EINPUT');
        assert.match(String(caught['error']['message']), message);
        assert.deepEqual(watch.lastStatus('disc'), red);
      }
      assert.equal(watch.messages.filter((m) => m['error'] === undefined).length, 0, 'a list was sent');
      await new Promise((r) => setTimeout(r, 100));
      quiet.end();
    }
  });

  it('an Interface this machine does not have is refused by each search, not at deploy (the address may come after a deploy at boot); no probe sent', async function () {
    const answered = (): number => sims.reduce((n, sim) => n + sim.discoveryAnswered, 0);
    const quiet = expectQuiet(answered, 'a probe answered');
    const watch = await load({ interface: '192.0.2.77' });
    assert.deepEqual(statusesSinceLoad('disc'), [], 'a red status at deploy');
    const caught = await watch.expectCaught('disc', {});
    assert.ok(isRecord(caught['error']));
    assert.equal(caught['error']['code'], 'EINPUT');
    assert.match(String(caught['error']['message']), /interface "192.0.2.77" is not an IPv4 address of this machine \(it has /);
    await new Promise((r) => setTimeout(r, 100));
    quiet.end();
  });

  it('settings absent from an older flow take their defaults: the node searches', async function () {
    const flow: FlowNode[] = actionFlow({ id: 'disc', type: 'ipcam-discover', name: '' }, [deviceDef(sims[0] as Simulator)]);
    await helper.load([deviceNode, discoverNode], flow, { [DEVICE]: { username: 'admin', password: SIM_PASSWORD } });
    const watch = new FlowWatch(['disc']);
    assert.deepEqual(statusesSinceLoad('disc'), []);
    const list = (await watch.expectOutput('disc', {})).payload as FoundDevice[];
    assert.equal(list.length, 3);
    for (const sim of sims) assert.equal(sim.state.requests.length, 0, 'Identify is off by default');
  });

  it('a second input while searching is EINPUT; closing the node ends its search and releases its socket', async function () {
    const udp = (): number => process.getActiveResourcesInfo().filter((r) => r === 'UDPWrap').length;
    const before = udp();
    const watch = await load({ duration: '20' });
    getNode('disc').receive({});
    const second = await watch.expectCaught('disc', {});
    expectQuiet(watch.messages, 'a message after the refusal (the search of a closed node)');
    assert.match(String(isRecord(second['error']) && second['error']['message']), /already running/);
    assert.equal(udp(), before + 1);
    const started = Date.now();
    await helper.unload();
    await waitFor('the search socket released', () => udp() === before, 2000);
    assert.ok(Date.now() - started < 2000);
    // The search ended without a message (the node was closed): only the refusal came out.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(watch.messages.length, 1);
  });

  describe('POST /ipcam-device/discover', function () {
    async function post(body: object): Promise<{ status: number; body: unknown; text: string }> {
      return helper.request().post('/ipcam-device/discover').set('content-type', 'application/json').send(body);
    }

    it('lists the devices; typed credentials identify them (Digest) and are never returned', async function () {
      await load({});
      const res = await post({ id: DEVICE, username: 'admin', password: SIM_PASSWORD });
      assert.equal(res.status, 200, res.text);
      assert.ok(isRecord(res.body) && res.body['ok'] === true);
      const list = res.body['devices'] as FoundDevice[];
      assert.equal(list.length, 3);
      assert.equal(byPort(list, sims[0]).deployed, true);
      assert.equal(byPort(list, sims[1]).model, 'SIM-IPC-2MP');
      assert.equal(byPort(list, sims[2]).error?.code, 'EAUTH');
      assertNoSecret([res.text, ...logTexts()], SIM_PASSWORD);
    });

    it('with the stored password (placeholder): only the deployed device is asked, with its own credentials', async function () {
      await load({});
      const res = await post({ id: DEVICE, username: 'admin', password: '__PWRD__' });
      const list = (res.body as { devices: FoundDevice[] }).devices;
      assert.equal(byPort(list, sims[0]).model, 'SIM-IPC-2MP');
      assert.equal(byPort(list, sims[1]).model, undefined);
      assert.equal(sims[1]?.state.requests.length, 0);
      assert.equal(sims[2]?.state.requests.length, 0);
      assertNoSecret([res.text], SIM_PASSWORD);
    });

    it('one search at a time: a second request while one runs is 429', async function () {
      await load({});
      const first = post({});
      await new Promise((r) => setTimeout(r, 200));
      const second = await post({});
      assert.equal(second.status, 429);
      assert.equal((await first).status, 200);
    });
  });
});
