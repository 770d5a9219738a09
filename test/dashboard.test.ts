/**
 * The gate console example (examples/gate-console.json, Dashboard 2) in a real browser: the demo
 * of `npm start` (simulator + Node-RED with every example) and Debian's Chromium driven by
 * playwright-core. Nothing is downloaded: without a browser the suite is skipped, or
 * fails under CI (see test/browser.ts).
 */
import { strict as assert } from 'node:assert';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { startDemo, type Demo } from '../scripts/start';
import type { PtzCommand, RelayChange } from '../lib/simulator';
import { freePort } from './runtime-child';
import { expectQuiet, PROJECT_ROOT } from './helpers';
import { launchBrowser, needBrowser } from './browser';

/** Where the example writes its audit log, relative to Node-RED's fileWorkingDirectory (the demo's user dir). */
const AUDIT_FILE = 'gate-audit.jsonl';
const WAIT = 20000;

interface ExampleNode {
  id: string;
  type: string;
  port?: string;
  path?: string;
}

/** The example's event server port and the dashboard page's address, read from the example itself. */
function example(): { eventPort: number; page: string } {
  const nodes = JSON.parse(readFileSync(join(PROJECT_ROOT, 'examples', 'gate-console.json'), 'utf8')) as ExampleNode[];
  const server = nodes.find((n) => n.type === 'ipcam-event-server');
  const base = nodes.find((n) => n.type === 'ui-base');
  const page = nodes.find((n) => n.type === 'ui-page');
  assert.ok(server?.port && base?.path && page?.path, 'the example has an event server, a ui-base and a ui-page');
  return { eventPort: Number(server.port), page: `${base.path}${page.path}` };
}

/** Polls `check` until it holds (the simulator's state is read in this process, not in the page). */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Relay 1 went on and then off again after `since`: one pulse. */
function pulsesSince(log: RelayChange[], since: number): number {
  const changes = log.filter((c) => c.port === 1 && c.time >= since);
  let pulses = 0;
  for (let i = 0; i + 1 < changes.length; i++) if (changes[i]?.active && !changes[i + 1]?.active) pulses++;
  return pulses;
}

/** Waits until `img` has loaded a picture and returns its natural size. */
async function loadedImage(img: Locator): Promise<{ width: number; height: number; src: string }> {
  await img.waitFor({ state: 'visible', timeout: WAIT });
  await img.evaluate(
    (el) =>
      new Promise<void>((resolve, reject) => {
        const image = el as unknown as { complete: boolean; naturalWidth: number; addEventListener(type: string, cb: () => void): void };
        if (image.complete && image.naturalWidth > 0) return resolve();
        image.addEventListener('load', () => resolve());
        image.addEventListener('error', () => reject(new Error('the image did not load')));
      }),
  );
  return img.evaluate((el) => {
    const image = el as unknown as { naturalWidth: number; naturalHeight: number; src: string };
    return { width: image.naturalWidth, height: image.naturalHeight, src: image.src };
  });
}

function jpegFromDataUrl(src: string): Buffer {
  const match = /^data:image\/jpeg;base64,(.+)$/.exec(src);
  assert.ok(match?.[1], `a JPEG data URL, not ${src.slice(0, 40)}`);
  return Buffer.from(match[1], 'base64');
}

describe('gate console dashboard (Chromium)', function () {
  this.timeout(90000);

  const { eventPort, page: pagePath } = example();
  let demo: Demo | undefined;
  const running = (): Demo => {
    assert.ok(demo, 'the demo is running');
    return demo;
  };
  let browser: Browser | undefined;
  let page: Page;
  const browserErrors: string[] = [];
  const auditRows = (): Locator => page.locator('.ipcam-audit tbody tr');
  const relayLog = (): RelayChange[] => running().simulator.state.io.relayLog;
  const ptzLog = (): PtzCommand[] => running().simulator.state.ptz.log;
  const auditLines = (): Array<Record<string, unknown>> => {
    const file = join(running().userDir, AUDIT_FILE);
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  const postPlate = async (plate: string, listType: 'whiteList' | 'blackList'): Promise<void> => {
    const results = await running().simulator.postEvent({ url: `http://127.0.0.1:${eventPort}/`, kind: 'plate', format: 'ipc', plate, listType });
    assert.deepEqual(
      results.map((r) => r.status),
      [200],
      'the example\'s event server took the post',
    );
  };

  before(async function () {
    needBrowser(this, 'dashboard');
    demo = await startDemo({ uiPort: await freePort(), simPort: 0, quiet: true });
    await demo.ready;
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const origin = new URL(demo.url).origin;
    // Hermetic: nothing leaves the machine.
    await page.route((url) => url.origin !== origin && url.protocol !== 'data:', (route) => route.abort('blockedbyclient'));
    page.on('pageerror', (err) => browserErrors.push(`page error: ${err.stack ?? err.message}`));
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const source = message.location().url;
      if (/^Failed to load resource/.test(message.text()) && source !== '' && !source.startsWith(origin)) return;
      browserErrors.push(`console.error: ${message.text()}${source ? ` (${source})` : ''}`);
    });
    await page.goto(`${demo.url}${pagePath}`);
  });

  after(async function () {
    await browser?.close();
    await demo?.stop();
  });

  it('shows the live snapshot: a real JPEG from the camera, loaded by the browser', async function () {
    const snapshot = await loadedImage(page.locator('img.ipcam-ui-camera-image'));
    const jpeg = jpegFromDataUrl(snapshot.src);
    assert.equal(jpeg.subarray(0, 3).toString('hex'), 'ffd8ff', 'starts like a JPEG');
    assert.ok(snapshot.width > 0 && snapshot.height > 0, 'the browser decoded it');
    // It is the camera's: the simulator answered the snapshot requests of the example.
    assert.ok(running().simulator.state.requests.some((r) => r.path === '/jpg/image.jpg'));
  });

  it('opens the gate with the button: the relay pulses and the audit log shows and stores it', async function () {
    const since = Date.now();
    assert.equal(auditLines().length, 0, 'no opening yet');
    const button = page.getByRole('button', { name: 'open gate' });
    await button.waitFor({ state: 'visible', timeout: WAIT });
    await button.click();

    await until('the relay pulse', () => pulsesSince(relayLog(), since) === 1);
    assert.ok(
      running().simulator.state.requests.some((r) => /^\/cgi-bin\/admin\/output(\.cgi)?$/.test(r.path)),
      'the pulse went through the CGI output action',
    );
    const row = auditRows().filter({ hasText: 'button' });
    await row.first().waitFor({ state: 'visible', timeout: WAIT });
    assert.equal(await row.count(), 1);
    const lines = auditLines();
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.['by'], 'button');
    assert.equal(lines[0]?.['plate'], '');
    assert.equal(lines[0]?.['output'], 1);
    assert.ok(!Number.isNaN(Date.parse(String(lines[0]?.['time']))), 'an ISO time');
  });

  it('shows every plate with its list and image; only an allow-listed one opens the gate', async function () {
    const since = Date.now();
    await postPlate('BLOCK99', 'blackList');
    const blocked = page.locator('.ipcam-ui-plates-row', { hasText: 'BLOCK99' });
    await blocked.waitFor({ state: 'visible', timeout: WAIT });
    assert.match((await blocked.textContent()) ?? '', /block list \(blackList\)/);
    const crop = await loadedImage(blocked.locator('img.ipcam-ui-plates-crop'));
    assert.equal(jpegFromDataUrl(crop.src).subarray(0, 3).toString('hex'), 'ffd8ff');
    assert.ok(crop.width > 0);

    // Posts are handled in order: had the block-listed plate pulsed the relay, it would show before this one.
    await postPlate('GATE001', 'whiteList');
    const allowed = page.locator('.ipcam-ui-plates-row', { hasText: 'GATE001' });
    await allowed.waitFor({ state: 'visible', timeout: WAIT });
    assert.match((await allowed.textContent()) ?? '', /allow list \(whiteList\)/);
    await auditRows().filter({ hasText: 'GATE001' }).first().waitFor({ state: 'visible', timeout: WAIT });
    assert.match((await auditRows().filter({ hasText: 'GATE001' }).textContent()) ?? '', /allow-listed plate/);
    await until('the relay pulse', () => pulsesSince(relayLog(), since) === 1);

    assert.equal(pulsesSince(relayLog(), since), 1, 'one pulse: the allow-listed plate, not the block-listed one');
    assert.equal(await auditRows().filter({ hasText: 'BLOCK99' }).count(), 0);
    assert.deepEqual(
      auditLines().map((l) => [l['by'], l['plate'], l['list']]),
      [
        ['button', '', ''],
        ['plate', 'GATE001', 'whiteList'],
      ],
    );
  });

  it('reads the audit log back from its file when the flows restart', async function () {
    // An opening from before the restart, only in the file.
    appendFileSync(join(running().userDir, AUDIT_FILE), `${JSON.stringify({ time: '2026-01-02T03:04:05.000Z', by: 'plate', plate: 'EARLIER1', list: 'whiteList', output: 1 })}\n`);
    const res = await fetch(`${running().url}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Node-RED-Deployment-Type': 'reload' },
      body: '[]',
    });
    await res.arrayBuffer();
    assert.equal(res.status, 204, 'flows reloaded');
    await auditRows().filter({ hasText: 'EARLIER1' }).first().waitFor({ state: 'visible', timeout: WAIT });
    // Read back whole, once: nothing twice.
    assert.equal(await auditRows().filter({ hasText: 'GATE001' }).count(), 1);
    assert.equal(await auditRows().filter({ hasText: 'button' }).count(), 1);
    assert.equal(await auditRows().count(), 3);

    // Redeploying only the start inject: the view keeps its context and reads the file again, still once.
    appendFileSync(join(running().userDir, AUDIT_FILE), `${JSON.stringify({ time: '2026-01-02T03:04:06.000Z', by: 'button', plate: '', list: '', output: 1 })}\n`);
    const flows = (await (await fetch(`${running().url}/flows`)).json()) as Array<Record<string, unknown>>;
    const atStart = flows.find((n) => n['type'] === 'inject' && n['name'] === 'at start' && n['z'] === flows.find((t) => t['label'] === 'ipcam: gate console')?.['id']);
    assert.ok(atStart, 'the example reads its log at start');
    atStart['onceDelay'] = '0.6';
    const redeploy = await fetch(`${running().url}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Node-RED-Deployment-Type': 'nodes' },
      body: JSON.stringify(flows),
    });
    await redeploy.arrayBuffer();
    assert.equal(redeploy.status, 204, 'flows deployed');
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('.ipcam-audit tbody tr').length === 4, undefined, { timeout: WAIT });
    assert.equal(await auditRows().filter({ hasText: 'GATE001' }).count(), 1);
    assert.equal(await auditRows().filter({ hasText: 'EARLIER1' }).count(), 1);
  });

  it('moves the camera and recalls a preset from the PTZ pad', async function () {
    const before = ptzLog().length;
    await page.getByRole('button', { name: 'right', exact: true }).click();
    await until('the move and its Stop', () => ptzLog().slice(before).some((c) => c.api === 'xml' && c.action === 'Stop'));
    assert.deepEqual(
      ptzLog()
        .slice(before)
        .map((c) => c.action),
      ['Right', 'Stop'],
    );
    // A preset saved on the camera (the example's pad recalls presets 1 and 2).
    running().simulator.state.ptz.presetsOf(1).set(2, { name: 'gate', position: 0 });
    await page.getByRole('button', { name: 'preset 2' }).click();
    await until('the preset recall', () => ptzLog().slice(before).some((c) => c.api === 'xml' && c.action === 'goto preset 2'));
  });

  it('shows the input states as they change', async function () {
    const inputs = page.locator('.ipcam-inputs tbody tr');
    // Every time on the page in one form: YYYY-MM-DD HH:MM:SS in the tables, never ISO with T and Z.
    await inputs.filter({ hasText: /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/ }).first().waitFor({ state: 'visible', timeout: WAIT });
    await inputs.filter({ hasText: 'input 1' }).filter({ hasText: 'off' }).waitFor({ state: 'visible', timeout: WAIT });
    running().simulator.state.io.setInput(1, true);
    await inputs.filter({ hasText: 'input 1' }).filter({ hasText: 'on' }).waitFor({ state: 'visible', timeout: WAIT });
    await inputs.filter({ hasText: 'input 2' }).first().waitFor({ state: 'visible', timeout: WAIT });
  });

  it('takes the README\'s screenshot of the console (docs/gate-console.png)', async function () {
    await page.locator('img.ipcam-ui-camera-image').waitFor({ state: 'visible', timeout: WAIT });
    // A car on the block list: shown on the camera and in the last plates, the gate stays shut.
    await postPlate('SHOT42', 'blackList');
    await page.locator('.ipcam-ui-plates-row', { hasText: 'SHOT42' }).waitFor({ state: 'visible', timeout: WAIT });
    await page.locator('.ipcam-ui-camera-plate', { hasText: 'SHOT42' }).waitFor({ state: 'visible', timeout: WAIT });
    await page.screenshot({ path: join(PROJECT_ROOT, 'docs', 'gate-console.png') });
    assert.ok(existsSync(join(PROJECT_ROOT, 'docs', 'gate-console.png')));
  });

  it('shows no camera error and logs no errors in the browser console', async function () {
    assert.equal(await page.locator('.ipcam-last-error').filter({ hasText: /E[A-Z]+:/ }).count(), 0);
    assert.deepEqual(browserErrors, []);
  });

  // Last: a refused password leaves the other widgets' requests refused too.
  it("shows each camera's state and the time of its last change", async function () {
    const row = page.locator('.ipcam-cameras tbody tr').filter({ hasText: 'Simulator' });
    await row.filter({ hasText: 'online' }).waitFor({ state: 'visible', timeout: WAIT });
    const since = (text: string): string => /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/.exec(text)?.[0] ?? '';
    const online = since(await row.innerText());
    assert.ok(online, 'the time of the last change');
    // The snapshot every 2 s meets the refused password: auth-failed at once, with its reason.
    running().simulator.inject({ kind: 'status', status: 401 });
    // In words, as the live view says it, not the raw key.
    await row.filter({ hasText: 'password refused' }).filter({ hasText: /password|credentials/ }).waitFor({ state: 'visible', timeout: WAIT });
    assert.equal(await row.filter({ hasText: 'auth-failed' }).count(), 0);
    running().simulator.clearFaults();
    // No login after a refused password until the device answers again (cameras lock the account
    // after a few failures): the live view asks nothing and says why.
    const state = page.locator('.ipcam-ui-camera-state');
    await state.filter({ hasText: 'password refused' }).waitFor({ state: 'visible', timeout: WAIT });
    const snapshots = (): number => running().simulator.state.requests.filter((r) => r.path === '/jpg/image.jpg').length;
    const asked = snapshots();
    const refused = expectQuiet(running().simulator, 'no snapshot request while the password stands refused', (r) => r.path === '/jpg/image.jpg');
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(snapshots(), asked, 'no snapshot request while the password stands refused');
    refused.end();
    // A request of the flow that gets an answer (the gate button) brings the device back online, and the live view with it.
    await page.getByRole('button', { name: 'open gate' }).click();
    await row.filter({ hasText: 'online' }).waitFor({ state: 'visible', timeout: WAIT });
    assert.ok(since(await row.innerText()) >= online);
    await state.filter({ hasText: 'live' }).waitFor({ state: 'visible', timeout: WAIT });
    assert.deepEqual(browserErrors, []);
  });
});
