/**
 * Request/response calls read through undici's dispatch() (lib/transport/buffered-answer.ts):
 * hostile fake devices over raw sockets (test/raw-device.ts). A call must never take a cut or
 * oversized answer for a whole one, never hold a socket past its deadline, and a node's shared
 * abort must end every call in flight at once.
 */
import { strict as assert } from 'node:assert';
import { getEventListeners } from 'node:events';
import type { Socket } from 'node:net';
import { IpcamError } from '../lib/errors/errors';
import { pulseRelay } from '../lib/ops/relay';
import { DeviceClient } from '../lib/transport/client';
import { waitFor } from './helpers';
import { drip, RawDevice, type Script } from './raw-device';

/** Sends as much as the socket takes, for ever (a device lying about an endless body). */
function flood(socket: Socket, chunk: Buffer): void {
  const pump = (): void => {
    while (!socket.destroyed && socket.write(chunk));
    if (!socket.destroyed) socket.once('drain', pump);
  };
  pump();
}

async function rejectsWith(call: Promise<unknown>, code: string, text?: RegExp): Promise<IpcamError> {
  const err = await call.then(
    () => assert.fail(`expected ${code}, the call succeeded`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof IpcamError, `expected an IpcamError, got ${String(err)}`);
  assert.equal(err.code, code, err.message);
  if (text) assert.match(err.message, text);
  return err;
}

describe('request/response calls through dispatch() against hostile devices (raw sockets)', function () {
  this.timeout(30_000);
  let device: RawDevice | undefined;
  let client: DeviceClient | undefined;

  async function start(script: Script, opts: { timeout?: number; auth?: 'basic' | 'auto' } = {}): Promise<DeviceClient> {
    device = new RawDevice(script);
    const port = await device.listen();
    client = new DeviceClient({ host: '127.0.0.1', port, username: 'u', password: 'p', auth: opts.auth ?? 'basic', timeout: opts.timeout ?? 2000 });
    return client;
  }

  const allClosed = (): Promise<void> => waitFor('the device to see every socket closed', () => device?.open === 0, 3000);

  afterEach(async function () {
    await client?.close();
    await device?.close();
    client = device = undefined;
  });

  it('an answer cut short of its Content-Length (the device closes) is ECONN, never a short success', async function () {
    const c = await start((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nOK');
      socket.end();
    });
    await rejectsWith(c.request({ path: '/cgi-bin/viewer/getparam.cgi' }), 'ECONN');
    // A relay whose answer is cut is not reported pulsed.
    await rejectsWith(pulseRelay(c, 1, 500), 'ECONN');
  });

  it('a chunked answer with broken framing is ECONN (not readable HTTP), never a success', async function () {
    const c = await start((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\nzz\r\n');
    });
    await rejectsWith(pulseRelay(c, 1, 500), 'ECONN');
    await allClosed();
  });

  it('an answer that promises more and goes silent is ETIMEOUT at the deadline, and its socket is released', async function () {
    const c = await start((socket) => void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nOK'), { timeout: 500 });
    const began = Date.now();
    await rejectsWith(c.request({ path: '/cgi-bin/viewer/getparam.cgi' }), 'ETIMEOUT');
    assert.ok(Date.now() - began < 2000, `took ${Date.now() - began} ms`);
    await allClosed();
  });

  it('an endless answer at full speed is EPARSE at maxBytes: not read on, the connection dropped, the next call on a new one', async function () {
    const c = await start((socket, _request, index) => {
      if (index > 0) return void socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK');
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 10000000000\r\n\r\n');
      flood(socket, Buffer.alloc(64 * 1024, 0x41));
    });
    await rejectsWith(c.request({ path: '/cgi-bin/admin/backup.cgi', maxBytes: 1024 * 1024 }), 'EPARSE', /larger than 1048576 bytes/);
    await waitFor('the flooding connection to be dropped', () => device?.sockets[0]?.destroyed === true, 3000);
    const next = await c.request({ path: '/cgi-bin/viewer/getparam.cgi' });
    assert.equal(next.body.toString(), 'OK');
    assert.equal(device?.sockets.length, 2);
  });

  it('a reader that refuses a piece (onChunk throws) ends the call with its error and drops the connection', async function () {
    const c = await start((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n');
      flood(socket, Buffer.alloc(16 * 1024, 0x3c));
    });
    const refusal = new IpcamError('EPARSE', 'too many elements');
    const err = await rejectsWith(
      c.request({
        path: '/cgi-bin/admin/lpr.cgi',
        onChunk: () => {
          throw refusal;
        },
      }),
      'EPARSE',
    );
    assert.equal(err, refusal);
    await allClosed();
  });

  it('a 401 with an endless challenge body: the body is cut, the retry carries the credentials and succeeds', async function () {
    const c = await start(
      (socket, request) => {
        if (!/\r\nauthorization: Basic /i.test(request)) {
          socket.write('HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm="cam"\r\nContent-Length: 10000000000\r\n\r\n');
          return flood(socket, Buffer.alloc(64 * 1024, 0x20));
        }
        socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK');
      },
      { auth: 'auto' },
    );
    const res = await c.request({ path: '/cgi-bin/viewer/getparam.cgi' });
    assert.equal(res.body.toString(), 'OK');
    assert.equal(device?.requests.length, 2);
    assert.equal(device?.sockets.length, 2, 'the challenge was cut with its connection, not read to its end');
  });

  it('an informational 103 before the answer: the answer is the 200 and its body, whole', async function () {
    const c = await start((socket) => {
      socket.write('HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n');
      socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello');
    });
    const res = await c.request({ path: '/cgi-bin/viewer/getparam.cgi' });
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), 'hello');
  });

  it("a node's shared abort ends every call in flight at once (ECONN), the sockets released; one listener on the signal, however many calls", async function () {
    const c = await start(() => undefined, { timeout: 10_000 });
    const shared = new AbortController();
    const calls = [1, 2, 3].map((i) => c.request({ path: `/cgi-bin/viewer/getparam.cgi?n=${i}`, signal: shared.signal }));
    await waitFor('the calls to reach the device', () => (device?.requests.length ?? 0) >= 2, 3000);
    assert.equal(getEventListeners(shared.signal, 'abort').length, 1, 'one listener for every call following the signal');
    const began = Date.now();
    shared.abort();
    for (const call of calls) await rejectsWith(call, 'ECONN', /aborted/);
    assert.ok(Date.now() - began < 1000, `the abort took ${Date.now() - began} ms`);
    await allClosed();
  });

  it('a status line dripped a byte at a time past the deadline is ETIMEOUT, the socket released', async function () {
    const c = await start((socket) => drip(socket, 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK', 100), { timeout: 500 });
    await rejectsWith(pulseRelay(c, 1, 500), 'ETIMEOUT');
    await allClosed();
  });
});
