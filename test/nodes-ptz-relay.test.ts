import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import sinon from 'sinon';
import { startSimulator, type PtzCommand, type RecordedRequest, type Simulator } from '../lib/simulator';
import { parseXml } from '../lib/xml/codec';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import ptzNode from '../nodes/ipcam-ptz/ipcam-ptz';
import { REQUESTING_AFTER_MS } from '../nodes/action';
import relayNode from '../nodes/ipcam-relay/ipcam-relay';
import type { NodeMessage } from '../nodes/red';
import { expectQuiet, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';
import { ACCEPTED_RELAY_STRINGS, REJECTED_RELAY_PAYLOADS } from './relay-payloads';
import { DEVICE, FlowWatch, TAB, actionFlow, assertNoSecret, deviceCredentials, deviceDef, getNode, helper, intercept, isRecord, type FlowNode } from './node-helper';

const NODES = [deviceNode, ptzNode, relayNode];
const PTZ = 'ptz1';
const RELAY = 'relay1';
const NS = 'http://www.ipc.com/ver10';
const PTZSET = '/cgi-bin/operator/ptzset';
const PTZCONFIG = '/cgi-bin/operator/ptzconfig';
const OUTPUT = '/cgi-bin/admin/output';
/** What `msg.error` may hold (design: { message, code, status?, deviceCode?, deviceDesc? }). */
const ERROR_KEYS = new Set(['message', 'code', 'status', 'deviceCode', 'deviceDesc']);

/** Settings as the editor stores them (defaults of the .html files). */
function ptzDef(settings: Record<string, unknown> = {}): FlowNode {
  return { id: PTZ, type: 'ipcam-ptz', name: '', device: DEVICE, api: 'xml', action: 'Stop', speed: '4', duration: '0', channel: '1', ...settings };
}

function relayDef(settings: Record<string, unknown> = {}): FlowNode {
  return { id: RELAY, type: 'ipcam-relay', name: '', device: DEVICE, output: '1', mode: 'on', pulse: '1000', sequence: '', ...settings };
}

/** The speed of an `actionInfo` request body, with root, version and namespace checked. */
function speedOf(req: RecordedRequest | undefined): number {
  assert.ok(req, 'the request did not reach the simulator');
  const root = parseXml(req.body);
  assert.equal(root.name, 'actionInfo');
  assert.equal(root.attrs['version'], '1.0');
  assert.equal(root.attrs['xmlns'], NS);
  assert.deepEqual(
    root.children.map((c) => c.name),
    ['speed'],
  );
  return Number(root.children[0]?.text);
}

/** The node's own error object as a Catch node sees it (`msg._error`). */
function msgError(msg: NodeMessage): unknown {
  return msg['_error'];
}

describe('ipcam-ptz and ipcam-relay nodes', function () {
  let sim: Simulator | undefined;

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.unload();
    await helper.stopServer();
  });

  afterEach(async function () {
    sinon.restore();
    await helper.unload();
    await sim?.close();
    sim = undefined;
  });

  function theSim(): Simulator {
    assert.ok(sim, 'no simulator');
    return sim;
  }

  /** Starts the simulator, deploys device + the node + Catch, and watches the node. */
  async function deploy(node: FlowNode, auth: 'basic' | 'digest' = 'basic'): Promise<FlowWatch> {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth });
    await helper.load(NODES, actionFlow(node, [deviceDef(sim, { auth: auth === 'basic' ? 'basic' : 'auto' })]), deviceCredentials(SIM_PASSWORD));
    return new FlowWatch([node.id, DEVICE]);
  }

  function requests(path?: string): RecordedRequest[] {
    return theSim().state.requests.filter((r) => r.auth !== 'rejected' && (path === undefined || r.path === path));
  }

  function targets(): string[] {
    return requests().map((r) => (r.rawQuery === '' ? `${r.method} ${r.path}` : `${r.method} ${r.path}?${r.rawQuery}`));
  }

  function stops(channel?: number): PtzCommand[] {
    return theSim().state.ptz.log.filter((c) => c.action === 'Stop' && (channel === undefined || c.channel === channel));
  }

  /**
   * A request ends, on success, with a dot of `fill` (green: working); a fast one shows no yellow
   * ring on its way there (only one slower than REQUESTING_AFTER_MS does, see below).
   */
  function assertGreen(w: FlowWatch, id: string, fill: 'green' | 'grey' = 'green', text?: string): void {
    assert.ok(w.statuses(id).length > 0, 'no status was set');
    const status = w.lastStatus(id);
    assert.deepEqual([status.fill, status.shape], [fill, 'dot'], `status ${JSON.stringify(status)}`);
    assert.ok(typeof status.text === 'string' && status.text.length > 0 && status.text.length < 20, `status text "${status.text}"`);
    if (text !== undefined) assert.equal(status.text, text);
  }

  /** The relay node's success status (its help): green dot when the relay is (or ends) on, grey ring (idle) when off. */
  function assertRelayStatus(w: FlowWatch, active: boolean, text: string): void {
    if (active) return assertGreen(w, RELAY, 'green', text);
    assert.deepEqual(w.lastStatus(RELAY), { fill: 'grey', shape: 'ring', text });
  }

  /** The Catch node got an EINPUT for `id`, and the node shows a red ring. */
  function assertInputError(w: FlowWatch, id: string, msg: NodeMessage, message?: RegExp): void {
    assert.ok(isRecord(msg['error']), 'msg.error is missing');
    assert.equal(msg['error']['code'], 'EINPUT');
    assert.ok(isRecord(msg['error']['source']));
    assert.equal(msg['error']['source']['id'], id);
    const ours = msg['_error'];
    assert.ok(isRecord(ours), 'msg._error (the node msg.error) is missing');
    assert.equal(ours['code'], 'EINPUT');
    for (const key of Object.keys(ours)) assert.ok(ERROR_KEYS.has(key), `unexpected msg.error.${key}`);
    if (message) assert.match(String(ours['message']), message);
    const s = w.lastStatus(id);
    assert.deepEqual([s.fill, s.shape], ['red', 'ring']);
    assert.ok(typeof s.text === 'string' && s.text.length > 0 && s.text.length <= 32 && s.text.startsWith("EINPUT: "), `status text "${String(s.text)}"`);
  }

  describe('ipcam-ptz, XML interface', function () {
    it("short form 'Left': PtzControl on the channel of the settings with their speed; { action, ok: true }", async function () {
      const w = await deploy(ptzDef({ speed: '5', channel: '3' }));
      const msg = await w.expectOutput(PTZ, { _msgid: 'm1', topic: 'cam', payload: 'Left' });
      assert.deepEqual(msg.payload, { action: 'Left', ok: true });
      assert.equal(msg._msgid, 'm1');
      assert.equal(msg.topic, 'cam');
      assert.deepEqual(targets(), ['POST /PtzGetCaps/3', 'POST /PtzControl/3/Left']);
      assert.equal(speedOf(requests('/PtzControl/3/Left')[0]), 5);
      assert.equal(theSim().state.ptz.channel(3).moving, true);
      assertGreen(w, PTZ);
      assertNoSecret(w.texts(), SIM_PASSWORD);
    });

    it('the settings alone (no payload) send their action', async function () {
      const w = await deploy(ptzDef({ action: 'ZoomOut', speed: '2' }));
      const msg = await w.expectOutput(PTZ, {});
      assert.deepEqual(msg.payload, { action: 'ZoomOut', ok: true });
      assert.deepEqual(targets(), ['POST /PtzGetCaps/1', 'POST /PtzControl/1/ZoomOut']);
      assert.equal(speedOf(requests('/PtzControl/1/ZoomOut')[0]), 2);
      assertGreen(w, PTZ);
    });

    it('an object payload overrides action, speed and channel', async function () {
      const w = await deploy(ptzDef({ action: 'Up', speed: '4', channel: '1' }));
      const msg = await w.expectOutput(PTZ, { payload: { action: 'IrisOpen', speed: 7, channel: 2 } });
      assert.deepEqual(msg.payload, { action: 'IrisOpen', ok: true });
      assert.deepEqual(targets(), ['POST /PtzGetCaps/2', 'POST /PtzControl/2/IrisOpen']);
      assert.equal(speedOf(requests('/PtzControl/2/IrisOpen')[0]), 7);
      assertGreen(w, PTZ);
    });

    it('every action of the spec goes out as PtzControl/<channel>/<action>', async function () {
      const actions = ['Up', 'Down', 'Left', 'Right', 'LeftUp', 'LeftDown', 'RightUp', 'RightDown', 'ZoomIn', 'ZoomOut', 'Near', 'Far', 'IrisOpen', 'IrisClose', 'Stop'];
      const w = await deploy(ptzDef({ channel: '3', speed: '6' }));
      for (const action of actions) assert.deepEqual((await w.expectOutput(PTZ, { payload: action })).payload, { action, ok: true });
      assert.deepEqual(targets(), ['POST /PtzGetCaps/3', ...actions.map((a) => `POST /PtzControl/3/${a}`)]);
      for (const req of requests().slice(1)) assert.equal(speedOf(req), 6);
    });

    it('PtzGetCaps is read once per channel for all messages', async function () {
      const w = await deploy(ptzDef());
      for (const payload of ['Left', 'Right', { action: 'Up', channel: 3 }, { action: 'Down', channel: 3 }, 'Stop', { action: 'Stop', channel: 3 }]) await w.expectOutput(PTZ, { payload });
      assert.equal(requests('/PtzGetCaps/1').length, 1, targets().join(', '));
      assert.equal(requests('/PtzGetCaps/3').length, 1, targets().join(', '));
      assert.equal(requests().length, 8);
    });

    it('speed 7 against caps 2-6 is EINPUT after the caps read, no PtzControl sent', async function () {
      const w = await deploy(ptzDef());
      theSim().state.ptz.speedRange = { min: 2, max: 6 };
      const msg = await w.expectCaught(PTZ, { payload: { action: 'Left', speed: 7 } });
      assertInputError(w, PTZ, msg, /2 to 6/);
      assert.deepEqual(targets(), ['POST /PtzGetCaps/1']);
      assert.deepEqual(theSim().state.ptz.log, []);
      const ok = await w.expectOutput(PTZ, { payload: { action: 'Left', speed: 6 } });
      assert.deepEqual(ok.payload, { action: 'Left', ok: true });
      assert.deepEqual(targets(), ['POST /PtzGetCaps/1', 'POST /PtzControl/1/Left']);
      assertGreen(w, PTZ);
    });

    it('a device without PtzGetCaps (404) falls back to 1-8', async function () {
      const w = await deploy(ptzDef());
      theSim().inject({ kind: 'status', status: 404, path: '/PtzGetCaps' });
      assert.deepEqual((await w.expectOutput(PTZ, { payload: { action: 'Left', speed: 8 } })).payload, { action: 'Left', ok: true });
      assert.deepEqual((await w.expectOutput(PTZ, { payload: { action: 'Right', speed: 1 } })).payload, { action: 'Right', ok: true });
      assertInputError(w, PTZ, await w.expectCaught(PTZ, { payload: { action: 'Right', speed: 9 } }), /1 to 8/);
      assert.deepEqual(targets(), ['POST /PtzGetCaps/1', 'POST /PtzControl/1/Left', 'POST /PtzControl/1/Right']);
      assert.equal(speedOf(requests('/PtzControl/1/Left')[0]), 8);
    });

    it('duration: exactly one Stop follows a timed move, and the message leaves once it is answered', async function () {
      const w = await deploy(ptzDef({ duration: '100' }));
      assert.deepEqual((await w.expectOutput(PTZ, { payload: 'Right' })).payload, { action: 'Right', ok: true });
      // The move has ended when its message leaves: the Stop is in, answered.
      assert.equal(stops().length, 1);
      assert.equal(theSim().state.ptz.channel(1).moving, false);
      expectQuiet(theSim(), 'sent after the timed Stop');
      await sleep(300);
      assert.equal(stops().length, 1);
      assert.deepEqual(targets(), ['POST /PtzGetCaps/1', 'POST /PtzControl/1/Right', 'POST /PtzControl/1/Stop']);
      // The camera is stopped: unloading sends nothing more.
      const count = theSim().state.requestCount;
      await helper.unload();
      assert.equal(theSim().state.requestCount, count);
    });

    it('a second move before the Stop cancels the first Stop: only its own Stop is sent', async function () {
      const w = await deploy(ptzDef());
      // The first message leaves when the second takes the camera over (its move has ended then).
      const first = w.send(PTZ, { payload: { action: 'Left', duration: 300 } });
      await waitFor('the first move', () => theSim().state.ptz.log.length > 0);
      const second = w.send(PTZ, { payload: { action: 'Up', duration: 1500 } });
      assert.equal((await first).kind, 'out');
      assert.equal(stops().length, 0, 'the first move was stopped before the second took over');
      assert.equal((await second).kind, 'out');
      assert.equal(stops().length, 1, 'the second message left before its Stop was answered');
      assert.equal(stops().length, 1);
      const log = theSim().state.ptz.log;
      const up = log.find((c) => c.action === 'Up');
      const [stop] = stops();
      assert.ok(up && stop);
      assert.ok(stop.time - up.time >= 1450, `the Stop came ${stop.time - up.time} ms after the second move`);
      assert.deepEqual(
        log.map((c) => c.action),
        ['Left', 'Up', 'Stop'],
      );
    });

    it('closing the node stops a camera it set moving', async function () {
      const w = await deploy(ptzDef({ channel: '2' }));
      await w.expectOutput(PTZ, { payload: 'LeftDown' });
      assert.equal(theSim().state.ptz.channel(2).moving, true);
      await helper.unload();
      await waitFor('the Stop of the close', () => stops().length > 0);
      assert.deepEqual(
        stops().map((c) => c.channel),
        [2],
      );
      assert.equal(theSim().state.ptz.channel(2).moving, false);
    });

    it('closing the node stops the camera on a digest device too', async function () {
      const w = await deploy(ptzDef(), 'digest');
      await w.expectOutput(PTZ, { payload: 'Up' });
      await helper.unload();
      await waitFor('the Stop of the close', () => stops().length > 0);
      assert.equal(stops().length, 1);
      assert.ok(requests('/PtzControl/1/Stop').every((r) => r.auth === 'digest'));
      assert.equal(theSim().state.ptz.channel(1).moving, false);
    });

    it('closing the node stops a timed move before its Stop is due (once); close completes, the waiting message is done', async function () {
      const w = await deploy(ptzDef({ duration: '60000' }));
      const node = getNode(PTZ);
      const done = new Promise<void>((resolve) => intercept(node, '_complete', () => resolve()));
      void w.send(PTZ, { payload: 'ZoomIn' });
      await waitFor('the move', () => theSim().state.ptz.channel(1).moving);
      const closing = Date.now();
      await helper.unload();
      assert.ok(Date.now() - closing < 5000, 'close waited for the move');
      await done;
      await waitFor('the Stop of the close', () => stops().length > 0);
      assert.equal(stops().length, 1);
      assert.equal(theSim().state.ptz.channel(1).moving, false);
      // The message of a move the close ended goes nowhere: no output, no error.
      assert.deepEqual(w.messages, []);
    });

    it('a move chained on a timed move\'s output comes after its Stop (the output leaves when the move has ended)', async function () {
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
      const flow = actionFlow(ptzDef({ action: 'Left', duration: '400' }), [deviceDef(sim, { auth: 'basic' })]).map((n) => (n.id === PTZ ? { ...n, wires: [['out', 'next']] } : n));
      // The next move, as a user chains it: its own settings (Overrides none), whatever the message.
      flow.push({ ...ptzDef({ action: 'Right', overrides: 'none' }), id: 'next', z: TAB, x: 300, y: 300, wires: [['nextOut']] }, { id: 'nextOut', type: 'helper', z: TAB, x: 500, y: 300, wires: [] });
      await helper.load(NODES, flow, deviceCredentials(SIM_PASSWORD));
      const w = new FlowWatch([PTZ, DEVICE]);
      const chained = new Promise<void>((resolve) => getNode('nextOut').on('input', () => resolve()));
      const sent = Date.now();
      const msg = await w.expectOutput(PTZ, {});
      const took = Date.now() - sent;
      assert.deepEqual(msg.payload, { action: 'Left', ok: true });
      assert.ok(took >= 400, `the output left ${took} ms after the input, before the move's 400 ms`);
      await chained;
      assert.deepEqual(
        theSim().state.ptz.log.map((c) => c.action),
        ['Left', 'Stop', 'Right'],
      );
      const [, stop, right] = requests().filter((r) => r.path.startsWith('/PtzControl/'));
      assert.ok(stop && right && stop.monotonic <= right.monotonic);
    });

    it('closing the node sends nothing when it did not set the camera moving', async function () {
      const w = await deploy(ptzDef());
      await w.expectOutput(PTZ, { payload: 'Left' });
      await w.expectOutput(PTZ, { payload: 'Stop' });
      const count = theSim().state.requestCount;
      expectQuiet(theSim(), 'sent at or after close');
      await helper.unload();
      await sleep(200);
      assert.equal(theSim().state.requestCount, count);

      // A node that never sent anything.
      await helper.load(NODES, actionFlow(ptzDef(), [deviceDef(theSim(), { auth: 'basic' })]), deviceCredentials(SIM_PASSWORD));
      await helper.unload();
      await sleep(200);
      assert.equal(theSim().state.requestCount, count);
    });

    describe('presets and tours over XML', function () {
      function presetBody(req: RecordedRequest | undefined, root: string): string {
        assert.ok(req, 'the request did not reach the simulator');
        const doc = parseXml(req.body);
        assert.equal(doc.name, root);
        assert.equal(doc.attrs['version'], '1.0');
        assert.equal(doc.attrs['xmlns'], NS);
        assert.equal(doc.children.length, 1);
        return `${doc.children[0]?.name}=${doc.children[0]?.text}`;
      }

      it('{ preset } alone goes to that preset, whatever move the Action setting names', async function () {
        const w = await deploy(ptzDef({ action: 'Left', channel: '2' }));
        theSim().state.ptz.presetsOf(2).set(4, { name: 'gate', position: 7 });
        const out = await w.expectOutput(PTZ, { payload: { preset: 4 } });
        assert.deepEqual(out.payload, { action: 'gotoPreset', ok: true });
        assert.deepEqual(targets(), ['POST /PtzGotoPreset/2']);
        assert.equal(presetBody(requests('/PtzGotoPreset/2')[0], 'presetInfo'), 'id=4');
        assert.equal(theSim().state.ptz.position, 7);
        assertGreen(w, PTZ, 'green', 'gotoPreset');
      });

      it('{ preset: name } is looked up with PtzGetPresets, then gone to by id', async function () {
        const w = await deploy(ptzDef({ action: 'Stop' }));
        theSim().state.ptz.presetsOf(1).set(1, { name: 'door', position: 3 });
        theSim().state.ptz.presetsOf(1).set(9, { name: 'gate', position: 11 });
        await w.expectOutput(PTZ, { payload: { preset: 'gate' } });
        assert.deepEqual(targets(), ['POST /PtzGetPresets/1', 'POST /PtzGotoPreset/1']);
        assert.equal(presetBody(requests('/PtzGotoPreset/1')[0], 'presetInfo'), 'id=9');
        assert.equal(theSim().state.ptz.position, 11);
        const missing = await w.expectCaught(PTZ, { payload: { preset: 'yard' } });
        assert.equal((msgError(missing) as { code: string; deviceCode: number }).code, 'EDEVICE');
        assert.equal((msgError(missing) as { code: string; deviceCode: number }).deviceCode, 20);
      });

      it('{ tour } alone starts that cruise; stopTour stops it', async function () {
        const w = await deploy(ptzDef({ action: 'ZoomIn' }));
        assert.deepEqual((await w.expectOutput(PTZ, { payload: { tour: 2 } })).payload, { action: 'startTour', ok: true });
        assert.equal(theSim().state.ptz.runningCruise.get(1), 2);
        assert.deepEqual((await w.expectOutput(PTZ, { payload: { action: 'stopTour' } })).payload, { action: 'stopTour', ok: true });
        assert.equal(theSim().state.ptz.runningCruise.get(1), undefined);
        assert.deepEqual(targets(), ['POST /PtzRunCruise/1', 'POST /PtzStopCruise/1']);
        assert.equal(presetBody(requests('/PtzRunCruise/1')[0], 'cruiseInfo'), 'id=2');
        assert.equal(requests('/PtzStopCruise/1')[0]?.body, '');
      });

      it('savePreset by name, listPresets gives [{ id, name }], removePreset, listTours', async function () {
        const w = await deploy(ptzDef({ action: 'savePreset' }));
        await w.expectOutput(PTZ, { payload: { preset: 'door' } });
        await w.expectOutput(PTZ, { payload: { preset: 'gate <1>' } });
        const req = requests('/PtzAddPreset/1')[1];
        assert.ok(req);
        assert.match(req.body, /<presetInfo version="1\.0" xmlns="http:\/\/www\.ipc\.com\/ver10"><name type="string"><!\[CDATA\[gate <1>\]\]><\/name><\/presetInfo>$/);
        const list = await w.expectOutput(PTZ, { payload: { action: 'listPresets' } });
        assert.deepEqual(list.payload, [
          { id: 1, name: 'door' },
          { id: 2, name: 'gate <1>' },
        ]);
        assertGreen(w, PTZ, 'green', '2 presets');
        await w.expectOutput(PTZ, { payload: { action: 'removePreset', preset: 1 } });
        assert.deepEqual((await w.expectOutput(PTZ, { payload: { action: 'listPresets' } })).payload, [{ id: 2, name: 'gate <1>' }]);
        assert.deepEqual((await w.expectOutput(PTZ, { payload: { action: 'listTours' } })).payload, [
          { id: 1, name: 'Patrol' },
          { id: 2, name: 'Perimeter' },
        ]);
      });

      it('going to a preset takes over a timed move: its Stop is dropped, close sends nothing', async function () {
        const w = await deploy(ptzDef({ action: 'Left', duration: '400' }));
        theSim().state.ptz.presetsOf(1).set(1, { name: 'a', position: 1 });
        // The move's message leaves when the preset takes the camera over (the move has ended then).
        const move = w.send(PTZ, { payload: 'Left' });
        await waitFor('the move', () => theSim().state.ptz.channel(1).moving);
        await w.expectOutput(PTZ, { payload: { preset: 1 } });
        assert.equal((await move).kind, 'out');
        expectQuiet(theSim(), 'a Stop followed the preset', (r) => r.path === '/PtzControl/1/Stop');
        await sleep(600);
        await helper.unload();
        assert.equal(stops(1).length, 0, 'a Stop followed the preset');
      });

      describe('bad input is EINPUT and sends nothing', function () {
        const cases: Array<{ what: string; settings?: Record<string, unknown>; payload?: unknown; message: RegExp }> = [
          { what: 'preset and tour without an action', payload: { preset: 1, tour: 1 }, message: /both preset and tour/ },
          { what: 'preset id 0', payload: { preset: 0 }, message: /preset/i },
          { what: 'preset id 361', payload: { preset: 361 }, message: /preset/i },
          { what: 'preset name of 11 characters', payload: { preset: 'abcdefghijk' }, message: /preset/i },
          { what: 'preset name with a line break', payload: { preset: 'a\nb' }, message: /preset/i },
          { what: 'savePreset by number', settings: { action: 'savePreset' }, payload: { preset: 3 }, message: /by name/ },
          { what: 'savePreset as home', payload: { action: 'savePreset', preset: 'x', home: true }, message: /home/ },
          { what: 'tour 0', payload: { tour: 0 }, message: /tour/i },
          { what: 'tour 256', payload: { action: 'startTour', tour: 256 }, message: /tour/i },
          { what: 'removeAllPresets (CGI only)', payload: { action: 'removeAllPresets' }, message: /unknown ptz action/i },
          { what: 'channel 0 with a preset', payload: { preset: 1, channel: 0 }, message: /channel/i },
        ];
        for (const c of cases) {
          it(c.what, async function () {
            const w = await deploy(ptzDef(c.settings));
            const msg = await w.expectCaught(PTZ, { payload: c.payload });
            assertInputError(w, PTZ, msg, c.message);
            assert.equal(theSim().state.requestCount, 0, 'a request was sent');
          });
        }
      });
    });

    describe('bad input reaches the Catch node as EINPUT and sends nothing', function () {
      const cases: Array<{ what: string; settings?: Record<string, unknown>; payload?: unknown; message: RegExp }> = [
        { what: 'unknown action (short form)', payload: 'Spin', message: /unknown ptz action/i },
        { what: 'unknown action in the settings', settings: { action: 'Spin' }, message: /unknown ptz action/i },
        { what: 'speed 0', payload: { action: 'Left', speed: 0 }, message: /speed/i },
        { what: 'speed 9', payload: { action: 'Left', speed: 9 }, message: /speed/i },
        { what: "speed 'fast'", payload: { action: 'Left', speed: 'fast' }, message: /speed/i },
        { what: 'speed 9 in the settings', settings: { speed: '9' }, payload: 'Left', message: /speed/i },
        { what: 'channel 0', payload: { action: 'Left', channel: 0 }, message: /channel/i },
        { what: 'negative duration', payload: { action: 'Left', duration: -5 }, message: /duration/i },
        { what: 'unknown interface', settings: { api: 'onvif' }, payload: 'Left', message: /interface/i },
      ];
      for (const c of cases) {
        it(c.what, async function () {
          const w = await deploy(ptzDef(c.settings));
          const msg = await w.expectCaught(PTZ, { _msgid: 'bad', payload: c.payload });
          assertInputError(w, PTZ, msg, c.message);
          assert.equal(msg._msgid, 'bad');
          assert.equal(theSim().state.requestCount, 0, 'a request was sent');
          assert.equal(w.messages.length, 1);
        });
      }
    });
  });

  describe('ipcam-ptz, CGI interface', function () {
    async function cgi(payload: unknown, settings: Record<string, unknown> = {}): Promise<{ w: FlowWatch; msg: NodeMessage }> {
      const w = await deploy(ptzDef({ api: 'cgi', action: 'stop', ...settings }));
      const msg = await w.expectOutput(PTZ, { _msgid: 'c1', payload });
      return { w, msg };
    }

    it("short form 'left': move=left; { action: 'left', ok: true }", async function () {
      const { w, msg } = await cgi('left');
      assert.deepEqual(msg.payload, { action: 'left', ok: true });
      assert.equal(msg._msgid, 'c1');
      assert.deepEqual(targets(), [`GET ${PTZSET}?move=left`]);
      assertGreen(w, PTZ);
    });

    it('the settings alone send their action', async function () {
      const { msg } = await cgi(undefined, { action: 'downright' });
      assert.deepEqual(msg.payload, { action: 'downright', ok: true });
      assert.deepEqual(targets(), [`GET ${PTZSET}?move=downright`]);
    });

    it('continuous move: move=left&move=repeat', async function () {
      const { w, msg } = await cgi({ action: 'left', continuous: true });
      assert.deepEqual(msg.payload, { action: 'left', ok: true });
      assert.deepEqual(targets(), [`GET ${PTZSET}?move=left&move=repeat`]);
      assert.equal(theSim().state.ptz.channel(1).moving, true);
      await w.expectOutput(PTZ, { payload: 'stop' });
      assert.equal(theSim().state.ptz.channel(1).moving, false);
      assertGreen(w, PTZ);
    });

    it('go to a preset by number and by name (encoded), with stream', async function () {
      const w = await deploy(ptzDef({ api: 'cgi', action: 'gotoPreset' }));
      theSim().state.ptz.presets.set('#7', 0);
      theSim().state.ptz.presets.set('@Gate & yard', 0);
      assert.deepEqual((await w.expectOutput(PTZ, { payload: { preset: 7 } })).payload, { action: 'gotoPreset', ok: true });
      assert.deepEqual((await w.expectOutput(PTZ, { payload: { preset: 'Gate & yard', stream: 1 } })).payload, { action: 'gotoPreset', ok: true });
      assert.deepEqual(targets(), [`GET ${PTZSET}?gotoserverpresetno=7`, `GET ${PTZSET}?gotoserverpresetname=Gate%20%26%20yard&stream=1`]);
      assertGreen(w, PTZ);
    });

    it('save (with home=yes) and remove presets, remove all', async function () {
      const w = await deploy(ptzDef({ api: 'cgi', action: 'savePreset' }));
      await w.expectOutput(PTZ, { payload: { preset: 3, home: true } });
      await w.expectOutput(PTZ, { payload: { preset: 'Front door/left' } });
      await w.expectOutput(PTZ, { payload: { action: 'removePreset', preset: 'Front door/left' } });
      await w.expectOutput(PTZ, { payload: { action: 'removePreset', preset: 3 } });
      const last = await w.expectOutput(PTZ, { payload: { action: 'removeAllPresets' } });
      assert.deepEqual(last.payload, { action: 'removeAllPresets', ok: true });
      assert.deepEqual(targets(), [
        `GET ${PTZCONFIG}?setserverpresetno=3&home=yes`,
        `GET ${PTZCONFIG}?setserverpresetname=Front%20door%2Fleft`,
        `GET ${PTZCONFIG}?removeserverpresetname=Front%20door%2Fleft`,
        `GET ${PTZCONFIG}?removeserverpresetno=3`,
        `GET ${PTZCONFIG}?removeallpreset`,
      ]);
      assert.equal(theSim().state.ptz.home, 0);
      assertGreen(w, PTZ);
    });

    it('{ preset } alone goes to that preset and { tour } alone starts that tour, whatever move the Action names', async function () {
      const w = await deploy(ptzDef({ api: 'cgi', action: 'left' }));
      theSim().state.ptz.presets.set('#3', 5);
      assert.deepEqual((await w.expectOutput(PTZ, { payload: { preset: 3 } })).payload, { action: 'gotoPreset', ok: true });
      assert.deepEqual((await w.expectOutput(PTZ, { payload: { tour: 2 } })).payload, { action: 'startTour', ok: true });
      assert.deepEqual(targets(), [`GET ${PTZSET}?gotoserverpresetno=3`, `GET ${PTZSET}?runservertourno=2`]);
      assert.equal(theSim().state.ptz.position, 5);
      const both = await w.expectCaught(PTZ, { payload: { preset: 3, tour: 2 } });
      assertInputError(w, PTZ, both, /both preset and tour/);
      const list = await w.expectCaught(PTZ, { payload: { action: 'listPresets' } });
      assertInputError(w, PTZ, list, /XML interface/);
      assert.equal(requests().length, 2);
    });

    it('start and stop a tour', async function () {
      const w = await deploy(ptzDef({ api: 'cgi', action: 'startTour' }));
      assert.deepEqual((await w.expectOutput(PTZ, { payload: { tour: 1 } })).payload, { action: 'startTour', ok: true });
      assert.deepEqual([...theSim().state.ptz.tours], [1]);
      assert.deepEqual((await w.expectOutput(PTZ, { payload: { action: 'stopTour', tour: 1 } })).payload, { action: 'stopTour', ok: true });
      assert.deepEqual(targets(), [`GET ${PTZSET}?runservertourno=1`, `GET ${PTZSET}?stopservertourno=1`]);
      assert.deepEqual([...theSim().state.ptz.tours], []);
    });

    function cgiStops(): PtzCommand[] {
      return theSim().state.ptz.log.filter((c) => c.api === 'cgi' && c.action === 'stop');
    }

    it('duration of the settings: the move is continuous and exactly one move=stop follows, answered before the message leaves', async function () {
      const { w, msg } = await cgi('left', { duration: '100' });
      assert.deepEqual(msg.payload, { action: 'left', ok: true });
      assert.equal(cgiStops().length, 1);
      expectQuiet(theSim(), 'sent after the timed stop');
      await sleep(300);
      assert.deepEqual(targets(), [`GET ${PTZSET}?move=left&move=repeat`, `GET ${PTZSET}?move=stop`]);
      const [move, stop] = theSim().state.ptz.log;
      assert.ok(move && stop && stop.time - move.time >= 90, 'the stop came before the duration');
      assert.equal(theSim().state.ptz.channel(1).moving, false);
      assertGreen(w, PTZ);
      // Stopped already: unloading sends nothing more.
      const count = theSim().state.requestCount;
      await helper.unload();
      assert.equal(theSim().state.requestCount, count);
    });

    it('a second timed move before the stop replaces it: only its own stop is sent, with its stream', async function () {
      const w = await deploy(ptzDef({ api: 'cgi', action: 'stop' }));
      const first = w.send(PTZ, { payload: { action: 'left', duration: 300, stream: 1 } });
      await waitFor('the first move', () => theSim().state.ptz.log.length > 0);
      await w.expectOutput(PTZ, { payload: { action: 'up', duration: 1500, stream: 1 } });
      assert.equal((await first).kind, 'out');
      const up = theSim().state.ptz.log.find((c) => c.action === 'up+repeat');
      const [stop] = cgiStops();
      assert.ok(up && stop && stop.time - up.time >= 1450, 'the first stop was not cancelled');
      assert.deepEqual(targets(), [`GET ${PTZSET}?move=left&move=repeat&stream=1`, `GET ${PTZSET}?move=up&move=repeat&stream=1`, `GET ${PTZSET}?move=stop&stream=1`]);
    });

    it('closing the node stops a continuous move it set going, once', async function () {
      await cgi({ action: 'left', continuous: true, stream: 2 });
      assert.equal(theSim().state.ptz.channel(1).moving, true);
      await helper.unload();
      await waitFor('the stop of the close', () => cgiStops().length > 0);
      expectQuiet(theSim(), 'sent after the stop of the close');
      await sleep(200);
      assert.deepEqual(targets(), [`GET ${PTZSET}?move=left&move=repeat&stream=2`, `GET ${PTZSET}?move=stop&stream=2`]);
      assert.equal(theSim().state.ptz.channel(1).moving, false);
    });

    it('closing the node stops a timed move before its stop is due (once), on a digest device too', async function () {
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'digest' });
      await helper.load(NODES, actionFlow(ptzDef({ api: 'cgi', action: 'right', duration: '60000' }), [deviceDef(sim)]), deviceCredentials(SIM_PASSWORD));
      const w = new FlowWatch([PTZ, DEVICE]);
      void w.send(PTZ, {});
      await waitFor('the move', () => theSim().state.ptz.channel(1).moving);
      await helper.unload();
      await waitFor('the stop of the close', () => cgiStops().length > 0);
      expectQuiet(theSim(), 'sent after the stop of the close');
      await sleep(200);
      assert.equal(cgiStops().length, 1);
      assert.ok(requests(PTZSET).every((r) => r.auth === 'digest'));
      assert.equal(theSim().state.ptz.channel(1).moving, false);
    });

    it('closing a CGI node sends nothing when it left no camera moving (steps, presets, a stopped move)', async function () {
      const w = await deploy(ptzDef({ api: 'cgi', action: 'left' }));
      theSim().state.ptz.presets.set('#1', 0);
      await w.expectOutput(PTZ, {});
      await w.expectOutput(PTZ, { payload: { action: 'gotoPreset', preset: 1 } });
      await w.expectOutput(PTZ, { payload: { action: 'right', continuous: true } });
      await w.expectOutput(PTZ, { payload: 'stop' });
      const count = theSim().state.requestCount;
      expectQuiet(theSim(), 'sent at or after close');
      await helper.unload();
      await sleep(200);
      assert.equal(theSim().state.requestCount, count);
    });

    describe('bad input reaches the Catch node as EINPUT and sends nothing', function () {
      const cases: Array<{ what: string; payload: unknown; message: RegExp }> = [
        { what: 'unknown action', payload: 'spin', message: /unknown ptz action/i },
        { what: 'preset 32', payload: { action: 'gotoPreset', preset: 32 }, message: /0 to 31/ },
        { what: 'preset -1', payload: { action: 'savePreset', preset: -1 }, message: /0 to 31/ },
        { what: 'preset name with ~', payload: { action: 'gotoPreset', preset: 'home~1' }, message: /~/ },
        { what: 'preset name of 32 characters', payload: { action: 'savePreset', preset: 'x'.repeat(32) }, message: /31 characters/ },
        { what: 'tour 4', payload: { action: 'startTour', tour: 4 }, message: /0 to 3\b/ },
        { what: 'negative duration', payload: { action: 'left', duration: -5 }, message: /duration/i },
        { what: 'duration over 600000', payload: { action: 'left', duration: 600_001 }, message: /duration/i },
      ];
      for (const c of cases) {
        it(c.what, async function () {
          const w = await deploy(ptzDef({ api: 'cgi', action: 'stop' }));
          const msg = await w.expectCaught(PTZ, { _msgid: 'bad', payload: c.payload });
          assertInputError(w, PTZ, msg, c.message);
          assert.equal(theSim().state.requestCount, 0, 'a request was sent');
        });
      }
    });
  });

  describe('ipcam-relay', function () {
    it('true switches the relay of the settings on: action=1:/; { output, active }', async function () {
      const w = await deploy(relayDef({ mode: 'off' }));
      const msg = await w.expectOutput(RELAY, { _msgid: 'r1', topic: 'gate', payload: true });
      assert.deepEqual(msg.payload, { output: 1, active: true });
      assert.equal(msg._msgid, 'r1');
      assert.equal(msg.topic, 'gate');
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=1%3A%2F`]);
      assert.equal(theSim().state.io.outputs.get(1), true);
      assertRelayStatus(w, true, 'relay 1 on');
      assertNoSecret(w.texts(), SIM_PASSWORD);
    });

    it('false switches it off: action=1:\\ sent as %5C', async function () {
      const w = await deploy(relayDef({ output: '2', mode: 'on' }));
      theSim().state.io.setOutput(2, true);
      const msg = await w.expectOutput(RELAY, { payload: false });
      assert.deepEqual(msg.payload, { output: 2, active: false });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=2%3A%5C`]);
      assert.equal(theSim().state.io.outputs.get(2), false);
      assertRelayStatus(w, false, 'relay 2 off');
    });

    it('a request slower than REQUESTING_AFTER_MS shows a yellow "requesting" ring, then its result', async function () {
      const w = await deploy(relayDef({ mode: 'on' }));
      theSim().inject({ kind: 'slow', delay: REQUESTING_AFTER_MS + 400, path: OUTPUT, times: 1 });
      assert.deepEqual((await w.expectOutput(RELAY, { payload: true })).payload, { output: 1, active: true });
      const fills = w.statuses(RELAY).map((s) => `${s.fill} ${s.shape} ${s.text}`);
      assert.deepEqual(fills.slice(-2), ['yellow ring requesting', 'green dot relay 1 on']);
    });

    it('a request answered in milliseconds leaves no timer of its status behind (nothing wakes the process after it)', async function () {
      const w = await deploy(relayDef({ mode: 'on' }));
      // The first request opens the connection (and its keep-alive timer); count from the second on.
      await w.expectOutput(RELAY, { payload: true });
      const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      // Past any status timer of that first request.
      await sleep(REQUESTING_AFTER_MS + 50);
      const before = timers();
      for (let i = 0; i < 3; i++) await w.expectOutput(RELAY, { payload: i % 2 === 0 });
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(timers() <= before, `${timers() - before} timer(s) more than before the requests`);
    });

    it('the same result again is not shown again: a Status node sees "relay 1 pulsed" once for five pulses', async function () {
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
      const flow = actionFlow(relayDef({ mode: 'pulse', pulse: '100' }), [deviceDef(sim, { auth: 'basic' })]);
      flow.push({ id: 'shown', type: 'status', z: TAB, x: 100, y: 300, scope: [RELAY], wires: [['shown-out']] }, { id: 'shown-out', type: 'helper', z: TAB, x: 300, y: 300, wires: [] });
      await helper.load(NODES, flow, deviceCredentials(SIM_PASSWORD));
      const shown: string[] = [];
      getNode('shown-out').on('input', (msg: NodeMessage) => shown.push(String((msg['status'] as { text?: string } | undefined)?.text)));
      const w = new FlowWatch([RELAY, DEVICE]);
      for (let i = 0; i < 5; i++) assert.deepEqual((await w.expectOutput(RELAY, {})).payload, { output: 1, active: false, pulse: 100 });
      assert.equal(requests(OUTPUT).length, 5);
      // A different result shows at once.
      assert.deepEqual((await w.expectOutput(RELAY, { payload: true })).payload, { output: 1, active: true });
      await waitFor('the status of the last result', () => shown.at(-1) === 'relay 1 on');
      assert.deepEqual(shown, ['relay 1 pulsed', 'relay 1 on']);
    });

    it('the mode of the settings without a payload', async function () {
      const w = await deploy(relayDef({ mode: 'on', output: '2' }));
      assert.deepEqual((await w.expectOutput(RELAY, {})).payload, { output: 2, active: true });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=2%3A%2F`]);
    });

    it('a blank output setting means relay 1', async function () {
      const w = await deploy(relayDef({ output: '' }));
      assert.deepEqual((await w.expectOutput(RELAY, { payload: true })).payload, { output: 1, active: true });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=1%3A%2F`]);
    });

    it("'pulse' uses the pulse of the settings and is seen on the device with its length", async function () {
      const w = await deploy(relayDef({ mode: 'on', pulse: '300' }));
      const sent = Date.now();
      const msg = await w.expectOutput(RELAY, { payload: 'pulse' });
      assert.deepEqual(msg.payload, { output: 1, active: false, pulse: 300 });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=1%3A%2F300%5C`]);
      const relayLog = theSim().state.io.relayLog;
      await waitFor('the end of the pulse', () => relayLog.length >= 2);
      const [on, off] = relayLog;
      assert.ok(on && off);
      assert.deepEqual([on.active, off.active], [true, false]);
      const length = off.time - on.time;
      assert.ok(length >= 250 && length < 1500, `the pulse lasted ${length} ms`);
      assert.ok(off.time - sent >= 250 && off.time - sent < 1500, `inactive ${off.time - sent} ms after sending`);
      assertRelayStatus(w, false, 'relay 1 pulsed');
    });

    it('{ pulse } in the payload overrides the settings, on the output it names', async function () {
      const w = await deploy(relayDef({ mode: 'on', pulse: '5000' }));
      assert.deepEqual((await w.expectOutput(RELAY, { payload: { output: 2, pulse: 200 } })).payload, { output: 2, active: false, pulse: 200 });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=2%3A%2F200%5C`]);
      await waitFor('the end of the pulse', () => theSim().state.io.relayLog.length >= 2);
      const [on, off] = theSim().state.io.relayLog;
      assert.ok(on && off);
      assert.ok(off.time - on.time >= 150 && off.time - on.time < 1400, `the pulse lasted ${off.time - on.time} ms`);
    });

    it('a sequence from the settings is played by the device with its waits', async function () {
      const w = await deploy(relayDef({ mode: 'sequence', sequence: '1:/300\\500/300\\' }));
      assert.deepEqual((await w.expectOutput(RELAY, {})).payload, { output: 1, active: false, sequence: '1:/300\\500/300\\' });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=1%3A%2F300%5C500%2F300%5C`]);
      const relayLog = theSim().state.io.relayLog;
      await waitFor('the whole sequence', () => relayLog.length >= 4);
      assert.deepEqual(
        relayLog.map((c) => [c.port, c.active]),
        [
          [1, true],
          [1, false],
          [1, true],
          [1, false],
        ],
      );
      const start = relayLog[0]?.time ?? NaN;
      for (const [i, expected] of [
        [1, 300],
        [2, 800],
        [3, 1100],
      ] as const) {
        const offset = (relayLog[i]?.time ?? NaN) - start;
        assert.ok(offset >= expected - 50 && offset < expected + 1200, `change ${i} came after ${offset} ms, expected about ${expected} ms`);
      }
      assertRelayStatus(w, false, 'relay 1 off');
    });

    it('{ sequence, output } in the payload overrides the settings', async function () {
      const w = await deploy(relayDef({ mode: 'off' }));
      const msg = await w.expectOutput(RELAY, { payload: { output: 2, sequence: '2:\\100/' } });
      assert.deepEqual(msg.payload, { output: 2, active: true, sequence: '2:\\100/' });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=2%3A%5C100%2F`]);
    });

    it('{ state } in the payload switches the output it names', async function () {
      const w = await deploy(relayDef({ mode: 'pulse' }));
      assert.deepEqual((await w.expectOutput(RELAY, { payload: { output: 2, state: true } })).payload, { output: 2, active: true });
      assert.deepEqual((await w.expectOutput(RELAY, { payload: { output: 2, state: false } })).payload, { output: 2, active: false });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=2%3A%2F`, `GET ${OUTPUT}?action=2%3A%5C`]);
    });

    it("'check' reads the state: check=<id>, { output, active }", async function () {
      const w = await deploy(relayDef({ mode: 'on', output: '2' }));
      theSim().state.io.setOutput(2, true);
      const msg = await w.expectOutput(RELAY, { payload: 'check' });
      assert.deepEqual(msg.payload, { output: 2, active: true });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?check=2`]);
      assertRelayStatus(w, true, 'relay 2 on');
      theSim().state.io.setOutput(2, false);
      assert.deepEqual((await w.expectOutput(RELAY, { payload: 'check' })).payload, { output: 2, active: false });
      assert.deepEqual(w.lastStatus(RELAY), { fill: 'grey', shape: 'ring', text: 'relay 2 off' });
    });

    it("'off ', 'ON', 1 and 0 are recognised short forms (trimmed, any case)", async function () {
      const w = await deploy(relayDef({ mode: 'pulse', pulse: '5000' }));
      assert.deepEqual((await w.expectOutput(RELAY, { payload: 'ON' })).payload, { output: 1, active: true });
      assert.deepEqual((await w.expectOutput(RELAY, { payload: 'off ' })).payload, { output: 1, active: false });
      assert.deepEqual((await w.expectOutput(RELAY, { payload: 1 })).payload, { output: 1, active: true });
      assert.deepEqual((await w.expectOutput(RELAY, { payload: 0 })).payload, { output: 1, active: false });
      assert.deepEqual((await w.expectOutput(RELAY, { payload: { state: ' Off ' } })).payload, { output: 1, active: false });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=1%3A%2F`, `GET ${OUTPUT}?action=1%3A%5C`, `GET ${OUTPUT}?action=1%3A%2F`, `GET ${OUTPUT}?action=1%3A%5C`, `GET ${OUTPUT}?action=1%3A%5C`]);
    });

    it('every accepted string (true/false/on/off/1/0/pulse/check, any case, trimmed) acts on the relay the simulator holds, never by Mode', async function () {
      // Mode sequence: a string that fell back to Mode would play this sequence, seen in the request.
      const w = await deploy(relayDef({ mode: 'sequence', sequence: '1:/100\\', pulse: '100' }));
      const io = theSim().state.io;
      for (const c of ACCEPTED_RELAY_STRINGS) {
        // Start from the opposite of the state the string asks for, so that the change is the device's.
        io.setOutput(1, c.mode !== 'on');
        const sentBefore = theSim().state.requestCount;
        const logBefore = io.relayLog.length;
        const msg = await w.expectOutput(RELAY, { payload: c.payload });
        const label = JSON.stringify(c.payload);
        assert.equal(theSim().state.requestCount - sentBefore, 1, `${label}: one request`);
        const last = targets().at(-1);
        if (c.mode === 'check') {
          assert.equal(last, `GET ${OUTPUT}?check=1`, label);
          assert.deepEqual(msg.payload, { output: 1, active: true }, label);
          assert.equal(io.outputs.get(1), true, `${label}: check changed the relay`);
          continue;
        }
        if (c.mode === 'pulse') {
          assert.equal(last, `GET ${OUTPUT}?action=1%3A%2F100%5C`, label);
          await waitFor(`${label}: the end of the pulse`, () => io.relayLog.length >= logBefore + 2);
          assert.deepEqual(io.relayLog.slice(logBefore).map((r) => r.active), [true, false], label);
          assert.equal(io.outputs.get(1), false, label);
          continue;
        }
        assert.equal(last, `GET ${OUTPUT}?action=${c.mode === 'on' ? '1%3A%2F' : '1%3A%5C'}`, label);
        assert.equal(io.outputs.get(1), c.mode === 'on', `${label}: the relay the simulator holds`);
        assert.deepEqual(msg.payload, { output: 1, active: c.mode === 'on' }, label);
      }
    });

    it('an object without state, pulse or sequence (e.g. a plate event) is EINPUT naming the keys and Overrides; with overrides none it does what Mode says', async function () {
      const w = await deploy(relayDef({ mode: 'pulse', pulse: '200' }));
      const caught = await w.expectCaught(RELAY, { payload: { plate: 'ABC123', listType: 'whiteList' } });
      assertInputError(w, RELAY, caught, /none of this node's keys \(output, state, pulse, sequence\).*Overrides to none/);
      assert.deepEqual(targets(), []);
      await helper.unload();
      await sim?.close();
      const w2 = await deploy(relayDef({ mode: 'pulse', pulse: '200', overrides: 'none' }));
      const msg = await w2.expectOutput(RELAY, { payload: { plate: 'ABC123', listType: 'whiteList' } });
      assert.deepEqual(msg.payload, { output: 1, active: false, pulse: 200 });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=1%3A%2F200%5C`]);
    });

    it('null does what Mode says', async function () {
      const w = await deploy(relayDef({ mode: 'off', output: '2' }));
      assert.deepEqual((await w.expectOutput(RELAY, { payload: null })).payload, { output: 2, active: false });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?action=2%3A%5C`]);
    });

    describe('a payload that is not a relay command is EINPUT and sends nothing, whatever Mode says', function () {
      for (const mode of ['on', 'pulse']) {
        it(`Mode ${mode}: every rejected form, one after the other, on one running node`, async function () {
          const w = await deploy(relayDef({ mode, pulse: '1000' }));
          for (const c of REJECTED_RELAY_PAYLOADS) {
            const msg = await w.expectCaught(RELAY, { _msgid: 'bad', payload: c.payload });
            assertInputError(w, RELAY, msg, /not a relay command/);
            assert.equal(theSim().state.requestCount, 0, `${c.what}: a request was sent`);
            assert.deepEqual(theSim().state.io.relayLog, [], `${c.what}: the relay changed`);
          }
          assert.equal(theSim().state.io.outputs.get(1), false);
          // The same node still acts on a recognised payload: the count above could move.
          await w.expectOutput(RELAY, { payload: true });
          assert.equal(theSim().state.requestCount, 1);
        });
      }
    });

    it('check as the mode of the settings', async function () {
      const w = await deploy(relayDef({ mode: 'check' }));
      assert.deepEqual((await w.expectOutput(RELAY, {})).payload, { output: 1, active: false });
      assert.deepEqual(targets(), [`GET ${OUTPUT}?check=1`]);
    });

    describe('bad input reaches the Catch node as EINPUT and sends nothing', function () {
      const cases: Array<{ what: string; settings?: Record<string, unknown>; payload?: unknown; message: RegExp }> = [
        { what: "sequence with an unknown character ('1:/300x')", payload: { sequence: '1:/300x' }, message: /unknown character/ },
        { what: 'sequence naming another output', payload: { sequence: '2:/300\\' }, message: /output 2/ },
        { what: 'sequence in the settings naming another output', settings: { mode: 'sequence', output: '2', sequence: '1:/300\\' }, message: /output 1/ },
        { what: 'pulse 0', payload: { pulse: 0 }, message: /pulse/i },
        { what: 'pulse 0 in the settings', settings: { pulse: '0' }, payload: 'pulse', message: /pulse/i },
        { what: 'output 0', payload: { output: 0, state: true }, message: /output/i },
        { what: 'unknown mode in the settings', settings: { mode: 'blink' }, message: /mode/i },
        { what: "'sequence' is not a short form", settings: { mode: 'on', sequence: '1:/300\\' }, payload: 'sequence', message: /not a relay command/ },
      ];
      for (const c of cases) {
        it(c.what, async function () {
          const w = await deploy(relayDef(c.settings));
          const msg = await w.expectCaught(RELAY, { _msgid: 'bad', payload: c.payload });
          assertInputError(w, RELAY, msg, c.message);
          assert.equal(msg._msgid, 'bad');
          assert.equal(theSim().state.requestCount, 0, 'a request was sent');
          assert.deepEqual(theSim().state.io.relayLog, []);
        });
      }
    });
  });
});
