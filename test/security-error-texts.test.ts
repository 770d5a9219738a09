/**
 * Error texts are no oracle: built from known parts, they are the same whatever the password is,
 * and a device's own words are shown only when they hold no part of a secret (no piece of 6
 * characters or more, no shorter secret whole: the device's credentials and the call's own
 * password parameters), shortened and on one line.
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listParams, updateParams } from '../lib/ops/param-calls';
import { takeSnapshot } from '../lib/ops/snapshot';
import { DEVICE_WORDS_MAX, holdsSecret, withholdLines, WITHHELD_LINE } from '../lib/errors/echo';
import { IpcamError } from '../lib/errors/errors';
import { REQUEST_OPERATIONS, runOperation } from '../lib/ops';
import { startSimulator, type Simulator, type SimulatorOptions } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import type { DeviceOptions } from '../lib/transport/options';
import { xmlExchange as xmlCall } from '../lib/answer';
import { addPlates, modifyPlate } from '../lib/ops/plates';
import { fixture, SIM_USER } from './helpers';
import { closedPort } from './node-helper';

/** Passwords that old redaction turned into an oracle: each is a piece of our own texts. */
const PASSWORDS = ['admin', '1', 'e', 'http', 'cgi-bin', '/'];

/** A password that appears in no text: the texts it gives are the reference. */
function randomPassword(): string {
  return `R${randomBytes(12).toString('hex').replace(/[0-9]/g, 'q')}Z`;
}

interface Kind {
  name: string;
  /** The error text for this password; `<port>` stands for the port of a simulator started for it. */
  text(password: string): Promise<string>;
}

const clients = new Set<DeviceClient>();
const sims = new Set<Simulator>();

function client(options: DeviceOptions): DeviceClient {
  const c = new DeviceClient(options);
  clients.add(c);
  return c;
}

async function simulator(password: string, options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({ port: 0, username: SIM_USER, password, auth: 'any', ...options });
  sims.add(sim);
  return sim;
}

/** The failure of `run`, an IpcamError of `code`; its message with the simulator's port as `<port>`. */
async function failureText(code: IpcamError['code'], run: () => Promise<unknown>, port?: number): Promise<string> {
  let caught: unknown;
  try {
    await run();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof IpcamError, `expected ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  const texts = [caught.message, caught.deviceDesc ?? ''];
  return texts.map((t) => (port === undefined ? t : t.split(String(port)).join('<port>'))).join(' | ');
}

describe('error texts whatever the password (no redaction oracle)', function () {
  this.timeout(30_000);
  let refusedPort: number;

  before(async function () {
    refusedPort = await closedPort();
  });

  afterEach(async function () {
    await Promise.all([...clients].map((c) => c.close()));
    clients.clear();
    await Promise.all([...sims].map((s) => s.close()));
    sims.clear();
  });

  const kinds: Kind[] = [
    {
      name: 'ECONN (connection refused)',
      text: (password) => failureText('ECONN', () => listParams(client({ host: '127.0.0.1', port: refusedPort, username: SIM_USER, password }), ['Brand'])),
    },
    {
      name: 'ECONN (an answer that is not HTTP)',
      async text(password) {
        const sim = await simulator(password);
        sim.inject({ kind: 'garbage' });
        return failureText('ECONN', () => listParams(client({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password }), ['Brand']), sim.port);
      },
    },
    {
      name: 'ETIMEOUT',
      async text(password) {
        const sim = await simulator(password);
        sim.inject({ kind: 'stall' });
        return failureText('ETIMEOUT', () => listParams(client({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password, timeout: 300 }), ['Brand']), sim.port);
      },
    },
    {
      name: 'EHTTP',
      async text(password) {
        const sim = await simulator(password);
        sim.inject({ kind: 'status', status: 503 });
        return failureText('EHTTP', () => listParams(client({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password }), ['Brand']), sim.port);
      },
    },
    {
      name: 'EAUTH (Basic)',
      async text(password) {
        const sim = await simulator(`not-${password}`, { auth: 'basic' });
        return failureText('EAUTH', () => listParams(client({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password, auth: 'basic' }), ['Brand']), sim.port);
      },
    },
    {
      name: 'EAUTH (Digest)',
      async text(password) {
        const sim = await simulator(`not-${password}`, { auth: 'digest' });
        return failureText('EAUTH', () => listParams(client({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password }), ['Brand']), sim.port);
      },
    },
    {
      name: 'EPARSE (XML answer that is not XML)',
      async text(password) {
        const sim = await simulator(password);
        sim.inject({ kind: 'status', status: 200, path: '/GetDeviceInfo' });
        return failureText('EPARSE', () => xmlCall(client({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password }), { path: '/GetDeviceInfo', method: 'GET' }), sim.port);
      },
    },
    {
      name: 'EPARSE (snapshot that is no image)',
      async text(password) {
        const sim = await simulator(password);
        sim.inject({ kind: 'status', status: 200, path: '/cgi-bin/admin/image' });
        return failureText('EPARSE', () => takeSnapshot(client({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password }), { source: 'cgi' }), sim.port);
      },
    },
    {
      name: 'EDEVICE (XML failure document)',
      async text(password) {
        const sim = await simulator(password);
        return failureText('EDEVICE', () => modifyPlate(client({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password }), { plate: 'NOPE1', owner: 'x' }), sim.port);
      },
    },
    {
      name: 'EDEVICE (per-plate result text)',
      async text(password) {
        const sim = await simulator(password);
        const c = client({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password });
        await addPlates(c, 'TWICE1');
        const [result] = await addPlates(c, 'TWICE1');
        assert.equal(result?.ok, false);
        return String(result?.error);
      },
    },
    {
      name: 'EDEVICE (CGI error line)',
      async text(password) {
        const sim = await simulator(password);
        return failureText('EDEVICE', () => updateParams(client({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password }), { 'Image.I0.NoSuch': 'x' }), sim.port);
      },
    },
    {
      name: 'ECONN (TLS certificate not accepted)',
      async text(password) {
        const sim = await simulator(password, { tls: { key: fixture('sim-key.pem'), cert: fixture('sim-cert.pem') } });
        return failureText('ECONN', () => listParams(client({ host: '127.0.0.1', port: sim.port, protocol: 'https', username: SIM_USER, password }), ['Brand']), sim.port);
      },
    },
  ];

  for (const kind of kinds) {
    it(`${kind.name}: the same text for ${PASSWORDS.map((p) => `'${p}'`).join(', ')} as for a random password`, async function () {
      const reference = await kind.text(randomPassword());
      assert.ok(!reference.includes('***'), reference);
      for (const password of PASSWORDS) {
        assert.equal(await kind.text(password), reference, `password '${password}'`);
      }
    });
  }

  it('the texts name what failed in our words: target, method and path, never a query', async function () {
    const c = client({ host: '127.0.0.1', port: refusedPort, username: SIM_USER, password: 'admin' });
    const text = await failureText('ECONN', () => listParams(c, ['Brand']));
    assert.equal(text.split(' | ')[0], `Connection refused by http://127.0.0.1:${refusedPort} (GET /cgi-bin/admin/param)`);
  });
});

describe("a device's own words in error texts", function () {
  let server: Server | undefined;
  let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const password = 'Pa55-w0rd!';
  let c: DeviceClient;

  beforeEach(async function () {
    // A device that says whatever the test wants (the simulator's words are fixed ones).
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(req, res));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    c = new DeviceClient({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, username: 'operator7', password });
  });

  afterEach(async function () {
    await c.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  function xmlFailure(desc: string): void {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><config version="1.0" status="failed" errorCode="14" errorDesc="${desc}"/>`);
    };
  }

  function cgiError(line: string): void {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`${line}\r\n`);
    };
  }

  async function xmlError(): Promise<IpcamError> {
    try {
      await xmlCall(c, { path: '/SetSomething' });
    } catch (err) {
      assert.ok(err instanceof IpcamError);
      return err;
    }
    assert.fail('no error');
  }

  async function cgiFailure(): Promise<IpcamError> {
    try {
      await updateParams(c, { 'Image.I0.Text': 'x' });
    } catch (err) {
      assert.ok(err instanceof IpcamError);
      return err;
    }
    assert.fail('no error');
  }

  it('an XML errorDesc is shown when it holds no secret', async function () {
    xmlFailure('Motor jammed');
    const err = await xmlError();
    assert.equal(err.code, 'EDEVICE');
    assert.equal(err.deviceDesc, 'Motor jammed');
    assert.equal(err.message, 'Action error (device error 14: Motor jammed)');
  });

  for (const [what, desc] of [
    ['the password', `login admin:${password} refused`],
    ['the password in another case', `bad ${password.toUpperCase()}`],
    ['the username', 'user operator7 busy'],
    ['the Basic credentials', `header Basic ${Buffer.from(`operator7:${password}`).toString('base64')}`],
  ] as const) {
    it(`an XML errorDesc holding ${what} is left out: the text is ours alone`, async function () {
      xmlFailure(desc);
      const err = await xmlError();
      assert.equal(err.code, 'EDEVICE');
      assert.equal(err.deviceDesc, undefined);
      assert.equal(err.message, 'Action error (device error 14)');
      assert.ok(!JSON.stringify(err).toLowerCase().includes(password.toLowerCase()));
    });
  }

  it('a long errorDesc with line breaks is shown on one line and shortened', async function () {
    xmlFailure(`first line&#10;second&#13;&#10;third ${'x'.repeat(5000)}`);
    const err = await xmlError();
    assert.ok(err.deviceDesc !== undefined);
    assert.ok(err.deviceDesc.length <= DEVICE_WORDS_MAX + 3, `${err.deviceDesc.length} characters`);
    assert.doesNotMatch(err.deviceDesc, /[\r\n]/);
    assert.doesNotMatch(err.message, /[\r\n]/);
    assert.match(err.deviceDesc, /^first line second third x+\.\.\.$/);
  });

  it('a CGI error line is EDEVICE; a known line about a name we sent is told in our words', async function () {
    cgiError("# Error: Error setting 'Image.I0.Text'");
    const err = await cgiFailure();
    assert.equal(err.code, 'EDEVICE');
    assert.equal(err.message, "The device answered the parameter update with an error: error setting 'Image.I0.Text'");
  });

  it('a CGI error line holding the password is left out', async function () {
    cgiError(`# Error: cannot log in operator7/${password}`);
    const err = await cgiFailure();
    assert.equal(err.code, 'EDEVICE');
    assert.equal(err.message, 'The device answered the parameter update with an error');
    assert.equal(err.deviceDesc, undefined);
  });

  it('a CGI error line is shown shortened and on one line', async function () {
    cgiError(`# Error: disk\u0007full ${'y'.repeat(3000)}`);
    const err = await cgiFailure();
    assert.ok((err.deviceDesc ?? '').length <= DEVICE_WORDS_MAX + 3);
    assert.match(err.message, /^The device answered the parameter update with an error: disk full y+\.\.\.$/);
  });
});

/**
 * Every piece of a secret this text holds: a window of `SECRET_PIECE` characters of a longer
 * secret, or a shorter secret whole (any case). Written apart from lib's check, to judge it.
 */
function secretPiecesIn(text: string, secrets: readonly string[]): string[] {
  const lower = text.toLowerCase();
  const found: string[] = [];
  for (const secret of secrets.map((s) => s.toLowerCase())) {
    if (secret.length < 6) {
      if (lower.includes(secret)) found.push(secret);
      continue;
    }
    for (let i = 0; i + 6 <= secret.length; i++) if (lower.includes(secret.slice(i, i + 6))) found.push(secret.slice(i, i + 6));
  }
  return found;
}

function assertNoPieceOf(err: IpcamError, secrets: readonly string[]): void {
  for (const text of [err.message, err.deviceDesc ?? '', JSON.stringify(err), JSON.stringify(err.toJSON()), String(err.stack)]) {
    assert.deepEqual(secretPiecesIn(text, secrets), [], `a piece of a secret in: ${text.slice(0, 300)}`);
  }
}

describe('any part of a secret in a device text is withheld before it is shortened', function () {
  /** 56 characters, letters and digits only (fit for an XML attribute as it is). */
  const NEW = 'Nw7q' + 'K2x9Vb4TzR8mLp3HsQ6yWd1CfJ5gXn0BkA7eUr9oMt2ZiY4aGs8jPv'.slice(0, 52);
  const USER = 'gatekeeper';
  const DEVICE_PASSWORD = 'Dev1ce-Pass-2024x';
  const BASIC = Buffer.from(`${USER}:${DEVICE_PASSWORD}`, 'utf8').toString('base64');
  const TEST_PASSWORD = 'srv-Tq5t-Pw0rd-0451';
  const PROXY_PASSWORD = 'prx-Prq8y-Kw7j-9933';
  const SECRETS = [NEW, USER, DEVICE_PASSWORD, BASIC, TEST_PASSWORD, PROXY_PASSWORD];
  const FILLER = 'The device could not apply the request because of the following reason ';

  let server: Server | undefined;
  let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  let deviceClient: DeviceClient;

  before(function () {
    assert.equal(NEW.length, 56);
  });

  beforeEach(async function () {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(req, res));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    deviceClient = new DeviceClient({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, username: USER, password: DEVICE_PASSWORD });
  });

  afterEach(async function () {
    await deviceClient.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  function xmlFailure(desc: string): void {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><config version="1.0" status="failed" errorCode="14" errorDesc="${desc}"/>`);
    };
  }

  function textAnswer(text: string): void {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(text);
    };
  }

  async function failure(operation: string, input: Record<string, unknown>): Promise<IpcamError> {
    const op = REQUEST_OPERATIONS.get(operation);
    assert.ok(op);
    try {
      await runOperation(deviceClient, op, input);
    } catch (err) {
      assert.ok(err instanceof IpcamError, String(err));
      return err;
    }
    assert.fail('no error');
  }

  const echoes: Array<[string, string]> = [
    // The text of issue 18: the new password at character 80 of a long text, once cut to 120 characters 40 of them were left.
    ['the whole new password inside a long text', `${FILLER.slice(0, 80)}${NEW} ${'z'.repeat(400)}`],
    ['40 characters of the new password', `${FILLER}${NEW.slice(8, 48)} rejected`],
    ['6 characters of the new password', `weak password: ${NEW.slice(20, 26)}`],
    ['6 characters of the new password in another case', `weak password: ${NEW.slice(30, 36).toUpperCase()}`],
    ['the new password after a line break', `first line&#10;${NEW.slice(0, 12)}`],
    ['6 characters of the device password', `session of ${DEVICE_PASSWORD.slice(5, 11)} expired`],
    ['part of the Basic token', `header ${BASIC.slice(4, 20)} refused`],
    ['part of the user name', `account ${USER.slice(0, 7)} busy`],
  ];

  for (const [what, desc] of echoes) {
    it(`modifyPassword: a device echoing ${what} gives an error text with no piece of any secret`, async function () {
      xmlFailure(desc);
      const err = await failure('modifyPassword', { newPassword: NEW });
      assert.equal(err.code, 'EDEVICE');
      assert.equal(err.message, 'Action error (device error 14)');
      assert.equal(err.deviceDesc, undefined);
      assertNoPieceOf(err, SECRETS);
    });
  }

  it('modifyPassword: 5 characters of a long secret are no piece of it: the device words are shown', async function () {
    const desc = `weak password: ${NEW.slice(20, 25)}`;
    xmlFailure(desc);
    const err = await failure('modifyPassword', { newPassword: NEW });
    assert.equal(err.deviceDesc, desc);
    assert.deepEqual(secretPiecesIn(err.message, SECRETS), []);
  });

  it('a secret shorter than 6 characters is withheld whole, and only whole', async function () {
    const short = new DeviceClient({ host: '127.0.0.1', port: (server?.address() as AddressInfo).port, username: 'op7', password: 'Zq9x' });
    try {
      for (const [desc, shown] of [['login op7 refused', false], ['key zq9x refused', false], ['login op refused', true], ['key q9x refused', true]] as const) {
        xmlFailure(desc);
        const err = await xmlCall(short, { path: '/SetSomething' }).then(
          () => assert.fail('no error'),
          (e: unknown) => e as IpcamError,
        );
        assert.equal(err.deviceDesc, shown ? desc : undefined, desc);
        if (!shown) assert.deepEqual(secretPiecesIn(JSON.stringify(err.toJSON()), ['op7', 'Zq9x']), []);
      }
    } finally {
      await short.close();
    }
  });

  const testInput = { server: 'events.example.com', port: 8080, user: 'eventuser', password: TEST_PASSWORD, proxy: 'proxy.lan', proxyPort: 3128, proxyUser: 'pu', proxyPassword: PROXY_PASSWORD };

  for (const [what, text] of [
    ['18 characters of the test password', `${FILLER}login with ${TEST_PASSWORD.slice(2, 20)} failed, no answer`],
    ['6 characters of the proxy password', `proxy refused ${PROXY_PASSWORD.slice(6, 12)}`],
    ['6 characters of the device password (a secret the operation itself does not list)', `sender ${DEVICE_PASSWORD.slice(0, 6)}@cam could not connect`],
  ] as const) {
    it(`testHttpServer: an answer without a code echoing ${what} is EDEVICE without it`, async function () {
      textAnswer(`${text}\n`);
      const err = await failure('testHttpServer', testInput);
      assert.equal(err.code, 'EDEVICE');
      assert.equal(err.deviceDesc, undefined);
      assert.match(err.message, /^The device got no HTTP answer from events\.example\.com:8080/);
      assertNoPieceOf(err, SECRETS);
    });
  }

  it('testHttpServer: a CGI error line echoing part of the proxy password is EDEVICE without it', async function () {
    textAnswer(`# Error: bad proxy credentials pu:${PROXY_PASSWORD.slice(0, 9)}\n`);
    const err = await failure('testHttpServer', testInput);
    assert.equal(err.code, 'EDEVICE');
    assert.equal(err.message, 'The device answered the HTTP server test with an error');
    assertNoPieceOf(err, SECRETS);
  });

  it('holdsSecret: pieces from 6 characters, shorter secrets whole, any case, blank secrets ignored', function () {
    assert.equal(holdsSecret('xx abcdef yy', ['abcdefgh']), true);
    assert.equal(holdsSecret('xx ABCDE yy', ['abcdefgh']), false);
    assert.equal(holdsSecret('xx BCDEFG yy', ['abcdefgh']), true);
    assert.equal(holdsSecret('xx abc yy', ['abc']), true);
    assert.equal(holdsSecret('xx ab yy', ['abc']), false);
    assert.equal(holdsSecret('anything', ['']), false);
    assert.equal(holdsSecret('anything', []), false);
    // A long text is read once, whatever its length (no cut: a piece at the end counts).
    assert.equal(holdsSecret(`${'x'.repeat(1_000_000)}cdefgh`, ['abcdefgh']), true);
  });

  it('a test log line holding a piece of a password is withheld whole; other lines stay', function () {
    const log = `connecting\nAUTH ${TEST_PASSWORD.slice(3, 9)}\nSMTP Test Failed`;
    assert.equal(withholdLines(log, [TEST_PASSWORD]), `connecting\n${WITHHELD_LINE}\nSMTP Test Failed`);
  });
});
