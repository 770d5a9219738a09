/**
 * Issue 31: `ipcam-ha` in a real Node-RED (a child process, through its admin API), over the core
 * `mqtt-broker` node to a real broker (Debian's Mosquitto, started here on a free loopback port),
 * against the simulator. A subscriber of this test acts as Home Assistant: it reads the discovery
 * config, follows its topics and sends what Home Assistant sends; another acts as a stranger on
 * the broker. Every message the broker carries is kept and scanned for the device's address,
 * user name and password. The suite runs on the Node-RED installed (4.1 here, 5.0 in CI's node22
 * and node24 legs).
 */
import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import mqtt, { type MqttClient } from 'mqtt';
import { startSimulator, type Simulator } from '../lib/simulator';
import { startDemo } from '../scripts/start';
import { expectQuiet, PROJECT_ROOT, waitFor } from './helpers';
import { Mosquitto, needBroker } from './mosquitto';
import { ChildRuntime, freePort, type FlowNode } from './runtime-child';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const USER = 'ha-user-q7z';
const PASSWORD = 'Pw-ha-5k2x9-secret';
const TAB = 'ha-tab';
const DEVICE = 'ha.device:1';
const SERVER = 'ha-server';
const BROKER = 'ha-broker';
const HA = 'ha-node';
/** The device node's id with `.` and `:` as `_` (DESIGN). */
const OBJECT_ID = 'ipcam_ha_device_1';
const CONFIG = `homeassistant/device/${OBJECT_ID}/config`;
const ROOT = `ipcam/${OBJECT_ID}`;
const PACKAGE = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { name: string; version: string });

interface Seen {
  topic: string;
  payload: Buffer;
  retain: boolean;
  at: number;
}

interface HaSettings {
  relays?: string;
  inputs?: string;
  plates?: string;
  snapshot?: string;
  server?: boolean;
  /** The ipcam-ha node's name: the device's name in Home Assistant (blank: the device node's). */
  name?: string;
}

/** A client of the broker that keeps every message it sees (bounded by the test's own traffic). */
class Listener {
  readonly seen: Seen[] = [];
  private constructor(readonly client: MqttClient) {
    client.on('message', (topic, payload, packet) => {
      if (this.seen.length < 200_000) this.seen.push({ topic, payload, retain: packet.retain, at: Date.now() });
    });
  }

  static async connect(url: string, topics: string[]): Promise<Listener> {
    const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
    const listener = new Listener(client);
    await client.subscribeAsync(topics, { qos: 1 });
    return listener;
  }

  on(topic: string, since = 0): Seen[] {
    return this.seen.filter((m) => m.topic === topic && m.at >= since);
  }

  last(topic: string): Seen | undefined {
    const all = this.on(topic);
    return all[all.length - 1];
  }

  async next(what: string, topic: string, since: number, matches: (m: Seen) => boolean = () => true, limitMs = 15_000): Promise<Seen> {
    let found: Seen | undefined;
    await waitFor(what, () => (found = this.on(topic, since).find(matches)) !== undefined, limitMs);
    return found as Seen;
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }
}

function text(m: Seen | undefined): string | undefined {
  return m?.payload.toString('utf8');
}

describe('ipcam-ha: a camera as a Home Assistant device, through the core mqtt-broker node to Mosquitto', function () {
  this.timeout(180_000);
  let broker: Mosquitto;
  let sim: Simulator;
  let simPort: number;
  let eventPort: number;
  let runtime: ChildRuntime;
  let ha: Listener;

  function flow(settings: HaSettings, withHa = true): FlowNode[] {
    const nodes: FlowNode[] = [
      { id: TAB, type: 'tab', label: 'ha' },
      // A heartbeat of 1 s: the camera's availability follows it within the health bound.
      { id: DEVICE, type: 'ipcam-device', name: 'Gate cam', host: '127.0.0.1', port: String(simPort), protocol: 'http', auth: 'auto', tlsVerify: true, timeout: '2000', heartbeat: '1', credentials: { username: USER, password: PASSWORD } },
      { id: SERVER, type: 'ipcam-event-server', name: '', port: String(eventPort), bind: '127.0.0.1', path: '/', maxBody: '', allow: '' },
      { id: BROKER, type: 'mqtt-broker', name: 'test broker', broker: '127.0.0.1', port: String(broker.port), clientid: '', autoConnect: true, usetls: false, protocolVersion: '4', keepalive: '60', cleansession: true, birthTopic: '', closeTopic: '', willTopic: '' },
    ];
    if (withHa) {
      nodes.push({ id: HA, type: 'ipcam-ha', z: TAB, x: 200, y: 100, name: settings.name ?? '', broker: BROKER, device: DEVICE, server: settings.server === false ? '' : SERVER, prefix: '', base: '', relays: settings.relays ?? '', pulse: '300', inputs: settings.inputs ?? '', snapshot: settings.snapshot ?? 'none', plates: settings.plates ?? '', wires: [] });
    }
    // A node of the tab besides, so that removing the ipcam-ha node leaves the broker in use.
    nodes.push({ id: 'ha-keep', type: 'mqtt in', z: TAB, x: 200, y: 200, name: '', topic: 'unrelated/topic', qos: '0', datatype: 'auto-detect', broker: BROKER, nl: false, rap: true, rh: 0, inputs: 0, wires: [[]] });
    return nodes;
  }

  const identified = (c: Record<string, unknown>): boolean => 'mdl' in (c['dev'] as object);

  /** The first config since `since` that `matches`. */
  async function config(since: number, matches: (c: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    const parse = (m: Seen): Record<string, unknown> => JSON.parse(m.payload.toString('utf8')) as Record<string, unknown>;
    const m = await ha.next('a discovery config', CONFIG, since, (m) => m.payload.length > 0 && matches(parse(m)));
    return parse(m);
  }

  async function publish(topic: string, payload: string | Buffer, retain = false): Promise<void> {
    await ha.client.publishAsync(topic, payload, { qos: 1, retain });
  }

  /** Waits until the simulator has received a request matching `matches`, after `since` requests. */
  async function request(what: string, matches: (path: string, query: string) => boolean): Promise<void> {
    await waitFor(what, () => sim.state.requests.some((r) => matches(r.path, r.rawQuery)));
  }

  const relayActions = (): string[] => sim.state.requests.filter((r) => r.path === '/cgi-bin/admin/output' && r.rawQuery.startsWith('action=')).map((r) => decodeURIComponent(r.rawQuery.slice('action='.length)));

  before(async function () {
    needBroker(this, 'Home Assistant');
    broker = await Mosquitto.start();
    sim = await startSimulator({ username: USER, password: PASSWORD });
    simPort = sim.port;
    eventPort = await freePort();
    ha = await Listener.connect(broker.url, ['#']);
    runtime = new ChildRuntime({ watchLoopDelay: true });
    await runtime.start();
  });

  after(async function () {
    await runtime?.stop();
    await ha?.close();
    await sim?.close();
    await broker?.stop();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(runtime?.output.slice(-4000));
  });

  it('publishes one device config with dev, o, availability and each entity of the settings, in Home Assistant\'s abbreviations', async function () {
    const since = Date.now();
    await runtime.deploy(flow({ relays: '1,2', inputs: '1', plates: 'Residents', snapshot: 'plate' }));
    // The device is identified once at start: the config is published again with its model and firmware.
    const c = await config(since, identified);
    const dev = c['dev'] as Record<string, unknown>;
    assert.deepEqual(Object.keys(dev), ['ids', 'name', 'mdl', 'sw']);
    assert.deepEqual(dev['ids'], [OBJECT_ID]);
    assert.equal(dev['name'], 'Gate cam');
    assert.equal(typeof dev['mdl'], 'string');
    assert.deepEqual(c['o'], { name: PACKAGE.name, sw: PACKAGE.version });
    assert.deepEqual(c['avty'], [{ t: 'ipcam/bridge' }, { t: `${ROOT}/availability` }]);
    assert.equal(c['avty_mode'], 'all');
    const cmps = c['cmps'] as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(cmps), ['plate', 'last_plate', 'picture', 'relay_1', 'relay_2', 'relay_1_pulse', 'relay_2_pulse', 'input_1', 'plate_add', 'plate_delete']);
    for (const [key, component] of Object.entries(cmps)) assert.equal(component['uniq_id'], `${OBJECT_ID}_${key}`);
    assert.deepEqual(cmps['plate'], { p: 'event', uniq_id: `${OBJECT_ID}_plate`, name: 'Plate', stat_t: `${ROOT}/plate`, evt_typ: ['whiteList', 'blackList', 'temporaryList', 'strangerList', 'unknown'], ic: 'mdi:car' });
    assert.equal(cmps['last_plate']?.['p'], 'sensor');
    assert.deepEqual(cmps['picture'], { p: 'image', uniq_id: `${OBJECT_ID}_picture`, name: 'Picture', img_t: `${ROOT}/picture`, cont_type: 'image/jpeg' });
    assert.deepEqual(cmps['relay_1'], { p: 'switch', uniq_id: `${OBJECT_ID}_relay_1`, name: 'Relay 1', cmd_t: `${ROOT}/relay_1/set`, stat_t: `${ROOT}/relay_1`, pl_on: 'ON', pl_off: 'OFF' });
    assert.deepEqual(cmps['relay_1_pulse'], { p: 'button', uniq_id: `${OBJECT_ID}_relay_1_pulse`, name: 'Pulse relay 1', cmd_t: `${ROOT}/relay_1_pulse/set`, pl_prs: 'PRESS' });
    assert.deepEqual(cmps['input_1'], { p: 'binary_sensor', uniq_id: `${OBJECT_ID}_input_1`, name: 'Input 1', stat_t: `${ROOT}/input_1`, pl_on: 'ON', pl_off: 'OFF' });
    assert.equal(cmps['plate_add']?.['p'], 'text');
    assert.equal(cmps['plate_add']?.['cmd_t'], `${ROOT}/plate_add/set`);
    assert.equal(cmps['plate_delete']?.['cmd_t'], `${ROOT}/plate_delete/set`);
    assert.equal(ha.last(CONFIG)?.retain, false, 'a live config comes to a subscriber without the retain flag');

    // Following the config's topics as Home Assistant does: availability and states, retained at the broker.
    const follower = await Listener.connect(broker.url, [`${ROOT}/#`, 'ipcam/bridge']);
    try {
      for (const topic of ['ipcam/bridge', `${ROOT}/availability`]) assert.equal(text(await follower.next(topic, topic, 0)), 'online');
      for (const topic of [`${ROOT}/relay_1`, `${ROOT}/relay_2`, `${ROOT}/input_1`]) {
        const m = await follower.next(topic, topic, 0);
        assert.equal(text(m), 'OFF', topic);
        assert.equal(m.retain, true, `${topic} is retained`);
      }
    } finally {
      await follower.close();
    }
  });

  it('a plate post is one event, the same plate again a second one (never retained); the last plate and a picture follow', async function () {
    const since = Date.now();
    await sim.postEvent({ url: `http://127.0.0.1:${eventPort}/`, plate: 'HA123', listType: 'whiteList', direction: 'approach' });
    const first = await ha.next('the first event', `${ROOT}/plate`, since);
    await sim.postEvent({ url: `http://127.0.0.1:${eventPort}/`, plate: 'HA123', listType: 'whiteList', direction: 'approach' });
    await waitFor('the second event', () => ha.on(`${ROOT}/plate`, since).length === 2);
    const event = JSON.parse(text(first) ?? '') as Record<string, unknown>;
    assert.equal(event['event_type'], 'whiteList');
    assert.equal(event['plate'], 'HA123');
    assert.equal(event['direction'], 'approach');
    assert.equal(typeof event['time'], 'string');
    assert.ok(ha.on(`${ROOT}/plate`, since).every((m) => !m.retain));
    assert.equal(text(await ha.next('the last plate', `${ROOT}/last_plate`, since)), 'HA123');
    const picture = await ha.next('a picture', `${ROOT}/picture`, since);
    assert.equal(picture.payload.subarray(0, 2).toString('hex'), 'ffd8', 'the picture is the JPEG bytes');
    // A fresh subscriber gets the last plate (retained) and no event (never retained).
    const late = await Listener.connect(broker.url, [`${ROOT}/+`]);
    await late.next('the retained last plate', `${ROOT}/last_plate`, 0);
    expectQuiet(late.seen, 'an event was retained', (m) => m.topic === `${ROOT}/plate`);
    await sleep(200);
    assert.deepEqual(late.on(`${ROOT}/plate`), []);
    await late.close();
  });

  it('ON, OFF and PRESS reach the relay through the relay operations; the state topic says what the device reports', async function () {
    sim.resetRequests();
    let since = Date.now();
    await publish(`${ROOT}/relay_1/set`, 'ON');
    await ha.next('relay 1 ON', `${ROOT}/relay_1`, since, (m) => text(m) === 'ON');
    assert.equal(sim.state.io.outputs.get(1), true);
    since = Date.now();
    await publish(`${ROOT}/relay_1/set`, 'OFF');
    await ha.next('relay 1 OFF', `${ROOT}/relay_1`, since, (m) => text(m) === 'OFF');
    assert.equal(sim.state.io.outputs.get(1), false);
    await publish(`${ROOT}/relay_2_pulse/set`, 'PRESS');
    await waitFor('the pulse on relay 2', () => sim.state.io.relayLog.filter((c) => c.port === 2).length >= 2);
    assert.deepEqual(relayActions(), ['1:/', '1:\\', '2:/300\\']);
  });

  it('a refused relay command is an error and never an ON', async function () {
    sim.setAnswer({ refuseRelay: true });
    try {
      const since = Date.now();
      sim.resetRequests();
      await publish(`${ROOT}/relay_1/set`, 'ON');
      await request('the refused action', (path, query) => path === '/cgi-bin/admin/output' && query.startsWith('action='));
      // The state is read from the device after the refusal.
      await request('the state read after it', (path, query) => path === '/cgi-bin/admin/output' && query.startsWith('check='));
      await waitFor('the error in the log', () => /Relay 1 from Home Assistant: EDEVICE/.test(runtime.output));
      expectQuiet(ha.seen, 'a refused relay command told as ON', (m) => m.topic === `${ROOT}/relay_1` && text(m) === 'ON');
      await sleep(300);
      assert.deepEqual(ha.on(`${ROOT}/relay_1`, since).filter((m) => text(m) === 'ON'), []);
      assert.equal(text(ha.last(`${ROOT}/relay_1`)), 'OFF');
      assert.equal(sim.state.io.outputs.get(1), false);
    } finally {
      sim.setAnswer({ refuseRelay: false });
    }
  });

  it('a relay not in Relays, or a payload other than ON / OFF / PRESS, sends nothing to the device', async function () {
    sim.resetRequests();
    await publish(`${ROOT}/relay_3/set`, 'ON');
    await publish(`${ROOT}/relay_3_pulse/set`, 'PRESS');
    await publish(`${ROOT}/relay_1/set`, 'on');
    await publish(`${ROOT}/relay_1/set`, 'true');
    await publish(`${ROOT}/relay_1/set`, ' ON');
    await publish(`${ROOT}/relay_1_pulse/set`, 'ON');
    await publish(`${ROOT}/relay_01/set`, 'ON');
    await publish(`${ROOT}/relay_1/set`, '{"state":"ON"}');
    await publish(`${ROOT}/plate_add/set`, 'A\nB');
    // One allowed command after them: once it has reached the device, the ones before it were read.
    await publish(`${ROOT}/relay_2/set`, 'OFF');
    await waitFor('the allowed command', () => relayActions().length > 0);
    expectQuiet(sim, 'an ignored command reached the device', (r) => r.path === '/AddLicensePlates' || (r.path === '/cgi-bin/admin/output' && r.rawQuery.startsWith('action=')));
    await sleep(200);
    assert.deepEqual(relayActions(), ['2:\\']);
    assert.ok(!sim.state.requests.some((r) => r.path === '/AddLicensePlates'));
    await waitFor('the warning', () => /Home Assistant command ignored, nothing sent: a command for relay 3, which is not in Relays \(1,2\)/.test(runtime.output));
  });

  it('plate add and delete go through the plate rules, to the group of the settings', async function () {
    sim.resetRequests();
    await publish(`${ROOT}/plate_add/set`, 'NEW42');
    await waitFor('the plate in the device', () => sim.state.plates.all().some((p) => p.plate === 'NEW42' && p.group === 'Residents'));
    await publish(`${ROOT}/plate_delete/set`, 'NEW42');
    await waitFor('the plate gone', () => !sim.state.plates.all().some((p) => p.plate === 'NEW42'));
  });

  it('an input toggle gives ON, then OFF', async function () {
    const since = Date.now();
    sim.state.io.setInput(1, true);
    await ha.next('input 1 ON', `${ROOT}/input_1`, since, (m) => text(m) === 'ON');
    sim.state.io.setInput(1, false);
    await ha.next('input 1 OFF', `${ROOT}/input_1`, since, (m) => text(m) === 'OFF');
  });

  it('Home Assistant\'s birth makes it publish every config and state again, after a short delay', async function () {
    const since = Date.now();
    await publish('homeassistant/status', 'online');
    await config(since);
    for (const topic of ['ipcam/bridge', `${ROOT}/availability`, `${ROOT}/relay_1`, `${ROOT}/input_1`, `${ROOT}/last_plate`]) await ha.next(topic, topic, since);
    await ha.next('the last picture again', `${ROOT}/picture`, since);
  });

  it('the camera stopped reads offline within the health bound, online when it is back', async function () {
    const since = Date.now();
    await sim.close();
    await ha.next('the camera offline', `${ROOT}/availability`, since, (m) => text(m) === 'offline', 20_000);
    assert.equal(text(ha.last('ipcam/bridge')), 'online', 'the bridge stays online');
    sim = await startSimulator({ port: simPort, username: USER, password: PASSWORD });
    const back = Date.now();
    await ha.next('the camera online again', `${ROOT}/availability`, back, (m) => text(m) === 'online', 20_000);
  });

  it('a narrowed setting removes its entities as Home Assistant documents it: the component reduced to its platform', async function () {
    const since = Date.now();
    await runtime.deploy(flow({ relays: '1', inputs: '', plates: 'Residents', snapshot: 'none' }));
    // The second config of this start, once the device is identified: none of this start comes later.
    const c = await config(since, identified);
    const cmps = c['cmps'] as Record<string, Record<string, unknown>>;
    assert.deepEqual(cmps['relay_2'], { p: 'switch' });
    assert.deepEqual(cmps['relay_2_pulse'], { p: 'button' });
    assert.deepEqual(cmps['input_1'], { p: 'binary_sensor' });
    assert.deepEqual(cmps['picture'], { p: 'image' });
    assert.equal(cmps['relay_1']?.['p'], 'switch');
    assert.ok(Object.keys(cmps['relay_1'] ?? {}).length > 1);
    // Once removed, the next config leaves them out (Home Assistant's second step). The next start
    // is told by its name: the node it replaces may still say its own config again (a broker
    // reconnect, its identity completed) until the deploy has closed it.
    const again = Date.now();
    await runtime.deploy(flow({ relays: '1', inputs: '', plates: 'Residents', snapshot: 'none', name: 'Gate cam, next start' }));
    const next = (await config(again, (c) => identified(c) && (c['dev'] as { name?: unknown }).name === 'Gate cam, next start'))['cmps'] as Record<string, unknown>;
    assert.deepEqual(Object.keys(next), ['plate', 'last_plate', 'relay_1', 'relay_1_pulse', 'plate_add', 'plate_delete']);
  });

  it('the node removed publishes an empty retained config (Home Assistant removes the device) and clears its states', async function () {
    const since = Date.now();
    await runtime.deploy(flow({}, false));
    await ha.next('the empty config', CONFIG, since, (m) => m.payload.length === 0);
    const fresh = await Listener.connect(broker.url, [CONFIG, `${ROOT}/#`]);
    expectQuiet(fresh.seen, 'something of the camera is left retained');
    await sleep(500);
    assert.deepEqual(fresh.seen.map((m) => m.topic), [], 'nothing of the camera is left retained');
    await fresh.close();
  });

  describe('the broker side is hostile', function () {
    it('a retained config under our object id written by someone else is replaced; only our own component ids in it are believed', async function () {
      await publish(CONFIG, JSON.stringify({ dev: { ids: ['x'], name: 'stranger' }, o: { name: 'evil' }, cmps: { evil: { p: 'lock', cmd_t: 'x/y' }, relay_7: { p: 'lock', cmd_t: 'a' }, ['relay_1'.repeat(40)]: { p: 'switch', x: 1 } } }), true);
      const since = Date.now();
      await runtime.deploy(flow({ relays: '1', plates: 'Residents' }));
      // The stranger's own message may come to the listener after `since`: ours is the one of our origin.
      const c = await config(since, (c) => JSON.stringify(c['o']) === JSON.stringify({ name: PACKAGE.name, sw: PACKAGE.version }));
      const cmps = c['cmps'] as Record<string, unknown>;
      assert.ok(!('evil' in cmps));
      // An id of ours that the stranger wrote is removed as what its id says it is, not as what they wrote.
      assert.deepEqual(cmps['relay_7'], { p: 'switch' });
      assert.equal(Object.keys(cmps).filter((k) => k.length > 24).length, 0);
    });

    it('a 1 MB command, 10,000 commands a second, malformed birth payloads: no crash, no block over 250 ms, nothing beyond the rate limits to the device', async function () {
      sim.resetRequests();
      // Home Assistant follows what the node publishes, not the stranger's commands: this machine's
      // CPU goes to the runtime measured, not to a test client reading 10,000 messages.
      await ha.client.unsubscribeAsync('#');
      await ha.client.subscribeAsync(['homeassistant/#', 'ipcam/bridge', `${ROOT}/+`], { qos: 1 });
      // A collection now (the probe collects garbage), so that the runtime's earlier garbage is not collected during the measure.
      await runtime.probe();
      await runtime.loopDelay();
      const stranger = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
      try {
        await stranger.publishAsync(`${ROOT}/relay_1/set`, Buffer.alloc(1024 * 1024, 0x4f), { qos: 1 });
        for (const payload of [Buffer.alloc(0), Buffer.from('onlinex'), Buffer.from([0xff, 0xfe, 0x00]), Buffer.alloc(100_000, 0x61), Buffer.from('ONLINE')]) await stranger.publishAsync('homeassistant/status', payload, { qos: 0 });
        await sleep(500);
        const bigDelay = await runtime.loopDelay();
        const start = Date.now();
        // 10,000 in (nominally) one second, as a stream: bursts of 200, 20 ms apart.
        for (let i = 0; i < 10_000; i++) {
          if (i % 200 === 0 && i > 0) await sleep(20);
          const which = i % 4;
          const topic = which === 3 ? `${ROOT}/plate_add/set` : `${ROOT}/relay_${which === 2 ? 9 : 1}/set`;
          stranger.publish(topic, which === 3 ? `P${i}` : i % 2 === 0 ? 'ON' : 'OFF', { qos: 0 });
        }
        await stranger.publishAsync(`${ROOT}/relay_1/set`, 'OFF', { qos: 1 });
        const sent = Date.now() - start;
        await sleep(3000);
        const seconds = (Date.now() - start) / 1000;
        const actions = relayActions().length;
        const plates = sim.state.requests.filter((r) => r.path === '/AddLicensePlates').length;
        // The contract's bounds: 5 relay commands a second (5 at once), one plate change a second.
        assert.ok(actions <= 5 + 5 * seconds, `${actions} relay actions in ${seconds} s (sent in ${sent} ms)`);
        assert.ok(plates <= 1 + seconds, `${plates} plate changes in ${seconds} s`);
        assert.ok(actions >= 1, 'some commands got through');
        const delay = Math.max(bigDelay, await runtime.loopDelay());
        console.log(`      ${actions} relay actions and ${plates} plate changes reached the device in ${seconds.toFixed(1)} s; event loop blocked at most ${delay.toFixed(0)} ms`);
        assert.ok(delay < 250, `the event loop was blocked ${delay} ms`);
        assert.ok(runtime.alive, runtime.output.slice(-2000));
        // The warnings are few: one per kind a minute, with the count of the others.
        const warnings = runtime.output.split('\n').filter((l) => /Home Assistant command ignored/.test(l)).length;
        assert.ok(warnings < 20, `${warnings} warning lines`);
      } finally {
        await stranger.endAsync(true);
        await ha.client.unsubscribeAsync(['homeassistant/#', 'ipcam/bridge', `${ROOT}/+`]);
        await ha.client.subscribeAsync('#', { qos: 1 });
      }
    });

    it('after it all, the node still answers Home Assistant', async function () {
      await sleep(1100);
      for (const state of ['OFF', 'ON'] as const) {
        await publish(`${ROOT}/relay_1/set`, state);
        await waitFor(`relay 1 ${state}`, () => sim.state.io.outputs.get(1) === (state === 'ON') && text(ha.last(`${ROOT}/relay_1`)) === state);
      }
    });
  });

  describe('npm start with IPCAM_DEMO_MQTT', function () {
    it('points the home-assistant example\'s broker node at the broker: the simulator appears as a device', async function () {
      const since = Date.now();
      const demo = await startDemo({ uiPort: await freePort(), simPort: 0, quiet: true, mqtt: broker.url });
      try {
        await demo.ready;
        const topic = 'homeassistant/device/ipcam_ipcam-sim-device/config';
        const m = await ha.next('the example\'s config', topic, since, (m) => m.payload.length > 0, 30_000);
        const c = JSON.parse(m.payload.toString('utf8')) as { dev: { name: string }; cmps: Record<string, unknown> };
        assert.equal(c.dev.name, 'Simulator');
        assert.deepEqual(Object.keys(c.cmps), ['plate', 'last_plate', 'picture', 'relay_1', 'relay_1_pulse', 'input_1', 'plate_add', 'plate_delete']);
        await ha.next('the example\'s camera online', 'ipcam/ipcam_ipcam-sim-device/availability', since, (m) => text(m) === 'online');
      } finally {
        await demo.stop();
      }
    });
  });

  describe('at the end', function () {
    it('nothing private is ever published: no password, user name or device address in any topic or payload', function () {
      assert.ok(ha.seen.length > 50, `${ha.seen.length} messages seen`);
      const secrets = [PASSWORD, USER, '127.0.0.1', `:${simPort}`];
      for (const m of ha.seen) {
        if (m.topic === CONFIG && m.payload.toString('utf8').includes('stranger')) continue;
        for (const secret of secrets) {
          assert.ok(!m.topic.includes(secret), `${secret} in topic ${m.topic}`);
          if (m.topic.endsWith('/picture')) continue;
          assert.ok(!m.payload.toString('latin1').includes(secret), `${secret} in the payload on ${m.topic}: ${m.payload.toString('utf8').slice(0, 200)}`);
        }
      }
    });
  });
});
