/**
 * The help pages and the dialogs' words (issue 24): each help page in the core nodes' shape (one
 * summary line, then Inputs / Outputs / Details as message-property lists), short, with the
 * shared parts (the msg.device entry, the error codes, the stream's behaviour) written once in
 * docs/help and composed by the build into the help the package ships; every operation and
 * parameter of lib/ops carries a plain label into the generated rules and help.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EDGE_RECORD_OPERATIONS, REQUEST_OPERATIONS } from '../lib/ops';
import { statusHelp } from '../lib/status/status';
import { NODE_PACKAGES, PROJECT_ROOT, declaredNodeTypes, nodeFiles, nodeFolders, statusWordsByType } from './helpers';

/** Where a help page is written and where its package ships it (both packages: the nodes and the widgets). */
const SOURCE = (file: string): string => nodeFiles(file.replace(/\.html$/, '')).help;
const SHIPPED = (file: string): string => nodeFiles(file.replace(/\.html$/, '')).shippedHelp;
const PARTS = join(PROJECT_ROOT, 'docs', 'help');
/** Help owned by other work (the device config node and its companions). */
const NOT_HERE = new Set(['ipcam-device.html', 'ipcam-discover.html', 'ipcam-device-status.html']);
/** The core HTTP request node, the most configurable core node, needs 96 lines. */
const CORE_MOST = 96;

const PAGES = NODE_PACKAGES.flatMap(nodeFolders).map((type) => `${type}.html`).filter((f) => !NOT_HERE.has(f));
const NODE_TYPES = NODE_PACKAGES.flatMap(declaredNodeTypes);

/** A help page as shipped, without the operation list the build generates from lib/ops (reference, not prose). */
function shippedProse(file: string): string {
  return readFileSync(SHIPPED(file), 'utf8').replace(/<h3>Operations<\/h3>\s*<dl class="message-properties">[\s\S]*?<\/dl>/, '');
}

describe('help pages', function () {
  it('the shared parts are written once: no help page holds a copy of one', function () {
    const device = readFileSync(join(PARTS, 'msg-device.html'), 'utf8');
    for (const file of PAGES) {
      const text = readFileSync(SOURCE(file), 'utf8');
      assert.doesNotMatch(text, /<dt class="optional">device /, `${file} writes its own msg.device entry`);
      assert.ok(!text.includes(device.trim().slice(0, 80)), file);
    }
  });

  it("each node's Status line is written by the build from lib/status, once, and no page writes its own", function () {
    for (const [type, words] of statusWordsByType()) {
      const file = `${type}.html`;
      // A Dashboard widget's help is its own package's (packages/node-red-dashboard-2-ipcam).
      const source = readFileSync(SOURCE(file), 'utf8');
      const shipped = readFileSync(SHIPPED(file), 'utf8');
      assert.ok(source.includes(`<!-- IPCAM-STATUS: ${type} -->`), `${file} has no status placeholder`);
      assert.doesNotMatch(source, /Status:/, `${file} writes its own status words`);
      assert.equal(shipped.split(`<p>${statusHelp(words)}</p>`).length, 2, `${file}: the status line of the vocabulary, once`);
      assert.doesNotMatch(shipped, /<!-- IPCAM-STATUS/, `${file}: a placeholder is left`);
    }
    assert.doesNotMatch(readFileSync(join(PARTS, 'stream.html'), 'utf8'), /Status:|retry \d+ in/, 'the shared stream part writes status words');
  });

  it('the shipped help has every part composed in: the msg.device entry in every node that takes msg.device, no placeholder left', function () {
    const device = readFileSync(join(PARTS, 'msg-device.html'), 'utf8').trim();
    const errors = readFileSync(join(PARTS, 'errors.html'), 'utf8').trim();
    let withDevice = 0;
    for (const file of PAGES) {
      const source = readFileSync(SOURCE(file), 'utf8');
      const shipped = readFileSync(SHIPPED(file), 'utf8');
      assert.doesNotMatch(shipped, /<!-- (IPCAM-HELP|OPERATIONS)/, `${file}: a placeholder is left`);
      assert.equal(shipped.includes(device), source.includes('IPCAM-HELP: msg-device'), file);
      assert.equal(shipped.includes(errors), source.includes('IPCAM-HELP: errors'), file);
      if (shipped.includes(device)) withDevice++;
    }
    // Every node with a Device setting and an input: the action nodes and the camera widget.
    assert.equal(withDevice, 12);
    assert.ok(NODE_TYPES.length >= withDevice);
  });

  for (const file of PAGES) {
    it(`${file}: one summary line, then the core nodes' sections as message-property lists, under ${CORE_MOST} lines`, function () {
      const text = shippedProse(file);
      const body = text.replace(/^<script[^>]*>\s*/, '');
      assert.match(body, /^<p>[^]*?<\/p>\s*<h3>/, `${file}: the page opens with one summary paragraph`);
      const summary = /^<p>([^]*?)<\/p>/.exec(body)?.[1] ?? '';
      assert.ok(summary.replace(/\s+/g, ' ').length <= 200, `${file}: the summary runs ${summary.length} characters`);
      const sections = [...text.matchAll(/<h3>([^<]+)<\/h3>/g)].map((m) => m[1]);
      assert.ok(sections.includes('Details'), `${file}: no Details`);
      const expected = ['Inputs', 'Outputs', 'Details'].filter((s) => sections.includes(s));
      assert.deepEqual(sections.filter((s) => expected.includes(s ?? '')), expected, `${file}: sections out of order`);
      if (sections.includes('Inputs') || sections.includes('Outputs')) assert.match(text, /<dl class="message-properties">/);
      const lines = text.split('\n').length;
      assert.ok(lines < CORE_MOST, `${file}: ${lines} lines`);
    });
  }
});

describe('plain labels for every operation and parameter, from lib/ops', function () {
  for (const [table, ops] of [['request', REQUEST_OPERATIONS], ['edgerecord', EDGE_RECORD_OPERATIONS]] as const) {
    it(`${table}: each operation and each of its parameters has a label that is not its key`, function () {
      for (const op of ops.values()) {
        assert.ok(op.label !== op.name && /^[A-Z]/.test(op.label), `${op.name}: label "${op.label}"`);
        const fields = op.params.limits.type === 'object' ? op.params.limits.fields : {};
        for (const [name, limits] of Object.entries(fields)) assert.ok(limits.label && limits.label !== name && /^[A-Z]/.test(limits.label), `${op.name}.${name}: label ${String(limits.label)}`);
      }
    });
  }

  it('the generated rules and help carry the labels', function () {
    const rules = readFileSync(join(PROJECT_ROOT, 'resources', 'rules.js'), 'utf8');
    const help = readFileSync(SHIPPED('ipcam-request.html'), 'utf8');
    for (const op of REQUEST_OPERATIONS.values()) {
      assert.ok(rules.includes(`"label": ${JSON.stringify(op.label)}`), `rules.js lacks the label of ${op.name}`);
      assert.ok(help.includes(`<i>${op.label.replace(/&/g, '&amp;')}</i>`), `the help lacks the label of ${op.name}`);
    }
    assert.match(help, /<code>type<\/code> <i>Share type<\/i>/);
  });
});
