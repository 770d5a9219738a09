import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import sinon from 'sinon';
import { startSimulator, type Simulator } from '../lib/simulator';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import detectionNode from '../nodes/ipcam-detection-stream/ipcam-detection-stream';
import inputMonitorNode from '../nodes/ipcam-input-monitor/ipcam-input-monitor';
import type { NodeAPI, NodeMessage, NodeStatus } from '../nodes/red';
import { expectQuiet, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';
import {
  DEVICE,
  SocketTracker,
  TAB,
  activeHandles,
  closedPort,
  connectionsOf,
  deviceCredentials,
  deviceDef,
  getNode,
  handleName,
  helper,
  intercept,
  isRecord,
  simServer,
  type FlowNode,
  type NodeModule,
  type RuntimeNode,
} from './node-helper';

const DETECTION = '/cgi-bin/admin/detection';
const INPUT = '/cgi-bin/admin/input';
const CLOCK = /\d\d:\d\d:\d\d$/;

// ---------------------------------------------------------------------------------------------
// What the stream nodes do from the moment they are created (their status and errors during
// construction included: a FlowWatch made after the deploy would miss those).

interface NodeLog {
  statuses: NodeStatus[];
  errors: unknown[];
}

const logs = new Map<string, NodeLog>();

function logOf(id: string): NodeLog {
  const log = logs.get(id);
  assert.ok(log, `node ${id} was not created`);
  return log;
}

/** Wraps a node module so that every node it creates is recorded from its first line on. */
function recorded(module: NodeModule): NodeModule {
  return (RED: NodeAPI) => {
    const nodes = Object.create(RED.nodes) as NodeAPI['nodes'];
    nodes.createNode = (node, def) => {
      RED.nodes.createNode(node, def);
      const log: NodeLog = { statuses: [], errors: [] };
      logs.set(def.id, log);
      intercept(node as RuntimeNode, 'status', (args) => log.statuses.push(args[0] as NodeStatus));
      intercept(node as RuntimeNode, 'error', (args) => log.errors.push(args[0]));
    };
    const red = Object.create(RED) as NodeAPI;
    Object.defineProperty(red, 'nodes', { value: nodes });
    module(red);
  };
}

const NODES = [deviceNode, recorded(inputMonitorNode), recorded(detectionNode)];

function lastStatus(id: string): NodeStatus {
  const last = logOf(id).statuses.at(-1);
  assert.ok(last, `no status on ${id}`);
  return last;
}

function statusTexts(id: string): string[] {
  return logOf(id).statuses.flatMap((s) => (s.text === undefined ? [] : [s.text]));
}

function assertShortTexts(id: string): void {
  // The status rule: at most 32 characters ('device not answering' is 20).
  for (const text of statusTexts(id)) assert.ok(text.length > 0 && text.length <= 32, `status text "${text}" of ${id}`);
}

function monitorDef(id: string, settings: Record<string, unknown> = {}): FlowNode {
  return { id, type: 'ipcam-input-monitor', name: '', device: DEVICE, kind: 'input', ports: '', ...settings };
}

function detectionDef(id: string, settings: Record<string, unknown> = {}): FlowNode {
  return { id, type: 'ipcam-detection-stream', name: '', device: DEVICE, detection: 'motion', groups: '', mode: 'stream', emit: 'every', ...settings };
}

/** A tab with the device, the nodes (each wired to helper `out-<id>`) and a Catch node wired to `caught`. */
function streamFlow(sim: Simulator | { port: number }, nodes: FlowNode[], device: Record<string, unknown> = {}): FlowNode[] {
  return [
    { id: TAB, type: 'tab', label: 'streams' },
    deviceDef(sim, { auth: 'basic', ...device }),
    ...nodes.flatMap((n, i): FlowNode[] => [
      { ...n, z: TAB, x: 100, y: 100 + 60 * i, wires: [[`out-${n.id}`]] },
      { id: `out-${n.id}`, type: 'helper', z: TAB, x: 300, y: 100 + 60 * i, wires: [] },
    ]),
    { id: 'catch-all', type: 'catch', z: TAB, x: 100, y: 20, scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: TAB, x: 300, y: 20, wires: [] },
  ];
}

/** Messages that reached a helper node, in order. */
function collect(id: string): NodeMessage[] {
  const messages: NodeMessage[] = [];
  getNode(id).on('input', (msg) => messages.push(msg));
  return messages;
}

interface Levels {
  group: number;
  level: number;
  threshold: number;
  triggered: boolean;
}

function levelsOf(msg: NodeMessage | undefined): Levels[] {
  assert.ok(msg, 'no message');
  assert.ok(Array.isArray(msg.payload), 'payload is not an array');
  return msg.payload as Levels[];
}

describe('stream nodes: ipcam-input-monitor and ipcam-detection-stream', function () {
  let sim: Simulator;
  let sockets: SocketTracker | undefined;

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.unload();
    await helper.stopServer();
  });

  beforeEach(async function () {
    logs.clear();
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
  });

  afterEach(async function () {
    sinon.restore();
    sockets?.stop();
    sockets = undefined;
    await helper.unload();
    await sim.close();
  });

  /** Deploys the nodes and returns the messages each sends (by node id) and those the Catch node got. */
  async function deploy(nodes: FlowNode[], device: { settings?: Record<string, unknown>; password?: string; at?: { port: number } } = {}): Promise<{ out: Record<string, NodeMessage[]>; caught: NodeMessage[] }> {
    await helper.load(NODES, streamFlow(device.at ?? sim, nodes, device.settings), deviceCredentials(device.password ?? SIM_PASSWORD));
    const out: Record<string, NodeMessage[]> = {};
    for (const n of nodes) out[n.id] = collect(`out-${n.id}`);
    return { out, caught: collect('caught') };
  }

  function requestsTo(path: string): number {
    return sim.state.requests.filter((r) => r.path === path && r.auth !== 'rejected').length;
  }

  /** Monitor streams opened (the state reads after each connect are `check` requests). */
  function monitorRequests(path: string): number {
    return sim.state.requests.filter((r) => r.path === path && r.auth !== 'rejected' && r.query.some(([k]) => k === 'monitor')).length;
  }

  /** Sends `payload` to a node and waits until it has called done(); resolves with the error given to done, if any. */
  async function command(id: string, payload: unknown): Promise<unknown> {
    const node = getNode(id);
    const finished = new Promise<unknown>((resolve) => intercept(node, '_complete', (args) => resolve(args[1])));
    node.receive({ payload, _msgid: `cmd-${String(payload)}` });
    return finished;
  }

  function assertInputError(msg: NodeMessage | undefined, id: string): void {
    assert.ok(msg, 'nothing reached the Catch node');
    assert.ok(isRecord(msg['error']));
    assert.equal(msg['error']['code'], 'EINPUT');
    assert.ok(isRecord(msg['error']['source']));
    assert.equal(msg['error']['source']['id'], id);
    assert.ok(isRecord(msg['_error']), 'msg.error of the node is missing');
    assert.equal(msg['_error']['code'], 'EINPUT');
  }

  /** A deploy-time settings error: red ring, an EINPUT error, and nothing sent to the device. */
  async function assertRejectedSettings(id: string, message: RegExp): Promise<void> {
    const status = lastStatus(id);
    assert.deepEqual([status.fill, status.shape], ['red', 'ring']);
    assert.match(String(status.text), /^EINPUT: .{1,24}$/);
    const [error] = logOf(id).errors;
    // One line (a string) that carries its code, as a Catch node reads it.
    assert.ok(error instanceof String, 'no error line was reported');
    assert.equal(Object.getOwnPropertyDescriptor(error, 'code')?.value, 'EINPUT');
    assert.match(String(error), message);
    // Give a wrongly started stream every chance to reach the simulator (and until the test has ended).
    expectQuiet(sim, 'a request reached the device');
    await sleep(200);
    assert.equal(sim.state.requestCount, 0, 'a request reached the device');
    assert.equal(sim.state.io.openStreams, 0);
    assertShortTexts(id);
  }

  describe('ipcam-input-monitor', function () {
    it('emits { port, active, edge } for H, L, / and \\ lines with topic input<n>', async function () {
      sim.state.io.setInput(2, true);
      const { out } = await deploy([monitorDef('mon')]);
      const msgs = out['mon'] as NodeMessage[];
      await waitFor('the current states', () => msgs.length >= 2);
      sim.state.io.setInput(1, true);
      sim.state.io.setInput(2, false);
      await waitFor('two changes', () => msgs.length >= 4);
      assert.deepEqual(
        msgs.map((m) => [m.topic, m.payload]),
        [
          ['input1', { port: 1, active: false, edge: null }],
          ['input2', { port: 2, active: true, edge: null }],
          ['input1', { port: 1, active: true, edge: 'rising' }],
          ['input2', { port: 2, active: false, edge: 'falling' }],
        ],
      );
      const statuses = logOf('mon').statuses;
      assert.deepEqual(statuses[0], { fill: 'yellow', shape: 'ring', text: 'connecting' });
      assert.deepEqual(statuses[1], { fill: 'green', shape: 'dot', text: 'connected' });
      const last = lastStatus('mon');
      assert.deepEqual([last.fill, last.shape], ['green', 'dot']);
      assert.match(last.text ?? '', /^IO2 off \d\d:\d\d:\d\d$/);
      assertShortTexts('mon');
      const [req] = sim.state.requests.filter((r) => r.path === INPUT);
      assert.deepEqual(req?.query, [['monitor', '']]);
    });

    it('watches only the ports set', async function () {
      const { out } = await deploy([monitorDef('mon', { ports: '2' })]);
      const msgs = out['mon'] as NodeMessage[];
      await waitFor('the current state', () => msgs.length >= 1);
      sim.state.io.setInput(1, true);
      sim.state.io.setInput(2, true);
      await waitFor('the change of port 2', () => msgs.length >= 2);
      assert.deepEqual(
        msgs.map((m) => m.topic),
        ['input2', 'input2'],
      );
      assert.deepEqual(sim.state.requests.find((r) => r.path === INPUT)?.query, [['monitor', '2']]);
    });

    it("answers 'check' with the current state of each port", async function () {
      const { out } = await deploy([monitorDef('mon', { ports: '1,2' })]);
      const msgs = out['mon'] as NodeMessage[];
      await waitFor('the current states', () => msgs.length >= 2);
      sim.state.io.setInput(2, true);
      await waitFor('the change', () => msgs.length >= 3);
      msgs.length = 0;
      const err = await command('mon', 'check');
      assert.equal(err, undefined);
      await waitFor('the answer to check', () => msgs.length >= 2);
      assert.deepEqual(
        msgs.map((m) => [m.topic, m.payload, m._msgid]),
        [
          ['input1', { port: 1, active: false, edge: null }, 'cmd-check'],
          ['input2', { port: 2, active: true, edge: null }, 'cmd-check'],
        ],
      );
      assert.deepEqual(sim.state.requests.findLast((r) => r.query.some(([k]) => k === 'check'))?.query, [['check', '1,2']]);
    });

    it("'stop' closes the stream and 'start' opens it again", async function () {
      const { out } = await deploy([monitorDef('mon')]);
      const msgs = out['mon'] as NodeMessage[];
      await waitFor('the current states', () => msgs.length >= 2);

      assert.equal(await command('mon', 'stop'), undefined);
      assert.deepEqual(lastStatus('mon'), { fill: 'grey', shape: 'ring', text: 'stopped' });
      await waitFor('the simulator to see the stream closed', () => sim.state.io.openStreams === 0);
      // No stream: this change can reach no one.
      sim.state.io.setInput(1, true);
      assert.equal(msgs.length, 2);

      assert.equal(await command('mon', 'start'), undefined);
      // What changed while stopped, found when the stream opened again; port 2 did not change.
      await waitFor('the change found on start', () => msgs.length >= 3);
      sim.state.io.setInput(1, false);
      await waitFor('the change', () => msgs.length >= 4);
      expectQuiet(msgs, 'a message after the last change');
      await sleep(300);
      assert.deepEqual(
        msgs.map((m) => [m.payload, m['resync']]),
        [
          [{ port: 1, active: false, edge: null }, true],
          [{ port: 2, active: false, edge: null }, true],
          [{ port: 1, active: true, edge: 'rising' }, true],
          [{ port: 1, active: false, edge: 'falling' }, false],
        ],
      );
      assert.equal(monitorRequests(INPUT), 2);
      assertShortTexts('mon');
    });

    it('monitors output relays with kind output', async function () {
      const { out } = await deploy([monitorDef('mon', { kind: 'output', ports: '1' })]);
      const msgs = out['mon'] as NodeMessage[];
      await waitFor('the current state', () => msgs.length >= 1);
      sim.state.io.setOutput(1, true);
      sim.state.io.setOutput(2, true);
      sim.state.io.setOutput(1, false);
      await waitFor('two changes', () => msgs.length >= 3);
      assert.deepEqual(
        msgs.map((m) => [m.topic, m.payload]),
        [
          ['output1', { port: 1, active: false, edge: null }],
          ['output1', { port: 1, active: true, edge: 'rising' }],
          ['output1', { port: 1, active: false, edge: 'falling' }],
        ],
      );
      assert.equal(monitorRequests('/cgi-bin/admin/output'), 1);
      const before = msgs.length;
      assert.equal(await command('mon', 'check'), undefined);
      await waitFor('the answer to check', () => msgs.length > before);
      assert.deepEqual(msgs.slice(before).map((m) => [m.topic, m.payload]), [['output1', { port: 1, active: false, edge: null }]]);
    });

    it('rejects bad ports before sending anything', async function () {
      await deploy([monitorDef('mon', { ports: 'a,b' })]);
      await assertRejectedSettings('mon', /Ports \(each id\) must be a whole number from 1 to 999, got "a"/);
    });

    it('rejects an unknown Kind on deploy, naming the nearest, before sending anything', async function () {
      await deploy([monitorDef('mon', { kind: 'inputs' })]);
      await assertRejectedSettings('mon', /Kind must be one of input, output, got "inputs" \(nearest valid value: "input"\)/);
      assert.equal(lastStatus('mon').text, 'EINPUT: kind input?');
    });

    it('bad ports at deploy: every message then gets that EINPUT at the Catch node, nothing sent', async function () {
      const { out, caught } = await deploy([monitorDef('mon', { ports: 'a,b' })]);
      await assertRejectedSettings('mon', /Ports \(each id\) must be a whole number from 1 to 999, got "a"/);
      const shown = lastStatus('mon');
      for (const [i, payload] of ['start', 'check'].entries()) {
        assert.equal(await command('mon', payload), undefined);
        await waitFor('the Catch node', () => caught.length >= i + 1);
        assertInputError(caught[i], 'mon');
        assert.match(String(isRecord(caught[i]?.['error']) && caught[i]?.['error']['message']), /Ports \(each id\) must be a whole number/);
      }
      assert.deepEqual(lastStatus('mon'), shown);
      assert.equal(out['mon']?.length, 0);
    });

    it('rejects an unknown command with EINPUT at the Catch node', async function () {
      const { caught } = await deploy([monitorDef('mon')]);
      const err = await command('mon', 'toggle');
      // Reported through node.error (one line for the Debug sidebar, the code for a Catch node), not done(err).
      assert.equal(err, undefined);
      await waitFor('the Catch node', () => caught.length >= 1);
      assertInputError(caught[0], 'mon');
    });
  });

  describe('ipcam-input-monitor: quiet streams and lost edges', function () {
    /** The messages of a monitor as [topic, payload, resync]. */
    function seen(msgs: NodeMessage[]): unknown[] {
      return msgs.map((m) => [m.topic, m.payload, m['resync']]);
    }

    it('keeps a quiet stream as ONE connection for longer than every timeout (33 s)', async function () {
      this.timeout(60_000);
      const accepted = new SocketTracker();
      sockets = accepted;
      sim.state.io.style = { ...sim.state.io.style, quiet: true };
      // A 200 ms device timeout; the stall timeout streams had before was 30 s.
      const { out, caught } = await deploy([monitorDef('mon', { ports: '1,2' })], { settings: { timeout: '200' } });
      const msgs = out['mon'] as NodeMessage[];
      await waitFor('the first states', () => msgs.length >= 2);
      expectQuiet(sim, 'the stream was reopened', (r) => r.path === INPUT && r.query.some(([k]) => k === 'monitor'));
      await sleep(33_000);
      assert.equal(monitorRequests(INPUT), 1, 'the stream was reopened');
      assert.equal(accepted.acceptedOn(sim.port).filter((s) => !s.destroyed).length >= 1, true);
      assert.equal(sim.state.io.openStreams, 1);
      assert.ok(!statusTexts('mon').some((t) => t.startsWith('retry')), statusTexts('mon').join(', '));
      assert.deepEqual(caught, []);
      sim.state.io.setInput(1, true);
      await waitFor('the change', () => msgs.length >= 3);
      assert.deepEqual(seen(msgs), [
        ['input1', { port: 1, active: false, edge: null }, true],
        ['input2', { port: 2, active: false, edge: null }, true],
        ['input1', { port: 1, active: true, edge: 'rising' }, false],
      ]);
      assert.equal(monitorRequests(INPUT), 1);
    });

    for (const quiet of [false, true]) {
      const device = quiet ? 'a quiet device (the state read alone)' : 'a device that sends its states on connect (and the state read)';
      it(`reports the first states once, with edge null (${device})`, async function () {
        sim.state.io.style = { ...sim.state.io.style, quiet };
        sim.state.io.setInput(2, true);
        const { out } = await deploy([monitorDef('mon', { ports: '1,2' })]);
        const msgs = out['mon'] as NodeMessage[];
        await waitFor('the first states', () => msgs.length >= 2);
        expectQuiet(msgs, 'the first states reported twice');
        await sleep(500);
        assert.deepEqual(seen(msgs), [
          ['input1', { port: 1, active: false, edge: null }, true],
          ['input2', { port: 2, active: true, edge: null }, true],
        ]);
        const checks = sim.state.requests.filter((r) => r.path === INPUT && r.rawQuery === 'check=1%2C2');
        assert.equal(checks.length, 1, 'one state read on connect');
      });

      it(`after a reconnect reports what changed while down, nothing twice (${device})`, async function () {
        sim.state.io.style = { ...sim.state.io.style, quiet };
        const { out } = await deploy([monitorDef('mon', { ports: '1,2' })]);
        const msgs = out['mon'] as NodeMessage[];
        await waitFor('the first states', () => msgs.length >= 2);
        await sleep(300);
        sim.state.io.setInput(2, true);
        await waitFor('a live change', () => msgs.length >= 3);

        sim.state.io.streamFault('drop');
        await waitFor('the stream to be down', () => sim.state.io.openStreams === 0);
        // While down (the retry waits 1 s): input 1 pulses, input 2 falls and stays so.
        sim.state.io.setInput(1, true);
        sim.state.io.setInput(1, false);
        sim.state.io.setInput(2, false);
        await waitFor('the reconnect', () => monitorRequests(INPUT) === 2 && sim.state.io.openStreams === 1);
        await waitFor('the change found', () => msgs.length >= 4);
        await sleep(500);
        sim.state.io.setInput(1, true);
        await waitFor('a live change after', () => msgs.length >= 5);
        expectQuiet(msgs, 'a change reported twice');
        await sleep(300);
        assert.deepEqual(seen(msgs), [
          ['input1', { port: 1, active: false, edge: null }, true],
          ['input2', { port: 2, active: false, edge: null }, true],
          ['input2', { port: 2, active: true, edge: 'rising' }, false],
          // The pulse of input 1 ended where it began: no trace; input 2's fall is found.
          ['input2', { port: 2, active: false, edge: 'falling' }, true],
          ['input1', { port: 1, active: true, edge: 'rising' }, false],
        ]);
        assert.equal(sim.state.requests.filter((r) => r.path === INPUT && r.query.some(([k]) => k === 'check')).length, 2, 'a state read per connect');
      });
    }

    it('reads the ports it has seen when Ports is blank', async function () {
      const { out } = await deploy([monitorDef('mon')]);
      const msgs = out['mon'] as NodeMessage[];
      await waitFor('the first states', () => msgs.length >= 2);
      expectQuiet(msgs, 'nothing changed: nothing more');
      sim.state.io.streamFault('drop');
      await waitFor('the reconnect', () => monitorRequests(INPUT) === 2);
      await waitFor('the second state read', () => sim.state.requests.filter((r) => r.query.some(([k]) => k === 'check')).length === 2);
      const reads = sim.state.requests.filter((r) => r.query.some(([k]) => k === 'check')).map((r) => r.query);
      // The first read may go out before the device's state parts have come in.
      assert.ok([JSON.stringify([['check', '1']]), JSON.stringify([['check', '1,2']])].includes(JSON.stringify(reads[0])), JSON.stringify(reads));
      assert.deepEqual(reads[1], [['check', '1,2']]);
      await sleep(300);
      assert.equal(msgs.length, 2, 'nothing changed: nothing more');
    });

    it('gives nothing for state parts that repeat the known state', async function () {
      const { out } = await deploy([monitorDef('mon')]);
      const msgs = out['mon'] as NodeMessage[];
      await waitFor('the first states', () => msgs.length >= 2);
      sim.state.io.setInput(1, true);
      await waitFor('the change', () => msgs.length >= 3);
      const repeated = expectQuiet(msgs, 'a message for state parts that repeat the known state');
      for (let i = 0; i < 5; i++) sim.state.io.sendStates();
      await sleep(300);
      repeated.end();
      // A state part that differs from what was reported is a change found (a device that repeats its states).
      sim.state.io.inputs.set(2, true);
      sim.state.io.sendStates();
      await waitFor('the change found', () => msgs.length >= 4);
      expectQuiet(msgs, 'a change found reported twice');
      await sleep(300);
      assert.deepEqual(seen(msgs), [
        ['input1', { port: 1, active: false, edge: null }, true],
        ['input2', { port: 2, active: false, edge: null }, true],
        ['input1', { port: 1, active: true, edge: 'rising' }, false],
        ['input2', { port: 2, active: true, edge: 'rising' }, true],
      ]);
    });

    it('a failed state read reaches the Catch node once; the stream goes on', async function () {
      // A device without input 1: the monitor of all ports works, the read of port 1 is a 400.
      sim.state.io.inputs.delete(1);
      sim.state.io.style = { ...sim.state.io.style, quiet: true };
      const { out, caught } = await deploy([monitorDef('mon')]);
      const msgs = out['mon'] as NodeMessage[];
      await waitFor('the Catch node', () => caught.length >= 1);
      sim.state.io.streamFault('drop');
      await waitFor('the second state read', () => sim.state.requests.filter((r) => r.query.some(([k]) => k === 'check')).length === 2);
      expectQuiet(caught, 'the same failure is not reported twice', (m) => isRecord(m.payload) && m.payload['state'] === 'resync');
      await sleep(300);
      // The drop is a failure of its own (state retrying); the failed read is not reported twice.
      const reads = caught.filter((m) => isRecord(m.payload) && m.payload['state'] === 'resync');
      assert.equal(reads.length, 1, 'the same failure is not reported twice');
      const [msg] = reads;
      assert.ok(msg && isRecord(msg['_error']) && isRecord(msg.payload));
      assert.equal(msg['_error']['code'], 'EHTTP');
      assert.equal(msg.payload['state'], 'resync');
      sim.state.io.setInput(2, true);
      await waitFor('the change', () => msgs.length >= 1);
      assert.deepEqual(seen(msgs), [['input2', { port: 2, active: true, edge: 'rising' }, false]]);
    });
  });

  describe('stream failures reach a Catch node', function () {
    /** The codes of what the Catch node got, with the stream state in msg.payload. */
    function failures(caught: NodeMessage[]): unknown[] {
      return caught.map((m) => [isRecord(m['_error']) ? m['_error']['code'] : undefined, isRecord(m.payload) ? m.payload['state'] : undefined]);
    }

    it('a refused connection: once, not once per retry', async function () {
      this.timeout(20_000);
      const port = await closedPort();
      // Without a heartbeat the streams retry on their own (with one, they wait for it: test/device-health.test.ts).
      const { caught } = await deploy([monitorDef('mon'), detectionDef('det')], { at: { port }, settings: { heartbeat: '0' } });
      await waitFor('the second retry of both', () => statusTexts('mon').some((t) => t.startsWith('retry 2')) && statusTexts('det').some((t) => t.startsWith('retry 2')));
      expectQuiet(caught, 'a refused connection reported once per retry');
      await sleep(200);
      assert.deepEqual(failures(caught).sort(), [
        ['ECONN', 'retrying'],
        ['ECONN', 'retrying'],
      ]);
      for (const msg of caught) {
        assert.ok(isRecord(msg['error']) && isRecord(msg['error']['source']));
        assert.match(String(msg['error']['message']), /Connection refused/);
      }
      assert.deepEqual(caught.map((m) => (isRecord(m['error']) && isRecord(m['error']['source']) ? m['error']['source']['id'] : '')).sort(), ['det', 'mon']);
    });

    it("a refused password: once, however often 'start' tries again; 'start' tries at once", async function () {
      const { caught } = await deploy([monitorDef('mon')], { password: 'wrong' });
      await waitFor('auth failed', () => statusTexts('mon').includes('auth failed, 5 min'));
      const asked = sim.state.requests.filter((r) => r.path === INPUT).length;
      for (let i = 0; i < 3; i++) {
        const before = logOf('mon').statuses.filter((s) => s.text === 'auth failed, 5 min').length;
        assert.equal(await command('mon', 'start'), undefined);
        await waitFor(`auth failed after start ${i + 1}`, () => logOf('mon').statuses.filter((s) => s.text === 'auth failed, 5 min').length > before);
      }
      assert.ok(sim.state.requests.filter((r) => r.path === INPUT).length > asked, 'start asked the device again');
      expectQuiet(caught, 'a refused password reported again');
      await sleep(200);
      assert.deepEqual(failures(caught), [['EAUTH', 'auth-failed']]);
      // The password appears nowhere in what the Catch node got.
      assert.ok(!JSON.stringify(caught).includes('wrong'));
    });

    it("'start' after an auth failure connects at once when the device accepts again", async function () {
      sim.inject({ kind: 'status', status: 401, path: INPUT });
      const { out, caught } = await deploy([monitorDef('mon')]);
      await waitFor('auth failed', () => statusTexts('mon').includes('auth failed, 5 min'));
      sim.clearFaults();
      assert.equal(await command('mon', 'start'), undefined);
      await waitFor('connected', () => lastStatus('mon').text === 'connected' || (out['mon']?.length ?? 0) >= 2);
      await waitFor('the first states', () => (out['mon']?.length ?? 0) >= 2);
      assert.deepEqual(failures(caught), [['EAUTH', 'auth-failed']]);
    });

    it('a stream the device does not support: once', async function () {
      const { caught } = await deploy([monitorDef('mon', { kind: 'output', ports: '9' })]);
      await waitFor('not supported', () => statusTexts('mon').includes('not supported'));
      await waitFor('the Catch node', () => caught.length >= 1);
      assert.equal(await command('mon', 'start'), undefined);
      await waitFor('not supported again', () => statusTexts('mon').filter((t) => t === 'not supported').length >= 2);
      expectQuiet(caught, 'a stream the device does not support reported again');
      await sleep(200);
      assert.deepEqual(failures(caught), [['EHTTP', 'unsupported']]);
    });
  });

  describe('ipcam-detection-stream', function () {
    beforeEach(function () {
      sim.state.io.detectionInterval = 10;
    });

    it('emits every reading as an array with topic motion (emit every)', async function () {
      const { out } = await deploy([detectionDef('det')]);
      const msgs = out['det'] as NodeMessage[];
      await waitFor('three readings', () => msgs.length >= 3);
      for (const msg of msgs) {
        assert.equal(msg.topic, 'motion');
        assert.deepEqual(levelsOf(msg), [
          { group: 1, level: 0, threshold: 40, triggered: false },
          { group: 2, level: 0, threshold: 50, triggered: false },
        ]);
      }
      assert.deepEqual(logOf('det').statuses.slice(0, 2), [
        { fill: 'yellow', shape: 'ring', text: 'connecting' },
        { fill: 'green', shape: 'dot', text: 'connected' },
      ]);
      assert.match(lastStatus('det').text ?? '', /^level 0 \d\d:\d\d:\d\d$/);
      assertShortTexts('det');
    });

    it('reads audio levels of the groups set', async function () {
      sim.state.io.setLevel('audio', 1, 70);
      const { out } = await deploy([detectionDef('det', { detection: 'audio', groups: '1' })]);
      const msgs = out['det'] as NodeMessage[];
      await waitFor('a reading', () => msgs.length >= 1);
      assert.equal(msgs[0]?.topic, 'audio');
      assert.deepEqual(levelsOf(msgs[0]), [{ group: 1, level: 70, threshold: 60, triggered: true }]);
      assert.deepEqual(sim.state.requests.find((r) => r.path === DETECTION)?.query, [
        ['type', 'audio'],
        ['group', '1'],
      ]);
      const status = lastStatus('det').text ?? '';
      assert.match(status, CLOCK, `the last event with its time: "${status}"`);
      assertShortTexts('det');
    });

    it('emits only readings that changed (emit change, and with no Emit setting), beside an emit every witness', async function () {
      const { out } = await deploy([detectionDef('every'), detectionDef('change', { emit: 'change' }), detectionDef('unset', { emit: undefined })]);
      const every = out['every'] as NodeMessage[];
      const change = out['change'] as NodeMessage[];
      const unset = out['unset'] as NodeMessage[];
      /** Lets the device repeat the current reading a few times (seen by the witness). */
      const repeats = async (): Promise<void> => {
        const seen = every.length;
        await waitFor('repeated readings', () => every.length >= seen + 5);
      };
      await waitFor('the first reading', () => change.length >= 1 && unset.length >= 1);
      await repeats();
      sim.state.io.setLevel('motion', 1, 30);
      await waitFor('the changed reading', () => change.length >= 2);
      await repeats();
      sim.state.io.setLevel('motion', 1, 30);
      await repeats();
      sim.state.io.setLevel('motion', 2, 45, 40);
      await waitFor('the next change', () => change.length >= 3);
      await repeats();
      assert.deepEqual(
        change.map((m) => levelsOf(m).map((l) => [l.level, l.threshold])),
        [
          [
            [0, 40],
            [0, 50],
          ],
          [
            [30, 40],
            [0, 50],
          ],
          [
            [30, 40],
            [45, 40],
          ],
        ],
      );
      assert.ok(every.length >= 20);
      assert.ok(change.every((m) => m.topic === 'motion'));
      await waitFor('the changes without the setting', () => unset.length >= 3);
      assert.deepEqual(unset.map(levelsOf), change.map(levelsOf), 'a node without the setting emits on change');
    });

    it('emits only when a group crosses its threshold (emit trigger)', async function () {
      const { out } = await deploy([detectionDef('every'), detectionDef('trigger', { emit: 'trigger' })]);
      const every = out['every'] as NodeMessage[];
      const trigger = out['trigger'] as NodeMessage[];
      const repeats = async (): Promise<void> => {
        const seen = every.length;
        await waitFor('repeated readings', () => every.length >= seen + 5);
      };
      await repeats();
      assert.equal(trigger.length, 0, 'nothing is triggered at first');
      sim.state.io.setLevel('motion', 1, 50);
      await waitFor('the trigger', () => trigger.length >= 1);
      await repeats();
      sim.state.io.setLevel('motion', 1, 60);
      await repeats();
      sim.state.io.setLevel('motion', 1, 10);
      await waitFor('the release', () => trigger.length >= 2);
      await repeats();
      assert.deepEqual(
        trigger.map((m) => levelsOf(m).map((l) => [l.group, l.level, l.triggered])),
        [
          [
            [1, 50, true],
            [2, 0, false],
          ],
          [
            [1, 10, false],
            [2, 0, false],
          ],
        ],
      );
      const status = statusTexts('trigger').find((t) => t.includes('50'));
      assert.ok(status, 'the trigger shows in the status');
      assert.match(status, CLOCK, `the last event with its time: "${status}"`);
      assertShortTexts('trigger');
    });

    it('answers one reading per input in mode single', async function () {
      const { out } = await deploy([detectionDef('det', { mode: 'single', groups: '2' })]);
      const msgs = out['det'] as NodeMessage[];
      assert.equal(requestsTo(DETECTION), 0, 'mode single opens no stream');
      for (let i = 1; i <= 3; i++) {
        sim.state.io.setLevel('motion', 2, 10 * i);
        assert.equal(await command('det', 'read'), undefined);
        await waitFor(`reading ${i}`, () => msgs.length >= i);
        assert.equal(msgs.length, i);
        assert.equal(msgs[i - 1]?.topic, 'motion');
        assert.deepEqual(levelsOf(msgs[i - 1]), [{ group: 2, level: 10 * i, threshold: 50, triggered: false }]);
      }
      assert.equal(requestsTo(DETECTION), 3);
      assert.equal(sim.state.io.openStreams, 0);
      for (const req of sim.state.requests.filter((r) => r.path === DETECTION)) {
        assert.deepEqual(req.query, [
          ['type', 'motion'],
          ['group', '2'],
          ['mode', 'single'],
        ]);
      }
      assert.deepEqual([lastStatus('det').fill, lastStatus('det').shape], ['green', 'dot']);
      assertShortTexts('det');
    });

    it("'stop' and 'start' close and reopen the stream", async function () {
      const { out } = await deploy([detectionDef('det')]);
      const msgs = out['det'] as NodeMessage[];
      await waitFor('a reading', () => msgs.length >= 1);
      assert.equal(await command('det', 'stop'), undefined);
      await waitFor('the simulator to see the stream closed', () => sim.state.io.openStreams === 0);
      const count = msgs.length;
      sim.state.io.setLevel('motion', 1, 5);
      assert.equal(msgs.length, count);
      assert.equal(await command('det', 'start'), undefined);
      await waitFor('a reading after start', () => msgs.some((m) => levelsOf(m)[0]?.level === 5));
      assert.equal(requestsTo(DETECTION), 2);
    });

    it('rejects an unknown emit setting before sending anything', async function () {
      await deploy([detectionDef('det', { emit: 'sometimes' })]);
      await assertRejectedSettings('det', /emit/);
    });

    it('rejects bad groups before sending anything', async function () {
      await deploy([detectionDef('det', { groups: 'a,b' })]);
      await assertRejectedSettings('det', /Groups \(each id\) must be a whole number from 1 to 999/);
    });

    it("a stream refused at deploy names the setting and the nearest valid value; 'start' and every other message then get that EINPUT, nothing sent", async function () {
      const { out, caught } = await deploy([detectionDef('det', { emit: 'chnage' })]);
      const red = { fill: 'red', shape: 'ring', text: 'EINPUT: emit change?' };
      assert.deepEqual(logOf('det').statuses, [red], 'the status at deploy, before any message');
      await assertRejectedSettings('det', /Emit must be one of every, change, trigger, got "chnage" \(nearest valid value: "change"\); nothing is sent until the setting emit "chnage" is changed and deployed/);
      for (const [i, payload] of ['start', 'stop', 'check'].entries()) {
        assert.equal(await command('det', payload), undefined);
        await waitFor('the Catch node', () => caught.length >= i + 1);
        assertInputError(caught[i], 'det');
        const error = caught[i]?.['error'];
        assert.ok(isRecord(error));
        assert.match(String(error['message']), /nearest valid value: "change"/);
      }
      assert.deepEqual(lastStatus('det'), red);
      assert.equal(out['det']?.length, 0);
      assert.equal(logOf('det').errors.length, 1 + 3, 'the refusal once at deploy, then once per message');
    });

    it('rejects bad groups in mode single at deploy: a red status naming Groups at once, then EINPUT at the Catch node for every message, nothing sent', async function () {
      const { out, caught } = await deploy([detectionDef('det', { mode: 'single', groups: 'x' })]);
      const quiet = expectQuiet(sim, 'a request reached the device');
      // Before any message: the status names the setting.
      assert.deepEqual(logOf('det').statuses, [{ fill: 'red', shape: 'ring', text: 'EINPUT: Groups (each id) must b\u2026' }]);
      for (const [i, payload] of ['read', 'again'].entries()) {
        const err = await command('det', payload);
        // Reported through node.error (one line for the Debug sidebar, the code for a Catch node), not done(err).
        assert.equal(err, undefined);
        await waitFor('the Catch node', () => caught.length >= i + 1);
        assertInputError(caught[i], 'det');
        const error = caught[i]?.['error'];
        assert.ok(isRecord(error));
        assert.match(String(error['message']), /Groups \(each id\) must be a whole number from 1 to 999, got "x"; nothing is sent until the setting groups "x" is changed and deployed/);
      }
      assert.equal(new Set(logOf('det').statuses.map((s) => JSON.stringify(s))).size, 1, 'the same refusal every time');
      assert.equal(out['det']?.length, 0);
      await sleep(100);
      quiet.end();
      assert.equal(sim.state.requestCount, 0);
    });

    it('rejects an unknown detection in mode single at deploy, naming the nearest valid value; a message gets that EINPUT, nothing sent', async function () {
      const { out, caught } = await deploy([detectionDef('det', { mode: 'single', detection: 'moton' })]);
      const quiet = expectQuiet(sim, 'a request reached the device');
      const red = { fill: 'red', shape: 'ring', text: 'EINPUT: detection motion?' };
      assert.deepEqual(logOf('det').statuses, [red], 'the status at deploy, before any message');
      assert.equal(await command('det', 'read'), undefined);
      await waitFor('the Catch node', () => caught.length >= 1);
      assertInputError(caught[0], 'det');
      const error = caught[0]?.['error'];
      assert.ok(isRecord(error));
      assert.match(String(error['message']), /Detection must be one of motion, audio, got "moton" \(nearest valid value: "motion"\)/);
      assert.deepEqual(lastStatus('det'), red);
      assert.equal(out['det']?.length, 0);
      await sleep(100);
      quiet.end();
    });

    it('mode single reads with the defaults of settings absent from an older flow, and has no use for Emit (a stale one does not stop it)', async function () {
      const { out } = await deploy([{ id: 'det', type: 'ipcam-detection-stream', name: '', device: DEVICE, mode: 'single', emit: 'sometimes' }]);
      sim.state.io.setLevel('motion', 1, 30);
      assert.equal(await command('det', 'read'), undefined);
      await waitFor('a reading', () => (out['det']?.length ?? 0) >= 1);
      assert.equal(out['det']?.[0]?.topic, 'motion');
      assert.ok(levelsOf(out['det']?.[0]).some((l) => l.group === 1 && l.level === 30));
      assert.ok(!logOf('det').statuses.some((s) => s.fill === 'red'), JSON.stringify(logOf('det').statuses));
    });

    it('rejects an unknown command with EINPUT at the Catch node', async function () {
      const { caught } = await deploy([detectionDef('det')]);
      const err = await command('det', 'check');
      // Reported through node.error (one line for the Debug sidebar, the code for a Catch node), not done(err).
      assert.equal(err, undefined);
      await waitFor('the Catch node', () => caught.length >= 1);
      assertInputError(caught[0], 'det');
    });
  });

  describe('status', function () {
    it('shows retry, auth failed and not supported in short texts', async function () {
      sim.inject({ kind: 'status', status: 503, path: INPUT });
      sim.inject({ kind: 'status', status: 401, path: DETECTION });
      await deploy([monitorDef('retry', { ports: '1' }), detectionDef('auth'), monitorDef('unsupported', { kind: 'output', ports: '9' }), monitorDef('ok', { kind: 'output' })]);
      const shows = (id: string, status: NodeStatus): boolean => logOf(id).statuses.some((s) => JSON.stringify(s) === JSON.stringify(status));
      // When the next try is (a clock time), not a wait that never counts down.
      await waitFor('retry', () => logOf('retry').statuses.some((s) => s.fill === 'yellow' && s.shape === 'ring' && /^retry 1 at \d\d:\d\d:\d\d$/.test(s.text ?? '')));
      await waitFor('auth failed', () => shows('auth', { fill: 'red', shape: 'ring', text: 'auth failed, 5 min' }));
      await waitFor('not supported', () => shows('unsupported', { fill: 'red', shape: 'ring', text: 'not supported' }));
      await waitFor('the last event', () => /^IO2 off \d\d:\d\d:\d\d$/.test(lastStatus('ok').text ?? ''));
      assert.ok(statusTexts('ok').includes('connected'));
      for (const id of ['retry', 'auth', 'unsupported', 'ok']) assertShortTexts(id);
      expectQuiet(sim, 'not supported: no retry', (r) => r.rawQuery === 'monitor=9');
      await sleep(200);
      assert.equal(sim.state.requests.filter((r) => r.rawQuery === 'monitor=9').length, 1, 'not supported: no retry');
    });

    it('clears the status when the flow stops', async function () {
      await deploy([monitorDef('mon')]);
      await waitFor('connected', () => statusTexts('mon').includes('connected'));
      await helper.unload();
      assert.deepEqual(lastStatus('mon'), {});
    });
  });

  describe('deploy and stop', function () {
    it('a flow of 20 stream nodes 200 times leaves no socket, timer or listener behind', async function () {
      this.timeout(300_000);
      sim.state.io.detectionInterval = 200;
      const nodes: FlowNode[] = [];
      for (let i = 0; i < 10; i++) nodes.push(monitorDef(`mon${i}`, { kind: i % 2 === 0 ? 'input' : 'output', ports: i % 3 === 0 ? '1' : '' }));
      for (let i = 0; i < 10; i++) nodes.push(detectionDef(`det${i}`, { detection: i % 2 === 0 ? 'motion' : 'audio', emit: ['every', 'change', 'trigger'][i % 3] }));
      const flow = streamFlow(sim, nodes);
      const credentials = deviceCredentials(SIM_PASSWORD);
      const server = simServer(sim);
      const listeners = (): string =>
        JSON.stringify({
          process: process.eventNames().map((n) => [String(n), process.listenerCount(n)]),
          server: server.eventNames().map((n) => [String(n), server.listenerCount(n)]),
        });
      const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

      const tracker = (sockets = new SocketTracker());
      // One round first, so that whatever Node-RED creates once is there before counting.
      await helper.load(NODES, flow, credentials);
      await waitFor('20 streams', () => sim.state.io.openStreams === 20);
      await helper.unload();
      await waitFor('no stream', () => sim.state.io.openStreams === 0);
      await tracker.acceptedClosed(sim.port);
      // The input monitors' state reads go on the device's pool: a connection it was still opening
      // when the device node closed reaches the simulator a moment later, and closes then.
      for (const end = Date.now() + 15_000; (await connectionsOf(server)) > 0 && Date.now() < end; ) await sleep(5);
      await tracker.acceptedClosed(sim.port);
      const before = { handles: activeHandles().map(handleName).sort(), timers: timers(), listeners: listeners() };

      for (let round = 0; round < 200; round++) {
        await helper.load(NODES, flow, credentials);
        // Every tenth round runs until each node is connected; the others stop while connecting.
        if (round % 10 === 0) await waitFor(`20 streams in round ${round}`, () => sim.state.io.openStreams === 20);
        await helper.unload();
        // No connection is left; one still being set up when the device node destroyed its client is
        // closed by undici as soon as the connect completes (see the report).
        const left = tracker.openClientsTo(sim.port);
        assert.ok(
          left.every((s) => s.connecting),
          `round ${round}: a connected socket to the device is still open after unload`,
        );
        // (Not events.once: undici destroys such a socket with an error, which would reject it.)
        await Promise.all(left.map((s) => (s.destroyed ? undefined : new Promise((resolve) => s.once('close', resolve)))));
      }

      await waitFor('the simulator to close every stream', () => sim.state.io.openStreams === 0);
      // The simulator may still be accepting the last connections undici gave up: let it see their end.
      let connections = await connectionsOf(server);
      for (const end = Date.now() + 15_000; connections > 0 && Date.now() < end; connections = await connectionsOf(server)) await sleep(5);
      assert.equal(connections, 0, 'the simulator still holds a connection');
      await tracker.acceptedClosed(sim.port);
      await waitFor('the handles to come back', () => activeHandles().length === before.handles.length);
      assert.deepEqual(activeHandles().map(handleName).sort(), before.handles);
      assert.equal(timers(), before.timers, 'a timer is left');
      assert.equal(listeners(), before.listeners, 'a listener is left');
      assert.ok(tracker.clientsTo(sim.port).length >= 20 * 20, 'the connected rounds opened a connection per node');
      assert.equal(sim.state.io.openStreams, 0);
    });
  });
});
