import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import sinon from 'sinon';
import { startSimulator, type Simulator, type SimulatorAuth } from '../lib/simulator';
import { SNAPSHOT_JPEG } from '../lib/simulator/images';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import snapshotNode from '../nodes/ipcam-snapshot/ipcam-snapshot';
import type { NodeMessage } from '../nodes/red';
import { SNAPSHOT_LIES } from './hostile-content';
import { SIM_PASSWORD, SIM_USER } from './helpers';
import {
  DEVICE,
  FlowWatch,
  actionFlow,
  activeHandles,
  assertNoSecret,
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
  SocketTracker,
  type FlowNode,
} from './node-helper';

const NODES = [deviceNode, snapshotNode];
const SNAP = 'snap1';
const WRONG_PASSWORD = 'wr0ng:pa ss"wörd&x=1';
const RESERVED = 'a b&c=d/é;+,$@:?';
/** What `msg.error` may hold (design: { message, code, status?, deviceCode?, deviceDesc? }). */
const ERROR_KEYS = new Set(['message', 'code', 'status', 'deviceCode', 'deviceDesc']);

interface DeployOptions {
  simAuth?: SimulatorAuth;
  /** Settings of the device node, over the defaults pointing at the simulator. */
  device?: Record<string, unknown>;
  snapshot?: Record<string, unknown>;
  password?: string;
  /** Address another port than the simulator's. */
  port?: number;
}

function snapshotDef(settings: Record<string, unknown> = {}): FlowNode {
  return { id: SNAP, type: 'ipcam-snapshot', name: 'snapshot', device: DEVICE, source: 'jpg', format: 'buffer', ...settings };
}

function jpegOf(msg: NodeMessage): Buffer {
  assert.ok(Buffer.isBuffer(msg.payload), `payload is not a Buffer: ${typeof msg.payload}`);
  return msg.payload;
}

function stringPayload(msg: NodeMessage): string {
  assert.equal(typeof msg.payload, 'string');
  return msg.payload as string;
}

describe('ipcam-snapshot node', function () {
  let sim: Simulator | undefined;
  let watch: FlowWatch | undefined;

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

  async function startSim(auth: SimulatorAuth = 'any'): Promise<Simulator> {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth });
    return sim;
  }

  function theSim(): Simulator {
    assert.ok(sim, 'no simulator');
    return sim;
  }

  /** Starts the simulator, deploys device + snapshot + Catch, and watches them. */
  async function deploy(options: DeployOptions = {}): Promise<FlowWatch> {
    const s = await startSim(options.simAuth);
    const device = deviceDef({ port: options.port ?? s.port }, options.device);
    await helper.load(NODES, actionFlow(snapshotDef(options.snapshot), [device]), deviceCredentials(options.password ?? SIM_PASSWORD));
    watch = new FlowWatch([SNAP, DEVICE]);
    return watch;
  }

  /** The requests the simulator accepted (the 401 rounds of authentication left out). */
  function accepted(): Array<Simulator['state']['requests'][number]> {
    return theSim().state.requests.filter((r) => r.auth !== 'rejected');
  }

  function assertGreen(w: FlowWatch): void {
    assert.ok(w.statuses(SNAP).length > 0, 'no status was set');
    const status = w.lastStatus(SNAP);
    assert.equal(status.fill, 'green');
    assert.equal(status.shape, 'dot');
    assert.ok(typeof status.text === 'string' && status.text.length > 0 && status.text.length < 20, `status text "${status.text}"`);
  }

  describe('against the simulator', function () {
    const cases: Array<{ device: string; sim: SimulatorAuth; scheme: 'basic' | 'digest' }> = [
      { device: 'basic', sim: 'basic', scheme: 'basic' },
      { device: 'digest', sim: 'digest', scheme: 'digest' },
      { device: 'auto', sim: 'any', scheme: 'digest' },
      { device: 'auto', sim: 'basic', scheme: 'basic' },
      { device: 'auto', sim: 'digest', scheme: 'digest' },
    ];
    for (const c of cases) {
      it(`takes a JPEG with device auth ${c.device} from a device asking ${c.sim}`, async function () {
        const w = await deploy({ simAuth: c.sim, device: { auth: c.device } });
        const input: NodeMessage = { _msgid: 'msg-1', topic: 'front door', extra: { keep: [1, 2] }, payload: 'ignored' };
        const msg = await w.expectOutput(SNAP, input);

        const image = jpegOf(msg);
        assert.equal(image[0], 0xff);
        assert.equal(image[1], 0xd8);
        assert.deepEqual(image, SNAPSHOT_JPEG);
        assert.equal(msg['contentType'], 'image/jpeg');
        // The input message is reused.
        assert.equal(msg._msgid, 'msg-1');
        assert.equal(msg.topic, 'front door');
        assert.deepEqual(msg['extra'], { keep: [1, 2] });
        assert.equal(msg['error'], undefined);

        const ok = accepted();
        assert.equal(ok.length, 1);
        assert.equal(ok[0]?.auth, c.scheme);
        assert.deepEqual(
          theSim().state.requests.map((r) => r.path),
          theSim().state.requests.map(() => '/jpg/image.jpg'),
        );
        assertGreen(w);
        assert.equal(w.messages.length, 1, 'one message out per input');
        assertNoSecret(w.texts(), SIM_PASSWORD);
      });
    }

    it('answers every one of several messages sent at once, each with its own msg', async function () {
      const w = await deploy();
      const ids = ['one', 'two', 'three', 'four'];
      const outcomes = await Promise.all(ids.map((id) => w.send(SNAP, { _msgid: id, payload: { source: 'cgi', params: { id } } })));
      assert.deepEqual(
        outcomes.map((o) => o.kind),
        ids.map(() => 'out'),
      );
      // Outputs may come in any order; each carries the image for its own request.
      assert.deepEqual(outcomes.map((o) => o.msg._msgid).sort(), [...ids].sort());
      for (const o of outcomes) assert.deepEqual(jpegOf(o.msg), SNAPSHOT_JPEG);
      assert.deepEqual(
        accepted()
          .map((r) => r.rawQuery)
          .sort(),
        ids.map((id) => `id=${id}`).sort(),
      );
      assert.equal(w.messages.length, ids.length);
    });

    it('answers format base64 with the JPEG as base64 text', async function () {
      const w = await deploy({ snapshot: { format: 'base64' } });
      const msg = await w.expectOutput(SNAP, { _msgid: 'b64' });
      const text = stringPayload(msg);
      assert.match(text, /^[A-Za-z0-9+/]+=*$/);
      assert.deepEqual(Buffer.from(text, 'base64'), SNAPSHOT_JPEG);
      assert.equal(msg['contentType'], 'image/jpeg');
      assertGreen(w);
    });

    it('answers format dataurl with a data: URL of the JPEG', async function () {
      const w = await deploy({ snapshot: { format: 'dataurl' } });
      const msg = await w.expectOutput(SNAP, { _msgid: 'url' });
      const text = stringPayload(msg);
      const prefix = 'data:image/jpeg;base64,';
      assert.ok(text.startsWith(prefix), text.slice(0, 40));
      assert.deepEqual(Buffer.from(text.slice(prefix.length), 'base64'), SNAPSHOT_JPEG);
      assert.equal(msg['contentType'], 'image/jpeg');
    });

    it('takes source cgi from /cgi-bin/admin/image', async function () {
      const w = await deploy({ snapshot: { source: 'cgi' } });
      const msg = await w.expectOutput(SNAP, {});
      assert.deepEqual(jpegOf(msg), SNAPSHOT_JPEG);
      assert.ok(theSim().state.requests.length > 0);
      for (const r of theSim().state.requests) assert.equal(r.path, '/cgi-bin/admin/image');
      assert.equal(accepted().length, 1);
    });

    it('takes source xml from GetSnapshot on the channel of the settings (GET), none when blank', async function () {
      const w = await deploy({ snapshot: { source: 'xml', channel: '3' } });
      const msg = await w.expectOutput(SNAP, {});
      assert.deepEqual(jpegOf(msg), SNAPSHOT_JPEG);
      assert.equal(msg['contentType'], 'image/jpeg');
      assert.deepEqual(accepted().map((r) => `${r.method} ${r.path}${r.rawQuery === '' ? '' : '?' + r.rawQuery}`), ['GET /GetSnapshot/3']);
      // msg.payload.channel overrides it; a jpg override ignores the xml channel of the settings.
      await w.expectOutput(SNAP, { payload: { channel: 2 } });
      await w.expectOutput(SNAP, { payload: { source: 'jpg' } });
      assert.deepEqual(accepted().map((r) => r.path), ['/GetSnapshot/3', '/GetSnapshot/2', '/jpg/image.jpg']);
      assertGreen(w);
      await helper.unload();
      await theSim().close();
      const blank = await deploy({ snapshot: { source: 'xml', channel: '' } });
      await blank.expectOutput(SNAP, {});
      assert.deepEqual(accepted().map((r) => r.path), ['/GetSnapshot']);
    });

    it('source xml: a channel the device has not is EDEVICE 12 from its error document', async function () {
      const w = await deploy({ snapshot: { source: 'xml', channel: '9' } });
      const msg = await w.expectCaught(SNAP, {});
      assert.ok(isRecord(msg['_error']));
      assert.equal(msg['_error']['code'], 'EDEVICE');
      assert.equal(msg['_error']['deviceCode'], 12);
    });

    it('lets msg.payload { source, params } override the settings for that message only', async function () {
      const w = await deploy({ snapshot: { source: 'jpg' } });
      const msg = await w.expectOutput(SNAP, { payload: { source: 'cgi', params: { resolution: '640x480', compression: 30, text: true } } });
      assert.deepEqual(jpegOf(msg), SNAPSHOT_JPEG);
      const [first] = accepted();
      assert.equal(first?.path, '/cgi-bin/admin/image');
      assert.deepEqual(first?.query, [
        ['resolution', '640x480'],
        ['compression', '30'],
        ['text', 'true'],
      ]);

      // The next plain message goes back to the settings.
      theSim().resetRequests();
      await w.expectOutput(SNAP, { payload: 'go' });
      assert.deepEqual(
        accepted().map((r) => [r.path, r.rawQuery]),
        [['/jpg/image.jpg', '']],
      );
    });

    it('sends params with reserved characters encoded, and they decode back equal', async function () {
      const w = await deploy();
      const params = { [RESERVED]: RESERVED, plain: 'x' };
      const msg = await w.expectOutput(SNAP, { payload: { source: 'cgi', params } });
      assert.deepEqual(jpegOf(msg), SNAPSHOT_JPEG);

      const [req] = accepted();
      assert.ok(req, 'the request did not reach the simulator');
      assert.equal(req.path, '/cgi-bin/admin/image');
      const pairs = req.rawQuery.split('&');
      assert.equal(pairs.length, 2, `raw query "${req.rawQuery}"`);
      for (const pair of pairs) {
        const parts = pair.split('=');
        assert.equal(parts.length, 2, `pair "${pair}" is not one key=value`);
        // Nothing reserved, no space and nothing outside ASCII goes out raw.
        for (const part of parts) assert.match(part, /^[A-Za-z0-9\-_.!~*'()%]*$/, `"${part}" is not encoded`);
      }
      const decoded = pairs.map((pair) => pair.split('=').map((p) => decodeURIComponent(p)));
      assert.deepEqual(decoded, [
        [RESERVED, RESERVED],
        ['plain', 'x'],
      ]);
      assert.deepEqual(req.query, [
        [RESERVED, RESERVED],
        ['plain', 'x'],
      ]);
      assertGreen(w);
    });
  });

  describe('failures reach a Catch node', function () {
    /** The Catch node's msg: its own `error`, ours moved to `_error`. */
    function assertCaught(w: FlowWatch, msg: NodeMessage, code: string, status?: number): Record<string, unknown> {
      assert.ok(isRecord(msg['error']), 'msg.error is missing');
      assert.equal(msg['error']['code'], code);
      assert.ok(isRecord(msg['error']['source']));
      assert.equal(msg['error']['source']['id'], SNAP);

      const ours = msg['_error'];
      assert.ok(isRecord(ours), 'msg._error (the node msg.error) is missing');
      assert.equal(ours['code'], code);
      assert.equal(typeof ours['message'], 'string');
      assert.ok((ours['message'] as string).length > 0);
      for (const key of Object.keys(ours)) assert.ok(ERROR_KEYS.has(key), `unexpected msg.error.${key}`);
      if (status !== undefined) assert.equal(ours['status'], status);
      // Node-RED's text of the error is ours.
      assert.ok(String(msg['error']['message']).includes(ours['message'] as string));

      const s = w.lastStatus(SNAP);
      assert.equal(s.fill, 'red');
      assert.equal(s.shape, 'ring');
      assert.ok(typeof s.text === 'string' && s.text.length > 0 && s.text.length <= 32 && s.text.startsWith(`${code}`), `status text "${s.text}"`);
      assert.equal(w.messages.length, 1, 'nothing else came out');
      return ours;
    }

    it('wrong password: EAUTH, and neither password appears', async function () {
      const w = await deploy({ password: WRONG_PASSWORD });
      const msg = await w.expectCaught(SNAP, { _msgid: 'auth', topic: 't' });
      assertCaught(w, msg, 'EAUTH', 401);
      assert.equal(msg._msgid, 'auth');
      assert.equal(msg.topic, 't');
      assert.ok(theSim().state.requests.length > 0);
      assert.equal(accepted().length, 0);
      assertNoSecret(w.texts(), WRONG_PASSWORD);
      assertNoSecret(w.texts(), SIM_PASSWORD);
    });

    it('unreachable host (closed port): ECONN', async function () {
      const port = await closedPort();
      const w = await deploy({ port });
      const msg = await w.expectCaught(SNAP, {});
      assertCaught(w, msg, 'ECONN');
      assert.equal(theSim().state.requestCount, 0);
      assertNoSecret(w.texts(), SIM_PASSWORD);
    });

    it('no answer in time: ETIMEOUT', async function () {
      const w = await deploy({ device: { timeout: '300' } });
      theSim().inject({ kind: 'stall' });
      const msg = await w.expectCaught(SNAP, {});
      assertCaught(w, msg, 'ETIMEOUT');
      assert.equal(theSim().state.requestCount, 1);
      assertNoSecret(w.texts(), SIM_PASSWORD);
    });

    it('HTTP 503: EHTTP with the status', async function () {
      const w = await deploy();
      theSim().inject({ kind: 'status', status: 503 });
      const msg = await w.expectCaught(SNAP, {});
      assertCaught(w, msg, 'EHTTP', 503);
      assertNoSecret(w.texts(), SIM_PASSWORD);
    });

    describe('a device that lies about its picture: msg.contentType from the bytes, anything but a JPEG or PNG is EPARSE', function () {
      const PATHS = { jpg: '/jpg/image.jpg', cgi: '/cgi-bin/admin/image', xml: '/GetSnapshot' } as const;
      for (const source of ['jpg', 'cgi', 'xml'] as const) {
        it(`source ${source}: every lie in turn on one running node (format dataurl)`, async function () {
          const w = await deploy({ snapshot: { source, format: 'dataurl' } });
          for (const lie of SNAPSHOT_LIES) {
            theSim().inject({ kind: 'answer', path: PATHS[source], times: 1, ...(lie.contentType !== undefined && { contentType: lie.contentType }), body: lie.body });
            const outcome = await w.send(SNAP, { _msgid: lie.what });
            if (lie.expect === 'EPARSE') {
              assert.equal(outcome.kind, 'caught', `${lie.what}: came out as a picture`);
              assert.ok(isRecord(outcome.msg['_error']), lie.what);
              assert.equal(outcome.msg['_error']['code'], 'EPARSE', lie.what);
              assert.equal(outcome.msg['contentType'], undefined, `${lie.what}: a content type was set`);
              assert.ok(!JSON.stringify(outcome.msg).includes('<script'), `${lie.what}: the device text reached the msg`);
              assert.deepEqual([w.lastStatus(SNAP).fill, w.lastStatus(SNAP).shape], ['red', 'ring']);
            } else {
              assert.equal(outcome.kind, 'out', `${lie.what}: ${JSON.stringify(outcome.msg['_error'])}`);
              assert.equal(outcome.msg['contentType'], lie.expect, lie.what);
              assert.equal(outcome.msg.payload, `data:${lie.expect};base64,${lie.body.toString('base64')}`, lie.what);
            }
          }
          assert.equal(theSim().state.faults.length, 0, 'every lie was served');
          assertNoSecret(w.texts(), SIM_PASSWORD);
        });
      }
    });

    it('keeps working after a failure (status back to green, no secret anywhere)', async function () {
      const w = await deploy();
      theSim().inject({ kind: 'status', status: 503, times: 1 });
      assertCaught(w, await w.expectCaught(SNAP, {}), 'EHTTP', 503);
      const msg = await w.expectOutput(SNAP, {});
      assert.deepEqual(jpegOf(msg), SNAPSHOT_JPEG);
      assertGreen(w);
      assertNoSecret(w.texts(), SIM_PASSWORD);
    });
  });

  describe('the leak check', function () {
    it('searches log entries, messages, statuses and errors', async function () {
      // A bad host makes the device warn (a log entry) and the snapshot fail (error, status, msg).
      const w = await deploy({ device: { host: 'cam.example/x' } });
      const msg = await w.expectCaught(SNAP, { topic: SIM_PASSWORD });
      assert.equal(msg.topic, SIM_PASSWORD);
      assert.throws(() => assertNoSecret(w.texts(), SIM_PASSWORD), /leaked/);
      const logged = helper
        .log()
        .getCalls()
        .map((c) => JSON.stringify(c.args));
      assert.ok(
        logged.some((t) => t.includes('cam.example/x')),
        'the device warning is not among the log entries',
      );
      assert.throws(() => assertNoSecret([`Authorization: Basic ${Buffer.from(`${SIM_USER}:${SIM_PASSWORD}`).toString('base64')}`], SIM_PASSWORD), /leaked/);
      assert.throws(() => assertNoSecret([`?pwd=${encodeURIComponent(SIM_PASSWORD)}`], SIM_PASSWORD), /leaked/);
    });
  });

  describe('bad input is EINPUT and sends nothing', function () {
    const cases: Array<{ what: string; device?: Record<string, unknown>; snapshot?: Record<string, unknown>; payload?: unknown; message: RegExp }> = [
      { what: 'empty host', device: { host: '' }, message: /host is empty/i },
      { what: 'blank host', device: { host: '   ' }, message: /host is empty/i },
      { what: 'host with a scheme', device: { host: 'http://127.0.0.1' }, message: /scheme/i },
      { what: 'host with a path', device: { host: '127.0.0.1/cam' }, message: /path/i },
      { what: 'port 0', device: { port: 0 }, message: /port/i },
      { what: 'port 70000', device: { port: '70000' }, message: /port/i },
      { what: 'port not a number', device: { port: 'eighty' }, message: /port/i },
      { what: 'timeout 0', device: { timeout: 0 }, message: /timeout/i },
      { what: 'timeout -5', device: { timeout: '-5' }, message: /timeout/i },
      { what: 'unknown output format', snapshot: { format: 'gif' }, message: /format "gif"/i },
      { what: 'unknown source in the settings', snapshot: { source: 'ftp' }, message: /source "ftp"/i },
      { what: 'unknown source in msg.payload', payload: { source: 'ftp' }, message: /source "ftp"/i },
      { what: 'params that are not an object', payload: { source: 'cgi', params: 'a=b' }, message: /params/i },
      { what: 'a param value that is an object', payload: { source: 'cgi', params: { a: { b: 1 } } }, message: /param "a"/i },
      { what: 'xml channel 0', snapshot: { source: 'xml', channel: '0' }, message: /channel/i },
      { what: 'xml channel 257 in msg.payload', snapshot: { source: 'xml' }, payload: { channel: 257 }, message: /channel/i },
      { what: "xml channel '1e2'", snapshot: { source: 'xml', channel: '1e2' }, message: /channel/i },
      { what: 'params with the xml source', payload: { source: 'xml', params: { a: 1 } }, message: /no params/i },
      { what: 'a channel with the jpg source', payload: { channel: 2 }, message: /channel is for the xml source/i },
      { what: 'no device configured', snapshot: { device: '' }, message: /no device/i },
      { what: 'a device id that does not exist', snapshot: { device: 'gone' }, message: /no device/i },
    ];
    for (const c of cases) {
      it(c.what, async function () {
        const w = await deploy({ device: c.device, snapshot: c.snapshot });
        const msg = await w.expectCaught(SNAP, { _msgid: 'bad', payload: c.payload });
        assert.ok(isRecord(msg['error']));
        assert.equal(msg['error']['code'], 'EINPUT');
        assert.ok(isRecord(msg['_error']));
        assert.equal(msg['_error']['code'], 'EINPUT');
        assert.match(String(msg['_error']['message']), c.message);
        assert.equal(msg._msgid, 'bad');
        assert.equal(theSim().state.requestCount, 0, 'a request was sent');
        const s = w.lastStatus(SNAP);
        assert.deepEqual([s.fill, s.shape], ['red', 'ring']);
        assert.ok(typeof s.text === 'string' && s.text.length > 0 && s.text.length <= 32 && s.text.startsWith("EINPUT: "));
        assertNoSecret(w.texts(), SIM_PASSWORD);
      });
    }
  });

  describe('close', function () {
    let sockets: SocketTracker | undefined;

    afterEach(function () {
      sockets?.stop();
      sockets = undefined;
    });

    it('unloading during a stalled request ends without an error and leaves no socket open', async function () {
      sockets = new SocketTracker();
      const w = await deploy();
      const s = theSim();
      s.inject({ kind: 'stall' });
      const snap = getNode(SNAP);
      const finished = new Promise<unknown[]>((resolve) => intercept(snap, '_complete', resolve));
      const server = simServer(s);
      const arrived = once(server, 'request');
      void w.send(SNAP, { _msgid: 'stalled' });
      await arrived;
      assert.equal(sockets.openClientsTo(s.port).length, 1, 'the request should be on its socket');
      assert.equal(await connectionsOf(server), 1);

      await helper.unload();
      const [msg, err] = await finished;
      assert.equal(err, undefined, 'done() was called with an error');
      assert.ok(isRecord(msg));
      assert.equal(msg['_msgid'], 'stalled');
      assert.equal(w.messages.length, 0, 'a message reached the output or the Catch node');
      assert.deepEqual(w.errors(), []);
      assert.deepEqual(sockets.openClientsTo(s.port), [], 'a socket to the device is still open after unload');
      await sockets.acceptedClosed(s.port);
      assert.equal(await connectionsOf(server), 0);
      assert.equal(s.state.requestCount, 1);
    });

    it('a deploy that restarts only the snapshot node aborts its request; the device stays up', async function () {
      sockets = new SocketTracker();
      const s = await startSim();
      const device = deviceDef(s, { timeout: '60000' });
      const credentials = deviceCredentials(SIM_PASSWORD);
      await helper.load(NODES, actionFlow(snapshotDef(), [device]), credentials);
      const w = new FlowWatch([SNAP]);
      const deviceBefore = getNode(DEVICE);
      s.inject({ kind: 'stall', times: 1 });
      const finished = new Promise<unknown[]>((resolve) => intercept(getNode(SNAP), '_complete', resolve));
      const arrived = once(simServer(s), 'request');
      void w.send(SNAP, { _msgid: 'stalled' });
      const [req] = (await arrived) as [{ socket: Socket }];
      const [client] = sockets.openClientsTo(s.port);
      assert.ok(client, 'the request should be on its socket');

      await helper.setFlows(actionFlow(snapshotDef({ name: 'renamed' }), [device]), 'nodes', credentials);
      const [, err] = await finished;
      assert.equal(err, undefined, 'done() was called with an error');
      assert.equal(getNode(DEVICE), deviceBefore, 'the device node was restarted');
      assert.notEqual(getNode(SNAP), undefined);
      // The stalled request was given up (without the abort it would hang until the 60 s timeout):
      // its connection closes on both ends.
      await Promise.all([client, req.socket].map((socket) => (socket.closed ? undefined : once(socket, 'close'))));
      assert.equal(w.messages.length, 0);

      // The new snapshot node works through the same device.
      const after = new FlowWatch([SNAP]);
      const msg = await after.expectOutput(SNAP, { _msgid: 'after' });
      assert.deepEqual(jpegOf(msg), SNAPSHOT_JPEG);
    });

    it('deploying and unloading 50 times leaves no handle behind', async function () {
      this.timeout(60_000);
      const s = await startSim();
      const flow = actionFlow(snapshotDef(), [deviceDef(s)]);
      const tracker = (sockets = new SocketTracker());
      const before = activeHandles().map(handleName);
      for (let i = 0; i < 50; i++) {
        await helper.load(NODES, flow, deviceCredentials(SIM_PASSWORD));
        const w = new FlowWatch([SNAP]);
        const msg = await w.expectOutput(SNAP, { _msgid: `round ${i}` });
        assert.deepEqual(jpegOf(msg), SNAPSHOT_JPEG);
        assert.ok(tracker.openClientsTo(s.port).length > 0, 'the device keeps its keep-alive connection while deployed');
        await helper.unload();
        assert.deepEqual(tracker.openClientsTo(s.port), [], `round ${i}: a socket to the device is still open after unload`);
      }
      assert.ok(tracker.clientsTo(s.port).length >= 50);
      // The device side closes once the client has: wait for it, then count.
      await tracker.acceptedClosed(s.port);
      assert.equal(await connectionsOf(simServer(s)), 0);
      const after = activeHandles().map(handleName);
      assert.ok(after.length <= before.length, `handles before: ${before.join(', ')}; after: ${after.join(', ')}`);
      assert.equal(s.state.requests.filter((r) => r.auth !== 'rejected').length, 50);
    });
  });
});
