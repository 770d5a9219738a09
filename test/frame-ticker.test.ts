import { strict as assert } from 'node:assert';
import sinon from 'sinon';
import { FRAME_RATE, FramePacer, FrameTicker, checkFrameRate, pacerCount, pacerFor, type FrameResult } from '../lib/widgets/frame-ticker';
import { IpcamError } from '../lib/errors/errors';

describe('frame ticker (the live view schedule)', function () {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => (clock = sinon.useFakeTimers()));
  afterEach(() => clock.restore());

  /** A ticker whose fetches wait until the test settles them. */
  function ticker(rate = 2, maxViewers?: number, extra: { pacer?: FramePacer<string>; source?: string; blocked?: () => unknown } = {}) {
    const pending: Array<{ resolve: (f: string) => void; reject: (e: unknown) => void; signal: AbortSignal }> = [];
    const delivered: Array<FrameResult<string>> = [];
    const t = new FrameTicker<string>({
      rate,
      maxViewers,
      ...extra,
      fetch: (signal) => new Promise<string>((resolve, reject) => pending.push({ resolve, reject, signal })),
      deliver: (r) => delivered.push(r),
    });
    return { t, pending, delivered };
  }

  it('fetches nothing while nobody watches', async function () {
    const { t } = ticker();
    await clock.tickAsync(10_000);
    assert.equal(t.fetches, 0);
    assert.equal(t.isRunning, false);
  });

  it('fetches at once for the first viewer, then once per tick whatever the number of viewers', async function () {
    const { t, pending, delivered } = ticker(2);
    t.watch('a');
    t.watch('b');
    t.watch('c');
    assert.equal(t.fetches, 1, 'one fetch at once, not one per viewer');
    pending[0]?.resolve('frame 1');
    await clock.tickAsync(0);
    assert.deepEqual(delivered.map((d) => d.ok && d.frame), ['frame 1']);
    await clock.tickAsync(500);
    assert.equal(t.fetches, 2);
    pending[1]?.resolve('frame 2');
    await clock.tickAsync(500);
    assert.equal(t.fetches, 3);
    assert.equal(t.viewerCount, 3);
  });

  it('skips a tick while the previous fetch is still running (never two requests at once)', async function () {
    const { t, pending } = ticker(10);
    t.watch('a');
    await clock.tickAsync(1000);
    assert.equal(t.fetches, 1, 'the slow fetch holds the next ticks');
    pending[0]?.resolve('late');
    await clock.tickAsync(100);
    assert.equal(t.fetches, 2);
  });

  it('stops and aborts the fetch on its way when the last viewer leaves; resumes when one comes back', async function () {
    const { t, pending, delivered } = ticker(1);
    t.watch('a');
    t.watch('b');
    t.unwatch('a');
    assert.equal(t.isRunning, true);
    t.unwatch('b');
    assert.equal(t.isRunning, false);
    assert.equal(pending[0]?.signal.aborted, true);
    pending[0]?.resolve('too late');
    await clock.tickAsync(5000);
    assert.equal(t.fetches, 1);
    assert.deepEqual(delivered, [], 'an aborted fetch delivers nothing');
    t.watch('c');
    assert.equal(t.fetches, 2);
  });

  it('delivers a failed fetch as an error, and goes on ticking', async function () {
    const { t, pending, delivered } = ticker(1);
    t.watch('a');
    pending[0]?.reject(new IpcamError('ETIMEOUT', 'no answer'));
    await clock.tickAsync(1000);
    assert.equal(delivered[0]?.ok, false);
    assert.equal(t.fetches, 2);
  });

  it('pauses and resumes', async function () {
    const { t, pending } = ticker(1);
    t.watch('a');
    t.pause();
    assert.equal(pending[0]?.signal.aborted, true);
    await clock.tickAsync(5000);
    assert.equal(t.fetches, 1);
    t.resume();
    assert.equal(t.fetches, 2);
  });

  it('bounds its viewers and takes none after close', function () {
    const { t } = ticker(1, 2);
    assert.equal(t.watch('a'), true);
    assert.equal(t.watch('a'), true, 'the same viewer again is no new entry');
    assert.equal(t.watch('b'), true);
    assert.equal(t.watch('c'), false);
    assert.equal(t.viewerCount, 2);
    t.close();
    assert.equal(t.watch('d'), false);
    assert.equal(t.isRunning, false);
  });

  it('watch and unwatch in a loop never fetch faster than the rate', async function () {
    const { t, pending } = ticker(2);
    for (let i = 0; i < 100; i++) {
      t.watch('a');
      t.unwatch('a');
      await clock.tickAsync(10);
    }
    // 1 s of toggles at 2 frames/s: the first at once, then one per 500 ms at most.
    assert.ok(t.fetches <= 3, `${t.fetches} fetches`);
    assert.ok(pending.every((p) => p.signal.aborted));
  });

  it('two views of one device share its pace and their frames', async function () {
    const pacer = new FramePacer<string>();
    const a = ticker(2, undefined, { pacer, source: 'jpg' });
    const b = ticker(2, undefined, { pacer, source: 'jpg' });
    a.t.watch('x');
    b.t.watch('y');
    for (let i = 0; i < 8; i++) {
      for (const p of [...a.pending, ...b.pending]) p.resolve(`frame ${i}`);
      await clock.tickAsync(500);
    }
    const fetched = a.t.fetches + b.t.fetches;
    assert.ok(fetched <= 9, `${fetched} fetches in 4 s at 2/s for two views`);
    assert.ok(a.delivered.length >= 6 && b.delivered.length >= 6, `${a.delivered.length} and ${b.delivered.length} frames`);
  });

  it('views of one device with other sources keep to the fastest rate together', async function () {
    const pacer = new FramePacer<string>();
    const a = ticker(2, undefined, { pacer, source: 'jpg' });
    const b = ticker(2, undefined, { pacer, source: 'cgi' });
    a.t.watch('x');
    b.t.watch('y');
    for (let i = 0; i < 40; i++) {
      for (const p of [...a.pending, ...b.pending]) p.resolve('f');
      await clock.tickAsync(100);
    }
    assert.ok(a.t.fetches + b.t.fetches <= 9, `${a.t.fetches + b.t.fetches} fetches in 4 s`);
    assert.ok(a.t.fetches >= 2 && b.t.fetches >= 2, 'both get their turn');
  });

  it('fetches nothing while blocked and says why once; fetches again once it is not', async function () {
    let blocked: unknown = new IpcamError('EAUTH', 'refused');
    const { t, delivered } = ticker(2, undefined, { blocked: () => blocked });
    t.watch('a');
    await clock.tickAsync(5000);
    assert.equal(t.fetches, 0);
    assert.equal(delivered.length, 1);
    assert.equal(delivered[0]?.ok, false);
    blocked = undefined;
    await clock.tickAsync(500);
    assert.equal(t.fetches, 1);
  });

  it('shares one pacer per device key until the last user releases it', function () {
    const key = {};
    const before = pacerCount();
    const one = pacerFor(key);
    const two = pacerFor(key);
    assert.equal(one.pacer, two.pacer);
    one.release();
    one.release();
    assert.equal(pacerCount(), before + 1);
    two.release();
    assert.equal(pacerCount(), before);
  });

  it('checks the rate', function () {
    assert.equal(checkFrameRate(''), FRAME_RATE.default);
    assert.equal(checkFrameRate('0.2'), 0.2);
    assert.equal(checkFrameRate(10), 10);
    for (const bad of ['0.1', 11, 'fast', NaN, {}]) assert.throws(() => checkFrameRate(bad), (e: unknown) => e instanceof IpcamError && e.code === 'EINPUT');
  });
});
