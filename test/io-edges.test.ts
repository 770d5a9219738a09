import { strict as assert } from 'node:assert';
import { IoEdgeTracker, parseIoLines, type IoReport, type IoState } from '../lib/ops/io';

/** Reports as compact `[port, active, edge, resync]` rows. */
function rows(reports: IoReport[]): Array<[number, boolean, string | null, boolean]> {
  return reports.map((r) => [r.state.port, r.state.active, r.state.edge, r.resync]);
}

function lines(text: string): IoState[] {
  return parseIoLines(text);
}

/** A read whose answer the test releases when it likes. */
function pendingRead(): { read: () => Promise<IoState[]>; answer(states: IoState[]): void } {
  let answer: (states: IoState[]) => void = () => undefined;
  const promise = new Promise<IoState[]>((resolve) => (answer = resolve));
  return { read: () => promise, answer: (states) => answer(states) };
}

const state = (port: number, active: boolean): IoState => ({ port, active, edge: null });

describe('IoEdgeTracker: each change of an I/O port once', function () {
  it('reports the first state of a port with edge null, then only changes', function () {
    const t = new IoEdgeTracker(0);
    assert.deepEqual(rows(t.fromStream(lines('IO1:L\r\nIO2:H'))), [
      [1, false, null, true],
      [2, true, null, true],
    ]);
    assert.deepEqual(rows(t.fromStream(lines('IO1:L IO2:H'))), [], 'repeated states are no news');
    assert.deepEqual(rows(t.fromStream(lines('IO1:/'))), [[1, true, 'rising', false]]);
    assert.deepEqual(rows(t.fromStream(lines('IO1:H'))), []);
    assert.deepEqual(rows(t.fromStream(lines('IO2:L'))), [[2, false, 'falling', true]], 'a state that differs is a change found');
  });

  it('an edge on a port never seen is that edge', function () {
    const t = new IoEdgeTracker(0);
    assert.deepEqual(rows(t.fromStream(lines('IO3:\\'))), [[3, false, 'falling', false]]);
  });

  it('an edge into the state an earlier edge left reports the missed opposite edge first', function () {
    const t = new IoEdgeTracker(0);
    t.fromStream(lines('IO1:L'));
    t.fromStream(lines('IO1:/'));
    assert.deepEqual(rows(t.fromStream(lines('IO1:/'))), [
      [1, false, 'falling', true],
      [1, true, 'rising', false],
    ]);
  });

  it('an edge into the state a read found is no news: the read had seen that change', function () {
    const t = new IoEdgeTracker(0);
    t.fromStream(lines('IO1:H'));
    assert.deepEqual(rows(t.fromStream(lines('IO1:/'))), []);
    assert.deepEqual(rows(t.fromStream(lines('IO1:\\'))), [[1, false, 'falling', false]]);
  });

  it('a read reports what differs, with the edge, flagged resync', async function () {
    const t = new IoEdgeTracker(0);
    t.fromStream(lines('IO1:L IO2:L IO3:H'));
    const reports = await t.resync(async () => [state(1, false), state(2, true), state(3, false)]);
    assert.deepEqual(rows(reports), [
      [2, true, 'rising', true],
      [3, false, 'falling', true],
    ]);
    assert.deepEqual(rows(await t.resync(async () => [state(2, true)])), [], 'read again: nothing new');
  });

  it('the first read reports the ports it reads with edge null', async function () {
    const t = new IoEdgeTracker(0);
    assert.deepEqual(t.portsToRead([]), [1]);
    assert.deepEqual(rows(await t.resync(async () => [state(1, true), state(2, false)])), [
      [1, true, null, true],
      [2, false, null, true],
    ]);
    assert.deepEqual(t.portsToRead([]), [1, 2]);
    assert.deepEqual(t.portsToRead([4]), [4]);
  });

  it('stream parts that come while a read is out win over its answer (no duplicate, no stale state)', async function () {
    const t = new IoEdgeTracker(0);
    t.fromStream(lines('IO1:L IO2:L'));
    const pending = pendingRead();
    const resync = t.resync(pending.read);
    // Port 1 rises while the read is out; the answer may be from before or after.
    assert.deepEqual(rows(t.fromStream(lines('IO1:/'))), [[1, true, 'rising', false]]);
    pending.answer([state(1, false), state(2, true)]);
    assert.deepEqual(rows(await resync), [[2, true, 'rising', true]]);
  });

  it('stream parts within the settle time after the answer win too', async function () {
    const t = new IoEdgeTracker(100);
    t.fromStream(lines('IO1:L'));
    const pending = pendingRead();
    const resync = t.resync(pending.read);
    // The answer saw port 1 already up; the part saying so was still in the parser.
    pending.answer([state(1, true)]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(rows(t.fromStream(lines('IO1:/'))), [[1, true, 'rising', false]]);
    assert.deepEqual(rows(await resync), []);
  });

  it('a newer read makes an older one give nothing', async function () {
    const t = new IoEdgeTracker(0);
    t.fromStream(lines('IO1:L'));
    const older = pendingRead();
    const first = t.resync(older.read);
    const second = t.resync(async () => [state(1, true)]);
    older.answer([state(1, true)]);
    assert.deepEqual(rows(await second), [[1, true, 'rising', true]]);
    assert.deepEqual(rows(await first), []);
  });

  it('an aborted read rejects and changes nothing', async function () {
    const t = new IoEdgeTracker(50);
    t.fromStream(lines('IO1:L'));
    const controller = new AbortController();
    const resync = t.resync(async () => [state(1, true)], controller.signal);
    controller.abort();
    await assert.rejects(resync, { name: 'AbortError' });
    assert.deepEqual(rows(await new IoEdgeTracker(0).resync(async () => [state(1, false)])), [[1, false, null, true]]);
    assert.deepEqual(rows(t.fromStream(lines('IO1:L'))), []);
  });

  it('keeps no state for port numbers beyond the range (a hostile device)', function () {
    const t = new IoEdgeTracker(0);
    assert.deepEqual(rows(t.fromStream(lines('IO0:H IO1000:H IO99999999:/'))), []);
    assert.deepEqual(t.portsToRead([]), [1]);
  });
});
