/**
 * Issue 23 items 1 and 4, through the nodes: a command the device refuses (HTTP 200 with a
 * `# Error:` line, as CGI firmware refuses) ends EDEVICE with the device's words and nothing
 * reports success: relay on, pulse, sequence and check, a CGI PTZ move, an I/O check, a stream
 * refused at its opening. Parameter lists keep what came, name the groups the device lacks in
 * `msg.missing`, and are decoded by their declared charset. Each against the simulator as fixed
 * and against a fake device answering in the real forms (test/refusing-device.ts).
 */
import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { charsetOf, decodeText, isText, openStreamChecked } from '../lib/answer';
import { startSimulator, type Simulator } from '../lib/simulator';
import { StreamSupervisor, type StreamState } from '../lib/stream/supervisor';
import { DeviceClient } from '../lib/transport/client';
import type { IpcamError } from '../lib/errors/errors';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import inputMonitorNode from '../nodes/ipcam-input-monitor/ipcam-input-monitor';
import ptzNode from '../nodes/ipcam-ptz/ipcam-ptz';
import relayNode from '../nodes/ipcam-relay/ipcam-relay';
import requestNode from '../nodes/ipcam-request/ipcam-request';
import type { NodeMessage } from '../nodes/red';
import { expectQuiet, SIM_PASSWORD, SIM_USER, waitFor } from './helpers';
import { DEVICE, FlowWatch, actionFlow, deviceCredentials, deviceDef, helper, isRecord, type FlowNode } from './node-helper';
import { CHECK_REFUSAL, MONITOR_REFUSAL, PTZ_REFUSAL, RELAY_REFUSAL, startRefusingDevice, type RefusingDevice } from './refusing-device';

const NODES = [deviceNode, relayNode, ptzNode, inputMonitorNode, requestNode];
const NODE = 'n1';

/** The node's own error as a Catch node sees it (`msg._error`: { message, code, status?, deviceCode?, deviceDesc? }). */
function errorOf(msg: NodeMessage): Record<string, unknown> {
  const error = msg['_error'];
  assert.ok(isRecord(error), 'the message reached the Catch node without the node\'s error');
  return error;
}

/** What a target does to refuse: the simulator switched by its control API, or the real-forms device. */
interface Target {
  name: string;
  port(): number;
  /** Makes the device refuse from now on (the simulator's control API; the fake device always does). */
  refuse(kind: 'refuseRelay' | 'refusePtz' | 'refuseCheck' | 'refuseStream'): Promise<void>;
  relayWords: string;
  ptzWords: string;
  checkWords: RegExp;
  streamWords: RegExp;
}

describe('refused commands and parameter answers (issue 23 items 1 and 4)', function () {
  let sim: Simulator | undefined;
  let device: RefusingDevice | undefined;

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.stopServer();
  });

  afterEach(async function () {
    await helper.unload();
    await sim?.close();
    sim = undefined;
    await device?.close();
    device = undefined;
  });

  async function control(path: string, body: unknown): Promise<void> {
    assert.ok(sim);
    const res = await fetch(`http://127.0.0.1:${sim.port}/_sim/${path}`, { method: 'POST', body: JSON.stringify(body) });
    assert.equal(res.status, 200, await res.text());
  }

  const targets: Target[] = [
    {
      name: 'the simulator',
      port: () => (sim as Simulator).port,
      refuse: (kind) => control('answer', { [kind]: true }),
      relayWords: 'Error setting output',
      ptzWords: 'Error moving the camera',
      checkWords: /Error getting (input|output) status/,
      streamWords: /Error starting input monitor/,
    },
    {
      name: 'a device answering in the real forms',
      port: () => (device as RefusingDevice).port,
      refuse: async () => undefined,
      relayWords: RELAY_REFUSAL,
      ptzWords: PTZ_REFUSAL,
      checkWords: new RegExp(CHECK_REFUSAL),
      streamWords: new RegExp(MONITOR_REFUSAL),
    },
  ];

  async function start(target: Target): Promise<void> {
    if (target.name === 'the simulator') sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
    else device = await startRefusingDevice();
  }

  async function deploy(target: Target, node: FlowNode): Promise<FlowWatch> {
    await helper.load(NODES, actionFlow({ ...node, id: NODE }, [deviceDef({ port: target.port() }, { auth: 'basic' })]), deviceCredentials(SIM_PASSWORD));
    return new FlowWatch([NODE, DEVICE]);
  }

  /** The message ended at the Catch node as EDEVICE with the device's words, and nothing came out as a success. */
  function assertRefused(w: FlowWatch, msg: NodeMessage, words: string | RegExp): void {
    const error = errorOf(msg);
    assert.equal(error['code'], 'EDEVICE', String(error['message']));
    if (typeof words === 'string') assert.equal(error['deviceDesc'], words);
    else assert.match(String(error['deviceDesc']), words);
    assert.match(String(error['message']), typeof words === 'string' ? new RegExp(words) : words);
    assert.equal(w.messages.filter((m) => m !== msg).length, 0, 'a message left the node as if the command had succeeded');
    const last = w.lastStatus(NODE);
    assert.equal(last.fill, 'red', `the status says ${JSON.stringify(last)}`);
  }

  for (const target of targets) {
    describe(`against ${target.name}`, function () {
      beforeEach(async function () {
        await start(target);
      });

      const relay = (settings: Record<string, unknown>): FlowNode => ({ id: NODE, type: 'ipcam-relay', name: '', device: DEVICE, output: '1', mode: 'on', pulse: '300', sequence: '', ...settings });

      for (const [what, settings] of [
        ['on', { mode: 'on' }],
        ['off', { mode: 'off' }],
        ['pulse', { mode: 'pulse' }],
        ['sequence', { mode: 'sequence', sequence: '1:/300\\500/300\\' }],
      ] as const) {
        it(`a refused relay ${what} is EDEVICE with the device's words, never { output, active }`, async function () {
          const w = await deploy(target, relay(settings));
          await target.refuse('refuseRelay');
          assertRefused(w, await w.expectCaught(NODE, {}), target.relayWords);
          if (sim) assert.deepEqual(Object.fromEntries(sim.state.io.outputs), { 1: false, 2: false }, 'the simulator changed a relay it refused');
        });
      }

      it('a refused relay check (an I/O check) is EDEVICE', async function () {
        const w = await deploy(target, relay({ mode: 'check' }));
        await target.refuse('refuseCheck');
        assertRefused(w, await w.expectCaught(NODE, {}), target.checkWords);
      });

      it('a refused CGI PTZ move is EDEVICE, never { ok: true }', async function () {
        const w = await deploy(target, { id: NODE, type: 'ipcam-ptz', name: '', device: DEVICE, api: 'cgi', action: 'left', speed: '4', duration: '0', channel: '1' });
        await target.refuse('refusePtz');
        assertRefused(w, await w.expectCaught(NODE, {}), target.ptzWords);
      });

      it("a refused input check ('check' of an input monitor) is EDEVICE", async function () {
        const w = await deploy(target, { id: NODE, type: 'ipcam-input-monitor', name: '', device: DEVICE, kind: 'input', ports: '1' });
        // The fake device refuses the monitor stream too: that failure reaches the Catch node first.
        if (device) await waitFor('the stream refused', () => w.messages.length > 0);
        else {
          // The first state of input 1 (from the stream and the read after the connect) comes out first.
          await waitFor('the stream connected and the first state out', () => w.statuses(NODE).some((s) => s.text === 'connected') && w.messages.length > 0);
          await sleep(300);
        }
        w.messages.length = 0;
        await target.refuse('refuseCheck');
        assertRefused(w, await w.expectCaught(NODE, { payload: 'check' }), target.checkWords);
      });

      it('a stream whose opening answer is a 200 # Error: line is a refusal: EDEVICE, never connected', async function () {
        await target.refuse('refuseStream');
        const w = await deploy(target, { id: NODE, type: 'ipcam-input-monitor', name: '', device: DEVICE, kind: 'input', ports: '1' });
        await waitFor('the refusal reported', () => w.errors().length > 0);
        const [error] = w.errors();
        assert.ok(isRecord(error));
        assert.equal(error['code'], 'EDEVICE', String(error['message']));
        assert.match(String(error['deviceDesc']), target.streamWords);
        expectQuiet(() => w.statuses(NODE).filter((s) => s.text === 'connected').length, 'connected after a refused opening');
        expectQuiet(w.messages, 'a part or state read from a refusal', (msg) => !isRecord(msg['_error']) || msg['_error']['code'] !== 'EDEVICE');
        await sleep(100);
        assert.ok(!w.statuses(NODE).some((s) => s.text === 'connected'), `statuses: ${JSON.stringify(w.statuses(NODE))}`);
        // Only the failure, at the Catch node: no part, no state read from a refusal.
        assert.ok(w.messages.length > 0);
        for (const msg of w.messages) assert.equal(errorOf(msg)['code'], 'EDEVICE');
      });

      it('the supervisor takes a refused opening for a failure to retry, never a stream', async function () {
        const client = new DeviceClient({ host: '127.0.0.1', port: target.port(), username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
        await target.refuse('refuseStream');
        const states: StreamState[] = [];
        const errors: IpcamError[] = [];
        const supervisor = new StreamSupervisor({
          client,
          path: '/cgi-bin/admin/input?monitor=1',
          onPart: () => assert.fail('a refusal was read as a part'),
          onState: (state) => states.push(state),
          onError: (error) => errors.push(error),
          backoff: { initial: 5000 },
        });
        try {
          supervisor.start();
          await waitFor('the refusal', () => errors.length > 0);
          assert.equal(errors[0]?.code, 'EDEVICE');
          assert.match(errors[0]?.deviceDesc ?? '', target.streamWords);
          assert.deepEqual(states, ['connecting', 'retrying']);
        } finally {
          await supervisor.stop();
          await client.close();
        }
      });
    });
  }

  describe('the simulator as fixed, without a fault', function () {
    beforeEach(async function () {
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
    });

    it('a relay the device lacks (output 9) is refused as firmware does: 200 # Error:, EDEVICE', async function () {
      const w = await deploy(targets[0] as Target, { id: NODE, type: 'ipcam-relay', name: '', device: DEVICE, output: '9', mode: 'on', pulse: '300', sequence: '' });
      assertRefused(w, await w.expectCaught(NODE, {}), 'Error setting output');
    });

    it('a CGI preset the device lacks is refused with 200 # Error:, EDEVICE', async function () {
      const w = await deploy(targets[0] as Target, { id: NODE, type: 'ipcam-ptz', name: '', device: DEVICE, api: 'cgi', action: 'gotoPreset', speed: '4', duration: '0', channel: '1' });
      assertRefused(w, await w.expectCaught(NODE, { payload: { preset: 9 } }), 'Error going to preset 9');
    });
  });

  describe('listParams (ipcam-request)', function () {
    const request = (group: unknown): FlowNode => ({ id: NODE, type: 'ipcam-request', name: '', device: DEVICE, operation: 'listParams', params: { group } });

    describe('against the simulator', function () {
      beforeEach(async function () {
        sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
      });

      it('a group the device lacks gives {} and msg.missing', async function () {
        const w = await deploy(targets[0] as Target, request('Nothing'));
        const msg = await w.expectOutput(NODE, {});
        assert.deepEqual(msg.payload, {});
        assert.deepEqual(msg['missing'], ['Nothing']);
      });

      it('a mixed answer (the error line first) keeps the values that came and lists the group missing', async function () {
        const w = await deploy(targets[0] as Target, request(['Nothing', 'Network.eth0.MACAddress']));
        const msg = await w.expectOutput(NODE, {});
        assert.ok(isRecord(msg.payload));
        assert.deepEqual(Object.keys(msg.payload), ['Network.eth0.MACAddress']);
        assert.deepEqual(msg['missing'], ['Nothing']);
      });

      it('every group there: no msg.missing', async function () {
        const w = await deploy(targets[0] as Target, request('Network.eth0.MACAddress'));
        const msg = await w.expectOutput(NODE, {});
        assert.equal(msg['missing'], undefined);
      });

      it('an ISO-8859-1 answer (switched on by the control API) reads Entrée', async function () {
        (sim as Simulator).state.params.set('Image.I0.Text.String', 'Entrée');
        await control('answer', { latin1: true });
        const w = await deploy(targets[0] as Target, request('Image.I0.Text'));
        const msg = await w.expectOutput(NODE, {});
        assert.ok(isRecord(msg.payload));
        assert.equal(msg.payload['Image.I0.Text.String'], 'Entrée');
        const res = await fetch(`http://127.0.0.1:${(sim as Simulator).port}/cgi-bin/admin/param?action=list&group=Image.I0.Text`, { headers: { authorization: `Basic ${Buffer.from(`${SIM_USER}:${SIM_PASSWORD}`).toString('base64')}` } });
        assert.equal(res.headers.get('content-type'), 'text/plain; charset=iso-8859-1');
        assert.ok(Buffer.from(await res.arrayBuffer()).includes(Buffer.from('Entr\xe9e', 'latin1')));
      });

      it('any other error line is still a refusal: EDEVICE', async function () {
        const w = await deploy(targets[0] as Target, request('Network'));
        (sim as Simulator).inject({ kind: 'answer', path: '/cgi-bin/admin/param', contentType: 'text/plain', body: '# Error: Permission denied\r\n' });
        const msg = await w.expectCaught(NODE, {});
        assert.equal(errorOf(msg)['code'], 'EDEVICE');
      });
    });

    describe('against a device answering in the real forms (ISO-8859-1, error lines first, a group without root.)', function () {
      beforeEach(async function () {
        device = await startRefusingDevice();
      });

      it('a group the device lacks gives {} and msg.missing', async function () {
        const w = await deploy(targets[1] as Target, request('Nothing'));
        const msg = await w.expectOutput(NODE, {});
        assert.deepEqual(msg.payload, {});
        assert.deepEqual(msg['missing'], ['Nothing']);
      });

      it('mixed: the values kept (Entrée decoded from ISO-8859-1), the groups lacking listed', async function () {
        const w = await deploy(targets[1] as Target, request(['Nothing', 'Image.I0.Text', 'Other', 'Network']));
        const msg = await w.expectOutput(NODE, {});
        assert.deepEqual(msg.payload, { 'Image.I0.Text.String': 'Entrée', 'Image.I0.Text.Position': 'top', 'Network.eth0.IPAddress': '192.168.1.90' });
        assert.deepEqual(msg['missing'], ['Nothing', 'Other']);
      });
    });
  });

  describe('a refusal that never ends (a hostile device)', function () {
    let server: ReturnType<typeof createServer> | undefined;
    const sockets = new Set<Socket>();
    const open: ServerResponse[] = [];

    afterEach(async function () {
      for (const res of open) res.destroy();
      open.length = 0;
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    });

    /** Answers 200 text/plain with an error line that drips, one byte at a time, and never ends. */
    async function dripping(): Promise<number> {
      server = createServer((_req, res) => {
        open.push(res);
        res.writeHead(200, { 'content-type': 'text/plain' });
        const text = '# Error: Error -2 starting monitor';
        let at = 0;
        const timer = setInterval(() => {
          if (at < text.length) res.write(text[at++] as string);
        }, 20);
        res.on('close', () => clearInterval(timer));
      });
      server.on('connection', (socket: Socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return (server.address() as AddressInfo).port;
    }

    it('is read for the device timeout at most, then closed: EDEVICE with what came, the socket released', async function () {
      const port = await dripping();
      const client = new DeviceClient({ host: '127.0.0.1', port, timeout: 1500 });
      try {
        const started = Date.now();
        let caught: unknown;
        await openStreamChecked(client, { path: '/cgi-bin/admin/input?monitor=1' }, { what: 'stream /cgi-bin/admin/input' }).catch((err: unknown) => (caught = err));
        assert.ok(caught && (caught as IpcamError).code === 'EDEVICE', String(caught));
        assert.match((caught as IpcamError).deviceDesc ?? '', /^Error/);
        assert.ok(Date.now() - started < 4000, `took ${Date.now() - started} ms`);
        await waitFor('the socket closed', () => sockets.size === 0);
      } finally {
        await client.close();
      }
    });

    it('a stop while the refusal drips ends the read at once', async function () {
      const port = await dripping();
      const client = new DeviceClient({ host: '127.0.0.1', port, timeout: 20_000 });
      const controller = new AbortController();
      try {
        const started = Date.now();
        const opened = openStreamChecked(client, { path: '/cgi-bin/admin/input?monitor=1', signal: controller.signal }, { what: 'stream' }).catch((err: unknown) => err);
        await waitFor('the answer begun', () => sockets.size === 1);
        await sleep(100);
        controller.abort();
        const err = await opened;
        assert.ok(err instanceof Error, String(err));
        assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
        await waitFor('the socket closed', () => sockets.size === 0);
      } finally {
        await client.close();
      }
    });
  });

  describe('which answers are read for an error line', function () {
    it('a blank or text/* media type in any case and spacing; pictures, XML, streams and look-alikes are not', function () {
      // Firmware answers a refused command 200 "# Error:" as text/plain, or with no type at all.
      for (const type of ['', '   ', 'text/plain', 'TEXT/PLAIN', 'Text/Html; charset=ISO-8859-1', ' text/plain', '\ttext/plain;charset=utf-8', '\u00a0text/plain', ';charset=utf-8', ' ; charset=utf-8']) {
        assert.equal(isText(type), true, JSON.stringify(type));
      }
      for (const type of ['image/jpeg', 'application/xml', 'multipart/x-mixed-replace; boundary=--myboundary', 'application/octet-stream', 'text', 'texts/plain', 'xtext/plain', 'application/json; text/plain']) {
        assert.equal(isText(type), false, JSON.stringify(type));
      }
    });
  });

  describe('text answers decoded by their declared charset', function () {
    it('ISO-8859-1 (and its aliases) and windows-1252 by their table, UTF-8 otherwise', function () {
      const latin1 = Buffer.from('Entr\xe9e', 'latin1');
      for (const type of ['text/plain; charset=iso-8859-1', 'text/plain;charset="ISO-8859-1"', 'text/plain; charset=latin1', 'text/plain; charset=windows-1252', 'text/plain; charset=cp1252']) {
        assert.equal(decodeText(latin1, type), 'Entrée', type);
      }
      // windows-1252 has characters where ISO-8859-1 has C1 controls (0x80 is the euro sign).
      assert.equal(decodeText(Buffer.from([0x80]), 'text/plain; charset=windows-1252'), '\u20ac');
      for (const type of ['text/plain', 'text/plain; charset=utf-8', 'text/plain; charset=unknown-thing', '']) {
        assert.equal(charsetOf(type), 'utf-8', type);
        assert.equal(decodeText(Buffer.from('Entrée', 'utf8'), type), 'Entrée', type);
      }
    });
  });
});
