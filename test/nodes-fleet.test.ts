import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import sinon from 'sinon';
import { startSimulator, type Simulator } from '../lib/simulator';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import plateSyncNode from '../nodes/ipcam-plate-sync/ipcam-plate-sync';
import ptzNode from '../nodes/ipcam-ptz/ipcam-ptz';
import relayNode from '../nodes/ipcam-relay/ipcam-relay';
import snapshotNode from '../nodes/ipcam-snapshot/ipcam-snapshot';
import requestNode from '../nodes/ipcam-request/ipcam-request';
import type { NodeMessage } from '../nodes/red';
import { expectQuiet, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';
import { FlowWatch, assertNoSecret, deepText, getNode, helper, isRecord, TAB, type Credentials, type FlowNode } from './node-helper';

/**
 * A fleet from one flow: every action node takes `msg.device`, the name or id of a deployed
 * ipcam-device, and addresses that device instead of its setting. Three simulators over real
 * sockets, three device nodes; anything a message names that is not one deployed device node is
 * EINPUT with nothing sent to any of them.
 */

const NODES = [deviceNode, plateSyncNode, ptzNode, relayNode, snapshotNode, requestNode];
const CAMERAS = ['a', 'b', 'c'] as const;
type Camera = (typeof CAMERAS)[number];
const deviceId = (c: Camera): string => `dev-${c}`;
const deviceName = (c: Camera): string => `gate-${c}`;

const SYNC = 'sync';
const SYNC_UNSET = 'sync-unset';
const RELAY = 'relay';
const PTZ = 'ptz';
const SNAP = 'snap';
const REQUEST = 'request';
const ACTIONS = [SYNC, SYNC_UNSET, RELAY, PTZ, SNAP, REQUEST];
const OTHER_TAB = 'f2';

describe('msg.device: a fleet of devices from one flow', function () {
  this.timeout(30_000);
  const sims = new Map<Camera, Simulator>();

  before(async function () {
    await helper.startServer();
    for (const c of CAMERAS) sims.set(c, await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD }));
  });

  after(async function () {
    await helper.unload();
    await helper.stopServer();
    for (const sim of sims.values()) await sim.close();
  });

  afterEach(async function () {
    sinon.restore();
    await helper.unload();
    for (const sim of sims.values()) {
      sim.clearFaults();
      sim.resetRequests();
      sim.state.plates.clear();
      sim.state.ptz.log.length = 0;
      for (const port of sim.state.io.outputs.keys()) sim.state.io.outputs.set(port, false);
    }
  });

  function sim(c: Camera): Simulator {
    const s = sims.get(c);
    assert.ok(s, `no simulator ${c}`);
    return s;
  }

  function device(c: Camera, settings: Record<string, unknown> = {}): FlowNode {
    return { id: deviceId(c), type: 'ipcam-device', name: deviceName(c), host: '127.0.0.1', port: String(sim(c).port), protocol: 'http', auth: 'auto', tlsVerify: true, timeout: '', ...settings };
  }

  /**
   * Three devices, every action node set to device a (one with no device at all), two more device
   * nodes sharing the name `twin`, and one scoped to another flow.
   */
  function flow(overrides: Partial<Record<Camera, Record<string, unknown>>> = {}): FlowNode[] {
    const at = (i: number): { z: string; x: number; y: number; wires: string[][] } => ({ z: TAB, x: 100, y: 60 * (i + 1), wires: [['out']] });
    return [
      { id: TAB, type: 'tab', label: 'fleet' },
      { id: OTHER_TAB, type: 'tab', label: 'elsewhere' },
      ...CAMERAS.map((c) => device(c, overrides[c])),
      { ...device('a'), id: 'twin-1', name: 'twin' },
      { ...device('b'), id: 'twin-2', name: 'twin' },
      { ...device('c'), id: 'scoped', name: 'scoped-gate', z: OTHER_TAB },
      { id: SYNC, type: 'ipcam-plate-sync', device: deviceId('a'), group: '1', dryRun: false, ...at(0) },
      { id: SYNC_UNSET, type: 'ipcam-plate-sync', device: '', group: '1', dryRun: false, ...at(1) },
      { id: RELAY, type: 'ipcam-relay', device: deviceId('a'), output: '1', mode: 'on', pulse: '1000', sequence: '', ...at(2) },
      { id: PTZ, type: 'ipcam-ptz', device: deviceId('a'), api: 'xml', action: 'Stop', speed: '4', duration: '0', channel: '1', ...at(3) },
      { id: SNAP, type: 'ipcam-snapshot', device: deviceId('a'), source: 'jpg', format: 'buffer', ...at(4) },
      { id: REQUEST, type: 'ipcam-request', device: deviceId('a'), operation: 'readClimate', params: {}, ...at(5) },
      { id: 'out', type: 'helper', z: TAB, x: 400, y: 100, wires: [] },
      { id: 'catch-all', type: 'catch', z: TAB, x: 100, y: 500, scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper', z: TAB, x: 400, y: 500, wires: [] },
    ];
  }

  function credentials(): Credentials {
    const ids = [...CAMERAS.map(deviceId), 'twin-1', 'twin-2', 'scoped'];
    return Object.fromEntries(ids.map((id) => [id, { username: SIM_USER, password: SIM_PASSWORD }]));
  }

  async function deploy(): Promise<FlowWatch> {
    await helper.load(NODES, flow(), credentials());
    return new FlowWatch([...ACTIONS, ...CAMERAS.map(deviceId)]);
  }

  function requestCounts(): number[] {
    return CAMERAS.map((c) => sim(c).state.requestCount);
  }

  function plates(c: Camera): string[] {
    return sim(c)
      .state.plates.inGroup('1')
      .map((p) => p.plate)
      .sort();
  }

  function seed(c: Camera, list: string[]): void {
    for (const plate of list) sim(c).state.plates.add(plate, '1');
  }

  function ourError(msg: NodeMessage): Record<string, unknown> {
    const error = msg['_error'];
    assert.ok(isRecord(error), 'the node error is missing at the Catch node');
    return error;
  }

  it('one plate-sync fed three messages keeps three cameras in step', async function () {
    const w = await deploy();
    seed('a', ['OLD1', 'KEEP1']);
    seed('b', ['KEEP1', 'OLD2', 'OLD3']);
    // c starts empty.
    const allowList = ['KEEP1', 'NEW1', 'NEW2'];
    const reports: unknown[] = [];
    for (const c of CAMERAS) {
      const msg = await w.expectOutput(SYNC, { device: deviceName(c), payload: allowList });
      assert.equal(msg['device'], deviceName(c), 'msg.device passes through: the next node of a chain addresses the same device');
      reports.push(msg.payload);
    }
    for (const c of CAMERAS) assert.deepEqual(plates(c), ['KEEP1', 'NEW1', 'NEW2'], `camera ${c} is not in step`);
    assert.deepEqual(
      reports.map((r) => (isRecord(r) ? [r['added'], r['removed']] : r)),
      [
        [['NEW1', 'NEW2'], ['OLD1']],
        [['NEW1', 'NEW2'], ['OLD2', 'OLD3']],
        [['KEEP1', 'NEW1', 'NEW2'], []],
      ],
    );
    assertNoSecret(w.texts(), SIM_PASSWORD);
  });

  it('msg.device by id; without msg.device the setting addresses its device', async function () {
    const w = await deploy();
    const before = requestCounts();
    const msg = await w.expectOutput(RELAY, { device: deviceId('b'), payload: 'on' });
    assert.deepEqual(msg.payload, { output: 1, active: true });
    assert.equal(sim('b').state.io.outputs.get(1), true);
    assert.equal(sim('a').state.io.outputs.get(1), false);
    const after = requestCounts();
    assert.equal(after[0], before[0], 'device a got a request');
    assert.equal(after[2], before[2], 'device c got a request');
    await w.expectOutput(RELAY, { payload: 'on' });
    assert.equal(sim('a').state.io.outputs.get(1), true);
    assert.equal(sim('c').state.io.outputs.get(1), false);
    assertNoSecret(w.texts(), SIM_PASSWORD);
  });

  it('operation nodes (ipcam-request) and snapshots reach the device msg.device names', async function () {
    const w = await deploy();
    const before = requestCounts();
    const climate = await w.expectOutput(REQUEST, { device: deviceName('c') });
    assert.ok(isRecord(climate.payload) && typeof climate.payload['temperatureC'] === 'number');
    const snapshot = await w.expectOutput(SNAP, { device: deviceId('b') });
    assert.ok(Buffer.isBuffer(snapshot.payload));
    const after = requestCounts();
    assert.equal(after[0], before[0], 'device a got a request');
    assert.ok((after[1] ?? 0) > (before[1] ?? 0) && (after[2] ?? 0) > (before[2] ?? 0));
    assertNoSecret(w.texts(), SIM_PASSWORD);
  });

  it('a node with no device setting works from msg.device alone, and is EINPUT without it', async function () {
    const w = await deploy();
    await w.expectOutput(SYNC_UNSET, { device: deviceName('c'), payload: ['ONLY1'] });
    assert.deepEqual(plates('c'), ['ONLY1']);
    const before = requestCounts();
    const msg = await w.expectCaught(SYNC_UNSET, { payload: ['ONLY2'] });
    assert.equal(ourError(msg)['code'], 'EINPUT');
    assert.match(String(ourError(msg)['message']), /msg\.device/);
    assert.deepEqual(requestCounts(), before);
  });

  describe('anything but one deployed device node is EINPUT with nothing sent to any device', function () {
    const cases: Array<{ what: string; device: () => unknown; message?: RegExp }> = [
      { what: 'an unknown name', device: () => 'gate-x', message: /No deployed ipcam-device is named "gate-x"/ },
      { what: 'a name two device nodes have', device: () => 'twin', message: /ambiguous.*twin-1, twin-2/ },
      { what: 'an object with a host and a password', device: () => ({ host: '127.0.0.1', port: sim('b').port, username: SIM_USER, password: 'guessed' }), message: /not an object/ },
      { what: 'a URL with credentials', device: () => `http://${SIM_USER}:guessed@127.0.0.1:${sim('b').port}/`, message: /address/ },
      { what: 'a URL', device: () => `http://127.0.0.1:${sim('b').port}/` },
      { what: 'a host and port', device: () => `127.0.0.1:${sim('b').port}` },
      { what: 'a host', device: () => '127.0.0.1' },
      { what: 'an empty text', device: () => '', message: /empty/ },
      { what: 'blanks', device: () => '   ', message: /empty/ },
      { what: 'null', device: () => null },
      { what: 'a number', device: () => 2 },
      { what: 'a list of names', device: () => [deviceName('b')] },
      { what: 'a node of another type (the relay node itself)', device: () => RELAY },
      { what: 'a device scoped to another flow', device: () => 'scoped-gate' },
      { what: 'a very long name', device: () => 'g'.repeat(5000) },
    ];
    for (const { what, device: value, message } of cases) {
      it(what, async function () {
        const w = await deploy();
        const before = requestCounts();
        for (const node of [RELAY, SYNC, PTZ, SNAP, REQUEST]) {
          const msg = await w.expectCaught(node, { device: value(), payload: node === RELAY ? 'on' : node === SYNC ? ['X1'] : undefined });
          const error = ourError(msg);
          assert.equal(error['code'], 'EINPUT', `${node}: ${String(error['message'])}`);
          if (message) assert.match(String(error['message']), message);
          assert.ok(String(error['message']).length < 400);
          assert.doesNotMatch(String(error['message']), /guessed/, 'a password given in msg.device is echoed');
          const status = w.lastStatus(node);
          assert.deepEqual([status.fill, status.shape], ['red', 'ring']);
          assert.match(String(status.text), /^EINPUT: .{1,24}$/);
        }
        assert.deepEqual(requestCounts(), before, 'a request was sent');
        for (const c of CAMERAS) assert.equal(sim(c).state.io.outputs.get(1), false);
        // The msgs carry what the sender put in msg.device; errors, statuses and the log never echo it.
        const said = [...w.errors().filter((e) => e instanceof Error).map((e) => deepText(e)), ...[RELAY, SYNC, PTZ, SNAP, REQUEST].flatMap((id) => w.statuses(id).map((s) => JSON.stringify(s)))];
        for (const text of said) assert.ok(!text.includes('guessed'), `a password given in msg.device was echoed: ${text.slice(0, 200)}`);
        assertNoSecret(w.texts(), SIM_PASSWORD);
      });
    }
  });

  describe('ipcam-ptz: one mover per device, so timed Stops go to the camera that moved', function () {
    function stopsOf(c: Camera): number {
      return sim(c).state.ptz.log.filter((cmd) => cmd.action === 'Stop').length;
    }
    function movesOf(c: Camera): string[] {
      return sim(c).state.ptz.log.map((cmd) => cmd.action);
    }

    it('timed moves of two cameras, one reached through msg.device: each gets its own Stop', async function () {
      const w = await deploy();
      await w.expectOutput(PTZ, { payload: { action: 'Left', duration: 150 } });
      await w.expectOutput(PTZ, { device: deviceName('c'), payload: { action: 'Up', duration: 150 } });
      await waitFor('both Stops', () => stopsOf('a') === 1 && stopsOf('c') === 1);
      assert.deepEqual(movesOf('a'), ['Left', 'Stop']);
      assert.deepEqual(movesOf('c'), ['Up', 'Stop']);
      assert.deepEqual(movesOf('b'), []);
      assert.equal(sim('a').state.ptz.channel(1).moving, false);
      assert.equal(sim('c').state.ptz.channel(1).moving, false);
    });

    it('closing the node stops every camera it left moving, on each device', async function () {
      const w = await deploy();
      await w.expectOutput(PTZ, { device: deviceName('b'), payload: 'Left' });
      await w.expectOutput(PTZ, { payload: 'Right' });
      assert.equal(sim('b').state.ptz.channel(1).moving, true);
      assert.equal(sim('a').state.ptz.channel(1).moving, true);
      await helper.unload();
      assert.deepEqual(movesOf('b'), ['Left', 'Stop']);
      assert.deepEqual(movesOf('a'), ['Right', 'Stop']);
      assert.deepEqual(movesOf('c'), []);
    });

    it('a new move replaces the pending Stop of its camera even with another device addressed in between', async function () {
      const w = await deploy();
      // Ended before the teardown, whose close stops the camera still moving.
      const moving = expectQuiet(sim('a'), "a Stop ended the move at a", (r) => r.path.endsWith('/Stop'));
      // A timed move's message leaves when it has ended: these are sent one after the other
      // without waiting for it.
      const left = w.send(PTZ, { payload: { action: 'Left', duration: 200 } });
      await waitFor('Left at a', () => movesOf('a').length === 1);
      const up = w.send(PTZ, { device: deviceName('c'), payload: { action: 'Up', duration: 200 } });
      await waitFor('Up at c', () => movesOf('c').length === 1);
      // Until Stop: the Left's timed Stop must not end this move.
      const right = w.send(PTZ, { payload: { action: 'Right', duration: 0 } });
      assert.deepEqual((await Promise.all([left, up, right])).map((o) => o.kind), ['out', 'out', 'out']);
      await waitFor("c's timed Stop", () => stopsOf('c') === 1);
      await sleep(250);
      assert.deepEqual(movesOf('a'), ['Left', 'Right']);
      assert.equal(sim('a').state.ptz.channel(1).moving, true);
      moving.end();
    });

    it('a Stop sent to another device through msg.device stops that camera, not the own one', async function () {
      const w = await deploy();
      await w.expectOutput(PTZ, { payload: 'Left' });
      await w.expectOutput(PTZ, { device: deviceId('c'), payload: 'Down' });
      await w.expectOutput(PTZ, { device: deviceId('c'), payload: 'Stop' });
      assert.equal(sim('c').state.ptz.channel(1).moving, false);
      assert.equal(sim('a').state.ptz.channel(1).moving, true);
    });
  });

  describe('a redeploy never closes a client under a request that reached it through msg.device', function () {
    it('the device redeployed while a slow snapshot runs: the snapshot completes, then the client closes', async function () {
      const w = await deploy();
      sim('b').inject({ kind: 'slow', delay: 400, path: '/jpg', times: 1 });
      const before = sim('b').state.requestCount;
      const outcome = w.send(SNAP, { device: deviceName('b') });
      await waitFor('the snapshot request at device b', () => sim('b').state.requestCount > before);
      // Only device b changed: Node-RED stops and restarts it; the snapshot node keeps running.
      const redeployed = helper.setFlows(flow({ b: { timeout: '9000' } }), 'nodes', credentials());
      const result = await outcome;
      assert.equal(result.kind, 'out', `the request failed: ${JSON.stringify(result.msg['_error'])}`);
      assert.ok(Buffer.isBuffer(result.msg.payload) && result.msg.payload.length > 100);
      await redeployed;
      // The new device b serves the next message.
      const next = await w.expectOutput(SNAP, { device: deviceName('b') });
      assert.ok(Buffer.isBuffer(next.payload));
    });

    it('a device reached through msg.device keeps its client for the pending timed Stop of a PTZ move', async function () {
      const w = await deploy();
      // The move's message leaves once its Stop is answered: the device is closed while it waits.
      const moved = w.send(PTZ, { device: deviceName('c'), payload: { action: 'Left', duration: 300 } });
      await waitFor('Left at c', () => sim('c').state.ptz.log.length === 1);
      type Closable = { close(removed?: boolean): Promise<void> };
      let closed = false;
      const closing = (getNode(deviceId('c')) as unknown as Closable).close(false).then(() => void (closed = true));
      await sleep(100);
      assert.equal(closed, false, 'the device closed its client under a pending Stop');
      await closing;
      assert.deepEqual(
        sim('c').state.ptz.log.map((cmd) => cmd.action),
        ['Left', 'Stop'],
      );
      assert.equal((await moved).kind, 'out');
      assert.deepEqual(w.errors(), [], 'the Stop failed');
    });

    it('a device closed first waits for the borrowed request; a closing device takes no new one', async function () {
      await deploy();
      sim('c').inject({ kind: 'slow', delay: 300, path: '/jpg', times: 1 });
      const done = new Promise<NodeMessage>((resolve) => getNode('out').on('input', resolve));
      getNode(SNAP).receive({ device: deviceName('c') });
      await waitFor('the snapshot request at device c', () => sim('c').state.requestCount > 0);
      type Closable = { close(removed?: boolean): Promise<void> };
      let closed = false;
      const closing = (getNode(deviceId('c')) as unknown as Closable).close(false).then(() => void (closed = true));
      await sleep(50);
      assert.equal(closed, false, 'the device closed its client under a running request');
      // Still found by id while Node-RED closes it here (the test closes it directly): refused.
      const caught = new Promise<NodeMessage>((resolve) => getNode('caught').on('input', resolve));
      const count = sim('c').state.requestCount;
      getNode(SNAP).receive({ device: deviceName('c') });
      assert.equal(ourError(await caught)['code'], 'EINPUT');
      assert.equal(sim('c').state.requestCount, count);
      const msg = await done;
      assert.ok(Buffer.isBuffer(msg.payload));
      await closing;
      assert.equal(closed, true);
    });
  });
});
