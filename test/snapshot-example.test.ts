/**
 * examples/snapshot-basics.json in a real browser (issue 18): its /snapshot is served in the
 * editor's origin, so a camera that answers an SVG with a script must never get that script run
 * there. The demo (Node-RED + simulator, as `npm start` runs it), the simulator made to lie, and
 * Debian's Chromium driven by playwright-core; nothing is downloaded.
 */
import { strict as assert } from 'node:assert';
import type { Browser, BrowserContext } from 'playwright-core';
import { startDemo, type Demo } from '../scripts/start';
import { SNAPSHOT_JPEG } from '../lib/simulator/images';
import { HOSTILE_HTML, HOSTILE_SVG, TINY_PNG } from './hostile-content';
import { freePort } from './runtime-child';
import { launchBrowser, needBrowser } from './browser';

/** The example's /snapshot path takes its picture from source cgi. */
const CAMERA_PATH = '/cgi-bin/admin/image';

interface Served {
  status: number;
  contentType: string;
  nosniff: string | undefined;
  body: Buffer;
  /** Requests the page made (a script that ran would reach /flows). */
  pageRequests: string[];
  title: string;
}

describe('examples/snapshot-basics.json: /snapshot in Chromium against a camera that lies', function () {
  this.timeout(90000);

  let demo: Demo | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;

  const running = (): Demo => {
    assert.ok(demo, 'the demo is running');
    return demo;
  };

  before(async function () {
    needBrowser(this, 'snapshot example');
    demo = await startDemo({ uiPort: await freePort(), simPort: 0, eventPort: 0, quiet: true });
    await demo.ready;
    // The flows start after Node-RED answers: wait until the example's route is there.
    const deadline = Date.now() + 30000;
    while ((await fetch(`${demo.url}/snapshot`)).status === 404) {
      assert.ok(Date.now() < deadline, 'the example never served /snapshot');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    browser = await launchBrowser();
    context = await browser.newContext();
    const origin = new URL(demo.url).origin;
    await context.route((url) => url.origin !== origin, (route) => route.abort('blockedbyclient'));
  });

  after(async function () {
    await context?.close();
    await browser?.close();
    await demo?.stop();
  });

  afterEach(function () {
    demo?.simulator.clearFaults();
  });

  /** Opens /snapshot in a fresh tab while the camera answers `lie` (none: the simulator's own JPEG). */
  async function open(lie?: { contentType: string; body: Buffer }): Promise<Served> {
    const sim = running().simulator;
    sim.clearFaults();
    // Not spent after one request: another example's flow may ask the camera at the same time.
    if (lie) sim.inject({ kind: 'answer', path: CAMERA_PATH, contentType: lie.contentType, body: lie.body });
    assert.ok(context);
    const page = await context.newPage();
    try {
      const pageRequests: string[] = [];
      page.on('request', (r) => pageRequests.push(`${r.method()} ${new URL(r.url()).pathname}`));
      const response = await page.goto(`${running().url}/snapshot`, { waitUntil: 'load' });
      assert.ok(response, 'no response');
      // Time for a script that ran to reach /flows.
      await page.waitForTimeout(300);
      const headers = response.headers();
      return { status: response.status(), contentType: headers['content-type'] ?? '', nosniff: headers['x-content-type-options'], body: await response.body(), pageRequests, title: await page.title() };
    } finally {
      await page.close();
    }
  }

  function assertPicture(served: Served, type: 'image/jpeg' | 'image/png', bytes: Buffer): void {
    assert.equal(served.status, 200);
    assert.equal(served.contentType, type);
    assert.equal(served.nosniff, 'nosniff');
    assert.ok(served.body.equals(bytes), 'the picture as the camera sent it');
  }

  function assertNoPicture(served: Served): void {
    assert.equal(served.status, 502);
    assert.match(served.contentType, /^text\/plain/);
    assert.equal(served.nosniff, 'nosniff');
    assert.equal(served.body.toString('utf8'), 'No picture from the camera');
    assert.ok(!served.body.includes('<script'), 'the device content was served');
    assert.deepEqual(served.pageRequests.filter((r) => r.endsWith('/flows')), [], 'the page reached /flows: a script ran');
    assert.notEqual(served.title, 'owned');
  }

  it('an SVG with a script (image/svg+xml): a 502 text, never the SVG; then a real JPEG: image/jpeg', async function () {
    const flowsBefore = await (await fetch(`${running().url}/flows`)).text();
    assertNoPicture(await open({ contentType: 'image/svg+xml', body: HOSTILE_SVG }));
    assert.equal(await (await fetch(`${running().url}/flows`)).text(), flowsBefore, 'the flows were changed');
    assertPicture(await open(), 'image/jpeg', SNAPSHOT_JPEG);
  });

  it('an HTML page (text/html) and an empty body: 502; a PNG labelled image/jpeg: image/png; a JPEG labelled image/svg+xml: image/jpeg', async function () {
    assertNoPicture(await open({ contentType: 'text/html', body: HOSTILE_HTML }));
    assertNoPicture(await open({ contentType: 'image/jpeg', body: Buffer.alloc(0) }));
    assertPicture(await open({ contentType: 'image/jpeg', body: TINY_PNG }), 'image/png', TINY_PNG);
    assertPicture(await open({ contentType: 'image/svg+xml', body: SNAPSHOT_JPEG }), 'image/jpeg', SNAPSHOT_JPEG);
  });
});
