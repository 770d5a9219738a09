/**
 * Answer budgets (issue 18, items 2, 3, 8 and 9) against a hostile fake device over real
 * sockets: a plate query or sync against pages of big fields forever ends with EPARSE (field
 * budget) or EDEVICE (walk budget) with the heap bounded; an edge walk against pages of 400
 * records when 99 were asked reads 99 a page and ends at the walk budget; a 4-million-element
 * answer is EPARSE at the element budget; a 12-digit count(*) is no total, the records fine;
 * downloads and backups are the bytes sent, never decoded.
 */
import { strict as assert } from 'node:assert';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MAX_RECORD_FIELD_BYTES, MAX_WALK_BYTES, MAX_XML_ELEMENTS } from '../lib/safety/budgets';
import { runOperation } from '../lib/ops';
import { RECORD_LIMIT } from '../lib/ops/edge';
import { DeviceClient } from '../lib/transport/client';
import { parseXml } from '../lib/xml/codec';
import { queryPlates, QUERY_PAGE } from '../lib/ops/plates';
import { syncPlates } from '../lib/ops/plate-sync';
import { expectRejection, prng } from './helpers';
import { startHostileDevice, type HostileDevice } from './hostile-device';
import { edgeOp, requestOp } from './ops-helper';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MiB = 1024 * 1024;

/** Heap used after a full collection, the highest seen at any request of the device. */
function heapSampler(device: HostileDevice): { readonly peak: number; readonly base: number } {
  gc();
  const sample = { base: process.memoryUsage().heapUsed, peak: 0 };
  sample.peak = sample.base;
  let requests = 0;
  device.onRequest = () => {
    // Every fifth page: a full collection per page would take longer than the walk.
    if (requests++ % 5 !== 0) return;
    gc();
    sample.peak = Math.max(sample.peak, process.memoryUsage().heapUsed);
  };
  return sample;
}

/** Bytes with every kind of invalid UTF-8: stray continuation bytes, cut sequences, overlong forms, 0xFE/0xFF. */
function binaryFile(size: number): Buffer {
  const random = prng(18);
  const file = Buffer.alloc(size);
  for (let i = 0; i < size; i++) file[i] = Math.floor(random() * 256);
  Buffer.from([0x80, 0xbf, 0xc3, 0x28, 0xe2, 0x82, 0xf0, 0x9f, 0x98, 0xc0, 0xaf, 0xfe, 0xff, 0xed, 0xa0, 0x80]).copy(file, 0);
  Buffer.from([0xe2, 0x82]).copy(file, size - 2);
  return file;
}

describe('answer budgets against a hostile device', function () {
  this.timeout(60_000);
  let device: HostileDevice;
  let client: DeviceClient;

  before(async function () {
    device = await startHostileDevice();
  });

  after(async function () {
    await device.close();
  });

  beforeEach(function () {
    device.reset();
    device.onRequest = undefined;
    client = new DeviceClient({ host: '127.0.0.1', port: device.port, timeout: 20_000 });
  });

  afterEach(async function () {
    await client.close();
  });

  describe('plate walks', function () {
    it('a query against pages of 100 plates with a 100 KB field, forever: EPARSE at the field budget on the first page', async function () {
      device.settings = { ...device.settings, platesPerPage: QUERY_PAGE, plateFieldBytes: 16, ownerBytes: 100 * 1024 };
      const err = await expectRejection(queryPlates(client), 'EPARSE', /carOwner is longer than 1024 bytes \(the field budget\)/);
      assert.equal(device.requests.get('/GetLicensePlates'), 1);
      assert.doesNotMatch(err.message, /OOOO/);
    });

    it('a query against pages of fields just under the field budget, forever: EDEVICE at the walk budget, the heap bounded', async function () {
      device.settings = { ...device.settings, platesPerPage: QUERY_PAGE, plateFieldBytes: MAX_RECORD_FIELD_BYTES - 24, ownerBytes: undefined };
      const heap = heapSampler(device);
      const started = Date.now();
      await expectRejection(queryPlates(client), 'EDEVICE', /the walk budget/);
      const pages = device.requests.get('/GetLicensePlates') ?? 0;
      const pageText = QUERY_PAGE * 8 * (MAX_RECORD_FIELD_BYTES - 24);
      console.log(`      ${pages} pages (${(device.bytesSent / MiB).toFixed(0)} MiB sent) in ${Date.now() - started} ms; heap after GC peaked ${((heap.peak - heap.base) / MiB).toFixed(0)} MiB above the start`);
      // The walk ends once it keeps the budget: a page or so beyond it, never the 1000 pages of the page cap.
      assert.ok(pages <= Math.ceil(MAX_WALK_BYTES / pageText) + 1, `${pages} pages read`);
      assert.ok(heap.peak - heap.base < MAX_WALK_BYTES * 2, `the heap grew by ${(heap.peak - heap.base) / MiB} MiB`);
    });

    it('a sync against the same device: EDEVICE at the walk budget, nothing deleted or added', async function () {
      device.settings = { ...device.settings, platesPerPage: QUERY_PAGE, plateFieldBytes: MAX_RECORD_FIELD_BYTES - 24, ownerBytes: undefined };
      await expectRejection(syncPlates(client, [{ plate: 'KEEP1' }], { group: '1' }), 'EDEVICE', /the walk budget/);
      assert.deepEqual([...device.requests.keys()], ['/GetLicensePlates']);
    });

    it('a sync against pages with a 100 KB field: EPARSE, nothing deleted or added', async function () {
      device.settings = { ...device.settings, platesPerPage: QUERY_PAGE, plateFieldBytes: 16, ownerBytes: 100 * 1024 };
      await expectRejection(syncPlates(client, [], { group: '1' }), 'EPARSE', /the field budget/);
      assert.deepEqual([...device.requests.keys()], ['/GetLicensePlates']);
    });

    it('a page of 1000 plates of 11 elements each (a device ignoring maxResult) is read: its element budget is its own', async function () {
      device.settings = { ...device.settings, platesPerPage: 1000, plateFieldBytes: 16, ownerBytes: undefined };
      const { plates } = await queryPlates(client, { limit: QUERY_PAGE });
      assert.equal(plates.length, QUERY_PAGE);
      assert.equal(plates[0]?.plate, 'P1xxxxxxxxxxxxxx');
    });
  });

  describe('edge record walk', function () {
    it('400 records a page when 99 were asked: 99 read a page, no record twice, EDEVICE at the walk budget, the heap bounded', async function () {
      device.settings = { ...device.settings, recordsPerPage: 400, recordFieldBytes: 200 };
      const heap = heapSampler(device);
      const started = Date.now();
      await expectRejection(runOperation(client, edgeOp('search'), { all: true }), 'EDEVICE', /edge record walk stopped: .*the walk budget/);
      const pages = device.requests.get('/cgi-bin/admin/edgerecord') ?? 0;
      console.log(`      ${pages} pages (${(device.bytesSent / MiB).toFixed(0)} MiB sent) in ${Date.now() - started} ms; heap after GC peaked ${((heap.peak - heap.base) / MiB).toFixed(0)} MiB above the start`);
      // About 1.4 KB kept per record, 98 new records a page: the budget ends the walk near 240 pages, far below the 1000-page cap.
      assert.ok(pages > 50 && pages < 400, `${pages} pages read`);
      assert.ok(heap.peak - heap.base < MAX_WALK_BYTES * 2, `the heap grew by ${(heap.peak - heap.base) / MiB} MiB`);
    });

    it('records are read up to the limit asked; a page holding more is full, not more than full', async function () {
      device.settings = { ...device.settings, recordsPerPage: 400, recordFieldBytes: 16, recordCount: '400' };
      const one = await runOperation(client, edgeOp('search'), { limit: 7 });
      assert.ok(Array.isArray(one.payload));
      assert.equal(one.payload.length, 7);
      assert.equal(one.total, 400);
      const all = await runOperation(client, edgeOp('search'), { all: true, from: '2026-01-01 00:00:00', to: '2026-01-01 00:05:00', limit: RECORD_LIMIT.max });
      const records = all.payload as Array<{ start: string; recordId: string }>;
      // 301 records in the range, sent 400 a page (fewer near its end): read 99 a page, each once.
      assert.equal(records.length, 301);
      assert.equal(new Set(records.map((r) => r.recordId)).size, records.length);
      assert.equal(records[0]?.start, '2026-01-01 00:00:00');
      for (let i = 1; i < records.length; i++) assert.ok((records[i - 1] as { start: string }).start < (records[i] as { start: string }).start);
    });

    it('a field longer than the field budget is EPARSE for the page, not cut', async function () {
      device.settings = { ...device.settings, recordsPerPage: 3, recordFieldBytes: MAX_RECORD_FIELD_BYTES + 1, recordCount: '3' };
      await expectRejection(runOperation(client, edgeOp('search'), {}), 'EPARSE', /longer than 1024 bytes \(the field budget\)/);
    });

    it('count(*) of 12 digits: the records as they are and no total', async function () {
      device.settings = { ...device.settings, recordsPerPage: 3, recordFieldBytes: 16, recordCount: '123456789012' };
      const page = await runOperation(client, edgeOp('search'), { limit: 10 });
      assert.equal((page.payload as unknown[]).length, 3);
      assert.equal(page.total, undefined);
      const walk = await runOperation(client, edgeOp('search'), { all: true });
      assert.equal((walk.payload as unknown[]).length, 3);
      assert.equal(walk.total, undefined);
      // Two thousand digits are no total either; 2^32-1 is still a count.
      device.settings = { ...device.settings, recordCount: '9'.repeat(2000) };
      assert.equal((await runOperation(client, edgeOp('search'), { limit: 10 })).total, undefined);
      device.settings = { ...device.settings, recordCount: '4294967295' };
      assert.equal((await runOperation(client, edgeOp('search'), { limit: 10 })).total, 4294967295);
    });
  });

  describe('the XML element budget', function () {
    it('a 4-million-element answer (30 MiB) is EPARSE naming the element budget', async function () {
      device.settings = { ...device.settings, infoElements: 4_000_000 };
      await expectRejection(runOperation(client, requestOp('getDeviceInfo'), {}), 'EPARSE', new RegExp(`more than ${MAX_XML_ELEMENTS} XML elements \\(the element budget`));
      assert.ok(device.bytesSent > 30 * MiB);
    });

    it('the scan stops at the budget: the parser never sees the document', function () {
      const body = Buffer.from(`<config>${'<a>1</a>'.repeat(4_000_000)}</config>`);
      assert.throws(() => parseXml(body), /more than 10000 XML elements/);
      // One element under the budget is read, one over is not; a call may allow more.
      const at = `<config>${'<a/>'.repeat(MAX_XML_ELEMENTS - 1)}</config>`;
      assert.equal(parseXml(at).children.length, MAX_XML_ELEMENTS - 1);
      assert.throws(() => parseXml(`<config>${'<a/>'.repeat(MAX_XML_ELEMENTS)}</config>`), /more than 10000 XML elements/);
      assert.equal(parseXml(`<config>${'<a/>'.repeat(MAX_XML_ELEMENTS)}</config>`, { maxElements: MAX_XML_ELEMENTS + 1 }).children.length, MAX_XML_ELEMENTS);
    });

    it('the bytes of an answer are counted as its text is: at the budget read, one over refused, markup in CDATA, comments and instructions not counted', function () {
      const at = `<?xml version="1.0"?>\n<config a="x">${'<a b="1"/>'.repeat(MAX_XML_ELEMENTS - 2)}<b><![CDATA[${'<c>'.repeat(20_000)}]]></b><!-- ${'<d/>'.repeat(20_000)} --><?pi ${'<e/>'.repeat(20_000)}?></config>`;
      const over = at.replace('<b>', '<b><f/>');
      for (const form of [(text: string): string | Buffer => text, (text: string): string | Buffer => Buffer.from(text)]) {
        const root = parseXml(form(at));
        assert.equal(root.children.length, MAX_XML_ELEMENTS - 1);
        assert.equal(root.children.at(-1)?.text, '<c>'.repeat(20_000));
        assert.throws(() => parseXml(form(over)), /more than 10000 XML elements/);
      }
    });
  });

  describe('binary answers are their bytes', function () {
    const big = (buffer: Buffer): boolean => buffer.length >= MiB;

    /** Runs `call` while counting every decoding of a Buffer of 1 MiB or more to text (Buffer's own, or a TextDecoder's: the charset decoder). */
    async function decodings<T>(call: () => Promise<T>): Promise<{ value: T; count: number }> {
      const original = Buffer.prototype.toString;
      const decode = TextDecoder.prototype.decode;
      let count = 0;
      Buffer.prototype.toString = function (this: Buffer, ...args: Parameters<Buffer['toString']>): string {
        if (big(this)) count += 1;
        return original.apply(this, args);
      };
      type Decode = (input?: ArrayBufferView | ArrayBuffer | null, options?: { stream?: boolean }) => string;
      TextDecoder.prototype.decode = function (this: InstanceType<typeof TextDecoder>, input, options) {
        if (input && input.byteLength >= MiB) count += 1;
        return (decode as Decode).call(this, input, options);
      } as Decode;
      try {
        return { value: await call(), count };
      } finally {
        Buffer.prototype.toString = original;
        TextDecoder.prototype.decode = decode;
      }
    }

    it('an edge record download of 3 MiB with invalid UTF-8 is the Buffer sent, byte for byte, never decoded', async function () {
      device.settings = { ...device.settings, file: binaryFile(3 * MiB) };
      const { value, count } = await decodings(() => runOperation(client, edgeOp('download'), { path: '2026-03-01/10/1001/clip.bin', mac: '58:5B:69:00:00:01' }));
      assert.ok(Buffer.isBuffer(value.payload));
      assert.ok(device.settings.file.equals(value.payload), 'the bytes differ');
      assert.equal(count, 0, 'the download was decoded to text');
    });

    it('a backup of 3 MiB with invalid UTF-8 is the Buffer sent, byte for byte, never decoded', async function () {
      device.settings = { ...device.settings, file: binaryFile(3 * MiB) };
      const { value, count } = await decodings(() => runOperation(client, requestOp('backup'), {}));
      assert.ok(Buffer.isBuffer(value.payload));
      assert.ok(device.settings.file.equals(value.payload), 'the bytes differ');
      assert.equal(count, 0, 'the backup was decoded to text');
    });
  });
});
