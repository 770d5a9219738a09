/**
 * The dashboard widgets against browsers that are strangers (DESIGN, "Dashboard widgets: what a
 * browser may ask"): bare socket.io clients, no page, talking to Dashboard 2 of the lock file in a
 * real Node-RED child, with simulators as the cameras. What a client sends beyond the closed list
 * of actions reaches neither the flow, nor another viewer, nor any device; the warning is
 * rate-limited; the device's frame rate, a refused password and the PTZ pad hold whatever the
 * clients do.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { startSimulator, type Simulator } from '../lib/simulator';
import { expectQuiet } from './helpers';
import { ChildRuntime, type FlowNode } from './runtime-child';

const USER = 'stranger-test';
const PASSWORD = 'Str-9c2e!pass';
const RATE = 2;
const WAIT = 20000;
const SNAPSHOT = '/jpg/image.jpg';
/** Bytes no camera sends: a picture a client tries to show the other viewers. */
const MARKER = 'FORGED-PICTURE-7d1e';

async function until(what: string, check: () => boolean, limit = WAIT): Promise<void> {
  const deadline = Date.now() + limit;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Client {
  socket: Socket;
  /** Every event the client received, in order. */
  got: Array<{ event: string; data: unknown }>;
  action(id: string, msg: unknown): void;
  close(): void;
}

function flows(sim: Simulator, other: Simulator, locked: Simulator, files: { actions: string }): FlowNode[] {
  const device = (id: string, name: string, s: Simulator): FlowNode => ({ id, type: 'ipcam-device', name, host: '127.0.0.1', port: String(s.port), protocol: 'http', auth: 'auto', timeout: '3000', heartbeat: '0', credentials: { username: USER, password: PASSWORD } });
  const camera = (id: string, dev: string, extra: Record<string, unknown> = {}): FlowNode => ({ id, type: 'ipcam-ui-camera', z: 's0tab', group: 's0group', order: 1, width: '4', height: '4', label: `view of ${dev}`, device: dev, source: 'jpg', rate: String(RATE), ptz: 'xml', presets: '2', showPlates: true, wires: [['s0file']], ...extra });
  return [
    { id: 's0tab', type: 'tab', label: 'strangers' },
    { id: 's0base', type: 'ui-base', name: 'ui', path: '/dashboard', includeClientData: true, acceptsClientConfig: ['ui-notification', 'ui-control'], showPathInSidebar: false, navigationStyle: 'default', titleBarStyle: 'default' },
    { id: 's0theme', type: 'ui-theme', name: 'theme', colors: { surface: '#ffffff', primary: '#0d74ce', bgPage: '#eeeeee', groupBg: '#ffffff', groupOutline: '#cccccc' }, sizes: { density: 'default', pagePadding: '12px', groupGap: '12px', groupBorderRadius: '4px', widgetGap: '12px' } },
    { id: 's0page', type: 'ui-page', name: 'Gate', ui: 's0base', path: '/gate', layout: 'grid', theme: 's0theme', order: 1, visible: 'true', disabled: 'false' },
    { id: 's0group', type: 'ui-group', name: 'Gate', page: 's0page', width: '12', height: '1', order: 1, showTitle: true, visible: 'true', disabled: 'false', groupType: 'default' },
    device('s0dev', 'Gate cam', sim),
    // A camera on no dashboard: a browser must never reach it, by id or by name.
    device('s0other', 'Other cam', other),
    device('s0locked', 'Locked cam', locked),
    camera('s0cam', 's0dev'),
    // A second widget of the same camera: the camera's rate holds across both.
    camera('s0cam2', 's0dev', { ptz: 'none', presets: '', showPlates: false }),
    camera('s0lock', 's0locked', { ptz: 'none', presets: '', showPlates: false, wires: [[]] }),
    { id: 's0plates', type: 'ipcam-ui-plates', z: 's0tab', group: 's0group', order: 2, width: '4', height: '4', label: 'plates', count: '5', wires: [['s0file']] },
    // A real plate event, as ipcam-plate-event would send it (the sender's address included).
    { id: 's0row', type: 'inject', z: 's0tab', props: [{ p: 'payload' }, { p: 'topic', vt: 'str' }], topic: 'REAL1', payload: JSON.stringify({ plate: 'REAL1', listType: 'whiteList', time: '2026-01-02T03:04:05.000Z', sender: '10.1.2.3', device: { name: 'Gate cam', ip: '10.1.2.3' } }), payloadType: 'json', repeat: '', once: false, wires: [['s0plates', 's0cam']] },
    // An ipcam node that is no widget: a client naming it must not make it send either.
    // Answers once the flows have started (a deploy is answered before).
    { id: 's0ready', type: 'inject', z: 's0tab', props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, wires: [[]] },
    { id: 's0wake', type: 'inject', z: 's0tab', props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, wires: [['s0snap']] },
    { id: 's0snap', type: 'ipcam-snapshot', z: 's0tab', device: 's0locked', source: 'jpg', format: 'buffer', wires: [['s0snapfn']] },
    { id: 's0snapfn', type: 'function', z: 's0tab', func: "return { payload: { from: 's0snap', snapshot: Buffer.isBuffer(msg.payload) } };", outputs: 1, wires: [['s0file']] },
    { id: 's0file', type: 'file', z: 's0tab', filename: files.actions, filenameType: 'str', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', wires: [[]] },
  ];
}

describe('Dashboard 2 widgets and strangers: bare socket.io clients (no page)', function () {
  this.timeout(180000);

  let sim: Simulator;
  let other: Simulator;
  let locked: Simulator;
  let red: ChildRuntime;
  const tmp = mkdtempSync(join(tmpdir(), 'ipcam-strangers-'));
  const actionsFile = join(tmp, 'actions.jsonl');
  const clients: Client[] = [];

  const actions = (): Array<Record<string, unknown>> =>
    existsSync(actionsFile)
      ? readFileSync(actionsFile, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
  const snapshots = (s: Simulator, since = 0): number => s.state.requests.filter((r) => r.path === SNAPSHOT && r.time >= since).length;
  const logins = (s: Simulator, since = 0): number => s.state.requests.filter((r) => r.path === SNAPSHOT && r.time >= since && r.headers['authorization'] !== undefined).length;
  const views = (c: Client, id: string): Array<Record<string, unknown>> =>
    c.got.filter((g) => g.event === `msg-input:${id}`).map((g) => (g.data ?? {}) as Record<string, unknown>);
  const cameraViews = (c: Client, id: string): Array<Record<string, unknown>> => views(c, id).flatMap((d) => (typeof d['view'] === 'object' && d['view'] !== null ? [d['view'] as Record<string, unknown>] : []));
  const notices = (c: Client, id: string): string[] => views(c, id).flatMap((d) => (typeof d['notice'] === 'string' ? [d['notice']] : []));
  const warningsOf = (socketId: string | undefined): string[] => red.output.split('\n').filter((l) => l.includes('[warn]') && l.includes(`dashboard client ${socketId ?? '?'}`));
  const warnings = (c: Client): string[] => warningsOf(c.socket.id);
  /** Fires an inject node; a 404 is a flow still starting after a deploy, asked again. */
  const inject = async (id: string): Promise<void> => {
    const deadline = Date.now() + WAIT;
    for (;;) {
      const res = await fetch(`${red.adminUrl}/inject/${id}`, { method: 'POST' });
      await res.arrayBuffer();
      if (res.status !== 404 || Date.now() > deadline) return assert.equal(res.status, 200, `inject ${id}`);
      await sleep(100);
    }
  };

  /** A new client; right after a deploy the dashboard may not listen yet, so a refused connection is tried again. */
  async function connect(): Promise<Client> {
    const deadline = Date.now() + WAIT;
    let socket: Socket;
    let got: Client['got'];
    for (;;) {
      socket = io(red.adminUrl, { path: '/dashboard/socket.io', forceNew: true, reconnection: false });
      const s = socket;
      const events: Client['got'] = [];
      got = events;
      s.onAny((event: string, ...args: unknown[]) => events.push({ event, data: args[0] }));
      const error = await new Promise<Error | undefined>((resolve) => {
        s.once('connect', () => resolve(undefined));
        s.once('connect_error', (err) => resolve(err));
      });
      if (!error) break;
      s.close();
      if (Date.now() > deadline) throw error;
      await sleep(200);
    }
    const events = got;
    await until('the dashboard config', () => events.some((g) => g.event === 'ui-config'));
    const client: Client = {
      socket,
      got,
      action: (id, msg) => void socket.emit('widget-action', id, msg),
      close: () => void socket.disconnect(),
    };
    clients.push(client);
    return client;
  }

  before(async function () {
    sim = await startSimulator({ port: 0, username: USER, password: PASSWORD });
    other = await startSimulator({ port: 0, username: USER, password: PASSWORD });
    locked = await startSimulator({ port: 0, username: USER, password: PASSWORD });
    red = new ChildRuntime({ dashboard: true });
    await red.start();
    await red.deploy(flows(sim, other, locked, { actions: actionsFile }));
    await inject('s0ready');
  });

  afterEach(async function () {
    for (const c of clients.splice(0)) c.close();
    // Nobody watches between tests: each test's counts are its own.
    await sleep(300);
  });

  after(async function () {
    await red?.stop();
    await Promise.all([sim?.close(), other?.close(), locked?.close()]);
    rmSync(tmp, { recursive: true, force: true });
  });

  it("takes none of a client's widget-send, widget-change or unlisted widget-action: nothing reaches the flow, another viewer or a device; one warning per client", async function () {
    // A real row and a real frame first: what the attack tries to replace.
    await inject('s0row');
    const viewer = await connect();
    viewer.action('s0cam', { action: 'watch' });
    viewer.action('s0plates', { action: 'watch' });
    await until('a frame for the viewer', () => cameraViews(viewer, 's0cam').some((v) => typeof (v['frame'] as { image?: unknown } | undefined)?.image === 'string'));
    await until('the row for the viewer', () => views(viewer, 's0plates').some((d) => Array.isArray(d['rows']) && (d['rows'] as unknown[]).length === 1));

    const stranger = await connect();
    stranger.action('s0cam', { action: 'watch' });
    stranger.action('s0plates', { action: 'watch' });
    await until('the stranger watches', () => views(stranger, 's0cam').length > 0 && views(stranger, 's0plates').length > 0);
    const flowBefore = actions().length;
    const ptzBefore = sim.state.ptz.log.length;
    expectQuiet(other, 'the camera on no dashboard was asked');
    expectQuiet(locked, 'another camera was asked', (r) => r.path === SNAPSHOT);
    expectQuiet(sim.state.ptz.log, 'a PTZ command from a stranger');
    const picture = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from(MARKER)]);
    const forgedRow = { plate: 'FORGED1', listType: 'whiteList', time: '2026-01-02T03:04:05.000Z', device: { name: 'Gate cam' } };
    const hostile: unknown[] = [
      { device: 's0other' },
      { device: 'Other cam' },
      { device: 's0other', payload: 'pause' },
      { payload: picture, contentType: 'image/jpeg' },
      { payload: 'pause' },
      { payload: forgedRow },
      { payload: forgedRow, topic: 'FORGED1' },
    ];
    for (const id of ['s0cam', 's0plates', 's0snap']) {
      for (const msg of hostile) {
        stranger.socket.emit('widget-send', id, msg);
        stranger.socket.emit('widget-change', id, msg);
        stranger.action(id, msg);
      }
    }
    const unlisted: unknown[] = [
      { action: 'press', move: 'Up', device: 's0other' },
      { action: 'watch', device: 's0other' },
      { action: 'press', move: 'Stop' },
      { action: 'press', move: ['Up'] },
      { action: 'press' },
      { action: 'preset', preset: '7' },
      { action: 'preset', preset: 2 },
      { action: 'pause' },
      { action: 'resume' },
      { action: 'frame', image: picture },
      { action: 'save', payload: picture },
      { ipcam: { kind: 'press', action: 'Up' } },
      { kind: 'press', action: 'Up' },
      'pause',
      ['press', 'Up'],
      { action: 'select', row: 1, payload: forgedRow },
      { action: 'select', row: '1' },
      { action: 'select', row: 1.5 },
      { action: 'select', row: 987654 },
      { action: 'x'.repeat(600_000) },
      { action: 'press', move: 'Up', pad: 'x'.repeat(600_000) },
      { action: 'select', row: 1, rows: Array.from({ length: 20_000 }, (_, i) => ({ id: i, plate: 'FORGED2' })) },
    ];
    for (const id of ['s0cam', 's0plates']) for (const msg of unlisted) stranger.action(id, msg);

    // One warning per widget for this client, at once; the rest only counted.
    await until('the warnings', () => warnings(stranger).length >= 2);
    // By its id: a closed client has none.
    const strangerId = stranger.socket.id;
    expectQuiet(() => warningsOf(strangerId).length, 'more than one warning per widget for this client');
    await sleep(1500);
    const lines = warnings(stranger);
    assert.equal(lines.filter((l) => l.includes('[ipcam-ui-camera:s0cam]')).length, 1, lines.join('\n'));
    assert.equal(lines.filter((l) => l.includes('[ipcam-ui-plates:s0plates]')).length, 1, lines.join('\n'));
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.equal(warnings(viewer).length, 0);

    assert.deepEqual(actions().slice(flowBefore), [], 'nothing reached the flow');
    assert.equal(other.state.requestCount, 0, 'the camera on no dashboard was never asked');
    assert.equal(locked.state.requests.filter((r) => r.path === SNAPSHOT).length, 0, 'nor the other cameras');
    assert.deepEqual(sim.state.ptz.log.slice(ptzBefore), [], 'no PTZ command');
    for (const c of [viewer, stranger]) {
      const seen = JSON.stringify(c.got.map((g) => g.data));
      assert.ok(!seen.includes(Buffer.from(MARKER).toString('base64').slice(0, 16)) && !seen.includes(MARKER), 'no forged picture shown');
      assert.ok(!seen.includes('FORGED'), 'no forged row or plate shown');
      assert.ok(!cameraViews(c, 's0cam').some((v) => v['state'] === 'paused'), 'never paused');
    }
    // The viewer still gets the camera's frames.
    const framesBefore = cameraViews(viewer, 's0cam').length;
    await until('more frames', () => cameraViews(viewer, 's0cam').length > framesBefore + 1);

    // A selected row sends the event the server stored, never the client's copy.
    const rows = views(viewer, 's0plates').find((d) => Array.isArray(d['rows']))?.['rows'] as Array<{ id: number; plate: string }>;
    const real = rows.find((r) => r.plate === 'REAL1');
    assert.ok(real, 'the real row');
    viewer.action('s0plates', { action: 'select', row: real.id });
    await until('the selected event', () => actions().slice(flowBefore).length === 1);
    assert.deepEqual(actions().slice(flowBefore), [{ plate: 'REAL1', listType: 'whiteList', time: '2026-01-02T03:04:05.000Z', sender: '10.1.2.3', device: { name: 'Gate cam', ip: '10.1.2.3' } }]);
    // The row as the browser got it holds no address.
    assert.ok(!JSON.stringify(viewer.got.map((g) => g.data)).includes('10.1.2.3'));

    // Another client's first bad message is warned of at once: the limit is per client.
    const second = await connect();
    second.socket.emit('widget-send', 's0cam', { payload: 'pause' });
    await until('its own warning', () => warnings(second).length === 1);
  });

  it('100 watch/unwatch toggles in a second: the camera sees at most rate x elapsed + 1 snapshots', async function () {
    const c = await connect();
    await sleep(1200);
    const start = Date.now();
    for (let i = 0; i < 100; i++) {
      c.action('s0cam', { action: 'watch' });
      c.action('s0cam', { action: 'unwatch' });
      await sleep(9);
    }
    // The last toggle leaves it watched: that viewer is served.
    c.action('s0cam', { action: 'watch' });
    await until('a new frame', () => cameraViews(c, 's0cam').some((v) => ((v['frame'] as { at?: number } | undefined)?.at ?? 0) >= start));
    c.action('s0cam', { action: 'unwatch' });
    await sleep(700);
    const elapsed = (Date.now() - start) / 1000;
    const seen = snapshots(sim, start);
    assert.ok(seen <= Math.floor(RATE * elapsed) + 1, `${seen} snapshot requests in ${elapsed.toFixed(2)} s at ${RATE}/s`);
    assert.ok(seen >= 1, 'the watching client was served');
  });

  it("two widgets of one camera with viewers each: the camera's rate holds across both, and each gets frames", async function () {
    const a = await connect();
    const b = await connect();
    await sleep(1200);
    const start = Date.now();
    a.action('s0cam', { action: 'watch' });
    b.action('s0cam2', { action: 'watch' });
    b.action('s0cam', { action: 'watch' });
    await sleep(4000);
    a.close();
    b.close();
    await sleep(700);
    const elapsed = (Date.now() - start) / 1000;
    const seen = snapshots(sim, start);
    assert.ok(seen <= Math.floor(RATE * elapsed) + 1, `${seen} snapshot requests in ${elapsed.toFixed(2)} s at ${RATE}/s for two widgets`);
    for (const id of ['s0cam', 's0cam2']) {
      const frames = cameraViews(b, id).filter((v) => typeof (v['frame'] as { image?: unknown } | undefined)?.image === 'string');
      assert.ok(frames.length >= 3, `${id}: ${frames.length} frames`);
    }
  });

  it('a camera that refuses the password: at most 2 login attempts, the widget says why, and frames again once the camera is online', async function () {
    const since = Date.now();
    locked.state.faults.push({ kind: 'status', status: 401 });
    const c = await connect();
    c.action('s0lock', { action: 'watch' });
    await until('the refusal shown', () => cameraViews(c, 's0lock').some((v) => v['state'] === 'auth-failed'));
    // Toggling does not bring a new attempt either.
    for (let i = 0; i < 20; i++) {
      c.action('s0lock', { action: 'unwatch' });
      c.action('s0lock', { action: 'watch' });
      await sleep(50);
    }
    await sleep(4000);
    assert.ok(logins(locked, since) <= 2, `${logins(locked, since)} login attempts`);
    const view = cameraViews(c, 's0lock').at(-1) ?? {};
    assert.equal(view['state'], 'auth-failed');
    assert.match(String(view['error']), /^EAUTH/);

    // Fixed on the camera; another node's request gets an answer: the device is online again.
    locked.clearFaults();
    const offline = expectQuiet(locked, 'an attempt before the device is online again', (r) => r.path === SNAPSHOT && r.headers['authorization'] !== undefined);
    await sleep(1500);
    assert.ok(logins(locked, since) <= 2, 'no attempt before the device is online again');
    offline.end();
    await inject('s0wake');
    await until('a frame again', () => cameraViews(c, 's0lock').at(-1)?.['state'] === 'live');
  });

  it('one PTZ holder at a time: another viewer moves the camera after the timed stop of a press never released, or when its holder leaves', async function () {
    this.timeout(60000);
    const holder = await connect();
    const other2 = await connect();
    holder.action('s0cam', { action: 'watch' });
    other2.action('s0cam', { action: 'watch' });
    await until('both watch', () => views(holder, 's0cam').length > 0 && views(other2, 's0cam').length > 0);
    const from = sim.state.ptz.log.length;
    const moves = (): string[] => sim.state.ptz.log.slice(from).map((p) => p.action);
    holder.action('s0cam', { action: 'press', move: 'Up' });
    await until('the move', () => moves().includes('Up'));
    const waiting = expectQuiet(sim.state.ptz.log, 'the second press did not wait', (p) => p.action === 'Left');
    other2.action('s0cam', { action: 'press', move: 'Left' });
    await until('told why not', () => notices(other2, 's0cam').includes('another viewer is moving the camera'));
    await sleep(500);
    assert.deepEqual(moves(), ['Up'], 'the second press waits');
    waiting.end();

    // Never released: the timed move stops the camera after 20 s, and the pad is free again.
    await until('the timed Stop', () => moves().includes('Stop'), 25000);
    await sleep(200);
    other2.action('s0cam', { action: 'press', move: 'Left' });
    await until('the other viewer moves it', () => moves().includes('Left'));
    other2.action('s0cam', { action: 'release' });
    await until('its Stop', () => moves().filter((m) => m === 'Stop').length === 2);

    // A holder that leaves (a tab closed, a page hidden sends its release) frees the pad at once.
    holder.action('s0cam', { action: 'press', move: 'Right' });
    await until('the move', () => moves().includes('Right'));
    holder.close();
    await until('the Stop', () => moves().filter((m) => m === 'Stop').length === 3);
    other2.action('s0cam', { action: 'press', move: 'Down' });
    await until('the other viewer moves it', () => moves().includes('Down'));
    other2.action('s0cam', { action: 'release' });
    await until('its Stop', () => moves().filter((m) => m === 'Stop').length === 4);
    assert.deepEqual(moves(), ['Up', 'Stop', 'Left', 'Stop', 'Right', 'Stop', 'Down', 'Stop']);
  });

  it("'save' sends the frame shown out of the output and tells the client; the plates keep their rows across a redeploy", async function () {
    const c = await connect();
    c.action('s0cam', { action: 'watch' });
    await until('a frame', () => cameraViews(c, 's0cam').some((v) => typeof (v['frame'] as { image?: unknown } | undefined)?.image === 'string'));
    const before = actions().length;
    c.action('s0cam', { action: 'save' });
    await until('the notice', () => notices(c, 's0cam').includes('frame sent to the flow'));
    await until('the frame in the flow', () => actions().length > before);
    assert.equal(typeof actions()[before]?.['snapshot'], 'object');

    const lockView = await connect();
    lockView.action('s0lock', { action: 'save' });
    lockView.action('s0lock', { action: 'watch' });
    await until('a frame', () => cameraViews(lockView, 's0lock').some((v) => typeof (v['frame'] as { image?: unknown } | undefined)?.image === 'string'));
    lockView.action('s0lock', { action: 'save' });
    await until('told that nothing is wired', () => notices(lockView, 's0lock').some((n) => /nothing is wired/.test(n)));

    for (const x of clients.splice(0)) x.close();
    await red.deploy(flows(sim, other, locked, { actions: actionsFile }));
    await inject('s0ready');
    const after = await connect();
    after.action('s0plates', { action: 'watch' });
    await until('the rows', () => views(after, 's0plates').some((d) => Array.isArray(d['rows'])));
    const rows = views(after, 's0plates').find((d) => Array.isArray(d['rows']))?.['rows'] as Array<{ plate: string }>;
    assert.deepEqual(
      rows.map((r) => r.plate),
      ['REAL1'],
    );
  });
});
