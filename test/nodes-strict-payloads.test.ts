/**
 * Issue 24, items 1 and 2, through the nodes against the simulator: a misspelt key, action or
 * word never moves a gate or a camera (EINPUT naming it and the nearest known one, nothing in the
 * simulator's request log), and every refusal says why: the status (code and reason, at most 32
 * characters), one line to node.error that keeps its code for a Catch node, and a device's error
 * naming the device node and host, never the password. A plate event wired into a relay runs it
 * with Overrides `none`, and is EINPUT with `payload`.
 */
import { strict as assert } from 'node:assert';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { startSimulator, type Simulator } from '../lib/simulator';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import eventServerNode from '../nodes/ipcam-event-server/ipcam-event-server';
import plateAddNode from '../nodes/ipcam-plate-add/ipcam-plate-add';
import plateEventNode from '../nodes/ipcam-plate-event/ipcam-plate-event';
import ptzNode from '../nodes/ipcam-ptz/ipcam-ptz';
import relayNode from '../nodes/ipcam-relay/ipcam-relay';
import requestNode from '../nodes/ipcam-request/ipcam-request';
import snapshotNode from '../nodes/ipcam-snapshot/ipcam-snapshot';
import vehicleConfigNode from '../nodes/ipcam-vehicle-config/ipcam-vehicle-config';
import type { NodeMessage } from '../nodes/red';
import { SIM_PASSWORD, SIM_USER, waitFor } from './helpers';
import { DEVICE, FlowWatch, TAB, actionFlow, assertNoSecret, deviceCredentials, deviceDef, getNode, helper, isRecord, type FlowNode } from './node-helper';

const NODES = [deviceNode, relayNode, ptzNode, plateAddNode, snapshotNode, requestNode, vehicleConfigNode];
const ID = 'act1';
const OUTPUT = '/cgi-bin/admin/output';

interface Mistake {
  what: string;
  node: FlowNode;
  payload: unknown;
  /** In the error message. */
  message: RegExp;
  /** The whole status text. */
  status: string;
}

const relay = (settings: Record<string, unknown> = {}): FlowNode => ({ id: ID, type: 'ipcam-relay', name: '', device: DEVICE, output: '1', mode: 'on', pulse: '1000', sequence: '', ...settings });
const ptz = (settings: Record<string, unknown> = {}): FlowNode => ({ id: ID, type: 'ipcam-ptz', name: '', device: DEVICE, api: 'xml', action: 'Left', speed: '4', duration: '0', channel: '1', ...settings });

const MISTAKES: Mistake[] = [
  { what: 'relay Mode on, { stat: off }', node: relay(), payload: { stat: 'off' }, message: /unknown key "stat" \(did you mean "state"\?\).*Overrides/, status: "EINPUT: key 'stat'" },
  { what: 'relay { state: off, outptu: 2 }', node: relay(), payload: { state: 'off', outptu: 2 }, message: /unknown key "outptu" \(did you mean "output"\?\)/, status: "EINPUT: key 'outptu'" },
  { what: "relay short form 'of'", node: relay(), payload: 'of', message: /"of" \(did you mean "off"\?\) is not a relay command/, status: 'EINPUT: payload "of"' },
  { what: "a default Inject's timestamp into a relay", node: relay(), payload: 1732456789012, message: /Relay payload 1732456789012 is not a relay command: use true \/ false.*set its Overrides to none; nothing was sent$/, status: 'EINPUT: payload 1732456789012' },
  { what: "a text payload into a relay (an MQTT message meant for something else)", node: relay(), payload: 'motion', message: /Relay payload "motion" is not a relay command.*set its Overrides to none/, status: 'EINPUT: payload "motion"' },
  { what: 'PTZ Action Left, { acton: Right }', node: ptz(), payload: { acton: 'Right' }, message: /unknown key "acton" \(did you mean "action"\?\)/, status: "EINPUT: key 'acton'" },
  { what: 'PTZ { action: Right, duraton: 500 }', node: ptz(), payload: { action: 'Right', duraton: 500 }, message: /unknown key "duraton" \(did you mean "duration"\?\)/, status: "EINPUT: key 'duraton'" },
  { what: "PTZ short form 'left' on XML (a slip: its word offered, no Overrides hint)", node: ptz({ action: 'Stop' }), payload: 'left', message: /Unknown PTZ action "left" \(did you mean "Left"\?\): use [^;]*; nothing was sent$/, status: "EINPUT: PTZ action 'left'" },
  { what: 'a text payload that is no PTZ action (an Inject\'s string)', node: ptz(), payload: 'hello', message: /Unknown PTZ action "hello": use .*set its Overrides to none; nothing was sent$/, status: "EINPUT: PTZ action 'hello'" },
  { what: "PTZ { action: 'right' } on XML", node: ptz(), payload: { action: 'right' }, message: /\(did you mean "Right"\?\)/, status: "EINPUT: PTZ action 'right'" },
  {
    what: 'plate-add [{ plate, gruop }]',
    node: { id: ID, type: 'ipcam-plate-add', name: '', device: DEVICE, group: '1', upsert: false },
    payload: [{ plate: 'KEY123', gruop: '2' }],
    message: /unknown key "gruop" \(did you mean "group"\?\)/,
    status: "EINPUT: key 'gruop'",
  },
  { what: 'snapshot { sorce: cgi }', node: { id: ID, type: 'ipcam-snapshot', name: '', device: DEVICE, source: 'jpg', channel: '', format: 'buffer' }, payload: { sorce: 'cgi' }, message: /unknown key "sorce" \(did you mean "source"\?\)/, status: "EINPUT: key 'sorce'" },
  { what: 'vehicle-config { enabeld: true }', node: { id: ID, type: 'ipcam-vehicle-config', name: '', device: DEVICE, channel: '' }, payload: { enabeld: true }, message: /unknown key "enabeld" \(did you mean "enabled"\?\)/, status: "EINPUT: key 'enabeld'" },
  {
    what: 'request set to msg, { operation: getdeviceinfo }',
    node: { id: ID, type: 'ipcam-request', name: '', device: DEVICE, operation: 'msg', params: {} },
    payload: { operation: 'getdeviceinfo' },
    message: /\(did you mean "getDeviceInfo"\?\)/,
    status: 'EINPUT: operation "getdeviceinf\u2026',
  },
  { what: 'a bad Overrides setting', node: relay({ overrides: 'sometimes' }), payload: true, message: /Overrides must be one of payload, none/, status: 'EINPUT: Overrides must be one o\u2026' },
];

/** The argument of each node.error call of `id` (the one line a Debug sidebar shows). */
function errorLines(w: FlowWatch): unknown[] {
  // errors() gives every argument of each call: node.error(line, msg) brings the msg too.
  return w.errors().filter((arg) => typeof arg === 'string' || arg instanceof String);
}

describe('strict payloads and refusals that say why (nodes against the simulator)', function () {
  let sim: Simulator | undefined;

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.stopServer();
  });

  afterEach(async function () {
    await helper.unload();
    await sim?.close();
    sim = undefined;
  });

  async function deploy(node: FlowNode, device: Record<string, unknown> = {}, password = SIM_PASSWORD): Promise<FlowWatch> {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
    await helper.load(NODES, actionFlow(node, [deviceDef(sim, { auth: 'basic', ...device })]), deviceCredentials(password));
    return new FlowWatch([node.id, DEVICE]);
  }

  function assertOneLine(w: FlowWatch, code: string, pattern: RegExp): void {
    const lines = errorLines(w);
    assert.equal(lines.length, 1, 'one node.error per failure');
    const [line] = lines;
    assert.ok(typeof line === 'string' || line instanceof String, `node.error got ${typeof line}, not a text: the Debug sidebar would show an object`);
    const text = String(line);
    assert.doesNotMatch(text, /[\r\n]/, 'one line');
    assert.ok(text.startsWith(`${code}: `), text);
    assert.match(text, pattern);
  }

  describe('every mistake of the issue is EINPUT with the key and the suggestion, nothing sent', function () {
    for (const m of MISTAKES) {
      it(m.what, async function () {
        const w = await deploy(m.node);
        const before = sim?.state.plates.size;
        const caught = await w.expectCaught(ID, { _msgid: 'bad', payload: m.payload });
        // Catch node: Node-RED's msg.error keeps the code; ours in msg._error.
        assert.ok(isRecord(caught['error']) && isRecord(caught['_error']));
        assert.equal(caught['error']['code'], 'EINPUT');
        assert.equal(caught['_error']['code'], 'EINPUT');
        assert.match(String(caught['_error']['message']), m.message);
        // The status: the reason, at most 32 characters.
        const status = w.lastStatus(ID);
        assert.deepEqual([status.fill, status.shape, status.text], ['red', 'ring', m.status]);
        assert.ok(String(status.text).length <= 32);
        assertOneLine(w, 'EINPUT', m.message);
        // Nothing reached the simulator: not the relay, not the camera, not the plate list.
        assert.deepEqual(sim?.state.requests.map((r) => r.path), []);
        assert.deepEqual(sim?.state.io.relayLog, []);
        assert.equal(sim?.state.ptz.log.length, 0);
        assert.equal(sim?.state.plates.size, before);
        assert.equal(sim?.state.plates.get('KEY123', '1'), undefined);
      });
    }
  });

  it('a wrong password names the device node and its host, never the password; status EAUTH: <name>', async function () {
    const w = await deploy({ id: ID, type: 'ipcam-snapshot', name: '', device: DEVICE, source: 'jpg', channel: '', format: 'buffer' }, { name: 'Front gate cam' }, 'not-the-Pw0rd-7731');
    const caught = await w.expectCaught(ID, { payload: 'go' });
    assert.ok(isRecord(caught['error']) && isRecord(caught['_error']));
    assert.equal(caught['error']['code'], 'EAUTH');
    assert.match(String(caught['_error']['message']), /^'Front gate cam' \(127\.0\.0\.1\): /);
    assert.deepEqual(w.lastStatus(ID), { fill: 'red', shape: 'ring', text: 'EAUTH: Front gate cam' });
    assertOneLine(w, 'EAUTH', /^EAUTH: 'Front gate cam' \(127\.0\.0\.1\): /);
    assertNoSecret(w.texts(), 'not-the-Pw0rd-7731');
  });

  it('a long device name is cut with an ellipsis at 32 characters in the status', async function () {
    const w = await deploy({ id: ID, type: 'ipcam-snapshot', name: '', device: DEVICE, source: 'jpg', channel: '', format: 'buffer' }, { name: 'North car park entrance barrier camera' }, 'wrong-password-1');
    await w.expectCaught(ID, { payload: 'go' });
    const text = String(w.lastStatus(ID).text);
    assert.ok(text.length <= 32);
    assert.equal(text, 'EAUTH: North car park entrance\u2026');
  });

  it('a PTZ action spelt exactly still moves, and an object without unknown keys still commands', async function () {
    const w = await deploy(ptz({ action: 'Stop' }));
    await w.expectOutput(ID, { payload: { action: 'Right', duration: 200 } });
    await waitFor('the Stop after 200 ms', () => (sim?.state.ptz.log ?? []).some((c) => c.action === 'Stop'), 3000);
    assert.deepEqual(
      sim?.state.ptz.log.map((c) => c.action),
      ['Right', 'Stop'],
    );
  });

  it('overrides none: any payload runs the node as set and is never read', async function () {
    const w = await deploy(relay({ mode: 'pulse', pulse: '300', overrides: 'none' }));
    for (const payload of [{ stat: 'off' }, 'of', 1732456789012, { plate: 'ABC123' }]) {
      const msg = await w.expectOutput(ID, { payload });
      assert.deepEqual(msg.payload, { output: 1, active: false, pulse: 300 });
    }
    assert.deepEqual(
      sim?.state.requests.filter((r) => r.path === OUTPUT).map((r) => decodeURIComponent(r.rawQuery)),
      Array(4).fill('action=1:/300\\'),
    );
  });

  describe('a plate event wired straight into a relay', function () {
    async function freePort(): Promise<number> {
      const probe = createServer().listen(0, '127.0.0.1');
      await once(probe, 'listening');
      const address = probe.address();
      probe.close();
      await once(probe, 'close');
      assert.ok(address !== null && typeof address === 'object');
      return address.port;
    }

    async function deployGate(overrides: 'none' | 'payload'): Promise<{ w: FlowWatch; port: number }> {
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
      const port = await freePort();
      const flow: FlowNode[] = [
        ...actionFlow(relay({ mode: 'pulse', pulse: '1000', overrides }), [deviceDef(sim, { auth: 'basic' })]),
        { id: 'srv', type: 'ipcam-event-server', name: 'events', port: String(port), bind: '127.0.0.1', path: '/', maxBody: '', allow: '' },
        { id: 'plates', type: 'ipcam-plate-event', z: TAB, x: 100, y: 300, name: '', server: 'srv', device: '', match: '', lists: [], groups: '', dedup: '0', images: 'none', wires: [[ID], []] },
      ];
      await helper.load([...NODES, eventServerNode, plateEventNode], flow, deviceCredentials(SIM_PASSWORD));
      return { w: new FlowWatch([ID, DEVICE]), port };
    }

    async function postPlate(port: number): Promise<NodeMessage> {
      const outcome = new Promise<NodeMessage>((resolve) => {
        for (const id of ['out', 'caught']) getNode(id).on('input', (msg: NodeMessage) => resolve(msg));
      });
      const results = await sim?.postEvent({ url: `http://127.0.0.1:${port}/`, plate: 'KEY123', listType: 'whiteList', images: false });
      assert.deepEqual(results, [{ status: 200 }]);
      return outcome;
    }

    it('overrides none: the relay pulses', async function () {
      const { port } = await deployGate('none');
      const msg = await postPlate(port);
      assert.deepEqual(msg.payload, { output: 1, active: false, pulse: 1000 });
      assert.deepEqual(
        sim?.state.requests.filter((r) => r.path === OUTPUT).map((r) => decodeURIComponent(r.rawQuery)),
        ['action=1:/1000\\'],
      );
    });

    it('overrides payload: EINPUT naming the relay keys and Overrides, nothing sent', async function () {
      const { w, port } = await deployGate('payload');
      const msg = await postPlate(port);
      assert.ok(isRecord(msg['_error']));
      assert.equal(msg['_error']['code'], 'EINPUT');
      assert.match(String(msg['_error']['message']), /none of this node's keys \(output, state, pulse, sequence\) but "plate"/);
      assert.match(String(msg['_error']['message']), /Overrides to none/);
      assert.deepEqual(w.lastStatus(ID), { fill: 'red', shape: 'ring', text: 'EINPUT: no key of this node' });
      assert.deepEqual(sim?.state.requests.filter((r) => r.path === OUTPUT), []);
    });
  });
});
