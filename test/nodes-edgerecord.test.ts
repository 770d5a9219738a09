/**
 * The ipcam-edgerecord node in a real Node-RED runtime against the simulator: settings as
 * parameter defaults, msg.payload overriding them (operation too), msg.total / filename /
 * contentType, short status texts, errors at a Catch node with nothing sent for bad input, the
 * editor's operations endpoint, and no password anywhere.
 */
import { strict as assert } from 'node:assert';
import sinon from 'sinon';
import { RECORD_LIMIT } from '../lib/ops/edge';
import { startSimulator, type Simulator } from '../lib/simulator';
import { SNAPSHOT_JPEG } from '../lib/simulator/images';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import edgeRecordNode from '../nodes/ipcam-edgerecord/ipcam-edgerecord';
import type { NodeMessage } from '../nodes/red';
import { SIM_PASSWORD, SIM_USER } from './helpers';
import { DOWNLOAD_TYPES, HOSTILE_SVG } from './hostile-content';
import { DEVICE, FlowWatch, actionFlow, assertNoSecret, deviceCredentials, deviceDef, helper, isRecord } from './node-helper';

const NODE = 'edge';

function listOf(msg: NodeMessage): Array<Record<string, unknown>> {
  assert.ok(Array.isArray(msg.payload), `payload is not a list: ${JSON.stringify(msg.payload)}`);
  for (const item of msg.payload as unknown[]) assert.ok(isRecord(item));
  return msg.payload as Array<Record<string, unknown>>;
}

describe('ipcam-edgerecord node', function () {
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

  async function deploy(settings: Record<string, unknown>): Promise<FlowWatch> {
    sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD });
    const node = { id: NODE, type: 'ipcam-edgerecord', name: '', device: DEVICE, operation: 'search', params: {}, ...settings };
    await helper.load([deviceNode, edgeRecordNode], actionFlow(node, [deviceDef(sim)]), deviceCredentials(SIM_PASSWORD));
    return new FlowWatch([NODE, DEVICE]);
  }

  function targets(): string[] {
    return theSim()
      .state.requests.filter((r) => r.auth !== 'rejected')
      .map((r) => (r.rawQuery === '' ? r.path : `${r.path}?${r.rawQuery}`));
  }

  function assertStatus(w: FlowWatch, fill: string, text?: string): void {
    const s = w.lastStatus(NODE);
    assert.equal(s.fill, fill, JSON.stringify(s));
    assert.ok(typeof s.text === 'string' && s.text.length > 0 && s.text.length <= (fill === "red" ? 32 : 19), `status text "${s.text}"`);
    if (text !== undefined) assert.equal(s.text, text);
  }

  /** The Catch node's msg: Node-RED's `error`, the node's own moved to `_error`. */
  function caughtCode(msg: NodeMessage): string {
    const ours = msg['_error'];
    assert.ok(isRecord(ours), 'msg._error (the node msg.error) is missing');
    assert.ok(isRecord(msg['error']) && isRecord(msg['error']['source']) && msg['error']['source']['id'] === NODE);
    return String(ours['code']);
  }

  it('search: the settings are the defaults (as the editor stores them: text), msg.total and a short status', async function () {
    const w = await deploy({ params: { from: '2026-03-02 00:00:00', to: '2026-03-02 23:59:59', limit: '4', sort: '', all: false } });
    const msg = await w.expectOutput(NODE, { _msgid: 'm1', payload: 'go' });
    const records = listOf(msg);
    assert.equal(records.length, 4);
    assert.deepEqual(Object.keys(records[0] ?? {}), ['name', 'recordId', 'start', 'stop', 'duration', 'trigger', 'recordingType', 'complete', 'storage', 'media']);
    assert.equal(records[0]?.['start'], '2026-03-02 06:12:05');
    assert.equal(msg['total'], 10);
    assert.equal(msg._msgid, 'm1');
    assert.deepEqual(targets(), ['/cgi-bin/admin/edgerecord?sort=asc&trigtype=All&fromdate=2026-03-02%2000%3A00%3A00&todate=2026-03-02%2023%3A59%3A59&limit=4']);
    assertStatus(w, 'green', '4 of 10');
  });

  it('msg.payload overrides the settings: all pages of the range, each record once', async function () {
    const w = await deploy({ params: { limit: '4' } });
    const msg = await w.expectOutput(NODE, { payload: { all: true, limit: 2, from: '2026-03-01 08:30:00', to: '2026-03-01 15:20:00' } });
    const records = listOf(msg);
    assert.deepEqual(
      records.map((r) => r['recordId']),
      [1002, 1003, 1004, 1005, 1006, 1007, 1008],
    );
    assert.equal(msg['total'], 7);
    assertStatus(w, 'green', '7 of 7');
  });

  it('msg.payload.operation chooses another operation; the settings then do not apply', async function () {
    const w = await deploy({ params: { limit: '4', trigger: 'Motion' } });
    const msg = await w.expectOutput(NODE, { payload: { operation: 'eventNames' } });
    assert.deepEqual(msg.payload, theSim().state.records.eventNames());
    assertStatus(w, 'green', `${theSim().state.records.eventNames().length} names`);
  });

  it('listStorage then download: the path listStorage gives is what download takes; filename and contentType', async function () {
    const w = await deploy({ operation: 'listStorage', params: { directory: '2026-03-01/08/1002', limit: '5' } });
    const listed = await w.expectOutput(NODE, {});
    const files = listOf(listed);
    assert.equal(listed['total'], 3);
    assertStatus(w, 'green', '3 entries');
    const msg = await w.expectOutput(NODE, { payload: { operation: 'download', path: files[0]?.['path'] } });
    assert.ok(Buffer.isBuffer(msg.payload) && msg.payload.equals(SNAPSHOT_JPEG));
    assert.equal(msg['filename'], 'snapshot1.jpg');
    assert.equal(msg['contentType'], 'image/jpeg');
    assertStatus(w, 'green', `${SNAPSHOT_JPEG.length} bytes`);
    assertNoSecret(w.texts(), SIM_PASSWORD);
  });

  it('download: a device content type reaches msg.contentType only from the allow list (text/html, SVG, script: application/octet-stream)', async function () {
    const w = await deploy({ operation: 'download', params: { path: '2026-03-01/08/1002/snapshot1.jpg', mac: '00:18:AE:11:22:33' } });
    for (const [given, expected] of DOWNLOAD_TYPES) {
      theSim().inject({ kind: 'answer', path: '/ns/', times: 1, contentType: given, body: HOSTILE_SVG });
      const msg = await w.expectOutput(NODE, { _msgid: given });
      assert.equal(msg['contentType'], expected, given);
      assert.ok(Buffer.isBuffer(msg.payload) && msg.payload.equals(HOSTILE_SVG), 'the bytes are handed on as they came');
    }
    assert.equal(theSim().state.faults.length, 0, 'every answer was served');
  });

  describe('errors reach a Catch node', function () {
    const bad: Array<[string, Record<string, unknown>, unknown]> = [
      ['a limit out of range', {}, { limit: RECORD_LIMIT.max + 1 }],
      ['a field the operation does not take', {}, { directory: 'x' }],
      ['an unknown operation', {}, { operation: 'deleteAll' }],
      ['a path that climbs out', { operation: 'download' }, { path: '2026-03-01/../../etc/passwd' }],
      ['a bad setting', { params: { sort: 'sideways' } }, {}],
    ];
    for (const [what, settings, payload] of bad) {
      it(`${what}: EINPUT, nothing sent, red status`, async function () {
        const w = await deploy(settings);
        const msg = await w.expectCaught(NODE, { payload });
        assert.equal(caughtCode(msg), 'EINPUT');
        assert.equal(theSim().state.requestCount, 0);
        assertStatus(w, 'red');
        assert.match(String(w.lastStatus(NODE).text), /^EINPUT: /);
      });
    }

    it('a device that repeats its page with all: EDEVICE after two requests', async function () {
      const w = await deploy({ params: { all: true, limit: '5' } });
      theSim().state.records.ignoreFromDate = true;
      const msg = await w.expectCaught(NODE, {});
      assert.equal(caughtCode(msg), 'EDEVICE');
      assert.equal(targets().length, 2);
      assertStatus(w, 'red');
      assertNoSecret(w.texts(), SIM_PASSWORD);
    });

    it('a file that is not there: EHTTP 404', async function () {
      const w = await deploy({ operation: 'download', params: { path: '2026-03-01/08/1002/none.jpg' } });
      const msg = await w.expectCaught(NODE, {});
      assert.equal(caughtCode(msg), 'EHTTP');
      assertStatus(w, 'red', 'EHTTP 404: camera');
    });
  });
});
