/**
 * The editor in a real browser: the demo (simulator + Node-RED with the examples) and Debian's
 * Chromium driven by playwright-core. Nothing is downloaded: without /usr/bin/chromium this
 * fails and says how to install it.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startDemo, type Demo } from '../scripts/start';
import { freePort } from './runtime-child';
import { PROJECT_ROOT } from './helpers';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The few parts of the editor's global `RED` the test reaches for. */
interface EditorGlobal {
  RED?: {
    nodes?: { node(id: string): unknown };
    sidebar?: { show(id: string): void };
  };
}

interface ExampleNode {
  id: string;
  type: string;
  name?: string;
}


/** The ipcam-device of the snapshot example (the demo points it at the simulator). */
function exampleDevice(): { id: string; name: string } {
  const nodes = JSON.parse(readFileSync(join(PROJECT_ROOT, 'examples', 'snapshot-basics.json'), 'utf8')) as ExampleNode[];
  const device = nodes.find((n) => n.type === 'ipcam-device');
  assert.ok(device?.name, 'examples/snapshot-basics.json has a named ipcam-device');
  return { id: device.id, name: device.name };
}

describe('editor (Chromium)', function () {
  this.timeout(60000);

  let demo: Demo | undefined;
  const running = (): Demo => {
    assert.ok(demo, 'the demo is running');
    return demo;
  };
  let browser: Browser | undefined;
  let page: Page;
  const browserErrors: string[] = [];
  const device = exampleDevice();

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`Chromium is not installed at ${CHROMIUM}: install it with "apt-get install -y chromium" (the editor test never downloads a browser)`);
    }
    demo = await startDemo({ uiPort: await freePort(), simPort: 0, quiet: true });
    await demo.ready;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const origin = new URL(demo.url).origin;
    // Hermetic: the editor asks the internet for the palette catalogue; nothing leaves the machine.
    await page.route((url) => url.origin !== origin, (route) => route.abort('blockedbyclient'));
    page.on('pageerror', (err) => browserErrors.push(`page error: ${err.stack ?? err.message}`));
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const source = message.location().url;
      // A resource outside Node-RED that could not load (the blocked catalogue) is not our code.
      if (/^Failed to load resource/.test(message.text()) && source !== '' && !source.startsWith(origin)) return;
      browserErrors.push(`console.error: ${message.text()}${source ? ` (${source})` : ''}`);
    });
    await page.goto(demo.url);
    // The flows are loaded once the example's config node is known to the editor.
    await page.waitForFunction((id) => Boolean((globalThis as EditorGlobal).RED?.nodes?.node(id)), device.id, { timeout: 30000 });
  });

  after(async function () {
    await browser?.close();
    await demo?.stop();
  });

  it('lists ipcam-snapshot in the palette, with its icon and help', async function () {
    const paletteNode = page.locator('.red-ui-palette-node[data-palette-type="ipcam-snapshot"]');
    await paletteNode.waitFor({ state: 'visible' });
    assert.equal(await paletteNode.count(), 1);

    const icon = await page.request.get(`${running().url}/icons/node-red-contrib-ipcam/ipcam.svg`);
    assert.equal(icon.status(), 200);
    assert.equal(await icon.text(), readFileSync(join(PROJECT_ROOT, 'icons', 'ipcam.svg'), 'utf8'), 'Node-RED serves our icon, not its fallback');

    const help = await page.locator('script[data-help-name="ipcam-snapshot"]').textContent();
    assert.match(help ?? '', /msg\._error/);
    assert.match(help ?? '', /EAUTH/);
    assert.match((await page.locator('script[data-help-name="ipcam-device"]').textContent()) ?? '', /Test connection/);
  });

  it('tests the device connection from the config dialog: identity, then EAUTH for a wrong password', async function () {
    await page.evaluate(() => (globalThis as EditorGlobal).RED?.sidebar?.show('config'));
    const entry = page.locator('.red-ui-palette-node-config', { has: page.getByText(device.name, { exact: true }) }).first();
    await entry.dblclick();

    const host = page.locator('#node-config-input-host');
    await host.waitFor({ state: 'visible' });
    assert.equal(await host.inputValue(), '127.0.0.1');
    assert.equal(await page.locator('#node-config-input-port').inputValue(), String(running().simulator.port));
    // The stored password is not sent to the browser, only its placeholder.
    assert.equal(await page.locator('#node-config-input-password').inputValue(), '__PWRD__');

    // TLS settings only show for https.
    const tlsVerify = page.locator('#node-config-input-tlsVerify');
    assert.equal(await tlsVerify.isVisible(), false);
    await page.selectOption('#node-config-input-protocol', 'https');
    await tlsVerify.waitFor({ state: 'visible' });
    assert.equal(await tlsVerify.isChecked(), true);
    assert.equal(await page.locator('#node-config-input-port').getAttribute('placeholder'), '443');
    await page.selectOption('#node-config-input-protocol', 'http');
    await tlsVerify.waitFor({ state: 'hidden' });

    const button = page.locator('#ipcam-device-test-button');
    const result = page.locator('#ipcam-device-test-result');
    await button.click();
    await page.locator('#ipcam-device-test-result', { hasText: /Connected|E[A-Z]+:/ }).waitFor({ timeout: 20000 });
    const connected = (await result.textContent()) ?? '';
    assert.match(connected, /Connected: SIM-IPC-2MP, firmware 5\.1\.2\.0-sim/);

    await page.fill('#node-config-input-password', 'not-the-password');
    await button.click();
    await page.locator('#ipcam-device-test-result', { hasText: /E[A-Z]+:/ }).waitFor({ timeout: 20000 });
    const refused = (await result.textContent()) ?? '';
    assert.match(refused, /^EAUTH: /);
    assert.doesNotMatch(refused, /not-the-password/);
    assert.match((await result.getAttribute('class')) ?? '', /ipcam-device-test-error/);
    assert.match((await result.getAttribute('style')) ?? '', /color: rgb\(214, 49, 42\)/, 'the error shows in red');

    await page.locator('#node-config-dialog-cancel').click();
    await host.waitFor({ state: 'detached' });
  });

  it('warns in the event server dialog when anyone who reaches the port can post', async function () {
    await page.evaluate(() => (globalThis as EditorGlobal).RED?.sidebar?.show('config'));
    await page.locator('.red-ui-palette-node-config', { has: page.getByText('events :5002', { exact: true }) }).first().dblclick();
    const bind = page.locator('#node-config-input-bind');
    await bind.waitFor({ state: 'visible' });
    const warning = page.locator('#ipcam-event-server-open-warning');
    // The demo listens on loopback only: no warning.
    assert.equal(await bind.inputValue(), '127.0.0.1');
    assert.equal(await warning.isVisible(), false);
    await bind.fill('0.0.0.0');
    await warning.waitFor({ state: 'visible' });
    assert.match((await warning.textContent()) ?? '', /Anyone who can reach this port can post plates/);
    await page.fill('#node-config-input-allow', '192.168.1.0/24');
    await warning.waitFor({ state: 'hidden' });
    await page.fill('#node-config-input-allow', '');
    await warning.waitFor({ state: 'visible' });
    await page.fill('#node-config-input-username', 'camera');
    await warning.waitFor({ state: 'hidden' });
    await page.fill('#node-config-input-username', '');
    await bind.fill('::1');
    await warning.waitFor({ state: 'hidden' });
    await page.locator('#node-config-dialog-cancel').click();
    await bind.waitFor({ state: 'detached' });
  });

  it('builds the edge record dialog from the rules generated from lib/ops, marks a bad value, and keeps only the chosen operation\'s fields', async function () {
    const id = '7e5d0c1a2b3c0004';
    await page.evaluate((nodeId) => {
      const red = (globalThis as unknown as { RED: { editor: { edit(node: unknown): void }; nodes: { node(id: string): unknown } } }).RED;
      red.editor.edit(red.nodes.node(nodeId));
    }, id);
    const from = page.locator('#ipcam-param-from');
    await from.waitFor({ state: 'visible' });
    assert.equal(await from.inputValue(), '2026-03-01 00:00:00');
    assert.equal(await page.locator('#ipcam-param-all').inputValue(), 'true');
    const limit = page.locator('#ipcam-param-limit');
    assert.match((await limit.getAttribute('placeholder')) ?? '', /1 to 99/);
    assert.deepEqual(await page.locator('#ipcam-param-sort option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value)), ['', 'asc', 'desc']);
    // A bad value is marked with the rule's own words.
    await limit.fill('100');
    assert.match((await limit.getAttribute('class')) ?? '', /input-error/);
    assert.equal(await limit.getAttribute('title'), 'a whole number from 1 to 99');
    await limit.fill('50');
    assert.doesNotMatch((await limit.getAttribute('class')) ?? '', /input-error/);
    await page.selectOption('#node-input-operation', 'listStorage');
    await page.locator('#ipcam-param-directory').waitFor({ state: 'visible' });
    assert.equal(await from.count(), 0);
    await page.fill('#ipcam-param-directory', '2026-03-01/08');
    await page.locator('#node-dialog-ok').click();
    await page.locator('#ipcam-param-directory').waitFor({ state: 'detached' });
    const saved = await page.evaluate((nodeId) => {
      const node = (globalThis as unknown as { RED: { nodes: { node(id: string): { operation: string; params: unknown } } } }).RED.nodes.node(nodeId);
      return { operation: node.operation, params: node.params };
    }, id);
    assert.deepEqual(saved, { operation: 'listStorage', params: { directory: '2026-03-01/08' } });
  });

  it('builds the request dialog from the generated rules: values, secrets, defaults, bad values marked, the destructive warning', async function () {
    const id = '5b1c7a9e3d2f000f';
    await page.evaluate((nodeId) => {
      const red = (globalThis as unknown as { RED: { editor: { edit(node: unknown): void }; nodes: { node(id: string): unknown } } }).RED;
      red.editor.edit(red.nodes.node(nodeId));
    }, id);
    const server = page.locator('#ipcam-param-server');
    await server.waitFor({ state: 'visible' });
    assert.equal(await page.locator('#node-input-operation').inputValue(), 'testSmtp');
    assert.equal(await server.inputValue(), 'smtp.example.com');
    // A secret is never a dialog field (the flow file keeps settings in clear): it comes from msg.payload.
    assert.equal(await page.locator('#ipcam-param-password').count(), 0);
    assert.match((await page.locator('.ipcam-param-row', { hasText: 'password' }).first().textContent()) ?? '', /from msg\.payload\.password \(a secret: never kept in the flow\)/);
    const port = page.locator('#ipcam-param-port');
    assert.match((await port.getAttribute('placeholder')) ?? '', /default 25/);
    await port.fill('70000');
    assert.match((await port.getAttribute('class')) ?? '', /input-error/);
    assert.equal(await page.locator('#ipcam-request-destructive').isVisible(), false);
    await page.selectOption('#node-input-operation', 'reboot');
    await page.locator('#ipcam-request-destructive').waitFor({ state: 'visible' });
    assert.equal(await server.count(), 0);
    await page.locator('#node-dialog-cancel').click();
    await page.locator('#node-input-operation').waitFor({ state: 'detached' });
    // The help lists every operation of the table, generated at build time.
    const help = (await page.locator('script[data-help-name="ipcam-request"]').first().textContent()) ?? '';
    for (const name of ['upgradeFirmware', 'testSmtp', 'lens', 'describeRtsp']) assert.match(help, new RegExp(`<dt>${name} `));
  });

  it('logs no errors in the browser console', function () {
    assert.deepEqual(browserErrors, []);
  });
});
