/**
 * ipcam-request: the setting names the operation (or `msg`), settings are parameter defaults,
 * msg.payload overrides them, a message chooses only a `read` operation (every other class runs
 * only when the node's own setting names it), a node saved without an operation runs
 * getDeviceInfo, server tests refuse shell syntax, and every failure reaches a Catch node with
 * nothing sent where the input was bad.
 */
import { strict as assert } from 'node:assert';
import { REQUEST_OPERATIONS } from '../lib/ops';
import { startSimulator, type Simulator } from '../lib/simulator';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import requestNode from '../nodes/ipcam-request/ipcam-request';
import { SIM_PASSWORD, SIM_USER } from './helpers';
import { DOWNLOAD_TYPES, HOSTILE_SVG } from './hostile-content';
import { ITEM_5, ITEM_5_ANSWERS, ITEM_5_LOCAL, SERVER_TESTS, SHELL_VALUES } from './op-classes-cases';
import { DEVICE, FlowWatch, actionFlow, assertNoSecret, deviceCredentials, deviceDef, helper, isRecord, statusesSinceLoad, type FlowNode } from './node-helper';

const REQUEST = 'req1';

function requestDef(settings: Record<string, unknown>): FlowNode {
  return { id: REQUEST, type: 'ipcam-request', name: '', device: DEVICE, operation: 'readClimate', params: {}, ...settings };
}

describe('ipcam-request node', function () {
  let sim: Simulator | undefined;

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.unload();
    await helper.stopServer();
  });

  afterEach(async function () {
    await helper.unload();
    await sim?.close();
    sim = undefined;
  });

  function theSim(): Simulator {
    assert.ok(sim, 'no simulator');
    return sim;
  }

  async function deploy(settings: Record<string, unknown>): Promise<FlowWatch> {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD });
    await helper.load([deviceNode, requestNode], actionFlow(requestDef(settings), [deviceDef(sim)]), deviceCredentials(SIM_PASSWORD));
    return new FlowWatch([REQUEST, DEVICE]);
  }

  function errorOf(msg: Record<string, unknown>): Record<string, unknown> {
    const error = msg['error'];
    assert.ok(isRecord(error));
    return error;
  }

  it('runs the operation its setting names, with the settings as defaults that msg.payload overrides', async function () {
    const w = await deploy({ operation: 'lens', params: { mode: 'zoom', position: '20' } });
    const first = await w.expectOutput(REQUEST, { payload: 'go' });
    assert.deepEqual(first.payload, { ok: true });
    assert.equal(theSim().state.equipment.zoom, 20);
    await w.expectOutput(REQUEST, { payload: { position: 70 } });
    assert.equal(theSim().state.equipment.zoom, 70);
    assert.match(String(w.lastStatus(REQUEST).text), /^lens/);
  });

  it('backup: a device content type reaches msg.contentType only from the allow list (text/html, SVG, script: application/octet-stream)', async function () {
    const w = await deploy({ operation: 'backup' });
    for (const [given, expected] of DOWNLOAD_TYPES) {
      theSim().inject({ kind: 'answer', path: '/cgi-bin/admin/backup', times: 1, contentType: given, body: HOSTILE_SVG });
      const msg = await w.expectOutput(REQUEST, { _msgid: given });
      assert.equal(msg['contentType'], expected, given);
      assert.ok(Buffer.isBuffer(msg.payload) && msg.payload.equals(HOSTILE_SVG));
    }
    assert.equal(theSim().state.faults.length, 0, 'every answer was served');
    // The simulator's own backup: its tar type passes.
    assert.equal((await w.expectOutput(REQUEST, {}))['contentType'], 'application/x-tar');
  });

  it('a typed result reaches msg.payload', async function () {
    const w = await deploy({ operation: 'readClimate' });
    const msg = await w.expectOutput(REQUEST, {});
    assert.deepEqual(msg.payload, { temperatureC: 41.5, temperatureF: 106.7, fan: 'on', heater: 'off' });
  });

  it('operation msg: msg.payload.operation chooses, its fields are the parameters (no defaults of another operation)', async function () {
    const w = await deploy({ operation: 'msg', params: { channel: 'not a channel' } });
    const out = await w.expectOutput(REQUEST, { payload: { operation: 'getPtzCaps', channel: 1 } });
    assert.ok(isRecord(out.payload) && typeof out.payload['maxSpeed'] === 'number');
    const msg = await w.expectCaught(REQUEST, { payload: {} });
    assert.equal(errorOf(msg)['code'], 'EINPUT');
  });

  it('a node set to one operation refuses a msg naming another, nothing sent', async function () {
    const w = await deploy({ operation: 'readClimate' });
    const before = theSim().state.requestCount;
    const msg = await w.expectCaught(REQUEST, { payload: { operation: 'setDefog', on: true } });
    assert.equal(errorOf(msg)['code'], 'EINPUT');
    assert.equal(theSim().state.requestCount, before);
  });

  it('bad parameters and unknown operations are EINPUT at the Catch node, nothing sent', async function () {
    const w = await deploy({ operation: 'msg' });
    for (const payload of [{ operation: 'lens', mode: 'zoom', step: 81 }, { operation: 'noSuchThing' }, { operation: 'lens', mode: 'zoom', step: 1, typo: 1 }, { operation: 'x'.repeat(100_000) }]) {
      const msg = await w.expectCaught(REQUEST, { payload });
      const error = errorOf(msg);
      assert.equal(error['code'], 'EINPUT', String(error['message']));
      assert.ok(String(error['message']).length < 300);
    }
    assert.equal(theSim().state.requestCount, 0);
    assertNoSecret(w.texts(), SIM_PASSWORD);
  });

  it('a setting out of its rules is a red status at deploy naming it and the nearest valid value; every message then gets that EINPUT, nothing sent', async function () {
    const w = await deploy({ operation: 'getdeviceinfo' });
    const red = { fill: 'red', shape: 'ring', text: 'EINPUT: operation getDeviceInfo?' };
    assert.deepEqual(statusesSinceLoad(REQUEST), [red], 'the status at deploy, before any message');
    for (const payload of [undefined, {}, { operation: 'getDeviceInfo' }]) {
      const error = errorOf(await w.expectCaught(REQUEST, { payload }));
      assert.equal(error['code'], 'EINPUT');
      assert.match(String(error['message']), /Unknown operation "getdeviceinfo" in the Operation setting \(nearest valid value: "getDeviceInfo"\); nothing is sent until the setting operation "getdeviceinfo" is changed/);
      assert.deepEqual(w.lastStatus(REQUEST), red);
    }
    assert.equal(theSim().state.requestCount, 0, 'a request reached the device');
  });

  it('a bad stored setting of the rules table (Overrides) is refused at deploy too, with nothing sent', async function () {
    const w = await deploy({ operation: 'getDeviceInfo', overrides: 'nnoe' });
    assert.deepEqual(statusesSinceLoad(REQUEST), [{ fill: 'red', shape: 'ring', text: 'EINPUT: overrides none?' }]);
    const error = errorOf(await w.expectCaught(REQUEST, {}));
    assert.match(String(error['message']), /Overrides must be one of payload, none, got "nnoe" \(nearest valid value: "none"\)/);
    assert.equal(theSim().state.requestCount, 0);
  });

  it('a setting absent from an older flow takes its default: no Overrides is payload, and the node runs', async function () {
    const w = await deploy({ operation: 'getDeviceInfo', overrides: undefined });
    const msg = await w.expectOutput(REQUEST, { payload: {} });
    assert.ok(isRecord(msg.payload));
    assert.ok(!statusesSinceLoad(REQUEST).some((s) => isRecord(s) && s['fill'] === 'red'));
  });

  it('a secret parameter is never taken from the settings (kept in clear in the flow file): only from msg.payload', async function () {
    const w = await deploy({ operation: 'testSmtp', params: { server: 'smtp.example.com', to: 'a@example.com', from: 'b@example.com', user: 'cam', password: 'in-the-flow-file' } });
    await w.expectOutput(REQUEST, {});
    assert.ok(!JSON.stringify(theSim().state.requests).includes('in-the-flow-file'), 'the stored secret was sent');
    theSim().resetRequests();
    await w.expectOutput(REQUEST, { payload: { password: 'from-the-message' } });
    assert.ok(theSim().state.requests.some((r) => r.rawQuery.includes('from-the-message')), 'the secret of the message was not sent');
  });

  describe('destructive operations', function () {
    const destructive = [...REQUEST_OPERATIONS.values()].filter((op) => op.destructive).map((op) => op.name);

    it('the table marks the destructive operations of DESIGN', function () {
      const expected = ['modifyPassword', 'removeParamGroup', 'factoryReset', 'restore', 'upgradeFirmware', 'reboot', 'selfSignCertificate', 'writeFile'];
      assert.deepEqual([...destructive].sort(), [...expected].sort());
    });

    for (const name of ['reboot', 'factoryReset', 'writeFile', 'removeParamGroup']) {
      it(`${name} chosen by msg is EINPUT with nothing sent`, async function () {
        const w = await deploy({ operation: 'msg' });
        const msg = await w.expectCaught(REQUEST, { payload: { operation: name } });
        const error = errorOf(msg);
        assert.equal(error['code'], 'EINPUT');
        assert.match(String(error['message']), /only from a node whose Operation setting names it/);
        assert.equal(theSim().state.requestCount, 0);
      });
    }
  });
  describe('operation classes: a message chooses only read operations', function () {
    for (const [name, payload] of ITEM_5) {
      it(`${name} from a node set to msg is EINPUT, says to set the operation in the node, nothing sent`, async function () {
        const w = await deploy({ operation: 'msg' });
        const msg = await w.expectCaught(REQUEST, { payload: { operation: name, ...payload } });
        const error = errorOf(msg);
        assert.equal(error['code'], 'EINPUT');
        assert.match(String(error['message']), /a message chooses only read operations.*set the operation in the node/);
        assert.equal(theSim().state.requestCount, 0);
      });

      it(`${name} from a node whose setting names it is sent`, async function () {
        this.timeout(20000);
        const w = await deploy({ operation: name });
        const outcome = await w.send(REQUEST, { payload: ITEM_5_LOCAL[name] });
        assert.equal(outcome.kind, 'out', outcome.kind === 'caught' ? JSON.stringify(errorOf(outcome.msg)) : '');
        assert.deepEqual(outcome.msg.payload, ITEM_5_ANSWERS[name]);
        assert.ok(theSim().state.requestCount > 0, `${name} reached the device`);
      });
    }

    it('every read operation may come from a message: it reaches the device', async function () {
      this.timeout(30000);
      const w = await deploy({ operation: 'msg' });
      for (const op of REQUEST_OPERATIONS.values()) {
        if (op.class !== 'read') continue;
        theSim().resetRequests();
        const out = await w.expectOutput(REQUEST, { payload: { operation: op.name } });
        assert.ok(out.payload !== undefined, op.name);
        if (op.api !== 'rtsp') assert.ok(theSim().state.requestCount > 0, `${op.name} reached the device`);
      }
    });

    it('a node saved without an operation runs getDeviceInfo, and a message cannot choose another', async function () {
      const w = await deploy({ operation: undefined });
      const out = await w.expectOutput(REQUEST, {});
      assert.ok(isRecord(out.payload) && typeof out.payload['model'] === 'string');
      const before = theSim().state.requestCount;
      const msg = await w.expectCaught(REQUEST, { payload: { operation: 'readClimate' } });
      assert.equal(errorOf(msg)['code'], 'EINPUT');
      assert.equal(theSim().state.requestCount, before);
    });
  });

  describe('server tests refuse shell syntax and options', function () {
    for (const test of SERVER_TESTS) {
      it(`${test.name}: every shell value in ${test.fields.join(', ')} is EINPUT at the Catch node, nothing sent`, async function () {
        this.timeout(30000);
        const w = await deploy({ operation: test.name });
        for (const field of test.fields) {
          for (const value of SHELL_VALUES) {
            const error = errorOf(await w.expectCaught(REQUEST, { payload: { ...test.base, [field]: value } }));
            assert.equal(error['code'], 'EINPUT', `${field} ${JSON.stringify(value)}`);
          }
        }
        assert.equal(theSim().state.requestCount, 0);
      });
    }

    it('ordinary values pass: a share path, user.name, DOMAIN', async function () {
      const w = await deploy({ operation: 'testNetworkStorage', params: { type: 'cifs', server: '//nas/share/cam1', user: 'user.name', workgroup: 'DOMAIN' } });
      const out = await w.expectOutput(REQUEST, { payload: { password: 'Pa55!word#*~' } });
      assert.ok(isRecord(out.payload) && out.payload['ok'] === true);
      assert.ok(theSim().state.requests.some((r) => r.path === '/cgi-bin/admin/servetest' && r.rawQuery.includes('Workgroup=DOMAIN')));
    });
  });
});
