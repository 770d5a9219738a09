import { strict as assert } from 'node:assert';
import { startSimulator, type Simulator, type SimulatorAuth } from '../lib/simulator';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import { SIM_PASSWORD, SIM_USER } from './helpers';
import { DEVICE, SocketTracker, assertNoSecret, closedPort, deviceCredentials, deviceDef, getNode, helper, isRecord, logTexts, type AdminAnswer, type NodeModule } from './node-helper';

const TEST_PATH = '/ipcam-device/test';
const UNCHANGED = '__PWRD__';
const WRONG_PASSWORD = 'wr0ng:pa ss"wörd&x=1';

type Form = Record<string, unknown>;

describe('ipcam-device node', function () {
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

  async function startSim(auth: SimulatorAuth = 'any'): Promise<Simulator> {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth });
    return sim;
  }

  /** Deploys one device node (the admin endpoint lives as long as the node type is registered). */
  async function deploy(settings: Record<string, unknown>, password = SIM_PASSWORD, port?: number): Promise<void> {
    await helper.load([deviceNode], [deviceDef({ port: port ?? (await closedPort()) }, settings)], deviceCredentials(password));
  }

  function form(s: { port: number }, values: Form = {}): Form {
    return { host: '127.0.0.1', port: String(s.port), protocol: 'http', auth: 'auto', username: SIM_USER, password: SIM_PASSWORD, ...values };
  }

  async function testConnection(body: Form): Promise<{ answer: Record<string, unknown>; raw: AdminAnswer }> {
    const raw = await helper.request().post(TEST_PATH).set('content-type', 'application/json').send(body);
    assert.equal(raw.status, 200, raw.text);
    assert.ok(isRecord(raw.body), `answer is not an object: ${raw.text}`);
    return { answer: raw.body, raw };
  }

  function failure(answer: Record<string, unknown>): { code: unknown; message: unknown } {
    assert.equal(answer['ok'], false, `expected a failure, got ${JSON.stringify(answer)}`);
    assert.deepEqual(Object.keys(answer).sort(), ['error', 'ok']);
    const error = answer['error'];
    assert.ok(isRecord(error));
    assert.deepEqual(Object.keys(error).sort(), ['code', 'message']);
    assert.equal(typeof error['message'], 'string');
    return { code: error['code'], message: error['message'] };
  }

  function identity(answer: Record<string, unknown>): Record<string, unknown> {
    assert.equal(answer['ok'], true, `expected ok, got ${JSON.stringify(answer)}`);
    assert.ok(isRecord(answer['identity']));
    return answer['identity'];
  }

  describe('Test connection (POST /ipcam-device/test)', function () {
    const cases: Array<{ auth: string; sim: SimulatorAuth; scheme: string }> = [
      { auth: 'basic', sim: 'basic', scheme: 'basic' },
      { auth: 'digest', sim: 'digest', scheme: 'digest' },
      { auth: 'auto', sim: 'any', scheme: 'digest' },
    ];
    for (const c of cases) {
      it(`answers ok and the identity for the form values (auth ${c.auth}, device asks ${c.sim})`, async function () {
        const s = await startSim(c.sim);
        // The deployed node points elsewhere with another password: the form values are what count.
        await deploy({ auth: c.auth }, 'not the password');
        const { answer, raw } = await testConnection(form(s, { auth: c.auth }));
        const id = identity(answer);
        const device = s.state.device;
        assert.equal(id['model'], device.model);
        assert.equal(id['firmware'], device.firmwareVersion);
        assert.equal(id['name'], device.deviceName);
        assert.equal(id['mac'], device.mac);
        assert.equal(id['sn'], device.sn);
        assert.equal(id['interface'], 'xml');

        const ok = s.state.requests.filter((r) => r.auth !== 'rejected');
        assert.deepEqual(
          ok.map((r) => [r.path, r.auth]),
          [['/GetDeviceInfo', c.scheme]],
        );
        assertNoSecret([raw.text, ...logTexts()], SIM_PASSWORD);
      });
    }

    it('falls back to the CGI parameters when the device does not know GetDeviceInfo', async function () {
      const s = await startSim();
      await deploy({});
      s.inject({ kind: 'status', status: 404, path: '/GetDeviceInfo' });
      const { answer, raw } = await testConnection(form(s));
      const id = identity(answer);
      assert.equal(id['interface'], 'cgi');
      assert.equal(id['model'], s.state.device.model);
      assert.equal(id['firmware'], s.state.device.firmwareVersion);
      assert.ok(s.state.requests.some((r) => r.path.endsWith('/param.cgi') || r.path.endsWith('/param')));
      assertNoSecret([raw.text, ...logTexts()], SIM_PASSWORD);
    });

    it('closes the connection it opened for the test', async function () {
      const s = await startSim();
      await deploy({});
      const sockets = new SocketTracker();
      try {
        identity((await testConnection(form(s))).answer);
        assert.ok(sockets.clientsTo(s.port).length > 0, 'no connection was seen');
        assert.deepEqual(sockets.openClientsTo(s.port), [], 'the test left a socket open');
        await sockets.acceptedClosed(s.port);
      } finally {
        sockets.stop();
      }
    });

    it('answers EAUTH for a wrong password, without any password in the answer or the log', async function () {
      const s = await startSim();
      await deploy({});
      const { answer, raw } = await testConnection(form(s, { password: WRONG_PASSWORD }));
      const { code, message } = failure(answer);
      assert.equal(code, 'EAUTH');
      assert.match(String(message), /username or password|credentials/i);
      assert.ok(s.state.requests.length > 0);
      assert.equal(s.state.requests.filter((r) => r.auth !== 'rejected').length, 0);
      for (const password of [WRONG_PASSWORD, SIM_PASSWORD]) assertNoSecret([raw.text, ...logTexts()], password);
    });

    it(`uses the stored credentials of a deployed node for "${UNCHANGED}"`, async function () {
      const s = await startSim();
      await deploy({}, SIM_PASSWORD, s.port);
      assert.deepEqual(getNode(DEVICE).credentials, { username: SIM_USER, password: SIM_PASSWORD });

      const { answer, raw } = await testConnection(form(s, { id: DEVICE, password: UNCHANGED }));
      assert.equal(identity(answer)['model'], s.state.device.model);
      // Without a username in the form, the stored one is used too.
      const { answer: second, raw: raw2 } = await testConnection(form(s, { id: DEVICE, password: UNCHANGED, username: undefined }));
      assert.equal(identity(second)['model'], s.state.device.model);
      assertNoSecret([raw.text, raw2.text, ...logTexts()], SIM_PASSWORD);
    });

    it(`does not send "${UNCHANGED}" itself, nor find credentials for an unknown id`, async function () {
      const s = await startSim();
      await deploy({}, WRONG_PASSWORD, s.port);
      // The stored password is wrong: the test must fail with it, not succeed with anything else.
      assert.equal(failure((await testConnection(form(s, { id: DEVICE, password: UNCHANGED }))).answer).code, 'EAUTH');
      const sent = s.state.requestCount;
      // No deployed node of that id: nothing is lent and nothing is sent.
      const unknown = failure((await testConnection(form(s, { id: 'no-such-node', password: UNCHANGED }))).answer);
      assert.equal(unknown.code, 'EINPUT');
      assert.match(String(unknown.message), /enter the password/i);
      assert.equal(s.state.requestCount, sent);
      for (const r of s.state.requests) {
        const authorization = String(r.headers['authorization'] ?? '');
        assert.ok(!authorization.includes(UNCHANGED));
        if (authorization.startsWith('Basic ')) assert.ok(!Buffer.from(authorization.slice(6), 'base64').toString('utf8').includes(UNCHANGED));
      }
    });

    it(`never lends the stored credentials of another node type for "${UNCHANGED}"`, async function () {
      const s = await startSim();
      // A node of another type keeps the same username and password (e.g. a broker login).
      const other: NodeModule = (RED) => {
        RED.nodes.registerType(
          'other-login',
          function (this: never, def: never): void {
            RED.nodes.createNode(this, def);
          },
          { credentials: { username: { type: 'text' }, password: { type: 'password' } } },
        );
      };
      const flow = [deviceDef(s), { id: 'login', type: 'other-login' }];
      await helper.load([deviceNode, other], flow, { ...deviceCredentials(WRONG_PASSWORD), login: { username: SIM_USER, password: SIM_PASSWORD } });
      assert.deepEqual(getNode('login').credentials, { username: SIM_USER, password: SIM_PASSWORD });

      const { answer, raw } = await testConnection(form(s, { id: 'login', password: UNCHANGED }));
      assert.equal(failure(answer).code, 'EINPUT');
      assert.equal(s.state.requestCount, 0, "a test was sent with another node's id");
      assertNoSecret([raw.text, ...logTexts()], SIM_PASSWORD);
    });

    it(`lends the stored password for "${UNCHANGED}" only to the device's own host`, async function () {
      const s = await startSim();
      await deploy({}, SIM_PASSWORD, s.port);
      // Same port, another host name for the same machine: the stored password stays home.
      const { answer, raw } = await testConnection(form(s, { id: DEVICE, password: UNCHANGED, host: 'localhost' }));
      const { code, message } = failure(answer);
      assert.equal(code, 'EINPUT');
      assert.match(String(message), /host changed/i);
      assert.equal(s.state.requestCount, 0);
      assertNoSecret([raw.text, ...logTexts()], SIM_PASSWORD);
    });

    const bad: Array<{ what: string; values: Form; message: RegExp }> = [
      { what: 'an empty host', values: { host: '' }, message: /host is empty/i },
      { what: 'no host at all', values: { host: undefined }, message: /host is empty/i },
      { what: 'a host with a scheme', values: { host: 'http://127.0.0.1' }, message: /scheme/i },
      { what: 'a host with a path', values: { host: '127.0.0.1/cam' }, message: /path/i },
      { what: 'port 0', values: { port: '0' }, message: /port/i },
      { what: 'port 70000', values: { port: 70000 }, message: /port/i },
      { what: 'timeout -5', values: { timeout: '-5' }, message: /timeout/i },
      { what: 'an unknown protocol', values: { protocol: 'ftp' }, message: /protocol/i },
      { what: 'an unknown auth', values: { auth: 'ntlm' }, message: /auth/i },
    ];
    for (const c of bad) {
      it(`answers EINPUT for ${c.what} and sends nothing`, async function () {
        const s = await startSim();
        await deploy({});
        const { answer, raw } = await testConnection(form(s, c.values));
        const { code, message } = failure(answer);
        assert.equal(code, 'EINPUT');
        assert.match(String(message), c.message);
        assert.equal(s.state.requestCount, 0);
        assertNoSecret([raw.text, ...logTexts()], SIM_PASSWORD);
      });
    }

    it('answers ECONN for a closed port', async function () {
      await startSim();
      await deploy({});
      const port = await closedPort();
      const { answer } = await testConnection(form({ port }));
      assert.equal(failure(answer).code, 'ECONN');
    });

    it('answers ETIMEOUT when the device does not answer within the form timeout', async function () {
      const s = await startSim();
      await deploy({});
      s.inject({ kind: 'stall' });
      const { answer, raw } = await testConnection(form(s, { timeout: '300' }));
      assert.equal(failure(answer).code, 'ETIMEOUT');
      assert.equal(s.state.requestCount, 1);
      assertNoSecret([raw.text, ...logTexts()], SIM_PASSWORD);
    });
  });

  describe('settings', function () {
    it('warns once at deploy about a bad setting, naming it and not the password', async function () {
      await deploy({ host: 'http://cam.local' });
      const warnings = helper
        .log()
        .getCalls()
        .map((call) => call.args[0])
        .filter((entry): entry is Record<string, unknown> => isRecord(entry) && entry['level'] === helperLevel('WARN') && entry['id'] === DEVICE);
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.match(String(warnings[0]?.['msg']), /scheme/i);
      assertNoSecret(logTexts(), SIM_PASSWORD);
    });

    it('deploys a good device without warning', async function () {
      const s = await startSim();
      await deploy({}, SIM_PASSWORD, s.port);
      const entries = helper
        .log()
        .getCalls()
        .map((call) => call.args[0])
        .filter((entry) => isRecord(entry) && entry['id'] === DEVICE);
      assert.deepEqual(entries, []);
      assert.equal(s.state.requestCount, 0, 'deploying must not contact the device');
    });
  });
});

/** The numeric log levels hang on the helper's log spy (copied from RED.log). */
function helperLevel(name: 'WARN' | 'ERROR'): number {
  const level = (helper.log() as unknown as Record<string, unknown>)[name];
  assert.equal(typeof level, 'number');
  return level as number;
}
