import { strict as assert } from 'node:assert';
import { startSimulator, type RecordedRequest, type Simulator } from '../lib/simulator';
import { DeviceClient, type DeviceResponse, type RequestOptions } from '../lib/transport/client';
import { buildXml, child, elementToNode, items, parseXml, path, type XmlElement } from '../lib/xml/codec';
import { syncPlates } from '../lib/ops/plate-sync';
import { addPlates, deletePlates, MAX_PAGES, MAX_PLATES, modifyPlate, queryPlates } from '../lib/ops/plates';
import { getVehicleConfig, setVehicleConfig, type VehicleConfig } from '../lib/ops/vehicle-config';
import { SIM_PASSWORD, SIM_USER, expectRejection } from './helpers';

/** The namespace and versions the spec fixes (written out, not imported, so a change shows). */
const NS = 'http://www.ipc.com/ver10';
const PLATE_VERSION = '2.1.0';
const VEHICLE_VERSION = '2.0.0';
/** A plate that breaks naive CDATA and escaping: `]]>`, `<`, `&` and non-ASCII. */
const NASTY = 'AB]]>C<&é中';
const STRING_FIELDS = ['licensePlateNumber', 'groupId', 'carOwner', 'telephone', 'beginTime', 'endTime'];

/** `P0001` ... : sorts and reads in order. */
function plateName(i: number): string {
  return `P${String(i).padStart(4, '0')}`;
}

function plateNames(from: number, to: number): string[] {
  const out: string[] = [];
  for (let i = from; i <= to; i++) out.push(plateName(i));
  return out;
}

/** The root of a request document, with the version and namespace checked. */
function docOf(req: RecordedRequest | undefined, version: string): XmlElement {
  assert.ok(req, 'the request did not reach the simulator');
  const root = parseXml(req.body);
  assert.equal(root.name, 'config');
  assert.equal(root.attrs['version'], version);
  assert.equal(root.attrs['xmlns'], NS);
  return root;
}

/**
 * Every string element of the raw body carries `type="string"` and holds nothing but CDATA, and
 * every element named in `names` that occurs is such a string element.
 */
function assertCdataStrings(body: string, names: string[] = STRING_FIELDS): void {
  const typed = [...body.matchAll(/<([A-Za-z]+) type="string">([\s\S]*?)<\/\1>/g)];
  const declared = body.split('type="string"').length - 1;
  assert.equal(typed.length, declared, `a type="string" element is not written as <x type="string">...</x>: ${body}`);
  for (const m of typed) assert.match(m[2] ?? '', /^(?:<!\[CDATA\[[\s\S]*?\]\]>)+$/, `<${m[1]}> is not CDATA: ${m[0]}`);
  for (const name of names) {
    const opened = [...body.matchAll(new RegExp(`<${name}[\\s/>]`, 'g'))].length;
    const asString = typed.filter((m) => m[1] === name).length;
    assert.equal(opened, asString, `<${name}> is sent without type="string" + CDATA: ${body}`);
  }
}

/** Text of a child element, which must be present. */
function textOf(el: XmlElement | undefined, name: string): string {
  const c = child(el, name);
  assert.ok(c, `<${name}> is missing`);
  return c.text;
}

/** The plate numbers and group of each item of an AddLicensePlates request, index checked 1..n. */
function addItems(req: RecordedRequest | undefined): Array<{ plate: string; group: string }> {
  const root = docOf(req, PLATE_VERSION);
  const list = child(root, 'licensePlates');
  assert.ok(list, 'licensePlates is missing');
  const entries = items(list);
  assert.equal(list.attrs['type'], 'list');
  assert.equal(list.attrs['maxCount'], '100');
  assert.equal(list.attrs['count'], String(entries.length));
  assert.deepEqual(
    entries.map((item) => textOf(item, 'index')),
    entries.map((_, i) => String(i + 1)),
    'index runs 1..n in every request',
  );
  assertCdataStrings(req?.body ?? '');
  return entries.map((item) => ({ plate: textOf(item, 'licensePlateNumber'), group: textOf(item, 'groupId') }));
}

/** searchFilter of a GetLicensePlates request as numbers. */
function filterOf(req: RecordedRequest | undefined): { resultOffset: number; maxResult: number; group: string } {
  const root = docOf(req, PLATE_VERSION);
  const filter = child(root, 'searchFilter');
  assert.ok(filter, 'searchFilter is missing');
  assertCdataStrings(req?.body ?? '', ['groupId']);
  return { resultOffset: Number(textOf(filter, 'resultOffset')), maxResult: Number(textOf(filter, 'maxResult')), group: textOf(filter, 'groupId') };
}

/** A client that hands AddLicensePlates replies over with their items in reverse order. */
class ReversingClient extends DeviceClient {
  override async request(opts: RequestOptions): Promise<DeviceResponse> {
    const res = await super.request(opts);
    if (opts.path !== '/AddLicensePlates') return res;
    const root = parseXml(res.body);
    const reply = child(root, 'licensePlatesReply');
    assert.ok(reply, 'the simulator sent no licensePlatesReply');
    reply.children.reverse();
    return { ...res, body: Buffer.from(buildXml(elementToNode(root)), 'utf8') };
  }
}

describe('plates and vehicle config against the simulator', function () {
  let sim: Simulator;
  let client: DeviceClient;

  beforeEach(async function () {
    sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
    client = new DeviceClient({ host: '127.0.0.1', port: sim.port, auth: 'basic', username: SIM_USER, password: SIM_PASSWORD, timeout: 5000 });
  });

  afterEach(async function () {
    await client.close();
    await sim.close();
  });

  /** The requests the simulator accepted, optionally only those to one path. */
  function requests(path?: string): RecordedRequest[] {
    return sim.state.requests.filter((r) => r.auth !== 'rejected' && (path === undefined || r.path === path));
  }

  function paths(): string[] {
    return requests().map((r) => r.path);
  }

  function seed(plates: string[], group = '1'): void {
    for (const plate of plates) assert.equal(sim.state.plates.add(plate, group), 0);
  }

  function storedOwner(plate: string, group = '1'): string | undefined {
    return sim.state.plates.get(plate, group)?.owner;
  }

  describe('AddLicensePlates', function () {
    it('sends one 2.1.0 document: list count/maxCount 100, index 1..n, strings typed and in CDATA', async function () {
      const results = await addPlates(client, ['A1', 'B2', { plate: 'C3', group: '2' }]);
      assert.deepEqual(results, [
        { plate: 'A1', group: '1', ok: true, errorCode: 0 },
        { plate: 'B2', group: '1', ok: true, errorCode: 0 },
        { plate: 'C3', group: '2', ok: true, errorCode: 0 },
      ]);
      assert.deepEqual(paths(), ['/AddLicensePlates']);
      const [req] = requests();
      assert.equal(req?.method, 'POST');
      assert.match(String(req?.headers['content-type']), /^application\/xml/);
      assert.deepEqual(addItems(req), [
        { plate: 'A1', group: '1' },
        { plate: 'B2', group: '1' },
        { plate: 'C3', group: '2' },
      ]);
      assert.ok(sim.state.plates.get('A1', '1'));
      assert.ok(sim.state.plates.get('C3', '2'));
      assert.equal(sim.state.plates.get('C3', '1'), undefined);
    });

    it('splits 250 plates into 3 requests of 100, 100 and 50 and maps each reply code to its plate', async function () {
      const plates = plateNames(1, 250);
      // Already there: 203 for these, at known places in the first, second and third request.
      seed([plateName(7), plateName(150), plateName(230)]);
      sim.resetRequests();

      const results = await addPlates(client, plates);

      const adds = requests('/AddLicensePlates');
      assert.equal(requests().length, 3, 'nothing but the three adds');
      assert.deepEqual(
        adds.map((r) => addItems(r).length),
        [100, 100, 50],
      );
      assert.deepEqual(
        adds.flatMap((r) => addItems(r).map((i) => i.plate)),
        plates,
        'every plate once, in order',
      );
      assert.ok(adds.every((r) => addItems(r).every((i) => i.group === '1')));

      assert.equal(results.length, 250);
      assert.deepEqual(
        results.map((r) => r.plate),
        plates,
      );
      const failed = new Set([plateName(7), plateName(150), plateName(230)]);
      for (const r of results) {
        if (failed.has(r.plate)) {
          assert.equal(r.ok, false, r.plate);
          assert.equal(r.errorCode, 203, r.plate);
          assert.match(r.error ?? '', /already exists/i);
        } else {
          assert.deepEqual(r, { plate: r.plate, group: '1', ok: true, errorCode: 0 });
        }
      }
      assert.equal(sim.state.plates.size, 250);
    });

    it('maps reply items by their index, not by their position in the reply', async function () {
      await client.close();
      client = new ReversingClient({ host: '127.0.0.1', port: sim.port, auth: 'basic', username: SIM_USER, password: SIM_PASSWORD, timeout: 5000 });
      seed(['R2', 'R5']);
      const results = await addPlates(client, ['R1', 'R2', 'R3', 'R4', 'R5']);
      assert.deepEqual(
        results.map((r) => [r.plate, r.errorCode]),
        [
          ['R1', 0],
          ['R2', 203],
          ['R3', 0],
          ['R4', 0],
          ['R5', 203],
        ],
      );
    });

    it('sets owner, phone, begin and end with a follow-up ModifyLicensePlate', async function () {
      const details = { owner: 'Ann Example', phone: '+49 30 1234', begin: '2026-01-01 00:00:00', end: '2027-12-31 23:59:59' };
      const results = await addPlates(client, [{ plate: 'D1', ...details }, 'D2']);
      assert.deepEqual(results, [
        { plate: 'D1', group: '1', ok: true, errorCode: 0 },
        { plate: 'D2', group: '1', ok: true, errorCode: 0 },
      ]);
      assert.deepEqual(paths(), ['/AddLicensePlates', '/ModifyLicensePlate'], 'one modify, only for the plate with details');

      const modify = requests('/ModifyLicensePlate')[0];
      const plate = child(docOf(modify, PLATE_VERSION), 'licensePlate');
      assert.ok(plate);
      assert.deepEqual(
        plate.children.map((c) => [c.name, c.attrs['type'], c.text]),
        [
          ['licensePlateNumber', 'string', 'D1'],
          ['groupId', 'string', '1'],
          ['carOwner', 'string', details.owner],
          ['telephone', 'string', details.phone],
          ['beginTime', 'string', details.begin],
          ['endTime', 'string', details.end],
        ],
      );
      assertCdataStrings(modify?.body ?? '');

      const stored = sim.state.plates.get('D1', '1');
      assert.deepEqual(
        stored && { owner: stored.owner, phone: stored.phone, begin: stored.begin, end: stored.end },
        details,
      );
      assert.equal(storedOwner('D2'), '');
    });

    it('with upsert, modifies plates that already exist (203) instead of failing them', async function () {
      seed(['E1']);
      sim.resetRequests();
      const results = await addPlates(client, [{ plate: 'E1', owner: 'Bob' }, { plate: 'E2', owner: 'Cy' }, 'E3'], { upsert: true });
      assert.deepEqual(results, [
        { plate: 'E1', group: '1', ok: true, errorCode: 0 },
        { plate: 'E2', group: '1', ok: true, errorCode: 0 },
        { plate: 'E3', group: '1', ok: true, errorCode: 0 },
      ]);
      assert.equal(storedOwner('E1'), 'Bob');
      assert.equal(storedOwner('E2'), 'Cy');
      assert.deepEqual(paths(), ['/AddLicensePlates', '/ModifyLicensePlate', '/ModifyLicensePlate']);
    });

    it('without upsert, a duplicate is a failed entry (203) and the others go through', async function () {
      seed(['E1']);
      sim.resetRequests();
      const results = await addPlates(client, [{ plate: 'E1', owner: 'Bob' }, { plate: 'E2', owner: 'Cy' }]);
      assert.equal(results.length, 2);
      const [dup, added] = results;
      assert.equal(dup?.plate, 'E1');
      assert.equal(dup?.ok, false);
      assert.equal(dup?.errorCode, 203);
      assert.match(dup?.error ?? '', /already exists/i);
      assert.deepEqual(added, { plate: 'E2', group: '1', ok: true, errorCode: 0 });
      assert.equal(storedOwner('E1'), '', 'the existing plate is left alone');
      assert.equal(storedOwner('E2'), 'Cy');
      assert.deepEqual(paths(), ['/AddLicensePlates', '/ModifyLicensePlate']);
      assert.deepEqual(child(docOf(requests('/ModifyLicensePlate')[0], PLATE_VERSION), 'licensePlate')?.children.map((c) => c.text).slice(0, 2), ['E2', '1']);
    });

    it('a full library gives 202 for each plate that did not fit', async function () {
      sim.state.plates.capacity = 2;
      const results = await addPlates(client, ['F1', 'F2', 'F3', 'F4']);
      assert.deepEqual(
        results.map((r) => [r.plate, r.ok, r.errorCode]),
        [
          ['F1', true, 0],
          ['F2', true, 0],
          ['F3', false, 202],
          ['F4', false, 202],
        ],
      );
      for (const r of results.slice(2)) assert.match(r.error ?? '', /full/i);
      assert.equal(sim.state.plates.size, 2);
    });
  });

  describe('GetLicensePlates', function () {
    it('reads 250 plates back across pages, all in order, resultOffset 1-based', async function () {
      const plates = plateNames(1, 250);
      await addPlates(client, plates);
      sim.resetRequests();

      const { plates: read, total } = await queryPlates(client);
      assert.equal(total, 250);
      assert.deepEqual(
        read.map((p) => p.plate),
        plates,
      );
      for (const p of read) {
        assert.equal(p.group, '1');
        assert.match(p.begin, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
        assert.match(p.end, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
        assert.deepEqual([p.type, p.owner, p.card, p.phone], ['', '', '', '']);
      }
      assert.deepEqual(paths(), ['/GetLicensePlates', '/GetLicensePlates', '/GetLicensePlates']);
      assert.deepEqual(
        requests().map(filterOf),
        [
          { resultOffset: 1, maxResult: 100, group: '1' },
          { resultOffset: 101, maxResult: 100, group: '1' },
          { resultOffset: 201, maxResult: 100, group: '1' },
        ],
      );
    });

    it('offset and limit return the right slice (offset 0 = resultOffset 1)', async function () {
      await addPlates(client, plateNames(1, 250));
      const cases: Array<{ offset?: number; limit?: number; want: string[]; filters: Array<[number, number]> }> = [
        { offset: 0, limit: 1, want: [plateName(1)], filters: [[1, 1]] },
        { offset: 95, limit: 10, want: plateNames(96, 105), filters: [[96, 10]] },
        { offset: 20, limit: 150, want: plateNames(21, 170), filters: [[21, 100], [121, 50]] },
        { offset: 240, want: plateNames(241, 250), filters: [[241, 100]] },
        { limit: 300, want: plateNames(1, 250), filters: [[1, 100], [101, 100], [201, 100]] },
        { offset: 250, limit: 5, want: [], filters: [[251, 5]] },
      ];
      for (const c of cases) {
        sim.resetRequests();
        const { plates, total } = await queryPlates(client, { offset: c.offset, limit: c.limit });
        const label = JSON.stringify({ offset: c.offset, limit: c.limit });
        assert.equal(total, 250, label);
        assert.deepEqual(
          plates.map((p) => p.plate),
          c.want,
          label,
        );
        assert.deepEqual(
          requests().map((r) => {
            const f = filterOf(r);
            return [f.resultOffset, f.maxResult];
          }),
          c.filters,
          label,
        );
      }
    });

    it('an empty group (errorCode 20) is an empty list with total 0, not an error', async function () {
      await addPlates(client, ['G1']);
      sim.resetRequests();
      assert.deepEqual(await queryPlates(client, { group: '9' }), { plates: [], total: 0 });
      assert.deepEqual(paths(), ['/GetLicensePlates']);
      assert.equal(filterOf(requests()[0]).group, '9');
    });

    it('pages until a short page when the device declares no total', async function () {
      seed(plateNames(1, 230));
      sim.state.plates.sendTotal = false;
      sim.resetRequests();
      const { plates, total } = await queryPlates(client);
      assert.deepEqual(plates.map((p) => p.plate), plateNames(1, 230));
      assert.equal(total, 230);
      assert.equal(requests('/GetLicensePlates').length, 3);
      // An exact multiple of the page size needs one more (empty) page to know it is the end.
      sim.state.plates.clear();
      seed(plateNames(1, 200));
      sim.resetRequests();
      assert.equal((await queryPlates(client)).plates.length, 200);
      assert.equal(requests('/GetLicensePlates').length, 3);
    });

    describe('paging is bounded: a device that ignores resultOffset ends the read with EDEVICE', function () {
      const modes: Array<{ what: string; sendTotal: boolean; bogusTotal?: number }> = [
        { what: 'no total', sendTotal: false },
        { what: 'total="4294967295"', sendTotal: true, bogusTotal: 4_294_967_295 },
        { what: 'its real total', sendTotal: true },
      ];
      for (const m of modes) {
        it(`${m.what}: the second page repeats the first, EDEVICE after two requests`, async function () {
          seed(plateNames(1, 250));
          sim.state.plates.setPaging({ ignoreOffset: true, sendTotal: m.sendTotal, bogusTotal: m.bogusTotal ?? null });
          sim.resetRequests();
          const err = await expectRejection(queryPlates(client), 'EDEVICE', /ignores resultOffset/);
          assert.match(err.message, /resultOffset 101 .* resultOffset 1\b/);
          assert.deepEqual(
            requests().map((r) => filterOf(r).resultOffset),
            [1, 101],
          );
        });
      }

      it('a limit over one page (a shorter second page starting with the same plate) is EDEVICE too', async function () {
        seed(plateNames(1, 250));
        sim.state.plates.ignoreOffset = true;
        sim.resetRequests();
        await expectRejection(queryPlates(client, { limit: 150 }), 'EDEVICE', /ignores resultOffset/);
        assert.equal(requests().length, 2);
      });

      it('fewer plates than a page: one short page is the whole list, as from any device', async function () {
        seed(plateNames(1, 30));
        sim.state.plates.setPaging({ ignoreOffset: true, sendTotal: false });
        sim.resetRequests();
        const { plates, total } = await queryPlates(client);
        assert.deepEqual(plates.map((p) => p.plate), plateNames(1, 30));
        assert.equal(total, 30);
        assert.equal(requests().length, 1);
      });

      it('a total of 4294967295 does not drive the loop: a device that pages right is read to its short page', async function () {
        seed(plateNames(1, 250));
        sim.state.plates.bogusTotal = 4_294_967_295;
        sim.resetRequests();
        const { plates, total } = await queryPlates(client);
        assert.deepEqual(plates.map((p) => p.plate), plateNames(1, 250));
        assert.equal(total, 250, 'the absurd total is not reported');
        assert.equal(requests().length, 3);
        // One page more than the count of a multiple of the page size (the empty page ends it).
        sim.state.plates.clear();
        seed(plateNames(1, 200));
        sim.resetRequests();
        assert.equal((await queryPlates(client)).plates.length, 200);
        assert.equal(requests().length, 3);
      });

      it(`the page cap (${MAX_PAGES} pages = ${MAX_PLATES} plates / 100; lowered here with maxPages) ends an endless read with EDEVICE`, async function () {
        assert.equal(MAX_PAGES, Math.ceil(MAX_PLATES / 100));
        seed(plateNames(1, 450));
        sim.state.plates.sendTotal = false;
        sim.resetRequests();
        await expectRejection(queryPlates(client, {}, { maxPages: 3 }), 'EDEVICE', /3 pages .*too many pages/);
        assert.deepEqual(
          requests().map((r) => filterOf(r).resultOffset),
          [1, 101, 201],
        );
        // maxPages may lower the cap, never raise it.
        for (const maxPages of [0, MAX_PAGES + 1, 2.5]) await expectRejection(queryPlates(client, {}, { maxPages }), 'EINPUT', /maxPages/);
        assert.equal(requests().length, 3);
      });

      it('the mode is switched at run time through the control API and shown in /_sim/state', async function () {
        seed(plateNames(1, 250));
        const post = async (body: unknown): Promise<Response> =>
          fetch(`${sim.url}/_sim/plates`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        const on = await post({ ignoreOffset: true, bogusTotal: 4_294_967_295 });
        assert.equal(on.status, 200);
        assert.deepEqual(await on.json(), { sendTotal: true, ignoreOffset: true, bogusTotal: 4_294_967_295 });
        const state = (await (await fetch(`${sim.url}/_sim/state`)).json()) as { platePaging: unknown };
        assert.deepEqual(state.platePaging, { sendTotal: true, ignoreOffset: true, bogusTotal: 4_294_967_295 });
        await expectRejection(queryPlates(client), 'EDEVICE', /ignores resultOffset/);

        assert.equal((await post({ ignoreOffset: 'yes' })).status, 400);
        assert.equal((await post({ bogusTotal: -1 })).status, 400);
        const off = await post({ ignoreOffset: false, bogusTotal: null });
        assert.deepEqual(await off.json(), { sendTotal: true, ignoreOffset: false, bogusTotal: null });
        const { plates, total } = await queryPlates(client);
        assert.equal(plates.length, 250);
        assert.equal(total, 250);
      });
    });

    it('reads the other fields as the device stores them', async function () {
      await addPlates(client, [{ plate: 'H1', group: '3', owner: 'Dee', phone: '555', begin: '2026-03-01 08:00:00', end: '2026-03-31 18:00:00' }]);
      const { plates, total } = await queryPlates(client, { group: '3' });
      assert.equal(total, 1);
      assert.deepEqual(plates, [{ plate: 'H1', group: '3', begin: '2026-03-01 08:00:00', end: '2026-03-31 18:00:00', type: '', owner: 'Dee', card: '', phone: '555' }]);
    });
  });

  describe('ModifyLicensePlate and DeleteLicensePlate', function () {
    it('modify sends only the given fields, each typed string in CDATA, and answers { plate, group, ok }', async function () {
      seed(['M1']);
      const before = { ...sim.state.plates.get('M1', '1') };
      sim.resetRequests();
      assert.deepEqual(await modifyPlate(client, { plate: 'M1', phone: '0800' }), { plate: 'M1', group: '1', ok: true });
      const req = requests('/ModifyLicensePlate')[0];
      const plate = child(docOf(req, PLATE_VERSION), 'licensePlate');
      assert.deepEqual(
        plate?.children.map((c) => [c.name, c.attrs['type'], c.text]),
        [
          ['licensePlateNumber', 'string', 'M1'],
          ['groupId', 'string', '1'],
          ['telephone', 'string', '0800'],
        ],
      );
      assertCdataStrings(req?.body ?? '');
      assert.deepEqual(sim.state.plates.get('M1', '1'), { ...before, phone: '0800' });

      // An empty owner clears it, still as a CDATA string.
      await modifyPlate(client, { plate: 'M1', owner: '' });
      assertCdataStrings(requests('/ModifyLicensePlate')[1]?.body ?? '');
      assert.equal(storedOwner('M1'), '');
    });

    it('modify of an unknown plate is EDEVICE with device code 204', async function () {
      const err = await expectRejection(modifyPlate(client, { plate: 'NOPE', owner: 'x' }), 'EDEVICE');
      assert.equal(err.deviceCode, 204);
      assert.match(err.message, /not found/i);
      assert.deepEqual(paths(), ['/ModifyLicensePlate']);
    });

    it('delete sends one deleteAction per plate; an unknown plate is a failed entry (204)', async function () {
      seed(['K1', 'K2']);
      seed(['K1'], '2');
      sim.resetRequests();
      const results = await deletePlates(client, ['K1', 'UNKNOWN', { plate: 'K2' }]);
      assert.deepEqual(
        results.map((r) => [r.plate, r.group, r.ok, r.errorCode]),
        [
          ['K1', '1', true, 0],
          ['UNKNOWN', '1', false, 204],
          ['K2', '1', true, 0],
        ],
      );
      assert.match(results[1]?.error ?? '', /not found/i);
      assert.equal(results[0]?.error, undefined);
      const deletes = requests('/DeleteLicensePlate');
      assert.equal(deletes.length, 3);
      assert.deepEqual(
        deletes.map((r) => {
          const action = child(docOf(r, PLATE_VERSION), 'deleteAction');
          assertCdataStrings(r.body);
          return [textOf(action, 'licensePlateNumber'), textOf(action, 'groupId')];
        }),
        [
          ['K1', '1'],
          ['UNKNOWN', '1'],
          ['K2', '1'],
        ],
      );
      assert.equal(sim.state.plates.get('K1', '1'), undefined);
      assert.ok(sim.state.plates.get('K1', '2'), 'the same number in another group stays');
    });

    it(`a plate with "]]>", "<", "&" and non-ASCII (${NASTY}) round-trips through add, query, modify and delete`, async function () {
      const added = await addPlates(client, [NASTY]);
      assert.deepEqual(added, [{ plate: NASTY, group: '1', ok: true, errorCode: 0 }]);
      assert.ok(sim.state.plates.get(NASTY, '1'), 'the device stored exactly that plate');
      assert.deepEqual(addItems(requests('/AddLicensePlates')[0]), [{ plate: NASTY, group: '1' }]);

      let read = await queryPlates(client);
      assert.deepEqual(
        read.plates.map((p) => p.plate),
        [NASTY],
      );

      assert.deepEqual(await modifyPlate(client, { plate: NASTY, owner: NASTY }), { plate: NASTY, group: '1', ok: true });
      const modify = requests('/ModifyLicensePlate')[0];
      assertCdataStrings(modify?.body ?? '');
      assert.equal(textOf(child(docOf(modify, PLATE_VERSION), 'licensePlate'), 'carOwner'), NASTY);
      assert.equal(storedOwner(NASTY), NASTY);
      read = await queryPlates(client);
      assert.equal(read.plates[0]?.owner, NASTY);
      assert.equal(read.plates[0]?.plate, NASTY);

      assert.deepEqual(await deletePlates(client, NASTY), [{ plate: NASTY, group: '1', ok: true, errorCode: 0 }]);
      assert.equal(sim.state.plates.size, 0);
      assertCdataStrings(requests('/DeleteLicensePlate')[0]?.body ?? '');
      assert.deepEqual(await queryPlates(client), { plates: [], total: 0 });
    });
  });

  describe('vehicle config', function () {
    const REGIONS = [
      { name: 'U.S.A', continent: 'NorthAmerica' },
      { name: 'Canada', continent: 'NorthAmerica' },
      { name: 'Germany', continent: 'Europe' },
      { name: 'Britain', continent: 'Europe' },
    ];
    const INITIAL: VehicleConfig = {
      enabled: true,
      sensitivity: 50,
      region: 'Germany',
      saveTargetPicture: true,
      saveSourcePicture: false,
      dedup: { enabled: true, interval: 5 },
      zone: { x1: 1000, y1: 2000, x2: 9000, y2: 8000 },
      alarmMode: 'plateOnly',
      options: { regions: REGIONS, alarmLists: ['blackList', 'whiteList', 'strangerList'] },
    };

    it('reads the typed config', async function () {
      assert.deepEqual(await getVehicleConfig(client), INITIAL);
      assert.deepEqual(paths(), ['/GetSmartVehicleConfig']);
    });

    it('reads what the device holds, not fixed values', async function () {
      Object.assign(sim.state.vehicle, { enabled: false, sensitivity: 13, region: 'Britain', saveSourcePicture: true, dedupEnabled: false, dedupInterval: 42, zone: { X1: 1, Y1: 2, X2: 3, Y2: 4 } });
      assert.deepEqual(await getVehicleConfig(client), {
        ...INITIAL,
        enabled: false,
        sensitivity: 13,
        region: 'Britain',
        saveSourcePicture: true,
        dedup: { enabled: false, interval: 42 },
        zone: { x1: 1, y1: 2, x2: 3, y2: 4 },
      });
    });

    it('a partial change is read-modify-write: only the changed values differ on the device', async function () {
      const before = structuredClone(sim.state.vehicle);
      const change = { sensitivity: 70, saveSourcePicture: true, dedup: { interval: 9 }, zone: { x1: 0, y1: 10, x2: 5000, y2: 6000 } };
      const result = await setVehicleConfig(client, change);

      assert.deepEqual(sim.state.vehicle, { ...before, sensitivity: 70, saveSourcePicture: true, dedupInterval: 9, zone: { X1: 0, Y1: 10, X2: 5000, Y2: 6000 } });
      const expected: VehicleConfig = { ...INITIAL, sensitivity: 70, saveSourcePicture: true, dedup: { enabled: true, interval: 9 }, zone: change.zone };
      assert.deepEqual(result, expected);
      // Read, write, and read back what the device now holds.
      assert.deepEqual(paths(), ['/GetSmartVehicleConfig', '/SetSmartVehicleConfig', '/GetSmartVehicleConfig']);

      const set = requests('/SetSmartVehicleConfig')[0];
      const vehicle = child(docOf(set, VEHICLE_VERSION), 'vehicle');
      assert.ok(vehicle, 'vehicle block missing');
      assert.equal(textOf(vehicle, 'plateSencitivity'), '70', 'the device spelling plateSencitivity is kept');
      assert.equal(child(vehicle, 'plateSensitivity'), undefined);
      assert.doesNotMatch(set?.body ?? '', /plateSensitivity/);
      assert.equal(textOf(vehicle, 'plateSupportArea'), 'Germany');
      assert.equal(path(vehicle, 'dedupMode', 'intervalTime')?.text, '9');
      assert.equal(path(vehicle, 'dedupMode', 'switch')?.text, 'true');
      assert.equal(path(vehicle, 'plateMatch', 'alarmMode')?.text, 'plateOnly');

      assert.deepEqual(await getVehicleConfig(client), expected, 'a fresh read agrees');
    });

    it('switching detection off changes the top-level switch, not the dedup switch', async function () {
      const before = structuredClone(sim.state.vehicle);
      const result = await setVehicleConfig(client, { enabled: false });
      assert.deepEqual(sim.state.vehicle, { ...before, enabled: false });
      assert.deepEqual(result, { ...INITIAL, enabled: false });
    });

    it('the config as read can be given back unchanged: the device keeps every value', async function () {
      const before = structuredClone(sim.state.vehicle);
      const read = await getVehicleConfig(client);
      assert.deepEqual(await setVehicleConfig(client, read), INITIAL);
      assert.deepEqual(sim.state.vehicle, before);
    });

    it('changing only the region changes nothing else', async function () {
      const before = structuredClone(sim.state.vehicle);
      const result = await setVehicleConfig(client, { region: 'Canada' });
      assert.deepEqual(sim.state.vehicle, { ...before, region: 'Canada' });
      assert.deepEqual(result, { ...INITIAL, region: 'Canada' });
    });

    it('API 1.x: no dedup and no alarmMode in the result; changes still work', async function () {
      sim.state.vehicle.api = '1.x';
      const config = await getVehicleConfig(client);
      assert.equal('dedup' in config, false);
      assert.equal('alarmMode' in config, false);
      const rest: VehicleConfig = { ...INITIAL };
      delete rest.dedup;
      delete rest.alarmMode;
      assert.deepEqual(config, rest);

      const changed = await setVehicleConfig(client, { sensitivity: 10 });
      assert.equal(sim.state.vehicle.sensitivity, 10);
      assert.deepEqual(changed, { ...rest, sensitivity: 10 });
      const set = requests('/SetSmartVehicleConfig')[0];
      assert.ok(set);
      assert.equal(child(child(parseXml(set.body), 'vehicle'), 'dedupMode'), undefined);

      // A dedup change has nothing to go to on this firmware: refused, nothing set.
      sim.resetRequests();
      await expectRejection(setVehicleConfig(client, { dedup: { enabled: false } }), 'EDEVICE', /no dedup .* setting; nothing was changed/);
      assert.deepEqual(paths(), ['/GetSmartVehicleConfig']);
    });

    it('API 2.1 firmware: EDEVICE saying it is not supported by this firmware', async function () {
      sim.state.vehicle.api = '2.1';
      const read = await expectRejection(getVehicleConfig(client), 'EDEVICE');
      // A clear message naming the operation, not only the generic text of device code 1.
      assert.match(read.message, /GetSmartVehicleConfig\b.*not supported by this firmware/i);
      assert.equal(read.deviceCode, 1);
      assert.equal(read.status, 400);
      const before = structuredClone(sim.state.vehicle);
      const set = await expectRejection(setVehicleConfig(client, { sensitivity: 60 }), 'EDEVICE');
      assert.match(set.message, /GetSmartVehicleConfig\b.*not supported by this firmware/i);
      assert.deepEqual(sim.state.vehicle, before);
      assert.deepEqual(paths(), ['/GetSmartVehicleConfig', '/GetSmartVehicleConfig']);
    });

    it('a region the device did not offer is EDEVICE after the read (no code from the device), and nothing is set', async function () {
      const before = structuredClone(sim.state.vehicle);
      const err = await expectRejection(setVehicleConfig(client, { region: 'Atlantis' }), 'EDEVICE');
      assert.equal(err.deviceCode, undefined);
      assert.match(err.message, /nothing was changed/);
      assert.match(err.message, /Atlantis/);
      assert.deepEqual(sim.state.vehicle, before);
      assert.deepEqual(paths(), ['/GetSmartVehicleConfig'], 'only the read went out');
    });
  });

  describe('bad input is EINPUT and sends nothing', function () {
    const BAD_DATES = ['2026-13-01 00:00:00', '2026-02-30 10:00:00', '2026-01-01', 'tomorrow'];
    const cases: Array<{ what: string; run: (c: DeviceClient) => Promise<unknown> }> = [
      { what: "add: empty plate ''", run: (c) => addPlates(c, '') },
      { what: 'add: blank plate', run: (c) => addPlates(c, '   ') },
      { what: 'add: plate 42', run: (c) => addPlates(c, 42) },
      { what: 'add: plate null', run: (c) => addPlates(c, null) },
      { what: 'add: plate {}', run: (c) => addPlates(c, {}) },
      { what: 'add: { plate: 42 } in a list', run: (c) => addPlates(c, ['OK1', { plate: 42 }]) },
      { what: 'add: empty list []', run: (c) => addPlates(c, []) },
      { what: "add: empty group ''", run: (c) => addPlates(c, [{ plate: 'A', group: '' }]) },
      { what: "add: empty group '' as the default", run: (c) => addPlates(c, ['A'], { group: '' }) },
      { what: 'add: begin after end', run: (c) => addPlates(c, [{ plate: 'A', begin: '2027-01-01 00:00:00', end: '2026-01-01 00:00:00' }]) },
      ...BAD_DATES.map((d) => ({ what: `add: begin ${JSON.stringify(d)}`, run: (c: DeviceClient) => addPlates(c, [{ plate: 'A', begin: d }]) })),
      ...BAD_DATES.map((d) => ({ what: `add: end ${JSON.stringify(d)}`, run: (c: DeviceClient) => addPlates(c, [{ plate: 'A', end: d }]) })),
      { what: 'add: a bad entry after 150 good ones (nothing of the batch is sent)', run: (c) => addPlates(c, [...plateNames(1, 150), '']) },
      { what: "delete: empty plate ''", run: (c) => deletePlates(c, '') },
      { what: 'delete: plate 42', run: (c) => deletePlates(c, 42) },
      { what: 'delete: plate null', run: (c) => deletePlates(c, null) },
      { what: 'delete: plate {}', run: (c) => deletePlates(c, {}) },
      { what: 'delete: empty list []', run: (c) => deletePlates(c, []) },
      { what: "delete: empty group ''", run: (c) => deletePlates(c, [{ plate: 'A', group: '' }]) },
      { what: 'modify: nothing to modify', run: (c) => modifyPlate(c, { plate: 'A' }) },
      { what: "modify: empty plate ''", run: (c) => modifyPlate(c, { plate: '', owner: 'x' }) },
      { what: 'modify: plate 42', run: (c) => modifyPlate(c, { plate: 42, owner: 'x' }) },
      { what: "modify: empty group ''", run: (c) => modifyPlate(c, { plate: 'A', group: '', owner: 'x' }) },
      { what: 'modify: begin after end', run: (c) => modifyPlate(c, { plate: 'A', begin: '2026-06-02 00:00:00', end: '2026-06-01 23:59:59' }) },
      ...BAD_DATES.map((d) => ({ what: `modify: end ${JSON.stringify(d)}`, run: (c: DeviceClient) => modifyPlate(c, { plate: 'A', end: d }) })),
      { what: 'query: offset -1', run: (c) => queryPlates(c, { offset: -1 }) },
      { what: 'query: limit 0', run: (c) => queryPlates(c, { limit: 0 }) },
      { what: 'query: offset 1.5', run: (c) => queryPlates(c, { offset: 1.5 }) },
      { what: "query: empty group ''", run: (c) => queryPlates(c, { group: '' }) },
      { what: 'query: offset beyond the largest plate library', run: (c) => queryPlates(c, { offset: MAX_PLATES + 1 }) },
      { what: 'query: limit beyond the largest plate library', run: (c) => queryPlates(c, { limit: MAX_PLATES + 1 }) },
      { what: 'sync: more plates than any device holds', run: (c) => syncPlates(c, plateNames(1, MAX_PLATES + 1)) },
      { what: 'add: more plates than any device holds', run: (c) => addPlates(c, plateNames(1, MAX_PLATES + 1)) },
      { what: 'delete: more plates than any device holds', run: (c) => deletePlates(c, plateNames(1, MAX_PLATES + 1)) },
      ...[-1, 101, 50.5, '50'].map((s) => ({ what: `vehicle: sensitivity ${JSON.stringify(s)}`, run: (c: DeviceClient) => setVehicleConfig(c, { sensitivity: s }) })),
      { what: 'vehicle: zone x1 = x2', run: (c) => setVehicleConfig(c, { zone: { x1: 10, y1: 0, x2: 10, y2: 5 } }) },
      { what: 'vehicle: zone x1 > x2', run: (c) => setVehicleConfig(c, { zone: { x1: 20, y1: 0, x2: 10, y2: 5 } }) },
      { what: 'vehicle: zone y1 = y2', run: (c) => setVehicleConfig(c, { zone: { x1: 0, y1: 5, x2: 10, y2: 5 } }) },
      { what: 'vehicle: zone y1 > y2', run: (c) => setVehicleConfig(c, { zone: { x1: 0, y1: 9, x2: 10, y2: 5 } }) },
      { what: 'vehicle: unknown field', run: (c) => setVehicleConfig(c, { sensitivty: 5 }) },
      { what: 'vehicle: change that is not an object', run: (c) => setVehicleConfig(c, 'fast') },
      { what: 'sync: a plate listed twice', run: (c) => syncPlates(c, ['S1', 'S2', { plate: 'S1', owner: 'x' }]) },
      { what: 'sync: a plate of another group', run: (c) => syncPlates(c, ['S1', { plate: 'S2', group: '2' }]) },
      { what: 'sync: not a list', run: (c) => syncPlates(c, 'S1') },
      { what: "sync: empty plate ''", run: (c) => syncPlates(c, ['S1', '']) },
    ];
    for (const c of cases) {
      it(c.what, async function () {
        seed(['A']);
        const before = sim.state.requestCount;
        const size = sim.state.plates.size;
        await expectRejection(c.run(client), 'EINPUT');
        assert.equal(sim.state.requestCount, before, 'a request was sent');
        assert.equal(sim.state.plates.size, size);
      });
    }
  });

  describe('plate sync', function () {
    function sync(desired: unknown, opts: { group?: string; dryRun?: boolean } = {}): ReturnType<typeof syncPlates> {
      return syncPlates(client, desired, opts);
    }

    /** Plate numbers of a group as the device holds them, sorted. */
    function onDevice(group = '1'): string[] {
      return sim.state.plates
        .inGroup(group)
        .map((p) => p.plate)
        .sort();
    }

    it('from an empty database adds everything (owners with a follow-up modify)', async function () {
      const report = await sync([{ plate: 'S1', owner: 'Ann' }, 'S2', 'S3']);
      assert.deepEqual(report, { added: ['S1', 'S2', 'S3'], modified: [], removed: [], unchanged: [], failed: [], dryRun: false });
      assert.deepEqual(onDevice(), ['S1', 'S2', 'S3']);
      assert.equal(storedOwner('S1'), 'Ann');
      assert.deepEqual(paths(), ['/GetLicensePlates', '/AddLicensePlates', '/ModifyLicensePlate']);
      assert.deepEqual(
        addItems(requests('/AddLicensePlates')[0]).map((i) => i.plate),
        ['S1', 'S2', 'S3'],
      );
    });

    it('adds more than 100 plates in requests of at most 100', async function () {
      const report = await sync(plateNames(1, 150));
      assert.equal(report.added.length, 150);
      assert.deepEqual(
        requests('/AddLicensePlates').map((r) => addItems(r).length),
        [100, 50],
      );
      assert.equal(sim.state.plates.size, 150);
    });

    it('from a superset removes the extra plates, and only those', async function () {
      seed(['S1', 'S2', 'S3', 'S4', 'S5']);
      seed(['S4'], '2');
      sim.resetRequests();
      const report = await sync(['S1', 'S2', 'S3']);
      assert.deepEqual(report, { added: [], modified: [], removed: ['S4', 'S5'], unchanged: ['S1', 'S2', 'S3'], failed: [], dryRun: false });
      assert.deepEqual(onDevice(), ['S1', 'S2', 'S3']);
      assert.deepEqual(onDevice('2'), ['S4'], 'another group is not touched');
      assert.deepEqual(paths(), ['/GetLicensePlates', '/DeleteLicensePlate', '/DeleteLicensePlate']);
      assert.deepEqual(
        requests('/DeleteLicensePlate').map((r) => textOf(child(docOf(r, PLATE_VERSION), 'deleteAction'), 'licensePlateNumber')),
        ['S4', 'S5'],
      );
    });

    it('from a subset adds the missing plates in one request', async function () {
      seed(['S1', 'S2']);
      sim.resetRequests();
      const report = await sync(['S1', 'S2', 'S3', 'S4']);
      assert.deepEqual(report, { added: ['S3', 'S4'], modified: [], removed: [], unchanged: ['S1', 'S2'], failed: [], dryRun: false });
      assert.deepEqual(onDevice(), ['S1', 'S2', 'S3', 'S4']);
      assert.deepEqual(paths(), ['/GetLicensePlates', '/AddLicensePlates']);
      assert.deepEqual(addItems(requests('/AddLicensePlates')[0]), [
        { plate: 'S3', group: '1' },
        { plate: 'S4', group: '1' },
      ]);
    });

    it('with changed owners modifies only those plates and touches nothing else', async function () {
      await addPlates(client, [1, 2, 3, 4].map((i) => ({ plate: `S${i}`, owner: `o${i}`, phone: `p${i}` })));
      const before = sim.state.plates.all().map((p) => ({ ...p }));
      sim.resetRequests();

      const report = await sync([
        { plate: 'S1', owner: 'o1' },
        { plate: 'S2', owner: 'new2' },
        { plate: 'S3', owner: 'o3' },
        { plate: 'S4', owner: 'new4' },
      ]);
      assert.deepEqual(report, { added: [], modified: ['S2', 'S4'], removed: [], unchanged: ['S1', 'S3'], failed: [], dryRun: false });
      assert.deepEqual(paths(), ['/GetLicensePlates', '/ModifyLicensePlate', '/ModifyLicensePlate']);
      assert.deepEqual(
        requests('/ModifyLicensePlate').map((r) => {
          assertCdataStrings(r.body);
          return child(docOf(r, PLATE_VERSION), 'licensePlate')?.children.map((c) => [c.name, c.text]);
        }),
        [
          [
            ['licensePlateNumber', 'S2'],
            ['groupId', '1'],
            ['carOwner', 'new2'],
          ],
          [
            ['licensePlateNumber', 'S4'],
            ['groupId', '1'],
            ['carOwner', 'new4'],
          ],
        ],
      );
      const changed: Record<string, string> = { S2: 'new2', S4: 'new4' };
      assert.deepEqual(
        sim.state.plates.all(),
        before.map((p) => ({ ...p, owner: changed[p.plate] ?? p.owner })),
      );
    });

    it('an unchanged list sends no write request', async function () {
      await addPlates(client, [{ plate: 'S1', owner: 'o1' }, 'S2']);
      const before = sim.state.plates.all().map((p) => ({ ...p }));
      sim.resetRequests();
      const report = await sync([{ plate: 'S1', owner: 'o1' }, 'S2']);
      assert.deepEqual(report, { added: [], modified: [], removed: [], unchanged: ['S1', 'S2'], failed: [], dryRun: false });
      assert.deepEqual(paths(), ['/GetLicensePlates']);
      assert.deepEqual(sim.state.plates.all(), before);
    });

    it('a dry run reports the plan and sends nothing but GetLicensePlates', async function () {
      await addPlates(client, [{ plate: 'S1', owner: 'o1' }, 'S2', 'S3']);
      const before = sim.state.plates.all().map((p) => ({ ...p }));
      sim.resetRequests();
      const report = await sync([{ plate: 'S1', owner: 'changed' }, 'S2', 'S4'], { dryRun: true });
      assert.deepEqual(report, { added: ['S4'], modified: ['S1'], removed: ['S3'], unchanged: ['S2'], failed: [], dryRun: true });
      assert.deepEqual(paths(), ['/GetLicensePlates']);
      assert.deepEqual(sim.state.plates.all(), before);
    });

    it('syncs the group it is given and leaves the others alone', async function () {
      seed(['X1', 'X2'], '1');
      seed(['Y1'], '5');
      sim.resetRequests();
      const report = await sync(['Y2'], { group: '5' });
      assert.deepEqual(report, { added: ['Y2'], modified: [], removed: ['Y1'], unchanged: [], failed: [], dryRun: false });
      assert.deepEqual(onDevice('5'), ['Y2']);
      assert.deepEqual(onDevice('1'), ['X1', 'X2']);
      assert.equal(filterOf(requests('/GetLicensePlates')[0]).group, '5');
    });

    it('reports plates the device refused as failed, the rest done', async function () {
      seed(['S1']);
      sim.state.plates.capacity = 2;
      const report = await sync(['S1', 'S2', 'S3']);
      assert.deepEqual(report.added, ['S2']);
      assert.deepEqual(report.unchanged, ['S1']);
      assert.deepEqual(
        report.failed.map((f) => [f.plate, f.action, f.errorCode]),
        [['S3', 'add', 202]],
      );
    });

    for (const bogusTotal of [null, 4_294_967_295]) {
      it(`against a device that ignores resultOffset (total ${bogusTotal ?? 'real'}): EDEVICE, nothing deleted or added`, async function () {
        seed(plateNames(1, 250));
        sim.state.plates.setPaging({ ignoreOffset: true, bogusTotal });
        sim.resetRequests();
        // The desired list keeps plates of the first page only: a sync that believed the device
        // would remove the 150 others and add the new ones.
        await expectRejection(sync([...plateNames(1, 100), 'NEW1', 'NEW2']), 'EDEVICE', /ignores resultOffset/);
        assert.deepEqual(paths(), ['/GetLicensePlates', '/GetLicensePlates']);
        assert.deepEqual(onDevice(), plateNames(1, 250));
        // A dry run too.
        sim.resetRequests();
        await expectRejection(sync(plateNames(1, 10), { dryRun: true }), 'EDEVICE', /ignores resultOffset/);
        assert.deepEqual(paths(), ['/GetLicensePlates', '/GetLicensePlates']);
      });
    }

    it('a plate listed twice is EINPUT before anything is sent', async function () {
      seed(['S1']);
      const count = sim.state.requestCount;
      const err = await expectRejection(sync(['S1', 'S2', 'S2']), 'EINPUT');
      assert.match(err.message, /S2/);
      assert.equal(sim.state.requestCount, count);
    });

    it('a plate of another group is EINPUT before anything is sent', async function () {
      const err = await expectRejection(sync(['S1', { plate: 'S2', group: '2' }]), 'EINPUT');
      assert.match(err.message, /S2/);
      assert.equal(sim.state.requestCount, 0);
    });
  });
});
