/**
 * The editor in a real browser: the demo (simulator + Node-RED with the examples) and Debian's
 * Chromium driven by playwright-core. Nothing is downloaded: without a browser the suite
 * is skipped, or fails under CI (see test/browser.ts).
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { startDemo, type Demo } from '../scripts/start';
import { freePort } from './runtime-child';
import { PROJECT_ROOT } from './helpers';
import { launchBrowser, needBrowser } from './browser';


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


/** The ipcam-event-server of the gate example. */
function exampleServer(): string {
  const nodes = JSON.parse(readFileSync(join(PROJECT_ROOT, 'examples', 'gate-control.json'), 'utf8')) as ExampleNode[];
  const server = nodes.find((n) => n.type === 'ipcam-event-server');
  assert.ok(server, 'examples/gate-control.json has an ipcam-event-server');
  return server.id;
}

/**
 * One node of each type for the every-dialog test: its stored settings, and a field of its dialog
 * with a value the rules refuse and one they accept (which is then saved and deployed).
 */
interface DialogCase {
  type: string;
  settings: Record<string, unknown>;
  field: string;
  bad: string;
  good: string;
  /** The setting the good value is saved in (default: the field's name). */
  saved?: (node: Record<string, unknown>) => unknown;
}

const TEST_TAB = 'e2e0000000000001';

function dialogCases(server: string): DialogCase[] {
  const plate = (type: string): DialogCase => ({ type, settings: { group: '1' }, field: 'group', bad: ' 1', good: '2' });
  return [
    { type: 'ipcam-snapshot', settings: { source: 'xml', channel: '1', format: 'buffer' }, field: 'channel', bad: '999', good: '2' },
    plate('ipcam-plate-add'),
    plate('ipcam-plate-query'),
    plate('ipcam-plate-modify'),
    plate('ipcam-plate-delete'),
    { ...plate('ipcam-plate-sync'), settings: { group: '1', dryRun: true } },
    { type: 'ipcam-vehicle-config', settings: { channel: '' }, field: 'channel', bad: '0', good: '1' },
    { type: 'ipcam-plate-event', settings: { server, lists: [], dedup: '0', images: 'none' }, field: 'dedup', bad: '-1', good: '5' },
    { type: 'ipcam-detection-stream', settings: { detection: 'motion', groups: '', mode: 'single', emit: 'every' }, field: 'groups', bad: '1000', good: '1,2' },
    { type: 'ipcam-input-monitor', settings: { kind: 'input', ports: '' }, field: 'ports', bad: '0', good: '1' },
    { type: 'ipcam-ptz', settings: { api: 'xml', action: 'Stop', speed: '4', duration: '0', channel: '1' }, field: 'speed', bad: '9', good: '5' },
    { type: 'ipcam-relay', settings: { output: '1', mode: 'pulse', pulse: '1000', sequence: '' }, field: 'pulse', bad: '0', good: '500' },
    { type: 'ipcam-request', settings: { operation: 'getAlarmStatus', params: {} }, field: 'param-channel', bad: '0', good: '2', saved: (n) => (n['params'] as Record<string, unknown>)['channel'] },
    { type: 'ipcam-edgerecord', settings: { operation: 'search', params: {} }, field: 'param-limit', bad: '100', good: '5', saved: (n) => (n['params'] as Record<string, unknown>)['limit'] },
  ];
}

/** The input of a dialog field: `param-x` is an operation parameter, else the node's setting. */
function fieldSelector(field: string, config = false): string {
  return field.startsWith('param-') ? `#ipcam-${field}` : `#node-${config ? 'config-' : ''}input-${field}`;
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
  const server = exampleServer();
  const cases = dialogCases(server);

  before(async function () {
    needBrowser(this, 'editor');
    demo = await startDemo({ uiPort: await freePort(), simPort: 0, quiet: true });
    await demo.ready;
    browser = await launchBrowser();
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
    // A tab with one node of each type (of the demo's device and event server), deployed before
    // the editor loads, for the every-dialog test.
    const flows = (await (await fetch(`${demo.url}/flows`)).json()) as ExampleNode[];
    const added = [
      { id: TEST_TAB, type: 'tab', label: 'every dialog' },
      ...cases.map((c, i) => ({ id: `e2e00000000001${String(i + 10)}`, type: c.type, z: TEST_TAB, name: '', x: 200, y: 60 + 60 * i, wires: c.type === 'ipcam-plate-event' ? [[], []] : [[]], ...(c.type === 'ipcam-plate-event' ? {} : { device: device.id }), ...c.settings })),
    ];
    const posted = await fetch(`${demo.url}/flows`, { method: 'POST', headers: { 'content-type': 'application/json', 'Node-RED-Deployment-Type': 'full' }, body: JSON.stringify([...flows, ...added]) });
    assert.equal(posted.status, 204, await posted.text());
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
    // The theme's error colour (Node-RED 5's dark theme has its own), never a fixed one.
    assert.match((await result.getAttribute('style')) ?? '', /color: var\(--red-ui-text-color-error\)/);
    // Browser code as text: this project compiles without the DOM types.
    const colours = (await page.evaluate(`(() => {
      const probe = document.createElement('span');
      probe.style.color = getComputedStyle(document.documentElement).getPropertyValue('--red-ui-text-color-error');
      document.body.appendChild(probe);
      const theme = getComputedStyle(probe).color;
      probe.remove();
      return { shown: getComputedStyle(document.getElementById('ipcam-device-test-result')).color, theme };
    })()`)) as { shown: string; theme: string };
    assert.equal(colours.shown, colours.theme);

    // A result belongs to the settings it was tested with: a change clears it.
    await page.fill('#node-config-input-timeout', '5000');
    await page.locator('#ipcam-device-test-result', { hasText: /./ }).waitFor({ state: 'detached', timeout: 5000 }).catch(() => undefined);
    assert.equal((await result.textContent()) ?? '', '');
    assert.doesNotMatch((await result.getAttribute('class')) ?? '', /ipcam-device-test-error/);

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
    // A config node with credentials runs its oneditprepare (which attaches the handlers) only
    // once the editor has fetched them: typing before that is not seen, so type again until it is.
    for (let tries = 0; ; tries++) {
      await bind.fill('');
      await bind.fill('0.0.0.0');
      const shown = await warning.waitFor({ state: 'visible', timeout: 1000 }).then(() => true, () => false);
      if (shown) break;
      assert.ok(tries < 20, 'the open-port warning never showed');
    }
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
    // The class of the chosen operation, and the list grouped by class (read first).
    const classInfo = page.locator('#ipcam-request-class');
    assert.match((await classInfo.textContent()) ?? '', /^Class outbound: makes the device connect to a server.*a message can never choose it/);
    const groups = await page.locator('#node-input-operation optgroup').evaluateAll((els) => els.map((el) => (el as unknown as { label: string }).label));
    assert.deepEqual(groups.map((label) => label.split(':')[0]), ['Read', 'Change', 'Outbound', 'Files', 'Destructive']);
    assert.equal(await page.locator('#node-input-operation optgroup[label^="Read"] option[value="updateParams"]').count(), 0);
    assert.equal(await page.locator('#node-input-operation optgroup[label^="Change"] option[value="updateParams"]').count(), 1);
    await page.selectOption('#node-input-operation', 'msg');
    await page.locator('#ipcam-request-class', { hasText: 'Only read operations can come from a message' }).waitFor();
    await page.selectOption('#node-input-operation', 'readClimate');
    await page.locator('#ipcam-request-class', { hasText: /^Class read: .*A message may choose it/ }).waitFor();
    await page.selectOption('#node-input-operation', 'reboot');
    await page.locator('#ipcam-request-destructive').waitFor({ state: 'visible' });
    assert.match((await classInfo.textContent()) ?? '', /^Class destructive/);
    assert.equal(await server.count(), 0);
    await page.locator('#node-dialog-cancel').click();
    await page.locator('#node-input-operation').waitFor({ state: 'detached' });
    // The help lists every operation of the table, generated at build time.
    const help = (await page.locator('script[data-help-name="ipcam-request"]').first().textContent()) ?? '';
    for (const name of ['upgradeFirmware', 'testSmtp', 'lens', 'describeRtsp']) assert.match(help, new RegExp(`<dt>${name} `));
  });

  it('opens every node\'s dialog, marks a bad value, saves a good one, and deploys', async function () {
    this.timeout(180000);
    const edit = async (id: string, config?: string): Promise<void> => {
      await page.evaluate(
        ([nodeId, type]) => {
          const red = (globalThis as unknown as { RED: { editor: { edit(node: unknown): void; editConfig(name: string, type: string, id: string): void }; nodes: { node(id: string): unknown } } }).RED;
          if (type) red.editor.editConfig('', type, nodeId as string);
          else red.editor.edit(red.nodes.node(nodeId as string));
        },
        [id, config] as const,
      );
    };
    const markedBad = async (selector: string): Promise<boolean> => page.locator(selector).evaluate((el) => el.classList.contains('input-error') || el.getAttribute('aria-invalid') === 'true');
    const enter = async (selector: string, value: string): Promise<void> => {
      const input = page.locator(selector);
      await input.fill(value);
      await input.dispatchEvent('change');
    };
    const check = async (selector: string, bad: string, good: string, what: string): Promise<void> => {
      await page.locator(selector).waitFor({ state: 'visible' });
      await enter(selector, bad);
      assert.ok(await markedBad(selector), `${what}: ${JSON.stringify(bad)} is marked`);
      await enter(selector, good);
      assert.ok(!(await markedBad(selector)), `${what}: ${JSON.stringify(good)} is not marked`);
    };

    // The config nodes: the demo's device and event server.
    await edit(device.id, 'ipcam-device');
    await check('#node-config-input-port', '70000', String(running().simulator.port), 'ipcam-device port');
    await check('#node-config-input-host', 'http://127.0.0.1', '127.0.0.1', 'ipcam-device host');
    await page.locator('#node-config-dialog-ok').click();
    await page.locator('#node-config-input-port').waitFor({ state: 'detached' });
    await edit(server, 'ipcam-event-server');
    await check('#node-config-input-maxConnections', '0', '128', 'ipcam-event-server maxConnections');
    await page.locator('#node-config-dialog-ok').click();
    await page.locator('#node-config-input-maxConnections').waitFor({ state: 'detached' });

    for (const [i, c] of cases.entries()) {
      const id = `e2e00000000001${String(i + 10)}`;
      await edit(id);
      const selector = fieldSelector(c.field);
      await check(selector, c.bad, c.good, `${c.type} ${c.field}`);
      await page.fill('#node-input-name', `e2e ${c.type}`);
      await page.locator('#node-dialog-ok').click();
      await page.locator(selector).waitFor({ state: 'detached' });
      const node = await page.evaluate((nodeId) => {
        const n = (globalThis as unknown as { RED: { nodes: { node(id: string): Record<string, unknown> } } }).RED.nodes.node(nodeId);
        return JSON.parse(JSON.stringify({ ...n, _def: undefined, _: undefined })) as Record<string, unknown>;
      }, id);
      assert.equal(node['name'], `e2e ${c.type}`);
      assert.equal(String((c.saved ?? ((n) => n[c.field]))(node)), c.good, `${c.type}: the good value is saved`);
      assert.notEqual(node['valid'], false, `${c.type}: the saved node is valid`);
    }

    await page.locator('#red-ui-header-button-deploy').click();
    await page.waitForFunction(() => !(globalThis as unknown as { RED: { nodes: { dirty(): boolean } } }).RED.nodes.dirty(), undefined, { timeout: 30000 });
    const deployed = (await (await page.request.get(`${running().url}/flows`)).json()) as Record<string, unknown>[];
    for (const [i, c] of cases.entries()) {
      const node = deployed.find((n) => n['id'] === `e2e00000000001${String(i + 10)}`);
      assert.ok(node, `${c.type} is deployed`);
      assert.equal(node['name'], `e2e ${c.type}`);
      assert.equal(String((c.saved ?? ((n) => n[c.field]))(node)), c.good);
    }
    assert.equal(deployed.find((n) => n['id'] === server)?.['maxConnections'], '128');
  });

  it('starts a new request node on getDeviceInfo, not on msg', async function () {
    const operation = await page.evaluate(() => (globalThis as unknown as { RED: { nodes: { getType(t: string): { defaults: Record<string, { value: unknown }> } } } }).RED.nodes.getType('ipcam-request').defaults['operation']?.value);
    assert.equal(operation, 'getDeviceInfo');
  });

  it('starts a new plate-sync in dry run, and shows the plate lists by their meaning', async function () {
    const dryRun = await page.evaluate(() => (globalThis as unknown as { RED: { nodes: { getType(t: string): { defaults: Record<string, { value: unknown }> } } } }).RED.nodes.getType('ipcam-plate-sync').defaults['dryRun']?.value);
    assert.equal(dryRun, true);
    const id = `e2e00000000001${String(cases.findIndex((c) => c.type === 'ipcam-plate-event') + 10)}`;
    await page.evaluate((nodeId) => {
      const red = (globalThis as unknown as { RED: { editor: { edit(node: unknown): void }; nodes: { node(id: string): unknown } } }).RED;
      red.editor.edit(red.nodes.node(nodeId));
    }, id);
    const lists = page.locator('#ipcam-plate-event-lists');
    await lists.waitFor({ state: 'visible' });
    const text = (await lists.textContent()) ?? '';
    for (const words of ['allow list (whiteList)', 'block list (blackList)', 'temporary list (temporaryList)', '(unknown)']) assert.ok(text.includes(words), `${words} in ${text}`);
    await page.locator('#node-dialog-cancel').click();
    await lists.waitFor({ state: 'detached' });
  });

  it('gives the PTZ tip of the chosen interface', async function () {
    const id = `e2e00000000001${String(cases.findIndex((c) => c.type === 'ipcam-ptz') + 10)}`;
    await page.evaluate((nodeId) => {
      const red = (globalThis as unknown as { RED: { editor: { edit(node: unknown): void }; nodes: { node(id: string): unknown } } }).RED;
      red.editor.edit(red.nodes.node(nodeId));
    }, id);
    const tip = page.locator('#ipcam-ptz-tip');
    await tip.waitFor({ state: 'visible' });
    assert.match((await tip.textContent()) ?? '', /"Left".*ids 1-360/s);
    await page.selectOption('#node-input-api', 'cgi');
    await page.locator('#ipcam-ptz-tip', { hasText: '"left"' }).waitFor();
    assert.match((await tip.textContent()) ?? '', /numbers 0-31.*tours 0-3/s);
    assert.equal(await page.locator('#node-input-action').inputValue(), 'stop');
    await page.locator('#node-dialog-cancel').click();
    await tip.waitFor({ state: 'detached' });
  });

  it('logs no errors in the browser console', function () {
    assert.deepEqual(browserErrors, []);
  });
});
