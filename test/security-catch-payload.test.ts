/**
 * What a failed message takes to a Catch node: no secret parameter of its payload (a new
 * password, a test server's or proxy's password, however the operation failed, even one the
 * message mistyped), the rest of its payload untouched; and no piece of any secret in
 * `msg.error` or in `node.error`, against a fake device that echoes them.
 */
import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SECRET_PARAM_NAMES, withoutSecretParams } from '../lib/ops';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import requestNode from '../nodes/ipcam-request/ipcam-request';
import { DEVICE, FlowWatch, actionFlow, deviceCredentials, deviceDef, helper, isRecord, type FlowNode } from './node-helper';

const REQUEST = 'req1';
const USER = 'gatekeeper';
const DEVICE_PASSWORD = 'Dev1ce-Pq5s-2024x';
const BASIC = Buffer.from(`${USER}:${DEVICE_PASSWORD}`, 'utf8').toString('base64');
/** 56 characters, letters and digits: fit for an XML attribute as it is. */
const NEW = 'Nw7qK2x9Vb4TzR8mLp3HsQ6yWd1CfJ5gXn0BkA7eUr9oMt2ZiY4aGs8j';
const TEST_PASSWORD = 'srv-Tq5t-Pw0rd-0451';
const PROXY_PASSWORD = 'prx-Prq8y-Kw7j-9933';
const SECRETS = [NEW, USER, DEVICE_PASSWORD, BASIC, TEST_PASSWORD, PROXY_PASSWORD];

/** Pieces of 6 characters of the longer secrets, shorter ones whole (any case): written apart from lib's check. */
function piecesIn(text: string): string[] {
  const lower = text.toLowerCase();
  return SECRETS.map((s) => s.toLowerCase()).flatMap((secret) => {
    if (secret.length < 6) return lower.includes(secret) ? [secret] : [];
    const found: string[] = [];
    for (let i = 0; i + 6 <= secret.length; i++) if (lower.includes(secret.slice(i, i + 6))) found.push(secret.slice(i, i + 6));
    return found;
  });
}

describe('a failed message reaches a Catch node without its secrets', function () {
  let server: Server | undefined;
  /** How the fake device answers a request (the device node's own requests included). */
  let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const paths: string[] = [];

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.stopServer();
  });

  beforeEach(async function () {
    paths.length = 0;
    server = createServer((req, res) => {
      paths.push(req.url ?? '');
      req.resume();
      req.on('end', () => answer(req, res));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });

  afterEach(async function () {
    await helper.unload();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  async function deploy(settings: Record<string, unknown>): Promise<FlowWatch> {
    const node: FlowNode = { id: REQUEST, type: 'ipcam-request', name: '', device: DEVICE, params: {}, ...settings };
    const port = (server?.address() as AddressInfo).port;
    await helper.load([deviceNode, requestNode], actionFlow(node, [deviceDef({ port })]), deviceCredentials(DEVICE_PASSWORD, USER));
    return new FlowWatch([REQUEST, DEVICE]);
  }

  function xmlFailure(desc: string): void {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><config version="1.0" status="failed" errorCode="14" errorDesc="${desc}"/>`);
    };
  }

  function errorOf(msg: Record<string, unknown>): Record<string, unknown> {
    const error = msg['error'];
    assert.ok(isRecord(error));
    return error;
  }

  function assertNoPiece(w: FlowWatch): void {
    const texts = w.texts();
    assert.ok(w.errors().length > 0, 'node.error was not called');
    for (const text of texts) assert.deepEqual(piecesIn(text), [], `a piece of a secret in: ${text.slice(0, 300)}`);
  }

  const echoes: Array<[string, string]> = [
    ['the whole new password in a long text', `${'The device could not apply the request because of the following reason: '.slice(0, 80)}${NEW} ${'z'.repeat(300)}`],
    ['40 characters of the new password', `rejected ${NEW.slice(10, 50)} as too weak`],
    ['6 characters of the new password', `weak: ${NEW.slice(40, 46)}`],
    ['6 characters of the device password', `session ${DEVICE_PASSWORD.slice(3, 9)} expired`],
    ['part of the Basic token', `header ${BASIC.slice(2, 14)} refused`],
  ];

  for (const [what, desc] of echoes) {
    it(`modifyPassword: a device echoing ${what}: msg.error and node.error hold no piece of a secret, msg.payload no newPassword`, async function () {
      const w = await deploy({ operation: 'modifyPassword' });
      xmlFailure(desc);
      const msg = await w.expectCaught(REQUEST, { payload: { newPassword: NEW, user: 'admin' }, topic: 'gate' });
      assert.ok(paths.includes('/ModifyPassword'), 'the request did not reach the device');
      assert.equal(errorOf(msg)['code'], 'EDEVICE');
      assert.match(String(errorOf(msg)['message']), /Action error \(device error 14\)$/);
      assert.deepEqual(msg.payload, { user: 'admin' });
      assert.equal(msg['topic'], 'gate');
      assertNoPiece(w);
    });
  }

  it('testHttpServer failing at the device (HTTP 500): the Catch node gets the payload without password and proxyPassword', async function () {
    answer = (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`internal error for ${TEST_PASSWORD} via ${PROXY_PASSWORD}`);
    };
    const w = await deploy({ operation: 'testHttpServer' });
    const given = { server: 'events.example.com', port: 8080, user: 'eventuser', password: TEST_PASSWORD, proxy: 'proxy.lan', proxyPort: 3128, proxyUser: 'pu', proxyPassword: PROXY_PASSWORD };
    const msg = await w.expectCaught(REQUEST, { payload: given });
    assert.equal(errorOf(msg)['code'], 'EHTTP');
    assert.deepEqual(msg.payload, { server: 'events.example.com', port: 8080, user: 'eventuser', proxy: 'proxy.lan', proxyPort: 3128, proxyUser: 'pu' });
    assertNoPiece(w);
  });

  it('testSmtp refused as EINPUT before anything is sent: its password is removed too', async function () {
    const w = await deploy({ operation: 'testSmtp' });
    const msg = await w.expectCaught(REQUEST, { payload: { server: 'smtp.example.com', to: 'not an address', from: 'b@example.com', user: 'cam', password: TEST_PASSWORD } });
    assert.equal(errorOf(msg)['code'], 'EINPUT');
    assert.deepEqual(msg.payload, { server: 'smtp.example.com', to: 'not an address', from: 'b@example.com', user: 'cam' });
    assert.deepEqual(paths, []);
    assertNoPiece(w);
  });

  it('a mistyped operation or parameter name does not let a password through (any case)', async function () {
    const w = await deploy({ operation: 'msg' });
    const msg = await w.expectCaught(REQUEST, { payload: { operation: 'modifyPasword', NewPassword: NEW, proxypassword: PROXY_PASSWORD, note: 'kept', list: [1, 2] } });
    assert.equal(errorOf(msg)['code'], 'EINPUT');
    assert.deepEqual(msg.payload, { operation: 'modifyPasword', note: 'kept', list: [1, 2] });
    assertNoPiece(w);
  });

  it('a payload that is not an object, or holds no secret, goes on as it is', async function () {
    const w = await deploy({ operation: 'msg' });
    for (const payload of ['modifyPassword', 42, { operation: 'noSuchThing', keep: { password: 'nested is data, not a parameter' } }]) {
      const msg = await w.expectCaught(REQUEST, { payload });
      assert.deepEqual(msg.payload, payload);
    }
  });

  it('the secret names come from the parameter vocabulary: every secret field of the tables', function () {
    assert.deepEqual([...SECRET_PARAM_NAMES].sort(), ['newpassword', 'password', 'proxypassword']);
    const payload = { newPassword: 'a', Password: 'b', other: 'c' };
    assert.deepEqual(withoutSecretParams(payload), { other: 'c' });
    assert.deepEqual(payload, { newPassword: 'a', Password: 'b', other: 'c' }, 'the given object is not changed');
  });
});
