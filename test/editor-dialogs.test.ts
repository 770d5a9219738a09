/**
 * The dialogs as a user first meets them (issue 24), in Debian's Chromium at 1280x800 against the
 * demo of `npm start`: every example imported into an empty editor, one after the other as a
 * user does it, leaves one device node for the simulator and deploys with no warning; every
 * node's dialog shows each label and placeholder whole; the request dialog lists its operations
 * by plain label, grouped by class. Screenshots of every dialog go to test-artifacts/dialogs/
 * (ignored by git; CI keeps them as artifacts).
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { startDemo, type Demo } from '../scripts/start';
import { freePort } from './runtime-child';
import { NODE_PACKAGES, PROJECT_ROOT, declaredNodeTypes } from './helpers';
import { launchBrowser, needBrowser } from './browser';
import { HEARTBEAT_DEFAULT_S } from '../lib/health/heartbeat-setting';
import { DEFAULT_TIMEOUT } from '../lib/transport/options';
import { FRAME_RATE } from '../lib/widgets/frame-ticker';
import { UI_PLATES_SETTINGS, WIDGET_LAYOUT } from '../lib/widgets/settings';

export const ARTIFACTS = join(PROJECT_ROOT, 'test-artifacts', 'dialogs');

interface FlowNode {
  id: string;
  type: string;
  z?: string;
  [key: string]: unknown;
}

/** Every example file, in the order the editor's Import > Examples lists them. */
function examples(): Array<{ file: string; nodes: FlowNode[] }> {
  return readdirSync(join(PROJECT_ROOT, 'examples'))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, nodes: JSON.parse(readFileSync(join(PROJECT_ROOT, 'examples', file), 'utf8')) as FlowNode[] }));
}

/** Every node type of both packages (the nodes and the Dashboard 2 widgets). */
function nodeTypes(): string[] {
  return NODE_PACKAGES.flatMap(declaredNodeTypes);
}

/** Fields whose blank means a default, and the placeholder that says which. */
const PLACEHOLDERS: Record<string, Array<[string, string]>> = {
  'ipcam-device': [
    ['#node-config-input-heartbeat', String(HEARTBEAT_DEFAULT_S)],
    ['#node-config-input-timeout', String(DEFAULT_TIMEOUT)],
  ],
  'ipcam-ui-camera': [['#node-input-rate', String(FRAME_RATE.default)]],
  'ipcam-ui-plates': [['#node-input-count', String(UI_PLATES_SETTINGS.count.limits.default)]],
};

/** The action nodes with an Overrides setting (added after examples had been saved without it). */
const OVERRIDES_TYPES = ['ipcam-snapshot', 'ipcam-ptz', 'ipcam-relay', 'ipcam-plate-query', 'ipcam-vehicle-config', 'ipcam-edgerecord', 'ipcam-request'];


/** A field of the open dialog, as the page reads it. */
interface DialogField {
  tagName: string;
  type: string;
  checked: boolean;
  value: string;
  selectedIndex: number;
  getAttribute(name: string): string | null;
}

/** A text that does not fit its box: what the page measured, for the failure message. */
interface Clipped {
  what: string;
  text: string;
  needs: number;
  has: number;
}

/**
 * Measures, in the page, every visible label and placeholder of the open dialog (the edit tray):
 * a label's text laid out on one line must fit the label's box; a placeholder's text, in the
 * input's font, must fit the input's content box. Browser code as text: this project compiles
 * without the DOM types.
 */
const MEASURE = `(() => {
  const tray = document.querySelector('.red-ui-tray:last-of-type .red-ui-tray-body') || document.querySelector('.red-ui-tray-body');
  const out = [];
  if (!tray) return out;
  const visible = (el) => el.offsetParent !== null && el.getClientRects().length > 0;
  for (const label of tray.querySelectorAll('.form-row label')) {
    if (!visible(label) || label.textContent.trim() === '' || label.querySelector('input, select')) continue;
    const keep = label.style.whiteSpace;
    label.style.whiteSpace = 'nowrap';
    const needs = label.scrollWidth;
    const has = label.clientWidth;
    label.style.whiteSpace = keep;
    if (needs > has) out.push({ what: 'label', text: label.textContent.trim(), needs, has });
  }
  const canvas = document.createElement('canvas').getContext('2d');
  for (const input of tray.querySelectorAll('input[placeholder], textarea[placeholder]')) {
    const text = input.getAttribute('placeholder');
    if (!text || !visible(input)) continue;
    const style = getComputedStyle(input);
    canvas.font = style.font;
    const needs = Math.ceil(canvas.measureText(text).width);
    const has = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (needs > has) out.push({ what: 'placeholder of #' + input.id, text, needs, has: Math.floor(has) });
  }
  return out;
})()`;

/**
 * Every option of every visible select of the open dialog, measured: the width a select of the
 * same style takes to show that option whole (a probe beside it, sized by the browser) must not
 * exceed the select's own width; and a select must show a choice, never a blank (a setting
 * absent from an older flow or an example shows its default).
 */
const MEASURE_SELECTS = `(() => {
  const tray = document.querySelector('.red-ui-tray:last-of-type .red-ui-tray-body') || document.querySelector('.red-ui-tray-body');
  const out = [];
  if (!tray) return out;
  const visible = (el) => el.offsetParent !== null && el.getClientRects().length > 0;
  for (const select of tray.querySelectorAll('.form-row select')) {
    if (!visible(select) || select.multiple) continue;
    const has = select.offsetWidth;
    for (const option of select.options) {
      const probe = select.cloneNode(false);
      probe.removeAttribute('id');
      probe.style.width = 'auto';
      probe.style.minWidth = '0';
      probe.style.maxWidth = 'none';
      probe.style.position = 'absolute';
      probe.style.visibility = 'hidden';
      probe.appendChild(option.cloneNode(true));
      select.parentNode.appendChild(probe);
      const needs = probe.offsetWidth;
      probe.remove();
      if (needs > has) out.push({ what: 'option of #' + select.id, text: option.textContent.trim(), needs, has });
    }
    if (select.selectedIndex < 0 || (select.options[select.selectedIndex].textContent || '').trim() === '') out.push({ what: 'blank select #' + select.id, text: '', needs: 1, has: 0 });
  }
  return out;
})()`;

/**
 * The rows of the open dialog line up: in each visible form row, the control after the label
 * (an input, a select, a typed input) starts where those of the other rows do. Returns the
 * rows whose control stands elsewhere than most rows' (left edges in px).
 */
const MEASURE_ROWS = `(() => {
  const tray = document.querySelector('.red-ui-tray:last-of-type .red-ui-tray-body') || document.querySelector('.red-ui-tray-body');
  const rows = [];
  if (!tray) return rows;
  const visible = (el) => el.offsetParent !== null && el.getClientRects().length > 0;
  for (const row of tray.querySelectorAll('.form-row')) {
    if (!visible(row)) continue;
    const label = Array.from(row.children).find((c) => c.tagName === 'LABEL' && visible(c));
    if (!label) continue;
    const control = label.nextElementSibling;
    if (!control || !visible(control)) continue;
    const wide = control.matches('select, textarea, input:not([type=checkbox]):not([type=radio]):not([type=button]), .red-ui-typedInput-container');
    if (!wide) continue;
    rows.push({ label: label.textContent.trim(), left: Math.round(control.getBoundingClientRect().left) });
  }
  const counts = new Map();
  for (const r of rows) counts.set(r.left, (counts.get(r.left) || 0) + 1);
  const common = [...counts].sort((a, b) => b[1] - a[1])[0];
  return common ? rows.filter((r) => Math.abs(r.left - common[0]) > 1).map((r) => ({ ...r, expected: common[0] })) : [];
})()`;

describe('dialogs and examples as a user first meets them (Chromium, 1280x800)', function () {
  this.timeout(180_000);

  let demo: Demo | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const running = (): Demo => {
    assert.ok(demo, 'the demo is running');
    return demo;
  };

  before(async function () {
    needBrowser(this, 'dialog');
    demo = await startDemo({ uiPort: await freePort(), simPort: 0, eventPort: 0, quiet: true });
    await demo.ready;
    // An empty Node-RED: the examples come in through the editor's import, as a user brings them.
    const emptied = await fetch(`${demo.url}/flows`, { method: 'POST', headers: { 'content-type': 'application/json', 'Node-RED-Deployment-Type': 'full' }, body: '[]' });
    assert.equal(emptied.status, 204, await emptied.text());
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const origin = new URL(demo.url).origin;
    await page.route((url) => url.origin !== origin, (route) => route.abort('blockedbyclient'));
    await page.goto(demo.url);
    // The editor registers a package's node types one after the other (each dialog waits for its
    // scripts): the page is ready when every type of package.json is, not when one of them is.
    await page.waitForFunction(
      (types) => types.every((t) => Boolean((globalThis as unknown as { RED?: { nodes?: { getType(t: string): unknown } } }).RED?.nodes?.getType(t))),
      nodeTypes(),
      { timeout: 30_000 },
    );
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  after(async function () {
    await browser?.close();
    await demo?.stop();
  });

  it('imports every example one after the other: one device node per address, and a deploy without warnings', async function () {
    for (const [i, example] of examples().entries()) {
      // The first import has nothing to clash with. Each later one clashes on the shared device:
      // Node-RED then offers "Import copy" (new ids, an existing config node of the same id kept).
      const result = await page.evaluate(
        ([nodes, copy]) => {
          const red = (globalThis as unknown as { RED: { view: { importNodes(n: unknown, o: unknown): void } } }).RED;
          try {
            red.view.importNodes(nodes, { generateIds: copy, addFlow: false });
            return 'imported';
          } catch (err) {
            return (err as { code?: string }).code ?? String(err);
          }
        },
        [example.nodes, i > 0] as const,
      );
      assert.equal(result, 'imported', `${example.file}: ${result}`);
      // Imported as it is (not a copy), an example clashes only on the shared device, which the
      // conflict dialog leaves out by default; nothing is imported by the clash.
      if (i > 0 && example.nodes.some((n) => n.id === 'ipcam-sim-device')) {
        const clash = await page.evaluate((nodes) => {
          try {
            (globalThis as unknown as { RED: { nodes: { import(n: unknown, o: unknown): void } } }).RED.nodes.import(nodes, { generateIds: false });
            return 'imported';
          } catch (err) {
            const e = err as { code?: string; importConfig?: { conflicted: Record<string, unknown> } };
            return e.code === 'import_conflict' ? Object.keys(e.importConfig?.conflicted ?? {}).sort().join(',') : String(err);
          }
        }, example.nodes);
        assert.equal(clash, 'ipcam-sim-device', example.file);
      }
    }
    const devices = (await page.evaluate(`(() => {
      const out = [];
      RED.nodes.eachConfig((n) => { if (n.type === 'ipcam-device') out.push({ id: n.id, name: n.name, address: n.host + ':' + n.port, users: n.users.length }); });
      return out;
    })()`)) as Array<{ id: string; name: string; address: string; users: number }>;
    const byAddress = new Map<string, string[]>();
    for (const d of devices) byAddress.set(d.address, [...(byAddress.get(d.address) ?? []), d.id]);
    for (const [address, ids] of byAddress) assert.equal(ids.length, 1, `${address} has ${ids.length} device nodes: ${ids.join(', ')}`);
    assert.deepEqual(devices.find((d) => d.address === '127.0.0.1:8080'), { id: 'ipcam-sim-device', name: 'Simulator', address: '127.0.0.1:8080', users: devices.find((d) => d.id === 'ipcam-sim-device')?.users });
    assert.ok(devices.every((d) => d.users > 0), `a device node no node uses: ${JSON.stringify(devices)}`);

    // A status shows below its node: no node of the examples may stand where its neighbour's
    // status goes (the fleet tab once hid two under the next node). Measured on the canvas as
    // drawn, tab by tab (a node has its width once its tab has been shown).
    const hidden = (await page.evaluate(`(async () => {
      const out = [];
      const tabs = [];
      RED.nodes.eachWorkspace((ws) => tabs.push(ws.id));
      for (const tab of tabs) {
        RED.workspaces.show(tab);
        await new Promise((resolve) => setTimeout(resolve, 150));
        const nodes = RED.nodes.filterNodes({ z: tab }).filter((n) => n.w && n.h);
        for (const n of nodes) {
          if (!/^ipcam-|^debug$/.test(n.type)) continue;
          // The status line: from the node's left edge, 22 px below it, up to 160 px wide.
          const area = { left: n.x - n.w / 2, right: n.x - n.w / 2 + Math.max(n.w, 160), top: n.y + n.h / 2, bottom: n.y + n.h / 2 + 22 };
          for (const o of nodes) {
            if (o === n) continue;
            const box = { left: o.x - o.w / 2, right: o.x + o.w / 2, top: o.y - o.h / 2, bottom: o.y + o.h / 2 };
            if (box.left < area.right && box.right > area.left && box.top < area.bottom && box.bottom > area.top) out.push((n.name || n.type) + ' (' + RED.nodes.workspace(tab).label + ') under ' + (o.name || o.type));
          }
        }
      }
      return out;
    })()`)) as string[];
    assert.deepEqual(hidden, [], 'a status would be hidden under another node');

    await page.locator('#red-ui-header-button-deploy').click();
    await page.waitForFunction(() => !(globalThis as unknown as { RED: { nodes: { dirty(): boolean } } }).RED.nodes.dirty(), undefined, { timeout: 30_000 });
    const notices = await page.locator('.red-ui-notification').allTextContents();
    await page.screenshot({ path: join(ARTIFACTS, '00-examples-deployed.png') });
    assert.ok(notices.some((t) => /Successfully deployed/.test(t)), `no deploy notice: ${JSON.stringify(notices)}`);
    assert.deepEqual(notices.filter((t) => /unused|unknown|invalid|not properly configured/i.test(t)), [], 'the deploy warned');
    const flows = (await (await fetch(`${running().url}/flows`)).json()) as FlowNode[];
    assert.equal(flows.filter((n) => n.type === 'ipcam-device' && n['port'] === '8080').length, 1);
  });

  it('a node from an older flow (no settings saved) opens with each setting\'s default and keeps it after Done: Overrides is msg.payload', async function () {
    const problems: string[] = [];
    // The nodes of both packages: the Dashboard 2 widgets (their dialogs load this package's
    // editor code) are in the editor of the demo, with Dashboard 2 itself.
    for (const type of nodeTypes()) {
      const id = `older-${type}`;
      const config = await page.evaluate(
        ([t, nodeId]) => {
          const red = (globalThis as unknown as { RED: { nodes: { getType(t: string): { category: string } }; view: { importNodes(nodes: object[]): void }; workspaces: { active(): string } } }).RED;
          const isConfig = red.nodes.getType(t).category === 'config';
          // Only what any flow holds: the settings are absent, as in a flow saved before they existed.
          red.view.importNodes([isConfig ? { id: nodeId, type: t } : { id: nodeId, type: t, x: 600, y: 600, z: red.workspaces.active() }]);
          return isConfig;
        },
        [type, id] as const,
      );
      const prefix = config ? '#node-config-input-' : '#node-input-';
      await page.evaluate(
        ([nodeId, isConfig]) => {
          const red = (globalThis as unknown as { RED: { nodes: { node(id: string): { type: string } }; editor: { edit(n: unknown): void; editConfig(name: string, type: string, id: string): void } } }).RED;
          const node = red.nodes.node(nodeId);
          if (isConfig) red.editor.editConfig('', node.type, nodeId);
          else red.editor.edit(node);
        },
        [id, config] as const,
      );
      const ok = config ? '#node-config-dialog-ok' : '#node-dialog-ok';
      await page.locator(ok).waitFor({ state: 'visible' });
      await page.waitForTimeout(300);
      // Each setting of `defaults` with a value of its own (not a config node's id) and a field in the dialog.
      const fields = (await page.evaluate(
        ([t, pre]) => {
          const red = (globalThis as unknown as { RED: { nodes: { getType(t: string): { defaults: Record<string, { value?: unknown; type?: string }> } } } }).RED;
          const out: Array<{ name: string; value: unknown; kind: string; shown: unknown; placeholder: string | null }> = [];
          for (const [name, d] of Object.entries(red.nodes.getType(t).defaults)) {
            if (d.type || d.value === undefined || d.value === '' || typeof d.value === 'object') continue;
            const el = (globalThis as unknown as { document: { querySelector(s: string): DialogField | null } }).document.querySelector(pre + name);
            if (!el) continue;
            const kind = el.tagName === 'SELECT' ? 'select' : el.type === 'checkbox' ? 'checkbox' : el.tagName === 'INPUT' && el.type !== 'hidden' ? 'text' : 'other';
            const shown = kind === 'checkbox' ? el.checked : kind === 'select' ? (el.selectedIndex < 0 ? null : el.value) : el.value;
            out.push({ name, value: d.value, kind, shown, placeholder: el.getAttribute('placeholder') });
          }
          return out;
        },
        [type, prefix] as const,
      )) as Array<{ name: string; value: unknown; kind: string; shown: unknown; placeholder: string | null }>;
      // A text field left blank is its default (the runtime reads blank so), which its placeholder names.
      const blankDefault = (f: (typeof fields)[number]): boolean => f.kind === 'text' && f.shown === '' && f.placeholder === String(f.value);
      for (const f of fields) {
        const wanted = f.kind === 'checkbox' ? f.value : String(f.value);
        if (f.shown !== wanted && !blankDefault(f)) problems.push(`${type}: ${f.name} (${f.kind}) opens as ${JSON.stringify(f.shown)}, not its default ${JSON.stringify(wanted)} (placeholder ${JSON.stringify(f.placeholder)})`);
      }
      await page.locator(ok).click();
      await page.locator(ok).waitFor({ state: 'detached' });
      const stored = (await page.evaluate((nodeId) => (globalThis as unknown as { RED: { nodes: { node(id: string): Record<string, unknown> } } }).RED.nodes.node(nodeId), id)) as Record<string, unknown>;
      for (const f of fields) {
        const kept = stored[f.name];
        const wanted = f.value;
        if (String(kept) !== String(wanted) && !(blankDefault(f) && kept === '')) problems.push(`${type}: ${f.name} (${f.kind}) is ${JSON.stringify(kept)} after Done, not its default ${JSON.stringify(wanted)}`);
      }
      if (type in WIDGET_LAYOUT) {
        // The size and label the dialog opens such a widget with are those its runtime lays it out by.
        const layout = await page.evaluate((t) => {
          const d = (globalThis as unknown as { RED: { nodes: { getType(t: string): { defaults: Record<string, { value?: unknown }> } } } }).RED.nodes.getType(t).defaults;
          return { width: d['width']?.value, height: d['height']?.value, label: d['label']?.value };
        }, type);
        assert.deepEqual(layout, WIDGET_LAYOUT[type as keyof typeof WIDGET_LAYOUT], `${type}: the dialog's size and label defaults`);
      }
      if (OVERRIDES_TYPES.includes(type)) {
        const overrides = fields.find((f) => f.name === 'overrides');
        assert.ok(overrides, `${type} has no Overrides field`);
        assert.equal(overrides.shown, 'payload', `${type}: Overrides of a node saved without it`);
        assert.equal(stored['overrides'], 'payload', `${type}: Overrides after Done`);
      }
    }
    assert.deepEqual(problems, [], `settings absent from an older flow:\n${problems.join('\n')}`);
  });

  it('opens every node\'s dialog with each label and placeholder whole, the operations by label and grouped by class', async function () {
    const types = nodeTypes();
    const problems: string[] = [];
    for (const type of types) {
      const id = await page.evaluate((t) => {
        const red = (globalThis as unknown as { RED: { nodes: { eachNode(f: (n: { id: string; type: string }) => void): void; eachConfig(f: (n: { id: string; type: string }) => void): void } } }).RED;
        let found = '';
        red.nodes.eachNode((n) => { if (!found && n.type === t) found = n.id; });
        red.nodes.eachConfig((n) => { if (!found && n.type === t) found = n.id; });
        if (found) return found;
        // A node type no example uses: a new one, as the palette would add it.
        const view = (globalThis as unknown as { RED: { view: { importNodes(nodes: object[]): void }; workspaces: { active(): string } } }).RED;
        const fresh = `dialog-${t}`;
        view.view.importNodes([{ id: fresh, type: t, x: 200, y: 200, z: view.workspaces.active() }]);
        return fresh;
      }, type);
      assert.ok(id, `no ${type} to open`);
      const config = await page.evaluate((nodeId) => {
        const red = (globalThis as unknown as { RED: { nodes: { node(id: string): { _def: { category: string }; type: string } }; editor: { edit(n: unknown): void; editConfig(name: string, type: string, id: string): void } } }).RED;
        const node = red.nodes.node(nodeId);
        if (node._def.category === 'config') red.editor.editConfig('', node.type, nodeId);
        else red.editor.edit(node);
        return node._def.category === 'config';
      }, id);
      const ok = config ? '#node-config-dialog-ok' : '#node-dialog-ok';
      await page.locator(ok).waitFor({ state: 'visible' });
      // The tray slides in: measure once it stands still.
      await page.waitForTimeout(400);
      const clipped = [...((await page.evaluate(MEASURE)) as Clipped[]), ...((await page.evaluate(MEASURE_SELECTS)) as Clipped[])];
      for (const c of clipped) problems.push(`${type}: ${c.what} "${c.text}" needs ${c.needs}px, has ${c.has}px`);
      for (const r of (await page.evaluate(MEASURE_ROWS)) as Array<{ label: string; left: number; expected: number }>) problems.push(`${type}: the row "${r.label}" starts its control at ${r.left}px, the others at ${r.expected}px`);
      // A field whose blank means a default shows that default.
      for (const [field, wanted] of PLACEHOLDERS[type] ?? []) {
        const placeholder = await page.locator(field).getAttribute('placeholder');
        if (placeholder !== wanted) problems.push(`${type}: ${field} shows placeholder ${JSON.stringify(placeholder)}, not ${JSON.stringify(wanted)}`);
      }
      await page.screenshot({ path: join(ARTIFACTS, `${type}.png`) });
      // A setting absent from an older flow (examples saved before Overrides existed) shows its
      // default, what the runtime takes: never a blank choice.
      if ((await page.locator('#node-input-overrides').count()) > 0) {
        const stored = await page.evaluate((nodeId) => (globalThis as unknown as { RED: { nodes: { node(id: string): { overrides?: unknown } } } }).RED.nodes.node(nodeId).overrides, id);
        const shown = await page.locator('#node-input-overrides').inputValue();
        const wanted = typeof stored === 'string' && stored !== '' ? stored : 'payload';
        if (shown !== wanted) problems.push(`${type}: Overrides shows ${JSON.stringify(shown)} for a stored ${JSON.stringify(stored)}, not ${wanted}`);
      }

      if (type === 'ipcam-device-status') {
        // Blank watches every device: the list says so (Node-RED's own word for it is "none").
        await page.waitForTimeout(100);
        assert.equal(await page.locator('#node-input-device option[value="_ADD_"]').textContent(), 'every device');
      }
      if (type === 'ipcam-request') {
        const groups = await page.locator('#node-input-operation optgroup').evaluateAll((els) => els.map((el) => (el as unknown as { label: string }).label.split(':')[0]));
        assert.deepEqual(groups, ['Read', 'Change', 'Outbound', 'Files', 'Destructive']);
        const options = await page.locator('#node-input-operation optgroup option').evaluateAll((els) => els.map((el) => ({ value: (el as unknown as { value: string }).value, text: (el as unknown as { textContent: string }).textContent })));
        assert.ok(options.length > 20);
        for (const o of options) assert.match(o.text, new RegExp(`^[A-Z].* \\(${o.value}\\)$`), `option ${o.value} reads "${o.text}"`);
        assert.ok(options.some((o) => o.text === 'Device information (getDeviceInfo)'));
        assert.ok(options.some((o) => o.text === 'Test network storage (testNetworkStorage)'));
        // Each operation's parameters, by plain label, and none of them clipped.
        for (const op of ['testNetworkStorage', 'testSmtp', 'testHttpServer', 'testFtp', 'selfSignCertificate', 'setHttpPostConfig', 'lens', 'upgradeFirmware', 'listParams', 'addParamGroup']) {
          await page.selectOption('#node-input-operation', op);
          await page.waitForTimeout(50);
          const labels = await page.locator('#ipcam-request-params .ipcam-param-row label').allTextContents();
          assert.ok(labels.length > 0, `${op} shows no parameters`);
          for (const label of labels) assert.match(label, /^[A-Z]/, `${op}: parameter label "${label}" is a code key`);
          for (const c of [...((await page.evaluate(MEASURE)) as Clipped[]), ...((await page.evaluate(MEASURE_SELECTS)) as Clipped[])]) problems.push(`ipcam-request ${op}: ${c.what} "${c.text}" needs ${c.needs}px, has ${c.has}px`);
          for (const r of (await page.evaluate(MEASURE_ROWS)) as Array<{ label: string; left: number; expected: number }>) problems.push(`ipcam-request ${op}: the row "${r.label}" starts its control at ${r.left}px, the others at ${r.expected}px`);
          await page.screenshot({ path: join(ARTIFACTS, `ipcam-request-${op}.png`) });
        }
        const storageLabels = await (async () => {
          await page.selectOption('#node-input-operation', 'testNetworkStorage');
          return page.locator('#ipcam-request-params .ipcam-param-row label').allTextContents();
        })();
        assert.deepEqual(storageLabels, ['Share type', 'Share', 'User name', 'Password', 'Workgroup']);
      }
      await page.locator(config ? '#node-config-dialog-cancel' : '#node-dialog-cancel').click();
      await page.locator(ok).waitFor({ state: 'detached' });
    }
    assert.deepEqual(problems, [], `clipped texts:\n${problems.join('\n')}`);
  });
});
