/**
 * One status vocabulary (issue 32): every status a node shows is made by lib/status, cut in one
 * place to 32 characters with an ellipsis, timed by one clock, in DESIGN's colours only; a node
 * that shows anything else fails its tests (test/node-helper checks every status seen when a
 * flow is unloaded), and the help's status lines are written from the same words.
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { IpcamError } from '../lib/errors/errors';
import * as status from '../lib/status/status';
import deviceNode from '../nodes/ipcam-device/ipcam-device';
import snapshotNode from '../nodes/ipcam-snapshot/ipcam-snapshot';
import { PROJECT_ROOT, declaredNodeTypes, statusWordsByType } from './helpers';
import { actionFlow, DEVICE, deviceCredentials, deviceDef, getNode, helper } from './node-helper';

/** DESIGN's status rule: green dot, yellow ring, red ring, grey ring, nothing else. */
const DESIGN_LOOKS = new Set(['green dot', 'yellow ring', 'red ring', 'grey ring']);
/** Config nodes show no status. */
const CONFIG_NODES = new Set(['ipcam-device', 'ipcam-event-server']);

function wordOf(type: string, s: status.Status | status.NoStatus): string | undefined {
  return status.statusWordOf(statusWordsByType().get(type) ?? [], s);
}

describe('status vocabulary (lib/status)', function () {
  it("uses DESIGN's fills and shapes only, and every word has an example it matches", function () {
    for (const [name, w] of Object.entries(status.STATUS_WORDS)) {
      assert.ok(DESIGN_LOOKS.has(`${w.fill} ${w.shape}`), `${name}: ${w.fill} ${w.shape}`);
      assert.match(w.example, w.pattern, name);
      assert.ok(w.example.length <= status.STATUS_MAX, name);
    }
  });

  it('names the words of every node type that shows a status, and each word of a node is one of the vocabulary', function () {
    // The nodes of this package and the Dashboard widgets of packages/node-red-dashboard-2-ipcam.
    const widgets = declaredNodeTypes(join(PROJECT_ROOT, 'packages', 'node-red-dashboard-2-ipcam'));
    const shown = [...declaredNodeTypes(PROJECT_ROOT), ...widgets].filter((t) => !CONFIG_NODES.has(t));
    assert.deepEqual([...statusWordsByType().keys()].sort(), shown.sort());
  });

  it('cuts every text at 32 characters with an ellipsis, in one place', function () {
    const long = status.failed(new IpcamError('EINPUT', 'x'.repeat(100)));
    assert.equal(long.text.length, 32);
    assert.ok(long.text.endsWith('\u2026'));
    assert.equal(status.operationDone('getNetworkStorageStatus ok').text, 'getNetworkStorageStatus ok');
    assert.equal(status.cutStatus('line\nbreak'), 'line break');
  });

  it('tells every time as HH:MM:SS local, from one clock', function () {
    const at = new Date(2026, 0, 2, 3, 4, 5).getTime();
    assert.equal(status.clock(at), '03:04:05');
    assert.equal(status.clock('not a time'), '--:--:--');
    assert.equal(status.streamState('retrying', { attempt: 3, at }).text, 'retry 3 at 03:04:05');
    assert.equal(status.ioEvent(2, false, at).text, 'IO2 off 03:04:05');
    assert.equal(status.levelEvent(true, 100, at).text, 'alarm 100 03:04:05');
    assert.equal(status.alive(at).text, 'alive 03:04:05');
    assert.equal(status.plateSeen('ABC123', at).text, 'ABC123 03:04:05');
    assert.equal(status.haActivity('relay 1 on', at).text, 'relay 1 on 03:04:05');
  });

  it("keeps the words users see, in DESIGN's colours (a blue plan and a yellow dot are gone)", function () {
    assert.deepEqual(status.failed(new IpcamError('EAUTH', 'rejected'), { name: 'Front gate cam', host: '10.0.0.5' }), { fill: 'red', shape: 'ring', text: 'EAUTH: Front gate cam' });
    assert.deepEqual(status.synced({ added: 1, modified: 1, removed: 1, failed: 0 }, true), { fill: 'green', shape: 'dot', text: 'plan +1 ~1 -1' });
    assert.deepEqual(status.synced({ added: 1, modified: 0, removed: 0, failed: 2 }, false), { fill: 'yellow', shape: 'ring', text: '+1 ~0 -0 !2' });
    assert.deepEqual(status.platesDone(1, 3, 'added'), { fill: 'yellow', shape: 'ring', text: '1/3 added' });
    assert.deepEqual(status.relayDone(2, false, false), { fill: 'grey', shape: 'ring', text: 'relay 2 off' });
    assert.deepEqual(status.devicesSummary(1, 0, 2), { fill: 'grey', shape: 'ring', text: '1 online, 0 down' });
    assert.deepEqual(status.streamState('auth-failed', { delay: 300_000 }), { fill: 'red', shape: 'ring', text: 'auth failed, 5 min' });
  });

  it('knows which node may show which word', function () {
    assert.equal(wordOf('ipcam-relay', status.relayDone(1, true, false)), 'relayOn');
    assert.equal(wordOf('ipcam-snapshot', status.relayDone(1, true, false)), undefined);
    assert.equal(wordOf('ipcam-snapshot', status.cleared()), 'cleared');
    assert.equal(wordOf('ipcam-snapshot', { fill: 'green', shape: 'dot', text: 'something new' }), undefined);
    assert.equal(wordOf('ipcam-snapshot', { fill: 'blue', shape: 'dot', text: '12.0 kB' } as unknown as status.Status), undefined);
  });

  it('no node or module but lib/status writes a status literal', function () {
    const strays: string[] = [];
    for (const dir of ['nodes', 'lib', 'packages/node-red-dashboard-2-ipcam/nodes']) {
      const root = join(PROJECT_ROOT, dir);
      for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
        if (!file.endsWith('.ts') || file.split(sep).join('/') === 'status/status.ts' || file.startsWith('simulator')) continue;
        const text = readFileSync(join(root, file), 'utf8');
        text.split('\n').forEach((line, i) => {
          if (/fill:\s*'|status\(\{/.test(line)) strays.push(`${dir}/${file}:${i + 1}: ${line.trim()}`);
        });
      }
    }
    assert.deepEqual(strays, []);
  });

  describe('the check on deployed nodes (test/node-helper)', function () {
    // Nothing is sent: the device's port is never connected to.
    const SNAPSHOT_FLOW = actionFlow({ id: 'snap', type: 'ipcam-snapshot', device: DEVICE }, [deviceDef({ port: 9 })]);

    after(async function () {
      await helper.unload().catch(() => undefined);
    });

    it('fails a test whose node showed a status outside the vocabulary', async function () {
      await helper.load([deviceNode, snapshotNode], SNAPSHOT_FLOW, deviceCredentials('unused'));
      getNode('snap').status({ fill: 'blue', shape: 'dot', text: 'plan' });
      await assert.rejects(helper.unload(), /no word of lib\/status/);
    });

    it('passes one whose node showed only words of the vocabulary', async function () {
      await helper.load([deviceNode, snapshotNode], SNAPSHOT_FLOW, deviceCredentials('unused'));
      getNode('snap').status(status.image(12_345));
      getNode('snap').status(status.cleared());
      await helper.unload();
    });
  });
});
