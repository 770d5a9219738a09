/**
 * ipcam-event-server + ipcam-plate-event deployed in Node-RED (node-red-node-test-helper), fed
 * over real sockets: the captured device posts, the simulator's posts with real JPEGs, the
 * filters, the server settings, "Send this server to the device" and redeploys.
 */
import { strict as assert } from 'node:assert';
import type { EventEmitter } from 'node:events';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import sinon from 'sinon';
import type { SinonFakeTimers, SinonSpy } from 'sinon';
import { startSimulator, type PostEventOptions, type Simulator } from '../lib/simulator';
import { SUCCESS_DOCUMENT } from '../lib/events/server';
import { BROKEN_CURRENT_TIME, buildPlateEvent, EventPoster, type EventFormat } from '../lib/simulator/events';
import { PLATE_JPEG, SNAPSHOT_JPEG } from '../lib/simulator/images';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import eventServerNode from '../nodes/ipcam-event-server/ipcam-event-server';
import plateEventNode from '../nodes/ipcam-plate-event/ipcam-plate-event';
import type { EventServerConfigNode } from '../nodes/event-config';
import type { NodeMessage, NodeStatus } from '../nodes/red';
import { CAPTURES, SIM_PASSWORD, SIM_USER, jpegGrownTo, waitFor } from './helpers';
import { cameraPlateWithDirection, mixedConnection, postOnOneConnection, recorderPlateInGroup } from './real-forms';
import {
  DEVICE,
  activeHandles,
  assertNoSecret,
  closedPort,
  deviceCredentials,
  deviceDef,
  getNode,
  handleName,
  helper,
  intercept,
  isRecord,
  logTexts,
  type AdminAnswer,
  type Credentials,
  type FlowNode,
  type NodeModule,
} from './node-helper';

const NODES: NodeModule[] = [deviceNode, eventServerNode, plateEventNode];
const TAB = 'f1';
const SERVER = 'srv';
const PE = 'pe';
const CONFIGURE_PATH = '/ipcam-plate-event/configure-device';
/** How long a wait for something that should come may take before the test fails. */
const LIMIT_MS = 10_000;
const EVENT_USER = 'camera';
const EVENT_PASSWORD = 'Ev3nt:pa ss"wörd';

// ---------------------------------------------------------------------------------------------
// Flows

function serverDef(port: number, settings: Record<string, unknown> = {}, id = SERVER): FlowNode {
  return { id, type: 'ipcam-event-server', name: 'events', port: String(port), bind: '127.0.0.1', path: '/', maxBody: '', allow: '', ...settings };
}

/** A plate-event node (output 1 wired to helper `<id>-1`, output 2 to `<id>-2`). */
function plateEventDef(id: string, settings: Record<string, unknown> = {}, row = 0): FlowNode[] {
  const y = 100 + row * 100;
  return [
    { id, type: 'ipcam-plate-event', z: TAB, x: 100, y, name: id, server: SERVER, device: '', match: '', lists: [], dedup: '0', images: 'none', ...settings, wires: [[`${id}-1`], [`${id}-2`]] },
    { id: `${id}-1`, type: 'helper', z: TAB, x: 300, y, wires: [] },
    { id: `${id}-2`, type: 'helper', z: TAB, x: 300, y: y + 40, wires: [] },
  ];
}

function eventFlow(configs: FlowNode[], plateEvents: Array<[id: string, settings?: Record<string, unknown>]>): FlowNode[] {
  return [{ id: TAB, type: 'tab', label: 'events' }, ...configs, ...plateEvents.flatMap(([id, settings], row) => plateEventDef(id, settings, row))];
}

// ---------------------------------------------------------------------------------------------
// Waiting without timed assertions: a wait fails only when nothing came within a generous limit

function within<T>(promise: Promise<T>, what: string, ms = LIMIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

interface Received {
  output: 1 | 2;
  msg: NodeMessage;
}

/** Everything one plate-event node sends, in order of arrival, on both outputs. */
class Outputs {
  readonly received: Received[] = [];
  private taken = 0;
  private waiters: Array<() => boolean> = [];

  constructor(readonly id: string) {
    for (const output of [1, 2] as const) {
      getNode(`${id}-${output}`).on('input', (msg) => {
        this.received.push({ output, msg });
        this.waiters = this.waiters.filter((ready) => !ready());
      });
    }
  }

  /** The next message not looked at yet (waits for it). */
  next(what: string): Promise<Received> {
    const index = this.taken++;
    return within(
      new Promise<Received>((resolveNext) => {
        const ready = (): boolean => {
          const r = this.received[index];
          if (r) resolveNext(r);
          return r !== undefined;
        };
        if (!ready()) this.waiters.push(ready);
      }),
      `${this.id}: ${what}`,
    );
  }

  async nextPlate(what: string): Promise<Record<string, unknown>> {
    const r = await this.next(what);
    assert.equal(r.output, 1, `${this.id}: ${what}: expected a plate on output 1, got ${JSON.stringify(r.msg.payload)} on output ${r.output}`);
    return payloadOf(r.msg);
  }

  async nextOther(what: string): Promise<Record<string, unknown>> {
    const r = await this.next(what);
    assert.equal(r.output, 2, `${this.id}: ${what}: expected output 2, got ${JSON.stringify(r.msg.payload)} on output ${r.output}`);
    return payloadOf(r.msg);
  }

  /** Nothing came beyond what was looked at. */
  assertDrained(): void {
    const extra = this.received.slice(this.taken).map((r) => `output ${r.output}: ${JSON.stringify(r.msg.payload)}`);
    assert.deepEqual(extra, [], `${this.id} sent more than expected`);
  }
}

function payloadOf(msg: NodeMessage): Record<string, unknown> {
  assert.ok(isRecord(msg.payload), `payload is not an object: ${JSON.stringify(msg.payload)}`);
  return msg.payload;
}

/** The status calls of one node, from the spy the helper puts on Node.prototype.status. */
function statusesOf(id: string): NodeStatus[] {
  const node = getNode(id);
  const spy = node.status as unknown as SinonSpy;
  return spy
    .getCalls()
    .filter((call) => call.thisValue === node)
    .map((call) => call.args[0] as NodeStatus);
}

function lastStatus(id: string): NodeStatus {
  const last = statusesOf(id).at(-1);
  assert.ok(last, `no status was set on ${id}`);
  return last;
}

/** The first status of `id` (set so far or from now on) that passes `test`. */
function waitForStatus(id: string, test: (s: NodeStatus) => boolean, what: string): Promise<NodeStatus> {
  const node = getNode(id) as unknown as EventEmitter;
  let listener: (() => void) | undefined;
  const found = new Promise<NodeStatus>((resolveFound) => {
    const check = (): boolean => {
      const hit = statusesOf(id).find(test);
      if (hit) resolveFound(hit);
      return hit !== undefined;
    };
    if (check()) return;
    listener = () => {
      if (check() && listener) node.off('call:status', listener);
    };
    node.on('call:status', listener);
  });
  return within(found, `${id}: status ${what}`).finally(() => {
    if (listener) node.off('call:status', listener);
  });
}

function listening(id: string): Promise<NodeStatus> {
  return waitForStatus(id, (s) => s.fill === 'green' && s.text === 'listening', 'listening');
}

function assertShortStatus(s: NodeStatus): void {
  assert.ok(typeof s.text === 'string' && s.text.length > 0 && s.text.length < 20, `status text "${String(s.text)}"`);
}

// ---------------------------------------------------------------------------------------------
// Posting

interface RawAnswer {
  status: number;
  text: string;
}

/** One post on its own connection (closed after), optionally from another loopback address. */
function rawPost(port: number, body: string | Buffer, options: { localAddress?: string; path?: string } = {}): Promise<RawAnswer> {
  return new Promise((resolveAnswer, reject) => {
    let answer: RawAnswer | undefined;
    let socketClosed = false;
    const finish = (): void => {
      if (answer && socketClosed) resolveAnswer(answer);
    };
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: options.path ?? '/',
        method: 'POST',
        agent: false,
        ...(options.localAddress !== undefined && { localAddress: options.localAddress }),
        headers: { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          answer = { status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') };
          finish();
        });
      },
    );
    // Resolves once the client socket is closed too: nothing of this post stays behind.
    req.on('socket', (socket) =>
      socket.once('close', () => {
        socketClosed = true;
        finish();
      }),
    );
    req.on('error', reject);
    req.end(body);
  });
}

function urlOf(port: number, path = '/'): string {
  return `http://127.0.0.1:${port}${path}`;
}

/** Throws when something still listens on the port. */
async function assertPortFree(port: number): Promise<void> {
  const server: Server = createServer();
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => ok());
  }).catch((err: unknown) => assert.fail(`port ${port} is still in use: ${err instanceof Error ? err.message : String(err)}`));
  await new Promise<void>((done) => server.close(() => done()));
}

/**
 * The active handles once handles being closed are gone: a closed server or socket stays listed
 * until the close phase of the loop turn, so two turns pass first (nothing is waited for by time).
 */
async function settledHandles(): Promise<string[]> {
  for (let turn = 0; turn < 2; turn++) await new Promise<void>((done) => setImmediate(done));
  return activeHandles().map(handleName);
}

// ---------------------------------------------------------------------------------------------
// The captures and what each gives

type Device = Record<string, string>;

type CaptureExpectation =
  | { kind: 'plate'; payload: Record<string, unknown> }
  | { kind: 'alarmStatus'; payload: Record<string, unknown> }
  | { kind: 'event'; type: string; time: string; device: Device; channel?: number }
  | { kind: 'keepalive' };

/** The sender (127.0.0.1) when the post names no device. */
const LOCAL: Device = { ip: '127.0.0.1' };
const NVR_60: Device = { name: 'Device Name', ip: '192.168.0.60', mac: '58:5B:69:40:F4:0D' };
const NVR_50: Device = { name: 'Office', ip: '192.168.0.50', mac: '58:5B:69:12:F0:79' };
const iso = (ms: number): string => new Date(ms).toISOString();
const smart = (type: string, ms: number, device: Device, channel?: number): CaptureExpectation => ({ kind: 'event', type, time: iso(ms), device, ...(channel !== undefined && { channel }) });

const CAPTURE_EXPECTATIONS: Record<string, CaptureExpectation> = {
  'ipc-v1x/alarm-status.xml': {
    kind: 'alarmStatus',
    payload: {
      type: 'alarmStatus',
      // `dataTime` carries no zone: device local time, read in this host's zone (field notes).
      time: new Date(2025, 10, 19, 12, 15, 11).toISOString(),
      device: { name: 'Viewtron IPC', sn: 'I84BB0A8D59C', ip: '192.168.1.57', mac: '58:5b:69:5a:84:bb' },
      data: { alarms: [{ type: 'vehiceAlarm', id: 1, active: true }] },
    },
  },
  'ipc-v1x/face-detection.xml': smart('VFD', 1732045234584, LOCAL),
  'ipc-v1x/keepalive.xml': { kind: 'keepalive' },
  'ipc-v1x/line-crossing.xml': smart('PEA', 1563528106584, LOCAL),
  'ipc-v1x/lpr.xml': { kind: 'plate', payload: { plate: 'ABC1234', listType: 'whiteList', time: iso(1732045234584), device: LOCAL } },
  'ipc-v1x/perimeter-intrusion.xml': smart('PEA', 1563528106584, LOCAL),
  'ipc-v1x/video-metadata.xml': smart('VSD', 1732045234584, LOCAL),
  'ipc-v1x/zone-entry.xml': smart('AOIENTRY', 1732045234584, LOCAL),
  'ipc-v1x/zone-exit.xml': smart('AOILEAVE', 1732045234584, LOCAL),
  'nvr-v2/alarm-status.xml': {
    kind: 'alarmStatus',
    payload: { type: 'alarmStatus', time: iso(1772056914000), device: NVR_60, channel: 1, data: { alarms: [{ type: 'perimeterAlarm', id: 1, active: true }] } },
  },
  'nvr-v2/face-detection.xml': smart('videoFaceDetect', 1772212642929, NVR_50, 1),
  'nvr-v2/keepalive.xml': { kind: 'keepalive' },
  'nvr-v2/line-crossing.xml': smart('lineCrossing', 1772057090604, NVR_60, 1),
  'nvr-v2/region-intrusion.xml': smart('regionIntrusion', 1772056914604, NVR_60, 1),
  'nvr-v2/target-counting-by-area.xml': smart('targetCountingByArea', 1772145352968, NVR_60, 1),
  'nvr-v2/target-counting-by-line.xml': smart('targetCountingByLine', 1772140991308, NVR_60, 1),
  'nvr-v2/vehicle-lpr.xml': {
    kind: 'plate',
    payload: {
      plate: 'JP116D',
      listType: 'unknown',
      channel: 2,
      time: iso(1772210268473),
      device: NVR_60,
      vehicle: { type: 'mpv', color: 'white', brand: 'GMC', model: 'GMC_SAVANA' },
    },
  },
  'nvr-v2/video-metadata.xml': smart('videoMetadata', 1772145578273, NVR_60, 1),
};

/** Every capture file, as `<format folder>/<file>`. */
function captureFiles(): string[] {
  return readdirSync(CAPTURES, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) =>
      readdirSync(resolve(CAPTURES, d.name))
        .filter((f) => f.endsWith('.xml'))
        .map((f) => `${d.name}/${f}`),
    )
    .sort();
}

function formatOf(file: string): EventFormat {
  return file.startsWith('nvr') ? 'nvr' : 'ipc';
}

/** Keys anywhere in a value. */
function allKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(allKeys);
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...allKeys(v)]);
}

// ---------------------------------------------------------------------------------------------

describe('ipcam-event-server + ipcam-plate-event nodes', function () {
  let poster: EventPoster;
  let sim: Simulator | undefined;
  let clock: SinonFakeTimers | undefined;
  let blocker: Server | undefined;

  before(async function () {
    await helper.startServer();
  });

  after(async function () {
    await helper.unload();
    await helper.stopServer();
  });

  beforeEach(function () {
    poster = new EventPoster();
  });

  afterEach(async function () {
    clock?.restore();
    clock = undefined;
    await helper.unload();
    await poster.close();
    await sim?.close();
    sim = undefined;
    if (blocker) await new Promise<void>((done) => blocker?.close(() => done()));
    blocker = undefined;
  });

  /** Deploys and collects the output of every plate-event node of the flow. */
  async function deploy(flow: FlowNode[], credentials: Credentials = {}): Promise<Map<string, Outputs>> {
    await helper.load(NODES, flow, credentials);
    const outputs = new Map<string, Outputs>();
    for (const node of flow.filter((n) => n.type === 'ipcam-plate-event')) {
      outputs.set(node.id, new Outputs(node.id));
    }
    return outputs;
  }

  async function deployOne(settings: Record<string, unknown> = {}, serverSettings: Record<string, unknown> = {}, credentials: Credentials = {}): Promise<{ out: Outputs; port: number }> {
    const port = await closedPort();
    const outputs = await deploy(eventFlow([serverDef(port, serverSettings)], [[PE, settings]]), credentials);
    await listening(PE);
    const out = outputs.get(PE);
    assert.ok(out);
    return { out, port };
  }

  function outputsOf(outputs: Map<string, Outputs>, id: string): Outputs {
    const out = outputs.get(id);
    assert.ok(out, `no outputs for ${id}`);
    return out;
  }

  async function post(options: PostEventOptions): Promise<number> {
    const [result] = await poster.postEvent(options);
    assert.ok(result, 'the post got no answer');
    return result.status;
  }

  // -------------------------------------------------------------------------------------------

  describe('the captured posts', function () {
    it('has an expectation for every capture file and a file for every expectation', function () {
      const files = captureFiles();
      assert.ok(files.length >= 18, `only ${files.length} captures found in ${CAPTURES}`);
      assert.deepEqual(files, Object.keys(CAPTURE_EXPECTATIONS).sort());
    });

    for (const file of captureFiles()) {
      it(`${file} gives the expected message on the right output`, async function () {
        const expected = CAPTURE_EXPECTATIONS[file];
        assert.ok(expected, `no expectation for ${file}`);
        const { out, port } = await deployOne();
        const body = readFileSync(resolve(CAPTURES, file));
        const statusesBefore = statusesOf(PE).length;

        const answer = await poster.send({ url: urlOf(port), format: formatOf(file) }, body);
        assert.equal(answer.status, 200);

        if (expected.kind === 'keepalive') {
          // No message (the sentinel below must be the first), only the status.
          const added = statusesOf(PE).slice(statusesBefore);
          assert.equal(added.length, 1, `statuses after the keep-alive: ${JSON.stringify(added)}`);
          const s = lastStatus(PE);
          assert.deepEqual([s.fill, s.shape], ['green', 'dot']);
          assert.match(String(s.text), /^alive \d\d:\d\d:\d\d$/);
          assertShortStatus(s);
        } else if (expected.kind === 'plate') {
          const r = await out.next(file);
          assert.equal(r.output, 1, `plate on output ${r.output}`);
          // Images "none": no images key; every field as the capture says; the sender is the socket's.
          assert.deepEqual(r.msg.payload, { ...expected.payload, sender: '127.0.0.1' });
          assert.equal(r.msg.topic, expected.payload['plate']);
          // Plate statuses are throttled (one a second, the latest): waited for, not read at once.
          const s = await waitForStatus(PE, (st) => String(st.text).startsWith(String(expected.payload['plate'])), `of plate ${String(expected.payload['plate'])}`);
          assert.equal(s.fill, 'green');
          assertShortStatus(s);
        } else if (expected.kind === 'alarmStatus') {
          const r = await out.next(file);
          assert.equal(r.output, 2, `alarm status on output ${r.output}`);
          assert.deepEqual(r.msg.payload, { ...expected.payload, sender: '127.0.0.1' });
          assert.equal(r.msg.topic, 'alarmStatus');
        } else {
          const r = await out.next(file);
          assert.equal(r.output, 2, `${expected.type} on output ${r.output}`);
          const payload = payloadOf(r.msg);
          assert.deepEqual(Object.keys(payload).sort(), expected.channel === undefined ? ['data', 'device', 'sender', 'time', 'type'] : ['channel', 'data', 'device', 'sender', 'time', 'type']);
          assert.equal(payload['type'], expected.type);
          assert.equal(r.msg.topic, expected.type);
          assert.equal(payload['time'], expected.time);
          assert.deepEqual(payload['device'], expected.device);
          if (expected.channel !== undefined) assert.equal(payload['channel'], expected.channel);
          // data: the posted document as an object, without its pictures.
          const data = payload['data'];
          assert.ok(isRecord(data), 'data is not an object');
          assert.equal(data['smartType'], expected.type);
          assert.deepEqual(
            allKeys(data).filter((k) => k.endsWith('Base64Data')),
            [],
          );
          assert.ok(!JSON.stringify(data).includes('BASE64_JPEG'), 'placeholder image text in data');
          assert.ok(allKeys(data).some((k) => k.endsWith('Base64Length')), 'the rest of the image blocks is kept');
        }

        // Exactly one message per post (none for a keep-alive): the next post's message comes next.
        assert.equal(await post({ url: urlOf(port), plate: 'SENTINEL', images: false }), 200);
        assert.equal((await out.nextPlate('sentinel'))['plate'], 'SENTINEL');
        out.assertDrained();
      });
    }
  });

  // -------------------------------------------------------------------------------------------

  describe('dedup', function () {
    it('A-B-A within the window gives A and B once; from the end of the window A comes again; keyed by device and plate', async function () {
      // Only Date is faked (the event server stamps each post with Date.now()); sockets and timers stay real.
      clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
      const port = await closedPort();
      const outputs = await deploy(eventFlow([serverDef(port)], [[PE, { dedup: '1' }], ['pe-all', { dedup: '0' }]]));
      await listening(PE);
      const out = outputsOf(outputs, PE);
      const all = outputsOf(outputs, 'pe-all');
      const M1 = { mac: '58:5b:69:00:00:a1' };
      const M2 = { mac: '58:5b:69:00:00:a2' };
      const send = async (plate: string, device: Record<string, string>, format: EventFormat = 'ipc'): Promise<void> => {
        assert.equal(await post({ url: urlOf(port), plate, device, format, images: false }), 200);
      };

      await send('AAA111', M1);
      await send('BBB222', M1);
      clock.tick(500);
      await send('AAA111', M1); // repeat within the window
      await send('AAA111', M2); // the same plate from another device
      clock.tick(499);
      await send('AAA111', M1, 'nvr'); // 999 ms after the first report: still within (either format)
      await send('CCC333', M1);
      clock.tick(1);
      await send('AAA111', M1); // 1000 ms after the first report: a new window
      await send('AAA111', M1); // within the new one
      await send('DDD444', M1);

      const got: string[] = [];
      for (let i = 0; i < 6; i++) {
        const p = await out.nextPlate(`plate ${i}`);
        got.push(`${String(p['plate'])}@${String((p['device'] as Record<string, unknown>)['mac'])}`);
      }
      assert.deepEqual(got, ['AAA111@58:5b:69:00:00:a1', 'BBB222@58:5b:69:00:00:a1', 'AAA111@58:5b:69:00:00:a2', 'CCC333@58:5b:69:00:00:a1', 'AAA111@58:5b:69:00:00:a1', 'DDD444@58:5b:69:00:00:a1']);
      out.assertDrained();

      // Without dedup every post is a message.
      const plain: string[] = [];
      for (let i = 0; i < 9; i++) plain.push(String((await all.nextPlate(`plate ${i}`))['plate']));
      assert.deepEqual(plain, ['AAA111', 'BBB222', 'AAA111', 'AAA111', 'AAA111', 'CCC333', 'AAA111', 'AAA111', 'DDD444']);
      all.assertDrained();
    });
  });

  // -------------------------------------------------------------------------------------------

  describe('status times', function () {
    it('are this host\'s local time, not UTC', async function () {
      const zone = process.env['TZ'];
      // A zone half an hour off UTC: its clock never reads like UTC's.
      process.env['TZ'] = 'Asia/Kolkata';
      try {
        const { out, port } = await deployOne();
        const before = new Date();
        assert.equal(await post({ url: urlOf(port), plate: 'LOCAL1', images: false }), 200);
        await out.nextPlate('the plate');
        const shown = /^LOCAL1 (\d\d):(\d\d):\d\d$/.exec(String(lastStatus(PE).text));
        assert.ok(shown, `status "${String(lastStatus(PE).text)}"`);
        const minutes = Number(shown[1]) * 60 + Number(shown[2]);
        const local = before.getHours() * 60 + before.getMinutes();
        assert.ok(Math.abs(minutes - local) <= 1 || Math.abs(minutes - local) >= 1439, `shown ${shown[1]}:${shown[2]}, local ${before.getHours()}:${before.getMinutes()}`);
        assert.notEqual(minutes, before.getUTCHours() * 60 + before.getUTCMinutes());
      } finally {
        if (zone === undefined) delete process.env['TZ'];
        else process.env['TZ'] = zone;
      }
    });
  });

  describe('plate statuses', function () {
    it('a burst of plates sets one status at once and the latest within the next second, not one each', async function () {
      const { out, port } = await deployOne();
      await listening(PE);
      const before = statusesOf(PE).length;
      const url = urlOf(port);
      for (let i = 0; i < 10; i++) assert.equal(await post({ url, plate: `BURST${i}`, images: false }), 200);
      for (let i = 0; i < 10; i++) await out.nextPlate(`plate ${i}`);
      const last = await waitForStatus(PE, (s) => String(s.text).startsWith('BURST9 '), 'of the last plate');
      assert.equal(last.fill, 'green');
      const shown = statusesOf(PE)
        .slice(before)
        .map((s) => String(s.text).split(' ')[0]);
      // The first at once, then the one held at the end of the second: never each plate's.
      assert.equal(shown[0], 'BURST0', `statuses ${JSON.stringify(shown)}`);
      assert.ok(shown.length <= 3, `statuses ${JSON.stringify(shown)}`);
      assert.equal(shown.at(-1), 'BURST9');
    });
  });

  describe('filters', function () {
    it("lists ['whiteList'] drops blackList, temporaryList and unknown; empty lists emit every plate; other events pass", async function () {
      const port = await closedPort();
      const outputs = await deploy(eventFlow([serverDef(port)], [[PE, { lists: ['whiteList'] }], ['pe-all', { lists: [] }]]));
      await listening(PE);
      const url = urlOf(port);
      assert.equal(await post({ url, plate: 'BLACK1', listType: 'blackList', images: false }), 200);
      assert.equal(await post({ url, plate: 'UNKNOWN1', images: false, format: 'nvr' }), 200);
      assert.equal(await post({ url, plate: 'TEMP1', listType: 'temporaryList', images: false }), 200);
      assert.equal(await post({ url, kind: 'alarmStatus' }), 200);
      assert.equal(await post({ url, plate: 'WHITE1', listType: 'whiteList', images: false, format: 'nvr' }), 200);

      const white = outputsOf(outputs, PE);
      assert.equal((await white.nextOther('alarm status'))['type'], 'alarmStatus');
      const w = await white.nextPlate('white');
      assert.deepEqual([w['plate'], w['listType']], ['WHITE1', 'whiteList']);
      white.assertDrained();

      const every = outputsOf(outputs, 'pe-all');
      const seen: string[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await every.next(`post ${i}`);
        const p = payloadOf(r.msg);
        seen.push(r.output === 1 ? `${String(p['plate'])}:${String(p['listType'])}` : `2:${String(p['type'])}`);
      }
      assert.deepEqual(seen, ['BLACK1:blackList', 'UNKNOWN1:unknown', 'TEMP1:temporaryList', '2:alarmStatus', 'WHITE1:whiteList']);
      every.assertDrained();
    });

    it('device: by the socket address alone; a post from 127.0.0.1 naming 10.1.2.3 in <ip> or any <mac> does not pass the filter for 10.1.2.3', async function () {
      const port = await closedPort();
      const near = { ...deviceDef({ port: 80 }), id: 'dev-near', host: '127.0.0.1' };
      const far = { ...deviceDef({ port: 80 }), id: 'dev-far', host: '10.1.2.3' };
      const outputs = await deploy(eventFlow([serverDef(port), near, far], [['pe-near', { device: 'dev-near' }], ['pe-far', { device: 'dev-far' }]]));
      await listening('pe-near');
      await listening('pe-far');
      const url = urlOf(port);
      assert.equal(await post({ url, plate: 'NEAR1', images: false }), 200);
      assert.equal(await post({ url, plate: 'NEAR2', images: false, format: 'nvr' }), 200);
      assert.equal(await post({ url, kind: 'alarmStatus', format: 'ipc' }), 200);
      assert.equal(await post({ url, kind: 'keepalive', format: 'nvr' }), 200);
      // Forged: posts from 127.0.0.1 that say they come from 10.1.2.3, in both formats, with a
      // mac of their choosing. Only the connection's address counts.
      assert.equal(await post({ url, plate: 'FORGED1', images: false, format: 'nvr', device: { ip: '10.1.2.3' } }), 200);
      assert.equal(await post({ url, plate: 'FORGED2', images: false, format: 'ipc', device: { ip: '10.1.2.3', mac: '58:5b:69:10:01:02', name: 'Far gate' } }), 200);
      assert.equal(await post({ url, kind: 'alarmStatus', format: 'nvr', device: { ip: '10.1.2.3' } }), 200);

      const nearOut = outputsOf(outputs, 'pe-near');
      assert.equal((await nearOut.nextPlate('near 1'))['plate'], 'NEAR1');
      assert.equal((await nearOut.nextPlate('near 2'))['plate'], 'NEAR2');
      assert.equal((await nearOut.nextOther('alarm status'))['type'], 'alarmStatus');
      // A recorder at 127.0.0.1 posting for a camera it names 10.1.2.3 is the recorder's post.
      const relayed = await nearOut.nextPlate('forged 1');
      assert.equal(relayed['plate'], 'FORGED1');
      assert.deepEqual(relayed['device'], { name: 'Simulated IPC', ip: '10.1.2.3', mac: '58:5b:69:00:00:01' });
      assert.equal(relayed['sender'], '127.0.0.1');
      assert.equal((await nearOut.nextPlate('forged 2'))['plate'], 'FORGED2');
      assert.equal((await nearOut.nextOther('alarm status of the recorder'))['sender'], '127.0.0.1');
      nearOut.assertDrained();

      // A post that arrives after the forged ones reaches pe-near: so pe-far had them all in time.
      assert.equal(await post({ url, plate: 'LAST1', images: false }), 200);
      assert.equal((await nearOut.nextPlate('last'))['plate'], 'LAST1');
      outputsOf(outputs, 'pe-far').assertDrained();
      // A keep-alive from 127.0.0.1 updates only the status of the node that takes it. Post
      // statuses are throttled (the latest a second): one sent last is the one shown, waited for;
      // by then pe-far would have shown one it held too.
      assert.equal(await post({ url, kind: 'keepalive', format: 'nvr' }), 200);
      await waitForStatus('pe-near', (s) => String(s.text).startsWith('alive '), 'alive');
      assert.ok(!statusesOf('pe-far').some((s) => String(s.text).startsWith('alive ')));
    });

    it('match: text against mac, name and ip, ignoring case', async function () {
      const port = await closedPort();
      const outputs = await deploy(
        eventFlow(
          [serverDef(port)],
          [
            ['pe-name', { match: 'GATE cam' }],
            ['pe-mac', { match: '58:5B:69:AA' }],
            ['pe-ip', { match: '10.9.9' }],
          ],
        ),
      );
      await listening('pe-name');
      const url = urlOf(port);
      const other = { name: 'Yard', mac: '00:11:22:33:44:55', sn: 'X0001' };
      assert.equal(await post({ url, plate: 'NONE1', images: false, device: other }), 200);
      assert.equal(await post({ url, plate: 'NONE2', images: false, format: 'nvr', device: { ...other, ip: '10.8.8.8' } }), 200);
      assert.equal(await post({ url, plate: 'NAME1', images: false, device: { ...other, name: 'North Gate Cam' } }), 200);
      assert.equal(await post({ url, plate: 'MAC1', images: false, device: { ...other, mac: '58:5b:69:aa:bb:cc' } }), 200);
      assert.equal(await post({ url, plate: 'IP1', images: false, format: 'nvr', device: { ...other, ip: '10.9.9.9' } }), 200);
      assert.equal(await post({ url, kind: 'alarmStatus', format: 'nvr', device: { ...other, ip: '10.9.9.7' } }), 200);
      assert.equal(await post({ url, plate: 'ALL1', images: false, format: 'nvr', device: { name: 'gate cam 2', mac: '58:5B:69:AA:00:01', ip: '10.9.9.1' } }), 200);

      const expected: Record<string, string[]> = { 'pe-name': ['NAME1', 'ALL1'], 'pe-mac': ['MAC1', 'ALL1'], 'pe-ip': ['IP1', '2:alarmStatus', 'ALL1'] };
      for (const [id, plates] of Object.entries(expected)) {
        const out = outputsOf(outputs, id);
        const seen: string[] = [];
        for (let i = 0; i < plates.length; i++) {
          const r = await out.next(`${id} ${i}`);
          const p = payloadOf(r.msg);
          seen.push(r.output === 1 ? String(p['plate']) : `2:${String(p['type'])}`);
        }
        assert.deepEqual(seen, plates, id);
        out.assertDrained();
      }
    });
  });

  // -------------------------------------------------------------------------------------------

  describe('images', function () {
    it('none: no images key; buffer: the JPEGs as Buffers; base64: strings of them; placeholders are no image', async function () {
      const port = await closedPort();
      const outputs = await deploy(eventFlow([serverDef(port)], [['pe-none', { images: 'none' }], ['pe-buffer', { images: 'buffer' }], ['pe-base64', { images: 'base64' }]]));
      await listening('pe-none');
      const url = urlOf(port);
      assert.equal(await post({ url, plate: 'IMG1', format: 'ipc' }), 200);
      assert.equal(await post({ url, plate: 'IMG2', format: 'nvr' }), 200);
      for (const file of ['ipc-v1x/lpr.xml', 'nvr-v2/vehicle-lpr.xml']) {
        assert.equal((await poster.send({ url, format: formatOf(file) }, readFileSync(resolve(CAPTURES, file)))).status, 200);
      }
      assert.equal(await post({ url, plate: 'IMG3', images: false }), 200);
      const plates = ['IMG1', 'IMG2', 'ABC1234', 'JP116D', 'IMG3'];

      const none = outputsOf(outputs, 'pe-none');
      for (const plate of plates) {
        const p = await none.nextPlate(plate);
        assert.equal(p['plate'], plate);
        assert.ok(!('images' in p), `${plate}: images with mode none`);
      }
      none.assertDrained();

      const buffers = outputsOf(outputs, 'pe-buffer');
      const base64 = outputsOf(outputs, 'pe-base64');
      for (const plate of plates) {
        const withPictures = plate.startsWith('IMG') && plate !== 'IMG3';
        const b = await buffers.nextPlate(plate);
        const s = await base64.nextPlate(plate);
        assert.equal(b['plate'], plate);
        assert.equal(s['plate'], plate);
        const bi = b['images'];
        const si = s['images'];
        assert.ok(isRecord(bi), `${plate}: no images object (buffer)`);
        assert.ok(isRecord(si), `${plate}: no images object (base64)`);
        if (!withPictures) {
          // Placeholder text (captures) or no picture at all: no such key.
          assert.deepEqual(Object.keys(bi), [], `${plate}: ${Object.keys(bi).join(', ')}`);
          assert.deepEqual(Object.keys(si), [], `${plate}: ${Object.keys(si).join(', ')}`);
          continue;
        }
        assert.deepEqual(Object.keys(bi).sort(), ['plate', 'scene']);
        assert.deepEqual(Object.keys(si).sort(), ['plate', 'scene']);
        for (const [which, jpeg] of [
          ['plate', PLATE_JPEG],
          ['scene', SNAPSHOT_JPEG],
        ] as const) {
          const buffer: unknown = bi[which];
          assert.ok(Buffer.isBuffer(buffer), `${plate} ${which}: not a Buffer`);
          assert.deepEqual([buffer[0], buffer[1]], [0xff, 0xd8]);
          assert.ok(buffer.equals(jpeg), `${plate} ${which}: not the posted JPEG`);
          const text: unknown = si[which];
          assert.equal(typeof text, 'string', `${plate} ${which}: not a string`);
          const decoded = Buffer.from(String(text), 'base64');
          assert.deepEqual([decoded[0], decoded[1]], [0xff, 0xd8]);
          assert.ok(decoded.equals(jpeg), `${plate} ${which}: does not decode to the posted JPEG`);
        }
      }
      buffers.assertDrained();
      base64.assertDrained();
    });

    it('base64 passes the posted text on once checked; lines, missing padding and a PNG give what decoding and encoding gives; anything else is left out', async function () {
      const port = await closedPort();
      const outputs = await deploy(eventFlow([serverDef(port)], [['pe-buffer', { images: 'buffer' }], ['pe-base64', { images: 'base64' }]]));
      await listening('pe-buffer');
      const sceneText = SNAPSHOT_JPEG.toString('base64');
      const cropText = PLATE_JPEG.toString('base64');
      // A camera post with `scene` and `crop` where the device writes its pictures' base64.
      const postWith = async (plate: string, scene: string, crop: string): Promise<void> => {
        const body = buildPlateEvent('ipc', { plate, scene: SNAPSHOT_JPEG, plateImage: PLATE_JPEG }).split(sceneText).join(scene).split(cropText).join(crop);
        assert.equal((await rawPost(port, body)).status, 200);
      };
      const lines = (text: string): string => (text.match(/.{1,76}/g) ?? []).join('\r\n');
      // 2 bytes more or less: its base64 ends in `==`.
      const odd = Buffer.concat([PLATE_JPEG, Buffer.alloc((4 - (PLATE_JPEG.length % 3)) % 3, 0x20)]);
      const oddText = odd.toString('base64');
      assert.ok(oddText.endsWith('=='));
      const pngHead = Buffer.from('89504e470d0a1a0a0000000d4948445200000010000000100806000000', 'hex');
      const png = Buffer.concat([pngHead, Buffer.alloc(200, 3)]);
      const notPng = Buffer.concat([pngHead.subarray(0, 4), Buffer.alloc(200, 3)]);
      const cases: Array<{ plate: string; scene: string; crop: string; expected: { scene?: Buffer; plate?: Buffer } }> = [
        { plate: 'B64SAME', scene: sceneText, crop: cropText, expected: { scene: SNAPSHOT_JPEG, plate: PLATE_JPEG } },
        { plate: 'B64LINES', scene: lines(sceneText), crop: `\n${lines(cropText)}\n`, expected: { scene: SNAPSHOT_JPEG, plate: PLATE_JPEG } },
        { plate: 'B64NOPAD', scene: sceneText, crop: oddText.replace(/=+$/, ''), expected: { scene: SNAPSHOT_JPEG, plate: odd } },
        { plate: 'B64PNG', scene: png.toString('base64'), crop: notPng.toString('base64'), expected: { scene: png } },
        { plate: 'B64BAD', scene: `${sceneText.slice(0, 500)}!${sceneText.slice(500)}`, crop: Buffer.from('a plate crop that is text').toString('base64'), expected: {} },
      ];
      for (const c of cases) await postWith(c.plate, c.scene, c.crop);

      const buffers = outputsOf(outputs, 'pe-buffer');
      const base64 = outputsOf(outputs, 'pe-base64');
      for (const c of cases) {
        const b = await buffers.nextPlate(c.plate);
        const s = await base64.nextPlate(c.plate);
        const bi = b['images'];
        const si = s['images'];
        assert.ok(isRecord(bi) && isRecord(si), `${c.plate}: no images object`);
        assert.deepEqual(Object.keys(bi).sort(), Object.keys(c.expected).sort(), `${c.plate} (buffer)`);
        assert.deepEqual(Object.keys(si).sort(), Object.keys(c.expected).sort(), `${c.plate} (base64)`);
        for (const [which, image] of Object.entries(c.expected)) {
          assert.ok(Buffer.isBuffer(bi[which]) && image.equals(bi[which] as Buffer), `${c.plate} ${which}: not the posted picture (buffer)`);
          // Exactly the text decoding and encoding gave before the base64 was passed on.
          assert.equal(si[which], image.toString('base64'), `${c.plate} ${which} (base64)`);
        }
      }
      buffers.assertDrained();
      base64.assertDrained();
    });
  });

  // -------------------------------------------------------------------------------------------

  describe('server settings', function () {
    it('Basic credentials: a post without them or with wrong ones is 401 and no message; with them it is delivered', async function () {
      const { out, port } = await deployOne({}, {}, { [SERVER]: { username: EVENT_USER, password: EVENT_PASSWORD } });
      const url = urlOf(port);
      assert.equal(await post({ url, plate: 'NOAUTH1', images: false }), 401);
      assert.equal(await post({ url, plate: 'NOAUTH2', images: false, username: EVENT_USER, password: 'wrong' }), 401);
      assert.equal((await rawPost(port, buildPlateEvent('ipc', { plate: 'NOAUTH3', images: false }))).status, 401);
      assert.equal(await post({ url, plate: 'AUTHED1', images: false, username: EVENT_USER, password: EVENT_PASSWORD }), 200);
      assert.equal(await post({ url, plate: 'AUTHED2', images: false, format: 'nvr', username: EVENT_USER, password: EVENT_PASSWORD }), 200);
      assert.equal((await out.nextPlate('authed 1'))['plate'], 'AUTHED1');
      assert.equal((await out.nextPlate('authed 2'))['plate'], 'AUTHED2');
      out.assertDrained();
      assertNoSecret([...logTexts(), ...statusesOf(PE).map((s) => JSON.stringify(s))], EVENT_PASSWORD, EVENT_USER);
    });

    it('allow list without 127.0.0.1: its posts are 403 and no message; an allowed sender is delivered', async function () {
      const { out, port } = await deployOne({}, { allow: '127.0.0.2, 10.0.0.0/8' });
      assert.equal(await post({ url: urlOf(port), plate: 'DENIED1', images: false }), 403);
      assert.equal((await rawPost(port, buildPlateEvent('nvr', { plate: 'DENIED2', images: false }))).status, 403);
      const allowed = await rawPost(port, buildPlateEvent('ipc', { plate: 'ALLOWED1', images: false }), { localAddress: '127.0.0.2' });
      assert.equal(allowed.status, 200, allowed.text);
      assert.match(allowed.text, /<status>success<\/status>/);
      const p = await out.nextPlate('allowed');
      assert.equal(p['plate'], 'ALLOWED1');
      assert.deepEqual(p['device'], { name: 'Simulated IPC', mac: '58:5b:69:00:00:01', sn: 'SIM0000000001', ip: '127.0.0.2' });
      out.assertDrained();
    });

    it('port already in use: the plate-event status is red with a short text, no crash, other nodes keep working', async function () {
      const busy = await closedPort();
      blocker = createServer();
      blocker.listen(busy, '127.0.0.1');
      await once(blocker, 'listening');
      const free = await closedPort();
      const flow = [
        { id: TAB, type: 'tab', label: 'events' },
        serverDef(busy),
        serverDef(free, {}, 'srv-free'),
        ...plateEventDef('pe-busy', {}, 0),
        ...plateEventDef('pe-free', { server: 'srv-free' }, 1),
      ];
      const outputs = await deploy(flow);
      const red = await waitForStatus('pe-busy', (s) => s.fill === 'red', 'red');
      assert.equal(red.shape, 'ring');
      assertShortStatus(red);
      assert.equal(red.text, 'port in use');
      assert.ok(
        logTexts().some((t) => t.includes(String(busy)) && /in use/.test(t)),
        'the log does not say which port is in use',
      );

      await listening('pe-free');
      assert.equal(await post({ url: urlOf(free), plate: 'STILL1', images: false }), 200);
      assert.equal((await outputsOf(outputs, 'pe-free').nextPlate('still working'))['plate'], 'STILL1');
      // The failed node stays red and sends nothing.
      assert.equal(lastStatus('pe-busy').fill, 'red');
      outputsOf(outputs, 'pe-busy').assertDrained();
    });

    it('refused posts: one warning from the server at once, not one per plate-event node; the rest summed up', async function () {
      this.timeout(30_000);
      const port = await closedPort();
      const ids = ['pe-a', 'pe-b', 'pe-c', 'pe-d', 'pe-e'];
      const outputs = await deploy(
        eventFlow(
          [serverDef(port)],
          ids.map((id) => [id]),
        ),
        { [SERVER]: { username: EVENT_USER, password: EVENT_PASSWORD } },
      );
      for (const id of ids) await listening(id);
      const serverWarnings: string[] = [];
      intercept(getNode(SERVER), 'warn', (args) => serverWarnings.push(args.map(String).join(' ')));
      const results = await poster.postEvent({ url: urlOf(port), plate: 'NOAUTH', images: false, count: 300, concurrency: 4 });
      assert.deepEqual(new Set(results.map((r) => r.status)), new Set([401]));
      const refusals = logTexts().filter((t) => t.includes('Post refused (401)'));
      assert.equal(refusals.length, 1, refusals.join('\n'));
      assert.match(refusals[0] ?? '', /ipcam-event-server/, 'the line comes from the server node');
      assert.deepEqual(serverWarnings, ['Post refused (401): Wrong or missing credentials (from 127.0.0.1)']);
      for (const id of ids) outputsOf(outputs, id).assertDrained();
      // Closing writes what was held back: the count of the other 299.
      await helper.unload();
      assert.equal(serverWarnings.length, 2, serverWarnings.join('\n'));
      assert.match(serverWarnings[1] ?? '', /^299 more like this in the last 30 s; the last: Post refused \(401\)/);
      assertNoSecret([...logTexts(), ...serverWarnings], EVENT_PASSWORD, EVENT_USER);
    });

    it('maxBody blank or the former default 16777216 is 4 MiB: a post with a 1 MB scene arrives, a 5 MiB post is 413', async function () {
      this.timeout(20_000);
      for (const maxBody of ['', '16777216']) {
        const { out, port } = await deployOne({ images: 'buffer' }, { maxBody });
        const scene = jpegGrownTo(SNAPSHOT_JPEG, SNAPSHOT_JPEG.length + 1024 * 1024);
        assert.equal(await post({ url: urlOf(port), plate: 'REAL1', scene }), 200);
        const p = await out.nextPlate('real-size post');
        assert.deepEqual((p['images'] as Record<string, unknown>)['scene'], scene);
        const huge = `${buildPlateEvent('ipc', { plate: 'HUGE1', images: false })}<!--${'h'.repeat(5 * 1024 * 1024)}-->`;
        assert.equal((await rawPost(port, huge)).status, 413, `maxBody ${JSON.stringify(maxBody)}`);
        out.assertDrained();
        await helper.unload();
      }
    });

    it('maxConnections: one sender holds at most half; another is served; an invalid value is a bad server setting', async function () {
      const { out, port } = await deployOne({}, { maxConnections: '8' });
      const sockets = await Promise.all(
        Array.from(
          { length: 20 },
          () =>
            new Promise<Socket>((resolveSocket) => {
              const socket = connect({ host: '127.0.0.1', port }, () => resolveSocket(socket));
              socket.on('error', () => undefined);
            }),
        ),
      );
      try {
        await within(
          (async () => {
            while (sockets.filter((s) => !s.destroyed && !s.readableEnded).length > 4) await new Promise((r) => setTimeout(r, 10));
          })(),
          'connections beyond 4 closed',
        );
        const allowed = await rawPost(port, buildPlateEvent('ipc', { plate: 'OTHER1', images: false }), { localAddress: '127.0.0.2' });
        assert.equal(allowed.status, 200);
        assert.equal((await out.nextPlate('from another sender'))['plate'], 'OTHER1');
      } finally {
        for (const s of sockets) s.destroy();
      }
      await helper.unload();
      await deploy(eventFlow([serverDef(await closedPort(), { maxConnections: '0' })], [[PE]]));
      const red = await waitForStatus(PE, (s) => s.fill === 'red', 'red');
      assert.equal(red.text, 'bad server setting');
      assert.ok(
        logTexts().some((t) => /maxConnections must be a whole number from 1 to 10000/.test(t)),
        'the log does not say what is wrong',
      );
    });

    it('maxBody exceeded: 413 and no message; the next valid post still arrives', async function () {
      const maxBody = 4096;
      const { out, port } = await deployOne({}, { maxBody: String(maxBody) });
      const url = urlOf(port);
      const big = buildPlateEvent('ipc', { plate: 'BIG1' });
      assert.ok(Buffer.byteLength(big) > maxBody);
      assert.equal(await post({ url, plate: 'BIG1' }), 413);
      assert.equal(await post({ url, plate: 'BIG2', format: 'nvr' }), 413);
      const small = buildPlateEvent('ipc', { plate: 'SMALL1', images: false });
      assert.ok(Buffer.byteLength(small) < maxBody);
      assert.equal(await post({ url, plate: 'SMALL1', images: false }), 200);
      assert.equal((await out.nextPlate('small'))['plate'], 'SMALL1');
      out.assertDrained();
    });
  });

  // -------------------------------------------------------------------------------------------

  describe('Send this server to the device (POST /ipcam-plate-event/configure-device)', function () {
    async function configure(body: Record<string, unknown>): Promise<{ answer: Record<string, unknown>; raw: AdminAnswer }> {
      const raw = await helper.request().post(CONFIGURE_PATH).set('content-type', 'application/json').send(body);
      assert.equal(raw.status, 200, raw.text);
      assert.ok(isRecord(raw.body), `answer is not an object: ${raw.text}`);
      return { answer: raw.body, raw };
    }

    function failure(answer: Record<string, unknown>): { code: unknown; message: unknown } {
      assert.equal(answer['ok'], false, `expected a failure, got ${JSON.stringify(answer)}`);
      assert.deepEqual(Object.keys(answer).sort(), ['error', 'ok']);
      const error = answer['error'];
      assert.ok(isRecord(error));
      assert.equal(typeof error['message'], 'string');
      return { code: error['code'], message: error['message'] };
    }

    /** What the simulator stored from SetHttpPostConfig (read anew at each call). */
    function httpPostOf(s: Simulator): Simulator['state']['httpPost'] {
      return s.state.httpPost;
    }

    async function deployWithDevice(password = SIM_PASSWORD): Promise<{ out: Outputs; port: number; s: Simulator }> {
      const s = (sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD }));
      const port = await closedPort();
      const outputs = await deploy(eventFlow([serverDef(port, { path: '/lpr' }), deviceDef(s)], [[PE, { device: DEVICE }]]), deviceCredentials(password));
      await listening(PE);
      return { out: outputsOf(outputs, PE), port, s };
    }

    it('answers ok with the target, the device stores it, and its posts then reach the node', async function () {
      const { out, port, s } = await deployWithDevice();
      assert.equal(httpPostOf(s), undefined);
      const { answer, raw } = await configure({ device: DEVICE, server: SERVER, serverIp: '127.0.0.1' });
      assert.deepEqual(Object.keys(answer).sort(), ['ok', 'target'], raw.text);
      assert.equal(answer['ok'], true);
      const target = answer['target'];
      assert.ok(isRecord(target));
      assert.equal(target['serverIp'], '127.0.0.1');
      assert.equal(target['serverPort'], port);
      assert.equal(target['path'], '/lpr');

      const stored = httpPostOf(s);
      assert.ok(stored, 'the simulator got no SetHttpPostConfig');
      assert.equal(stored.enabled, true);
      assert.equal(stored.serverIp, '127.0.0.1');
      assert.equal(stored.serverPort, port);
      assert.equal(stored.url, '/lpr');
      assertNoSecret([raw.text, JSON.stringify(raw.body)], SIM_PASSWORD);

      // No URL given: the simulator posts where it was told to.
      const results = await s.postEvent({ plate: 'CONF1', listType: 'blackList' });
      assert.deepEqual(results, [{ status: 200 }]);
      const p = await out.nextPlate('configured post');
      assert.deepEqual([p['plate'], p['listType']], ['CONF1', 'blackList']);
      out.assertDrained();
    });

    it('without serverIp uses this host address toward the device', async function () {
      const { port, s } = await deployWithDevice();
      const { answer } = await configure({ device: DEVICE, server: SERVER });
      assert.equal(answer['ok'], true, JSON.stringify(answer));
      assert.deepEqual(
        [httpPostOf(s)?.serverIp, httpPostOf(s)?.serverPort],
        ['127.0.0.1', port],
      );
    });

    it('without deployed nodes answers ok: false with EINPUT', async function () {
      await helper.load(NODES, [{ id: TAB, type: 'tab', label: 'empty' }]);
      for (const body of [{ device: DEVICE, server: SERVER, serverIp: '127.0.0.1' }, {}, { device: DEVICE }, { server: SERVER }]) {
        const { answer, raw } = await configure(body);
        const { code, message } = failure(answer);
        assert.equal(code, 'EINPUT', raw.text);
        assert.match(String(message), /deploy/i);
      }
    });

    it('with only the device or only the server deployed answers EINPUT', async function () {
      const s = (sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD }));
      await helper.load(NODES, [{ id: TAB, type: 'tab', label: 'device only' }, deviceDef(s)], deviceCredentials(SIM_PASSWORD));
      const { answer: a } = await configure({ device: DEVICE, server: SERVER, serverIp: '127.0.0.1' });
      assert.equal(failure(a).code, 'EINPUT');
      await helper.unload();
      await helper.load(NODES, [{ id: TAB, type: 'tab', label: 'server only' }, serverDef(await closedPort())]);
      const { answer: b } = await configure({ device: DEVICE, server: SERVER, serverIp: '127.0.0.1' });
      assert.equal(failure(b).code, 'EINPUT');
      assert.equal(s.state.requestCount, 0);
    });

    it('ids of nodes of another type answer EINPUT', async function () {
      const { s } = await deployWithDevice();
      // The event server as the device, the device as the server, a plate-event node as either.
      for (const body of [
        { device: SERVER, server: SERVER },
        { device: DEVICE, server: DEVICE },
        { device: PE, server: SERVER },
        { device: DEVICE, server: PE },
      ]) {
        const { answer, raw } = await configure({ ...body, serverIp: '127.0.0.1' });
        assert.equal(failure(answer).code, 'EINPUT', `${JSON.stringify(body)}: ${raw.text}`);
      }
      assert.equal(httpPostOf(s), undefined);
    });

    it('a wrong device password is EAUTH, and no password appears in the answer', async function () {
      const wrong = 'wr0ng:pa ss"wörd&x=1';
      const { s } = await deployWithDevice(wrong);
      const { answer, raw } = await configure({ device: DEVICE, server: SERVER, serverIp: '127.0.0.1' });
      assert.equal(failure(answer).code, 'EAUTH', raw.text);
      assert.equal(httpPostOf(s), undefined);
      assertNoSecret([raw.text], wrong);
      assertNoSecret([raw.text], SIM_PASSWORD);
    });
  });

  // -------------------------------------------------------------------------------------------

  describe('real posts (issue 23): as devices really post them, raw and from the simulator', function () {
    const GROUP_NODES: Array<[string, Record<string, unknown>]> = [
      ['pe-white', { lists: ['whiteList'] }],
      ['pe-residents', { groups: 'Residents' }],
      ['pe-staff', { groups: 'Staff' }],
    ];

    /** Posts a plate by group only, raw (the captured recorder post filed in a group) or from the simulator. */
    async function groupPlate(port: number, source: 'raw' | 'simulator', plate: string, group: string): Promise<number> {
      if (source === 'raw') return (await rawPost(port, recorderPlateInGroup(plate, group))).status;
      return post({ url: urlOf(port), format: 'nvr', plate, group, images: false });
    }

    for (const source of ['raw', 'simulator'] as const) {
      it(`${source}: a recorder plate by group only reaches lists whiteList when its group is Whitelist, groups Residents when Residents, and not groups Staff`, async function () {
        const port = await closedPort();
        const outputs = await deploy(eventFlow([serverDef(port)], GROUP_NODES));
        for (const [id] of GROUP_NODES) await listening(id);
        assert.equal(await groupPlate(port, source, 'WL1', 'Whitelist'), 200);
        assert.equal(await groupPlate(port, source, 'RS1', 'Residents'), 200);
        // Sent last, so that the Staff node has had every post before it when it gets this one.
        assert.equal(await groupPlate(port, source, 'ST1', 'Staff'), 200);

        const white = await outputsOf(outputs, 'pe-white').nextPlate('Whitelist plate');
        assert.deepEqual([white['plate'], white['listType'], white['group']], ['WL1', 'whiteList', 'Whitelist']);
        outputsOf(outputs, 'pe-white').assertDrained();
        const residents = await outputsOf(outputs, 'pe-residents').nextPlate('Residents plate');
        assert.deepEqual([residents['plate'], residents['listType'], residents['group']], ['RS1', 'unknown', 'Residents']);
        outputsOf(outputs, 'pe-residents').assertDrained();
        const staff = outputsOf(outputs, 'pe-staff');
        assert.equal((await staff.nextPlate('the Staff plate'))['plate'], 'ST1');
        staff.assertDrained();
      });
    }

    it('raw: one kept-alive connection with an empty keep-alive, 20 tracking posts, a 20-digit-time plate and a normal plate: 23 answers of 200, both plates, the odd one at the receive time, no tracking message', async function () {
      const { out, port } = await deployOne();
      const before = Date.now();
      const answers = await postOnOneConnection(port, mixedConnection());
      const after = Date.now();
      assert.equal(answers.length, 23);
      assert.deepEqual(
        answers.map((a) => a.status),
        Array.from({ length: 23 }, () => 200),
      );
      assert.ok(answers.every((a) => a.body === SUCCESS_DOCUMENT));
      assert.equal((getNode(SERVER) as unknown as EventServerConfigNode).server?.trackingPosts, 20);
      await waitForStatus(PE, (s) => /^alive /.test(String(s.text)), 'alive after the empty keep-alive');
      const odd = await out.nextPlate('the 20-digit-time plate');
      assert.equal(odd['plate'], 'JP116D');
      const oddTime = Date.parse(String(odd['time']));
      assert.ok(oddTime >= before - 1 && oddTime <= after + 1, `the receive time, got ${String(odd['time'])}`);
      const normal = await out.nextPlate('the normal plate');
      assert.deepEqual([normal['plate'], normal['time']], ['ABC1234', '2024-11-19T19:40:34.584Z']);
      out.assertDrained();
    });

    it('simulator: the same on one kept-alive camera connection (empty keep-alive, a tracking burst of 20, a 20-digit-time plate, a normal plate)', async function () {
      const { out, port } = await deployOne();
      const url = urlOf(port);
      const before = Date.now();
      const statuses: number[] = [];
      for (const options of [
        { kind: 'keepalive', empty: true },
        { kind: 'tracking', count: 20, ratePerSecond: 12 },
        { plate: 'ODD1', currentTime: BROKEN_CURRENT_TIME, images: false },
        { plate: 'NORMAL1', images: false, time: Date.UTC(2026, 0, 1) },
      ] as PostEventOptions[]) {
        for (const r of await poster.postEvent({ url, ...options })) statuses.push(r.status);
      }
      const after = Date.now();
      assert.deepEqual(
        statuses,
        Array.from({ length: 23 }, () => 200),
      );
      await waitForStatus(PE, (s) => /^alive /.test(String(s.text)), 'alive after the empty keep-alive');
      const odd = await out.nextPlate('the 20-digit-time plate');
      assert.equal(odd['plate'], 'ODD1');
      const oddTime = Date.parse(String(odd['time']));
      assert.ok(oddTime >= before - 1 && oddTime <= after + 1, `the receive time, got ${String(odd['time'])}`);
      const normal = await out.nextPlate('the normal plate');
      assert.deepEqual([normal['plate'], normal['time']], ['NORMAL1', '2026-01-01T00:00:00.000Z']);
      out.assertDrained();
      const server = (getNode(SERVER) as unknown as EventServerConfigNode).server;
      assert.equal(server?.connections, 1, 'all on the one connection the camera keeps');
      assert.equal(server.trackingPosts, 20, 'the tracking posts were counted and dropped');
    });

    it('direction leave is away on the plate output; a recorder single-target eventInfo/item is an array on the other output', async function () {
      const { out, port } = await deployOne();
      assert.equal((await rawPost(port, cameraPlateWithDirection('leave'))).status, 200);
      assert.equal((await out.nextPlate('leave'))['direction'], 'away');
      assert.equal(await post({ url: urlOf(port), plate: 'LV1', direction: 'leave', images: false }), 200);
      assert.equal((await out.nextPlate('leave from the simulator'))['direction'], 'away');
      assert.equal((await rawPost(port, readFileSync(resolve(CAPTURES, 'nvr-v2/line-crossing.xml')))).status, 200);
      const event = await out.nextOther('line crossing');
      const data = event['data'];
      assert.ok(isRecord(data) && isRecord(data['eventInfo']));
      const items = data['eventInfo']['item'];
      assert.ok(Array.isArray(items) && items.length === 1, `eventInfo.item: ${JSON.stringify(items)}`);
      out.assertDrained();
    });

    for (const [what, settings] of [
      ['a dedup that is no number', { dedup: 'ten' }],
      ['a dedup above a day', { dedup: '86401' }],
      ['an unknown images mode', { images: 'full' }],
    ] as const) {
      it(`${what} is a red bad setting status and an error naming it`, async function () {
        const port = await closedPort();
        await deploy(eventFlow([serverDef(port)], [[PE, settings]]));
        const s = await waitForStatus(PE, (st) => st.text === 'bad setting', 'bad setting');
        assert.deepEqual([s.fill, s.shape], ['red', 'ring']);
        const [name] = Object.keys(settings);
        const named = new RegExp(`the setting ${name} `);
        await waitFor(`an error naming ${name}`, () => logTexts().some((t) => named.test(t)));
      });
    }

    it('an invalid groups setting is a red bad group filter status and an error, no crash', async function () {
      const port = await closedPort();
      await deploy(eventFlow([serverDef(port)], [[PE, { groups: `Residents, ${'x'.repeat(65)}` }]]));
      const s = await waitForStatus(PE, (st) => st.text === 'bad group filter', 'bad group filter');
      assert.deepEqual([s.fill, s.shape], ['red', 'ring']);
    });
  });

  // -------------------------------------------------------------------------------------------

  describe('redeploy', function () {
    it('loading and unloading a server with 5 plate-event nodes 100 times leaves no handle and frees the port each time', async function () {
      this.timeout(180_000);
      const port = await closedPort();
      const ids = ['pe-a', 'pe-b', 'pe-c', 'pe-d', 'pe-e'];
      const flow = eventFlow(
        [serverDef(port)],
        ids.map((id): [string, Record<string, unknown>] => [id, {}]),
      );
      const before = await settledHandles();
      for (let round = 0; round < 100; round++) {
        const outputs = await deploy(flow);
        for (const id of ids) await listening(id);
        const answer = await rawPost(port, buildPlateEvent(round % 2 === 0 ? 'ipc' : 'nvr', { plate: `R${round}`, images: false }));
        assert.equal(answer.status, 200, `round ${round}`);
        for (const id of ids) assert.equal((await outputsOf(outputs, id).nextPlate(`round ${round}`))['plate'], `R${round}`);
        await helper.unload();
        await assertPortFree(port);
      }
      const after = await settledHandles();
      assert.ok(after.length <= before.length, `handles before: ${before.join(', ')}; after: ${after.join(', ')}`);
    });
  });
});
