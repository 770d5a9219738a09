/**
 * ipcam-request: the setting names the operation (or `msg`), settings are parameter defaults,
 * msg.payload overrides them, a destructive operation runs only when the node's own setting
 * names it, and every failure reaches a Catch node with nothing sent where the input was bad.
 */
import { strict as assert } from 'node:assert';
import { REQUEST_OPERATIONS } from '../lib/ops';
import { startSimulator, type Simulator } from '../lib/simulator';
import deviceNode from '../nodes/ipcam-device';
import requestNode from '../nodes/ipcam-request';
import { SIM_PASSWORD, SIM_USER } from './helpers';
import { DOWNLOAD_TYPES, HOSTILE_SVG } from './hostile-content';
import { DEVICE, FlowWatch, actionFlow, assertNoSecret, deviceCredentials, deviceDef, helper, isRecord, type FlowNode } from './node-helper';

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
    const w = await deploy({ operation: 'msg', params: { mode: 'zoom', step: 5 } });
    await w.expectOutput(REQUEST, { payload: { operation: 'setDefog', on: true } });
    assert.equal(theSim().state.equipment.defog, true);
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
});
