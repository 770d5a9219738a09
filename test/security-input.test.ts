/**
 * Every text sent to a device is checked for its place before anything is sent: XML 1.0
 * characters in XML, no control characters in names, bounded lengths, whole numbers in range.
 * Each bad value is EINPUT with no request reaching the simulator, and the error text that
 * echoes it is short and on one line, however long or broken the value is.
 */
import { strict as assert } from 'node:assert';
import { listParams, updateParams } from '../lib/ops/param-calls';
import { cgiPtz } from '../lib/ops/ptz-cgi';
import { runRelaySequence } from '../lib/ops/relay';
import { takeSnapshot } from '../lib/ops/snapshot';
import { IpcamError } from '../lib/errors/errors';
import { startSimulator, type Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { setHttpPostConfig } from '../lib/ops/http-post';
import { addPlates, deletePlates, modifyPlate } from '../lib/ops/plates';
import { PtzMover } from '../lib/ops/ptz-mover';
import { getVehicleConfig, setVehicleConfig } from '../lib/ops/vehicle-config';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import ptzNode from '../nodes/ipcam-ptz/ipcam-ptz';
import { SIM_PASSWORD, SIM_USER } from './helpers';
import { FlowWatch, actionFlow, deviceCredentials, deviceDef, helper, isRecord } from './node-helper';

/** The longest error text a bad value may give (our words around a value echoed at most 40 characters). */
const TEXT_MAX = 300;
const TEN_MB = 'x'.repeat(10 * 1024 * 1024);

function assertShortLine(text: string, what: string): void {
  assert.ok(text.length <= TEXT_MAX, `${what}: ${text.length} characters`);
  assert.doesNotMatch(text, /[\r\n\u2028\u2029]/, `${what}: more than one line`);
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  assert.doesNotMatch(text, /[\u0000-\u001f\u007f]/, `${what}: a control character`);
}

describe('text sent to devices is checked for its place (EINPUT, nothing sent)', function () {
  this.timeout(20_000);
  let sim: Simulator;
  let client: DeviceClient;

  before(async function () {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'any' });
    client = new DeviceClient({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password: SIM_PASSWORD });
  });

  after(async function () {
    await client.close();
    await sim.close();
  });

  const cases: Array<{ what: string; run: (c: DeviceClient) => Promise<unknown> }> = [
    { what: 'plate number with NUL', run: (c) => addPlates(c, 'AB\u0000C1') },
    { what: 'plate number with BEL', run: (c) => addPlates(c, 'AB\u0007C1') },
    { what: 'plate number with U+FFFF', run: (c) => addPlates(c, 'AB\uffffC1') },
    { what: 'plate number with U+FFFE', run: (c) => addPlates(c, 'AB\ufffeC1') },
    { what: 'plate number with CR LF', run: (c) => addPlates(c, 'AB\r\nC1') },
    { what: 'plate number with a line separator', run: (c) => addPlates(c, 'AB\u2028C1') },
    { what: 'plate number with a lone surrogate', run: (c) => addPlates(c, 'AB\ud800C1') },
    { what: 'plate number of 10 MB', run: (c) => addPlates(c, TEN_MB) },
    { what: 'plate number of 33 characters', run: (c) => addPlates(c, 'A'.repeat(33)) },
    { what: 'one bad plate among good ones', run: (c) => addPlates(c, ['GOOD1', 'BAD\u00001', 'GOOD2']) },
    { what: 'plate owner with LF', run: (c) => addPlates(c, { plate: 'OWN1', owner: 'Ann\nBob' }) },
    { what: 'plate owner with BEL', run: (c) => modifyPlate(c, { plate: 'OWN1', owner: 'Ann\u0007' }) },
    { what: 'plate phone of 10 MB', run: (c) => addPlates(c, { plate: 'OWN1', phone: TEN_MB }) },
    { what: 'plate group with U+FFFF', run: (c) => addPlates(c, { plate: 'GRP1', group: 'g\uffff' }) },
    { what: 'plate to delete with NUL', run: (c) => deletePlates(c, 'DEL\u00001') },
    { what: 'CGI preset name with CR LF', run: (c) => cgiPtz(c, { action: 'savePreset', preset: 'home\r\nX-Injected: 1' }) },
    { what: 'CGI preset name with NUL', run: (c) => cgiPtz(c, { action: 'gotoPreset', preset: 'home\u0000' }) },
    { what: 'CGI preset name of 10 MB', run: (c) => cgiPtz(c, { action: 'gotoPreset', preset: TEN_MB }) },
    { what: 'CGI PTZ action of 10 MB', run: (c) => cgiPtz(c, TEN_MB) },
    { what: 'CGI PTZ stream 1e20', run: (c) => cgiPtz(c, { action: 'left', stream: 1e20 }) },
    { what: 'relay sequence of 100,000 characters', run: (c) => runRelaySequence(c, 1, `1:/${'100\\100/'.repeat(12_500)}`) },
    { what: 'relay sequence with a wait of 1e20 ms', run: (c) => runRelaySequence(c, 1, '1:/100000000000000000000\\') },
    { what: 'XML PTZ action of 10 MB', run: (c) => new PtzMover(c).move({ action: TEN_MB }) },
    { what: 'XML PTZ action with a line break', run: (c) => new PtzMover(c).move({ action: 'Left\r\nStop' }) },
    { what: 'XML PTZ channel 1e20', run: (c) => new PtzMover(c).move({ action: 'Left', channel: 1e20 }) },
    { what: "XML PTZ channel '1e20'", run: (c) => new PtzMover(c).move({ action: 'Left', channel: '1e20' }) },
    { what: 'XML PTZ channel 2.5', run: (c) => new PtzMover(c).move({ action: 'Left', channel: 2.5 }) },
    { what: 'vehicle config channel 1e20', run: (c) => getVehicleConfig(c, { channel: 1e20 }) },
    { what: 'vehicle config region with NUL', run: (c) => setVehicleConfig(c, { region: 'Germ\u0000any' }) },
    { what: 'vehicle config region of 10 MB', run: (c) => setVehicleConfig(c, { region: TEN_MB }) },
    { what: 'vehicle config alarm mode with a line break', run: (c) => setVehicleConfig(c, { alarmMode: 'plateOnly\nx' }) },
    { what: 'vehicle config zone 1e20', run: (c) => setVehicleConfig(c, { zone: { x1: 0, y1: 0, x2: 1e20, y2: 10 } }) },
    { what: 'parameter value with CR LF', run: (c) => updateParams(c, { 'Image.I0.Text.String': 'a\r\nroot.Brand.Brand=x' }) },
    { what: 'parameter value of 10 MB', run: (c) => updateParams(c, { 'Image.I0.Text.String': TEN_MB }) },
    { what: 'parameter name with a line break', run: (c) => listParams(c, ['Brand\n']) },
    { what: 'parameter name of 10 MB', run: (c) => listParams(c, [TEN_MB]) },
    { what: 'snapshot param value with CR LF', run: (c) => takeSnapshot(c, { params: { resolution: '640x480\r\nX: y' } }) },
    { what: 'snapshot param name of 10 MB', run: (c) => takeSnapshot(c, { params: { [TEN_MB]: 1 } }) },
    { what: 'event path with CR LF', run: (c) => setHttpPostConfig(c, { serverIp: '10.0.0.1', serverPort: 5002, path: '/lpr\r\nHost: x' }) },
    { what: 'event server port 1e20', run: (c) => setHttpPostConfig(c, { serverIp: '10.0.0.1', serverPort: 1e20 }) },
  ];

  for (const c of cases) {
    it(`${c.what}: EINPUT, nothing sent, a short one-line text`, async function () {
      const before = sim.state.requestCount;
      let caught: unknown;
      try {
        await c.run(client);
      } catch (err) {
        caught = err;
      }
      assert.ok(caught instanceof IpcamError, `expected EINPUT, got ${caught === undefined ? 'success' : String(caught)}`);
      assert.equal(caught.code, 'EINPUT', caught.message);
      assert.equal(sim.state.requestCount, before, 'a request reached the device');
      assertShortLine(caught.message, 'the error text');
    });
  }

  it('the good values next to these still go through (the checks refuse only what they must)', async function () {
    const results = await addPlates(client, [{ plate: 'ÄÖ-1 23', owner: 'Zoë O\'Brien & Co <gate>', phone: '+49 30 1234' }]);
    assert.deepEqual(results.map((r) => r.ok), [true]);
    await cgiPtz(client, { action: 'savePreset', preset: 'Tor Nord é' });
    await runRelaySequence(client, 1, '1:/300\\');
    await updateParams(client, { 'Image.I0.Text.String': 'Tor\tNord' });
  });
});

describe('a 10 MB PTZ action at the node: msg.error and the log stay short', function () {
  this.timeout(20_000);
  let sim: Simulator | undefined;

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.unload();
    await helper.stopServer();
    await sim?.close();
  });

  for (const api of ['xml', 'cgi'] as const) {
    it(`api ${api}: EINPUT at the Catch node, nothing sent, message and log lines short and single-line`, async function () {
      await helper.unload();
      await sim?.close();
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'any' });
      const ptz = { id: 'ptz1', type: 'ipcam-ptz', name: '', device: 'dev1', api, action: 'Stop', speed: '4', duration: '0', channel: '1' };
      await helper.load([deviceNode, ptzNode], actionFlow(ptz, [deviceDef(sim)]), deviceCredentials(SIM_PASSWORD));
      const watch = new FlowWatch([ptz.id]);
      const before = sim.state.requestCount;
      const msg = await watch.expectCaught(ptz.id, { payload: { action: `${TEN_MB}\r\n` } });
      const error = msg['error'];
      assert.ok(isRecord(error));
      assert.equal(error['code'], 'EINPUT');
      assertShortLine(String(error['message']), 'msg.error.message');
      assert.equal(sim.state.requestCount, before);
      // Everything written to the log while it ran: each entry's text (an Error's message, or the text).
      const entries = helper.log().getCalls().map((call) => call.args[0] as unknown).filter(isRecord);
      for (const e of entries) assertShortLine(e['msg'] instanceof Error ? e['msg'].message : String(e['msg']), 'a log entry');
      for (const args of watch.errors()) assertShortLine(args instanceof Error ? args.message : typeof args === 'string' ? args : '', 'an error or warning of the node');
      for (const status of watch.statuses(ptz.id)) assertShortLine(String(status.text ?? ''), 'the status');
    });
  }
});
