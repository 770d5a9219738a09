/**
 * "Search network" in the ipcam-device dialog, in Chromium against the demo: its simulators
 * answer on their own UDP ports (the demo's ipcamDiscovery.targets, multicast off: nothing leaves
 * the machine); the list shows them and picking one fills host, port and protocol.
 */
import { strict as assert } from 'node:assert';
import { type Browser, type Page } from 'playwright-core';
import { startDemo, type Demo } from '../scripts/start';
import { freePort } from './runtime-child';
import { launchBrowser, needBrowser } from './browser';

describe('editor: Search network (Chromium)', function () {
  this.timeout(90_000);
  let demo: Demo | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const errors: string[] = [];

  before(async function () {
    needBrowser(this, 'editor');
    demo = await startDemo({ uiPort: await freePort(), simPort: 0, quiet: true, discoveryMulticast: false });
    await demo.ready;
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const origin = new URL(demo.url).origin;
    await page.route((url) => url.origin !== origin, (route) => route.abort('blockedbyclient'));
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(demo.url);
    await page.waitForFunction(() => Boolean((globalThis as unknown as { RED?: { nodes?: { getType(t: string): unknown } } }).RED?.nodes?.getType('ipcam-discover')), undefined, { timeout: 30_000 });
  });

  after(async function () {
    await browser?.close();
    await demo?.stop();
  });

  it('lists the demo\'s simulators, and picking one fills host, port and protocol', async function () {
    assert.ok(demo);
    const fleet = demo.fleet;
    assert.ok(fleet.length > 0, 'the demo has fleet simulators');
    // A new device: the search is how its address is found.
    await page.evaluate(() => {
      const red = (globalThis as unknown as { RED: { editor: { editConfig(name: string, type: string, id: string): void } } }).RED;
      red.editor.editConfig('', 'ipcam-device', '_ADD_');
    });
    const host = page.locator('#node-config-input-host');
    await host.waitFor({ state: 'visible' });
    assert.equal(await host.inputValue(), '');
    await page.locator('#ipcam-device-search-button').click();
    const items = page.locator('#ipcam-device-search-result .ipcam-device-search-item');
    await items.first().waitFor({ timeout: 20_000 });
    const texts = await items.allTextContents();
    assert.equal(texts.length, 1 + fleet.length, texts.join(' | '));
    for (const sim of [demo.simulator, ...fleet]) assert.ok(texts.some((t) => t.includes(`127.0.0.1:${sim.port}`) && t.includes(sim.state.device.deviceName) && t.includes(sim.state.device.mac)), `${sim.port} listed: ${texts.join(' | ')}`);
    // The example devices are deployed: identified with their own credentials.
    assert.ok(texts.every((t) => /SIM-IPC-2MP, firmware 5\.1\.2\.0-sim/.test(t) && /deployed/.test(t)), texts.join(' | '));

    const chosen = fleet[fleet.length - 1] as Demo['simulator'];
    await items.filter({ hasText: `127.0.0.1:${chosen.port}` }).click();
    assert.equal(await host.inputValue(), '127.0.0.1');
    assert.equal(await page.locator('#node-config-input-port').inputValue(), String(chosen.port));
    assert.equal(await page.locator('#node-config-input-protocol').inputValue(), 'http');
    await page.locator('#node-config-dialog-cancel').click();
    await host.waitFor({ state: 'detached' });
    assert.deepEqual(errors, []);
  });

  it('shows the discover node in the palette with its help', async function () {
    await page.locator('.red-ui-palette-node[data-palette-type="ipcam-discover"]').waitFor({ state: 'visible' });
    const help = (await page.locator('script[data-help-name="ipcam-discover"]').textContent()) ?? '';
    assert.match(help, /WS-Discovery/);
  });
});
