import { strict as assert } from 'node:assert';
import sinon from 'sinon';
import { FRAME_RATE, FrameTicker, checkFrameRate, type FrameResult } from '../lib/frame-ticker';
import { IpcamError } from '../lib/errors';

describe('frame ticker (the live view schedule)', function () {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => (clock = sinon.useFakeTimers()));
  afterEach(() => clock.restore());

  /** A ticker whose fetches wait until the test settles them. */
  function ticker(rate = 2, maxViewers?: number) {
    const pending: Array<{ resolve: (f: string) => void; reject: (e: unknown) => void; signal: AbortSignal }> = [];
    const delivered: Array<FrameResult<string>> = [];
    const t = new FrameTicker<string>({
      rate,
      maxViewers,
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

  it('checks the rate', function () {
    assert.equal(checkFrameRate(''), FRAME_RATE.default);
    assert.equal(checkFrameRate('0.2'), 0.2);
    assert.equal(checkFrameRate(10), 10);
    for (const bad of ['0.1', 11, 'fast', NaN, {}]) assert.throws(() => checkFrameRate(bad), (e: unknown) => e instanceof IpcamError && e.code === 'EINPUT');
  });
});
