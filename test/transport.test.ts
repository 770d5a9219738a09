import { strict as assert } from 'node:assert';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, isIP, type AddressInfo, type Socket } from 'node:net';
import nodeTls from 'node:tls';
import { inspect } from 'node:util';
import * as sinon from 'sinon';
import { identifyDevice } from '../lib/ops/device-info';
import { IpcamError } from '../lib/errors/errors';
import { listParams, updateParams } from '../lib/ops/param-calls';
import { takeSnapshot } from '../lib/ops/snapshot';
import { startSimulator, type Simulator, type SimulatorOptions } from '../lib/simulator';
import type { AuthMode } from '../lib/transport/auth';
import { parseChallenges } from '../lib/transport/challenge';
import { DeviceClient } from '../lib/transport/client';
import type { DeviceOptions } from '../lib/transport/options';
import { fixture, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';

/** Text that must never show up in an error: the password, parts of it, the Basic credentials. */
const SECRET_TEXTS = [SIM_PASSWORD, 'S3cr3t', 'wörd', Buffer.from(`${SIM_USER}:${SIM_PASSWORD}`, 'utf8').toString('base64'), JSON.stringify(SIM_PASSWORD).slice(1, -1)];

/** Every error the tests below produced, checked once more at the end. */
const produced: IpcamError[] = [];

function assertNoSecret(err: IpcamError): void {
  const views = [err.message, err.stack ?? '', JSON.stringify(err), inspect(err, { depth: 10 }), String(err)];
  for (const view of views) {
    for (const secret of SECRET_TEXTS) assert.ok(!view.includes(secret), `an error shows ${JSON.stringify(secret)}: ${view}`);
  }
}

async function failure(promise: Promise<unknown>, code: IpcamError['code']): Promise<IpcamError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof IpcamError, `expected ${code}, got ${caught === undefined ? 'success' : inspect(caught)}`);
  produced.push(caught);
  assertNoSecret(caught);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

function syncFailure(fn: () => unknown, code: IpcamError['code']): IpcamError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof IpcamError, `expected ${code}, got ${caught === undefined ? 'success' : inspect(caught)}`);
  produced.push(caught);
  assertNoSecret(caught);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

/** Records the sockets opened while it is active (client and server side). */
class SocketWatch {
  readonly client: Socket[] = [];
  readonly server: Socket[] = [];
  private readonly onClient = (message: unknown): void => {
    this.client.push((message as { socket: Socket }).socket);
  };
  private readonly onServer = (message: unknown): void => {
    this.server.push((message as { socket: Socket }).socket);
  };

  constructor() {
    subscribe('net.client.socket', this.onClient);
    subscribe('net.server.socket', this.onServer);
  }

  stop(): void {
    unsubscribe('net.client.socket', this.onClient);
    unsubscribe('net.server.socket', this.onServer);
  }

  /** Resolves once every server-side socket has closed (hangs, and so times out, if one stays open). */
  async serverSocketsClosed(): Promise<void> {
    await Promise.all(this.server.map((s) => (s.destroyed ? undefined : once(s, 'close'))));
  }
}

function digestParamsOf(header: string | string[] | undefined): Record<string, string> {
  const text = Array.isArray(header) ? header[0] : header;
  const [parsed] = parseChallenges(text);
  assert.equal(parsed?.scheme, 'digest', `not a Digest header: ${String(text)}`);
  return parsed?.params ?? {};
}

async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('DeviceClient against the simulator', function () {
  const sims: Simulator[] = [];
  const clients: DeviceClient[] = [];
  let watch: SocketWatch | undefined;
  let clock: sinon.SinonFakeTimers | undefined;

  async function simulator(options: SimulatorOptions = {}): Promise<Simulator> {
    const sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD, ...options });
    sims.push(sim);
    return sim;
  }

  function clientFor(sim: Simulator, options: Partial<DeviceOptions> = {}): DeviceClient {
    const client = new DeviceClient({ host: sim.host, port: sim.port, username: SIM_USER, password: SIM_PASSWORD, timeout: 5000, ...options });
    clients.push(client);
    return client;
  }

  afterEach(async () => {
    clock?.restore();
    clock = undefined;
    watch?.stop();
    watch = undefined;
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(sims.splice(0).map((s) => s.close()));
  });

  describe('authentication', () => {
    it('Basic: sent up front, one request per call', async () => {
      const sim = await simulator({ auth: 'basic' });
      const client = clientFor(sim, { auth: 'basic' });
      for (let i = 0; i < 3; i++) await takeSnapshot(client);
      assert.equal(sim.state.requestCount, 3);
      assert.deepEqual(
        sim.state.requests.map((r) => r.auth),
        ['basic', 'basic', 'basic'],
      );
      assert.equal(sim.state.requests[0]?.headers['authorization'], 'Basic ' + Buffer.from(`${SIM_USER}:${SIM_PASSWORD}`, 'utf8').toString('base64'));
    });

    it('auto against a Basic-only device: one challenge, then one request per call', async () => {
      const sim = await simulator({ auth: 'basic' });
      const client = clientFor(sim, { auth: 'auto' });
      for (let i = 0; i < 3; i++) await takeSnapshot(client);
      assert.deepEqual(
        sim.state.requests.map((r) => r.auth),
        ['rejected', 'basic', 'basic', 'basic'],
      );
    });

    for (const algorithm of ['MD5', 'SHA-256'] as const) {
      it(`Digest ${algorithm}: after the first challenge every call costs exactly one request`, async () => {
        const sim = await simulator({ auth: 'digest', digestAlgorithms: [algorithm] });
        const client = clientFor(sim, { auth: 'digest' });
        await takeSnapshot(client);
        assert.equal(sim.state.requestCount, 2, 'challenge + answer');
        for (let i = 1; i <= 5; i++) {
          await takeSnapshot(client);
          assert.equal(sim.state.requestCount, 2 + i);
        }
        const answered = sim.state.requests.slice(1);
        assert.ok(answered.every((r) => r.auth === 'digest'));
        const params = answered.map((r) => digestParamsOf(r.headers['authorization']));
        assert.ok(params.every((p) => p['algorithm'] === algorithm));
        assert.deepEqual(
          params.map((p) => p['nc']),
          ['00000001', '00000002', '00000003', '00000004', '00000005', '00000006'],
        );
        assert.equal(new Set(params.map((p) => p['nonce'])).size, 1, 'the nonce is reused');
      });
    }

    it('Digest: concurrent calls after the challenge still cost one request each', async () => {
      const sim = await simulator({ auth: 'digest' });
      const client = clientFor(sim, { auth: 'digest' });
      await takeSnapshot(client);
      const before = sim.state.requestCount;
      const results = await Promise.all(Array.from({ length: 6 }, () => takeSnapshot(client)));
      assert.equal(results.length, 6);
      assert.equal(sim.state.requestCount, before + 6);
    });

    it('auto against a device offering Digest SHA-256, MD5 and Basic picks Digest SHA-256', async () => {
      const sim = await simulator({ auth: 'any', digestAlgorithms: ['MD5', 'SHA-256'] });
      const client = clientFor(sim);
      await takeSnapshot(client);
      await takeSnapshot(client);
      assert.deepEqual(
        sim.state.requests.map((r) => r.auth),
        ['rejected', 'digest', 'digest'],
      );
      assert.equal(digestParamsOf(sim.state.requests[1]?.headers['authorization'])['algorithm'], 'SHA-256');
    });

    it('a non-ASCII username is answered with username* and accepted', async () => {
      const sim = await simulator({ auth: 'digest', username: 'Jäsøn' });
      const client = clientFor(sim, { username: 'Jäsøn' });
      await takeSnapshot(client);
      assert.match(String(sim.state.requests[1]?.headers['authorization']), /username\*=UTF-8''J%C3%A4s%C3%B8n/);
      assert.equal(sim.state.requests[1]?.auth, 'digest');
    });

    it('an expired nonce (stale=true) is renewed transparently', async () => {
      const sim = await simulator({ auth: 'digest', nonceTtl: 60_000 });
      const client = clientFor(sim);
      await takeSnapshot(client);
      // Two minutes later (only the clock moves: sockets and timers are real).
      clock = sinon.useFakeTimers({ now: Date.now() + 120_000, toFake: ['Date'] });
      const snap = await takeSnapshot(client);
      assert.equal(snap.image[0], 0xff);
      assert.deepEqual(
        sim.state.requests.map((r) => r.auth),
        ['rejected', 'digest', 'rejected', 'digest'],
      );
      const [, first, stale, renewed] = sim.state.requests.map((r) => digestParamsOf(r.headers['authorization'] ?? 'Digest none=1'));
      assert.equal(stale?.['nonce'], first?.['nonce']);
      assert.notEqual(renewed?.['nonce'], first?.['nonce']);
      assert.equal(renewed?.['nc'], '00000001');
      await takeSnapshot(client);
      assert.equal(sim.state.requestCount, 5, 'the renewed nonce is kept');
    });

    it('a wrong password is EAUTH after exactly 2 requests (challenge + one attempt)', async () => {
      const sim = await simulator({ auth: 'any' });
      const client = clientFor(sim, { auth: 'auto', password: 'wrong password' });
      const err = await failure(takeSnapshot(client), 'EAUTH');
      assert.equal(err.status, 401);
      assert.equal(sim.state.requestCount, 2);
      // A later call tries once more, never in a loop.
      await failure(takeSnapshot(client), 'EAUTH');
      assert.equal(sim.state.requestCount, 4);
    });

    it('a wrong password with Digest mode and with Basic mode: 2 and 1 requests', async () => {
      const digestSim = await simulator({ auth: 'digest' });
      await failure(takeSnapshot(clientFor(digestSim, { auth: 'digest', password: 'nope' })), 'EAUTH');
      assert.equal(digestSim.state.requestCount, 2);
      const basicSim = await simulator({ auth: 'basic' });
      await failure(takeSnapshot(clientFor(basicSim, { auth: 'basic', password: 'nope' })), 'EAUTH');
      assert.equal(basicSim.state.requestCount, 1);
    });

    it('a wrong password on concurrent calls costs at most 2 requests per call', async () => {
      const sim = await simulator({ auth: 'digest' });
      const client = clientFor(sim, { password: 'wrong' });
      const calls = 4;
      const results = await Promise.allSettled(Array.from({ length: calls }, () => takeSnapshot(client)));
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.ok(result.reason instanceof IpcamError);
        assert.equal(result.reason.code, 'EAUTH');
      }
      assert.ok(sim.state.requestCount <= calls * 2, `${sim.state.requestCount} requests for ${calls} calls`);
    });

    it('no username: EAUTH with a clear text after one request', async () => {
      const sim = await simulator({ auth: 'any' });
      const client = clientFor(sim, { username: '', password: '' });
      const err = await failure(takeSnapshot(client), 'EAUTH');
      assert.match(err.message, /credentials/);
      assert.equal(sim.state.requestCount, 1);
    });

    it('a device demanding a scheme that was not chosen: EAUTH naming it', async () => {
      const sim = await simulator({ auth: 'digest' });
      const err = await failure(takeSnapshot(clientFor(sim, { auth: 'basic' })), 'EAUTH');
      assert.match(err.message, /does not offer Basic/);
      assert.equal(sim.state.requestCount, 1);
    });
  });

  describe('failures', () => {
    it('an unreachable host (closed port) is ECONN', async () => {
      const port = await closedPort();
      const client = new DeviceClient({ host: '127.0.0.1', port, username: SIM_USER, password: SIM_PASSWORD });
      clients.push(client);
      const err = await failure(takeSnapshot(client), 'ECONN');
      assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
    });

    it('no answer in time is ETIMEOUT', async () => {
      const sim = await simulator({ auth: 'basic' });
      sim.inject({ kind: 'stall' });
      const client = clientFor(sim, { auth: 'basic', timeout: 200 });
      const err = await failure(takeSnapshot(client), 'ETIMEOUT');
      assert.match(err.message, /image\.jpg/);
      assert.equal(sim.state.requestCount, 1);
    });

    it('a per-call timeout overrides the device timeout', async () => {
      const sim = await simulator({ auth: 'basic' });
      sim.inject({ kind: 'stall' });
      const client = clientFor(sim, { auth: 'basic', timeout: 60_000 });
      await failure(client.request({ path: '/jpg/image.jpg', timeout: 200 }), 'ETIMEOUT');
    });

    it('HTTP 503 is EHTTP with the status; the next call works', async () => {
      const sim = await simulator({ auth: 'basic' });
      sim.inject({ kind: 'status', status: 503, times: 1 });
      const client = clientFor(sim, { auth: 'basic' });
      const err = await failure(takeSnapshot(client), 'EHTTP');
      assert.equal(err.status, 503);
      assert.match(err.message, /503/);
      const snap = await takeSnapshot(client);
      assert.equal(snap.image[0], 0xff);
    });

    it('a dropped connection is ECONN', async () => {
      const sim = await simulator({ auth: 'basic' });
      sim.inject({ kind: 'drop', times: 1 });
      await failure(takeSnapshot(clientFor(sim, { auth: 'basic' })), 'ECONN');
    });

    it('an aborted call is ECONN', async () => {
      const sim = await simulator({ auth: 'basic' });
      sim.inject({ kind: 'stall' });
      const controller = new AbortController();
      const pending = takeSnapshot(clientFor(sim, { auth: 'basic' }), { signal: controller.signal });
      controller.abort();
      const err = await failure(pending, 'ECONN');
      assert.match(err.message, /aborted/);
    });

    it('a call after close() is ECONN', async () => {
      const sim = await simulator({ auth: 'basic' });
      const client = clientFor(sim, { auth: 'basic' });
      await client.close();
      await failure(takeSnapshot(client), 'ECONN');
      assert.equal(sim.state.requestCount, 0);
    });
  });

  describe('TLS', () => {
    const tls = (): { key: string; cert: string } => ({ key: fixture('sim-key.pem'), cert: fixture('sim-cert.pem') });

    it('refuses a self-signed certificate by default (ECONN naming TLS)', async () => {
      const sim = await simulator({ auth: 'basic', tls: tls() });
      const client = clientFor(sim, { protocol: 'https', auth: 'basic' });
      const err = await failure(takeSnapshot(client), 'ECONN');
      assert.match(err.message, /TLS/);
      assert.equal(sim.state.requestCount, 0, 'nothing was sent over an unverified connection');
    });

    it('works with tlsVerify: false', async () => {
      const sim = await simulator({ auth: 'any', tls: tls() });
      const client = clientFor(sim, { protocol: 'https', tlsVerify: false });
      const snap = await takeSnapshot(client);
      assert.equal(snap.image[0], 0xff);
      assert.equal(sim.url.startsWith('https://'), true);
    });

    it('works with the certificate given as ca', async () => {
      const sim = await simulator({ auth: 'any', tls: tls() });
      const client = clientFor(sim, { protocol: 'https', ca: fixture('sim-cert.pem') });
      const snap = await takeSnapshot(client);
      assert.equal(snap.image[1], 0xd8);
    });

    it('does not put an IP address in the TLS server name (RFC 6066, Node warning DEP0123)', async () => {
      const connect = sinon.spy(nodeTls, 'connect');
      try {
        const sim = await simulator({ auth: 'any', tls: tls() });
        await takeSnapshot(clientFor(sim, { protocol: 'https', ca: fixture('sim-cert.pem') }));
        assert.ok(connect.called, 'the TLS connection goes through tls.connect');
        for (const call of connect.getCalls()) {
          const options: unknown = call.args[0];
          const servername = typeof options === 'object' && options !== null ? (options as { servername?: unknown }).servername : undefined;
          assert.ok(typeof servername !== 'string' || isIP(servername) === 0, `servername ${String(servername)}`);
        }
      } finally {
        connect.restore();
      }
    });
  });

  describe('bad options are EINPUT and send nothing', () => {
    const cases: Array<[string, Partial<DeviceOptions>, RegExp]> = [
      ['empty host', { host: '' }, /Host is empty/],
      ['blank host', { host: '   ' }, /Host is empty/],
      ['host with a scheme', { host: 'http://x' }, /scheme/],
      ['host with a path', { host: 'x/y' }, /path/],
      ['host with a port', { host: '127.0.0.1:80' }, /port/],
      ['port 0', { port: 0 }, /Port/],
      ['port 65536', { port: 65536 }, /Port/],
      ['port 1.5', { port: 1.5 }, /Port/],
      ['port NaN', { port: Number.NaN }, /Port/],
      ['timeout 0', { timeout: 0 }, /Timeout/],
      ['timeout -1', { timeout: -1 }, /Timeout/],
      ['timeout Infinity', { timeout: Number.POSITIVE_INFINITY }, /Timeout/],
      ['unknown auth', { auth: 'ntlm' as string as AuthMode }, /auth/],
      ['unknown protocol', { protocol: 'ftp' as string as 'http' }, /protocol/],
      ['username with a colon', { username: 'a:b' }, /username/i],
    ];

    let sim: Simulator;
    before(async () => {
      sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD });
    });
    after(async () => {
      await sim.close();
    });

    for (const [label, bad, message] of cases) {
      it(label, () => {
        const err = syncFailure(() => new DeviceClient({ host: sim.host, port: sim.port, username: SIM_USER, password: SIM_PASSWORD, ...bad }), 'EINPUT');
        assert.match(err.message, message);
        assert.equal(sim.state.requestCount, 0);
      });
    }

    it('bad call parameters are EINPUT before any request', async () => {
      const client = clientFor(sim);
      await failure(takeSnapshot(client, { source: 'png' as string as 'jpg' }), 'EINPUT');
      await failure(takeSnapshot(client, { params: { x: {} as unknown as string } }), 'EINPUT');
      await failure(listParams(client, ['Network&action=update']), 'EINPUT');
      await failure(updateParams(client, { 'Image.I0.Text.String&action=remove': 'x' }), 'EINPUT');
      await failure(updateParams(client, {}), 'EINPUT');
      assert.equal(sim.state.requestCount, 0);
    });
  });

  describe('operations', () => {
    it('takeSnapshot returns a real JPEG', async () => {
      const sim = await simulator();
      const snap = await takeSnapshot(clientFor(sim));
      assert.equal(snap.contentType, 'image/jpeg');
      assert.ok(snap.image.length > 1000);
      assert.deepEqual([...snap.image.subarray(0, 2)], [0xff, 0xd8]);
      assert.deepEqual([...snap.image.subarray(-2)], [0xff, 0xd9]);
    });

    it('snapshot params with reserved characters are sent encoded and decode back equal', async () => {
      const sim = await simulator();
      const params = { text: 'a b&c=d/e?f;g:h@i+j,k$l\\m', 'odd key&=': 'x' };
      await takeSnapshot(clientFor(sim), { source: 'cgi', params });
      const sent = sim.state.requests.at(-1);
      assert.equal(sent?.path, '/cgi-bin/admin/image');
      assert.equal(sent?.rawQuery, 'text=a%20b%26c%3Dd%2Fe%3Ff%3Bg%3Ah%40i%2Bj%2Ck%24l%5Cm&odd%20key%26%3D=x');
      assert.deepEqual(sent?.query, Object.entries(params));
    });

    it('identifyDevice returns model and firmware (XML interface)', async () => {
      const sim = await simulator();
      const identity = await identifyDevice(clientFor(sim));
      assert.deepEqual(identity, {
        interface: 'xml',
        model: sim.state.device.model,
        firmware: sim.state.device.firmwareVersion,
        name: sim.state.device.deviceName,
        mac: sim.state.device.mac,
        sn: sim.state.device.sn,
      });
      assert.equal(identity.model, 'SIM-IPC-2MP');
    });

    it('identifyDevice falls back to the CGI parameters when GetDeviceInfo is unknown', async () => {
      const sim = await simulator();
      sim.inject({ kind: 'status', status: 404, path: '/GetDeviceInfo' });
      const identity = await identifyDevice(clientFor(sim));
      assert.equal(identity.interface, 'cgi');
      assert.equal(identity.model, sim.state.device.model);
      assert.equal(identity.firmware, sim.state.device.firmwareVersion);
    });

    it('identifyDevice does not hide a wrong password behind the fallback', async () => {
      const sim = await simulator();
      await failure(identifyDevice(clientFor(sim, { password: 'wrong' })), 'EAUTH');
      assert.equal(sim.state.requestCount, 2);
    });

    it('listParams/updateParams round-trip a value with & = / and spaces', async () => {
      const sim = await simulator();
      const client = clientFor(sim);
      const value = 'a&b=c/d e+f\\g';
      assert.deepEqual(await updateParams(client, { 'Image.I0.Text.String': value }), { ok: true, updated: ['Image.I0.Text.String'] });
      assert.equal(sim.state.requests.at(-1)?.rawQuery, 'action=update&Image.I0.Text.String=a%26b%3Dc%2Fd%20e%2Bf%5Cg');
      assert.equal(sim.state.params.get('Image.I0.Text.String'), value);
      assert.deepEqual(await listParams(client, ['Image.I0.Text']), { 'Image.I0.Text.String': value });
    });

    it('listParams strips root. and reads several groups', async () => {
      const sim = await simulator();
      const params = await listParams(clientFor(sim), ['Motion', 'Brand.ProdNbr']);
      assert.deepEqual(params, {
        'Brand.ProdNbr': sim.state.device.deviceName,
        'Motion.M0.Name': 'Door',
        'Motion.M0.Sensitivity': '80',
        'Motion.M0.Threshold': '40',
        'Motion.M1.Name': 'Gate',
        'Motion.M1.Sensitivity': '70',
        'Motion.M1.Threshold': '50',
      });
    });
  });

  describe('sockets', () => {
    it('close() leaves no open socket', async () => {
      const sim = await simulator();
      watch = new SocketWatch();
      const client = clientFor(sim, { connections: 3 });
      await Promise.all(Array.from({ length: 6 }, () => takeSnapshot(client)));
      assert.ok(watch.client.length >= 1);
      assert.ok(
        watch.client.some((s) => !s.destroyed),
        'keep-alive connections are open before close()',
      );
      await client.close();
      assert.deepEqual(
        watch.client.filter((s) => !s.destroyed).length,
        0,
      );
      await watch.serverSocketsClosed();
    });

    it('openStream returns a stream on its own connection and close() releases it', async () => {
      const sim = await simulator();
      const client = clientFor(sim);
      await takeSnapshot(client); // the pool's connection, kept alive
      watch = new SocketWatch();
      const stream = await client.openStream({ path: '/jpg/image.jpg' });
      assert.equal(stream.status, 200);
      assert.equal(stream.contentType, 'image/jpeg');
      // Read until the first chunk, then no more: the parser waits (a sink that ignores the rest).
      const chunk = await new Promise<Buffer>((resolve, reject) => stream.body.listen({ onData: resolve, onEnd: () => reject(new Error('ended')), onError: reject }));
      assert.deepEqual([...chunk.subarray(0, 2)], [0xff, 0xd8]);
      assert.equal(watch.client.length, 1, 'the stream has a connection of its own');
      await stream.close();
      assert.ok(watch.client.every((s) => s.destroyed));
      await watch.serverSocketsClosed();
      // The pool is still there for requests.
      const snap = await takeSnapshot(client);
      assert.equal(snap.image[0], 0xff);
      await stream.close(); // twice is harmless
    });

    it('client.close() also releases open streams', async () => {
      const sim = await simulator();
      const client = clientFor(sim);
      watch = new SocketWatch();
      // Not read: the body waits, paused, for a sink.
      await client.openStream({ path: '/jpg/image.jpg' });
      await client.close();
      assert.ok(watch.client.length >= 1);
      assert.ok(watch.client.every((s) => s.destroyed));
      await watch.serverSocketsClosed();
    });

    it('openStream with a wrong password is EAUTH and keeps no socket', async () => {
      const sim = await simulator();
      const client = clientFor(sim, { password: 'wrong' });
      watch = new SocketWatch();
      await failure(client.openStream({ path: '/jpg/image.jpg' }), 'EAUTH');
      assert.ok(watch.client.length >= 1, 'the stream opened no socket: nothing to check');
      assert.ok(watch.client.every((s) => s.destroyed));
      assert.equal(sim.state.requestCount, 2);
    });
  });

  describe('secrets', () => {
    it('no error produced above shows the password in its message, stack, JSON or inspection', () => {
      assert.ok(produced.length >= 30, `only ${produced.length} errors were collected`);
      for (const err of produced) assertNoSecret(err);
    });
  });
});

/**
 * A device that accepts Digest answers except the next `refuse` ones, which it answers with a
 * new nonce, with `stale=true` when `staleFlag` is set. It does not check the answers: this is
 * about how often the client asks.
 */
describe('DeviceClient nonce renewal limits', () => {
  let server: Server;
  let client: DeviceClient | undefined;
  let requests: Array<{ authorization: string | undefined }> = [];
  let refuse = 0;
  let staleFlag = true;
  let nonce = 0;

  before(async () => {
    server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      requests.push({ authorization: req.headers.authorization });
      const challenge = (stale: boolean): string => `Digest realm="r", qop="auth", algorithm=MD5, nonce="n${++nonce}"${stale ? ', stale=true' : ''}`;
      if (req.headers.authorization === undefined) {
        res.writeHead(401, { 'www-authenticate': challenge(false) }).end();
      } else if (refuse > 0) {
        refuse -= 1;
        res.writeHead(401, { 'www-authenticate': challenge(staleFlag) }).end();
      } else {
        res.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.from([0xff, 0xd8, 0xff, 0xd9]));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    requests = [];
    refuse = 0;
    staleFlag = true;
    client = new DeviceClient({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, username: SIM_USER, password: SIM_PASSWORD, auth: 'digest' });
  });

  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  const nonceOf = (i: number): string | undefined => digestParamsOf(requests[i]?.authorization)['nonce'];

  it('stale=true on a nonce in use is renewed once, transparently', async () => {
    assert.ok(client);
    await takeSnapshot(client);
    await takeSnapshot(client);
    refuse = 1;
    const snap = await takeSnapshot(client);
    assert.deepEqual([...snap.image.subarray(0, 2)], [0xff, 0xd8]);
    assert.equal(requests.length, 5);
    assert.notEqual(nonceOf(3), nonceOf(4));
    assert.equal(digestParamsOf(requests[4]?.authorization)['nc'], '00000001');
  });

  it('stale=true on a first answer is renewed once: challenge, attempt, one renewal', async () => {
    assert.ok(client);
    refuse = Number.POSITIVE_INFINITY;
    await failure(takeSnapshot(client), 'EAUTH');
    assert.equal(requests.length, 3);
    assert.equal(requests[0]?.authorization, undefined);
    assert.notEqual(nonceOf(1), nonceOf(2));
  });

  it('stale=true on a nonce in use is renewed once, not twice', async () => {
    assert.ok(client);
    await takeSnapshot(client);
    await takeSnapshot(client);
    assert.equal(requests.length, 3);
    refuse = Number.POSITIVE_INFINITY;
    await failure(takeSnapshot(client), 'EAUTH');
    assert.equal(requests.length, 5, 'the request and one renewal');
    assert.notEqual(nonceOf(3), nonceOf(4));
  });

  it('a nonce in use answered with a new nonce (no stale) is renewed once, transparently', async () => {
    assert.ok(client);
    await takeSnapshot(client);
    await takeSnapshot(client);
    refuse = 1;
    staleFlag = false;
    await takeSnapshot(client);
    assert.equal(requests.length, 5);
    assert.notEqual(nonceOf(3), nonceOf(4));
  });

  it('a nonce in use answered with new nonces every time is EAUTH after one renewal', async () => {
    assert.ok(client);
    await takeSnapshot(client);
    await takeSnapshot(client);
    refuse = Number.POSITIVE_INFINITY;
    staleFlag = false;
    await failure(takeSnapshot(client), 'EAUTH');
    assert.equal(requests.length, 5);
  });
});

describe('DeviceClient streams that never finish connecting', () => {
  it('close() releases a stream socket stuck in the TLS handshake at once, not at the connect timeout', async () => {
    // A peer that accepts TCP and never answers the TLS hello: the connect stays pending.
    const peers = new Set<Socket>();
    const closed: Socket[] = [];
    const server = createNetServer((socket) => {
      peers.add(socket);
      socket.on('close', () => closed.push(socket));
      socket.on('error', () => undefined);
      socket.resume(); // read, so that the peer's end is seen
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const client = new DeviceClient({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, protocol: 'https', timeout: 60_000 });
    try {
      const opening = client.openStream({ path: '/cgi-bin/admin/input?monitor=1' }).then(
        () => 'opened',
        (err: unknown) => (err instanceof IpcamError ? err.code : String(err)),
      );
      await waitFor('the stream to reach the peer', () => peers.size === 1, 10_000);
      await client.close();
      // Well inside the 60 s connect timeout: the socket went with close().
      await waitFor('the peer to see the socket close', () => closed.length === 1, 5_000);
      assert.notEqual(await opening, 'opened');
    } finally {
      for (const socket of peers) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
