/**
 * Device health (issue 19) and the streams that depend on it (issue 24): the state machine alone,
 * then ipcam-device's heartbeat and ipcam-device-status against the simulator over real sockets:
 * stopped and restarted, a 401, one lost answer, a heartbeat of 0, a frozen device.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { IpcamError } from '../lib/errors/errors';
import { DeviceHealth, type HealthChange } from '../lib/health/device-health';
import { HEARTBEAT_DEFAULT_S, offlineWithinMs, RETRY_PROBE_MS } from '../lib/health/heartbeat-setting';
import { DeviceClient } from '../lib/transport/client';
import { DEFAULT_TIMEOUT } from '../lib/transport/options';
import { ioMonitorPath } from '../lib/ops/io';
import { startSimulator, type Simulator } from '../lib/simulator';
import { StreamSupervisor, type StreamState } from '../lib/stream/supervisor';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import statusNode from '../nodes/ipcam-device-status/ipcam-device-status';
import snapshotNode from '../nodes/ipcam-snapshot/ipcam-snapshot';
import inputMonitorNode from '../nodes/ipcam-input-monitor/ipcam-input-monitor';
import type { NodeMessage, NodeStatus } from '../nodes/red';
import { expectQuiet, nodeFiles, PROJECT_ROOT, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';
import { DEVICE, TAB, deviceCredentials, deviceDef, getNode, helper, intercept, isRecord, type FlowNode } from './node-helper';

const NODES = [deviceNode, statusNode, snapshotNode, inputMonitorNode];
// Node-RED's own switch and function nodes, for the README's flow.
const CORE = ['function/10-switch.js', 'function/10-function.js'].map((f) => module.require(join(require.resolve('@node-red/nodes/package.json'), '..', 'core', f)) as (typeof NODES)[number]);

/** The flow of the README's section 'Knowing when a camera is down'. */
function readmeFlow(): FlowNode[] {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Knowing when a camera is down'));
  const json = /```json\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(json, 'the section has a flow');
  return JSON.parse(json) as FlowNode[];
}
const INPUT = '/cgi-bin/admin/input';

describe('device health', function () {
  describe('DeviceHealth (the state machine)', function () {
    const refused = new IpcamError('ECONN', 'Connection refused by http://10.0.0.9:80 (GET /x)');
    function machine(): { health: DeviceHealth; changes: HealthChange[] } {
      const health = new DeviceHealth();
      const changes: HealthChange[] = [];
      health.subscribe((c) => changes.push(c));
      return { health, changes };
    }
    const states = (changes: HealthChange[]): string[] => changes.map((c) => `${c.previous}>${c.state}`);

    it('is online on any answer, offline only after two failures in a row', function () {
      const { health, changes } = machine();
      assert.equal(health.state, 'unknown');
      health.failed(refused);
      assert.deepEqual(states(changes), [], 'one failure is not an outage');
      health.succeeded();
      health.failed(refused);
      health.succeeded();
      health.failed(new IpcamError('ETIMEOUT', 'No answer in time'));
      assert.deepEqual(states(changes), ['unknown>online'], 'failures that an answer separates never add up');
      health.failed(new IpcamError('ETIMEOUT', 'No answer in time'));
      health.failed(refused);
      assert.deepEqual(states(changes), ['unknown>online', 'online>offline']);
      assert.equal(changes[1]?.reason, 'No answer in time');
    });

    it('is auth-failed at once on a refused password; an HTTP error is an answer; EINPUT teaches nothing', function () {
      const { health, changes } = machine();
      health.failed(new IpcamError('EAUTH', 'The device keeps refusing the credentials', { status: 401 }));
      health.failed(new IpcamError('EINPUT', 'bad value'));
      health.failed(new IpcamError('EHTTP', 'The device answered HTTP 503', { status: 503 }));
      health.failed(new IpcamError('EDEVICE', 'refused'));
      assert.deepEqual(states(changes), ['unknown>auth-failed', 'auth-failed>online']);
      assert.ok(changes[1] && changes[1].since.getTime() >= changes[0]!.since.getTime());
      assert.equal(changes[1]?.reason, undefined);
    });

    it('a listener that throws keeps neither the others nor the exchange from going on', function () {
      const { health, changes } = machine();
      health.subscribe(() => {
        throw new Error('a bad listener');
      });
      const late: HealthChange[] = [];
      health.subscribe((c) => late.push(c));
      health.succeeded();
      assert.equal(changes.length, 1);
      assert.equal(late.length, 1);
    });
  });

  describe('StreamSupervisor with the device health', function () {
    let sim: Simulator;
    let client: DeviceClient;
    let health: DeviceHealth;
    let sup: StreamSupervisor | undefined;

    beforeEach(async function () {
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
      health = new DeviceHealth();
      client = new DeviceClient({ host: sim.host, port: sim.port, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' }, health);
    });
    afterEach(async function () {
      await sup?.stop();
      await client.close();
      await sim.close();
    });

    it('waits without a retry of its own while the device is offline, connects at once when it answers, and stops listening on stop()', async function () {
      const states: StreamState[] = [];
      sup = new StreamSupervisor({ client, path: ioMonitorPath('input', []), onPart: () => undefined, onState: (state) => states.push(state), device: health, random: () => 1 });
      sim.inject({ kind: 'drop', path: INPUT });
      sup.start();
      // Two lost answers in a row (the stream's own, a second apart): the device is offline.
      await waitFor('waiting', () => states.includes('waiting'), 5000);
      assert.equal(health.state, 'offline');
      assert.deepEqual(states, ['connecting', 'retrying', 'connecting', 'waiting']);
      const asked = sim.state.requests.filter((r) => r.path === INPUT).length;
      const waiting = expectQuiet(sim, 'no attempt of its own while waiting', (r) => r.path === INPUT);
      await sleep(2500);
      assert.equal(sim.state.requests.filter((r) => r.path === INPUT).length, asked, 'no attempt of its own while waiting');
      waiting.end();
      sim.clearFaults();
      // What the heartbeat's answer does: the device is online again.
      const answered = Date.now();
      health.succeeded();
      await waitFor('connected', () => states.at(-1) === 'connected', 3000);
      assert.ok(Date.now() - answered < 1000);
      // Found offline while connected (a frozen device): the stream is dropped and waits.
      health.failed(new IpcamError('ETIMEOUT', 'No answer in time'));
      health.failed(new IpcamError('ETIMEOUT', 'No answer in time'));
      assert.equal(states.at(-1), 'waiting');
      await waitFor('the stream closed', () => sim.state.io.openStreams === 0, 3000);
      await sup.stop();
      const stopped = states.length;
      const following = expectQuiet(states, 'a stopped stream no longer follows the device');
      expectQuiet(sim, 'a stopped stream asked the device', (r) => r.path === INPUT);
      health.succeeded();
      await sleep(200);
      assert.equal(states.length, stopped, 'a stopped stream no longer follows the device');
      assert.equal(sim.state.io.openStreams, 0);
      // Ended here: the teardown's own stop() reports 'stopped' again.
      following.end();
    });
  });

  describe('ipcam-device heartbeat and ipcam-device-status (simulator)', function () {
    this.timeout(30_000);
    let sim: Simulator;
    let port: number;
    let statuses: Map<string, NodeStatus[]>;
    let deployed: FlowNode[] = [];

    before(async function () {
      await helper.startServer();
    });
    after(async function () {
      await helper.stopServer();
    });
    beforeEach(async function () {
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD });
      port = sim.port;
      statuses = new Map();
    });
    afterEach(async function () {
      await helper.unload();
      await sim.close();
    });

    /** The flow: the device, a device-status node (wired to `out`), a snapshot node (`snap`), and others. */
    async function deploy(device: Record<string, unknown>, extra: FlowNode[] = [], password = SIM_PASSWORD): Promise<NodeMessage[]> {
      const flow: FlowNode[] = [
        { id: TAB, type: 'tab', label: 'health' },
        deviceDef({ port }, { timeout: '500', ...device }),
        { id: 'status', type: 'ipcam-device-status', z: TAB, x: 100, y: 100, device: DEVICE, wires: [['out']] },
        { id: 'out', type: 'helper', z: TAB, x: 300, y: 100, wires: [] },
        { id: 'snap', type: 'ipcam-snapshot', z: TAB, x: 100, y: 200, device: DEVICE, source: 'jpg', format: 'buffer', wires: [['snapped']] },
        { id: 'snapped', type: 'helper', z: TAB, x: 300, y: 200, wires: [] },
        { id: 'catch-all', type: 'catch', z: TAB, x: 100, y: 300, scope: null, uncaught: false, wires: [['caught']] },
        { id: 'caught', type: 'helper', z: TAB, x: 300, y: 300, wires: [] },
        ...extra,
      ];
      deployed = flow;
      await helper.load(NODES, flow, { ...deviceCredentials(password), dev2: { username: SIM_USER, password } });
      const messages: NodeMessage[] = [];
      getNode('out').on('input', (msg) => messages.push(msg));
      for (const id of ['status', 'snap', ...extra.filter((n) => n.type !== 'helper').map((n) => n.id)]) {
        const list: NodeStatus[] = [];
        statuses.set(id, list);
        intercept(getNode(id), 'status', (args) => list.push(args[0] as NodeStatus));
      }
      return messages;
    }

    const payloads = (messages: NodeMessage[]): Array<Record<string, unknown>> => messages.map((m) => (isRecord(m.payload) ? m.payload : {}));
    const sequence = (messages: NodeMessage[]): string[] => payloads(messages).map((p) => `${String(p['previous'])}>${String(p['state'])}`);

    /** Sends a message to a node and resolves once it has called done(). */
    async function input(id: string, payload: unknown): Promise<void> {
      const node = getNode(id);
      const finished = new Promise<void>((resolve) => intercept(node, '_complete', () => resolve()));
      node.receive({ payload });
      await finished;
    }

    it('stopped and restarted: online, offline after two lost probes, online again, with the identity', async function () {
      const messages = await deploy({ heartbeat: '1' });
      await waitFor('online', () => messages.length >= 1, 5000);
      const [first] = payloads(messages);
      assert.deepEqual(first?.['device'], { id: DEVICE, name: 'camera', host: '127.0.0.1' });
      assert.equal(first?.['state'], 'online');
      assert.equal(first?.['previous'], 'unknown');
      assert.match(String(first?.['since']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(Object.keys(first?.['info'] as object).sort(), ['firmware', 'mac', 'model']);
      assert.equal(messages[0]?.topic, 'camera');

      const stopped = Date.now();
      await sim.close();
      await waitFor('offline', () => messages.length >= 2, 8000);
      const wentOffline = Date.now() - stopped;
      // Two probes a heartbeat apart: not on the first lost one, and soon after the second.
      assert.ok(wentOffline >= 900 && wentOffline <= 4000, `offline after ${wentOffline} ms`);
      const offline = payloads(messages)[1];
      assert.equal(offline?.['state'], 'offline');
      assert.match(String(offline?.['reason']), /Connection refused/);
      // The snapshot node, idle, shows its device's state.
      assert.deepEqual(statuses.get('snap')?.at(-1), { fill: 'red', shape: 'ring', text: 'offline' });

      sim = await startSimulator({ port, username: SIM_USER, password: SIM_PASSWORD });
      const restarted = Date.now();
      await waitFor('online again', () => messages.length >= 3, 8000);
      const cameBack = Date.now() - restarted;
      assert.ok(cameBack <= 2500, `online again after ${cameBack} ms`);
      assert.deepEqual(sequence(messages), ['unknown>online', 'online>offline', 'offline>online']);
      assert.ok(isRecord(payloads(messages)[2]?.['info']), 'the identity read again on the way back');
      assert.equal(payloads(messages)[2]?.['reason'], undefined);
      assert.deepEqual(statuses.get('snap')?.at(-1), { fill: 'green', shape: 'dot', text: 'online' });
      expectQuiet(messages, 'one message per change, nothing while the state holds');
      await sleep(1500);
      assert.equal(messages.length, 3, 'one message per change, nothing while the state holds');
    });

    it("'check' gives the current state at once, without asking the device", async function () {
      const messages = await deploy({ heartbeat: '0' });
      await input('status', 'check');
      await waitFor('the answer', () => messages.length >= 1, 2000);
      assert.equal(sim.state.requestCount, 0);
      assert.deepEqual(sequence(messages), ['unknown>unknown']);
      assert.equal(messages[0]?.payload && (messages[0].payload as Record<string, unknown>)['info'], undefined);
      await input('snap', 'go');
      await waitFor('online', () => messages.length >= 2);
      await input('status', 'check');
      await waitFor('the answer', () => messages.length >= 3, 2000);
      assert.deepEqual(sequence(messages), ['unknown>unknown', 'unknown>online', 'unknown>online']);
      await input('status', 'stop');
      assert.deepEqual(statuses.get('status')?.at(-1), { fill: 'red', shape: 'ring', text: "EINPUT: command 'stop'" });
    });

    it('a 401: auth-failed at once, and the heartbeat stops asking; an answer to a node starts it again', async function () {
      const messages = await deploy({ heartbeat: '1' });
      await waitFor('online', () => messages.length >= 1, 5000);
      sim.inject({ kind: 'status', status: 401 });
      await waitFor('auth-failed', () => messages.length >= 2, 5000);
      const failed = payloads(messages)[1];
      assert.equal(failed?.['state'], 'auth-failed');
      assert.match(String(failed?.['reason']), /rejected the username or password|refusing the credentials/);
      assert.ok(!JSON.stringify(messages).includes(SIM_PASSWORD));
      const asked = sim.state.requestCount;
      const locked = expectQuiet(sim, 'no heartbeat after a refused password (accounts lock)');
      await sleep(3500);
      assert.equal(sim.state.requestCount, asked, 'no heartbeat after a refused password (accounts lock)');
      assert.deepEqual(statuses.get('snap')?.at(-1), { fill: 'red', shape: 'ring', text: 'auth failed' });
      locked.end();

      sim.clearFaults();
      await input('snap', 'go');
      await waitFor('online', () => messages.length >= 3);
      const resumed = sim.state.requestCount;
      await waitFor('the heartbeat asking again', () => sim.state.requestCount > resumed, 4000);
      assert.deepEqual(sequence(messages), ['unknown>online', 'online>auth-failed', 'auth-failed>online']);
    });

    it('a flapping network: one lost answer is no outage', async function () {
      const messages = await deploy({ heartbeat: '1' });
      await waitFor('online', () => messages.length >= 1, 5000);
      expectQuiet(messages, 'one lost answer is no outage');
      sim.inject({ kind: 'drop', times: 1 });
      await waitFor('the lost answer', () => sim.state.faults.length === 0, 5000);
      const lost = sim.state.requestCount;
      await waitFor('the probe that confirms', () => sim.state.requestCount > lost, 3000);
      await sleep(1500);
      assert.deepEqual(sequence(messages), ['unknown>online']);
    });

    it('a heartbeat of 0: nothing asked; the nodes\' own exchanges tell the state', async function () {
      const messages = await deploy({ heartbeat: '0' });
      const unasked = expectQuiet(sim, 'no heartbeat request');
      const untold = expectQuiet(messages, 'no state while nothing was asked');
      await sleep(2500);
      assert.equal(sim.state.requestCount, 0, 'no heartbeat request');
      assert.deepEqual(messages, []);
      unasked.end();
      untold.end();
      await input('snap', 'go');
      await waitFor('online', () => messages.length >= 1);
      const noOutage = expectQuiet(messages, 'one failed snapshot is not an outage');
      await sim.close();
      await input('snap', 'go');
      await sleep(300);
      assert.deepEqual(sequence(messages), ['unknown>online'], 'one failed snapshot is not an outage');
      noOutage.end();
      await input('snap', 'go');
      await waitFor('offline', () => messages.length >= 2);
      assert.deepEqual(sequence(messages), ['unknown>online', 'online>offline']);
    });

    describe('the offline bound: a device that dies just after an answer is offline within offlineWithinMs(heartbeat, timeout)', function () {
      // The bound is exact but for the event loop and loopback: timers fire and answers come a
      // few ms late. The allowance below is for that, far below the bound's own terms.
      const LATE_MS = 750;
      const HEARTBEAT_S = 2;
      const TIMEOUT_MS = 500;

      /** Deploys, waits for a beat answered, kills the device with `die` right after it; the ms from that answer to offline. */
      async function timeToOffline(die: () => Promise<void> | void): Promise<number> {
        const messages = await deploy({ heartbeat: String(HEARTBEAT_S), timeout: String(TIMEOUT_MS) });
        await waitFor('online', () => messages.length >= 1, 5000);
        const health = (getNode(DEVICE) as unknown as { health: DeviceHealth }).health;
        // Right after a beat's answer: the worst moment to die (the next beat is a heartbeat away).
        const beats = sim.state.requests.length;
        await waitFor('a beat', () => sim.state.requests.length > beats && health.lastOutcome > 0 && Date.now() - health.lastOutcome < 50, 5000);
        const lastAnswer = health.lastOutcome;
        await die();
        await waitFor('offline', () => messages.length >= 2, 15_000);
        assert.equal(payloads(messages)[1]?.['state'], 'offline');
        return Date.now() - lastAnswer;
      }

      it('a device that stops answering (silent): within heartbeat + min(heartbeat, 5 s) + 2 x timeout', async function () {
        const bound = offlineWithinMs(HEARTBEAT_S * 1000, TIMEOUT_MS);
        const took = await timeToOffline(() => sim.setAnswer({ halfOpen: true }));
        assert.ok(took <= bound + LATE_MS, `offline ${took} ms after its last answer; the bound is ${bound} ms`);
        // Two probes were needed: not sooner than the heartbeat, the retry and one timeout.
        assert.ok(took >= HEARTBEAT_S * 1000 + Math.min(HEARTBEAT_S * 1000, RETRY_PROBE_MS), `offline after ${took} ms: on the first lost probe`);
      });

      it('a device whose address refuses connections (stopped): within the same bound, its probes failing at once', async function () {
        const bound = offlineWithinMs(HEARTBEAT_S * 1000, TIMEOUT_MS);
        const took = await timeToOffline(() => sim.close());
        assert.ok(took <= bound - 2 * TIMEOUT_MS + LATE_MS, `offline ${took} ms after its last answer; refusals take no timeout (bound ${bound} ms)`);
      });

      it('the README and the device help state the bound of the defaults', function () {
        const seconds = offlineWithinMs(HEARTBEAT_DEFAULT_S * 1000, DEFAULT_TIMEOUT) / 1000;
        const refused = offlineWithinMs(HEARTBEAT_DEFAULT_S * 1000, 0) / 1000;
        assert.equal(seconds, 35);
        const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
        const help = readFileSync(nodeFiles('ipcam-device').help, 'utf8');
        for (const [name, text] of [['README', readme], ['device help', help]] as const) {
          assert.ok(text.includes(`**${seconds} s**`) || text.includes(`<b>${seconds} s</b>`), `${name} does not state ${seconds} s`);
          assert.ok(text.includes(`**${refused} s**`) || text.includes(`<b>${refused} s</b>`), `${name} does not state ${refused} s`);
          assert.ok(text.includes(`default ${HEARTBEAT_DEFAULT_S}`), `${name} does not name the default heartbeat ${HEARTBEAT_DEFAULT_S}`);
        }
      });
    });

    it('watches every device when its Device is blank', async function () {
      const second: FlowNode = { ...deviceDef({ port }, { timeout: '500', heartbeat: '1' }), id: 'dev2', name: 'second' };
      const all: FlowNode[] = [
        second,
        { id: 'all', type: 'ipcam-device-status', z: TAB, x: 100, y: 400, device: '', wires: [['everyone']] },
        { id: 'everyone', type: 'helper', z: TAB, x: 300, y: 400, wires: [] },
      ];
      await deploy({ heartbeat: '1' }, all);
      const seen: NodeMessage[] = [];
      getNode('everyone').on('input', (msg) => seen.push(msg));
      await waitFor('both online', () => seen.length >= 2, 5000);
      assert.deepEqual(payloads(seen).map((p) => `${String((p['device'] as Record<string, unknown>)['id'])} ${String(p['state'])}`).sort(), ['dev1 online', 'dev2 online']);
      await input('all', 'check');
      await waitFor("one message per device for 'check'", () => seen.length >= 4, 2000);
      const checked = expectQuiet(seen, "one message per device for 'check'");
      await sleep(100);
      assert.equal(seen.length, 4, "one message per device for 'check'");
      checked.end();
      await waitFor(`the summary status (${JSON.stringify(statuses.get('all'))})`, () => statuses.get('all')?.at(-1)?.text === '2 online, 0 down', 2000);
      await sim.close();
      await waitFor('both offline', () => seen.length >= 6, 8000);
      assert.deepEqual(statuses.get('all')?.at(-1), { fill: 'red', shape: 'ring', text: '0 online, 2 down' });
    });

    it('follows a device that is redeployed alone: the new device node is watched, the old one forgotten', async function () {
      const all: FlowNode[] = [
        { id: 'all', type: 'ipcam-device-status', z: TAB, x: 100, y: 400, device: '', wires: [['everyone']] },
        { id: 'everyone', type: 'helper', z: TAB, x: 300, y: 400, wires: [] },
      ];
      await deploy({ heartbeat: '1' }, all);
      const seen: NodeMessage[] = [];
      getNode('everyone').on('input', (msg) => seen.push(msg));
      await waitFor('online', () => seen.length >= 1, 5000);
      const changed = deployed.map((n) => (n.id === DEVICE ? { ...n, heartbeat: '2' } : n));
      await helper.setFlows(changed, 'nodes', deviceCredentials(SIM_PASSWORD));
      await waitFor('the redeployed device online', () => seen.length >= 2, 5000);
      assert.deepEqual(sequence(seen), ['unknown>online', 'unknown>online']);
      // 'check': the new device node alone, not the old one beside it.
      await input('all', 'check');
      await waitFor('the answer', () => seen.length >= 3, 2000);
      expectQuiet(seen, 'one device, not the old one beside the new');
      await sleep(100);
      assert.equal(seen.length, 3, 'one device, not the old one beside the new');
    });
  });

  describe("the README's flow: notify when a camera is down", function () {
    this.timeout(20_000);
    after(async function () {
      await helper.unload();
    });

    it('tells of an offline camera once, with its name, host and reason, and not of one that comes online', async function () {
      const sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD });
      try {
        const flow = readmeFlow().map((n) => ({ ...n, z: TAB, wires: n.type === 'debug' ? [] : n.wires }));
        const debug = flow.find((n) => n.type === 'debug');
        assert.ok(debug);
        // The notice goes to a helper node where the README puts a debug node.
        Object.assign(debug, { type: 'helper' });
        await helper.load([...NODES, ...CORE], [{ id: TAB, type: 'tab', label: 'readme' }, deviceDef(sim, { timeout: '500', heartbeat: '1' }), ...flow], deviceCredentials(SIM_PASSWORD));
        const notices: NodeMessage[] = [];
        getNode(debug.id).on('input', (msg) => notices.push(msg));
        const online = expectQuiet(notices, 'online is no notice');
        await sleep(1500);
        assert.equal(notices.length, 0, 'online is no notice');
        online.end();
        await sim.close();
        await waitFor('the notice', () => notices.length >= 1, 8000);
        expectQuiet(notices, 'one notice of one outage');
        await sleep(1500);
        assert.equal(notices.length, 1);
        assert.equal(notices[0]?.topic, 'Camera camera is offline');
        assert.match(String(notices[0]?.payload), /^camera \(127\.0\.0\.1\) is offline since \d{4}-.*Z: Connection refused/);
      } finally {
        await sim.close();
      }
    });
  });

  describe('streams of a device that goes down (issue 24)', function () {
    this.timeout(40_000);
    let sim: Simulator;
    let port: number;

    before(async function () {
      await helper.startServer();
    });
    after(async function () {
      await helper.stopServer();
    });
    beforeEach(async function () {
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD });
      port = sim.port;
    });
    afterEach(async function () {
      await helper.unload();
      await sim.close();
    });

    async function deployMonitors(count: number): Promise<Map<string, NodeStatus[]>> {
      const flow: FlowNode[] = [{ id: TAB, type: 'tab', label: 'streams' }, deviceDef({ port }, { timeout: '500', heartbeat: '1' })];
      for (let i = 0; i < count; i++) flow.push({ id: `mon${i}`, type: 'ipcam-input-monitor', z: TAB, x: 100, y: 100 + 50 * i, device: DEVICE, kind: 'input', ports: '1', wires: [[]] });
      const recorded = new Map<string, NodeStatus[]>();
      await helper.load(NODES, flow, deviceCredentials(SIM_PASSWORD));
      for (let i = 0; i < count; i++) {
        const list: NodeStatus[] = [];
        recorded.set(`mon${i}`, list);
        intercept(getNode(`mon${i}`), 'status', (args) => list.push(args[0] as NodeStatus));
      }
      return recorded;
    }

    const lastText = (list: NodeStatus[] | undefined): string => list?.at(-1)?.text ?? '';
    const all = (statuses: Map<string, NodeStatus[]>, check: (text: string) => boolean): boolean => statuses.size > 0 && [...statuses.values()].every((l) => check(lastText(l)));
    const streamOpenings = (): number => sim.state.requests.filter((r) => r.path === INPUT && r.query.some(([k]) => k === 'monitor')).length;

    it('device down, up again: streaming again within 10 s', async function () {
      const statuses = await deployMonitors(2);
      await waitFor('connected', () => sim.state.io.openStreams === 2, 5000);
      await sim.close();
      await waitFor('device not answering', () => all(statuses, (t) => t === 'device not answering'), 8000);
      assert.deepEqual(statuses.get('mon0')?.at(-1), { fill: 'yellow', shape: 'ring', text: 'device not answering' });
      // Down for a while: past the streams' own back-off.
      await sleep(3000);
      sim = await startSimulator({ port, username: SIM_USER, password: SIM_PASSWORD });
      const restarted = Date.now();
      await waitFor('streaming again', () => sim.state.io.openStreams === 2 && all(statuses, (t) => t === 'connected' || t.startsWith('IO')), 10_000);
      const took = Date.now() - restarted;
      assert.ok(took <= 10_000, `streaming again after ${took} ms`);
    });

    it('a frozen device (socket open, nothing answered): streams turn yellow, cost no attempt each while it stays down, reconnect when it answers', async function () {
      const statuses = await deployMonitors(4);
      await waitFor('connected', () => sim.state.io.openStreams === 4, 5000);
      const frozen = Date.now();
      sim.setAnswer({ halfOpen: true });
      await waitFor('device not answering', () => all(statuses, (t) => t === 'device not answering'), 8000);
      const noticed = Date.now() - frozen;
      // Heartbeat 1 s, timeout 0.5 s: two lost probes.
      assert.ok(noticed <= 5000, `noticed after ${noticed} ms`);
      const openings = streamOpenings();
      const total = sim.state.requestCount;
      const down = expectQuiet(sim, 'no stream attempts while the device stays down', (r) => r.path === INPUT && r.query.some(([k]) => k === 'monitor'));
      await sleep(4000);
      assert.equal(streamOpenings(), openings, 'no stream attempts while the device stays down');
      down.end();
      assert.ok(sim.state.requestCount - total <= 4, `${sim.state.requestCount - total} requests in 4 s: one probe per heartbeat`);

      sim.setAnswer({ halfOpen: false });
      const answering = Date.now();
      await waitFor('streaming again', () => all(statuses, (t) => t === 'connected' || t.startsWith('IO')) && streamOpenings() >= openings + 4, 10_000);
      assert.ok(Date.now() - answering <= 10_000);
    });
  });
});
