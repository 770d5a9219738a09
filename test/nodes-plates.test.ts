import { strict as assert } from 'node:assert';
import sinon from 'sinon';
import { startSimulator, type RecordedRequest, type Simulator } from '../lib/simulator';
import { child, parseXml } from '../lib/xml/codec';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import plateAddNode from '../nodes/ipcam-plate-add/ipcam-plate-add';
import plateDeleteNode from '../nodes/ipcam-plate-delete/ipcam-plate-delete';
import plateModifyNode from '../nodes/ipcam-plate-modify/ipcam-plate-modify';
import plateQueryNode from '../nodes/ipcam-plate-query/ipcam-plate-query';
import plateSyncNode from '../nodes/ipcam-plate-sync/ipcam-plate-sync';
import vehicleConfigNode from '../nodes/ipcam-vehicle-config/ipcam-vehicle-config';
import type { NodeMessage, NodeStatus } from '../nodes/red';
import { SIM_PASSWORD, SIM_USER } from './helpers';
import { DEVICE, FlowWatch, TAB, assertNoSecret, deviceCredentials, deviceDef, getNode, helper, intercept, type FlowNode } from './node-helper';

const NODES = [deviceNode, plateAddNode, plateQueryNode, plateModifyNode, plateDeleteNode, plateSyncNode, vehicleConfigNode];
/** Ids of the action nodes in the flow, one of each type. */
type ActionId = 'add' | 'query' | 'modify' | 'delete' | 'sync' | 'vehicle';
const ADD: ActionId = 'add';
const QUERY: ActionId = 'query';
const MODIFY: ActionId = 'modify';
const DELETE: ActionId = 'delete';
const SYNC: ActionId = 'sync';
const VEHICLE: ActionId = 'vehicle';
const ACTIONS: readonly ActionId[] = [ADD, QUERY, MODIFY, DELETE, SYNC, VEHICLE];
const TYPES: Record<ActionId, string> = {
  add: 'ipcam-plate-add',
  query: 'ipcam-plate-query',
  modify: 'ipcam-plate-modify',
  delete: 'ipcam-plate-delete',
  sync: 'ipcam-plate-sync',
  vehicle: 'ipcam-vehicle-config',
};
/** Settings as the editor stores them. */
const DEFAULTS: Record<ActionId, Record<string, unknown>> = {
  add: { group: '1', upsert: false },
  query: { group: '1' },
  modify: { group: '1' },
  delete: { group: '1' },
  sync: { group: '1', dryRun: false },
  vehicle: { channel: '' },
};
const NASTY = 'AB]]>C<&é中';
const NS = 'http://www.ipc.com/ver10';
/** What `msg.error` may hold (design: { message, code, status?, deviceCode?, deviceDesc? }). */
const ERROR_KEYS = new Set(['message', 'code', 'status', 'deviceCode', 'deviceDesc']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function plateName(i: number): string {
  return `P${String(i).padStart(4, '0')}`;
}

function plateNames(from: number, to: number): string[] {
  const out: string[] = [];
  for (let i = from; i <= to; i++) out.push(plateName(i));
  return out;
}

function listOf(msg: NodeMessage): Array<Record<string, unknown>> {
  assert.ok(Array.isArray(msg.payload), `payload is not a list: ${JSON.stringify(msg.payload)}`);
  const list = msg.payload as unknown[];
  for (const entry of list) assert.ok(isRecord(entry));
  return list as Array<Record<string, unknown>>;
}

function objectOf(msg: NodeMessage): Record<string, unknown> {
  assert.ok(isRecord(msg.payload), `payload is not an object: ${JSON.stringify(msg.payload)}`);
  return msg.payload;
}

/** A tab with one node of each plate type (all wired to `out`), the device, and a Catch node. */
function platesFlow(sim: Simulator, settings: Partial<Record<ActionId, Record<string, unknown>>>): FlowNode[] {
  return [
    { id: TAB, type: 'tab', label: 'plates' },
    deviceDef(sim),
    // Flow nodes need a position: without x and y the runtime takes them for config nodes.
    ...ACTIONS.map((id, i) => ({ id, type: TYPES[id], z: TAB, x: 100, y: 100 + 50 * i, name: '', device: DEVICE, ...DEFAULTS[id], ...settings[id], wires: [['out']] })),
    { id: 'out', type: 'helper', z: TAB, x: 300, y: 100, wires: [] },
    { id: 'catch-all', type: 'catch', z: TAB, x: 100, y: 500, scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: TAB, x: 300, y: 500, wires: [] },
  ];
}

describe('plate and vehicle config nodes', function () {
  let sim: Simulator | undefined;
  let watch: FlowWatch | undefined;
  /** warn() and error() calls of each action node, kept apart. */
  let warns: Map<string, unknown[][]>;
  let errors: Map<string, unknown[][]>;

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.unload();
    await helper.stopServer();
  });

  afterEach(async function () {
    sinon.restore();
    watch = undefined;
    await helper.unload();
    await sim?.close();
    sim = undefined;
  });

  function theSim(): Simulator {
    assert.ok(sim, 'no simulator');
    return sim;
  }

  async function deploy(settings: Partial<Record<ActionId, Record<string, unknown>>> = {}): Promise<FlowWatch> {
    sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD });
    await helper.load(NODES, platesFlow(sim, settings), deviceCredentials(SIM_PASSWORD));
    watch = new FlowWatch([...ACTIONS, DEVICE]);
    warns = new Map();
    errors = new Map();
    for (const id of ACTIONS) {
      const w: unknown[][] = [];
      const e: unknown[][] = [];
      warns.set(id, w);
      errors.set(id, e);
      intercept(getNode(id), 'warn', (args) => w.push(args));
      intercept(getNode(id), 'error', (args) => e.push(args));
    }
    return watch;
  }

  function warnsOf(id: ActionId): unknown[][] {
    return warns.get(id) ?? [];
  }

  function errorsOf(id: ActionId): unknown[][] {
    return errors.get(id) ?? [];
  }

  /** The requests the simulator accepted (authentication rounds left out), optionally to one path. */
  function accepted(path?: string): RecordedRequest[] {
    return theSim().state.requests.filter((r) => r.auth !== 'rejected' && (path === undefined || r.path === path));
  }

  function paths(): string[] {
    return accepted().map((r) => r.path);
  }

  function seed(plates: string[], group = '1'): void {
    for (const plate of plates) assert.equal(theSim().state.plates.add(plate, group), 0);
  }

  function assertStatus(w: FlowWatch, id: ActionId, fill: NodeStatus['fill'], shape: NodeStatus['shape'], text?: string): void {
    const s = w.lastStatus(id);
    assert.equal(s.fill, fill, `status ${JSON.stringify(s)}`);
    assert.equal(s.shape, shape, `status ${JSON.stringify(s)}`);
    assert.ok(typeof s.text === 'string' && s.text.length > 0 && s.text.length <= (fill === "red" ? 32 : 19), `status text "${s.text}"`);
    if (text !== undefined) assert.equal(s.text, text);
  }

  /** A clean success: out came the message, nothing warned or failed, status green. */
  function assertClean(w: FlowWatch, id: ActionId, msg: NodeMessage, statusText?: string): void {
    assert.equal(msg['error'], undefined);
    assert.deepEqual(warnsOf(id), []);
    assert.deepEqual(errorsOf(id), []);
    assertStatus(w, id, 'green', 'dot', statusText);
  }

  /** The Catch node's msg: Node-RED's `error`, the node's own moved to `_error`. */
  function assertCaught(w: FlowWatch, id: ActionId, msg: NodeMessage, code: string): Record<string, unknown> {
    assert.ok(isRecord(msg['error']), 'msg.error is missing');
    assert.equal(msg['error']['code'], code);
    assert.ok(isRecord(msg['error']['source']));
    assert.equal(msg['error']['source']['id'], id);
    const ours = msg['_error'];
    assert.ok(isRecord(ours), 'msg._error (the node msg.error) is missing');
    assert.equal(ours['code'], code);
    assert.ok(typeof ours['message'] === 'string' && ours['message'].length > 0);
    for (const key of Object.keys(ours)) assert.ok(ERROR_KEYS.has(key), `unexpected msg.error.${key}`);
    assert.equal(errorsOf(id).length, 1, 'one node error');
    assertStatus(w, id, 'red', 'ring');
    return ours;
  }

  describe('ipcam-plate-add', function () {
    it('adds the short form and answers [{ plate, group, ok, errorCode }], status green', async function () {
      const w = await deploy();
      const msg = await w.expectOutput(ADD, { _msgid: 'add-1', topic: 'gate', payload: 'ABC123' });
      assert.deepEqual(msg.payload, [{ plate: 'ABC123', group: '1', ok: true, errorCode: 0 }]);
      assert.equal(msg._msgid, 'add-1');
      assert.equal(msg.topic, 'gate');
      assertClean(w, ADD, msg, '1 added');
      assert.ok(theSim().state.plates.get('ABC123', '1'));
      const [req] = accepted('/AddLicensePlates');
      assert.ok(req);
      const root = parseXml(req.body);
      assert.deepEqual([root.attrs['version'], root.attrs['xmlns']], ['2.1.0', NS]);
      assert.match(req.body, /<licensePlateNumber type="string"><!\[CDATA\[ABC123\]\]><\/licensePlateNumber>/);
      assertNoSecret(w.texts(), SIM_PASSWORD);
    });

    it('uses the group of its settings for plates that name none', async function () {
      const w = await deploy({ add: { group: '2' } });
      const msg = await w.expectOutput(ADD, { payload: ['A', { plate: 'B', group: '3' }] });
      assert.deepEqual(msg.payload, [
        { plate: 'A', group: '2', ok: true, errorCode: 0 },
        { plate: 'B', group: '3', ok: true, errorCode: 0 },
      ]);
      assert.ok(theSim().state.plates.get('A', '2'));
      assert.ok(theSim().state.plates.get('B', '3'));
      assertClean(w, ADD, msg, '2 added');
    });

    it('adds 250 plates in one message with 3 requests (100, 100, 50)', async function () {
      const w = await deploy();
      const plates = plateNames(1, 250);
      const msg = await w.expectOutput(ADD, { payload: plates });
      const results = listOf(msg);
      assert.deepEqual(
        results.map((r) => [r['plate'], r['ok'], r['errorCode']]),
        plates.map((p) => [p, true, 0]),
      );
      const adds = accepted('/AddLicensePlates');
      assert.equal(adds.length, 3);
      for (const [i, req] of adds.entries()) {
        const list = child(parseXml(req.body), 'licensePlates');
        assert.equal(list?.attrs['count'], String([100, 100, 50][i]));
        assert.equal(list?.attrs['maxCount'], '100');
        assert.deepEqual(
          list?.children.map((item) => child(item, 'index')?.text),
          list?.children.map((_, n) => String(n + 1)),
        );
      }
      assert.equal(theSim().state.plates.size, 250);
      assertClean(w, ADD, msg, '250 added');
    });

    it('sets owner, phone, begin and end with a follow-up ModifyLicensePlate', async function () {
      const w = await deploy();
      const details = { owner: 'Ann', phone: '+1 555', begin: '2026-02-01 00:00:00', end: '2026-12-31 23:59:59' };
      const msg = await w.expectOutput(ADD, { payload: [{ plate: 'D1', ...details }] });
      assert.deepEqual(msg.payload, [{ plate: 'D1', group: '1', ok: true, errorCode: 0 }]);
      assert.deepEqual(paths(), ['/AddLicensePlates', '/ModifyLicensePlate']);
      const stored = theSim().state.plates.get('D1', '1');
      assert.deepEqual(stored && { owner: stored.owner, phone: stored.phone, begin: stored.begin, end: stored.end }, details);
      assertClean(w, ADD, msg);
    });

    it('without upsert, duplicates are failed entries (203), ONE warning for the batch, and the message is sent', async function () {
      const w = await deploy();
      seed(['DUP1', 'DUP2']);
      const outcome = await w.send(ADD, { _msgid: 'dups', payload: ['DUP1', 'NEW1', { plate: 'DUP2', owner: 'x' }] });
      assert.equal(outcome.kind, 'out', 'per-plate failures are no node error');
      const results = listOf(outcome.msg);
      assert.equal(outcome.msg._msgid, 'dups');
      assert.equal(results.length, 3);
      for (const i of [0, 2]) {
        const r = results[i];
        assert.ok(r);
        assert.equal(r['ok'], false);
        assert.equal(r['errorCode'], 203);
        assert.equal(r['group'], '1');
        assert.match(String(r['error']), /already exists/i);
      }
      assert.deepEqual(
        results.map((r) => r['plate']),
        ['DUP1', 'NEW1', 'DUP2'],
      );
      assert.deepEqual(results[1], { plate: 'NEW1', group: '1', ok: true, errorCode: 0 });
      assert.equal(theSim().state.plates.get('DUP2', '1')?.owner, '', 'the existing plate is not modified');

      assert.equal(warnsOf(ADD).length, 1, 'one warning for the batch');
      assert.match(String(warnsOf(ADD)[0]?.[0]), /2 of 3/);
      assert.match(String(warnsOf(ADD)[0]?.[0]), /DUP1/);
      assert.deepEqual(errorsOf(ADD), []);
      assert.equal(outcome.msg['error'], undefined);
      assertStatus(w, ADD, 'yellow', 'ring', '1/3 added');
      assert.equal(w.messages.length, 1);
    });

    it('with upsert, modifies plates that already exist instead of failing them', async function () {
      const w = await deploy({ add: { upsert: true } });
      seed(['UP1']);
      const msg = await w.expectOutput(ADD, { payload: [{ plate: 'UP1', owner: 'Zed', phone: '42' }, { plate: 'UP2', owner: 'Amy' }] });
      assert.deepEqual(msg.payload, [
        { plate: 'UP1', group: '1', ok: true, errorCode: 0 },
        { plate: 'UP2', group: '1', ok: true, errorCode: 0 },
      ]);
      assert.equal(theSim().state.plates.get('UP1', '1')?.owner, 'Zed');
      assert.equal(theSim().state.plates.get('UP1', '1')?.phone, '42');
      assert.equal(theSim().state.plates.get('UP2', '1')?.owner, 'Amy');
      assertClean(w, ADD, msg, '2 added');
    });

    it('a full library gives 202 for each plate that did not fit, status yellow', async function () {
      const w = await deploy();
      theSim().state.plates.capacity = 1;
      const msg = await w.expectOutput(ADD, { payload: ['C1', 'C2', 'C3'] });
      assert.deepEqual(
        listOf(msg).map((r) => [r['plate'], r['ok'], r['errorCode']]),
        [
          ['C1', true, 0],
          ['C2', false, 202],
          ['C3', false, 202],
        ],
      );
      assert.equal(warnsOf(ADD).length, 1);
      assert.deepEqual(errorsOf(ADD), []);
      assertStatus(w, ADD, 'yellow', 'ring', '1/3 added');
    });
  });

  describe('ipcam-plate-query', function () {
    it('without a limit reads every page: 250 plates in order, msg.total', async function () {
      const w = await deploy();
      seed(plateNames(1, 250));
      const msg = await w.expectOutput(QUERY, { _msgid: 'q' });
      const plates = listOf(msg);
      assert.deepEqual(
        plates.map((p) => p['plate']),
        plateNames(1, 250),
      );
      assert.deepEqual(Object.keys(plates[0] ?? {}).sort(), ['begin', 'card', 'end', 'group', 'owner', 'phone', 'plate', 'type']);
      assert.equal(msg['total'], 250);
      assert.equal(msg._msgid, 'q');
      assert.deepEqual(
        accepted('/GetLicensePlates').map((r) => child(child(parseXml(r.body), 'searchFilter'), 'resultOffset')?.text),
        ['1', '101', '201'],
      );
      assertClean(w, QUERY, msg, '250 of 250');
    });

    it('offset and limit from msg.payload give one slice (offset 0 = resultOffset 1)', async function () {
      const w = await deploy();
      seed(plateNames(1, 250));
      let msg = await w.expectOutput(QUERY, { payload: { offset: 95, limit: 10 } });
      assert.deepEqual(
        listOf(msg).map((p) => p['plate']),
        plateNames(96, 105),
      );
      assert.equal(msg['total'], 250);
      const filter = child(parseXml(accepted('/GetLicensePlates')[0]?.body ?? ''), 'searchFilter');
      assert.deepEqual([child(filter, 'resultOffset')?.text, child(filter, 'maxResult')?.text], ['96', '10']);
      assertClean(w, QUERY, msg, '10 of 250');

      theSim().resetRequests();
      msg = await w.expectOutput(QUERY, { payload: { offset: 0, limit: 2 } });
      assert.deepEqual(
        listOf(msg).map((p) => p['plate']),
        [plateName(1), plateName(2)],
      );
      assert.equal(child(child(parseXml(accepted('/GetLicensePlates')[0]?.body ?? ''), 'searchFilter'), 'resultOffset')?.text, '1');
    });

    it('an empty group (errorCode 20) is an empty list with msg.total 0, not an error', async function () {
      const w = await deploy({ query: { group: '9' } });
      seed(['G1']);
      const msg = await w.expectOutput(QUERY, {});
      assert.deepEqual(msg.payload, []);
      assert.equal(msg['total'], 0);
      assertClean(w, QUERY, msg, '0 of 0');
      assert.equal(child(child(parseXml(accepted('/GetLicensePlates')[0]?.body ?? ''), 'searchFilter'), 'groupId')?.text, '9');
    });
  });

  describe('ipcam-plate-modify and ipcam-plate-delete', function () {
    it('modify answers { plate, group, ok: true } and the device holds the change', async function () {
      const w = await deploy();
      seed(['M1']);
      const msg = await w.expectOutput(MODIFY, { payload: { plate: 'M1', owner: 'Mo', end: '2030-01-01 00:00:00' } });
      assert.deepEqual(msg.payload, { plate: 'M1', group: '1', ok: true });
      assert.equal(theSim().state.plates.get('M1', '1')?.owner, 'Mo');
      assert.equal(theSim().state.plates.get('M1', '1')?.end, '2030-01-01 00:00:00');
      assertClean(w, MODIFY, msg);
    });

    it('modify of an unknown plate is EDEVICE 204 at the Catch node', async function () {
      const w = await deploy();
      const msg = await w.expectCaught(MODIFY, { _msgid: 'm404', payload: { plate: 'NOPE', owner: 'x' } });
      const ours = assertCaught(w, MODIFY, msg, 'EDEVICE');
      assert.equal(ours['deviceCode'], 204);
      assert.equal(msg._msgid, 'm404');
      assert.deepEqual(paths(), ['/ModifyLicensePlate']);
      assert.equal(w.messages.length, 1, 'nothing came out but the error');
    });

    it('delete reports an unknown plate per plate (204), one warning, status yellow', async function () {
      const w = await deploy();
      seed(['K1', 'K2']);
      const msg = await w.expectOutput(DELETE, { payload: ['K1', 'UNKNOWN', 'K2'] });
      const results = listOf(msg);
      assert.deepEqual(
        results.map((r) => [r['plate'], r['group'], r['ok'], r['errorCode']]),
        [
          ['K1', '1', true, 0],
          ['UNKNOWN', '1', false, 204],
          ['K2', '1', true, 0],
        ],
      );
      assert.match(String(results[1]?.['error']), /not found/i);
      assert.equal(theSim().state.plates.size, 0);
      assert.equal(warnsOf(DELETE).length, 1);
      assert.deepEqual(errorsOf(DELETE), []);
      assertStatus(w, DELETE, 'yellow', 'ring', '2/3 deleted');
    });

    it('delete of known plates is green', async function () {
      const w = await deploy();
      seed(['K1', 'K2']);
      const msg = await w.expectOutput(DELETE, { payload: [{ plate: 'K1' }, 'K2'] });
      assert.deepEqual(msg.payload, [
        { plate: 'K1', group: '1', ok: true, errorCode: 0 },
        { plate: 'K2', group: '1', ok: true, errorCode: 0 },
      ]);
      assertClean(w, DELETE, msg, '2 deleted');
    });

    it(`${NASTY} round-trips exactly through add, query, modify and delete nodes`, async function () {
      const w = await deploy();
      let msg = await w.expectOutput(ADD, { payload: NASTY });
      assert.deepEqual(msg.payload, [{ plate: NASTY, group: '1', ok: true, errorCode: 0 }]);
      assert.ok(theSim().state.plates.get(NASTY, '1'));

      msg = await w.expectOutput(QUERY, {});
      assert.deepEqual(
        listOf(msg).map((p) => p['plate']),
        [NASTY],
      );

      msg = await w.expectOutput(MODIFY, { payload: { plate: NASTY, owner: NASTY } });
      assert.deepEqual(msg.payload, { plate: NASTY, group: '1', ok: true });
      assert.equal(theSim().state.plates.get(NASTY, '1')?.owner, NASTY);

      msg = await w.expectOutput(QUERY, {});
      assert.deepEqual(
        listOf(msg).map((p) => [p['plate'], p['owner']]),
        [[NASTY, NASTY]],
      );

      msg = await w.expectOutput(DELETE, { payload: [NASTY] });
      assert.deepEqual(msg.payload, [{ plate: NASTY, group: '1', ok: true, errorCode: 0 }]);
      assert.equal(theSim().state.plates.size, 0);
      for (const id of [ADD, QUERY, MODIFY, DELETE]) assert.deepEqual(errorsOf(id), []);
    });
  });

  describe('ipcam-vehicle-config', function () {
    const INITIAL = {
      enabled: true,
      sensitivity: 50,
      region: 'Germany',
      saveTargetPicture: true,
      saveSourcePicture: false,
      dedup: { enabled: true, interval: 5 },
      zone: { x1: 1000, y1: 2000, x2: 9000, y2: 8000 },
      alarmMode: 'plateOnly',
      options: {
        regions: [
          { name: 'U.S.A', continent: 'NorthAmerica' },
          { name: 'Canada', continent: 'NorthAmerica' },
          { name: 'Germany', continent: 'Europe' },
          { name: 'Britain', continent: 'Europe' },
        ],
        alarmLists: ['blackList', 'whiteList', 'strangerList'],
      },
    };

    it('reads the typed config', async function () {
      const w = await deploy();
      const msg = await w.expectOutput(VEHICLE, { payload: 'read' });
      assert.deepEqual(msg.payload, INITIAL);
      assert.deepEqual(paths(), ['/GetSmartVehicleConfig']);
      assertClean(w, VEHICLE, msg);
    });

    it('a partial change is read-modify-write: only the changed values differ on the device', async function () {
      const w = await deploy();
      const before = structuredClone(theSim().state.vehicle);
      const msg = await w.expectOutput(VEHICLE, { payload: { sensitivity: 80, dedup: { enabled: false } } });
      assert.deepEqual(msg.payload, { ...INITIAL, sensitivity: 80, dedup: { enabled: false, interval: 5 } });
      assert.deepEqual(theSim().state.vehicle, { ...before, sensitivity: 80, dedupEnabled: false });
      assert.deepEqual(paths(), ['/GetSmartVehicleConfig', '/SetSmartVehicleConfig', '/GetSmartVehicleConfig']);
      const set = accepted('/SetSmartVehicleConfig')[0];
      assert.ok(set);
      const root = parseXml(set.body);
      assert.deepEqual([root.attrs['version'], root.attrs['xmlns']], ['2.0.0', NS]);
      assert.equal(child(child(root, 'vehicle'), 'plateSencitivity')?.text, '80');
      assert.doesNotMatch(set.body, /plateSensitivity/);
      assertClean(w, VEHICLE, msg);
    });

    it('API 1.x: no dedup and no alarmMode in the result', async function () {
      const w = await deploy();
      theSim().state.vehicle.api = '1.x';
      const config = objectOf(await w.expectOutput(VEHICLE, {}));
      assert.equal('dedup' in config, false);
      assert.equal('alarmMode' in config, false);
      assert.equal(config['sensitivity'], 50);
      assert.deepEqual(config['zone'], INITIAL.zone);
    });

    it('API 2.1 firmware: EDEVICE at the Catch node, saying not supported by this firmware', async function () {
      const w = await deploy();
      theSim().state.vehicle.api = '2.1';
      const msg = await w.expectCaught(VEHICLE, {});
      const ours = assertCaught(w, VEHICLE, msg, 'EDEVICE');
      assert.match(String(ours['message']), /GetSmartVehicleConfig\b.*not supported by this firmware/i);
      assert.equal(ours['deviceCode'], 1);
    });

    it('a region the device did not offer is EDEVICE after the read, and nothing is set', async function () {
      const w = await deploy();
      const before = structuredClone(theSim().state.vehicle);
      const msg = await w.expectCaught(VEHICLE, { payload: { region: 'Atlantis' } });
      assertCaught(w, VEHICLE, msg, 'EDEVICE');
      assert.deepEqual(paths(), ['/GetSmartVehicleConfig']);
      assert.deepEqual(theSim().state.vehicle, before);
    });
  });

  describe('a device that ignores resultOffset: the read ends with EDEVICE at the Catch node', function () {
    it('plate-query: two requests, the message names the cause', async function () {
      const w = await deploy();
      seed(plateNames(1, 250));
      theSim().state.plates.setPaging({ ignoreOffset: true, sendTotal: false });
      const msg = await w.expectCaught(QUERY, { _msgid: 'q' });
      const err = assertCaught(w, QUERY, msg, 'EDEVICE');
      assert.match(String(err['message']), /ignores resultOffset/);
      assert.deepEqual(paths(), ['/GetLicensePlates', '/GetLicensePlates']);
    });

    it('plate-sync: nothing is deleted or added', async function () {
      const w = await deploy();
      seed(plateNames(1, 250));
      theSim().state.plates.setPaging({ ignoreOffset: true, bogusTotal: 4_294_967_295 });
      const msg = await w.expectCaught(SYNC, { payload: [...plateNames(1, 50), 'NEW1'] });
      const err = assertCaught(w, SYNC, msg, 'EDEVICE');
      assert.match(String(err['message']), /ignores resultOffset/);
      assert.deepEqual(paths(), ['/GetLicensePlates', '/GetLicensePlates']);
      assert.equal(theSim().state.plates.size, 250);
      assert.equal(theSim().state.plates.get('NEW1', '1'), undefined);
    });
  });

  describe('ipcam-plate-sync', function () {
    it('from a superset removes the extra plates; status green with the counts', async function () {
      const w = await deploy();
      seed(['S1', 'S2', 'S3', 'S4']);
      const msg = await w.expectOutput(SYNC, { payload: ['S1', { plate: 'S2', owner: 'new' }] });
      assert.deepEqual(msg.payload, { added: [], modified: ['S2'], removed: ['S3', 'S4'], unchanged: ['S1'], failed: [], dryRun: false });
      assert.deepEqual(
        theSim()
          .state.plates.inGroup('1')
          .map((p) => [p.plate, p.owner]),
        [
          ['S1', ''],
          ['S2', 'new'],
        ],
      );
      // Removals first (room for additions), then the change.
      assert.deepEqual(paths(), ['/GetLicensePlates', '/DeleteLicensePlate', '/DeleteLicensePlate', '/ModifyLicensePlate']);
      assertClean(w, SYNC, msg, '+0 ~1 -2');
    });

    it('an unchanged list sends no write request', async function () {
      const w = await deploy();
      seed(['S1', 'S2']);
      const msg = await w.expectOutput(SYNC, { payload: ['S2', 'S1'] });
      assert.deepEqual(msg.payload, { added: [], modified: [], removed: [], unchanged: ['S2', 'S1'], failed: [], dryRun: false });
      assert.deepEqual(paths(), ['/GetLicensePlates']);
      assertStatus(w, SYNC, 'green', 'dot', '+0 ~0 -0');
    });

    it('a dry run reports the plan and sends only GetLicensePlates', async function () {
      const w = await deploy({ sync: { dryRun: true } });
      seed(['S1', 'S2']);
      const msg = await w.expectOutput(SYNC, { payload: [{ plate: 'S1', phone: '1' }, 'S3'] });
      assert.deepEqual(msg.payload, { added: ['S3'], modified: ['S1'], removed: ['S2'], unchanged: [], failed: [], dryRun: true });
      assert.deepEqual(paths(), ['/GetLicensePlates']);
      assert.equal(theSim().state.plates.size, 2);
      assertStatus(w, SYNC, 'green', 'dot', 'plan +1 ~1 -1');
    });

    it('a node of an older flow without the Dry run setting plans and changes nothing, as a new node starts', async function () {
      // The setting absent, as in a flow written before it existed (or by hand).
      const w = await deploy({ sync: { dryRun: undefined } });
      seed(['S1', 'S2']);
      const msg = await w.expectOutput(SYNC, { payload: ['S3'] });
      assert.deepEqual(msg.payload, { added: ['S3'], modified: [], removed: ['S1', 'S2'], unchanged: [], failed: [], dryRun: true });
      assert.deepEqual(paths(), ['/GetLicensePlates']);
      assert.equal(theSim().state.plates.size, 2);
    });

    it('plates the device refused make the status yellow and one warning', async function () {
      const w = await deploy();
      theSim().state.plates.capacity = 1;
      const msg = await w.expectOutput(SYNC, { payload: ['S1', 'S2'] });
      const report = objectOf(msg);
      assert.deepEqual(report['added'], ['S1']);
      assert.deepEqual(report['failed'], [{ plate: 'S2', action: 'add', errorCode: 202, error: 'Plate library full' }]);
      assert.equal(warnsOf(SYNC).length, 1);
      assert.deepEqual(errorsOf(SYNC), []);
      assertStatus(w, SYNC, 'yellow', 'ring');
    });
  });

  describe('bad input is EINPUT at the Catch node and sends nothing', function () {
    const BAD_DATES = ['2026-13-01 00:00:00', '2026-02-30 10:00:00', '2026-01-01', 'tomorrow'];
    const cases: Array<{ what: string; node: ActionId; payload: unknown }> = [
      { what: "plate-add: empty plate ''", node: ADD, payload: '' },
      { what: 'plate-add: plate 42', node: ADD, payload: 42 },
      { what: 'plate-add: plate null', node: ADD, payload: null },
      { what: 'plate-add: plate {}', node: ADD, payload: {} },
      { what: 'plate-add: no payload', node: ADD, payload: undefined },
      { what: 'plate-add: [{ plate: 42 }]', node: ADD, payload: ['A', { plate: 42 }] },
      { what: 'plate-add: empty list []', node: ADD, payload: [] },
      { what: "plate-add: empty group ''", node: ADD, payload: [{ plate: 'A', group: '' }] },
      { what: 'plate-add: begin after end', node: ADD, payload: [{ plate: 'A', begin: '2026-05-02 00:00:00', end: '2026-05-01 00:00:00' }] },
      ...BAD_DATES.map((d) => ({ what: `plate-add: begin ${JSON.stringify(d)}`, node: ADD, payload: { plate: 'A', begin: d } })),
      ...BAD_DATES.map((d) => ({ what: `plate-add: end ${JSON.stringify(d)}`, node: ADD, payload: [{ plate: 'A', end: d }] })),
      { what: "plate-delete: empty plate ''", node: DELETE, payload: '' },
      { what: 'plate-delete: plate 42', node: DELETE, payload: [42] },
      { what: 'plate-delete: plate null', node: DELETE, payload: null },
      { what: 'plate-delete: plate {}', node: DELETE, payload: {} },
      { what: 'plate-delete: empty list []', node: DELETE, payload: [] },
      { what: "plate-delete: empty group ''", node: DELETE, payload: { plate: 'A', group: '' } },
      { what: 'plate-modify: nothing to modify', node: MODIFY, payload: { plate: 'A' } },
      { what: 'plate-modify: not an object', node: MODIFY, payload: 'A' },
      { what: "plate-modify: empty plate ''", node: MODIFY, payload: { plate: '', owner: 'x' } },
      { what: 'plate-modify: plate 42', node: MODIFY, payload: { plate: 42, owner: 'x' } },
      { what: "plate-modify: empty group ''", node: MODIFY, payload: { plate: 'A', group: '', owner: 'x' } },
      { what: 'plate-modify: begin after end', node: MODIFY, payload: { plate: 'A', begin: '2026-05-02 00:00:00', end: '2026-05-01 00:00:00' } },
      ...BAD_DATES.map((d) => ({ what: `plate-modify: begin ${JSON.stringify(d)}`, node: MODIFY, payload: { plate: 'A', begin: d } })),
      { what: 'plate-query: offset -1', node: QUERY, payload: { offset: -1 } },
      { what: 'plate-query: limit 0', node: QUERY, payload: { limit: 0 } },
      { what: "plate-query: empty group ''", node: QUERY, payload: { group: '' } },
      ...[-1, 101, 50.5, '50'].map((s) => ({ what: `vehicle-config: sensitivity ${JSON.stringify(s)}`, node: VEHICLE, payload: { sensitivity: s } })),
      { what: 'vehicle-config: zone x1 = x2', node: VEHICLE, payload: { zone: { x1: 100, y1: 0, x2: 100, y2: 50 } } },
      { what: 'vehicle-config: zone x1 > x2', node: VEHICLE, payload: { zone: { x1: 200, y1: 0, x2: 100, y2: 50 } } },
      { what: 'vehicle-config: zone y1 = y2', node: VEHICLE, payload: { zone: { x1: 0, y1: 50, x2: 100, y2: 50 } } },
      { what: 'vehicle-config: zone y1 > y2', node: VEHICLE, payload: { zone: { x1: 0, y1: 60, x2: 100, y2: 50 } } },
      { what: 'plate-sync: a plate listed twice', node: SYNC, payload: ['S1', 'S2', 'S1'] },
      { what: 'plate-sync: a plate of another group', node: SYNC, payload: ['S1', { plate: 'S2', group: '7' }] },
      { what: 'plate-sync: not a list', node: SYNC, payload: 'S1' },
    ];
    for (const c of cases) {
      it(c.what, async function () {
        const w = await deploy();
        seed(['A', 'S1']);
        const before = theSim().state.requestCount;
        const vehicle = structuredClone(theSim().state.vehicle);
        const msg = await w.expectCaught(c.node, { _msgid: 'bad', payload: c.payload });
        assertCaught(w, c.node, msg, 'EINPUT');
        assert.equal(msg._msgid, 'bad');
        assertStatus(w, c.node, 'red', 'ring');
        assert.match(String(w.lastStatus(c.node).text), /^EINPUT: /);
        assert.equal(theSim().state.requestCount, before, 'a request was sent');
        assert.equal(theSim().state.plates.size, 2);
        assert.deepEqual(theSim().state.vehicle, vehicle);
        assert.equal(w.messages.length, 1, 'nothing came out but the error');
      });
    }
  });
});
