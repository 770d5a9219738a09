/**
 * Content is what it claims (issue 18): a snapshot's type comes from its bytes, a download's from
 * an allow list, never from the device's header alone. Against a device that lies, over real
 * sockets: the simulator answering what the test gives after authenticating the request.
 */
import { strict as assert } from 'node:assert';
import { takeSnapshot, type SnapshotSource } from '../lib/cgi/snapshot';
import { checkImage, handedOnType, imageSignature } from '../lib/content-type';
import { runOperation } from '../lib/ops';
import { NAS_PATH } from '../lib/ops/edge';
import { startSimulator, type Simulator } from '../lib/simulator';
import { SNAPSHOT_JPEG } from '../lib/simulator/images';
import { DeviceClient } from '../lib/transport/client';
import { expectRejection, SIM_PASSWORD, SIM_USER } from './helpers';
import { edgeOp, requestOp } from './ops-helper';

/** A real 1x1 PNG (signature, IHDR, IDAT, IEND). */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
/** An SVG that reads `/flows` and deploys a flow when a browser opens it in the editor's origin. */
export const HOSTILE_SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/flows").then(r=>r.json()).then(f=>fetch("/flows",{method:"POST",headers:{"content-type":"application/json"},body:JSON.stringify(f)}))</script></svg>',
);
export const HOSTILE_HTML = Buffer.from('<!DOCTYPE html><html><body><script>document.title="owned"</script></body></html>');

/** What a lying camera answers to a snapshot request, and what must come of it. */
export const SNAPSHOT_LIES: Array<{ what: string; contentType?: string; body: Buffer; expect: 'image/jpeg' | 'image/png' | 'EPARSE' }> = [
  { what: 'an SVG with a script, labelled image/svg+xml', contentType: 'image/svg+xml', body: HOSTILE_SVG, expect: 'EPARSE' },
  { what: 'an SVG with a script, labelled image/jpeg', contentType: 'image/jpeg', body: HOSTILE_SVG, expect: 'EPARSE' },
  { what: 'an HTML page, labelled text/html', contentType: 'text/html', body: HOSTILE_HTML, expect: 'EPARSE' },
  { what: 'an HTML page, labelled image/png', contentType: 'image/png', body: HOSTILE_HTML, expect: 'EPARSE' },
  { what: 'an empty body, labelled image/jpeg', contentType: 'image/jpeg', body: Buffer.alloc(0), expect: 'EPARSE' },
  { what: 'the JPEG signature alone', contentType: 'image/jpeg', body: SNAPSHOT_JPEG.subarray(0, 3), expect: 'EPARSE' },
  { what: 'a JPEG cut in half', contentType: 'image/jpeg', body: SNAPSHOT_JPEG.subarray(0, SNAPSHOT_JPEG.length >> 1), expect: 'EPARSE' },
  { what: 'a PNG without its IEND chunk', contentType: 'image/png', body: TINY_PNG.subarray(0, TINY_PNG.length - 12), expect: 'EPARSE' },
  { what: 'a JPEG labelled image/png', contentType: 'image/png', body: SNAPSHOT_JPEG, expect: 'image/jpeg' },
  { what: 'a PNG labelled image/jpeg', contentType: 'image/jpeg', body: TINY_PNG, expect: 'image/png' },
  { what: 'a PNG labelled text/html', contentType: 'text/html', body: TINY_PNG, expect: 'image/png' },
  { what: 'a JPEG without a content type', body: SNAPSHOT_JPEG, expect: 'image/jpeg' },
  { what: 'a JPEG with CR LF padding after its end', contentType: 'image/jpeg', body: Buffer.concat([SNAPSHOT_JPEG, Buffer.from('\r\n')]), expect: 'image/jpeg' },
];

/** Device content types of a download and what is handed on. */
export const DOWNLOAD_TYPES: Array<[string, string]> = [
  ['text/html', 'application/octet-stream'],
  ['text/html; charset=utf-8', 'application/octet-stream'],
  ['image/svg+xml', 'application/octet-stream'],
  ['application/javascript', 'application/octet-stream'],
  ['text/javascript', 'application/octet-stream'],
  ['application/xhtml+xml', 'application/octet-stream'],
  ['text/xml', 'application/octet-stream'],
  ['application/pdf', 'application/octet-stream'],
  ['multipart/x-mixed-replace; boundary=x', 'application/octet-stream'],
  ['image/jpeg', 'image/jpeg'],
  ['IMAGE/PNG', 'image/png'],
  ['video/mp4', 'video/mp4'],
  ['audio/basic', 'audio/basic'],
  ['text/plain; charset=iso-8859-1', 'text/plain'],
  ['application/x-tar', 'application/x-tar'],
];

const SOURCES: Record<SnapshotSource, string> = { jpg: '/jpg/image.jpg', cgi: '/cgi-bin/admin/image', xml: '/GetSnapshot' };
const MAC = '00:18:AE:11:22:33';

describe('content is what it claims', function () {
  describe('checkImage and handedOnType', function () {
    it('a whole JPEG or PNG by its bytes; anything else says what it is not', function () {
      assert.deepEqual(checkImage(SNAPSHOT_JPEG), { type: 'image/jpeg' });
      assert.deepEqual(checkImage(TINY_PNG), { type: 'image/png' });
      assert.deepEqual(checkImage(Buffer.from([0xff, 0xd8, 0xff, 0xd9])), { type: 'image/jpeg' });
      assert.deepEqual(checkImage(Buffer.alloc(0)), { problem: 'an empty body' });
      assert.match((checkImage(HOSTILE_SVG) as { problem: string }).problem, /neither a JPEG nor a PNG/);
      assert.match((checkImage(SNAPSHOT_JPEG.subarray(0, 100)) as { problem: string }).problem, /JPEG cut short/);
      // Padding beyond the tolerated trailer is not an end marker.
      assert.ok('problem' in checkImage(Buffer.concat([SNAPSHOT_JPEG, Buffer.alloc(64)])));
      assert.equal(imageSignature(Buffer.from([0xff, 0xd8, 0xff])), undefined, 'the signature alone is not a picture');
    });

    it('only types of the allow list are handed on, bare and in lower case', function () {
      for (const [given, expected] of DOWNLOAD_TYPES) assert.equal(handedOnType(given), expected, given);
      assert.equal(handedOnType(undefined), 'application/octet-stream');
      assert.equal(handedOnType(''), 'application/octet-stream');
    });
  });

  describe('against a device that lies (simulator, real sockets)', function () {
    let sim: Simulator;
    let client: DeviceClient;

    before(async function () {
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'digest' });
    });

    after(async function () {
      await sim.close();
    });

    beforeEach(function () {
      sim.clearFaults();
      client = new DeviceClient({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password: SIM_PASSWORD });
    });

    afterEach(async function () {
      await client.close();
    });

    for (const source of ['jpg', 'cgi', 'xml'] as const) {
      describe(`takeSnapshot, source ${source}`, function () {
        for (const lie of SNAPSHOT_LIES) {
          it(`${lie.what}: ${lie.expect}`, async function () {
            sim.inject({ kind: 'answer', path: SOURCES[source], ...(lie.contentType !== undefined && { contentType: lie.contentType }), body: lie.body });
            const served = sim.state.requestCount;
            if (lie.expect === 'EPARSE') {
              const err = await expectRejection(takeSnapshot(client, { source }), 'EPARSE', /JPEG or PNG/);
              assert.ok(!err.message.includes('<script'), 'the device text is not echoed');
            } else {
              const snap = await takeSnapshot(client, { source });
              assert.equal(snap.contentType, lie.expect);
              assert.ok(snap.image.equals(lie.body));
            }
            assert.ok(sim.state.requestCount > served, 'the lie was served over the socket');
          });
        }
      });
    }

    describe('download and backup hand on a type from the allow list only', function () {
      for (const [given, expected] of DOWNLOAD_TYPES) {
        it(`device says ${given}: ${expected}`, async function () {
          sim.inject({ kind: 'answer', path: NAS_PATH, contentType: given, body: HOSTILE_SVG });
          const download = await runOperation(client, edgeOp('download'), { path: '2026-03-01/08/1002/snapshot1.jpg', mac: MAC });
          assert.equal(download.contentType, expected);
          assert.ok(Buffer.isBuffer(download.payload) && download.payload.equals(HOSTILE_SVG), 'the bytes are handed on as they came');
          sim.inject({ kind: 'answer', path: '/cgi-bin/admin/backup', contentType: given, body: HOSTILE_SVG });
          const backup = await runOperation(client, requestOp('backup'), {});
          assert.equal(backup.contentType, expected);
        });
      }

      it('no type or application/octet-stream: download guesses from the extension (from the list), backup says tar', async function () {
        for (const [file, expected] of [
          ['snapshot1.jpg', 'image/jpeg'],
          ['clip.mp4', 'video/mp4'],
          ['recoring.xml', 'application/octet-stream'],
          ['page.html', 'application/octet-stream'],
          ['pic.svg', 'application/octet-stream'],
        ] as const) {
          for (const contentType of [undefined, 'application/octet-stream']) {
            sim.clearFaults();
            sim.inject({ kind: 'answer', path: NAS_PATH, ...(contentType !== undefined && { contentType }), body: HOSTILE_HTML });
            const download = await runOperation(client, edgeOp('download'), { path: `2026-03-01/08/1002/${file}`, mac: MAC });
            assert.equal(download.contentType, expected, `${file} with ${contentType ?? 'no type'}`);
          }
        }
        sim.clearFaults();
        sim.inject({ kind: 'answer', path: '/cgi-bin/admin/backup', body: Buffer.from('ustar') });
        assert.equal((await runOperation(client, requestOp('backup'), {})).contentType, 'application/x-tar');
      });
    });
  });
});
