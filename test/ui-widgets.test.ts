/**
 * The Dashboard 2 widgets (ipcam-ui-camera, ipcam-ui-plates) in Chromium against Dashboard 2 of
 * the lock file, in a real Node-RED child process with the simulator as the camera: live
 * snapshots only while someone looks and one per tick for all, PTZ press and release, a tab
 * closed mid-move, plates within 1 s, and no secret or device address in anything the browser gets.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startSimulator, type Simulator } from '../lib/simulator';
import { ChildRuntime, freePort, type FlowNode } from './runtime-child';
import { launchBrowser, needBrowser } from './browser';
import { expectQuiet } from './helpers';

const USER = 'widget-user';
const PASSWORD = 'Wdg-7f3a!pass';
const RATE = 2;
const WAIT = 20000;

const snapshotRequests = (sim: Simulator): number => sim.state.requests.filter((r) => r.path === '/jpg/image.jpg').length;

async function until(what: string, check: () => boolean, limit = WAIT): Promise<void> {
  const deadline = Date.now() + limit;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function flows(simPort: number, eventPort: number, actionsFile: string, devicesFile: string): FlowNode[] {
  return [
    { id: 'w0tab', type: 'tab', label: 'widgets' },
    { id: 'w0base', type: 'ui-base', name: 'ui', path: '/dashboard', includeClientData: true, acceptsClientConfig: ['ui-notification', 'ui-control'], showPathInSidebar: false, navigationStyle: 'default', titleBarStyle: 'default' },
    { id: 'w0theme', type: 'ui-theme', name: 'theme', colors: { surface: '#ffffff', primary: '#0d74ce', bgPage: '#eeeeee', groupBg: '#ffffff', groupOutline: '#cccccc' }, sizes: { density: 'default', pagePadding: '12px', groupGap: '12px', groupBorderRadius: '4px', widgetGap: '12px' } },
    { id: 'w0page', type: 'ui-page', name: 'Camera', ui: 'w0base', path: '/cam', layout: 'grid', theme: 'w0theme', order: 1, visible: 'true', disabled: 'false' },
    { id: 'w0group', type: 'ui-group', name: 'Gate', page: 'w0page', width: '12', height: '1', order: 1, showTitle: true, visible: 'true', disabled: 'false', groupType: 'default' },
    { id: 'w0dev', type: 'ipcam-device', name: 'Gate cam', host: '127.0.0.1', port: String(simPort), protocol: 'http', auth: 'auto', timeout: '5000', heartbeat: '0', credentials: { username: USER, password: PASSWORD } },
    { id: 'w0srv', type: 'ipcam-event-server', name: 'events', port: String(eventPort), bind: '127.0.0.1', path: '/' },
    { id: 'w0cam', type: 'ipcam-ui-camera', z: 'w0tab', group: 'w0group', order: 1, width: '6', height: '5', label: 'Gate', device: 'w0dev', source: 'jpg', rate: String(RATE), ptz: 'xml', presets: '2', showPlates: true, wires: [['w0file', 'w0dfn']] },
    { id: 'w0plates', type: 'ipcam-ui-plates', z: 'w0tab', group: 'w0group', order: 2, width: '6', height: '5', label: 'Last plates', count: '10', wires: [['w0file']] },
    // Widgets that follow the event server themselves, no input wire: every post, the gate cam's, another device's.
    { id: 'w0page2', type: 'ui-page', name: 'Plates', ui: 'w0base', path: '/plates', layout: 'grid', theme: 'w0theme', order: 2, visible: 'true', disabled: 'false' },
    { id: 'w0group2', type: 'ui-group', name: 'Followed', page: 'w0page2', width: '12', height: '1', order: 1, showTitle: true, visible: 'true', disabled: 'false', groupType: 'default' },
    { id: 'w0other', type: 'ipcam-device', name: 'Other cam', host: '127.0.0.2', port: '80', protocol: 'http', auth: 'auto', timeout: '5000', heartbeat: '0' },
    { id: 'w0all', type: 'ipcam-ui-plates', z: 'w0tab', group: 'w0group2', order: 1, width: '4', height: '4', label: 'All posts', count: '3', server: 'w0srv', wires: [['w0file']] },
    { id: 'w0mine', type: 'ipcam-ui-plates', z: 'w0tab', group: 'w0group2', order: 2, width: '4', height: '4', label: 'Gate cam only', count: '3', server: 'w0srv', device: 'w0dev', wires: [[]] },
    { id: 'w0theirs', type: 'ipcam-ui-plates', z: 'w0tab', group: 'w0group2', order: 3, width: '4', height: '4', label: 'Other cam only', count: '3', server: 'w0srv', device: 'w0other', wires: [[]] },
    // A widget of a flow written by hand: no label, size or Rows.
    { id: 'w0bare', type: 'ipcam-ui-plates', z: 'w0tab', group: 'w0group2', order: 4, wires: [[]] },
    { id: 'w0pe', type: 'ipcam-plate-event', z: 'w0tab', server: 'w0srv', images: 'base64', dedup: '0', wires: [['w0cam', 'w0plates'], []] },
    // What each camera action names as its device, beside the action it came with.
    { id: 'w0dfn', type: 'function', z: 'w0tab', func: 'return { payload: { device: msg.device, action: Object.keys(msg.payload) } };', outputs: 1, wires: [['w0dfile']] },
    { id: 'w0dfile', type: 'file', z: 'w0tab', filename: devicesFile, filenameType: 'str', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', wires: [[]] },
    { id: 'w0file', type: 'file', z: 'w0tab', filename: actionsFile, filenameType: 'str', appendNewline: true, createDir: true, overwriteFile: 'false', encoding: 'utf8', wires: [[]] },
  ];
}

describe('Dashboard 2 widgets: ipcam-ui-camera and ipcam-ui-plates (Chromium)', function () {
  this.timeout(120000);

  let sim: Simulator;
  let red: ChildRuntime;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let eventPort: number;
  let url: string;
  const tmp = mkdtempSync(join(tmpdir(), 'ipcam-widgets-'));
  const actionsFile = join(tmp, 'actions.jsonl');
  const devicesFile = join(tmp, 'devices.jsonl');
  /** Everything the browser got: page and script bodies, socket frames both ways. */
  const seen: string[] = [];
  const browserErrors: string[] = [];
  const ptz = (): Array<{ action: string }> => sim.state.ptz.log;
  const lines = (file: string): Array<Record<string, unknown>> =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
  const actions = (): Array<Record<string, unknown>> => lines(actionsFile);

  async function open(path = '/cam'): Promise<Page> {
    const page = await context.newPage();
    page.on('pageerror', (err) => browserErrors.push(`page error: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') browserErrors.push(`console.error: ${m.text()}`);
    });
    page.on('response', (res) => {
      void res.text().then(
        (t) => seen.push(t),
        () => undefined,
      );
    });
    page.on('websocket', (ws) => {
      ws.on('framereceived', (f) => seen.push(typeof f.payload === 'string' ? f.payload : f.payload.toString('latin1')));
      ws.on('framesent', (f) => seen.push(typeof f.payload === 'string' ? f.payload : f.payload.toString('latin1')));
    });
    await page.goto(`${url}/dashboard${path}`);
    return page;
  }

  before(async function () {
    needBrowser(this, 'dashboard widgets');
    sim = await startSimulator({ port: 0, username: USER, password: PASSWORD });
    eventPort = await freePort();
    red = new ChildRuntime({ dashboard: true });
    await red.start();
    url = red.adminUrl;
    await red.deploy(flows(sim.port, eventPort, actionsFile, devicesFile));
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1300, height: 900 } });
    const origin = new URL(url).origin;
    await context.route((u) => u.origin !== origin && u.protocol !== 'data:', (route) => route.abort('blockedbyclient'));
  });

  after(async function () {
    await browser?.close();
    await red?.stop();
    await sim?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('takes no snapshot while no dashboard client is connected', async function () {
    expectQuiet(sim, 'a snapshot while no dashboard client is connected', (r) => r.path === '/jpg/image.jpg');
    await sleep(2000);
    assert.equal(snapshotRequests(sim), 0, red.output);
  });

  it('shows a real JPEG from the camera and updates it', async function () {
    const page = await open();
    const img = page.locator('img.ipcam-ui-camera-image');
    await img.waitFor({ state: 'visible', timeout: WAIT });
    const first = await img.getAttribute('src');
    assert.match(first ?? '', /^data:image\/jpeg;base64,/);
    const jpeg = Buffer.from((first ?? '').split(',')[1] ?? '', 'base64');
    assert.equal(jpeg.subarray(0, 3).toString('hex'), 'ffd8ff');
    const decoded = await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth);
    assert.ok(decoded > 0, 'the browser decoded it');
    // Updates: a later frame (the simulator's picture changes per request, or at least its arrival does).
    const before = snapshotRequests(sim);
    await until('a newer frame', () => snapshotRequests(sim) >= before + 2);
    await page.close();
  });

  it('shows a failed frame as its error, not a broken image', async function () {
    const page = await open();
    await page.locator('img.ipcam-ui-camera-image').waitFor({ state: 'visible', timeout: WAIT });
    sim.state.faults.push({ kind: 'status', status: 500, path: '/jpg/image.jpg', times: 2 });
    const error = page.locator('.ipcam-ui-camera-error');
    await error.waitFor({ state: 'visible', timeout: WAIT });
    assert.match((await error.textContent()) ?? '', /^EHTTP: HTTP 500$/);
    // The last good picture stays; no broken image.
    assert.match((await page.locator('img.ipcam-ui-camera-image').getAttribute('src')) ?? '', /^data:image\/jpeg;base64,/);
    // The next good frame clears it.
    await error.waitFor({ state: 'detached', timeout: WAIT });
    await page.close();
  });

  it('stops asking when the last client leaves and fetches at most once per tick with three clients', async function () {
    await sleep(1000);
    const idle = snapshotRequests(sim);
    const unwatched = expectQuiet(sim, 'no requests while nobody looks', (r) => r.path === '/jpg/image.jpg');
    await sleep(2000);
    assert.equal(snapshotRequests(sim), idle, 'no requests while nobody looks');
    unwatched.end();

    const pages = [await open(), await open(), await open()];
    for (const p of pages) await p.locator('img.ipcam-ui-camera-image').waitFor({ state: 'visible', timeout: WAIT });
    const start = snapshotRequests(sim);
    const began = Date.now();
    await sleep(4000);
    const took = snapshotRequests(sim) - start;
    const ticks = Math.ceil(((Date.now() - began) / 1000) * RATE) + 1;
    assert.ok(took <= ticks, `${took} snapshot requests in ${ticks} ticks for three clients`);
    assert.ok(took >= 2, 'and it kept going');
    for (const p of pages) await p.close();
    await sleep(1000);
    const after = snapshotRequests(sim);
    expectQuiet(sim, 'none once every page is closed', (r) => r.path === '/jpg/image.jpg');
    await sleep(2000);
    assert.equal(snapshotRequests(sim), after, 'none once every page is closed');
  });

  it('sends one move on press and exactly one Stop on release', async function () {
    const page = await open();
    const left = page.getByRole('button', { name: 'left', exact: true });
    await left.waitFor({ state: 'visible', timeout: WAIT });
    const from = ptz().length;
    await left.hover();
    await page.mouse.down();
    await until('the move', () => ptz().slice(from).some((c) => c.action === 'Left'));
    // The button held shows it.
    assert.equal(await left.getAttribute('aria-pressed'), 'true');
    await sleep(300);
    await page.mouse.up();
    await until('the Stop', () => ptz().slice(from).some((c) => c.action === 'Stop'));
    const stopped = expectQuiet(sim, 'a PTZ command after the Stop', (r) => r.path.startsWith('/PtzControl'));
    await sleep(1500);
    assert.deepEqual(
      ptz()
        .slice(from)
        .map((c) => c.action),
      ['Left', 'Stop'],
    );
    stopped.end();
    await until('the actions as messages', () => actions().some((a) => JSON.stringify(a) === '{"action":"Stop"}'));
    assert.ok(actions().some((a) => JSON.stringify(a) === '{"action":"Left"}'));

    await page.getByRole('button', { name: 'preset 2' }).click();
    await until('the preset message', () => actions().some((a) => a['preset'] === 2));
    await page.getByRole('button', { name: 'send frame' }).click();
    await until('the frame sent', () => actions().some((a) => typeof a['snapshot'] === 'object'));
    // Said on the page: the frame went to the flow (the output is wired here).
    await page.locator('.ipcam-ui-camera-notice', { hasText: 'frame sent to the flow' }).waitFor({ state: 'visible', timeout: WAIT });
    // Each action names the camera it concerns: the widget's Device, as msg.device.
    await until('the four device records', () => lines(devicesFile).length >= 4);
    assert.deepEqual(
      lines(devicesFile).map((d) => [d['device'], (d['action'] as string[]).join()]),
      [
        ['w0dev', 'action'],
        ['w0dev', 'action'],
        ['w0dev', 'preset'],
        ['w0dev', 'snapshot'],
      ],
    );
    await page.close();
  });

  it('stops the camera when the tab closes mid-move', async function () {
    const page = await open();
    const right = page.getByRole('button', { name: 'right', exact: true });
    await right.waitFor({ state: 'visible', timeout: WAIT });
    const from = ptz().length;
    await right.hover();
    await page.mouse.down();
    await until('the move', () => ptz().slice(from).some((c) => c.action === 'Right'));
    await page.close();
    await until('the Stop', () => ptz().slice(from).some((c) => c.action === 'Stop'));
    expectQuiet(sim, 'a PTZ command after the Stop of the closed tab', (r) => r.path.startsWith('/PtzControl'));
    await sleep(1000);
    assert.deepEqual(
      ptz()
        .slice(from)
        .map((c) => c.action),
      ['Right', 'Stop'],
    );
  });

  it('a page hidden mid-move stops the camera, and another page can move it at once', async function () {
    const page = await open();
    const other = await open();
    const up = page.getByRole('button', { name: 'up', exact: true });
    await up.waitFor({ state: 'visible', timeout: WAIT });
    const from = ptz().length;
    await up.hover();
    await page.mouse.down();
    await until('the move', () => ptz().slice(from).some((c) => c.action === 'Up'));
    // What a browser does when the tab goes to the background.
    await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { dispatchEvent(e: unknown): void } }).document;
      Object.defineProperty(doc, 'visibilityState', { value: 'hidden', configurable: true });
      doc.dispatchEvent(new Event('visibilitychange'));
    });
    // At once, not by the 20 s timed stop.
    await until('the Stop', () => ptz().slice(from).some((c) => c.action === 'Stop'), 5000);
    const down = other.getByRole('button', { name: 'down', exact: true });
    await down.hover();
    await other.mouse.down();
    await until('the other page moves it', () => ptz().slice(from).some((c) => c.action === 'Down'));
    await other.mouse.up();
    await until('its Stop', () => ptz().slice(from).filter((c) => c.action === 'Stop').length === 2);
    await page.close();
    await other.close();
  });

  it('shows a posted plate on the camera overlay and in ipcam-ui-plates within 1 s; a click sends the event', async function () {
    const page = await open();
    await page.locator('.ipcam-ui-plates').waitFor({ state: 'visible', timeout: WAIT });
    const posted = Date.now();
    const results = await sim.postEvent({ url: `http://127.0.0.1:${eventPort}/`, kind: 'plate', format: 'ipc', plate: 'WDG123', listType: 'blackList' });
    assert.deepEqual(
      results.map((r) => r.status),
      [200],
    );
    const overlay = page.locator('.ipcam-ui-camera-plate', { hasText: 'WDG123' });
    const row = page.locator('.ipcam-ui-plates-row', { hasText: 'WDG123' });
    await overlay.waitFor({ state: 'visible', timeout: 1000 });
    await row.waitFor({ state: 'visible', timeout: Math.max(1, 1000 - (Date.now() - posted)) });
    assert.match((await overlay.textContent()) ?? '', /block list \(blackList\)/);
    assert.match((await row.textContent()) ?? '', /block list \(blackList\)/);
    // One time format on the page: HH:MM:SS in both widgets, and the camera's state in words.
    assert.match((await row.locator('.ipcam-ui-plates-time').textContent()) ?? '', /^\d\d:\d\d:\d\d$/);
    assert.match((await page.locator('.ipcam-ui-camera-time').textContent()) ?? '', /^\d\d:\d\d:\d\d$/);
    assert.match((await overlay.locator('.ipcam-ui-camera-plate-time').textContent()) ?? '', /^\d\d:\d\d:\d\d$/);
    assert.equal(await page.locator('.ipcam-ui-camera-state').textContent(), 'live');
    assert.equal(await row.locator('img.ipcam-ui-plates-crop').count(), 1, 'the crop');

    // The filter box hides rows that do not match.
    await page.locator('.ipcam-ui-plates-filter').fill('nomatch');
    await row.waitFor({ state: 'detached', timeout: WAIT });
    await page.locator('.ipcam-ui-plates-filter').fill('wdg');
    await row.click();
    await until('the clicked event', () => actions().some((a) => a['plate'] === 'WDG123'));
    await page.close();
  });

  it('a widget with a Server and no input wire shows a posted plate within 1 s, its Device filter keeps another device\'s out, and keeps at most Rows', async function () {
    const page = await open('/plates');
    const widget = (label: string) => page.locator('.ipcam-ui-plates', { has: page.locator('.ipcam-ui-plates-label', { hasText: label }) });
    for (const label of ['All posts', 'Gate cam only', 'Other cam only']) await widget(label).waitFor({ state: 'visible', timeout: WAIT });
    const posted = Date.now();
    const results = await sim.postEvent({ url: `http://127.0.0.1:${eventPort}/`, kind: 'plate', format: 'ipc', plate: 'SRV456', listType: 'whiteList' });
    assert.deepEqual(
      results.map((r) => r.status),
      [200],
    );
    const row = widget('All posts').locator('.ipcam-ui-plates-row', { hasText: 'SRV456' });
    await row.waitFor({ state: 'visible', timeout: 1000 });
    await widget('Gate cam only').locator('.ipcam-ui-plates-row', { hasText: 'SRV456' }).waitFor({ state: 'visible', timeout: Math.max(1, 1000 - (Date.now() - posted)) });
    assert.equal(await row.locator('img.ipcam-ui-plates-crop').count(), 1, 'the crop');
    await sleep(1000);
    assert.equal(await widget('Other cam only').locator('.ipcam-ui-plates-row').count(), 0, 'no plate of another device');

    // A click sends the event on, as plate-event would send it.
    await row.click();
    await until('the clicked event', () => actions().some((a) => a['plate'] === 'SRV456'));
    const clicked = actions().find((a) => a['plate'] === 'SRV456') ?? {};
    assert.equal(clicked['listType'], 'whiteList');
    assert.equal(clicked['sender'], '127.0.0.1');

    // Rows bound the list: five more posts leave the three newest.
    for (const n of [1, 2, 3, 4, 5]) await sim.postEvent({ url: `http://127.0.0.1:${eventPort}/`, kind: 'plate', format: 'ipc', plate: `ROW${n}`, listType: 'unknown' });
    await widget('All posts').locator('.ipcam-ui-plates-row', { hasText: 'ROW5' }).waitFor({ state: 'visible', timeout: WAIT });
    assert.deepEqual(await widget('All posts').locator('.ipcam-ui-plates-plate').allTextContents(), ['ROW5', 'ROW4', 'ROW3']);
    assert.equal(await widget('Other cam only').locator('.ipcam-ui-plates-row').count(), 0);
    await page.close();
  });

  it('a widget whose flow lacks its label and size shows their defaults, as its dialog opens it: Last plates, 6 x 5', async function () {
    const page = await open('/plates');
    const bare = page.locator('#nrdb-ui-widget-w0bare');
    await bare.locator('.ipcam-ui-plates-label').waitFor({ state: 'visible', timeout: WAIT });
    assert.equal(await bare.locator('.ipcam-ui-plates-label').textContent(), 'Last plates');
    // Dashboard lays a widget out by the size it was given (its component's wrapper style).
    const style = (await bare.getAttribute('style')) ?? '';
    assert.match(style, /grid-row-end: span 5;/, style);
    assert.match(style, /grid-column-end: span min\(6, var\(--layout-columns\)\)/, style);
    await page.close();
  });

  it('lets neither the device password nor its address reach any page, script or socket frame', async function () {
    await sleep(500);
    assert.ok(seen.length > 20, `the browser got ${seen.length} bodies and frames`);
    assert.ok(
      seen.some((s) => s.includes('msg-input:w0cam')),
      'the socket frames were recorded',
    );
    const address = `127.0.0.1:${sim.port}`;
    for (const [i, text] of seen.entries()) {
      assert.ok(!text.includes(PASSWORD), `frame ${i} holds the password`);
      assert.ok(!text.includes(address), `frame ${i} holds the device address`);
      assert.ok(!text.includes(USER), `frame ${i} holds the user name`);
    }
    assert.deepEqual(browserErrors, []);
  });
});
