/**
 * The editor's rules file is generated from lib/ at build time: every operation of both tables
 * is in it with exactly the limits lib/params gives, so no dialog keeps a rule of its own.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { EDGE_RECORD_OPERATIONS, REQUEST_OPERATIONS, type Operation } from '../lib/ops';
import { PROJECT_ROOT } from './helpers';

interface RulesEntry {
  name: string;
  api: string;
  access: string;
  destructive: boolean;
  summary: string;
  params: unknown;
}

function generatedRules(): { operations: Record<string, RulesEntry[]> } {
  const window: { IPCAM_RULES?: { operations: Record<string, RulesEntry[]> } } = {};
  runInNewContext(readFileSync(join(PROJECT_ROOT, 'resources', 'rules.js'), 'utf8'), { window });
  assert.ok(window.IPCAM_RULES, 'resources/rules.js sets window.IPCAM_RULES');
  // Objects of another realm: compared as data.
  return JSON.parse(JSON.stringify(window.IPCAM_RULES)) as { operations: Record<string, RulesEntry[]> };
}

function asRules(table: ReadonlyMap<string, Operation>): RulesEntry[] {
  return [...table.values()].map((op) => ({ name: op.name, api: op.api, access: op.access, destructive: op.destructive, summary: op.summary, params: JSON.parse(JSON.stringify(op.params.limits)) as unknown }));
}

describe('editor rules generated from lib/ops', function () {
  it('holds every request operation with its limits, access and destructive flag', function () {
    assert.deepEqual(generatedRules().operations['request'], asRules(REQUEST_OPERATIONS));
  });

  it('holds every edgerecord operation with its limits', function () {
    assert.deepEqual(generatedRules().operations['edgerecord'], asRules(EDGE_RECORD_OPERATIONS));
  });

  it('the dialogs of both nodes load the shared editor code and the rules, and copy no rule', function () {
    for (const node of ['ipcam-request', 'ipcam-edgerecord']) {
      const html = readFileSync(join(PROJECT_ROOT, 'nodes', `${node}.html`), 'utf8');
      assert.match(html, /src="resources\/node-red-contrib-ipcam\/rules\.js"/);
      assert.match(html, /src="resources\/node-red-contrib-ipcam\/editor\.js"/);
      // No number range or value list written into the dialog itself.
      assert.doesNotMatch(html, /\b(min|max)\s*:\s*\d/);
    }
  });
});
