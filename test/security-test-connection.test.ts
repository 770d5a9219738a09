/**
 * "Test connection" lends the stored password only to the deployed device exactly as deployed:
 * a form that changes the port, protocol, auth mode, TLS verification or CA must bring its own
 * password. A listener of the test's own records every connection and Authorization header.
 */
import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { destinationChanges, resolveDeviceOptions } from '../lib/transport/options';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import { fixture, SIM_PASSWORD } from './helpers';
import { DEVICE, assertNoSecret, closedPort, deviceCredentials, deviceDef, helper, isRecord, logTexts } from './node-helper';

const UNCHANGED = '__PWRD__';

/** A listener that records what reaches it and answers every request with a Basic challenge. */
interface Recorder {
  port: number;
  connections: number;
  authorizations: string[];
  close(): Promise<void>;
}

async function startRecorder(tls: boolean): Promise<Recorder> {
  const recorder = { port: 0, connections: 0, authorizations: [] as string[] };
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const authorization = req.headers['authorization'];
    if (authorization !== undefined) recorder.authorizations.push(authorization);
    req.resume();
    res.writeHead(401, { 'www-authenticate': 'Basic realm="recorder"', 'content-length': '0' });
    res.end();
  };
  const server: Server = tls ? createHttpsServer({ key: fixture('sim-key.pem'), cert: fixture('sim-cert.pem') }, listener) : createHttpServer(listener);
  server.on('connection', () => (recorder.connections += 1));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  recorder.port = (server.address() as AddressInfo).port;
  return {
    get port() {
      return recorder.port;
    },
    get connections() {
      return recorder.connections;
    },
    authorizations: recorder.authorizations,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Settings = Record<string, unknown>;

describe('Test connection lends the stored password only to the device as deployed', function () {
  let recorders: Recorder[] = [];

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.unload();
    await helper.stopServer();
  });

  afterEach(async function () {
    await helper.unload();
    await Promise.all(recorders.map((r) => r.close()));
    recorders = [];
  });

  async function recorder(tls: boolean): Promise<Recorder> {
    const r = await startRecorder(tls);
    recorders.push(r);
    return r;
  }

  /** Deploys the device with the stored password and tests `form` with the placeholder password. */
  async function test(deployed: Settings, form: Settings): Promise<{ code: unknown; message: unknown; text: string }> {
    await helper.load([deviceNode], [deviceDef({ port: 0 }, deployed)], deviceCredentials(SIM_PASSWORD));
    const body = { id: DEVICE, host: '127.0.0.1', username: 'admin', password: UNCHANGED, timeout: '3000', ...form };
    const raw = await helper.request().post('/ipcam-device/test').set('content-type', 'application/json').send(body);
    assert.equal(raw.status, 200, raw.text);
    assert.ok(isRecord(raw.body) && isRecord(raw.body['error']), raw.text);
    return { code: raw.body['error']['code'], message: raw.body['error']['message'], text: raw.text };
  }

  function caCert(): string {
    return fixture('sim-cert.pem');
  }

  it('lends it to the device exactly as deployed (the control: the recorder sees the header)', async function () {
    const r = await recorder(false);
    const settings = { port: String(r.port), protocol: 'http', auth: 'basic', tlsVerify: true, ca: '' };
    const { code } = await test(settings, settings);
    assert.equal(code, 'EAUTH');
    assert.equal(r.authorizations.length, 1);
    assert.equal(r.authorizations[0], `Basic ${Buffer.from(`admin:${SIM_PASSWORD}`).toString('base64')}`);
  });

  it('lends it over https with the same verification and CA', async function () {
    const r = await recorder(true);
    const settings = { port: String(r.port), protocol: 'https', auth: 'basic', tlsVerify: true, ca: caCert() };
    const { code } = await test(settings, settings);
    assert.equal(code, 'EAUTH');
    assert.equal(r.authorizations.length, 1);
  });

  const cases: Array<{ what: string; tls: boolean; deployed: (port: number, other: number) => Settings; form: (port: number) => Settings; names: RegExp }> = [
    {
      what: 'another port',
      tls: false,
      deployed: (_port, other) => ({ port: String(other), protocol: 'http', auth: 'basic' }),
      form: (port) => ({ port: String(port), protocol: 'http', auth: 'basic' }),
      names: /port/,
    },
    {
      what: 'another protocol',
      tls: true,
      deployed: (port) => ({ port: String(port), protocol: 'http', auth: 'basic', tlsVerify: false }),
      form: (port) => ({ port: String(port), protocol: 'https', auth: 'basic', tlsVerify: false }),
      names: /protocol/,
    },
    {
      what: 'another auth mode',
      tls: false,
      deployed: (port) => ({ port: String(port), protocol: 'http', auth: 'digest' }),
      form: (port) => ({ port: String(port), protocol: 'http', auth: 'basic' }),
      names: /auth/,
    },
    {
      what: 'TLS verification turned off',
      tls: true,
      deployed: (port) => ({ port: String(port), protocol: 'https', auth: 'basic', tlsVerify: true, ca: caCert() }),
      form: (port) => ({ port: String(port), protocol: 'https', auth: 'basic', tlsVerify: false, ca: caCert() }),
      names: /TLS verification/,
    },
    {
      what: 'another CA',
      tls: true,
      deployed: (port) => ({ port: String(port), protocol: 'https', auth: 'basic', tlsVerify: true, ca: '' }),
      form: (port) => ({ port: String(port), protocol: 'https', auth: 'basic', tlsVerify: true, ca: caCert() }),
      names: /CA/,
    },
  ];
  for (const c of cases) {
    it(`${c.what}: EINPUT asking for the password, and nothing reaches the listener`, async function () {
      const r = await recorder(c.tls);
      const { code, message, text } = await test(c.deployed(r.port, await closedPort()), c.form(r.port));
      assert.equal(code, 'EINPUT');
      assert.match(String(message), /enter the password/i);
      assert.match(String(message), c.names);
      assert.equal(r.connections, 0, 'a connection reached the listener');
      assert.deepEqual(r.authorizations, []);
      assertNoSecret([text, ...logTexts()], SIM_PASSWORD);
    });
  }

  it('a form with its own password may test any settings (the password typed is sent)', async function () {
    const r = await recorder(false);
    await test({ port: String(await closedPort()), protocol: 'http', auth: 'digest' }, { port: String(r.port), protocol: 'http', auth: 'basic', password: 'typed-in' });
    assert.deepEqual(r.authorizations, [`Basic ${Buffer.from('admin:typed-in').toString('base64')}`]);
  });

  it('compares the settings after defaults: blank port = 80 / 443 by protocol, host in any case', function () {
    const resolve = (o: Settings): ReturnType<typeof resolveDeviceOptions> => resolveDeviceOptions({ host: 'cam.local', ...o });
    assert.deepEqual(destinationChanges(resolve({ protocol: 'http' }), resolve({ protocol: 'http', port: 80 })), []);
    assert.deepEqual(destinationChanges(resolve({ protocol: 'https' }), resolve({ protocol: 'https', port: 443 })), []);
    assert.deepEqual(destinationChanges(resolve({ host: 'CAM.local' }), resolve({})), []);
    // http uses no CA: one left in a hidden field changes nothing.
    assert.deepEqual(destinationChanges(resolve({ protocol: 'http', ca: caCert() }), resolve({ protocol: 'http' })), []);
    assert.deepEqual(destinationChanges(resolve({ protocol: 'https' }), resolve({ protocol: 'http' })), ['port', 'protocol']);
    assert.deepEqual(destinationChanges(resolve({ protocol: 'https', ca: caCert() }), resolve({ protocol: 'https', ca: `${caCert()}\n` })), ['CA']);
    assert.deepEqual(destinationChanges(resolve({ host: '127.0.0.1' }), resolve({ host: '127.0.0.2' })), ['host']);
  });
});
