/**
 * Streams read through undici's dispatch(): hostile fake devices over real sockets (test/raw-device.ts). Each
 * connection the device accepts runs one script on the raw socket (HTTP written by hand, so it
 * can drip, lie and cut anywhere); the supervisor must report, reconnect and stop clean.
 */
import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IpcamError } from '../lib/errors/errors';
import { StreamSupervisor, type StreamState } from '../lib/stream/supervisor';
import { DeviceClient } from '../lib/transport/client';
import { expectQuiet, waitFor } from './helpers';
import { drip, RawDevice, type Script } from './raw-device';

const PATH = '/cgi-bin/admin/detection?type=motion';
const HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=b\r\nConnection: close\r\n\r\n';
const part = (k: number): string => `--b\r\nContent-Type: text/plain\r\n\r\ngroup=1;level=${k};threshold=50;\r\n`;

describe('streams through dispatch() against hostile devices (raw sockets)', function () {
  this.timeout(30_000);
  let device: RawDevice | undefined;
  let client: DeviceClient | undefined;
  let supervisor: StreamSupervisor | undefined;
  let states: StreamState[];
  let errors: IpcamError[];
  let parts: string[];
  let warnings: string[];

  async function start(script: Script, opts: { timeout?: number; maxPartSize?: number; auth?: 'basic' | 'auto' } = {}): Promise<void> {
    device = new RawDevice(script);
    const port = await device.listen();
    client = new DeviceClient({ host: '127.0.0.1', port, username: 'u', password: 'p', auth: opts.auth ?? 'basic', timeout: opts.timeout ?? 2000 });
    states = [];
    errors = [];
    parts = [];
    warnings = [];
    supervisor = new StreamSupervisor({
      client,
      path: PATH,
      onPart: (p) => parts.push(p.body.toString('latin1')),
      onState: (state, info) => {
        states.push(state);
        if (info.error) errors.push(info.error);
      },
      onWarning: (text) => warnings.push(text),
      maxPartSize: opts.maxPartSize,
      backoff: { initial: 50, max: 50 },
    });
    supervisor.start();
  }

  /** stop() resolves quickly and the device sees every socket closed. */
  async function stopsClean(): Promise<void> {
    const started = Date.now();
    await supervisor?.stop();
    assert.ok(Date.now() - started < 1000, `stop() took ${Date.now() - started} ms`);
    await waitFor('the device to see every socket closed', () => device?.open === 0, 3000);
  }

  afterEach(async function () {
    await supervisor?.stop();
    await client?.close();
    await device?.close();
    supervisor = client = device = undefined;
  });

  it('a device dripping the stream headers is cut at the device timeout (ETIMEOUT) and retried', async function () {
    await start((socket) => drip(socket, HEAD + part(1), 100), { timeout: 600 });
    await waitFor('a retry after the timeout', () => states.includes('retrying'), 5000);
    assert.equal(errors[0]?.code, 'ETIMEOUT');
    assert.deepEqual(parts, []);
    await stopsClean();
  });

  it('stop() while the headers drip releases the socket at once', async function () {
    await start((socket) => drip(socket, HEAD, 100), { timeout: 10_000 });
    await waitFor('the request at the device', () => device?.requests.length === 1);
    assert.ok(device);
    expectQuiet(device.requests, 'a second request while the headers drip');
    const dripping = expectQuiet(states, 'a state while the headers drip');
    await sleep(300);
    assert.deepEqual(states, ['connecting']);
    dripping.end();
    await stopsClean();
    assert.deepEqual(states, ['connecting', 'stopped']);
  });

  it('a huge part sent at full speed is skipped with a warning; the next part comes; stop() during one releases all', async function () {
    const huge = Buffer.alloc(8 * 1024 * 1024, 0x41);
    let sent = 0;
    await start(
      async (socket, _request, index) => {
        socket.write(HEAD + part(1));
        const write = (data: string | Buffer): Promise<void> => new Promise((resolve) => (socket.write(data) ? resolve() : socket.once('drain', resolve)));
        await write('--b\r\nContent-Type: text/plain\r\n\r\n');
        for (let at = 0; at < huge.length && !socket.destroyed; at += 64 * 1024) {
          await write(huge.subarray(at, at + 64 * 1024));
          sent += 64 * 1024;
          // The second connection holds on mid-part: stop() comes then.
          if (index === 1 && at >= 1024 * 1024) return;
        }
        await write(`\r\n${part(2)}`);
        socket.end();
      },
      { maxPartSize: 64 * 1024 },
    );
    await waitFor('the part after the huge one', () => parts.some((p) => p.includes('level=2')), 10_000);
    assert.ok(warnings.length >= 1, 'a warning for the huge part');
    assert.ok(
      parts.every((p) => p.length <= 64 * 1024),
      'no part over the cap is handed out',
    );
    // The device ends that connection: the supervisor reconnects, and is stopped mid-part.
    await waitFor('the second connection mid-part', () => (device?.sockets.length ?? 0) === 2 && sent > huge.length + 1024 * 1024, 10_000);
    await stopsClean();
  });

  for (const cut of ['end', 'destroy'] as const) {
    it(`a device closing mid-part (${cut}) is ECONN and reconnected; the parts before it came`, async function () {
      await start((socket, _request, index) => {
        if (index >= 2) return void socket.write(HEAD); // then quiet: connected, waiting
        socket.write(HEAD + part(1) + '--b\r\nContent-Type: text/plain\r\n\r\ngroup=1;lev');
        setTimeout(() => (cut === 'end' ? socket.end() : socket.destroy()), 50);
      });
      await waitFor('a third connection', () => (device?.sockets.length ?? 0) === 3, 5000);
      await waitFor('connected on it', () => states.filter((s) => s === 'connected').length === 3, 5000);
      assert.ok(errors.length >= 1);
      for (const error of errors) assert.equal(error.code, 'ECONN', error.message);
      assert.ok(
        parts.filter((p) => p.includes('level=1;')).length >= 1,
        'the whole part before the cut was delivered',
      );
      await stopsClean();
    });
  }

  it('a 401 with a huge challenge body: the body is cut, the retry carries the credentials and the stream opens', async function () {
    await start(
      (socket, request) => {
        if (!/\r\nauthorization: Basic /i.test(request)) {
          socket.write('HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm="cam"\r\nContent-Length: 10000000000\r\n\r\n');
          // Sends far more than is read of a challenge: the client cuts it (a new connection for the retry).
          const chunk = Buffer.alloc(64 * 1024, 0x20);
          const pump = (): void => {
            while (!socket.destroyed && socket.write(chunk));
            if (!socket.destroyed) socket.once('drain', pump);
          };
          return pump();
        }
        socket.write(HEAD + part(1));
      },
      { auth: 'auto' },
    );
    await waitFor('a reading', () => parts.length >= 1, 5000);
    assert.ok(states.includes('connected'));
    assert.equal(device?.requests.length, 2);
    assert.equal(device?.sockets.length, 2, 'the challenge was cut with its connection, not read to its end');
    await stopsClean();
  });
});
