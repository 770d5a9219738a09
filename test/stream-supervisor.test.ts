import { strict as assert } from 'node:assert';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { createServer, Socket, type AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkIo, detectionPath, ioMonitorPath } from '../lib/ops/io';
import { startSimulator, type Simulator, type StreamStyle } from '../lib/simulator';
import type { MultipartPart } from '../lib/cgi/multipart';
import { StreamSupervisor, type StreamState, type StreamStateInfo, type SupervisorOptions } from '../lib/stream/supervisor';
import { DeviceClient } from '../lib/transport/client';
import { expectQuiet, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';

const INPUT = '/cgi-bin/admin/input';
const FIVE_MINUTES = 5 * 60_000;

/** Everything one supervisor reports. */
class Recorder {
  readonly states: Array<{ state: StreamState; info: StreamStateInfo }> = [];
  readonly parts: MultipartPart[] = [];
  readonly warnings: string[] = [];

  /** The `IO<n>:<c>` lines of every part, in order. */
  get io(): string[] {
    return this.parts.flatMap((p) => p.body.toString('latin1').match(/IO\d+:[/\\HL]/g) ?? []);
  }

  get names(): StreamState[] {
    return this.states.map((s) => s.state);
  }

  count(state: StreamState): number {
    return this.names.filter((s) => s === state).length;
  }

  /** The info of every `retrying` (or other) state, in order. */
  infos(state: StreamState): StreamStateInfo[] {
    return this.states.filter((s) => s.state === state).map((s) => s.info);
  }
}

/** Sockets the simulator accepted, seen through Node's diagnostics channel. */
class AcceptedSockets {
  private readonly sockets: Socket[] = [];
  private readonly listener = (message: unknown): void => {
    const socket = (message as { socket?: unknown }).socket;
    if (socket instanceof Socket && socket.localPort === this.port) this.sockets.push(socket);
  };

  constructor(private readonly port: number) {
    subscribe('net.server.socket', this.listener);
  }

  get count(): number {
    return this.sockets.length;
  }

  get open(): number {
    return this.sockets.filter((s) => !s.destroyed).length;
  }

  stop(): void {
    unsubscribe('net.server.socket', this.listener);
  }
}

/** A TCP port nobody listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function activeHandles(): unknown[] {
  return (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
}

function timerCount(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

/** Client sockets of this process connected to `port`. */
/**
 * Seconds left on the keepalive timer of the established loopback connection from `localPort` to
 * `remotePort`, from /proc/net/tcp (`tr` 2 is the keepalive timer, `tm->when` in 1/100 s).
 */
function keepaliveTimer(localPort: number, remotePort: number): number | undefined {
  const hex = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, remote, state, , timer] = line.trim().split(/\s+/);
    if (!local?.endsWith(`:${hex(localPort)}`) || !remote?.endsWith(`:${hex(remotePort)}`) || state !== '01') continue;
    const [kind, when] = (timer ?? '').split(':');
    return kind === '02' && when ? parseInt(when, 16) / 100 : undefined;
  }
  return undefined;
}

function clientSocketsTo(port: number): Socket[] {
  return activeHandles().filter((h): h is Socket => h instanceof Socket && h.remotePort === port && !h.destroyed);
}

describe('StreamSupervisor against the simulator', function () {
  let sim: Simulator;
  let client: DeviceClient;
  const running: StreamSupervisor[] = [];

  beforeEach(async function () {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
    client = new DeviceClient({ host: sim.host, port: sim.port, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
  });

  afterEach(async function () {
    await Promise.all(running.splice(0).map((s) => s.stop()));
    await client.close();
    await sim.close();
  });

  function supervise(path: string, options: Partial<SupervisorOptions> = {}, on: DeviceClient = client): { sup: StreamSupervisor; rec: Recorder } {
    const rec = new Recorder();
    const sup = new StreamSupervisor({
      client: on,
      path,
      onPart: (part) => rec.parts.push(part),
      onState: (state, info) => rec.states.push({ state, info }),
      onWarning: (text) => rec.warnings.push(text),
      random: () => 1,
      ...options,
    });
    running.push(sup);
    sup.start();
    return { sup, rec };
  }

  function requestsTo(path: string): number {
    return sim.state.requests.filter((r) => r.path === path).length;
  }

  async function connectedWith(rec: Recorder, io: string[], times = 1): Promise<void> {
    await waitFor(`connected #${times} with ${io.join(' ')}`, () => rec.count('connected') >= times && rec.io.length >= io.length);
  }

  describe('events and connections', function () {
    it('delivers every event while connected, on a connection of its own beside the pool', async function () {
      const accepted = new AcceptedSockets(sim.port);
      try {
        // One request/response call first: the pool keeps its connection alive.
        assert.deepEqual(await checkIo(client, 'input', [1]), [{ port: 1, active: false, edge: null }]);
        assert.equal(accepted.count, 1);

        const { rec } = supervise(ioMonitorPath('input', []));
        await connectedWith(rec, ['IO1:L', 'IO2:L']);
        assert.equal(accepted.count, 2, 'the stream opened a connection of its own');
        assert.equal(sim.state.io.openStreams, 1);

        sim.state.io.setInput(1, true);
        sim.state.io.setInput(2, true);
        sim.state.io.setInput(1, false);
        await waitFor('three changes', () => rec.io.length >= 5);

        // The pool still answers on its own connection; the stream goes on untouched.
        assert.deepEqual(await checkIo(client, 'input', [1, 2]), [
          { port: 1, active: false, edge: null },
          { port: 2, active: true, edge: null },
        ]);
        assert.equal(accepted.count, 2, 'the pool reused its connection, not the stream one');
        sim.state.io.setInput(2, false);
        await waitFor('the fourth change', () => rec.io.length >= 6);

        assert.deepEqual(rec.io, ['IO1:L', 'IO2:L', 'IO1:/', 'IO2:/', 'IO1:\\', 'IO2:\\']);
        assert.deepEqual(rec.names, ['connecting', 'connected']);
        assert.deepEqual(rec.warnings, []);
        const streamRequests = sim.state.requests.filter((r) => r.path === INPUT && r.query.some(([k]) => k === 'monitor'));
        assert.equal(streamRequests.length, 1);
        assert.equal(streamRequests[0]?.auth, 'basic');
      } finally {
        accepted.stop();
      }
    });

    it('reads detection levels for the groups asked', async function () {
      sim.state.io.detectionInterval = 20;
      sim.state.io.setLevel('motion', 2, 55);
      const { rec } = supervise(detectionPath('motion', [2], false));
      await waitFor('three readings', () => rec.parts.length >= 3);
      for (const part of rec.parts) assert.equal(part.body.toString('latin1'), 'group=2;level=55;threshold=50;');
      assert.equal(rec.parts[0]?.headers['content-type'], 'text/plain');
    });

    const styles: Array<[string, Partial<StreamStyle>]> = [
      ['LF-only lines', { lineEnding: 'lf' }],
      ['a boundary declared with dashes', { boundaryWithDashes: true }],
      ['extra blank lines', { extraBlankLines: true }],
      ['Content-Length in each part', { contentLength: true }],
      ['every quirk at once', { lineEnding: 'lf', boundaryWithDashes: true, extraBlankLines: true, contentLength: true }],
    ];
    for (const [name, style] of styles) {
      it(`parses a stream with ${name}`, async function () {
        sim.state.io.style = { ...sim.state.io.style, ...style };
        sim.state.io.setInput(2, true);
        const { rec } = supervise(ioMonitorPath('input', []));
        await connectedWith(rec, ['IO1:L', 'IO2:H']);
        sim.state.io.setInput(1, true);
        sim.state.io.setInput(2, false);
        sim.state.io.setInput(1, false);
        await waitFor('three changes', () => rec.io.length >= 5);
        assert.deepEqual(rec.io, ['IO1:L', 'IO2:H', 'IO1:/', 'IO2:\\', 'IO1:\\']);
        // One part per event, nothing else.
        assert.deepEqual(
          rec.parts.map((p) => p.body.toString('latin1')),
          rec.io,
        );
        assert.deepEqual(rec.warnings, []);
        assert.deepEqual(rec.names, ['connecting', 'connected']);
      });
    }
  });

  describe('faults', function () {
    it('reconnects after the device drops the stream', async function () {
      const accepted = new AcceptedSockets(sim.port);
      try {
        const { rec } = supervise(ioMonitorPath('input', []), { backoff: { initial: 20 } });
        await connectedWith(rec, ['IO1:L', 'IO2:L']);
        sim.state.io.setInput(1, true);
        await waitFor('the change', () => rec.io.length >= 3);

        sim.state.io.streamFault('drop');
        await connectedWith(rec, ['IO1:L', 'IO2:L', 'IO1:/', 'IO1:H', 'IO2:L'], 2);
        sim.state.io.setInput(2, true);
        await waitFor('the change after reconnecting', () => rec.io.length >= 6);

        assert.deepEqual(rec.io, ['IO1:L', 'IO2:L', 'IO1:/', 'IO1:H', 'IO2:L', 'IO2:/']);
        assert.deepEqual(rec.names, ['connecting', 'connected', 'retrying', 'connecting', 'connected']);
        const [retry] = rec.infos('retrying');
        assert.equal(retry?.attempt, 1);
        assert.equal(retry?.delay, 20);
        assert.equal(retry?.error?.code, 'ECONN');
        assert.equal(rec.infos('connecting')[1]?.attempt, 1);
        assert.equal(accepted.count, 2, 'a new connection for the new stream');
        assert.equal(sim.state.io.openStreams, 1);
      } finally {
        accepted.stop();
      }
    });

    it('reconnects when the stream stalls (no byte within stallTimeout)', async function () {
      sim.state.io.detectionInterval = 20;
      const { rec } = supervise(detectionPath('motion', [], false), { stallTimeout: 1000, backoff: { initial: 20 } });
      await waitFor('readings', () => rec.parts.length >= 3);
      sim.state.io.streamFault('stall');
      await waitFor('a second connection', () => rec.count('connected') >= 2);
      const before = rec.parts.length;
      await waitFor('readings after reconnecting', () => rec.parts.length >= before + 3);

      assert.deepEqual(rec.names, ['connecting', 'connected', 'retrying', 'connecting', 'connected']);
      const [retry] = rec.infos('retrying');
      assert.equal(retry?.error?.code, 'ETIMEOUT');
      assert.equal(retry?.attempt, 1);
      for (const part of rec.parts) assert.equal(part.body.toString('latin1'), 'group=1;level=0;threshold=40;\r\ngroup=2;level=0;threshold=50;');
    });

    it('a part handler that throws fails that connection, which is reopened: nothing escapes', async function () {
      const uncaught: unknown[] = [];
      const onUncaught = (err: unknown): void => void uncaught.push(err);
      process.on('uncaughtException', onUncaught);
      try {
        let calls = 0;
        const { rec } = supervise(ioMonitorPath('input', []), {
          backoff: { initial: 20 },
          onPart: (part) => {
            calls += 1;
            if (calls === 1) throw new Error('a bug in the handler');
            rec.parts.push(part);
          },
        });
        await waitFor('a second connection', () => rec.count('connected') >= 2);
        await waitFor('the states after reconnecting', () => rec.io.length >= 2);
        sim.state.io.setInput(1, true);
        await waitFor('the change', () => rec.io.includes('IO1:/'));
        assert.deepEqual(uncaught, []);
        assert.deepEqual(rec.names.slice(0, 5), ['connecting', 'connected', 'retrying', 'connecting', 'connected']);
        assert.equal(rec.infos('retrying')[0]?.error?.code, 'ECONN');
        assert.equal(sim.state.io.openStreams, 1);
      } finally {
        process.off('uncaughtException', onUncaught);
      }
    });

    it('goes on after garbage bytes in the stream', async function () {
      const { rec } = supervise(ioMonitorPath('input', []));
      await connectedWith(rec, ['IO1:L', 'IO2:L']);
      sim.state.io.streamFault('garbage');
      sim.state.io.setInput(1, true);
      sim.state.io.streamFault('garbage');
      sim.state.io.setInput(2, true);
      await waitFor('two changes', () => rec.io.length >= 4);
      assert.deepEqual(rec.io, ['IO1:L', 'IO2:L', 'IO1:/', 'IO2:/']);
      assert.deepEqual(rec.names, ['connecting', 'connected']);
    });

    for (const [name, style, cap] of [
      ['default 1 MiB cap', {}, undefined],
      ['64 KB cap, Content-Length parts', { contentLength: true }, 64 * 1024],
    ] as Array<[string, Partial<StreamStyle>, number | undefined]>) {
      it(`skips an oversize part with a warning and goes on (${name})`, async function () {
        sim.state.io.style = { ...sim.state.io.style, ...style };
        const options: Partial<SupervisorOptions> = cap === undefined ? {} : { maxPartSize: cap };
        const { rec } = supervise(ioMonitorPath('input', []), options);
        await connectedWith(rec, ['IO1:L', 'IO2:L']);
        sim.state.io.streamFault('oversize');
        sim.state.io.setInput(1, true);
        await waitFor('the change after the oversize part', () => rec.io.length >= 3);
        assert.deepEqual(rec.io, ['IO1:L', 'IO2:L', 'IO1:/']);
        const limit = cap ?? 1024 * 1024;
        assert.ok(
          rec.parts.every((p) => p.body.length <= limit),
          'no part over the cap',
        );
        assert.deepEqual(rec.warnings, [`A part is larger than the ${limit} byte cap; skipped to the next boundary`]);
        assert.deepEqual(rec.names, ['connecting', 'connected']);
      });
    }

    it('retries on 503 with growing delays, then connects', async function () {
      sim.inject({ kind: 'status', status: 503, path: INPUT, times: 2 });
      const { rec } = supervise(ioMonitorPath('input', []), { backoff: { initial: 20 } });
      await connectedWith(rec, ['IO1:L', 'IO2:L']);
      sim.state.io.setInput(1, true);
      await waitFor('the change', () => rec.io.length >= 3);

      assert.deepEqual(rec.names, ['connecting', 'retrying', 'connecting', 'retrying', 'connecting', 'connected']);
      assert.deepEqual(
        rec.infos('retrying').map((i) => [i.attempt, i.delay, i.error?.code, i.error?.status]),
        [
          [1, 20, 'EHTTP', 503],
          [2, 40, 'EHTTP', 503],
        ],
      );
      assert.deepEqual(
        rec.infos('connecting').map((i) => i.attempt),
        [0, 1, 2],
      );
      assert.deepEqual(rec.io, ['IO1:L', 'IO2:L', 'IO1:/']);
    });

    it('stops for a refused password and waits at least 5 minutes, stated in the state (injected 401)', async function () {
      sim.inject({ kind: 'status', status: 401, path: INPUT });
      const { rec } = supervise(ioMonitorPath('input', []));
      await waitFor('auth-failed', () => rec.count('auth-failed') >= 1);
      const asked = requestsTo(INPUT);
      // No tight loop: nothing more reaches the device while the long pause runs.
      expectQuiet(sim, 'a request during the long pause', (r) => r.path === INPUT);
      await sleep(300);
      assert.equal(requestsTo(INPUT), asked);
      assert.ok(asked <= 3, `${asked} requests for one attempt`);
      assert.deepEqual(rec.names, ['connecting', 'auth-failed']);
      const [info] = rec.infos('auth-failed');
      assert.ok(info?.delay !== undefined && info.delay >= FIVE_MINUTES, `delay ${String(info?.delay)}`);
      assert.equal(info?.error?.code, 'EAUTH');
      assert.equal(info?.attempt, 1);
    });

    it('stops for wrong credentials the same way', async function () {
      const wrong = new DeviceClient({ host: sim.host, port: sim.port, username: SIM_USER, password: 'wrong', auth: 'auto' });
      try {
        const { rec } = supervise(ioMonitorPath('input', []), {}, wrong);
        await waitFor('auth-failed', () => rec.count('auth-failed') >= 1);
        assert.deepEqual(rec.names, ['connecting', 'auth-failed']);
        assert.ok((rec.infos('auth-failed')[0]?.delay ?? 0) >= FIVE_MINUTES);
        assert.equal(sim.state.io.openStreams, 0);
      } finally {
        await wrong.close();
      }
    });

    it('tries again after the auth delay and connects once the password is accepted', async function () {
      sim.inject({ kind: 'status', status: 401, path: INPUT });
      const { rec } = supervise(ioMonitorPath('input', []), { backoff: { authDelay: 100 } });
      await waitFor('auth-failed', () => rec.count('auth-failed') >= 1);
      sim.clearFaults();
      await connectedWith(rec, ['IO1:L', 'IO2:L']);
      assert.deepEqual(rec.names, ['connecting', 'auth-failed', 'connecting', 'connected']);
      assert.equal(rec.infos('auth-failed')[0]?.delay, 100);
    });

    const unsupported: Array<[string, string, number, (() => void) | undefined]> = [
      ['404 for a stream the device does not have', '/cgi-bin/admin/nosuchstream?monitor=1', 404, undefined],
      ['404 injected on the input stream', ioMonitorPath('input', []), 404, () => sim.inject({ kind: 'status', status: 404, path: INPUT })],
      ['400 for a port the device does not have', ioMonitorPath('input', [9]), 400, undefined],
    ];
    for (const [name, path, status, arrange] of unsupported) {
      it(`reports "not supported" and stops on ${name}`, async function () {
        arrange?.();
        const { sup, rec } = supervise(path, { backoff: { initial: 10 } });
        await waitFor('unsupported', () => rec.count('unsupported') >= 1);
        const target = path.split('?')[0] as string;
        const asked = requestsTo(target);
        const unsupported = expectQuiet(sim, 'no retry', (r) => r.path === target);
        await sleep(200);
        assert.equal(requestsTo(target), asked, 'no retry');
        unsupported.end();
        assert.deepEqual(rec.names, ['connecting', 'unsupported']);
        const error = rec.infos('unsupported')[0]?.error;
        assert.equal(error?.code, 'EHTTP');
        assert.equal(error?.status, status);
        assert.match(error?.message ?? '', /not supported by this device/);
        assert.equal(sup.current, 'unsupported');
        // start() tries once more.
        sup.start();
        await waitFor('unsupported again', () => rec.count('unsupported') >= 2);
        assert.deepEqual(rec.names, ['connecting', 'unsupported', 'connecting', 'unsupported']);
      });
    }
  });

  describe('quiet streams', function () {
    it('keeps a quiet input stream as ONE connection, longer than every timeout set', async function () {
      const accepted = new AcceptedSockets(sim.port);
      // Connect and header timeouts of 100 ms, a stable time of 50 ms, retries after 10 ms: none may end a quiet stream.
      const quick = new DeviceClient({ host: sim.host, port: sim.port, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic', timeout: 100 });
      try {
        sim.state.io.style = { ...sim.state.io.style, quiet: true };
        const { rec } = supervise(ioMonitorPath('input', []), { backoff: { initial: 10, stableAfter: 50 }, flushDelay: 5 }, quick);
        await waitFor('connected', () => rec.count('connected') >= 1);
        // Ended in the test: closing its client in the teardown ends the stream.
        const reopened = expectQuiet(sim, 'a quiet stream was opened again', (r) => r.path === INPUT);
        const ended = expectQuiet(rec.states, 'a quiet stream was ended', (s) => s.state !== 'stopped');
        await sleep(1500);
        assert.deepEqual(rec.names, ['connecting', 'connected']);
        assert.equal(accepted.count, 1);
        assert.equal(requestsTo(INPUT), 1);
        // Still live: a change comes through on the same connection.
        sim.state.io.setInput(2, true);
        await waitFor('the change', () => rec.io.length >= 1);
        assert.deepEqual(rec.io, ['IO2:/']);
        assert.equal(accepted.count, 1);
        reopened.end();
        ended.end();
      } finally {
        accepted.stop();
        await quick.close();
      }
    });

    it('has no stall timeout unless given one, even on a half-open stream (the device side stays up)', async function () {
      const accepted = new AcceptedSockets(sim.port);
      try {
        const { rec } = supervise(ioMonitorPath('input', []));
        await connectedWith(rec, ['IO1:L', 'IO2:L']);
        sim.state.io.streamFault('stall');
        expectQuiet(sim, 'a stalled stream was opened again', (r) => r.path === INPUT);
        expectQuiet(rec.states, 'a stalled stream was ended without a stall timeout', (s) => s.state !== 'stopped');
        await sleep(300);
        assert.deepEqual(rec.names, ['connecting', 'connected']);
        assert.equal(accepted.count, 1);
      } finally {
        accepted.stop();
      }
    });

    it('arms the stall timeout with the first byte: a late first byte is no stall', async function () {
      sim.state.io.detectionInterval = 20;
      sim.state.io.style = { ...sim.state.io.style, firstByteDelay: 700 };
      const { rec } = supervise(detectionPath('motion', [], false), { stallTimeout: 200 });
      await waitFor('readings', () => rec.parts.length >= 3);
      assert.deepEqual(rec.names, ['connecting', 'connected']);
      assert.equal(requestsTo('/cgi-bin/admin/detection'), 1);
      // Once begun, a silence longer than the timeout is a stall.
      sim.state.io.streamFault('stall');
      await waitFor('the stall', () => rec.count('retrying') >= 1);
      assert.equal(rec.infos('retrying')[0]?.error?.code, 'ETIMEOUT');
      assert.match(rec.infos('retrying')[0]?.error?.message ?? '', /No data from .* for 0.2 s: the stream stalled/);
    });

    it('turns TCP keepalive on for the stream socket, probing after 20 s idle (the kernel shows the timer)', async function () {
      // The kernel's own table, as `ss -o` reads it (no iproute2 needed); Linux only.
      if (!existsSync('/proc/net/tcp')) this.skip();
      sim.state.io.style = { ...sim.state.io.style, quiet: true };
      const { rec } = supervise(ioMonitorPath('input', []));
      await waitFor('connected', () => rec.count('connected') >= 1 && sim.state.io.openStreams === 1);
      const [socket] = clientSocketsTo(sim.port);
      assert.ok(socket?.localPort, 'the stream socket');
      const seconds = keepaliveTimer(socket.localPort, sim.port);
      assert.ok(seconds !== undefined, `no keepalive timer on the stream socket (port ${socket.localPort})`);
      // Ours is 20 s; undici alone would have left its 60 s.
      assert.ok(seconds > 0 && seconds <= 20, `keepalive timer ${seconds} s`);
    });
  });

  describe('answer styles', function () {
    const initial = (style: Partial<StreamStyle>): string[] => (style.quiet ? [] : ['IO1:L', 'IO2:H']);
    const styles: Array<[string, Partial<StreamStyle>]> = [
      ['parts in 1-byte pieces, a tick apart', { pieceSize: 1 }],
      ['parts in 7-byte pieces, 2 ms apart', { pieceSize: 7, pieceDelay: 2 }],
      ['pieces with every quirk', { pieceSize: 3, lineEnding: 'lf', boundaryWithDashes: true, extraBlankLines: true, contentLength: true }],
      ['a quiet device (no state parts)', { quiet: true }],
      ['the first byte 500 ms after the headers', { firstByteDelay: 500 }],
      ['a quiet device with a late first byte, in pieces', { quiet: true, firstByteDelay: 300, pieceSize: 2 }],
    ];
    for (const [name, style] of styles) {
      it(`parses an I/O stream with ${name}`, async function () {
        sim.state.io.style = { ...sim.state.io.style, ...style };
        sim.state.io.setInput(2, true);
        const { rec } = supervise(ioMonitorPath('input', []));
        await waitFor('connected', () => rec.count('connected') >= 1 && sim.state.io.openStreams === 1);
        sim.state.io.setInput(1, true);
        sim.state.io.setInput(2, false);
        sim.state.io.setInput(1, false);
        const expected = [...initial(style), 'IO1:/', 'IO2:\\', 'IO1:\\'];
        await waitFor('every part', () => rec.io.length >= expected.length);
        expectQuiet(rec.parts, 'a part after the last change');
        await sleep(50);
        assert.deepEqual(rec.io, expected);
        assert.deepEqual(
          rec.parts.map((p) => p.body.toString('latin1')),
          expected,
        );
        assert.deepEqual(rec.warnings, []);
        assert.deepEqual(rec.names, ['connecting', 'connected']);
      });
    }

    for (const [name, style] of styles) {
      it(`parses detection levels with ${name}`, async function () {
        sim.state.io.detectionInterval = 30;
        sim.state.io.style = { ...sim.state.io.style, ...style };
        sim.state.io.setLevel('motion', 2, 55);
        const { rec } = supervise(detectionPath('motion', [], false), { stallTimeout: 5000 });
        await waitFor('five readings', () => rec.parts.length >= 5);
        for (const part of rec.parts) assert.equal(part.body.toString('latin1'), style.lineEnding === 'lf' ? 'group=1;level=0;threshold=40;\ngroup=2;level=55;threshold=50;' : 'group=1;level=0;threshold=40;\r\ngroup=2;level=55;threshold=50;');
        assert.deepEqual(rec.warnings, []);
        assert.deepEqual(rec.names, ['connecting', 'connected']);
      });
    }

    it('the simulator really splits the parts: the client reads them in many chunks', async function () {
      sim.state.io.style = { ...sim.state.io.style, pieceSize: 4, pieceDelay: 2 };
      const chunks: Buffer[] = [];
      const req = httpGet(`${sim.url}${ioMonitorPath('input', [])}`, { auth: `${SIM_USER}:${SIM_PASSWORD}` }, (res) => res.on('data', (c: Buffer) => chunks.push(c)));
      try {
        await waitFor('the two state parts', () => Buffer.concat(chunks).toString('latin1').includes('IO2:L'));
        // Two parts of some 50 bytes each: one chunk per piece, not one per part.
        assert.ok(chunks.length >= 20, `${chunks.length} chunks`);
        assert.ok(
          chunks.every((c) => c.length <= 4 + 16),
          'small chunks',
        );
      } finally {
        req.destroy();
      }
    });

    it('a half-open style stream sends what it opened with, then nothing, and stays open', async function () {
      sim.state.io.style = { ...sim.state.io.style, halfOpen: true };
      const { rec } = supervise(ioMonitorPath('input', []));
      await connectedWith(rec, ['IO1:L', 'IO2:L']);
      expectQuiet(rec.parts, 'a half-open stream sent a part after it opened');
      sim.state.io.setInput(1, true);
      await sleep(200);
      assert.deepEqual(rec.io, ['IO1:L', 'IO2:L']);
      assert.equal(sim.state.io.openStreams, 1);
      assert.deepEqual(rec.names, ['connecting', 'connected']);
    });

    it('the control API sets styles at run time and refuses bad ones', async function () {
      const post = async (body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
        const res = await fetch(`${sim.url}/_sim/io`, { method: 'POST', body: JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const ok = await post({ streamStyle: { quiet: true, pieceSize: 5, firstByteDelay: 250 } });
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.body['style'], { lineEnding: 'crlf', boundaryWithDashes: false, extraBlankLines: false, contentLength: false, pieceSize: 5, pieceDelay: 0, quiet: true, firstByteDelay: 250, halfOpen: false });
      for (const bad of [{ pieceSize: -1 }, { firstByteDelay: 'soon' }, { quiet: 'yes' }, { lineEnding: 'cr' }, { sometimes: true }]) {
        const answer = await post({ streamStyle: bad });
        assert.equal(answer.status, 400, JSON.stringify(bad));
      }
      assert.deepEqual(sim.state.io.style, ok.body['style'], 'a refused style changes nothing');
    });
  });

  describe('failure reports', function () {
    function collectErrors(): { errors: Array<[string, number | undefined, StreamState]>; onError: SupervisorOptions['onError'] } {
      const errors: Array<[string, number | undefined, StreamState]> = [];
      return { errors, onError: (error, state) => errors.push([error.code, error.status, state]) };
    }

    it('reports each kind of failure once, not once per retry', async function () {
      const { errors, onError } = collectErrors();
      sim.inject({ kind: 'status', status: 503, path: INPUT, times: 4 });
      sim.inject({ kind: 'status', status: 500, path: INPUT, times: 3 });
      const { rec } = supervise(ioMonitorPath('input', []), { backoff: { initial: 5, max: 20 }, onError });
      await connectedWith(rec, ['IO1:L', 'IO2:L']);
      assert.equal(rec.count('retrying'), 7);
      assert.deepEqual(errors, [
        ['EHTTP', 503, 'retrying'],
        ['EHTTP', 500, 'retrying'],
      ]);
    });

    it('reports a kind again only after the stream has stayed connected for stableAfter', async function () {
      const { errors, onError } = collectErrors();
      sim.inject({ kind: 'status', status: 503, path: INPUT, times: 2 });
      const { rec } = supervise(ioMonitorPath('input', []), { backoff: { initial: 5, stableAfter: 300 }, onError });
      await connectedWith(rec, ['IO1:L', 'IO2:L']);
      // Dropped before stableAfter, then refused again: the 503 was reported already.
      sim.inject({ kind: 'status', status: 503, path: INPUT, times: 2 });
      sim.state.io.streamFault('drop');
      await connectedWith(rec, ['IO1:L', 'IO2:L', 'IO1:L', 'IO2:L'], 2);
      assert.equal(errors.filter(([, status]) => status === 503).length, 1);
      // Up for longer than stableAfter: the next 503 is news again.
      await sleep(500);
      sim.inject({ kind: 'status', status: 503, path: INPUT, times: 2 });
      sim.state.io.streamFault('drop');
      await connectedWith(rec, ['IO1:L', 'IO2:L', 'IO1:L', 'IO2:L', 'IO1:L', 'IO2:L'], 3);
      assert.equal(errors.filter(([, status]) => status === 503).length, 2);
      assert.equal(rec.count('retrying'), 8);
      assert.ok(errors.every(([code]) => code === 'EHTTP' || code === 'ECONN'), JSON.stringify(errors));
    });

    it('reports a refused connection, a 401 and an unsupported stream with their state', async function () {
      const port = await closedPort();
      const nowhere = new DeviceClient({ host: '127.0.0.1', port, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
      const wrong = new DeviceClient({ host: sim.host, port: sim.port, username: SIM_USER, password: 'wrong', auth: 'basic' });
      try {
        const refused = collectErrors();
        const a = supervise(ioMonitorPath('input', []), { backoff: { initial: 5, max: 20 }, onError: refused.onError }, nowhere);
        await waitFor('five retries', () => a.rec.count('retrying') >= 5);
        assert.deepEqual(refused.errors, [['ECONN', undefined, 'retrying']]);
        assert.match(a.rec.infos('retrying')[0]?.error?.message ?? '', /Connection refused/);

        const auth = collectErrors();
        const b = supervise(ioMonitorPath('input', []), { onError: auth.onError }, wrong);
        await waitFor('auth-failed', () => b.rec.count('auth-failed') >= 1);
        b.sup.start();
        await waitFor('auth-failed again', () => b.rec.count('auth-failed') >= 2);
        assert.deepEqual(auth.errors, [['EAUTH', 401, 'auth-failed']]);

        const unsupported = collectErrors();
        const c = supervise(ioMonitorPath('input', [9]), { onError: unsupported.onError });
        await waitFor('unsupported', () => c.rec.count('unsupported') >= 1);
        assert.deepEqual(unsupported.errors, [['EHTTP', 400, 'unsupported']]);
      } finally {
        await nowhere.close();
        await wrong.close();
      }
    });

    it('start() after a refused password tries again at once', async function () {
      sim.inject({ kind: 'status', status: 401, path: INPUT });
      const { sup, rec } = supervise(ioMonitorPath('input', []));
      await waitFor('auth-failed', () => rec.count('auth-failed') >= 1);
      sim.clearFaults();
      sup.start();
      // The 5 minute pause is not waited for.
      await connectedWith(rec, ['IO1:L', 'IO2:L']);
      assert.deepEqual(rec.names, ['connecting', 'auth-failed', 'connecting', 'connected']);
      assert.equal(rec.infos('connecting')[1]?.attempt, 0);
    });
  });

  describe('backoff', function () {
    const cases: Array<[number, number[]]> = [
      // initial 10, max 80: the base doubles; jitter takes up to a quarter off, never below initial.
      [1, [10, 20, 40, 80, 80, 80]],
      [0.5, [10, 18, 35, 70, 70, 70]],
      [0, [10, 15, 30, 60, 60, 60]],
    ];
    for (const [r, expected] of cases) {
      it(`doubles the delay up to the maximum with jitter pinned at ${r}`, async function () {
        sim.inject({ kind: 'status', status: 503, path: INPUT });
        const { sup, rec } = supervise(ioMonitorPath('input', []), { backoff: { initial: 10, max: 80 }, random: () => r });
        await waitFor('six retries', () => rec.count('retrying') >= 6);
        await sup.stop();
        const delays = rec.infos('retrying').map((i) => i.delay ?? -1);
        assert.deepEqual(delays.slice(0, 6), expected);
        delays.forEach((delay, i) => {
          const base = Math.min(80, 10 * 2 ** i);
          assert.ok(delay >= Math.max(10, 0.75 * base) - 0.5 && delay <= base, `delay ${delay} for attempt ${i + 1}`);
        });
        assert.deepEqual(
          rec.infos('retrying').map((i) => i.attempt),
          rec.infos('retrying').map((_, i) => i + 1),
        );
      });
    }

    it('waits 1 s before the first retry by default', async function () {
      sim.inject({ kind: 'status', status: 503, path: INPUT });
      const { sup, rec } = supervise(ioMonitorPath('input', []));
      await waitFor('retrying', () => rec.count('retrying') >= 1);
      await sup.stop();
      assert.deepEqual(
        rec.infos('retrying').map((i) => [i.attempt, i.delay]),
        [[1, 1000]],
      );
    });

    it('keeps counting after a short quiet connection and starts over after a stable one', async function () {
      // Quiet: the connections deliver no part, only the time they hold counts.
      sim.state.io.style = { ...sim.state.io.style, quiet: true };
      sim.inject({ kind: 'status', status: 503, path: INPUT, times: 3 });
      const { rec } = supervise(ioMonitorPath('input', []), { backoff: { initial: 10, max: 1000, stableAfter: 1000 } });
      await waitFor('connected', () => rec.count('connected') >= 1 && sim.state.io.openStreams === 1);
      // Dropped at once: not stable, the backoff goes on from where it was.
      sim.state.io.streamFault('drop');
      await waitFor('connected again', () => rec.count('connected') >= 2 && sim.state.io.openStreams === 1);
      // Stays up past stableAfter (the timer only lets that time pass), then dropped.
      await sleep(1500);
      sim.state.io.streamFault('drop');
      await waitFor('connected a third time', () => rec.count('connected') >= 3);
      assert.deepEqual(
        rec.infos('retrying').map((i) => [i.attempt, i.delay]),
        [
          [1, 10],
          [2, 20],
          [3, 40],
          [4, 80],
          [1, 10],
        ],
      );
      assert.deepEqual(rec.parts, []);
    });

    it('starts over after a connection that delivers a part, however short', async function () {
      sim.state.io.style = { ...sim.state.io.style, quiet: true };
      sim.inject({ kind: 'status', status: 503, path: INPUT, times: 3 });
      const { rec } = supervise(ioMonitorPath('input', []), { backoff: { initial: 10, max: 1000, stableAfter: 60_000 } });
      await waitFor('connected', () => rec.count('connected') >= 1 && sim.state.io.openStreams === 1);
      sim.state.io.setInput(1, true);
      await waitFor('the part', () => rec.io.length >= 1);
      sim.state.io.streamFault('drop');
      await waitFor('connected again', () => rec.count('connected') >= 2);
      assert.deepEqual(
        rec.infos('retrying').map((i) => [i.attempt, i.delay]),
        [
          [1, 10],
          [2, 20],
          [3, 40],
          [1, 10],
        ],
      );
    });
  });

  describe('stop()', function () {
    interface Baseline {
      timers: number;
      handles: number;
    }

    /** Taken after a turn of the event loop: by then mocha has armed its own timeout for the test. */
    async function baseline(): Promise<Baseline> {
      await new Promise((resolve) => setImmediate(resolve));
      return { timers: timerCount(), handles: activeHandles().length };
    }

    /**
     * Stops `sup`: no socket of ours to the simulator may be left when stop() resolves; once the
     * simulator has seen the end (its side of the socket closes), handles and timers are back to
     * `before` (plus `simTimers` the simulator itself still runs).
     */
    async function assertStopsClean(sup: StreamSupervisor, before: Baseline, simTimers = 0): Promise<void> {
      await sup.stop();
      assert.equal(sup.current, 'stopped');
      assert.deepEqual(clientSocketsTo(sim.port), [], 'a client socket is left');
      await waitFor('the simulator to see the stream closed', () => sim.state.io.openStreams === 0);
      await waitFor('the handle count to come back', () => activeHandles().length === before.handles);
      assert.equal(timerCount(), before.timers + simTimers, 'a timer is left');
    }

    it('releases socket and timers while connected', async function () {
      const before = await baseline();
      sim.state.io.detectionInterval = 20;
      const { sup, rec } = supervise(detectionPath('motion', [], false), { stallTimeout: 5000 });
      await waitFor('readings', () => rec.parts.length >= 2);
      assert.equal(clientSocketsTo(sim.port).length, 1);
      await assertStopsClean(sup, before);
      const count = rec.parts.length;
      expectQuiet(rec.parts, 'no part after stop()');
      await sleep(100);
      assert.equal(rec.parts.length, count, 'no part after stop()');
      assert.deepEqual(rec.names, ['connecting', 'connected', 'stopped']);
      // A second stop() is harmless.
      await sup.stop();
      assert.equal(sup.current, 'stopped');
    });

    it('releases everything while connecting, retrying, waiting after a 401 and stalled', async function () {
      const before = await baseline();
      // Connecting: stopped before the answer (the simulator holds the request back).
      sim.inject({ kind: 'slow', delay: 300, path: INPUT, times: 1 });
      const connecting = supervise(ioMonitorPath('input', []));
      await waitFor('the request at the simulator', () => requestsTo(INPUT) >= 1);
      await assertStopsClean(connecting.sup, before, 1);
      assert.deepEqual(connecting.rec.names, ['connecting', 'stopped']);
      // When the simulator answers the abandoned request at last, nothing stays open.
      await waitFor('the slow answer', () => timerCount() === before.timers);
      await sleep(50);
      assert.equal(sim.state.io.openStreams, 0);

      // Retrying: a long wait pending.
      sim.inject({ kind: 'status', status: 503, path: INPUT });
      const retrying = supervise(ioMonitorPath('input', []), { backoff: { initial: 60_000 } });
      await waitFor('retrying', () => retrying.rec.count('retrying') >= 1);
      await assertStopsClean(retrying.sup, before);
      assert.deepEqual(retrying.rec.names, ['connecting', 'retrying', 'stopped']);
      sim.clearFaults();

      // After a 401: the 5 minute wait pending.
      sim.inject({ kind: 'status', status: 401, path: INPUT });
      const auth = supervise(ioMonitorPath('input', []));
      await waitFor('auth-failed', () => auth.rec.count('auth-failed') >= 1);
      await assertStopsClean(auth.sup, before);
      assert.deepEqual(auth.rec.names, ['connecting', 'auth-failed', 'stopped']);
      sim.clearFaults();

      // Stalled: connected, no byte coming.
      sim.state.io.detectionInterval = 20;
      const stalled = supervise(detectionPath('audio', [], false), { stallTimeout: 60_000 });
      await waitFor('a reading', () => stalled.rec.parts.length >= 1);
      sim.state.io.streamFault('stall');
      await assertStopsClean(stalled.sup, before);
      assert.deepEqual(stalled.rec.names, ['connecting', 'connected', 'stopped']);
    });

    it('can be started again at once after stop() and still stops clean', async function () {
      const before = await baseline();
      const { sup, rec } = supervise(ioMonitorPath('input', []));
      await connectedWith(rec, ['IO1:L', 'IO2:L']);
      const stopping = sup.stop();
      sup.start();
      await stopping;
      await connectedWith(rec, ['IO1:L', 'IO2:L', 'IO1:L', 'IO2:L'], 2);
      sim.state.io.setInput(1, true);
      await waitFor('the change', () => rec.io.length >= 5);
      assert.deepEqual(rec.io, ['IO1:L', 'IO2:L', 'IO1:L', 'IO2:L', 'IO1:/']);
      assert.equal(sim.state.io.openStreams, 1);
      assert.deepEqual(rec.names, ['connecting', 'connected', 'stopped', 'connecting', 'connected']);
      await assertStopsClean(sup, before);
    });
  });
});
