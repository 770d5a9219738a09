/**
 * The editor's rules file is generated from lib/ at build time: every operation of both tables
 * is in it with exactly the limits lib/input/params gives, so no dialog keeps a rule of its own.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { EDGE_RECORD_OPERATIONS, OP_CLASSES, REQUEST_OPERATIONS, type Operation } from '../lib/ops';
import { settingsLimits } from '../lib/settings';
import { EVENT_SERVER_SETTINGS } from '../lib/events/server';
import { RELAY_SETTINGS } from '../lib/ops/relay';
import { checkCameraSettings, checkRows, UI_CAMERA_SETTINGS, UI_PLATES_SETTINGS, WIDGET_NODE_SETTINGS } from '../lib/widgets/settings';
import { spec as eventServerSpec } from '../nodes/ipcam-event-server/spec';
import { spec as relaySpec } from '../nodes/ipcam-relay/spec';
import { NODE_PACKAGES, PROJECT_ROOT, WIDGETS_ROOT, declaredNodeTypes, nodeFiles, nodeFolders, nodeSpecs } from './helpers';

interface RulesEntry {
  name: string;
  api: string;
  access: string;
  class: string;
  destructive: boolean;
  label: string;
  summary: string;
  params: unknown;
}

interface Rules {
  operations: Record<string, RulesEntry[]>;
  settings: Record<string, Record<string, unknown>>;
  ptz: unknown;
}

function generatedRules(): Rules {
  const window: { IPCAM_RULES?: Rules } = {};
  runInNewContext(readFileSync(join(PROJECT_ROOT, 'resources', 'rules.js'), 'utf8'), { window });
  assert.ok(window.IPCAM_RULES, 'resources/rules.js sets window.IPCAM_RULES');
  // Objects of another realm: compared as data.
  return JSON.parse(JSON.stringify(window.IPCAM_RULES)) as Rules;
}

function asRules(table: ReadonlyMap<string, Operation>): RulesEntry[] {
  return [...table.values()].map((op) => ({ name: op.name, api: op.api, access: op.access, class: op.class, destructive: op.destructive, label: op.label, summary: op.summary, params: JSON.parse(JSON.stringify(op.params.limits)) as unknown }));
}

describe('editor rules generated from lib/ops', function () {
  it('holds every request operation with its limits, access, class and destructive flag', function () {
    assert.deepEqual(generatedRules().operations['request'], asRules(REQUEST_OPERATIONS));
  });

  it('every rules entry carries a class of OP_CLASSES that agrees with its destructive flag', function () {
    const rules = generatedRules();
    for (const entry of [...(rules.operations['request'] ?? []), ...(rules.operations['edgerecord'] ?? [])]) {
      assert.ok((OP_CLASSES as readonly string[]).includes(entry.class), `${entry.name}: ${entry.class}`);
      assert.equal(entry.destructive, entry.class === 'destructive', entry.name);
    }
  });

  it('the generated help names the class of every operation, and why the shell characters are refused', function () {
    const help = readFileSync(nodeFiles('ipcam-request').shippedHelp, 'utf8');
    for (const op of REQUEST_OPERATIONS.values()) assert.match(help, new RegExp(`<dt>${op.name} <span class="property-type">[A-Z]+, [a-z]+, ${op.class}</span>`), op.name);
    assert.match(help, /a shell acts on them/);
    assert.match(help, /no word starting with a dash/);
  });

  it('holds every edgerecord operation with its limits', function () {
    assert.deepEqual(generatedRules().operations['edgerecord'], asRules(EDGE_RECORD_OPERATIONS));
  });

  it('holds the limits of every node setting and of both PTZ interfaces, as lib/settings gives them', function () {
    const rules = generatedRules();
    // Each node folder's spec, of both packages: the widgets' dialogs load this package's rules.
    const lib = JSON.parse(JSON.stringify(settingsLimits(NODE_PACKAGES.flatMap(nodeSpecs)))) as { nodes: unknown; ptz: unknown };
    assert.deepEqual(rules.settings, lib.nodes);
    assert.deepEqual(rules.ptz, lib.ptz);
    // Every node type has its settings there (the two operation nodes: Overrides).
    // Both packages' node types: the widgets' dialogs take their rules from this package too.
    const types = NODE_PACKAGES.flatMap(nodeFolders);
    assert.deepEqual(Object.keys(rules.settings).sort(), types.sort());
  });

  it('the runtime checks a setting with the same parsers the rules are made of', function () {
    assert.equal(eventServerSpec.settings, EVENT_SERVER_SETTINGS);
    for (const [name, param] of Object.entries(RELAY_SETTINGS)) assert.equal(relaySpec.settings[name as keyof typeof RELAY_SETTINGS], param, name);
    const pulse = RELAY_SETTINGS.pulse.limits;
    assert.equal(pulse.type, 'int');
    if (pulse.type === 'int') assert.throws(() => RELAY_SETTINGS.pulse.parse(String(pulse.max + 1), 'Pulse'), { code: 'EINPUT' });
  });

  it('the widgets check their settings with the parsers of the rules: rate, source, PTZ, presets and rows', function () {
    // The table the rules are written from, and each widget folder's spec.
    const widgets = new Map(nodeSpecs(WIDGETS_ROOT).map((spec) => [spec.type, spec.settings]));
    assert.equal(WIDGET_NODE_SETTINGS['ipcam-ui-camera'], UI_CAMERA_SETTINGS);
    assert.equal(widgets.get('ipcam-ui-camera'), UI_CAMERA_SETTINGS);
    assert.equal(WIDGET_NODE_SETTINGS['ipcam-ui-plates'], UI_PLATES_SETTINGS);
    assert.equal(widgets.get('ipcam-ui-plates'), UI_PLATES_SETTINGS);
    assert.deepEqual(checkCameraSettings({ rate: '0.5', presets: '1, 2,gate, 1' }), { source: 'jpg', rate: 0.5, api: 'none', presets: ['1', '2', 'gate'] });
    assert.equal(checkCameraSettings({ rate: '' }).rate, 1);
    const tooMany = Array.from({ length: 17 }, (_, i) => String(i)).join(',');
    for (const bad of [{ rate: '0.1' }, { rate: '1e1' }, { rate: 'fast' }, { source: 'rtsp' }, { ptz: 'onvif' }, { presets: '1,,2' }, { presets: 'x'.repeat(33) }, { presets: tooMany }]) {
      assert.throws(() => checkCameraSettings(bad), { code: 'EINPUT' }, JSON.stringify(bad));
    }
    assert.equal(checkRows(''), 10);
    assert.equal(checkRows('200'), 200);
    for (const bad of ['0', '201', '2.5', 'ten']) assert.throws(() => checkRows(bad), { code: 'EINPUT' }, bad);
  });

  it('every dialog loads the shared editor code and the rules, copies no rule and has a palette label', function () {
    // One dialog per node type of each package's package.json (a new node type needs no change here).
    const files = NODE_PACKAGES.flatMap((root) => {
      const types = nodeFolders(root);
      assert.deepEqual(types.sort(), declaredNodeTypes(root).sort(), root);
      return types.map((type) => nodeFiles(type).dialog);
    });
    for (const file of files) {
      const html = readFileSync(file, 'utf8');
      assert.match(html, /src="resources\/node-red-contrib-ipcam\/rules\.js"/, file);
      assert.match(html, /src="resources\/node-red-contrib-ipcam\/editor\.js"/, file);
      assert.match(html, /paletteLabel: "/, file);
      // No number range, value list or hand-kept copy of a lib check in the dialog itself.
      assert.doesNotMatch(html, /\b(min|max)\s*:\s*\d/, file);
      assert.doesNotMatch(html, /[Mm]irrors/, file);
      assert.doesNotMatch(html, /RED\.validators\.(regex|number)/, file);
      assert.doesNotMatch(html, /\.test\(\w+\) && Number\(/, file);
      // Result colours come from the theme.
      assert.doesNotMatch(html, /#[0-9a-f]{6}"\s*:/i, file);
    }
  });
});
