import { strict as assert } from 'node:assert';
import { cameraAction, platesAction, refused } from '../lib/widgets/actions';
import { RefusalLog } from '../lib/widgets/client-refusals';

describe('widget actions: what a browser may ask (lib/widgets/actions)', function () {
  const xml = { ptz: 'xml' as const, presets: ['2', 'gate'] };
  const cgi = { ptz: 'cgi' as const, presets: ['1'] };
  const none = { ptz: 'none' as const, presets: [] };

  it('takes each camera action in its exact shape', function () {
    assert.deepEqual(cameraAction({ action: 'watch' }, none), { action: 'watch' });
    assert.deepEqual(cameraAction({ action: 'unwatch' }, none), { action: 'unwatch' });
    assert.deepEqual(cameraAction({ action: 'save' }, none), { action: 'save' });
    assert.deepEqual(cameraAction({ action: 'release' }, xml), { action: 'release' });
    assert.deepEqual(cameraAction({ action: 'press', move: 'ZoomIn' }, xml), { action: 'press', move: 'ZoomIn' });
    assert.deepEqual(cameraAction({ action: 'press', move: 'LeftUp' }, cgi), { action: 'press', move: 'LeftUp' });
    assert.deepEqual(cameraAction({ action: 'preset', preset: 'gate' }, xml), { action: 'preset', preset: 'gate' });
    assert.deepEqual(cameraAction(Object.assign(Object.create(null) as object, { action: 'watch' }), none), { action: 'watch' });
  });

  it('refuses anything else: other fields, a device, types, moves and presets the settings do not allow, sizes, shapes', function () {
    const bad: Array<[unknown, typeof xml | typeof cgi | typeof none]> = [
      [{ action: 'watch', device: 'cam2' }, xml],
      [{ action: 'press', move: 'Up', device: 'cam2' }, xml],
      [{ action: 'press', move: 'Up', speed: 8 }, xml],
      [{ action: 'press' }, xml],
      [{ action: 'press', move: 'Stop' }, xml],
      [{ action: 'press', move: 'up' }, xml],
      [{ action: 'press', move: 'toString' }, xml],
      [{ action: 'press', move: '__proto__' }, xml],
      [{ action: 'press', move: ['Up'] }, xml],
      [{ action: 'press', move: 'ZoomIn' }, cgi],
      [{ action: 'press', move: 'Up' }, none],
      [{ action: 'preset', preset: '3' }, xml],
      [{ action: 'preset', preset: 2 }, xml],
      [{ action: 'preset', preset: '1' }, none],
      [{ action: 'pause' }, xml],
      [{ action: 'select', row: 1 }, xml],
      [{ action: 'Watch' }, xml],
      [{ action: 'watch'.padEnd(100, ' ') }, xml],
      [{ action: 'x'.repeat(1_000_000) }, xml],
      [{ kind: 'watch' }, xml],
      [{ ipcam: { kind: 'watch' } }, xml],
      [{ payload: 'pause' }, xml],
      [{ payload: Buffer.from('picture') }, xml],
      ['watch', xml],
      [['watch'], xml],
      [null, xml],
      [42, xml],
      [Object.assign(Object.create({ action: 'watch' }) as object, {}), xml],
      [Object.assign(new (class Box {})(), { action: 'watch' }), xml],
      [{ action: 'watch', [Symbol('x')]: 1 }, xml],
    ];
    for (const [msg, allows] of bad) {
      const result = cameraAction(msg, allows);
      assert.ok(refused(result), `${JSON.stringify(msg)?.slice(0, 60)} was taken as ${JSON.stringify(result)}`);
      assert.ok(result.refused.length < 80, 'a reason in our words, not the message');
    }
  });

  it('takes the plates actions and refuses the rest', function () {
    assert.deepEqual(platesAction({ action: 'select', row: 12 }), { action: 'select', row: 12 });
    assert.deepEqual(platesAction({ action: 'watch' }), { action: 'watch' });
    for (const msg of [
      { action: 'select', row: '12' },
      { action: 'select', row: 0 },
      { action: 'select', row: -1 },
      { action: 'select', row: 1.5 },
      { action: 'select', row: Number.MAX_SAFE_INTEGER + 2 },
      { action: 'select', row: 1, payload: { plate: 'FORGED' } },
      { action: 'select', id: 1 },
      { action: 'click', id: 1 },
      { action: 'add', row: { plate: 'FORGED' } },
      { action: 'press', move: 'Up' },
    ]) assert.ok(refused(platesAction(msg)), JSON.stringify(msg));
  });
});

describe('refused browser messages (lib/widgets/client-refusals)', function () {
  it('counts every one and warns at most once per client per minute, with the count held back', function () {
    let now = 1_000_000;
    const lines: string[] = [];
    const log = new RefusalLog((t) => lines.push(t), { now: () => now });
    for (let i = 0; i < 500; i++) log.refuse('a', 'a (10.0.0.9)', 'not an action');
    log.refuse('b', 'b (10.0.0.8)', 'not an action');
    assert.equal(log.total, 501);
    assert.equal(lines.length, 2);
    assert.match(lines[0] ?? '', /dashboard client a \(10\.0\.0\.9\) dropped: not an action/);
    now += 59_999;
    log.refuse('a', 'a', 'again');
    assert.equal(lines.length, 2);
    now += 1;
    log.refuse('a', 'a', 'again');
    assert.equal(lines.length, 3);
    assert.match(lines[2] ?? '', /500 more dropped since the last warning/);
  });

  it('follows a bounded number of clients: beyond them, one shared warning a minute', function () {
    const lines: string[] = [];
    const log = new RefusalLog((t) => lines.push(t), { maxClients: 4, now: () => 5 });
    for (let i = 0; i < 1000; i++) log.refuse(`c${i}`, `c${i}`, 'junk');
    assert.equal(log.total, 1000);
    assert.equal(lines.length, 5, lines.join('\n'));
    assert.match(lines[4] ?? '', /beyond the first 4/);
  });
});
