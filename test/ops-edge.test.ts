/**
 * Edge records and network storage (spec 4.11, 4.15) from the operation table: the exact request
 * of each operation (dates percent-encoded, paths encoded name by name), the typed results against
 * the simulator over real sockets, the `all` walk (every record of the range exactly once when
 * several share a start time; a device that repeats itself ends with EDEVICE after a bounded
 * number of requests), and bad input as EINPUT with nothing sent.
 */
import { strict as assert } from 'node:assert';
import { runOperation, targetOf } from '../lib/ops';
import { MAX_ANSWER_LINES, parseEventNames, parseListing, parseRecords, RECORD_LIMIT } from '../lib/ops/edge';
import { localDateTime } from '../lib/input/params';
import type { RecordedRequest, Simulator } from '../lib/simulator';
import { SNAPSHOT_JPEG } from '../lib/simulator/images';
import { SimulatedRecords, type SimRecord } from '../lib/simulator/records';
import type { DeviceClient } from '../lib/transport/client';
import { expectRejection } from './helpers';
import { edgeOp as op } from './ops-helper';
import { useSimulatorAndClient } from './ops-fixture';

const FOLDER = 'IPCamera585B69000001';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function listOf(payload: unknown): Array<Record<string, unknown>> {
  assert.ok(Array.isArray(payload), `not a list: ${JSON.stringify(payload)}`);
  for (const item of payload) assert.ok(isRecord(item));
  return payload as Array<Record<string, unknown>>;
}

/** What the device holds in a range, oldest first, as the operation should give it. */
function expected(records: SimRecord[], filter: (r: SimRecord) => boolean = () => true): Array<Record<string, unknown>> {
  return records
    .filter(filter)
    .sort((a, b) => (a.start === b.start ? a.id - b.id : a.start < b.start ? -1 : 1))
    .map((r) => ({ name: r.name, recordId: r.id, start: r.start, stop: r.stop, duration: r.duration, trigger: r.trigger, recordingType: r.recordingType, complete: true, storage: 'SD', media: 'jpg' }));
}

describe('operations: edge records and network storage', function () {
  let sim: Simulator;
  let client: DeviceClient;
  // A fresh client each time: the MAC read once per client must not hide a request from a test.
  useSimulatorAndClient((made) => ({ sim, client } = made), { clientPerTest: true });

  beforeEach(function () {
    sim.state.records = new SimulatedRecords();
  });

  /** Request targets the simulator accepted (authentication rounds left out). */
  function targets(): string[] {
    return sim.state.requests.filter((r: RecordedRequest) => r.auth !== 'rejected').map((r) => (r.rawQuery === '' ? r.path : `${r.path}?${r.rawQuery}`));
  }

  describe('requests as the spec writes them', function () {
    it('search with nothing given: sort asc, every trigger type, 10 a page', async function () {
      await runOperation(client, op('search'), {});
      assert.deepEqual(targets(), ['/cgi-bin/admin/edgerecord?sort=asc&trigtype=All&limit=10']);
    });

    it('search with every parameter: dates and names percent-encoded, in the order of the spec', async function () {
      await runOperation(client, op('search'), { from: '2026-03-01 08:00:00', to: '2026-03-02 23:59:59', trigger: 'Motion', sort: 'desc', limit: '5', typename: 'Door motion' });
      assert.deepEqual(targets(), ['/cgi-bin/admin/edgerecord?sort=desc&trigtype=Motion&fromdate=2026-03-01%2008%3A00%3A00&todate=2026-03-02%2023%3A59%3A59&limit=5&typename=Door%20motion']);
    });

    it('search takes a Date or an ISO string with a zone, sent as this host\'s local device time', async function () {
      const date = new Date(2026, 2, 1, 8, 30, 5);
      assert.equal(localDateTime(date), '2026-03-01 08:30:05');
      await runOperation(client, op('search'), { from: date, to: new Date(2026, 2, 2, 0, 0, 0).toISOString() });
      assert.deepEqual(targets(), ['/cgi-bin/admin/edgerecord?sort=asc&trigtype=All&fromdate=2026-03-01%2008%3A30%3A05&todate=2026-03-02%2000%3A00%3A00&limit=10']);
    });

    it('eventNames asks typename=geteventname', function () {
      const build = op('eventNames').build;
      assert.ok(build);
      assert.equal(targetOf(build({})), '/cgi-bin/admin/edgerecord?typename=geteventname');
    });

    it('listStorage reads the MAC (Network.eth0.MACAddress) once per client, then lists below IPCamera<MAC>/', async function () {
      await runOperation(client, op('listStorage'), { directory: '2026-03-01/08/' });
      await runOperation(client, op('listStorage'), { directory: '2026-03-01/08/1002' });
      await runOperation(client, op('listStorage'), {});
      assert.deepEqual(targets(), [
        '/cgi-bin/admin/param?action=list&group=Network.eth0.MACAddress',
        `/cgi-bin/admin/sdstate?action=filelistnas&directory=${FOLDER}%2F2026-03-01%2F08%2F`,
        `/cgi-bin/admin/sdstate?action=filelistnas&directory=${FOLDER}%2F2026-03-01%2F08%2F1002`,
        `/cgi-bin/admin/sdstate?action=filelistnas&directory=${FOLDER}%2F`,
      ]);
    });

    it('listStorage falls back to the XML device information when the CGI parameter is missing', async function () {
      sim.state.params.delete('Network.eth0.MACAddress');
      try {
        await runOperation(client, op('listStorage'), { directory: '2026-03-01' });
        assert.deepEqual(targets(), ['/cgi-bin/admin/param?action=list&group=Network.eth0.MACAddress', '/GetDeviceInfo', `/cgi-bin/admin/sdstate?action=filelistnas&directory=${FOLDER}%2F2026-03-01`]);
      } finally {
        sim.state.params.set('Network.eth0.MACAddress', sim.state.device.mac);
      }
    });

    it('download with a given mac asks /ns/IPCamera<MAC>/<path> with each name encoded on its own', async function () {
      await runOperation(client, op('download'), { path: '2026-03-01/08/1002/snapshot1.jpg', mac: '58:5B:69:00:00:01' });
      await expectRejection(runOperation(client, op('download'), { path: 'a b/c#d?.jpg', mac: '585B69000001' }), 'EHTTP');
      assert.deepEqual(targets(), [`/ns/${FOLDER}/2026-03-01/08/1002/snapshot1.jpg`, `/ns/${FOLDER}/a%20b/c%23d%3F.jpg`]);
    });
  });

  describe('against the simulator', function () {
    it('search gives one page of typed records and the device total', async function () {
      const result = await runOperation(client, op('search'), {});
      assert.equal(result.total, 40);
      assert.deepEqual(result.payload, expected(sim.state.records.records).slice(0, 10));
    });

    it('search filters by range, trigger type and event name; desc gives the newest first', async function () {
      const all = sim.state.records.records;
      let result = await runOperation(client, op('search'), { from: '2026-03-02 00:00:00', to: '2026-03-03 12:00:00', trigger: 'Motion', limit: 99 });
      const motion = expected(all, (r) => r.start >= '2026-03-02 00:00:00' && r.start <= '2026-03-03 12:00:00' && r.trigger === 'Motion');
      assert.ok(motion.length > 1);
      assert.deepEqual(result.payload, motion);
      assert.equal(result.total, motion.length);

      result = await runOperation(client, op('search'), { typename: 'Gate input', sort: 'desc', limit: 3 });
      const gate = expected(all, (r) => r.event === 'Gate input').reverse();
      assert.deepEqual(result.payload, gate.slice(0, 3));
      assert.equal(result.total, gate.length);
    });

    it('eventNames gives the event-list names', async function () {
      const { payload } = await runOperation(client, op('eventNames'), undefined);
      assert.deepEqual(payload, sim.state.records.eventNames());
      assert.ok((payload as string[]).length >= 3);
    });

    it('listStorage walks dates, hours, records and files; download gives the file with its name and type', async function () {
      let result = await runOperation(client, op('listStorage'), {});
      const dates = listOf(result.payload);
      assert.deepEqual(
        dates.map((e) => e['name']),
        ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04'],
      );
      assert.equal(result.total, 4);
      assert.deepEqual(dates[0], { name: '2026-03-01', path: '2026-03-01', size: 4096, date: 'Mar 1 06:12', directory: true });

      result = await runOperation(client, op('listStorage'), { directory: `${String(dates[0]?.['path'])}/` });
      const hours = listOf(result.payload);
      assert.deepEqual(hours[1], { name: '08', path: '2026-03-01/08', size: 4096, date: 'Mar 1 08:30', directory: true });

      result = await runOperation(client, op('listStorage'), { directory: hours[1]?.['path'] });
      const records = listOf(result.payload);
      assert.deepEqual(
        records.map((e) => e['path']),
        ['2026-03-01/08/1002', '2026-03-01/08/1003', '2026-03-01/08/1004'],
      );

      result = await runOperation(client, op('listStorage'), { directory: records[0]?.['path'] });
      const files = listOf(result.payload);
      assert.deepEqual(
        files.map((e) => [e['path'], e['directory']]),
        [
          ['2026-03-01/08/1002/snapshot1.jpg', false],
          ['2026-03-01/08/1002/snapshot2.jpg', false],
          ['2026-03-01/08/1002/recoring.xml', false],
        ],
      );
      assert.equal(files[0]?.['size'], SNAPSHOT_JPEG.length);

      const jpeg = await runOperation(client, op('download'), { path: files[0]?.['path'] });
      assert.ok(Buffer.isBuffer(jpeg.payload));
      assert.ok(jpeg.payload.equals(SNAPSHOT_JPEG));
      assert.equal(jpeg.filename, 'snapshot1.jpg');
      assert.equal(jpeg.contentType, 'image/jpeg');

      const xml = await runOperation(client, op('download'), { path: files[2]?.['path'] });
      assert.ok(Buffer.isBuffer(xml.payload));
      assert.match(xml.payload.toString('utf8'), /<recording><id>1002<\/id>/);
      assert.equal(xml.filename, 'recoring.xml');
      assert.equal(xml.contentType, 'application/octet-stream', 'XML is not on the allow list: a browser could run it as a page');
    });

    it('a file that is not there is EHTTP 404', async function () {
      const err = await expectRejection(runOperation(client, op('download'), { path: '2026-03-01/08/1002/nothing.jpg' }), 'EHTTP');
      assert.equal(err.status, 404);
    });

    it('an error line in a 200 answer (a value the device refuses) is EDEVICE', async function () {
      await expectRejection(runOperation(client, op('search'), { trigger: 'x'.repeat(65) }), 'EINPUT');
      // Past our checks on purpose: a limit the device refuses.
      const { contextFor } = await import('../lib/ops');
      await expectRejection(contextFor(client).cgi({ path: '/cgi-bin/admin/edgerecord', query: { limit: 100 }, what: 'edge record search' }), 'EDEVICE', /limit/);
    });
  });

  describe('all: every record of the range exactly once', function () {
    for (const limit of [1, 2, 3, 7, 10, undefined]) {
      it(`pages of ${limit ?? 'the default'}: three records share 08:30:00 and two 15:20:00 every day`, async function () {
        const result = await runOperation(client, op('search'), { all: true, from: '2026-03-01 08:30:00', to: '2026-03-03 15:20:00', ...(limit !== undefined && { limit }) });
        const want = expected(sim.state.records.records, (r) => r.start >= '2026-03-01 08:30:00' && r.start <= '2026-03-03 15:20:00');
        assert.equal(want.length, 27);
        assert.deepEqual(result.payload, want);
        assert.equal(result.total, want.length);
        if (limit === undefined) assert.equal(targets().length, 1, 'the default page for all is the largest, 99');
      });
    }

    it('sort desc gives the walked records newest first', async function () {
      const result = await runOperation(client, op('search'), { all: true, sort: 'desc', limit: 4 });
      assert.deepEqual(result.payload, expected(sim.state.records.records).reverse());
    });

    it('with a trigger filter, and with exactly a page of records in one second', async function () {
      const many: SimRecord[] = [];
      for (let i = 0; i < 30; i++) many.push({ id: 5000 + i, name: `burst-${i}`, start: '2026-04-01 12:00:00', stop: '2026-04-01 12:00:10', duration: 10, trigger: i % 2 === 0 ? 'Motion' : 'Tamper', event: 'Door motion', recordingType: 'Event' });
      many.push({ id: 6000, name: 'after', start: '2026-04-01 12:00:01', stop: '2026-04-01 12:00:11', duration: 10, trigger: 'Motion', event: 'Door motion', recordingType: 'Event' });
      sim.state.records.records = many;
      const result = await runOperation(client, op('search'), { all: true, trigger: 'Motion', limit: 15 });
      assert.deepEqual(result.payload, expected(many, (r) => r.trigger === 'Motion'));
      const everything = await runOperation(client, op('search'), { all: true, limit: 5 });
      assert.deepEqual(everything.payload, expected(many));
    });

    it('more records in one second than the largest page: EDEVICE, bounded', async function () {
      const many: SimRecord[] = [];
      for (let i = 0; i < 120; i++) many.push({ id: 7000 + i, name: `burst-${i}`, start: '2026-04-01 12:00:00', stop: '2026-04-01 12:00:10', duration: 10, trigger: 'Motion', event: 'Door motion', recordingType: 'Event' });
      sim.state.records.records = many;
      await expectRejection(runOperation(client, op('search'), { all: true, limit: 10 }), 'EDEVICE', /More than 99 records start at 2026-04-01 12:00:00/);
      assert.equal(targets().length, 2);
    });

    it('a device that repeats its page (ignores fromdate) ends with EDEVICE after two pages', async function () {
      sim.state.records.ignoreFromDate = true;
      await expectRejection(runOperation(client, op('search'), { all: true, limit: 5 }), 'EDEVICE', /ignores fromdate/);
      assert.equal(targets().length, 2);
    });
  });

  describe('parsers are bounded and lenient', function () {
    it('records: keys in any case and with a prefix, a record ends where a key comes again', function () {
      const { records, total } = parseRecords('count(*)=2\r\nrecord1.NAME=a\r\nRecordID=x7\r\nDuration=00:01:05\r\nComplete=no\r\nname=b\r\nStartTime=2026-01-01 00:00:00\r\n');
      assert.equal(total, 2);
      assert.deepEqual(
        records.map((r) => [r.name, r.recordId, r.duration, r.complete, r.start]),
        [
          ['a', 'x7', 65, false, ''],
          ['b', '', null, false, '2026-01-01 00:00:00'],
        ],
      );
      assert.throws(() => parseRecords('<html>nope</html>'), /not an edge record list/);
      assert.throws(() => parseRecords('Name=a\n'.repeat(MAX_ANSWER_LINES + 1)), /longer than/);
    });

    it('event names: bare or after =, count(*) skipped, no repeats', function () {
      assert.deepEqual(parseEventNames('count(*)=3\r\nEventName=Door\r\nGate\r\n\r\nEventName=Door\r\n'), ['Door', 'Gate']);
    });

    it('listing: Total line, ls lines in both date styles, hostile names left out', function () {
      const { entries, total } = parseListing(
        [
          'Total 4',
          'drwxr-xr-x    2 0        0             4096 Mar  1 08:30 1002',
          '-rw-r--r-- 1 root root 1234 2026-03-01 08:30:05.000000000 +0000 my file.jpg',
          'drwxr-xr-x    2 root     root          4096 Jan  1  2025 ..',
          '-rw-r--r--    1 root     root          4096 Jan  1  2025 ../../etc/passwd',
          'lrwxrwxrwx    1 root     root            4 Jan  1 10:00 link -> /etc',
          'garbage',
        ].join('\n'),
        ['2026-03-01', '08'],
      );
      assert.equal(total, 4);
      assert.deepEqual(entries, [
        { name: '1002', path: '2026-03-01/08/1002', size: 4096, date: 'Mar 1 08:30', directory: true },
        { name: 'my file.jpg', path: '2026-03-01/08/my file.jpg', size: 1234, date: '2026-03-01 08:30:05.000000000 +0000', directory: false },
        { name: 'link', path: '2026-03-01/08/link', size: 4, date: 'Jan 1 10:00', directory: false },
      ]);
    });
  });

  describe('bad input is EINPUT and nothing is sent', function () {
    const cases: Array<[string, unknown]> = [
      ['search', { from: '2026-02-30 00:00:00' }],
      ['search', { from: '2026-03-01T08:00:00' }],
      ['search', { to: '2026-03-01 24:00:00' }],
      ['search', { from: '2026-03-02 00:00:00', to: '2026-03-01 00:00:00' }],
      ['search', { limit: 0 }],
      ['search', { limit: RECORD_LIMIT.max + 1 }],
      ['search', { limit: '1e1' }],
      ['search', { sort: 'up' }],
      ['search', { all: 'yes' }],
      ['search', { trigger: 'Mo\ntion' }],
      ['search', { trigger: 'x'.repeat(65) }],
      ['search', { typename: 'geteventname' }],
      ['search', { typename: 'a\u0000b' }],
      ['search', { page: 2 }],
      ['search', 'everything'],
      ['eventNames', { typename: 'x' }],
      ['listStorage', { directory: '../etc' }],
      ['listStorage', { directory: '2026-03-01/../../x' }],
      ['listStorage', { directory: '2026-03-01//08' }],
      ['listStorage', { directory: 'a\\b' }],
      ['listStorage', { directory: 'a\rb' }],
      ['listStorage', { directory: 'x'.repeat(256) }],
      ['listStorage', { directory: 'a/b/c/d/e/f/g/h/i' }],
      ['listStorage', { directory: '2026-03-01', mac: '58:5B:69:00:00' }],
      ['listStorage', { directory: '2026-03-01', mac: 'zz:5B:69:00:00:01' }],
      ['download', {}],
      ['download', { path: '' }],
      ['download', { path: '2026-03-01/08/' }],
      ['download', { path: '/' }],
      ['download', { path: '2026-03-01/08/1002/..' }],
      ['download', { path: './a.jpg' }],
      ['download', { path: 'a\u0085b.jpg' }],
      ['download', { path: ['a.jpg'] }],
    ];
    for (const [name, input] of cases) {
      it(`${name} ${JSON.stringify(input)?.slice(0, 60)}`, async function () {
        await expectRejection(runOperation(client, op(name), input), 'EINPUT');
        assert.equal(sim.state.requestCount, 0);
      });
    }
  });
});
